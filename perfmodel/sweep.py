"""Grids of configurations evaluated with any model, on any executor, resumably.

:func:`sweep` evaluates every point of a :class:`Grid` (the cross product of
its axes) with the models of :mod:`perfmodel.registry` and returns a tidy
table: one row per point, one column per axis and per result field.

Decisions taken here (each is a named option or documented here):

- **Axes.** ``model`` (registry names), ``workload`` (zoo profile or DNN name,
  or a spec object), ``cluster`` (zoo name or :class:`~perfmodel.specs.Cluster`),
  ``workers`` (``Config.n_replicas``, the data-parallel workers K),
  ``n_workers`` (workers per replica, for the layer-wise model), ``n_ps``,
  ``bandwidth`` (B/s; unit strings accepted), ``batch_size``, ``mode`` and
  ``epoch_samples``.  Any other axis must be an option of at least one of the
  grid's models (e.g. ``sharing=["ps", "hybrid"]``); it is crossed only with
  the models that have it, so no duplicate points appear.  An axis left out
  takes the model's, workload's or cluster's own value, and the row records
  that value (``bandwidth`` is the cluster's NIC rate, ``n_ps`` is 1 for
  parameter-server models and 0 for all-reduce ones).
- **Key.** Every point has a ``key``: the first 16 hex digits of the SHA-256
  of the canonical JSON (sorted keys) of its axis values, with workloads and
  clusters replaced by the digest of their ``to_dict()``.  The key depends only
  on what is computed, not on the grid's order or on labels, so a re-run finds
  its finished points.
- **Columns.** ``key``, ``model``, the option axes, ``workload``, ``cluster``
  (labels: the name given, else the spec's ``name``), ``workers``,
  ``n_workers``, ``n_ps``, ``bandwidth``, ``batch_size``, ``mode``,
  ``epoch_samples``, then ``step_time`` (s), ``throughput`` (samples/s),
  ``bottleneck``, ``epoch_time`` (s, None when the epoch size is unknown),
  ``throughput_low``/``throughput_high``/``interval_level`` when the model
  gives an interval (:attr:`~perfmodel.result.Estimate.throughput_interval`),
  ``phase_<name>`` (s) per phase and ``error``.  A point whose model raises
  :class:`~perfmodel.errors.SpecError` or :class:`~perfmodel.errors.Infeasible`
  gets ``error = "<Type>: <message>"`` and None results; any other exception is
  a bug and stops the sweep.  Missing values are None (empty in CSV, null in
  Parquet), never NaN.
- **Chunks.** Points are evaluated ``chunk_size`` at a time (default
  :data:`DEFAULT_CHUNK_SIZE`) by one call of a top-level function, a loop over
  ``model.estimate``: one task per point would spend far more time in task
  overhead than in the coarse formulas (tens of microseconds per point).
- **Executors.** ``executor`` may be any :class:`concurrent.futures.Executor`
  (e.g. ``distributed.Client(...).get_executor()``); it is not shut down.
  ``scheduler="tcp://host:port"`` connects a Dask client (extra
  ``perfmodel[dask]``) and closes it at the end.  Otherwise ``jobs=N`` processes
  run in a :class:`~concurrent.futures.ProcessPoolExecutor` whose start method
  is ``start_method`` (default ``"spawn"``: safe with threads, though each
  process imports perfmodel anew); ``jobs=1`` evaluates in this process.
  ``jobs=None`` (the default) evaluates the first chunk here, and starts a
  pool of CPU-count processes for the rest only when they would take more
  than :data:`AUTO_POOL_SECONDS` here: a pool does not pay for itself on
  coarse models, whose grids one process evaluates quickly.
- **Files and resume.** ``out`` is written as CSV, JSON lines or Parquet
  (from the suffix, or ``format``).  Finished chunks are appended at once to a
  journal (``out`` itself for JSON lines, else ``out`` + ``.partial.jsonl``),
  so an interruption loses only the chunks in flight.  When the sweep ends,
  the whole table is written to ``out`` atomically (a temporary file renamed
  over it), rows in grid order, and the journal is removed.  A re-run reads
  the keys in ``out`` and in the journal and computes only the others; rows
  with an ``error`` count as finished (delete them to retry).  Rows of ``out``
  that are not points of the grid are kept, ahead of the grid's rows.
- **Progress.** A tqdm bar on stderr: ``progress=True`` always, ``False``
  never, None only when stderr is a terminal and the sweep lasts over a
  second (the CLI's choice).

Examples
--------
One ResNet-50 worker and one server at 1 Gbps: the step is 2 M/B + T_F + T_B
= 2 x 102.228128 MB / 125 MB/s + 0.182488 s + 0.260931 s = 2.079 s.

>>> grid = Grid.from_axes(model="sync", workers=[1, 2], bandwidth="1Gbps")
>>> rows = sweep(grid, jobs=1, progress=False).records
>>> [(r["workers"], r["bandwidth"], r["bottleneck"]) for r in rows]
[(1, 125000000.0, 'downlink'), (2, 125000000.0, 'downlink')]
>>> round(rows[0]["step_time"], 3)
2.079
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import csv
import dataclasses
import functools
import hashlib
import itertools
import json
import math
import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import _validate as _v
from . import registry, units, zoo
from ._process import end_with_parent
from .errors import PerfModelError, SpecError
from .floors import below_floor, config_floor
from .specs import Cluster, Config, Profile

__all__ = ["Grid", "SweepResult", "sweep", "read_table", "write_table", "table_format",
           "grid_records", "process_pool", "FORMATS", "DEFAULT_CHUNK_SIZE",
           "AUTO_POOL_SECONDS"]

#: Output formats and the file suffixes that select them.
FORMATS = {"csv": (".csv",), "jsonl": (".jsonl", ".ndjson"), "parquet": (".parquet", ".pq")}

#: Points per task: enough coarse-model work to dwarf a task's overhead.
DEFAULT_CHUNK_SIZE = 250

#: With ``jobs=None``, a process pool starts only when the first chunk says the
#: rest would take longer than this in one process (s): starting a process
#: costs more than a large grid of coarse points takes.
AUTO_POOL_SECONDS = 2.0

#: Default workload and cluster per model: what ``perfmodel predict`` uses.
_DEFAULT_WORKLOAD = {"layerwise": "adam-imagenet22k"}
_DEFAULT_CLUSTER = {"layerwise": "yan2015"}
_FALLBACK_WORKLOAD, _FALLBACK_CLUSTER = "resnet50-pipedream", "aws-p3.2xlarge"

_AXES = ("workers", "n_workers", "n_ps", "bandwidth", "batch_size", "mode", "epoch_samples")
_STRING_COLUMNS = frozenset({"key", "model", "workload", "cluster", "mode", "bottleneck", "error"})


# ---------------------------------------------------------------- the grid
def _values(name: str, value) -> tuple:
    """An axis value or iterable of values -> non-empty tuple."""
    if value is None or isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        values = (value,)
    else:
        values = tuple(value)
    if not values:
        raise SpecError(f"grid.{name}", "is empty")
    return values


def _ints(name: str, values: tuple, minimum: int) -> tuple:
    for v in values:
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < minimum):
            raise SpecError(f"grid.{name}", f"must be integers >= {minimum}, got {v!r}")
    return values


def _bandwidths(values: tuple) -> tuple:
    out = []
    for v in values:
        if v is None:
            out.append(None)
            continue
        try:
            b = units.parse(v, "B/s") if isinstance(v, str) else v
        except SpecError as err:
            raise SpecError("grid.bandwidth", err.message) from None
        if isinstance(b, bool) or not isinstance(b, (int, float)) or not math.isfinite(b) or b <= 0:
            raise SpecError("grid.bandwidth", f"must be positive and finite (B/s), got {v!r}")
        out.append(float(b))
    return tuple(out)


def _spec(kind: str, value):
    """A zoo name (``zoo:`` prefix allowed) or a spec object -> (label, spec)."""
    if not isinstance(value, str):
        if not callable(getattr(value, "to_dict", None)):
            raise SpecError(f"grid.{kind}", f"needs a zoo name or a spec with to_dict(), "
                                            f"got {type(value).__name__}")
        return getattr(value, "name", "") or type(value).__name__, value
    name = value[4:] if value.startswith("zoo:") else value
    if kind == "cluster" and name in zoo.cluster_names():
        return name, zoo.cluster(name)
    if kind == "workload" and name in zoo.profile_names():
        return name, zoo.profile(name)
    if kind == "workload" and name in zoo.names():
        return name, zoo.load(name)
    known = zoo.cluster_names() if kind == "cluster" else zoo.profile_names() + zoo.names()
    raise SpecError(f"grid.{kind}", f"unknown {kind} {value!r}; known: {', '.join(known)}")


def _digest(data) -> str:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _model_options(name: str | None) -> set[str]:
    """Options of the registry model ``name``; a model object's (name None) are fixed."""
    if name is None:
        return set()
    return {f.name for f in dataclasses.fields(registry.model_class(name))}


