"""Flow-level simulation of concurrent parameter-server jobs (Jain, Kumar, Mao, Algorithm 1).

Each job (one parameter server and W workers, placed on hosts of a
:class:`~perfmodel.placement.topology.Topology` by a
:class:`~perfmodel.placement.strategies.Placement`) repeats the iteration of
Jain, Kumar and Mao (Sec. 4.2, Algorithm 1 with its barrier):

1. the PS sends a block of ``model_bytes`` to each of its workers, all at once;
2. once a worker has received it, it computes for a sampled time;
3. the worker sends ``gradient_bytes`` (default: the model size) to the PS;
4. once the PS has every worker's gradients it updates for a sampled time;
5. repeat.

Transfers are *fluid flows*: between two events every flow has a constant rate,
the max-min fair share of the links on its ECMP route
(:func:`~perfmodel.placement.maxmin.max_min_rates`), recomputed at every flow
arrival and departure (simultaneous events are applied together, then rates are
recomputed once).  A flow's data reaches its destination one path latency
after its last byte leaves (the sum of the link latencies along the route).

Iteration latency is the time from step 1 to the end of step 4.  It splits
exactly along the critical path through the worker whose gradients arrived
last: ``downlink`` (its model transfer), ``compute`` (its sampled time),
``uplink`` (its gradient transfer) and ``update`` (the PS's sampled time); the
four sum to the latency of every iteration.

Randomness: compute times are drawn from one numpy Generator per job,
spawned from ``seed``, one batch of W worker times plus one server time per
iteration in iteration order.  The draws therefore do not depend on the event
interleaving, and two placements simulated with the same seed see the *same*
compute times (common random numbers): their latency difference is the
network's doing.  Jobs that have finished their recorded iterations keep
running, unrecorded, until every job is done, so the cross-traffic stays on
until the end.

Examples
--------
One job, one worker alone on a star: the closed form ``M/B + c + M/B + u``
(100 MB at 1.25 GB/s is 0.08 s per transfer):

>>> from perfmodel.placement.topology import star
>>> from perfmodel.placement.strategies import Placement
>>> r = simulate(star(2, 1.25e9), Placement((0,), ((1,),)), 100e6,
...              worker_compute=0.3, server_compute=0.01, iterations=3, warmup=0)
>>> r.latencies.round(12).tolist()
[[0.47, 0.47, 0.47]]

References
----------
Jain, Kumar, Mao, "Characterizing Distributed Deep Learning Training Performance
in Datacenters": Algorithm 1; Sec. 4.2 steps (1)-(5) and the iteration-latency
metric; Sec. 4.3 (concurrent jobs as cross-traffic); Sec. 5.2-5.3 (latency CDFs
per placement strategy, Figs. 8-10).
"""

from __future__ import annotations

import heapq
import math
import time as _time
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np

from .. import _validate as _v
from ..errors import SpecError
from ..interface import check_inputs
from ..result import Estimate
from .distributions import as_distribution, heavy_tailed_server, heavy_tailed_worker
from .maxmin import filled_rates, filled_rates_reference
from .place import PLACEMENT_FUNCTIONS, place
from .strategies import STRATEGIES, Placement
from .topology import Topology, from_string

__all__ = ["simulate", "compare", "FlowSimResult", "FlowSim", "latency_table", "ENGINES",
           "PHASES", "RESNET50_BYTES"]

#: Max-min engines: numpy progressive filling, or the pure-Python reference.
ENGINES = ("vectorized", "reference")
#: Phases of an iteration along its critical path, in time order.
PHASES = ("downlink", "compute", "uplink", "update")
#: Gradient (and model) size of ResNet-50 measured by Jain, Kumar, Mao (Sec. 4.2): 97.49 MB.
RESNET50_BYTES = 97.49e6

# event kinds (ordered so that simultaneous events are handled deterministically)
_DELIVER_DOWN, _COMPUTE_DONE, _DELIVER_UP, _UPDATE_DONE = 0, 1, 2, 3
#: A flow with at most this fraction of its bytes left is complete (floating-point slack).
_DONE_RTOL = 1e-9


