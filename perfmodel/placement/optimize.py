"""Network-aware placement of parameter-server jobs (our extension of Jain, Kumar, Mao).

Jain, Kumar and Mao measure four fixed strategies, conclude that avoiding hot
spots *across* jobs matters more than colocating the nodes of one job (Sec.
5.2, Sec. 6) and call for "a smart logical-to-physical scheduler that
minimizes network congestion" (Sec. 6).  This module is such a scheduler.

Load model
----------
In one iteration every worker receives ``model_bytes`` from its PS and sends
``gradient_bytes`` back (Sec. 4.2).  The *load* of a directed link is
the bytes crossing it per iteration (ECMP fractions included) divided by its
capacity: the seconds it needs to carry one iteration of every job, a lower
bound on the communication time of the jobs crossing it when they run in step.

Objectives (all minimized, in seconds):

* ``"max_load"`` -- the most loaded link (then, to break ties and to steer the
  search across plateaus, the sum of squared loads).
* ``"job_time"`` -- the mean over jobs of the job's communication bound: the
  largest load on its pull routes plus the largest load on its push routes (a
  proxy of the expected iteration time; then the max load, then the sum of
  squares).

Search: a greedy construction (each PS in the rack with most free hosts; each
worker on the free host that raises the objective least), then local search
by first-improvement moves -- move a node to a free host, or swap the hosts of
two nodes of different jobs (or a job's PS with one of its workers) -- in a
seeded random order, until a full pass finds no improvement; plus optional
random restarts.  Small instances can be checked against
:func:`exhaustive_placement`.

Examples
--------
>>> from perfmodel.placement.topology import paper_racks
>>> topo = paper_racks()
>>> best = optimize_placement(topo, jobs=8, workers=7, seed=0)
>>> round(best.max_load * 1.25e9, 6)       # seconds per byte x B: 7 models on the PS link
7.0
>>> from perfmodel.placement.strategies import strided
>>> round(max_link_load(topo, strided(topo, 8, 7)) * 1.25e9, 6)
14.0

References
----------
Jain, Kumar, Mao, "Characterizing Distributed Deep Learning Training Performance
in Datacenters": Sec. 4.2 (traffic of an iteration), Sec. 4.3 (the strategies
compared against), Sec. 5.2 and 6 (avoid cross-job hot spots; a network-aware
scheduler as future work).
"""

from __future__ import annotations

import itertools
import time as _time
from dataclasses import dataclass

import numpy as np

from .. import _validate as _v
from ..errors import Infeasible, SpecError
from .strategies import Placement, checked_sizes
from .topology import Topology

__all__ = ["PLACEMENT_OBJECTIVES", "OBJECTIVES", "OptimizedPlacement", "link_loads",
           "max_link_load", "job_times", "optimize_placement", "exhaustive_placement"]

#: Objectives of :func:`optimize_placement` (see the module docstring).
PLACEMENT_OBJECTIVES = ("max_load", "job_time")
#: Backward-compatible alias of :data:`PLACEMENT_OBJECTIVES`, the name it had before
#: (other modules give ``OBJECTIVES`` their own meanings; prefer the specific name).
OBJECTIVES = PLACEMENT_OBJECTIVES


def link_loads(topology: Topology, placement: Placement, model_bytes: float = 1.0,
               gradient_bytes: float | None = None) -> np.ndarray:
    """Seconds each directed link needs to carry one iteration of every job.

    Parameters
    ----------
    topology : Topology
    placement : Placement
    model_bytes : float, bytes
        Model block pulled by each worker (default 1: loads in s per byte).
    gradient_bytes : float, bytes, optional
        Gradients pushed by each worker; default ``model_bytes``.

    Returns
    -------
    ndarray, s, shape (n_arcs,)
        ``sum over flows of fraction * bytes / capacity``, in
        :attr:`Topology.arcs` order.

    References
    ----------
    Jain, Kumar, Mao, Sec. 4.2 (steps 1 and 3: the bytes of one iteration).
    """
    placement.check(topology)
    m = _v.number("model_bytes", model_bytes, "B", positive=True)
    g = m if gradient_bytes is None else _v.number("gradient_bytes", gradient_bytes, "B",
                                                        positive=True)
    loads = np.zeros(topology.n_arcs)
    for ps, group in zip(placement.ps, placement.workers):
        for w in group:
            arcs, frac = topology.route(ps, w)
            np.add.at(loads, arcs, m * frac)
            arcs, frac = topology.route(w, ps)
            np.add.at(loads, arcs, g * frac)
    return loads / topology.capacity