def _model_entry(value) -> tuple:
    """A registry name or a model object -> (label, name or None, object or None, identity)."""
    if isinstance(value, str):
        if value not in registry.MODELS:
            raise SpecError("grid.model", f"unknown model {value!r}; known: {', '.join(registry.MODELS)}")
        return value, value, None, value
    if not callable(getattr(value, "estimate", None)):
        raise SpecError("grid.model", f"needs a registry name or an object with estimate(), "
                                      f"got {type(value).__name__}")
    text = f"{type(value).__module__}.{type(value).__qualname__}:{value!r}"
    if " at 0x" in text:  # a memory address would change every run
        raise SpecError("grid.model", f"{type(value).__name__} has no stable repr, which the "
                                      f"point keys are made of; use a dataclass")
    return type(value).__name__, None, value, "object:" + _digest(text)


@dataclass(frozen=True)
class Grid:
    """The cross product of a sweep's axes (see the module docstring).

    Every field takes one value or an iterable of values; None means "the
    model's, workload's or cluster's own value".  Prefer :meth:`from_axes`,
    which also sorts model options out of the keyword arguments.

    Attributes
    ----------
    model : tuple of (label, name, object, identity)
        Names in :data:`perfmodel.registry.MODELS` (object None) or model
        objects with ``estimate`` (name None; labelled with their class name,
        identified in the keys by the digest of their ``repr``, so they must be
        dataclasses or have a repr as stable).
    workload, cluster : tuple of (label, spec)
        Resolved specs with their column labels.
    workers, n_workers, n_ps, batch_size, epoch_samples : tuple of int or None
    bandwidth : tuple of float or None, B/s
    mode : tuple of str
    options : mapping of str to tuple
        Model options crossed with the models that have them.

    Raises
    ------
    SpecError
        An unknown model, workload, cluster or axis, or a bad value; the field
        is ``grid.<axis>``.
    """

    model: Any = ("sync",)
    workload: Any = None
    cluster: Any = None
    workers: Any = (1,)
    n_workers: Any = (1,)
    n_ps: Any = None
    bandwidth: Any = None
    batch_size: Any = None
    mode: Any = ("sync",)
    epoch_samples: Any = None
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        entries = [_model_entry(m) for m in _values("model", self.model)]
        labels = _labelled([(label, ident) for label, _, _, ident in entries], lambda ident: ident)
        self._set("model", tuple((label,) + entry[1:] for (label, _), entry in zip(labels, entries)))
        models = [name or _registry_name(obj) for _, name, obj, _ in self.model]
        for kind, defaults, fallback in (("workload", _DEFAULT_WORKLOAD, _FALLBACK_WORKLOAD),
                                         ("cluster", _DEFAULT_CLUSTER, _FALLBACK_CLUSTER)):
            given = getattr(self, kind)
            given = tuple(dict.fromkeys(defaults.get(m, fallback) for m in models)) \
                if given is None else _values(kind, given)
            self._set(kind, _labelled([_spec(kind, v) for v in given],
                                      lambda spec: _digest(spec.to_dict())))
        for name, minimum in (("workers", 1), ("n_workers", 1), ("n_ps", 0), ("batch_size", 1),
                              ("epoch_samples", 1)):
            self._set(name, _ints(name, _values(name, getattr(self, name)), minimum))
        self._set("bandwidth", _bandwidths(_values("bandwidth", self.bandwidth)))
        modes = _values("mode", self.mode)
        for m in modes:
            if m not in ("sync", "async"):
                raise SpecError("grid.mode", f"must be 'sync' or 'async', got {m!r}")
        self._set("mode", modes)
        self._check_batch()
        self._set("options", self._checked_options())

    def _set(self, name: str, value) -> None:
        object.__setattr__(self, name, value)

    def _check_batch(self) -> None:
        if self.batch_size == (None,):
            return
        for label, spec in self.workload:
            if not hasattr(spec, "batch_size") or not hasattr(spec, "replace"):
                raise SpecError("grid.batch_size", f"workload {label!r} has no batch size")

    def _checked_options(self) -> dict:
        known = set().union(*(_model_options(name) for _, name, _, _ in self.model))
        options = {}
        for name, value in dict(self.options).items():
            if name not in known:
                raise SpecError(f"grid.{name}", f"unknown axis: not an axis "
                                                f"({', '.join(('model', 'workload', 'cluster') + _AXES)}) "
                                                f"nor an option of "
                                                f"{', '.join(label for label, *_ in self.model)}")
            options[name] = _values(name, value)
            for _, model, _, _ in self.model:  # each value once: bad ones fail now
                if name in _model_options(model):
                    for v in options[name]:
                        try:
                            registry.make(model, **{name: v})
                        except SpecError as err:
                            raise SpecError(f"grid.{name}", err.message) from None
        return options

    @classmethod
    def from_axes(cls, **axes) -> Grid:
        """A grid from keyword axes; keywords that are not axes are model options."""
        own = {f.name for f in dataclasses.fields(cls)} - {"options"}
        options = {k: v for k, v in axes.items() if k not in own}
        return cls(**{k: v for k, v in axes.items() if k in own}, options=options)

    def __len__(self) -> int:
        return sum(1 for _ in self.points())

    def points(self) -> Iterator[dict]:
        """Every point as a row of axis values (``key`` first), in grid order."""
        digests = {id(spec): _digest(spec.to_dict())
                   for _, spec in self.workload + self.cluster}
        option_names = list(self.options)
        for label, name, obj, ident in self.model:
            own = [n for n in option_names if n in _model_options(name)]
            for values in itertools.product(*(self.options[n] for n in own)):
                opts = dict.fromkeys(option_names) | dict(zip(own, values))
                try:
                    model = obj if obj is not None else registry.make(name, **opts)
                    ps_model = getattr(model, "uses_parameter_servers", True)
                except PerfModelError:  # options wrong only together: error rows
                    ps_model = True
                yield from self._model_points(label, ident, ps_model, opts, digests)

    def _model_points(self, label: str, ident: str, ps_model: bool, opts: dict,
                      digests: dict) -> Iterator[dict]:
        for (wl, workload), (cl, cluster) in itertools.product(self.workload, self.cluster):
            batches = self.batch_size if self.batch_size != (None,) else \
                (getattr(workload, "batch_size", None),)
            bandwidths = self.bandwidth if self.bandwidth != (None,) else (cluster.nic_bandwidth,)
            servers = self.n_ps if self.n_ps != (None,) else ((1,) if ps_model else (0,))
            for mode, samples, batch, bw, ps, nw, k in itertools.product(
                    self.mode, self.epoch_samples, batches, bandwidths, servers, self.n_workers,
                    self.workers):
                row = {"model": label, **opts, "workload": wl, "cluster": cl, "workers": k,
                       "n_workers": nw, "n_ps": ps, "bandwidth": bw, "batch_size": batch,
                       "mode": mode, "epoch_samples": samples}
                point = dict(row, model=ident, workload=digests[id(workload)],
                             cluster=digests[id(cluster)])
                yield {"key": _digest(point), **row}

    def specs(self) -> dict[str, dict]:
        """What a task needs besides its rows: ``{"workload": {label: spec}, "cluster":
        {label: spec}, "model": {label: model object}}``."""
        return {"workload": dict(self.workload), "cluster": dict(self.cluster),
                "model": {label: obj for label, _, obj, _ in self.model if obj is not None}}


