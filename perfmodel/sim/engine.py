"""Trace-driven simulation of distributed SGD (Li et al. 2022, Algorithm 1; Li et al. 2020).

:func:`simulate` turns the profile of one worker (a :class:`~perfmodel.sim.trace.Trace`)
into the synthetic trace of K workers sharing parameter-server links, and
returns a :class:`SimResult` with the throughput (SGD steps/s summed over the
workers), every step's start and end, the mean critical path per resource
and the resources' utilizations.

Semantics (Li et al. 2022, Sec. 2.2.2 and 3.2; Li et al. 2020, Sec. 3.4 and 5):

* Each worker has its own schedulers per resource (downlink, worker, uplink,
  ps; per server when there are several): ready ops wait in FIFO order and
  at most one op per worker and resource runs at a time.  Computations
  (``worker``, ``ps``) are never shared: every worker has its own compute
  and, with ``server_cpu="own"`` (the default), its own cores on the server
  (Share = 1).  ``server_cpu="fcfs"`` gives each server a single update CPU
  instead, as the ns-3 engine's ``JobRunner`` has (a named option; the
  papers leave it open): a ready ``ps`` op that finds its server busy joins the server's
  FIFO and starts when the op before it finishes.  Ops that become ready at
  the same instant join in the engine's event order (the event processed
  first joins first; within an event, in the order the op's worker queues
  it).  When a ``ps`` op ends, the head of the FIFO starts before anything
  else of that event, so the finishing worker's next ``ps`` op queues behind
  the waiting workers.  The wait counts as ``ps`` on the critical path; the
  recorded start of an op is when it got the CPU.
* Transmissions share the server's link in their direction among the
  workers *using* it: ``sharing="ps"`` splits it equally (Share = 1/n),
  ``"fcfs"`` gives it whole to the worker that started using it first
  (with several servers, as much of it as that worker's NIC has left, the
  rest to the next: ``server_sharing``),
  ``"hybrid"`` runs both and averages the two throughputs (Li et al. 2022,
  Sec. 3.2.1).  ``per_flow_cap`` bounds the rate of each flow (Li et al. 2022,
  Sec. 4.4).
* ``mode="async"``: a worker starts its next step as soon as its current one
  ends; ``"sync"``: all workers start the next step together once every
  worker has finished (the barrier of Algorithm 1 line 36); ``"allreduce"``:
  sync, without downlink and update ops, each uplink op replaced by a ring
  all-reduce of its tensor at the full bandwidth, ``2 (K - 1) / K * size / B``
  (Li et al. 2022, Sec. 3.2.2).
* Each worker's steps are sampled with replacement from the profiled steps
  (seeded; Algorithm 1's STARTRANDOMSTEP).  A step starts with its ops that
  wait for nothing (Algorithm 1 starts the downlinks, the roots of its
  traces), queued in listing order; ops made ready by a completion are
  queued in the order of their listing among the completed op's dependents.
* Events at the same instant are processed in the order their ops started
  (the stable sort of Q in Algorithm 1 line 10).

The two documented fixes (docs/models.md) to Algorithm 1 as printed, applied here:

1. A worker *uses* a resource (is in ``active[r]``, which sets everyone's
   share) while it has an op of that resource running **or queued** (line
   21 as printed tests only the queue, so a second op of the same worker
   would start at once and the worker would be counted twice).  Under FCFS
   the worker keeps its place while it sends its queued tensors back to back.
2. A step is complete only when **every** op of it has finished (line 31 as
   printed tests the schedulers only, which are empty while the last ops are
   still running).

Desynchronizing async workers (a design decision, docs/models.md).  A deterministic trace in
async mode stays in lock-step forever under equal sharing.  Sampling several
profiled steps desynchronizes workers as in the papers; a trace with a single
step cannot, so ``jitter=None`` (auto) multiplies every computation of a
sampled step by a seeded Gamma factor of mean 1 and coefficient of variation
:data:`AUTO_JITTER` when the mode is async, there are several workers and a
worker type has a single profiled step; otherwise no jitter.  The result's
``meta["desync"]`` says which was done.

Warm-up: the first ``warmup`` steps of every worker are simulated but left out
of the throughput, the critical paths and the utilizations.

Timeouts (ours; the ``Cluster`` fields ``timeout_probability`` and
``retransmit_timeout``).  On a lossy link TCP sometimes recovers a tail loss
only by a retransmission timeout.  With ``timeout_probability`` q > 0 every
transmission op (a pull on a downlink or a push on an uplink, in every mode
and sharing, with ``server_cpu="fcfs"`` too) independently stalls once with
probability q, for ``retransmit_timeout`` rto seconds *after its bytes are
delivered*: its transmission work is done and it stops using the link when
its last byte arrives (it leaves the link's active set, or the worker starts
its next queued transmission on that link, so the others' shares go up at
that instant, exactly as at a completion), but the op completes -- its
dependents become ready and it counts towards the end of its step -- only
rto later.  The link is free for the others meanwhile.  With the HTTP/2
window an op stalls at most once, after its last chunk.  All-reduce mode
ignores the timeouts (its all-reduce ops are not point-to-point messages;
``meta["timeouts"]`` says so).  The draws are the
Bernoulli(q) booleans of :func:`timeout_draws`, one per (worker, step, op
index), from a stream of their own (``default_rng([seed, TIMEOUT_STREAM])``),
so q = 0 draws nothing and leaves every other result bit for bit as without
timeouts; the hybrid's PS and FCFS runs see the same draws.  On the critical
path a stall counts with its op's resource (``downlink``/``uplink``: the op
lasts from its start to its completion, stall included), and a recorded op
(``record=True``) ends at its completion.  The utilizations count
transmitted work only, so a stall never counts as link busy time (the longer
window lowers them).

Where the stall happens, ``timeout_position`` (ours): ``"tail"`` (the
default) as above, after the last byte.  ``"uniform"``: at a uniformly random
point u of the message (losses uniform over its packets, as
:func:`perfmodel.coarse.timeout_stall` assumes): when the op has delivered
the fraction u of its transmission work it leaves the link exactly as at a
completion (the others' shares go up at that instant), stays outstanding,
and rto later rejoins the link with its remaining work ``(1 - u)`` under the
link's sharing: it goes to the end of its worker's queue for that link and,
if the worker sends nothing else there, starts at once -- joining the
link's active set at the back, as a newly started flow (PS: an equal share
with whoever is active then; FCFS: behind them).  Under PS sharing in a
sync phase the other workers' bytes then hide part of the stall, which a
tail stall never is (all flows end together).  u comes from
:func:`timeout_points`, a third stream (``default_rng([seed,
TIMEOUT_STREAM, 1])``) drawn only for ``"uniform"``, so ``"tail"`` draws
exactly what it drew before the option existed.  With the HTTP/2 window
the stall point applies to the op's whole work: the service (chunk) that
would cross it is cut there; after the stall the op sends all the rest on
its next turn (the rejoin takes the place of the window's second turn, so
the rest is not split again).  The critical path charges the whole op,
stall and wait included, to its link, as for a tail stall; a recorded op
starts at its first byte and ends at its completion.

References
----------
Li, Paolieri, Golubchik, Lin, Yan. Predicting Throughput of Distributed SGD.
IEEE TPDS, 2022.  Sec. 2.2.2 Algorithm 1, Sec. 3.2.1-3.2.2, Sec. 4.4
(per-flow cap).

Li, Yan, Paolieri, Golubchik. Throughput Prediction of Asynchronous SGD in
TensorFlow. ICPE, 2020.  Sec. 3.1, 3.2.2 (HTTP/2 window), 3.4 Algorithm 3.1
and Sec. 5 (several servers).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import math
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from .. import _validate as _v
from ..errors import SpecError
from . import _kernel, _kernel_jit, _pyloop
from .trace import PHASE_OF, RESOURCES, Trace

__all__ = ["MODES", "SHARINGS", "SERVER_SHARINGS", "SERVER_CPUS", "ENGINES", "AUTO_JITTER",
           "AUTO_NUMBA_SIZE", "TIMEOUT_STREAM", "TIMEOUT_POSITIONS", "SimResult", "simulate",
           "draws", "timeout_draws", "timeout_points", "numba_available", "worker_spread"]

#: Synchronization modes of :func:`simulate`.
MODES = ("async", "sync", "allreduce")
#: Link-sharing models (Li et al. 2022's Share(); "hybrid" averages the "ps" and "fcfs"
#: throughputs).
SHARINGS = ("ps", "fcfs", "hybrid")
#: With several servers: "nic" (no worker's NIC carries more than its line rate: "ps"
#: max-min fair over server links and worker NICs, Li et al. 2020, Sec. 5; "fcfs" each
#: link's workers in arrival order, each taking what its NIC has left) or "independent"
#: (each server link shared on its own, as if a worker had a NIC per server).
SERVER_SHARINGS = ("nic", "independent")
#: Update CPUs on a server: one per worker ("own", Share = 1), or one per
#: server serving ``ps`` ops first come first served ("fcfs", the ns-3 engine).
SERVER_CPUS = ("own", "fcfs")
#: Event-loop implementations: compiled with numba, or the same algorithm in CPython
#: (:mod:`perfmodel.sim._pyloop`; the same results bit for bit).
ENGINES = ("auto", "numba", "python")
#: Coefficient of variation of the auto jitter (see the module notes).
AUTO_JITTER = 0.05
#: ``engine="auto"`` takes the compiled event loop (numba) at once for runs with more
#: than this many ``workers * steps * ops per step``; smaller runs take it once the
#: CPython loop has cost this process more than loading it would (see :func:`simulate`).
AUTO_NUMBA_SIZE = 30_000
#: Second word of the seed of the timeout draws' random stream (``[seed, TIMEOUT_STREAM]``),
#: kept apart from the stream of :func:`draws` so that timeouts leave those draws unchanged.
TIMEOUT_STREAM = 0x52544F   # "RTO"
#: Where a retransmission-timeout stall happens in its message: after the last byte
#: ("tail"), or at a uniformly random point ("uniform"); see the module notes.
TIMEOUT_POSITIONS = ("tail", "uniform")

_KIND = {r: i for i, r in enumerate(RESOURCES)}
_SHARING_CODE = {"ps": 0, "fcfs": 1}


# ---------------------------------------------------------------------- compiled kernel

_COMPILED: dict = {}
#: CPython seconds spent in the event loop by this process (for ``engine="auto"``).
_SPENT = {"python": 0.0}
#: What ``engine="auto"`` expects, measured on the 2-core reference machine: seconds to
#: compile the event loop, to load it from numba's disk cache, and CPython seconds per
#: ``worker * step * op``.
_COMPILE_SECONDS = 10.0
_LOAD_SECONDS = 1.0
_PYTHON_SECONDS_PER_OP = 1e-5
#: Run every case on the kernel's O(K) scan path (tests compare it with the heap path).
_SCAN_ALWAYS = False
#: Run ``engine="python"`` on the kernel's own source, not on :mod:`perfmodel.sim._pyloop`
#: (tests compare the two).
_KERNEL_ALWAYS = False


def numba_available() -> bool:
    """Whether numba can be imported (the compiled engine is then the default)."""
    try:
        return importlib.util.find_spec("numba") is not None
    except (ImportError, ValueError):
        return False


def _numba_kernel():
    """The event loop compiled with numba (once per process; cached on disk)."""
    if "numba" not in _COMPILED:
        _COMPILED["numba"] = _kernel_jit.load()
    return _COMPILED["numba"]


def _auto_engine(size) -> str:
    """``engine="auto"``: the engine expected to cost this process least.

    The compiled loop once it is in the process, or for a run of more than
    :data:`AUTO_NUMBA_SIZE` ``workers * steps * ops``; else once the CPython
    time spent so far plus this run's estimate exceeds what getting the
    compiled loop costs (loading numba's disk cache, about a second, or
    compiling, several seconds); else CPython.  Both give the same result.
    """
    if not numba_available():
        return "python"
    if "numba" in _COMPILED or size > AUTO_NUMBA_SIZE:
        return "numba"
    cost = _LOAD_SECONDS if _kernel_jit.cached() else _COMPILE_SECONDS
    spent = _SPENT["python"] + size * _PYTHON_SECONDS_PER_OP
    return "numba" if spent > cost else "python"


def _run_numba(kwargs) -> None:
    """Call the compiled loop; say on stderr when numba has to compile it first."""
    kernel = _numba_kernel()
    if _COMPILED.get("announce", True):
        _COMPILED["announce"] = False
        if _kernel_jit.will_compile(kernel, kwargs):
            print("perfmodel: compiling the simulator's event loop (once; numba caches it on "
                  "disk) ...", file=sys.stderr, flush=True)
    kernel(**kwargs)


def _run_python(inputs, scalars, out, buf, sizes):
    """The event loop in CPython; the outputs as arrays and the kernel's ``cnt``.

    The heap path runs :mod:`perfmodel.sim._pyloop` (the kernel's algorithm
    written for the interpreter, equal to it bit for bit); the scan path
    (max-min NIC rule), and every case when :data:`_KERNEL_ALWAYS` is set,
    the kernel's own source on Python lists.
    """
    lists = {k: v.tolist() for k, v in {**inputs, **out}.items()}
    if inputs["dims"][7] == 0 and not _KERNEL_ALWAYS:
        names = ("op_slot", "op_work", "op_ndeps", "succ_ptr", "succ_idx", "step_first",
                 "step_nops", "root_ptr", "root_idx", "samples", "factors", "stalls",
                 "stall_u")
        events, records, stuck = _pyloop.run(
            **{k: lists[k] for k in names}, sizes=sizes,
            **{k: scalars[k] for k in ("sync", "sharing", "cap", "win", "record", "tmo",
                                       "rto")},
            cpu_fcfs=int(buf["srv"][0]), **{k: lists[k] for k in out})
        cnt = np.array([0, 0, events, records, stuck])
    else:
        lists.update({k: v.tolist() for k, v in buf.items()})
        _kernel.run(**{k: lists[k] for k in inputs}, **scalars,
                    **{k: lists[k] for k in out}, **{k: lists[k] for k in buf})
        cnt = np.array(lists["cnt"])
    return {k: np.array(lists[k], dtype=out[k].dtype) for k in out}, cnt


# ---------------------------------------------------------------------- trace structure

@dataclass(frozen=True)
class _Structure:
    """A trace's steps as flat arrays (local op indices per step)."""

    kind: np.ndarray        # resource kind of each op (0..3)
    server: np.ndarray
    amount: np.ndarray      # bytes (links) or seconds (computations)
    ndeps: np.ndarray
    succ_ptr: np.ndarray    # CSR of successors, by global op
    succ_idx: np.ndarray    # local indices
    step_first: np.ndarray
    step_nops: np.ndarray
    root_ptr: np.ndarray
    root_idx: np.ndarray    # local indices
    labels: tuple           # (step, op id, name) per global op


