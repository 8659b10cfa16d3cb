"""Seed 001: Global Synchronization Time (GST), pipelines, maxima of workers, network.

Seed 001 models one epoch of synchronous data-parallel training with N workers
and K parameter servers as a sequence of *global synchronization times*: the
time from the moment workers fall out of step (the previous iteration's
backward communication BC and update UP) to the moment every gradient has been
aggregated (AG).  Each iteration's GST is the **maximum over workers** of their
per-worker times, and the epoch time is the sum of those maxima (barrier
semantics, DESIGN.md).

Two levels, as everywhere in perfmodel:

* formulas -- pure functions of floats or arrays that broadcast:

  - maxima of normals (eqs. 7-9): :func:`expected_max_normal` (the contract
    function, E[max of n iid normals], numerical integration accurate to
    ~1e-14 relative for n up to 10^6 and beyond), the distribution of the
    maximum (:func:`max_normal_cdf`, :func:`max_normal_sf`,
    :func:`max_normal_pdf`, :func:`max_normal_ppf`, :func:`max_normal_std`),
    non-identical normals (:func:`expected_max_normals`), Clark's exact
    two-variable formula (:func:`clark_expected_max`) and Blom's closed-form
    approximation (:func:`blom_max_normal`, error stated there);
  - heavier tails: :func:`expected_max`, :func:`max_cdf`, :func:`max_ppf`,
    :func:`sample_max` for any scipy.stats frozen distribution or an
    :class:`Empirical` sample (integration, exact sums or seeded Monte Carlo);
  - GST and epoch time (Definition 4, eqs. 1-2, 9): :func:`gst`,
    :func:`epoch_time` (realized per-worker times), :func:`expected_epoch_time`
    (normal or other per-worker times) and :func:`monte_carlo_epoch_time`;
  - pipelines (eqs. 3-6): :func:`type1_completion`, :func:`type2_completion`,
    :func:`io_pipeline`, :func:`layer_pipeline`;
  - network (eqs. 10-18): :func:`barrier_links`, :func:`packet_count`,
    :func:`non_barrier_time`, :func:`barrier_forward_time`,
    :func:`barrier_time`, :func:`communication_time`,
    :func:`aggregation_granularity`, :func:`aggregation_time`,
    :func:`aggregation_delay_min`, :func:`aggregation_delay_max`,
    :func:`aggregation_delay`, :func:`max_aggregation_time`;
  - use cases of Sec. V-C: :func:`compression_time`,
    :func:`best_compression_ratio`, :func:`speedup_ratio`,
    :func:`bottleneck_evaluation`.

* model -- :class:`GST`, a frozen object holding only options, whose
  ``estimate(profile, cluster, config)`` returns an
  :class:`~perfmodel.result.Estimate` with the expected step time, its
  ``p50``/``p99`` in ``meta`` and the eq. 9 epoch time.

Decisions on the paper's ambiguities (DESIGN.md and below), each a named option:

* epoch time = sum over iterations of the expected maxima (eq. 2, third line,
  and eq. 9); eq. 2's tail term ``max_n(t_bc^M + t_up^M)`` is optional
  (``tail``), since eq. 9 as printed drops it;
* sigma(m) of eq. 7 is given directly (one tunable, ``sigma``); the GST model
  also accepts ``cv`` (sigma proportional to the worker-side mean), added to it,
  since the paper says the sigma of a GST is the sum of its processes' values;
* R in eqs. 10 and 15 is the link bandwidth B;
* units (``units=``): eqs. 11, 15 and 16 as printed mix packets and bytes.  In
  ``"printed"`` (the default) they are evaluated literally in SI units:
  eq. 11 ``1 / (S_f - 1/B)``, eq. 15 ``G / B``, eq. 16 ``(N G - N + 1) / B``
  with G in packets and B in bytes/s (which makes the two delays negligible).
  ``"sound"`` is the dimensionally consistent reading: packets become bytes
  through the packet size (``G pks / B`` and ``(N G - N + 1) pks / B``) and the
  M/M/1 arrival rate of eq. 11 is a packet rate, ``B / pks`` unless given
  (``1 / (S_f - lambda)``; infinite when ``lambda >= S_f``);
* eq. 16 is a maximum delay: when G < 1 packet it would fall below eq. 15, so
  the maximum is taken as ``max(eq. 16, eq. 15)``;
* eq. 18 uses G of eq. 13 unless a granularity is given; the ceiling of
  ``PN / (G K)`` is taken with a relative tolerance of 1e-12 so that eq. 13's
  own G gives exactly one round;
* gradient compression (Sec. V-C): compression time and ratio follow an
  inverse-square law ``t_c = t_0 / (1 - r_c)**2`` (our reading of "inverse
  square relationship": more compression costs more time, unboundedly as
  ``r_c -> 1``); ``t_c`` is added to FC and every packet count is multiplied
  by ``1 - r_c``.

Examples
--------
>>> round(expected_max_normal(2), 12), round(1 / math.sqrt(math.pi), 12)
(0.564189583548, 0.564189583548)
>>> expected_max_normal(np.array([1, 10, 1000]), mu=1.0, sigma=0.1).round(6)
array([1.      , 1.153875, 1.324144])

References
----------
Seed 001 (``001_38b11805cb370b4b.txt``): Zhang et al., "Performance Modeling and
Analysis of Distributed Deep Neural Network Training with Parameter Server",
Definition 4, eqs. 1-18, Sec. V-C, Fig. 6.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy import integrate, special

from . import _validate as _v
from .errors import Infeasible, SpecError
from .interface import check_inputs
from .result import Estimate
from .specs import Cluster, Config, Profile

__all__ = [
    # constants
    "PROCESSES", "PHASES", "UNITS", "METHODS", "INTERVALS", "BLOM_ALPHA", "BLOM_MAX_ERROR",
    # maxima of normals (eqs. 7-9)
    "expected_max_normal", "max_normal_std", "max_normal_cdf", "max_normal_sf",
    "max_normal_pdf", "max_normal_ppf", "expected_max_normals", "clark_expected_max",
    "blom_max_normal",
    # other distributions
    "Empirical", "expected_max", "max_cdf", "max_ppf", "sample_max",
    # GST and epoch time (Definition 4, eqs. 1-2, 9)
    "gst", "epoch_time", "expected_epoch_time", "monte_carlo_epoch_time",
    # pipelines (eqs. 3-6)
    "type1_completion", "type2_completion", "io_pipeline", "layer_pipeline",
    # network (eqs. 10-18)
    "barrier_links", "packet_count", "non_barrier_time", "barrier_forward_time",
    "barrier_time", "communication_time", "aggregation_granularity", "aggregation_time",
    "aggregation_delay_min", "aggregation_delay_max", "aggregation_delay",
    "max_aggregation_time",
    # use cases (Sec. V-C)
    "compression_time", "speedup_ratio", "best_compression_ratio", "bottleneck_evaluation",
    # model
    "GST",
]

#: The processes of one iteration (Sec. III-A, Definitions 1-3), in time order.
PROCESSES = ("io", "fp", "bp", "fc", "ag", "bc", "up")
#: Phases of a :class:`GST` estimate: the processes' exposed times and the
#: expected excess of the slowest worker over the mean (eqs. 7-9).
PHASES = PROCESSES + ("straggler",)
#: Readings of eqs. 11, 15, 16 (see the module notes).
UNITS = ("printed", "sound")
#: Ways to compute an expected maximum for a non-normal distribution.
METHODS = ("quad", "mc")
#: Intervals :class:`GST` can attach (``interval=``; None: none).
INTERVALS = ("iteration",)
#: Blom's constant alpha (Blom 1958) of :func:`blom_max_normal`.
BLOM_ALPHA = 0.375
#: Largest absolute error of :func:`blom_max_normal` (alpha = 0.375) for
#: 1 <= n <= 10^6, in units of sigma (at n = 2).
BLOM_MAX_ERROR = 0.0253

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


# --------------------------------------------------------------------------
# Maxima of iid normals (eqs. 7-9)
# --------------------------------------------------------------------------

#: Trapezoid nodes of the standardized variable z in x = c_n + s_n z, where
#: c_n = Phi^-1(1 - 1/n) and s_n = min(1, 1 / (n phi(c_n))) are the location and
#: scale of the maximum (Gumbel's for large n).  The density of the maximum is
#: analytic in a strip of half-width ~pi/2 in z and negligible (< 1e-40) outside
#: [-10, 40], so the trapezoid rule with step 0.2 is exact to ~exp(-2 pi 1.5 / 0.2)
#: ~ 1e-20 relative; what remains is rounding (~5e-15).
_NODES = np.arange(-10.0, 40.0 + 1e-9, 0.2)
#: Unique n values handled at once (memory: _CHUNK x len(_NODES) floats).
_CHUNK = 2048


def _std_max_stats(n) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of the maximum of n iid standard normals (n: 1-D, >= 1)."""
    n = np.asarray(n, dtype=float).ravel()
    mean, var = np.zeros(n.shape), np.ones(n.shape)
    idx = np.flatnonzero(n > 1)
    for start in range(0, idx.size, _CHUNK):
        sel = idx[start:start + _CHUNK]
        k = n[sel, None]
        c = -special.ndtri(1.0 / k)  # Phi^-1(1 - 1/n), accurate for any n
        s = np.minimum(1.0, 1.0 / (k * np.exp(-0.5 * c * c - _LOG_SQRT_2PI)))
        x = c + s * _NODES
        w = np.exp(np.log(k) - 0.5 * x * x - _LOG_SQRT_2PI + (k - 1.0) * special.log_ndtr(x))
        total = w.sum(axis=1)
        m = (x * w).sum(axis=1) / total
        d = x - m[:, None]
        mean[sel] = m
        var[sel] = (d * d * w).sum(axis=1) / total
    return mean, var


def _std_max(n, what: str = "mean"):
    """Mean (or variance) of the maximum of n standard normals, shaped like n."""
    if isinstance(n, float):
        stats = _std_max_stats(np.array([n]))
        return float(stats[0 if what == "mean" else 1][0])
    n = np.asarray(n, dtype=float)
    uniq, inverse = np.unique(n, return_inverse=True)
    stats = _std_max_stats(uniq)[0 if what == "mean" else 1]
    return stats[inverse].reshape(n.shape)


def expected_max_normal(n, mu=0.0, sigma=1.0):
    """Expected maximum of n independent normals N(mu, sigma^2) (the contract function).

    ``E[max] = mu + sigma * e(n)`` with ``e(n) = integral of x n phi(x) Phi(x)^(n-1) dx``,
    the density of the maximum (eq. 8) integrated against x (eq. 9).  e(n) is
    computed by the trapezoid rule on a variable centred and scaled on the
    maximum itself (``c = Phi^-1(1 - 1/n)``, ``s = min(1, 1/(n phi(c)))``; the
    integrand is evaluated in logarithms with ``log_ndtr``), which converges
    geometrically for this analytic integrand: the result agrees with mpmath
    at 30 digits to ~5e-15 relative for every n tested from 2 to 10^12.
    ``n = 1`` returns ``mu`` exactly.

    Parameters
    ----------
    n : int or array_like, workers
        Number of iid variables (whole, >= 1).
    mu : float or array_like, s
        Mean of each variable (any finite value).
    sigma : float or array_like, s
        Standard deviation of each variable (>= 0; 0 gives ``mu``).

    Returns
    -------
    float or ndarray, s
        ``E[max]``; a float for scalar input, otherwise an array of the
        broadcast shape.  Repeated n values are integrated once.

    Raises
    ------
    SpecError
        Naming the argument: n not a whole number >= 1, mu not finite, sigma
        negative or not finite.

    See Also
    --------
    blom_max_normal : closed-form approximation (error <= 0.0253 sigma).
    expected_max_normals : non-identical normals.
    max_normal_ppf : quantiles of the maximum.

    References
    ----------
    Seed 001 eqs. 7-9 (normal per-worker GST, F_max = F^N, T = sum of E[max]).

    Examples
    --------
    >>> expected_max_normal(1, mu=3.0, sigma=2.0)
    3.0
    >>> round(expected_max_normal(3), 12) == round(1.5 / math.sqrt(math.pi), 12)
    True
    >>> expected_max_normal([2, 1024], 0.5, 0.01).round(6)
    array([0.505642, 0.532482])
    """
    k = _v.counts("n", n)
    m = _v.finite_real("mu", mu)
    s = _v.checked("sigma", sigma)
    return _v.broadcast_result(m + s * _std_max(k), k, m, s)


def max_normal_std(n, sigma=1.0):
    """Standard deviation of the maximum of n iid normals with standard deviation sigma.

    Same quadrature as :func:`expected_max_normal` (central second moment).

    Parameters
    ----------
    n : int or array_like, workers
        Number of iid variables (whole, >= 1).
    sigma : float or array_like, s
        Standard deviation of each variable (>= 0).

    Returns
    -------
    float or ndarray, s
        ``std(max)``; ``sigma`` for n = 1, ``sigma * sqrt(1 - 1/pi)`` for n = 2.

    References
    ----------
    Seed 001 eq. 8 (distribution of the maximum).

    Examples
    --------
    >>> round(max_normal_std(2), 12) == round(math.sqrt(1 - 1 / math.pi), 12)
    True
    """
    k = _v.counts("n", n)
    s = _v.checked("sigma", sigma)
    return _v.broadcast_result(s * np.sqrt(_std_max(k, "var")), k, s)