def _registry_name(model) -> str | None:
    """The registry name of a model object's class, for its default workload and cluster."""
    return registry.name_of(model)


def _labelled(pairs: list, identity: Callable) -> tuple:
    """Make labels unique: a repeated label gets ``#<digest of its identity>`` appended."""
    seen: dict[str, int] = {}
    for label, _ in pairs:
        seen[label] = seen.get(label, 0) + 1
    return tuple((f"{label}#{_digest(identity(item))[:8]}" if seen[label] > 1 else label, item)
                 for label, item in pairs)


# ---------------------------------------------------------------- evaluation
def _result_columns(est) -> dict:
    row = {"step_time": est.step_time, "throughput": est.throughput,
           "bottleneck": est.bottleneck, "epoch_time": est.epoch_time}
    if est.throughput_interval is not None:
        row["throughput_low"], row["throughput_high"] = est.throughput_interval
        row["interval_level"] = est.meta.get("interval_level")
    row.update({f"phase_{name}": value for name, value in est.phases.items()})
    row["error"] = None
    return row


_FAILED = {"step_time": None, "throughput": None, "bottleneck": None, "epoch_time": None}


def _varied(spec, name: str, value, cache: dict):
    """``spec`` with field ``name`` set to ``value`` (None: unchanged), built once per chunk."""
    if value is None or getattr(spec, name) == value:
        return spec
    key = (id(spec), name, value)
    if key not in cache:  # a spec's replace validates every field again: costly
        cache[key] = spec.replace(**{name: value})
    return cache[key]


