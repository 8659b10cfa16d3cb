"""Several jobs sharing one cluster: how many machines each gets (the scheduler's call).

Given J jobs (each a model, a workload, a weight, optionally a work amount and
machine bounds) and N machines of one :class:`~perfmodel.specs.Cluster`,
:func:`allocate` chooses each job's machine count and configuration (workers
and parameter servers, through the job's model and :func:`optimizer.search.search`)
to

* ``objective="proportional"`` (the default): maximize
  ``sum_j w_j log(T_j(m_j) / T_j^0)``, proportional fairness (Kelly, Maulloo
  and Tan 1998), where ``T_j^0`` is the job's throughput on its smallest
  configuration that runs (its *reference*); every job runs;
* ``objective="speedup"``: maximize the total weighted speedup
  ``sum_j w_j T_j(m_j) / T_j^0``;
* ``objective="throughput"``: maximize the total weighted throughput
  ``sum_j w_j T_j(m_j)`` (samples/s), or
* ``objective="makespan"``: minimize ``max_j work_j / T_j(m_j)`` (s),

subject to ``sum_j m_j <= N`` and each job's bounds.

Why the default is fair.  The raw sum of samples/s adds numbers in different
units of work: a small DNN processes ten times the samples of a large one per
machine, so the raw sum hands it nearly every machine (20 jobs on 64 machines
gave one job 26 and every other job its minimum).  Speedups are unitless, so
the sum compares jobs by how well they scale; the logarithm adds diminishing
returns, so a machine goes where it multiplies a job's speed the most (a job
twice as fast counts the same whatever its size).  All three sums are sums of
one function per job, so the same exact DP and relaxation solve them.

Method
------
1. **Throughput curves** (:func:`throughput_curve`): one search per job over
   every configuration fitting N machines gives the best throughput with
   *exactly* m machines; a running maximum makes it the best with *at most* m
   machines, monotone in m, with the best configuration kept per m (ties go to
   fewer machines).
2. **Exact answers.**  Weighted sum: a dynamic program over (job, machines),
   ``V_j(n) = max_{m <= n} V_{j-1}(n - m) + w_j T_j(m)``, O(J N^2) with the
   maximization over m vectorized with numpy (in row blocks, so memory stays
   bounded).  Makespan: the curves are monotone, so the fewest machines job j
   needs to finish by a time tau is a count, and the optimal makespan is the
   smallest finish time whose needs fit N: a binary search over the J (N + 1)
   finish times, O(J N log(J N)) (a DP over (job, machines) would be
   O(J N^2) for the same answer).
3. **Relaxation** for large J: each job's curve (weighted throughput, or rate
   ``T_j / work_j`` for the makespan) is replaced by its upper concave
   envelope, a concave piecewise-linear function through some of its points;
   the continuous allocation is a linear program solved with cvxpy (Clarabel,
   else HiGHS).  Weighted sum: the LP answer is rounded down and the leftover
   machines are handed out greedily (best gain per machine) on the true
   curves.  Makespan: the LP gives a lower bound tau_LB and the rounding is
   the threshold search above started from tau_LB (so it is exact: the
   relaxation only saves the search steps below the bound).  The bound
   reported is a Lagrangian bound computed exactly from the solver's dual
   values, so it is valid whatever the solver's tolerance: an upper bound on
   the optimal weighted throughput, a lower bound on the optimal makespan.

Decisions
---------
* A job's machines are those its chosen configuration uses (workers plus
  servers); machines given to a job that cannot use them stay idle.
* ``min_machines=0`` lets the throughput and speedup objectives leave the job
  out.  Proportional fairness (the log of zero is minus infinity) and the
  makespan need every job to run, so there each job runs on at least its
  smallest configuration with positive throughput.
* Weights only matter for the sums; with ``makespan``,
  machines the optimal makespan does not need go to the jobs whose weighted
  throughput rises most (this never raises a finish time).
* Everything is deterministic: ties are broken by fixed rules (fewer machines
  first), never by chance.

Examples
--------
>>> from perfmodel.specs import Cluster
>>> jobs = [Job.from_curve([100, 200, 300, 400], name="small DNN"),
...         Job.from_curve([10, 19, 27, 34], name="large DNN")]
>>> four = Cluster(machines=4, nic_bandwidth=1e9)
>>> [j.machines for j in allocate(jobs, four, objective="throughput").jobs]
[3, 1]
>>> [j.machines for j in allocate(jobs, four).jobs]      # proportional fairness
[2, 2]

References
----------
F. P. Kelly, A. K. Maulloo and D. K. H. Tan, "Rate control for communication
networks: shadow prices, proportional fairness and stability", Journal of the
Operational Research Society 49(3), 1998 (proportional fairness).
"""

from __future__ import annotations

import functools
import heapq
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np

from perfmodel._callable import make_callable
from perfmodel.errors import Infeasible, PerfModelError, SpecError
from perfmodel.result import Estimate
from perfmodel.specs import Cluster, Config

from .results import Candidate
from .search import search

__all__ = ["ALLOCATION_OBJECTIVES", "OBJECTIVES", "METHODS", "SOLVERS", "AUTO_EXACT_CELLS",
           "CurveModel", "Job", "Curve", "JobAllocation", "Allocation", "throughput_curve",
           "reference_throughputs", "concave_envelope", "allocate"]

