"""Choosing a model's tunables from a few throughput measurements (seed 003 Sec. 4.2.1).

Seed 003 picks the hybrid threshold rho_T of its coarse Async-SGD model "through
a one-time preliminary profiling": a job run with 1 to 7 workers, and the value
of ``{0.1, 0.2, ..., 1.0}`` with the best prediction accuracy on those runs is
kept (0.5 on CloudLab, 0.6 on AWS).  This module does the same for any tunable
of any model, and says how well the choice generalizes:

* :func:`parse_measurements` -- the measurement CSV (below) to
  :class:`Measurement` records (no file access; :func:`perfmodel.io.load_measurements`
  reads a file through :func:`perfmodel.io.read_text`);
* :func:`fit_tunables` -- exhaustive grid search over model options (fields of
  the model object, e.g. ``AsyncMVA.rho_threshold``) and/or :class:`Cluster`
  fields (e.g. ``sharing_weight``, ``link_efficiency``), best by mean relative
  throughput error, with leave-one-out or k-fold cross-validation error;
  returns a :class:`FitResult`;
* :func:`grid_range`, :func:`parse_grid` -- grids such as ``0.1:1.0:0.1``
  (inclusive, rounded to the step: exactly 0.1, 0.2, ..., 1.0) for a CLI.
* :func:`calibrate_network` -- the per-network calibration on top of
  :func:`fit_tunables`: fits the :class:`Cluster` fields ``link_efficiency``,
  ``sharing_weight``, ``update_growth`` and ``compute_cv`` from a few runs of
  one job and returns a :class:`Calibration` whose ``cluster`` (with a
  provenance note in ``source``) is saved as the cluster file every model
  reads (``perfmodel calibrate fit --save``).

Measurement CSV
---------------
A header line, then one measured configuration per line; blank lines and lines
starting with ``#`` are skipped; column order is free; names are case-insensitive.

====================  =========  =================================================
column                required   meaning
====================  =========  =================================================
``workers``           yes        data-parallel workers K (``Config.n_replicas``),
                                 >= 1
``n_ps``              yes        parameter servers (``Config.n_ps``), >= 0
``bandwidth``         yes        NIC line rate; unit strings (``10Gbps``,
                                 ``1.25GB/s``) or a plain number in bytes/s
``throughput``        yes        measured training throughput, samples/s (all
                                 workers)
``batch_size``        no         samples per worker per step (default: the
                                 profile's)
``mode``              no         ``sync`` or ``async`` (``Config.mode``; default
                                 sync)
``step_time_std``     no         standard deviation of one worker's step time
                                 (sync: the step; async: its own cycle), seconds
                                 or a unit string (``250ms``); on a lossy link it
                                 identifies the timeout probability (see
                                 :mod:`perfmodel.select`)
``step_time_median``  no         median of the same step times, seconds or a unit
                                 string; with the mean step (from the throughput)
                                 a reading of the timeout probability robust to
                                 rare long stalls, used before ``step_time_std``
``server_cpu``        no         CPU usage of the busiest parameter server, cores
                                 (``1.9`` = 1.9 cores busy); with ``worker_cpu``
                                 on 3 or more sync runs it caps the predictions
                                 at the CPU ceiling (:mod:`perfmodel.operational`)
``worker_cpu``        no         mean CPU usage of the workers, cores
====================  =========  =================================================

Example::

    # ResNet-50 on AWS p3.2xlarge, preliminary profiling
    workers,n_ps,bandwidth,throughput
    1,1,10Gbps,283.4
    2,1,10Gbps,551.0

Any other column is an error (a misspelt name would otherwise be ignored).
A bad value is a :class:`~perfmodel.errors.SpecError` naming the file, the line
and the column: ``m.csv: line 3, column bandwidth: unknown unit ...``.

How a measurement is predicted
------------------------------
``model.estimate(profile', cluster', Config(n_replicas=workers, n_ps=n_ps,
mode=mode))`` where ``cluster'`` is the cluster with ``nic_bandwidth`` set to
the measurement's bandwidth, the grid point's cluster fields applied, and
``machines`` raised to ``workers + n_ps`` when smaller; ``profile'`` is the
profile, or, when the measurement has a ``batch_size``, the profile with that
batch and ``t_forward``, ``t_backward`` scaled in proportion (compute time
linear in the batch; ``t_update`` and ``model_bytes`` unchanged).  The
prediction is ``estimate.throughput`` (samples/s).

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
Seed 003 (``003_466ded720105ddf3.txt``), Sec. 4.2.1 (choice of
rho_T from {0.1, ..., 1.0} on 1-7 workers), eq. 5 (the hybrid threshold),
eq. 9 and our ``sharing_weight`` generalization of its average.  Issue 5 item 7.
"""