def _z(t, mu, sigma):
    """(t - mu) / sigma with sigma = 0 mapped to +-inf (and 0/0 to +inf: t == mu counts as <=)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (np.asarray(t, dtype=float) - mu) / sigma
    return np.where(np.asarray(sigma) == 0, np.where(np.asarray(t) >= mu, np.inf, -np.inf), z)


def max_normal_cdf(t, n, mu=0.0, sigma=1.0):
    """P(max of n iid N(mu, sigma^2) <= t) = Phi((t - mu)/sigma)^n (eq. 8).

    Evaluated as ``exp(n log Phi(z))`` so that it stays accurate in both tails
    for n up to 10^6 and beyond.

    Parameters
    ----------
    t : float or array_like, s
        Where to evaluate the distribution function.
    n : int or array_like, workers
        Number of iid variables (whole, >= 1).
    mu : float or array_like, s
        Mean of each variable.
    sigma : float or array_like, s
        Standard deviation of each variable (>= 0; 0 is a step at mu).

    Returns
    -------
    float or ndarray
        Probabilities in [0, 1].

    References
    ----------
    Seed 001 eq. 8, F_max(m, t) = F^N(m, t).

    Examples
    --------
    >>> max_normal_cdf(0.0, 3)
    0.125
    """
    x = _v.finite_real("t", t)
    k = _v.counts("n", n)
    m = _v.finite_real("mu", mu)
    s = _v.checked("sigma", sigma)
    return _v.broadcast_result(np.exp(k * special.log_ndtr(_z(x, m, s))), x, k, m, s)


def max_normal_sf(t, n, mu=0.0, sigma=1.0):
    """P(max of n iid N(mu, sigma^2) > t) = 1 - Phi(z)^n, accurate far in the upper tail.

    Parameters
    ----------
    t, n, mu, sigma
        As in :func:`max_normal_cdf`.

    Returns
    -------
    float or ndarray
        Probabilities in [0, 1].

    References
    ----------
    Seed 001 eq. 8.

    Examples
    --------
    >>> float(max_normal_sf(10.0, 1000))   # ~ 1000 * 7.6e-24
    7.61985302416047e-21
    """
    x = _v.finite_real("t", t)
    k = _v.counts("n", n)
    m = _v.finite_real("mu", mu)
    s = _v.checked("sigma", sigma)
    z = _z(x, m, s)
    # n log Phi(z) = n log1p(-Q(z)); -expm1 keeps the tiny upper-tail values exact.
    return _v.broadcast_result(-np.expm1(k * np.log1p(-special.ndtr(-z))), x, k, m, s)


def max_normal_pdf(t, n, mu=0.0, sigma=1.0):
    """Density of the maximum of n iid N(mu, sigma^2): n phi(z) Phi(z)^(n-1) / sigma.

    Parameters
    ----------
    t, n, mu
        As in :func:`max_normal_cdf`.
    sigma : float or array_like, s
        Standard deviation of each variable (> 0: a density needs spread).

    Returns
    -------
    float or ndarray, 1/s
        The density f_max of eq. 8.

    References
    ----------
    Seed 001 eq. 8 ("f_max is obtained by differentiating" F_max).

    Examples
    --------
    >>> round(max_normal_pdf(0.0, 2), 12) == round(2 * 0.5 / math.sqrt(2 * math.pi), 12)
    True
    """
    x = _v.finite_real("t", t)
    k = _v.counts("n", n)
    m = _v.finite_real("mu", mu)
    s = _v.checked("sigma", sigma, positive=True)
    z = (x - m) / s
    logf = (np.log(k) - 0.5 * z * z - _LOG_SQRT_2PI + (k - 1.0) * special.log_ndtr(z)
            - np.log(s))
    return _v.broadcast_result(np.exp(logf), x, k, m, s)


def max_normal_ppf(q, n, mu=0.0, sigma=1.0):
    """Quantile of the maximum of n iid normals: mu + sigma Phi^-1(q^(1/n)).

    Computed as ``ndtri_exp(log(q) / n)``, which keeps full precision when
    ``q^(1/n)`` is within 1e-16 of 1 (large n): the percentiles of the step
    time for thousands of workers.

    Parameters
    ----------
    q : float or array_like
        Probabilities in [0, 1] (0 gives -inf and 1 gives +inf when sigma > 0).
    n, mu, sigma
        As in :func:`max_normal_cdf`.

    Returns
    -------
    float or ndarray, s
        The q-quantile of the maximum.

    References
    ----------
    Seed 001 eq. 8 (inverse of F^N).

    Examples
    --------
    >>> max_normal_ppf(0.5, 1, mu=2.0)
    2.0
    >>> round(max_normal_ppf(0.99, 1024, mu=0.1, sigma=0.005), 6)
    0.121345
    """
    p = _v.checked("q", q, maximum=1.0)
    k = _v.counts("n", n)
    m = _v.finite_real("mu", mu)
    s = _v.checked("sigma", sigma)
    with np.errstate(divide="ignore"):
        z = special.ndtri_exp(np.log(p) / k)
    with np.errstate(invalid="ignore"):
        out = np.where(np.asarray(s) == 0, m, m + s * z)
    return _v.broadcast_result(out, p, k, m, s)


def blom_max_normal(n, mu=0.0, sigma=1.0, alpha=BLOM_ALPHA):
    """Blom's closed-form approximation of E[max of n iid normals].

    ``mu + sigma * Phi^-1((n - alpha) / (n - 2 alpha + 1))``, alpha = 0.375.
    Exact for n = 1.  Error against :func:`expected_max_normal`, in units of
    sigma, over 1 <= n <= 10^6 (alpha = 0.375): largest at n = 2, +0.0253
    (4.5 % of 1/sqrt(pi)); +0.0231 at n = 3; for 10 <= n <= 10^6 at most
    0.0157 in absolute value and 0.52 % relative; it tends to about -0.0154
    at n = 10^6 (the approximation does not converge as n grows).  Use it for
    quick estimates only; :func:`expected_max_normal` is both exact and fast.

    Parameters
    ----------
    n : int or array_like, workers
        Number of iid variables (whole, >= 1).
    mu, sigma : float or array_like, s
        Mean and standard deviation (>= 0) of each variable.
    alpha : float
        Blom's constant in [0, 0.5).

    Returns
    -------
    float or ndarray, s
        The approximation.

    References
    ----------
    Blom, G. (1958), Statistical Estimates and Transformed Beta-Variables;
    seed 001 eq. 9 (the quantity approximated).

    Examples
    --------
    >>> round(blom_max_normal(2), 4)   # exact: 0.5642
    0.5895
    """
    k = _v.counts("n", n)
    m = _v.finite_real("mu", mu)
    s = _v.checked("sigma", sigma)
    a = _v.checked("alpha", alpha, maximum=0.5)
    if np.any(np.asarray(a) >= 0.5):
        raise SpecError("alpha", f"must be < 0.5, got {alpha!r}")
    return _v.broadcast_result(m + s * special.ndtri((k - a) / (k - 2.0 * a + 1.0)), k, m, s, a)


# --------------------------------------------------------------------------
# Maxima of non-identical normals
# --------------------------------------------------------------------------

#: Cells (nodes x workers) evaluated at once by expected_max_normals.
_CELLS = 1 << 17
#: Upper tail mass ignored by the integration.
_TAIL = 1e-18
#: Workers narrower than this fraction of the widest are deterministic (point masses).
_POINT = 1e-15
#: 16-point Gauss-Legendre rule on [-1, 1] (one per panel).
_GL_X, _GL_W = np.polynomial.legendre.leggauss(16)


def clark_expected_max(mu1, sigma1, mu2, sigma2, rho=0.0):
    """Clark's exact E[max(X1, X2)] of two jointly normal variables.

    ``a = sqrt(s1^2 + s2^2 - 2 rho s1 s2)``, ``alpha = (mu1 - mu2) / a``,
    ``E = mu1 Phi(alpha) + mu2 Phi(-alpha) + a phi(alpha)`` (``max(mu1, mu2)``
    when a = 0).

    Parameters
    ----------
    mu1, mu2 : float or array_like, s
        Means.
    sigma1, sigma2 : float or array_like, s
        Standard deviations (>= 0).
    rho : float or array_like
        Correlation in [-1, 1].

    Returns
    -------
    float or ndarray, s
        The expected maximum.

    References
    ----------
    Clark, C. E. (1961), "The greatest of a finite set of random variables",
    Operations Research 9(2), eq. 2; the two-worker case of seed 001 eq. 9.

    Examples
    --------
    >>> round(clark_expected_max(0.0, 1.0, 0.0, 1.0), 12) == round(1 / math.sqrt(math.pi), 12)
    True
    """
    m1, m2 = _v.finite_real("mu1", mu1), _v.finite_real("mu2", mu2)
    s1, s2 = _v.checked("sigma1", sigma1), _v.checked("sigma2", sigma2)
    r = _v.finite_real("rho", rho)
    if np.any(np.abs(r) > 1):
        raise SpecError("rho", f"must be in [-1, 1], got {rho!r}")
    a = np.sqrt(np.maximum(s1 * s1 + s2 * s2 - 2.0 * r * s1 * s2, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        al = (m1 - m2) / a
        e = m1 * special.ndtr(al) + m2 * special.ndtr(-al) + a * np.exp(-0.5 * al * al
                                                                          - _LOG_SQRT_2PI)
    return _v.broadcast_result(np.where(a > 0, e, np.maximum(m1, m2)), m1, m2, s1, s2, r)


def _gumbel_frame(counts):
    """Location c_n and scale s_n (standard units) of the max of ``counts`` iid normals."""
    c = np.asarray(counts, dtype=float)
    loc = np.where(c > 1, -special.ndtri(1.0 / c), 0.0)
    scale = np.where(c > 1, np.minimum(1.0, 1.0 / (c * np.exp(-0.5 * loc * loc
                                                              - _LOG_SQRT_2PI))), 1.0)
    return loc, scale


def _panels(lo, hi, win_lo, win_hi, width) -> np.ndarray:
    """Panel edges on [lo, hi]: no panel wider than ``width`` of any window it meets.

    A sweep from lo: the panel at x is as wide as the narrowest window
    containing x allows (the widest window's width elsewhere), and stops at
    the start of any narrower window, so every feature of every worker is
    covered by panels of at most its own width.
    """
    order = np.argsort(win_lo)
    win_lo, win_hi, width = win_lo[order], win_hi[order], width[order]
    default = width.max()
    edges, x = [lo], lo
    while x < hi:
        active = (win_lo <= x) & (win_hi > x)
        w = width[active].min() if active.any() else default
        end = x + w
        sooner = (win_lo > x) & (win_lo < end) & (width < w)
        if sooner.any():
            end = win_lo[sooner].min()
        x = min(max(end, np.nextafter(x, np.inf)), hi)
        edges.append(x)
    return np.asarray(edges)


def _max_normals_row(m, s, c) -> float:
    if (m == m[0]).all() and (s == s[0]).all():  # identical workers: the iid integral
        return float(m[0] + s[0] * _std_max(float(c.sum())))
    return _max_normals_panels(m, s, c)


def _max_normals_panels(m, s, c) -> float:
    """E[max] of independent normals N(m_i, s_i^2), each counted c_i times.

    ``E[M] = floor + int_floor^hi (1 - F(x)) dx`` with ``F = prod Phi_i^c_i``:
    ``floor = max_i(m_i - 10 s_i)`` (below it F < Phi(-10) ~ 7.6e-24, and F = 0
    below a deterministic worker) and hi where ``sum_i c_i Q < 1e-18``.  The
    integral is composite 16-point Gauss-Legendre on panels no wider than
    2 s_i s_n within each worker's window ``m_i + s_i (c_n + [-10, 36] s_n)``
    (c_n, s_n: location and scale of the max of N = sum c_i iid standard
    normals: the max of many comparable workers is narrower than each),
    evaluated in logarithms with ``log_ndtr``.  Accuracy ~1e-14 of the largest
    sigma (Clark's formula, the iid integral); cost proportional to panels x
    workers, the panels growing with log(largest / smallest relevant sigma).
    """
    # A worker 1e15 times narrower than the widest, or than the means' rounding
    # (1e-13 of the largest |mean|), is a point mass: the error is below its
    # sigma, 1/sigma cannot overflow and every panel is wider than a few ulps.
    s = np.where(s > max(_POINT * s.max(), 1e-13 * np.abs(m).max()), s, 0.0)
    floor = float((m - 10.0 * s).max())
    rnd = s > 0
    if not rnd.any():
        return float(m.max())
    m, s, c = m[rnd], s[rnd], c[rnd]
    hi = float((m + s * -special.ndtri(_TAIL / c.sum())).max())
    if hi <= floor:
        return floor
    # The maximum of many comparable workers is narrower than any one of them:
    # resolve every worker's window at the scale of the max of all N of them.
    loc, scale = (float(v) for v in _gumbel_frame(c.sum()))
    win_lo, win_hi = m + s * (loc - 10.0 * scale), m + s * (loc + 36.0 * scale)
    win_lo = np.minimum(win_lo, m - 10.0 * s)
    near = (win_hi > floor) & (win_lo < hi)
    edges = _panels(floor, hi, win_lo[near], win_hi[near], 2.0 * scale * s[near])
    a, b = edges[:-1, None], edges[1:, None]
    xs = (0.5 * (a + b) + 0.5 * (b - a) * _GL_X).ravel()
    ws = (0.5 * (b - a) * _GL_W).ravel()
    inv = 1.0 / s
    total = 0.0
    step = max(1, _CELLS // m.size)
    for i in range(0, xs.size, step):
        x = xs[i:i + step, None]
        log_cdf = (c * special.log_ndtr((x - m) * inv)).sum(axis=1)
        total += float(ws[i:i + step] @ -np.expm1(log_cdf))
    return floor + total


def expected_max_normals(mu, sigma, counts=None, *, axis=-1):
    """Expected maximum of independent, non-identical normals N(mu_i, sigma_i^2).

    ``E[max] = x0 + int_x0^inf (1 - F(x)) dx`` with
    ``F = prod_i Phi((x - mu_i)/sigma_i)^counts_i`` and x0 below which F is
    negligible, integrated by composite Gauss-Legendre on panels that follow
    every worker's own scale (so a worker a million times narrower than
    another is still resolved), in logarithms; accuracy ~1e-14 of the largest
    sigma in the tests (against Clark's formula, the iid integral and Monte
    Carlo).  Workers with sigma = 0 are deterministic.  Each row (e.g.
    iteration) is integrated separately; the cost is about panels x workers
    with tens to a few hundred panels.  ``counts`` groups identical workers:
    ``mu=[a, b], sigma=[s, t], counts=[512, 512]`` is 1024 workers of two kinds
    at the cost of two.

    Parameters
    ----------
    mu : array_like, s
        Means; the workers lie along ``axis``, other axes (iterations, ...)
        are independent problems.
    sigma : float or array_like, s
        Standard deviations (>= 0), broadcast against ``mu``.
    counts : int or array_like, optional
        Multiplicity of each worker (whole, >= 1), broadcast against ``mu``.
    axis : int
        The workers' axis.

    Returns
    -------
    float or ndarray, s
        ``E[max]`` over ``axis``: a float for 1-D input, otherwise an array
        with that axis removed.

    Raises
    ------
    SpecError
        Naming the argument, for bad values or an empty workers axis.

    References
    ----------
    Seed 001 eqs. 8-9 with per-worker mu and sigma (F_max = prod_n P(t^{m,n} <= t)).

    Examples
    --------
    >>> round(expected_max_normals([0.0, 0.0], [1.0, 1.0]), 10) == round(1 / math.sqrt(math.pi), 10)
    True
    >>> round(expected_max_normals([1.0, 2.0], [0.5, 0.0]), 6)   # a deterministic 2 s worker
    2.004245
    """
    m = _v.finite_real("mu", mu)
    s = _v.checked("sigma", sigma)
    k = 1.0 if counts is None else _v.counts("counts", counts)
    m, s, k = (np.asarray(a, dtype=float) for a in np.broadcast_arrays(m, s, k))
    if m.ndim == 0:
        m, s, k = m[None], s[None], k[None]
    ax = _v.axis_index("axis", axis, m.ndim)
    if m.shape[ax] == 0:
        raise SpecError("mu", "needs at least one worker along the workers' axis")
    m, s, k = (np.moveaxis(a, ax, -1) for a in (m, s, k))
    lead = m.shape[:-1]
    width = m.shape[-1]
    m, s, k = (a.reshape(-1, width) for a in (m, s, k))
    out = np.array([_max_normals_row(m[i], s[i], k[i]) for i in range(m.shape[0])])
    out = out.reshape(lead)
    return float(out) if out.ndim == 0 else out


# --------------------------------------------------------------------------
# Other distributions (heavier tails)
# --------------------------------------------------------------------------

class Empirical:
    """The empirical distribution of a sample: each value with probability 1/k.

    Has the methods of a scipy.stats frozen distribution that the maxima
    functions use (``cdf``, ``logcdf``, ``sf``, ``ppf``, ``isf``, ``mean``,
    ``rvs``), and the exact expected maximum of n draws with replacement.

    Parameters
    ----------
    sample : array_like, s
        Observed values (finite, at least one), e.g. profiled step times.

    References
    ----------
    Seed 001 eqs. 8-9 with a measured distribution; seed 002 Figs. 6-7
    (measured, heavy-tailed compute times).

    Examples
    --------
    >>> d = Empirical([1.0, 2.0, 4.0])
    >>> float(d.cdf(2.0)), float(d.ppf(0.5)), round(d.expected_max(2), 6)   # (1+3*2+5*4)/9
    (0.6666666666666666, 2.0, 3.0)
    """

    def __init__(self, sample):
        a = np.asarray(_v.finite_real("sample", sample), dtype=float).ravel()
        if a.size == 0:
            raise SpecError("sample", "must hold at least one value, got []")
        self.values = np.sort(a)
        self.values.flags.writeable = False

    def __repr__(self) -> str:
        v = self.values
        return f"Empirical(<{v.size} values in [{v[0]:g}, {v[-1]:g}]>)"

    def cdf(self, x):
        """Fraction of the sample <= x."""
        k = self.values.size
        return np.searchsorted(self.values, np.asarray(x, dtype=float), side="right") / k

    def logcdf(self, x):
        """log of :meth:`cdf` (-inf below the sample)."""
        with np.errstate(divide="ignore"):
            return np.log(self.cdf(x))

    def sf(self, x):
        """Fraction of the sample > x."""
        k = self.values.size
        return (k - np.searchsorted(self.values, np.asarray(x, dtype=float), side="right")) / k

    def ppf(self, q):
        """Smallest sample value whose cdf is >= q."""
        k = self.values.size
        idx = np.clip(np.ceil(np.asarray(q, dtype=float) * k - 1e-9) - 1, 0, k - 1).astype(int)
        return self.values[idx]

    def isf(self, p):
        """Sample value with a fraction p of the sample above it (ppf(1 - p))."""
        k = self.values.size
        idx = np.clip(k - 1 - np.floor(np.asarray(p, dtype=float) * k + 1e-9), 0, k - 1)
        return self.values[idx.astype(int)]

    def mean(self) -> float:
        """Sample mean."""
        return float(self.values.mean())

    def rvs(self, size=None, random_state=None):
        """Draws with replacement (seeded by ``random_state``)."""
        rng = np.random.default_rng(random_state)
        return rng.choice(self.values, size=size)

    def expected_max(self, n):
        """Exact E[max of n draws with replacement]: x_(k) - sum_j (x_(j+1) - x_(j)) (j/k)^n."""
        scalar = np.ndim(n) == 0
        n = np.asarray(_v.counts("n", n), dtype=float)
        k = self.values.size
        gaps = np.diff(self.values)
        logp = np.log(np.arange(1, k) / k)
        uniq, inverse = np.unique(n.ravel(), return_inverse=True)
        res = np.array([self.values[-1] - gaps @ np.exp(u * logp) for u in uniq])
        res = res[inverse].reshape(n.shape)
        return float(res) if scalar else res


def _as_distribution(name: str, dist):
    """A scipy.stats frozen distribution, an Empirical, or an Empirical made of a sample."""
    if dist is None:
        raise SpecError(name, "expected a scipy.stats frozen distribution or a sample, got None")
    if all(hasattr(dist, attr) for attr in ("cdf", "ppf", "isf", "mean")):
        return dist
    if isinstance(dist, str):
        raise SpecError(name, f"expected a scipy.stats frozen distribution or a sample, "
                              f"got the string {dist!r}")
    try:
        return Empirical(dist)
    except SpecError as err:
        raise err.within(name) from None


def _u_to_q(u):
    """Map rng.random() output in [0, 1) to the open interval (0, 1)."""
    return u + 2.0 ** -54


def _max_ppf(dist, q, n):
    """Quantile of the max of n iid draws, by isf in the upper half (no 1 - eps rounding)."""
    q = np.asarray(q, dtype=float)
    with np.errstate(divide="ignore"):
        logq = np.log(q) / n
    upper = -np.expm1(logq)  # 1 - q^(1/n), exact for large n
    lower = np.exp(logq)
    with np.errstate(all="ignore"):
        return np.where(upper < 0.5, dist.isf(np.minimum(upper, 0.5)),
                        dist.ppf(np.minimum(lower, 0.5)))


def max_cdf(t, dist, n):
    """P(max of n iid draws of ``dist`` <= t) = F(t)^n.

    Parameters
    ----------
    t : float or array_like, s
        Where to evaluate.
    dist : scipy.stats frozen distribution, Empirical or array_like
        Distribution of one worker's time (an array is an empirical sample).
    n : int or array_like, workers
        Number of workers (whole, >= 1).

    Returns
    -------
    float or ndarray
        Probabilities.

    References
    ----------
    Seed 001 eq. 8 with any distribution in place of eq. 7.

    Examples
    --------
    >>> from scipy import stats
    >>> round(float(max_cdf(1.0, stats.expon(), 2)), 6)   # (1 - e^-1)^2
    0.399576
    """
    x = _v.finite_real("t", t)
    d = _as_distribution("dist", dist)
    k = _v.counts("n", n)
    with np.errstate(divide="ignore"):
        return _v.broadcast_result(np.exp(k * np.asarray(d.logcdf(x), dtype=float)), x, k)


def max_ppf(q, dist, n):
    """Quantile of the maximum of n iid draws: ``dist.ppf(q^(1/n))``, computed via isf.

    Parameters
    ----------
    q : float or array_like
        Probabilities in [0, 1].
    dist : scipy.stats frozen distribution, Empirical or array_like
        Distribution of one worker's time.
    n : int or array_like, workers
        Number of workers (whole, >= 1).

    Returns
    -------
    float or ndarray, s
        The q-quantile of the maximum.

    References
    ----------
    Seed 001 eq. 8 (inverse of F^N).

    Examples
    --------
    >>> from scipy import stats
    >>> round(float(max_ppf(0.5, stats.norm(), 1024)), 6) == round(max_normal_ppf(0.5, 1024), 6)
    True
    """
    p = _v.checked("q", q, maximum=1.0)
    d = _as_distribution("dist", dist)
    k = _v.counts("n", n)
    return _v.broadcast_result(_max_ppf(d, p, k), p, k)


def sample_max(dist, n, size, seed=None):
    """Seeded draws of the maximum of n iid draws of ``dist``, without drawing n values.

    The maximum of n iid variables is ``F^-1(U^(1/n))`` with U uniform, so one
    uniform per draw suffices (evaluated as :func:`max_ppf`).

    Parameters
    ----------
    dist : scipy.stats frozen distribution, Empirical or array_like
        Distribution of one worker's time.
    n : int, workers
        Number of workers (whole, >= 1).
    size : int or tuple of int
        Number (shape) of draws.
    seed : int or numpy.random.Generator or None
        Source of randomness; the same seed gives the same draws.

    Returns
    -------
    ndarray, s
        Draws of the maximum.

    References
    ----------
    Seed 001 eq. 8 (F_max = F^N).

    Examples
    --------
    >>> from scipy import stats
    >>> x = sample_max(stats.norm(), 100, 200_000, seed=1)
    >>> bool(abs(x.mean() - expected_max_normal(100)) < 4 * x.std() / np.sqrt(x.size))
    True
    """
    d = _as_distribution("dist", dist)
    k = _v.counts("n", n)
    if np.ndim(k) != 0:
        raise SpecError("n", f"must be a single whole number, got {n!r}")
    rng = np.random.default_rng(seed)
    return _max_ppf(d, _u_to_q(rng.random(size)), float(k))


def _expected_max_quad(dist, n: float) -> float:
    """E[max of n iid draws] = c + int_c^inf (1 - F^n) - int_-inf^c F^n, c the median of the max."""
    mean = float(dist.mean())
    if n == 1 or not math.isfinite(mean):
        return mean
    med = float(_max_ppf(dist, 0.5, n))
    lo = float(_max_ppf(dist, 1e-30, n))
    hi = float(_max_ppf(dist, 1.0 - 1e-6, n))
    scale = max(hi - med, med - lo, abs(med) * 1e-12, 1e-300)
    opts = dict(epsabs=1e-13 * scale, epsrel=1e-11, limit=500)

    def below(x):
        with np.errstate(divide="ignore"):
            return math.exp(n * float(dist.logcdf(x)))

    def above(x):
        return -math.expm1(n * math.log1p(-min(float(dist.sf(x)), 1.0)))

    def above_log(y):  # x = e^y: power-law tails decay exponentially in y
        x = math.exp(min(y, 700.0))
        return above(x) * x if y < 700.0 else 0.0

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lower = integrate.quad(below, lo, med, **opts)[0] if lo < med else 0.0
        if math.isfinite(lo):
            lower += integrate.quad(below, -math.inf, lo, **opts)[0]
        if med > 0 and math.isfinite(hi):
            upper = integrate.quad(above_log, math.log(med), math.log(hi), **opts)[0] \
                if hi > med else 0.0
            upper += integrate.quad(above_log, math.log(hi), math.inf, **opts)[0]
        else:
            upper = integrate.quad(above, med, hi, **opts)[0] if hi > med else 0.0
            if math.isfinite(hi):
                upper += integrate.quad(above, hi, math.inf, **opts)[0]
    return med + upper - lower


def expected_max(dist, n, *, method="quad", draws=1_000_000, seed=None):
    """Expected maximum of n iid draws of any distribution (heavier tails than normal).

    ``method="quad"``: ``E = c + int_c^inf (1 - F^n) dx - int_-inf^c F^n dx``
    (c the median of the maximum) by adaptive quadrature (scipy.integrate.quad,
    tails to infinity), relative accuracy ~1e-10; for an :class:`Empirical`
    (or a plain sample) the exact finite sum.  An infinite mean (e.g. Pareto
    with shape <= 1) gives ``inf``.  ``method="mc"``: the seeded mean of
    ``draws`` draws of :func:`sample_max`.

    Parameters
    ----------
    dist : scipy.stats frozen distribution, Empirical or array_like
        Distribution of one worker's time (an array is an empirical sample).
    n : int or array_like, workers
        Number of workers (whole, >= 1).
    method : {"quad", "mc"}
        Integration (default) or Monte Carlo.
    draws : int
        Monte Carlo draws (``method="mc"``).
    seed : int or numpy.random.Generator or None
        Source of randomness for ``method="mc"``.

    Returns
    -------
    float or ndarray, s
        ``E[max]``.

    References
    ----------
    Seed 001 eqs. 8-9 with any distribution in place of the normal of eq. 7;
    heavy-tailed compute times: seed 002 Figs. 6-7.

    Examples
    --------
    >>> from scipy import stats
    >>> round(expected_max(stats.expon(), 3), 10)   # 1 + 1/2 + 1/3
    1.8333333333
    >>> round(expected_max([1.0, 2.0, 4.0], 2), 10)
    3.0
    """
    d = _as_distribution("dist", dist)
    k = _v.counts("n", n)
    _v.choice("method", method, METHODS)
    draws = _v.integer("draws", draws, minimum=1)
    kk = np.asarray(k, dtype=float)
    if method == "mc":
        rng = np.random.default_rng(seed)
        res = np.array([sample_max(d, float(u), draws, rng).mean() for u in kk.ravel()])
        return _v.broadcast_result(res.reshape(kk.shape), k)
    if isinstance(d, Empirical):
        return _v.broadcast_result(d.expected_max(kk), k)
    uniq, inverse = np.unique(kk.ravel(), return_inverse=True)
    res = np.array([_expected_max_quad(d, float(u)) for u in uniq])[inverse]
    return _v.broadcast_result(res.reshape(kk.shape), k)


# --------------------------------------------------------------------------
# GST and epoch time (Definition 4, eqs. 1-2, 9)
# --------------------------------------------------------------------------

def _times(**named) -> dict:
    """Validated non-negative time arrays, broadcast to one 2-D (iterations x workers) shape."""
    arrays = {name: np.asarray(_v.checked(name, value), dtype=float) for name, value in named.items()}
    for name, a in arrays.items():
        if a.ndim > 2:
            raise SpecError(name, f"expected at most 2 dimensions (iterations x workers), "
                                  f"got shape {a.shape}")
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{n}{a.shape}" for n, a in arrays.items())
        raise SpecError(next(iter(arrays)), f"shapes do not broadcast: {shapes}") from None
    shape = (1,) * (2 - len(shape)) + tuple(shape)
    return {name: np.broadcast_to(a, shape) for name, a in arrays.items()}


def gst(t_io=0.0, t_fp=0.0, t_bp=0.0, t_fc=0.0, t_ag=0.0, t_bc=0.0, t_up=0.0):
    """Global synchronization time GST(m, n) of every iteration m and worker n (eq. 1).

    ``GST(1, n) = io + fp + bp + fc + ag`` and, for m > 1,
    ``GST(m, n) = bc^(m-1) + up^(m-1) + io + fp + bp + fc + ag``: the time from
    the previous aggregation's completion (when all workers are in the same
    state, Definition 4) to this one.

    Parameters
    ----------
    t_io, t_fp, t_bp, t_fc, t_ag, t_bc, t_up : float or array_like, s
        Time of each process (data loading, forward and backward propagation,
        forward communication, aggregation, backward communication, update),
        >= 0, broadcast to (M iterations, N workers): a 1-D array is per
        worker, a column ``(M, 1)`` per iteration.

    Returns
    -------
    ndarray, s
        GST of shape (M, N).

    References
    ----------
    Seed 001 Definition 4 and eq. 1.

    Examples
    --------
    >>> gst(t_fp=[[1.0], [1.0]], t_bp=2.0, t_bc=0.5, t_up=0.25)
    array([[3.  ],
           [3.75]])
    """
    t = _times(t_io=t_io, t_fp=t_fp, t_bp=t_bp, t_fc=t_fc, t_ag=t_ag, t_bc=t_bc, t_up=t_up)
    head = t["t_io"] + t["t_fp"] + t["t_bp"] + t["t_fc"] + t["t_ag"]
    tail = t["t_bc"] + t["t_up"]
    out = np.array(head, dtype=float)
    out[1:] += tail[:-1]
    return out


def epoch_time(t_io=0.0, t_fp=0.0, t_bp=0.0, t_fc=0.0, t_ag=0.0, t_bc=0.0, t_up=0.0, *,
               tail=True):
    """Epoch time of realized per-worker times: sum_m max_n GST(m, n) + max_n (bc^M + up^M) (eq. 2).

    Every iteration ends at a barrier (the aggregation), so the epoch is the
    sum over iterations of the slowest worker's GST, plus the last backward
    communication and update.

    Parameters
    ----------
    t_io, t_fp, t_bp, t_fc, t_ag, t_bc, t_up : float or array_like, s
        As in :func:`gst`, broadcast to (M iterations, N workers).
    tail : bool
        Add eq. 2's last term ``max_n(t_bc^M + t_up^M)`` (eq. 9 drops it).

    Returns
    -------
    float, s
        T of eq. 2.

    References
    ----------
    Seed 001 eq. 2 (third line).

    Examples
    --------
    >>> # two iterations, two workers: (3 + max(1, 2)) + (0.5 + 3 + 2) + 0.5
    >>> epoch_time(t_fp=1.0, t_bp=2.0, t_fc=[[1.0, 2.0], [0.0, 2.0]], t_bc=0.5)
    11.0
    """
    tail = _v.boolean("tail", tail)
    t = _times(t_io=t_io, t_fp=t_fp, t_bp=t_bp, t_fc=t_fc, t_ag=t_ag, t_bc=t_bc, t_up=t_up)
    total = gst(**t).max(axis=1).sum()
    if tail:
        total += (t["t_bc"][-1] + t["t_up"][-1]).max()
    return float(total)


def _noise(sigma, distribution):
    """(sigma array or None, distribution or None): exactly one describes the spread."""
    if distribution is None:
        return sigma, None
    if np.any(np.asarray(sigma) != 0):
        raise SpecError("sigma", "must be 0 when a distribution gives the per-worker spread, "
                                 f"got {sigma!r}")
    return None, _as_distribution("distribution", distribution)


def expected_epoch_time(mu, sigma=0.0, n_workers=1, *, tail=0.0, axis=-1, distribution=None,
                        method="quad", draws=1_000_000, seed=None):
    """Expected epoch time: sum over iterations of the expected slowest-worker GST (eq. 9).

    Worker n's GST in iteration m is ``mu_m + sigma_m Z`` with Z standard
    normal (eq. 7), independent across workers, so each iteration contributes
    ``mu_m + sigma_m e(N)`` (eqs. 8-9, :func:`expected_max_normal`; e(N) is
    integrated once for the whole array).  With ``distribution`` the GST is
    ``mu_m + X`` with X drawn from it (seconds; heavier tails) and each
    iteration contributes ``mu_m + E[max of N draws of X]``
    (:func:`expected_max`).

    Parameters
    ----------
    mu : float or array_like, s
        Mean GST of each iteration (any sign allowed for deviations; usually >= 0).
    sigma : float or array_like, s
        Standard deviation sigma(m) of one worker's GST (>= 0), broadcast
        against ``mu``; given directly, as the paper's tunable.  Must be 0
        when ``distribution`` is given.
    n_workers : int or array_like, workers
        N (whole, >= 1); broadcast against the result.
    tail : float or array_like, s
        Eq. 2's last term ``max_n(t_bc^M + t_up^M)``, added once (0: eq. 9 as printed).
    axis : int
        Iterations' axis of ``mu`` (and ``sigma``).
    distribution : scipy.stats frozen distribution, Empirical, array_like or None
        Per-worker extra time X (s) replacing the normal deviation.
    method, draws, seed
        How E[max X] is computed (see :func:`expected_max`).

    Returns
    -------
    float or ndarray, s
        The epoch time T (``axis`` summed out).

    References
    ----------
    Seed 001 eqs. 2, 7-9.

    Examples
    --------
    >>> # 3 + 3 * 0.1 / sqrt(pi) + 0.5
    >>> round(expected_epoch_time([1.0, 1.0, 1.0], 0.1, 2, tail=0.5), 6)
    3.669257
    """
    m = np.asarray(_v.finite_real("mu", mu), dtype=float)
    s = _v.checked("sigma", sigma)
    k = _v.counts("n_workers", n_workers)
    extra = _v.checked("tail", tail)
    s, dist = _noise(s, distribution)
    if m.ndim == 0:
        m = m[None]
    ax = _v.axis_index("axis", axis, m.ndim)
    if dist is None:
        s = np.asarray(s, dtype=float)
        if s.ndim:
            s = np.broadcast_to(s, np.broadcast_shapes(s.shape, m.shape))
        sigma_sum = np.sum(s, axis=ax) if s.ndim else s * m.shape[ax]
        total = np.sum(m, axis=ax) + sigma_sum * _std_max(k)
    else:
        total = np.sum(m, axis=ax) + m.shape[ax] * np.asarray(
            expected_max(dist, k, method=method, draws=draws, seed=seed))
    total = total + extra
    return float(total) if np.ndim(total) == 0 else np.asarray(total, dtype=float)


def monte_carlo_epoch_time(mu, sigma, n_workers, *, replications=10, tail=0.0, seed=0,
                           method="workers", block=1 << 22):
    """Seeded Monte Carlo of eq. 9: mean and standard error of sum_m max_n GST(m, n).

    ``method="workers"`` draws every worker's normal GST ``N(mu_m, sigma_m)`` in
    every iteration and takes the maximum (the brute-force reference);
    ``method="inverse"`` draws one maximum per iteration as
    ``mu_m + sigma_m Phi^-1(U^(1/N))``.

    Parameters
    ----------
    mu : array_like, s
        Mean GST of each iteration (1-D, M iterations).
    sigma : float or array_like, s
        Standard deviation of one worker's GST (>= 0), scalar or per iteration.
    n_workers : int, workers
        N (whole, >= 1).
    replications : int
        Independent epochs simulated (>= 2 for a standard error).
    tail : float, s
        Added to every epoch (eq. 2's last term).
    seed : int or numpy.random.Generator
        Source of randomness.
    method : {"workers", "inverse"}
        Brute force or inverse-cdf sampling of the maxima.
    block : int
        Normal draws generated at once (memory bound) for ``"workers"``.

    Returns
    -------
    (float, float), s
        Mean epoch time over the replications and its standard error.

    References
    ----------
    Seed 001 eqs. 2, 7-9.

    Examples
    --------
    >>> mean, se = monte_carlo_epoch_time(np.ones(100), 0.1, 8, replications=50, seed=3)
    >>> abs(mean - expected_epoch_time(np.ones(100), 0.1, 8)) < 4 * se
    True
    """
    m = np.asarray(_v.finite_real("mu", mu), dtype=float).ravel()
    s = np.broadcast_to(np.asarray(_v.checked("sigma", sigma), dtype=float), m.shape)
    k = _v.integer("n_workers", n_workers, minimum=1)
    reps = _v.integer("replications", replications, minimum=1)
    extra = float(_v.checked("tail", tail))
    _v.choice("method", method, ("workers", "inverse"))
    rng = np.random.default_rng(seed)
    totals = np.empty(reps)
    rows = max(1, int(block) // k)
    for r in range(reps):
        acc = 0.0
        if method == "inverse":
            z = special.ndtri_exp(np.log(_u_to_q(rng.random(m.size))) / k)
            acc = float(np.sum(m + s * z))
        else:
            for start in range(0, m.size, rows):
                stop = min(m.size, start + rows)
                z = rng.standard_normal((stop - start, k)).max(axis=1)
                acc += float(np.sum(m[start:stop] + s[start:stop] * z))
        totals[r] = acc + extra
    se = float(totals.std(ddof=1) / math.sqrt(reps)) if reps > 1 else math.nan
    return float(totals.mean()), se


# --------------------------------------------------------------------------
# Pipelines (eqs. 3-6)
# --------------------------------------------------------------------------

def _exclusive_cumsum(t: np.ndarray, axis: int) -> np.ndarray:
    s = np.cumsum(t, axis=axis)
    out = np.zeros_like(s)
    dst = [slice(None)] * t.ndim
    src = [slice(None)] * t.ndim
    dst[axis], src[axis] = slice(1, None), slice(None, -1)
    out[tuple(dst)] = s[tuple(src)]
    return out


def type1_completion(t, axis=-1):
    """Completion times of a type I process: tau^m = sum_{i<=m} t^i (eq. 3).

    A type I process waits only for its own previous occurrence (data loading
    in the IO pipeline, back-propagation in the layer pipeline).

    Parameters
    ----------
    t : array_like, s
        Durations (>= 0) along ``axis`` (iterations, or layers in execution order).
    axis : int
        The sequence axis.

    Returns
    -------
    ndarray, s
        Completion times, same shape.

    References
    ----------
    Seed 001 eq. 3.

    Examples
    --------
    >>> type1_completion([1.0, 2.0, 3.0])
    array([1., 3., 6.])
    """
    a = np.asarray(_v.checked("t", t), dtype=float)
    if a.ndim == 0:
        a = a[None]
    return np.cumsum(a, axis=_v.axis_index("axis", axis, a.ndim))


def type2_completion(t, ready, axis=-1):
    """Completion times of a type II process: tau^m = max(ready^m, tau^(m-1)) + t^m (eq. 4).

    A type II process waits for its own previous occurrence and for the
    previous process of the same step (``ready``, its completion time).  The
    max-plus recurrence is solved without a loop:
    ``tau^m = S^m + max_{j<=m} (ready^j - S^(j-1))`` with S the cumulative sum
    of t.

    Parameters
    ----------
    t : array_like, s
        Durations (>= 0) along ``axis``.
    ready : array_like, s
        Completion time of the preceding process at each step, broadcast against t.
    axis : int
        The sequence axis.

    Returns
    -------
    ndarray, s
        Completion times, broadcast shape.

    References
    ----------
    Seed 001 eq. 4.

    Examples
    --------
    >>> type2_completion([1.0, 1.0, 1.0], [1.0, 1.5, 5.0])
    array([2., 3., 6.])
    """
    a = np.asarray(_v.checked("t", t), dtype=float)
    r = np.asarray(_v.finite_real("ready", ready), dtype=float)
    a, r = np.broadcast_arrays(a, r)
    if a.ndim == 0:
        a, r = a[None], r[None]
    ax = _v.axis_index("axis", axis, a.ndim)
    return np.cumsum(a, axis=ax) + np.maximum.accumulate(r - _exclusive_cumsum(a, ax), axis=ax)


def io_pipeline(t_io, t_dt, axis=-1):
    """Exposed data-loading time of each iteration in the IO pipeline (eq. 5).

    IO is a type I process (it prefetches ahead); the rest of the iteration
    ("DT": fp, bp, fc, ag, bc, up as one type II process) starts once its data
    is loaded and the previous iteration is done.  IO is exposed only when it
    is late: ``e^1 = t_io^1``, ``e^m = max(0, tau_IO^m - tau_DT^(m-1))``.  The
    timeline is then ``tau_DT^M = sum_m (e^m + t_dt^m)``.

    Parameters
    ----------
    t_io : array_like, s
        Data-loading time of each iteration (>= 0).
    t_dt : array_like, s
        Time of the rest of each iteration (>= 0), broadcast against ``t_io``.
    axis : int
        Iterations' axis.

    Returns
    -------
    ndarray, s
        Exposed IO time of each iteration (>= 0).

    References
    ----------
    Seed 001 Definition 5, eqs. 3-5.

    Examples
    --------
    >>> io_pipeline([2.0, 2.0, 2.0], [1.0, 1.0, 1.0])   # IO-bound: 1 s exposed per iteration
    array([2., 1., 1.])
    >>> io_pipeline([1.0, 1.0, 1.0], [2.0, 2.0, 2.0])   # hidden after the first
    array([1., 0., 0.])
    """
    io = np.asarray(_v.checked("t_io", t_io), dtype=float)
    dt = np.asarray(_v.checked("t_dt", t_dt), dtype=float)
    io, dt = np.broadcast_arrays(io, dt)
    if io.ndim == 0:
        io, dt = io[None], dt[None]
    ax = _v.axis_index("axis", axis, io.ndim)
    tau_io = np.cumsum(io, axis=ax)
    tau_dt = type2_completion(dt, tau_io, axis=ax)
    prev = np.moveaxis(tau_dt, ax, -1)[..., :-1]
    later = np.maximum(0.0, np.moveaxis(tau_io, ax, -1)[..., 1:] - prev)
    first = np.moveaxis(io, ax, -1)[..., :1]
    return np.moveaxis(np.concatenate([first, later], axis=-1), -1, ax)


def layer_pipeline(t_bp, t_fc, t_ag, t_bc, *, axis=-1, order="forward"):
    """Exposed times of the layer pipeline hiding gradient communication behind BP (eqs. 3-4, 6).

    Back-propagation runs layer by layer from the output (type I, eq. 3); each
    layer's gradient is sent (FC), aggregated (AG) and sent back (BC) as soon
    as it and the same process of the previous layer are done (type II, eq. 4).
    Exposed times are what each process adds after its predecessor finished
    (eq. 6): ``e(fc) = tau_fc - tau_bp``, ``e(ag) = tau_ag - tau_fc``,
    ``e(bc) = tau_bc - tau_ag`` (last layer's completions), each >= 0; BP is
    fully exposed.  Their sum is the completion of the last BC.

    Parameters
    ----------
    t_bp, t_fc, t_ag, t_bc : array_like, s
        Per-layer times (>= 0), layers along ``axis``, broadcast together.
    axis : int
        The layers' axis.
    order : {"forward", "backward"}
        Order of the layers along the axis: ``"forward"`` lists them from the
        input to the output (as a DNN spec does; the backward pass runs them
        in reverse), ``"backward"`` in back-propagation order.

    Returns
    -------
    dict of str to float or ndarray, s
        ``{"bp", "fc", "ag", "bc"}``: exposed times with ``axis`` summed out.

    References
    ----------
    Seed 001 Definition 6, eqs. 3, 4, 6.

    Examples
    --------
    >>> ex = layer_pipeline([1.0, 1.0], [0.5, 0.5], [0.0, 0.0], [0.25, 0.25])
    >>> {k: float(v) for k, v in ex.items()}   # the first layer's FC hides behind BP
    {'bp': 2.0, 'fc': 0.5, 'ag': 0.0, 'bc': 0.25}
    """
    _v.choice("order", order, ("forward", "backward"))
    arrays = [np.asarray(_v.checked(n, v), dtype=float)
              for n, v in (("t_bp", t_bp), ("t_fc", t_fc), ("t_ag", t_ag), ("t_bc", t_bc))]
    try:
        arrays = np.broadcast_arrays(*arrays)
    except ValueError:
        raise SpecError("t_bp", "the per-layer times do not broadcast: "
                                f"{', '.join(str(a.shape) for a in arrays)}") from None
    if arrays[0].ndim == 0:
        arrays = [a[None] for a in arrays]
    ax = _v.axis_index("axis", axis, arrays[0].ndim)
    if order == "forward":
        arrays = [np.flip(a, axis=ax) for a in arrays]
    bp, fc, ag, bc = arrays
    tau_bp = np.cumsum(bp, axis=ax)
    tau_fc = type2_completion(fc, tau_bp, axis=ax)
    tau_ag = type2_completion(ag, tau_fc, axis=ax)
    tau_bc = type2_completion(bc, tau_ag, axis=ax)
    last = [np.take(t, -1, axis=ax) for t in (tau_bp, tau_fc, tau_ag, tau_bc)]
    out = {"bp": last[0]}
    for name, hi, lo in (("fc", last[1], last[0]), ("ag", last[2], last[1]),
                         ("bc", last[3], last[2])):
        out[name] = np.maximum(0.0, hi - lo)
    return {k: (float(v) if np.ndim(v) == 0 else v) for k, v in out.items()}


# --------------------------------------------------------------------------
# Network (eqs. 10-18)
# --------------------------------------------------------------------------

def barrier_links(n_workers, n_ps) -> tuple[str, int]:
    """Which links are the barrier links, and how many (Definition 7).

    With fewer servers than workers (K < N) the barrier links are the K links
    from the top-of-rack switch to the parameter servers; otherwise the N
    links from the switch to the workers.

    Parameters
    ----------
    n_workers : int
        N workers (>= 1).
    n_ps : int
        K parameter servers (>= 1).

    Returns
    -------
    (str, int)
        ``("ps", K)`` or ``("workers", N)``.

    References
    ----------
    Seed 001 Definition 7 and Sec. IV-A.

    Examples
    --------
    >>> barrier_links(8, 2), barrier_links(2, 2)
    (('ps', 2), ('workers', 2))
    """
    n = _v.integer("n_workers", n_workers, minimum=1)
    k = _v.integer("n_ps", n_ps, minimum=1)
    return ("ps", k) if k < n else ("workers", n)


def packet_count(nbytes, packet_size=1500.0):
    """Packets PN needed to send ``nbytes``: ceil(nbytes / pks).

    Parameters
    ----------
    nbytes : float or array_like, bytes
        Data size (>= 0).
    packet_size : float or array_like, bytes
        Packet payload pks (> 0).

    Returns
    -------
    float or ndarray, packets

    References
    ----------
    Seed 001 Table I (PN, pks), eq. 10.

    Examples
    --------
    >>> packet_count(97.49e6)
    64994.0
    """
    b = _v.checked("nbytes", nbytes)
    p = _v.checked("packet_size", packet_size, positive=True)
    return _v.broadcast_result(np.ceil(b / p * (1.0 - 1e-12)), b, p)


def non_barrier_time(n_packets, bandwidth, packet_size=1500.0, base_delay=0.0, alpha=1.0):
    """Time on a non-barrier link: t_base + alpha PN pks / R (eq. 10, R = link bandwidth B).

    Parameters
    ----------
    n_packets : float or array_like, packets
        PN(l) (>= 0).
    bandwidth : float or array_like, bytes/s
        Link bandwidth B (> 0), the R of eq. 10 (DESIGN.md).
    packet_size : float or array_like, bytes
        pks (> 0).
    base_delay : float or array_like, s
        Startup, propagation and processing delay (>= 0).
    alpha : float or array_like
        Protocol factor (>= 0; 1 = payload only).

    Returns
    -------
    float or ndarray, s

    References
    ----------
    Seed 001 eq. 10.

    Examples
    --------
    >>> non_barrier_time(1000, 1.25e9, 1500, base_delay=1e-4)   # 1e-4 + 1.5e6 / 1.25e9
    0.0013
    """
    n = _v.checked("n_packets", n_packets)
    b = _v.checked("bandwidth", bandwidth, positive=True)
    p = _v.checked("packet_size", packet_size, positive=True)
    d = _v.checked("base_delay", base_delay)
    a = _v.checked("alpha", alpha)
    return _v.broadcast_result(d + a * n * p / b, n, b, p, d, a)


def barrier_forward_time(switch_rate, bandwidth, *, units="printed", packet_size=1500.0,
                         arrival_rate=None):
    """M/M/1 sojourn time of a packet at a barrier-link switch: 1 / (mu - lambda) (eq. 11).

    ``"printed"``: ``1 / (S_f - 1/B)`` literally (S_f packets/s, B bytes/s;
    about ``1 / S_f`` in SI).  ``"sound"``: ``1 / (S_f - lambda)`` with lambda
    a packet rate, ``B / pks`` (the link at line rate) unless
    ``arrival_rate`` is given.  An unstable queue (lambda >= S_f) gives ``inf``.

    Parameters
    ----------
    switch_rate : float or array_like, packets/s
        Switch forwarding speed S_f (> 0), the service rate mu.
    bandwidth : float or array_like, bytes/s
        Link bandwidth B (> 0).
    units : {"printed", "sound"}
        Reading of the equation (module notes).
    packet_size : float or array_like, bytes
        pks, for ``"sound"``.
    arrival_rate : float or array_like or None, packets/s
        lambda for ``"sound"``; None: ``B / pks``.

    Returns
    -------
    float or ndarray, s

    References
    ----------
    Seed 001 eq. 11.

    Examples
    --------
    >>> barrier_forward_time(2e6, 1.25e9, units="sound", packet_size=1250)   # 1/(2e6 - 1e6)
    1e-06
    """
    mu = _v.checked("switch_rate", switch_rate, positive=True)
    b = _v.checked("bandwidth", bandwidth, positive=True)
    _v.choice("units", units, UNITS)
    p = _v.checked("packet_size", packet_size, positive=True)
    if units == "printed":
        lam = 1.0 / b
    else:
        lam = b / p if arrival_rate is None else _v.checked("arrival_rate", arrival_rate)
    with np.errstate(divide="ignore"):
        t = np.where(mu > lam, 1.0 / np.where(mu > lam, mu - lam, 1.0), np.inf)
    return _v.broadcast_result(t, mu, b, p, lam)


def barrier_time(switch_rate, bandwidth, hops=1, **options):
    """Forward communication time on the barrier link: h t_forward (eq. 12).

    Parameters
    ----------
    switch_rate, bandwidth
        As in :func:`barrier_forward_time`.
    hops : int or array_like
        h, barrier hops from a worker to its aggregator (whole, >= 0).
    **options
        ``units``, ``packet_size``, ``arrival_rate`` of :func:`barrier_forward_time`.

    Returns
    -------
    float or ndarray, s

    References
    ----------
    Seed 001 eqs. 11-12.

    Examples
    --------
    >>> barrier_time(2e6, 1.25e9, 3, units="sound", packet_size=1250)
    3e-06
    """
    h = _v.checked("hops", hops, integer=True)
    t = barrier_forward_time(switch_rate, bandwidth, **options)
    with np.errstate(invalid="ignore"):
        out = np.where(np.asarray(h) == 0, 0.0, h * np.asarray(t))
    return _v.broadcast_result(out, t, h)


def communication_time(n_packets, bandwidth, *, packet_size=1500.0, base_delay=0.0, alpha=1.0,
                       switch_rate=None, hops=1, units="printed", arrival_rate=None):
    """Forward (FC) or backward (BC) communication time: non-barrier + barrier (eqs. 10-12).

    ``t = t_base + alpha PN pks / B + h t_forward``; without ``switch_rate``
    the barrier term is left out.

    Parameters
    ----------
    n_packets : float or array_like, packets
        PN(l) (>= 0); no packets means no time at all.
    bandwidth : float or array_like, bytes/s
        Link bandwidth B (> 0).
    packet_size, base_delay, alpha
        As in :func:`non_barrier_time`.
    switch_rate, hops, units, arrival_rate
        As in :func:`barrier_time`; ``switch_rate=None`` omits eqs. 11-12.

    Returns
    -------
    float or ndarray, s

    References
    ----------
    Seed 001 eqs. 10-12 ("the combination of barrier time and non-barrier time").

    Examples
    --------
    >>> round(communication_time(1000, 1.25e9, base_delay=1e-4, switch_rate=1e6, hops=2), 9)
    0.0013020000
    """
    t = non_barrier_time(n_packets, bandwidth, packet_size, base_delay, alpha)
    if switch_rate is not None:
        t = np.asarray(t) + np.asarray(barrier_time(switch_rate, bandwidth, hops, units=units,
                                                    packet_size=packet_size,
                                                    arrival_rate=arrival_rate))
    n = np.asarray(n_packets, dtype=float)
    return _v.broadcast_result(np.where(n > 0, t, 0.0), t, n_packets)


def aggregation_granularity(n_packets, n_ps):
    """Aggregation granularity G = PN(l) / K packets per server (eq. 13).

    Parameters
    ----------
    n_packets : float or array_like, packets
        PN(l) (>= 0).
    n_ps : int or array_like, servers
        K (whole, >= 1).

    Returns
    -------
    float or ndarray, packets

    References
    ----------
    Seed 001 Definition 8, eq. 13.

    Examples
    --------
    >>> aggregation_granularity(1000, 4)
    250.0
    """
    n = _v.checked("n_packets", n_packets)
    k = _v.counts("n_ps", n_ps)
    return _v.broadcast_result(n / k, n, k)


def aggregation_time(granularity, a=0.0, b=0.0):
    """Time to aggregate one granule: t_ag = a + b G (eq. 14).

    Parameters
    ----------
    granularity : float or array_like, packets
        G (>= 0).
    a : float or array_like, s
        Fixed cost per aggregation (>= 0).
    b : float or array_like, s/packet
        Cost per packet aggregated (>= 0).

    Returns
    -------
    float or ndarray, s

    References
    ----------
    Seed 001 eq. 14.

    Examples
    --------
    >>> aggregation_time(250, 1e-5, 1e-7)
    3.5e-05
    """
    g = _v.checked("granularity", granularity)
    aa = _v.checked("a", a)
    bb = _v.checked("b", b)
    return _v.broadcast_result(aa + bb * g, g, aa, bb)


def _delay_unit(bandwidth, units, packet_size):
    b = _v.checked("bandwidth", bandwidth, positive=True)
    _v.choice("units", units, UNITS)
    p = _v.checked("packet_size", packet_size, positive=True)
    return b, p, (1.0 if units == "printed" else p)


def aggregation_delay_min(granularity, bandwidth, *, units="printed", packet_size=1500.0):
    """Smallest aggregation delay: one granule received alone, G / R (eq. 15, R = B).

    ``"printed"``: ``G / B`` (G in packets, as printed); ``"sound"``: ``G pks / B``.

    Parameters
    ----------
    granularity : float or array_like, packets
        G (>= 0).
    bandwidth : float or array_like, bytes/s
        B (> 0).
    units : {"printed", "sound"}
        Reading (module notes).
    packet_size : float or array_like, bytes
        pks, for ``"sound"``.

    Returns
    -------
    float or ndarray, s

    References
    ----------
    Seed 001 eq. 15.

    Examples
    --------
    >>> aggregation_delay_min(250, 1.25e9, units="sound", packet_size=1500)   # 375 kB at 10 Gbps
    0.0003
    """
    g = _v.checked("granularity", granularity)
    b, p, unit = _delay_unit(bandwidth, units, packet_size)
    return _v.broadcast_result(g * unit / b, g, b, p)


def aggregation_delay_max(granularity, n_workers, bandwidth, *, units="printed",
                          packet_size=1500.0):
    """Largest aggregation delay: N granules arriving in lockstep, (N G - N + 1) / B (eq. 16).

    Never below eq. 15 (for G < 1 packet eq. 16 would be).

    Parameters
    ----------
    granularity : float or array_like, packets
        G (>= 0).
    n_workers : int or array_like, workers
        N (whole, >= 1).
    bandwidth, units, packet_size
        As in :func:`aggregation_delay_min`.

    Returns
    -------
    float or ndarray, s

    References
    ----------
    Seed 001 eq. 16.

    Examples
    --------
    >>> aggregation_delay_max(250, 4, 1.25e9, units="sound", packet_size=1500)   # 997 packets
    0.0011964
    """
    g = _v.checked("granularity", granularity)
    n = _v.counts("n_workers", n_workers)
    b, p, unit = _delay_unit(bandwidth, units, packet_size)
    return _v.broadcast_result(np.maximum(n * g - n + 1.0, g) * unit / b, g, n, b, p)


def aggregation_delay(granularity, n_workers, bandwidth, theta=0.5, *, units="printed",
                      packet_size=1500.0):
    """Aggregation delay between its extremes: min + theta (max - min) (eqs. 15-16).

    The paper makes the actual delay "a range tunable parameter" between the
    two extremes; theta in [0, 1] places it (0: eq. 15, 1: eq. 16).

    Parameters
    ----------
    granularity, n_workers, bandwidth, units, packet_size
        As in :func:`aggregation_delay_max`.
    theta : float or array_like
        Position between the extremes, in [0, 1].

    Returns
    -------
    float or ndarray, s

    References
    ----------
    Seed 001 eqs. 15-16 and the text after them.

    Examples
    --------
    >>> round(aggregation_delay(250, 4, 1.25e9, 0.5, units="sound"), 9)   # (0.3 + 1.1964) / 2 ms
    0.0007482
    """
    th = _v.fraction("theta", theta)
    lo = aggregation_delay_min(granularity, bandwidth, units=units, packet_size=packet_size)
    hi = aggregation_delay_max(granularity, n_workers, bandwidth, units=units,
                               packet_size=packet_size)
    return _v.broadcast_result(np.asarray(lo) + th * (np.asarray(hi) - np.asarray(lo)), lo, hi, th)


def max_aggregation_time(n_packets, n_workers, n_ps, bandwidth, a=0.0, b=0.0, *, theta=0.5,
                         granularity=None, units="printed", packet_size=1500.0):
    """Latest aggregation completion over servers: delay + N ceil(PN / (G K)) (a + b G) (eq. 18).

    Every server aggregates the granules of all N workers one after the other,
    ``ceil(PN / (G K))`` granules of each; the delay before the first is
    :func:`aggregation_delay`.  With G of eq. 13 (the default) there is one
    granule per worker and server: ``delay + N (a + b PN / K)``.  No packets:
    0 s.

    Parameters
    ----------
    n_packets : float or array_like, packets
        PN(l) (>= 0).
    n_workers : int or array_like, workers
        N (whole, >= 1).
    n_ps : int or array_like, servers
        K (whole, >= 1).
    bandwidth : float or array_like, bytes/s
        B (> 0).
    a, b
        As in :func:`aggregation_time` (s and s/packet).
    theta : float or array_like
        Delay position in [0, 1] (:func:`aggregation_delay`).
    granularity : float or array_like or None, packets
        G (> 0); None: eq. 13, PN / K.
    units, packet_size
        As in :func:`aggregation_delay_min`.

    Returns
    -------
    float or ndarray, s

    References
    ----------
    Seed 001 eqs. 13-18.

    Examples
    --------
    >>> round(max_aggregation_time(1000, 4, 4, 1.25e9, 1e-5, 1e-7, units="sound"), 9)
    0.0008882
    """
    n = _v.checked("n_packets", n_packets)
    w = _v.counts("n_workers", n_workers)
    k = _v.counts("n_ps", n_ps)
    if granularity is None:
        g = n / k
    else:
        g = _v.checked("granularity", granularity, positive=True)
    delay = aggregation_delay(g, w, bandwidth, theta, units=units, packet_size=packet_size)
    with np.errstate(divide="ignore", invalid="ignore"):
        rounds = np.ceil(np.asarray(n, dtype=float) / np.asarray(g * k, dtype=float)
                         * (1.0 - 1e-12))
    with np.errstate(invalid="ignore"):
        work = w * rounds * np.asarray(aggregation_time(g, a, b))
        out = np.where(np.asarray(n) > 0, np.asarray(delay) + work, 0.0)
    return _v.broadcast_result(out, n, w, k, g, delay)


# --------------------------------------------------------------------------
# Use cases (Sec. V-C)
# --------------------------------------------------------------------------

def compression_time(ratio, t0, exponent=2.0):
    """Gradient-compression time from the compression ratio: t_0 / (1 - r_c)^exponent.

    Sec. V-C relates compression time and ratio by an "inverse square
    relationship"; we read it as ``t_c = t_0 / (1 - r_c)^2`` (``exponent=2``):
    t_0 at r_c = 0, growing without bound as all gradients are removed.

    Parameters
    ----------
    ratio : float or array_like
        r_c in [0, 1): fraction of the packets removed.
    t0 : float or array_like, s
        Compression time at r_c = 0 (>= 0).
    exponent : float or array_like
        Power of the law (>= 0).

    Returns
    -------
    float or ndarray, s

    References
    ----------
    Seed 001 Sec. V-C ("Optimization"), Fig. 6.

    Examples
    --------
    >>> compression_time(0.5, 0.01)
    0.04
    """
    r = _v.fraction("ratio", ratio, closed=False)
    t = _v.checked("t0", t0)
    e = _v.checked("exponent", exponent)
    return _v.broadcast_result(t / (1.0 - r) ** e, r, t, e)


def speedup_ratio(step_time_one, step_time_n, n_workers):
    """Speedup of N workers over one: N T(1) / T(N) (throughput ratio).

    Parameters
    ----------
    step_time_one : float or array_like, s
        Step time of one worker (> 0).
    step_time_n : float or array_like, s
        Step time with N workers (> 0).
    n_workers : int or array_like, workers
        N (whole, >= 1).

    Returns
    -------
    float or ndarray
        Speedup (N = linear scaling).

    References
    ----------
    Seed 001 Sec. V-C ("Evaluation"), Fig. 5.

    Examples
    --------
    >>> speedup_ratio(1.0, 1.25, 4)
    3.2
    """
    t1 = _v.checked("step_time_one", step_time_one, positive=True)
    tn = _v.checked("step_time_n", step_time_n, positive=True)
    n = _v.counts("n_workers", n_workers)
    return _v.broadcast_result(n * t1 / tn, t1, tn, n)


# --------------------------------------------------------------------------
# The model object
# --------------------------------------------------------------------------

@functools.lru_cache(maxsize=4096)
def _distribution_max(dist, n: int, method: str, draws: int, seed: int) -> tuple:
    """(E[max], p50, p99) of n draws of ``dist``, cached: a search asks for the same N often."""
    mean = float(expected_max(dist, n, method=method, draws=draws, seed=seed))
    p50, p99 = (float(x) for x in _max_ppf(dist, np.array([0.5, 0.99]), float(n)))
    return mean, p50, p99


def _layer_weights(name: str, layers) -> tuple[float, ...]:
    if isinstance(layers, (bool, np.bool_)):
        raise SpecError(name, f"expected a layer count or a list of layer weights, got {layers!r}")
    if isinstance(layers, numbers.Integral):
        count = _v.integer(name, layers, minimum=1)
        return (1.0 / count,) * count
    if isinstance(layers, (str, bytes)) or not hasattr(layers, "__iter__"):
        raise SpecError(name, f"expected a layer count or a list of layer weights, got {layers!r}")
    w = np.asarray(_v.checked(name, list(layers)), dtype=float).ravel()
    if w.size == 0 or w.sum() <= 0:
        raise SpecError(name, f"must hold at least one positive weight, got {layers!r}")
    return tuple(float(x) for x in w / w.sum())


@dataclass(frozen=True)
class GST:
    """Seed 001's model: synchronous SGD with parameter servers, stragglers and pipelines.

    One step is a global synchronization time (Definition 4).  With
    ``profile`` giving FP (``t_forward``), BP (``t_backward``) and UP
    (``t_update``) of one worker, and the network giving FC, AG and BC:

    1. every layer bucket sends ``PN_l = ceil(bytes_l (1 - r_c) / pks)``
       packets; FC and BC take :func:`communication_time` (eqs. 10-12, plus the
       compression time on FC), AG takes :func:`max_aggregation_time` (eqs.
       13-18) for N = ``config.n_replicas`` workers and K = ``config.n_ps``
       servers;
    2. the layer pipeline (eqs. 3-4, 6) hides FC, AG, BC behind BP, and the IO
       pipeline (eq. 5) hides data loading (steady state:
       ``max(0, t_io - rest)``);
    3. eq. 17 splits the aggregation off: the step is
       ``E[max_n(worker-side time)] + e(AG)``, with the worker-side time
       ``mu + sigma Z`` (eq. 7; ``sigma`` given directly, plus ``cv * mu``) or
       ``mu + X`` with X from ``distribution``; the expected excess of the
       slowest worker over mu is the phase ``"straggler"`` (eqs. 8-9).

    Parameters
    ----------
    sigma : float, s
        Standard deviation of one worker's GST (eq. 7's tunable sigma(m)).
    cv : float
        Extra standard deviation per second of worker-side mean time (added
        to ``sigma``: the paper sums the processes' values).
    distribution : scipy.stats frozen distribution, Empirical, array_like or None
        Per-worker extra time X (s) replacing the normal deviation (heavier
        tails); ``sigma`` and ``cv`` must then be 0.
    method : {"quad", "mc"}
        How E[max X] is computed for ``distribution``.
    draws : int
        Monte Carlo draws (``method="mc"``); ``seed`` seeds them.
    seed : int
        Seed of the Monte Carlo draws.
    t_io : float, s
        Data loading of one iteration (IO).
    io_pipeline : bool
        Overlap IO with the rest of the iteration (eq. 5).
    layer_pipeline : bool
        Overlap FC, AG, BC with BP layer by layer (eqs. 3-4, 6).
    layers : int or sequence of float
        Layer buckets: a count (equal split of the model bytes and of BP) or
        relative sizes in forward order (bytes and BP split alike).
    packet_size : float, bytes
        pks.
    alpha : float
        Protocol factor of eq. 10.
    base_delay : float or None, s
        t_base-delay of eq. 10 per message; None: ``cluster.latency``.
    switch_rate : float or None, packets/s
        S_f of eq. 11; None leaves the barrier queueing term out.
    hops : int
        h of eq. 12.
    arrival_rate : float or None, packets/s
        lambda of eq. 11 with ``units="sound"`` (None: B / pks).
    agg_a : float, s
        a of eq. 14.
    agg_b : float, s/packet
        b of eq. 14.
    granularity : float or None, packets
        G; None: eq. 13 (PN / K).
    theta : float
        Position of the aggregation delay between eqs. 15 and 16, in [0, 1].
    units : {"printed", "sound"}
        Reading of eqs. 11, 15, 16 (module notes).
    compression_ratio : float
        r_c in [0, 1) (Sec. V-C); packets are multiplied by ``1 - r_c``.
    compression_time : float, s
        t_0 of :func:`compression_time` (0: compression is free).
    compression_exponent : float
        Power of the compression-time law (2: inverse square).
    tail : bool
        Add eq. 2's last term (BC and UP of the last iteration) to the epoch time.
    interval : {None, "iteration"}
        None (default): a point estimate.  ``"iteration"``: a
        ``throughput_interval`` from the quantiles of the *single-iteration*
        time (see Notes) -- the spread of one step, not an error bar on the
        mean.
    level : float
        Central probability of that interval, in (0, 1) (0.9: the 5th and
        95th percentiles).

    Notes
    -----
    Per-network calibration (:func:`perfmodel.tuning.calibrate_network`):
    UP is ``t_update ((1 - g) + g N)`` with g = ``cluster.update_growth``
    (0: the profile's update once per step); when ``sigma``, ``cv`` and
    ``distribution`` are all unset, eq. 7's sigma is ``cluster.compute_cv``
    times the compute time ``t_forward + t_backward`` (the model's own
    options win, so an explicit ``sigma=0.0`` with a calibrated cluster still
    straggles; set the cluster's ``compute_cv`` to 0 for a deterministic GST).
    ``meta["sigma_source"]`` says which was used.

    In :meth:`estimate` the bandwidth B is ``cluster.effective_bandwidth``;
    the profile's times are those of one worker machine (all its GPUs) and a
    step processes ``n_replicas * gpus_per_machine * batch_size`` samples.
    ``meta`` carries ``p50`` and ``p99`` of the step time (quantiles of the
    slowest worker, eq. 8), the worker-side mean, sigma, the unexposed
    communication and computation times and their ratio (Sec. V-C), the
    barrier links, and, with ``config.epoch_samples``, the ``iterations`` M of
    the eq. 9 epoch time (``epoch_time``: first GST without the previous BC/UP
    and with the whole IO exposed, eq. 1; then M - 1 steady steps).

    Interval (our decision, issue 10 item 3).  The model has no uncertainty
    about its *mean*: ``step_time`` is ``E[GST]`` exactly (eq. 9), so the
    epoch-average throughput carries no error bar of its own.  What it does
    know is the distribution of one iteration's GST, ``F_max = F^N`` (eq. 8).
    ``interval="iteration"`` reports that spread as throughput:
    ``(S / t_hi, S / t_lo)`` with S the samples per step and ``t_lo``,
    ``t_hi`` the ``(1 - level)/2`` and ``(1 + level)/2`` quantiles of the
    iteration time (worker-side mean and AG plus :func:`max_normal_ppf` or
    :func:`max_ppf` of the straggler term): e.g. at level 0.9, 90% of single
    iterations run at a speed inside it.  It is *not* a confidence interval
    for the epoch average (the mean of M iterations is much tighter, about
    1/sqrt(M) of it, for independent iterations), and it is zero-width
    without straggling (sigma 0).  ``meta["interval_source"]`` is ``"GST
    iteration-time percentiles"``, ``meta["iteration_quantiles"]`` the two
    step times (s).

    References
    ----------
    Seed 001 Definition 4, eqs. 1-18; Sec. V-C.

    Examples
    --------
    >>> from perfmodel.specs import Profile, Cluster, Config
    >>> prof = Profile(model_bytes=100e6, t_forward=0.1, t_backward=0.2, t_update=0.01,
    ...                batch_size=32)
    >>> est = GST(sigma=0.01, layer_pipeline=False).estimate(
    ...     prof, Cluster(machines=8, nic_bandwidth="10Gbps"), Config(n_replicas=4, n_ps=1))
    >>> # 0.1 + 0.2 + 2 * 0.08 + 0.01, AG delay 0.000133 (eqs. 15-16 as printed), 0.01 e(4)
    >>> round(est.step_time, 6), est.bottleneck
    (0.480428, 'bp')
    >>> round(est.meta["p99"], 6)
    0.498192
    """

    sigma: float = 0.0
    cv: float = 0.0
    distribution: Any = None
    method: str = "quad"
    draws: int = 200_000
    seed: int = 0
    t_io: float = 0.0
    io_pipeline: bool = True
    layer_pipeline: bool = True
    layers: Any = 1
    packet_size: float = 1500.0
    alpha: float = 1.0
    base_delay: float | None = None
    switch_rate: float | None = None
    hops: int = 1
    arrival_rate: float | None = None
    agg_a: float = 0.0
    agg_b: float = 0.0
    granularity: float | None = None
    theta: float = 0.5
    units: str = "printed"
    compression_ratio: float = 0.0
    compression_time: float = 0.0
    compression_exponent: float = 2.0
    tail: bool = False
    interval: str | None = None
    level: float = 0.9
    #: The configuration's ``n_ps`` parameter servers are used (sweeps read this).
    uses_parameter_servers: ClassVar[bool] = True

    def __post_init__(self):
        def scalar(name, check):
            value = getattr(self, name)
            if value is None:
                return
            if isinstance(value, (bool, np.bool_)) or np.ndim(value) != 0:
                raise SpecError(name, f"expected a number, got {value!r}")
            object.__setattr__(self, name, float(check(name, value)))

        for name in ("sigma", "cv", "t_io", "alpha", "agg_a", "agg_b", "compression_time",
                     "compression_exponent", "base_delay"):
            scalar(name, _v.checked)
        for name in ("packet_size", "switch_rate", "granularity"):
            scalar(name, lambda n, v: _v.checked(n, v, positive=True))
        scalar("arrival_rate", _v.checked)
        scalar("theta", _v.fraction)
        scalar("compression_ratio", lambda n, v: _v.fraction(n, v, closed=False))
        object.__setattr__(self, "hops", _v.integer("hops", self.hops, minimum=0))
        object.__setattr__(self, "draws", _v.integer("draws", self.draws, minimum=1))
        object.__setattr__(self, "seed", _v.integer("seed", self.seed, minimum=0))
        for name in ("io_pipeline", "layer_pipeline", "tail"):
            _v.boolean(name, getattr(self, name))
        _v.choice("units", self.units, UNITS)
        _v.choice("method", self.method, METHODS)
        if self.interval is not None:
            _v.choice("interval", self.interval, INTERVALS)
        if isinstance(self.level, (bool, np.bool_)) or not isinstance(self.level, numbers.Real) \
                or not 0 < self.level < 1:
            raise SpecError("level", f"must be a number in (0, 1), got {self.level!r}")
        if isinstance(self.layers, numbers.Integral) and not isinstance(self.layers, bool):
            object.__setattr__(self, "layers", _v.integer("layers", self.layers, minimum=1))
        else:
            object.__setattr__(self, "layers", _layer_weights("layers", self.layers))
        if self.distribution is not None:
            if self.sigma != 0 or self.cv != 0:
                raise SpecError("sigma", "sigma and cv must be 0 when a distribution gives the "
                                         f"per-worker spread (sigma={self.sigma}, cv={self.cv})")
            dist = _as_distribution("distribution", self.distribution)
            object.__setattr__(self, "distribution", dist)

    # -- pieces ------------------------------------------------------------

    def _weights(self) -> np.ndarray:
        if isinstance(self.layers, int):
            return np.full(self.layers, 1.0 / self.layers)
        return np.asarray(self.layers, dtype=float)

    def iteration(self, workload: Profile, cluster: Cluster, config: Config) -> dict:
        """Per-process times of one iteration, unexposed and exposed (no straggler term).

        Returns
        -------
        dict
            ``"times"``: total time of each process (s, dict over
            :data:`PROCESSES`); ``"exposed"``: exposed time of each process
            after the pipelines (s); ``"worker_mean"``: exposed time outside
            AG (s, the mean of eq. 7); ``"packets"``: packets per layer bucket.
        """
        check_inputs(workload, cluster, config, "GST", min_servers=1)
        n, k = config.n_replicas, config.n_ps
        bw = cluster.effective_bandwidth
        base = cluster.latency if self.base_delay is None else self.base_delay
        w = self._weights()
        r = self.compression_ratio
        pn = packet_count(workload.model_bytes * w * (1.0 - r), self.packet_size)
        comm = dict(packet_size=self.packet_size, base_delay=base, alpha=self.alpha,
                    switch_rate=self.switch_rate, hops=self.hops, units=self.units,
                    arrival_rate=self.arrival_rate)
        t_c = (compression_time(r, self.compression_time, self.compression_exponent)
               if self.compression_time > 0 else 0.0)
        bc = np.asarray(communication_time(pn, bw, **comm), dtype=float)
        fc = bc + w * t_c
        ag = np.asarray(max_aggregation_time(pn, n, k, bw, self.agg_a, self.agg_b,
                                             theta=self.theta, granularity=self.granularity,
                                             units=self.units, packet_size=self.packet_size),
                        dtype=float)
        bp = w * workload.t_backward
        up = workload.t_update
        if cluster.update_growth != 0:  # the K gradients' update (Cluster.update_growth)
            up = up * ((1.0 - cluster.update_growth) + cluster.update_growth * n)
        times = {"io": self.t_io, "fp": workload.t_forward, "bp": workload.t_backward,
                 "fc": float(fc.sum()), "ag": float(ag.sum()), "bc": float(bc.sum()),
                 "up": up}
        if not all(math.isfinite(v) for v in times.values()):
            raise Infeasible("the barrier link's M/M/1 queue is unstable (arrival rate >= "
                             f"switch_rate {self.switch_rate}): communication never ends")
        if self.layer_pipeline and w.size > 1:  # one bucket has nothing to overlap
            ex = layer_pipeline(bp, fc, ag, bc)
        else:
            ex = {p: times[p] for p in ("bp", "fc", "ag", "bc")}
        rest = workload.t_forward + ex["bp"] + ex["fc"] + ex["ag"] + ex["bc"] + up
        e_io = max(0.0, self.t_io - rest) if self.io_pipeline else self.t_io
        exposed = {"io": e_io, "fp": workload.t_forward, "bp": ex["bp"], "fc": ex["fc"],
                   "ag": ex["ag"], "bc": ex["bc"], "up": up}
        worker = sum(v for p, v in exposed.items() if p != "ag")
        return {"times": times, "exposed": exposed, "worker_mean": worker,
                "packets": pn.tolist()}

    def spread_sigma(self, workload: Profile, cluster: Cluster) -> tuple[float, str]:
        """The base sigma of eq. 7 and where it comes from.

        The model's own spread (``sigma``, ``cv`` or ``distribution``) wins;
        when all are unset, ``cluster.compute_cv * (t_forward + t_backward)``
        (the network's calibrated spread of compute times).

        Returns
        -------
        (float, str)
            sigma in seconds and ``"model"`` or ``"cluster.compute_cv"``.
        """
        own = self.sigma != 0 or self.cv != 0 or self.distribution is not None
        if own or cluster.compute_cv == 0:
            return self.sigma, "model"
        return cluster.compute_cv * workload.t_compute, "cluster.compute_cv"

    def straggler(self, n_workers: int, worker_mean: float = 0.0, *,
                  sigma: float | None = None) -> dict:
        """Expected excess of the slowest of N workers over the mean, and its p50 / p99.

        Parameters
        ----------
        n_workers : int
            N.
        worker_mean : float, s
            The worker-side mean time (scales ``cv``).
        sigma : float or None, s
            Base sigma replacing the model's ``sigma`` (see :meth:`spread_sigma`).

        Returns
        -------
        dict
            ``{"mean", "p50", "p99", "sigma"}`` in seconds (sigma None for a
            distribution).
        """
        n = _v.integer("n_workers", n_workers, minimum=1)
        if self.distribution is not None:
            mean, p50, p99 = _distribution_max(self.distribution, n, self.method, self.draws,
                                               self.seed)
            return {"mean": mean, "p50": p50, "p99": p99, "sigma": None}
        s = (self.sigma if sigma is None else _v.checked("sigma", sigma)) + self.cv * worker_mean
        return {"mean": float(expected_max_normal(n, 0.0, s)),
                "p50": float(max_normal_ppf(0.5, n, 0.0, s)),
                "p99": float(max_normal_ppf(0.99, n, 0.0, s)), "sigma": s}

    def estimate(self, workload: Profile, cluster: Cluster, config: Config) -> Estimate:
        """Predict one synchronous step of N = ``config.n_replicas`` workers, K = ``config.n_ps``.

        Parameters
        ----------
        workload : Profile
            One worker's profile (model bytes, T_F, T_B, T_S as UP, batch size).
        cluster : Cluster
            Bandwidth (times link efficiency), latency (default base delay), GPUs.
        config : Config
            ``n_replicas`` workers (N), ``n_ps`` servers (K >= 1), epoch size.

        Returns
        -------
        Estimate
            Step time = expected GST; phases are the exposed processes plus
            ``"straggler"``; ``meta["p50"]``, ``meta["p99"]``: step-time
            percentiles; ``epoch_time`` by eq. 9 when ``config.epoch_samples``
            is set.

        Raises
        ------
        SpecError
            ``config.n_ps`` is 0, or an argument is not the expected spec.
        Infeasible
            Model parallelism, an async config, an unstable barrier queue or
            an infinite expected maximum (e.g. Pareto with shape <= 1).
        """
        it = self.iteration(workload, cluster, config)
        n = config.n_replicas
        base_sigma, sigma_source = self.spread_sigma(workload, cluster)
        strag = self.straggler(n, it["worker_mean"], sigma=base_sigma)
        if not all(math.isfinite(strag[q]) for q in ("mean", "p50", "p99")):
            raise Infeasible(f"the slowest of {n} workers has an infinite expected time "
                             f"under {self.distribution!r}")
        exposed = it["exposed"]
        phases = dict(exposed)
        phases["straggler"] = strag["mean"]
        fixed = it["worker_mean"] + exposed["ag"]
        samples = n * cluster.gpus_per_machine * workload.batch_size
        times = it["times"]
        comm = times["fc"] + times["ag"] + times["bc"]
        compute = times["fp"] + times["bp"] + times["up"]
        side, count = barrier_links(n, config.n_ps)
        meta = {"model": "GST", "equation": "seed 001 eqs. 1-18 (GST, eq. 17 split, eq. 9)",
                "workers": n, "n_ps": config.n_ps, "units": self.units,
                "p50": fixed + strag["p50"], "p99": fixed + strag["p99"],
                "worker_mean": it["worker_mean"], "sigma": strag["sigma"],
                "distribution": None if self.distribution is None else repr(self.distribution),
                "comm_time": comm, "compute_time": compute,
                "comm_comp_ratio": comm / compute if compute > 0 else math.inf,
                "exposed_comm_time": exposed["fc"] + exposed["ag"] + exposed["bc"],
                "barrier_links": side, "n_barrier_links": count,
                "layer_pipeline": self.layer_pipeline, "io_pipeline": self.io_pipeline,
                "compression_ratio": self.compression_ratio,
                "sigma_source": sigma_source, "compute_cv": cluster.compute_cv,
                "update_growth": cluster.update_growth}
        est = Estimate.from_phases(phases, samples, meta=meta)
        if self.interval == "iteration":
            est = self._iteration_interval(est, n, fixed, strag["sigma"], samples)
        if config.epoch_samples is None:
            return est
        iters = max(1, math.ceil(config.epoch_samples / samples))
        first = est.step_time - exposed["bc"] - exposed["up"] - exposed["io"] + self.t_io
        epoch = first + (iters - 1) * est.step_time
        if self.tail:
            epoch += exposed["bc"] + exposed["up"]
        meta = dict(est.meta, iterations=iters, epoch_equation="seed 001 eq. 9" +
                    (" with eq. 2's tail term" if self.tail else ""))
        return dataclasses.replace(est, epoch_time=epoch, meta=meta)

    def _iteration_interval(self, est: Estimate, n: int, fixed: float, sigma, samples: float):
        """``est`` with the single-iteration throughput interval (class notes, eq. 8)."""
        q = np.array([(1.0 - self.level) / 2, (1.0 + self.level) / 2])
        if self.distribution is None:
            excess = max_normal_ppf(q, n, 0.0, sigma)
        else:
            excess = _max_ppf(self.distribution, q, float(n))
        t_lo, t_hi = (fixed + float(x) for x in excess)
        if not (math.isfinite(t_hi) and t_lo > 0):
            raise Infeasible(f"the iteration-time quantiles ({t_lo!r}, {t_hi!r}) s give no "
                             f"finite positive throughput interval")
        est = est.with_interval(samples / t_hi, samples / t_lo, level=self.level,
                                source="GST iteration-time percentiles")
        return dataclasses.replace(est, meta=dict(est.meta, iteration_quantiles=(t_lo, t_hi)))


def best_compression_ratio(model: GST, workload: Profile, cluster: Cluster, config: Config,
                           ratios=None, *, refine=True):
    """Compression ratio minimizing the GST step time (Sec. V-C, Fig. 6).

    Evaluates ``model`` with ``compression_ratio=r`` for every r of the grid,
    then (``refine``) polishes the best grid point with a bounded scalar
    minimization between its neighbours.

    Parameters
    ----------
    model : GST
        The model; its ``compression_time`` (t_0) and ``compression_exponent``
        set the cost of compressing.
    workload, cluster, config
        As in :meth:`GST.estimate`.
    ratios : array_like or None
        Grid of r_c in [0, 1); default ``0, 0.01, ..., 0.95``.
    refine : bool
        Polish the grid optimum (scipy.optimize.minimize_scalar, bounded).

    Returns
    -------
    dict
        ``{"best": r*, "step_time": T(r*), "ratios": grid, "step_times": T(grid)}``.

    References
    ----------
    Seed 001 Sec. V-C ("Optimization"), Fig. 6.

    Examples
    --------
    Fig. 6's shape with assumed parameters: communication (FC + AG + BC) of
    0.36 s at r_c = 0 and t_0 = 0.032 x 0.36 s, so that
    ``0.36 (1 - r) + t_0 / (1 - r)^2`` is smallest at r = 0.6:

    >>> from perfmodel.specs import Profile, Cluster, Config
    >>> res = best_compression_ratio(
    ...     GST(units="sound", layer_pipeline=False, compression_time=0.01152),
    ...     Profile(model_bytes=100e6, t_forward=0.1, t_backward=0.2),
    ...     Cluster(machines=8, nic_bandwidth="10Gbps"), Config(n_replicas=4, n_ps=1))
    >>> round(res["best"], 2), res["step_times"][[0, 60, 95]].round(3)   # r = 0, 0.6, 0.95
    (0.6, array([0.672, 0.516, 4.926]))
    """
    from scipy import optimize

    if not isinstance(model, GST):
        raise SpecError("model", f"expected a GST model, got {type(model).__name__}")
    grid = np.linspace(0.0, 0.95, 96) if ratios is None else np.asarray(
        _v.fraction("ratios", ratios, closed=False), dtype=float).ravel()
    if grid.size == 0:
        raise SpecError("ratios", "must hold at least one ratio")

    def step(r):
        return model_at(r).estimate(workload, cluster, config).step_time

    def model_at(r):
        return dataclasses.replace(model, compression_ratio=float(r))

    times = np.array([step(r) for r in grid])
    i = int(np.argmin(times))
    best, best_t = float(grid[i]), float(times[i])
    if _v.boolean("refine", refine) and grid.size > 1:
        lo = float(grid[max(i - 1, 0)])
        hi = float(grid[min(i + 1, grid.size - 1)])
        if hi > lo:
            res = optimize.minimize_scalar(step, bounds=(lo, hi), method="bounded",
                                           options={"xatol": 1e-6})
            if res.fun < best_t:
                best, best_t = float(res.x), float(res.fun)
    return {"best": best, "step_time": best_t, "ratios": grid, "step_times": times}


def bottleneck_evaluation(model: GST, workload: Profile, cluster: Cluster, config: Config, *,
                          bandwidths=None, compute_speedups=None) -> dict:
    """Speedup and communication/computation ratio against bandwidth and compute (Sec. V-C, Fig. 5).

    For every bandwidth B (bytes/s) and compute capability c (the profile's
    FP, BP and UP divided by c), the speedup of ``config.n_replicas`` workers
    over one (:func:`speedup_ratio`) and the ratio of communication time
    (FC + AG + BC, unexposed) to computation time (FP + BP + UP).

    Parameters
    ----------
    model : GST
        The model.
    workload, cluster, config
        As in :meth:`GST.estimate`.
    bandwidths : array_like or None, bytes/s
        NIC bandwidths (> 0); default the cluster's.
    compute_speedups : array_like or None
        Compute capability factors (> 0); default 1.

    Returns
    -------
    dict of str to ndarray
        ``"bandwidths"``, ``"compute_speedups"``, and arrays of shape
        (bandwidths, speedups): ``"speedup"``, ``"comm_comp_ratio"``,
        ``"step_time"`` (s), ``"bottleneck"`` (names).

    References
    ----------
    Seed 001 Sec. V-C ("Evaluation"), Fig. 5.
    """
    if not isinstance(model, GST):
        raise SpecError("model", f"expected a GST model, got {type(model).__name__}")
    check_inputs(workload, cluster, config, "GST", min_servers=1)
    bws = np.atleast_1d(np.asarray(
        _v.checked("bandwidths", cluster.nic_bandwidth if bandwidths is None else bandwidths,
                    positive=True), dtype=float))
    cs = np.atleast_1d(np.asarray(
        _v.checked("compute_speedups", 1.0 if compute_speedups is None else compute_speedups,
                    positive=True), dtype=float))
    shape = (bws.size, cs.size)
    speed, ratio, step = np.empty(shape), np.empty(shape), np.empty(shape)
    neck = np.empty(shape, dtype=object)
    one = config.replace(n_replicas=1)
    for i, b in enumerate(bws):
        cl = cluster.replace(nic_bandwidth=float(b))
        for j, c in enumerate(cs):
            prof = workload.replace(t_forward=workload.t_forward / c,
                                    t_backward=workload.t_backward / c,
                                    t_update=workload.t_update / c)
            est = model.estimate(prof, cl, config)
            base = model.estimate(prof, cl, one)
            speed[i, j] = speedup_ratio(base.step_time, est.step_time, config.n_replicas)
            ratio[i, j] = est.meta["comm_comp_ratio"]
            step[i, j] = est.step_time
            neck[i, j] = est.bottleneck
    return {"bandwidths": bws, "compute_speedups": cs, "speedup": speed,
            "comm_comp_ratio": ratio, "step_time": step, "bottleneck": neck}