def max_link_load(topology: Topology, placement: Placement, model_bytes: float = 1.0,
                  gradient_bytes: float | None = None) -> float:
    """The most loaded link's seconds per iteration (see :func:`link_loads`)."""
    return float(link_loads(topology, placement, model_bytes, gradient_bytes).max())


def job_times(topology: Topology, placement: Placement, model_bytes: float = 1.0,
              gradient_bytes: float | None = None) -> np.ndarray:
    """Each job's communication bound (s): max load on its pull routes + max load on its push routes."""
    loads = link_loads(topology, placement, model_bytes, gradient_bytes)
    out = []
    for ps, group in zip(placement.ps, placement.workers):
        down = max(loads[topology.route(ps, w)[0]].max() for w in group)
        up = max(loads[topology.route(w, ps)[0]].max() for w in group)
        out.append(down + up)
    return np.array(out)


@dataclass(frozen=True)
class OptimizedPlacement:
    """Result of :func:`optimize_placement`.

    Attributes
    ----------
    placement : Placement
        The best placement found (``strategy="optimized"``).
    objective : str
        The objective minimized.
    value : float, s
        Its value.
    max_load : float, s
        The most loaded link's seconds per iteration.
    mean_job_time : float, s
        Mean of :func:`job_times`.
    evaluations : int
        Candidate placements evaluated.
    seconds : float, s
        Wall time of the search.
    """

    placement: Placement
    objective: str
    value: float
    max_load: float
    mean_job_time: float
    evaluations: int
    seconds: float


def _sig(x: float) -> float:
    return float(f"{x:.10g}")


class _Evaluator:
    """Incremental loads of a placement given as a flat host array (PS first in each job)."""

    def __init__(self, topo: Topology, jobs: int, workers: int, m: float, g: float,
                 objective: str):
        self.topo, self.jobs, self.workers = topo, jobs, workers
        self.m, self.g, self.objective = m, g, objective
        self.inv_cap = 1.0 / topo.capacity
        self.count = 0

    def job_vector(self, hosts: np.ndarray, j: int) -> tuple[np.ndarray, list, list]:
        """Loads added by job j, and the arc sets of its pull and push routes."""
        k = self.workers + 1
        ps = int(hosts[j * k])
        vec = np.zeros(self.topo.n_arcs)
        downs, ups = [], []
        for w in hosts[j * k + 1:(j + 1) * k]:
            arcs, frac = self.topo.route(ps, int(w))
            np.add.at(vec, arcs, self.m * frac)
            downs.append(arcs)
            arcs, frac = self.topo.route(int(w), ps)
            np.add.at(vec, arcs, self.g * frac)
            ups.append(arcs)
        return vec * self.inv_cap, np.unique(np.concatenate(downs)), np.unique(np.concatenate(ups))

    def full(self, hosts):
        parts = [self.job_vector(hosts, j) for j in range(self.jobs)]
        return [p[0] for p in parts], [p[1] for p in parts], [p[2] for p in parts]

    def score(self, loads: np.ndarray, downs, ups) -> tuple:
        """Lexicographic key, each term rounded to 10 significant digits (sums of the
        same loads in another order must tie, not look like an improvement)."""
        self.count += 1
        top = _sig(float(loads.max()))
        squares = _sig(float(np.dot(loads, loads)))
        if self.objective == "max_load":
            return (top, squares)
        jt = float(np.mean([loads[d].max() + loads[u].max() for d, u in zip(downs, ups)]))
        return (_sig(jt), top, squares)


def _host_classes(topo: Topology) -> list:
    """Hosts with one link to the same switch, of the same capacity and latency, share a class."""
    out = []
    for i, h in enumerate(topo.hosts):
        nbrs = list(topo.graph.adj[h])
        if len(nbrs) == 1:
            data = topo.graph.edges[h, nbrs[0]]
            out.append((nbrs[0], data["capacity"], data.get("latency", 0.0)))
        else:
            out.append(("host", i))
    return out


