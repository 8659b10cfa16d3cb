"""Seed 004 Sec. 5.3: the dynamic program over layers, with bipartite-matched mappings.

For one resource triple (N_ps, N_mr, N_wr) the program chooses, layer by layer,
the state s_l = (P_l, R_l, H_l) (partitions, layer replicas, threads) that
minimizes T_epoch itself:

    T_epoch / N_sample = sum_l node_l(s_l) + sum_l edge_l(s_{l-1}, s_l)

* ``node_l(s)``: the layer's computation U_f + U_b + U_w (eqs. 5, 7, 8, 9)
  over its parallelism Q(l) = H R N_mr, plus its share of the weight reads
  M_w (eqs. 10-11 are sums over layers, T_epoch's read term is linear in M_w);
* ``edge_l(s', s)``: the activations layer l receives from layer l-1 (M_f(l),
  eq. 6) and the error terms layer l-1 receives from layer l (M_b(l-1)), under
  the segment-to-worker mapping of layer l found by maximum-weight bipartite
  matching against layer l-1 (:func:`optimizer.matching.map_layer`).

Why it is exact.  Workers are identical, so a transition is priced with layer
l-1 on its canonical workers (segment k of the layer on worker k) and layer l
matched against it; :func:`compose_plan` then relabels each layer's matching
by the permutation that put the previous layer where it is, so every adjacent
pair of the final plan is the priced pair up to a relabeling of workers, and
:meth:`perfmodel.layerwise.LayerWise.evaluate` of that plan returns exactly the
program's value (the layer-wise model takes each component's slowest segment,
which keeps T_epoch a sum over adjacent pairs).  The brute force of
:mod:`optimizer.exhaustive` enumerates every state sequence with the same
composition and the tests check the two agree.

Two restrictions, both checked: the DNN must be a chain (each layer fed by the
one before, feeding only the one after: AlexNet, VGG, seed 004's Adam DNNs),
and the cache model must be per layer (``LayerWise(working_set="layer")``):
with ``"worker"`` a layer's C_muladd depends on every other layer's partitions
and T_epoch no longer splits into pairs (the program then optimizes with the
per-layer working set and says ``exact=False``; the plan is re-evaluated with
the model as given).

References
----------
Seed 004 (``004_6ca1a0991c6bf252.txt``) Sec. 5.1 Fig. 7, Sec. 5.3.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from perfmodel import layerwise as lw
from perfmodel.errors import SpecError
from perfmodel.result import Estimate
from perfmodel.specs import DNN, Cluster, Config

from .matching import map_layer
from .space import layer_choices

__all__ = ["DPResult", "Pricer", "check_chain", "compose_plan", "solve", "canonical_plan",
           "estimate_plan", "useful_triples", "optimize"]


def check_chain(dnn: DNN) -> None:
    """Raise SpecError unless every layer is fed by the previous one and feeds only the next."""
    for i, layer in enumerate(dnn.layers):
        if i and lw.producer_index(dnn, i) != i - 1:
            raise SpecError(f"layers[{i}].inputs", f"the dynamic program needs a chain DNN; layer "
                                                   f"{layer.name!r} is not fed by the layer before it")
        if len(layer.inputs) > 1:
            raise SpecError(f"layers[{i}].inputs", f"layer {layer.name!r} has several inputs; the "
                                                   "dynamic program needs a chain DNN")


def canonical_plan(partitions: int, replicas: int, threads: int = 1) -> lw.LayerPlan:
    """Segment k = r P + p on worker k."""
    return lw.LayerPlan(int(partitions), int(threads), int(replicas))


@dataclass
class Pricer:
    """Per-layer and per-transition costs of one DNN on one cluster, cached across configurations.

    ``units`` holds the costs that do not depend on the configuration (per
    sample, single thread): compute per (layer, P, R) and remote items per
    (layer, P', R', P, R, N_wr).
    """

    model: lw.LayerWise
    dnn: DNN
    cluster: Cluster
    _compute: dict = field(default_factory=dict)
    _items: dict = field(default_factory=dict)

    def __post_init__(self):
        check_chain(self.dnn)
        # the per-layer model of the cache makes a layer's cost its own business
        self.layer_model = dataclasses.replace(self.model, working_set="layer")
        self.exact = self.model.working_set == "layer"

    def _plan_with(self, **placed) -> lw.Plan:
        layers = [canonical_plan(1, 1)] * len(self.dnn.layers)
        for index, plan in placed.items():
            layers[int(index)] = plan
        return lw.Plan(tuple(layers))

    def compute(self, l: int, p: int, r: int) -> float:
        """U_f + U_b + U_w of layer ``l``'s slowest segments with one thread (eqs. 5, 7, 8)."""
        key = (l, p, r)
        if key not in self._compute:
            plan = self._plan_with(**{str(l): canonical_plan(p, r)})
            ws = self.layer_model._layer_working_set(self.dnn, l, plan, self.cluster)
            c = self.layer_model._muladd(self.dnn, l, plan, self.cluster, ws)
            costs = lw.layer_costs(self.dnn, l, plan, self.cluster, 1, c_muladd=c)
            self._compute[key] = costs.U_f + costs.U_b + costs.U_w
        return self._compute[key]

    def items(self, l: int, prev: tuple, cur: tuple) -> tuple[float, float]:
        """(max A(l, p), max E(l-1, p)) with layer l matched against a canonical layer l-1.

        The matching only needs the workers either layer uses: with the
        lexicographic tie-break extra (idle) workers are never chosen, so the
        answer holds for every N_wr >= max(P' R', P R) and is cached once.
        """
        key = (l, prev, cur)
        if key not in self._items:
            before = canonical_plan(*prev)
            after = map_layer(self.dnn.layers[l - 1], self.dnn.layers[l], before, cur[0], cur[1],
                              1, _used_workers(prev, cur))
            plan = self._plan_with(**{str(l - 1): before, str(l): after})
            a, _ = lw._segment_traffic(self.dnn, l, plan)
            _, e = lw._segment_traffic(self.dnn, l - 1, plan)
            self._items[key] = (float(a.max()), float(e.max()))
        return self._items[key]


