"""The configuration space of Yan et al. 2015 (Fig. 7) and its constraints C1-C4, in one place.

A configuration Phi (Yan et al. 2015, Sec. 5.1, Fig. 7) is

* the resources: N_ps parameter servers, N_mr model replicas and N_wr
  workers per replica (:class:`~perfmodel.specs.Config` fields ``n_ps``,
  ``n_replicas``, ``n_workers``);
* per layer l: P_l partitions, H_l threads, R_l layer replicas and the
  mapping f_l : SP_l x SH_l x SR_l -> SW of segments to workers
  (:class:`~perfmodel.layerwise.LayerPlan`, whose ``workers[r * P + p]`` is
  the worker of segment p of layer replica r).

Constraints (Fig. 7), and where they are checked:

C1  N_ps + N_mr N_wr <= N (machines)                      :func:`check_config`
C2  H_l <= K (cores of a machine), every layer             :func:`check_layer`
C3  f_l(p, h, r) != f_l(p', h', r') when p != p' or r != r':
    the P_l R_l segments of a layer sit on distinct workers, all in
    0 .. N_wr - 1 (so P_l R_l <= N_wr)                       :func:`check_layer`
C4  f_l(p, h, r) = f_l(p, h', r): the H_l threads of a segment share its
    worker.  A :class:`~perfmodel.layerwise.LayerPlan` stores one worker per
    segment (p, r), so it satisfies C4 *by construction*; the one
    representation that can violate it is the full mapping f_l(p, h, r)
    of Fig. 7, read by :func:`layer_plan_from_mapping`.

Two rules beyond Fig. 7:

* ``"PS"`` (option ``ps_for_replicas``): with N_mr > 1 model replicas,
  N_ps >= 1, because the replicas share their weights only through parameter
  servers (Yan et al. 2015, Sec. 3-4; eqs. 10-11 read weights from the
  servers).  The layer-wise model refuses such a configuration too
  (``Infeasible``).
* ``"MP"`` (:func:`check_model_parallelism`, option ``max_workers``):
  N_wr <= the largest model parallelism the DNN's architecture allows
  (``DNN.max_workers_per_replica``).  Yan et al. 2015 (Sec. 6.2, footnote 7)
  could split their Adam DNNs over at most 4 workers; a search that ignores
  this answers configurations their system could not run.

Ids are 0-based here (workers 0 .. N_wr - 1, segments p = 0 .. P_l - 1,
replicas r = 0 .. R_l - 1, threads h = 0 .. H_l - 1); the paper counts from 1.

The enumeration helpers (:func:`resource_triples`, :func:`layer_choices`,
:func:`iter_layer_plans`) yield exactly the points that pass the checks, and
:func:`space_size` counts them; :func:`paper_bound` is the paper's
O(N^3 [K N^2 N!]^L) (Sec. 5.2), which :func:`space_size` never exceeds.

Examples
--------
>>> from perfmodel.specs import Cluster, Config
>>> cluster = Cluster(machines=20, nic_bandwidth=1.25e9, cores=16)
>>> check_config(Config(n_workers=7, n_replicas=3, n_ps=2), cluster)
Traceback (most recent call last):
...
perfmodel.errors.ConstraintViolation: config: C1: n_ps + n_replicas * n_workers = 2 + 3 * 7 = 23 exceeds 20 machines
>>> len(list(resource_triples(3)))   # (0,1,1) (0,1,2) (0,1,3) (1,1,1) (1,1,2) (1,2,1) (2,1,1)
7

References
----------
Yan, Ruwase, He, Chilimbi 2015, "Performance Modeling and Scalability
Optimization of Distributed Deep Learning Systems" (KDD): Sec. 5.1 and Fig. 7
(problem formulation, C1-C4), Sec. 5.2 (size of the search space).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator
from itertools import permutations
from typing import NamedTuple

import numpy as np

from perfmodel.errors import ConstraintViolation, SpecError
from perfmodel.layerwise import LayerPlan, Plan
from perfmodel.specs import Cluster, Config

__all__ = [
    "CONSTRAINTS", "ConstraintViolation", "Resources", "LayerChoices",
    "check_config", "model_parallelism_limit", "check_model_parallelism", "check_layer", "check_plan", "layer_plan_from_mapping", "full_mapping",
    "resource_triples", "layer_choices", "iter_layer_plans",
    "mapping_count", "layer_space_size", "space_size", "paper_bound",
]

#: Constraint ids and what they say (Yan et al. 2015, Fig. 7, plus our "PS" rule).
CONSTRAINTS = {
    "C1": "n_ps + n_replicas * n_workers <= machines",
    "C2": "threads of a layer <= cores of a machine",
    "C3": "segments of a layer on distinct workers 0 .. n_workers-1",
    "C4": "threads of a segment on the segment's worker",
    "PS": "n_ps >= 1 when n_replicas > 1 (replicas share weights through servers)",
    "MP": "n_workers <= the DNN's max_workers_per_replica (its architecture's model parallelism)",
}


# ------------------------------------------------------------------ argument checks
def _integer(name: str, value, minimum: int) -> int:
    """``value`` as an int >= ``minimum``, else :class:`SpecError` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise SpecError(name, f"expected an integer, got {value!r}")
    if value < minimum:
        raise SpecError(name, f"must be >= {minimum}, got {value!r}")
    return int(value)