def _contract(step, keep) -> tuple:
    """Kept ops of a step with the dropped ops' dependencies passed through.

    Returns ``(ops, preds)``: kept op objects and their predecessors (indices
    into the kept list), in order.  Dropping an op is Li et al. 2022, Sec. 3.2.2's
    "op.remaining equal to 0" without the zero-time events.
    """
    preds = step.preds
    memo: dict = {}

    def resolved(i):   # kept ancestors reached through dropped ops
        if i not in memo:
            out = []
            for p in preds[i]:
                if keep[p]:
                    out.append(p)
                else:
                    out.extend(resolved(p))
            memo[i] = list(dict.fromkeys(out))
        return memo[i]

    kept = [i for i in range(len(step.ops)) if keep[i]]
    new = {old: n for n, old in enumerate(kept)}
    return ([step.ops[i] for i in kept], [[new[p] for p in resolved(i)] for i in kept])


def _structure(trace: Trace, allreduce: bool) -> _Structure:
    cache = trace.__dict__.setdefault("_sim_structure", {})
    if allreduce in cache:
        return cache[allreduce]
    kind, server, amount, ndeps, succ_ptr, succ_idx = [], [], [], [], [0], []
    step_first, step_nops, root_ptr, root_idx, labels = [], [], [0], [], []
    for s, step in enumerate(trace.steps):
        keep = [not (allreduce and op.res in ("downlink", "ps")) for op in step.ops]
        if not any(keep):
            raise SpecError(f"steps[{s}]", "has no op left in allreduce mode (only downlink "
                                           "and ps ops)")
        ops, preds = _contract(step, keep)
        succ: list = [[] for _ in ops]
        for i, row in enumerate(preds):
            for p in row:
                succ[p].append(i)
        step_first.append(len(kind))
        step_nops.append(len(ops))
        for i, op in enumerate(ops):
            kind.append(_KIND[op.res])
            server.append(0 if op.res == "worker" else op.server)
            amount.append(op.amount)
            ndeps.append(len(preds[i]))
            succ_idx.extend(succ[i])
            succ_ptr.append(len(succ_idx))
            labels.append((s, op.id, op.name))
            if not preds[i]:
                root_idx.append(i)
        root_ptr.append(len(root_idx))
    i64 = np.int64
    out = _Structure(np.array(kind, i64), np.array(server, i64), np.array(amount, float),
                     np.array(ndeps, i64), np.array(succ_ptr, i64), np.array(succ_idx, i64),
                     np.array(step_first, i64), np.array(step_nops, i64),
                     np.array(root_ptr, i64), np.array(root_idx, i64), tuple(labels))
    cache[allreduce] = out
    return out


