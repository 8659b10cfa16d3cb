"""DL2's measured parameter-server training speeds: parser and validation report.

The data (``perfmodel/zoo/dl2/dl2_config_speed.txt``, see its PROVENANCE.md)
are real MXNet synchronous parameter-server speeds of 8 DNNs over 1-23 servers
x 1-23 workers, with a fixed global batch split over the workers.

* :func:`parse_dl2` -- text to :class:`DL2Record` (no file access; the built-in
  copy is read through :func:`perfmodel.io.read_text` by :func:`load_builtin`);
* :func:`validate_dl2` -- for each DNN, fit each model's unknowns on the
  smallest configurations, predict every other configuration, report mean and
  max relative error, for our models and for Optimus fitted on the same
  subset.  Returns a :class:`DL2Report` (data, ``text()``, ``to_dict()``).

How a perfmodel model is fitted
-------------------------------
Three unknowns per DNN, all >= 0: ``c``, compute seconds per sample; ``tau``,
seconds to move the whole model once over one link (``M / B``); ``u``, the
update time on one server.  A configuration (p servers, w workers, global
batch G) becomes ``Profile(model_bytes=tau * B_ref, t_forward=phi c b,
t_backward=(1 - phi) c b, t_update=u, batch_size=1)`` with ``b = ceil(G / w)``
(the most loaded worker sets the synchronous step), ``phi = 1/3`` forward
share (only the overlap models read it), ``Cluster(nic_bandwidth=B_ref)`` and
``Config(n_replicas=w, n_ps=p)``.  The predicted job speed is
``G * est.throughput / w`` (samples/s: the global batch times the steps per
second of one worker), which for a synchronous model is ``G / step_time``.
The unknowns minimize the relative speed errors on the training set
(``scipy.optimize.least_squares``, bounded, several deterministic starts).

Training set
------------
The intended training set is the measurements with at most 2 servers and 2
workers.  Six DNNs were measured only at odd counts (1, 3, 5, ...), where that
is one configuration for three unknowns, so the training set is the two
smallest server counts times the two smallest worker counts of each DNN
(``train_size=2``): ``{1, 2} x {1, 2}`` for resnet-50 and vgg-16, ``{1, 3} x
{1, 3}`` for the others.  Rows with a zero speed (failed runs) are skipped and
listed.

References
----------
Data: public repository pengyanghua/DL2, ``config_speed.txt`` (commit
2e54920d2100bff2e14e246c423419bbd326c55b).

Models: Li, Paolieri, Golubchik, Lin, Yan. Predicting Throughput of
Distributed SGD. IEEE TPDS, 2022.  Eqs. 1-10.  Optimus (EuroSys 2018).
"""

from __future__ import annotations

import ast
import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import registry
from ..baselines import fit_optimus
from ..coarse import SyncCoarse
from ..errors import PerfModelError, SpecError
from ..io import read_text
from ..operational import fit_utilization_ceiling
from ..specs import Cluster, Config, Profile

__all__ = ["BUILTIN_PATH", "DL2Record", "parse_dl2", "load_builtin", "report_models",
           "largest_cpu_reading", "utilization_ceiling", "DL2Fit", "network", "fit_model", "OptimusCandidate",
           "DL2Report", "validate_dl2", "dnn_names"]


def dnn_names(asked, known) -> list[str]:
    """The DL2 names of the DNNs ``asked`` for, written either way (``resnet50`` is
    DL2's ``resnet-50``: case, ``-`` and ``_`` do not count); SpecError naming an unknown one."""
    def plain(name):
        return str(name).lower().replace("-", "").replace("_", "")
    by_plain = {plain(k): k for k in known}
    out = []
    for name in asked:
        if plain(name) not in by_plain:
            raise SpecError("dnns", f"unknown DNN {str(name)[:40]!r}; known: {', '.join(known)}")
        out.append(by_plain[plain(name)])
    return out

#: The built-in, unchanged copy of DL2's ``config_speed.txt``.
BUILTIN_PATH = Path(__file__).parent.parent / "zoo" / "dl2" / "dl2_config_speed.txt"

#: Reference bandwidth turning the fitted transfer time into model bytes (bytes/s).
_B_REF = 1e9