def _evaluate(row: dict, option_names: tuple, specs: dict, cache: dict) -> dict:
    opts = {n: row[n] for n in option_names if row.get(n) is not None}
    model_id = (row["model"], tuple(sorted(opts.items())))
    try:
        if model_id not in cache:
            model = specs["model"].get(row["model"])  # a model object, else a registry name
            cache[model_id] = registry.make(row["model"], **opts) if model is None else model
        workload = _varied(specs["workload"][row["workload"]], "batch_size", row["batch_size"],
                           cache)
        cluster = _varied(specs["cluster"][row["cluster"]], "nic_bandwidth", row["bandwidth"], cache)
        config = Config(n_workers=row["n_workers"], n_replicas=row["workers"], n_ps=row["n_ps"],
                        mode=row["mode"], epoch_samples=row["epoch_samples"])
        return row | _result_columns(cache[model_id].estimate(workload, cluster, config))
    except PerfModelError as err:
        return row | _FAILED | {"error": f"{type(err).__name__}: {err}"}


def _evaluate_chunk(rows: list, option_names: tuple, specs: dict) -> list[dict]:
    """One task: evaluate a chunk of points (top-level so that every executor can pickle it)."""
    cache: dict = {}
    return [_evaluate(row, option_names, specs, cache) for row in rows]


