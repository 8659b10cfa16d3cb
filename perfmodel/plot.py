"""Matplotlib figures of the toolkit's results (extra ``perfmodel[plot]``).

Every function draws on a given ``ax`` (or a new figure's axes) and returns
the :class:`matplotlib.axes.Axes`, so figures compose in notebooks;
:func:`save` writes a figure (or the figure of an axes) as PNG or SVG.
matplotlib is imported only inside the functions: the rest of perfmodel does
not need it.

* :func:`scalability` -- throughput against workers, saturation point marked,
  error band where the estimates carry :attr:`Estimate.throughput_interval
  <perfmodel.result.Estimate.throughput_interval>`;
* :func:`model_scalability` -- the same for models evaluated over workers
  (:func:`estimates_over_workers`, saturation by :func:`curve_saturation_workers`);
* :func:`sweep_curves` -- a :func:`perfmodel.sweep.sweep` table: one line per
  combination of its other varying axes, error bands from its
  ``throughput_low``/``throughput_high`` columns;
* :func:`phase_breakdown` -- stacked bars of :attr:`Estimate.phases
  <perfmodel.result.Estimate.phases>` (they sum to the step time), with error
  bars from :attr:`Estimate.step_time_interval
  <perfmodel.result.Estimate.step_time_interval>` when present;
* :func:`latency_cdf` -- Jain et al., Figs. 8-10: iteration-latency CDFs per
  placement strategy (:meth:`FlowSimResult.cdf
  <perfmodel.placement.FlowSimResult.cdf>`);
* :func:`gantt` -- the synthetic trace of :func:`perfmodel.sim.simulate`
  with ``record=True``, one row per (worker, resource);
* :func:`search_space` -- Yan et al. 2015, Fig. 15: epoch time over the
  (replicas, workers per replica) space.

Examples
--------
>>> import numpy as np
>>> from perfmodel import plot
>>> ax = plot.scalability(np.arange(1, 9), {"linear": np.arange(1, 9) * 10.0}, saturation=5)
>>> ax.get_xlabel()
'workers'
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from .errors import SpecError
from .result import Estimate
from .sim.trace import RESOURCES
from .specs import Config

__all__ = ["scalability", "model_scalability", "ceiling_line", "estimates_over_workers",
           "curve_saturation_workers", "sweep_curves", "phase_breakdown", "latency_cdf", "gantt",
           "search_space", "spread_over_steps", "save", "pyplot", "RESOURCE_COLORS", "FORMATS",
           "SWEEP_Y", "MAX_LEGEND_LINES"]

#: File formats :func:`save` writes, by file suffix.
FORMATS = ("png", "svg")

#: Colour of each resource kind in :func:`gantt` and of each phase
#: (:data:`perfmodel.result.PHASES`) in :func:`phase_breakdown`: a phase has
#: the same colour whichever model reports it.
RESOURCE_COLORS = {"downlink": "tab:blue", "worker": "tab:orange", "uplink": "tab:green",
                   "ps": "tab:red", "update": "tab:red", "compute": "tab:orange",
                   "forward": "tab:orange", "backward": "tab:brown", "input": "tab:gray",
                   "network": "tab:blue", "activations": "tab:cyan", "errors": "tab:olive",
                   "aggregate": "tab:pink", "allreduce": "tab:purple", "weights": "gold",
                   "straggler": "black", "cpu_ceiling": "lightgray", "overhead": "silver",
                   "timeouts": "darkred", "intra_reduce": "lightgreen",
                   "intra_broadcast": "lightblue"}


def pyplot():
    """Import matplotlib.pyplot, with a message naming the extra when it is missing."""
    try:
        import matplotlib
    except ImportError as exc:  # pragma: no cover - exercised only without matplotlib
        raise ImportError("perfmodel.plot needs matplotlib: pip install 'perfmodel[plot]'"
                          ) from exc
    import os
    import sys

    if ("matplotlib.pyplot" not in sys.modules and "ipykernel" not in sys.modules
            and not os.environ.get("MPLBACKEND") and not os.environ.get("DISPLAY")):
        matplotlib.use("Agg")  # headless (scripts, CI): draw and save with Agg
    import matplotlib.pyplot as plt
    return plt


def _axes(ax):
    if ax is not None:
        return ax
    plt = pyplot()
    _, ax = plt.subplots(figsize=(6.4, 4.0), layout="constrained")
    return ax


def _level_text(level, records=()) -> str:
    """``0.9 -> "90% interval"``; ``None`` (level unknown) -> ``"interval"``.

    When every record's interval is the spread of single iterations (GST's
    ``interval="iteration"``), it says so instead: that is not an error bar
    on the mean.
    """
    sources = {str(r.meta.get("interval_source", "")) for r in records}
    what = ("range of single iterations"
            if sources and all(x.startswith("GST iteration") for x in sources)
            else "interval")
    return what if level is None else f"{100 * float(level):g}% {what}"


def _estimate_curve(label: str, values) -> tuple[object, object, object]:
    """(throughputs, (low, high) or None, level or None) of a sequence of Estimates.

    The band needs every point's interval at one level: a curve where only some
    estimates carry one, or at different levels, is an error rather than a band
    with holes.
    """
    y = [float(e.throughput) for e in values]
    bars = [e.throughput_interval for e in values]
    if all(b is None for b in bars):
        return y, None, None
    if any(b is None for b in bars):
        raise SpecError(f"throughputs[{label!r}]", "some estimates carry a throughput_interval "
                                                 "and some do not")
    levels = {e.meta.get("interval_level") for e in values}
    if len(levels) > 1:
        raise SpecError(f"throughputs[{label!r}]", f"intervals at different levels "
                                                 f"{sorted(levels, key=str)}")
    low, high = zip(*bars)
    return y, (low, high), levels.pop()


def _is_estimates(values) -> bool:
    return (not isinstance(values, np.ndarray) and len(values) > 0
            and all(hasattr(v, "throughput") for v in values))


def scalability(workers, throughputs: Mapping[str, object], *, saturation=None,
                intervals: Mapping[str, object] | None = None, level: float | None = None,
                ax=None, ylabel: str = "throughput (samples/s)"):
    """Throughput against the number of workers, one line per label, error bands if known.

    Parameters
    ----------
    workers : array_like of int, shape (n,)
        Worker counts K.
    throughputs : mapping of str to array_like, shape (n,), or to sequence of Estimate
        Throughput at each K per curve (any unit; ``ylabel`` names it), or the
        :class:`~perfmodel.result.Estimate` at each K (samples/s): their
        ``throughput_interval`` is drawn as a shaded band labelled with
        ``meta["interval_level"]`` when every estimate of the curve has one.
    saturation : float or mapping of str to float, optional
        Saturation point K* (e.g. :func:`perfmodel.symbolic.saturation_workers`
        or :func:`curve_saturation_workers`), one for all curves or one per
        label: marked by a dashed vertical line and a dot on the curve
        (interpolated) when finite.
    intervals : mapping of str to (array_like, array_like), optional
        ``(low, high)`` per K for curves given as numbers (same unit), e.g. the
        ``throughput_interval`` of ``perfmodel predict --format json`` records.
    level : float, optional
        Confidence level of ``intervals`` (e.g. 0.9), shown in the legend.
    ax : matplotlib.axes.Axes, optional
        Where to draw (default: a new figure).
    ylabel : str
        Label of the y axis.

    Returns
    -------
    matplotlib.axes.Axes
        One line per curve, labelled with its label (saturation markers are
        lines labelled ``"<label>: saturation K=<K*>"``); each band is a
        collection whose outline runs through ``high`` and ``low`` at every K.

    Examples
    --------
    >>> import numpy as np
    >>> from perfmodel import plot
    >>> ax = plot.scalability([1, 2, 4], {"x": [10.0, 19.0, 35.0]},
    ...                       intervals={"x": ([9.0, 17.0, 30.0], [11.0, 21.0, 40.0])}, level=0.9)
    >>> [t.get_text() for t in ax.get_legend().get_texts()]
    ['x', 'x: 90% interval']
    """
    ax = _axes(ax)
    k = np.asarray(workers, dtype=float)
    for label, values in throughputs.items():
        band, band_level, estimates = None, level, ()
        if _is_estimates(values):
            estimates = values
            values, band, band_level = _estimate_curve(label, values)
        elif intervals is not None and label in intervals:
            band = intervals[label]
        y = np.asarray(values, dtype=float)
        if y.shape != k.shape:
            raise SpecError(f"throughputs[{label!r}]", f"shape {y.shape} != workers {k.shape}")
        (line,) = ax.plot(k, y, marker="o", ms=3, label=label)
        if band is not None:
            _band(ax, k, y, band, f"{label}: {_level_text(band_level, estimates)}",
                  line.get_color())
        s = saturation.get(label) if isinstance(saturation, Mapping) else saturation
        if s is not None and math.isfinite(float(s)):
            ax.axvline(float(s), color=line.get_color(), ls="--", lw=1)
            ax.plot([float(s)], [np.interp(float(s), k, y)], "o", color=line.get_color(),
                    ms=8, mfc="none", label=f"{label}: saturation K={float(s):g}")
    ax.set_xlabel("workers")
    ax.set_ylabel(ylabel)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    return ax


def _band(ax, k, y, band, label: str, color) -> None:
    """Shade ``low..high`` around ``y``; a band that leaves out its curve is an input error."""
    low, high = (np.asarray(b, dtype=float) for b in band)
    if low.shape != k.shape or high.shape != k.shape:
        raise SpecError(label, f"shapes {low.shape}, {high.shape} != workers {k.shape}")
    if not (np.all(np.isfinite(low)) and np.all(np.isfinite(high))
            and np.all(low <= y) and np.all(y <= high)):
        raise SpecError(label, "every interval must be finite and hold its value "
                               "(low <= y <= high)")
    ax.fill_between(k, low, high, color=color, alpha=0.2, lw=0, label=label)


def estimates_over_workers(model, workload, cluster, workers, *, epoch_samples=None) -> list:
    """The model's :class:`~perfmodel.result.Estimate` at each worker count.

    Configurations as :func:`perfmodel.sweep.grid_records` (so as ``perfmodel
    predict``) builds them: ``K`` data-parallel replicas and one parameter
    server (none for all-reduce models); unlike its records, the estimates keep
    ``meta`` (the interval level).

    Parameters
    ----------
    model : object with ``estimate(workload, cluster, config)``
    workload : Profile or Trace
    cluster : Cluster
    workers : iterable of int
    epoch_samples : int, optional

    Returns
    -------
    list of Estimate
        One per worker count, in order.
    """
    n_ps = 1 if getattr(model, "uses_parameter_servers", True) else 0
    mode = getattr(model, "mode", "sync")   # as grid_records
    return [model.estimate(workload, cluster, Config(n_replicas=int(k), n_ps=n_ps, mode=mode,
                                                     epoch_samples=epoch_samples))
            for k in workers]


def curve_saturation_workers(workers, throughput, *, threshold: float = 0.1) -> float:
    """Saturation point of a sampled throughput curve: the last K whose workers are worth it.

    The criterion of :func:`perfmodel.symbolic.saturation_workers` applied to
    any model's numbers: the largest sampled ``K_i`` whose added workers each
    add more than ``threshold`` times one worker's throughput on average,
    ``(X(K_i) - X(K_{i-1})) / (K_i - K_{i-1}) > threshold * X_1``, with
    ``X(0) = 0`` before the first sample.  On consecutive K from 1 it equals
    :func:`~perfmodel.symbolic.saturation_workers` wherever that lies inside
    the range.

    Parameters
    ----------
    workers : array_like of int, shape (n,)
        Increasing worker counts K >= 1.
    throughput : array_like of float, shape (n,)
        X(K), any unit.
    threshold : float
        Relative marginal gain epsilon in [0, 1).

    Returns
    -------
    float, workers
        The saturation K, or ``inf`` when the last sampled K is still worth
        its workers (saturation lies beyond the range, or never comes).

    Notes
    -----
    One worker's throughput ``X_1`` is ``X(K_0) / K_0`` at the first sample
    (exact when the range starts at K = 1; our choice otherwise, since no
    single-worker point was sampled).

    Examples
    --------
    >>> curve_saturation_workers([1, 2, 3, 4], [10.0, 18.0, 18.8, 19.2])  # gains 10, 8, 0.8, 0.4
    2.0
    """
    k = np.asarray(workers, dtype=float)
    x = np.asarray(throughput, dtype=float)
    if k.ndim != 1 or k.shape != x.shape or k.size == 0:
        raise SpecError("workers", f"workers and throughput must be 1-d of one length, "
                                   f"got {k.shape}, {x.shape}")
    if not (k[0] >= 1 and np.all(np.diff(k) > 0) and np.all(np.isfinite(x))):
        raise SpecError("workers", "must increase from >= 1 and throughputs be finite")
    if not 0 <= threshold < 1:
        raise SpecError("threshold", f"must be in [0, 1), got {threshold!r}")
    gain = np.diff(x, prepend=0.0) / np.diff(k, prepend=0.0)
    worth = np.flatnonzero(gain > threshold * x[0] / k[0])
    if worth.size == 0 or worth[-1] == k.size - 1:
        return math.inf if worth.size else float(k[0])
    return float(k[worth[-1]])


def model_scalability(models: Mapping[str, object], workload, cluster, workers, *,
                      epoch_samples=None, threshold: float = 0.1, ax=None):
    """Throughput of each model over the workers, saturation points and error bands marked.

    Parameters
    ----------
    models : mapping of str to model
        Curve label -> object with ``estimate(workload, cluster, config)``.
    workload, cluster
        As for the models' ``estimate``.
    workers : sequence of int
        Increasing worker counts.
    epoch_samples : int, optional
    threshold : float
        Saturation criterion of :func:`curve_saturation_workers`, applied to
        the point estimates (not to the interval bounds).
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
        Drawn by :func:`scalability` from :func:`estimates_over_workers`.
    """
    curves = {label: estimates_over_workers(m, workload, cluster, workers,
                                            epoch_samples=epoch_samples)
              for label, m in models.items()}
    saturation = {label: curve_saturation_workers(workers, [e.throughput for e in ests],
                                                  threshold=threshold)
                  for label, ests in curves.items()}
    return scalability(workers, curves, saturation=saturation, ax=ax)


def ceiling_line(ax, ceiling, workers, batch_size: int, *, n_ps: int = 1,
                 label: str = "CPU ceiling of the runs"):
    """Draw a CPU ceiling (:class:`perfmodel.operational.UtilizationCeiling`) over the workers.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    ceiling : UtilizationCeiling
    workers : sequence of int
    batch_size : int
        Samples per worker per step (a step of K workers holds ``K * batch_size``).
    n_ps : int
        Servers of the plotted configurations.
    label : str

    Returns
    -------
    matplotlib.lines.Line2D
        The dotted grey line, labelled ``label``.
    """
    k = np.asarray(workers, dtype=float)
    top = np.asarray(ceiling.speed(n_ps, k, k * batch_size), dtype=float)
    (line,) = ax.plot(k, top, ":", color="0.4", lw=1.5, label=label)
    ax.legend(fontsize="small")
    return line


#: Columns of a sweep table that are results, not axes (``phase_*`` too).
_SWEEP_RESULTS = frozenset({"key", "step_time", "throughput", "bottleneck", "epoch_time",
                            "throughput_low", "throughput_high", "interval_level", "error"})

#: :func:`sweep_curves` puts a legend inside the axes up to this many lines; more go
#: outside, in columns (or a colour bar when one numeric axis varies).
MAX_LEGEND_LINES = 12
#: Lines per column of a legend drawn outside the axes.
_LEGEND_ROWS = 24

#: y columns :func:`sweep_curves` draws, with their axis labels.
SWEEP_Y = {"throughput": "throughput (samples/s)", "step_time": "step time (s)",
           "epoch_time": "epoch time (s)"}


def _axis_text(column: str, value) -> str:
    if column == "bandwidth" and isinstance(value, (int, float)):
        return f"{value * 8 / 1e9:g} Gbps"  # B/s inside, Gbps for people
    return f"{column}={value}"


def _row_band(row: dict, y: str):
    """(low, high) of ``y`` in a sweep row, or None: the throughput interval, or the step-time
    interval it implies (:attr:`Estimate.step_time_interval`)."""
    if row.get("throughput_low") is None or y == "epoch_time":
        return None
    est = Estimate(step_time=row["step_time"], throughput=row["throughput"],
                   throughput_interval=(row["throughput_low"], row["throughput_high"]))
    return est.throughput_interval if y == "throughput" else est.step_time_interval


def sweep_curves(rows, *, x: str = "workers", y: str = "throughput", ax=None):
    """Lines of a sweep table: ``y`` against ``x``, one per combination of the other varying axes.

    Parameters
    ----------
    rows : sequence of dict
        :attr:`perfmodel.sweep.SweepResult.records` or
        :func:`perfmodel.sweep.read_table`; rows with an ``error`` are left out.
    x : str
        A numeric axis column (``workers``, ``bandwidth`` in B/s, ``n_ps``,
        ``batch_size``, ...).
    y : {"throughput", "step_time", "epoch_time"}
        Result column (samples/s or s).
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
        One line per group, labelled with the group's axis values (all rows
        when no other axis varies).  Up to :data:`MAX_LEGEND_LINES` lines a
        legend names them; beyond, colour follows the numeric axis with the
        most values (a colour bar) and line style the other axes (a legend),
        or, when that cannot tell them apart, a legend outside the axes in
        columns: no line is ever unnamed.  A band ``low..high`` where every row of the
        group has ``throughput_low``/``throughput_high`` (for ``step_time``,
        the interval they imply), labelled with ``interval_level``.

    Raises
    ------
    SpecError
        For an unknown ``x`` or ``y``, or a table with no row to draw.
    """
    if y not in SWEEP_Y:
        raise SpecError("y", f"expected one of {', '.join(SWEEP_Y)}, got {y!r}")
    rows = [r for r in rows if not r.get("error") and r.get(y) is not None]
    if not rows:
        raise SpecError("rows", f"none without an error has a {y} value")
    if x not in rows[0] or x in _SWEEP_RESULTS or x.startswith("phase_"):
        raise SpecError("x", f"{x!r} is not an axis column of the table")
    axes = [c for c in rows[0] if c not in _SWEEP_RESULTS and c != x and not c.startswith("phase_")
            and len({repr(r.get(c)) for r in rows}) > 1]
    groups: dict[tuple, list] = {}
    for r in rows:
        groups.setdefault(tuple(r.get(c) for c in axes), []).append(r)
    ax = _axes(ax)
    code = _line_code(axes, groups) if len(groups) > MAX_LEGEND_LINES else None
    for values, group in groups.items():
        group.sort(key=lambda r: r[x])
        label = ", ".join(_axis_text(c, v) for c, v in zip(axes, values)) or y
        xs = np.array([r[x] for r in group], dtype=float)
        ys = np.array([r[y] for r in group], dtype=float)
        style = {"marker": "o"} if code is None else code.style(values)
        (line,) = ax.plot(xs, ys, ms=3, label=label, **style)
        bands = [_row_band(r, y) for r in group]
        if all(b is not None for b in bands):
            levels = {r.get("interval_level") for r in group}
            level = levels.pop() if len(levels) == 1 else None
            _band(ax, xs, ys, tuple(zip(*bands)), f"{label}: {_level_text(level)}",
                  line.get_color())
    ax.set_xlabel(x + (" (B/s)" if x == "bandwidth" else ""))
    ax.set_ylabel(SWEEP_Y[y])
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    if len(groups) <= MAX_LEGEND_LINES:
        ax.legend(fontsize="small")
    elif code is not None:   # a colour bar and a few line styles name every line
        code.key(ax)
    else:
        ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1.0),
                  ncol=-(-len(groups) // _LEGEND_ROWS), borderaxespad=0.0)
    return ax


#: Line styles and markers that tell apart the lines of one colour (4 x 6 combinations).
_DASHES = ("-", "--", ":", "-.")
_MARKERS = ("o", "s", "^", "D", "v", "P")


class _LineCode:
    """Many sweep lines told apart by colour along one numeric axis (a colour bar) and by
    line style and marker over the other axes' few combinations (a small legend)."""

    def __init__(self, axes, groups, c):
        from matplotlib import colors  # third-party, loaded with pyplot

        self.axes, self.c = axes, c
        self.factor = 8 / 1e9 if axes[c] == "bandwidth" else 1.0   # B/s inside, Gbps shown
        values = [float(v[c]) * self.factor for v in groups]
        lo, hi = min(values), max(values)
        self.norm = (colors.LogNorm if lo > 0 and hi / lo > 20 else colors.Normalize)(lo, hi)
        self.cmap = pyplot().get_cmap("viridis")
        rests = sorted({self._rest(v) for v in groups}, key=repr)
        self.styles = {r: (_DASHES[i % len(_DASHES)], _MARKERS[i // len(_DASHES)])
                       for i, r in enumerate(rests)}

    def _rest(self, values) -> tuple:
        return tuple(v for i, v in enumerate(values) if i != self.c)

    def style(self, values) -> dict:
        dash, marker = self.styles[self._rest(values)]
        return {"color": self.cmap(self.norm(float(values[self.c]) * self.factor)),
                "linestyle": dash, "marker": marker}

    def key(self, ax) -> None:
        plt = pyplot()
        bar = ax.figure.colorbar(plt.cm.ScalarMappable(norm=self.norm, cmap=self.cmap), ax=ax)
        bar.set_label(self.axes[self.c] + (" (Gbps)" if self.axes[self.c] == "bandwidth" else ""))
        rest = [a for i, a in enumerate(self.axes) if i != self.c]
        if rest:
            handles = [plt.Line2D([], [], color="black", linestyle=d, marker=m, ms=3,
                                  label=", ".join(_axis_text(a, v) for a, v in zip(rest, r)))
                       for r, (d, m) in self.styles.items()]
            ax.legend(handles=handles, fontsize="small")


def _line_code(axes: list, groups: Mapping):
    """A :class:`_LineCode` for the groups, or None (no numeric axis, or too many styles)."""
    numeric = [i for i in range(len(axes))
               if all(isinstance(v[i], (int, float)) and not isinstance(v[i], bool)
                      for v in groups)]
    if not numeric:
        return None
    c = max(numeric, key=lambda i: len({v[i] for v in groups}))
    if len({tuple(x for i, x in enumerate(v) if i != c) for v in groups}) > \
            len(_DASHES) * len(_MARKERS):
        return None
    return _LineCode(axes, groups, c)


def _phases_of(item) -> Mapping[str, float]:
    if isinstance(item, Mapping):
        return item.get("phases", item)
    return item.phases


def phase_breakdown(records, ax=None, *, labels=None, unit: float = 1.0,
                    ylabel: str = "step time (s)", xlabel: str | None = None):
    """Stacked bars of the exposed seconds per phase of each estimate, error bars if known.

    Parameters
    ----------
    records : sequence or mapping of Estimate or dict
        :class:`~perfmodel.result.Estimate` objects, or dicts with a
        ``"phases"`` entry (the records of ``perfmodel predict --format
        json``), or plain ``{phase: seconds}`` dicts; a mapping's keys are the
        bar labels.
    ax : matplotlib.axes.Axes, optional
    labels : sequence of str, optional
        Bar labels (default: the mapping keys, or 1, 2, ...).
    unit : float
        Divide every phase by it (``60`` for minutes; ``ylabel`` should say so).
    ylabel : str
    xlabel : str, optional
        Label of the x axis (e.g. ``"workers"``).

    Returns
    -------
    matplotlib.axes.Axes
        Bar heights stack to each record's step time (the phases sum to it).
        When every record is an Estimate with a :attr:`step_time_interval
        <perfmodel.result.Estimate.step_time_interval>`, one error bar per
        stack spans it (``ax.containers[-1]``), labelled with the level.
    """
    ax = _axes(ax)
    if isinstance(records, Mapping):
        labels = list(records) if labels is None else list(labels)
        records = list(records.values())
    records = list(records)
    labels = [str(i + 1) for i in range(len(records))] if labels is None else list(labels)
    phases = [_phases_of(r) for r in records]
    names: list[str] = []
    for p in phases:
        names.extend(n for n in p if n not in names)
    x = np.arange(len(records))
    bottom = np.zeros(len(records))
    known = {n: RESOURCE_COLORS[n] for n in names if n in RESOURCE_COLORS}
    spare = iter(c for c in ("tab:purple", "tab:brown", "tab:pink", "tab:olive", "tab:cyan",
                             "tab:gray", "tab:blue", "tab:orange", "tab:green", "tab:red")
                 if c not in known.values())
    for name in names:
        h = np.array([float(p.get(name, 0.0)) for p in phases]) / unit
        ax.bar(x, h, bottom=bottom, label=name, color=known.get(name) or next(spare, None))
        bottom += h
    _step_error_bars(ax, x, records, unit)
    ax.set_xticks(x, labels, rotation=45 if len(records) > 8 else 0)
    ax.set_ylabel(ylabel)
    if xlabel is not None:
        ax.set_xlabel(xlabel)
    ax.legend(fontsize="small")
    ax.grid(axis="y", alpha=0.3)
    return ax


def _step_error_bars(ax, x, records, unit: float) -> None:
    """Error bars from each Estimate's step_time_interval, when all records have one."""
    bars = [getattr(r, "step_time_interval", None) for r in records]
    if not bars or any(b is None for b in bars):
        return
    levels = {r.meta.get("interval_level") for r in records}
    if len(levels) > 1:
        raise SpecError("records", f"intervals at different levels {sorted(levels, key=str)}")
    step = np.array([r.step_time for r in records], dtype=float) / unit
    low, high = (np.array(b, dtype=float) / unit for b in zip(*bars))
    ax.errorbar(x, step, yerr=[step - low, high - step], fmt="none", ecolor="black", capsize=4,
                label=_level_text(levels.pop(), records))


def latency_cdf(results: Mapping[str, object], ax=None, *, xlabel: str = "iteration latency (s)"):
    """Empirical CDF of the iteration latency, one step line per strategy (Jain et al., Figs. 8-10).

    Parameters
    ----------
    results : mapping of str to FlowSimResult
        E.g. :func:`perfmodel.placement.compare`'s result; each value needs a
        ``cdf()`` method returning sorted latencies (s) and F in (0, 1].
    ax : matplotlib.axes.Axes, optional
    xlabel : str

    Returns
    -------
    matplotlib.axes.Axes
        One line per strategy, ending at F = 1; each in its own line style
        and width, and a strategy whose latencies equal an earlier one's is
        labelled ``same as`` it (it would otherwise hide under it).
    """
    ax = _axes(ax)
    drawn: list[tuple[str, np.ndarray]] = []
    for i, (name, r) in enumerate(results.items()):
        x, f = r.cdf()
        same = next((other for other, xo in drawn if np.array_equal(xo, x)), None)
        label = f"{name} (mean {float(np.mean(x)):.3g} s)" + (f", same as {same}" if same else "")
        # later lines thinner and dashed, so a line drawn over an equal one still shows
        ax.step(x, f, where="post", label=label, linestyle=_DASHES[i % len(_DASHES)],
                linewidth=max(2.6 - 0.5 * i, 1.0))
        drawn.append((name, x))
    ax.set_xlabel(xlabel)
    ax.set_ylabel("CDF")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small", loc="lower right")
    return ax


def gantt(result, ax=None, *, steps=None, resources=None):
    """Gantt chart of a recorded simulation: one row per (worker, resource).

    Parameters
    ----------
    result : perfmodel.sim.SimResult
        From :func:`perfmodel.sim.simulate` with ``record=True`` (its ``ops``
        table: ``worker``, ``step``, ``res``, ``start``, ``end``).
    ax : matplotlib.axes.Axes, optional
    steps : int or (int, int), optional
        Only these steps: the first ``steps`` or the range ``[a, b)``.
    resources : sequence of str, optional
        Resource kinds to show, in row order (default: those present, in
        :data:`perfmodel.sim.RESOURCES` order).

    Returns
    -------
    matplotlib.axes.Axes
        Row labels ``"w{worker} {resource}"`` top to bottom; each op is a bar
        from its start to its end (overlapping transmissions on a shared link
        drawn translucent).

    Raises
    ------
    SpecError
        When the result was not recorded.
    """
    ops = getattr(result, "ops", None)
    if ops is None:
        raise SpecError("run", "gantt needs a simulation run with record=True")
    ax = _axes(ax)
    step = np.asarray(ops["step"])
    keep = np.ones(step.size, dtype=bool)
    if steps is not None:
        a, b = (0, steps) if np.isscalar(steps) else steps
        keep = (step >= a) & (step < b)
    worker = np.asarray(ops["worker"])[keep]
    res = np.asarray(ops["res"])[keep]
    start = np.asarray(ops["start"], dtype=float)[keep]
    end = np.asarray(ops["end"], dtype=float)[keep]
    step = step[keep]
    present = [RESOURCES[i] for i in sorted(set(res.tolist()))]
    kinds = list(resources) if resources is not None else present
    rows = [(w, kind) for w in range(result.workers) for kind in kinds]
    for i, (w, kind) in enumerate(rows):
        sel = (worker == w) & (res == RESOURCES.index(kind))
        if not sel.any():
            continue
        spans = list(zip(start[sel], end[sel] - start[sel]))
        ax.broken_barh(spans, (i - 0.4, 0.8), facecolors=RESOURCE_COLORS.get(kind, "grey"),
                       alpha=0.7, edgecolor="black", linewidth=0.3)
    ax.set_yticks(range(len(rows)), [f"w{w} {kind}" for w, kind in rows])
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlabel("time (s)")
    if end.size:
        ax.set_xlim(float(start.min()), float(end.max()))
    ax.grid(axis="x", alpha=0.3)
    return ax


def _point(c) -> tuple[int, int, int, float]:
    """(replicas, workers per replica, servers, epoch time s) of a candidate."""
    if isinstance(c, Mapping):
        return (int(c["n_replicas"]), int(c["n_workers"]), int(c.get("n_ps", 0)),
                float(c["epoch_time"]))
    cfg = c.config
    t = getattr(c, "epoch_time", None)
    if t is None:
        t = c.estimate.epoch_time
    return cfg.n_replicas, cfg.n_workers, cfg.n_ps, float(t)


def search_space(candidates, ax=None, *, unit: float = 60.0, unit_name: str = "min"):
    """Epoch time over the (model replicas, workers per replica) space (Yan et al. 2015, Fig. 15).

    Each (N_mr, N_wr) point shows its best epoch time over the parameter-server
    counts given: colour on a log scale, and size larger for faster
    configurations; the fastest point is starred and labelled W/R/PS.

    Parameters
    ----------
    candidates : iterable
        :class:`optimizer.rank.Ranked` (``config``, ``epoch_time``),
        :class:`optimizer.search.Candidate` (``config``, ``estimate``) or dicts
        with ``n_workers``, ``n_replicas``, ``n_ps``, ``epoch_time`` (s).
    ax : matplotlib.axes.Axes, optional
    unit, unit_name : float, str
        Display unit of the epoch time (default minutes).

    Returns
    -------
    matplotlib.axes.Axes
        One scatter collection with one point per distinct (N_mr, N_wr).
    """
    ax = _axes(ax)
    best: dict[tuple[int, int], tuple[float, int]] = {}
    for c in candidates:
        r, w, s, t = _point(c)
        if math.isfinite(t) and ((r, w) not in best or t < best[(r, w)][0]):
            best[(r, w)] = (t, s)
    if not best:
        raise SpecError("candidates", "search_space needs at least one with a finite epoch time")
    keys = sorted(best, key=lambda k: -best[k][0])  # slowest first, fastest drawn on top
    r = np.array([k[0] for k in keys])
    w = np.array([k[1] for k in keys])
    t = np.array([best[k][0] for k in keys]) / unit
    size = 20 + 300 * (t.min() / t)
    from matplotlib.colors import LogNorm

    sc = ax.scatter(r, w, s=size, c=t, cmap="viridis_r",
                    norm=LogNorm(vmin=t.min(), vmax=max(t.max(), t.min() * 1.001)),
                    edgecolors="black", linewidths=0.3)
    ax.figure.colorbar(sc, ax=ax, label=f"epoch time ({unit_name})")
    i = int(np.argmin(t))
    ax.scatter([r[i]], [w[i]], marker="*", s=250, color="red", zorder=3)
    s_best = best[keys[i]][1]
    ax.annotate(f"best {w[i]}/{r[i]}/{s_best}: {t[i]:.3g} {unit_name}", (r[i], w[i]),
                xytext=(12, -4), textcoords="offset points", fontsize="small",
                bbox=dict(boxstyle="round", fc="white", alpha=0.8))
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("model replicas N_mr")
    ax.set_ylabel("workers per replica N_wr")
    ax.grid(alpha=0.3)
    return ax


def spread_over_steps(series: Mapping[str, object], ax=None, *, steady: float | None = None):
    """How far apart the workers drift, step by step, one line per run.

    Parameters
    ----------
    series : mapping of str to array_like
        Label to :func:`perfmodel.sim.engine.worker_spread` values (cycles).
    ax : matplotlib Axes, optional
    steady : float, optional
        A dotted line at this spread (the MVA's evenly spread workers, (K - 1) / K).

    Returns
    -------
    matplotlib Axes
    """
    ax = _axes(ax)
    for label, values in series.items():
        y = np.asarray(values, dtype=float)
        ax.plot(np.arange(1, y.size + 1), y, marker=".", label=label)
    if steady is not None:
        ax.axhline(steady, color="grey", linestyle=":", label="evenly spread (MVA)")
    ax.set_xlabel("step of each worker")
    ax.set_ylabel("spread of the workers (cycles)")
    ax.legend()
    return ax


def save(fig_or_ax, path, *, dpi: int = 120, close: bool = False):
    """Write a figure (or the figure holding an axes) to ``path``, PNG or SVG by its suffix.

    Parameters
    ----------
    fig_or_ax : matplotlib.figure.Figure or matplotlib.axes.Axes
    path : str or pathlib.Path
        Ends in ``.png`` or ``.svg``; parent directories are created.
    dpi : int
        Resolution of a PNG.
    close : bool
        Close the figure once written (scripts and the CLI: pyplot keeps every
        open figure in memory otherwise).

    Returns
    -------
    pathlib.Path
        The written file.
    """
    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise SpecError("path", f"expected a .png or .svg file, got {str(path)!r}")
    plt = pyplot()
    fig = fig_or_ax if hasattr(fig_or_ax, "savefig") else fig_or_ax.figure
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format=fmt, dpi=dpi)
    if close:
        plt.close(fig)
    return path