from __future__ import annotations

import copy
import csv
import dataclasses
import itertools
import math
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Mapping, Sequence

import numpy as np

from . import units
from .errors import Infeasible, PerfModelError, SpecError
from .specs import Cluster, Config, Profile

__all__ = ["Measurement", "MEASUREMENT_COLUMNS", "OBJECTIVES", "RHO_GRID", "parse_measurements",
           "grid_range", "parse_grid", "predict_measurements", "FitResult", "fit_tunables",
           "CALIBRATION_GRIDS", "CALIBRATION_PARAMS", "CALIBRATION_MODELS", "NEAR_OPTIMAL",
           "SIM_GRIDS", "SEARCHES", "COORDINATE_SWEEPS", "Calibration", "calibrate_network"]

#: CSV columns: name -> required.
MEASUREMENT_COLUMNS: dict[str, bool] = {
    "workers": True, "n_ps": True, "bandwidth": True, "throughput": True,
    "batch_size": False, "mode": False, "step_time_std": False, "step_time_median": False,
    "server_cpu": False, "worker_cpu": False,
}

#: Objectives over relative throughput errors ``|predicted - measured| / measured``.
OBJECTIVES = ("mean_relative", "rms_relative", "max_relative")

#: Seed 003 Sec. 4.2.1's candidate thresholds: 0.1, 0.2, ..., 1.0 (exact decimals).
RHO_GRID: tuple[float, ...] = tuple(round(0.1 * i, 1) for i in range(1, 11))

#: Cluster fields a grid may not tune: they come from each measurement.
_FROM_MEASUREMENT = ("nic_bandwidth", "machines")


# --------------------------------------------------------------------------
# Measurements
# --------------------------------------------------------------------------

def _bad(field: str, message: str):
    raise SpecError(field, message)


def _int(field: str, value, minimum: int) -> int:
    if isinstance(value, bool):
        _bad(field, f"expected an integer >= {minimum}, got {value!r}")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            _bad(field, f"expected an integer >= {minimum}, got {value!r}")
        if not number.is_integer():
            _bad(field, f"expected an integer >= {minimum}, got {value!r}")
        value = int(number)
    if isinstance(value, np.integer):
        value = int(value)
    if not isinstance(value, int) or value < minimum:
        _bad(field, f"expected an integer >= {minimum}, got {value!r}")
    return value


def _positive(field: str, value, unit: str, *, zero: bool = False) -> float:
    """A finite quantity > 0 (>= 0 with ``zero``), unit strings accepted."""
    try:
        number = units.parse(value.strip() if isinstance(value, str) else value, unit)
    except SpecError as err:
        raise err.within(field) from None
    if not math.isfinite(number) or number < 0 or (number == 0 and not zero):
        _bad(field, f"expected a finite number {'>=' if zero else '>'} 0, got {value!r}")
    return number