def _greedy(ev: _Evaluator, free: list[int], topo: Topology) -> np.ndarray:
    """Job by job: PS in the rack with most free hosts, then each worker where it costs least."""
    free = list(free)
    classes = _host_classes(topo)
    hosts: list[int] = []
    loads = np.zeros(topo.n_arcs)
    for _ in range(ev.jobs):
        racks = topo.rack_of[free]
        counts = np.bincount(racks, minlength=topo.n_racks)
        best_rack = int(np.argmax(counts))
        ps = next(h for h in free if topo.rack_of[h] == best_rack)
        free.remove(ps)
        job = [ps]
        for _ in range(ev.workers):
            best, best_key = None, None
            seen = set()
            for h in free:
                # interchangeable hosts (same switch, same link) cost the same: try one
                if classes[h] in seen:
                    continue
                seen.add(classes[h])
                a1, f1 = topo.route(ps, h)
                a2, f2 = topo.route(h, ps)
                trial = loads.copy()
                np.add.at(trial, a1, ev.m * f1 * ev.inv_cap[a1])
                np.add.at(trial, a2, ev.g * f2 * ev.inv_cap[a2])
                ev.count += 1
                key = (_sig(float(trial.max())), _sig(float(np.dot(trial, trial))), h)
                if best_key is None or key < best_key:
                    best, best_key, best_trial = h, key, trial
            loads = best_trial
            free.remove(best)
            job.append(best)
        hosts += job
    return np.array(hosts, dtype=int)


