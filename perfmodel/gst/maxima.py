"""Maxima of the workers' times: iid and non-identical normals, and heavier tails.

The step of synchronous training ends at a barrier, so its time is the
**maximum over workers** of their per-worker times (Zhang et al. 2023,
Definition 4); with each worker's time normal (eq. 7) the maximum has the
distribution ``F_max = F^N`` (eq. 8) and its expected value (eq. 9) is what the
epoch time sums (:mod:`perfmodel.gst.epoch`).  This module computes those
maxima:

* iid normals (eqs. 7-9): :func:`expected_max_normal` (E[max of n iid
  normals], numerical integration accurate to ~1e-14 relative for n up to
  10^6 and beyond), the distribution of the maximum (:func:`max_normal_cdf`,
  :func:`max_normal_sf`, :func:`max_normal_pdf`, :func:`max_normal_ppf`,
  :func:`max_normal_std`) and Blom's closed-form approximation
  (:func:`blom_max_normal`, error stated there);
* non-identical normals: :func:`expected_max_normals`, and Clark's exact
  two-variable formula (:func:`clark_expected_max`);
* other distributions (heavier tails): :func:`expected_max`, :func:`max_cdf`,
  :func:`max_ppf`, :func:`sample_max` for any scipy.stats frozen distribution
  or an :class:`Empirical` sample (integration, exact sums or seeded Monte
  Carlo).  :class:`Empirical` is also the sampling distribution of measured
  compute times of :mod:`perfmodel.placement`, which re-exports it: one class,
  one meaning of a measured sample.

Every function validates its arguments (SpecError naming the argument) and
broadcasts over arrays; a float in gives a float out.
:func:`checked_distribution`, :func:`max_quantile` and :func:`to_open_unit`
are the unvalidated kernels the rest of the package shares.

Examples
--------
>>> round(expected_max_normal(2), 12), round(1 / math.sqrt(math.pi), 12)
(0.564189583548, 0.564189583548)
>>> expected_max_normal(np.array([1, 10, 1000]), mu=1.0, sigma=0.1).round(6)
array([1.      , 1.153875, 1.324144])

References
----------
Zhang, Zhang, Wei, Pan, Huang 2023, "Performance Modeling and Analysis of
Distributed Deep Neural Network Training with Parameter Server", eqs. 7-9.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy import integrate, special

from .. import _validate as _v
from ..errors import SpecError

__all__ = [
    "METHODS", "BLOM_ALPHA", "BLOM_MAX_ERROR",
    # maxima of iid normals (eqs. 7-9)
    "expected_max_normal", "max_normal_std", "max_normal_cdf", "max_normal_sf",
    "max_normal_pdf", "max_normal_ppf", "blom_max_normal",
    # maxima of non-identical normals
    "expected_max_normals", "clark_expected_max",
    # other distributions
    "Empirical", "CallableFloat", "expected_max", "max_cdf", "max_ppf", "sample_max",
    # unvalidated kernels shared by the package
    "checked_distribution", "max_quantile", "to_open_unit",
]

#: Ways to compute an expected maximum for a non-normal distribution.
METHODS = ("quad", "mc")
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
    Zhang et al. 2023, eqs. 7-9 (normal per-worker GST, F_max = F^N, T = sum of E[max]).

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
    Zhang et al. 2023, eq. 8 (distribution of the maximum).

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
    Zhang et al. 2023, eq. 8, F_max(m, t) = F^N(m, t).

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
    Zhang et al. 2023, eq. 8.

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
    Zhang et al. 2023, eq. 8 ("f_max is obtained by differentiating" F_max).

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
    Zhang et al. 2023, eq. 8 (inverse of F^N).

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
    Zhang et al. 2023, eq. 9 (the quantity approximated).

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
    Operations Research 9(2), eq. 2; the two-worker case of Zhang et al. 2023, eq. 9.

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
    Zhang et al. 2023, eqs. 8-9 with per-worker mu and sigma (F_max = prod_n P(t^{m,n} <= t)).

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

class CallableFloat(float):
    """A float that returns itself when called: ``x`` and ``x()`` are the same number.

    :class:`Empirical` serves two interfaces that spell its moments
    differently: scipy.stats frozen distributions call them (``d.mean()``),
    the sampling distributions of :mod:`perfmodel.placement` read them
    (``d.mean``).  Its ``mean`` and ``std`` are these floats, so both work.

    Examples
    --------
    >>> x = CallableFloat(0.5)
    >>> x == x() == 0.5, 2 * x
    (True, 1.0)
    """

    __slots__ = ()

    def __call__(self) -> float:
        return float(self)


@dataclass(frozen=True)
class Empirical:
    """The empirical distribution of a sample: each value with probability 1/k.

    One class for two uses, so that a measured sample means the same thing
    everywhere:

    * the maxima functions of this module: it has the methods of a
      scipy.stats frozen distribution they use (``cdf``, ``logcdf``, ``sf``,
      ``ppf``, ``isf``, ``mean()``, ``rvs``), and the exact expected maximum
      of n draws with replacement (:meth:`expected_max`);
    * the compute-time distributions of :mod:`perfmodel.placement` (which
      re-exports it and registers it as a ``Distribution``): ``sample(rng,
      size)`` draws with replacement from the sample in its given order, and
      ``mean``, ``std`` read as attributes.

    Two samples with the same values in the same order are equal (and hash
    alike).

    Parameters
    ----------
    samples : array_like, s
        Observed values (finite, any sign, at least one; flattened), e.g.
        profiled step times or deviations from their mean.  Placement's
        simulators take durations only: they reject a sample with a negative
        value when it is given to them.

    Attributes
    ----------
    samples : tuple of float
        The values in the order given.
    values : ndarray, s
        The values sorted (read-only).
    mean, std : CallableFloat, s
        Sample mean and standard deviation (divisor k), as ``d.mean`` or ``d.mean()``.

    Raises
    ------
    SpecError
        Field ``samples``: no value, or a value that is not a finite number.

    References
    ----------
    Zhang et al. 2023, eqs. 8-9 with a measured distribution; Jain, Kumar,
    Mao, Sec. 4.2 and Figs. 6-7 (sampled, heavy-tailed compute times).

    Examples
    --------
    >>> d = Empirical([1.0, 2.0, 4.0])
    >>> float(d.cdf(2.0)), float(d.ppf(0.5)), round(d.expected_max(2), 6)   # (1+3*2+5*4)/9
    (0.6666666666666666, 2.0, 3.0)
    >>> round(d.mean, 6) == round(d.mean(), 6) == 2.333333
    True
    >>> d.sample(np.random.default_rng(0), 4)
    array([4., 2., 2., 1.])
    """

    samples: tuple = field(repr=False)

    def __post_init__(self):
        given = np.asarray(_v.finite_real("samples", self.samples), dtype=float).ravel()
        if given.size == 0:
            raise SpecError("samples", "must hold at least one value, got []")
        given.flags.writeable = False
        ordered = np.sort(given)
        ordered.flags.writeable = False
        samples = tuple(float(x) for x in given)
        object.__setattr__(self, "samples", samples)
        object.__setattr__(self, "values", ordered)
        object.__setattr__(self, "_given", given)
        object.__setattr__(self, "_hash", hash(samples))

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        v = self.values
        return (f"Empirical(n={v.size}, mean={self.mean:.4g}, std={self.std:.4g}, "
                f"min={v[0]:g}, max={v[-1]:g})")

    @property
    def mean(self) -> CallableFloat:
        """Sample mean (s)."""
        return CallableFloat(self._given.mean())

    @property
    def std(self) -> CallableFloat:
        """Sample standard deviation (s, divisor k)."""
        return CallableFloat(self._given.std())

    def sample(self, rng: np.random.Generator, size) -> np.ndarray:
        """``size`` draws with replacement (s) using ``rng`` (placement's interface)."""
        return rng.choice(self._given, size=size, replace=True)

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

    def rvs(self, size=None, random_state=None):
        """Draws with replacement (seeded by ``random_state``; scipy's interface)."""
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


def checked_distribution(name: str, dist):
    """``dist`` as a distribution: a scipy.stats frozen distribution (or anything with
    ``cdf``, ``ppf``, ``isf`` and ``mean``) as is, a sample as an :class:`Empirical`;
    otherwise SpecError naming ``name``."""
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


def to_open_unit(u):
    """Map ``rng.random()`` output in [0, 1) to the open interval (0, 1) (no log(0))."""
    return u + 2.0 ** -54


def max_quantile(dist, q, n):
    """Quantile of the max of n iid draws of ``dist`` (:func:`max_ppf` without its checks).

    ``dist.ppf(q^(1/n))``, evaluated by ``isf`` in the upper half (no 1 - eps rounding).
    """
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
    Zhang et al. 2023, eq. 8 with any distribution in place of eq. 7.

    Examples
    --------
    >>> from scipy import stats
    >>> round(float(max_cdf(1.0, stats.expon(), 2)), 6)   # (1 - e^-1)^2
    0.399576
    """
    x = _v.finite_real("t", t)
    d = checked_distribution("dist", dist)
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
    Zhang et al. 2023, eq. 8 (inverse of F^N).

    Examples
    --------
    >>> from scipy import stats
    >>> round(float(max_ppf(0.5, stats.norm(), 1024)), 6) == round(max_normal_ppf(0.5, 1024), 6)
    True
    """
    p = _v.checked("q", q, maximum=1.0)
    d = checked_distribution("dist", dist)
    k = _v.counts("n", n)
    return _v.broadcast_result(max_quantile(d, p, k), p, k)


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
    Zhang et al. 2023, eq. 8 (F_max = F^N).

    Examples
    --------
    >>> from scipy import stats
    >>> x = sample_max(stats.norm(), 100, 200_000, seed=1)
    >>> bool(abs(x.mean() - expected_max_normal(100)) < 4 * x.std() / np.sqrt(x.size))
    True
    """
    d = checked_distribution("dist", dist)
    k = _v.counts("n", n)
    if np.ndim(k) != 0:
        raise SpecError("n", f"must be a single whole number, got {n!r}")
    rng = np.random.default_rng(seed)
    return max_quantile(d, to_open_unit(rng.random(size)), float(k))


def _expected_max_quad(dist, n: float) -> float:
    """E[max of n iid draws] = c + int_c^inf (1 - F^n) - int_-inf^c F^n, c the median of the max."""
    mean = float(dist.mean())
    if n == 1 or not math.isfinite(mean):
        return mean
    med = float(max_quantile(dist, 0.5, n))
    lo = float(max_quantile(dist, 1e-30, n))
    hi = float(max_quantile(dist, 1.0 - 1e-6, n))
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
    Zhang et al. 2023, eqs. 8-9 with any distribution in place of the normal of eq. 7;
    heavy-tailed compute times: Jain, Kumar, Mao, Figs. 6-7.

    Examples
    --------
    >>> from scipy import stats
    >>> round(expected_max(stats.expon(), 3), 10)   # 1 + 1/2 + 1/3
    1.8333333333
    >>> round(expected_max([1.0, 2.0, 4.0], 2), 10)
    3.0
    """
    d = checked_distribution("dist", dist)
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