@dataclass(frozen=True)
class Measurement:
    """One measured configuration and its throughput (SI units).

    Attributes
    ----------
    workers : int
        Data-parallel workers K (``Config.n_replicas``), >= 1.
    n_ps : int
        Parameter servers, >= 0.
    bandwidth : float, bytes/s
        NIC line rate of the run (unit strings accepted on construction).
    throughput : float, samples/s
        Measured training throughput of all workers together.
    batch_size : int or None
        Samples per worker per step; None: the profile's.
    mode : {"sync", "async"} or None
        Synchronisation; None: ``Config``'s default (sync).
    line : int
        Line in the CSV file (0 when not read from a file).
    step_time_std : float or None, s
        Standard deviation of one worker's step time (sync: the step; async:
        the worker's own cycle); None: not measured.  On a lossy link its
        excess over the compute's spread identifies the timeout probability
        (:func:`perfmodel.coarse.timeout_probability_from_spread`).
    step_time_median : float or None, s
        Median of the same step times; None: not measured.  The mean step
        (``workers * batch / throughput``) exceeds it by the expected stall,
        a reading of the timeout probability robust to rare long stalls
        (:func:`perfmodel.coarse.timeout_probability_from_delay`).
    server_cpu, worker_cpu : float or None, cores
        CPU usage of the busiest server and the workers' mean during the run;
        None: not measured.  With the throughput they give each resource's
        demand per step (the utilization law), hence a ceiling on the speed
        of configurations not run (:func:`perfmodel.select.cpu_ceiling`).

    Raises
    ------
    SpecError
        Naming the field and the bad value.
    """

    workers: int
    n_ps: int
    bandwidth: float
    throughput: float
    batch_size: int | None = None
    mode: str | None = None
    line: int = 0
    step_time_std: float | None = None
    step_time_median: float | None = None
    server_cpu: float | None = None
    worker_cpu: float | None = None

    def __post_init__(self):
        set_ = object.__setattr__
        set_(self, "workers", _int("workers", self.workers, 1))
        set_(self, "n_ps", _int("n_ps", self.n_ps, 0))
        set_(self, "bandwidth", _positive("bandwidth", self.bandwidth, "B/s"))
        set_(self, "throughput", _positive("throughput", self.throughput, "1"))
        if self.batch_size is not None:
            set_(self, "batch_size", _int("batch_size", self.batch_size, 1))
        if self.mode is not None:
            mode = self.mode.strip().lower() if isinstance(self.mode, str) else self.mode
            if mode not in ("sync", "async"):
                _bad("mode", f"expected 'sync' or 'async', got {self.mode!r}")
            set_(self, "mode", mode)
        set_(self, "line", _int("line", self.line, 0))
        if self.step_time_std is not None:
            set_(self, "step_time_std", _positive("step_time_std", self.step_time_std, "s",
                                                   zero=True))
        if self.step_time_median is not None:
            set_(self, "step_time_median", _positive("step_time_median", self.step_time_median,
                                                      "s"))
        for name in ("server_cpu", "worker_cpu"):
            if getattr(self, name) is not None:
                set_(self, name, _positive(name, getattr(self, name), "1", zero=True))

    @classmethod
    def from_step_times(cls, workers, n_ps, bandwidth, step_times, batch_size: int,
                        mode: str | None = None) -> "Measurement":
        """A measurement from a log of one worker's step times (s).

        The throughput is ``workers * batch_size / mean``; ``step_time_std``
        (ddof 1) and ``step_time_median`` come with it, so a lossy link's
        timeouts can be read off the log (:mod:`perfmodel.select`).  Sync:
        the step times; async: one worker's cycle times (the workers are
        taken as alike).  Drop warm-up steps first.

        Raises
        ------
        SpecError
            ``step_times``: fewer than 2, or not all finite and > 0; and
            the other fields as for the constructor.

        Examples
        --------
        >>> m = Measurement.from_step_times(2, 1, "10Gbps", [0.6, 0.6, 1.6, 0.6], 32)
        >>> round(m.throughput, 3), m.step_time_median, round(m.step_time_std, 3)
        (75.294, 0.6, 0.5)
        """
        try:
            t = np.asarray(step_times, dtype=float).ravel()
        except (TypeError, ValueError):
            _bad("step_times", f"expected step times in seconds, got {step_times!r}")
        if t.size < 2:
            _bad("step_times", f"expected at least 2 step times, got {t.size}")
        ok = np.isfinite(t) & (t > 0)
        if not ok.all():
            _bad("step_times", f"expected finite step times > 0, got {float(t[~ok][0])!r}")
        batch = _int("batch_size", batch_size, 1)
        workers = _int("workers", workers, 1)
        return cls(workers, n_ps, bandwidth, workers * batch / float(t.mean()), batch, mode,
                   step_time_std=float(t.std(ddof=1)), step_time_median=float(np.median(t)))

    @property
    def label(self) -> str:
        """``"line 3"`` when read from a file, else the configuration."""
        if self.line:
            return f"line {self.line}"
        return f"workers={self.workers}, n_ps={self.n_ps}"

    def config(self) -> Config:
        """The measured configuration as a :class:`Config`."""
        extra = {"mode": self.mode} if self.mode is not None else {}
        return Config(n_replicas=self.workers, n_ps=self.n_ps, **extra)

    def to_dict(self) -> dict:
        """JSON-ready fields (SI units), None values left out."""
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}