@dataclass(frozen=True)
class FlowSimResult:
    """Iteration latencies of every job, as simulated by :func:`simulate`.

    Attributes
    ----------
    latencies : ndarray, s, shape (jobs, iterations)
        Latency of each recorded iteration of each job.
    phases : mapping of str to ndarray, s, shape (jobs, iterations)
        ``downlink``, ``compute``, ``uplink``, ``update`` along each iteration's
        critical path; they sum to ``latencies``.
    strategy : str
        Placement strategy label.
    sim_time : float, s
        Simulated time at the end.
    wall_time : float, s
        Real time the simulation took.
    n_events : int
        Events handled (flow completions and timers).
    n_rate_updates : int
        Max-min recomputations.
    meta : mapping
        Inputs worth reporting (topology, sizes, distributions, engine).
    """

    latencies: np.ndarray
    phases: Mapping[str, np.ndarray]
    strategy: str = ""
    sim_time: float = 0.0
    wall_time: float = 0.0
    n_events: int = 0
    n_rate_updates: int = 0
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "phases", MappingProxyType(dict(self.phases)))
        object.__setattr__(self, "meta", MappingProxyType(dict(self.meta)))

    @property
    def samples(self) -> np.ndarray:
        """Every recorded iteration latency (s), job by job."""
        return self.latencies.reshape(-1)

    @property
    def mean(self) -> float:
        """Mean iteration latency (s)."""
        return float(self.samples.mean())

    @property
    def std(self) -> float:
        """Standard deviation of the iteration latency (s)."""
        return float(self.samples.std())

    def quantile(self, q) -> float | np.ndarray:
        """Quantile(s) of the iteration latency (s), ``q`` in [0, 1]."""
        return np.quantile(self.samples, q)

    @property
    def p50(self) -> float:
        """Median iteration latency (s)."""
        return float(self.quantile(0.5))

    @property
    def p99(self) -> float:
        """99th percentile of the iteration latency (s)."""
        return float(self.quantile(0.99))

    def cdf(self) -> tuple[np.ndarray, np.ndarray]:
        """Empirical CDF: sorted latencies (s) and ``F = (i + 1) / n``.

        As the latency CDFs of Jain, Kumar, Mao, Figs. 8-10.
        """
        x = np.sort(self.samples)
        return x, np.arange(1, x.size + 1) / x.size

    def summary(self) -> dict:
        """``{"strategy", "mean", "p50", "p99", "std", "min", "max", "n"}`` (s), JSON-ready."""
        x = self.samples
        return {"strategy": self.strategy, "mean": self.mean, "p50": self.p50, "p99": self.p99,
                "std": self.std, "min": float(x.min()), "max": float(x.max()), "n": int(x.size)}

    def mean_phases(self) -> dict:
        """Mean seconds per critical-path phase; they sum to :attr:`mean`."""
        return {name: float(self.phases[name].mean()) for name in PHASES}

    def to_estimate(self, samples_per_step: float = 1.0, *, epoch_samples: int | None = None,
                    meta: Mapping | None = None) -> Estimate:
        """An :class:`~perfmodel.result.Estimate`: step time = mean iteration latency.

        Phases are the mean critical-path phases; ``meta`` adds p50, p99 and std.
        """
        info = {"model": "FlowSim", "strategy": self.strategy, "p50": self.p50,
                "p99": self.p99, "std": self.std, **dict(self.meta), **dict(meta or {})}
        return Estimate.from_phases(self.mean_phases(), samples_per_step,
                                    epoch_samples=epoch_samples, meta=info)


def scenario_arguments(topology, placement, model_bytes, gradient_bytes, worker_compute,
                       server_compute, iterations, warmup) -> tuple:
    """Validated scenario arguments shared by the flow-level and ns-3 engines:
    ``(model_bytes, gradient_bytes, worker_dist, server_dist, iterations, warmup)``."""
    if not isinstance(topology, Topology):
        raise SpecError("topology", f"expected a Topology, got {type(topology).__name__}")
    if not isinstance(placement, Placement):
        raise SpecError("placement", f"expected a Placement, got {type(placement).__name__}")
    placement.check(topology)
    m_down = _v.number("model_bytes", model_bytes, "B", positive=True)
    m_up = m_down if gradient_bytes is None else _v.number(
        "gradient_bytes", gradient_bytes, "B", positive=True)
    wdist = heavy_tailed_worker() if worker_compute is None else as_distribution(
        worker_compute, "worker_compute")
    sdist = heavy_tailed_server() if server_compute is None else as_distribution(
        server_compute, "server_compute")
    iterations = _v.integer("iterations", iterations, minimum=1)
    warmup = _v.integer("warmup", warmup, minimum=0)
    return m_down, m_up, wdist, sdist, iterations, warmup