# ---------------------------------------------------------------------- result

def _frozen(mapping) -> Mapping:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True, eq=False)
class SimResult:
    """The outcome of one :func:`simulate` call.

    Attributes
    ----------
    throughput : float, steps/s
        SGD steps per second summed over the workers, warm-up excluded.  Sync
        (and all-reduce): ``K * n / (b_N - b_w)`` with ``b_k`` the barrier
        times; async: ``sum_w n / (e_w,N - e_w,w)`` with ``e`` a worker's step
        ends.  ``"hybrid"``: the mean of the PS and FCFS throughputs.
    sample_throughput : float, samples/s
        Same, weighted by each worker type's ``Trace.batch_size``.
    step_times : ndarray, s, shape (workers, steps - warmup)
        Each measured step's duration, ``ends - starts`` (async: the time
        between two completions of a worker; sync: barrier to the worker's end,
        so the step time is the maximum over workers).
    starts, ends : ndarray, s, shape (workers, steps)
        Start and end of every step, warm-up included.
    critical : mapping of str to float, s
        Mean seconds per step on the critical path, by resource kind
        (``downlink``, ``worker``, ``uplink``, ``ps``); they sum to
        :attr:`step_time` up to async sampling noise (sync: exactly, the
        path of the last worker to finish each step).  Transmissions count
        with their shared (stretched) duration, and a retransmission-timeout
        stall with its transmission's resource (module notes, "Timeouts").
    utilization : mapping of str to float
        Busy share of each resource kind over the measured window: for
        ``worker``/``ps`` (and links in all-reduce mode) the mean over
        workers; for shared links the mean over servers of transmitted work
        over window (1 = the link always full).
    events : int
        Op (or HTTP/2 chunk) completions processed, and ends of timeout stalls.
    wall_seconds : float, s
        Time the simulation took.
    ops : mapping of str to ndarray or None
        With ``record=True``: one row per finished op: ``worker``, ``step``,
        ``op`` (index into ``labels``), ``start``, ``end``, ``res``.
    labels : tuple
        ``(profiled step, op id, op name)`` per op index (with ``record=True``).
    runs : tuple of SimResult
        ``"hybrid"``: the ``"ps"`` and ``"fcfs"`` runs (the arrays above are
        the PS run's); else empty.
    meta : mapping
        Inputs and choices (mode, sharing, workers, bandwidth, seed, jitter,
        desync, engine ...).
    """

    throughput: float
    sample_throughput: float
    step_times: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    critical: Mapping[str, float]
    utilization: Mapping[str, float]
    events: int
    wall_seconds: float
    ops: Mapping[str, np.ndarray] | None = None
    labels: tuple = ()
    runs: tuple = ()
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "critical", _frozen(self.critical))
        object.__setattr__(self, "utilization", _frozen(self.utilization))
        object.__setattr__(self, "meta", _frozen(self.meta))

    @property
    def workers(self) -> int:
        """Number of workers K."""
        return int(self.starts.shape[0])

    @property
    def step_time(self) -> float:
        """Mean time between two steps of one worker, ``K / throughput`` (s).

        Sync: the barrier-to-barrier time.
        """
        return self.workers / self.throughput if self.throughput > 0 else math.inf

    @property
    def bottleneck(self) -> str:
        """The phase (:data:`~perfmodel.sim.trace.PHASE_OF`: ``"compute"`` for the
        workers, ``"update"`` for the servers) of the resource kind with the most
        time on the critical path; ``critical`` and ``utilization`` stay keyed by
        the trace's resource kinds."""
        return PHASE_OF[max(self.critical, key=self.critical.get)] if self.critical else ""

    def summary(self) -> dict:
        """JSON-ready summary (no per-step arrays)."""
        return {"throughput": self.throughput, "sample_throughput": self.sample_throughput,
                "step_time": self.step_time, "critical": dict(self.critical),
                "bottleneck": self.bottleneck, "utilization": dict(self.utilization),
                "events": self.events, "wall_seconds": self.wall_seconds,
                "meta": {k: v for k, v in self.meta.items()}}


