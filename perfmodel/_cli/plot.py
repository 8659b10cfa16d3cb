"""`perfmodel plot`: the figures, drawn by :mod:`perfmodel.plot`."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from optimizer.dp import Pricer
from optimizer.rank import rank_configs
from optimizer.space import model_parallelism_limit, resource_triples

from .. import io
from .. import plot as figures
from ..errors import SpecError
from ..sim import simulate
from ..sweep import read_table
from .common import (
    DEFAULTS,
    MODEL_FLAGS,
    CliError,
    cluster_from_args,
    epoch_samples_for,
    model_from_args,
    parse_int_range,
    profile_from_args,
    progress_bar,
    quantities,
    resolve_spec,
)
from .measured import check_selection_flags, selection_of
from .place import run as run_place
from .simulate import trace_from_arg

__all__ = ["run"]


def _plot_models(args) -> dict:
    """``--model sync,async,...`` -> {name: model}; each model gets the flags it has.

    A flag is an error only when none of the listed models has it.
    """
    names = list(dict.fromkeys(n.strip() for n in args.model.split(",")))
    for name in names:
        if name not in MODEL_FLAGS or name == "layerwise":
            coarse = ", ".join(n for n in MODEL_FLAGS if n != "layerwise")
            raise CliError(f"--model: {name!r} is not one of {coarse}")
    wanted = {f for n in names for f in MODEL_FLAGS[n]}
    for flag in {f for flags in MODEL_FLAGS.values() for f in flags} - wanted:
        if getattr(args, flag, None) not in (None, False):
            raise CliError(f"--{flag.replace('_', '-')}: not an option of --model {args.model}")
    models = {}
    for name in names:
        others = {f: None for f in wanted - set(MODEL_FLAGS[name])}
        models[name] = model_from_args(argparse.Namespace(**{**vars(args), **others, "model": name}))
    return models


def _plot_job(args):
    """(profile, cluster, workers) of `plot scalability|phases`, flags applied."""
    profile, cluster = profile_from_args(args), cluster_from_args(args)
    if args.bandwidth:
        cluster = cluster.replace(nic_bandwidth=quantities(args.bandwidth, "B/s", "--bandwidth")[0])
    workers = parse_int_range(args.workers, "--workers")
    if sorted(set(workers)) != workers:
        raise CliError(f"--workers: must increase, got {args.workers!r}")
    return profile, cluster, workers


def _plot_scalability(args, plot):
    check_selection_flags(args)
    profile, cluster, workers = _plot_job(args)
    if not 0 <= args.threshold < 1:
        raise CliError(f"--threshold: must be in [0, 1), got {args.threshold}")
    if args.measurements:  # as `predict --measurements`: the selected model, --model unused
        chosen = selection_of(args, profile, cluster_from_args(args)).chosen
        models = {f"selected {chosen.name}": chosen}
    else:
        models = _plot_models(args)
    ax = plot.model_scalability(models, profile, cluster, workers,
                                epoch_samples=epoch_samples_for(args, profile.dnn),
                                threshold=args.threshold)
    if args.measurements:
        _plot_measured(ax, args, profile, cluster)
        if chosen.ceiling is not None:
            plot.ceiling_line(ax, chosen.ceiling, workers, profile.batch_size)
    ax.set_title(f"{profile.name or args.profile} on {cluster.name or 'cluster'}", fontsize="medium")
    return ax


def _plot_measured(ax, args, profile, cluster) -> None:
    """The --measurements runs of the plotted job as markers: same bandwidth and batch size,
    at most one server (the curves' configurations)."""
    runs = io.load_measurements(args.measurements)
    bw = cluster.nic_bandwidth
    shown = [m for m in runs if abs(m.bandwidth - bw) <= 1e-9 * bw
             and m.n_ps <= 1 and m.batch_size in (None, profile.batch_size)]
    if not shown:
        rates = ", ".join(f"{b * 8 / 1e9:g}Gbps" for b in sorted({m.bandwidth for m in runs}))
        raise CliError(f"--measurements {args.measurements}: no run with at most one server at "
                       f"{cluster.nic_bandwidth * 8 / 1e9:g}Gbps and batch {profile.batch_size}; "
                       f"try --bandwidth with one of: {rates}")
    ax.plot([m.workers for m in shown], [m.throughput for m in shown], "kx", ms=7, mew=1.5,
            label="measured", zorder=3)
    ax.legend(fontsize="small")


def _plot_phases(args, plot):
    (model,) = _plot_models(args).values()
    profile, cluster, workers = _plot_job(args)
    estimates = plot.estimates_over_workers(model, profile, cluster, workers,
                                            epoch_samples=epoch_samples_for(args, profile.dnn))
    ax = plot.phase_breakdown(dict(zip(map(str, workers), estimates)), xlabel="workers")
    ax.set_title(f"{args.model} model, {profile.name or args.profile} on "
                 f"{cluster.name or 'cluster'}", fontsize="medium")
    return ax


def _plot_gantt(args, plot):
    if args.workers < 1 or args.steps < 1:
        flag = "--workers" if args.workers < 1 else "--steps"
        raise CliError(f"{flag}: must be >= 1")
    cap = quantities(args.per_flow_cap, "B/s", "--per-flow-cap")[0] if args.per_flow_cap else None
    trace = trace_from_arg(args.trace)
    result = simulate(trace, args.workers, quantities(args.bandwidth, "B/s", "--bandwidth")[0],
                      args.mode, args.sharing, steps=args.steps, warmup=0, seed=args.seed,
                      per_flow_cap=cap, record=True)
    ax = plot.gantt(result)
    ax.set_title(f"{trace.name or args.trace}: {args.mode} SGD, {args.sharing} sharing, "
                 f"{args.workers} workers", fontsize="medium")
    return ax


def _plot_search_space(args, plot):
    if args.model != "layerwise":
        raise CliError("--model: the search space is Yan et al. 2015's; use --model layerwise")
    if args.working_set is None:
        args.working_set = "layer"  # as `perfmodel optimize` does
    model = model_from_args(args)
    dnn, cluster = resolve_spec(args.dnn or DEFAULTS["dnn"], "dnn"), cluster_from_args(args)
    limit = model_parallelism_limit(dnn, args.max_workers_per_replica)
    configs = [t.config() for t in resource_triples(args.machines or cluster.machines,
                                                    max_workers=limit)]
    samples, pricer = epoch_samples_for(args, dnn.name), Pricer(model, dnn, cluster)
    ranked = []
    with progress_bar(len(configs), "configurations") as tick:  # slow on ImageNet-22K
        for done, config in enumerate(configs, 1):
            ranked += rank_configs(model, dnn, cluster, [config], epoch_samples=samples,
                                   pricer=pricer, max_workers_per_replica=limit)
            tick(done)
    ax = plot.search_space(ranked)
    ax.set_title(f"{dnn.name} on {len(configs)} configurations of {cluster.name or 'cluster'}",
                 fontsize="medium")
    return ax


def _plot_sweep(args, plot):
    try:
        rows = read_table(args.table)
    except SpecError as err:  # not a table's suffix, not a table, unreadable
        raise CliError(f"--table: {err}") from None
    for number, row in enumerate(rows, 1):
        value = row.get(args.y) if isinstance(row, dict) else None
        if isinstance(value, float) and not math.isfinite(value):
            raise CliError(f"--table {args.table}: row {number}: {args.y} is {value}")
    try:
        return plot.sweep_curves(rows, x=args.x, y=args.y)
    except ValueError as err:
        raise CliError(f"--table {args.table}: {err}") from None


def run(args) -> str:
    plot = figures
    if Path(args.output).suffix.lower().lstrip(".") not in plot.FORMATS:
        raise CliError(f"--output: {args.output!r} must end in .png or .svg")
    try:
        plot.pyplot()  # its ImportError names the extra to install
    except ImportError as err:
        raise CliError(f"plot: {err}") from None
    if args.kind == "cdf":  # exactly what `perfmodel place --plot` draws
        run_place(argparse.Namespace(**{**vars(args), "plot": args.output, "format": "json"}))
        return f"wrote {args.output}\n"
    draw = {"scalability": _plot_scalability, "phases": _plot_phases, "gantt": _plot_gantt,
            "search-space": _plot_search_space, "sweep": _plot_sweep}[args.kind]
    plot.save(draw(args, plot), args.output, close=True)
    return f"wrote {args.output}\n"