def _budget(cluster, machines) -> int:
    """N of C1: ``machines`` when given, else ``cluster.machines``."""
    if machines is not None:
        return _integer("machines", machines, 1)
    if not isinstance(cluster, Cluster):
        raise SpecError("cluster", f"expected a Cluster, got {type(cluster).__name__}")
    return cluster.machines


def _cores(cluster) -> int:
    if not isinstance(cluster, Cluster):
        raise SpecError("cluster", f"expected a Cluster, got {type(cluster).__name__}")
    return cluster.cores


def _where(layer_index, layer_name) -> tuple[str, str]:
    """Field prefix and message prefix naming a layer."""
    field = "layer" if layer_index is None else f"layers[{layer_index}]"
    said = "" if layer_name is None else f"layer {layer_name!r}: "
    return field, said


# ------------------------------------------------------------------ C1 (+ PS)
def check_config(config: Config, cluster: Cluster | None, machines: int | None = None, *,
                 ps_for_replicas: bool = True) -> None:
    """Check the resources (N_ps, N_mr, N_wr) of ``config`` against C1 (Yan et al. 2015, Fig. 7).

    Parameters
    ----------
    config : Config
        ``n_ps``, ``n_replicas`` (N_mr) and ``n_workers`` (N_wr, per replica).
    cluster : Cluster or None
        Supplies N = ``cluster.machines`` unless ``machines`` is given.
    machines : int, optional
        Machine budget N, overriding ``cluster.machines`` (``--machines``).
    ps_for_replicas : bool, optional
        Also require N_ps >= 1 when N_mr > 1 (rule ``"PS"``, default).

    Raises
    ------
    ConstraintViolation
        ``"C1"``: N_ps + N_mr N_wr > N; ``"PS"``: replicas without a server.
    SpecError
        ``config`` is not a Config, or no budget is known.

    Examples
    --------
    >>> check_config(Config(n_workers=4, n_replicas=4, n_ps=4), None, machines=20)
    >>> check_config(Config(n_workers=4, n_replicas=2, n_ps=0), None, machines=20)
    Traceback (most recent call last):
    ...
    perfmodel.errors.ConstraintViolation: config.n_ps: PS: n_replicas = 2 replicas share weights through parameter servers: n_ps must be >= 1, got 0

    References
    ----------
    Yan et al. 2015, Fig. 7, constraint C1.
    """
    if not isinstance(config, Config):
        raise SpecError("config", f"expected a Config, got {type(config).__name__}")
    n = _budget(cluster, machines)
    used = config.n_ps + config.n_replicas * config.n_workers
    if used > n:
        raise ConstraintViolation(
            "C1", "config", used,
            f"n_ps + n_replicas * n_workers = {config.n_ps} + {config.n_replicas} * "
            f"{config.n_workers} = {used} exceeds {n} machines", limit=n)
    if ps_for_replicas and config.n_replicas > 1 and config.n_ps < 1:
        raise ConstraintViolation(
            "PS", "config.n_ps", config.n_ps,
            f"n_replicas = {config.n_replicas} replicas share weights through parameter "
            f"servers: n_ps must be >= 1, got {config.n_ps}", limit=1)