# ---------------------------------------------------------------------- validation

def _check_int(name, value, minimum):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise SpecError(name, f"must be a whole number >= {minimum}, got {value!r}")
    return int(value)


def _check_rate(name, value, allow_none):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise SpecError(name, f"expected a number (bytes/s or bytes), got {value!r}")
    value = float(value)
    if not value > 0:
        raise SpecError(name, f"must be > 0, got {value!r}")
    return value


def _types(trace, workers):
    """``[(Trace, count), ...]`` from one trace and a count, or parallel sequences."""
    if isinstance(trace, Trace):
        return [(trace, _check_int("workers", workers, 1))]
    if isinstance(trace, (list, tuple)) and trace:
        if not isinstance(workers, (list, tuple, np.ndarray)) or len(workers) != len(trace):
            raise SpecError("workers", f"with {len(trace)} traces (worker types), give as many "
                                       f"worker counts, got {workers!r}")
        out = []
        for i, (t, n) in enumerate(zip(trace, workers)):
            if not isinstance(t, Trace):
                raise SpecError(f"trace[{i}]", f"expected a Trace, got {type(t).__name__}")
            out.append((t, _check_int(f"workers[{i}]", n, 0)))
        if sum(n for _, n in out) < 1:
            raise SpecError("workers", "needs at least one worker")
        return [(t, n) for t, n in out if n > 0]
    raise SpecError("trace", f"expected a Trace or a list of Traces (one per worker type), "
                             f"got {type(trace).__name__}")


# ---------------------------------------------------------------------- simulate

