"""perfmodel: performance models of distributed deep-learning training.

The public front door.  Specs describe the workload, the cluster and the
configuration; every model object answers ``estimate(workload, cluster,
config) -> Estimate``.
"""

from . import units
from .errors import Infeasible, PerfModelError, SpecError
from .result import Estimate
from .specs import DNN, Cluster, Config, Layer, Profile

__version__ = "0.1.0"

__all__ = [
    "units", "SpecError", "Infeasible", "PerfModelError", "Estimate",
    "Layer", "DNN", "Profile", "Cluster", "Config", "__version__",
]
