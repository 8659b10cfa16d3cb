"""perfmodel: performance models of distributed deep-learning training.

The public front door.  Specs describe the workload, the cluster and the
configuration; every model object answers ``estimate(workload, cluster,
config) -> Estimate``.

>>> from perfmodel import zoo, Config, SyncCoarse
>>> est = SyncCoarse().estimate(zoo.profile("resnet50-pipedream"),
...                             zoo.cluster("aws-p3.2xlarge"), Config(n_replicas=4))
>>> est.bottleneck in est.phases
True
"""

from . import units, zoo
from .coarse import AllReduceCoarse, SyncCoarse
from .gst import GST
from .layerwise import LayerWise
from .queueing import AsyncMVA
from .errors import Infeasible, PerfModelError, SpecError
from .result import Estimate
from .select import select_model
from .specs import DNN, Cluster, Config, Layer, Profile
from .tuning import calibrate_network

__version__ = "0.1.0"

__all__ = [
    "units", "zoo", "SpecError", "Infeasible", "PerfModelError", "Estimate",
    "Layer", "DNN", "Profile", "Cluster", "Config", "SyncCoarse", "AllReduceCoarse",
    "AsyncMVA", "GST", "LayerWise", "calibrate_network", "select_model",
    "__version__",
]