@dataclass(frozen=True)
class DPResult:
    """The best plan of one resource triple, its per-sample time and T_epoch."""

    config: Config
    plan: lw.Plan
    per_sample: float
    epoch_time: float
    states: tuple
    n_states: int
    exact: bool


def _transfer(items, cluster: Cluster, threads: np.ndarray) -> np.ndarray:
    bw = lw.thread_bandwidth(cluster.effective_bandwidth, threads)
    lat = lw.thread_latency(cluster.latency, threads, cluster.latency_per_thread)
    return np.asarray(lw.transfer_time(items, cluster.activation_bytes, bw, lat))


def _node_costs(pricer: Pricer, config: Config, l: int, pairs: np.ndarray,
                threads: np.ndarray, reads: np.ndarray) -> np.ndarray:
    """(n_pairs, n_threads) per-sample compute over Q plus the layer's share of M_w.

    ``reads`` is (n_pairs, n_threads, L): each layer's per-sample read cost.
    """
    u1 = np.array([pricer.compute(l, p, r) for p, r in pairs])
    interf = lw.interference_factor(threads, pricer.cluster.interference)
    q = threads[None, :] * pairs[:, 1:2] * config.n_replicas
    return u1[:, None] * interf[None, :] / q + reads[:, :, l]


def _read_costs(model, dnn, cluster, config, pairs, threads) -> np.ndarray:
    """(n_pairs, n_threads, L) per-sample weight-read cost of each layer in each state."""
    shape = (len(pairs), len(threads), len(dnn.layers))
    h = np.broadcast_to(threads[None, :, None], shape)
    r = np.broadcast_to(pairs[:, 1][:, None, None], shape)
    reads = model.weight_read_layers(dnn, cluster, config, h, r)["M_w"]
    return np.asarray(reads) * model.reads_per_sample(cluster, config)