@dataclass(frozen=True)
class DL2Record:
    """One line of the DL2 file: a configuration and its measured speeds.

    Attributes
    ----------
    model : str
        DNN name as in the file (``"resnet-50"``, ``"vgg-16"``, ...).
    sync_mode : str
        MXNet kvstore mode (``"dist_sync"`` throughout).
    batch_size : int, samples
        Global batch of one synchronous step, split over the workers.
    n_ps, n_workers : int
        Parameter servers and workers.
    speeds : tuple of float
        Per-worker training speed (local samples/s, undocumented unit).
    ps_cpu, worker_cpu : tuple of float
        CPU usage of each server and each worker.
    line : int
        Line number in the file (1-based).
    """

    model: str
    sync_mode: str
    batch_size: int
    n_ps: int
    n_workers: int
    speeds: tuple
    ps_cpu: tuple
    worker_cpu: tuple
    line: int = 0

    @property
    def speed(self) -> float:
        """Job speed: the sum of the per-worker speeds (as DL2's ``speed.py``)."""
        return float(sum(self.speeds))

    @property
    def failed(self) -> bool:
        """True when any worker's speed is zero (a failed run)."""
        return any(s == 0 for s in self.speeds)

    @property
    def local_batch(self) -> int:
        """Samples of the most loaded worker: ``ceil(batch_size / n_workers)``."""
        return -(-self.batch_size // self.n_workers)


def _fail(line: int, message: str, source: str | None):
    raise SpecError(f"line {line}", message, source)


def _numbers(value, what: str, length: int, line: int, source) -> tuple:
    if not isinstance(value, (list, tuple)) or len(value) != length:
        _fail(line, f"{what}: expected a list of {length} numbers, got {value!r}", source)
    for v in value:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) \
                or v < 0:
            _fail(line, f"{what}: expected numbers >= 0, got {v!r}", source)
    return tuple(float(v) for v in value)


