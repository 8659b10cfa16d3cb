"""The held-out protocol: the user's path on the packet-level corpus, train and test apart.

Each regime of the corpus (:mod:`perfmodel.placement.ns3_corpus`) is one job
on one network, run at 1 to 16 workers.  What a user does is replayed: the
runs at :data:`TRAIN_WORKERS` are the measurements given to
:func:`~perfmodel.fit.selection.select_model` (the job's mode, overlap and
compute spread known, and whether the switches may drop packets: ``lossy``
on the shallow-buffer regimes, as an operator knows a shallow-buffer fabric
from a deep or lossless one; not how the link shares, unless ``link_known``),
and the chosen, calibrated model predicts every other worker count.  Every
candidate's own calibrated errors are kept too, to design rules with.

The corpus was split by whole factor levels before any rule was designed on
it (``split``: Cubic TCP and the resnext50 DNN are ``test`` only).  Rules are
designed and tuned on ``train``; ``test`` is reported beside it and never
tuned: a rule whose test error is much worse than its train error is
overfitted.  The probe (split ``probe``) is a second held-out set whose TCP
controls and DNNs the corpus never ran, fixed and committed before it was
first evaluated; it is reported beside both halves, and so are the second
probe (split ``probe2``), made the same way with TCP controls and DNNs
neither ran, the third (split ``probe3``), with TCP controls no set
ran, FIFO hosts and up to four servers, the fourth (split ``probe4``),
the probes' fair-queued network on up to four servers, the fifth (split
``probe5``), that network on one or two servers, the sixth (split
``probe6``), the fifth's with FIFO hosts in a third of its regimes, and the
seventh (split ``probe7``), the sixth's with the server's update rate a factor
of its own, mostly async, the eighth (split ``probe8``), the seventh's
with as many sync regimes as async ones, the ninth (split ``probe9``),
the seventh's with slower updates, the tenth (split ``probe10``), the
ninth's drawn again, the eleventh (split ``probe11``), the ninth's with
every regime overlapping, the twelfth (split ``probe12``), the fifth's
network with two sync regimes to each async one, the thirteenth (split
``probe13``), the seventh's network on one to four servers, half sync,
the fourteenth (split ``probe14``), the thirteenth's with heavy-tailed compute
too, the fifteenth (split ``probe15``), the fourteenth's with every regime
sync, the sixteenth (split ``probe16``), the fourteenth's with every regime
async and slower updates, the seventeenth (split ``probe17``), the
sixteenth's at 10 and 25 Gbps with updates of 1 to 4 GB/s, the eighteenth
(split ``probe18``), the sixteenth's on 3 or 4 servers with short updates, the
nineteenth (split ``probe19``), the fifteenth's with every regime's compute
varying, the twentieth (split ``probe20``), the fourteenth's with every
regime async on 1 or 2 servers with short updates, the twenty-first (split
``probe21``), the eighteenth's with FIFO hosts and loss-based TCP only, the
twenty-second (split ``probe22``), the twenty-first's with other update rates,
the twenty-third (split ``probe23``), the fifteenth's with FIFO hosts and
loss-based TCP only, the twenty-fourth (split ``probe24``), the
fourteenth's with every regime async at 8 times the segments per transfer, the
twenty-fifth (split ``probe25``), the twentieth's at 8 times the segments,
the twenty-sixth (split ``probe26``), the fourteenth's with every regime async
on 2 to 4 servers at 8 times the segments, and the twenty-seventh (split
``probe27``), the twenty-fourth's drawn again.  The twenty-eighth (split
``probe28``, the twenty-seventh's with half the regimes on DCTCP) is measured
only as long jobs and read from its file (``--corpus``).

A regime is lossy when the packet-level runs it is judged on dropped packets
(shallow buffers overflow when many transfers meet): the papers' models assume
a loss-free link, so loss-free and lossy regimes are reported apart.
"""

from __future__ import annotations

import concurrent.futures as cf
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from .. import zoo
from ..errors import Infeasible, PerfModelError
from ..measurements import Measurement, measured_cluster, measured_profile
from ..placement.ns3_corpus import CORPUS_BATCHES, CORPUS_PATH, DESIGNS, read_rows
from ..placement.ns3_job import link_sharing_of
from ..specs import Cluster
from .grid import predict_measurements
from .selection import select_model

