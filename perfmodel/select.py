"""Former home of model selection; kept so old imports work.

Model selection is :mod:`perfmodel.fit.selection` (its candidate is now called
:class:`~perfmodel.fit.selection.ModelCandidate`), the timeout stalls of lossy
links :mod:`perfmodel.fit.timeouts`; :class:`~perfmodel.coarse.LockStep` and
:class:`~perfmodel.sim.model.BlockTrace` are models and live with them.  New
code imports from there.
"""

from .coarse import LockStep
from .fit.selection import (
                            FAMILIES,
                            LOCKSTEP_CV,
                            LOSSY_REPLICATIONS,
                            Calibrated,
                            Score,
                            Selection,
                            calibrate_candidate,
                            choose,
                            cpu_ceiling,
                            default_candidates,
                            interval_halfwidth,
                            select_model,
)
from .fit.selection import ModelCandidate as Candidate
from .fit.timeouts import TIMEOUT_BAND, timeout_why, timeouts_from_step_times, with_timeout_band
from .sim.model import BlockTrace

__all__ = ["FAMILIES", "LOCKSTEP_CV", "LOSSY_REPLICATIONS", "TIMEOUT_BAND", "Candidate",
           "LockStep", "BlockTrace", "default_candidates", "timeouts_from_step_times",
           "with_timeout_band", "timeout_why", "cpu_ceiling",
           "interval_halfwidth", "Calibrated", "Score", "Selection", "choose",
           "calibrate_candidate", "select_model"]