# ---------------------------------------------------------------- tables
def table_format(path, format: str | None = None) -> str:
    """The output format: ``format`` if given, else from ``path``'s suffix."""
    if format is not None:
        if format not in FORMATS:
            raise SpecError("format", f"unknown format {format!r}; known: {', '.join(FORMATS)}")
        return format
    suffix = Path(path).suffix.lower()
    for name, suffixes in FORMATS.items():
        if suffix in suffixes:
            return name
    raise SpecError("format", f"cannot tell the format of {str(path)!r} from its suffix "
                              f"(use .csv, .jsonl or .parquet, or give the format)")


def _columns(rows: Sequence[dict]) -> list[str]:
    """Every column in first-seen order, ``error`` last (a failed first row puts it early)."""
    columns = list(dict.fromkeys(k for row in rows for k in row))
    if "error" in columns:
        columns.remove("error")
        columns.append("error")
    return columns


def _tidy(rows: Sequence[dict]) -> list[dict]:
    """Every row with every column (missing -> None)."""
    columns = _columns(rows)
    return [{c: row.get(c) for c in columns} for row in rows]


def _pyarrow():
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise SpecError("format", "parquet needs pyarrow: pip install 'perfmodel[parquet]'") from None
    return pyarrow


def write_table(path, rows: Sequence[dict], format: str | None = None) -> Path:
    """Write ``rows`` to ``path`` atomically (a temporary file renamed over it)."""
    path, fmt = Path(path), table_format(path, format)
    rows = _tidy(rows)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    if fmt == "parquet":
        pa = _pyarrow()
        table = pa.table({c: [r[c] for r in rows] for c in _columns(rows)})
        pa.parquet.write_table(table, tmp)
    else:
        with open(tmp, "w", newline="") as f:
            if fmt == "jsonl":
                f.writelines(_jsonl(row) for row in rows)
            else:
                writer = csv.DictWriter(f, fieldnames=_columns(rows), lineterminator="\n")
                writer.writeheader()
                writer.writerows(rows)
    os.replace(tmp, path)
    return path


def _jsonl(row: dict) -> str:
    return json.dumps(row, allow_nan=False) + "\n"


def _csv_value(column: str, text: str):
    """A CSV cell back to its type: floats were written with repr, so they round-trip."""
    if text == "":
        return None
    if column in _STRING_COLUMNS:
        return text
    if text in ("True", "False"):
        return text == "True"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def read_table(path, format: str | None = None) -> list[dict]:
    """Read a sweep table back (CSV values get their int/float/bool types back).

    A JSON-lines file whose last line was cut by an interruption is read
    without that line.
    """
    path, fmt = Path(path), table_format(path, format)
    try:
        return _table_rows(path, fmt)
    except UnicodeDecodeError:
        raise SpecError("", "not a sweep table (not UTF-8 text)", source=str(path)) from None
    except (csv.Error, RecursionError, OverflowError) as err:
        raise SpecError("", f"not a sweep table ({type(err).__name__})",
                        source=str(path)) from None
    except OSError as err:
        raise SpecError("", f"cannot read file: {err.strerror or err}", source=str(path)) from None