def model_parallelism_limit(dnn, requested: int | None = None) -> int | None:
    """The largest N_wr to allow: ``requested`` if given, else the DNN's own (None: no limit).

    Examples
    --------
    >>> from perfmodel import zoo
    >>> model_parallelism_limit(zoo.load("adam-mnist")), model_parallelism_limit(zoo.load("vgg16"), 8)
    (4, 8)
    """
    limit = dnn.max_workers_per_replica if requested is None else requested
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, numbers.Integral)
                              or limit < 1):
        raise SpecError("max_workers_per_replica", f"must be an integer >= 1, got {limit!r}")
    return None if limit is None else int(limit)


def check_model_parallelism(config: Config, max_workers: int | None) -> None:
    """Check N_wr against the DNN's largest model parallelism (rule ``"MP"``; None: no limit).

    Examples
    --------
    >>> check_model_parallelism(Config(n_workers=4, n_replicas=4, n_ps=4), 4)
    >>> check_model_parallelism(Config(n_workers=8, n_replicas=2, n_ps=2), 4)
    Traceback (most recent call last):
    ...
    perfmodel.errors.ConstraintViolation: config.n_workers: MP: n_workers = 8 exceeds the 4 workers per replica the DNN's architecture allows (max_workers_per_replica)
    """
    if max_workers is not None and config.n_workers > max_workers:
        raise ConstraintViolation(
            "MP", "config.n_workers", config.n_workers,
            f"n_workers = {config.n_workers} exceeds the {max_workers} workers per replica the "
            f"DNN's architecture allows (max_workers_per_replica)", limit=max_workers)


# ------------------------------------------------------------------ C2, C3 (C4)
def _check_threads(lp: LayerPlan, cores: int, where: tuple, index) -> None:
    """C2: H_l <= K."""
    if lp.threads > cores:
        raise ConstraintViolation(
            "C2", f"{where[0]}.threads", lp.threads,
            f"{where[1]}threads = {lp.threads} exceeds {cores} cores per machine",
            limit=cores, layer=index)


def _check_count(lp: LayerPlan, n_workers: int, where: tuple, index) -> None:
    """C3, counting: P_l R_l distinct workers need P_l R_l <= N_wr."""
    segments = lp.partitions * lp.replicas
    if segments > n_workers:
        raise ConstraintViolation(
            "C3", f"{where[0]}.workers", segments,
            f"{where[1]}partitions * replicas = {lp.partitions} * {lp.replicas} = {segments} "
            f"segments exceed {n_workers} workers per replica", limit=n_workers, layer=index)


def _check_workers(lp: LayerPlan, n_workers: int, where: tuple, index) -> None:
    """C3: every worker id in range, no worker holding two segments."""
    seen = {}
    for k, w in enumerate(lp.workers):
        p, r = k % lp.partitions, k // lp.partitions
        if not 0 <= w < n_workers:
            raise ConstraintViolation(
                "C3", f"{where[0]}.workers[{k}]", w,
                f"{where[1]}worker {w} of segment (p={p}, r={r}) is outside 0..{n_workers - 1} "
                f"(n_workers = {n_workers})", limit=n_workers, layer=index)
        if w in seen:
            raise ConstraintViolation(
                "C3", f"{where[0]}.workers[{k}]", w,
                f"{where[1]}segments {seen[w]} and (p={p}, r={r}) share worker {w}",
                limit=n_workers, layer=index)
        seen[w] = f"(p={p}, r={r})"


