"""Segment-to-worker mapping by maximum-weight bipartite matching (Yan et al. 2015, Sec. 5.3).

For a layer l whose producer l-1 is already placed, every segment (p, r) of
l must sit on its own worker (constraint C3 of Fig. 7) and should sit where
the data it exchanges with l-1 already is: activations it reads in the
forward pass and error terms it sends back.  The *affinity* of worker w for
segment j is the traffic j avoids on w (``perfmodel.partition.
worker_affinity``); maximizing the total affinity of an injective
assignment minimizes the remote traffic between l-1 and l.  Yan et al.
2015 describe this as a greedy choice per segment with a tie rule
(:func:`greedy_segments`) and, in general, as a maximum weighted bipartite
matching (:func:`match_segments`, exact).

Tie-break rule (:func:`match_segments`)
---------------------------------------
Among all assignments of maximum total affinity, the one whose worker
vector ``(w_0, w_1, ..., w_{S-1})`` is lexicographically smallest: segment 0
on the lowest worker id any optimal assignment allows, then segment 1 on
the lowest id allowed given that, and so on.  Exact, in integer arithmetic:

1. ``scipy.optimize.linear_sum_assignment(maximize=True)`` finds one
   optimal assignment (exact: affinities are integers far below 2^53);
2. the problem is made square with zero-affinity dummy segments, and an
   optimal dual (u_w, v_j) is computed from that assignment by a longest-path
   (Bellman-Ford) pass in int64; the *tight* edges, u_w + v_j = a[w, j], are
   exactly the edges optimal assignments may use (complementary slackness);
3. for j = 0, 1, ...: segment j moves to the lowest tight worker w from
   which an alternating cycle of tight edges, avoiding segments 0..j-1,
   leads back to j's current worker; the cycle is applied (the assignment
   stays optimal) and segment j is fixed.

The answer does not depend on the optimal assignment step 3 starts from,
so it starts from the tight assignment of least sum of ``w (n - j)`` (one
more assignment solve), close to the answer, and the segments that can
move at all (a tight worker below theirs holds a later segment) are
flagged for all segments at once with array operations, again only after
a rotation; the cycle search runs for flagged segments only.  Without
ties step 3 is one pass over the tight matrix.  ``tie_break="solver"``
skips steps 2-3 and returns scipy's assignment (optimal and deterministic,
but with scipy's own tie-break).

Replica pairing (:func:`layer_affinity`, :func:`remote_traffic`), as in
:mod:`perfmodel.layerwise`: replica r of layer l reads its activations from
replica ``r mod R(l-1)`` of layer l-1, and replica r' of layer l-1 receives
its error terms from replica ``r' mod R(l)`` of layer l.  With R(l) >= R(l-1)
(or R(l-1) = 1) every error pair is also an activation pair, i.e. "replica r
pairs with replica r mod R(l-1)".

References
----------
Yan, Ruwase, He, Chilimbi 2015, "Performance Modeling and Scalability
Optimization of Distributed Deep Learning Systems" (KDD): Sec. 5.3
("Optimizing segment-worker mapping": greedy per segment, ties, maximum
weighted bipartite matching), Fig. 7 (C3), eqs. 6-7 (remote activations
A(l, p) and error terms E(l, p)).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

from perfmodel import partition as pt
from perfmodel.errors import SpecError
from perfmodel.layerwise import LayerPlan
from perfmodel.specs import Layer

from .space import ConstraintViolation

__all__ = ["TIE_BREAKS", "match_segments", "greedy_segments", "assignment_value",
           "layer_affinity", "map_layer", "remote_traffic"]

#: Tie-break rules of :func:`match_segments`.
TIE_BREAKS = ("lexicographic", "solver")

#: Affinities are kept below this over (workers + segments + 1), so that every
#: sum the float solver and the int64 dual pass form is an exact integer.
_EXACT = 2 ** 50


# ------------------------------------------------------------------ inputs
def _affinity(affinity) -> np.ndarray:
    """``affinity`` as a 2-D int64 array of exact integers, else :class:`SpecError`."""
    a = np.asarray(affinity)
    if a.ndim != 2:
        raise SpecError("affinity", f"must be 2-D (workers x segments), got shape {a.shape}")
    if a.dtype == bool:
        a = a.astype(np.int64)
    if not (np.issubdtype(a.dtype, np.integer) or np.issubdtype(a.dtype, np.floating)):
        raise SpecError("affinity", f"must be numeric, got dtype {a.dtype}")
    if a.size and not (np.isfinite(a).all() and (a == np.round(a)).all()):
        raise SpecError("affinity", "must hold integer counts (the exact tie-break needs "
                                    "integers); scale or round the traffic first")
    limit = _EXACT // (sum(a.shape) + 1)
    if a.size and np.abs(a).max() > limit:
        raise SpecError("affinity", f"values up to {np.abs(a).max():g} exceed {limit} "
                                    f"(exact integer arithmetic); divide the traffic by a "
                                    f"common unit")
    return a.astype(np.int64)


def _check_fits(a: np.ndarray) -> None:
    """C3: S segments need S distinct workers."""
    workers, segments = a.shape
    if segments > workers:
        raise ConstraintViolation(
            "C3", "affinity", segments,
            f"{segments} segments cannot sit on distinct workers: only {workers} workers",
            limit=workers)


def assignment_value(affinity, workers) -> int:
    """Total affinity ``sum_j affinity[workers[j], j]`` of an assignment.

    >>> assignment_value([[3, 1], [0, 2]], [0, 1])
    5
    """
    a = np.asarray(affinity)
    w = np.asarray(workers, dtype=np.int64)
    return a[w, np.arange(len(w))].sum().item()


# ------------------------------------------------------------------ exact matching
def _square(a: np.ndarray, x: np.ndarray):
    """Square the problem with zero dummy segments; worker of each column, column of each worker."""
    n_w, n_s = a.shape
    sq = np.zeros((n_w, n_w), dtype=np.int64)
    sq[:, :n_s] = a
    col_of = np.full(n_w, -1, dtype=np.int64)
    col_of[x] = np.arange(n_s)
    col_of[col_of < 0] = np.arange(n_s, n_w)
    row_of = np.empty(n_w, dtype=np.int64)
    row_of[col_of] = np.arange(n_w)
    return sq, row_of, col_of


def _duals(sq: np.ndarray, row_of: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Optimal duals (u, v) of the square assignment ``row_of`` (worker of each column).

    u is the longest-path solution of u[w'] >= u[w] + sq[w', k] - sq[w, k] for
    w = row_of[k] (Bellman-Ford from a zero source); it exists iff the
    assignment is optimal (no improving alternating cycle).
    """
    n = len(row_of)
    cols = np.arange(n)
    matched = sq[row_of, cols]
    gain = sq - matched[None, :]
    u = np.zeros(n, dtype=np.int64)
    for _ in range(n + 2):
        new = np.maximum(u, (u[row_of][None, :] + gain).max(axis=1))
        if np.array_equal(new, u):
            return u, matched - u[row_of]
        u = new
    raise RuntimeError("linear_sum_assignment returned a non-optimal assignment")