def _table_rows(path: Path, fmt: str) -> list[dict]:
    if fmt == "parquet":
        return _pyarrow().parquet.read_table(path).to_pylist()
    if fmt == "csv":
        with open(path, newline="") as f:
            return [{k: _csv_value(k, v) for k, v in row.items()} for row in csv.DictReader(f)]
    rows = []
    with open(path) as f:
        lines = f.read().split("\n")
    for number, line in enumerate(lines[:-1], 1):  # lines[-1]: "" or a cut-off line
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            raise SpecError(f"line {number}", "not a JSON object", source=str(path)) from None
    return rows


def _cut_partial_line(path: Path) -> None:
    """Drop an unfinished last line so that appending starts on a fresh one."""
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        path.write_bytes(data[: data.rfind(b"\n") + 1])


# ---------------------------------------------------------------- the sweep
@dataclass(frozen=True)
class SweepResult:
    """What :func:`sweep` did.

    Attributes
    ----------
    records : list of dict
        One tidy row per grid point, in grid order (see the module docstring).
    computed : int
        Points evaluated by this call.
    skipped : int
        Points found already finished in ``out`` (or its journal).
    seconds : float, s
        Wall time of the call.
    path : Path or None
        The table written.
    """

    records: list
    computed: int
    skipped: int
    seconds: float
    path: Path | None = None

    @property
    def errors(self) -> int:
        """Rows whose model raised SpecError or Infeasible."""
        return sum(1 for r in self.records if r.get("error"))


def _journal(out: Path, fmt: str) -> Path:
    return out if fmt == "jsonl" else out.with_name(out.name + ".partial.jsonl")


def _finished(out: Path | None, fmt: str | None) -> list[dict]:
    """Rows already in ``out`` and in its journal."""
    if out is None:
        return []
    rows = []
    journal = _journal(out, fmt)
    if out.is_dir():
        raise SpecError("", "is a directory, not a table file", source=str(out))
    if out.exists() and out != journal:
        rows += read_table(out, fmt)
    if journal.exists():
        _cut_partial_line(journal)
        rows += read_table(journal, "jsonl")
    for number, row in enumerate(rows, 1):
        if not isinstance(row, dict) or "key" not in row:
            raise SpecError(f"row {number}.key", "missing: not a sweep table", source=str(out))
        for name, value in row.items():
            if isinstance(value, float) and not math.isfinite(value):
                raise SpecError(f"row {number}.{name}", f"is {value}: not a finished point "
                                "(delete the row or the file to compute it again)",
                                source=str(out))
    return rows


#: What makes a table one job's: more axes (workers, bandwidth, ...) extend it.
JOB_COLUMNS = ("model", "workload", "cluster")


def _same_job(rows, points: list[dict], out) -> None:
    """Refuse to add points to a table of another model, workload or cluster."""
    have = {tuple(row.get(c) for c in JOB_COLUMNS) for row in rows}
    want = {tuple(p.get(c) for c in JOB_COLUMNS) for p in points}
    if have and not have & want:
        found = ", ".join("/".join(map(str, job)) for job in sorted(have, key=str)[:3])
        raise SpecError("out", f"{out} holds the table of another job ({found}); give "
                               "another file")


def _make_executor(executor, scheduler, jobs, n_tasks, start_method):
    """-> (executor, function closing what was opened here).

    The executor is None to evaluate in this process, or ``"auto"`` to decide
    after the first chunk (see :data:`AUTO_POOL_SECONDS`).
    """
    if executor is not None and scheduler is not None:
        raise SpecError("scheduler", "give an executor or a scheduler address, not both")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise SpecError("jobs", f"must be an integer >= 1, got {jobs!r}")
    if executor is not None:
        return executor, lambda: None
    if scheduler is not None:
        return _dask_executor(scheduler)
    if jobs is None:
        return "auto", lambda: None
    return _pool(min(jobs, n_tasks), start_method)