__all__ = ["TRAIN_WORKERS", "TARGET_MEAN", "TARGET_MAX", "SPLITS", "RegimeResult",
           "CorpusReport", "evaluate_regime", "evaluate_corpus"]

#: Worker counts of the measurements a user gives (the rest are predicted).
TRAIN_WORKERS = (1, 2)
#: The accuracy aimed at, per regime: mean and largest relative throughput error.
TARGET_MEAN, TARGET_MAX = 0.05, 0.10
#: The splits, in report order: the corpus's halves, then each probe's own (the held-out
#: sets of :data:`~perfmodel.placement.ns3_corpus.DESIGNS` with a ``split``).
SPLITS = ("train", "test", *(d.split for d in DESIGNS.values() if d.split))
#: Minimum retransmission timeout of the corpus's TCP (s).
MIN_RTO = 1.0


@dataclass(frozen=True)
class RegimeResult:
    """The user's path on one regime: the chosen model's errors, and every candidate's.

    Attributes
    ----------
    regime, split, mode : str
    lossy : bool
        A predicted run dropped packets.
    factors : dict
        The regime's factor levels (dnn, tcp, queue, buffer, bandwidth, n_ps, jitter,
        overlap).
    chosen, why : str
        The selected model and the reason.
    mean_error, max_error : float
        Relative throughput error of the chosen model on the predicted worker counts.
    coverage : float
        Share of predicted runs inside the chosen model's 90% interval.
    halfwidth : float
        Median relative half-width of those intervals (half the interval over the
        prediction).
    candidates : dict of str to (float, float)
        Each calibrated candidate's (mean, max) error on the predicted runs.
    points : tuple of dict
        Each predicted run: ``workers``, ``measured``, ``predicted``, and the
        chosen model's interval ``low``, ``high`` (samples/s).
    extra_run : int or None
        With ``suggested``: the worker count of the run the selection asked for
        and got (a calibration run then, not a predicted one).
    """

    regime: str
    split: str
    mode: str
    lossy: bool
    factors: dict
    chosen: str
    why: str
    mean_error: float
    max_error: float
    coverage: float
    halfwidth: float
    candidates: dict = field(default_factory=dict)
    points: tuple = ()
    extra_run: int | None = None

    @property
    def meets_target(self) -> bool:
        """Mean error within :data:`TARGET_MEAN` and max within :data:`TARGET_MAX`."""
        return self.mean_error <= TARGET_MEAN and self.max_error <= TARGET_MAX

    @property
    def regime_class(self) -> str:
        """``"sync, loss-free"`` and the like."""
        return f"{self.mode}, {'lossy' if self.lossy else 'loss-free'}"


def _errors(pred, meas) -> tuple[float, float]:
    rel = np.abs(np.asarray(pred, dtype=float) / np.asarray(meas, dtype=float) - 1.0)
    return float(rel.mean()), float(rel.max())


def _measurements(rows: list[dict]) -> list[Measurement]:
    """One measurement per run, with the step time's median and spread."""
    out = []
    for r in rows:
        k, batch, x = int(r["workers"]), int(r["batch_size"]), float(r["throughput"])
        step = k * batch / x      # sync: the step; async: one worker's cycle
        steps = int(r["steps"])
        per_batch = steps / CORPUS_BATCHES * (k if r["mode"] == "async" else 1)
        spread = math.sqrt(per_batch) * float(r["throughput_std"]) / x * step
        out.append(Measurement(k, int(r["n_ps"]), float(r["bandwidth"]), x, batch, r["mode"],
                               step_time_std=spread,
                               step_time_median=float(r["step_time_median"]) or None))
    return out


