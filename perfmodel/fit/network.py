"""Per-network calibration: a few measured runs fit the cluster fields every model reads.

:func:`calibrate_network` fits the :class:`~perfmodel.specs.Cluster` fields
that describe how a network departs from the papers' ideal one
(``link_efficiency``: goodput over line rate; ``sharing_weight``: PS against
FCFS sharing of a link, 0.5 in Li et al. 2022, eq. 9; ``update_growth``: a sync
update costing ``t_update ((1 - g) + g K)``; ``compute_cv``: the spread of a
worker's compute time; ``timeout_probability`` on a lossy link) from a few runs
of one job, on top of :func:`perfmodel.fit.grid.fit_tunables`.  The result's
``cluster`` carries a provenance note and is saved as the cluster file every
model reads (``perfmodel calibrate fit --save``).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import SpecError
from ..io import load_measurements, save
from ..measurements import Measurement
from ..sim.model import TraceSim
from ..specs import Cluster, Profile
from .grid import (
    MEASURED_FIELDS,
    FitResult,
    checked_measurements,
    cv_folds,
    error_objective,
    fit_tunables,
    grid_range,
    model_object,
    plain_value,
    predict_one,
)
from .timeouts import step_time_band

__all__ = ["CALIBRATION_GRIDS", "WORSE_THAN_UNCALIBRATED", "SIM_GRIDS", "SEARCHES", "COORDINATE_SWEEPS",
           "CALIBRATION_PARAMS", "CALIBRATION_MODELS", "NEAR_OPTIMAL", "NetworkCalibration",
           "calibrate_network"]

#: Default candidate values of each per-network parameter (exact decimals).
#: ``link_efficiency`` 0.30, 0.35, ..., 1.00 (TCP goodput rarely falls below
#: a third of the line rate); ``sharing_weight`` and ``update_growth`` 0.0,
#: 0.1, ..., 1.0 (their whole range); ``compute_cv`` 0 to 0.3 (per-step
#: compute times of one GPU vary by a few percent; 0.3 is a noisy shared host);
#: ``timeout_probability`` (a lossy link, fitted only when asked for in
#: ``params``) 0 to 0.5, finer near 0.
CALIBRATION_GRIDS: dict[str, tuple[float, ...]] = {
    "link_efficiency": grid_range(0.3, 1.0, 0.05),
    "sharing_weight": grid_range(0.0, 1.0, 0.1),
    "update_growth": grid_range(0.0, 1.0, 0.1),
    "compute_cv": (0.0, 0.02, 0.05, 0.1, 0.2, 0.3),
    "timeout_probability": (0.0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08, 0.1, 0.12, 0.15,
                            0.2, 0.3, 0.4, 0.5),
}


#: Coarser defaults when the model is the simulator (far slower per estimate
#: than a closed form): 6 + 5 + 3 + 4 values for a coordinate search.
SIM_GRIDS: dict[str, tuple[float, ...]] = {
    "link_efficiency": grid_range(0.5, 1.0, 0.1),
    "sharing_weight": grid_range(0.0, 1.0, 0.25),
    "update_growth": (0.0, 0.5, 1.0),
    "compute_cv": (0.0, 0.05, 0.1, 0.2),
    "timeout_probability": (0.0, 0.02, 0.05, 0.1, 0.2, 0.3),
}


#: Search strategies of :func:`calibrate_network`.
SEARCHES = ("auto", "joint", "coordinate")


#: Largest number of sweeps of the coordinate search.
COORDINATE_SWEEPS = 4


#: The parameters :func:`calibrate_network` fits by default (the timeout
#: probability only when the link is known to be lossy: pass it in ``params``).
CALIBRATION_PARAMS: tuple[str, ...] = ("link_efficiency", "sharing_weight", "update_growth",
                                       "compute_cv")


#: Default model per measured mode: the sync hybrid (Li et al. 2022, eq. 9) and the MVA.
CALIBRATION_MODELS: dict[str, str] = {"sync": "sync", "async": "async"}


#: A grid point whose objective is within this of the best (absolute, e.g.
#: 0.005 = half a percentage point of mean relative error) is "as good":
#: :attr:`NetworkCalibration.ranges` spans the values of all such points.
NEAR_OPTIMAL = 0.005


#: What a calibration whose held-out error beats none of the uncalibrated cluster's means.
WORSE_THAN_UNCALIBRATED = ("the fit predicts held-out runs worse than the uncalibrated cluster "
                           "does (cross-validation error above the uncalibrated error): fewer "
                           "parameters (--params) or more runs")


@dataclass(frozen=True, eq=False)
class NetworkCalibration:
    """The per-network parameters fitted by :func:`calibrate_network`.

    Attributes
    ----------
    cluster : Cluster
        The cluster with the fitted values, its ``source`` extended by a
        provenance note (measurements, model, LOO error).  Save it with
        :meth:`save` (or :func:`perfmodel.io.save`); every model reads it.
    params : dict of str to float
        Fitted value of each parameter that was fitted.
    fit : FitResult
        The grid search behind it (surface, predictions, CV choices).
    residuals : tuple of float
        Signed relative error ``predicted / measured - 1`` of each
        measurement at the fitted values (training residuals).
    loo_error : float
        Cross-validation error of the whole search (leave-one-out by
        default): the objective over held-out relative errors.  NaN without
        CV.
    base_error : float
        Objective of the uncalibrated cluster on the measurements.
    unused : tuple of str
        Requested parameters that do not change the model's predictions on
        these measurements (left at the cluster's value, not fitted).
    ranges : dict of str to (float, float)
        Per fitted parameter, the smallest and largest grid value among the
        points within :data:`NEAR_OPTIMAL` of the best objective: a wide range
        means the measurements do not pin the parameter down.
    model_name : str
        The model fitted (registry name or class name).
    source : str
        Where the measurements came from ("" if not a file).
    grids : dict of str to tuple
        The candidate values searched per fitted parameter.
    cv : "loo", int or None
        The cross-validation asked for.
    search : {"joint", "coordinate"}
        How the grid was searched.  With ``"coordinate"``, ``fit`` is the
        1-D fit of the last parameter in the last sweep (its ``cluster`` and
        ``best_predictions`` are the calibrated ones; its ``cv_error`` is
        NaN: ``loo_error`` reruns the whole search per fold) and ``ranges``
        come from each parameter's last 1-D fit.
    """

    cluster: Cluster
    params: dict
    fit: FitResult
    residuals: tuple
    loo_error: float
    base_error: float
    unused: tuple
    ranges: dict
    model_name: str
    source: str = ""
    grids: dict = dataclasses.field(default_factory=dict)
    cv: Any = "loo"
    search: str = "joint"

    @property
    def train_error(self) -> float:
        """Objective on all measurements at the fitted values."""
        return float(error_objective(self.fit.objective, np.abs(np.asarray(self.residuals))))

    @property
    def worse_than_uncalibrated(self) -> bool:
        """Whether held-out runs are predicted worse than by the cluster as it was.

        A fit can match the runs it saw and still miss the ones it did not
        (too many parameters for too few runs); its cross-validation error
        above ``base_error`` says so.  False without cross-validation.
        """
        return bool(math.isfinite(self.loo_error) and self.loo_error > self.base_error)

    def save(self, path) -> None:
        """Write the calibrated cluster file (JSON or YAML by extension)."""
        save(self.cluster, path)

    def to_dict(self) -> dict:
        """JSON-ready summary: fitted values, errors, residuals, the calibrated cluster."""
        def num(x):
            return None if not math.isfinite(x) else float(x)
        return {"model": self.model_name, "params": dict(self.params), "search": self.search,
                "objective": self.fit.objective, "train_error": num(self.train_error),
                "loo_error": num(self.loo_error), "base_error": num(self.base_error),
                "worse_than_uncalibrated": self.worse_than_uncalibrated, "cv": self.cv,
                "residuals": [num(r) for r in self.residuals],
                "unused": list(self.unused),
                "ranges": {k: list(v) for k, v in self.ranges.items()},
                "source": self.source, "grid": {k: list(v) for k, v in self.grids.items()},
                "measurements": [dict(m.to_dict(), predicted=float(p), residual=num(r))
                                 for m, p, r in zip(self.fit.measurements,
                                                    self.fit.best_predictions, self.residuals)],
                "cluster": self.cluster.to_dict()}

    def text(self) -> str:
        """A short human-readable report."""
        fitted = ", ".join(f"{k}={v:g}" for k, v in self.params.items())
        lines = [f"{self.model_name} ({self.search} search): {fitted}",
                 f"  train error {100 * self.train_error:.2f}%, uncalibrated "
                 f"{100 * self.base_error:.2f}% ({self.fit.objective}, "
                 f"{len(self.residuals)} measurements)"]
        if math.isfinite(self.loo_error):
            lines.append(f"  cross-validation ({self.cv}) error {100 * self.loo_error:.2f}%")
        if self.worse_than_uncalibrated:
            lines.append(f"  warning: {WORSE_THAN_UNCALIBRATED}")
        wide = [f"{k} in [{lo:g}, {hi:g}]" for k, (lo, hi) in self.ranges.items() if lo != hi]
        if wide:
            lines.append(f"  not pinned down (within {100 * NEAR_OPTIMAL:g} points of the best): "
                         + ", ".join(wide))
        if self.unused:
            lines.append(f"  not fitted (no effect on these predictions): "
                         f"{', '.join(self.unused)}")
        return "\n".join(lines)


def _measurement_source(measurements) -> tuple[tuple, str]:
    """(measurements, file name): a path is read, a sequence passes through."""
    if isinstance(measurements, (str, os.PathLike)):
        return load_measurements(measurements), str(measurements)
    return measurements, ""


def _default_model(ms: Sequence[Measurement]) -> str:
    modes = sorted({m.mode or "sync" for m in ms})
    if len(modes) > 1:
        raise SpecError("measurements", "mix sync and async runs; calibrate one mode at a time "
                                        "or pass a model that predicts both (e.g. model='sim')")
    return CALIBRATION_MODELS[modes[0]]


def _calibration_grids(params, grids, defaults: Mapping) -> dict[str, tuple]:
    if isinstance(params, str) or not hasattr(params, "__iter__"):
        raise SpecError("params", f"expected a sequence of Cluster field names, got {params!r}")
    params = tuple(params)
    if not params:
        raise SpecError("params", "needs at least one parameter")
    grids = dict(grids or {})
    fields = {f.name for f in dataclasses.fields(Cluster)}
    for key in grids:
        if key not in params:
            raise SpecError(f"grids.{key}",
                            f"not among the parameters fitted ({', '.join(params)})")
    out = {}
    for name in params:
        if name not in fields or name in MEASURED_FIELDS:
            raise SpecError(f"params.{name}", "not a Cluster field that a calibration sets "
                                              f"(default: {', '.join(CALIBRATION_PARAMS)})")
        if name in out:
            raise SpecError(f"params.{name}", "given twice")
        if name not in grids and name not in defaults:
            raise SpecError(f"grids.{name}", "no default grid; give its candidate values")
        out[name] = grids.get(name, defaults.get(name))
    return out


def _is_simulator(obj) -> bool:
    return isinstance(obj, TraceSim)


def _search(search, obj) -> str:
    if search not in SEARCHES:
        raise SpecError("search", f"expected one of {', '.join(SEARCHES)}, got {search!r}")
    if search == "auto":
        return "coordinate" if _is_simulator(obj) else "joint"
    return search


@dataclass(frozen=True)
class _Memo:
    """A model whose estimates are remembered (a coordinate search revisits points)."""

    model: Any
    cache: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)

    def estimate(self, workload, cluster, config):
        key = (workload, cluster, config)
        if key not in self.cache:
            self.cache[key] = self.model.estimate(workload, cluster, config)
        return self.cache[key]


def _error(memo, profile: Profile, cluster: Cluster, ms, objective: str) -> float:
    predicted = np.array([predict_one(memo, profile, cluster, m) for m in ms])
    measured = np.array([m.throughput for m in ms])
    return float(error_objective(objective, np.abs(predicted / measured - 1.0)))


def _sweeps(memo, profile: Profile, cluster: Cluster, ms, grids: Mapping,
            objective: str) -> tuple[Cluster, list[FitResult]]:
    """Coordinate sweeps (1-D :func:`fit_tunables` per parameter) until nothing changes."""
    current = cluster
    for _ in range(COORDINATE_SWEEPS):
        fits, changed = [], False
        for name, values in grids.items():
            fit = fit_tunables(memo, profile, current, ms, _cluster_keys({name: values}),
                               cv=None, objective=objective)
            fits.append(fit)
            if fit.best[name] != getattr(current, name):
                current, changed = fit.cluster, True
        if not changed:
            break
    return current, fits


def _cluster_keys(grids: Mapping) -> dict:
    """Grid keys as cluster fields (a model option of the same name would take them)."""
    return {f"cluster.{name}": values for name, values in grids.items()}


def _neighbourhood(grids: Mapping, cluster: Cluster) -> dict[str, tuple]:
    """Each parameter's current grid value and its neighbours on the sorted grid."""
    out = {}
    for name, values in grids.items():
        ordered = sorted(set(values))
        i = ordered.index(getattr(cluster, name))
        out[name] = tuple(ordered[max(i - 1, 0):i + 2])
    return out


def _coordinate_search(memo, profile: Profile, cluster: Cluster, ms, grids: Mapping,
                       objective: str) -> tuple[Cluster, list[FitResult]]:
    """Coordinate sweeps, then a joint step among grid neighbours to leave ridges.

    A ridge (two parameters trading off, e.g. link efficiency against the
    spread of compute times) stops pure coordinate descent; when the joint
    search over each parameter's neighbours improves the objective, the
    sweeps start again from there.  Returns the calibrated cluster and the
    1-D fits of the last sweep.
    """
    current, fits = _sweeps(memo, profile, cluster, ms, grids, objective)
    for _ in range(COORDINATE_SWEEPS):
        local = fit_tunables(memo, profile, current, ms,
                             _cluster_keys(_neighbourhood(grids, current)), cv=None,
                             objective=objective)
        if not local.train_error < _error(memo, profile, current, ms, objective):
            break
        current, fits = _sweeps(memo, profile, local.cluster, ms, grids, objective)
    return current, fits


def _coordinate_cv(memo, profile: Profile, cluster: Cluster, ms, grids: Mapping, cv,
                   objective: str) -> float:
    """Objective over held-out errors, the whole coordinate search redone per fold."""
    folds = cv_folds(cv, len(ms))
    if folds is None:
        return float("nan")
    held = np.empty(len(ms))
    for test in folds:
        train = [m for i, m in enumerate(ms) if i not in set(test.tolist())]
        fitted, _ = _coordinate_search(memo, profile, cluster, train, grids, objective)
        for i in test:
            held[i] = predict_one(memo, profile, fitted, ms[i]) / ms[i].throughput - 1.0
    return float(error_objective(objective, np.abs(held)))


def _checked_values(cluster: Cluster, name: str, values) -> tuple[float, ...]:
    """A parameter's candidates as the cluster stores them (SI floats), each validated."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise SpecError(f"grids.{name}", f"expected a sequence of values, got {values!r}")
    out = []
    for v in values:
        try:
            out.append(getattr(cluster.replace(**{name: plain_value(v)}), name))
        except SpecError as err:
            raise SpecError(f"grids.{name}", err.message) from None
    if not out or any(v is None for v in out):
        raise SpecError(f"grids.{name}", f"expected numbers, got {values!r}")
    return tuple(out)


def _sensitive(obj, profile: Profile, cluster: Cluster, ms, name: str, values) -> bool:
    """Whether the predictions change between the grid's extremes of one parameter."""
    lo, hi = (cluster.replace(**{name: v}) for v in (min(values), max(values)))
    a = np.array([predict_one(obj, profile, lo, m) for m in ms])
    b = np.array([predict_one(obj, profile, hi, m) for m in ms])
    return not np.allclose(a, b, rtol=1e-12, atol=0.0)


def _with_value(values, current) -> tuple:
    values = tuple(values)
    return values if current is None or current in values else values + (current,)


def _near_optimal_ranges(fit: FitResult) -> dict[str, tuple[float, float]]:
    scores = fit.surface.ravel()
    near = scores <= scores.min() + NEAR_OPTIMAL
    points = list(itertools.product(*fit.values))
    out = {}
    for i, key in enumerate(fit.keys):
        vals = [p[i] for p, ok in zip(points, near) if ok]
        out[key] = (float(min(vals)), float(max(vals)))
    return out


def _provenance(cluster: Cluster, params: dict, name: str, n: int, source: str,
                loo: float, base: float) -> str:
    fitted = ", ".join(f"{k}={v:g}" for k, v in params.items())
    where = f" from {source}" if source else ""
    loo_text = f"LOO error {100 * loo:.2f}%" if math.isfinite(loo) else "no cross-validation"
    note = (f"Calibrated by perfmodel.tuning.calibrate_network ({name}, {n} "
            f"measurements{where}): {fitted}; {loo_text}, uncalibrated error "
            f"{100 * base:.2f}%.")
    return f"{cluster.source} {note}".strip()


def calibrate_network(profile: Profile, cluster: Cluster, measurements, *, model=None,
                      params: Sequence[str] = CALIBRATION_PARAMS,
                      grids: Mapping[str, Sequence] | None = None, cv="loo",
                      objective: str = "mean_relative", search: str = "auto",
                      source: str = "") -> NetworkCalibration:
    """Fit a network's parameters from a few measured runs of one job.

    The values go into the :class:`Cluster` (the cluster file), so every model
    reads them: ``link_efficiency`` (goodput over line rate), ``sharing_weight``
    (PS against FCFS sharing, Li et al. 2022, eq. 9 uses 0.5), ``update_growth``
    (the sync update costs ``t_update ((1 - g) + g K)``) and ``compute_cv``
    (spread of one worker's compute time; only the simulator and GST see it).

    Parameters
    ----------
    profile : Profile
        The job's single-worker profile (M, T_F, T_B, T_S, batch).
    cluster : Cluster
        The network to calibrate; its other fields are kept.
    measurements : sequence of Measurement, or str or path
        Measured runs of the job (a path is read as the measurement CSV of
        :func:`parse_measurements`).  Three configurations, e.g. 1 and 2
        workers and a third (more workers, or another bandwidth to tell the
        sharing weight from the update growth), are the intended minimum.
    model : str or model object, optional
        Default: by the measurements' mode, ``"sync"`` (SyncCoarse, hybrid
        sharing of eq. 9 with weight w) or ``"async"`` (AsyncMVA).  Pass
        ``"sim"`` (or a :class:`~perfmodel.sim.model.TraceSim`) or ``"gst"``
        to fit ``compute_cv``, which the coarse models do not see; the
        simulator costs far more per grid point, so give it small ``grids``.
    params : sequence of str
        Cluster fields to fit (default :data:`CALIBRATION_PARAMS`).  Those
        that do not change the model's predictions on these measurements
        (e.g. ``compute_cv`` for the coarse models, ``update_growth`` when
        ``t_update`` is 0, ``sharing_weight`` for AsyncMVA or with one
        worker only) are left as they are and listed in ``unused``.
    grids : mapping of str to sequence, optional
        Candidate values replacing :data:`CALIBRATION_GRIDS` for some params
        (required for a param without a default grid); unit strings are
        accepted (``"4Gbps"`` for ``per_flow_cap``).  The cluster's own value
        is added as the last candidate when missing (unless it is None, e.g.
        no ``per_flow_cap``), so the calibrated training error is never above
        the uncalibrated one.  One exception: when ``timeout_probability`` is
        fitted from its default grid and measurements carry a
        ``step_time_median`` or ``step_time_std``, its values are those within
        :data:`perfmodel.fit.timeouts.TIMEOUT_BAND` of what the step times imply
        (:func:`perfmodel.fit.timeouts.timeouts_from_step_times`), as the model
        selection holds them.
    cv : "loo", int or None
        Cross-validation of the whole grid search (see :func:`fit_tunables`).
    objective : {"mean_relative", "rms_relative", "max_relative"}
        What the fit minimizes over relative throughput errors.
    search : {"auto", "joint", "coordinate"}
        ``"joint"``: one exhaustive grid over all parameters (one
        :func:`fit_tunables` call; exact LOO).  ``"coordinate"``: one
        parameter at a time, each a 1-D :func:`fit_tunables` over its grid
        from the current values, sweeping until nothing changes (at most
        :data:`COORDINATE_SWEEPS` sweeps); LOO reruns the whole search per
        fold; estimates are remembered, so revisited points are free.
        ``"auto"``: coordinate for the simulator (far slower per estimate,
        with the coarser :data:`SIM_GRIDS` as defaults), joint otherwise.
    source : str
        Name of the measurements for the provenance note (default: the path
        when ``measurements`` is one).

    Returns
    -------
    NetworkCalibration
        Calibrated cluster, fitted values, the :class:`FitResult`, residuals,
        LOO error, near-optimal ranges.

    Raises
    ------
    SpecError
        Unknown or repeated params, a grid key not among the params, bad
        grid values (naming ``grids.<name>``), an unknown ``search``, mixed
        modes without a model,
        no parameter with an effect, bad measurements.
    Infeasible
        The model cannot predict a measured configuration.

    Notes
    -----
    One joint grid over the parameters that matter, on top of
    :func:`fit_tunables` (exhaustive, so the optimum of the grid is found and
    LOO refits are exact); cost ``prod(grid sizes) x measurements``
    estimates: 15 x 11 x 11 points for the sync hybrid with ``t_update > 0``.
    With one bandwidth and no overlap the hybrid's step time is linear in K,
    and ``sharing_weight`` and ``update_growth`` both only change its slope:
    measure a second bandwidth (or ``n_ps``) to separate them; ``ranges``
    shows when they are not.

    References
    ----------
    Li et al. 2022, Sec. 4.2.1 (tunables chosen on a preliminary profiling),
    eqs. 7-10 (update once per step), eq. 9 (the 0.5 average
    ``sharing_weight`` generalizes); Zhang et al. 2023, eq. 7 (sigma).

    Examples
    --------
    >>> from perfmodel.specs import Profile, Cluster
    >>> prof = Profile(model_bytes=100e6, t_forward=0.1, t_backward=0.2, t_update=0.01)
    >>> ms = [Measurement(1, 1, "10Gbps", 2.0), Measurement(4, 1, "10Gbps", 4.6)]
    >>> cal = calibrate_network(prof, Cluster(machines=8, nic_bandwidth="10Gbps"), ms,
    ...                         params=["link_efficiency"], cv=None)
    >>> sorted(cal.params), 0.3 <= cal.cluster.link_efficiency <= 1.0
    (['link_efficiency'], True)
    """
    raw, path = _measurement_source(measurements)
    ms = checked_measurements(profile, cluster, raw)
    spec = model if model is not None else _default_model(ms)
    name, obj = model_object(spec, None)
    how = _search(search, obj)
    grid = _calibration_grids(params, grids, SIM_GRIDS if _is_simulator(obj) else
                              CALIBRATION_GRIDS)
    grid = {k: _checked_values(cluster, k, v) for k, v in grid.items()}
    banded = step_time_band(profile, cluster, ms, grid, grids, obj)
    grid.update(banded)
    memo = _Memo(obj)
    # The cluster's own value is always a candidate: calibrating never makes
    # the training error worse than not calibrating (unless the step-time
    # spread rules it out).
    used = {k: v if k in banded else _with_value(v, getattr(cluster, k))
            for k, v in grid.items() if _sensitive(memo, profile, cluster, ms, k, v)}
    unused = tuple(k for k in grid if k not in used)
    if not used:
        raise SpecError("params", f"none of {', '.join(grid)} changes {name}'s predictions "
                                  "on these measurements")
    if how == "joint":
        fit = fit_tunables(spec, profile, cluster, ms, _cluster_keys(used), cv=cv,
                           objective=objective)
        calibrated, loo, base, ranges = (fit.cluster, fit.cv_error, fit.base_error,
                                         _near_optimal_ranges(fit))
    else:
        calibrated, fits = _coordinate_search(memo, profile, cluster, ms, used, objective)
        fit = dataclasses.replace(fits[-1], model_name=name, model=obj)
        loo = _coordinate_cv(memo, profile, cluster, ms, used, cv, objective)
        base = _error(memo, profile, cluster, ms, objective)
        ranges = {f.keys[0]: _near_optimal_ranges(f)[f.keys[0]] for f in fits}
    fitted = {k: float(getattr(calibrated, k)) for k in used}
    measured = np.array([m.throughput for m in ms])
    predicted = np.array([predict_one(memo, profile, calibrated, m) for m in ms])
    residuals = tuple(float(r) for r in predicted / measured - 1.0)
    source = source or path
    note = _provenance(cluster, fitted, name, len(ms), source, loo, base)
    return NetworkCalibration(cluster=calibrated.replace(source=note), params=fitted, fit=fit,
                       residuals=residuals, loo_error=loo, base_error=base, unused=unused,
                       ranges=ranges, model_name=name, source=source, grids=dict(used), cv=cv,
                       search=how)
