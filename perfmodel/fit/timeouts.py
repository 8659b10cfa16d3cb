"""Timeout stalls of lossy links, read off measured step times.

On a link that drops packets a message sometimes stalls for a whole
retransmission timeout (RTO).  From the mean throughput of one or two runs a
timeout and a slower link cannot be told apart: both lengthen a step.  The
step times can: a timeout lengthens a few steps by a whole RTO, a slower link
every step a little.  :func:`timeouts_from_step_times` reads the timeout
probability q off a run's step-time median (robust to rare long stalls) or
spread; :func:`with_timeout_band` then holds a candidate's q within a factor
:data:`TIMEOUT_BAND` of that reading, so that the means fit the link
efficiency.  The stall itself is priced by
:func:`perfmodel.coarse.timeout_stall` (sync) and
:func:`perfmodel.queueing.async_stall_time` (async).
"""

from __future__ import annotations

import dataclasses

from .. import _validate as _v
from ..coarse import timeout_probability_from_delay, timeout_probability_from_spread
from ..errors import SpecError
from ..measurements import measured_profile
from ..sim.trace import Trace
from ..specs import Cluster, Profile

__all__ = ["TIMEOUT_BAND", "timeouts_from_step_times", "timeout_why", "with_timeout_band",
           "band_values", "step_time_band"]

#: How far (a factor either way) a candidate's timeout probability may stray from
#: the step-time spread's estimate: a spread measured over a dozen stalls is known
#: to about +-50% (Poisson counts that clump), so a factor 2 is about two standard
#: errors.  On the ns-3 matrix's lossy regimes 2 and 3 did about as well, the
#: estimate itself (factor 1) worse.
TIMEOUT_BAND = 2.0


def timeouts_from_step_times(profile: Profile, cluster: Cluster, measurements, *,
                    mode: str | None = None):
    """The timeout probability the measured step times imply, or None.

    Uses the measurement with the fewest workers among those with a
    ``step_time_median`` or ``step_time_std`` and at least one server (the
    fewest workers hide a stall least; both estimators are exact for one).
    The median is read first: the mean step (``workers * batch /
    throughput``) exceeds it by the expected stall
    (:func:`perfmodel.coarse.timeout_probability_from_delay`), which rare
    back-to-back timeouts do not inflate as they do the variance.  Else the
    spread beyond the compute's,
    ``cluster.compute_cv * (t_forward + t_backward)`` at the measurement's
    batch (:func:`perfmodel.coarse.timeout_probability_from_spread`).  A
    sync step's phase has ``workers * n_ps`` messages, an async worker's
    ``n_ps``.

    Parameters
    ----------
    profile : Profile
    cluster : Cluster
        Its ``retransmit_timeout`` and ``compute_cv`` are read.
    measurements : sequence of perfmodel.measurements.Measurement
    mode : {"sync", "async"} or None
        For measurements without a mode (default sync).

    Returns
    -------
    (float, Measurement) or None
        q and the measurement it was read from; None when no measurement
        has step-time statistics.
    """
    usable = [m for m in measurements if m.n_ps >= 1 and
              (m.step_time_median is not None or m.step_time_std is not None)]
    if not usable:
        return None
    m = min(usable, key=lambda m: (m.workers, m.line))
    if isinstance(profile, Trace):     # its compute and batch are its coarse profile's
        profile = profile.coarse_profile()
    prof = measured_profile(profile, m)
    mode = m.mode or mode or "sync"
    messages = m.n_ps * (m.workers if mode == "sync" else 1)
    r = cluster.retransmit_timeout
    if m.step_time_median is not None:
        mean = m.workers * prof.batch_size / m.throughput
        q = timeout_probability_from_delay(mean, m.step_time_median, r, messages)
    else:
        q = timeout_probability_from_spread(m.step_time_std, r, messages,
                                            cluster.compute_cv * (prof.t_forward +
                                                                  prof.t_backward))
    return float(q), m


def timeout_why(probability: float, measurement) -> str:
    """The clause a selection's ``why`` gets when the step times held q near ``probability``."""
    k = measurement.workers
    return (f"; timeout probability held near {probability:.3g}, read off the step times "
            f"at {k} worker{'s' if k > 1 else ''}")


def with_timeout_band(candidate, probability: float,
                 band: float = TIMEOUT_BAND):
    """The candidate with its timeout probabilities held near ``probability``.

    Its grid's values within a factor ``band`` of ``probability``, and
    ``probability`` itself (rounded to 4 decimals), nearest first: a fit on
    one point (a LOO fold) takes the estimate, a fit on two chooses in the
    band (``band=math.inf``: the whole grid, nearest first).  A candidate
    that does not fit q is returned unchanged; an estimate of 0 (no stalls
    in the step times) holds q at 0.

    Raises
    ------
    SpecError
        ``probability`` outside [0, 1] or ``band`` < 1.
    """
    if not (0.0 <= probability <= 1.0):
        raise SpecError("probability", f"must be in [0, 1], got {probability!r}")
    band = _v.at_least_one("band", band)
    grid = dict(candidate.grid)
    if "timeout_probability" not in grid:
        return candidate
    grid["timeout_probability"] = band_values(grid["timeout_probability"], probability, band)
    return dataclasses.replace(candidate, grid=grid)


def band_values(values, probability: float, band: float) -> tuple:
    """``values`` within a factor ``band`` of ``probability``, and it (4 decimals), nearest
    first."""
    q = round(float(probability), 4)
    inside = {float(x) for x in values if q / band <= x <= q * band} if q else set()
    return tuple(sorted(inside | {q}, key=lambda x: (abs(x - q), x)))


def step_time_band(profile, cluster, ms, grid, grids, model=None) -> dict:
    """The timeout probabilities the measured step times (median or spread) allow, when
    fitted from the default grid (:func:`timeouts_from_step_times`, within
    :data:`TIMEOUT_BAND`); {} otherwise.  Measurements without a mode
    take the model's: an asynchronous model's step is one worker's cycle."""
    if "timeout_probability" not in grid or "timeout_probability" in (grids or {}):
        return {}
    mode = "async" if tuple(getattr(model, "modes", ())) == ("async",) else None
    spread = timeouts_from_step_times(profile, cluster, ms, mode=mode)
    if spread is None:
        return {}
    return {"timeout_probability": band_values(grid["timeout_probability"], spread[0],
                                                TIMEOUT_BAND)}