def check_layer(plan_layer: LayerPlan, config: Config, cluster: Cluster, *,
                layer_index: int | None = None, layer_name: str | None = None) -> None:
    """Check one layer's P_l, H_l, R_l and mapping f_l against C2-C4 (Yan et al. 2015, Fig. 7).

    Parameters
    ----------
    plan_layer : LayerPlan
        ``workers[r * partitions + p]`` is the worker of segment p of layer replica r.
    config : Config
        Supplies N_wr = ``config.n_workers``.
    cluster : Cluster
        Supplies K = ``cluster.cores``.
    layer_index, layer_name : optional
        Name the layer in the error (field ``layers[i]``).

    Raises
    ------
    ConstraintViolation
        ``"C2"``: H_l > K.  ``"C3"``: P_l R_l > N_wr, a worker id outside
        0 .. N_wr - 1, or two segments on one worker.
    SpecError
        An argument of the wrong type.

    Notes
    -----
    C4 holds by construction: a LayerPlan has one worker per segment (p, r)
    and all H_l threads of the segment run there.  A full mapping
    f_l(p, h, r) is checked for C4 by :func:`layer_plan_from_mapping`.

    Examples
    --------
    >>> cluster = Cluster(machines=8, nic_bandwidth=1e9, cores=4)
    >>> check_layer(LayerPlan(2, 4, 2, (0, 3, 1, 2)), Config(n_workers=4), cluster)
    >>> check_layer(LayerPlan(2, 4, 1, (1, 1)), Config(n_workers=4), cluster, layer_index=3)
    Traceback (most recent call last):
    ...
    perfmodel.errors.ConstraintViolation: layers[3].workers[1]: C3: segments (p=0, r=0) and (p=1, r=0) share worker 1

    References
    ----------
    Yan et al. 2015, Fig. 7, constraints C2, C3 and C4.
    """
    if not isinstance(plan_layer, LayerPlan):
        raise SpecError(_where(layer_index, None)[0],
                        f"expected a LayerPlan, got {type(plan_layer).__name__}")
    if not isinstance(config, Config):
        raise SpecError("config", f"expected a Config, got {type(config).__name__}")
    where = _where(layer_index, layer_name)
    _check_threads(plan_layer, _cores(cluster), where, layer_index)
    _check_count(plan_layer, config.n_workers, where, layer_index)
    _check_workers(plan_layer, config.n_workers, where, layer_index)


def check_plan(plan: Plan, config: Config, cluster: Cluster, *, machines: int | None = None,
               dnn=None, ps_for_replicas: bool = True) -> None:
    """Check a whole configuration Phi: C1 on the resources, C2-C4 on every layer.

    Parameters
    ----------
    plan : Plan or sequence of LayerPlan
        One LayerPlan per layer.
    config : Config
    cluster : Cluster
    machines : int, optional
        Machine budget overriding ``cluster.machines`` (C1).
    dnn : DNN, optional
        When given, the plan must have one layer per DNN layer, and errors
        name the layer.
    ps_for_replicas : bool, optional
        See :func:`check_config`.

    Raises
    ------
    ConstraintViolation
        The first violated constraint; for C2-C4 the field is ``layers[i]...``
        and the message names the layer.
    SpecError
        Wrong types, or a plan whose length differs from the DNN's.

    References
    ----------
    Yan et al. 2015, Fig. 7.
    """
    check_config(config, cluster, machines, ps_for_replicas=ps_for_replicas)
    layers = plan.layers if isinstance(plan, Plan) else tuple(plan)
    names = [None] * len(layers)
    if dnn is not None:
        if len(dnn.layers) != len(layers):
            raise SpecError("plan", f"has {len(layers)} layer plans for {len(dnn.layers)} layers")
        names = [layer.name for layer in dnn.layers]
    for i, (lp, name) in enumerate(zip(layers, names)):
        check_layer(lp, config, cluster, layer_index=i, layer_name=name)


# ------------------------------------------------------------------ C4: full mappings
def _mapping_array(mapping) -> np.ndarray:
    """A (P, H, R) integer array from an array or a ``{(p, h, r): worker}`` dict."""
    if isinstance(mapping, dict):
        try:
            shape = tuple(max(key[i] for key in mapping) + 1 for i in range(3))
            arr = np.full(shape, -1, dtype=np.int64)
            for key, w in mapping.items():
                arr[key] = w
        except (TypeError, IndexError, ValueError):
            raise SpecError("mapping", "keys must be (p, h, r) tuples of ids >= 0") from None
        if (arr < 0).any():
            missing = tuple(int(i) for i in np.argwhere(arr < 0)[0])
            raise SpecError("mapping", f"has no worker for (p, h, r) = {missing}")
        return arr
    arr = np.asarray(mapping)
    if arr.ndim != 3 or 0 in arr.shape or not np.issubdtype(arr.dtype, np.integer):
        raise SpecError("mapping", f"must be an integer array of shape (P, H, R), got "
                                   f"shape {arr.shape} and dtype {arr.dtype}")
    return arr