def _reach(tight, row_of, w0: int, j: int, first: int):
    """Workers that reach ``w0`` by alternating tight edges avoiding segments 0..j.

    Backward breadth-first search: worker w (holding segment k > j) reaches
    w0 if k has a tight edge to a worker that does.  Returns (good, nxt)
    with ``nxt[w]`` the next worker on w's path; stops early once worker
    ``first`` is reached.
    """
    n = len(row_of)
    good = np.zeros(n, dtype=bool)
    nxt = np.full(n, -1, dtype=np.int64)
    good[w0] = True
    frontier = np.array([w0])
    while frontier.size and not good[first]:
        sub = tight[frontier]
        hit = sub.any(axis=0)
        hit[:j + 1] = False
        ks = np.flatnonzero(hit)
        ks = ks[~good[row_of[ks]]]
        new = row_of[ks]
        nxt[new] = frontier[np.argmax(sub[:, ks], axis=0)]
        good[new] = True
        frontier = new
    return good, nxt


def _rotate(row_of, col_of, j: int, best: int, nxt) -> None:
    """Apply the alternating cycle: j -> best, each displaced segment -> nxt of its worker."""
    moves = [(j, best)]
    w = best
    while nxt[w] >= 0:
        moves.append((col_of[w], nxt[w]))
        w = nxt[w]
    for col, worker in moves:
        row_of[col] = worker
        col_of[worker] = col


