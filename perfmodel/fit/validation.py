"""The validation matrix: every model, before and after calibration, on real and ns-3 data.

Two datasets, each split into *groups* (one job on one
network), each group into calibration points (at most 2 configurations per
network, or 2 servers x 2 workers for DL2) and test points (the rest).  Per
group and model the matrix holds the mean and max relative throughput error
``|predicted / measured - 1|`` on the test points, at two *stages*:

``default``
    the model with the cluster's default network parameters
    (``link_efficiency = 1``, ``sharing_weight = 0.5``, ``update_growth = 0``,
    rho_T = 0.6);
``calibrated``
    the model with its network parameters fitted on the calibration points
    (:func:`perfmodel.fit.selection.calibrate_candidate`, grid search, the
    same grids as :func:`perfmodel.fit.selection.default_candidates`);

and a ``selected`` row: the model :func:`perfmodel.fit.selection.choose` picks by
leave-one-out error on the calibration points and regime, with its 90%
interval's coverage of the test points.  The selection picks among the
toolkit's models; the baselines of other groups (:data:`BASELINES`: Lin et
al.'s queueing model, Cynthia's formula; Optimus on DL2) have rows of their
own for comparison and are never recommended.

DL2 (:func:`dl2_cells`)
-----------------------
Real MXNet ``dist_sync`` speeds (:mod:`perfmodel.fit.dl2`).  There is no profile:
every stage fits the job's unknowns ``(c, tau, u)`` (compute per sample,
transfer of the model, update) on the 2 smallest server counts x 2 smallest
worker counts, as :func:`perfmodel.fit.dl2.validate_dl2` does; ``default`` keeps
the network parameters at their defaults, ``calibrated`` also chooses
``update_growth`` from :data:`DL2_GROWTH` (best training error) and holds
the prediction under the CPU ceiling of the same 4 runs
(:func:`perfmodel.fit.dl2.utilization_ceiling`, the utilization law; the
containers' capacity is the largest CPU reading of any DNN's calibration
runs, since the limit is the testbed's).  The selected row picks among all
models at both stages by LOO on the 4 points and is capped the same way.
Optimus (fitted on the same 4 points) is the baseline, shown capped as its
``calibrated`` stage; ``cpu-ceiling`` is the ceiling alone.

ns-3 (:func:`ns3_cells`)
------------------------
Packet-level ns-3 runs of one parameter-server job (zoo profile
``resnet50-pipedream`` with the header's ``t_update``) over network regimes
(``perfmodel/zoo/validation/ns3_matrix.csv``, written by the ns-3 backend's
own command, see the file's header).  A group is one regime (all columns but
``workers``, ``throughput``, ``throughput_std``, ``steps``, ``seed`` and
``wall_seconds``); runs with the same workers are averaged over seeds.
Calibration points: the :data:`NS3_TRAIN_WORKERS` worker counts; the rest
are test points.  With overlap the simulator runs the profile in the
header's "overlap in N blocks" layer blocks (default 4,
:class:`perfmodel.sim.model.BlockTrace`, one whole-gradient update), as the
ns-3 job overlaps; where the header says the PS has one update CPU applying
whole gradients first come first served, the simulator's
``server_cpu="fcfs"`` is used for the regimes that apply every gradient
(async, sync per gradient).  The cluster is
``Cluster(nic_bandwidth=bandwidth, compute_cv=compute_cv)``: the compute
spread is an input of the run, known to both stages.  The link's queue
(``fair`` or ``fifo``) is passed to the selection as ``link_sharing`` (the
regime's known validity, see :mod:`perfmodel.fit.selection`).

References
----------
Li, Paolieri, Golubchik, Lin, Yan. Predicting Throughput of Distributed SGD.
IEEE TPDS, 2022.  Eqs. 1-10 and Sec. 4.

Zhang, Zhang, Wei, Pan, Huang. Performance Modeling and Analysis of
Distributed Deep Neural Network Training with Parameter Server. 2023 (GST).

DL2 (pengyanghua/DL2 ``config_speed.txt``); Optimus (EuroSys 2018).
"""

from __future__ import annotations

import csv
import dataclasses
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import registry, units, zoo
from ..errors import Infeasible, PerfModelError, SpecError
from ..io import read_text
from ..measurements import Measurement
from ..specs import Cluster
from .dl2 import (
    OptimusCandidate,
    dnn_names,
    fit_model,
    largest_cpu_reading,
    load_builtin,
    network,
    utilization_ceiling,
)
from .grid import predict_measurements
from .level import Leveled
from .selection import (
    LEVELED,
    LOCKSTEP_CV,
    Score,
    calibrate_candidate,
    calibrated_by_level,
    choose,
    evidence_of,
    extrapolated_halfwidth,
    extrapolation_growth,
    interval_halfwidth,
    level_candidate,
    levels_on,
    matrix_candidates,
    validity,
)
from .timeouts import timeout_why, timeouts_from_step_times, with_timeout_band