def parse_dl2(text: str, source: str | None = "dl2_config_speed.txt") -> list[DL2Record]:
    """Parse the DL2 ``config_speed.txt`` format (one Python tuple per line).

    Lines are read with :func:`ast.literal_eval` (literals only, never code).
    Blank lines are skipped.

    Parameters
    ----------
    text : str
        The file's text.
    source : str or None
        File name for error messages.

    Returns
    -------
    list of DL2Record
        In file order, zero-speed rows included (see :attr:`DL2Record.failed`).

    Raises
    ------
    SpecError
        Naming the line: not a literal tuple of 8 fields, bad counts, list
        lengths that do not match the server and worker counts.

    Examples
    --------
    >>> recs = parse_dl2("('resnet-50', 'dist_sync', 32, 1, 2, [7.7, 7.7], [1.9], [0.4, 0.4])")
    >>> recs[0].speed, recs[0].local_batch
    (15.4, 16)
    """
    out = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            row = ast.literal_eval(raw.strip())
        except (ValueError, SyntaxError):
            _fail(number, f"not a Python literal tuple: {raw.strip()[:60]!r}", source)
        if not isinstance(row, tuple) or len(row) != 8:
            _fail(number, "expected a tuple of 8 fields (model, sync_mode, tot_batch_size, "
                          "num_ps, num_workers, speeds, ps_cpu, worker_cpu)", source)
        model, mode, batch, n_ps, n_workers, speeds, ps_cpu, worker_cpu = row
        if not isinstance(model, str) or not isinstance(mode, str):
            _fail(number, f"model and sync_mode must be strings, got {model!r}, {mode!r}",
                  source)
        for what, v in (("tot_batch_size", batch), ("num_ps", n_ps),
                        ("num_workers", n_workers)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                _fail(number, f"{what}: expected an integer >= 1, got {v!r}", source)
        out.append(DL2Record(model, mode, batch, n_ps, n_workers,
                             _numbers(speeds, "speeds", n_workers, number, source),
                             _numbers(ps_cpu, "ps_cpu", n_ps, number, source),
                             _numbers(worker_cpu, "worker_cpu", n_workers, number, source),
                             number))
    return out


def load_builtin() -> list[DL2Record]:
    """The records of the built-in copy of DL2's file (804 rows)."""
    return parse_dl2(read_text(BUILTIN_PATH), source=BUILTIN_PATH.name)


def largest_cpu_reading(records) -> float:
    """The largest CPU reading (cores) of any server or worker in ``records``.

    A saturated container reads its limit, so over the calibration runs of
    every DNN on one testbed this is the testbed's capacity, which
    :func:`utilization_ceiling` needs; a single DNN's runs may saturate
    nothing (seq2seq's stay well below it).
    """
    return float(max(max((*r.ps_cpu, *r.worker_cpu)) for r in records))


def utilization_ceiling(records, *, capacity: float | None = None):
    """The CPU ceiling on the job speed fitted to DL2 records of one DNN.

    Every DL2 row carries each server's and each worker's CPU usage; the
    busiest server's and the workers' mean, with the row's speed, give
    the service demands of a step (the utilization law), and
    :func:`perfmodel.operational.fit_utilization_ceiling` extrapolates them.

    Parameters
    ----------
    records : sequence of DL2Record
        Measured (non-failed) rows of one DNN: at least 3 with 2 worker counts.
    capacity : float, optional
        Cores of a container; default the largest reading in ``records``.
        The validation passes the largest reading over every DNN's training
        rows, since the limit is the testbed's, not the DNN's.

    Returns
    -------
    perfmodel.operational.UtilizationCeiling

    Raises
    ------
    SpecError
        Too few records or worker counts, or a failed record.
    """
    recs = list(records)
    failed = [r for r in recs if r.failed]
    if failed:
        raise SpecError("records", f"line {failed[0].line}: a failed run (zero speed) "
                        "has no utilization to read")
    return fit_utilization_ceiling([r.n_ps for r in recs], [r.n_workers for r in recs],
                                   [r.batch_size for r in recs], [r.speed for r in recs],
                                   [max(r.ps_cpu) for r in recs],
                                   [float(np.mean(r.worker_cpu)) for r in recs],
                                   capacity=capacity)


# --------------------------------------------------------------------------
# Fitting perfmodel models
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class DL2Fit:
    """A perfmodel model with its fitted unknowns, predicting DL2 job speeds.

    Attributes
    ----------
    model : object
        Any perfmodel model with ``estimate(workload, cluster, config)``.
    c : float, s/sample
        Compute time per sample.
    tau : float, s
        Time to move the whole model once over one link (``M / B``).
    u : float, s
        Update time on one server.
    forward_fraction : float
        Share of the compute in the forward pass.
    train_error : float
        RMS relative speed error on the training records.
    cluster : Cluster or None
        Network tunables the fit assumed (None: the defaults).
    """

    model: Any
    c: float
    tau: float
    u: float
    forward_fraction: float = 1.0 / 3.0
    train_error: float = float("nan")
    cluster: Cluster | None = None

    def predict(self, n_ps: int, n_workers: int, batch_size: int) -> float:
        """Predicted job speed (samples/s) of one configuration."""
        return _predict(self.model, (self.c, self.tau, self.u), n_ps, n_workers, batch_size,
                        self.forward_fraction, self.cluster or _CLUSTER)


_CLUSTER = Cluster(machines=10_000, nic_bandwidth=_B_REF, name="dl2-fit")


def network(**tunables) -> Cluster:
    """The fitting cluster (``nic_bandwidth`` = 1 GB/s reference) with network tunables set.

    ``network(update_growth=1.0)`` is the cluster :func:`fit_model` uses when
    the update is calibrated to cost per gradient.
    """
    return _CLUSTER.replace(**tunables)


#: The fitted profile's template: each prediction changes its four times and sizes
#: (``Profile.replace`` checks only those), a fit makes hundreds of thousands.
_PROFILE = Profile(model_bytes=_B_REF, t_forward=1.0, t_backward=1.0, batch_size=1)


@functools.lru_cache(maxsize=1024)
def _config(n_workers: int, n_ps: int) -> Config:
    return Config(n_replicas=n_workers, n_ps=n_ps)


def _predict(model, theta, n_ps, n_workers, batch_size, phi, cluster=_CLUSTER) -> float:
    c, tau, u = (float(v) for v in theta)
    b = -(-batch_size // n_workers)
    compute = max(c, 1e-12) * b
    times = (max(tau, 1e-12) * _B_REF, phi * compute, (1.0 - phi) * compute, max(u, 0.0))
    if type(model) is SyncCoarse:   # the same numbers as its estimate, without the specs
        step = float(sum(model.phases_of(*times, cluster, n_workers, n_ps).values()))
        if 0.0 < step < math.inf:   # else the estimate says what is wrong
            return batch_size * (n_workers * cluster.gpus_per_machine / step) / n_workers
    profile = _PROFILE.replace(model_bytes=times[0], t_forward=times[1], t_backward=times[2],
                               t_update=times[3])
    est = model.estimate(profile, cluster, _config(n_workers, n_ps))
    return batch_size * est.throughput / n_workers


def fit_model(model, records, *, forward_fraction: float = 1.0 / 3.0,
              cluster: Cluster | None = None, starts=None, tolerance: float = 1e-10) -> DL2Fit:
    """Fit ``(c, tau, u)`` of ``model`` to DL2 records (relative speed errors).

    Parameters
    ----------
    model : object
        A perfmodel model (``SyncCoarse()``, ``AsyncMVA()``, ...).
    records : sequence of DL2Record
        Training measurements (non-failed) of one DNN.
    forward_fraction : float
        Forward share phi of the compute, in [0, 1].
    cluster : Cluster, optional
        Network tunables (``update_growth``, ``sharing_weight``, ...) on the
        1 GB/s reference cluster, e.g. from :func:`network`; default: none set.
    starts : sequence of (c, tau, u), optional
        Starting points of the least-squares fit (default: five splits of the
        smallest configuration's step time); a calibration passes an earlier
        fit's unknowns to refit quickly.

    Returns
    -------
    DL2Fit

    Raises
    ------
    SpecError
        No records, a failed record, or a bad ``forward_fraction``.
    """
    from scipy.optimize import least_squares

    records = list(records)
    if not records:
        raise SpecError("records", "needs at least one training record")
    if any(r.failed for r in records):
        raise SpecError("records", "failed (zero-speed) records cannot be fitted")
    if not (0.0 <= forward_fraction <= 1.0):
        raise SpecError("forward_fraction", f"must be in [0, 1], got {forward_fraction!r}")
    meas = np.array([r.speed for r in records])

    def residual(log_theta):
        theta = np.exp(log_theta)
        pred = [_predict(model, theta, r.n_ps, r.n_workers, r.batch_size, forward_fraction,
                         cluster or _CLUSTER) for r in records]
        return np.asarray(pred) / meas - 1.0

    # Starts: the smallest configuration's step time split between compute,
    # two transfers and the update in a few proportions (deterministic).
    first = min(records, key=lambda r: (r.n_ps, r.n_workers))
    step = first.batch_size / first.speed
    if starts is None:
        starts = [(share[0] * step / first.local_batch, share[1] * step, share[2] * step)
                  for share in ((0.5, 0.2, 0.1), (0.8, 0.05, 0.1), (0.2, 0.3, 0.2),
                                (0.2, 0.1, 0.6), (0.34, 0.16, 0.34))]
    best = None
    for theta0 in starts:
        start = np.log(np.clip(np.asarray(theta0, dtype=float), 1e-12, 1e6))
        sol = least_squares(residual, start, bounds=(np.log(1e-12), np.log(1e6)),
                            method="trf", xtol=tolerance, ftol=tolerance, max_nfev=300)
        cost = float(np.sum(sol.fun ** 2))
        if best is None or cost < best[0]:
            best = (cost, sol.x)
    theta = np.exp(best[1])
    err = float(np.sqrt(best[0] / len(records)))
    return DL2Fit(model, float(theta[0]), float(theta[1]), float(theta[2]), forward_fraction,
                  err, cluster)


@dataclass(frozen=True)
class OptimusCandidate:
    """Optimus's sync speed function as a validation candidate (fitted per DNN)."""

    mode: str = "sync"

    def fit(self, records):
        recs = list(records)
        return fit_optimus([r.n_workers for r in recs], [r.n_ps for r in recs],
                           [r.speed / r.batch_size for r in recs], self.mode,
                           global_batch=recs[0].batch_size)


def report_models() -> dict:
    """Models in the report: name -> model object (fitted by :func:`fit_model`) or
    an :class:`OptimusCandidate`.

    The registry's ``"dl2"`` variants (the Sync-SGD coarse models of
    Li et al. 2022, eqs. 7-10, which apply to these synchronous data, and their
    asynchronous MVA, eqs. 1-5, for reference), then ``optimus``, the
    baseline, whose speed function this module fits itself.
    """
    models = {v.name: registry.make(e.name, **v.options) for e, v in registry.variants("dl2")}
    return dict(models, optimus=OptimusCandidate())


# --------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class DL2Report:
    """Validation of the models on DL2's measurements.

    Attributes
    ----------
    rows : tuple of dict
        One per (DNN, candidate): ``dnn``, ``candidate``, ``n_train``,
        ``n_test``, ``mean_error`` and ``max_error`` (relative, on the test
        configurations), ``train_error`` (RMS relative on the training set),
        ``params`` (the fitted unknowns).
    skipped : tuple of dict
        Zero-speed rows left out: ``dnn``, ``n_ps``, ``n_workers``, ``line``.
    train : dict of str to list
        The training configurations ``(n_ps, n_workers)`` of each DNN.
    candidates : tuple of str
        Candidate names in column order.
    failures : tuple of dict
        Candidates that could not be fitted or evaluated on a DNN, with the error.
    """

    rows: tuple
    skipped: tuple
    train: Mapping
    candidates: tuple
    failures: tuple = ()
    train_size: int = 2

    def summary(self) -> dict:
        """Per candidate: mean of the per-DNN mean errors and the largest max error."""
        out = {}
        for name in self.candidates:
            rows = [r for r in self.rows if r["candidate"] == name]
            if rows:
                out[name] = {"mean_error": float(np.mean([r["mean_error"] for r in rows])),
                             "max_error": float(max(r["max_error"] for r in rows)),
                             "dnns": len(rows)}
        return out

    def to_dict(self) -> dict:
        """JSON-ready data."""
        return {"rows": [dict(r) for r in self.rows], "skipped": [dict(s) for s in self.skipped],
                "train": {k: [list(c) for c in v] for k, v in self.train.items()},
                "candidates": list(self.candidates), "summary": self.summary(),
                "failures": [dict(f) for f in self.failures], "train_size": self.train_size}

    def text(self) -> str:
        """A plain-text table: mean (max) relative error in percent per DNN and model."""
        dnns = list(dict.fromkeys(r["dnn"] for r in self.rows))
        cell = {(r["dnn"], r["candidate"]): r for r in self.rows}
        width = max(12, *(len(c) for c in self.candidates)) + 1
        head = f"{'DNN':<24}{'train/test':>11}  " + "".join(f"{c:>{width}}"
                                                           for c in self.candidates)
        lines = ["DL2 measurements (MXNet dist_sync; pengyanghua/DL2 config_speed.txt): "
                 "relative error of the job speed on the test configurations, "
                 "mean (max) in %",
                 f"fitted on the {self.train_size} smallest server counts x "
                 f"{self.train_size} smallest worker counts of each DNN", "", head,
                 "-" * len(head)]
        for dnn in dnns:
            some = next(r for r in self.rows if r["dnn"] == dnn)
            row = f"{dnn:<24}{some['n_train']:>5}/{some['n_test']:<5}  "
            for c in self.candidates:
                r = cell.get((dnn, c))
                text = "-" if r is None else \
                    f"{100 * r['mean_error']:.1f} ({100 * r['max_error']:.0f})"
                row += f"{text:>{width}}"
            lines.append(row)
        lines.append("-" * len(head))
        summ = self.summary()
        row = f"{'mean over DNNs (max)':<24}{'':>11}  "
        for c in self.candidates:
            s = summ.get(c)
            text = "-" if s is None else \
                f"{100 * s['mean_error']:.1f} ({100 * s['max_error']:.0f})"
            row += f"{text:>{width}}"
        lines.append(row)
        if self.skipped:
            lines.append("")
            lines.append(f"skipped {len(self.skipped)} zero-speed rows (failed runs): " +
                         ", ".join(f"{s['dnn']} {s['n_ps']}ps/{s['n_workers']}w"
                                   for s in self.skipped))
        for f in self.failures:
            lines.append(f"could not evaluate {f['candidate']} on {f['dnn']}: {f['error']}")
        return "\n".join(lines)


def validate_dl2(records=None, *, candidates: Mapping | None = None, dnns=None,
                 train_size: int = 2, forward_fraction: float = 1.0 / 3.0) -> DL2Report:
    """Fit every candidate on each DNN's smallest configurations, predict the rest.

    Parameters
    ----------
    records : sequence of DL2Record, optional
        Default: the built-in copy (:func:`load_builtin`).
    candidates : mapping of str to model, optional
        Name -> perfmodel model object (fitted by :func:`fit_model`) or any
        object with ``fit(records)`` returning something with
        ``speed(workers, n_ps)`` in steps/s (as :class:`OptimusCandidate`).
        Default: :func:`report_models`.
    dnns : sequence of str, optional
        DNNs to include (default: all, in file order).
    train_size : int
        The training set is the ``train_size`` smallest server counts times
        the ``train_size`` smallest worker counts (>= 1).
    forward_fraction : float
        Forward share of the compute (overlap models only).

    Returns
    -------
    DL2Report

    Raises
    ------
    SpecError
        Unknown DNN names or a bad ``train_size``.

    References
    ----------
    Data: pengyanghua/DL2 ``config_speed.txt``.
    """
    if records is None:
        records = load_builtin()
    if isinstance(train_size, bool) or not isinstance(train_size, int) or train_size < 1:
        raise SpecError("train_size", f"expected an integer >= 1, got {train_size!r}")
    candidates = dict(report_models() if candidates is None else candidates)
    by_dnn: dict[str, list] = {}
    for r in records:
        by_dnn.setdefault(r.model, []).append(r)
    if dnns is not None:
        by_dnn = {d: by_dnn[d] for d in dnn_names(dnns, by_dnn)}
    rows, skipped, failures, train_sets = [], [], [], {}
    for dnn, recs in by_dnn.items():
        good = [r for r in recs if not r.failed]
        skipped += [{"dnn": dnn, "n_ps": r.n_ps, "n_workers": r.n_workers, "line": r.line}
                    for r in recs if r.failed]
        ps_small = sorted({r.n_ps for r in good})[:train_size]
        w_small = sorted({r.n_workers for r in good})[:train_size]
        train = [r for r in good if r.n_ps in ps_small and r.n_workers in w_small]
        test = [r for r in good if not (r.n_ps in ps_small and r.n_workers in w_small)]
        train_sets[dnn] = sorted((r.n_ps, r.n_workers) for r in train)
        meas = np.array([r.speed for r in test])
        for name, cand in candidates.items():
            try:
                if hasattr(cand, "estimate"):
                    fit = fit_model(cand, train, forward_fraction=forward_fraction)
                    pred = np.array([fit.predict(r.n_ps, r.n_workers, r.batch_size)
                                     for r in test])
                    params = {"c": fit.c, "tau": fit.tau, "u": fit.u}
                    train_err = fit.train_error
                else:
                    fit = cand.fit(train)
                    pred = np.array([r.batch_size * float(fit.speed(r.n_workers, r.n_ps))
                                     for r in test])
                    params = {"coefficients": list(getattr(fit, "coefficients", ()))}
                    train_err = getattr(fit, "train_error", float("nan"))
            except PerfModelError as err:
                failures.append({"dnn": dnn, "candidate": name, "error": str(err)})
                continue
            rel = np.abs(pred / meas - 1.0) if len(test) else np.zeros(0)
            rows.append({"dnn": dnn, "candidate": name, "n_train": len(train),
                         "n_test": len(test),
                         "mean_error": float(rel.mean()) if len(rel) else float("nan"),
                         "max_error": float(rel.max()) if len(rel) else float("nan"),
                         "train_error": float(train_err), "params": params})
    return DL2Report(rows=tuple(rows), skipped=tuple(skipped), train=train_sets,
                     candidates=tuple(candidates), failures=tuple(failures),
                     train_size=train_size)