def parse_measurements(text: str, source: str = "") -> tuple[Measurement, ...]:
    """Parse the measurement CSV (see the module docstring) into measurements.

    Parameters
    ----------
    text : str
        The CSV text.
    source : str
        File name for error messages ("" for none).

    Returns
    -------
    tuple of Measurement
        In file order, each with its ``line``.

    Raises
    ------
    SpecError
        Naming the line and the column: a missing, unknown or repeated column,
        a row with the wrong number of values, a bad value; or no data rows.

    References
    ----------
    Seed 003 Sec. 4.2.1 (the preliminary profiling runs this format records).

    Examples
    --------
    >>> ms = parse_measurements("workers,n_ps,bandwidth,throughput\\n2,1,10Gbps,512.5\\n")
    >>> ms[0].bandwidth, ms[0].throughput, ms[0].line
    (1250000000.0, 512.5, 2)
    """
    src = source or None
    header: list[str] | None = None
    out: list[Measurement] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        cells = [c.strip() for c in next(csv.reader([raw]))]
        if header is None:
            header = [c.lower() for c in cells]
            for col in header:
                if col not in MEASUREMENT_COLUMNS:
                    raise SpecError(f"line {number}, column {col or '(empty)'}",
                                    f"unknown column; expected {', '.join(MEASUREMENT_COLUMNS)}",
                                    src)
                if header.count(col) > 1:
                    raise SpecError(f"line {number}, column {col}", "repeated column", src)
            for col, required in MEASUREMENT_COLUMNS.items():
                if required and col not in header:
                    raise SpecError(f"line {number}, column {col}",
                                    "missing required column (header needs at least "
                                    "workers,n_ps,bandwidth,throughput)", src)
            continue
        if len(cells) != len(header):
            raise SpecError(f"line {number}", f"expected {len(header)} values "
                                              f"({','.join(header)}), got {len(cells)}", src)
        row = dict(zip(header, cells))
        for col, value in row.items():
            if value == "" and MEASUREMENT_COLUMNS[col]:
                raise SpecError(f"line {number}, column {col}", "missing value", src)
        kwargs = {col: value for col, value in row.items() if value != ""}
        try:
            out.append(Measurement(line=number, **kwargs))
        except SpecError as err:
            raise SpecError(f"line {number}, column {err.field}", err.message, src) from None
    if header is None:
        raise SpecError("", "no header line (expected workers,n_ps,bandwidth,throughput)", src)
    if not out:
        raise SpecError("", "no measurements after the header", src)
    return tuple(out)


# --------------------------------------------------------------------------
# Grids
# --------------------------------------------------------------------------