__all__ = ["NS3_PATH", "NS3_COLUMNS", "NS3_TRAIN_WORKERS", "DL2_GROWTH", "DL2_EXTRA_RUNS", "Cell", "Matrix",
           "NS3Run", "parse_ns3", "load_ns3", "dl2_cells", "ns3_cells", "validation_matrix"]

#: The committed ns-3 runs.
NS3_PATH = Path(__file__).parent.parent / "zoo" / "validation" / "ns3_matrix.csv"

#: Columns of the ns-3 CSV, in order.
NS3_COLUMNS = ("regime", "queue", "loss_rate", "bandwidth", "mode", "overlap", "update",
               "compute_cv", "workers", "n_ps", "batch_size", "throughput", "throughput_std",
               "steps", "seed", "wall_seconds")

#: Worker counts of the ns-3 calibration points (at most 2 per network).
NS3_TRAIN_WORKERS = (1, 2)

#: Update-growth values a DL2 calibration chooses from (per step ... per gradient).
DL2_GROWTH = (0.0, 1.0)

#: Other groups' models in the matrix for comparison; the selection never picks them.
BASELINES = tuple(v.name for e, v in registry.variants("matrix") if e.baseline)

#: Replications of the simulator candidates (seeds averaged; short runs random-walk).
SIM_REPLICATIONS = 4

#: Interval level of the selected rows.
LEVEL = 0.9


@dataclass(frozen=True)
class Cell:
    """Errors of one model at one stage on one group's test points.

    Attributes
    ----------
    dataset : {"dl2", "ns3"}
    group : str
        DNN (DL2) or regime label (ns-3).
    mode : {"sync", "async"}
    model : str
        Candidate name (``"sync-hybrid"``, ...; ``"selected"`` for the choice).
    stage : {"default", "calibrated", "selected"}
    n_train, n_test : int
        Calibration and test points.
    mean_error, max_error : float
        Relative throughput error on the test points.
    coverage : float or None
        Share of test points inside the 90% interval (selected rows).
    detail : str
        Fitted values, or the chosen model and why.
    """

    dataset: str
    group: str
    mode: str
    model: str
    stage: str
    n_train: int
    n_test: int
    mean_error: float
    max_error: float
    coverage: float | None = None
    detail: str = ""


def _errors(pred, meas) -> tuple[float, float]:
    rel = np.abs(np.asarray(pred, dtype=float) / np.asarray(meas, dtype=float) - 1.0)
    if not rel.size:
        return float("nan"), float("nan")
    return float(rel.mean()), float(rel.max())


def _coverage(pred, meas, halfwidth) -> float:
    """Share of measurements within ``halfwidth`` (log; a number or one per point)."""
    d = np.abs(np.log(np.asarray(meas, dtype=float) / np.asarray(pred, dtype=float)))
    return float(np.mean(d <= np.asarray(halfwidth))) if d.size else float("nan")


# --------------------------------------------------------------------------
# DL2
# --------------------------------------------------------------------------

def dl2_models() -> dict:
    """The models the DL2 rows compare: the registry's ``"dl2"`` variants of synchronous,
    recommendable models (the baseline and the async reference have rows of their own)."""
    return {v.name: registry.make(e.name, **v.options) for e, v in registry.variants("dl2")
            if "sync" in e.modes and not e.baseline}


def _dl2_fit(model, train, growth, start=None, tolerance=1e-10):
    """(c, tau, u) fitted with ``growth`` or, when growth is a tuple, the best of them."""
    if not isinstance(growth, tuple):
        starts = None if start is None else [start]
        return fit_model(model, train, cluster=network(update_growth=growth), starts=starts,
                         tolerance=tolerance)
    base = start if start is not None else _theta(fit_model(model, train))
    fits = [fit_model(model, train, cluster=network(update_growth=g), starts=[base],
                      tolerance=tolerance) for g in growth]
    return min(fits, key=lambda f: f.train_error)


def _theta(fit) -> tuple:
    return (fit.c, fit.tau, fit.u)


def _dl2_loo(model, train, growth, start) -> list[float]:
    """LOO log residuals ``log(measured / predicted)`` of a DL2 fit on ``train``."""
    out = []
    for i, held in enumerate(train):
        rest = train[:i] + train[i + 1:]
        fit = _dl2_fit(model, rest, growth, start, tolerance=1e-6)
        out.append(math.log(held.speed / fit.predict(held.n_ps, held.n_workers,
                                                     held.batch_size)))
    return out


def _dl2_ceiling(train, test, capacity) -> list | None:
    """The CPU ceiling fitted on ``train`` at each ``test`` record, or None when it cannot
    be fitted (fewer than 3 runs or one worker count)."""
    try:
        ceiling = utilization_ceiling(train, capacity=capacity)
    except SpecError:
        return None
    return [ceiling.speed(r.n_ps, r.n_workers, r.batch_size) for r in test]


def _capped(pred, ceiling) -> list:
    """``pred`` held at or below ``ceiling`` (unchanged when there is none)."""
    return list(pred) if ceiling is None else list(np.minimum(pred, ceiling))


