"""`perfmodel predict`: step time and throughput of one model over a grid of configurations."""

from __future__ import annotations

from ..layerwise import COMPONENTS, PHASE_OF
from ..sweep import grid_records
from .common import (
    DEFAULTS,
    MAX_GRID_POINTS,
    CliError,
    check_sim_size,
    cluster_from_args,
    csv_text,
    epoch_samples_for,
    human_units,
    json_text,
    model_from_args,
    parse_configs,
    parse_int_range,
    profile_from_args,
    quantities,
    resolve_spec,
    stamped_records,
    table_text,
)
from .measured import check_selection_flags, selection_of

__all__ = ["run"]


def _layer_rows(est) -> list[dict]:
    rows = []
    for layer in est.meta["layers"]:
        row = {"layer": layer["name"], "P": layer["partitions"], "H": layer["threads"],
               "R": layer["replicas"]}
        row.update({f"{PHASE_OF[c]}_ms": layer[c] * 1e3 for c in COMPONENTS[:5]})
        row["epoch_min"] = layer["epoch_share"] / 60.0
        rows.append(row)
    return rows


def _predict_layerwise(args) -> str:
    model = model_from_args(args)
    dnn, cluster = resolve_spec(args.dnn or DEFAULTS["dnn"], "dnn"), cluster_from_args(args)
    samples = epoch_samples_for(args, dnn.name)
    configs = parse_configs(args.config or "4/4/4")
    records, text = [], []
    for cfg in configs:
        est = model.estimate(dnn, cluster, cfg.replace(epoch_samples=samples))
        record = {"n_workers": cfg.n_workers, "n_replicas": cfg.n_replicas, "n_ps": cfg.n_ps}
        record.update(est.to_dict())
        meta = record.pop("meta")
        record["layers"] = meta["layers"]
        record["weight_reads"] = {k: meta[k] for k in ("M_w_min", "M_w_max", "M_w")}
        records.append(record)
        phases = ", ".join(f"{k} {v * samples / 60:.3g}" for k, v in est.phases.items())
        text.append(f"{dnn.name} on {cluster.name or 'cluster'}, {cfg.n_workers} workers x "
                    f"{cfg.n_replicas} replicas, {cfg.n_ps} PS, {samples:,} samples: "
                    f"epoch {est.epoch_time / 60:.3f} min ({est.throughput:.1f} samples/s), "
                    f"bottleneck {est.bottleneck} (layer {meta['bottleneck_layer']})\n"
                    f"epoch minutes by component: {phases}\n"
                    f"weight read per sync: M_w {meta['M_w']:.4g} s in "
                    f"[{meta['M_w_min']:.4g}, {meta['M_w_max']:.4g}] (eqs. 11, 10)\n"
                    + table_text(_layer_rows(est), ["layer", "P", "H", "R", "U_f_ms", "M_f_ms",
                                                "U_b_ms", "M_b_ms", "U_w_ms", "epoch_min"]))
    if args.format == "json":
        return json_text(stamped_records("predict", "layerwise", records))
    if args.format == "csv":
        return csv_text([{k: v for k, v in r.items() if k not in ("layers", "weight_reads")}
                     for r in records])
    return "\n".join(text)


def _interval_lines(level: float, sources: dict) -> str:
    """What made the intervals: one source, or each with its key in the table."""
    head = f"throughput_low/high: {100 * level:.0f}% interval"
    if len(sources) <= 1:
        return f"{head} from {next(iter(sources), 'the leave-one-out residuals')}\n"
    return head + " from (column interval)\n" + "".join(
        f"  {key}: {source}\n" for source, key in sources.items())


def run(args) -> str:
    check_selection_flags(args)
    if args.model == "layerwise":
        return _predict_layerwise(args)
    profile, cluster = profile_from_args(args), cluster_from_args(args)
    selection = selection_of(args, profile, cluster) if args.measurements else None
    model = model_from_args(args) if selection is None else selection.chosen
    workers = parse_int_range(args.workers, "--workers")
    bandwidths = quantities(args.bandwidth, "B/s", "--bandwidth") if args.bandwidth else None
    n_ps = parse_int_range(args.ps, "--ps") if args.ps else None
    points = len(workers) * len(bandwidths or [0]) * len(n_ps or [0])
    if points > MAX_GRID_POINTS:
        raise CliError(f"--workers: {points:,} configurations to predict; at most "
                       f"{MAX_GRID_POINTS:,} (use `perfmodel sweep` for larger grids)")
    if args.model == "sim":
        check_sim_size(workers, 1)
    records = grid_records(model, profile, cluster, workers=workers, bandwidths=bandwidths,
                           n_ps=n_ps, epoch_samples=epoch_samples_for(args, profile.dnn))
    if selection is not None and args.format == "json":   # which model answered, and why
        records = [dict(r, model=model.name, why=model.why, calibration=dict(model.overrides),
                        suggested_run=selection.suggested_run) for r in records]
    if args.format == "json":
        name = getattr(model, "name", None) or args.model
        return json_text(stamped_records("predict", name, records))
    if args.format == "csv":
        return csv_text(records)
    rows = [human_units(r) for r in records]
    columns = ["workers", "n_ps", "bandwidth_Gbps", "step_ms", "throughput", "bottleneck"]
    if any("epoch_min" in r for r in rows):
        columns.insert(5, "epoch_min")
    sources: dict = {}   # what made each interval, keyed 1, 2, ... in the table
    if any("throughput_interval" in r for r in rows):
        columns[columns.index("throughput") + 1:1] = ["throughput_low", "throughput_high"]
        for r in rows:
            r["throughput_low"], r["throughput_high"] = r.pop("throughput_interval", ("", ""))
            source = r.pop("interval_source", None)
            if source:
                r["interval"] = sources.setdefault(source, str(len(sources) + 1))
        if len(sources) > 1:
            columns.insert(columns.index("throughput_high") + 1, "interval")
    name = f"selected {model.name}" if args.measurements else args.model
    overlap = getattr(model, "overlap", None)
    said = "" if overlap is None else f"; overlap {'on' if overlap else 'off'}"
    title = (f"{name} model, profile {profile.name or args.profile}, "
             f"batch {profile.batch_size}{said}; throughput in samples/s\n")
    if args.measurements:
        title += f"chosen: {model.why}\n" + _interval_lines(model.level, sources)
    elif "throughput_low" in columns and args.model in _INTERVAL_TEXT:  # say what it means
        title += f"throughput_low/high: {100 * model.level:g}% {_INTERVAL_TEXT[args.model]}\n"
    floor = [f"{r['workers']} workers x {r['n_ps']} servers" for r in records
             if r.get("below_floor")]
    note = (f"warning: below the physical floor (bytes over the busiest link, or the compute): "
            f"{', '.join(floor)}; the model promises more than the hardware can carry\n"
            if floor else "")
    return title + table_text(rows, columns) + note


#: What a model's own throughput interval is (`predict` prints it above the table).
_INTERVAL_TEXT = {"sim": "Student-t interval of the mean over the replications",
                  "gst": "range of single iterations' speed (GST percentiles), not of the mean"}
