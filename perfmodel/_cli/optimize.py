"""`perfmodel optimize`: the best configuration, by the dynamic program or the model-agnostic search.

The CLI is the only part of perfmodel that imports the optimizer.
"""

from __future__ import annotations

from optimizer.dp import optimize, useful_triples
from optimizer.rank import rank_configs, space_spread
from optimizer.search import search
from optimizer.space import model_parallelism_limit

from .common import (
    DEFAULTS,
    CliError,
    cluster_from_args,
    epoch_samples_for,
    human_units,
    json_text,
    model_from_args,
    parse_configs,
    profile_from_args,
    progress_bar,
    resolve_spec,
    table_text,
)

__all__ = ["run"]


def _optimize_layerwise(args) -> str:
    if args.min_efficiency is not None:
        raise CliError("--min-efficiency: applies to the coarse models (--model sync|allreduce)")
    if args.working_set is None:
        args.working_set = "layer"  # the per-layer cache model keeps the program exact
    model = model_from_args(args)
    dnn, cluster = resolve_spec(args.dnn or DEFAULTS["dnn"], "dnn"), cluster_from_args(args)
    samples = epoch_samples_for(args, dnn.name)
    machines = args.machines or cluster.machines
    limit = model_parallelism_limit(dnn, args.max_workers_per_replica)
    triples = sum(1 for _ in useful_triples(machines, limit))
    with progress_bar(triples, "resource triples") as tick:
        result = optimize(model, dnn, cluster, machines=args.machines, top=args.top,
                          epoch_samples=samples, exhaustive=args.exhaustive, progress=tick,
                          max_workers_per_replica=limit)
    data = result.to_dict()
    data["exhaustive"] = bool(args.exhaustive)
    data["exact"] = result.meta["exact"]
    for key in ("max_workers_per_replica", "limit_binding", "unlimited_best"):
        data[key] = result.meta.get(key)
    extra = _rank_and_spread(args, model, dnn, cluster, samples, data)
    if args.format == "json":
        return json_text(data)
    best = data["best"]
    rows = [{"rank": i, "W/R/PS": f"{c['n_workers']}/{c['n_replicas']}/{c['n_ps']}",
             "machines": c["machines"], "epoch_min": c["epoch_time"] / 60,
             "samples_per_s": c["throughput"], "bottleneck": c["bottleneck"]}
            for i, c in enumerate(data["ranked"], 1)]
    layers = [{"layer": l["name"], "P": l["partitions"], "H": l["threads"], "R": l["replicas"],
               "workers": ",".join(map(str, l["workers"]))} for l in best["layers"]]
    head = (f"best for {dnn.name} on {args.machines or cluster.machines} machines of "
            f"{cluster.name or 'the cluster'} (Yan et al. 2015 layer-wise model, dynamic program): "
            f"{best['n_workers']} workers x {best['n_replicas']} replicas, {best['n_ps']} "
            f"parameter servers, epoch {best['epoch_time'] / 60:.2f} min for {samples:,} samples\n"
            f"searched {result.meta['triples']} resource triples ({data['n_evaluated']:,} layer "
            f"states) in {data['seconds']:.2f} s\n" + _limit_text(data))
    return (head + table_text(rows, ["rank", "W/R/PS", "machines", "epoch_min", "samples_per_s",
                                 "bottleneck"])
            + "\nper-layer plan of the best:\n" + table_text(layers, ["layer", "P", "H", "R", "workers"])
            + extra)


def _limit_text(data: dict) -> str:
    """One line on the model-parallelism limit, when there is one."""
    limit = data["max_workers_per_replica"]
    if limit is None:
        return ""
    text = f"model parallelism limited to {limit} workers per replica (the DNN's architecture; " \
           f"--max-workers-per-replica to change)"
    if data.get("limit_binding"):
        other = data["unlimited_best"]
        text += (f"; without the limit {other['config']} would take "
                 f"{other['epoch_time'] / 60:.2f} min")
    elif data.get("limit_binding") is False:
        text += "; the limit does not bind"
    return text + "\n"


def _rank_and_spread(args, model, dnn, cluster, samples, data) -> str:
    """``--rank`` and ``--spread``: add them to ``data`` and return their text."""
    text = ""
    if args.rank:
        ranked = [r.to_dict() for r in rank_configs(model, dnn, cluster, parse_configs(
            args.rank, "--rank"), epoch_samples=samples,
            max_workers_per_replica=args.max_workers_per_replica)]
        data["rank"] = ranked
        rows = [dict(r, rank=i, epoch_min=r["epoch_time"] / 60) for i, r in enumerate(ranked, 1)]
        text += "\nranking of the given configurations (each at its best plan):\n" + table_text(
            rows, ["rank", "config", "epoch_min"])
    if args.spread:
        best, worst, count = space_spread(model, dnn, cluster, machines=args.machines,
                                          epoch_samples=samples,
                                          max_workers_per_replica=args.max_workers_per_replica)
        data["spread"] = {"best": best.to_dict(), "worst": worst.to_dict(), "configurations": count,
                          "ratio": worst.epoch_time / best.epoch_time}
        text += (f"\nspread over all {count} configurations: best {best.to_dict()['config']} "
                 f"{best.epoch_time / 60:.2f} min, worst {worst.to_dict()['config']} "
                 f"{worst.epoch_time / 60:.2f} min ({worst.epoch_time / best.epoch_time:.1f}x)\n")
    return text


def run(args) -> str:
    if args.max_workers_per_replica is not None and args.max_workers_per_replica < 1:
        raise CliError(f"--max-workers-per-replica: must be >= 1, got {args.max_workers_per_replica}")
    if args.model == "layerwise":
        return _optimize_layerwise(args)
    if args.max_workers_per_replica is not None:
        raise CliError("--max-workers-per-replica: applies to --model layerwise (model parallelism)")
    model = model_from_args(args)
    profile, cluster = profile_from_args(args), cluster_from_args(args)
    machines = args.machines or cluster.machines
    with progress_bar(machines * (machines + 1) // 2, "configurations") as tick:
        result = search(model, profile, cluster, machines=args.machines, objective=args.objective,
                        top=args.top, epoch_samples=epoch_samples_for(args, profile.dnn),
                        min_efficiency=args.min_efficiency, progress=tick)
    data = result.to_dict()
    data["exhaustive"] = True  # the coarse search enumerates every configuration
    if args.format == "json":
        return json_text(data)
    rows = []
    for rank, cand in enumerate(data["ranked"], 1):
        row = human_units(cand)
        row["rank"] = rank
        rows.append(row)
    columns = ["rank", "n_replicas", "n_ps", "machines", "step_ms", "throughput", "epoch_min",
               "bottleneck"]
    best = data["best"]
    head = (f"best for {args.objective} with {args.machines or cluster.machines} machines "
            f"({args.model} model, profile {profile.name}, cluster {cluster.name}): "
            f"{best['n_replicas']} workers, {best['n_ps']} parameter servers, "
            f"{best['throughput']:.1f} samples/s\n"
            f"evaluated {data['n_evaluated']} configurations in {data['seconds'] * 1e3:.1f} ms\n")
    return head + table_text(rows, columns)