#: Extra DL2 calibration runs beside the 2 x 2 (``dl2_cells(extra_runs=)``): the most
#: servers at the fewest workers, the most workers at the fewest servers.
DL2_EXTRA_RUNS = ("most-servers", "most-workers")
#: Largest ``dl2_cells(train_size=)``: every DNN keeps runs to test on.
DL2_MAX_TRAIN_SIZE = 4


def _split_dl2(recs, train_size=2, extra_runs: Sequence[str] = ()):
    ps = sorted({r.n_ps for r in recs})[:train_size]
    ws = sorted({r.n_workers for r in recs})[:train_size]
    cells = {(p, w) for p in ps for w in ws}
    for extra in extra_runs:
        if extra not in DL2_EXTRA_RUNS:
            raise SpecError("extra_runs", f"expected names from {', '.join(DL2_EXTRA_RUNS)}, "
                                          f"got {extra!r}")
        if extra == "most-servers":
            cells.add((max(r.n_ps for r in recs if r.n_workers == ws[0]), ws[0]))
        else:
            cells.add((ps[0], max(r.n_workers for r in recs if r.n_ps == ps[0])))
    train = [r for r in recs if (r.n_ps, r.n_workers) in cells]
    test = [r for r in recs if (r.n_ps, r.n_workers) not in cells]
    return train, test


def dl2_cells(records=None, *, dnns: Sequence[str] | None = None,
              extra_runs: Sequence[str] = (), train_size: int = 2,
              progress=None) -> list[Cell]:
    """The DL2 part of the matrix (see the module docstring).

    Parameters
    ----------
    records : sequence of DL2Record, optional
        Default: the built-in copy.
    dnns : sequence of str, optional
        DNNs to include (default all).
    extra_runs : sequence of str
        Calibration runs beside the 2 servers x 2 workers (:data:`DL2_EXTRA_RUNS`).
    train_size : int
        Calibrate on the ``train_size`` smallest server counts x as many
        smallest worker counts (1 to :data:`DL2_MAX_TRAIN_SIZE`; default 2), as
        :func:`perfmodel.fit.dl2.validate_dl2` does.
    progress : callable, optional
        Called as ``progress(done, total)`` after each DNN.

    Returns
    -------
    list of Cell
        Per DNN: each model at ``default`` and ``calibrated``, ``optimus``
        (``default``), and ``selected``.

    Raises
    ------
    SpecError
        Unknown DNN names.
    """
    if isinstance(train_size, bool) or not isinstance(train_size, int) \
            or not 1 <= train_size <= DL2_MAX_TRAIN_SIZE:
        raise SpecError("train_size", f"must be an integer from 1 to {DL2_MAX_TRAIN_SIZE}, "
                                      f"got {train_size!r}")
    records = load_builtin() if records is None else list(records)
    by_dnn: dict[str, list] = {}
    for r in records:
        if not r.failed:
            by_dnn.setdefault(r.model, []).append(r)
    # a container's CPU limit is the testbed's: the largest reading of any DNN's runs
    capacity = largest_cpu_reading(r for recs in by_dnn.values()
                                   for r in _split_dl2(recs, train_size, extra_runs)[0])
    if dnns is not None:
        by_dnn = {d: by_dnn[d] for d in dnn_names(dnns, by_dnn)}
    cells = []
    for i, (dnn, recs) in enumerate(by_dnn.items()):
        if progress is not None:
            progress(i, len(by_dnn))
        train, test = _split_dl2(recs, train_size, extra_runs)
        meas = [r.speed for r in test]
        nt, ns = len(train), len(test)
        ceiling = _dl2_ceiling(train, test, capacity)
        if ceiling is not None:
            cells.append(Cell("dl2", dnn, "sync", "cpu-ceiling", "calibrated", nt, ns,
                              *_errors(ceiling, meas),
                              detail=f"utilization law, capacity {capacity:g} cores"))
        scores, variants = [], []
        for name, model in dl2_models().items():
            try:
                base = _dl2_fit(model, train, 0.0)
                cal = _dl2_fit(model, train, DL2_GROWTH, _theta(base))
            except PerfModelError as err:
                scores.append(Score(name, "closed form", True, "", float("nan"), str(err), 3))
                continue
            for stage, fit, growth, k in (("default", base, 0.0, 3),
                                          ("calibrated", cal, DL2_GROWTH, 4)):
                pred = [fit.predict(r.n_ps, r.n_workers, r.batch_size) for r in test]
                mean, worst = _errors(_capped(pred, ceiling) if stage == "calibrated" else pred,
                                      meas)
                g = fit.cluster.update_growth
                cells.append(Cell("dl2", dnn, "sync", name, stage, nt, ns, mean, worst,
                                  detail=f"update_growth={g:g}"))
                loo = _dl2_loo(model, train, growth, _theta(base))
                err = float(np.mean(np.abs(np.exp(-np.asarray(loo)) - 1.0)))
                label = f"{name} ({stage})"
                scores.append(Score(label, "closed form", True,
                                    "models sync SGD with parameter servers", err, "", k))
                variants.append((label, pred, loo))
        opt = OptimusCandidate().fit(train)
        pred = [r.batch_size * float(opt.speed(r.n_workers, r.n_ps)) for r in test]
        cells.append(Cell("dl2", dnn, "sync", "optimus", "default", nt, ns, *_errors(pred, meas),
                          detail="Optimus's formula fitted on the same points"))
        if ceiling is not None:
            cells.append(Cell("dl2", dnn, "sync", "optimus", "calibrated", nt, ns,
                              *_errors(_capped(pred, ceiling), meas),
                              detail="capped at the CPU ceiling"))
        fitted = [s for s in scores if not s.error]
        pick, why = choose(fitted)
        label, pred, loo = next(v for v in variants if v[0] == fitted[pick].name)
        if ceiling is not None:
            pred = _capped(pred, ceiling)
            why += "; capped at the CPU ceiling of the same runs (utilization law)"
        # the same widening as Calibrated, by workers
        k_cal = max(r.n_workers for r in train)
        # (the compute CV of these real runs is not known: taken as steady, the default)
        h = [extrapolated_halfwidth(interval_halfwidth(loo, LEVEL), r.n_workers, k_cal,
                                    growth=extrapolation_growth("sync")) for r in test]
        cells.append(Cell("dl2", dnn, "sync", "selected", "selected", nt, ns, *_errors(pred, meas),
                          coverage=_coverage(pred, meas, h), detail=why))
    if progress is not None:
        progress(len(by_dnn), len(by_dnn))
    return cells