def _edge_costs(pricer: Pricer, config: Config, l: int, pairs: np.ndarray,
                threads: np.ndarray) -> np.ndarray:
    """(n_pairs', n_threads', n_pairs, n_threads): M_b(l-1) / Q(l-1) + M_f(l) / Q(l)."""
    n = len(pairs)
    a = np.zeros((n, n))
    e = np.zeros((n, n))
    for i, prev in enumerate(map(tuple, pairs)):
        for j, cur in enumerate(map(tuple, pairs)):
            a[i, j], e[i, j] = pricer.items(l, prev, cur)
    r = pairs[:, 1].astype(float)
    h = threads.astype(float)
    m_f = _transfer(a[:, None, :, None], pricer.cluster, h[None, None, None, :])
    m_b = _transfer(e[:, None, :, None], pricer.cluster, h[None, :, None, None])
    q_cur = (h[None, :] * r[:, None] * config.n_replicas)[None, None, :, :]
    q_prev = (r[:, None] * h[None, :] * config.n_replicas)[:, :, None, None]
    return m_b / q_prev + m_f / q_cur


def _used_workers(prev: tuple, cur: tuple) -> int:
    return max(prev[0] * prev[1], cur[0] * cur[1])


def compose_plan(dnn: DNN, states, n_workers: int) -> lw.Plan:
    """The plan of a state sequence: each layer matched against the one before, relabeled.

    See the module docstring for why the relabeling keeps every transition's price.
    """
    layers, sigma = [], np.arange(n_workers)
    for l, (p, r, h) in enumerate(states):
        if l == 0:
            relative = np.arange(p * r)
        else:
            prev = states[l - 1]
            relative = np.asarray(map_layer(dnn.layers[l - 1], dnn.layers[l],
                                            canonical_plan(prev[0], prev[1]), p, r, 1,
                                            _used_workers(prev[:2], (p, r))).workers)
        actual = sigma[relative]
        layers.append(lw.LayerPlan(int(p), int(h), int(r), tuple(int(w) for w in actual)))
        rest = np.setdiff1d(np.arange(n_workers), actual)
        sigma = np.concatenate([actual, rest])
    return lw.Plan(tuple(layers))


def _state_space(config: Config, cluster: Cluster, max_threads: int | None):
    choices = layer_choices(config.n_workers, cluster.cores, max_threads=max_threads)
    pairs = np.unique(np.stack([choices.partitions, choices.replicas], axis=1), axis=0)
    if config.n_ps == 0:  # without a server, replicated layers could not sync their copies
        pairs = pairs[pairs[:, 1] == 1]
    threads = np.unique(choices.threads)
    return pairs, threads


def solve(pricer: Pricer, config: Config, *, max_threads: int | None = None) -> DPResult:
    """The best plan for ``config``'s (N_ps, N_mr, N_wr) by dynamic programming over layers.

    Parameters
    ----------
    pricer : Pricer
        Model, DNN and cluster (with its caches).
    config : Config
        The resource triple; ``epoch_samples`` gives N_sample (default 10^6).
    max_threads : int, optional
        Cap on H(l) below the cluster's cores (C2).

    Returns
    -------
    DPResult
    """
    dnn, cluster, model = pricer.dnn, pricer.cluster, pricer.layer_model
    pairs, threads = _state_space(config, cluster, max_threads)
    reads = _read_costs(model, dnn, cluster, config, pairs, threads)
    best = _node_costs(pricer, config, 0, pairs, threads, reads)
    back = []
    for l in range(1, len(dnn.layers)):
        total = best[:, :, None, None] + _edge_costs(pricer, config, l, pairs, threads)
        flat = total.reshape(-1, *total.shape[2:])
        arg = flat.argmin(axis=0)
        back.append(arg)
        best = np.take_along_axis(flat, arg[None], axis=0)[0] \
            + _node_costs(pricer, config, l, pairs, threads, reads)
    idx = int(best.argmin())
    per_sample = float(best.flat[idx])
    states = _trace(idx, back, pairs, threads)
    plan = compose_plan(dnn, states, config.n_workers)
    samples = config.epoch_samples or 1_000_000
    return DPResult(config, plan, per_sample, per_sample * samples, tuple(states),
                    len(pairs) * len(threads), pricer.exact)


def _trace(idx: int, back: list, pairs: np.ndarray, threads: np.ndarray) -> list:
    n_h = len(threads)
    states = []
    for arg in [None, *back][::-1]:
        i, j = divmod(idx, n_h)
        states.append((int(pairs[i, 0]), int(pairs[i, 1]), int(threads[j])))
        if arg is not None:
            idx = int(arg.flat[idx])
    return states[::-1]


