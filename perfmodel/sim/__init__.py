"""Fine-grained, trace-driven simulation of distributed SGD (seeds 000 and 003).

Profile one worker, predict a cluster: a :class:`Trace` holds profiled SGD
steps as DAGs of operations on four resources (downlink, worker, uplink, ps);
:func:`simulate` runs seed 003's Algorithm 1 (seed 000's Algorithm 3.1) for
K workers sharing the parameter servers' links, in async, sync or all-reduce
mode; :class:`TraceSim` wraps it as a model object for the optimizer;
:func:`chrome_trace` exports the synthetic trace for Perfetto;
:mod:`perfmodel.sim.tensorflow` has seed 000's TensorFlow mechanisms.

>>> t = Trace.from_layers([50e6, 50e6], [0.05, 0.05], [0.1, 0.1], 0.01, overlap=False)
>>> r = simulate(t, 4, 1.25e9, mode="sync", sharing="fcfs", steps=5, warmup=1)
>>> round(r.step_time, 9)     # seed 003 eq. 8: (K + 1) M/B + T_F + T_B + T_S
0.71

References
----------
Seed 003 (``003_466ded720105ddf3.txt``) Sec. 2.2 and 3.2 (Algorithm 1); seed 000
(``000_cda5e38913b29ee8.txt``) Sec. 3 and 5 (Algorithm 3.1).
"""

from . import tensorflow, torch_profile
from .chrome_import import DTYPE_BYTES, load_torch_profiler
from .torch_profile import TorchProfile, profile_layers, profile_module
from .engine import (AUTO_JITTER, AUTO_NUMBA_SIZE, ENGINES, MODES, SERVER_CPUS, SERVER_SHARINGS,
                     SHARINGS, SimResult, numba_available, simulate)
from .export import chrome_trace
from .model import ARCHITECTURES, PHASES, BlockTrace, TraceSim, simulate_range, split_servers
from .tensorflow import (GRPC_WINDOW, ORDERS, add_parsing_overhead, assign_servers, fair_shares,
                         order_transmissions)
from .trace import (COMMUNICATION, COMPUTATION, RESOURCES, Op, Step, Trace, from_layers,
                    from_pipedream)

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
    "chrome_trace",
    # seed 000 (TensorFlow)
    "tensorflow", "GRPC_WINDOW", "ORDERS", "assign_servers", "add_parsing_overhead",
    "order_transmissions", "fair_shares",
]