def layer_plan_from_mapping(mapping, config: Config | None = None, cluster: Cluster | None = None,
                            *, layer_index: int | None = None,
                            layer_name: str | None = None) -> LayerPlan:
    """Build a LayerPlan from the full mapping f_l(p, h, r) of Fig. 7, checking C4.

    Parameters
    ----------
    mapping : array_like of int, shape (P, H, R), or dict
        ``mapping[p, h, r]`` (or ``mapping[(p, h, r)]``) = worker of thread h
        of segment p of replica r.
    config, cluster : optional
        When both are given, the result is also checked for C2 and C3
        (:func:`check_layer`).
    layer_index, layer_name : optional
        Name the layer in errors.

    Returns
    -------
    LayerPlan
        P, H, R from the shape and the common worker of each segment.

    Raises
    ------
    ConstraintViolation
        ``"C4"``: the threads of one segment on different workers (and C2/C3
        when ``config`` and ``cluster`` are given).
    SpecError
        A malformed mapping.

    Examples
    --------
    >>> f = np.array([[[0], [0]], [[2], [2]]])          # P=2, H=2, R=1
    >>> layer_plan_from_mapping(f).workers
    (0, 2)
    >>> layer_plan_from_mapping(np.array([[[0], [1]]]))
    Traceback (most recent call last):
    ...
    perfmodel.errors.ConstraintViolation: layer.mapping: C4: threads of segment (p=0, r=0) are on workers [0, 1], not one worker

    References
    ----------
    Yan et al. 2015, Fig. 7, constraint C4 (and C2, C3).
    """
    arr = _mapping_array(mapping)
    field, said = _where(layer_index, layer_name)
    for p, r in np.ndindex(arr.shape[0], arr.shape[2]):
        spread = np.unique(arr[p, :, r])
        if len(spread) > 1:
            raise ConstraintViolation(
                "C4", f"{field}.mapping", spread.tolist(),
                f"{said}threads of segment (p={p}, r={r}) are on workers {spread.tolist()}, "
                f"not one worker", layer=layer_index)
    P, H, R = arr.shape
    plan = LayerPlan(P, H, R, tuple(int(arr[k % P, 0, k // P]) for k in range(P * R)))
    if config is not None and cluster is not None:
        check_layer(plan, config, cluster, layer_index=layer_index, layer_name=layer_name)
    return plan


def full_mapping(plan_layer: LayerPlan) -> np.ndarray:
    """The full mapping f_l(p, h, r) of a LayerPlan, shape (P, H, R) (inverse of
    :func:`layer_plan_from_mapping`).

    >>> full_mapping(LayerPlan(2, 1, 2, (3, 1, 0, 2)))[:, 0, :]
    array([[3, 0],
           [1, 2]])
    """
    if not isinstance(plan_layer, LayerPlan):
        raise SpecError("plan_layer", f"expected a LayerPlan, got {type(plan_layer).__name__}")
    w = np.asarray(plan_layer.workers, dtype=np.int64).reshape(plan_layer.replicas,
                                                                plan_layer.partitions)
    return np.broadcast_to(w.T[:, None, :], (plan_layer.partitions, plan_layer.threads,
                                             plan_layer.replicas)).copy()


# ------------------------------------------------------------------ enumeration
class Resources(NamedTuple):
    """One (N_ps, N_mr, N_wr) point of the resource space (Yan et al. 2015, Fig. 7)."""

    n_ps: int
    n_replicas: int
    n_workers: int

    def config(self, **fields) -> Config:
        """The :class:`~perfmodel.specs.Config` of these resources (extra fields passed on)."""
        return Config(n_workers=self.n_workers, n_replicas=self.n_replicas, n_ps=self.n_ps,
                      **fields)


class LayerChoices(NamedTuple):
    """Every (P, R, H) of one layer, as equal-length int64 arrays (row k is one choice)."""

    partitions: np.ndarray
    replicas: np.ndarray
    threads: np.ndarray


def resource_triples(machines: int, *, min_ps: int = 0, max_ps: int | None = None,
                     ps_for_replicas: bool = True,
                     max_workers: int | None = None) -> Iterator[Resources]:
    """Every (N_ps, N_mr, N_wr) with N_ps + N_mr N_wr <= N (C1), in lexicographic order.

    Parameters
    ----------
    machines : int
        N, the machine budget (>= 1).
    min_ps, max_ps : int, optional
        Bounds on N_ps (default 0 and unbounded).
    ps_for_replicas : bool, optional
        Skip N_mr > 1 with N_ps = 0 (rule ``"PS"``: replicas share weights
        through parameter servers), default True.
    max_workers : int, optional
        Largest N_wr (rule ``"MP"``, ``DNN.max_workers_per_replica``);
        default: no limit.

    Yields
    ------
    Resources
        ``(n_ps, n_replicas, n_workers)``, N_mr, N_wr >= 1, sorted.

    Examples
    --------
    >>> [tuple(t) for t in resource_triples(2)]
    [(0, 1, 1), (0, 1, 2), (1, 1, 1)]
    >>> [tuple(t) for t in resource_triples(2, ps_for_replicas=False)]
    [(0, 1, 1), (0, 1, 2), (0, 2, 1), (1, 1, 1)]

    References
    ----------
    Yan et al. 2015, Fig. 7 (C1) and Sec. 5.2 (at most N^3 resource choices).
    """
    n = _integer("machines", machines, 1)
    lo = _integer("min_ps", min_ps, 0)
    hi = n - 1 if max_ps is None else min(_integer("max_ps", max_ps, 0), n - 1)
    top_wr = n if max_workers is None else _integer("max_workers", max_workers, 1)
    for n_ps in range(lo, hi + 1):
        for n_mr in range(1, n - n_ps + 1):
            if ps_for_replicas and n_mr > 1 and n_ps < 1:
                continue
            for n_wr in range(1, min((n - n_ps) // n_mr, top_wr) + 1):
                yield Resources(n_ps, n_mr, n_wr)


def _thread_cap(cores, max_threads) -> int:
    k = _integer("cores", cores, 1)
    return k if max_threads is None else min(k, _integer("max_threads", max_threads, 1))


def layer_choices(n_workers: int, cores: int, *, max_threads: int | None = None) -> LayerChoices:
    """Every (P, R, H) of one layer: P R <= N_wr (C3) and 1 <= H <= K (C2).

    Parameters
    ----------
    n_workers : int
        N_wr, workers per model replica.
    cores : int
        K, cores per machine (C2).
    max_threads : int, optional
        A further cap on H (e.g. a model that fixes the thread count).

    Returns
    -------
    LayerChoices
        Arrays ``partitions``, ``replicas``, ``threads`` in lexicographic
        (P, R, H) order, for vectorized evaluation of every choice at once.

    Examples
    --------
    >>> c = layer_choices(2, 2)
    >>> np.stack(c, axis=1).tolist()
    [[1, 1, 1], [1, 1, 2], [1, 2, 1], [1, 2, 2], [2, 1, 1], [2, 1, 2]]

    References
    ----------
    Yan et al. 2015, Fig. 7 (C2, C3) and Sec. 5.2 ("up to N^2 combinations on the
    selection of the number of partitions and the number of replications,
    and K choices on the number of threads").
    """
    w = _integer("n_workers", n_workers, 1)
    h = _thread_cap(cores, max_threads)
    p, r = zip(*[(p, r) for p in range(1, w + 1) for r in range(1, w // p + 1)])
    pr = np.repeat(np.stack([p, r], axis=1).astype(np.int64), h, axis=0)
    threads = np.tile(np.arange(1, h + 1, dtype=np.int64), len(p))
    return LayerChoices(pr[:, 0].copy(), pr[:, 1].copy(), threads)


def iter_layer_plans(n_workers: int, cores: int, *, max_threads: int | None = None
                     ) -> Iterator[LayerPlan]:
    """Every LayerPlan satisfying C2-C4: each (P, R, H) of :func:`layer_choices` with every
    injective mapping of its P R segments to the N_wr workers (brute force; small N only).

    >>> sum(1 for _ in iter_layer_plans(2, 1))   # (1,1): 2 maps, (1,2): 2, (2,1): 2
    6

    References
    ----------
    Yan et al. 2015, Sec. 5.2 (the K x N^2 x N! choices of one layer).
    """
    choices = layer_choices(n_workers, cores, max_threads=max_threads)
    for p, r, h in zip(*(c.tolist() for c in choices)):
        for workers in permutations(range(n_workers), p * r):
            yield LayerPlan(p, h, r, workers)


# ------------------------------------------------------------------ counting
def mapping_count(n_workers: int, segments: int) -> int:
    """Injective mappings of ``segments`` segments to ``n_workers`` workers (C3):
    N_wr! / (N_wr - S)!, 0 when S > N_wr.

    >>> mapping_count(4, 2), mapping_count(3, 4)
    (12, 0)
    """
    w, s = _integer("n_workers", n_workers, 0), _integer("segments", segments, 0)
    return math.perm(w, s) if s <= w else 0


def layer_space_size(n_workers: int, cores: int, *, mapping: bool = True,
                     max_threads: int | None = None) -> int:
    """Choices of one layer: sum over P R <= N_wr of H_max x (mappings, if ``mapping``).

    >>> layer_space_size(2, 1), layer_space_size(2, 3, mapping=False)
    (6, 9)

    References
    ----------
    Yan et al. 2015, Sec. 5.2: at most K x N^2 x N! per layer.
    """
    w = _integer("n_workers", n_workers, 1)
    h = _thread_cap(cores, max_threads)
    pairs = [(p, r) for p in range(1, w + 1) for r in range(1, w // p + 1)]
    return h * sum(mapping_count(w, p * r) if mapping else 1 for p, r in pairs)


def space_size(machines: int, cores: int, n_layers: int, *, mapping: bool = True,
               min_ps: int = 0, max_ps: int | None = None, ps_for_replicas: bool = True,
               max_threads: int | None = None) -> int:
    """Exact number of configurations Phi satisfying C1-C4 (and "PS"), as a Python int.

    sum over (N_ps, N_mr, N_wr) of :func:`resource_triples` of
    ``layer_space_size(N_wr, K) ** L`` -- what a brute-force search visits.

    Parameters
    ----------
    machines, cores, n_layers : int
        N, K and L.
    mapping : bool, optional
        Count segment-to-worker mappings (default) or only (P, R, H) choices.
    min_ps, max_ps, ps_for_replicas, max_threads : optional
        As in :func:`resource_triples` and :func:`layer_choices`.

    Examples
    --------
    >>> space_size(2, 1, 1)        # (0,1,1): 1 plan, (0,1,2): 6 plans, (1,1,1): 1 plan
    8

    References
    ----------
    Yan et al. 2015, Sec. 5.2; bounded by :func:`paper_bound`.
    """
    depth = _integer("n_layers", n_layers, 1)
    per_wr = {}
    total = 0
    for t in resource_triples(machines, min_ps=min_ps, max_ps=max_ps,
                              ps_for_replicas=ps_for_replicas):
        if t.n_workers not in per_wr:
            per_wr[t.n_workers] = layer_space_size(t.n_workers, cores, mapping=mapping,
                                                   max_threads=max_threads)
        total += per_wr[t.n_workers] ** depth
    return total


def paper_bound(machines: int, cores: int, n_layers: int) -> int:
    """The paper's brute-force size N^3 [K N^2 N!]^L (Yan et al. 2015, Sec. 5.2), an upper bound of
    :func:`space_size`.

    >>> paper_bound(2, 1, 1)
    64
    """
    n = _integer("machines", machines, 1)
    k, depth = _integer("cores", cores, 1), _integer("n_layers", n_layers, 1)
    return n ** 3 * (k * n * n * math.factorial(n)) ** depth