def grid_range(start: float, stop: float, step: float) -> tuple[float, ...]:
    """``start, start + step, ..., stop`` inclusive, rounded to the decimals given.

    Unlike ``np.arange(0.1, 1.01, 0.1)`` (which holds 0.30000000000000004),
    ``grid_range(0.1, 1.0, 0.1)`` is exactly seed 003's ``0.1, 0.2, ..., 1.0``.

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

def _plain(value):
    """numpy scalars to Python scalars (model options are checked by type)."""
    return value.item() if isinstance(value, np.generic) else value


def _base_model(model, options: Mapping | None):
    from .registry import make

    if isinstance(model, str):
        return model, make(model, **dict(options or {}))
    if options:
        raise SpecError("options", "give options only with a model name, not a model object")
    if not dataclasses.is_dataclass(model) or not hasattr(model, "estimate"):
        raise SpecError("model", f"expected a model name or a model object with estimate(), "
                                 f"got {type(model).__name__}")
    return type(model).__name__, model


def _measured_profile(profile: Profile, m: Measurement) -> Profile:
    if m.batch_size is None or m.batch_size == profile.batch_size:
        return profile
    scale = m.batch_size / profile.batch_size
    return profile.replace(batch_size=m.batch_size, t_forward=profile.t_forward * scale,
                           t_backward=profile.t_backward * scale)


def _measured_cluster(cluster: Cluster, m: Measurement) -> Cluster:
    machines = max(cluster.machines, m.workers + m.n_ps)
    return cluster.replace(nic_bandwidth=m.bandwidth, machines=machines)


def _fast_measured_cluster(cluster: Cluster, m: Measurement) -> Cluster:
    """:func:`_measured_cluster` without validating again (a grid search's inner loop).

    Both sources are validated already (the cluster on construction, the
    bandwidth and workers in :class:`Measurement`), and no cross-field rule
    of :class:`Cluster` involves ``nic_bandwidth`` or ``machines``.
    """
    out = copy.copy(cluster)
    object.__setattr__(out, "nic_bandwidth", m.bandwidth)
    object.__setattr__(out, "machines", max(cluster.machines, m.workers + m.n_ps))
    return out


def _predict_one(model, profile: Profile, cluster: Cluster, m: Measurement,
                 prepared: tuple | None = None) -> float:
    """Predicted throughput of one measurement; ``prepared`` is its (profile, config)."""
    if prepared is None:
        prepared = (_measured_profile(profile, m), m.config())
        cluster = _measured_cluster(cluster, m)
    else:
        cluster = _fast_measured_cluster(cluster, m)
    try:
        est = model.estimate(prepared[0], cluster, prepared[1])
    except SpecError as err:
        raise err.within(f"measurement {m.label}") from None
    except Infeasible as err:
        raise Infeasible(f"measurement {m.label} (workers={m.workers}, n_ps={m.n_ps}): "
                         f"{err}") from None
    return float(est.throughput)


def _check_inputs(profile, cluster, measurements) -> tuple[Measurement, ...]:
    if not isinstance(profile, Profile):
        raise SpecError("profile", f"expected a Profile, got {type(profile).__name__}")
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
    Seed 003 Sec. 4.2.1.
    """
    _, obj = _base_model(model, options)
    ms = _check_inputs(profile, cluster, measurements)
    return np.array([_predict_one(obj, profile, cluster, m) for m in ms])


# --------------------------------------------------------------------------
# Fitting
# --------------------------------------------------------------------------

def _objective(name: str, abs_errors: np.ndarray, axis=-1) -> np.ndarray:
    if name == "mean_relative":
        return np.mean(abs_errors, axis=axis)
    if name == "rms_relative":
        return np.sqrt(np.mean(abs_errors ** 2, axis=axis))
    return np.max(abs_errors, axis=axis)


def _split_grid(grid: Mapping, model_obj) -> tuple[list[str], list[tuple], set, set]:
    if not isinstance(grid, Mapping) or not grid:
        raise SpecError("grid", "expected a non-empty mapping of tunable name -> values")
    model_fields = {f.name for f in dataclasses.fields(model_obj)}
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
        if in_m and in_c:
            raise SpecError(f"grid.{raw_key}", f"{name!r} is both a model option and a cluster "
                                               f"field; write model.{name} or cluster.{name}")
        if in_c and name in _FROM_MEASUREMENT:
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
        vals = tuple(_plain(v) for v in np.asarray(vals, dtype=object).ravel()) \
            if isinstance(vals, np.ndarray) else tuple(_plain(v) for v in vals)
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
        One of :data:`OBJECTIVES`.
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
    Seed 003 Sec. 4.2.1.
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


def _folds(cv, n: int) -> list[np.ndarray] | None:
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
        What "best fit" minimizes over relative throughput errors; seed 003
        reports mean relative error.
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
    Seed 003 (``003_466ded720105ddf3.txt``) Sec. 4.2.1: rho_T chosen from
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
    if objective not in OBJECTIVES:
        raise SpecError("objective", f"expected one of {', '.join(OBJECTIVES)}, got {objective!r}")
    name, base = _base_model(model, options)
    ms = _check_inputs(profile, cluster, measurements)
    keys, values, in_model, in_cluster = _split_grid(grid, base)
    folds = _folds(cv, len(ms))
    measured = np.array([m.throughput for m in ms])

    points = list(itertools.product(*values))
    predictions = np.empty((len(points), len(ms)))
    prepared = [(_measured_profile(profile, m), m.config()) for m in ms]
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
        predictions[p] = [_predict_one(obj, profile, clu, m, prep)
                          for m, prep in zip(ms, prepared)]

    residuals = predictions / measured - 1.0
    abs_err = np.abs(residuals)
    abs_err[~np.isfinite(abs_err)] = np.inf
    scores = _objective(objective, abs_err)
    if not np.isfinite(scores).any():
        raise PerfModelError("no grid point gives finite predictions on every measurement")
    best_i = int(np.argmin(scores))
    best = dict(zip(keys, points[best_i]))
    base_pred = np.array([_predict_one(base, profile, cluster, m) for m in ms])
    base_error = float(_objective(objective, np.abs(base_pred / measured - 1.0)))

    cv_error = cv_max = float("nan")
    cv_errors: tuple = ()
    cv_choices: list[dict] = []
    if folds is not None:
        held = np.empty(len(ms))
        for test in folds:
            train = np.setdiff1d(np.arange(len(ms)), test)
            choice = int(np.argmin(_objective(objective, abs_err[:, train])))
            cv_choices.append(dict(zip(keys, points[choice])))
            held[test] = residuals[choice, test]
        cv_error = float(_objective(objective, np.abs(held)))
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


# --------------------------------------------------------------------------
# Per-network calibration (issue 10 item 1)
# --------------------------------------------------------------------------

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
#: Coarser defaults when the model is the simulator (about 0.1 s per
#: estimate): 6 + 5 + 3 + 4 values for a coordinate search.
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
#: Default model per measured mode: the sync hybrid (seed 003 eq. 9) and the MVA.
CALIBRATION_MODELS: dict[str, str] = {"sync": "sync", "async": "async"}
#: A grid point whose objective is within this of the best (absolute, e.g.
#: 0.005 = half a percentage point of mean relative error) is "as good":
#: :attr:`Calibration.ranges` spans the values of all such points.
NEAR_OPTIMAL = 0.005


@dataclass(frozen=True, eq=False)
class Calibration:
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
        return float(_objective(self.fit.objective, np.abs(np.asarray(self.residuals))))

    def save(self, path) -> None:
        """Write the calibrated cluster file (JSON or YAML by extension)."""
        from .io import save

        save(self.cluster, path)

    def to_dict(self) -> dict:
        """JSON-ready summary: fitted values, errors, residuals, the calibrated cluster."""
        def num(x):
            return None if not math.isfinite(x) else float(x)
        return {"model": self.model_name, "params": dict(self.params), "search": self.search,
                "objective": self.fit.objective, "train_error": num(self.train_error),
                "loo_error": num(self.loo_error), "base_error": num(self.base_error),
                "cv": self.cv, "residuals": [num(r) for r in self.residuals],
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
    import os

    if isinstance(measurements, (str, os.PathLike)):
        from .io import load_measurements

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
        if name not in fields or name in _FROM_MEASUREMENT:
            raise SpecError(f"params.{name}", "not a Cluster field that a calibration sets "
                                              f"(default: {', '.join(CALIBRATION_PARAMS)})")
        if name in out:
            raise SpecError(f"params.{name}", "given twice")
        if name not in grids and name not in defaults:
            raise SpecError(f"grids.{name}", "no default grid; give its candidate values")
        out[name] = grids.get(name, defaults.get(name))
    return out


def _is_simulator(obj) -> bool:
    from .sim.model import TraceSim

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
    predicted = np.array([_predict_one(memo, profile, cluster, m) for m in ms])
    measured = np.array([m.throughput for m in ms])
    return float(_objective(objective, np.abs(predicted / measured - 1.0)))


def _sweeps(memo, profile: Profile, cluster: Cluster, ms, grids: Mapping,
            objective: str) -> tuple[Cluster, list[FitResult]]:
    """Coordinate sweeps (1-D :func:`fit_tunables` per parameter) until nothing changes."""
    current = cluster
    for _ in range(COORDINATE_SWEEPS):
        fits, changed = [], False
        for name, values in grids.items():
            fit = fit_tunables(memo, profile, current, ms, {name: values}, cv=None,
                               objective=objective)
            fits.append(fit)
            if fit.best[name] != getattr(current, name):
                current, changed = fit.cluster, True
        if not changed:
            break
    return current, fits


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
        local = fit_tunables(memo, profile, current, ms, _neighbourhood(grids, current),
                             cv=None, objective=objective)
        if not local.train_error < _error(memo, profile, current, ms, objective):
            break
        current, fits = _sweeps(memo, profile, local.cluster, ms, grids, objective)
    return current, fits


def _coordinate_cv(memo, profile: Profile, cluster: Cluster, ms, grids: Mapping, cv,
                   objective: str) -> float:
    """Objective over held-out errors, the whole coordinate search redone per fold."""
    folds = _folds(cv, len(ms))
    if folds is None:
        return float("nan")
    held = np.empty(len(ms))
    for test in folds:
        train = [m for i, m in enumerate(ms) if i not in set(test.tolist())]
        fitted, _ = _coordinate_search(memo, profile, cluster, train, grids, objective)
        for i in test:
            held[i] = _predict_one(memo, profile, fitted, ms[i]) / ms[i].throughput - 1.0
    return float(_objective(objective, np.abs(held)))


def _checked_values(cluster: Cluster, name: str, values) -> tuple[float, ...]:
    """A parameter's candidates as the cluster stores them (SI floats), each validated."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise SpecError(f"grids.{name}", f"expected a sequence of values, got {values!r}")
    out = []
    for v in values:
        try:
            out.append(getattr(cluster.replace(**{name: _plain(v)}), name))
        except SpecError as err:
            raise SpecError(f"grids.{name}", err.message) from None
    if not out or any(v is None for v in out):
        raise SpecError(f"grids.{name}", f"expected numbers, got {values!r}")
    return tuple(out)


def _sensitive(obj, profile: Profile, cluster: Cluster, ms, name: str, values) -> bool:
    """Whether the predictions change between the grid's extremes of one parameter."""
    lo, hi = (cluster.replace(**{name: v}) for v in (min(values), max(values)))
    a = np.array([_predict_one(obj, profile, lo, m) for m in ms])
    b = np.array([_predict_one(obj, profile, hi, m) for m in ms])
    return not np.allclose(a, b, rtol=1e-12, atol=0.0)


def _step_time_band(profile, cluster, ms, grid, grids, model=None) -> dict:
    """The timeout probabilities the measured step times (median or spread) allow, when
    fitted from the default grid (:func:`perfmodel.select.timeouts_from_step_times`, within
    :data:`perfmodel.select.TIMEOUT_BAND`); {} otherwise.  Measurements without a mode
    take the model's: an asynchronous model's step is one worker's cycle."""
    from .baselines import Cynthia, LinAsync
    from .queueing import AsyncMVA
    from .select import TIMEOUT_BAND, _band_values, timeouts_from_step_times

    if "timeout_probability" not in grid or "timeout_probability" in (grids or {}):
        return {}
    mode = "async" if isinstance(model, (AsyncMVA, LinAsync, Cynthia)) else None
    spread = timeouts_from_step_times(profile, cluster, ms, mode=mode)
    if spread is None:
        return {}
    return {"timeout_probability": _band_values(grid["timeout_probability"], spread[0],
                                                TIMEOUT_BAND)}


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
                      source: str = "") -> Calibration:
    """Fit a network's parameters from a few measured runs of one job (issue 10 item 1).

    The values go into the :class:`Cluster` (the cluster file), so every model
    reads them: ``link_efficiency`` (goodput over line rate), ``sharing_weight``
    (PS against FCFS sharing, seed 003 eq. 9 uses 0.5), ``update_growth``
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
        :data:`perfmodel.select.TIMEOUT_BAND` of what the step times imply
        (:func:`perfmodel.select.timeouts_from_step_times`), as the model selection
        holds them.
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
        ``"auto"``: coordinate for the simulator (about 0.1 s per estimate,
        with the coarser :data:`SIM_GRIDS` as defaults), joint otherwise.
    source : str
        Name of the measurements for the provenance note (default: the path
        when ``measurements`` is one).

    Returns
    -------
    Calibration
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
    estimates: 15 x 11 x 11 points for the sync hybrid with ``t_update > 0``,
    about 0.3 s on 3 measurements.  With one bandwidth and no overlap the
    hybrid's step time is linear in K, and ``sharing_weight`` and
    ``update_growth`` both only change its slope: measure a second bandwidth
    (or ``n_ps``) to separate them; ``ranges`` shows when they are not.

    References
    ----------
    Seed 003 (``003_466ded720105ddf3.txt``) Sec. 4.2.1 (tunables chosen on a
    preliminary profiling), eqs. 7-10 (update once per step), eq. 9 (the
    0.5 average ``sharing_weight`` generalizes); seed 001 eq. 7 (sigma).

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
    ms = _check_inputs(profile, cluster, raw)
    spec = model if model is not None else _default_model(ms)
    name, obj = _base_model(spec, None)
    how = _search(search, obj)
    grid = _calibration_grids(params, grids, SIM_GRIDS if _is_simulator(obj) else
                              CALIBRATION_GRIDS)
    grid = {k: _checked_values(cluster, k, v) for k, v in grid.items()}
    banded = _step_time_band(profile, cluster, ms, grid, grids, obj)
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
        fit = fit_tunables(spec, profile, cluster, ms, used, cv=cv, objective=objective)
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
    predicted = np.array([_predict_one(memo, profile, calibrated, m) for m in ms])
    residuals = tuple(float(r) for r in predicted / measured - 1.0)
    source = source or path
    note = _provenance(cluster, fitted, name, len(ms), source, loo, base)
    return Calibration(cluster=calibrated.replace(source=note), params=fitted, fit=fit,
                       residuals=residuals, loo_error=loo, base_error=base, unused=unused,
                       ranges=ranges, model_name=name, source=source, grids=dict(used), cv=cv,
                       search=how)