# --------------------------------------------------------------------------
# ns-3
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class NS3Run:
    """One row of the ns-3 CSV (SI units: bandwidth bytes/s, throughput samples/s)."""

    regime: str
    queue: str
    loss_rate: float
    bandwidth: float
    mode: str
    overlap: bool
    update: str
    compute_cv: float
    workers: int
    n_ps: int
    batch_size: int
    throughput: float
    throughput_std: float
    steps: int
    seed: int
    wall_seconds: float
    line: int = 0

    @property
    def key(self) -> tuple:
        """The regime: every column but the worker count and the outcomes."""
        return (self.regime, self.queue, self.loss_rate, self.bandwidth, self.mode,
                self.overlap, self.update, self.compute_cv, self.n_ps, self.batch_size)


_T_UPDATE = re.compile(r"t_update\s*[=:]\s*([0-9.eE+-]+\s*[a-zA-Zµ]*)")
_BLOCKS = re.compile(r"overlap in (\d+) blocks")
_WARMUP = re.compile(r"after warmup=(\d+)")
_MIN_RTO = re.compile(r"min RTO ([0-9.eE+-]+\s*[a-zA-Zµ]+)")
_BATCHES = re.compile(r"over (\d+) equal batches")


def parse_ns3(text: str, source: str = "ns3_matrix.csv") -> tuple[dict, list[NS3Run]]:
    """Parse the ns-3 matrix CSV: ``#`` header lines, then the columns of :data:`NS3_COLUMNS`.

    Parameters
    ----------
    text : str
    source : str
        File name for error messages.

    Returns
    -------
    (dict, list of NS3Run)
        Header values (``t_update`` in s when a header line states
        ``t_update = <value with unit>``; ``blocks`` when it states "overlap
        in N blocks"; ``comments``: the header lines) and the runs in file order.

    Raises
    ------
    SpecError
        Naming the line and the column: missing or unknown columns, bad numbers.
    """
    header: dict[str, Any] = {"comments": []}
    body = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if raw.lstrip().startswith("#"):
            header["comments"].append(raw.lstrip()[1:].strip())
            blocks = _BLOCKS.search(raw)
            if blocks:
                header["blocks"] = int(blocks.group(1))
            warm = _WARMUP.search(raw)
            if warm:
                header["warmup"] = int(warm.group(1))
            batches = _BATCHES.search(raw)
            if batches:
                header["batches"] = int(batches.group(1))
            rto = _MIN_RTO.search(raw)
            if rto:
                try:
                    header["min_rto"] = units.parse(rto.group(1).strip(), "s")
                except (SpecError, ValueError) as err:
                    raise SpecError(f"line {number}", f"min RTO: {err}", source) from None
            if "first come first served" in raw and "update CPU" in raw:
                header["server_cpu"] = "fcfs"
            match = _T_UPDATE.search(raw)
            if match and "t_update" not in header:
                try:
                    header["t_update"] = units.parse(match.group(1).strip(), "s")
                except (SpecError, ValueError) as err:
                    raise SpecError(f"line {number}", f"t_update: {err}", source) from None
        elif raw.strip():
            body.append((number, raw))
    if not body:
        raise SpecError("header", "no column header and no rows", source)
    reader = csv.reader([raw for _, raw in body])
    columns = [c.strip().lower() for c in next(reader)]
    missing = [c for c in NS3_COLUMNS if c not in columns]
    if missing:
        raise SpecError(f"line {body[0][0]}", f"missing column(s) {', '.join(missing)}", source)
    runs = []
    for (number, _), row in zip(body[1:], reader):
        values = dict(zip(columns, (v.strip() for v in row)))
        runs.append(_ns3_run(values, number, source))
    return header, runs