def simulate(trace, workers, bandwidth, mode="async", sharing="ps", steps=1000, warmup=50,
             seed=0, *, per_flow_cap=None, window=None, jitter=None, server_sharing="nic",
             record=False, engine="auto", server_cpu="own", timeout_probability=0.0,
             retransmit_timeout=0.2, timeout_position="tail") -> SimResult:
    """Simulate ``steps`` SGD steps of K workers from a single-worker trace.

    Parameters
    ----------
    trace : Trace or sequence of Trace
        The profile of one worker; a sequence gives one trace per worker type
        (heterogeneous workers, Li et al. 2022, Sec. 2.2.2), with ``workers`` then a
        sequence of counts.
    workers : int or sequence of int
        K workers (>= 1), or a count per worker type.
    bandwidth : float, bytes/s
        Bandwidth B of every link (the server's, each worker's NIC); a
        transmission of ``bytes`` alone takes ``bytes / B``.
    mode : {"async", "sync", "allreduce"}
        See the module notes.
    sharing : {"ps", "fcfs", "hybrid"}
        Link sharing among workers (ignored in all-reduce mode: Share = 1).
    steps : int
        Steps simulated per worker (>= 1), warm-up included.
    warmup : int
        First steps of every worker left out of the measurements (0 <= warmup < steps).
    seed : int
        Seeds the sampling of profiled steps (and the jitter).
    per_flow_cap : float or None, bytes/s
        Largest rate of one transmission (Li et al. 2022, Sec. 4.4), ``None``: no cap.
        Not applied in all-reduce mode.
    window : float or None, bytes
        HTTP/2 flow-control window WIN (Li et al. 2020, Sec. 3.2.2): a transmission
        larger than WIN sends WIN, goes back to the end of the worker's queue
        for that link, and sends the rest on its second turn.  ``None``: flow
        control disabled, each transmission is sent whole in queue order (Sec. 3.3).
    jitter : float or None
        Coefficient of variation (>= 0) of a seeded Gamma factor of mean 1
        multiplying every computation of a sampled step; ``None``: automatic
        (see the module notes).
    server_sharing : {"nic", "independent"}
        With several servers, ``"nic"``: no worker's NIC carries more than its
        line rate.  Under ``"ps"`` the rates are max-min fair under the server
        links and each worker's NIC (Li et al. 2020, Sec. 5: a worker alone on
        server 1 but sharing server 2 with n - 1 others gets ``1/n`` to server 2
        and ``1 - 1/n`` to server 1); under ``"fcfs"`` each server link serves
        its workers in arrival order, each taking what the earlier ones left of
        the link and what its own NIC has left (max-min fair among the workers
        at the same place of their links' orders), so one worker sending to P
        servers splits its NIC among them.  ``"independent"``: each server link
        shared on its own, as if a worker had one NIC per server.
    record : bool
        Keep every op's start and end (``SimResult.ops``; for
        :func:`~perfmodel.sim.export.chrome_trace`).  Memory grows with
        ``workers * steps * ops``.
    engine : {"auto", "numba", "python"}
        The compiled event loop (numba) or the same algorithm in CPython; "auto"
        takes numba when it is installed and the run is large (more than
        :data:`AUTO_NUMBA_SIZE` workers x steps x ops), numba is already
        loaded in this process, or the CPython loop has already cost this
        process more than loading the compiled one would (about a second
        from numba's disk cache, several seconds to compile it, which is
        announced on stderr).  Both give the same result.
    server_cpu : {"own", "fcfs"}
        ``"own"``: every worker has its own update CPU on each server (``ps``
        ops never wait for each other: Share = 1 of Li et al. 2022); ``"fcfs"``:
        each server has one update CPU running the workers' ``ps`` ops one at a
        time, first come first served (see the module notes).
    timeout_probability : float
        q in [0, 1]: probability that a transmission op stalls once for a
        retransmission timeout after its bytes are delivered (see the module
        notes; ignored in all-reduce mode).  0: loss-free, as without it.
    retransmit_timeout : float, s
        rto > 0: the length of one stall.
    timeout_position : {"tail", "uniform"}
        Where a stall happens: after the message's last byte (``"tail"``), or
        at a uniformly random point of it, the message leaving the link
        meanwhile and rejoining it with the rest rto later (``"uniform"``;
        see the module notes).

    Returns
    -------
    SimResult
        ``throughput`` in SGD steps/s summed over workers, ``step_times`` per
        step, critical paths, utilizations.

    Raises
    ------
    SpecError
        Naming the argument.

    References
    ----------
    Li et al. 2022, Algorithm 1 (GENERATETRACE, STARTRANDOMSTEP, Share), Sec. 3.2.1
    (barrier, hybrid), 3.2.2 (all-reduce), 4.4 (per-flow cap); Li et al. 2020
    Algorithm 3.1, Sec. 3.2.2 (WIN), Sec. 5 (two servers).

    Examples
    --------
    One worker, sequential phases: 1/(M/B + T_F + T_B + M/B + T_S) steps/s.

    >>> t = Trace.from_layers([1e8], [0.1], [0.2], 0.01, overlap=False)
    >>> r = simulate(t, 1, 1.25e9, steps=20, warmup=0)
    >>> round(1 / r.throughput, 9)
    0.47
    >>> r = simulate(t, 4, 1.25e9, mode="sync", sharing="ps", steps=10, warmup=2)
    >>> round(r.step_time, 9), r.bottleneck   # Li et al. 2022, eq. 7: 2 K M/B + T_F + T_B + T_S
    (0.95, 'downlink')
    """
    types = _types(trace, workers)
    K = sum(n for _, n in types)
    b = _check_rate("bandwidth", bandwidth, False)
    mode = _v.choice("mode", mode, MODES)
    sharing = _v.choice("sharing", sharing, SHARINGS)
    n_steps = _check_int("steps", steps, 1)
    warm = _check_int("warmup", warmup, 0)
    if warm >= n_steps:
        raise SpecError("warmup", f"must be < steps ({n_steps}), got {warm}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise SpecError("seed", f"must be an integer, got {seed!r}")
    cap = _check_rate("per_flow_cap", per_flow_cap, True)
    win = _check_rate("window", window, True)
    if jitter is not None:
        if isinstance(jitter, bool) or not isinstance(jitter, (int, float, np.floating)) \
                or not (math.isfinite(jitter) and 0 <= jitter <= _v.MAX_CV):
            raise SpecError("jitter", f"must be a number in [0, {_v.MAX_CV:g}] or None, "
                                      f"got {jitter!r}")
    server_sharing = _v.choice("server_sharing", server_sharing, SERVER_SHARINGS)
    if not isinstance(record, (bool, np.bool_)):
        raise SpecError("record", f"expected True or False, got {record!r}")
    engine = _v.choice("engine", engine, ENGINES)
    server_cpu = _v.choice("server_cpu", server_cpu, SERVER_CPUS)
    if engine == "numba" and not numba_available():
        raise SpecError("engine", "'numba' needs the numba package (pip install numba); "
                                  "use 'auto' or 'python'")
    tmo = (_check_real("timeout_probability", timeout_probability, 0.0, 1.0, True),
           _check_real("retransmit_timeout", retransmit_timeout, 0.0, math.inf, False),
           _v.choice("timeout_position", timeout_position, TIMEOUT_POSITIONS))
    if mode != "allreduce" and sharing == "hybrid":
        runs = tuple(_simulate_one(types, K, b, mode, s, n_steps, warm, seed, cap, win, jitter,
                                   server_sharing, record, engine, server_cpu, tmo)
                     for s in ("ps", "fcfs"))
        ps, fcfs = runs
        meta = dict(ps.meta, sharing="hybrid")
        return dataclasses.replace(
            ps, throughput=0.5 * (ps.throughput + fcfs.throughput),
            sample_throughput=0.5 * (ps.sample_throughput + fcfs.sample_throughput),
            events=ps.events + fcfs.events, wall_seconds=ps.wall_seconds + fcfs.wall_seconds,
            runs=runs, meta=meta)
    return _simulate_one(types, K, b, mode, sharing, n_steps, warm, seed, cap, win, jitter,
                         server_sharing, record, engine, server_cpu, tmo)


def _check_real(name, value, low, high, closed_low):
    """A finite number in [low, high] (``(low, high]`` unless ``closed_low``), as float."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise SpecError(name, f"expected a number, got {value!r}")
    value = float(value)
    ok_low = value >= low if closed_low else value > low
    if not (math.isfinite(value) and ok_low and value <= high):
        if math.isinf(high):
            span = f"{'>=' if closed_low else '>'} {low:g}"
        else:
            span = f"in {'[' if closed_low else '('}{low:g}, {high:g}]"
        raise SpecError(name, f"must be a finite number {span}, got {value!r}")
    return value


def draws(traces, counts, steps, seed, mode, jitter):
    """The seeded random draws of a simulation: sampled steps and jitter factors.

    Parameters
    ----------
    traces : list of Trace
        One per worker type.
    counts : list of int
        Workers of each type (workers are numbered type by type).
    steps : int
        Steps per worker.
    seed : int
    mode : str
    jitter : float or None
        As in :func:`simulate` (None: automatic).

    Returns
    -------
    samples : ndarray of int, shape (K, steps)
        Index of the profiled step (within its type's trace) each worker runs
        at each of its steps (sampling with replacement, Li et al. 2022, Algorithm 1
        STARTRANDOMSTEP line 1).
    factors : ndarray, shape (K, steps)
        Multiplier of the computations of each sampled step (Gamma, mean 1).
    cv : float
        The jitter's coefficient of variation used.
    desync : str
        How async workers are desynchronized (a design decision, docs/models.md).
    """
    rng = np.random.default_rng(seed)
    K = int(sum(counts))
    samples = np.concatenate([rng.integers(0, len(t.steps), size=(n, steps))
                              for t, n in zip(traces, counts)]).astype(np.int64)
    if jitter is None:
        single = any(len(t.steps) == 1 for t in traces)
        cv = AUTO_JITTER if (mode == "async" and K > 1 and single) else 0.0
        desync = (f"auto: seeded Gamma jitter, cv {cv} on computations (a worker type has a "
                  "single profiled step)" if cv > 0 else
                  "auto: sampling profiled steps with replacement only")
    else:
        cv = float(jitter)
        desync = (f"jitter cv {cv} on computations, and sampling of profiled steps"
                  if cv > 0 else "sampling profiled steps with replacement only")
    if cv > 0:
        factors = rng.gamma(1.0 / cv ** 2, cv ** 2, size=(K, steps))
    else:
        factors = np.ones((K, steps))
    return samples, factors, cv, desync


def timeout_draws(workers, steps, ops, seed, probability) -> np.ndarray:
    """Which transmission ops stall for a retransmission timeout (module notes, "Timeouts").

    Parameters
    ----------
    workers, steps : int
        K workers, steps per worker (warm-up included).
    ops : int
        M, the most ops in a step (of the structure simulated); op ``j`` of a
        step is the step's j-th op in the trace's listing (without the ops
        all-reduce mode drops).
    seed : int
        The simulation's seed; the stream is ``default_rng([seed, TIMEOUT_STREAM])``.
    probability : float
        q in [0, 1].

    Returns
    -------
    ndarray of bool, shape (workers, steps, ops)
        True: that op stalls once (only transmission ops read it).  Ours:
        independent Bernoulli(q) per message, ``uniform < q`` so that q = 1
        stalls every message.
    """
    rng = np.random.default_rng([seed, TIMEOUT_STREAM])
    return rng.random((workers, steps, ops)) < probability


def timeout_points(workers, steps, ops, seed) -> np.ndarray:
    """Where each message would stall with ``timeout_position="uniform"`` (module notes).

    Parameters
    ----------
    workers, steps, ops, seed : int
        As in :func:`timeout_draws`; the stream is
        ``default_rng([seed, TIMEOUT_STREAM, 1])``, apart from the draws of
        :func:`timeout_draws` (which stay as they are with ``"tail"``).

    Returns
    -------
    ndarray of float, shape (workers, steps, ops)
        u in [0, 1): the fraction of its transmission work an op has
        delivered when it stalls (read only where :func:`timeout_draws` says
        the op stalls).  Ours: uniform, losses being uniform over a
        message's packets (as :func:`perfmodel.coarse.timeout_stall` assumes).
    """
    rng = np.random.default_rng([seed, TIMEOUT_STREAM, 1])
    return rng.random((workers, steps, ops))


def _simulate_one(types, K, b, mode, sharing, N, warm, seed, cap, win, jitter, server_sharing,
                  record, engine, server_cpu, tmo=(0.0, 0.2, "tail")) -> SimResult:
    clock = time.perf_counter()
    allreduce = mode == "allreduce"
    structs = [_structure(t, allreduce) for t, _ in types]
    S = max(t.n_servers for t, _ in types)
    # global op table over the worker types
    offsets, op_off, step_off = [], 0, 0
    for st in structs:
        offsets.append((op_off, step_off))
        op_off += len(st.kind)
        step_off += len(st.step_first)
    cat = np.concatenate
    kind = cat([st.kind for st in structs])
    server = cat([st.server for st in structs])
    amount = cat([st.amount for st in structs])
    is_link = (kind == 0) | (kind == 2)
    if allreduce:
        scale = np.where(kind == 2, 2.0 * (K - 1) / K / b, 1.0)
    else:
        scale = np.where(is_link, 1.0 / b, 1.0)
    work = amount * scale
    op_slot = kind * S + server
    n_succ = np.cumsum([0] + [len(st.succ_idx) for st in structs])
    n_root = np.cumsum([0] + [len(st.root_idx) for st in structs])
    succ_ptr = cat([st.succ_ptr[:-1] + n_succ[i] for i, st in enumerate(structs)]
                   + [n_succ[-1:]])
    succ_idx = cat([st.succ_idx for st in structs])
    step_first = cat([st.step_first + o for st, (o, _) in zip(structs, offsets)])
    step_nops = cat([st.step_nops for st in structs])
    root_ptr = cat([st.root_ptr[:-1] + n_root[i] for i, st in enumerate(structs)]
                   + [n_root[-1:]])
    root_idx = cat([st.root_idx for st in structs])
    M = int(step_nops.max())
    # sampling with replacement (STARTRANDOMSTEP line 1) and jitter, seeded
    local, factors, cv, desync = draws([t for t, _ in types], [n for _, n in types], N, seed,
                                       mode, jitter)
    worker_type = np.repeat(np.arange(len(types)), [n for _, n in types])
    samples = local + np.array([offsets[i][1] for i in worker_type], np.int64)[:, None]
    share_code = 2 if allreduce else _SHARING_CODE[sharing]
    cap_frac = 1.0 if (cap is None or allreduce) else min(1.0, cap / b)
    win_work = _kernel.INF if (win is None or allreduce) else win / b
    nic = 1 if (server_sharing == "nic" and S > 1) else 0
    # max-min rates over server links and NICs differ between a link's flows: scan them
    scan = 1 if (_SCAN_ALWAYS or (nic and share_code < 2)) else 0
    NS, L = 4 * S, 2 * S
    q_tmo, rto, position = tmo
    stalling = q_tmo > 0 and not allreduce     # q = 0: draw nothing (bit-for-bit as before)
    stalls = (timeout_draws(K, N, M, seed, q_tmo).astype(np.int64).ravel() if stalling
              else np.zeros(1, np.int64))
    midway = stalling and position == "uniform"
    stall_u = np.full(1, -1.0)
    if midway:                                 # u where the op stalls, -1 elsewhere
        stall_u = np.where(stalls != 0, timeout_points(K, N, M, seed).ravel(), -1.0)
    tmo_code = (2 if midway else 1) if stalling else 0
    Q = 3 * M if midway else 2 * M             # an op queued up to 3 times (kernel notes)
    R = K * N * M if record else 1
    i64 = np.int64
    X, WM, WL = K * NS, K * M, K * L
    out = dict(step_start=np.zeros(K * N), step_end=np.zeros(K * N), crit=np.zeros(K * N * 4),
               rec_i=np.zeros(3 * R, i64), rec_t=np.zeros(2 * R))
    qst = np.zeros(4 * X, i64)
    qst[2 * X:3 * X] = -1
    buf = dict(wst=np.zeros(4 * K, i64), ost=np.zeros(3 * WM, i64), ofl=np.zeros(3 * WM),
               qst=qst, qch=np.zeros(X), qbuf=np.zeros(X * Q, i64),
               ht=np.zeros(X + 1 + (WM if stalling else 0)),   # + the stalled ops
               hi=np.zeros(3 * (X + 1 + (WM if stalling else 0)), i64),
               lin=_link_lists(L, WL), lfl=np.zeros(3 * WL + 2 + 4 * L),
               nxt_t=np.full(2, _kernel.INF), nxt_i=np.array([0, -1, 0, 0, -1, 0], i64),
               tmp_rem=np.zeros(S + K), tmp_cnt=np.zeros(S + K, i64),
               frozen=np.zeros(WL, i64), cnt=np.zeros(5, i64),
               srv=_server_cpus(server_cpu, S, K))
    inputs = dict(op_slot=op_slot.astype(i64), op_work=work.astype(float),
                  op_ndeps=cat([st.ndeps for st in structs]).astype(i64),
                  succ_ptr=succ_ptr.astype(i64), succ_idx=succ_idx.astype(i64),
                  step_first=step_first.astype(i64), step_nops=step_nops.astype(i64),
                  root_ptr=root_ptr.astype(i64), root_idx=root_idx.astype(i64),
                  samples=samples.ravel(), factors=factors.ravel(),
                  dims=_dims(S, K, L, M, NS, Q, N, scan, share_code), stalls=stalls,
                  stall_u=np.asarray(stall_u, float))
    scalars = dict(sync=0 if mode == "async" else 1, sharing=share_code, cap=cap_frac, nic=nic,
                   win=win_work, record=1 if record else 0, tmo=tmo_code, rto=float(rto))
    if engine == "auto":
        engine = _auto_engine(K * N * M)
    if engine == "numba":
        _run_numba({**inputs, **scalars, **out, **buf})
        res = out
        cnt = buf["cnt"]
    else:
        start = time.perf_counter()
        res, cnt = _run_python(inputs, scalars, out, buf, (S, K, M, N))
        _SPENT["python"] += time.perf_counter() - start
    if cnt[4]:
        raise RuntimeError("simulation stalled before every worker finished its steps "
                           "(internal error; please report the trace)")
    starts = res["step_start"].reshape(K, N)
    ends = res["step_end"].reshape(K, N)
    crit = res["crit"].reshape(K, N, 4)
    n = N - warm
    batch = np.array([types[i][0].batch_size for i in worker_type], float)
    if mode == "async":
        t0 = ends[:, warm - 1] if warm else np.zeros(K)
        if not (ends[:, -1] > t0).all():
            w = int(np.flatnonzero(~(ends[:, -1] > t0))[0])
            raise SpecError("trace", f"worker {w}'s measured steps take no time (every op it "
                                     "sampled has 0 bytes or 0 seconds)")
        rates = n / (ends[:, -1] - t0)
        throughput = float(rates.sum())
        sample_tp = float((rates * batch).sum())
        path = crit[:, warm:, :].reshape(-1, 4).mean(axis=0)
        window_w = ends[:, -1] - t0
        window = float(ends[:, -1].max() - t0.min())
    else:
        barrier = ends.max(axis=0)
        t0 = barrier[warm - 1] if warm else 0.0
        interval = barrier[-1] - t0
        if not interval > 0:
            raise SpecError("trace", "the measured steps take no time (every op sampled has "
                                     "0 bytes or 0 seconds)")
        throughput = float(K * n / interval)
        sample_tp = float(batch.sum() * n / interval)
        last = ends[:, warm:].argmax(axis=0)
        path = crit[last, np.arange(warm, N), :].mean(axis=0)
        window_w = np.full(K, interval)
        window = float(interval)
    critical = {r: float(path[i]) for i, r in enumerate(RESOURCES)
                if not (allreduce and r in ("downlink", "ps"))}
    # utilizations from the work of the sampled steps (measured steps only)
    util = _utilization(kind, server, work, step_first, step_nops, samples[:, warm:],
                        factors[:, warm:], window_w, window, S, allreduce)
    ops = None
    labels: tuple = ()
    if record:
        nr = int(cnt[3])
        ri = res["rec_i"][:3 * nr].reshape(nr, 3)
        rt = res["rec_t"][:2 * nr].reshape(nr, 2)
        ops = {"worker": ri[:, 0].copy(), "step": ri[:, 1].copy(), "op": ri[:, 2].copy(),
               "start": rt[:, 0].copy(), "end": rt[:, 1].copy()}
        ops["res"] = kind[ops["op"]]
        ops["server"] = server[ops["op"]]
        labels = tuple(lab for st in structs for lab in st.labels)
    meta = {"mode": mode, "sharing": "allreduce" if allreduce else sharing, "workers": K,
            "worker_types": [n for _, n in types], "bandwidth": b, "steps": N,
            "warmup": warm, "seed": seed, "per_flow_cap": cap, "window": win, "jitter": cv,
            "desync": desync, "servers": S, "server_sharing": server_sharing,
            "engine": engine, "server_cpu": server_cpu, "timeout_probability": q_tmo,
            "retransmit_timeout": rto, "timeout_position": position,
            "timeouts": _timeout_note(allreduce and q_tmo > 0, stalling, stalls, kind,
                                      step_first, step_nops, samples, M)}
    return SimResult(throughput=throughput, sample_throughput=sample_tp,
                     step_times=(ends - starts)[:, warm:], starts=starts, ends=ends,
                     critical=critical, utilization=util, events=int(cnt[2]),
                     wall_seconds=time.perf_counter() - clock, ops=ops, labels=labels,
                     meta=meta)


def _timeout_note(ignored, stalling, stalls, kind, step_first, step_nops, samples, M) -> str:
    """``meta["timeouts"]``: how many of the simulated messages stalled (warm-up included)."""
    if not stalling:
        return "ignored in all-reduce mode" if ignored else "none"
    j = np.arange(M)
    valid = j[None, :] < step_nops[:, None]                   # (profiled steps, M)
    idx = np.minimum(step_first[:, None] + j[None, :], len(kind) - 1)
    message = valid & ((kind[idx] == 0) | (kind[idx] == 2))
    per_step = message[samples]                               # (K, N, M)
    n_msg = int(per_step.sum())
    n_stall = int((per_step & (stalls.reshape(per_step.shape) != 0)).sum())
    return f"{n_stall} of {n_msg} messages stalled"


def _dims(S, K, L, M, NS, Q, N, scan, share_code) -> np.ndarray:
    """The kernel's ``dims``: sizes, path and sharing, then offsets into its buffers."""
    X, WM, WL = K * NS, K * M, K * L
    d = [S, K, L, M, NS, Q, N, scan, share_code, X, WM, WL]
    lin = 3 * L                           # next [3 L], prev, active, direction flags, ...
    d += [lin, lin + WL, lin + 2 * WL, lin + 3 * WL]
    h = lin + 3 * WL + 2                  # link flags, heap sizes, next seq, next worker, heaps
    d += [h, h + L, h + 2 * L, h + 3 * L, h + 4 * L]
    v = 2 * WL + 2                        # virtual time, its time, rate, next time, tags
    d += [v, v + L, v + 2 * L, v + 3 * L, v + 4 * L]
    return np.array(d, np.int64)


def _link_lists(L, WL) -> np.ndarray:
    """The kernel's ``lin`` buffer: empty active lists (heads and tails -1), no next flow."""
    lin = np.zeros(7 * L + 5 * WL + 2, np.int64)
    lin[:2 * L] = -1
    lin[6 * L + 3 * WL + 2:7 * L + 3 * WL + 2] = -1
    return lin


def _server_cpus(server_cpu, S, K) -> np.ndarray:
    """The kernel's ``srv`` buffer: flag, FIFO heads, lengths, running worker (-1), rings."""
    srv = np.zeros(1 + 3 * S + S * K, np.int64)
    srv[0] = 1 if server_cpu == "fcfs" else 0
    srv[1 + 2 * S:1 + 3 * S] = -1
    return srv


def _utilization(kind, server, work, step_first, step_nops, samples, factors, window_w, window,
                 S, allreduce) -> dict:
    """Busy shares per resource kind (see :class:`SimResult`)."""
    n_steps = len(step_first)
    step_of = np.repeat(np.arange(n_steps), step_nops)
    per_step = np.zeros((n_steps, 4, S))
    np.add.at(per_step, (step_of, kind, server), work)
    K = samples.shape[0]
    cell = (np.arange(K)[:, None] * n_steps + samples).ravel()   # (worker, profiled step)
    counts = np.bincount(cell, minlength=K * n_steps).astype(float).reshape(K, n_steps)
    weighted = np.bincount(cell, weights=np.asarray(factors, float).ravel(),
                           minlength=K * n_steps).reshape(K, n_steps)
    out = {}
    for r, k in _KIND.items():
        if allreduce and r in ("downlink", "ps"):
            continue
        if r in ("worker", "ps"):
            busy = weighted @ per_step[:, k, :].sum(axis=1)
            out[r] = float(busy.sum() / window_w.sum())
        elif allreduce:
            busy = counts @ per_step[:, k, :].sum(axis=1)
            out[r] = float(busy.sum() / window_w.sum())
        else:
            busy = counts.sum(axis=0) @ per_step[:, k, :]      # per server
            out[r] = float(np.mean(busy / window))
    return out


def worker_spread(ends) -> np.ndarray:
    """How far apart the workers are at each step, in cycles.

    ``(max_w e[w, n] - min_w e[w, n]) / c`` for each step ``n``, ``e`` the
    workers' step end times and ``c`` the median of every worker's step time:
    0 for workers in lock-step; workers spread evenly over a cycle, as the
    MVA's steady state has them (Li et al. 2022, eqs. 1-5), give about
    ``(K - 1) / K``.

    Parameters
    ----------
    ends : array_like, s, shape (workers, steps)
        :attr:`SimResult.ends`, or the ``ends`` of a packet-level run.

    Returns
    -------
    numpy.ndarray, shape (steps,)

    Examples
    --------
    >>> worker_spread([[1.0, 2.0, 3.0], [1.5, 2.5, 3.5]]).tolist()
    [0.5, 0.5, 0.5]
    """
    e = np.asarray(ends, dtype=float)
    if e.ndim != 2 or e.shape[1] < 2 or not np.isfinite(e).all():
        raise SpecError("ends", f"expected finite (workers, steps >= 2) times, got shape "
                                f"{e.shape}")
    cycle = float(np.median(np.diff(e, axis=1)))
    if cycle <= 0:
        raise SpecError("ends", "must increase along each worker's steps")
    return (e.max(axis=0) - e.min(axis=0)) / cycle
