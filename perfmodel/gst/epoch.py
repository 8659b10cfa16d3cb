"""GST and the epoch time: sums of the slowest workers' times (Zhang et al. 2023, eqs. 1-2, 9).

An epoch of synchronous data-parallel training with N workers is a sequence
of *global synchronization times*: the time from the moment the workers fall
out of step (the previous iteration's backward communication BC and update
UP) to the moment every gradient has been aggregated (AG).  Each iteration's
GST is the maximum over workers of their per-worker times, and the epoch time
is the sum of those maxima (every iteration ends at a barrier).

* :func:`gst` -- GST(m, n) of realized per-worker times (eq. 1);
* :func:`epoch_time` -- the epoch time of realized times (eq. 2);
* :func:`expected_epoch_time` -- its expected value with normal (eqs. 7-9)
  or other per-worker times, the sum of expected maxima of
  :mod:`perfmodel.gst.maxima`;
* :func:`monte_carlo_epoch_time` -- the seeded Monte Carlo reference.

Decisions on the paper's ambiguities, each a named option:

* the epoch time is the sum over iterations of the expected maxima (eq. 2,
  third line, and eq. 9); eq. 2's tail term ``max_n(t_bc^M + t_up^M)`` is
  optional (``tail``), since eq. 9 as printed drops it;
* sigma(m) of eq. 7 is given directly (one tunable, ``sigma``).

References
----------
Zhang, Zhang, Wei, Pan, Huang 2023, "Performance Modeling and Analysis of
Distributed Deep Neural Network Training with Parameter Server", Definition 4,
eqs. 1-2, 7-9.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from .. import _validate as _v
from ..errors import SpecError
from .maxima import checked_distribution, expected_max, expected_max_normal, to_open_unit

__all__ = ["gst", "epoch_time", "expected_epoch_time", "monte_carlo_epoch_time"]


def _times(**named) -> dict:
    """Validated non-negative time arrays, broadcast to one 2-D (iterations x workers) shape."""
    arrays = {name: np.asarray(_v.checked(name, value), dtype=float)
              for name, value in named.items()}
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
    Zhang et al. 2023, Definition 4 and eq. 1.

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
    Zhang et al. 2023, eq. 2 (third line).

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
    return None, checked_distribution("distribution", distribution)


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
    Zhang et al. 2023, eqs. 2, 7-9.

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
        total = np.sum(m, axis=ax) + sigma_sum * expected_max_normal(k)
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
    Zhang et al. 2023, eqs. 2, 7-9.

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
            z = special.ndtri_exp(np.log(to_open_unit(rng.random(m.size))) / k)
            acc = float(np.sum(m + s * z))
        else:
            for start in range(0, m.size, rows):
                stop = min(m.size, start + rows)
                z = rng.standard_normal((stop - start, k)).max(axis=1)
                acc += float(np.sum(m[start:stop] + s[start:stop] * z))
        totals[r] = acc + extra
    se = float(totals.std(ddof=1) / math.sqrt(reps)) if reps > 1 else math.nan
    return float(totals.mean()), se