def _ns3_run(v: Mapping[str, str], line: int, source: str) -> NS3Run:
    def number(name, kind=float):
        try:
            x = kind(float(v[name])) if kind is int else float(v[name])
        except (KeyError, ValueError):
            raise SpecError(f"line {line}, column {name}",
                            f"expected a number, got {v.get(name)!r}", source) from None
        if not math.isfinite(x) or x < 0:
            raise SpecError(f"line {line}, column {name}", f"expected a number >= 0, got {x!r}",
                            source)
        return x

    mode = v.get("mode", "").lower()
    if mode not in ("sync", "async"):
        raise SpecError(f"line {line}, column mode", f"expected sync or async, got {mode!r}",
                        source)
    overlap = v.get("overlap", "").lower()
    if overlap not in ("0", "1", "true", "false", "yes", "no"):
        raise SpecError(f"line {line}, column overlap", f"expected 0/1 or true/false, got "
                                                        f"{overlap!r}", source)
    run = NS3Run(v["regime"], v["queue"].lower(), number("loss_rate"), number("bandwidth"), mode,
                 overlap in ("1", "true", "yes"), v["update"].lower(), number("compute_cv"),
                 number("workers", int), number("n_ps", int), number("batch_size", int),
                 number("throughput"), number("throughput_std"), number("steps", int),
                 number("seed", int), number("wall_seconds"), line)
    if run.workers < 1 or run.n_ps < 1 or run.bandwidth <= 0 or run.throughput <= 0:
        raise SpecError(f"line {line}", "workers, n_ps, bandwidth and throughput must be > 0",
                        source)
    return run


def load_ns3(path=None) -> tuple[dict, list[NS3Run]]:
    """Read and parse the ns-3 CSV (default: the committed :data:`NS3_PATH`)."""
    path = NS3_PATH if path is None else Path(path)
    return parse_ns3(read_text(path), source=path.name)


def _ns3_models(mode: str, overlap: bool, blocks: int = 4, horizon: tuple = (40, 4),
                server_cpu: str = "own", lossy: bool = False) -> dict:
    """Every model that predicts a single-PS job, by name (the default stage's objects).

    ``horizon`` is the runs' (steps per worker including warm-up, warm-up):
    the simulator replays runs of that length, :data:`SIM_REPLICATIONS` times;
    ``server_cpu`` is the runs' server (``"fcfs"`` when the header says the PS
    applies whole gradients first come first served); ``lossy``: the
    candidates fit the timeout probability first (a lossy regime).
    """
    cands = matrix_candidates(mode, overlap=overlap, blocks=blocks, sim_steps=horizon[0],
                              sim_warmup=horizon[1], replications=SIM_REPLICATIONS,
                              server_cpu=server_cpu, lossy=lossy)
    return {c.name: c for c in cands}


def _step_time_std(rs, batches: int) -> float:
    """One worker's step-time spread from the runs' batch-means spread (seeds pooled).

    A batch of the measured window holds ``m = steps / batches`` steps per
    worker; its throughput's relative spread ``s / X`` is the batch
    duration's, so a step's variance is ``m (s / X)**2 T**2`` (sync, T the
    step), and ``m K (s / X)**2 T**2`` for async, whose K workers' cycles
    average within a batch (exact for one worker).
    """
    var = []
    for r in rs:
        step = r.workers * r.batch_size / r.throughput
        per_batch = r.steps / batches * (r.workers if r.mode == "async" else 1)
        var.append(per_batch * (r.throughput_std / r.throughput * step) ** 2)
    return float(np.sqrt(np.mean(var)))


def _mean_by_workers(runs, batches: int | None = None) -> list:
    """One measurement per worker count (seeds averaged), sorted by workers.

    With ``batches`` (the header's batch count of ``throughput_std``) each
    measurement carries ``step_time_std`` (:func:`_step_time_std`).
    """
    by_w: dict[int, list] = {}
    for r in runs:
        by_w.setdefault(r.workers, []).append(r)
    out = []
    for w in sorted(by_w):
        rs = by_w[w]
        spread = _step_time_std(rs, batches) if batches else None
        out.append(Measurement(w, rs[0].n_ps, rs[0].bandwidth,
                               float(np.mean([r.throughput for r in rs])), rs[0].batch_size,
                               rs[0].mode, step_time_std=spread))
    return out


