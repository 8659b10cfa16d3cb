"""Max-min fair rates of flows sharing links, by progressive filling.

Flows cross links with given *fractions* (1 on every link of a single path; an
ECMP split puts a fraction on each of several links, see
:meth:`perfmodel.placement.topology.Topology.route`).  With ``A`` the link x
flow matrix of fractions, ``c`` the link capacities and ``r`` the flow rates,
the allocation is feasible when ``A r <= c``.  It is *max-min fair* when no
flow's rate can be raised without lowering the rate of a flow that is no
faster; equivalently, every flow crosses a *bottleneck* link that is
saturated and on which it has the largest rate.

Progressive filling (water filling) computes it: raise the rates of all
unfrozen flows together; when a link saturates, freeze every flow crossing it;
repeat until every flow is frozen.  Each round is a handful of whole-array
numpy operations on the incidence matrix (two matrix-vector products), so the
cost is ``O(rounds x links x flows)`` with at most one round per distinct
bottleneck level.  :func:`max_min_rates_reference` is the same algorithm
written with Python loops and dictionaries, the oracle of the tests and the
baseline of ``tests/benchmarks/bench_placement.py``.  Both check their
arguments, then call a kernel that does not: :func:`filled_rates` and
:func:`filled_rates_reference`, which the flow simulator calls directly at
every rate update, on arrays it built valid.

Examples
--------
Three flows on two links of capacity 10 and 4: flow 0 crosses both, flow 1
only the first, flow 2 only the second.  Link 1 saturates first with flows 0
and 2 at 2 each; flow 1 then takes the rest of link 0, 10 - 2 = 8.

>>> import numpy as np
>>> A = np.array([[1, 1, 0],
...               [1, 0, 1]])
>>> max_min_rates(A, [10.0, 4.0])
array([2., 8., 2.])

References
----------
D. Bertsekas and R. Gallager, *Data Networks*, Sec. 6.5.2 (max-min fairness,
progressive filling).  Jain, Kumar, Mao, "Characterizing Distributed Deep
Learning Training Performance in Datacenters", Sec. 4.1-4.2: the flows of
concurrent parameter-server jobs share the links of the rack topology (TCP in
the paper; max-min fairness is the flow-level idealisation).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import SpecError

__all__ = ["max_min_rates", "max_min_rates_reference", "bottleneck_check", "filled_rates",
           "filled_rates_reference"]

#: Relative slack under which a link counts as saturated.
RTOL = 1e-9


def _check(incidence, capacity, flow_cap):
    A = np.asarray(incidence, dtype=float)
    if A.ndim != 2:
        raise SpecError("incidence", f"expected a links x flows matrix, got shape {A.shape}")
    if not np.all(np.isfinite(A)) or np.any(A < 0):
        raise SpecError("incidence", "fractions must be finite and >= 0")
    c = np.asarray(capacity, dtype=float).reshape(-1)
    if c.shape != (A.shape[0],):
        raise SpecError("capacity", f"expected {A.shape[0]} link capacities, got {c.size}")
    if not np.all(c > 0):
        raise SpecError("capacity", f"must be > 0 (and not NaN), got {c[~(c > 0)][0]!r}")
    cap = None
    if flow_cap is not None:
        cap = np.broadcast_to(np.asarray(flow_cap, dtype=float), (A.shape[1],))
        if not np.all(cap > 0):
            raise SpecError("flow_cap", "must be > 0 (inf: no cap)")
        if np.all(np.isinf(cap)):
            cap = None
    crossing = A.sum(axis=0) > 0
    if cap is None and not crossing.all():
        f = int(np.flatnonzero(~crossing)[0])
        raise SpecError("incidence", f"flow {f} crosses no link and has no cap: its rate "
                                     "would be unbounded")
    if cap is not None and not np.all(crossing | np.isfinite(cap)):
        f = int(np.flatnonzero(~crossing & ~np.isfinite(cap))[0])
        raise SpecError("incidence", f"flow {f} crosses no link and has no cap: its rate "
                                     "would be unbounded")
    return A, c, cap


def max_min_rates(incidence, capacity, flow_cap=None) -> np.ndarray:
    """Max-min fair rates by vectorized progressive filling.

    Parameters
    ----------
    incidence : array_like, shape (links, flows)
        Fraction of each flow crossing each link (>= 0; 1 for a single path).
    capacity : array_like, bytes/s, shape (links,)
        Capacity of each link (> 0).
    flow_cap : float or array_like or None, bytes/s
        Largest rate of each flow (a per-flow cap, e.g. a TCP window limit);
        None or inf: no cap.

    Returns
    -------
    ndarray, bytes/s, shape (flows,)
        The max-min fair rates: ``incidence @ rates <= capacity``, and every
        flow is frozen by a saturated link where it has the largest rate, or
        by its cap.

    Raises
    ------
    SpecError
        Naming the argument: bad shapes, negative fractions, non-positive
        capacities, or a flow crossing no link without a cap.

    References
    ----------
    Bertsekas and Gallager, *Data Networks*, Sec. 6.5.2.
    """
    A, c, cap = _check(incidence, capacity, flow_cap)
    return filled_rates(A, c, cap)


def filled_rates(A: np.ndarray, c: np.ndarray, cap: np.ndarray | None) -> np.ndarray:
    """Max-min fair rates by progressive filling on validated arrays, without checks.

    The kernel of :func:`max_min_rates` and the hot path of
    :mod:`~perfmodel.placement.flowsim`: ``A`` a float links x flows matrix,
    ``c`` positive capacities, ``cap`` per-flow caps or None, as
    ``max_min_rates`` validates them.

    A saturated link's residual is set to +inf: all its flows are frozen, so
    its load is 0 from then on and ``residual / load`` is +inf, as for a link
    no unfrozen flow crosses (no NaN, no negative residual can win the min).
    """
    n_flows = A.shape[1]
    rate = np.zeros(n_flows)
    active = np.ones(n_flows)            # 1.0 for unfrozen flows (a float mask for matvecs)
    residual = c.copy()
    limit = RTOL * c
    AT = A.T
    with np.errstate(divide="ignore"):
        while True:
            load = A @ active             # growth of each link's load per unit of rate
            delta = (residual / load).min()
            if cap is not None:
                delta = min(delta, (cap - rate)[active > 0].min())
            rate += delta * active
            residual -= delta * load
            saturated = residual <= limit
            frozen = AT @ saturated > 0
            residual[saturated] = np.inf
            if cap is not None:
                frozen |= rate >= cap * (1 - RTOL)
            active[frozen] = 0.0
            if not active.any():
                return rate


def max_min_rates_reference(incidence, capacity, flow_cap=None) -> np.ndarray:
    """Progressive filling with plain Python loops (the oracle and benchmark baseline).

    Same contract as :func:`max_min_rates`; every round walks the flows and
    their links one by one.  Quadratic-ish in Python, exact in the same
    floating-point sense.
    """
    A, c, cap = _check(incidence, capacity, flow_cap)
    n_links, n_flows = A.shape
    routes = [[(l, float(A[l, f])) for l in range(n_links) if A[l, f] > 0]
              for f in range(n_flows)]
    caps = None if cap is None else [float(x) for x in cap]
    return np.array(filled_rates_reference(routes, [float(x) for x in c], caps))


def filled_rates_reference(routes: list, capacity: list, caps: list | None) -> list:
    """Max-min fair rates by progressive filling in pure Python, without checks.

    The kernel of :func:`max_min_rates_reference` (and the flow simulator's
    ``engine="reference"``): ``routes`` is ``[[(link, fraction), ...] per flow]``,
    ``capacity`` a list per link, ``caps`` a list per flow or None.
    """
    n_flows = len(routes)
    rate = [0.0] * n_flows
    residual = list(capacity)
    active = set(range(n_flows))
    while active:
        load: dict = {}
        for f in active:
            for link, a in routes[f]:
                load[link] = load.get(link, 0.0) + a
        delta = math.inf
        for link, x in load.items():
            if x > 0:
                delta = min(delta, residual[link] / x)
        if caps is not None:
            for f in active:
                delta = min(delta, caps[f] - rate[f])
        for f in active:
            rate[f] += delta
        for link, x in load.items():
            residual[link] -= delta * x
        saturated = {link for link, x in load.items()
                     if x > 0 and residual[link] <= RTOL * capacity[link]}
        frozen = set()
        for f in active:
            if any(link in saturated for link, _ in routes[f]):
                frozen.add(f)
            elif caps is not None and rate[f] >= caps[f] * (1 - RTOL):
                frozen.add(f)
        active -= frozen
    return rate


def bottleneck_check(incidence, capacity, rates, flow_cap=None, rtol: float = 1e-7) -> dict:
    """Check the defining properties of a max-min fair allocation.

    Parameters
    ----------
    incidence, capacity, flow_cap
        As for :func:`max_min_rates`.
    rates : array_like, bytes/s
        The allocation to check.
    rtol : float
        Relative tolerance of the comparisons.

    Returns
    -------
    dict
        ``"feasible"`` (no link over capacity), ``"bottlenecked"`` (every flow
        is at its cap or has a saturated link on its path where its rate is
        the largest among the flows crossing it), ``"max_utilization"`` and
        ``"violators"`` (flows without a bottleneck).
    """
    A, c, cap = _check(incidence, capacity, flow_cap)
    r = np.asarray(rates, dtype=float)
    load = A @ r
    feasible = bool(np.all(load <= c * (1 + rtol)))
    saturated = load >= c * (1 - rtol)
    violators = []
    for f in range(A.shape[1]):
        if cap is not None and r[f] >= cap[f] * (1 - rtol):
            continue
        ok = False
        for l in np.flatnonzero((A[:, f] > 0) & saturated):
            on_link = A[l] > 0
            if r[f] >= r[on_link].max() * (1 - rtol):
                ok = True
                break
        if not ok:
            violators.append(f)
    return {"feasible": feasible, "bottlenecked": not violators,
            "max_utilization": float(np.max(load / c)), "violators": violators}
