"""Former home of the DL2 measurements and report; kept so old imports work.

The DL2 parser and report are :mod:`perfmodel.fit.dl2` (``default_candidates``
is now called :func:`~perfmodel.fit.dl2.report_models`); new code imports
from there.
"""

from .fit.dl2 import (
                      BUILTIN_PATH,
                      DL2Fit,
                      DL2Record,
                      DL2Report,
                      OptimusCandidate,
                      fit_model,
                      largest_cpu_reading,
                      load_builtin,
                      network,
                      parse_dl2,
                      utilization_ceiling,
                      validate_dl2,
)
from .fit.dl2 import report_models as default_candidates

__all__ = ["BUILTIN_PATH", "DL2Record", "parse_dl2", "load_builtin", "default_candidates",
           "largest_cpu_reading", "utilization_ceiling", "DL2Fit", "network", "fit_model",
           "OptimusCandidate", "DL2Report", "validate_dl2"]