def simulate(topology: Topology, placement: Placement, model_bytes=RESNET50_BYTES,
             worker_compute=None, server_compute=None, *, iterations: int = 100,
             warmup: int = 5, seed=0, gradient_bytes=None, per_flow_cap=None,
             engine: str = "vectorized", max_events: int | None = None) -> FlowSimResult:
    """Run concurrent synchronous PS jobs (Jain, Kumar, Mao, Algorithm 1) with max-min fair flows.

    Parameters
    ----------
    topology : Topology
        The network.
    placement : Placement
        Hosts of every job's PS and workers.
    model_bytes : float or str, bytes
        Size of the model block the PS sends each worker (default: ResNet-50's
        97.49 MB, Jain, Kumar, Mao, Sec. 4.2).
    worker_compute : Distribution or float or str, s
        A worker's gradient-computation time per iteration; default
        :func:`~perfmodel.placement.distributions.heavy_tailed_worker`.
    server_compute : Distribution or float or str, s
        The PS's update time per iteration; default
        :func:`~perfmodel.placement.distributions.heavy_tailed_server`.
    iterations : int
        Iterations recorded per job (>= 1).
    warmup : int
        Iterations of each job run first and not recorded (>= 0).
    seed : int or numpy.random.SeedSequence
        Seed of the compute-time draws (one spawned stream per job).
    gradient_bytes : float or str, bytes, optional
        Size of a worker's gradients; default ``model_bytes``.
    per_flow_cap : float or str, bytes/s, optional
        Largest rate of any single flow (None: no cap).
    engine : {"vectorized", "reference"}
        Max-min solver: numpy progressive filling, or the pure-Python
        reference (same result, slower; for tests and the benchmark).
    max_events : int, optional
        Safety stop: raise if more events are needed.

    Returns
    -------
    FlowSimResult

    Raises
    ------
    SpecError
        Naming the bad argument (a host index outside the topology, ...).

    References
    ----------
    Jain, Kumar, Mao, Algorithm 1 and Sec. 4.2 (steps 1-5, latency of one SGD
    iteration as the metric); Sec. 4.3 (concurrent jobs).
    """
    m_down, m_up, wdist, sdist, iterations, warmup = scenario_arguments(
        topology, placement, model_bytes, gradient_bytes, worker_compute, server_compute,
        iterations, warmup)
    _v.choice("engine", engine, ENGINES)
    cap = None if per_flow_cap is None else _v.number(
        "per_flow_cap", per_flow_cap, "B/s", positive=True, finite=False)
    if cap is not None and math.isinf(cap):
        cap = None
    if max_events is not None:
        max_events = _v.integer("max_events", max_events, minimum=1)
    streams = [np.random.default_rng(s)
               for s in _v.seed_sequence(seed).spawn(placement.n_jobs)]
    sim = _Sim(topology, placement, m_down, m_up, wdist, sdist, iterations, warmup, streams,
               cap, engine, max_events)
    start = _time.perf_counter()
    sim.run()
    wall = _time.perf_counter() - start
    meta = {"topology": topology.name, "jobs": placement.n_jobs,
            "workers": [len(w) for w in placement.workers], "model_bytes": m_down,
            "gradient_bytes": m_up, "worker_compute": repr(wdist),
            "server_compute": repr(sdist), "iterations": iterations, "warmup": warmup,
            "engine": engine, "per_flow_cap": cap}
    return FlowSimResult(sim.latency, {k: sim.phase[k] for k in PHASES},
                         placement.strategy, sim.now, wall, sim.n_events, sim.n_rate_updates,
                         meta)


