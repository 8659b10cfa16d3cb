"""Asynchronous SGD as a closed queueing network (Li et al. 2022, Sec. 2.1, eqs. 1-6).

Fig. 5 of Li et al. 2022: each of the K workers has exactly one task circulating
through its own *delay* station (its computation, an infinite server: the
response time is the service time ``S_W = T_F + T_B``), then the shared
*uplink* (U), *parameter server* (S) and *downlink* (D) stations.  The server
station is always processor sharing; the links are processor sharing ("ps",
eq. 1) or FCFS ("fcfs", eq. 2).  Mean value analysis (MVA) gives the response
time of every class at every station, hence the throughput (eqs. 3-4); eq. 5
picks the FCFS or the PS solution from the FCFS network utilization, and eq. 6
corrects for the overlap of the downlink with the forward pass and of the
uplink with the backward pass.

Two levels, as everywhere in perfmodel:

* generic closed networks -- :func:`mva` (exact, class-aggregated),
  :func:`mva_binary` (the paper's recursion over ``{0,1}^K``, one class per
  worker), :func:`mva_linearizer` and :func:`mva_schweitzer` (approximate),
  all returning an :class:`MVAResult`;
* the Li et al. 2022 network -- :func:`async_solve` (one configuration, every
  number: an :class:`AsyncSolution`), the contract function
  :func:`async_throughput` (SGD steps/s, broadcasting) and the model object
  :class:`AsyncMVA` with ``estimate(profile, cluster, config) -> Estimate``.

Exact at scale by class aggregation
-----------------------------------
Workers with the same service times form one class of population n.  The
exact recursion then runs over the population vectors ``(n_1, ..., n_T)``,
``prod(n_t + 1)`` states instead of ``2^K``: K + 1 states for K identical
workers.  For product-form networks (PS stations, or FCFS with exponential
residual and class-independent service) this is the textbook multi-class MVA.
For eq. 2, which is not product form, the aggregated recursion is still
*algebraically identical* to the ``{0,1}^K`` recursion: every quantity at a
set of workers depends only on how many workers of each type it holds (an
induction on the set size), and ``N`` and ``rho`` of a class are the sums of
those of its workers.  ``tests/test_queueing.py`` checks the equality.

The states are processed level by level (level = total population): every
state of a level depends only on states of the previous level, so a level is
one batch of numpy operations, and only the previous level's aggregates are
kept.  A single class (homogeneous workers) takes a plain scalar loop.

FCFS residual (docs/models.md, design decisions)
-------------------------
Eq. 2 as printed charges half a service time for the task in service
(deterministic service, ``residual="deterministic"``, the default).  With
``residual="exponential"`` the whole service time is charged (memoryless
service; the exact product-form MVA when the FCFS service times do not depend
on the class).  A number ``c >= 0`` is the squared coefficient of variation of
the service time: the residual is ``S (1 + c) / 2`` (0: deterministic, 1:
exponential).

Several parameter servers
-------------------------
With ``n_ps = P`` servers the model is split evenly: each server has its own
uplink, server and downlink stations, and a worker's step visits all P of them,
moving ``M / P`` bytes on each link visit (service ``M / (P B)``) and spending
``T_S / P`` on each server.  A worker's NIC still carries its whole model per
step, so an uncontended step costs ``2 M / B + T_S`` as with one server, while
each server link carries only ``K M / P`` bytes.  By symmetry the P copies of
a station have equal means, so each station is solved once and counted P times
(its response per step is ``P`` times one copy's).  This is our extension; one
server is the paper.

Convoys beyond the saturation point (ours)
------------------------------------------
The MVA's workers are statistically independent: at any population they
are spread over their cycle as the product form says.  Async workers that
start together and share a link fairly stay together instead (equal
transfers sharing a processor-sharing link keep their gaps), and only TCP's
unequal flow completion splits them, into sub-groups.  The rule here: no
more groups survive than the network holds without queueing, Kleinrock's
saturation population ``N* = (D + Z) / D_max`` (Lazowska et al. 1984, Sec.
5.2), with Z the compute of a step, D a step's service demand at all
stations and D_max the largest at one station.  With
``AsyncMVA(convoys=True)`` K > N* workers move as N* groups of ``K / N*``:
the MVA of N* workers each moving ``K / N*`` times the bytes and updates
(:func:`convoy_groups`; a fractional N* between its two whole neighbours,
step times interpolated).  Up to N* workers nothing changes.  On the
packet-level corpus the rule fits one or two saturated servers and not three
or four at 1 Gbps (docs/validation.md), so the model selection keeps it
beside the MVA, not in its place.

Convoys spread by the updates (ours)
------------------------------------
What keeps a convoy together is fair sharing: transfers of equal size that
start a little apart on a processor-sharing link end as far apart as they
started.  What spreads it is the server: it applies the gradients one at a
time, so K workers that arrive together leave it ``T_S / P`` apart, over
``K T_S / P``.  While that spread is shorter than one transfer of the
server's share over its link, ``M / (P B)``, the workers' transfers overlap
and they travel together; once it is longer, they meet the link one by one,
as the MVA's independent workers do.  With ``AsyncMVA(convoys="spacing")``
on two or more servers the step is the convoy's and the MVA's, weighted by
:func:`update_spread` ``w = min(1, K T_S B / M)``: ``(1 - w)`` times the
convoy's step (above) plus ``w`` times the MVA's.  With two or more
servers every worker waits for every server each step, which couples the
workers further; with one server it is left to the runs (the model
selection levels a one-server model on a two-worker run that already shares
the link, and the two-server runs of one or two workers share none).  The
weight has no fitted constant: the update time against a transfer's.  The
model selection leaves it off: judged on a held-out set whose update rate
varied apart from the link speed, the convoys did fade with the update
spacing as this says, but sooner than the weight lets them (with updates an
eighth of a transfer long, two servers ran at the MVA, where the weight
still holds a convoy up to eight workers; docs/validation.md).

The serialized bound (ours)
---------------------------
The MVA visits the P servers' links and update CPUs in turn, as P stations;
a worker really sends its P shards at once and the servers apply them in
parallel.  Below P workers, where a worker's own link is the bottleneck, the
MVA's cycle can then be longer than the longest a cycle can take on
work-conserving, loss-free links, :func:`serialized_cycle` (every other
worker's transfers and updates served ahead of its own).  With
``AsyncMVA(serialized_bound=True)`` no cycle exceeds it.  The model selection
leaves it off: calibrated by its level on one- and two-worker runs, the
bounded MVA was closer on the sets it was designed on and further on a
held-out one (docs/validation.md).

The P servers as one fork-join (ours)
------------------------------------
A worker sends its P shards at once over its own link, and the P servers
apply them in parallel.  :func:`fork_join_solve` (``AsyncMVA(servers=
"fork-join")``) models that: the P servers' links in each direction are one
processor-sharing station of P channels (rate ``min(n, P) B / M`` with n
transfers present: a transfer alone runs at its worker's link rate B, and n
>= P share the P server links), and the P update CPUs one processor-sharing
station of demand ``T_S / P``.  It is a product-form network with
load-dependent stations, solved exactly by MVA with marginal queue-length
probabilities (Reiser and Lavenberg 1980).  With one server it is the MVA
with processor-sharing links (eq. 4).  Up to P workers it matches the
packet-level corpus where the in-turn stations queue; beyond, the workers'
TCP flows do not pool as evenly as the channels, and it can be too fast
(docs/validation.md).

Up to P workers, then in turn (ours)
------------------------------------
``AsyncMVA(servers="fork-join-to-p")`` joins the two where each holds: up to
K = P workers no server link carries more than one worker's shard in each
direction, so the fork-join answers (exact there, where the stations visited
in turn queue at links nobody else uses); beyond P the servers' links are
contended, and the throughput grows from P as the in-turn network's does:
``X(K) = X_in-turn(K) X_fork-join(P) / X_in-turn(P)`` (every phase of the
in-turn cycle scaled by ``T_fork-join(P) / T_in-turn(P)``).  It is continuous at
P and the same as the in-turn network on one server.

Examples
--------
>>> round(async_throughput(100e6, 1.25e9, 0.1, 0.2, 0.01, 1), 6)   # 1 / (0.08+0.3+0.01+0.08)
2.12766
>>> x = async_throughput(100e6, 1.25e9, 0.1, 0.2, 0.01, [1, 2, 4, 8])
>>> x.round(3)
array([ 2.128,  4.134,  7.015, 10.103])

References
----------
Li, Paolieri, Golubchik, Lin, Yan. Predicting Throughput of Distributed SGD.
IEEE TPDS, 2022.  Sec. 2.1, Fig. 5, Table 2, eqs. 1-6; Sec. 2.1.2
(``S_D = S_U = M / B``); Sec. 4.2.1 (``rho_T``); Sec. 4.2.3 (heterogeneous
workers).  Approximations: P. Schweitzer, "Approximate
analysis of multiclass closed networks of queues" (1979); Y. Bard, "Some
extensions to multiclass queueing network analysis" (1979); K. M. Chandy and
D. Neuse, "Linearizer", Commun. ACM 25(2), 1982.  Saturation population: E. D.
Lazowska, J. Zahorjan, G. S. Graham, K. C. Sevcik, Quantitative System
Performance, Prentice-Hall 1984, Sec. 5.2.  Load-dependent MVA: M. Reiser and
S. S. Lavenberg, "Mean-value analysis of closed multichain queuing networks",
J. ACM 27(2), 1980.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from . import _validate as _v
from .errors import Infeasible, SpecError
from .interface import BatchEstimate, ConfigBatch, check_inputs
from .result import Estimate
from .specs import Cluster, Config, Profile

__all__ = [
    "DISCIPLINES", "LINK_DISCIPLINES", "METHODS", "RESIDUALS", "STATIONS", "PHASES",
    "MVAResult", "mva", "mva_binary", "mva_schweitzer", "mva_linearizer",
    "AsyncSolution", "async_solve", "async_throughput", "async_stall_time", "AsyncMVA",
    "async_batchable", "async_solve_many", "saturation_workers", "convoy_groups",
    "serialized_cycle", "fork_join_solve", "SERVER_LAYOUTS", "CONVOY_RULES",
    "update_spread", "DEFAULT_RHO_THRESHOLD", "resolved_threshold",
]

#: rho_T of eq. 5 when neither the model nor the cluster sets one (Li et al. 2022, Sec. 5, AWS).
DEFAULT_RHO_THRESHOLD = 0.6
#: Link disciplines of :func:`async_solve`: PS (eq. 4), FCFS (eq. 3), hybrid (eq. 5).
DISCIPLINES = ("hybrid", "ps", "fcfs")
#: Scheduling of one queueing station of :func:`mva` (eq. 1 or eq. 2).
LINK_DISCIPLINES = ("ps", "fcfs")
#: Solution methods: automatic, class-aggregated exact, ``{0,1}^K`` exact, and the
#: two approximations.
METHODS = ("auto", "exact", "binary", "linearizer", "schweitzer")
#: Named FCFS residuals (a number is the squared coefficient of variation).
RESIDUALS = ("deterministic", "exponential")
#: Shared stations of the Li et al. 2022 network, in routing order (Fig. 5).
STATIONS = ("uplink", "update", "downlink")
#: Phases of one worker's step, in time order; they sum to its mean step time.
PHASES = ("downlink", "forward", "backward", "uplink", "update")
#: How a worker meets P servers: their stations visited in turn (Li et al. 2022's
#: network, split over the servers), all at once as one fork-join (ours), or the fork-join
#: up to P workers and the in-turn network's growth beyond (ours; module notes).
SERVER_LAYOUTS = ("in-turn", "fork-join", "fork-join-to-p")
#: ``AsyncMVA.convoys``: independent workers, convoys beyond N*, or convoys held on 2+
#: servers while the updates' spread is shorter than a transfer (module notes).
CONVOY_RULES = (False, True, "spacing")

#: Population vectors above which ``method="auto"`` leaves the exact recursion
#: (2^17 = 131,072 is 17 distinct workers, a fraction of a second; Linearizer is
#: then typically within 1 %, see tests/test_queueing.py).
MAX_STATES = 200_000
#: Elements of the (states, types, stations) temporaries of one block of a level.
_CHUNK = 1 << 18
#: Worker types up to which ``method="auto"`` then uses Linearizer (O(T^3) per
#: iteration), beyond which Schweitzer-Bard (O(T)).
MAX_LINEARIZER_TYPES = 128
_INF = math.inf


# --------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------

def residual_fraction(residual) -> float:
    """The fraction of ``S rho`` eq. 2 subtracts: 1/2 deterministic, 0 exponential."""
    if isinstance(residual, str):
        if residual == "deterministic":
            return 0.5
        if residual == "exponential":
            return 0.0
        raise SpecError("residual", f"must be one of {', '.join(RESIDUALS)} or a squared "
                                    f"coefficient of variation >= 0; got {residual!r}")
    if isinstance(residual, (bool, np.bool_)) or not isinstance(residual, numbers.Real):
        raise SpecError("residual", f"must be one of {', '.join(RESIDUALS)} or a number >= 0; "
                                    f"got {residual!r}")
    scv = float(residual)
    if not (math.isfinite(scv) and scv >= 0):
        raise SpecError("residual", f"squared coefficient of variation must be finite and "
                                    f">= 0, got {residual!r}")
    return (1.0 - scv) / 2.0


#: Arrays up to this size are checked element by element in Python: for a
#: network of a few classes that is several times cheaper than numpy's
#: reductions, whose fixed cost per call dominates.
_SMALL = 64


def _finite_nonnegative(a: np.ndarray) -> bool:
    """Whether every element of ``a`` is finite and >= 0 (NaN is not)."""
    if a.size <= _SMALL:
        inf = _INF
        return all(0.0 <= v < inf for v in a.ravel().tolist())
    return bool(np.isfinite(a).all() and (a >= 0).all())


def _whole_counts(a: np.ndarray) -> bool:
    """Whether every element of a finite array is a whole number >= 1."""
    if a.size <= _SMALL:
        return all(v >= 1.0 and v % 1.0 == 0.0 for v in a.ravel().tolist())
    return bool((a == np.round(a)).all() and (a >= 1).all())


def _matrix(name: str, value, shape: tuple | None = None, ndim: int = 1) -> np.ndarray:
    a = _v.as_array(name, value)
    if a.ndim != ndim:
        raise SpecError(name, f"expected {ndim}-dimensional data, got shape {a.shape}")
    if shape is not None and a.shape != shape:
        raise SpecError(name, f"expected shape {shape}, got {a.shape}")
    if not _finite_nonnegative(a):
        bad = a[~(np.isfinite(a) & (a >= 0))][0]
        raise SpecError(name, f"must be finite and >= 0, got {bad!r}")
    return a


def _check_network(delay, service, populations, disciplines, copies, residual):
    """Validated ``(Z, S, n, fcfs, copies, gamma)`` of a generic closed network."""
    s = _v.as_array("service", service)
    if s.ndim == 1:
        s = s[:, None]
    s = _matrix("service", s, ndim=2)
    t_classes, n_stations = s.shape
    if t_classes == 0:
        raise SpecError("service", "needs at least one class (row)")
    z = _matrix("delay", np.atleast_1d(_v.as_array("delay", delay)))
    if z.shape == (1,) and t_classes > 1:
        z = np.repeat(z, t_classes)
    if z.shape != (t_classes,):
        raise SpecError("delay", f"expected {t_classes} values (one per class), got {z.shape[0]}")
    if populations is None:
        n = np.ones(t_classes, dtype=np.int64)
    else:
        n = _matrix("populations", np.atleast_1d(_v.as_array("populations", populations)))
        if n.shape != (t_classes,):
            raise SpecError("populations", f"expected {t_classes} values, got {n.shape[0]}")
        if not _whole_counts(n):
            raise SpecError("populations", f"must be whole numbers >= 1, got {n.tolist()!r}")
        n = n.astype(np.int64)
    if isinstance(disciplines, str):
        disciplines = (disciplines,) * n_stations
    disciplines = tuple(disciplines)
    if len(disciplines) != n_stations:
        raise SpecError("disciplines", f"expected {n_stations} (one per station), "
                                       f"got {len(disciplines)}")
    for i, d in enumerate(disciplines):
        if type(d) is not str or d not in LINK_DISCIPLINES:
            _v.choice(f"disciplines[{i}]", d, LINK_DISCIPLINES)
    fcfs = np.array([d == "fcfs" for d in disciplines])
    if copies is None:
        cp = np.ones(n_stations)
    else:
        cp = _matrix("copies", np.atleast_1d(_v.as_array("copies", copies)), (n_stations,))
        if not _whole_counts(cp):
            raise SpecError("copies", f"must be whole numbers >= 1, got {cp.tolist()!r}")
    gamma = residual_fraction(residual)
    if s.size <= _SMALL:   # every cycle has some time: a delay or a service (all >= 0)
        busy = all(zt > 0.0 or any(v > 0.0 for v in row) for zt, row in zip(z.tolist(),
                                                                           s.tolist()))
    else:
        busy = bool((z + (s * cp).sum(axis=1) > 0).all())
    if not busy:
        cycle0 = z + (s * cp).sum(axis=1)
        t = int(np.flatnonzero(cycle0 <= 0)[0])
        raise SpecError("service", f"class {t} has zero delay and zero service everywhere "
                                   "(its throughput would be infinite)")
    return z, s, n, fcfs, cp, gamma


# --------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class MVAResult:
    """Mean values of a closed multi-class network at its full population.

    Attributes
    ----------
    throughput : ndarray (T,), jobs/s
        Throughput X_t of each class (all its jobs together), eqs. 3-4 per class.
    response : ndarray (T, L), s
        Mean response time T_t^l of a class-t job at *one copy* of station l
        per visit (eq. 1 or eq. 2).
    cycle_time : ndarray (T,), s
        Mean time for one job of class t to go around the network:
        ``delay + sum_l copies_l * response[:, l]`` (one SGD step).
    queue_length : ndarray (T, L), jobs
        Mean number N_t^l of class-t jobs at one copy of station l (Little).
    utilization : ndarray (L,)
        Utilization of one copy of each station, ``sum_t X_t S_t^l``.
    populations : ndarray (T,), jobs
        The population of each class.
    delay : ndarray (T,), s
        The delay (computation) time of each class.
    method : str
        ``"exact"``, ``"binary"``, ``"linearizer"`` or ``"schweitzer"``.
    states : int
        Population vectors evaluated (exact methods) or fixed-point iterations
        (approximations).
    """

    throughput: np.ndarray
    response: np.ndarray
    cycle_time: np.ndarray
    queue_length: np.ndarray
    utilization: np.ndarray
    populations: np.ndarray
    delay: np.ndarray
    method: str
    states: int

    @property
    def total_throughput(self) -> float:
        """Sum of the class throughputs (jobs/s)."""
        return float(self.throughput.sum())


def _result(z, s, n, cp, x, r, method, states) -> MVAResult:
    x = np.asarray(x, dtype=float)
    r = np.asarray(r, dtype=float)
    cycle = z + (r * cp).sum(axis=1)
    return MVAResult(throughput=x, response=r, cycle_time=cycle,
                     queue_length=x[:, None] * r, utilization=x @ s,
                     populations=n, delay=z, method=method, states=int(states))


# --------------------------------------------------------------------------
# Exact MVA, class-aggregated (recursion over population vectors)
# --------------------------------------------------------------------------
#
# One aggregate per station carries everything eqs. 1-2 need from a
# population vector m:
#   PS   station:  G_l(m) = sum_j N_j^l(m)                        T = S (1 + G)
#   FCFS station:  G_l(m) = sum_j S_j^l (N_j^l(m) - g rho_j^l(m))  T = S + G
# with g = 1/2 (eq. 2 as printed) or 0 (exponential residual).  So
# T_t^l(m) = S_t^l + F_t^l G_l(m - e_t) with F = S (PS) or 1 (FCFS), and
# G_l(m) = sum_t H_t^l N_t^l(m) - g [fcfs] sum_t X_t (S_t^l)^2 with H = 1 (PS)
# or S (FCFS).

def _factors(s, fcfs):
    f_in = np.where(fcfs, 1.0, s)          # multiplies G(m - e_t) in T
    f_out = np.where(fcfs, s, 1.0)         # weights N in G
    return f_in, f_out


def _exact_single(z: float, s: np.ndarray, n: int, fcfs, cp, gamma):
    """One class: a scalar loop over the populations 1..n (K + 1 states)."""
    s_l = np.asarray(s, dtype=float).tolist()
    fcfs = np.asarray(fcfs, dtype=bool).tolist()
    c_l = np.asarray(cp, dtype=float).tolist()
    if (len(s_l) == 3 and s_l[0] == s_l[2] and fcfs[0] == fcfs[2] and not fcfs[1]
            and c_l[0] == c_l[1] == c_l[2]):   # the Fig. 5 network: the unrolled loop
        x, r_link, r_server = _one_class_fig5(z, s_l[0], s_l[1], n, c_l[0], gamma, fcfs[0])
        return np.array([x]), np.array([[r_link, r_server, r_link]])
    return _exact_single_loop(z, s_l, n, fcfs, c_l, gamma)


def _exact_single_loop(z: float, s_l: list, n: int, fcfs: list, c_l: list, gamma: float):
    """:func:`_exact_single` for any stations: lists of floats, one per station."""
    f_in = [1.0 if f else v for v, f in zip(s_l, fcfs)]
    f_out = [v if f else 1.0 for v, f in zip(s_l, fcfs)]
    corr = [gamma * v * v if f else 0.0 for v, f in zip(s_l, fcfs)]
    g = [0.0] * len(s_l)
    r = list(s_l)
    x = 0.0
    for k in range(1, n + 1):
        r = [a + b * c for a, b, c in zip(s_l, f_in, g)]
        cycle = z
        for c, v in zip(c_l, r):
            cycle += c * v
        x = k / cycle
        g = [x * (b * v - c) for b, v, c in zip(f_out, r, corr)]
    return np.array([x]), np.array([r])


def _one_class_fig5(z: float, s_link: float, s_server: float, k: int, cp: float, gamma: float,
                    fcfs: bool):
    """:func:`_exact_single` on the Fig. 5 network, unrolled: ``(X, T_link, T_server)``.

    The uplink and downlink have the same service time, so they have the same
    response and aggregate at every population and one of them is carried; the
    server is PS; ``fcfs`` says whether the links are FCFS (eq. 2) or PS (eq. 1).
    The same operations as :func:`_exact_single` in the same order (a factor
    of 1.0 and a correction of 0.0 dropped: both exact), so the same numbers
    to the bit, at a fraction of the cost of the generic list loop.
    """
    g_link = g_server = 0.0
    r_link, r_server, x = s_link, s_server, 0.0
    if fcfs:
        corr = gamma * s_link * s_link
        if cp == 1.0:
            for n in range(1, k + 1):
                r_link = s_link + g_link
                r_server = s_server + s_server * g_server
                x = n / (z + r_link + r_server + r_link)
                g_link = x * (s_link * r_link - corr)
                g_server = x * r_server
        else:
            for n in range(1, k + 1):
                r_link = s_link + g_link
                r_server = s_server + s_server * g_server
                x = n / (z + cp * r_link + cp * r_server + cp * r_link)
                g_link = x * (s_link * r_link - corr)
                g_server = x * r_server
    elif cp == 1.0:
        for n in range(1, k + 1):
            r_link = s_link + s_link * g_link
            r_server = s_server + s_server * g_server
            x = n / (z + r_link + r_server + r_link)
            g_link = x * r_link
            g_server = x * r_server
    else:
        for n in range(1, k + 1):
            r_link = s_link + s_link * g_link
            r_server = s_server + s_server * g_server
            x = n / (z + cp * r_link + cp * r_server + cp * r_link)
            g_link = x * r_link
            g_server = x * r_server
    return x, r_link, r_server


def _levels(n: np.ndarray):
    """Population vectors grouped by total population.

    Returns ``(strides, order, bounds, pos, coords)``: states are mixed-radix
    indices ``sum_t m_t * strides[t]``; ``order[bounds[p]:bounds[p+1]]`` are the
    states of level p; ``pos[i]`` is the position of state i within its level.
    """
    dims = n + 1
    strides = np.concatenate(([1], np.cumprod(dims[:-1]))).astype(np.int64)
    size = int(np.prod(dims))
    small = np.int16 if dims.max() < 2 ** 15 else np.int64
    coords = np.stack(np.unravel_index(np.arange(size), tuple(dims), order="F"),
                      axis=1).astype(small)
    level = coords.sum(axis=1, dtype=np.int64)
    order = np.argsort(level, kind="stable")
    bounds = np.searchsorted(level[order], np.arange(int(n.sum()) + 2))
    pos = np.empty(size, dtype=np.int64)
    pos[order] = np.arange(size) - bounds[level[order]]
    return strides, order, bounds, pos, coords


def _exact_levels(z, s, n, fcfs, cp, gamma):
    """Exact class-aggregated MVA over all ``prod(n_t + 1)`` population vectors."""
    f_in, f_out = _factors(s, fcfs)
    corr = gamma * np.where(fcfs, s * s, 0.0)          # (T, L)
    strides, order, bounds, pos, coords = _levels(n)
    g_prev = np.zeros((1, s.shape[1]))                  # level 0: the empty network
    x = r = None
    chunk = max(1, _CHUNK // (s.shape[0] * s.shape[1]))
    for p in range(1, int(n.sum()) + 1):
        level = order[bounds[p]:bounds[p + 1]]
        g_next = np.empty((len(level), s.shape[1]))
        for start in range(0, len(level), chunk):      # bounds the (C, T, L) temporaries
            idx = level[start:start + chunk]
            m = coords[idx]                             # (C, T) populations
            has = m > 0
            pred = np.where(has, idx[:, None] - strides, 0)  # m - e_t (unused where m_t = 0)
            g = g_prev[pos[pred]]                       # (C, T, L)
            r = s + f_in * g                            # eqs. 1-2, (C, T, L)
            cycle = z + r @ cp                          # (C, T)
            x = np.where(has, m / cycle, 0.0)           # (C, T)
            g_next[start:start + chunk] = np.einsum("ct,ctl->cl", x, f_out * r - corr)
        g_prev = g_next
    return x[0], r[0]


def _n_states(n: np.ndarray) -> int:
    return math.prod(int(v) + 1 for v in n)


def mva(delay, service, populations=None, disciplines="ps", *, copies=None,
        residual="deterministic", max_states: int = MAX_STATES) -> MVAResult:
    """Exact MVA of a closed multi-class network, aggregated by class.

    Each class t has ``populations[t]`` identical jobs; each job alternates
    between its own delay station (think time ``delay[t]``, an infinite server
    as in Fig. 5) and one visit to every copy of every queueing station l
    (single server, ``disciplines[l]``, service time ``service[t, l]`` per visit).

    Parameters
    ----------
    delay : array_like (T,), s
        Delay (computation) time of each class, >= 0.
    service : array_like (T, L), s
        Mean service time of a class-t job at one copy of station l, >= 0.
    populations : array_like (T,) of int, optional
        Jobs per class, >= 1 (default: one each).
    disciplines : str or sequence of L str
        ``"ps"`` (eq. 1) or ``"fcfs"`` (eq. 2) for each station.
    copies : array_like (L,) of int, optional
        Identical copies of station l, each visited once per cycle (default 1).
    residual : {"deterministic", "exponential"} or float
        FCFS residual of the job in service: ``S/2`` as printed in eq. 2, ``S``
        (exponential), or ``S (1 + c) / 2`` for a squared coefficient of variation c.
    max_states : int
        Largest number of population vectors ``prod(n_t + 1)`` to evaluate.

    Returns
    -------
    MVAResult

    Raises
    ------
    SpecError
        Naming the argument, for bad shapes, negative or non-finite times,
        unknown disciplines or residuals, populations < 1.
    Infeasible
        More than ``max_states`` population vectors (use :func:`mva_linearizer`).

    References
    ----------
    Li et al. 2022, Sec. 2.1, eqs. 1-2 (recursion over population vectors), Table 2
    (notation), Little's law for N and rho; Reiser and Lavenberg, "Mean-value
    analysis of closed multichain queuing networks", J. ACM 27(2), 1980.

    Examples
    --------
    One class of 2 jobs, delay 1 s, one PS station with 1 s service:
    ``T(1) = 1``, ``X(1) = 1/2``, ``N(1) = 1/2``; ``T(2) = 1.5``, ``X(2) = 2/2.5``.

    >>> res = mva([1.0], [[1.0]], [2])
    >>> float(res.throughput[0]), float(res.response[0, 0])
    (0.8, 1.5)
    """
    z, s, n, fcfs, cp, gamma = _check_network(delay, service, populations, disciplines,
                                              copies, residual)
    states = _n_states(n)
    if states > max_states:
        raise Infeasible(f"exact MVA needs {states} population vectors, more than "
                         f"max_states={max_states} (use an approximate MVA)")
    if len(n) == 1:
        x, r = _exact_single(float(z[0]), s[0], int(n[0]), fcfs, cp, gamma)
    else:
        x, r = _exact_levels(z, s, n, fcfs, cp, gamma)
    return _result(z, s, n, cp, x, r, "exact", states)


# --------------------------------------------------------------------------
# Exact MVA over {0,1}^K, one class per job (the paper's recursion as printed)
# --------------------------------------------------------------------------

def mva_binary(delay, service, disciplines="ps", *, copies=None, residual="deterministic",
               max_states: int = 1 << 20) -> MVAResult:
    """Exact MVA with one class per job: Li et al. 2022's recursion over ``{0,1}^K``.

    This is eqs. 1-2 as printed: every per-class ``N_j^l`` and ``rho_j^l`` is
    kept for every subset of the K workers (``2^K`` population vectors) and
    summed over j at each step.  It is the reference for :func:`mva`, which
    gives the same numbers in ``prod(n_t + 1)`` states.

    Parameters
    ----------
    delay : array_like (K,), s
        Delay (computation) time of each job.
    service : array_like (K, L), s
        Service time of job k at one copy of station l.
    disciplines, copies, residual
        As in :func:`mva`.
    max_states : int
        Largest ``2^K`` to evaluate.

    Returns
    -------
    MVAResult
        One class per job (populations all 1), ``method == "binary"``.

    Raises
    ------
    SpecError
        Bad arguments (see :func:`mva`).
    Infeasible
        ``2^K > max_states``.

    References
    ----------
    Li et al. 2022, Sec. 2.1, eqs. 1-2 and the identities below them.

    Examples
    --------
    >>> res = mva_binary([1.0, 1.0], [[1.0], [1.0]])
    >>> res.throughput.round(6).tolist()
    [0.4, 0.4]
    """
    z, s, n, fcfs, cp, gamma = _check_network(delay, service, None, disciplines, copies,
                                              residual)
    k_jobs, n_st = s.shape
    if 2 ** k_jobs > max_states:
        raise Infeasible(f"the {{0,1}}^K recursion needs 2^{k_jobs} population vectors, "
                         f"more than max_states={max_states}")
    size = 1 << k_jobs
    big_n = np.zeros((size, k_jobs, n_st))         # N_j^l(m)
    big_rho = np.zeros((size, k_jobs, n_st))       # rho_j^l(m)
    masks = np.arange(size)
    bits = ((masks[:, None] >> np.arange(k_jobs)) & 1).astype(bool)
    popcount = bits.sum(axis=1)
    flip = 1 << np.arange(k_jobs)
    x_full = r_full = None
    for p in range(1, k_jobs + 1):
        level = masks[popcount == p]
        for start in range(0, len(level), 1024):      # chunks bound the (C, K, K, L) gathers
            m = level[start:start + 1024]
            b = bits[m]                                # (C, K): k in m
            pred = np.where(b, m[:, None] ^ flip, 0)   # m - e_k
            n_pred = big_n[pred]                       # (C, K, K_j, L)
            rho_pred = big_rho[pred]
            ps_t = s[None] * (1.0 + n_pred.sum(axis=2))                       # eq. 1
            fcfs_t = s[None] + np.einsum("jl,ckjl->ckl", s,
                                         n_pred - gamma * rho_pred)            # eq. 2
            r = np.where(fcfs, fcfs_t, ps_t)           # (C, K, L)
            x = np.where(b, 1.0 / (z + r @ cp), 0.0)   # X_k = n_k / sum_l T_k^l
            big_n[m] = x[:, :, None] * r               # N = X T
            big_rho[m] = x[:, :, None] * s[None]       # rho = X S
            if p == k_jobs:
                x_full, r_full = x[0], r[0]
    return _result(z, s, n, cp, x_full, r_full, "binary", size)


# --------------------------------------------------------------------------
# Approximate MVA (Schweitzer-Bard)
# --------------------------------------------------------------------------

def _schweitzer(z, s, n, fcfs, cp, gamma, tol, max_iter):
    f_in, f_out = _factors(s, fcfs)
    corr = gamma * np.where(fcfs, s * s, 0.0)
    plain = not fcfs.any()        # PS everywhere: f_out * r - corr is r itself, exactly
    nf = n.astype(float)
    per_class = nf[:, None]
    demand = s * cp
    x = nf / (z + demand.sum(axis=1))
    r = s.copy()
    for it in range(1, max_iter + 1):
        # class t's share of G at full population
        contrib = x[:, None] * (r if plain else f_out * r - corr)
        g_minus = contrib.sum(axis=0) - contrib / per_class   # G(n - e_t) ~ G(n) - G_t(n)/n_t
        r_new = s + f_in * g_minus
        x_new = nf / (z + r_new @ cp)
        done = np.max(np.abs(x_new - x) / x_new) < tol
        x, r = x_new, r_new
        if done:
            return x, r, it
    raise Infeasible(f"Schweitzer-Bard iteration did not converge in {max_iter} iterations")


def mva_schweitzer(delay, service, populations=None, disciplines="ps", *, copies=None,
                   residual="deterministic", tol: float = 1e-12,
                   max_iter: int = 100_000) -> MVAResult:
    """Approximate MVA (Schweitzer-Bard) of the network of :func:`mva`.

    The arrival theorem's ``N_j(n - e_t)`` is approximated from the full
    population: ``N_j(n - e_t) = N_j(n) (n_j - [j = t]) / n_j`` (and likewise
    ``rho``), and the resulting fixed point is iterated.  Cost per iteration is
    ``O(T L)`` whatever the populations, so any number of distinct worker types
    is cheap.

    Parameters
    ----------
    delay, service, populations, disciplines, copies, residual
        As in :func:`mva`.
    tol : float
        Convergence: largest relative change of a class throughput between
        iterations.
    max_iter : int
        Iterations before giving up.

    Returns
    -------
    MVAResult
        ``method == "schweitzer"``; ``states`` holds the iterations used.

    Raises
    ------
    SpecError
        Bad arguments.
    Infeasible
        No convergence within ``max_iter`` iterations.

    References
    ----------
    Schweitzer (1979); Bard (1979); applied to Li et al. 2022, eqs. 1-2.  The error
    against :func:`mva` is measured in ``tests/test_queueing.py``.

    Examples
    --------
    >>> exact = mva([1.0], [[1.0]], [50]).total_throughput
    >>> approx = mva_schweitzer([1.0], [[1.0]], [50]).total_throughput
    >>> abs(approx / exact - 1) < 0.01
    True
    """
    z, s, n, fcfs, cp, gamma = _check_network(delay, service, populations, disciplines,
                                              copies, residual)
    x, r, iterations = _schweitzer(z, s, n, fcfs, cp, gamma, tol, max_iter)
    return _result(z, s, n, cp, x, r, "schweitzer", iterations)


def _core(z, s, m, fcfs, cp, gamma, dev, f, tol, max_iter):
    """Linearizer's core: Schweitzer-like fixed point at several populations at once.

    ``m`` (P, T) populations; ``dev`` (T, T, L) the deviations D[j, t] of class
    j's per-job share of G when one class-t job is removed; ``f`` (P, T, L) the
    starting per-job shares.  Returns ``(x, r, f)`` at every population.
    """
    f_in, f_out = _factors(s, fcfs)
    corr = gamma * np.where(fcfs, s * s, 0.0)
    mf = m.astype(float)
    has = m > 0
    per_job = np.where(has, 1.0 / np.maximum(mf, 1.0), 0.0)[:, :, None]
    # sum_j (m_j - [j = t]) D[j, t] = m @ D[:, t] - D[t, t]
    shift = np.einsum("pj,jtl->ptl", mf, dev) - np.einsum("ttl->tl", dev)[None]
    x = np.zeros(m.shape)
    for it in range(1, max_iter + 1):
        g_full = np.einsum("pj,pjl->pl", mf, f)
        g_minus = np.maximum(g_full[:, None, :] - f + shift, 0.0)
        r = s + f_in * g_minus
        x_new = np.where(has, mf / (z + r @ cp), 0.0)
        f = x_new[:, :, None] * (f_out * r - corr) * per_job
        done = np.max(np.abs(x_new - x)[has] / x_new[has]) < tol
        x = x_new
        if done:
            return x, r, f, it
    raise Infeasible(f"Linearizer core did not converge in {max_iter} iterations")


def _linearizer(z, s, n, fcfs, cp, gamma, tol, max_iter, rounds=3):
    n_types, n_st = s.shape
    pops = np.vstack([n, n - np.eye(n_types, dtype=n.dtype)])     # n and n - e_t
    demand = s * cp
    x0 = pops / (z + demand.sum(axis=1))
    f = x0[:, :, None] * s                                       # a start: N ~ X S
    dev = np.zeros((n_types, n_types, n_st))
    x, r, f, total = _core(z, s, pops, fcfs, cp, gamma, dev, f, tol, max_iter)
    valid = (pops[1:] > 0).T[:, :, None]                          # (n - e_t)_j > 0, as [j, t]
    for _ in range(rounds):
        dev = np.where(valid, np.transpose(f[1:] - f[0][None], (1, 0, 2)), 0.0)
        x, r, f, it = _core(z, s, pops, fcfs, cp, gamma, dev, f, tol, max_iter)
        total += it
    return x[0], r[0], total


def mva_linearizer(delay, service, populations=None, disciplines="ps", *, copies=None,
                   residual="deterministic", tol: float = 1e-12,
                   max_iter: int = 100_000) -> MVAResult:
    """Approximate MVA by Chandy and Neuse's Linearizer, of the network of :func:`mva`.

    Schweitzer-Bard assumes that removing one class-t job leaves the per-job
    queue shares of every class unchanged; Linearizer estimates the change
    ``D[j, t]`` by solving the same fixed point at the populations ``n - e_t``
    too, and iterates (three rounds).  It is markedly more accurate than
    Schweitzer-Bard when classes hold one or few jobs (heterogeneous workers),
    at ``O(T^3 L)`` per iteration for T classes.

    Parameters
    ----------
    delay, service, populations, disciplines, copies, residual
        As in :func:`mva`.
    tol : float
        Convergence of each fixed point (relative change of the throughputs).
    max_iter : int
        Iterations of one fixed point before giving up.

    Returns
    -------
    MVAResult
        ``method == "linearizer"``; ``states`` holds the total iterations.

    Raises
    ------
    SpecError
        Bad arguments.
    Infeasible
        No convergence.

    References
    ----------
    K. M. Chandy and D. Neuse, "Linearizer: a heuristic algorithm for
    queueing network models of computing systems", Commun. ACM 25(2), 1982;
    applied to Li et al. 2022, eqs. 1-2 (for eq. 2 the linearized quantity is each
    class's share of ``sum_j S_j (N_j - rho_j / 2)``).

    Examples
    --------
    >>> exact = mva([0.1, 0.5], [[1.0], [1.0]]).total_throughput
    >>> approx = mva_linearizer([0.1, 0.5], [[1.0], [1.0]]).total_throughput
    >>> abs(approx / exact - 1) < 0.01
    True
    """
    z, s, n, fcfs, cp, gamma = _check_network(delay, service, populations, disciplines,
                                              copies, residual)
    x, r, iterations = _linearizer(z, s, n, fcfs, cp, gamma, tol, max_iter)
    return _result(z, s, n, cp, x, r, "linearizer", iterations)


# --------------------------------------------------------------------------
# The Li et al. 2022 network (Fig. 5)
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class AsyncSolution:
    """Everything :func:`async_solve` computes for one configuration.

    Per-worker arrays are in worker order (the order of ``t_forward``).

    Attributes
    ----------
    throughput : float, steps/s
        SGD steps per second summed over the workers (eq. 3, 4 or 5).
    worker_throughput : ndarray (K,), steps/s
        Steps per second of each worker.
    step_time : ndarray (K,), s
        Mean time between two steps of each worker (``1 / worker_throughput``).
    phases : dict of str to ndarray (K,), s
        Mean time per step of each worker in ``"downlink"``, ``"forward"``,
        ``"backward"``, ``"uplink"`` and ``"update"`` (response times summed
        over the ``n_ps`` servers; forward and backward as exposed after eq. 6
        when ``overlap``).  They sum to ``step_time``.
    utilization : dict of str to float
        Utilization of one ``"uplink"``, ``"update"`` (server) and ``"downlink"``
        station, and ``"compute"``: the largest busy fraction of a worker's
        compute, ``X_k (T_F + T_B)``.
    queue_length : dict of str to float, jobs
        Mean number of tasks at one uplink, server and downlink station.
    discipline : str
        Link discipline of the solution reported: ``"fcfs"`` or ``"ps"``.
    rho_fcfs : float or None
        Eq. 5's network utilization: the larger of the uplink and downlink
        utilizations of the FCFS solution (None when no FCFS solution was needed).
    throughput_fcfs, throughput_ps : float or None, steps/s
        Eqs. 3 and 4 for the final delay times (None when not computed).
    compute_time : ndarray (K,), s
        Delay-station time used: ``T_F + T_B``, or eq. 6 with ``overlap``.
    n_ps : int
        Parameter servers.
    method : str
        MVA used (``"exact"``, ``"binary"``, ``"linearizer"`` or ``"schweitzer"``).
    """

    throughput: float
    worker_throughput: np.ndarray
    step_time: np.ndarray
    phases: dict
    utilization: dict
    queue_length: dict
    discipline: str
    rho_fcfs: float | None
    throughput_fcfs: float | None
    throughput_ps: float | None
    compute_time: np.ndarray
    n_ps: int
    method: str

    @property
    def workers(self) -> int:
        """K, the number of workers."""
        return len(self.step_time)

    @property
    def bottleneck(self) -> str:
        """The most utilized station: ``"uplink"``, ``"update"``, ``"downlink"``, ``"compute"``."""
        return max(self.utilization, key=self.utilization.get)


def _worker_times(name: str, value, workers: int) -> np.ndarray:
    a = _v.as_array(name, value)
    if a.ndim == 0:
        a = np.full(workers, float(a))
    elif a.ndim != 1 or a.shape[0] != workers:
        raise SpecError(name, f"expected a number or {workers} values (one per worker), "
                              f"got shape {a.shape}")
    if not (np.isfinite(a).all() and (a >= 0).all()):
        bad = a[~(np.isfinite(a) & (a >= 0))][0]
        raise SpecError(name, f"must be finite and >= 0, got {bad!r}")
    return a


def _one_worker_count(workers) -> int:
    """K of one configuration: a whole number >= 1, not a sequence."""
    if np.ndim(workers) != 0:
        raise SpecError("workers", f"expected a whole number >= 1, got {workers!r}")
    return int(_v.checked("workers", workers, minimum=1, integer=True))


def _no_time_at_all() -> SpecError:
    """The error of a step with zero compute, model and update (infinite throughput)."""
    return SpecError("t_forward", "a step takes no time at all (zero compute, model and "
                                  "update): its throughput would be infinite")


def resolved_threshold(rho_threshold, cluster: Cluster) -> tuple[float, str]:
    """rho_T of eq. 5 and its source: the model's option, else the cluster's, else 0.6.

    Li et al. 2022 (Sec. 5) find rho_T once per platform (0.5 on CloudLab, 0.6
    on AWS), so a cluster spec carries it and a model option overrides it.
    """
    if rho_threshold is not None:
        return float(rho_threshold), "model"
    if cluster.rho_threshold is not None:
        return float(cluster.rho_threshold), "cluster.rho_threshold"
    return DEFAULT_RHO_THRESHOLD, "default"


def checked_options(discipline, rho_threshold, overlap, method):
    """(rho_T, overlap) of validated MVA options (shared with the baselines).

    A None rho_T (the cluster's, resolved per estimate) validates as the default.
    """
    _v.choice("discipline", discipline, DISCIPLINES)
    rho_t = _v.scalar("rho_threshold", DEFAULT_RHO_THRESHOLD if rho_threshold is None
                      else rho_threshold, maximum=1.0)
    if not isinstance(overlap, (bool, np.bool_)):
        raise SpecError("overlap", f"expected True or False, got {overlap!r}")
    _v.choice("method", method, METHODS)
    return rho_t, bool(overlap)


class _Network:
    """The Fig. 5 network of one configuration, workers grouped into classes."""

    def __init__(self, s_up, s_server, s_down, n_ps, types, pops, fcfs_gamma, method,
                 max_states):
        self.n_ps = n_ps
        self.types, self.pops = types, pops          # (T, 2) forward/backward; (T,)
        self.gamma, self.method, self.max_states = fcfs_gamma, method, max_states
        t = len(pops)
        self.service = np.column_stack([np.full(t, s_up), np.full(t, s_server),
                                        np.full(t, s_down)])
        self.copies = np.full(3, float(n_ps))

    def solve(self, delay: np.ndarray, links: str):
        fcfs = np.array([links == "fcfs", False, links == "fcfs"])
        z, s, n, cp, g = delay, self.service, self.pops, self.copies, self.gamma
        method = self.method
        if method == "auto":
            method = ("exact" if _n_states(n) <= self.max_states else
                      "linearizer" if len(n) <= MAX_LINEARIZER_TYPES else "schweitzer")
        if method == "exact":
            states = _n_states(n)
            if states > self.max_states:
                raise Infeasible(f"exact MVA needs {states} population vectors, more than "
                                 f"max_states={self.max_states}")
            if len(n) == 1:
                x, r = _exact_single(float(z[0]), s[0], int(n[0]), fcfs, cp, g)
            else:
                x, r = _exact_levels(z, s, n, fcfs, cp, g)
        elif method == "schweitzer":
            x, r, _ = _schweitzer(z, s, n, fcfs, cp, g, 1e-12, 100_000)
        elif method == "linearizer":
            x, r, _ = _linearizer(z, s, n, fcfs, cp, g, 1e-12, 100_000)
        else:  # binary: one class per worker, then back to classes
            rep = np.repeat(np.arange(len(n)), n)
            if 2 ** len(rep) > self.max_states:
                raise Infeasible(f"the {{0,1}}^K recursion needs 2^{len(rep)} population "
                                 f"vectors, more than max_states={self.max_states}")
            res = mva_binary(z[rep], s[rep], ["fcfs" if f else "ps" for f in fcfs],
                             copies=cp, residual=(1.0 - 2.0 * g))
            first = np.searchsorted(rep, np.arange(len(n)))
            x, r = np.bincount(rep, res.throughput), res.response[first]
        return x, r, method


def async_solve(model_bytes, bandwidth, t_forward, t_backward, t_update, workers,
                discipline="hybrid", rho_threshold=0.6, overlap=False, *, n_ps=1,
                residual="deterministic", method="auto", max_states: int = MAX_STATES,
                t_uplink=None, t_downlink=None, t_stall=0.0) -> AsyncSolution:
    """Solve Li et al. 2022's Async-SGD network (Fig. 5) for one configuration.

    Service times (Sec. 2.1.2): ``S_U = S_D = M / (n_ps B)`` per link visit,
    ``S_S = T_S / n_ps`` per server visit, ``S_W = T_F + T_B`` at the worker.
    ``discipline="fcfs"`` solves with FCFS links (eq. 3), ``"ps"`` with PS
    links (eq. 4), ``"hybrid"`` both and picks by eq. 5: the FCFS solution when
    ``rho_fcfs <= rho_threshold``, where ``rho_fcfs`` is the larger of the
    uplink and downlink utilizations of the FCFS solution at full population
    (docs/models.md, design decisions).  The server station is always PS.
    FCFS with a deterministic residual is the faster discipline, so with
    ``"hybrid"`` the throughput can fall from K to K + 1 workers where the
    utilization crosses ``rho_threshold``: eq. 5 as printed.

    With ``overlap=True`` (eq. 6, as docs/models.md decides): take ``T_D`` and
    ``T_U`` of each worker from the solution selected above, replace the
    computation time by ``max(0, T_F - T_D) + max(0, T_B - T_U)``, solve again
    and apply eq. 5 again.

    Parameters
    ----------
    model_bytes : float, bytes
        Model size M (>= 0); gradients have the same size.
    bandwidth : float, bytes/s
        Link bandwidth B (> 0).
    t_forward, t_backward : float or sequence of K floats, s
        Forward and backward time of a step (S_F, S_B), one value for all
        workers or one per worker (heterogeneous workers, Sec. 4.2.3).
    t_update : float, s
        Update time on the parameter server (S_S for one server).
    workers : int
        K >= 1.
    discipline : {"hybrid", "ps", "fcfs"}
        Link discipline (eq. 5, eq. 4, eq. 3).
    rho_threshold : float
        rho_T of eq. 5, in [0, 1].
    overlap : bool
        Apply the overlap correction of eq. 6.
    n_ps : int
        Parameter servers sharing the model evenly (our extension; see the
        module notes).
    residual : {"deterministic", "exponential"} or float
        FCFS residual (see :func:`mva`); eq. 2 as printed is ``"deterministic"``.
    method : {"auto", "exact", "binary", "linearizer", "schweitzer"}
        Class-aggregated exact MVA, the ``{0,1}^K`` recursion, Linearizer,
        Schweitzer-Bard; ``"auto"``: exact when at most ``max_states``
        population vectors, else Linearizer up to ``MAX_LINEARIZER_TYPES``
        distinct workers, else Schweitzer-Bard.
    max_states : int
        Bound on the population vectors of the exact methods.
    t_uplink, t_downlink : float or None, s
        Measured duration of one uncontended push or pull of the whole model
        with one server (Lin et al.'s profiling, Li et al. 2022, Sec. 2.1.2); they
        replace ``M / B`` (split over ``n_ps`` servers as M is).  Default:
        ``M / B`` for both, as Li et al. 2022 do.
    t_stall : float, s
        Mean time per step a worker's messages stall in retransmission
        timeouts on a lossy link (ours, :meth:`AsyncMVA.estimate`): a delay
        (think time) added to the worker's cycle, during which its message
        holds no link, and reported as the phase ``timeouts``.  It is not
        overlapped with anything.  0 (default): a loss-free link, no phase.

    Returns
    -------
    AsyncSolution

    Raises
    ------
    SpecError
        Naming the argument, for NaN, negative or out-of-range values, a
        sequence of the wrong length, unknown options, or a step with no time
        at all.
    Infeasible
        ``method="exact"`` or ``"binary"`` beyond ``max_states``.

    References
    ----------
    Li et al. 2022, Sec. 2.1: eqs. 1-2 (response times), 3-4 (throughput), 5
    (hybrid), 6 (overlap); Sec. 2.1.2 (service times).

    Examples
    --------
    >>> sol = async_solve(100e6, 1.25e9, 0.1, 0.2, 0.01, 4, discipline="ps")
    >>> round(sol.throughput, 4), sol.bottleneck
    (7.0152, 'uplink')
    >>> {k: round(float(v[0]), 4) for k, v in sol.phases.items()}
    {'downlink': 0.1298, 'forward': 0.1, 'backward': 0.2, 'uplink': 0.1298, 'update': 0.0106}
    >>> {k: round(v, 3) for k, v in sol.utilization.items()}
    {'uplink': 0.561, 'update': 0.07, 'downlink': 0.561, 'compute': 0.526}
    """
    m = _v.scalar("model_bytes", model_bytes)
    b = _v.scalar("bandwidth", bandwidth, positive=True, finite=False)
    ts = _v.scalar("t_update", t_update)
    k = _one_worker_count(workers)
    p = int(_v.scalar("n_ps", n_ps, minimum=1, integer=True))
    rho_t, overlap = checked_options(discipline, rho_threshold, overlap, method)
    gamma = residual_fraction(residual)
    tf = _worker_times("t_forward", t_forward, k)
    tb = _worker_times("t_backward", t_backward, k)
    if not isinstance(max_states, numbers.Integral) or max_states < 1:
        raise SpecError("max_states", f"expected a whole number >= 1, got {max_states!r}")
    s_up = m / (p * b) if t_uplink is None else _v.scalar("t_uplink", t_uplink) / p
    s_down = m / (p * b) if t_downlink is None else _v.scalar("t_downlink", t_downlink) / p
    s_server = ts / p
    stall = _v.scalar("t_stall", t_stall)
    if not ((tf + tb) > 0).all() and not (s_up > 0 or s_down > 0 or s_server > 0):
        raise _no_time_at_all()
    if (tf == tf[0]).all() and (tb == tb[0]).all():   # identical workers: np.unique's answer
        types, inverse = np.array([[tf[0], tb[0]]]), np.zeros(k, np.intp)
        pops = np.array([k])
    else:
        types, inverse, pops = np.unique(np.column_stack([tf, tb]), axis=0,
                                         return_inverse=True, return_counts=True)
        inverse = inverse.reshape(-1)
    net = _Network(s_up, s_server, s_down, p, types, pops, gamma, method, int(max_states))
    compute = types.sum(axis=1)

    def run(delay):
        """Eq. 3/4/5 for these delay times: (links, x, r, rho_fcfs, X_fcfs, X_ps, method)."""
        x_f = x_p = rho = None
        if discipline in ("fcfs", "hybrid"):
            x_f, r_f, used = net.solve(delay, "fcfs")
            util = x_f @ net.service
            rho = float(max(util[0], util[2]))
        if discipline == "ps" or (discipline == "hybrid" and rho > rho_t):
            x_p, r_p, used = net.solve(delay, "ps")
            return "ps", x_p, r_p, rho, x_f, x_p, used
        return "fcfs", x_f, r_f, rho, x_f, x_p, used

    cycle_delay = compute + stall if stall else compute   # the stall: a delay of its own
    links, x, r, rho, x_f, x_p, used = run(cycle_delay)
    if overlap:
        t_up, t_down = p * r[:, 0], p * r[:, 2]
        fwd = np.maximum(0.0, types[:, 0] - t_down)
        bwd = np.maximum(0.0, types[:, 1] - t_up)
        delay = fwd + bwd   # > 0 unless T_D, T_U > 0, so every cycle stays > 0
        if stall:
            delay = delay + stall
        links, x, r, rho, x_f, x_p, used = run(delay)
    else:
        fwd, bwd, delay = types[:, 0], types[:, 1], cycle_delay

    per_worker = x / pops                                      # (T,)
    cycle = delay + (r * p).sum(axis=1)
    phases = {"downlink": p * r[:, 2], "forward": fwd, "backward": bwd,
              "uplink": p * r[:, 0], "update": p * r[:, 1]}
    if stall:
        phases["timeouts"] = np.full(len(types), stall)
    util = x @ net.service
    queue = x @ r
    return AsyncSolution(
        throughput=float(x.sum()),
        worker_throughput=per_worker[inverse],
        step_time=cycle[inverse],
        phases={name: np.asarray(v, dtype=float)[inverse] for name, v in phases.items()},
        utilization={"uplink": float(util[0]), "update": float(util[1]),
                     "downlink": float(util[2]),
                     "compute": float(np.max(per_worker * compute))},
        queue_length={"uplink": float(queue[0]), "update": float(queue[1]),
                      "downlink": float(queue[2])},
        discipline=links, rho_fcfs=rho,
        throughput_fcfs=None if x_f is None else float(x_f.sum()),
        throughput_ps=None if x_p is None else float(x_p.sum()),
        compute_time=np.asarray(delay, dtype=float)[inverse], n_ps=p, method=used)


def _one_class_throughput(m: float, b: float, tf: float, tb: float, ts: float, k: int,
                          discipline: str, rho_t: float, overlap: bool, p: int,
                          gamma: float) -> float | None:
    """:func:`async_solve`'s throughput for K identical workers, on validated floats.

    Exact MVA (what ``method="auto"`` picks for one class of up to
    ``MAX_STATES - 1`` workers) with eqs. 5 and 6 as :func:`async_solve`
    applies them, in the same operations.  None for a step that takes no time
    at all: :func:`async_solve` raises the SpecError.
    """
    s_link = m / (p * b)
    s_server = ts / p
    compute = tf + tb
    if not (compute > 0.0 or s_link > 0.0 or s_server > 0.0):
        return None
    cp = float(p)
    x, r_link = _eq5_one_class(compute, s_link, s_server, k, cp, gamma, discipline, rho_t)
    if overlap:   # eq. 6: the exposed compute, from the solution eq. 5 selected
        fwd = tf - p * r_link
        bwd = tb - p * r_link
        delay = (fwd if fwd > 0.0 else 0.0) + (bwd if bwd > 0.0 else 0.0)
        x, r_link = _eq5_one_class(delay, s_link, s_server, k, cp, gamma, discipline, rho_t)
    return x


def _eq5_one_class(delay, s_link, s_server, k, cp, gamma, discipline, rho_t):
    """``(X, T_link)`` of the solution eq. 5 (or the fixed discipline) selects."""
    if discipline != "ps":
        x, r_link, _ = _one_class_fig5(delay, s_link, s_server, k, cp, gamma, True)
        if discipline == "fcfs" or not x * s_link > rho_t:
            return x, r_link
    x, r_link, _ = _one_class_fig5(delay, s_link, s_server, k, cp, gamma, False)
    return x, r_link


def _throughput_scalar(m, b, tf, tb, ts, k, discipline, rho_t, overlap, p, residual, method):
    """:func:`async_throughput` of one configuration of plain numbers, or None: the general path.

    The checks of the general path as float comparisons (None when one fails:
    the general path raises the SpecError naming the argument), then
    :func:`_one_class_throughput`.
    """
    sc = _v.SCALAR_TYPES
    if not (sc.issuperset((type(m), type(b), type(tf), type(tb), type(ts), type(k),
                           type(rho_t), type(p)))
            and type(discipline) is str and (overlap is True or overlap is False)
            and type(method) is str and (method == "auto" or method == "exact")
            and discipline in DISCIPLINES):
        return None
    if type(residual) is str:
        if residual == "deterministic":
            gamma = 0.5
        elif residual == "exponential":
            gamma = 0.0
        else:
            return None
    elif type(residual) in sc and 0.0 <= residual < _INF:
        gamma = (1.0 - float(residual)) / 2.0
    else:
        return None
    m, b, tf, tb, ts = float(m), float(b), float(tf), float(tb), float(ts)
    k, rho_t, p = float(k), float(rho_t), float(p)
    inf = _INF
    if not (0.0 <= m < inf and b > 0.0 and 0.0 <= tf < inf and 0.0 <= tb < inf
            and 0.0 <= ts < inf and k >= 1.0 and k % 1.0 == 0.0 and k < MAX_STATES
            and 0.0 <= rho_t <= 1.0 and p >= 1.0 and p % 1.0 == 0.0 and p < inf):
        return None
    return _one_class_throughput(m, b, tf, tb, ts, int(k), discipline, rho_t, overlap, int(p),
                                 gamma)


def _per_worker_call(t_forward, t_backward, workers) -> bool:
    """Whether t_forward/t_backward are per-worker sequences (heterogeneous workers)."""
    if np.ndim(workers) != 0 or isinstance(workers, (bool, np.bool_)):
        return False
    try:
        k = float(workers)
    except (TypeError, ValueError):
        return False
    for value in (t_forward, t_backward):
        if np.ndim(value) == 1 and np.shape(value)[0] == k:
            return all(np.ndim(v) == 0 or (np.ndim(v) == 1 and np.shape(v)[0] == k)
                       for v in (t_forward, t_backward))
    return False


def async_throughput(model_bytes, bandwidth, t_forward, t_backward, t_update, workers,
                     discipline="hybrid", rho_threshold=0.6, overlap=False, *, n_ps=1,
                     residual="deterministic", method="auto"):
    """SGD steps per second of Async-SGD with a parameter server (Li et al. 2022, eqs. 1-6).

    The public contract.  Two ways to call it:

    * **heterogeneous workers** -- ``workers`` is one integer K and
      ``t_forward`` and/or ``t_backward`` is a sequence of K values (one per
      worker; the other may be a number): one float is returned;
    * **grids** -- otherwise every argument (including ``n_ps`` and
      ``rho_threshold``) broadcasts with numpy and each element is a job of
      identical workers; a float for scalar input, else an array of the
      broadcast shape.

    Parameters
    ----------
    model_bytes : float or array_like, bytes
        Model size M (>= 0).
    bandwidth : float or array_like, bytes/s
        Link bandwidth B (> 0); link service time ``M / B`` (Sec. 2.1.2).
    t_forward, t_backward : float or array_like, s
        Forward and backward time of one step (S_F, S_B).
    t_update : float or array_like, s
        Update time on the parameter server.
    workers : int or array_like, workers
        K >= 1.
    discipline : {"hybrid", "ps", "fcfs"}
        Eq. 5 (default), eq. 4 or eq. 3.
    rho_threshold : float or array_like
        rho_T of eq. 5 in [0, 1] (default 0.6).
    overlap : bool
        Eq. 6 correction for overlapped communication and computation.
    n_ps : int or array_like
        Parameter servers splitting the model (our extension; 1 is the paper).
    residual : {"deterministic", "exponential"} or float
        FCFS residual (see :func:`mva`).
    method : {"auto", "exact", "binary", "linearizer", "schweitzer"}
        MVA method (see :func:`async_solve`).

    Returns
    -------
    float or ndarray, steps/s
        Steps completed per second by all the workers together.

    Raises
    ------
    SpecError
        Naming the argument, for bad values (see :func:`async_solve`).

    References
    ----------
    Li et al. 2022, Sec. 2.1, eqs. 1-6; Sec. 4.2.3 (heterogeneous workers).

    Examples
    --------
    >>> round(async_throughput(100e6, 1.25e9, [0.1, 0.05], [0.2, 0.1], 0.01, 2), 4)
    5.0351
    """
    x = _throughput_scalar(model_bytes, bandwidth, t_forward, t_backward, t_update, workers,
                           discipline, rho_threshold, overlap, n_ps, residual, method)
    if x is not None:
        return x
    if _per_worker_call(t_forward, t_backward, workers):
        return async_solve(model_bytes, bandwidth, t_forward, t_backward, t_update, workers,
                           discipline, rho_threshold, overlap, n_ps=n_ps, residual=residual,
                           method=method).throughput
    checked_options(discipline, 0.0, overlap, method)
    gamma = residual_fraction(residual)
    args = {"model_bytes": _v.checked("model_bytes", model_bytes),
            "bandwidth": _v.checked("bandwidth", bandwidth, positive=True, finite=False),
            "t_forward": _v.checked("t_forward", t_forward),
            "t_backward": _v.checked("t_backward", t_backward),
            "t_update": _v.checked("t_update", t_update),
            "workers": _v.checked("workers", workers, minimum=1, integer=True),
            "rho_threshold": _v.checked("rho_threshold", rho_threshold, maximum=1.0),
            "n_ps": _v.checked("n_ps", n_ps, minimum=1, integer=True)}
    shape = np.broadcast_shapes(*(np.shape(v) for v in args.values()))
    if shape == ():
        return _solve_cached({}, args, discipline, overlap, residual, gamma, method)
    grids = {k: np.broadcast_to(v, shape) for k, v in args.items()}
    out = np.empty(shape)
    cache: dict = {}
    for index in np.ndindex(shape):
        out[index] = _solve_cached(cache, {k: float(v[index]) for k, v in grids.items()},
                                   discipline, overlap, residual, gamma, method)
    return out


def _solve_cached(cache: dict, a: dict, discipline, overlap, residual, gamma, method) -> float:
    """One element of a validated grid: the one-class kernel when it applies, else async_solve."""
    key = tuple(float(v) for v in a.values())
    if key not in cache:
        x = None
        if method in ("auto", "exact") and a["workers"] < MAX_STATES:
            x = _one_class_throughput(float(a["model_bytes"]), float(a["bandwidth"]),
                                      float(a["t_forward"]), float(a["t_backward"]),
                                      float(a["t_update"]), int(a["workers"]), discipline,
                                      float(a["rho_threshold"]), overlap, int(a["n_ps"]), gamma)
        if x is None:
            x = async_solve(a["model_bytes"], a["bandwidth"], a["t_forward"], a["t_backward"],
                            a["t_update"], int(a["workers"]), discipline, a["rho_threshold"],
                            overlap, n_ps=int(a["n_ps"]), residual=residual,
                            method=method).throughput
        cache[key] = x
    return cache[key]


# --------------------------------------------------------------------------
# Model object
# --------------------------------------------------------------------------

_EQUATION = {"hybrid": "Li et al. 2022 eqs. 1-5", "ps": "Li et al. 2022 eqs. 1, 4",
             "fcfs": "Li et al. 2022 eqs. 1-3"}


def link_rate(cluster: Cluster) -> float:
    """Rate of one transfer alone on a link: goodput, bounded by the per-flow cap."""
    rate = cluster.effective_bandwidth
    if cluster.per_flow_cap is not None:
        rate = min(rate, cluster.per_flow_cap * cluster.link_efficiency)
    return rate


def estimate_from_solution(sol: AsyncSolution, workload: Profile, config: Config,
                           meta: dict) -> Estimate:
    """The Estimate of a solved configuration: its phases, samples and bottleneck."""
    phases = {name: float(values[0]) for name, values in sol.phases.items()}
    est = Estimate.from_phases(phases, config.n_replicas * workload.batch_size,
                               epoch_samples=config.epoch_samples, meta=meta)
    return dataclasses.replace(est, bottleneck=sol.bottleneck)


def saturation_workers(model_bytes, bandwidth, t_forward, t_backward, t_update, n_ps=1,
                       t_stall=0.0) -> float:
    """Kleinrock's saturation population N* of the Fig. 5 network (Lazowska et al. 1984,
    Sec. 5.2): ``(D + Z) / D_max``, the workers the stations hold without queueing.

    Z is a worker's delay per step (``t_forward + t_backward + t_stall``), D its
    service demand per step at all stations (``2 M / B + T_S``: the model up and
    down, the update, over the ``n_ps`` servers) and D_max the largest demand
    at one station (``max(M / (n_ps B), T_S / n_ps)``).  Infinite when no
    station has any demand.

    Examples
    --------
    >>> round(saturation_workers(100e6, 1.25e9, 0.1, 0.2, 0.01), 4)   # 0.47 / 0.08
    5.875
    >>> round(saturation_workers(100e6, 1.25e9, 0.1, 0.2, 0.01, n_ps=2), 3)
    11.75
    """
    m = _v.scalar("model_bytes", model_bytes)
    b = _v.scalar("bandwidth", bandwidth, positive=True, finite=False)
    z = (_v.scalar("t_forward", t_forward) + _v.scalar("t_backward", t_backward)
         + _v.scalar("t_stall", t_stall))
    ts = _v.scalar("t_update", t_update)
    p = int(_v.scalar("n_ps", n_ps, minimum=1, integer=True))
    link = m / b
    d_max = max(link, ts) / p
    return _INF if d_max == 0 else (z + 2.0 * link + ts) / d_max


def update_spread(workers, t_update, model_bytes, bandwidth):
    """How far the server's updates spread K = ``workers`` async workers, in transfers:
    ``min(1, K T_S B / M)``, the K updates of ``T_S / P`` one after another over one
    transfer of ``M / (P B)`` (module notes, "Convoys spread by the updates"; ours).
    1 with nothing to transfer.  Vectorized.

    Examples
    --------
    >>> float(update_spread(4, 0.02, 100e6, 1.25e8))    # 4 x 20 ms against 0.8 s
    0.1
    >>> float(update_spread(8, 0.02, 100e6, 1.25e9))    # 8 x 20 ms against 80 ms: spread
    1.0
    """
    k, ts = np.asarray(workers, dtype=float), np.asarray(t_update, dtype=float)
    m, b = np.asarray(model_bytes, dtype=float), np.asarray(bandwidth, dtype=float)
    return np.minimum(1.0, np.where(m > 0, k * ts * b / np.where(m > 0, m, 1.0), 1.0))


def convoy_groups(workers: int, saturation: float) -> list[tuple[int, float]]:
    """How K = ``workers`` move when at most ``saturation`` (N*) groups survive (module
    notes): ``[(groups, weight), ...]``, the whole group counts whose step times the
    estimate interpolates, weights summing to 1.  ``[(K, 1.0)]`` when K <= N*.

    Examples
    --------
    >>> convoy_groups(4, 5.9)
    [(4, 1.0)]
    >>> [(g, round(w, 2)) for g, w in convoy_groups(12, 5.75)]
    [(5, 0.25), (6, 0.75)]
    >>> convoy_groups(12, 0.4)      # everything in one group
    [(1, 1.0)]
    """
    g = max(1.0, float(saturation))
    if workers <= g:
        return [(int(workers), 1.0)]
    if math.isclose(g, round(g), rel_tol=1e-12):   # N* of whole groups, up to rounding
        g = float(round(g))
    low = math.floor(g)
    if low == g:
        return [(low, 1.0)]
    return [(low, low + 1 - g), (low + 1, g - low)]


def _channel_mva(delay: float, demands: np.ndarray, channels: np.ndarray, workers: int):
    """Exact single-class MVA with load-dependent processor-sharing stations.

    Station i serves at rate ``min(n, channels[i]) / demands[i]`` with n jobs
    present (one channel: plain processor sharing); ``delay`` is an infinite
    server.  Reiser and Lavenberg's recursion over the marginal queue-length
    probabilities ``p_i(j | n)``.  Returns ``(X, R)``: the throughput and the
    response time per station at ``workers`` jobs.
    """
    stations = len(demands)
    marginal = np.zeros((stations, workers + 1))
    marginal[:, 0] = 1.0
    j = np.arange(1, workers + 1, dtype=float)
    # time per visit with j jobs present, per job: j * demand / min(j, c) / j
    per_job = demands[:, None] / np.minimum(j[None, :], channels[:, None])
    x, resp = 0.0, np.zeros(stations)
    for n in range(1, workers + 1):
        resp = (j[:n] * per_job[:, :n] * marginal[:, :n]).sum(axis=1)
        cycle = delay + resp.sum()
        x = n / cycle if cycle > 0 else _INF
        new = np.zeros_like(marginal)
        new[:, 1:n + 1] = x * per_job[:, :n] * marginal[:, :n]
        new[:, 0] = np.maximum(0.0, 1.0 - new[:, 1:].sum(axis=1))
        marginal = new
    return x, resp


def fork_join_solve(model_bytes, bandwidth, t_forward, t_backward, t_update, workers, *,
                    n_ps=1, overlap=False, t_stall=0.0) -> AsyncSolution:
    """Async-SGD with the P servers met at once, as one fork-join (module notes; ours).

    The network of Li et al. 2022's Fig. 5 with its P servers' stations
    pooled: each direction's P server links are one processor-sharing station
    of P channels, demand ``M / B`` per step (a transfer alone runs at its
    worker's link rate B), and the P update CPUs one processor-sharing
    station of demand ``T_S / P``.  Links are processor sharing (eq. 4's);
    eq. 5's FCFS alternative does not apply.  With ``overlap`` eq. 6 as in
    :func:`async_solve`: the exposed compute from the first solution, solved
    again.  K identical workers.

    Parameters
    ----------
    model_bytes : float, bytes
    bandwidth : float, bytes/s
    t_forward, t_backward, t_update : float, s
    workers : int
        K >= 1.
    n_ps : int
        Parameter servers P >= 1.
    overlap : bool
        Apply eq. 6.
    t_stall : float, s
        Timeout stall per step, a delay of its own (as in :func:`async_solve`).

    Returns
    -------
    AsyncSolution
        ``utilization`` and ``queue_length`` of the pooled stations: the
        busy fraction of one server's link or CPU, and the mean transfers or
        updates at all P; ``discipline`` ``"ps"``, ``method`` ``"fork-join"``.

    Raises
    ------
    SpecError
        Naming the argument, for NaN, negative or out-of-range values, or a step
        with no time at all.

    References
    ----------
    Li et al. 2022, Sec. 2.1 (the network, eq. 4, eq. 6); Reiser and
    Lavenberg 1980 (MVA with load-dependent stations).

    Examples
    --------
    One worker meets its 4 servers at once: ``0.08 + 0.3 + 0.01 / 4 + 0.08`` s a step.

    >>> sol = fork_join_solve(100e6, 1.25e9, 0.1, 0.2, 0.01, 1, n_ps=4)
    >>> round(float(sol.step_time[0]), 6), sol.method
    (0.4625, 'fork-join')
    >>> round(fork_join_solve(100e6, 1.25e9, 0.1, 0.2, 0.01, 4, n_ps=4).throughput, 4)
    8.6479
    """
    m = _v.scalar("model_bytes", model_bytes)
    b = _v.scalar("bandwidth", bandwidth, positive=True, finite=False)
    tf = _v.scalar("t_forward", t_forward)
    tb = _v.scalar("t_backward", t_backward)
    ts = _v.scalar("t_update", t_update)
    k = _one_worker_count(workers)
    p = int(_v.scalar("n_ps", n_ps, minimum=1, integer=True))
    _v.boolean("overlap", overlap)
    stall = _v.scalar("t_stall", t_stall)
    link, update = m / b, ts / p
    if not (tf + tb > 0 or link > 0 or update > 0):
        raise _no_time_at_all()
    demands = np.array([link, update, link])
    channels = np.array([float(p), 1.0, float(p)])
    x, r = _channel_mva(tf + tb + stall, demands, channels, k)
    fwd, bwd = tf, tb
    if overlap:   # eq. 6: the exposed compute, solved again
        fwd, bwd = max(0.0, tf - r[2]), max(0.0, tb - r[0])
        x, r = _channel_mva(fwd + bwd + stall, demands, channels, k)
    phases = {"downlink": r[2], "forward": fwd, "backward": bwd, "uplink": r[0],
              "update": r[1]}
    if stall:
        phases["timeouts"] = stall
    cycle = sum(phases.values())
    per_worker = x / k
    util = x * demands / channels
    return AsyncSolution(
        throughput=float(x), worker_throughput=np.full(k, per_worker),
        step_time=np.full(k, cycle),
        phases={name: np.full(k, float(v)) for name, v in phases.items()},
        utilization={"uplink": float(util[0]), "update": float(util[1]),
                     "downlink": float(util[2]), "compute": float(per_worker * (tf + tb))},
        queue_length={"uplink": float(x * r[0]), "update": float(x * r[1]),
                      "downlink": float(x * r[2])},
        discipline="ps", rho_fcfs=None, throughput_fcfs=None, throughput_ps=float(x),
        compute_time=np.full(k, fwd + bwd), n_ps=p, method="fork-join")


def serialized_cycle(model_bytes, bandwidth, t_forward, t_backward, t_update, workers,
                     n_ps=1, t_stall=0.0):
    """Seconds of an async worker's cycle with every other worker served first (ours).

    ``T_F + T_B + 2 M max(1, K / P) / B + K T_S / P + t_stall``: the longest a
    cycle takes on work-conserving links that drop nothing, whatever the
    order.  A push sends ``M / P`` to each of the P servers, ``M`` through the
    worker's own link, while each server's link carries at most K such
    shards, so with fair or FIFO sharing it ends within ``M max(1, K / P) /
    B``; the pull likewise.  Each server applies its share of a gradient in
    ``T_S / P``, with at most the K workers' shares ahead.  Overlapping
    communication with computation only shortens the cycle.  Vectorized.

    Parameters
    ----------
    model_bytes, bandwidth : float or array
        M (bytes) and the link rate B (bytes/s).
    t_forward, t_backward, t_update : float or array
        Seconds of a worker's compute and of the update of a whole gradient.
    workers, n_ps : int or array
        K workers and P servers (>= 1).
    t_stall : float or array
        Seconds a step waits in timeouts (:func:`async_stall_time`).

    Examples
    --------
    >>> float(serialized_cycle(100e6, 1.25e9, 0.1, 0.2, 0.01, 4, 2))   # 0.3 + 2 (0.08 x 2) + 0.02
    0.64
    >>> float(serialized_cycle(100e6, 1.25e9, 0.1, 0.2, 0.01, 1, 2))   # the servers in parallel
    0.465
    """
    k, p = np.asarray(workers, dtype=float), np.asarray(n_ps, dtype=float)
    transfer = model_bytes * np.maximum(1.0, k / p) / bandwidth
    return t_forward + t_backward + 2.0 * transfer + k * t_update / p + t_stall


def async_stall_time(probability, timeout, n_ps=1) -> float:
    """Mean seconds per async step that a worker waits in retransmission timeouts (ours).

    Each of the step's two transfers (the push and the pull, each ``n_ps``
    concurrent messages) stalls for ``timeout`` when any of its messages
    does, each with probability ``probability``:
    ``2 timeout (1 - (1 - q)**n_ps)``.  Unlike a synchronous step
    (:func:`perfmodel.coarse.timeout_stall`) nothing hides the stall from the
    worker itself: its own next step waits for the message.

    Examples
    --------
    >>> round(async_stall_time(0.05, 1.0), 12)
    0.1
    """
    q = _v.scalar("timeout_probability", probability, maximum=1.0)
    r = _v.scalar("retransmit_timeout", timeout, positive=True)
    return 2.0 * r * (1.0 - (1.0 - q) ** int(n_ps)) if q else 0.0


def async_batchable(workload, cluster, batch) -> bool:
    """Whether :func:`async_solve_many` prices ``batch``: specs of the right types,
    one-GPU machines, data parallel with servers, few enough workers for the exact
    single-class recursion that ``method="auto"`` picks."""
    return (isinstance(workload, Profile) and isinstance(cluster, Cluster)
            and isinstance(batch, ConfigBatch) and len(batch) > 0
            and cluster.gpus_per_machine == 1 and bool(np.all(batch.n_workers == 1))
            and bool(np.all(batch.n_ps >= 1))
            and int(batch.n_replicas.max()) + 1 <= MAX_STATES)


def async_solve_many(batch: ConfigBatch, workload: Profile, bandwidth: float,
                       discipline: str, rho_t: float, gamma: float, t_uplink=None,
                       t_downlink=None, stall=None) -> BatchEstimate | None:
    """:func:`async_solve` (exact, one class, no overlap) of every (K, n_ps) of ``batch``.

    The single-class recursion of :func:`mva` over populations 1..K passes
    through every smaller K, so one run per server count P prices every K of
    that P; the runs of all P go together as arrays (one column per P, the FCFS
    and the PS network stacked), each element the same arithmetic as the
    scalar loop.  The batch of :meth:`AsyncMVA.estimate_many` and
    :meth:`perfmodel.baselines.LinAsync.estimate_many`.

    Parameters
    ----------
    batch : ConfigBatch
        K = ``n_replicas`` identical workers, P = ``n_ps`` servers, per configuration.
    workload : Profile
        M, T_F, T_B, T_S and the batch size of one worker.
    bandwidth : float, bytes/s
        Rate of one transfer alone on a link (:func:`link_rate`).
    discipline : {"hybrid", "ps", "fcfs"}
        As in :func:`async_solve`.
    rho_t : float
        rho_T of eq. 5.
    gamma : float
        FCFS residual fraction (:func:`residual_fraction`).
    t_uplink, t_downlink : float or None, s
        As in :func:`async_solve`.
    stall : callable or None
        ``stall(P)``: the timeout delay (s) of a worker's cycle with P servers.

    Returns
    -------
    BatchEstimate or None
        The step time, throughput and epoch time of each configuration; NaN
        step time where eq. 5's utilization is within rounding of ``rho_t``
        (``estimate`` decides those).  None when a step would take no time at
        all (``async_solve`` names that error).
    """
    m, b, ts = float(workload.model_bytes), float(bandwidth), float(workload.t_update)
    tf, tb = float(workload.t_forward), float(workload.t_backward)
    servers, col = np.unique(batch.n_ps, return_inverse=True)
    col = col.reshape(-1)
    p = servers.astype(np.int64)
    s_up = m / (p * b) if t_uplink is None else float(t_uplink) / p
    s_down = m / (p * b) if t_downlink is None else float(t_downlink) / p
    s_server = ts / p
    compute = tf + tb
    delay = np.full(p.shape, compute)
    extra = None
    if stall is not None:
        extra = np.array([stall(int(q)) for q in p])
        delay = np.where(extra != 0, compute + extra, compute)
    if not compute > 0 and not np.all((s_up > 0) | (s_down > 0) | (s_server > 0)):
        return None
    service = np.stack([s_up, s_server, s_down])                       # (3, P)
    copies = p.astype(float)
    fcfs = np.array([[True, False, True], [False, False, False]])[:, :, None]  # (2, 3, 1)
    f_in = np.where(fcfs, 1.0, service)                                # (2, 3, P)
    f_out = np.where(fcfs, service, 1.0)
    corr = np.where(fcfs, gamma * service * service, 0.0)
    k_of = batch.n_replicas
    order = np.argsort(k_of, kind="stable")
    bounds = np.searchsorted(k_of[order], np.arange(1, int(k_of.max()) + 2))
    r_all = np.empty((2, 3, len(batch)))
    x_all = np.empty((2, len(batch)))
    g = np.zeros((2, 3, len(p)))
    for k in range(1, int(k_of.max()) + 1):
        r = service + f_in * g
        cycle = delay + copies * r[:, 0]
        cycle = cycle + copies * r[:, 1]
        cycle = cycle + copies * r[:, 2]
        x = k / cycle                                                   # (2, P)
        g = x[:, None] * (f_out * r - corr)
        here = order[bounds[k - 1]:bounds[k]]
        if len(here):
            r_all[:, :, here] = r[:, :, col[here]]
            x_all[:, here] = x[:, col[here]]
    rho = np.maximum(x_all[0] * s_up[col], x_all[0] * s_down[col])
    use_ps = np.full(len(batch), discipline == "ps")
    if discipline == "hybrid":
        use_ps = rho > rho_t
    r = np.where(use_ps, r_all[1], r_all[0])                             # (3, n)
    q = p[col]
    phases = {"downlink": q * r[2], "forward": tf, "backward": tb, "uplink": q * r[0],
              "update": q * r[1]}
    if extra is not None and np.any(extra != 0):
        phases["timeouts"] = extra[col]
    out = BatchEstimate.from_phases(phases, k_of * workload.batch_size, batch.epoch_samples)
    if discipline == "hybrid":
        unsure = np.abs(rho - rho_t) <= 1e-9 * max(abs(rho_t), 1e-300)
        if unsure.any():
            step = np.where(unsure, np.nan, out.step_time)
            out = BatchEstimate(step, out.throughput, out.epoch_time)
    return out


@dataclass(frozen=True)
class AsyncMVA:
    """Li et al. 2022's coarse model of Async-SGD: MVA of the Fig. 5 network (eqs. 1-6).

    Parameters
    ----------
    discipline : {"hybrid", "ps", "fcfs"}
        Link discipline: eq. 5 (default), eq. 4, eq. 3.
    rho_threshold : float or None
        rho_T of eq. 5, in [0, 1]; None (default): the cluster's
        ``rho_threshold`` (Li et al. 2022, Sec. 5: 0.5 on CloudLab, 0.6 on AWS,
        found once per platform), else 0.6.  ``meta["rho_threshold_source"]``
        says which.
    overlap : bool
        Overlap correction of eq. 6.
    residual : {"deterministic", "exponential"} or float
        FCFS residual of eq. 2 (default as printed: deterministic, ``S/2``).
    method : {"auto", "exact", "binary", "linearizer", "schweitzer"}
        MVA method (see :func:`async_solve`).
    convoys : {False, True, "spacing"}
        True: workers beyond the saturation population N* move as N* groups
        (module notes, "Convoys"; ours): what a fairly shared link does to
        async workers that start together.  ``"spacing"``: on two or more
        servers, as many convoys as the server's updates do not spread
        (module notes, "Convoys spread by the updates"; ``meta["spread"]``
        gives the weight of the MVA).  False (default): the paper's
        independent workers.
    serialized_bound : bool
        No worker's cycle longer than :func:`serialized_cycle` (module
        notes, "The serialized bound"; ours), which the MVA of P servers
        visited in turn can exceed with few workers; ``meta["serialized"]``
        says whether it bound.  Valid on work-conserving links that drop
        nothing.  False (default): the paper's model as printed, which the
        model selection keeps (docs/validation.md: the bound did not carry to
        a held-out set).
    servers : {"in-turn", "fork-join", "fork-join-to-p"}
        How a worker meets ``config.n_ps`` servers: their stations visited in
        turn (default, the paper's network split over the servers) or all at
        once (:func:`fork_join_solve`, module notes; ours), whose links are
        processor sharing whatever ``discipline`` says.  The same with one
        server and eq. 4.  ``"fork-join-to-p"``: all at once up to P workers,
        beyond P the in-turn network's growth from P (module notes, "Up to P
        workers, then in turn"; ours).

    Notes
    -----
    In :meth:`estimate`, K is ``config.n_replicas`` identical workers, each
    with the profile's ``t_forward``, ``t_backward``; the server update time is
    ``t_update``; ``config.n_ps >= 1`` servers split the model.  The link
    service time is ``M / B`` with B the cluster's goodput
    (``nic_bandwidth * link_efficiency``), bounded by ``per_flow_cap`` when set
    (the rate of a transfer alone on the link; with several transfers the cap
    is not modelled further).  Machines with several GPUs are not modelled
    (Infeasible).  ``config.mode`` is not read: the model is asynchronous.
    ``cluster.update_growth`` does not apply: asynchronously each gradient is
    applied on its own, so the server's service time per gradient stays
    ``t_update`` (g only scales the once-per-step update of sync SGD).
    ``cluster.compute_cv`` is ignored too (MVA uses mean service times; async
    workers with near-constant compute times that stay in lock-step are the
    simulator's job); both are recorded in ``meta``.  On a lossy link
    (``cluster.timeout_probability`` q > 0) each step's push and pull stall
    for ``cluster.retransmit_timeout`` with the probability that any of its
    ``n_ps`` messages does (:func:`async_stall_time`): a delay in the
    worker's own cycle, while the link serves the others.

    The estimate's ``step_time`` is one worker's mean step time, its phases the
    mean response times per station per step (they sum to the step time), its
    ``throughput`` ``steps/s * batch_size`` (samples/s of all workers) and its
    ``bottleneck`` the most utilized station (``"uplink"``, ``"update"``,
    ``"downlink"`` or ``"compute"``).  ``meta`` carries the steps/s, the
    utilizations, the discipline selected by eq. 5 and ``rho_fcfs``.

    Examples
    --------
    >>> from perfmodel.specs import Profile, Cluster, Config
    >>> est = AsyncMVA(discipline="ps").estimate(
    ...     Profile(model_bytes=100e6, t_forward=0.1, t_backward=0.2, t_update=0.01,
    ...             batch_size=32),
    ...     Cluster(machines=8, nic_bandwidth="10Gbps"), Config(n_replicas=4, n_ps=1))
    >>> round(est.step_time, 4), round(est.throughput, 2), est.bottleneck
    (0.5702, 224.49, 'uplink')
    """

    discipline: str = "hybrid"
    rho_threshold: float | None = None
    overlap: bool = False
    residual: str | float = "deterministic"
    method: str = "auto"
    convoys: bool | str = False
    serialized_bound: bool = False
    servers: str = "in-turn"
    #: The configuration's ``n_ps`` parameter servers are used (sweeps read this).
    modes: ClassVar[tuple[str, ...]] = ("async",)
    uses_parameter_servers: ClassVar[bool] = True

    def __post_init__(self):
        checked_options(self.discipline, self.rho_threshold, self.overlap, self.method)
        residual_fraction(self.residual)
        if not (isinstance(self.convoys, (bool, np.bool_)) or self.convoys in CONVOY_RULES):
            raise SpecError("convoys", f"expected one of {', '.join(map(repr, CONVOY_RULES))}, "
                                       f"got {self.convoys!r}")
        _v.boolean("serialized_bound", self.serialized_bound)
        _v.choice("servers", self.servers, SERVER_LAYOUTS)

    def saturation(self, workload: Profile, cluster: Cluster, config: Config) -> float:
        """N* of ``config`` (:func:`saturation_workers`) at the link rate this model uses."""
        check_inputs(workload, cluster, config, type(self).__name__, modes=None,
                     min_servers=1, one_gpu=True)
        return saturation_workers(workload.model_bytes, link_rate(cluster), workload.t_forward,
                                  workload.t_backward, workload.t_update, config.n_ps,
                                  async_stall_time(cluster.timeout_probability,
                                                   cluster.retransmit_timeout, config.n_ps))

    def threshold(self, cluster: Cluster) -> tuple[float, str]:
        """rho_T used on ``cluster`` and where it comes from (see :func:`resolved_threshold`)."""
        return resolved_threshold(self.rho_threshold, cluster)

    def solve(self, workload: Profile, cluster: Cluster, config: Config) -> AsyncSolution:
        """The full :class:`AsyncSolution` behind :meth:`estimate`."""
        check_inputs(workload, cluster, config, type(self).__name__, modes=None,
                     min_servers=1, one_gpu=True)
        stall = async_stall_time(cluster.timeout_probability, cluster.retransmit_timeout,
                                 config.n_ps)
        if self.servers == "fork-join":
            return fork_join_solve(workload.model_bytes, link_rate(cluster),
                                   workload.t_forward, workload.t_backward,
                                   workload.t_update, config.n_replicas, n_ps=config.n_ps,
                                   overlap=self.overlap, t_stall=stall)
        return async_solve(workload.model_bytes, link_rate(cluster), workload.t_forward,
                           workload.t_backward, workload.t_update, config.n_replicas,
                           self.discipline, self.threshold(cluster)[0], self.overlap,
                           n_ps=config.n_ps, residual=self.residual, method=self.method,
                           t_stall=stall)

    def estimate(self, workload: Profile, cluster: Cluster, config: Config) -> Estimate:
        """Predict Async-SGD with ``config.n_replicas`` workers and ``config.n_ps`` servers.

        Parameters
        ----------
        workload : Profile
            One worker's profile (M, T_F, T_B, T_S, batch size).
        cluster : Cluster
            Bandwidth, link efficiency, per-flow cap.
        config : Config
            ``n_replicas`` workers (K), ``n_ps`` servers (>= 1).

        Returns
        -------
        Estimate
            See the class notes.

        Raises
        ------
        SpecError
            ``config.n_ps`` is 0, or an argument is not the expected spec.
        Infeasible
            Model parallelism (``config.n_workers > 1``), several GPUs per
            machine, or an exact method beyond its state bound.
        """
        est = self._mva_estimate(workload, cluster, config)
        return self._serialized(est, workload, cluster, config) if self.serialized_bound else est

    def _serialized(self, est: Estimate, workload: Profile, cluster: Cluster,
                    config: Config) -> Estimate:
        """``est``, or the serialized network's cycle where the MVA's is longer: the
        phases of :func:`serialized_cycle`, which sum to it."""
        k, p = config.n_replicas, config.n_ps
        transfer = workload.model_bytes * max(1.0, k / p) / link_rate(cluster)
        phases = {"downlink": transfer, "forward": workload.t_forward,
                  "backward": workload.t_backward, "uplink": transfer,
                  "update": k * workload.t_update / p}
        stall = async_stall_time(cluster.timeout_probability, cluster.retransmit_timeout, p)
        if stall:
            phases["timeouts"] = stall
        cycle = sum(phases.values())
        if est.step_time <= cycle:
            return dataclasses.replace(est, meta=dict(est.meta, serialized=False))
        meta = dict(est.meta, serialized=True, steps_per_second=k / cycle)
        return Estimate.from_phases(phases, k * workload.batch_size,
                                    epoch_samples=config.epoch_samples, meta=meta)

    def _mva_estimate(self, workload: Profile, cluster: Cluster, config: Config) -> Estimate:
        if self.servers == "fork-join-to-p":
            return self._to_p_estimate(workload, cluster, config)
        if self.convoys == "spacing":
            return self._spaced_estimate(workload, cluster, config)
        if self.convoys:
            n_star = self.saturation(workload, cluster, config)
            groups = convoy_groups(config.n_replicas, n_star)
            if groups[0][0] < config.n_replicas:
                return self._convoy_estimate(workload, cluster, config, groups, n_star)
        sol = self.solve(workload, cluster, config)
        rho_t, source = self.threshold(cluster)
        eq = (_EQUATION["ps"] + ", the servers as one fork-join (ours)"
              if self.servers == "fork-join" else _EQUATION[self.discipline])
        eq += " and eq. 6" if self.overlap else ""
        meta = {"model": type(self).__name__, "discipline": self.discipline,
                "selected": sol.discipline, "rho_fcfs": sol.rho_fcfs,
                "rho_threshold": rho_t, "rho_threshold_source": source, "overlap": self.overlap,
                "residual": self.residual, "method": sol.method, "equation": eq,
                "convoys": self.convoys, "servers": self.servers,
                "workers": config.n_replicas, "n_ps": config.n_ps,
                "steps_per_second": sol.throughput,
                "utilization": dict(sol.utilization),
                "link_rate": link_rate(cluster),
                # Recorded, not used: each gradient is one update of t_update
                # (so update_growth has no effect), and MVA sees mean times only.
                "update_growth": cluster.update_growth, "compute_cv": cluster.compute_cv,
                "timeout_probability": cluster.timeout_probability,
                "retransmit_timeout": cluster.retransmit_timeout}
        return estimate_from_solution(sol, workload, config, meta)

    def _to_p_estimate(self, workload: Profile, cluster: Cluster, config: Config) -> Estimate:
        """The fork-join up to ``config.n_ps`` workers, beyond it the in-turn network scaled
        to meet it at P (module notes, "Up to P workers, then in turn")."""
        k, p = config.n_replicas, config.n_ps
        joined = dataclasses.replace(self, servers="fork-join")._mva_estimate(
            workload, cluster, config.replace(n_replicas=min(k, p)))
        if k <= p:
            return dataclasses.replace(joined, meta=dict(joined.meta, servers=self.servers))
        in_turn = dataclasses.replace(self, servers="in-turn")
        at_p = in_turn._mva_estimate(workload, cluster, config.replace(n_replicas=p))
        est = in_turn._mva_estimate(workload, cluster, config)
        scale = joined.step_time / at_p.step_time
        meta = dict(est.meta, servers=self.servers, to_p_scale=scale,
                    steps_per_second=est.meta["steps_per_second"] / scale,
                    equation=est.meta["equation"] + ", scaled to the fork-join at P (ours)")
        scaled = Estimate.from_phases({name: v * scale for name, v in est.phases.items()},
                                      k * workload.batch_size,
                                      epoch_samples=config.epoch_samples, meta=meta)
        return dataclasses.replace(scaled, bottleneck=est.bottleneck)

    def _spaced_estimate(self, workload: Profile, cluster: Cluster,
                         config: Config) -> Estimate:
        """The convoys' step and the independent workers', weighted by how far the updates
        spread the workers (:func:`update_spread`; on two or more servers only)."""
        plain = dataclasses.replace(self, convoys=False)
        free = plain._mva_estimate(workload, cluster, config)
        w = (1.0 if config.n_ps < 2 else
             float(update_spread(config.n_replicas, workload.t_update, workload.model_bytes,
                                 link_rate(cluster))))
        n_star = self.saturation(workload, cluster, config) if w < 1.0 else math.inf
        groups = convoy_groups(config.n_replicas, n_star)
        if groups[0][0] == config.n_replicas:   # spread apart, or no convoy up to N*
            return dataclasses.replace(free, meta=dict(free.meta, convoys="spacing", spread=w))
        held = self._convoy_estimate(workload, cluster, config, groups, n_star)
        phases = {name: (1.0 - w) * held.phases.get(name, 0.0) + w * value
                  for name, value in free.phases.items()}
        meta = dict(free.meta, convoys="spacing", spread=w,
                    steps_per_second=config.n_replicas / sum(phases.values()))
        est = Estimate.from_phases(phases, config.n_replicas * workload.batch_size,
                                   epoch_samples=config.epoch_samples, meta=meta)
        return dataclasses.replace(est, bottleneck=free.bottleneck)

    def _convoy_estimate(self, workload: Profile, cluster: Cluster, config: Config,
                         groups: list, n_star: float) -> Estimate:
        """K workers as ``groups`` (:func:`convoy_groups`): each group one worker of the
        MVA moving K / g workers' bytes and updates; step times interpolated."""
        k = config.n_replicas
        plain = dataclasses.replace(self, convoys=False, serialized_bound=False)
        parts = []
        for g, weight in groups:
            n = k / g
            grouped = workload.replace(model_bytes=workload.model_bytes * n,
                                       t_update=workload.t_update * n)
            parts.append((plain.estimate(grouped, cluster, config.replace(n_replicas=g)),
                          weight))
        main = max(parts, key=lambda part: part[1])[0]
        phases = {name: sum(w * est.phases[name] for est, w in parts) for name in main.phases}
        meta = dict(main.meta, convoys=True, workers=k, saturation_workers=n_star,
                    groups=[g for g, _ in groups],
                    steps_per_second=k / sum(phases.values()))
        est = Estimate.from_phases(phases, k * workload.batch_size,
                                   epoch_samples=config.epoch_samples, meta=meta)
        return dataclasses.replace(est, bottleneck=main.bottleneck)

    def estimate_many(self, workload: Profile, cluster: Cluster,
                      batch: ConfigBatch) -> BatchEstimate | None:
        """:meth:`estimate`'s step time, throughput and epoch time of every configuration
        of ``batch``: one single-class recursion per server count, all server counts
        at once (the exact method ``estimate`` uses for identical workers).

        None (price them one by one) with ``overlap`` (eq. 6 solves again with
        delays that depend on K), ``convoys``, ``serialized_bound``, the fork-join
        ``servers``, an approximate
        ``method``, model parallelism, several GPUs per machine, or more workers than
        the exact bound.
        """
        if self.overlap or self.convoys or self.serialized_bound or \
                self.servers != "in-turn" or self.method not in ("auto", "exact") or \
                not async_batchable(workload, cluster, batch):
            return None
        q, rto = cluster.timeout_probability, cluster.retransmit_timeout
        return async_solve_many(batch, workload, link_rate(cluster), self.discipline,
                                  self.threshold(cluster)[0], residual_fraction(self.residual),
                                  stall=lambda servers: async_stall_time(q, rto, servers))