def estimate_plan(pricer: Pricer, result: DPResult) -> Estimate:
    """The model's own estimate of the program's plan (with the model's options as given)."""
    return pricer.model.evaluate(pricer.dnn, pricer.cluster, result.config, result.plan)


def useful_triples(machines: int):
    """(N_ps, N_mr, N_wr) worth solving under C1, with the servers pruned exactly.

    T_epoch depends on N_ps only through min(N_ps, N_wr) in eq. 11, where more
    servers never read slower, so for each (N_mr, N_wr) only the most servers
    that can still help, min(N_wr, machines - N_mr N_wr), is solved.  One
    replica without replicated layers needs no server at all (M_w = 0), so one
    replica is solved twice: without a server (its layers cannot be replicated,
    nothing would keep the copies in sync) and with the most useful servers
    (layers may be replicated).
    """
    for n_workers in range(1, machines + 1):
        for n_replicas in range(1, machines // n_workers + 1):
            spare = machines - n_workers * n_replicas
            if n_replicas == 1:
                yield 0, 1, n_workers
            if spare >= 1:
                yield min(n_workers, spare), n_replicas, n_workers


def _solve_triple(pricer: Pricer, config: Config, exhaustive: bool, max_threads):
    """(T_epoch used for ranking, evaluations, a zero-argument function giving the Estimate)."""
    model, dnn, cluster = pricer.model, pricer.dnn, pricer.cluster
    if exhaustive:
        from .exhaustive import best_plan

        t, plan, count = best_plan(model, dnn, cluster, config, max_threads=max_threads)
        return t, count, lambda: model.evaluate(dnn, cluster, config, plan)
    result = solve(pricer, config, max_threads=max_threads)
    count = result.n_states * len(dnn.layers)
    if pricer.exact:
        return result.epoch_time, count, lambda: estimate_plan(pricer, result)
    est = estimate_plan(pricer, result)  # re-price with the model's own cache model
    return est.epoch_time, count, lambda: est


def optimize(model: lw.LayerWise, dnn: DNN, cluster: Cluster, *, machines: int | None = None,
             top: int = 5, epoch_samples: int | None = None, max_threads: int | None = None,
             exhaustive: bool = False, progress=None):
    """Seed 004's optimizer: the best (N_ps, N_mr, N_wr) and per-layer plan for ``dnn``.

    Returns an :class:`optimizer.search.SearchResult` whose candidates carry
    the model's estimate of each triple's best plan (``meta["layers"]``: per-layer
    partitions, threads, replicas and worker mapping); ``n_evaluated`` counts
    the (triple, layer state) pairs the program priced, or with
    ``exhaustive=True`` the state sequences the brute force of
    :mod:`optimizer.exhaustive` evaluated instead.  When the model's cache
    model is not per layer the program's plans are re-priced by the model
    itself and ranked by that (``meta["exact"]`` is then False).
    """
    import time

    from .search import Candidate, SearchResult

    machines = cluster.machines if machines is None else machines
    if machines < 1 or machines > cluster.machines:
        raise SpecError("machines", f"must be in 1..{cluster.machines}, got {machines}")
    if top < 1:
        raise SpecError("top", f"must be >= 1, got {top!r}")
    start = time.perf_counter()
    pricer = Pricer(model, dnn, cluster)
    found, evaluated = [], 0
    for n_ps, n_mr, n_wr in useful_triples(machines):
        config = Config(n_workers=n_wr, n_replicas=n_mr, n_ps=n_ps, epoch_samples=epoch_samples)
        t, count, make = _solve_triple(pricer, config, exhaustive, max_threads)
        found.append((t, config.machines, len(found), config, make))
        evaluated += count
        if progress is not None:
            progress(len(found))
    found.sort(key=lambda item: item[:3])
    ranked = tuple(Candidate(config, make(), t) for t, _, _, config, make in found[:top])
    seconds = time.perf_counter() - start
    return SearchResult(best=ranked[0], ranked=ranked, n_evaluated=evaluated, seconds=seconds,
                        objective="time", meta={"exact": pricer.exact or exhaustive,
                                                "triples": len(found)})