def evaluate_regime(rows: Sequence[dict], *, train_workers: Sequence[int] = TRAIN_WORKERS,
                    simulate: bool = True, layers: bool = False, suggested: bool = False,
                    cv_given: bool = True, link_known: bool = False,
                    **options) -> RegimeResult:
    """Replay the user's path on one regime's rows (all with the same ``regime``);
    ``options`` holds further options of :func:`~perfmodel.fit.selection.select_model`.
    With ``layers`` the user gives the job's per-layer profile (the DNN's
    :func:`~perfmodel.zoo.pipedream_trace`) instead of its coarse profile.  With
    ``suggested`` the user also measures the run the selection suggests
    (``Selection.suggested_run``, where the models the runs cannot tell apart part
    most), when the corpus has it, and selects again on all the runs.  Unless
    ``cv_given`` the user does not say how much the compute varies: the cluster
    keeps its default (steady compute), as a user who does not know would.  With
    ``link_known`` the user says how the hosts' queues and TCP share a link
    (``link_sharing``, :func:`~perfmodel.placement.ns3_job.link_sharing_of`: FIFO
    where loss-based TCP fills drop-tail queues, else fair)."""
    rows = sorted(rows, key=lambda r: int(r["workers"]))
    first = rows[0]
    profile = zoo.profile(f"{first['dnn']}-pipedream").replace(
        t_update=float(first["t_update"]), batch_size=int(first["batch_size"]))
    overlap = first["overlap"] in ("1", "True", "true")
    given = profile   # what the user gives select_model; the models are asked with profile
    if layers:
        given = zoo.pipedream_trace(first["dnn"], t_update=float(first["t_update"]),
                                    overlap=overlap)
        profile = given.coarse_profile()
    cluster = Cluster(machines=max(int(r["workers"]) for r in rows) + int(first["n_ps"]),
                      nic_bandwidth=float(first["bandwidth"]),
                      compute_cv=float(first["compute_cv"]) if cv_given else 0.0,
                      retransmit_timeout=MIN_RTO)
    ms = _measurements(rows)
    train = [m for m in ms if m.workers in train_workers]
    test = [m for m in ms if m.workers not in train_workers]
    test_rows = [r for r in rows if int(r["workers"]) not in train_workers]
    options.setdefault("lossy", first["buffer"] == "shallow")
    if link_known:
        options.setdefault("link_sharing", link_sharing_of(first["queue"], first["tcp"]))

    def select(runs):
        return select_model(given, cluster, runs, mode=first["mode"], overlap=overlap,
                            simulate=simulate, **options)

    selection = select(train)
    extra = selection.suggested_run if suggested else None
    if extra not in {m.workers for m in test}:   # none suggested, or not in the corpus
        extra = None
    if extra is not None:
        train += [m for m in test if m.workers == extra]
        test = [m for m in test if m.workers != extra]
        test_rows = [r for r in test_rows if int(r["workers"]) != extra]
        selection = select(train)
    meas = np.array([m.throughput for m in test])
    chosen = selection.chosen
    ests = [chosen.estimate(measured_profile(profile, m), measured_cluster(cluster, m),
                            m.config()) for m in test]
    pred = np.array([e.throughput for e in ests])
    low, high = (np.array([e.throughput_interval[i] for e in ests]) for i in (0, 1))
    inside = (meas >= low) & (meas <= high)
    width = np.median(0.5 * (high - low) / pred)
    points = tuple({"workers": m.workers, "measured": float(x), "predicted": float(p),
                    "low": float(lo), "high": float(hi)}
                   for m, x, p, lo, hi in zip(test, meas, pred, low, high))
    candidates = {}
    for score, cal in zip(selection.scores, selection.calibrated):
        if cal is None:
            continue
        try:
            candidates[score.name] = _errors(predict_measurements(cal, profile, cluster, test),
                                             meas)
        except (PerfModelError, Infeasible):
            continue
    factors = {k: first[k] for k in ("dnn", "tcp", "queue", "buffer", "n_ps", "jitter",
                                     "overlap")}
    factors["bandwidth_gbps"] = round(float(first["bandwidth"]) * 8 / 1e9, 3)
    return RegimeResult(first["regime"], first["split"], first["mode"],
                        any(int(r["queue_drops"]) > 0 for r in test_rows), factors,
                        chosen.name, chosen.why, *_errors(pred, meas),
                        float(np.mean(inside)), float(width), candidates, points, extra)