def ns3_cells(path=None, *, runs=None, header=None, profile=None,
              train_workers: Sequence[int] = NS3_TRAIN_WORKERS, progress=None) -> list[Cell]:
    """The ns-3 part of the matrix (see the module docstring).

    Parameters
    ----------
    path : str or path, optional
        The CSV (default :data:`NS3_PATH`); ignored when ``runs`` is given.
    runs, header : optional
        Already parsed (:func:`parse_ns3`).
    profile : Profile, optional
        The job (default: zoo ``resnet50-pipedream`` with the header's
        ``t_update``).
    train_workers : sequence of int
        Worker counts of the calibration points.
    progress : callable, optional
        Called as ``progress(done, total)`` after each regime.

    Returns
    -------
    list of Cell
        Per regime: each model at ``default`` and ``calibrated``, and ``selected``.

    Raises
    ------
    SpecError
        A bad file, or no ``t_update`` in its header when ``profile`` is not given.
    """
    if runs is None:
        header, runs = load_ns3(path)
    header = header or {}
    if profile is None:
        if "t_update" not in header:
            raise SpecError("header", "the ns-3 CSV header states no t_update")
        profile = zoo.profile("resnet50-pipedream").replace(t_update=header["t_update"])
    groups: dict[tuple, list] = {}
    for r in runs:
        groups.setdefault(r.key, []).append(r)
    cells = []
    for i, rs in enumerate(groups.values()):
        if progress is not None:
            progress(i, len(groups))
        first = rs[0]
        ms = _mean_by_workers(rs, header.get("batches"))
        train = [m for m in ms if m.workers in train_workers]
        test = [m for m in ms if m.workers not in train_workers]
        if len(train) < 2 or not test:
            continue
        if first.batch_size != profile.batch_size:
            prof = profile.replace(batch_size=first.batch_size,
                                   t_forward=profile.t_forward * first.batch_size /
                                   profile.batch_size,
                                   t_backward=profile.t_backward * first.batch_size /
                                   profile.batch_size)
        else:
            prof = profile
        cluster = Cluster(machines=max(m.workers for m in ms) + first.n_ps,
                          nic_bandwidth=first.bandwidth, compute_cv=first.compute_cv,
                          retransmit_timeout=header.get("min_rto", 0.2))
        meas = [m.throughput for m in test]
        group = _group_label(first)
        sharing = "fair" if first.queue in ("fair", "fq", "fair-queue", "drr") else "fifo"
        scores, fitted = [], []
        warm = header.get("warmup", 2)
        horizon = (int(max(r.steps for r in rs)) + warm, warm)
        # one FCFS update CPU matters where the server applies each gradient (async, or
        # sync per gradient); a sync step's single aggregated update is the same either way
        per_gradient = first.mode == "async" or first.update == "per_gradient"
        cpu = header.get("server_cpu", "own") if per_gradient else "own"
        lossy = first.loss_rate > 0
        # on a lossy link the calibration runs' step-time spread holds q near its estimate,
        # as select_model does
        spread = timeouts_from_step_times(prof, cluster, train, mode=first.mode) if lossy else None
        models = _ns3_models(first.mode, first.overlap, header.get("blocks", 4), horizon, cpu,
                             lossy=lossy)
        # select_model's default on these runs: the models of LEVELED fitted by their level
        # (its calibration="auto"); the tunable-fitted ones are still reported
        by_level = (levels_on(first.mode, lossy)
                    and calibrated_by_level("auto", [m.workers for m in train]))
        leveled = LEVELED[first.mode] if by_level else ()
        models.update({f"{n} (level)": level_candidate(models[n]) for n in leveled
                       if n in models})
        for name, cand in models.items():
            if spread is not None:
                cand = with_timeout_band(cand, spread[0])
            valid, reason = validity(cand, first.mode, first.compute_cv, sharing, LOCKSTEP_CV)
            try:
                pred = predict_measurements(cand.model, prof, cluster, test)
                cells.append(Cell("ns3", group, first.mode, name, "default", len(train),
                                  len(test), *_errors(pred, meas)))
                cal = calibrate_candidate(cand, prof, cluster, train, level=LEVEL)
                pred = predict_measurements(cal.model, prof,
                                            cluster.replace(**dict(cal.overrides)), test)
            except (PerfModelError, Infeasible):
                continue
            fitted_level = ({"slowdown": cal.model.slowdown} if isinstance(cal.model, Leveled)
                            else {})
            detail = ", ".join(f"{k}={v:g}" for k, v in {**cal.overrides, **fitted_level}.items())
            cells.append(Cell("ns3", group, first.mode, name, "calibrated", len(train),
                              len(test), *_errors(pred, meas), detail=detail))
            if name in BASELINES or name in leveled:   # reported, never recommended
                continue
            scores.append(Score(name, cand.family, valid, reason, cal.loo_error,
                                n_tunables=len(cand.grid), exact=sharing in cand.exact_links,
                                prior=not cand.reading_of))
            fitted.append((cal, pred))
        if not scores:
            continue
        # as select_model: async runs too small to show how the workers pass the link
        # cannot favour a reading of the MVA (the other candidates agree with the prior here);
        # its spaced rule never acts on this data (update spacing 0.025 and 0.25 < 0.5,
        # tests/test_spaced.py)
        pick, why = choose(scores, evidence=evidence_of(first.mode, train))
        cal, pred = fitted[pick]
        if spread is not None and not isinstance(cal.model, Leveled):   # as select_model
            why += timeout_why(*spread)
        # as select_model: the interval grows with the regime's compute CV
        cal = dataclasses.replace(cal, growth=extrapolation_growth(first.mode,
                                                                   first.compute_cv))
        widths = [cal.halfwidth_at(m.workers) for m in test]
        cells.append(Cell("ns3", group, first.mode, "selected", "selected", len(train),
                          len(test), *_errors(pred, meas),
                          coverage=_coverage(pred, meas, widths), detail=why))
    if progress is not None:
        progress(len(groups), len(groups))
    return cells