def _pool(jobs: int, start_method: str):
    if jobs <= 1:
        return None, lambda: None
    pool = cf.ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context(start_method),
                                  initializer=end_with_parent, initargs=(os.getpid(),))
    return pool, lambda: pool.shutdown(wait=True, cancel_futures=True)


@contextlib.contextmanager
def process_pool(jobs: int, start_method: str = "spawn"):
    """A pool of ``jobs`` processes as :func:`sweep` starts one (its workers end with
    this process, even when it is killed), shut down on leaving; None for one job
    (evaluate here).  For other long evaluations, e.g. ``perfmodel validate matrix
    --jobs``.

    >>> with process_pool(1) as pool:
    ...     pool is None
    True
    """
    jobs = int(_v.scalar("jobs", jobs, minimum=1, integer=True))
    pool, close = _pool(jobs, start_method)
    try:
        yield pool
    finally:
        close()




def _dask_executor(scheduler: str):
    try:
        from distributed import Client
    except ImportError:
        raise SpecError("scheduler", "needs Dask: pip install 'perfmodel[dask]'") from None
    try:
        client = Client(scheduler, timeout=10)
    except (OSError, TimeoutError, ValueError) as err:
        raise SpecError("scheduler", f"cannot connect to {scheduler!r}: {err}") from None
    return client.get_executor(), client.close


def _chunks(rows: list, size: int) -> list[list]:
    return [rows[i:i + size] for i in range(0, len(rows), size)]


def _progress_bar(total: int, progress: bool | None):
    from tqdm import tqdm

    auto = progress is None  # like the CLI's other bars: on a terminal, after one second
    return tqdm(total=total, unit=" points", desc="sweep", file=sys.stderr,
                disable=None if auto else not progress, delay=1.0 if auto else 0.0,
                leave=progress is True)


def _run(chunks: list, task: Callable, executor, on_done: Callable, start_method: str) -> None:
    """Evaluate every chunk and hand each finished one to ``on_done``."""
    if executor == "auto" and chunks:
        begin = time.perf_counter()
        on_done(task(chunks[0]))
        chunks = chunks[1:]
        serial = (time.perf_counter() - begin) * len(chunks)  # s, the rest in this process
        jobs = min(os.cpu_count() or 1, len(chunks)) if serial > AUTO_POOL_SECONDS else 1
        executor, close = _pool(jobs, start_method)
        try:
            return _run(chunks, task, executor, on_done, start_method)
        finally:
            close()
    if executor is None or executor == "auto":
        for chunk in chunks:
            on_done(task(chunk))
        return
    futures = [executor.submit(task, chunk) for chunk in chunks]
    try:
        for future in cf.as_completed(futures):
            on_done(future.result())
    finally:  # an interruption or error: drop the tasks not started yet
        for future in futures:
            future.cancel()