@dataclass(frozen=True)
class CorpusReport:
    """The protocol's results, train and test side by side.

    Attributes
    ----------
    results : tuple of RegimeResult
    notes : tuple of str
        Regimes left out and why.
    """

    results: tuple
    notes: tuple = ()

    def summary(self) -> list[dict]:
        """Per split and regime class: regimes, mean of the mean errors, largest max error,
        regimes meeting the target, mean coverage, median half-width."""
        out = []
        for cls in ("sync, loss-free", "async, loss-free", "sync, lossy", "async, lossy"):
            for split in SPLITS:
                rs = [r for r in self.results if r.split == split and r.regime_class == cls]
                if not rs:
                    continue
                out.append({"class": cls, "split": split, "regimes": len(rs),
                            "mean_error": float(np.mean([r.mean_error for r in rs])),
                            "max_error": float(max(r.max_error for r in rs)),
                            "meeting_target": sum(r.meets_target for r in rs),
                            "coverage": float(np.mean([r.coverage for r in rs])),
                            "halfwidth": float(np.median([r.halfwidth for r in rs])),
                            "extra_runs": sum(r.extra_run is not None for r in rs)})
        return out

    def candidates_summary(self) -> list[dict]:
        """Per split, mode and candidate: mean of its calibrated mean errors, largest max."""
        out = []
        for mode in ("sync", "async"):
            names = list(dict.fromkeys(n for r in self.results if r.mode == mode
                                       for n in r.candidates))
            for name in names:
                for split in SPLITS:
                    errs = [r.candidates[name] for r in self.results
                            if r.mode == mode and r.split == split and not r.lossy
                            and name in r.candidates]
                    if errs:
                        out.append({"mode": mode, "candidate": name, "split": split,
                                    "regimes": len(errs),
                                    "mean_error": float(np.mean([e[0] for e in errs])),
                                    "max_error": float(max(e[1] for e in errs))})
        return out

    def to_dict(self) -> dict:
        """JSON-ready: every regime's result, the summaries and the notes."""
        return {"results": [asdict(r) for r in self.results], "summary": self.summary(),
                "candidates": self.candidates_summary(), "notes": list(self.notes)}

    def markdown(self) -> str:
        """The summary as a markdown table, train and test side by side."""
        lines = ["| regime class | split | regimes | mean error | max error | meeting 5% / 10% "
                 "| 90% coverage | median half-width |", "|---|---|---|---|---|---|---|---|"]
        for s in self.summary():
            lines.append(f"| {s['class']} | {s['split']} | {s['regimes']} | "
                         f"{100 * s['mean_error']:.1f}% | {100 * s['max_error']:.0f}% | "
                         f"{s['meeting_target']} of {s['regimes']} | "
                         f"{100 * s['coverage']:.0f}% | {100 * s['halfwidth']:.0f}% |")
        lines += ["", "| mode | candidate (loss-free regimes) | split | regimes | mean error | "
                  "max error |", "|---|---|---|---|---|---|"]
        for c in self.candidates_summary():
            lines.append(f"| {c['mode']} | {c['candidate']} | {c['split']} | {c['regimes']} | "
                         f"{100 * c['mean_error']:.1f}% | {100 * c['max_error']:.0f}% |")
        lines += self._extra_lines("\n")
        lines += [f"\nnote: {n}" for n in self.notes]
        return "\n".join(lines)

    def _extra_lines(self, sep: str = "") -> list[str]:
        """Per class, how many regimes measured a suggested run (none: no line)."""
        return [f"{sep}suggested run measured in {s['extra_runs']} of {s['regimes']} regimes "
                f"({s['class']}, {s['split']})" for s in self.summary() if s["extra_runs"]]

    def text(self) -> str:
        """The summary as plain text."""
        lines = [f"{'regime class':<18}{'split':<7}{'regimes':>8}{'mean':>8}{'max':>7}"
                 f"{'target':>9}{'coverage':>10}{'width':>7}"]
        for s in self.summary():
            lines.append(f"{s['class']:<18}{s['split']:<7}{s['regimes']:>8}"
                         f"{100 * s['mean_error']:>7.1f}%{100 * s['max_error']:>6.0f}%"
                         f"{s['meeting_target']:>5}/{s['regimes']:<3}"
                         f"{100 * s['coverage']:>9.0f}%{100 * s['halfwidth']:>6.0f}%")
        lines += self._extra_lines()
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


