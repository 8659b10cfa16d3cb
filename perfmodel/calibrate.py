"""Former home of the hardware micro-benchmarks; kept so old imports work.

The micro-benchmarks of Yan et al. 2015 are :mod:`perfmodel.fit.microbench`
(their result is now called :class:`~perfmodel.fit.microbench.HardwareCalibration`
and their plan :class:`~perfmodel.fit.microbench.BenchmarkPlan`);
:class:`~perfmodel.errors.CalibrationError` is in :mod:`perfmodel.errors`.
New code imports from there.
"""

from .errors import CalibrationError
from .fit.microbench import (
                             ACTIVATIONS,
                             BLAS_THREAD_VARIABLES,
                             DEFAULT_CACHE_BYTES,
                             DTYPE,
                             CacheInfo,
                             Spread,
                             activate,
                             calibrate,
                             calibrated_cluster,
                             canonical_forward,
                             detect_cache,
                             error_term,
                             make_plan,
                             matvec,
                             parse_cache_size,
                             weights,
)
from .fit.microbench import BenchmarkPlan as Plan
from .fit.microbench import HardwareCalibration as Calibration

__all__ = ["ACTIVATIONS", "BLAS_THREAD_VARIABLES", "DEFAULT_CACHE_BYTES", "DTYPE", "CacheInfo",
           "Plan", "Spread", "Calibration", "CalibrationError", "detect_cache",
           "parse_cache_size", "make_plan", "weights", "matvec", "activate", "error_term",
           "canonical_forward", "calibrate", "calibrated_cluster"]
