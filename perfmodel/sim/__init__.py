"""Fine-grained, trace-driven simulation of distributed SGD (Li et al. 2020 and 2022).

Profile one worker, predict a cluster: a :class:`Trace` holds profiled SGD
steps as DAGs of operations on four resources (downlink, worker, uplink, ps);
:func:`simulate` runs Li et al. 2022's Algorithm 1 (Li et al. 2020's Algorithm
3.1) for K workers sharing the parameter servers' links, in async, sync or all-reduce
mode; :class:`TraceSim` wraps it as a model object for the optimizer;
:func:`chrome_trace` exports the synthetic trace for Perfetto;
:mod:`perfmodel.sim.tensorflow` has Li et al. 2020's TensorFlow mechanisms.

>>> t = Trace.from_layers([50e6, 50e6], [0.05, 0.05], [0.1, 0.1], 0.01, overlap=False)
>>> r = simulate(t, 4, 1.25e9, mode="sync", sharing="fcfs", steps=5, warmup=1)
>>> round(r.step_time, 9)     # Li et al. 2022, eq. 8: (K + 1) M/B + T_F + T_B + T_S
0.71

References
----------
Li, Paolieri, Golubchik, Lin, Yan. Predicting Throughput of Distributed SGD.
IEEE TPDS, 2022.  Sec. 2.2 and 3.2 (Algorithm 1).

Li, Yan, Paolieri, Golubchik. Throughput Prediction of Asynchronous SGD in
TensorFlow. ICPE, 2020.  Sec. 3 and 5
(Algorithm 3.1).
"""

from . import tensorflow, torch_profile
from .chrome_import import DTYPE_BYTES, load_torch_profiler
from .engine import (
                     AUTO_JITTER,
                     AUTO_NUMBA_SIZE,
                     ENGINES,
                     MODES,
                     SERVER_CPUS,
                     SERVER_SHARINGS,
                     SHARINGS,
                     SimResult,
                     numba_available,
                     simulate,
)
from .export import chrome_trace
from .model import ARCHITECTURES, PHASES, BlockTrace, TraceSim, shard_servers, simulate_range, split_servers
from .tensorflow import (
                     GRPC_WINDOW,
                     ORDERS,
                     add_parsing_overhead,
                     assign_servers,
                     fair_shares,
                     order_transmissions,
)
from .torch_profile import TorchProfile, profile_layers, profile_module
from .trace import (
                     COMMUNICATION,
                     COMPUTATION,
                     RESOURCES,
                     Op,
                     Step,
                     Trace,
                     from_layers,
                     from_pipedream,
)

__all__ = [
    "torch_profile", "DTYPE_BYTES", "load_torch_profiler", "TorchProfile", "profile_layers",
    "profile_module",
    # traces
    "RESOURCES", "COMMUNICATION", "COMPUTATION", "Op", "Step", "Trace", "from_layers",
    "from_pipedream",
    # engine
    "MODES", "SHARINGS", "SERVER_CPUS", "SERVER_SHARINGS", "ENGINES", "AUTO_JITTER", "AUTO_NUMBA_SIZE",
    "SimResult", "simulate", "numba_available",
    # model object, sweeps, export
    "ARCHITECTURES", "PHASES", "TraceSim", "BlockTrace", "simulate_range", "split_servers",
    "shard_servers",
    "chrome_trace",
    # Li et al. 2020 (TensorFlow)
    "tensorflow", "GRPC_WINDOW", "ORDERS", "assign_servers", "add_parsing_overhead",
    "order_transmissions", "fair_shares",
]