def evaluate_corpus(path=None, *, rows=None, splits: Sequence[str] = SPLITS,
                    regimes: Sequence[str] | None = None,
                    train_workers: Sequence[int] = TRAIN_WORKERS,
                    simulate: bool = True, layers: bool = False, suggested: bool = False,
                    cv_given: bool = True, link_known: bool = False, progress=None,
                    executor=None, **options) -> CorpusReport:
    """The held-out protocol on every regime of the corpus (module notes).

    Parameters
    ----------
    path : str or path, optional
        The corpus CSV (default: the committed one).
    rows : sequence of dict, optional
        Already read rows (strings, as :func:`perfmodel.placement.ns3_corpus.read_rows`).
    splits : sequence of str
        Which splits to evaluate.
    regimes : sequence of str, optional
        Only these regimes.
    train_workers : sequence of int
        The measured worker counts given to the selection.
    simulate : bool
        The simulator among the candidates.
    progress : callable, optional
        Called with (done, total) after each regime.
    executor : concurrent.futures.Executor, optional
        Where the regimes are evaluated, one task each (e.g. a process pool:
        regimes share nothing, and a per-layer replay is hours of one core);
        it is not shut down.  The report is the same as without one: results
        in the corpus's order, each regime's randomness seeded by itself.
    layers : bool
        The user gives each job's per-layer profile (with the regime's overlap) instead
        of its coarse profile (:func:`evaluate_regime`).
    suggested : bool
        The user also measures the run the selection suggests, where the corpus has
        it (:func:`evaluate_regime`).
    cv_given : bool
        The user says how much the compute varies (the regime's compute CV); False:
        does not, and the cluster keeps its default, steady compute
        (:func:`evaluate_regime`).
    link_known : bool
        The user says how the hosts' queues and TCP share a link; False: does not,
        and the selection takes it as unknown (:func:`evaluate_regime`).
    **options
        Further options of :func:`~perfmodel.fit.selection.select_model`
        (``extrapolation``, ``tolerance`` ...), to compare rules on ``train``.

    Returns
    -------
    CorpusReport
    """
    rows = read_rows(CORPUS_PATH if path is None else path) if rows is None else list(rows)
    by_regime: dict[str, list] = {}
    for r in rows:
        if r["split"] in splits and (regimes is None or r["regime"] in regimes):
            by_regime.setdefault(r["regime"], []).append(r)
    kwargs = dict(train_workers=train_workers, simulate=simulate, layers=layers,
                  suggested=suggested, cv_given=cv_given, link_known=link_known, **options)
    notes, tasks = [], {}
    for name, group in by_regime.items():
        workers = {int(r["workers"]) for r in group}
        if not set(train_workers) <= workers or len(workers) <= len(train_workers):
            notes.append(f"{name}: runs at {sorted(workers)} cannot train on "
                         f"{list(train_workers)} and test on the rest")
        else:
            tasks[name] = group
    outcomes = _evaluated(tasks, kwargs, executor, progress, len(by_regime) - len(tasks))
    results = [o for o in outcomes if isinstance(o, RegimeResult)]
    notes += [o for o in outcomes if isinstance(o, str)]
    return CorpusReport(tuple(results), tuple(notes))


def _evaluated_one(name: str, group: list, kwargs: dict) -> RegimeResult | str:
    """One regime's result, or a note saying why it has none (top-level, so that a
    process pool can pickle it; the note is a string since exceptions with their own
    arguments need not survive pickling)."""
    try:
        return evaluate_regime(group, **kwargs)
    except (PerfModelError, Infeasible) as err:
        return f"{name}: {err}"


def _finished(tasks: dict, kwargs: dict, executor):
    """(index, outcome) of every task as it finishes, here in order or on ``executor``."""
    items = list(tasks.items())
    if executor is None:
        for i, (name, group) in enumerate(items):
            yield i, _evaluated_one(name, group, kwargs)
        return
    futures = {executor.submit(_evaluated_one, name, group, kwargs): i
               for i, (name, group) in enumerate(items)}
    for future in cf.as_completed(futures):
        yield futures[future], future.result()


def _evaluated(tasks: dict, kwargs: dict, executor, progress, skipped: int) -> list:
    """Every task's outcome in the tasks' order, here or on ``executor``."""
    total = len(tasks) + skipped
    if skipped and progress is not None:
        progress(skipped, total)
    out = [None] * len(tasks)
    for done, (i, outcome) in enumerate(_finished(tasks, kwargs, executor), skipped + 1):
        out[i] = outcome
        if progress is not None:
            progress(done, total)
    return out