def _group_label(r: NS3Run) -> str:
    """The regime's own label, or the settings when it has none."""
    if r.regime:
        return r.regime
    gbps = r.bandwidth * 8 / 1e9
    return "/".join([r.queue, f"loss{r.loss_rate:g}", f"{gbps:g}G", r.mode,
                     "overlap" if r.overlap else "seq", r.update, f"cv{r.compute_cv:g}"])


# --------------------------------------------------------------------------
# The matrix
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class Matrix:
    """All cells and their summary.

    Attributes
    ----------
    cells : tuple of Cell
    notes : tuple of str
        What was left out and why (e.g. no ns-3 file).
    """

    cells: tuple
    notes: tuple = ()

    def summary(self) -> list[dict]:
        """Per (dataset, mode, model, stage): mean over groups of the mean error, largest
        max error, mean coverage, groups."""
        keys = list(dict.fromkeys((c.dataset, c.mode, c.model, c.stage) for c in self.cells))
        out = []
        for ds, mode, model, stage in keys:
            cs = [c for c in self.cells if (c.dataset, c.mode, c.model, c.stage) ==
                  (ds, mode, model, stage) and math.isfinite(c.mean_error)]
            if not cs:
                continue
            cov = [c.coverage for c in cs if c.coverage is not None]
            out.append({"dataset": ds, "mode": mode, "model": model, "stage": stage,
                        "groups": len(cs),
                        "mean_error": float(np.mean([c.mean_error for c in cs])),
                        "max_error": float(max(c.max_error for c in cs)),
                        "coverage": float(np.mean(cov)) if cov else None})
        return out

    def to_dict(self) -> dict:
        """JSON-ready: cells, summary, notes."""
        def plain(d):
            return {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                    for k, v in d.items()}
        return {"cells": [plain(dataclasses.asdict(c)) for c in self.cells],
                "summary": [plain(r) for r in self.summary()], "notes": list(self.notes)}

    def _table(self, markdown: bool) -> list[str]:
        rows = self.summary()
        head = ["dataset", "mode", "model", "default", "calibrated", "90% coverage"]
        by = {(r["dataset"], r["mode"], r["model"], r["stage"]): r for r in rows}
        lines = []
        seen = list(dict.fromkeys((r["dataset"], r["mode"], r["model"]) for r in rows))
        body = []
        for ds, mode, model in seen:
            def cell(stage, ds=ds, mode=mode, model=model):
                r = by.get((ds, mode, model, stage))
                return "-" if r is None else \
                    f"{100 * r['mean_error']:.1f}% ({100 * r['max_error']:.0f}%)"
            if model == "selected":
                r = by[(ds, mode, model, "selected")]
                body.append([ds, mode, "**selected**" if markdown else "selected", "",
                             cell("selected"),
                             f"{100 * r['coverage']:.0f}%" if r["coverage"] is not None else ""])
            else:
                body.append([ds, mode, model, cell("default"), cell("calibrated"), ""])
        if markdown:
            lines.append("| " + " | ".join(head) + " |")
            lines.append("|" + "---|" * len(head))
            lines += ["| " + " | ".join(b) + " |" for b in body]
        else:
            widths = [max(len(x) for x in col) for col in zip(head, *body)]
            fmt = "  ".join(f"{{:<{w}}}" for w in widths)
            lines.append(fmt.format(*head))
            lines.append("-" * (sum(widths) + 2 * (len(widths) - 1)))
            lines += [fmt.format(*b) for b in body]
        return lines

    def text(self, *, markdown: bool = False) -> str:
        """The summary table: mean over groups of the mean test error (largest max error)."""
        lines = ["Relative throughput error on the test points: mean over groups of the "
                 "mean (largest max); calibrated on <= 2 configurations per network "
                 "(DL2: 2 servers x 2 workers)", ""]
        lines += self._table(markdown)
        if self.notes:
            lines.append("")
            lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)

    def groups_markdown(self, dataset: str = "ns3") -> str:
        """Per group of ``dataset``: the selected model, its errors, coverage and whether it
        meets the accuracy target (5% mean and 10% max on ns-3, 10% mean on DL2)."""
        lines = ["| group | selected | mean | max | 90% coverage | target met |",
                 "|---|---|---|---|---|---|"]
        for c in self.cells:
            if c.stage != "selected" or c.dataset != dataset:
                continue
            chosen = c.detail.split(" (")[0] if dataset == "ns3" else \
                c.detail.split(" (closed form)")[0]
            met = (c.mean_error <= 0.05 and c.max_error <= 0.10) if dataset == "ns3" \
                else c.mean_error <= 0.10
            cov = "" if c.coverage is None else f"{100 * c.coverage:.0f}%"
            lines.append(f"| {c.group} | {chosen} | {100 * c.mean_error:.1f}% | "
                         f"{100 * c.max_error:.0f}% | {cov} | {'yes' if met else 'no'} |")
        return "\n".join(lines)

    def classes_markdown(self) -> str:
        """The selected model on ns-3 by regime class (mode x loss-free / lossy).

        A regime is lossy when its label says so (the ns-3 backend's labels
        carry ``lossy`` / ``lossfree``).  Columns: mean over regimes of the mean
        error, the largest max, regimes meeting the accuracy target (5% mean
        and 10% max) and the mean interval coverage.
        """
        lines = ["| regimes | mean error | max error | regimes meeting 5% / 10% | "
                 "interval coverage |", "|---|---|---|---|---|"]
        sel = [c for c in self.cells if c.stage == "selected" and c.dataset == "ns3"]
        for mode in ("sync", "async"):
            for lossy in (False, True):
                group = [c for c in sel if c.mode == mode and ("lossy" in c.group) == lossy]
                if not group:
                    continue
                met = sum(c.mean_error <= 0.05 and c.max_error <= 0.10 for c in group)
                cov = np.mean([c.coverage for c in group if c.coverage is not None])
                lines.append(f"| {mode}, {'lossy' if lossy else 'loss-free'} | "
                             f"{100 * np.mean([c.mean_error for c in group]):.1f}% | "
                             f"{100 * max(c.max_error for c in group):.0f}% | "
                             f"{met} of {len(group)} | {100 * cov:.0f}% |")
        return "\n".join(lines)

    def groups_text(self) -> str:
        """Per group: the selected model's errors, coverage and why."""
        lines = []
        for c in self.cells:
            if c.stage == "selected":
                cov = "" if c.coverage is None else f", coverage {100 * c.coverage:.0f}%"
                lines.append(f"{c.dataset} {c.group}: {100 * c.mean_error:.1f}% "
                             f"(max {100 * c.max_error:.0f}%){cov}; {c.detail}")
        return "\n".join(lines)