def sweep(grid: Grid, *, out=None, format: str | None = None, executor: cf.Executor | None = None,
          scheduler: str | None = None, jobs: int | None = None,
          chunk_size: int = DEFAULT_CHUNK_SIZE, progress: bool | None = True,
          start_method: str = "spawn") -> SweepResult:
    """Evaluate every point of ``grid``; write and resume ``out`` when given.

    Parameters
    ----------
    grid : Grid
        The axes (see the module docstring).
    out : str or Path, optional
        Table to write (CSV, JSON lines or Parquet); when it exists, its
        finished points are read back, not computed again.
    format : {"csv", "jsonl", "parquet"}, optional
        Default: from the suffix of ``out``.
    executor : concurrent.futures.Executor, optional
        Where chunks run (e.g. ``distributed.Client(...).get_executor()``).
    scheduler : str, optional
        Address of a Dask scheduler, e.g. ``"tcp://10.0.0.1:8786"``.
    jobs : int, optional
        Processes of the default pool; 1: this process; None: decided after
        the first chunk (see :data:`AUTO_POOL_SECONDS`).
    chunk_size : int
        Points per task.
    progress : bool or None
        Progress bar on stderr: always, never, or (None) on a terminal only.
    start_method : {"spawn", "forkserver", "fork"}
        How the default pool starts its processes.

    Returns
    -------
    SweepResult
        The tidy rows in grid order, and how many were computed or skipped.

    Raises
    ------
    SpecError
        A bad argument (``chunk_size``, ``jobs``, ``format``, ``scheduler``) or
        an ``out`` that is not a sweep table.
    """
    start = time.perf_counter()
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise SpecError("chunk_size", f"must be an integer >= 1, got {chunk_size!r}")
    if start_method not in multiprocessing.get_all_start_methods():
        raise SpecError("start_method", f"must be one of "
                                        f"{', '.join(multiprocessing.get_all_start_methods())}, "
                                        f"got {start_method!r}")
    out = None if out is None else Path(out)
    fmt = None if out is None else table_format(out, format)
    if fmt == "parquet":
        _pyarrow()  # fail before computing anything
    points = list({p["key"]: p for p in grid.points()}.values())  # a repeated value: once
    done = {row["key"]: row for row in _finished(out, fmt)}
    _same_job(done.values(), points, out)
    todo = [p for p in points if p["key"] not in done]
    chunks = _chunks(todo, chunk_size)
    pool, close = _make_executor(executor, scheduler, jobs, len(chunks), start_method)
    results: dict[str, dict] = {}
    try:
        with _progress_bar(len(todo), progress) as bar, _appender(out, fmt) as append:
            def on_done(rows: list[dict]) -> None:
                append(rows)
                results.update((r["key"], r) for r in rows)
                bar.update(len(rows))
            task = functools.partial(_evaluate_chunk, option_names=tuple(grid.options),
                                     specs=grid.specs())
            _run(chunks, task, pool, on_done, start_method)
    finally:
        close()
    grid_keys = {p["key"] for p in points}
    records = [results.get(p["key"]) or done[p["key"]] for p in points]
    if out is not None:
        others = [row for key, row in done.items() if key not in grid_keys]
        write_table(out, others + records, fmt)
        if _journal(out, fmt) != out:
            _journal(out, fmt).unlink(missing_ok=True)
    return SweepResult(records=_tidy(records), computed=len(todo), skipped=len(points) - len(todo),
                       seconds=time.perf_counter() - start, path=out)


class _appender:
    """Context manager yielding ``append(rows)``: JSON lines to the journal, flushed per chunk."""

    def __init__(self, out: Path | None, fmt: str | None):
        self.path = None if out is None else _journal(out, fmt)
        self.file = None

    def __enter__(self):
        if self.path is not None:
            self.file = open(self.path, "a")
        return self.append

    def append(self, rows: list[dict]) -> None:
        if self.file is not None:
            self.file.writelines(_jsonl(row) for row in rows)
            self.file.flush()

    def __exit__(self, *exc):
        if self.file is not None:
            self.file.close()
        return False


# ---------------------------------------------------------------- the serial helper of predict
def grid_records(model: Any, workload: Any, cluster: Cluster, *, workers: Iterable[int],
                 bandwidths: Iterable[float] | None = None, n_ps: Iterable[int] | None = None,
                 epoch_samples: int | None = None) -> list[dict]:
    """Estimate every (workers, bandwidth, servers) point and return one record each.

    Each record holds the configuration (``workers``, ``n_ps``, ``bandwidth`` in
    bytes/s) followed by the estimate's fields (``step_time``, ``throughput``,
    ``phases``, ``bottleneck``, and ``epoch_time`` when known; with an
    interval, ``interval_source`` says what made it).  For a
    profile, ``below_floor`` is True when the step is shorter than the
    physical floor of :mod:`perfmodel.floors` (the model promises more than
    the links or the compute allow).  The configurations take the model's
    ``mode`` when it has one (a model calibrated on async runs answers for
    async SGD), else sync.
    """
    bandwidths = [cluster.nic_bandwidth] if bandwidths is None else list(bandwidths)
    mode = getattr(model, "mode", "sync")
    if n_ps is None:  # all-reduce models have no servers
        n_ps = (1,) if getattr(model, "uses_parameter_servers", True) else (0,)
    records = []
    for bandwidth, k, s in itertools.product(bandwidths, workers, n_ps):
        net = cluster if bandwidth == cluster.nic_bandwidth else cluster.replace(nic_bandwidth=bandwidth)
        config = Config(n_replicas=k, n_ps=s, epoch_samples=epoch_samples, mode=mode)
        est = model.estimate(workload, net, config)
        record = {"workers": k, "n_ps": s, "bandwidth": bandwidth}
        record.update(est.to_dict())
        meta = record.pop("meta", None) or {}
        if est.throughput_interval is not None and "interval_source" in meta:
            record["interval_source"] = meta["interval_source"]   # what shaped the interval
        if isinstance(workload, Profile):
            record["below_floor"] = below_floor(est.step_time, config_floor(workload, net, config))
        records.append(record)
    return records
