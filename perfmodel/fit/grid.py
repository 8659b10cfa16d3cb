"""Fitting a model's tunables to a few measured runs: grid search with cross-validation.

Li et al. 2022 pick the hybrid threshold rho_T of their Async-SGD model
"through a one-time preliminary profiling": the job run with 1 to 7 workers,
and the value of ``{0.1, 0.2, ..., 1.0}`` with the best prediction accuracy on
those runs kept.  :func:`fit_tunables` does the same for any tunable of any
model (a model option or a :class:`~perfmodel.specs.Cluster` field), by
exhaustive grid search, and says how well the choice generalizes
(leave-one-out or k-fold cross-validation); :func:`grid_range` and
:func:`parse_grid` build grids such as ``0.1:1.0:0.1`` exactly.

How a measurement is predicted
------------------------------
As :mod:`perfmodel.measurements` states (the measurement's bandwidth, batch
and configuration), with the grid point's model options and cluster fields
applied; the prediction is ``estimate.throughput`` (samples/s).

Cross-validation
----------------
The grid is finite, so the predictions of every grid point on every
measurement are computed once (``points x measurements`` estimates); a fold
refits by choosing the best grid point on its training measurements only and
records the relative errors of that choice on the held-out ones.  ``cv="loo"``
is leave-one-out; an integer k assigns measurement i (in file order) to fold
``i % k`` (deterministic, no shuffling).  The CV error is the objective over
all held-out errors.  Ties (equal objective) go to the first grid point in
:func:`itertools.product` order of the grid keys as given.

References
----------
Li, Paolieri, Golubchik, Lin, Yan. Predicting Throughput of Distributed SGD.
IEEE TPDS, 2022.  Sec. 4.2.1 (rho_T chosen from {0.1, ..., 1.0} on 1-7 worker
runs), eq. 5 (the hybrid threshold), eq. 9 (the average that
``sharing_weight`` generalizes).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

import numpy as np

from ..errors import Infeasible, PerfModelError, SpecError
from ..measurements import (
    Measurement,
    measured_cluster,
    measured_cluster_unchecked,
    measured_profile,
)
from ..registry import make
from ..sim.trace import Trace
from ..specs import Cluster, Profile

__all__ = ["FIT_OBJECTIVES", "RHO_GRID", "MEASURED_FIELDS", "grid_range", "parse_grid",
           "predict_measurements", "FitResult", "fit_tunables", "model_object", "plain_value",
           "predict_one", "checked_measurements", "error_objective", "cv_folds"]

#: Objectives over relative throughput errors ``|predicted - measured| / measured``.
FIT_OBJECTIVES = ("mean_relative", "rms_relative", "max_relative")


#: The candidate thresholds of Li et al. 2022, Sec. 4.2.1: 0.1, 0.2, ..., 1.0 (exact decimals).
RHO_GRID: tuple[float, ...] = tuple(round(0.1 * i, 1) for i in range(1, 11))


#: Cluster fields a grid may not tune: they come from each measurement.
MEASURED_FIELDS = ("nic_bandwidth", "machines")


# --------------------------------------------------------------------------
# Grids
# --------------------------------------------------------------------------

def grid_range(start: float, stop: float, step: float) -> tuple[float, ...]:
    """``start, start + step, ..., stop`` inclusive, rounded to the decimals given.

    Unlike ``np.arange(0.1, 1.01, 0.1)`` (which holds 0.30000000000000004),
    ``grid_range(0.1, 1.0, 0.1)`` is exactly Li et al. 2022's ``0.1, 0.2, ..., 1.0``.

    Raises
    ------
    SpecError
        ``step <= 0``, ``stop < start`` or a non-finite bound.

    Examples
    --------
    >>> grid_range(0.1, 1.0, 0.1) == RHO_GRID
    True
    >>> grid_range(0, 1, 0.25)
    (0.0, 0.25, 0.5, 0.75, 1.0)
    """
    try:
        a, b, h = (Decimal(str(v)) for v in (start, stop, step))
    except InvalidOperation:
        raise SpecError("grid", f"expected numbers, got {start!r}:{stop!r}:{step!r}") from None
    if not all(v.is_finite() for v in (a, b, h)):
        raise SpecError("grid", f"bounds must be finite, got {start!r}:{stop!r}:{step!r}")
    if h <= 0:
        raise SpecError("grid", f"step must be > 0, got {step!r}")
    if b < a:
        raise SpecError("grid", f"stop {stop!r} is below start {start!r}")
    count = int((b - a) / h) + 1
    if count > 100_000:
        raise SpecError("grid", f"{count} values from {start!r}:{stop!r}:{step!r}; at most 100000")
    return tuple(float(a + i * h) for i in range(count))


def _scalar(text: str):
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def parse_grid(spec: str) -> tuple[str, tuple]:
    """Parse one CLI grid argument: ``NAME=START:STOP:STEP`` or ``NAME=V1,V2,...``.

    Values of a list are ints, floats, booleans (``true``/``false``) or strings
    (unit strings such as ``10Gbps`` stay strings; the spec converts them).

    Returns
    -------
    (str, tuple)
        The key and its values.

    Raises
    ------
    SpecError
        Naming ``grid``: no ``=``, an empty name or value list, bad numbers.

    Examples
    --------
    >>> parse_grid("rho_threshold=0.1:0.3:0.1")
    ('rho_threshold', (0.1, 0.2, 0.3))
    >>> parse_grid("sharing=ps,fcfs")
    ('sharing', ('ps', 'fcfs'))
    """
    name, sep, values = spec.partition("=")
    name = name.strip()
    if not sep or not name or not values.strip():
        raise SpecError("grid", f"expected NAME=START:STOP:STEP or NAME=V1,V2,..., got {spec!r}")
    if ":" in values:
        parts = values.split(":")
        if len(parts) != 3:
            raise SpecError(f"grid.{name}", f"expected START:STOP:STEP, got {values!r}")
        try:
            start, stop, step = (float(p) for p in parts)
        except ValueError:
            raise SpecError(f"grid.{name}", f"expected numbers in {values!r}") from None
        try:
            return name, grid_range(start, stop, step)
        except SpecError as err:
            raise SpecError(f"grid.{name}", err.message) from None
    items = [v.strip() for v in values.split(",")]
    if any(not v for v in items):
        raise SpecError(f"grid.{name}", f"empty value in {values!r}")
    return name, tuple(_scalar(v) for v in items)


# --------------------------------------------------------------------------
# Prediction
# --------------------------------------------------------------------------

def plain_value(value):
    """numpy scalars to Python scalars (model options are checked by type)."""
    return value.item() if isinstance(value, np.generic) else value


def model_object(model, options: Mapping | None):
    if isinstance(model, str):
        return model, make(model, **dict(options or {}))
    if options:
        raise SpecError("options", "give options only with a model name, not a model object")
    if not dataclasses.is_dataclass(model) or not hasattr(model, "estimate"):
        raise SpecError("model", f"expected a model name or a model object with estimate(), "
                                 f"got {type(model).__name__}")
    return type(model).__name__, model


def predict_one(model, profile: Profile, cluster: Cluster, m: Measurement,
                 prepared: tuple | None = None) -> float:
    """Predicted throughput of one measurement; ``prepared`` is its (profile, config)."""
    if prepared is None:
        prepared = (measured_profile(profile, m), m.config())
        cluster = measured_cluster(cluster, m)
    else:
        cluster = measured_cluster_unchecked(cluster, m)
    try:
        est = model.estimate(prepared[0], cluster, prepared[1])
    except SpecError as err:
        raise err.within(f"measurement {m.label}") from None
    except Infeasible as err:
        raise Infeasible(f"measurement {m.label} (workers={m.workers}, n_ps={m.n_ps}): "
                         f"{err}") from None
    return float(est.throughput)


def checked_measurements(profile, cluster, measurements) -> tuple[Measurement, ...]:
    """The measurements as a tuple, after checking the workload, the cluster and each one."""
    if not isinstance(profile, (Profile, Trace)):
        raise SpecError("profile", f"expected a Profile or a Trace, got {type(profile).__name__}")
    if not isinstance(cluster, Cluster):
        raise SpecError("cluster", f"expected a Cluster, got {type(cluster).__name__}")
    ms = tuple(measurements)
    if not ms:
        raise SpecError("measurements", "needs at least one measurement")
    for i, m in enumerate(ms):
        if not isinstance(m, Measurement):
            raise SpecError(f"measurements[{i}]",
                            f"expected a Measurement, got {type(m).__name__}")
    return ms


def predict_measurements(model, profile: Profile, cluster: Cluster,
                         measurements: Sequence[Measurement], **options) -> np.ndarray:
    """Predicted throughput (samples/s) of each measured configuration.

    Parameters
    ----------
    model : str or model object
        A :func:`perfmodel.registry.make` name (with ``options``) or a model.
    profile : Profile
        One worker's profile.
    cluster : Cluster
        The cluster; each measurement's bandwidth replaces ``nic_bandwidth``.
    measurements : sequence of Measurement

    Returns
    -------
    numpy.ndarray, samples/s
        One prediction per measurement (see the module docstring).

    References
    ----------
    Li et al. 2022, Sec. 4.2.1.
    """
    _, obj = model_object(model, options)
    ms = checked_measurements(profile, cluster, measurements)
    return np.array([predict_one(obj, profile, cluster, m) for m in ms])


# --------------------------------------------------------------------------
# Fitting
# --------------------------------------------------------------------------

def error_objective(name: str, abs_errors: np.ndarray, axis=-1) -> np.ndarray:
    if name == "mean_relative":
        return np.mean(abs_errors, axis=axis)
    if name == "rms_relative":
        return np.sqrt(np.mean(abs_errors ** 2, axis=axis))
    return np.max(abs_errors, axis=axis)


def _split_grid(grid: Mapping, model_obj) -> tuple[list[str], list[tuple], set, set]:
    if not isinstance(grid, Mapping) or not grid:
        raise SpecError("grid", "expected a non-empty mapping of tunable name -> values")
    model_fields = {f.name for f in dataclasses.fields(model_obj)}
    # Options whose default None means "the cluster's field of the same name".
    deferring = {f.name for f in dataclasses.fields(model_obj) if f.default is None}
    cluster_fields = {f.name for f in dataclasses.fields(Cluster)}
    keys, values, in_model, in_cluster = [], [], set(), set()
    for raw_key, vals in grid.items():
        if not isinstance(raw_key, str):
            raise SpecError("grid", f"keys must be names, got {raw_key!r}")
        scope, dot, name = raw_key.partition(".")
        if not dot:
            scope, name = "", raw_key
        elif scope not in ("model", "cluster"):
            raise SpecError(f"grid.{raw_key}", "a prefix must be 'model.' or 'cluster.'")
        in_m = name in model_fields and scope in ("", "model")
        in_c = name in cluster_fields and scope in ("", "cluster")
        if in_m and in_c and name in deferring:
            in_c = False  # the model's option overrides the cluster's field: same effect
        if in_m and in_c:
            raise SpecError(f"grid.{raw_key}", f"{name!r} is both a model option and a cluster "
                                               f"field; write model.{name} or cluster.{name}")
        if in_c and name in MEASURED_FIELDS:
            raise SpecError(f"grid.{raw_key}", f"cluster.{name} is set by each measurement; "
                                               "tune link_efficiency instead")
        if not (in_m or in_c):
            raise SpecError(f"grid.{raw_key}",
                            f"not an option of {type(model_obj).__name__} "
                            f"({', '.join(sorted(model_fields)) or 'none'}) nor a Cluster field")
        if name in in_model or name in in_cluster:
            raise SpecError(f"grid.{raw_key}", "given twice")
        if isinstance(vals, (str, bytes)) or not hasattr(vals, "__iter__"):
            raise SpecError(f"grid.{raw_key}", f"expected a sequence of values, got {vals!r}")
        vals = tuple(plain_value(v) for v in np.asarray(vals, dtype=object).ravel()) \
            if isinstance(vals, np.ndarray) else tuple(plain_value(v) for v in vals)
        if not vals:
            raise SpecError(f"grid.{raw_key}", "no values")
        keys.append(name)
        values.append(vals)
        (in_model if in_m else in_cluster).add(name)
    return keys, values, in_model, in_cluster


@dataclass(frozen=True, eq=False)
class FitResult:
    """The outcome of :func:`fit_tunables`.

    Attributes
    ----------
    model_name : str
        The registry name (or class name) of the model fitted.
    model : object
        The model object with the chosen option values.
    cluster : Cluster
        The cluster with the chosen cluster-field values (its own bandwidth).
    best : dict
        Chosen value of every grid key.
    keys : tuple of str
        Grid keys, in the order given.
    values : tuple of tuple
        Grid values per key.
    surface : numpy.ndarray
        Objective over all measurements at every grid point, shape
        ``tuple(len(v) for v in values)``.
    predictions : numpy.ndarray, samples/s
        Predicted throughput, shape ``(n_points, n_measurements)``; points in
        :func:`itertools.product` order (``surface.ravel()`` order).
    measurements : tuple of Measurement
    objective : str
        One of :data:`FIT_OBJECTIVES`.
    train_error : float
        Objective on all measurements at the chosen point.
    train_max_error : float
        Largest relative error on all measurements at the chosen point.
    base_error : float
        Objective of the model and cluster as given (no tuning).
    cv : str or int or None
        ``"loo"``, the number of folds, or None (no cross-validation).
    cv_error : float
        Objective over the held-out relative errors (NaN without CV).
    cv_max_error : float
        Largest held-out relative error (NaN without CV).
    cv_errors : tuple of float
        Signed held-out relative error ``predicted / measured - 1`` per
        measurement (empty without CV).
    cv_choices : tuple of dict
        Grid point chosen by each fold's training set.

    References
    ----------
    Li et al. 2022, Sec. 4.2.1.
    """

    model_name: str
    model: Any
    cluster: Cluster
    best: dict
    keys: tuple
    values: tuple
    surface: np.ndarray
    predictions: np.ndarray
    measurements: tuple
    objective: str
    train_error: float
    train_max_error: float
    base_error: float
    cv: Any
    cv_error: float
    cv_max_error: float
    cv_errors: tuple
    cv_choices: tuple

    @property
    def points(self) -> list[dict]:
        """Every grid point as a dict, in ``surface.ravel()`` order."""
        return [dict(zip(self.keys, p)) for p in itertools.product(*self.values)]

    @property
    def best_index(self) -> int:
        """Index of the chosen point in :attr:`points`."""
        return int(np.argmin(self.surface.ravel()))

    @property
    def best_predictions(self) -> np.ndarray:
        """Predicted throughput of each measurement at the chosen point (samples/s)."""
        return self.predictions[self.best_index]

    def to_dict(self) -> dict:
        """JSON-ready summary: choice, errors, surface, per-measurement numbers."""
        def num(x):
            return None if not math.isfinite(x) else float(x)
        return {
            "model": self.model_name, "objective": self.objective, "best": dict(self.best),
            "train_error": num(self.train_error), "train_max_error": num(self.train_max_error),
            "base_error": num(self.base_error), "cv": self.cv, "cv_error": num(self.cv_error),
            "cv_max_error": num(self.cv_max_error),
            "grid": {k: list(v) for k, v in zip(self.keys, self.values)},
            "surface": [dict(point, error=num(e))
                        for point, e in zip(self.points, self.surface.ravel())],
            "measurements": [dict(m.to_dict(), predicted=float(p),
                                  **({"cv_error": num(e)} if self.cv_errors else {}))
                             for m, p, e in itertools.zip_longest(
                                 self.measurements, self.best_predictions, self.cv_errors,
                                 fillvalue=float("nan"))],
            "cv_choices": [dict(c) for c in self.cv_choices],
        }

    def text(self) -> str:
        """A short human-readable report."""
        best = ", ".join(f"{k}={v!r}" for k, v in self.best.items())
        lines = [f"{self.model_name}: best {best} ({self.objective})",
                 f"  train error {100 * self.train_error:.2f}% "
                 f"(max {100 * self.train_max_error:.2f}%), untuned {100 * self.base_error:.2f}%"]
        if self.cv is not None:
            lines.append(f"  cross-validation ({self.cv}) error {100 * self.cv_error:.2f}% "
                         f"(max {100 * self.cv_max_error:.2f}%) on {len(self.measurements)} "
                         "measurements")
        if len(self.keys) == 1:
            lines.append("  " + "  ".join(f"{v!r}:{100 * e:.2f}%"
                                          for v, e in zip(self.values[0], self.surface)))
        return "\n".join(lines)


def cv_folds(cv, n: int) -> list[np.ndarray] | None:
    if cv is None:
        return None
    if cv == "loo":
        k = n
    elif isinstance(cv, (int, np.integer)) and not isinstance(cv, bool):
        k = int(cv)
        if not 2 <= k <= n:
            raise SpecError("cv", f"folds must be in [2, {n}] (the measurements), got {cv!r}")
    else:
        raise SpecError("cv", f"expected 'loo', a number of folds or None, got {cv!r}")
    if n < 2:
        raise SpecError("cv", f"cross-validation needs at least 2 measurements, got {n}")
    index = np.arange(n)
    return [index[index % k == j] for j in range(k)]


def fit_tunables(model, profile: Profile, cluster: Cluster,
                 measurements: Sequence[Measurement], grid: Mapping[str, Sequence], *,
                 cv="loo", objective: str = "mean_relative",
                 options: Mapping | None = None) -> FitResult:
    """Choose tunables of a model by grid search on measurements, with CV error.

    Parameters
    ----------
    model : str or model object
        A :func:`perfmodel.registry.make` name (``"async"``, ``"sync"``, ...),
        built with ``options``; or a model object (a frozen dataclass).
    profile : Profile
        One worker's profile (M, T_F, T_B, T_S, batch size).
    cluster : Cluster
        The cluster; each measurement's bandwidth replaces ``nic_bandwidth``.
    measurements : sequence of Measurement
        Measured configurations (see :func:`parse_measurements`).
    grid : mapping of str to sequence
        Candidate values per tunable.  A key is an option of the model (a
        dataclass field, e.g. ``rho_threshold``, ``sharing``, ``overlap``) or a
        :class:`Cluster` field (e.g. ``sharing_weight``, ``link_efficiency``,
        ``per_flow_cap``); prefix ``model.`` or ``cluster.`` to be explicit.
        Every combination is tried.
    cv : "loo", int or None
        Leave-one-out (default), k folds (``i % k``), or no cross-validation.
    objective : {"mean_relative", "rms_relative", "max_relative"}
        What "best fit" minimizes over relative throughput errors; Li et al. 2022
        report mean relative error.
    options : mapping, optional
        Fixed options of the model when ``model`` is a name
        (``{"discipline": "hybrid", "overlap": True}``).

    Returns
    -------
    FitResult
        Chosen values, fitted ``model`` and ``cluster``, training, untuned
        and cross-validation errors, the whole error surface.

    Raises
    ------
    SpecError
        A bad grid key or value (naming ``grid.<key>``), bad ``cv`` or
        ``objective``, no measurements, or a measurement the model rejects
        (naming it).
    Infeasible
        The model cannot predict a measured configuration (naming it).

    Notes
    -----
    Cost: ``prod(len(values)) * len(measurements)`` estimates, computed once;
    cross-validation reuses them (the grid does not depend on the data).

    References
    ----------
    Li et al. 2022, Sec. 4.2.1: rho_T chosen from
    ``{0.1, ..., 1.0}`` by best accuracy on 1-7 worker runs.

    Examples
    --------
    >>> from perfmodel import zoo
    >>> prof, clu = zoo.profile("resnet50-pipedream"), zoo.cluster("aws-p3.2xlarge")
    >>> ms = [Measurement(w, 1, "10Gbps", t) for w, t in ((1, 283.0), (2, 540.0), (4, 900.0))]
    >>> fit = fit_tunables("sync", prof, clu, ms, {"sharing_weight": grid_range(0, 1, 0.5)})
    >>> sorted(fit.best), fit.cluster.sharing_weight in (0.0, 0.5, 1.0)
    (['sharing_weight'], True)
    """
    if objective not in FIT_OBJECTIVES:
        raise SpecError("objective", f"expected one of {', '.join(FIT_OBJECTIVES)}, got {objective!r}")
    name, base = model_object(model, options)
    ms = checked_measurements(profile, cluster, measurements)
    keys, values, in_model, in_cluster = _split_grid(grid, base)
    folds = cv_folds(cv, len(ms))
    measured = np.array([m.throughput for m in ms])

    points = list(itertools.product(*values))
    predictions = np.empty((len(points), len(ms)))
    prepared = [(measured_profile(profile, m), m.config()) for m in ms]
    for p, point in enumerate(points):
        assignment = dict(zip(keys, point))
        try:
            obj = dataclasses.replace(base, **{k: v for k, v in assignment.items()
                                               if k in in_model})
            clu = cluster.replace(**{k: v for k, v in assignment.items() if k in in_cluster})
        except SpecError as err:
            raise SpecError(f"grid.{err.field}" if err.field else "grid",
                            f"{err.message} (grid point {assignment})") from None
        except (TypeError, ValueError) as err:
            raise SpecError("grid", f"{err} (grid point {assignment})") from None
        predictions[p] = [predict_one(obj, profile, clu, m, prep)
                          for m, prep in zip(ms, prepared)]

    residuals = predictions / measured - 1.0
    abs_err = np.abs(residuals)
    abs_err[~np.isfinite(abs_err)] = np.inf
    scores = error_objective(objective, abs_err)
    if not np.isfinite(scores).any():
        raise PerfModelError("no grid point gives finite predictions on every measurement")
    best_i = int(np.argmin(scores))
    best = dict(zip(keys, points[best_i]))
    base_pred = np.array([predict_one(base, profile, cluster, m) for m in ms])
    base_error = float(error_objective(objective, np.abs(base_pred / measured - 1.0)))

    cv_error = cv_max = float("nan")
    cv_errors: tuple = ()
    cv_choices: list[dict] = []
    if folds is not None:
        held = np.empty(len(ms))
        for test in folds:
            train = np.setdiff1d(np.arange(len(ms)), test)
            choice = int(np.argmin(error_objective(objective, abs_err[:, train])))
            cv_choices.append(dict(zip(keys, points[choice])))
            held[test] = residuals[choice, test]
        cv_error = float(error_objective(objective, np.abs(held)))
        cv_max = float(np.max(np.abs(held)))
        cv_errors = tuple(float(e) for e in held)

    fitted_model = dataclasses.replace(base, **{k: v for k, v in best.items() if k in in_model})
    fitted_cluster = cluster.replace(**{k: v for k, v in best.items() if k in in_cluster})
    return FitResult(
        model_name=name, model=fitted_model, cluster=fitted_cluster, best=best,
        keys=tuple(keys), values=tuple(values),
        surface=scores.reshape(tuple(len(v) for v in values)), predictions=predictions,
        measurements=ms, objective=objective, train_error=float(scores[best_i]),
        train_max_error=float(np.max(abs_err[best_i])), base_error=base_error, cv=cv,
        cv_error=cv_error, cv_max_error=cv_max, cv_errors=cv_errors,
        cv_choices=tuple(cv_choices))