def validation_matrix(*, dl2: bool = True, ns3: bool = True, ns3_path=None,
                      dnns: Sequence[str] | None = None,
                      ns3_train_workers: Sequence[int] = NS3_TRAIN_WORKERS,
                      dl2_extra_runs: Sequence[str] = (), dl2_train_size: int = 2,
                      progress=None,
                      ns3_data: tuple | None = None) -> Matrix:
    """The whole matrix (``perfmodel validate matrix``).

    Parameters
    ----------
    dl2, ns3 : bool
        Which datasets.
    ns3_path : str or path, optional
        Default :data:`NS3_PATH`; a missing default file is a note, not an error.
    dnns : sequence of str, optional
        DL2 DNNs (default all).
    ns3_train_workers : sequence of int
        Worker counts of the ns-3 calibration points (:func:`ns3_cells`).
    dl2_extra_runs : sequence of str
        DL2 calibration runs beside the 2 x 2 (:func:`dl2_cells`).
    dl2_train_size : int
        DL2 calibration runs, servers x workers (:func:`dl2_cells`).
    progress : callable, optional
        Called as ``progress(done, total)`` over DL2 DNNs and ns-3 regimes
        (for a progress bar).
    ns3_data : (dict, list), optional
        The ns-3 runs already read (:func:`load_ns3`); ``ns3_path`` is then unused.

    Returns
    -------
    Matrix
    """
    cells, notes = [], []
    header, runs = ns3_data if ns3 and ns3_data is not None else (None, None)
    if ns3 and runs is None and (ns3_path is not None or NS3_PATH.exists()):
        header, runs = load_ns3(ns3_path)
    elif ns3 and runs is None:
        notes.append(f"no ns-3 runs ({NS3_PATH.name} missing): ns-3 rows left out")
    n_ns3 = len({r.key for r in runs}) if runs is not None else 0
    n_dl2 = 0

    def dl2_tick(done, total):   # the regimes still to come count in the total
        nonlocal n_dl2
        n_dl2 = total
        progress(done, total + n_ns3)

    def ns3_tick(done, total):
        progress(n_dl2 + done, n_dl2 + total)

    if dl2:
        cells += dl2_cells(dnns=dnns, extra_runs=dl2_extra_runs, train_size=dl2_train_size,
                           progress=dl2_tick if progress is not None else None)
    if runs is not None:
        cells += ns3_cells(runs=runs, header=header, train_workers=ns3_train_workers,
                           progress=ns3_tick if progress is not None else None)
    return Matrix(tuple(cells), tuple(notes))