class _Sim:
    """The event loop of :func:`simulate` (state in flat numpy arrays)."""

    def __init__(self, topo, placement, m_down, m_up, wdist, sdist, iterations, warmup,
                 streams, cap, engine, max_events):
        self.topo, self.engine, self.cap, self.max_events = topo, engine, cap, max_events
        self.wdist, self.sdist, self.streams = wdist, sdist, streams
        self.iterations, self.warmup = iterations, warmup
        n_jobs = placement.n_jobs
        # global worker slots: job_of[s], worker s of its job; flow ids: s (down), n + s (up)
        self.job_of = np.array([j for j, g in enumerate(placement.workers) for _ in g], dtype=int)
        self.first = np.concatenate([[0], np.cumsum([len(g) for g in placement.workers])])
        n = int(self.first[-1])
        self.n_slots = n
        hosts = [h for g in placement.workers for h in g]
        pairs = [(placement.ps[self.job_of[s]], hosts[s]) for s in range(n)]
        pairs += [(hosts[s], placement.ps[self.job_of[s]]) for s in range(n)]
        full = topo.incidence(pairs)                           # arcs x 2n
        rows = np.flatnonzero(full.any(axis=1))                # only arcs some flow crosses
        self.A = np.ascontiguousarray(full[rows])
        self.cap_links = topo.capacity[rows].copy()
        self.lat = np.array([topo.path_latency(s, d) for s, d in pairs])
        self.size = np.concatenate([np.full(n, m_down), np.full(n, m_up)])
        self.routes = [[(int(l), float(self.A[l, f])) for l in np.flatnonzero(self.A[:, f])]
                       for f in range(2 * n)]
        self.cap_list = list(map(float, self.cap_links))
        # flow state
        self.remaining = np.zeros(2 * n)
        self.rate = np.zeros(2 * n)
        self.active = np.zeros(2 * n, dtype=bool)
        # job state
        self.iter_no = np.zeros(n_jobs, dtype=int)
        self.t_start = np.zeros(n_jobs)
        self.arrived = np.zeros(n_jobs, dtype=int)
        self.t_down = np.zeros(n)         # model delivered to the worker
        self.t_comp = np.zeros(n)         # worker finished computing
        self.c_now = np.zeros(n)          # this iteration's compute time of each worker
        self.u_now = np.zeros(n_jobs)     # this iteration's update time of each PS
        self.critical = np.zeros(n_jobs, dtype=int)
        self.t_last = np.zeros(n_jobs)    # last gradients delivered to the PS
        self.latency = np.zeros((n_jobs, iterations))
        self.phase = {k: np.zeros((n_jobs, iterations)) for k in PHASES}
        self.recorded = np.zeros(n_jobs, dtype=int)
        self.heap: list = []
        self.seq = 0
        self.now = 0.0
        self.n_events = 0
        self.n_rate_updates = 0

    # ------------------------------------------------------------ handlers
    def _push(self, t, kind, who):
        heapq.heappush(self.heap, (t, kind, self.seq, who))
        self.seq += 1

    def _start_iteration(self, j):
        lo, hi = self.first[j], self.first[j + 1]
        rng = self.streams[j]
        self.c_now[lo:hi] = self.wdist.sample(rng, hi - lo)
        self.u_now[j] = float(self.sdist.sample(rng, 1)[0])
        self.t_start[j] = self.now
        self.arrived[j] = 0
        self.remaining[lo:hi] = self.size[lo:hi]
        self.active[lo:hi] = True

    def _handle(self, kind, who) -> bool:
        """Apply one timer event; True if the set of flows changed."""
        if kind == _DELIVER_DOWN:
            self.t_down[who] = self.now
            self._push(self.now + self.c_now[who], _COMPUTE_DONE, who)
            return False
        if kind == _COMPUTE_DONE:
            self.t_comp[who] = self.now
            f = self.n_slots + who
            self.remaining[f] = self.size[f]
            self.active[f] = True
            return True
        if kind == _DELIVER_UP:
            j = self.job_of[who]
            self.arrived[j] += 1
            if self.arrived[j] == self.first[j + 1] - self.first[j]:
                self.critical[j] = who
                self.t_last[j] = self.now
                self._push(self.now + self.u_now[j], _UPDATE_DONE, j)
            return False
        # _UPDATE_DONE: one iteration of job `who` is complete
        j = who
        k = self.iter_no[j] - self.warmup
        if 0 <= k < self.iterations:
            s = self.critical[j]
            t0 = self.t_start[j]
            down = self.t_down[s] - t0
            comp = self.c_now[s]
            up = self.t_last[j] - self.t_comp[s]
            self.phase["downlink"][j, k] = down
            self.phase["compute"][j, k] = comp
            self.phase["uplink"][j, k] = up
            self.phase["update"][j, k] = self.u_now[j]
            # the same sum as the phases, so that they add up to the latency exactly
            self.latency[j, k] = down + comp + up + self.u_now[j]
            self.recorded[j] += 1
        self.iter_no[j] += 1
        self._start_iteration(j)
        return True

    def _rates(self):
        self.n_rate_updates += 1
        on = np.flatnonzero(self.active)
        self.rate[:] = 0.0
        if on.size == 0:
            return
        if self.engine == "vectorized":
            A = self.A[:, on]
            used = A.any(axis=1)
            self.rate[on] = filled_rates(A[used], self.cap_links[used],
                                         None if self.cap is None else np.full(on.size, self.cap))
        else:
            routes = [self.routes[f] for f in on]
            caps = None if self.cap is None else [self.cap] * on.size
            self.rate[on] = filled_rates_reference(routes, self.cap_list, caps)

    # ----------------------------------------------------------------- loop
    def run(self):
        for j in range(len(self.streams)):
            self._start_iteration(j)
        self._rates()
        n = self.n_slots
        while int(self.recorded.min()) < self.iterations:
            on = np.flatnonzero(self.active)
            t_flow = math.inf
            if on.size:
                finish = self.remaining[on] / self.rate[on]
                i_min = int(np.argmin(finish))
                t_flow = self.now + float(finish[i_min])
            t_timer = self.heap[0][0] if self.heap else math.inf
            t = min(t_flow, t_timer)
            if math.isinf(t):  # pragma: no cover - cannot happen with W >= 1
                raise RuntimeError("flow simulation stalled")
            dt = t - self.now
            changed = False
            if on.size:
                self.remaining[on] -= self.rate[on] * dt
                done = on[self.remaining[on] <= _DONE_RTOL * self.size[on]]
                if t == t_flow:
                    done = np.union1d(done, on[i_min])
                if done.size:
                    changed = True
                    self.active[done] = False
                    self.remaining[done] = 0.0
                    for f in done.tolist():
                        kind = _DELIVER_DOWN if f < n else _DELIVER_UP
                        self._push(t + self.lat[f], kind, f if f < n else f - n)
                        self.n_events += 1
            self.now = t
            while self.heap and self.heap[0][0] <= t:
                _, kind, _, who = heapq.heappop(self.heap)
                self.n_events += 1
                changed |= self._handle(kind, who)
            if changed:
                self._rates()
            if self.max_events is not None and self.n_events > self.max_events:
                raise SpecError("max_events", f"simulation needed more than {self.max_events} "
                                              f"events (at t = {self.now:.6g} s)")


