"""``TraceSim``: the trace-driven simulator as a model object, and worker sweeps.

:class:`TraceSim` answers ``estimate(workload, cluster, config) -> Estimate``
like every perfmodel model, so :mod:`optimizer.search` can use it;
:func:`simulate_range` runs one simulation per worker count (the
``perfmodel simulate`` command).

References
----------
Li, Paolieri, Golubchik, Lin, Yan. Predicting Throughput of Distributed SGD.
IEEE TPDS, 2022.  Sec. 2.2 and 3.2.

Li, Yan, Paolieri, Golubchik. Throughput Prediction of Asynchronous SGD in
TensorFlow. ICPE, 2020.  Sec. 3.4 and 5.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import math
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..errors import Infeasible, SpecError
from ..result import Estimate
from ..specs import Cluster, Config, Profile
from .engine import (
    ENGINES,
    SERVER_CPUS,
    SERVER_SHARINGS,
    SHARINGS,
    TIMEOUT_POSITIONS,
    SimResult,
    simulate,
)
from .trace import COMMUNICATION, PHASE_OF, Op, Step, Trace, from_layers

__all__ = ["ARCHITECTURES", "PHASES", "SERVER_SPLITS", "TraceSim", "BlockTrace", "ProfiledTrace",
           "simulate_range", "split_servers", "shard_servers", "update_factor"]

#: Exchange architectures of :class:`TraceSim`.
ARCHITECTURES = ("ps", "allreduce")
#: How a one-server trace is spread over several servers (:attr:`TraceSim.server_split`).
SERVER_SPLITS = ("auto", "even", "tensor")
#: Estimate phase of each resource kind (critical-path seconds per step).
PHASES = PHASE_OF

_SUFFIXES = (" pull", " push", " update")


def _tensor_key(op: Op):
    """Ops of one tensor share a key: the layer label of :func:`from_layers` names, else the id."""
    for suffix in _SUFFIXES:
        if op.name.endswith(suffix):
            return op.name[: -len(suffix)]
    return ("id", op.id)


def split_servers(trace: Trace, n_servers: int) -> Trace:
    """Spread a one-server trace over ``n_servers`` servers as TensorFlow does.

    Tensors are taken in the order they first appear; each goes to the server
    holding the fewest bytes so far (Li et al. 2020, Sec. 5,
    :func:`~perfmodel.sim.tensorflow.assign_servers`).  The pull, push and
    update ops of one tensor stay together: they are recognized by the names
    :func:`~perfmodel.sim.trace.from_layers` gives (``"<layer> pull"``,
    ``"... push"``, ``"... update"``); other ops are tensors of their own.

    Parameters
    ----------
    trace : Trace
        A trace whose ops all use server 0.
    n_servers : int
        Servers (>= 1).

    Returns
    -------
    Trace

    Raises
    ------
    SpecError
        The trace already uses several servers, or ``n_servers < 1``.
    """
    if isinstance(n_servers, bool) or not isinstance(n_servers, (int, np.integer)) \
            or n_servers < 1:
        raise SpecError("n_servers", f"must be a whole number >= 1, got {n_servers!r}")
    if trace.n_servers != 1:
        raise SpecError("trace", f"uses {trace.n_servers} servers already; split_servers "
                                 "spreads a one-server trace")
    if n_servers == 1:
        return trace
    server: dict = {}
    totals = np.zeros(int(n_servers))
    for step in trace.steps:
        for op in step.ops:
            if op.res in COMMUNICATION:
                key = _tensor_key(op)
                if key not in server:
                    s = int(np.argmin(totals))
                    server[key] = s
                    totals[s] += op.bytes
    steps = []
    for step in trace.steps:
        ops = tuple(dataclasses.replace(op, server=server.get(_tensor_key(op), 0))
                    if op.res != "worker" else op for op in step.ops)
        steps.append(Step(ops))
    return trace.replace(steps=tuple(steps))


def shard_servers(trace: Trace, n_servers: int) -> Trace:
    """Split every transfer and update of a one-server trace evenly over ``n_servers``.

    The fluid models' reading of several servers (Li et al. 2022, Sec. 4.4):
    each server holds ``1 / n`` of every tensor, so a worker exchanges ``1 / n``
    of each pull and push with every server and each server applies ``1 / n``
    of each update.  An op that waited for a transfer or an update waits for
    all of its shards.  :func:`split_servers` instead assigns whole tensors,
    as TensorFlow does; a coarse profile has a single tensor, which that would
    put on one server.

    Raises
    ------
    SpecError
        The trace already uses several servers, or ``n_servers < 1``.

    Examples
    --------
    >>> t = from_layers([8e6], [0.1], [0.2], 0.01, overlap=False)
    >>> s = shard_servers(t, 4)
    >>> sorted({op.server for op in s.steps[0].ops if op.res == "uplink"})
    [0, 1, 2, 3]
    >>> sum(op.bytes for op in s.steps[0].ops if op.res == "uplink")
    8000000.0
    """
    if isinstance(n_servers, bool) or not isinstance(n_servers, (int, np.integer)) \
            or n_servers < 1:
        raise SpecError("n_servers", f"must be a whole number >= 1, got {n_servers!r}")
    if trace.n_servers != 1:
        raise SpecError("trace", f"uses {trace.n_servers} servers already; shard_servers "
                                 "splits a one-server trace")
    n = int(n_servers)
    if n == 1:
        return trace
    steps = []
    for step in trace.steps:
        shards = {op.id: [f"{op.id}@{s}" for s in range(n)] if op.res != "worker"
                  else [op.id] for op in step.ops}
        ops = []
        for op in step.ops:
            deps = tuple(d for dep in op.deps for d in shards[dep])
            if op.res == "worker":
                ops.append(dataclasses.replace(op, deps=deps))
                continue
            for s in range(n):
                amount = ({"bytes": op.bytes / n} if op.bytes is not None
                          else {"seconds": op.seconds / n})
                ops.append(dataclasses.replace(op, id=f"{op.id}@{s}", server=s, deps=deps,
                                               **amount))
        steps.append(Step(tuple(ops)))
    return trace.replace(steps=tuple(steps))


def _scaled_updates(trace: Trace, factor: float) -> Trace:
    """The trace with every server computation (``ps`` op) ``factor`` times longer."""
    if factor == 1.0:
        return trace
    steps = tuple(Step(tuple(dataclasses.replace(op, seconds=op.seconds * factor)
                             if op.res == "ps" else op for op in step.ops))
                  for step in trace.steps)
    return trace.replace(steps=steps)


def update_factor(cluster: Cluster, config: Config, mode: str) -> float:
    """Multiplier of the server update of one step: ``(1 - g) + g K`` in sync mode, else 1.

    Sync SGD applies the K gradients of a step together; ``cluster.update_growth``
    g says how that costs (0: once per step, Li et al. 2022, eqs. 7-10; 1: once per
    gradient).  Async SGD applies each gradient on its own at ``t_update``.
    """
    g = cluster.update_growth
    if mode != "sync" or g == 0:
        return 1.0
    return (1.0 - g) + g * config.n_replicas


@functools.lru_cache(maxsize=256)
def _spread(trace: Trace, n_servers: int, split: str) -> Trace:
    # keyed by the trace's identity (traces compare by identity): hits for cached
    # coarse traces and for a user's trace simulated at several sizes
    return (shard_servers if split == "even" else split_servers)(trace, n_servers)


@functools.lru_cache(maxsize=256)
def _profile_trace(profile: Profile, overlap: bool) -> Trace:
    # cached: calibration simulates the same few profiles thousands of times, and a
    # Trace is immutable
    return from_layers([profile.model_bytes], [profile.t_forward], [profile.t_backward],
                       profile.t_update, overlap, names=[profile.name or "model"],
                       name=profile.name, batch_size=profile.batch_size,
                       source=f"coarse profile {profile.name!r} as a one-layer trace")


@dataclass(frozen=True)
class TraceSim:
    """Li et al. 2022, Algorithm 1 / Li et al. 2020, Algorithm 3.1 as a model object.

    Parameters
    ----------
    architecture : {"ps", "allreduce"}
        Parameter servers (``config.mode`` picks async or sync) or ring
        all-reduce (sync; ``config.n_ps`` is ignored).
    sharing : {"hybrid", "ps", "fcfs"}
        Link sharing (Li et al. 2022, Sec. 3.2.1: the hybrid averages the PS and
        FCFS throughputs).
    steps, warmup : int
        Steps simulated per worker, and those left out at the start.
    seed : int
        Seeds the sampling of profiled steps (and the jitter).
    overlap : bool
        For a coarse :class:`~perfmodel.specs.Profile` workload only: overlap
        communication with computation in the one-layer trace built from it.
    window : float or None, B
        HTTP/2 flow-control window (Li et al. 2020), None: flow control disabled.
    server_sharing : {"nic", "independent"}
        Bandwidth sharing with several servers (see :func:`~perfmodel.sim.simulate`).
    jitter : float or None
        See :func:`~perfmodel.sim.simulate`; None takes ``cluster.compute_cv``
        when it is > 0, else the simulator's automatic desynchronization.
    engine : {"auto", "numba", "python"}
        Event-loop implementation.
    replications : int
        Independent runs R (>= 1).  R = 1: one run with ``seed``.  R >= 2:
        runs with the seeds of :meth:`replication_seeds` (derived from
        ``seed``), summarized by their mean and its Student-t interval.
    level : float
        Confidence level of that interval, in (0, 1).
    server_cpu : {"own", "fcfs"}
        Update CPUs on a server: one per worker (``"own"``, Share = 1 of Li et al. 2022)
        or one per server applying the ``ps`` ops first come first served
        (``"fcfs"``, as the ns-3 engine; see :func:`~perfmodel.sim.simulate`).
    timeout_position : {"tail", "uniform"}
        Where a retransmission-timeout stall happens in its message: after
        the last byte, or at a uniformly random point, the message leaving
        the link meanwhile (see :func:`~perfmodel.sim.simulate`).
    server_split : {"auto", "even", "tensor"}
        How a one-server trace meets ``config.n_ps > 1`` servers: every tensor
        split evenly over them (``"even"``, :func:`shard_servers`: the fluid
        models' reading) or whole tensors assigned as TensorFlow does
        (``"tensor"``, :func:`split_servers`).  ``"auto"``: even for a coarse
        profile (one tensor, which whole-tensor assignment would put on one
        server), tensors for a trace.

    Notes
    -----
    In :meth:`estimate`: K = ``config.n_replicas`` workers; the bandwidth is
    the cluster's goodput ``nic_bandwidth * link_efficiency`` and the
    per-flow cap ``per_flow_cap * link_efficiency`` (when set).  The workload
    is a :class:`~perfmodel.sim.trace.Trace` (or a coarse ``Profile``, made a
    one-layer trace).  Lossy links: every push and pull stalls once with
    probability ``cluster.timeout_probability`` for
    ``cluster.retransmit_timeout`` seconds after its bytes are delivered, or
    midway with ``timeout_position="uniform"`` (the engine's "Timeouts"
    notes; ignored by all-reduce), drawn from ``seed`` --
    so each replication draws its own stalls.  With ``config.n_ps`` servers, a one-server trace is
    spread over them by :func:`split_servers`; a trace made for several
    servers must match ``config.n_ps``.

    Per-network calibration (:func:`perfmodel.fit.network.calibrate_network`):
    in sync mode every server computation of a step lasts
    ``(1 - g) + g K`` times its traced time (g = ``cluster.update_growth``,
    :func:`update_factor`; async updates stay per gradient); the jitter's
    coefficient of variation is ``cluster.compute_cv`` unless ``jitter`` is
    given (the engine multiplies every computation of a sampled step, the
    server update included, by one Gamma factor of mean 1, so one worker's
    compute time t_F + t_B has exactly that CV); the ``"hybrid"`` throughput
    is ``w * PS + (1 - w) * FCFS`` with w = ``cluster.sharing_weight`` (0.5:
    the engine's plain average, Li et al. 2022, Sec. 3.2.1).

    The Estimate's ``step_time`` is ``K / (steps/s)``: the barrier-to-barrier
    time in sync mode, one worker's mean time between steps in async mode;
    ``throughput`` is samples/s (``Trace.batch_size`` per worker step).  Its
    ``phases`` are the mean seconds per step on the critical path by
    resource, named ``downlink``, ``compute`` (worker), ``uplink`` (or
    ``allreduce``) and ``update`` (ps); the critical path of a step follows,
    back from its last op, the op whose completion started each op, so
    transmissions count with their shared (stretched) durations.  They are
    rescaled by one factor to sum exactly to ``step_time`` (exact already in
    sync mode; async averages differ slightly).  For ``"hybrid"`` the phases
    are the PS run's, rescaled.  ``meta`` has the steps/s, the utilizations
    of each resource, the desynchronization used and the events simulated.

    Replications (our decision): with R >= 2 the Estimate's
    ``throughput`` is the mean ``x_bar`` of the R runs' throughputs x_i, its
    ``step_time`` ``K`` over the mean steps/s, its phases, utilizations and
    critical path the runs' means (phases rescaled to the step time), and
    ``throughput_interval`` the Student-t confidence interval of that mean,
    ``x_bar -+ t_{(1+level)/2, R-1} s / sqrt(R)`` (s: sample standard
    deviation, ddof 1; the low end clipped at 0).  The runs are independent
    (separate seeds), so the interval is valid even though the steps within
    one run are correlated; it says how far the mean of R finite runs may be
    from the simulator's long-run throughput, not how far the simulator is
    from a real cluster.  It is zero-width when nothing is random (a
    one-step trace in sync mode without jitter or ``compute_cv``); it
    shrinks like ``1 / sqrt(R)`` otherwise.  ``meta["interval_source"]`` is
    ``"simulator replications"``, ``meta["replications"]`` R,
    ``meta["replication_seeds"]`` and ``meta["replication_throughputs"]``
    the runs'.

    Examples
    --------
    >>> from perfmodel.specs import Profile, Cluster, Config
    >>> est = TraceSim(sharing="ps", steps=20, warmup=2).estimate(
    ...     Profile(model_bytes=100e6, t_forward=0.1, t_backward=0.2, t_update=0.01,
    ...             batch_size=32),
    ...     Cluster(machines=8, nic_bandwidth="10Gbps"), Config(n_replicas=4, n_ps=1))
    >>> round(est.step_time, 9), round(est.throughput, 3), est.bottleneck   # eq. 7
    (0.95, 134.737, 'downlink')
    """

    architecture: str = "ps"
    sharing: str = "hybrid"
    steps: int = 300
    warmup: int = 30
    seed: int = 0
    overlap: bool = False
    window: float | None = None
    server_sharing: str = "nic"
    jitter: float | None = None
    engine: str = "auto"
    replications: int = 1
    level: float = 0.9
    server_cpu: str = "own"
    timeout_position: str = "tail"
    server_split: str = "auto"

    def __post_init__(self):
        for name, value, choices in (("architecture", self.architecture, ARCHITECTURES),
                                     ("sharing", self.sharing, SHARINGS),
                                     ("server_sharing", self.server_sharing, SERVER_SHARINGS),
                                     ("engine", self.engine, ENGINES),
                                     ("server_cpu", self.server_cpu, SERVER_CPUS),
                                     ("timeout_position", self.timeout_position,
                                      TIMEOUT_POSITIONS),
                                     ("server_split", self.server_split, SERVER_SPLITS)):
            if not isinstance(value, str) or value not in choices:
                raise SpecError(name, f"must be one of {', '.join(choices)}; got {value!r}")
        for name in ("steps", "warmup", "seed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
                raise SpecError(name, f"must be a whole number >= 0, got {value!r}")
        if self.steps < 1 or self.warmup >= self.steps:
            raise SpecError("warmup", f"must be < steps ({self.steps}), got {self.warmup}")
        if not isinstance(self.overlap, (bool, np.bool_)):
            raise SpecError("overlap", f"expected True or False, got {self.overlap!r}")
        r = self.replications
        if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or r < 1:
            raise SpecError("replications", f"must be a whole number >= 1, got {r!r}")
        level = self.level
        if isinstance(level, bool) or not isinstance(level, (int, float, np.floating)) \
                or not 0 < level < 1:
            raise SpecError("level", f"must be a number in (0, 1), got {level!r}")

    @property
    def modes(self) -> tuple[str, ...]:
        """Synchronisation modes it simulates (all-reduce is synchronous)."""
        return ("sync", "async") if self.architecture == "ps" else ("sync",)

    @property
    def uses_parameter_servers(self) -> bool:
        """The configuration's ``n_ps`` servers are used (sweeps read this)."""
        return self.architecture == "ps"

    def trace_for(self, workload, config: Config) -> Trace:
        """The trace simulated for ``workload`` under ``config`` (servers spread as needed)."""
        if isinstance(workload, Profile):
            trace = _profile_trace(workload, self.overlap)
        elif isinstance(workload, Trace):
            trace = workload
        else:
            raise SpecError("workload", f"expected a Trace or a Profile, got "
                                        f"{type(workload).__name__}")
        if self.architecture == "allreduce":
            return trace
        if config.n_ps < 1:
            raise SpecError("config.n_ps", f"TraceSim(architecture='ps') needs at least one "
                                           f"parameter server, got {config.n_ps}")
        if trace.n_servers == config.n_ps:
            return trace
        if trace.n_servers == 1:
            split = self.server_split
            if split == "auto":
                split = "even" if isinstance(workload, Profile) else "tensor"
            return _spread(trace, config.n_ps, split)
        raise Infeasible(f"the trace was profiled with {trace.n_servers} parameter servers; "
                         f"config.n_ps={config.n_ps} needs a trace for that many")

    def simulate(self, workload, cluster: Cluster, config: Config, **options) -> SimResult:
        """The :class:`SimResult` behind :meth:`estimate` (``options`` go to ``simulate``)."""
        for name, value, kind in (("cluster", cluster, Cluster), ("config", config, Config)):
            if not isinstance(value, kind):
                raise SpecError(name, f"expected a {kind.__name__}, got {type(value).__name__}")
        if config.n_workers > 1:
            raise Infeasible(f"TraceSim is data-parallel only: config.n_workers="
                             f"{config.n_workers} workers per replica needs model parallelism")
        if cluster.gpus_per_machine > 1:
            raise Infeasible(f"TraceSim models one accelerator per worker; the cluster has "
                             f"gpus_per_machine={cluster.gpus_per_machine}")
        if self.architecture == "allreduce":
            if config.mode != "sync":
                raise Infeasible("all-reduce is synchronous; config.mode is 'async'")
            mode = "allreduce"
        else:
            mode = config.mode
        trace = _scaled_updates(self.trace_for(workload, config),
                                update_factor(cluster, config, mode))
        jitter = self.jitter
        if jitter is None and cluster.compute_cv > 0:
            jitter = cluster.compute_cv
        cap = None
        if cluster.per_flow_cap is not None:
            cap = cluster.per_flow_cap * cluster.link_efficiency
        kwargs = dict(per_flow_cap=cap, window=self.window, jitter=jitter,
                      server_sharing=self.server_sharing, engine=self.engine,
                      server_cpu=self.server_cpu,
                      timeout_probability=cluster.timeout_probability,
                      retransmit_timeout=cluster.retransmit_timeout,
                      timeout_position=self.timeout_position)
        kwargs.update(options)
        return simulate(trace, config.n_replicas, cluster.effective_bandwidth, mode,
                        self.sharing, steps=self.steps, warmup=self.warmup, seed=self.seed,
                        **kwargs)

    def estimate(self, workload, cluster: Cluster, config: Config) -> Estimate:
        """Simulate ``config.n_replicas`` workers and summarize as an :class:`Estimate`.

        A seeded run is a pure function of its inputs, so the last 16,384 are kept:
        asking for one again (as fits and validations do) costs a lookup.

        Parameters
        ----------
        workload : Trace or Profile
            One worker's trace (or coarse profile).
        cluster : Cluster
            Bandwidth (goodput), per-flow cap.
        config : Config
            ``n_replicas`` workers, ``n_ps`` servers, ``mode`` (sync/async).

        Returns
        -------
        Estimate
            See the class notes.

        Raises
        ------
        SpecError
            Bad arguments (``config.n_ps`` 0 with parameter servers ...).
        Infeasible
            Model parallelism, several GPUs per machine, async all-reduce, a
            multi-server trace that does not match ``config.n_ps``.
        """
        try:   # hashing a trace's ops costs less than simulating them
            est = _kept_estimate(self, workload, cluster, config)
        except TypeError:            # an unhashable option value: simulate again
            return self._estimate(workload, cluster, config)
        # the kept run is shared: the caller gets its own copies of meta's readings
        return dataclasses.replace(est, meta={k: dict(v) if isinstance(v, dict) else v
                                              for k, v in est.meta.items()})

    def _estimate(self, workload, cluster: Cluster, config: Config) -> Estimate:
        """:meth:`estimate` without the kept runs."""
        if self.replications > 1:
            return self._replicated(workload, cluster, config)
        res = self.simulate(workload, cluster, config)
        samples, steps_per_s, step = _weighted_hybrid(res, cluster.sharing_weight)
        base = res.runs[0] if res.runs else res
        crit = {PHASES[r]: v for r, v in base.critical.items()}
        if self.architecture == "allreduce" and "uplink" in crit:
            crit["allreduce"] = crit.pop("uplink")
        total = sum(crit.values())
        phases = {k: (v * step / total if total > 0 else 0.0) for k, v in crit.items()}
        if total <= 0:
            phases = {"compute": step}
        epoch = None if config.epoch_samples is None else config.epoch_samples / samples
        meta = {"model": "TraceSim", "architecture": self.architecture, "sharing": self.sharing,
                "mode": res.meta["mode"], "steps": self.steps, "warmup": self.warmup,
                "seed": self.seed, "workers": config.n_replicas, "n_ps": config.n_ps,
                "steps_per_second": steps_per_s,
                "sharing_weight": cluster.sharing_weight,
                "update_growth": cluster.update_growth,
                "update_factor": update_factor(cluster, config, res.meta["mode"]),
                "compute_cv": cluster.compute_cv, "jitter": res.meta.get("jitter"),
                "utilization": {PHASES[r]: v for r, v in res.utilization.items()},
                "critical_path": {PHASES[r]: v for r, v in base.critical.items()},
                "desync": res.meta["desync"], "events": res.events,
                "engine": res.meta["engine"], "bandwidth": res.meta["bandwidth"],
                "server_cpu": res.meta["server_cpu"],
                "timeout_probability": res.meta["timeout_probability"],
                "retransmit_timeout": res.meta["retransmit_timeout"],
                "timeout_position": res.meta["timeout_position"],
                "timeouts": res.meta["timeouts"],
                "equation": "Li et al. 2022 Algorithm 1 (fine-grained simulation)"}
        return Estimate(step_time=step, throughput=samples, phases=phases,
                        bottleneck=max(phases, key=phases.get), epoch_time=epoch, meta=meta)

    def replication_seeds(self) -> list[int]:
        """Seeds of the R runs: ``SeedSequence(seed).spawn(R)``, one 32-bit word each.

        Deterministic, and nested: the first R seeds are the same for any
        larger R (children are keyed by their index).
        """
        children = np.random.SeedSequence(self.seed).spawn(self.replications)
        return [int(c.generate_state(1)[0]) for c in children]

    def _replicated(self, workload, cluster: Cluster, config: Config) -> Estimate:
        """Mean of the replications and its Student-t interval (class notes)."""
        seeds = self.replication_seeds()
        runs = [dataclasses.replace(self, seed=s, replications=1).estimate(workload, cluster,
                                                                           config)
                for s in seeds]
        x = np.array([r.throughput for r in runs])
        mean, low, high = _student_t_interval(x, self.level)
        steps_per_s = float(np.mean([r.meta["steps_per_second"] for r in runs]))
        step = config.n_replicas / steps_per_s
        phases = _mean_mapping([r.phases for r in runs])
        total = sum(phases.values())
        phases = {k: v * step / total for k, v in phases.items()} if total > 0 \
            else {"compute": step}
        first = runs[0].meta
        meta = dict(first, seed=self.seed, replications=self.replications,
                    replication_seeds=seeds, replication_throughputs=x.tolist(),
                    steps_per_second=steps_per_s,
                    utilization=_mean_mapping([r.meta["utilization"] for r in runs]),
                    critical_path=_mean_mapping([r.meta["critical_path"] for r in runs]),
                    events=int(sum(r.meta["events"] for r in runs)),
                    timeouts=[r.meta["timeouts"] for r in runs])     # each run draws its own
        epoch = None if config.epoch_samples is None else config.epoch_samples / mean
        est = Estimate(step_time=step, throughput=mean, phases=phases,
                       bottleneck=max(phases, key=phases.get), epoch_time=epoch, meta=meta)
        return est.with_interval(low, high, level=self.level, source="simulator replications")


def _student_t_interval(values: np.ndarray, level: float) -> tuple[float, float, float]:
    """(mean, low, high): Student-t confidence interval of the mean of >= 2 iid values.

    ``mean -+ t_{(1+level)/2, n-1} s / sqrt(n)`` with s the sample standard
    deviation (ddof 1); the low end is clipped at 0 (a throughput).
    """
    from scipy import stats

    n = values.size
    mean = float(values.mean())
    half = float(stats.t.ppf(0.5 + level / 2, n - 1) * values.std(ddof=1) / math.sqrt(n))
    return mean, max(0.0, mean - half), mean + half


def _mean_mapping(mappings) -> dict:
    """Key-wise mean of numeric mappings (a key missing from one counts as 0)."""
    keys = list(dict.fromkeys(k for m in mappings for k in m))
    return {k: float(np.mean([m.get(k, 0.0) for m in mappings])) for k in keys}


def _weighted_hybrid(res: SimResult, weight: float) -> tuple[float, float, float]:
    """(samples/s, steps/s, step time) with the hybrid as ``w PS + (1 - w) FCFS``."""
    if len(res.runs) != 2 or weight == 0.5:  # 0.5: the engine's own average, as is
        return res.sample_throughput, res.throughput, res.step_time
    ps, fcfs = res.runs
    samples = weight * ps.sample_throughput + (1.0 - weight) * fcfs.sample_throughput
    steps = weight * ps.throughput + (1.0 - weight) * fcfs.throughput
    return samples, steps, (res.workers / steps if steps > 0 else math.inf)


def simulate_range(trace, workers: Iterable[int], bandwidth, mode="async", sharing="ps",
                   steps=1000, warmup=50, seed=0, *, progress: Callable | None = None,
                   **options) -> list:
    """One :func:`~perfmodel.sim.simulate` per worker count (``perfmodel simulate``).

    Parameters
    ----------
    trace : Trace
    workers : iterable of int
        Worker counts, e.g. ``range(1, 11)``.
    bandwidth, mode, sharing, steps, warmup, seed, **options
        As in :func:`~perfmodel.sim.simulate` (same seed for every count).
    progress : callable, optional
        Called with each finished :class:`SimResult` (a CLI progress bar).

    Returns
    -------
    list of SimResult
        In the order of ``workers``; ``result.summary()`` is a JSON-ready record.

    Examples
    --------
    >>> t = Trace.from_layers([1e8], [0.1], [0.2], 0.01, overlap=False)
    >>> [round(r.step_time, 6) for r in simulate_range(t, [1, 2], 1.25e9, "sync", "ps",
    ...                                                steps=3, warmup=1)]
    [0.47, 0.63]
    """
    out = []
    for k in workers:
        res = simulate(trace, k, bandwidth, mode, sharing, steps=steps, warmup=warmup, seed=seed,
                       **options)
        out.append(res)
        if progress is not None:
            progress(res)
    return out


@dataclass(frozen=True)
class BlockTrace:
    """A trace-driven model run on a profile split into equal layer blocks.

    A one-layer trace cannot overlap anything: its push starts after the
    whole backward pass.  Real jobs push each layer's gradient as soon as it
    is computed (Li et al. 2022, Sec. 3.2; the overlap of eqs. 6 and 10); splitting the model
    bytes, T_F and T_B into ``blocks`` equal layers
    (:func:`perfmodel.sim.trace.from_layers`, overlap on) gives the simulator
    that partial overlap, where eq. 10 assumes a perfect one.

    Parameters
    ----------
    model : object
        A trace-driven model (:class:`~perfmodel.sim.model.TraceSim`).
    blocks : int
        Equal layer blocks (>= 1).
    update : {"whole", "per_layer"}
        ``"whole"``: one server update of ``t_update`` once every block's
        gradient has arrived (a parameter server applying whole gradients, as
        the ns-3 backend's does); ``"per_layer"``: one update per block right
        after its push, ``t_update`` split by bytes
        (:func:`perfmodel.sim.trace.from_layers`).
    """

    model: Any
    blocks: int = 4
    update: str = "whole"
    uses_parameter_servers: ClassVar[bool] = True

    @property
    def modes(self) -> tuple[str, ...]:
        """The wrapped model's modes."""
        return tuple(getattr(self.model, "modes", ("sync", "async")))

    def __post_init__(self):
        if isinstance(self.blocks, bool) or not isinstance(self.blocks, int) or self.blocks < 1:
            raise SpecError("blocks", f"must be an integer >= 1, got {self.blocks!r}")
        if self.update not in ("whole", "per_layer"):
            raise SpecError("update", f"expected 'whole' or 'per_layer', got {self.update!r}")

    def trace(self, profile: Profile):
        """The block trace of ``profile`` (see the class docstring)."""
        k, whole = self.blocks, self.update == "whole" and profile.t_update > 0
        trace = Trace.from_layers([profile.model_bytes / k] * k, [profile.t_forward / k] * k,
                                  [profile.t_backward / k] * k,
                                  0.0 if whole else profile.t_update, overlap=True,
                                  batch_size=profile.batch_size, name=profile.name)
        if not whole:
            return trace
        step = trace.steps[0]
        pushes = tuple(o.id for o in step.ops if o.res == "uplink")
        update = Op("upd", "ps", seconds=profile.t_update, deps=pushes, server=0)
        return Trace((Step(step.ops + (update,)),), batch_size=profile.batch_size,
                     name=profile.name)

    def estimate(self, workload, cluster: Cluster, config: Config) -> Estimate:
        """The model's estimate on the block trace of a :class:`Profile` workload.

        With several servers every block is split evenly over them
        (:func:`shard_servers`), as the profile's single tensor would be.
        """
        if isinstance(workload, Profile):
            workload = self.trace(workload)
            if config.n_ps > 1:
                workload = shard_servers(workload, config.n_ps)
        return self.model.estimate(workload, cluster, config)


@dataclass(frozen=True)
class ProfiledTrace:
    """A trace-driven model run on a measured per-layer trace, whatever profile it is given.

    The user's own layer profile (PyTorch profiler, PipeDream ``graph.txt``,
    Chrome trace) keeps what a coarse profile loses: each layer's bytes and
    compute, hence how much communication the backward pass hides.  Asked
    about a :class:`Profile` (a measured configuration's, say), the model runs
    the trace at that profile's batch size (:meth:`Trace.at_batch`); with
    several servers every tensor is split evenly over them
    (:func:`shard_servers`).

    Parameters
    ----------
    model : object
        A trace-driven model (:class:`TraceSim`).
    trace : Trace
        One server's trace.
    """

    model: Any
    trace: Any
    uses_parameter_servers: ClassVar[bool] = True

    def __post_init__(self):
        if not isinstance(self.trace, Trace):
            raise SpecError("trace", f"expected a Trace, got {type(self.trace).__name__}")
        if self.trace.n_servers != 1:
            raise SpecError("trace", f"needs a one-server trace, got {self.trace.n_servers}")

    @property
    def modes(self) -> tuple[str, ...]:
        """The wrapped model's modes."""
        return tuple(getattr(self.model, "modes", ("sync", "async")))

    def trace_for(self, workload, config: Config) -> Trace:
        """The trace at the workload's batch size, on the configuration's servers."""
        trace = self.trace
        batch = getattr(workload, "batch_size", trace.batch_size)
        if batch != trace.batch_size:
            trace = trace.at_batch(batch)
        return shard_servers(trace, config.n_ps) if config.n_ps > 1 else trace

    def estimate(self, workload, cluster: Cluster, config: Config) -> Estimate:
        """The model's estimate on :meth:`trace_for`."""
        return self.model.estimate(self.trace_for(workload, config), cluster, config)


class _HashedKey:
    """A key whose hash is computed once (a trace hashes all its ops)."""

    __slots__ = ("key", "hash")

    def __init__(self, key: tuple):
        self.key, self.hash = key, hash(key)

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other) -> bool:
        return isinstance(other, _HashedKey) and self.key == other.key


class _KeptRuns:
    """The latest simulations, least recently used dropped first, by their inputs.

    A seeded simulation is a pure function of its inputs: fits and validations ask
    for the same run again (a candidate's prediction, then the chosen model's), so
    keep it.  A kept run holds its trace (the key), and a per-layer trace of a large
    DNN is megabytes, so the budget counts the traces' ops as well as the runs (a
    bound on the runs alone let a replay of many jobs' per-layer profiles fill the
    memory).
    """

    Info = collections.namedtuple("Info", "hits misses runs ops")

    def __init__(self, max_runs: int = 16384, max_ops: int = 250_000):
        self.max_runs, self.max_ops = max_runs, max_ops
        self._runs: collections.OrderedDict = collections.OrderedDict()
        self._ops = self.hits = self.misses = 0
        self._lock = threading.Lock()

    def __call__(self, model: TraceSim, workload, cluster: Cluster, config: Config) -> Estimate:
        key = _HashedKey((model, workload, cluster, config))
        with self._lock:   # a sweep may simulate on threads; the simulation runs unlocked
            kept = self._runs.get(key)
            if kept is not None:
                self.hits += 1
                self._runs.move_to_end(key)
                return kept[0]
            self.misses += 1
        est = model._estimate(workload, cluster, config)
        ops = sum(len(step) for step in workload.steps) if isinstance(workload, Trace) else 1
        with self._lock:
            if key not in self._runs:
                self._runs[key] = (est, ops)
                self._ops += ops
            while len(self._runs) > 1 and (len(self._runs) > self.max_runs
                                           or self._ops > self.max_ops):
                self._ops -= self._runs.popitem(last=False)[1][1]
        return est

    def cache_info(self) -> _KeptRuns.Info:
        with self._lock:
            return self.Info(self.hits, self.misses, len(self._runs), self._ops)

    def cache_clear(self) -> None:
        with self._lock:
            self._runs.clear()
            self._ops = 0


_kept_estimate = _KeptRuns()