#: Objectives of :func:`allocate` (module docstring).
ALLOCATION_OBJECTIVES = ("proportional", "speedup", "throughput", "makespan")
#: The objectives that are a sum of one gain per job (solved by the same DP and LP).
_SUMS = ("proportional", "speedup", "throughput")
#: Backward-compatible alias of :data:`ALLOCATION_OBJECTIVES`.
OBJECTIVES = ALLOCATION_OBJECTIVES
#: Methods of :func:`allocate`.
METHODS = ("exact", "relaxed", "auto")
#: ``method="auto"`` runs the exact DP of the weighted sum while J * (N + 1)**2
#: stays below this (the DP is then quick); the makespan's exact search always runs.
AUTO_EXACT_CELLS = 1e8

_EPS = 1e-7


# --------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------

def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _is_number(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and \
        not isinstance(value, (bool, np.bool_))


def _check_count(name: str, value, minimum: int) -> None:
    if value is not None and (not _is_int(value) or value < minimum):
        raise SpecError(name, f"must be an integer >= {minimum} or None, got {value!r}")


def _check_positive(name: str, value, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not _is_number(value) or not math.isfinite(value) or value <= 0:
        raise SpecError(name, f"must be a finite number > 0, got {value!r}")


@dataclass(frozen=True)
class CurveModel:
    """A model given by its throughput for each machine count (tests, benchmarks, measurements).

    Parameters
    ----------
    throughputs : sequence of float or None, samples/s
        ``throughputs[m - 1]`` is the job's throughput on m machines; None (or
        NaN) marks a machine count the job cannot run on.

    Notes
    -----
    Configurations are ``Config(n_replicas=m, n_ps=0)`` (no parameter servers,
    so the search enumerates one configuration per machine count).  The
    workload and cluster are ignored.

    Examples
    --------
    >>> CurveModel([3.0, None, 5.0]).estimate(None, None, Config(n_replicas=3, n_ps=0)).throughput
    5.0
    """

    throughputs: tuple
    #: Configurations have no parameter servers: one configuration per machine count.
    uses_parameter_servers: ClassVar[bool] = False

    def __post_init__(self):
        if isinstance(self.throughputs, (str, bytes)) or not hasattr(self.throughputs, "__len__"):
            raise SpecError("throughputs", f"must be a sequence, got {self.throughputs!r}")
        values = tuple(_curve_value(i, v) for i, v in enumerate(self.throughputs))
        object.__setattr__(self, "throughputs", values)

    def estimate(self, workload: Any, cluster: Any, config: Config) -> Estimate:
        """Throughput of ``config.machines`` machines: a 1 s step of that many samples.

        Raises
        ------
        Infeasible
            When the curve has no value for that machine count.
        """
        m = config.machines
        value = self.throughputs[m - 1] if 1 <= m <= len(self.throughputs) else None
        if value is None:
            raise Infeasible(f"CurveModel has no throughput for {m} machines")
        return Estimate(step_time=1.0, throughput=value, phases={"compute": 1.0},
                        bottleneck="compute", meta={"model": "CurveModel", "machines": m})


def _curve_value(i: int, value):
    if value is None or (_is_number(value) and math.isnan(value)):
        return None
    if not _is_number(value) or not math.isfinite(value) or value < 0:
        raise SpecError(f"throughputs[{i}]", f"must be a finite number >= 0 or None, "
                                             f"got {value!r}")
    return float(value)


@dataclass(frozen=True)
class Job:
    """One training job competing for the cluster.

    Parameters
    ----------
    model : object with ``estimate(workload, cluster, config) -> Estimate``
        Any perfmodel model (``SyncCoarse()``, ``AllReduceCoarse()``, ...).
    workload : Profile or DNN or None
        What the model estimates (passed through untouched).
    weight : float
        Weight of the job's term in the sum objectives (> 0).
    work : float, samples, optional
        Samples left to train; the finish time is ``work / throughput``.
        Required by the makespan objective.
    min_machines : int, optional
        Fewest machines the job's configuration may use.  0 lets the
        throughput objective leave the job out; None (default) means its
        smallest feasible configuration.
    max_machines : int, optional
        Most machines its configuration may use (default: no cap).
    name : str
        Label in results (default ``"jobs[i]"``).
    """

    model: Any
    workload: Any = None
    weight: float = 1.0
    work: float | None = None
    min_machines: int | None = None
    max_machines: int | None = None
    name: str = ""

    def __post_init__(self):
        if not callable(getattr(self.model, "estimate", None)):
            raise SpecError("model", f"needs an estimate(workload, cluster, config) method, "
                                     f"got {type(self.model).__name__}")
        _check_positive("weight", self.weight)
        _check_positive("work", self.work, optional=True)
        _check_count("min_machines", self.min_machines, 0)
        _check_count("max_machines", self.max_machines, 1)
        if self.min_machines is not None and self.max_machines is not None \
                and self.min_machines > self.max_machines:
            raise SpecError("min_machines", f"{self.min_machines} exceeds max_machines "
                                            f"{self.max_machines}")
        if not isinstance(self.name, str):
            raise SpecError("name", f"must be a string, got {self.name!r}")

    @classmethod
    def from_curve(cls, throughputs: Sequence, **options) -> Job:
        """A job whose throughput on m machines is ``throughputs[m - 1]``.

        See :class:`CurveModel`; ``options`` are the other fields of :class:`Job`.
        """
        return cls(model=CurveModel(tuple(throughputs)), **options)


# --------------------------------------------------------------------------
# Throughput curves
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class Curve:
    """Best throughput of one job with at most m machines, m = 0..N.

    Attributes
    ----------
    throughput : ndarray, samples/s, shape (N + 1,)
        Non-decreasing in m from ``lo`` on; ``-inf`` where the job may not
        run on m machines (below its minimum).  Read-only.
    candidates : tuple of Candidate or None
        The best configuration with at most m machines (None: left out).
    lo : int
        Fewest machines the job may be given (0: it may be left out).
    hi : int
        Fewest machines reaching its best throughput (more never help).
    n_evaluated : int
        Configurations the search evaluated.
    """

    throughput: np.ndarray
    candidates: tuple
    lo: int
    hi: int
    n_evaluated: int

    @property
    def machines(self) -> int:
        """The budget N the curve was computed for."""
        return len(self.throughput) - 1


def _exact_counts(ranked: Sequence[Candidate], n: int, low: int, high: int) -> list:
    """Best candidate using exactly m machines, m = 0..n (ranked is best first)."""
    best: list = [None] * (n + 1)
    for cand in ranked:
        m = cand.config.machines
        if low <= m <= high and best[m] is None:
            best[m] = cand
    return best


def _at_most(exact: list, optional: bool) -> tuple[np.ndarray, list]:
    """Running maximum of the exact-count curve (ties keep fewer machines)."""
    values = np.full(len(exact), -np.inf)
    chosen: list = [None] * len(exact)
    value, cand = (0.0 if optional else -np.inf), None
    for m, here in enumerate(exact):
        if here is not None and here.estimate.throughput > value:
            value, cand = here.estimate.throughput, here
        values[m], chosen[m] = value, cand
    return values, chosen


def _search_all(job: Job, cluster: Cluster, machines: int) -> tuple[tuple, int]:
    try:
        result = search(job.model, job.workload, cluster, machines=machines,
                        objective="throughput", per_machines=True)
    except Infeasible:
        return (), 0
    return result.ranked, result.n_evaluated


def throughput_curve(job: Job, cluster: Cluster, machines: int | None = None, *,
                     label: str = "job") -> Curve:
    """Best throughput of ``job`` with at most m machines, for m = 0..``machines``.

    One :func:`optimizer.search.search` over every configuration that fits
    ``machines``, keeping the fastest at each machine count
    (``per_machines=True``), then a running maximum.

    Parameters
    ----------
    job : Job
    cluster : Cluster
    machines : int, optional
        Budget N (default ``cluster.machines``).
    label : str
        How errors name the job.

    Returns
    -------
    Curve

    Raises
    ------
    Infeasible
        The job must run (``min_machines != 0``) but no configuration within
        its bounds fits ``machines``.
    """
    if not isinstance(job, Job):
        raise SpecError("job", f"expected a Job, got {type(job).__name__}")
    machines = _check_machines(machines, cluster)
    low = 0 if job.min_machines is None else job.min_machines
    if low > machines:
        raise Infeasible(f"{label}: min_machines={low} exceeds the {machines} machines")
    ranked, n_evaluated = _search_all(job, cluster, machines)
    high = machines if job.max_machines is None else min(job.max_machines, machines)
    values, chosen = _at_most(_exact_counts(ranked, machines, low, high),
                              optional=job.min_machines == 0)
    if not np.isfinite(values[-1]):
        raise Infeasible(f"{label}: no configuration with {max(low, 1)} to {high} machines "
                         f"fits {machines} machines")
    values.setflags(write=False)
    lo = int(np.argmax(np.isfinite(values)))
    hi = int(np.argmax(values == values[-1]))
    return Curve(values, tuple(chosen), lo, hi, n_evaluated)


# --------------------------------------------------------------------------
# Exact dynamic program
# --------------------------------------------------------------------------

#: Cells (rows x machines) of one block of the DP's inner maximization.
_BLOCK = 1 << 20
#: Up to this many cells, the DP's index blocks are built once and reused for every job.
_CACHED_CELLS = 1 << 22


def _backtrack(choice: np.ndarray) -> np.ndarray:
    alloc = np.zeros(choice.shape[0], dtype=np.intp)
    n = choice.shape[1] - 1
    for j in range(choice.shape[0] - 1, -1, -1):
        alloc[j] = choice[j, n]
        n -= alloc[j]
    return alloc


def _blocks(n1: int):
    """Row blocks of the DP: budgets n, ``n - m`` clipped at 0, and the mask ``m <= n``."""
    m = np.arange(n1)
    step = max(1, _BLOCK // n1)
    for lo in range(0, n1, step):
        n = np.arange(lo, min(lo + step, n1))
        shift = n[:, None] - m[None, :]
        yield n, np.maximum(shift, 0), shift >= 0


def _dp_step(best: np.ndarray, gain_j: np.ndarray, blocks) -> tuple[np.ndarray, np.ndarray]:
    """``max_{m <= n} best[n - m] + gain_j[m]`` and its first argmax, for every n."""
    value, arg = np.empty(len(best)), np.empty(len(best), dtype=np.intp)
    for n, shift, ok in blocks:
        total = np.where(ok, best[shift] + gain_j[None, :], -np.inf)
        arg[n] = np.argmax(total, axis=1)
        value[n] = total[np.arange(len(n)), arg[n]]
    return value, arg


def _dp_max_sum(gain: np.ndarray) -> np.ndarray:
    """Allocation maximizing ``sum_j gain[j, m_j]`` with ``sum_j m_j <= N``, O(J N^2).

    ``gain`` is (J, N + 1), non-decreasing in m, ``-inf`` where not allowed;
    of equal answers, the backtracking gives the later jobs fewer machines.
    """
    n1 = gain.shape[1]
    cached = list(_blocks(n1)) if n1 * n1 <= _CACHED_CELLS else None
    best = np.zeros(n1)
    choice = np.empty(gain.shape, dtype=np.intp)
    for j in range(gain.shape[0]):
        best, choice[j] = _dp_step(best, gain[j], cached if cached else _blocks(n1))
    return _backtrack(choice)


def _needs(finish: np.ndarray, tau: float) -> np.ndarray:
    """Fewest machines each job needs to finish by ``tau`` (N + 1 if it cannot).

    ``finish`` rows are non-increasing in m (``inf`` below the job's
    minimum), so the machine counts finishing late are exactly 0..need-1.
    """
    return (finish > tau).sum(axis=1)


def _min_makespan(finish: np.ndarray, budget: int, floor: float = 0.0) -> np.ndarray:
    """Allocation minimizing ``max_j finish[j, m_j]``: binary search on the makespan.

    The optimum is one of the finish times; the smallest one whose needs fit
    the budget wins, O(J N log(J N)).  ``floor`` (a lower bound) skips the
    candidates below it.
    """
    values = np.unique(finish[np.isfinite(finish)])
    lo, hi = int(np.searchsorted(values, floor * (1 - 1e-12))), len(values) - 1
    lo = min(lo, hi)
    while lo < hi:
        mid = (lo + hi) // 2
        if int(_needs(finish, values[mid]).sum()) <= budget:
            hi = mid
        else:
            lo = mid + 1
    return _needs(finish, values[lo])


# --------------------------------------------------------------------------
# Greedy completion (shared by the rounding and the makespan's spare machines)
# --------------------------------------------------------------------------

def _best_step(gain_j: np.ndarray, m: int, hi_j: int, left: int):
    """Best (gain per machine, machines) of adding 1..left machines to one job, or None."""
    ks = np.arange(1, min(left, hi_j - m) + 1)
    if len(ks) == 0:
        return None
    ratio = (gain_j[m + ks] - gain_j[m]) / ks
    i = int(np.argmax(ratio))
    return (float(ratio[i]), int(ks[i])) if ratio[i] > 0 else None


def _fill_by_gain(alloc: np.ndarray, gain: np.ndarray, hi: np.ndarray, budget: int) -> np.ndarray:
    """Hand out spare machines, best gain per machine first, while something gains.

    A lazy greedy: each job's best step sits in a heap; a step asking for more
    machines than are left is stale and recomputed when it reaches the top
    (its stored gain is an upper bound), so the step taken is always the best.
    """
    alloc, left = alloc.copy(), budget - int(alloc.sum())
    heap = []
    for j in range(len(alloc)):
        _push(heap, j, _best_step(gain[j], alloc[j], hi[j], left))
    while heap and left > 0:
        _, j, k = heapq.heappop(heap)
        if k <= left:
            alloc[j] += k
            left -= k
        _push(heap, j, _best_step(gain[j], alloc[j], hi[j], left))
    return alloc


def _push(heap: list, j: int, step) -> None:
    if step is not None:
        heapq.heappush(heap, (-step[0], j, step[1]))


def _trim(alloc: np.ndarray, gain: np.ndarray, lo: np.ndarray, budget: int) -> np.ndarray:
    """Take machines back (least loss first) until the allocation fits the budget."""
    alloc = alloc.copy()
    rows = np.arange(len(alloc))
    while int(alloc.sum()) > budget:
        down = np.maximum(alloc - 1, 0)
        loss = np.where(alloc > lo, gain[rows, alloc] - gain[rows, down], np.inf)
        alloc[int(np.argmin(loss))] -= 1
    return alloc


# --------------------------------------------------------------------------
# Relaxation
# --------------------------------------------------------------------------

def concave_envelope(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vertices of the upper concave envelope of the points (x, y).

    Parameters
    ----------
    x : array_like
        Strictly increasing abscissae.
    y : array_like
        Finite ordinates.

    Returns
    -------
    (ndarray, ndarray)
        The envelope's vertices, a subset of the points, left to right; the
        piecewise-linear function through them is the smallest concave
        function lying on or above every point.

    Examples
    --------
    >>> xs, ys = concave_envelope([0, 1, 2, 3], [0.0, 1.0, 1.5, 3.0])
    >>> xs.tolist(), ys.tolist()
    ([0, 3], [0.0, 3.0])
    """
    x, y = np.asarray(x), np.asarray(y, dtype=float)
    keep = _prune(x, y, np.arange(len(x)))
    hull: list[int] = []
    for i in keep:
        while len(hull) >= 2 and _below(x, y, hull[-2], hull[-1], i):
            hull.pop()
        hull.append(i)
    return x[hull], y[hull]


def _below(x, y, a, b, c):
    """Whether point b lies on or under the chord from a to c (works on index arrays)."""
    return (y[b] - y[a]) * (x[c] - x[a]) <= (y[c] - y[a]) * (x[b] - x[a])


def _prune(x, y, keep: np.ndarray, passes: int = 64) -> np.ndarray:
    """Drop, in vectorized passes, points on or under the chord of their kept neighbours.

    Such a point is under a chord of two points of the set, hence never a
    vertex of the envelope, so dropping all of them at once is safe; the
    exact monotone chain then runs on the few points left.
    """
    for _ in range(passes):
        if len(keep) < 3:
            break
        below = _below(x, y, keep[:-2], keep[1:-1], keep[2:])
        if not below.any():
            break
        keep = np.concatenate([keep[:1], keep[1:-1][~below], keep[-1:]])
    return keep


def _segments(values: np.ndarray, lo: np.ndarray, hi: np.ndarray):
    """Job index, slope and intercept of every envelope segment, stacked over jobs."""
    jobs, slopes, intercepts = [], [], []
    for j in range(values.shape[0]):
        xs, ys = concave_envelope(np.arange(lo[j], hi[j] + 1), values[j, lo[j]:hi[j] + 1])
        if len(xs) == 1:
            a, b = np.zeros(1), ys
        else:
            a = np.diff(ys) / np.diff(xs)
            b = ys[:-1] - a * xs[:-1]
        jobs.append(np.full(len(a), j))
        slopes.append(a)
        intercepts.append(b)
    return np.concatenate(jobs), np.concatenate(slopes), np.concatenate(intercepts)


def _window_max(values: np.ndarray, lo: np.ndarray, hi: np.ndarray, lam: float) -> np.ndarray:
    """``max_{lo_j <= m <= hi_j} values[j, m] - lam * m`` per job."""
    m = np.arange(values.shape[1])
    inside = (m[None, :] >= lo[:, None]) & (m[None, :] <= hi[:, None])
    return np.where(inside, values - lam * m[None, :], -np.inf).max(axis=1)


#: LP solvers tried in this order when ``solver`` is not given.  Clarabel comes
#: first because HiGHS prints a banner on the process's stdout the first time
#: it runs (which would corrupt JSON printed by the CLI).
SOLVERS = ("CLARABEL", "HIGHS", "SCIPY", "ECOS")


@functools.lru_cache(maxsize=1)
def _installed() -> tuple:
    import cvxpy as cp

    return tuple(cp.installed_solvers())


def _solver_name(solver: str | None) -> str:
    installed = _installed()
    if solver is not None:
        if solver not in installed:
            raise SpecError("solver", f"{solver!r} is not installed (installed: "
                                      f"{', '.join(installed)})")
        return solver
    for name in SOLVERS:
        if name in installed:
            return name
    raise PerfModelError(f"no LP solver for the relaxation among {installed}")


def _solve(problem, solver: str) -> None:
    problem.solve(solver=solver)
    if problem.status not in ("optimal", "optimal_inaccurate"):
        raise PerfModelError(f"the relaxation's LP ended {problem.status!r} ({solver})")


def _lp_max_sum(gain: np.ndarray, lo: np.ndarray, hi: np.ndarray, budget: int, solver: str):
    """Continuous allocation on the concave envelopes; returns (x, Lagrangian upper bound)."""
    import cvxpy as cp

    idx, a, b = _segments(gain, lo, hi)
    x, t = cp.Variable(len(lo)), cp.Variable(len(lo))
    cap = cp.sum(x) <= budget
    cons = [t[idx] <= cp.multiply(a, x[idx]) + b, x >= lo, x <= hi, cap]
    problem = cp.Problem(cp.Maximize(cp.sum(t)), cons)
    _solve(problem, solver)
    lam = max(0.0, float(cap.dual_value))
    bound = lam * budget + float(_window_max(gain, lo, hi, lam).sum())
    return np.asarray(x.value), bound, float(problem.value)


def _lp_max_min(rate: np.ndarray, lo: np.ndarray, hi: np.ndarray, budget: int, solver: str):
    """Largest common rate s with ``rate_j(x_j) >= s`` on the envelopes; (x, upper bound on s)."""
    import cvxpy as cp

    idx, a, b = _segments(rate, lo, hi)
    x, t, s = cp.Variable(len(lo)), cp.Variable(len(lo)), cp.Variable()
    cap, link = cp.sum(x) <= budget, s <= t
    cons = [t[idx] <= cp.multiply(a, x[idx]) + b, link, x >= lo, x <= hi, cap]
    problem = cp.Problem(cp.Maximize(s), cons)
    _solve(problem, solver)
    lam = max(0.0, float(cap.dual_value))
    mu = np.clip(np.asarray(link.dual_value, dtype=float).reshape(-1), 0.0, None)
    mu = mu / mu.sum() if mu.sum() > 0 else np.full(len(lo), 1.0 / len(lo))
    bound = lam * budget + float(_window_max(mu[:, None] * rate, lo, hi, lam).sum())
    return np.asarray(x.value), bound, float(problem.value)


def _round_down(x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return np.clip(np.floor(x + _EPS).astype(np.intp), lo, hi)


# --------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------

def _json_number(value):
    if value is None:
        return None
    return float(value) if math.isfinite(value) else None


@dataclass(frozen=True)
class JobAllocation:
    """One job's share of the cluster.

    Attributes
    ----------
    name : str
    machines : int
        Machines its configuration uses (0: left out).
    config : Config or None
        The configuration (None when left out).
    throughput : float, samples/s
    weight : float
    finish_time : float or None, s
        ``work / throughput`` (``inf`` when left out); None without ``work``.
    estimate : Estimate or None
        The model's estimate for ``config``.
    speedup : float
        ``throughput`` over the job's throughput on its smallest configuration
        that runs (0 when it does not run).
    """

    name: str
    machines: int
    config: Config | None
    throughput: float
    weight: float
    finish_time: float | None
    estimate: Estimate | None = None
    speedup: float = 0.0

    def to_dict(self) -> dict:
        """JSON-ready dict (an infinite finish time becomes None)."""
        return {"name": self.name, "machines": self.machines,
                "config": None if self.config is None else self.config.to_dict(),
                "throughput": self.throughput, "weight": self.weight,
                "finish_time": _json_number(self.finish_time),
                "speedup": _json_number(self.speedup),
                "bottleneck": None if self.estimate is None else self.estimate.bottleneck}


@dataclass(frozen=True)
class Allocation:
    """Machines and configurations of several jobs sharing one cluster.

    Attributes
    ----------
    jobs : tuple of JobAllocation
        In the order the jobs were given.
    machines : int
        The budget N.
    objective : {"proportional", "speedup", "throughput", "makespan"}
    method : {"exact", "relaxed"}
        The method that produced ``jobs``.
    value : float
        The objective: total weighted log-speedup, total weighted speedup,
        total weighted throughput (samples/s), or makespan (s).
    bound : float
        Bound on the optimum: upper for the sums, lower for makespan (the
        value itself for ``"exact"``).
    gap : float
        Relative distance of ``value`` to ``bound`` (``|value - bound| / |bound|``);
        the optimum is at most that far from ``value`` too.
    exact_value, exact_gap : float or None
        The exact DP's optimum and the relative distance of ``value`` to it,
        when both ran (``compare=True``).
    seconds : float, s
        Wall time, curves included.
    meta : mapping
        Timings, configurations evaluated, solver, LP value.
    """

    jobs: tuple
    machines: int
    objective: str
    method: str
    value: float
    bound: float
    gap: float
    exact_value: float | None = None
    exact_gap: float | None = None
    seconds: float = 0.0
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "meta", MappingProxyType(dict(self.meta)))

    @property
    def used(self) -> int:
        """Machines the chosen configurations use."""
        return sum(j.machines for j in self.jobs)

    def to_dict(self) -> dict:
        """JSON-ready dict (non-finite numbers become None)."""
        return {"objective": self.objective, "method": self.method, "machines": self.machines,
                "used": self.used, "value": _json_number(self.value),
                "bound": _json_number(self.bound), "gap": _json_number(self.gap),
                "exact_value": _json_number(self.exact_value),
                "exact_gap": _json_number(self.exact_gap), "seconds": self.seconds,
                "jobs": [j.to_dict() for j in self.jobs], "meta": dict(self.meta)}


# --------------------------------------------------------------------------
# The entry point
# --------------------------------------------------------------------------

def _check_machines(machines, cluster) -> int:
    if not isinstance(cluster, Cluster):
        raise SpecError("cluster", f"expected a Cluster, got {type(cluster).__name__}")
    if machines is None:
        return cluster.machines
    if not _is_int(machines) or machines < 1:
        raise SpecError("machines", f"must be an integer >= 1, got {machines!r}")
    if machines > cluster.machines:
        raise SpecError("machines", f"{machines} exceeds the cluster's {cluster.machines} "
                                    "machines")
    return int(machines)


def _check_request(jobs, objective, method) -> None:
    if objective not in ALLOCATION_OBJECTIVES:
        raise SpecError("objective",
                        f"must be one of {', '.join(ALLOCATION_OBJECTIVES)}; got {objective!r}")
    if method not in METHODS:
        raise SpecError("method", f"must be one of {', '.join(METHODS)}; got {method!r}")
    if isinstance(jobs, (str, bytes)) or not isinstance(jobs, Sequence) or len(jobs) == 0:
        raise SpecError("jobs", f"must be a non-empty sequence of Job, got {jobs!r}")
    for i, job in enumerate(jobs):
        if not isinstance(job, Job):
            raise SpecError(f"jobs[{i}]", f"expected a Job, got {type(job).__name__}")
        if objective == "makespan" and job.work is None:
            raise SpecError(f"jobs[{i}].work", "the makespan objective needs every job's "
                                               "work (samples)")


def _labels(jobs) -> list[str]:
    return [job.name or f"jobs[{i}]" for i, job in enumerate(jobs)]


def _curves(jobs, cluster, machines, curves, labels) -> list[Curve]:
    if curves is None:
        return [throughput_curve(job, cluster, machines, label=label)
                for job, label in zip(jobs, labels)]
    if len(curves) != len(jobs) or any(
            not isinstance(c, Curve) or c.machines != machines for c in curves):
        raise SpecError("curves", f"must be {len(jobs)} Curve objects computed for "
                                  f"{machines} machines")
    return list(curves)


@dataclass(frozen=True)
class _Problem:
    """The jobs' curves as matrices: what the solvers see."""

    gain: np.ndarray      # (J, N+1) weighted throughput, -inf where not allowed
    finish: np.ndarray    # (J, N+1) finish time, inf where not allowed or no work
    lo: np.ndarray        # fewest machines per job for the chosen objective
    hi: np.ndarray        # fewest machines reaching the best throughput
    budget: int


def _problem(jobs, curves, objective, budget, labels) -> _Problem:
    raw = np.stack([c.throughput for c in curves])
    weights = np.array([job.weight for job in jobs], dtype=float)
    work = np.array([job.work if job.work is not None else np.nan for job in jobs])
    with np.errstate(divide="ignore", invalid="ignore"):
        finish = np.where(raw > 0, work[:, None] / raw, np.inf)
    finish[np.isnan(finish)] = np.inf
    lo = np.array([c.lo for c in curves], dtype=np.intp)
    if objective == "makespan":
        lo = _running_lo(finish, labels)
    elif objective == "proportional":
        lo = _running_lo(np.where(raw > 0, 1.0, np.inf), labels)
    hi = np.maximum(np.array([c.hi for c in curves], dtype=np.intp), lo)
    _check_minimums(lo, budget, labels)
    return _Problem(weights[:, None] * _relative(raw, objective), finish, lo, hi, budget)


def reference_throughputs(throughput: np.ndarray) -> np.ndarray:
    """Each row's first positive value: a job's throughput on its smallest running configuration.

    ``throughput`` is (J, N + 1), rows non-decreasing where finite; a row
    with no positive value gets ``nan`` (the job never runs).
    """
    positive = throughput > 0
    first = np.argmax(positive, axis=1)
    ref = throughput[np.arange(len(throughput)), first]
    return np.where(positive.any(axis=1), ref, np.nan)


def _relative(raw: np.ndarray, objective: str) -> np.ndarray:
    """The objective's gain per job and machine count, before weights."""
    if objective not in ("proportional", "speedup"):
        return raw
    ref = reference_throughputs(raw)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        if objective == "speedup":
            return np.where(raw > 0, raw / ref, np.where(raw == 0, 0.0, -np.inf))
        return np.where(raw > 0, np.log(raw / ref), -np.inf)


def _running_lo(finish: np.ndarray, labels) -> np.ndarray:
    finite = np.isfinite(finish)
    for label, row in zip(labels, finite):
        if not row.any():
            raise Infeasible(f"{label}: no configuration has a positive throughput, "
                             "so it never finishes")
    return np.argmax(finite, axis=1).astype(np.intp)


def _check_minimums(lo: np.ndarray, budget: int, labels) -> None:
    if int(lo.sum()) > budget:
        need = [f"{label}: {m}" for label, m in zip(labels, lo) if m]
        more = f", ... {len(need) - 8} more" if len(need) > 8 else ""
        raise Infeasible(f"the jobs' minimums need {int(lo.sum())} machines, only {budget} "
                         f"available ({', '.join(need[:8])}{more})")


def _score(p: _Problem, alloc: np.ndarray, objective: str) -> float:
    rows = np.arange(len(alloc))
    if objective in _SUMS:
        return float(p.gain[rows, alloc].sum())
    return float(p.finish[rows, alloc].max())


def _exact(p: _Problem, objective: str) -> np.ndarray:
    if objective in _SUMS:
        return _dp_max_sum(p.gain)
    return _fill_by_gain(_min_makespan(p.finish, p.budget), p.gain, p.hi, p.budget)


def _relaxed(p: _Problem, objective: str, solver: str) -> tuple[np.ndarray, float, float]:
    """Rounded allocation, bound on the optimum, and the LP's own value (objective units)."""
    if objective in _SUMS:
        scale = max(float(np.max(p.gain[np.isfinite(p.gain)])), 1e-300)
        x, bound, lp = _lp_max_sum(p.gain / scale, p.lo, p.hi, p.budget, solver)
        alloc = _trim(_round_down(x, p.lo, p.hi), p.gain, p.lo, p.budget)
        return _fill_by_gain(alloc, p.gain, p.hi, p.budget), bound * scale, lp * scale
    rate = np.where(np.isfinite(p.finish), 1.0 / p.finish, 0.0)
    scale = max(float(rate.max()), 1e-300)
    _, bound, lp = _lp_max_min(rate / scale, p.lo, p.hi, p.budget, solver)
    bound = 1.0 / (bound * scale)
    alloc = _min_makespan(p.finish, p.budget, floor=bound)
    return _fill_by_gain(alloc, p.gain, p.hi, p.budget), bound, 1.0 / (lp * scale)


def _gap(value: float, reference: float) -> float:
    if value == reference:
        return 0.0
    return abs(value - reference) / abs(reference) if reference else math.inf


def _job_results(jobs, curves, alloc, labels) -> tuple:
    out = []
    refs = reference_throughputs(np.stack([c.throughput for c in curves]))
    for job, curve, m, label, ref in zip(jobs, curves, alloc, labels, refs):
        cand = curve.candidates[m]
        thr = 0.0 if cand is None else cand.estimate.throughput
        finish = None if job.work is None else (job.work / thr if thr > 0 else math.inf)
        speedup = float(thr / ref) if thr > 0 else 0.0
        out.append(JobAllocation(label, 0 if cand is None else cand.config.machines,
                                 None if cand is None else cand.config, thr, job.weight, finish,
                                 None if cand is None else cand.estimate, speedup))
    return tuple(out)


def _pick_method(method: str, objective: str, n_jobs: int, budget: int) -> str:
    if method != "auto":
        return method
    if objective == "makespan":
        return "exact"          # the threshold search is O(J N log(J N)): always affordable
    return "exact" if n_jobs * (budget + 1) ** 2 <= AUTO_EXACT_CELLS else "relaxed"


def allocate(jobs: Sequence[Job], cluster: Cluster, machines: int | None = None, *,
             objective: str = "proportional", method: str = "auto", compare: bool = False,
             curves: Sequence[Curve] | None = None, solver: str | None = None) -> Allocation:
    """Share ``machines`` machines of ``cluster`` among ``jobs``.

    Parameters
    ----------
    jobs : sequence of Job
    cluster : Cluster
        The machines' hardware (every job runs on the same kind).
    machines : int, optional
        Budget N (default ``cluster.machines``).
    objective : {"proportional", "speedup", "throughput", "makespan"}
        Maximize ``sum_j weight_j * log(speedup_j)`` (proportional fairness,
        the default; every job runs), ``sum_j weight_j * speedup_j``, or
        ``sum_j weight_j * throughput_j`` (samples/s), or minimize
        ``max_j work_j / throughput_j`` (s).  A job's speedup is its
        throughput over its throughput on its smallest configuration that
        runs (module docstring: why the default is fair).
    method : {"auto", "exact", "relaxed"}
        Exact answer (the sums: DP, O(J N^2); makespan: threshold
        search, O(J N log(J N))); concave LP relaxation with rounding; or
        ``"auto"``: exact, except the sums once
        ``J * (N + 1)**2 > AUTO_EXACT_CELLS``.
    compare : bool
        With the relaxed method, also run the exact method and report the
        gap to it (``exact_value``, ``exact_gap``).
    curves : sequence of Curve, optional
        The jobs' :func:`throughput_curve` for this budget, to reuse.
    solver : str, optional
        cvxpy LP solver of the relaxation (default: the first installed of
        :data:`SOLVERS`).

    Returns
    -------
    Allocation

    Raises
    ------
    SpecError
        Bad input (the field is named: ``jobs[2].work``, ``machines``, ...).
    Infeasible
        A job that must run has no configuration within the budget, or the
        jobs' minimums together exceed it.
    """
    start = time.perf_counter()
    _check_request(jobs, objective, method)
    budget = _check_machines(machines, cluster)
    labels = _labels(jobs)
    curves = _curves(jobs, cluster, budget, curves, labels)
    problem = _problem(jobs, curves, objective, budget, labels)
    meta = {"curve_seconds": time.perf_counter() - start,
            "n_evaluated": sum(c.n_evaluated for c in curves)}
    chosen = _pick_method(method, objective, len(jobs), budget)
    exact = _run_exact(problem, objective, meta) if chosen == "exact" or compare else None
    if chosen == "exact":
        alloc, value = exact
        bound, exact_value, exact_gap = value, None, None
    else:
        alloc, value, bound = _run_relaxed(problem, objective, solver, meta)
        exact_value = None if exact is None else exact[1]
        exact_gap = None if exact is None else _gap(value, exact_value)
    return Allocation(_job_results(jobs, curves, alloc, labels), budget, objective, chosen,
                      value, bound, _gap(value, bound), exact_value, exact_gap,
                      time.perf_counter() - start, meta)


def _run_exact(problem: _Problem, objective: str, meta: dict) -> tuple[np.ndarray, float]:
    t0 = time.perf_counter()
    alloc = _exact(problem, objective)
    meta["exact_seconds"] = time.perf_counter() - t0
    return alloc, _score(problem, alloc, objective)


def _run_relaxed(problem: _Problem, objective: str, solver: str | None,
                 meta: dict) -> tuple[np.ndarray, float, float]:
    t0 = time.perf_counter()
    meta["solver"] = _solver_name(solver)
    alloc, bound, meta["lp_value"] = _relaxed(problem, objective, meta["solver"])
    meta["relaxed_seconds"] = time.perf_counter() - t0
    return alloc, _score(problem, alloc, objective), bound


make_callable(__name__, allocate)   # optimizer.allocate(...) is allocate(...): perfmodel._callable