def compare(topology: Topology, strategies=STRATEGIES, jobs: int = 8, workers: int = 7,
            model_bytes=RESNET50_BYTES, worker_compute=None, server_compute=None, *,
            iterations: int = 100, warmup: int = 5, seed=0, placement_seed=None,
            **options) -> dict:
    """Simulate the same jobs under several placement strategies (Jain, Kumar, Mao, Figs. 8-10).

    Parameters
    ----------
    topology : Topology or str
        The network, or a preset string (:func:`~perfmodel.placement.topology.from_string`).
    strategies : sequence of str or Placement
        Strategy names (:data:`~perfmodel.placement.strategies.STRATEGIES`,
        ``"optimized"``) or ready placements.
    jobs, workers : int
        J jobs of one PS plus W workers each.
    model_bytes, worker_compute, server_compute, iterations, warmup, seed
        As for :func:`simulate`; the same ``seed`` for every strategy, so all
        see the same compute times.
    placement_seed : int, optional
        Seed of the random (and optimized) placements; default ``seed``.
    **options
        Passed to :func:`simulate` (``gradient_bytes``, ``per_flow_cap``, ``engine``).

    Returns
    -------
    dict of str to FlowSimResult
        In the order given.

    References
    ----------
    Jain, Kumar, Mao, Sec. 4.3-4.4 and 5.2 (Fig. 8).
    """
    topo = from_string(topology) if isinstance(topology, str) else topology
    pseed = seed if placement_seed is None else placement_seed
    if isinstance(strategies, (str, Placement)):
        strategies = [strategies]
    out = {}
    for s in strategies:
        p = s if isinstance(s, Placement) else place(topo, s, jobs, workers, seed=pseed)
        label = p.strategy or f"placement{len(out)}"
        out[label] = simulate(topo, p, model_bytes, worker_compute, server_compute,
                              iterations=iterations, warmup=warmup, seed=seed, **options)
    return out


