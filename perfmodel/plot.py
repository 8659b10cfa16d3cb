"""Matplotlib figures of the toolkit's results (issue 9 item 3; extra ``perfmodel[plot]``).

Every function draws on a given ``ax`` (or a new figure's axes) and returns
the :class:`matplotlib.axes.Axes`, so figures compose in notebooks;
:func:`save` writes a figure (or the figure of an axes) as PNG or SVG.
matplotlib is imported only inside the functions: the rest of perfmodel does
not need it.

* :func:`scalability` -- throughput against workers, saturation point marked;
* :func:`phase_breakdown` -- stacked bars of :attr:`Estimate.phases
  <perfmodel.result.Estimate.phases>` (they sum to the step time);
* :func:`latency_cdf` -- seed 002 Figs. 8-10: iteration-latency CDFs per
  placement strategy (:meth:`FlowSimResult.cdf
  <perfmodel.placement.FlowSimResult.cdf>`);
* :func:`gantt` -- the synthetic trace of :func:`perfmodel.sim.simulate`
  with ``record=True``, one row per (worker, resource);
* :func:`search_space` -- seed 004 Fig. 15: epoch time over the
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

__all__ = ["scalability", "phase_breakdown", "latency_cdf", "gantt", "search_space", "save",
           "RESOURCE_COLORS"]

#: Colour of each resource kind in :func:`gantt` and :func:`phase_breakdown`.
RESOURCE_COLORS = {"downlink": "tab:blue", "worker": "tab:orange", "uplink": "tab:green",
                   "ps": "tab:red", "update": "tab:red", "compute": "tab:orange"}


def _pyplot():
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
    plt = _pyplot()
    _, ax = plt.subplots(figsize=(6.4, 4.0), layout="constrained")
    return ax


def scalability(workers, throughputs: Mapping[str, object], *, saturation=None, ax=None,
                ylabel: str = "throughput (samples/s)"):
    """Throughput against the number of workers, one line per label.

    Parameters
    ----------
    workers : array_like of int, shape (n,)
        Worker counts K.
    throughputs : mapping of str to array_like, shape (n,)
        Throughput at each K per curve (any unit; ``ylabel`` names it).
    saturation : float or mapping of str to float, optional
        Saturation point K* (e.g. :func:`perfmodel.symbolic.saturation_workers`),
        one for all curves or one per label: marked by a dashed vertical line
        and a dot on the curve (interpolated) when finite.
    ax : matplotlib.axes.Axes, optional
        Where to draw (default: a new figure).
    ylabel : str
        Label of the y axis.

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = _axes(ax)
    k = np.asarray(workers, dtype=float)
    for label, values in throughputs.items():
        y = np.asarray(values, dtype=float)
        if y.shape != k.shape:
            raise ValueError(f"throughputs[{label!r}]: shape {y.shape} != workers {k.shape}")
        (line,) = ax.plot(k, y, marker="o", ms=3, label=label)
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


def _phases_of(item) -> Mapping[str, float]:
    if isinstance(item, Mapping):
        return item.get("phases", item)
    return item.phases


def phase_breakdown(records, ax=None, *, labels=None, unit: float = 1.0,
                    ylabel: str = "step time (s)"):
    """Stacked bars of the exposed seconds per phase of each estimate.

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

    Returns
    -------
    matplotlib.axes.Axes
        Bar heights stack to each record's step time (the phases sum to it).
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
    ax.set_xticks(x, labels, rotation=45 if len(records) > 8 else 0)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize="small")
    ax.grid(axis="y", alpha=0.3)
    return ax


def latency_cdf(results: Mapping[str, object], ax=None, *, xlabel: str = "iteration latency (s)"):
    """Empirical CDF of the iteration latency, one step line per strategy (seed 002 Figs. 8-10).

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
        One line per strategy, ending at F = 1.
    """
    ax = _axes(ax)
    for name, r in results.items():
        x, f = r.cdf()
        ax.step(x, f, where="post", label=f"{name} (mean {float(np.mean(x)):.3g} s)")
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
    ValueError
        When the result was not recorded.
    """
    from perfmodel.sim import RESOURCES

    ops = getattr(result, "ops", None)
    if ops is None:
        raise ValueError("gantt needs a simulation run with record=True")
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
    """Epoch time over the (model replicas, workers per replica) space (seed 004 Fig. 15).

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
        raise ValueError("search_space needs at least one candidate with a finite epoch time")
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


def save(fig_or_ax, path, *, dpi: int = 120):
    """Write a figure (or the figure holding an axes) to ``path``, PNG or SVG by its suffix.

    Parameters
    ----------
    fig_or_ax : matplotlib.figure.Figure or matplotlib.axes.Axes
    path : str or pathlib.Path
        Ends in ``.png`` or ``.svg``; parent directories are created.
    dpi : int
        Resolution of a PNG.

    Returns
    -------
    pathlib.Path
        The written file.
    """
    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in ("png", "svg"):
        raise ValueError(f"path: expected a .png or .svg file, got {str(path)!r}")
    _pyplot()
    fig = fig_or_ax if hasattr(fig_or_ax, "savefig") else fig_or_ax.figure
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format=fmt, dpi=dpi)
    return path