def _lexicographic(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The lexicographically smallest optimal assignment, from the optimal ``x``.

    Step 3 of the module docstring, with its work cut down by array
    operations over all segments at once (the answer does not depend on
    the optimal assignment step 3 starts from, nor on which segments it
    skips when they cannot move):

    * the start: among the assignments on tight edges (every one optimal),
      the one of least sum of ``w (n - j)`` (an assignment solver), which
      puts early segments on low workers, so that few rotations are left;
    * a worker w can take segment j's place only if j's worker reaches w
      by alternating tight edges, so only inside one strongly connected
      component of the graph "w -> w2 when the segment on w is tight on
      w2"; those components do not depend on the optimal assignment
      (Dulmage-Mendelsohn), so rotations keep them, and fixing segments
      only removes paths;
    * segment j can move only when some tight worker below its own, in its
      component, holds a later segment (a candidate): flagged for every
      segment at once, and again only after a rotation changes the
      assignment; the search for an alternating cycle (:func:`_reach`)
      runs for the flagged segments only.

    Tests compare it with :func:`_lexicographic_plain` (every segment in
    turn, from the solver's assignment).
    """
    n_s = a.shape[1]
    sq, row_of, col_of = _square(a, x)
    u, v = _duals(sq, row_of)
    tight = (u[:, None] + v[None, :]) == sq
    n = len(row_of)
    ids = np.arange(n)
    weight = ids[:, None] * (n - ids[None, :]).astype(float)
    rows, cols = linear_sum_assignment(np.where(tight, weight, float(n) ** 3 + 1.0))
    if tight[rows, cols].all():  # always (a tight perfect matching exists); kept as a guard
        row_of[cols] = rows
        col_of[rows] = cols
    tight_s = tight[:, :n_s]
    start = 0
    while start < n_s:
        flagged = (tight_s[:, start:] & (col_of[:, None] > ids[None, start:n_s])
                   & (ids[:, None] < row_of[None, start:n_s])).any(axis=0)
        restart = n_s
        for j in (np.flatnonzero(flagged) + start).tolist():
            w0 = row_of[j]
            cand = np.flatnonzero(tight_s[:w0, j] & (col_of[:w0] > j))
            good, nxt = _reach(tight, row_of, w0, j, cand[0])
            ok = cand[good[cand]]
            if ok.size:  # the assignment changes: so may the later segments' candidates
                _rotate(row_of, col_of, j, int(ok[0]), nxt)
                restart = j + 1
                break
        start = restart
    return row_of[:n_s].copy()


def _lexicographic_plain(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """:func:`_lexicographic` checking every segment in turn (the reference the tests use)."""
    n_s = a.shape[1]
    sq, row_of, col_of = _square(a, x)
    u, v = _duals(sq, row_of)
    tight = (u[:, None] + v[None, :]) == sq
    for j in range(n_s):
        w0 = row_of[j]
        cand = np.flatnonzero(tight[:w0, j] & (col_of[:w0] > j))
        if not cand.size:
            continue
        good, nxt = _reach(tight, row_of, w0, j, cand[0])
        ok = cand[good[cand]]
        if ok.size:
            _rotate(row_of, col_of, j, int(ok[0]), nxt)
    return row_of[:n_s].copy()


def match_segments(affinity, *, tie_break: str = "lexicographic") -> np.ndarray:
    """Assign every segment a distinct worker, maximizing the total affinity (Yan et al. 2015).

    Parameters
    ----------
    affinity : array_like of int, shape (n_workers, n_segments)
        ``affinity[w, j]``: traffic (items per sample) segment j avoids by
        sitting on worker w, e.g. :func:`layer_affinity` or
        ``perfmodel.partition.worker_affinity``.  Integer-valued (counts);
        any sign.
    tie_break : {"lexicographic", "solver"}, optional
        ``"lexicographic"`` (default): among optimal assignments, the
        lexicographically smallest worker vector (module docstring).
        ``"solver"``: scipy's optimal assignment as returned.

    Returns
    -------
    numpy.ndarray of int64, shape (n_segments,)
        Worker of each segment; all distinct (C3).

    Raises
    ------
    ConstraintViolation
        ``"C3"``: more segments than workers.
    SpecError
        Not a 2-D array of integer values, or values too large for exact
        integer arithmetic (above 2^50 / (n_workers + n_segments + 1)).

    Examples
    --------
    >>> match_segments([[1, 0], [1, 1], [0, 1]])     # three optima of 2: (0,1) (0,2) (1,2)
    array([0, 1])
    >>> match_segments([[0, 1], [1, 0], [1, 1]])     # optima (1,0) (1,2) (2,0)
    array([1, 0])
    >>> match_segments(np.zeros((3, 2), dtype=int))
    array([0, 1])

    References
    ----------
    Yan et al. 2015, Sec. 5.3 (maximum weighted bipartite matching), Fig. 7 (C3).
    """
    if tie_break not in TIE_BREAKS:
        raise SpecError("tie_break", f"must be one of {', '.join(TIE_BREAKS)}; got {tie_break!r}")
    a = _affinity(affinity)
    _check_fits(a)
    if a.shape[1] == 0:
        return np.zeros(0, dtype=np.int64)
    rows, cols = linear_sum_assignment(a.astype(float), maximize=True)
    x = np.empty(a.shape[1], dtype=np.int64)
    x[cols] = rows
    return x if tie_break == "solver" else _lexicographic(a, x)


# ------------------------------------------------------------------ the paper's greedy
def _settle(a: np.ndarray, free: np.ndarray, worker: int, claim: np.ndarray) -> int:
    """The claimant of ``worker`` whose taking it leaves the most total affinity.

    Each other claimant falls back to its best free worker other than ``worker``;
    ties go to the lowest segment index.
    """
    others = free.copy()
    others[worker] = False
    fallback = np.where(others[:, None], a[:, claim], np.iinfo(np.int64).min // 4).max(axis=0)
    score = a[worker, claim] + fallback.sum() - fallback
    return int(claim[np.argmax(score)])


def greedy_segments(affinity) -> np.ndarray:
    """The paper's greedy mapping: each segment takes its best worker; conflicts settled by
    comparing the total (Yan et al. 2015, Sec. 5.3).

    In rounds: every unplaced segment proposes its best free worker (highest
    affinity, lowest id on ties).  A worker proposed by one segment gets it.
    A worker proposed by several goes to the claimant that leaves the larger
    total, counting each other claimant at its best alternative ("we can break
    the tie easily by comparing which mapping choice results in overall
    smaller number of remote connections"); the others propose again in the
    next round.  Optimal when the segments' best workers differ; in general a
    heuristic, never better than :func:`match_segments`.

    Parameters
    ----------
    affinity : array_like of int, shape (n_workers, n_segments)

    Returns
    -------
    numpy.ndarray of int64, shape (n_segments,)
        Distinct workers (C3).

    Examples
    --------
    >>> greedy_segments([[5, 4], [0, 3]])           # both want worker 0: 5 + 3 beats 4 + 0
    array([0, 1])

    References
    ----------
    Yan et al. 2015, Sec. 5.3 ("a greedy approach that decides the best worker for each segment").
    """
    a = _affinity(affinity)
    _check_fits(a)
    n_w, n_s = a.shape
    x = np.full(n_s, -1, dtype=np.int64)
    free = np.ones(n_w, dtype=bool)
    low = np.iinfo(np.int64).min // 4
    while (x < 0).any():
        open_ = np.flatnonzero(x < 0)
        best = np.where(free[:, None], a[:, open_], low).argmax(axis=0)
        for worker in np.unique(best):
            claim = open_[best == worker]
            x[claim[0] if len(claim) == 1 else _settle(a, free, worker, claim)] = worker
        free[x[x >= 0]] = False
    return x


# ------------------------------------------------------------------ layers
def _integer_count(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise SpecError(name, f"must be an integer >= 1, got {value!r}")
    return int(value)


def _plan(name: str, value) -> LayerPlan:
    if not isinstance(value, LayerPlan):
        raise SpecError(name, f"expected a LayerPlan, got {type(value).__name__}")
    return value


def _check_prev(prev_plan: LayerPlan, n_workers: int) -> None:
    bad = [w for w in prev_plan.workers if not 0 <= w < n_workers]
    if bad:
        raise ConstraintViolation("C3", "prev_plan.workers", bad[0],
                                  f"worker {bad[0]} of the previous layer is outside "
                                  f"0..{n_workers - 1} (n_workers = {n_workers})",
                                  limit=n_workers)


def layer_affinity(prev_layer: Layer, layer: Layer, prev_plan: LayerPlan, partitions: int,
                   replicas: int, n_workers: int, *, backward: bool = True) -> np.ndarray:
    """Affinity of each worker for each segment of ``layer``, given where ``prev_layer`` is.

    Parameters
    ----------
    prev_layer, layer : Layer
        Producer (layer l-1) and consumer (layer l).
    prev_plan : LayerPlan
        Placement of l-1 (its partitions, replicas and workers).
    partitions, replicas : int
        P(l) and R(l).
    n_workers : int
        N_wr.
    backward : bool, optional
        Count the error terms l sends back to l-1 (default) besides the
        activations l reads.

    Returns
    -------
    numpy.ndarray of int64, shape (n_workers, partitions * replicas)
        Column ``r * partitions + p`` (the LayerPlan order) holds the items
        segment (p, r) exchanges with segments of l-1 on each worker, summed
        over the replica pairs of the module docstring.

    References
    ----------
    Yan et al. 2015, Sec. 5.3; eqs. 6-7 (A(l, p), E(l, p));
    :func:`perfmodel.partition.connection_matrix`.
    """
    prev_plan = _plan("prev_plan", prev_plan)
    n_workers = _integer_count("n_workers", n_workers)
    partitions = _integer_count("partitions", partitions)
    replicas = _integer_count("replicas", replicas)
    _check_prev(prev_plan, n_workers)
    p_prev, r_prev = prev_plan.partitions, prev_plan.replicas
    act = pt.activation_matrix(prev_layer, layer, p_prev, partitions)
    out = np.zeros((n_workers, partitions * replicas), dtype=np.int64)
    for r in range(replicas):
        src = prev_plan.segment_workers(r % r_prev)
        out[:, r * partitions:(r + 1) * partitions] += pt.worker_affinity(act, src, n_workers)
    if backward:
        err = pt.error_matrix(prev_layer, layer, p_prev, partitions)
        for rp in range(r_prev):
            r = rp % replicas
            out[:, r * partitions:(r + 1) * partitions] += pt.worker_affinity(
                err, prev_plan.segment_workers(rp), n_workers)
    return out


def map_layer(prev_layer: Layer | None, layer: Layer, prev_plan: LayerPlan | None,
              partitions: int, replicas: int, threads: int, n_workers: int, *,
              backward: bool = True, tie_break: str = "lexicographic") -> LayerPlan:
    """The LayerPlan of ``layer`` whose segment-to-worker mapping f_l minimizes the remote
    traffic with the already placed ``prev_layer`` (Yan et al. 2015, Sec. 5.3).

    Parameters
    ----------
    prev_layer : Layer or None
        Producer (layer l-1); ``None`` for a first layer, whose segment k
        goes to worker k.
    layer : Layer
        Layer l.
    prev_plan : LayerPlan or None
        Placement of l-1 (``None`` with ``prev_layer=None``).
    partitions, replicas, threads : int
        P(l), R(l), H(l).
    n_workers : int
        N_wr, workers per model replica; P(l) R(l) <= N_wr (C3).
    backward : bool, optional
        Also count back-propagated error terms (default).
    tie_break : {"lexicographic", "solver"}, optional
        See :func:`match_segments`.

    Returns
    -------
    LayerPlan
        ``workers[r * P + p]`` = worker of segment (p, r), all distinct.

    Raises
    ------
    ConstraintViolation
        ``"C3"``: P(l) R(l) > N_wr, or a previous worker outside 0..N_wr-1.
    SpecError
        Bad layers, counts or shapes that do not chain.

    Examples
    --------
    >>> from perfmodel import zoo
    >>> dnn = zoo.load("adam-mnist")
    >>> prev = LayerPlan(2, 1, 1, (3, 1))
    >>> map_layer(dnn.layers[0], dnn.layers[1], prev, 2, 1, 1, 4).workers
    (3, 1)

    References
    ----------
    Yan et al. 2015, Sec. 5.3, Fig. 7 (f_l, C3).
    """
    n_workers = _integer_count("n_workers", n_workers)
    partitions = _integer_count("partitions", partitions)
    replicas = _integer_count("replicas", replicas)
    segments = partitions * replicas
    if segments > n_workers:
        raise ConstraintViolation(
            "C3", "partitions", segments,
            f"partitions * replicas = {partitions} * {replicas} = {segments} segments exceed "
            f"{n_workers} workers per replica", limit=n_workers)
    if prev_layer is None:
        return LayerPlan(partitions, threads, replicas, tuple(range(segments)))
    if prev_plan is None:
        raise SpecError("prev_plan", "is required when prev_layer is given")
    aff = layer_affinity(prev_layer, layer, prev_plan, partitions, replicas, n_workers,
                         backward=backward)
    workers = match_segments(aff, tie_break=tie_break)
    return LayerPlan(partitions, threads, replicas, tuple(workers.tolist()))


def remote_traffic(prev_layer: Layer | None, layer: Layer, prev_plan: LayerPlan | None,
                   plan: LayerPlan, *, backward: bool = True) -> int:
    """Items per sample left on the network between ``prev_layer`` and ``layer`` under a mapping.

    The sum over replicas of the remote activations A(l, p) every segment of
    ``layer`` receives (eq. 6) plus, with ``backward``, the remote error
    terms E(l-1, p) every segment of ``prev_layer`` receives (Sec. 4.1.2),
    with the replica pairing of the module docstring.  Independent of
    :func:`layer_affinity`: total traffic minus the matched affinity equals it.

    Parameters
    ----------
    prev_layer : Layer or None
        ``None``: a first layer, no traffic (0).
    layer : Layer
    prev_plan, plan : LayerPlan
        Placements of layer l-1 and layer l.
    backward : bool, optional

    Returns
    -------
    int
        Items per sample (multiply by ``cluster.activation_bytes`` for bytes).

    References
    ----------
    Yan et al. 2015, eqs. 6-7 (A(l, p), E(l, p)), Sec. 5.3 ("minimizes the remote
    connection of the segment from previous layer").
    """
    if prev_layer is None:
        return 0
    prev_plan, plan = _plan("prev_plan", prev_plan), _plan("plan", plan)
    p_prev, r_prev, p, r_now = prev_plan.partitions, prev_plan.replicas, plan.partitions, plan.replicas
    act = pt.activation_matrix(prev_layer, layer, p_prev, p)
    total = sum(pt.remote_counts(act, prev_plan.segment_workers(r % r_prev),
                                    plan.segment_workers(r)).sum() for r in range(r_now))
    if backward:
        err = pt.error_matrix(prev_layer, layer, p_prev, p)
        total += sum(pt.remote_counts(err.T, plan.segment_workers(rp % r_now),
                                         prev_plan.segment_workers(rp)).sum()
                     for rp in range(r_prev))
    return int(total)
