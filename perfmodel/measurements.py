"""The measurement CSV: measured runs of one job, and how a run becomes specs.

A few measured configurations of a job (throughput at 1, 2, 4 workers ...)
are what calibration and model selection learn from.  This module reads them
(:func:`parse_measurements`; files go through :func:`perfmodel.io.load_measurements`)
into :class:`Measurement` records, and states the one rule every fit uses to
turn a measurement into the specs a model is asked about
(:func:`measured_profile`, :func:`measured_cluster`, :meth:`Measurement.config`).

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
``bandwidth``         yes        NIC line rate with its unit (``10Gbps``,
                                 ``1.25GB/s``; a bare number is refused)
``throughput``        yes        measured training throughput, samples/s (all
                                 workers)
``batch_size``        no         samples per worker per step (default: the
                                 profile's)
``mode``              no         ``sync`` or ``async`` (``Config.mode``; default
                                 sync)
``step_time_std``     no         standard deviation of one worker's step time
                                 (sync: the step; async: its own cycle), with
                                 its unit (``250ms``); on a lossy link it
                                 identifies the timeout probability (see
                                 :mod:`perfmodel.fit.timeouts`)
``step_time_median``  no         median of the same step times, with its unit
                                 (``640ms``); with the mean step (from the throughput)
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
:func:`measurements_csv` writes the format (with exact unit strings).
A bad value is a :class:`~perfmodel.errors.SpecError` naming the file, the line
and the column: ``m.csv: line 3, column bandwidth: unknown unit ...``.

How a measurement is predicted
------------------------------
``model.estimate(profile', cluster', Config(n_replicas=workers, n_ps=n_ps,
mode=mode))`` where ``cluster'`` is the cluster with ``nic_bandwidth`` set to
the measurement's bandwidth and
``machines`` raised to ``workers + n_ps`` when smaller; ``profile'`` is the
profile, or, when the measurement has a ``batch_size``, the profile with that
batch and ``t_forward``, ``t_backward`` scaled in proportion (compute time
linear in the batch; ``t_update`` and ``model_bytes`` unchanged).  The
prediction is ``estimate.throughput`` (samples/s).

References
----------
Li, Paolieri, Golubchik, Lin, Yan 2022, "Predicting Throughput of Distributed
SGD", IEEE TPDS, Sec. 4.2.1: the preliminary profiling runs this format records.
"""

from __future__ import annotations

import copy
import csv
import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from . import units
from .errors import SpecError
from .specs import Cluster, Config

__all__ = ["MEASUREMENT_COLUMNS", "UNIT_COLUMNS", "Measurement", "parse_measurements",
           "measurements_csv", "measured_profile",
           "measured_cluster", "measured_cluster_unchecked"]

#: CSV columns: name -> required.
MEASUREMENT_COLUMNS: dict[str, bool] = {
    "workers": True, "n_ps": True, "bandwidth": True, "throughput": True,
    "batch_size": False, "mode": False, "step_time_std": False, "step_time_median": False,
    "server_cpu": False, "worker_cpu": False,
}
#: Columns holding a quantity, and its dimension: a CSV writes the unit (a bare 0 aside).
UNIT_COLUMNS = {"bandwidth": "B/s", "step_time_std": "s", "step_time_median": "s"}


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
        of configurations not run (:func:`perfmodel.fit.selection.cpu_ceiling`).

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
                        mode: str | None = None) -> Measurement:
        """A measurement from a log of one worker's step times (s).

        The throughput is ``workers * batch_size / mean``; ``step_time_std``
        (ddof 1) and ``step_time_median`` come with it, so a lossy link's
        timeouts can be read off the log (:mod:`perfmodel.fit.timeouts`).  Sync:
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
    Li et al. 2022, Sec. 4.2.1 (the preliminary profiling runs this format records).

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
            for col in UNIT_COLUMNS.keys() & kwargs.keys():
                try:
                    units.parse(kwargs[col], UNIT_COLUMNS[col], require_unit=True)
                except SpecError as err:
                    raise err.within(col) from None
            out.append(Measurement(line=number, **kwargs))
        except SpecError as err:
            raise SpecError(f"line {number}, column {err.field}", err.message, src) from None
    if header is None:
        raise SpecError("", "no header line (expected workers,n_ps,bandwidth,throughput)", src)
    if not out:
        raise SpecError("", "no measurements after the header", src)
    return tuple(out)


def measurements_csv(measurements) -> str:
    """The measurement CSV of ``measurements`` (:func:`parse_measurements` reads back the same
    values; ``line`` becomes the row's line).

    Columns are the required four and each optional one some measurement
    has; quantities carry exact unit strings (:func:`perfmodel.units.exact_text`).
    """
    rows = [m.to_dict() for m in measurements]
    columns = [c for c in MEASUREMENT_COLUMNS
               if MEASUREMENT_COLUMNS[c] or any(c in r for r in rows)]

    def cell(col, value):
        if value is None:
            return ""
        if col in UNIT_COLUMNS:
            return str(units.exact_text(value, UNIT_COLUMNS[col]))
        return repr(value) if isinstance(value, float) else str(value)

    lines = [",".join(columns)] + [",".join(cell(c, r.get(c)) for c in columns) for r in rows]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------
# From a measurement to the specs a model is asked about
# --------------------------------------------------------------------------

def measured_profile(profile, m: Measurement):
    """The workload (a profile, or any workload with ``batch_size`` and ``at_batch``, such
    as a trace) at the measurement's batch size.

    Compute time is taken as linear in the batch: ``t_forward`` and
    ``t_backward`` scale with it; ``t_update`` and ``model_bytes`` do not.
    """
    if m.batch_size is None or m.batch_size == profile.batch_size:
        return profile
    return profile.at_batch(m.batch_size)


def measured_cluster(cluster: Cluster, m: Measurement) -> Cluster:
    """The cluster at the measurement's bandwidth, with room for its workers and servers."""
    machines = max(cluster.machines, m.workers + m.n_ps)
    return cluster.replace(nic_bandwidth=m.bandwidth, machines=machines)


def measured_cluster_unchecked(cluster: Cluster, m: Measurement) -> Cluster:
    """:func:`measured_cluster` without validating again (a grid search's inner loop).

    Both sources are validated already (the cluster on construction, the
    bandwidth and workers in :class:`Measurement`), and no cross-field rule
    of :class:`Cluster` involves ``nic_bandwidth`` or ``machines``.
    """
    out = copy.copy(cluster)
    object.__setattr__(out, "nic_bandwidth", m.bandwidth)
    object.__setattr__(out, "machines", max(cluster.machines, m.workers + m.n_ps))
    return out