def _local_search(ev: _Evaluator, hosts: np.ndarray, free: list[int], rng, max_evaluations):
    k = ev.workers + 1
    n = hosts.size
    hosts = hosts.copy()
    free = list(free)
    vecs, downs, ups = ev.full(hosts)
    loads = np.sum(vecs, axis=0)
    best = ev.score(loads, downs, ups)
    improved = True
    while improved and ev.count < max_evaluations:
        improved = False
        moves = [(p, q) for p in range(n) for q in range(p + 1, n)
                 if p // k != q // k or p % k == 0 or q % k == 0]
        moves += [(p, -1 - i) for p in range(n) for i in range(len(free))]
        order = rng.permutation(len(moves))
        for idx in order:
            if ev.count >= max_evaluations:
                break
            p, q = moves[idx]
            trial = hosts.copy()
            if q >= 0:
                trial[p], trial[q] = hosts[q], hosts[p]
                touched = {p // k, q // k}
            else:
                trial[p] = free[-1 - q]
                touched = {p // k}
            new_vecs, new_downs, new_ups = list(vecs), list(downs), list(ups)
            new_loads = loads.copy()
            for j in touched:
                v, d, u = ev.job_vector(trial, j)
                new_loads += v - vecs[j]
                new_vecs[j], new_downs[j], new_ups[j] = v, d, u
            np.maximum(new_loads, 0.0, out=new_loads)
            score = ev.score(new_loads, new_downs, new_ups)
            if score < best:
                if q < 0:
                    free[-1 - q] = int(hosts[p])
                hosts, vecs, downs, ups, best = trial, new_vecs, new_downs, new_ups, score
                loads = np.sum(vecs, axis=0)   # re-sum: no drift from increments
                improved = True
                break
    return hosts, best


def _to_placement(hosts: np.ndarray, jobs: int, workers: int, label: str) -> Placement:
    k = workers + 1
    return Placement(tuple(int(hosts[j * k]) for j in range(jobs)),
                     tuple(tuple(int(h) for h in hosts[j * k + 1:(j + 1) * k])
                           for j in range(jobs)), label)


def _free_hosts(topology: Topology, available) -> list[int]:
    if available is None:
        return list(range(topology.n_hosts))
    out = sorted({topology.host_index(h) for h in available})
    return out


def optimize_placement(topology: Topology, jobs: int, workers: int, *,
                       objective: str = "max_load", model_bytes: float = 1.0,
                       gradient_bytes: float | None = None, available=None, seed=0,
                       restarts: int = 0, max_evaluations: int = 200_000) -> OptimizedPlacement:
    """Place J jobs of one PS + W workers to minimize network load (greedy + local search).

    Parameters
    ----------
    topology : Topology
    jobs, workers : int
        J jobs (>= 1) of one PS and W workers (>= 1).
    objective : {"max_load", "job_time"}
        What to minimize (see the module docstring).
    model_bytes, gradient_bytes : float, bytes
        Traffic of one iteration per worker (only their ratio matters for the
        placement; the reported values scale with them).
    available : sequence of int or str, optional
        Hosts that may be used (e.g. the free hosts of a busy cluster); default all.
    seed : int or numpy.random.Generator
        Order of the local-search moves and the random restarts.
    restarts : int
        Extra local searches from uniformly random placements (>= 0).
    max_evaluations : int
        Budget of candidate evaluations across the whole search.

    Returns
    -------
    OptimizedPlacement

    Raises
    ------
    SpecError
        Naming the bad argument.
    Infeasible
        More nodes than available hosts.

    References
    ----------
    Jain, Kumar, Mao, Sec. 5.2 and Sec. 6 (network-aware, cross-job placement).
    """
    jobs, workers = checked_sizes(topology, jobs, workers)
    _v.choice("objective", objective, PLACEMENT_OBJECTIVES)
    m = _v.number("model_bytes", model_bytes, "B", positive=True)
    g = m if gradient_bytes is None else _v.number("gradient_bytes", gradient_bytes, "B",
                                                        positive=True)
    restarts = _v.integer("restarts", restarts, minimum=0)
    max_evaluations = _v.integer("max_evaluations", max_evaluations, minimum=1)
    rng = _v.generator(seed)
    hosts_ok = _free_hosts(topology, available)
    need = jobs * (workers + 1)
    if need > len(hosts_ok):
        raise Infeasible(f"{jobs} jobs x (1 PS + {workers} workers) need {need} hosts; "
                         f"{len(hosts_ok)} are available")
    start = _time.perf_counter()
    ev = _Evaluator(topology, jobs, workers, m, g, objective)
    starts = [_greedy(ev, hosts_ok, topology)]
    for _ in range(restarts):
        starts.append(rng.permutation(hosts_ok)[:need])
    best_hosts, best_score = None, None
    for init in starts:
        free = sorted(set(hosts_ok) - set(int(h) for h in init))
        hosts, score = _local_search(ev, np.asarray(init, dtype=int), free, rng,
                                     max_evaluations)
        if best_score is None or score < best_score:
            best_hosts, best_score = hosts, score
    placement = _to_placement(best_hosts, jobs, workers, "optimized")
    return OptimizedPlacement(placement, objective, float(best_score[0]),
                              max_link_load(topology, placement, m, g),
                              float(job_times(topology, placement, m, g).mean()),
                              ev.count, _time.perf_counter() - start)


def exhaustive_placement(topology: Topology, jobs: int, workers: int, *,
                         objective: str = "max_load", model_bytes: float = 1.0,
                         available=None, limit: int = 200_000) -> OptimizedPlacement:
    """The optimum by enumerating every placement (the oracle for tiny instances).

    Enumerates ordered choices of ``J (W + 1)`` hosts, skipping orders that
    only permute the workers of a job or whole jobs among themselves.

    Raises
    ------
    SpecError
        ``limit`` placements would be exceeded.
    """
    jobs, workers = checked_sizes(topology, jobs, workers)
    _v.choice("objective", objective, PLACEMENT_OBJECTIVES)
    m = _v.number("model_bytes", model_bytes, "B", positive=True)
    hosts_ok = _free_hosts(topology, available)
    need = jobs * (workers + 1)
    if need > len(hosts_ok):
        raise Infeasible(f"{need} hosts needed, {len(hosts_ok)} available")
    k = workers + 1
    start = _time.perf_counter()
    ev = _Evaluator(topology, jobs, workers, m, m, objective)
    best, best_key = None, None
    for perm in itertools.permutations(hosts_ok, need):
        ok = all(list(perm[j * k + 1:(j + 1) * k]) == sorted(perm[j * k + 1:(j + 1) * k])
                 for j in range(jobs))
        ok = ok and all(perm[j * k] < perm[(j + 1) * k] for j in range(jobs - 1))
        if not ok:
            continue
        if ev.count >= limit:
            raise SpecError("limit", f"more than {limit} placements to enumerate")
        hosts = np.array(perm)
        vecs, downs, ups = ev.full(hosts)
        key = ev.score(np.sum(vecs, axis=0), downs, ups)
        if best_key is None or key < best_key:
            best, best_key = hosts, key
    placement = _to_placement(best, jobs, workers, "exhaustive")
    return OptimizedPlacement(placement, objective, float(best_key[0]),
                              max_link_load(topology, placement, m),
                              float(job_times(topology, placement, m).mean()), ev.count,
                              _time.perf_counter() - start)