def latency_table(results: Mapping[str, FlowSimResult], baseline: str | None = "random") -> str:
    """Plain-text table of mean, p50, p99, std (s) per strategy, with the mean relative to ``baseline``."""
    base = results.get(baseline) if baseline else None
    head = f"{'strategy':<12} {'mean s':>9} {'p50 s':>9} {'p99 s':>9} {'std s':>9}"
    if base is not None:
        head += f" {'vs ' + baseline:>11}"
    lines = [head]
    for name, r in results.items():
        line = f"{name:<12} {r.mean:9.4f} {r.p50:9.4f} {r.p99:9.4f} {r.std:9.4f}"
        if base is not None:
            line += f" {r.mean / base.mean:10.3f}x"
        lines.append(line)
    return "\n".join(lines)


@dataclass(frozen=True)
class FlowSim:
    """Model object: a job's step time among ``jobs`` identical jobs placed by ``strategy``.

    Parameters
    ----------
    topology : str or Topology
        Network; a preset string without ``@BW`` is built with the cluster's
        NIC bandwidth (e.g. ``"racks:8x8"``).
    strategy : str
        Placement strategy (:data:`~perfmodel.placement.strategies.STRATEGIES`
        or ``"optimized"``).
    jobs : int
        Concurrent identical jobs (the workload's own job plus cross-traffic).
    iterations, warmup : int
        Recorded and discarded iterations per job.
    seed : int
        Seed of compute times and random placements.
    worker_compute, server_compute : Distribution or float or str, optional
        Compute-time distributions; default: constants from the profile
        (``t_forward + t_backward`` and ``t_update``).

    Notes
    -----
    :meth:`estimate` uses ``config.n_replicas`` workers per job and one PS
    (``config.n_ps`` must be 1); ``profile.model_bytes`` is the block size;
    the estimate's step time is the mean iteration latency over all jobs,
    phases are the mean critical-path phases, ``meta`` has p50 and p99.

    References
    ----------
    Jain, Kumar, Mao, Algorithm 1, Sec. 4.2-4.3.
    """

    topology: Any = "paper"
    strategy: str = "random"
    jobs: int = 8
    iterations: int = 50
    warmup: int = 2
    seed: int = 0
    worker_compute: Any = None
    server_compute: Any = None
    #: One parameter server per job (sweeps read this).
    modes: ClassVar[tuple[str, ...]] = ("sync",)
    uses_parameter_servers: ClassVar[bool] = True

    def __post_init__(self):
        _v.choice("strategy", self.strategy, tuple(PLACEMENT_FUNCTIONS))
        _v.integer("jobs", self.jobs, minimum=1)
        _v.integer("iterations", self.iterations, minimum=1)
        _v.integer("warmup", self.warmup, minimum=0)
        _v.seed_sequence(self.seed)
        if not isinstance(self.topology, (str, Topology)):
            raise SpecError("topology", f"expected a preset string or a Topology, got "
                                        f"{type(self.topology).__name__}")

    def estimate(self, workload, cluster, config) -> Estimate:
        """Simulate and summarize one job's iteration as an Estimate.

        Raises
        ------
        SpecError
            A spec of the wrong type, ``config.n_ps != 1``, or a bad argument.
        Infeasible
            An async or model-parallel config
            (:func:`~perfmodel.interface.check_inputs`), or jobs that do not fit
            the topology.
        """
        check_inputs(workload, cluster, config, "FlowSim")
        if config.n_ps != 1:
            raise SpecError("config.n_ps", f"FlowSim models one PS per job, got {config.n_ps}")
        topo = self.topology
        if isinstance(topo, str):
            topo = from_string(topo, bandwidth=cluster.nic_bandwidth)
        w = self.worker_compute if self.worker_compute is not None else workload.t_compute
        s = self.server_compute if self.server_compute is not None else workload.t_update
        p = place(topo, self.strategy, self.jobs, config.n_replicas, seed=self.seed)
        r = simulate(topo, p, workload.model_bytes, w, s, iterations=self.iterations,
                     warmup=self.warmup, seed=self.seed)
        return r.to_estimate(config.n_replicas * workload.batch_size,
                             epoch_samples=config.epoch_samples,
                             meta={"workers": config.n_replicas})
