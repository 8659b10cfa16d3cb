"""The ``perfmodel`` command: parse arguments, call the library, format results.

No math lives here.  Exit codes: 0 ok, 1 infeasible, 2 bad input (one line on
stderr naming the file or flag and the field, never a traceback).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io as _stdio
import json
import sys
from pathlib import Path

from . import io, registry, units, zoo
from .errors import Infeasible, SpecError
from .specs import Cluster, Config, Profile

__all__ = ["main", "build_parser", "parse_int_range", "DEFAULTS"]

#: The embedded defaults: ``perfmodel optimize`` answers seed 004's question
#: (its ImageNet-22K DNN on its 20-machine cluster); the coarse models default
#: to a measured ResNet-50 profile on AWS p3.2xlarge machines (seed 003's GPU
#: testbed).
DEFAULTS = {"profile": "zoo:resnet50-pipedream", "cluster": "zoo:aws-p3.2xlarge",
            "dnn": "zoo:adam-imagenet22k", "layerwise_cluster": "zoo:yan2015",
            "epoch_samples": 1_281_167}  # ImageNet-1k training set


class CliError(Exception):
    """A bad command-line value: ``flag`` and what is wrong with it."""


# ---------------------------------------------------------------- parsing helpers
def parse_int_range(text: str, flag: str) -> list[int]:
    """``"1-16"``, ``"1-16:2"``, ``"1,2,4,8"`` or ``"8"`` -> list of ints."""
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        try:
            if "-" in part:
                span, _, step = part.partition(":")
                lo, hi = (int(x) for x in span.split("-", 1))
                out.extend(range(lo, hi + 1, int(step) if step else 1))
            else:
                out.append(int(part))
        except ValueError:
            raise CliError(f"{flag}: cannot read {text!r} (use e.g. 1-16, 1-16:2 or 1,2,4)") from None
    if not out:
        raise CliError(f"{flag}: {text!r} is an empty range")
    return out


def _quantities(text: str, unit: str, flag: str) -> list[float]:
    try:
        return [units.parse(part, unit) for part in text.split(",")]
    except SpecError as err:
        raise CliError(f"{flag}: {err.message}") from None


_ZOO = {"profile": (zoo.profile_names, zoo.profile), "cluster": (zoo.cluster_names, zoo.cluster),
        "dnn": (zoo.names, zoo.load)}


def _resolve(source: str, kind: str):
    """``zoo:NAME``, a zoo name, or a file path -> spec."""
    name = source[4:] if source.startswith("zoo:") else source
    names, get = _ZOO[kind]
    if source.startswith("zoo:") or (not Path(source).exists() and name in names()):
        return get(name)
    return io.load(source, kind)


def _epoch_samples(args, dnn_name: str = "") -> int:
    """The --epoch-samples flag, else the dataset size of a zoo DNN, else ImageNet-1k."""
    if args.epoch_samples is not None:
        return args.epoch_samples
    return zoo.dataset_samples(dnn_name) or DEFAULTS["epoch_samples"]


def parse_configs(text: str, flag: str = "--config") -> list[Config]:
    """``"4/4/4"`` or ``"4/4/4,2/9/2"`` (workers/replicas/servers) -> Configs."""
    out = []
    for part in text.split(","):
        bits = part.strip().split("/")
        try:
            w, r, s = (int(b) for b in bits)
        except ValueError:
            raise CliError(f"{flag}: cannot read {part!r} (use W/R/PS, e.g. 4/4/4)") from None
        try:
            out.append(Config(n_workers=w, n_replicas=r, n_ps=s))
        except SpecError as err:
            raise CliError(f"{flag}: {part}: {err}") from None
    return out


_PROFILE_FLAGS = {"model_bytes": "B", "t_forward": "s", "t_backward": "s", "t_update": "s"}


def _workload(args) -> Profile:
    profile = _resolve(args.profile, "profile")
    changes = {}
    for name, unit in _PROFILE_FLAGS.items():
        value = getattr(args, name)
        if value is not None:
            changes[name] = _quantities(value, unit, "--" + name.replace("_", "-"))[0]
    if args.batch_size is not None:
        changes["batch_size"] = args.batch_size
    try:
        return profile.replace(**changes) if changes else profile
    except SpecError as err:  # a flag's value broke a profile rule: name the flag
        raise CliError(f"--{err.field.replace('_', '-')}: {err.message}") from None


def _cluster(args) -> Cluster:
    default = DEFAULTS["layerwise_cluster" if args.model == "layerwise" else "cluster"]
    cluster = _resolve(args.cluster or default, "cluster")
    changes = {}
    if getattr(args, "machines", None) is not None and args.machines > cluster.machines:
        changes["machines"] = args.machines
    for flag, field in (("link_efficiency", "link_efficiency"), ("sharing_weight", "sharing_weight")):
        if getattr(args, flag, None) is not None:
            changes[field] = getattr(args, flag)
    if getattr(args, "per_flow_cap", None) is not None:
        changes["per_flow_cap"] = _quantities(args.per_flow_cap, "B/s", "--per-flow-cap")[0]
    try:
        return cluster.replace(**changes) if changes else cluster
    except SpecError as err:  # a flag's value broke a cluster rule: name the flag
        raise CliError(f"--{err.field.replace('_', '-')}: {err.message}") from None


_MODEL_FLAGS = {"sync": ("sharing", "overlap"), "allreduce": ("algorithm", "overlap"),
                "gst": ("sigma", "cv", "units", "interval", "level"),
                "async": ("discipline", "rho_threshold", "overlap", "residual"),
                "lin": ("discipline", "rho_threshold", "residual"),
                "cynthia": (),
                "sim": ("sharing", "overlap", "jitter", "replications", "level"),
                "layerwise": ("mw_position", "cache_model", "threads", "working_set")}


def _model(args):
    options = {}
    for flag in _MODEL_FLAGS[args.model]:
        value = getattr(args, flag, None)
        options[flag] = (True if value else None) if flag == "overlap" else value
    for flag in {f for flags in _MODEL_FLAGS.values() for f in flags} - set(options):
        if getattr(args, flag, None) not in (None, False):
            raise CliError(f"--{flag.replace('_', '-')}: not an option of --model {args.model}")
    return registry.make(args.model, **options)


# ---------------------------------------------------------------- output
def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _table(rows: list[dict], columns: list[str]) -> str:
    cells = [[_fmt(r.get(c, "")) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) if cells else len(c)
              for i, c in enumerate(columns)]
    lines = ["  ".join(c.rjust(w) for c, w in zip(columns, widths))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(row, widths)) for row in cells]
    return "\n".join(lines) + "\n"


def _csv(rows: list[dict]) -> str:
    flat = []
    for r in rows:
        row = {k: v for k, v in r.items() if k != "phases"}
        row.update({f"phase_{k}": v for k, v in r.get("phases", {}).items()})
        flat.append(row)
    columns = list(dict.fromkeys(k for row in flat for k in row))
    buf = _stdio.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(flat)
    return buf.getvalue()


def _json(data) -> str:
    return json.dumps(data, indent=2, allow_nan=False) + "\n"


def _human(record: dict) -> dict:
    """Rows for tables: people's units."""
    out = dict(record)
    if "bandwidth" in out:
        out["bandwidth_Gbps"] = out.pop("bandwidth") * 8 / 1e9
    out["step_ms"] = out.pop("step_time") * 1e3
    if out.get("epoch_time") is not None:
        out["epoch_min"] = out.pop("epoch_time") / 60.0
    return out


@contextlib.contextmanager
def _progress(total: int, unit: str):
    """A progress bar on stderr that appears only when a search passes one second
    (tqdm's ``delay``) and only on a terminal (``disable=None``); yields a callback."""
    from tqdm import tqdm

    with tqdm(total=total, unit=f" {unit}", delay=1.0, disable=None, file=sys.stderr,
              leave=False) as bar:
        def tick(done: int) -> None:
            bar.update(done - bar.n)
        yield tick


# ---------------------------------------------------------------- commands
def cmd_zoo(args) -> str:
    if args.action == "list":
        data = {"dnns": zoo.names(), "profiles": zoo.profile_names(),
                "clusters": zoo.cluster_names()}
        if args.format == "json":
            return _json(data)
        return "".join(f"{kind}:\n" + "".join(f"  {n}\n" for n in names)
                       for kind, names in data.items())
    if args.action == "schema":
        if args.out:
            paths = io.write_schemas(args.out)
            return "".join(f"{p}\n" for p in paths)
        return _json(io.json_schemas())
    if not args.name:
        raise CliError("zoo show: NAME is required (see `perfmodel zoo list`)")
    name = args.name[4:] if args.name.startswith("zoo:") else args.name
    if name in zoo.names():
        dnn = zoo.load(name)
        if args.format == "json":
            return _json(dnn.to_dict())
        head = (f"{dnn.name}: {len(dnn.layers)} layers, {dnn.n_params:,} parameters, "
                f"{dnn.n_connections:,} connections, {dnn.flops / 1e9:.3f} GFLOP forward per sample\n"
                f"source: {dnn.source}\n")
        rows = [{"layer": l.name, "kind": l.kind, "out_shape": "x".join(map(str, l.out_shape)),
                 "weights": l.weights, "connections": l.connections} for l in dnn.layers]
        return head + _table(rows, ["layer", "kind", "out_shape", "weights", "connections"])
    for kind, getter, names in (("profile", zoo.profile, zoo.profile_names()),
                                ("cluster", zoo.cluster, zoo.cluster_names())):
        if name in names:
            spec = getter(name)
            if args.format == "json":
                return _json(spec.to_dict())
            return "".join(f"{k}: {v}\n" for k, v in spec.to_dict().items())
    raise CliError(f"zoo show: no DNN, profile or cluster called {name!r} (see `perfmodel zoo list`)")


def _layer_rows(est) -> list[dict]:
    rows = []
    for layer in est.meta["layers"]:
        row = {"layer": layer["name"], "P": layer["partitions"], "H": layer["threads"],
               "R": layer["replicas"]}
        row.update({f"{c}_ms": layer[c] * 1e3 for c in ("U_f", "M_f", "U_b", "M_b", "U_w")})
        row["epoch_min"] = layer["epoch_share"] / 60.0
        rows.append(row)
    return rows


def _predict_layerwise(args) -> str:
    model = _model(args)
    dnn, cluster = _resolve(args.dnn or DEFAULTS["dnn"], "dnn"), _cluster(args)
    samples = _epoch_samples(args, dnn.name)
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
                    + _table(_layer_rows(est), ["layer", "P", "H", "R", "U_f_ms", "M_f_ms",
                                                "U_b_ms", "M_b_ms", "U_w_ms", "epoch_min"]))
    if args.format == "json":
        return _json(records)
    if args.format == "csv":
        return _csv([{k: v for k, v in r.items() if k not in ("layers", "weight_reads")}
                     for r in records])
    return "\n".join(text)


def cmd_predict(args) -> str:
    if args.model == "layerwise":
        return _predict_layerwise(args)
    profile, cluster = _workload(args), _cluster(args)
    model = _selected(args, profile, cluster) if args.measurements else _model(args)
    workers = parse_int_range(args.workers, "--workers")
    bandwidths = _quantities(args.bandwidth, "B/s", "--bandwidth") if args.bandwidth else None
    n_ps = parse_int_range(args.ps, "--ps") if args.ps else None
    from .sweep import grid_records

    records = grid_records(model, profile, cluster, workers=workers, bandwidths=bandwidths,
                           n_ps=n_ps, epoch_samples=_epoch_samples(args, profile.dnn))
    if args.measurements and args.format == "json":   # which model answered, and why
        records = [dict(r, model=model.name, why=model.why,
                        calibration=dict(model.overrides)) for r in records]
    if args.format == "json":
        return _json(records)
    if args.format == "csv":
        return _csv(records)
    rows = [_human(r) for r in records]
    columns = ["workers", "n_ps", "bandwidth_Gbps", "step_ms", "throughput", "bottleneck"]
    if any("epoch_min" in r for r in rows):
        columns.insert(5, "epoch_min")
    if any("throughput_interval" in r for r in rows):
        columns[columns.index("throughput") + 1:1] = ["throughput_low", "throughput_high"]
        for r in rows:
            r["throughput_low"], r["throughput_high"] = r.pop("throughput_interval", ("", ""))
    name = f"selected {model.name}" if args.measurements else args.model
    title = (f"{name} model, profile {profile.name or args.profile}, "
             f"batch {profile.batch_size}; throughput in samples/s\n")
    if args.measurements:
        title += (f"chosen: {model.why}\nthroughput_low/high: {100 * model.level:.0f}% interval "
                  f"from the leave-one-out residuals\n")
    elif "throughput_low" in columns and args.model in _INTERVAL_TEXT:  # say what it means
        title += f"throughput_low/high: {100 * model.level:g}% {_INTERVAL_TEXT[args.model]}\n"
    return title + _table(rows, columns)


#: What a model's own throughput interval is (`predict` prints it above the table).
_INTERVAL_TEXT = {"sim": "Student-t interval of the mean over the replications",
                  "gst": "range of single iterations' speed (GST percentiles), not of the mean"}


def _add_selection_flags(p) -> None:
    """--simulate and --link: what `--measurements` selects among, and the regime."""
    p.add_argument("--simulate", action="store_true",
                   help="with --measurements: the trace-driven simulator among the candidates "
                        "(as the validation matrix; up to about 1.5 s more)")
    p.add_argument("--link", choices=("fair", "fifo"),
                   help="with --measurements: how the server's link queue shares bandwidth, "
                        "when known (rules out the models of the other sharing)")
    p.add_argument("--cpu-capacity", type=float, metavar="CORES",
                   help="with --measurements carrying server_cpu and worker_cpu: cores a "
                        "server or worker may use; caps the chosen model at the runs' CPU "
                        "ceiling (without it the readings are unused)")


def _selected(args, profile, cluster):
    """The model chosen and calibrated on --measurements (perfmodel.select)."""
    from .select import select_model

    selection = select_model(profile, cluster, io.load_measurements(args.measurements),
                             overlap=bool(args.overlap), lossy=bool(getattr(args, "lossy", False)),
                             simulate=bool(getattr(args, "simulate", False)),
                             link_sharing=getattr(args, "link", None),
                             cpu_capacity=getattr(args, "cpu_capacity", None))
    return selection.chosen


def _optimize_layerwise(args) -> str:
    from optimizer.dp import optimize  # the only places perfmodel imports optimizer

    if args.min_efficiency is not None:
        raise CliError("--min-efficiency: applies to the coarse models (--model sync|allreduce)")
    if args.working_set is None:
        args.working_set = "layer"  # the per-layer cache model keeps the program exact
    model = _model(args)
    dnn, cluster = _resolve(args.dnn or DEFAULTS["dnn"], "dnn"), _cluster(args)
    samples = _epoch_samples(args, dnn.name)
    from optimizer.dp import useful_triples

    machines = args.machines or cluster.machines
    with _progress(sum(1 for _ in useful_triples(machines)), "resource triples") as tick:
        result = optimize(model, dnn, cluster, machines=args.machines, top=args.top,
                          epoch_samples=samples, exhaustive=args.exhaustive, progress=tick)
    data = result.to_dict()
    data["exhaustive"] = bool(args.exhaustive)
    data["exact"] = result.meta["exact"]
    extra = _rank_and_spread(args, model, dnn, cluster, samples, data)
    if args.format == "json":
        return _json(data)
    best = data["best"]
    rows = [{"rank": i, "W/R/PS": f"{c['n_workers']}/{c['n_replicas']}/{c['n_ps']}",
             "machines": c["machines"], "epoch_min": c["epoch_time"] / 60,
             "samples_per_s": c["throughput"], "bottleneck": c["bottleneck"]}
            for i, c in enumerate(data["ranked"], 1)]
    layers = [{"layer": l["name"], "P": l["partitions"], "H": l["threads"], "R": l["replicas"],
               "workers": ",".join(map(str, l["workers"]))} for l in best["layers"]]
    head = (f"best for {dnn.name} on {args.machines or cluster.machines} machines of "
            f"{cluster.name or 'the cluster'} (seed 004 layer-wise model, dynamic program): "
            f"{best['n_workers']} workers x {best['n_replicas']} replicas, {best['n_ps']} "
            f"parameter servers, epoch {best['epoch_time'] / 60:.2f} min for {samples:,} samples\n"
            f"searched {result.meta['triples']} resource triples ({data['n_evaluated']:,} layer "
            f"states) in {data['seconds']:.2f} s\n")
    return (head + _table(rows, ["rank", "W/R/PS", "machines", "epoch_min", "samples_per_s",
                                 "bottleneck"])
            + "\nper-layer plan of the best:\n" + _table(layers, ["layer", "P", "H", "R", "workers"])
            + extra)


def _rank_and_spread(args, model, dnn, cluster, samples, data) -> str:
    """``--rank`` and ``--spread``: add them to ``data`` and return their text."""
    from optimizer.rank import rank_configs, space_spread

    text = ""
    if args.rank:
        ranked = [r.to_dict() for r in rank_configs(model, dnn, cluster, parse_configs(
            args.rank, "--rank"), epoch_samples=samples)]
        data["rank"] = ranked
        rows = [dict(r, rank=i, epoch_min=r["epoch_time"] / 60) for i, r in enumerate(ranked, 1)]
        text += "\nranking of the given configurations (each at its best plan):\n" + _table(
            rows, ["rank", "config", "epoch_min"])
    if args.spread:
        best, worst, count = space_spread(model, dnn, cluster, machines=args.machines,
                                          epoch_samples=samples)
        data["spread"] = {"best": best.to_dict(), "worst": worst.to_dict(), "configurations": count,
                          "ratio": worst.epoch_time / best.epoch_time}
        text += (f"\nspread over all {count} configurations: best {best.to_dict()['config']} "
                 f"{best.epoch_time / 60:.2f} min, worst {worst.to_dict()['config']} "
                 f"{worst.epoch_time / 60:.2f} min ({worst.epoch_time / best.epoch_time:.1f}x)\n")
    return text


def cmd_optimize(args) -> str:
    if args.model == "layerwise":
        return _optimize_layerwise(args)
    from optimizer import search

    model = _model(args)
    profile, cluster = _workload(args), _cluster(args)
    machines = args.machines or cluster.machines
    with _progress(machines * (machines + 1) // 2, "configurations") as tick:
        result = search(model, profile, cluster, machines=args.machines, objective=args.objective,
                        top=args.top, epoch_samples=_epoch_samples(args, profile.dnn),
                        min_efficiency=args.min_efficiency, progress=tick)
    data = result.to_dict()
    data["exhaustive"] = True  # the coarse search enumerates every configuration
    if args.format == "json":
        return _json(data)
    rows = []
    for rank, cand in enumerate(data["ranked"], 1):
        row = _human(cand)
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
    return head + _table(rows, columns)


def cmd_place(args) -> str:
    from . import placement as pl
    from .placement import distributions

    topo = pl.topology.from_string(args.topology)
    strategies = (*pl.STRATEGIES, "optimized") if args.strategy == "all" else (args.strategy,)
    options = {"iterations": args.iterations, "warmup": args.warmup, "seed": args.seed,
               "model_bytes": _quantities(args.model_bytes, "B", "--model-bytes")[0]}
    for flag in ("worker_compute", "server_compute"):
        if getattr(args, flag):
            options[flag] = distributions.from_string(getattr(args, flag), "--" + flag.replace("_", "-"))
    if args.engine == "ns3":
        from .placement import ns3

        results = {name: ns3.simulate_ns3(topo, pl.place(topo, name, args.jobs, args.workers,
                                                         seed=args.seed), **options)
                   for name in strategies}
    else:
        results = pl.compare(topo, strategies, args.jobs, args.workers, **options)
    if args.plot:
        from . import plot

        plot.save(plot.latency_cdf(results), args.plot)
    if args.format == "json":
        return _json({name: dict(r.summary(), phases=r.mean_phases()) for name, r in results.items()})
    head = (f"{args.jobs} jobs x (1 PS + {args.workers} workers) on {topo.name or args.topology}, "
            f"{args.iterations} iterations, {args.engine} engine; iteration latency:\n")
    return head + pl.latency_table(results, baseline="random" if "random" in results else None) + "\n"


def _trace(source: str):
    from .sim import Trace

    if source.startswith("zoo:"):
        return zoo.pipedream_trace(source[4:])
    return Trace.load(source)


def cmd_simulate(args) -> str:
    from .sim import chrome_trace, simulate
    from .sim.model import simulate_range

    trace = _trace(args.trace)
    workers = parse_int_range(args.workers, "--workers")
    bandwidth = _quantities(args.bandwidth, "B/s", "--bandwidth")[0]
    cap = _quantities(args.per_flow_cap, "B/s", "--per-flow-cap")[0] if args.per_flow_cap else None
    with _progress(len(workers), "worker counts") as tick:
        done = iter(range(1, len(workers) + 1))
        results = simulate_range(trace, workers, bandwidth, args.mode, args.sharing,
                                 steps=args.steps, warmup=args.warmup, seed=args.seed,
                                 per_flow_cap=cap, progress=lambda _result: tick(next(done)))
    records = [dict(r.summary(), workers=k) for k, r in zip(workers, results)]
    if args.chrome_trace:
        shown = simulate(trace, workers[-1], bandwidth, args.mode, args.sharing,
                         steps=min(args.steps, 20), warmup=0, seed=args.seed, per_flow_cap=cap,
                         record=True)
        io.write_json(chrome_trace(shown), args.chrome_trace)
    if args.format == "json":
        return _json(records)
    rows = [{"workers": r["workers"], "steps_per_s": r["throughput"],
             "samples_per_s": r["sample_throughput"], "step_ms": r["step_time"] * 1e3,
             "bottleneck": r["bottleneck"]} for r in records]
    head = (f"simulated {args.mode} SGD, {args.sharing} sharing, {args.steps} steps per worker "
            f"({trace.name or args.trace})\n")
    return head + _table(rows, ["workers", "steps_per_s", "samples_per_s", "step_ms", "bottleneck"])


def _validate_matrix(args) -> str:
    from .validation import validation_matrix

    only = args.only or ("dl2", "ns3")
    train = tuple(parse_int_range(args.train_workers, "--train-workers"))
    if len(train) > 2:
        raise CliError(f"--train-workers: at most 2 configurations per network, got {len(train)}")
    matrix = validation_matrix(dl2="dl2" in only, ns3="ns3" in only, ns3_path=args.ns3,
                               dnns=args.dnn or None, ns3_train_workers=train)
    if args.format == "json":
        return _json(matrix.to_dict())
    if args.format == "markdown":
        groups = "".join(f"\n\nselected model per {ds} group:\n\n{matrix.groups_markdown(ds)}"
                         for ds in ("dl2", "ns3") if any(c.dataset == ds for c in matrix.cells))
        classes = ("\n\nselected model on ns-3 by regime class:\n\n" + matrix.classes_markdown()
                   if any(c.dataset == "ns3" for c in matrix.cells) else "")
        return matrix.text(markdown=True) + classes + groups + "\n"
    return matrix.text() + "\n\nselected model per group:\n" + matrix.groups_text() + "\n"


def cmd_validate(args) -> str:
    from .dl2 import validate_dl2

    if args.dataset == "matrix":
        return _validate_matrix(args)
    if args.format == "markdown":
        raise CliError("--format markdown: only for `perfmodel validate matrix`")
    report = validate_dl2(dnns=args.dnn or None, train_size=args.train_size)
    if args.format == "json":
        return _json(report.to_dict())
    return report.text() + "\n"


def _calibrate_fit(args) -> str:
    """Per-network calibration (cluster fields, --save), or model tunables (--grid KEY=...)."""
    from .tuning import CALIBRATION_PARAMS, fit_tunables, parse_grid

    if not args.measurements:
        raise CliError("calibrate fit: --measurements FILE is required")
    grid = dict(parse_grid(g) for g in args.grid or ())
    cv = args.cv if args.cv in ("loo", "none") else parse_int_range(args.cv, "--cv")[0]
    cv = None if cv == "none" else cv
    profile = _resolve(args.profile, "profile")
    cluster = _resolve(args.cluster or DEFAULTS["cluster"], "cluster")
    measurements = io.load_measurements(args.measurements)
    options = set(grid) - set(Cluster.__dataclass_fields__)
    if options:  # model tunables (e.g. rho_threshold) live in no file: report only
        if args.save or args.params:
            raise CliError(f"--grid {sorted(options)[0]}: a model option, not a cluster field; "
                           "--save and --params take cluster fields only")
        fit = fit_tunables(args.model or "async", profile, cluster, measurements, grid, cv=cv,
                           objective=args.objective)
        return _json(fit.to_dict()) if args.format == "json" else fit.text() + "\n"
    params = ([p.strip() for p in args.params.split(",")] if args.params
              else list(grid) or list(CALIBRATION_PARAMS))
    cal = _calibration(profile, cluster, measurements, args, params, grid, cv)
    if args.save:
        try:
            cal.save(args.save)
        except OSError as err:
            raise CliError(f"--save: cannot write {args.save}: {err.strerror}") from None
    if args.format == "json":
        return _json(cal.to_dict())
    tail = (f"wrote {args.save}\n" if args.save
            else "(use --save FILE to write the calibrated cluster file)\n")
    return cal.text() + "\n" + tail


def _calibration(profile, cluster, measurements, args, params, grid, cv):
    """calibrate_network with its params/grids errors named by flag."""
    from .tuning import calibrate_network

    try:
        return calibrate_network(profile, cluster, measurements, model=args.model,
                                 params=params, grids=grid, cv=cv, objective=args.objective,
                                 search=args.search,
                                 source=args.measurements)
    except SpecError as err:
        flag = {"params": "--params", "grids": "--grid"}.get(err.field.split(".")[0])
        if flag is None:
            raise
        raise CliError(f"{flag}: {err}") from None


def cmd_calibrate(args) -> str:
    if args.action == "fit":
        return _calibrate_fit(args)
    from . import calibrate as cal

    base = _resolve(args.base, "cluster")
    result = cal.calibrate(quick=args.quick, max_threads=args.threads, seed=args.seed)
    cluster = cal.calibrated_cluster(base, result)
    cluster = cluster.replace(name=f"{base.name or 'cluster'}-calibrated")
    if args.out:
        io.save(cluster, args.out)
    if args.format == "json":
        return _json({"calibration": result.to_dict(), "cluster": cluster.to_dict()})
    tail = f"wrote {args.out}\n" if args.out else "(use --out FILE to write the cluster file)\n"
    return result.summary() + "\n" + tail


def _plot_models(args) -> dict:
    """``--model sync,async,...`` -> {name: model}; each model gets the flags it has.

    A flag is an error only when none of the listed models has it.
    """
    names = list(dict.fromkeys(n.strip() for n in args.model.split(",")))
    for name in names:
        if name not in _MODEL_FLAGS or name == "layerwise":
            coarse = ", ".join(n for n in _MODEL_FLAGS if n != "layerwise")
            raise CliError(f"--model: {name!r} is not one of {coarse}")
    wanted = {f for n in names for f in _MODEL_FLAGS[n]}
    for flag in {f for flags in _MODEL_FLAGS.values() for f in flags} - wanted:
        if getattr(args, flag, None) not in (None, False):
            raise CliError(f"--{flag.replace('_', '-')}: not an option of --model {args.model}")
    models = {}
    for name in names:
        others = {f: None for f in wanted - set(_MODEL_FLAGS[name])}
        models[name] = _model(argparse.Namespace(**{**vars(args), **others, "model": name}))
    return models


def _plot_job(args):
    """(profile, cluster, workers) of `plot scalability|phases`, flags applied."""
    profile, cluster = _workload(args), _cluster(args)
    if args.bandwidth:
        cluster = cluster.replace(nic_bandwidth=_quantities(args.bandwidth, "B/s", "--bandwidth")[0])
    workers = parse_int_range(args.workers, "--workers")
    if sorted(set(workers)) != workers:
        raise CliError(f"--workers: must increase, got {args.workers!r}")
    return profile, cluster, workers


def _plot_scalability(args, plot):
    profile, cluster, workers = _plot_job(args)
    if not 0 <= args.threshold < 1:
        raise CliError(f"--threshold: must be in [0, 1), got {args.threshold}")
    if args.measurements:  # as `predict --measurements`: the selected model, --model unused
        chosen = _selected(args, profile, _cluster(args))
        models = {f"selected {chosen.name}": chosen}
    else:
        models = _plot_models(args)
    ax = plot.model_scalability(models, profile, cluster, workers,
                                epoch_samples=_epoch_samples(args, profile.dnn),
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
                                            epoch_samples=_epoch_samples(args, profile.dnn))
    ax = plot.phase_breakdown(dict(zip(map(str, workers), estimates)), xlabel="workers")
    ax.set_title(f"{args.model} model, {profile.name or args.profile} on "
                 f"{cluster.name or 'cluster'}", fontsize="medium")
    return ax


def _plot_gantt(args, plot):
    from .sim import simulate

    if args.workers < 1 or args.steps < 1:
        flag = "--workers" if args.workers < 1 else "--steps"
        raise CliError(f"{flag}: must be >= 1")
    cap = _quantities(args.per_flow_cap, "B/s", "--per-flow-cap")[0] if args.per_flow_cap else None
    trace = _trace(args.trace)
    result = simulate(trace, args.workers, _quantities(args.bandwidth, "B/s", "--bandwidth")[0],
                      args.mode, args.sharing, steps=args.steps, warmup=0, seed=args.seed,
                      per_flow_cap=cap, record=True)
    ax = plot.gantt(result)
    ax.set_title(f"{trace.name or args.trace}: {args.mode} SGD, {args.sharing} sharing, "
                 f"{args.workers} workers", fontsize="medium")
    return ax


def _plot_search_space(args, plot):
    from optimizer.dp import Pricer  # the only places perfmodel imports optimizer
    from optimizer.rank import rank_configs
    from optimizer.space import resource_triples

    if args.model != "layerwise":
        raise CliError("--model: the search space is seed 004's; use --model layerwise")
    if args.working_set is None:
        args.working_set = "layer"  # as `perfmodel optimize` does
    model = _model(args)
    dnn, cluster = _resolve(args.dnn or DEFAULTS["dnn"], "dnn"), _cluster(args)
    configs = [t.config() for t in resource_triples(args.machines or cluster.machines)]
    samples, pricer = _epoch_samples(args, dnn.name), Pricer(model, dnn, cluster)
    ranked = []
    with _progress(len(configs), "configurations") as tick:  # ~0.1 s each on ImageNet-22K
        for done, config in enumerate(configs, 1):
            ranked += rank_configs(model, dnn, cluster, [config], epoch_samples=samples,
                                   pricer=pricer)
            tick(done)
    ax = plot.search_space(ranked)
    ax.set_title(f"{dnn.name} on {len(configs)} configurations of {cluster.name or 'cluster'}",
                 fontsize="medium")
    return ax


def _plot_sweep(args, plot):
    from .sweep import read_table

    try:
        rows = read_table(args.table)
    except OSError as err:
        raise CliError(f"--table: cannot read {args.table}: {err.strerror}") from None
    except SpecError as err:  # not a table's suffix, or not a table
        raise CliError(f"--table: {err}") from None
    try:
        return plot.sweep_curves(rows, x=args.x, y=args.y)
    except ValueError as err:
        raise CliError(f"--table {args.table}: {err}") from None


def cmd_plot(args) -> str:
    from . import plot

    if Path(args.output).suffix.lower().lstrip(".") not in plot.FORMATS:
        raise CliError(f"--output: {args.output!r} must end in .png or .svg")
    try:
        plot._pyplot()  # its ImportError names the extra to install
    except ImportError as err:
        raise CliError(f"plot: {err}") from None
    if args.kind == "cdf":  # exactly what `perfmodel place --plot` draws
        cmd_place(argparse.Namespace(**{**vars(args), "plot": args.output, "format": "json"}))
        return f"wrote {args.output}\n"
    draw = {"scalability": _plot_scalability, "phases": _plot_phases, "gantt": _plot_gantt,
            "search-space": _plot_search_space, "sweep": _plot_sweep}[args.kind]
    plot.save(draw(args, plot), args.output, close=True)
    return f"wrote {args.output}\n"


def cmd_sweep(args) -> str:
    from .sweep import table_format

    try:
        fmt = table_format(args.out, args.format)
        result = _sweep(args, fmt)
    except SpecError as err:  # name the flag (or the file), not the library's field
        raise _sweep_error(err) from None
    n = len(result.records)
    if n and result.errors == n:
        raise Infeasible(f"all {n} points failed, e.g. {result.records[0]['error']} "
                         f"(rows written to {args.out})")
    return (f"sweep: {n} points ({result.computed} computed, {result.skipped} already in "
            f"{args.out}), {result.errors} with errors, {result.seconds:.2f} s -> {args.out} "
            f"({fmt})\n")


def _sweep(args, fmt: str):
    from .sweep import Grid, sweep

    _model(args)  # every model flag given must be an option of --model
    options = {f: (True if getattr(args, f) else None) if f == "overlap" else getattr(args, f, None)
               for f in _MODEL_FLAGS[args.model]}
    if args.model == "layerwise":
        workload = _resolve(args.dnn or DEFAULTS["dnn"], "dnn")
        samples = _epoch_samples(args, workload.name)
    else:
        workload = _workload(args)
        samples = _epoch_samples(args, workload.dnn)
    grid = Grid(model=args.model, workload=workload, cluster=_cluster(args),
                workers=parse_int_range(args.workers, "--workers"),
                n_ps=parse_int_range(args.ps, "--ps") if args.ps else None,
                bandwidth=_quantities(args.bandwidth, "B/s", "--bandwidth") if args.bandwidth else None,
                batch_size=parse_int_range(args.batch, "--batch") if args.batch else None,
                epoch_samples=samples, options={k: v for k, v in options.items() if v is not None})
    return sweep(grid, out=args.out, format=fmt, scheduler=args.scheduler, jobs=args.jobs,
                 chunk_size=args.chunk_size, progress=None)


_SWEEP_FLAGS = {"grid.n_ps": "--ps", "grid.batch_size": "--batch"}


def _sweep_error(err: SpecError) -> CliError:
    if err.source:  # a file (profile, cluster, an --out that is not a sweep table)
        return CliError(str(err))
    name = err.field.removeprefix("grid.")
    return CliError(f"{_SWEEP_FLAGS.get(err.field, '--' + name.replace('_', '-'))}: {err.message}")


# ---------------------------------------------------------------- parser
def _add_job_flags(p: argparse.ArgumentParser, *, with_format: tuple[str, ...],
                   model: str = "sync") -> None:
    p.add_argument("--model", choices=registry.model_names(), default=model,
                   help="performance model (default: %(default)s)")
    p.add_argument("--dnn", help=f"layerwise: DNN FILE or zoo:NAME (default {DEFAULTS['dnn']})")
    p.add_argument("--profile", default=DEFAULTS["profile"],
                   help="coarse profile: FILE (JSON/YAML) or zoo:NAME (default: %(default)s)")
    p.add_argument("--cluster", help=f"cluster: FILE or zoo:NAME (default: {DEFAULTS['cluster']}, "
                                     f"{DEFAULTS['layerwise_cluster']} for --model layerwise)")
    for name, unit in _PROFILE_FLAGS.items():
        p.add_argument("--" + name.replace("_", "-"), metavar=unit,
                       help=f"override the profile's {name} (unit string, e.g. 100MB or 40ms)")
    p.add_argument("--batch-size", type=int, help="override the profile's batch size")
    p.add_argument("--sharing", choices=("ps", "fcfs", "hybrid"),
                   help="link sharing of the sync model (default hybrid, seed 003 eq. 9)")
    p.add_argument("--sharing-weight", type=float, help="weight of PS against FCFS (default 0.5)")
    p.add_argument("--overlap", action="store_true", help="overlap communication and compute (eq. 10)")
    p.add_argument("--algorithm", choices=("ring", "tree"), help="all-reduce algorithm")
    p.add_argument("--link-efficiency", type=float, help="goodput over line rate (default 1)")
    p.add_argument("--per-flow-cap", help="largest rate of one flow, e.g. 10Gbps")
    p.add_argument("--epoch-samples", type=int,
                   help="samples per epoch (default: the zoo DNN's data set, else ImageNet-1k's "
                        f"{DEFAULTS['epoch_samples']:,})")
    p.add_argument("--mw-position", type=float,
                   help="layerwise: M_w between eq. 11 (0) and eq. 10 (1), default 0.5")
    p.add_argument("--cache-model", choices=("blend", "step"), help="layerwise: cache model")
    p.add_argument("--threads", type=int, help="layerwise: threads per worker (default: cores)")
    p.add_argument("--working-set", choices=("worker", "layer"),
                   help="layerwise: what must fit in cache (default: worker for predict, "
                        "layer for optimize, which keeps the dynamic program exact)")
    p.add_argument("--discipline", choices=("ps", "fcfs", "hybrid"),
                   help="async/lin: link discipline of the MVA (default hybrid, seed 003 eq. 5)")
    p.add_argument("--rho-threshold", type=float, help="async/lin: rho_T of eq. 5 (default 0.6)")
    p.add_argument("--residual", choices=("deterministic", "exponential"),
                   help="async/lin: FCFS residual of eq. 2 (default deterministic, as printed)")
    p.add_argument("--sigma", type=float,
                   help="gst: standard deviation of a worker's step time in seconds (default 0)")
    p.add_argument("--cv", type=float, help="gst: coefficient of variation of a worker's step time")
    p.add_argument("--units", choices=("printed", "sound"),
                   help="gst: eqs. 11/15/16 as printed or dimensionally sound")
    p.add_argument("--interval", choices=("iteration",),
                   help="gst: throughput_low/high from the single-iteration time percentiles")
    p.add_argument("--replications", type=int,
                   help="sim: independent runs; their mean, with a Student-t interval (default 1)")
    p.add_argument("--jitter", type=float,
                   help="sim: CV of compute times (default: the cluster's compute_cv)")
    p.add_argument("--level", type=float, help="gst/sim: interval level (default 0.9)")
    p.add_argument("--format", choices=with_format, default="table")


def _add_place_flags(p: argparse.ArgumentParser) -> None:
    """The scenario flags of `perfmodel place` (and `perfmodel plot cdf`)."""
    p.add_argument("--topology", default="paper",
                   help="paper (8 racks x 8 hosts, 10 Gbps), racks:RxH[@BW], fattree:K, star:N")
    p.add_argument("--jobs", type=int, default=8)
    p.add_argument("--workers", type=int, default=7, help="workers per job (plus one PS)")
    p.add_argument("--strategy", default="all",
                   choices=("all", "colocated", "random", "strided", "clustered", "optimized"))
    p.add_argument("--iterations", type=int, default=100)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--model-bytes", default="97.49MB", help="model size (default ResNet-50's)")
    p.add_argument("--worker-compute", help="e.g. lognormal:0.4,0.2 or pareto:0.3,3 (seconds)")
    p.add_argument("--server-compute", help="same forms as --worker-compute")
    p.add_argument("--engine", choices=("flow", "ns3"), default="flow",
                   help="flow-level max-min (default) or packet-level ns-3 (extra perfmodel[ns3])")


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``perfmodel`` command."""
    parser = argparse.ArgumentParser(
        prog="perfmodel", description="Predict and optimize distributed deep-learning training speed.")
    sub = parser.add_subparsers(dest="command", required=True)

    z = sub.add_parser("zoo", help="built-in DNNs, profiles and clusters")
    z.add_argument("action", choices=("list", "show", "schema"))
    z.add_argument("name", nargs="?", help="name for `show`")
    z.add_argument("--out", help="folder for `schema` (default: print)")
    z.add_argument("--format", choices=("table", "json"), default="table")

    p = sub.add_parser("predict", help="predict step time and throughput over a grid")
    _add_job_flags(p, with_format=("table", "json", "csv"))
    p.add_argument("--config", help="layerwise: W/R/PS, or several: 4/4/4,2/9/2 (default 4/4/4)")
    p.add_argument("--workers", default="1-16", help="workers: 1-16, 1-16:2 or 1,2,4 (default 1-16)")
    p.add_argument("--bandwidth", help="NIC bandwidth(s), e.g. 10Gbps or 1Gbps,10Gbps "
                                       "(default: the cluster's)")
    p.add_argument("--ps", help="parameter servers: 1, 1-4 or 1,2 (default 1)")
    p.add_argument("--measurements", metavar="CSV",
                   help="measured runs of this job (the `calibrate fit` CSV): calibrate every "
                        "model of the runs' mode on them, answer with the one chosen by "
                        "leave-one-out error and regime, with 90%% intervals (--model is then "
                        "not used)")
    p.add_argument("--lossy", action="store_true",
                   help="with --measurements: the link drops packets, so every model first fits "
                        "the chance that a message stalls for one retransmission timeout (the "
                        "cluster's retransmit_timeout, default 200 ms); a step_time_median or "
                        "step_time_std column in the CSV holds it near what the step times "
                        "imply")
    _add_selection_flags(p)

    sw = sub.add_parser("sweep", help="evaluate a grid of configurations on a process pool or "
                                      "a Dask cluster into a resumable CSV/JSONL/Parquet table")
    _add_job_flags(sw, with_format=("csv", "jsonl", "parquet"))
    sw.set_defaults(format=None)  # default: from the suffix of --out
    sw.add_argument("--workers", default="1-16", help="workers: 1-64, 1-64:2 or 1,2,4 (default 1-16)")
    sw.add_argument("--ps", help="parameter servers: 1-4 or 1,2 (default 1; 0 for allreduce)")
    sw.add_argument("--bandwidth", help="NIC bandwidths, e.g. 1Gbps,10Gbps,25Gbps "
                                        "(default: the cluster's)")
    sw.add_argument("--batch", help="batch sizes per worker: 32,64,128 or 32-256:32 "
                                    "(default: the profile's)")
    sw.add_argument("--out", required=True,
                    help="table FILE (.csv, .jsonl or .parquet); finished points in it are "
                         "not computed again")
    sw.add_argument("--scheduler", help="Dask scheduler address, e.g. tcp://10.0.0.1:8786 "
                                        "(extra perfmodel[dask]; default: a local process pool)")
    sw.add_argument("--jobs", type=int, help="processes of the local pool (default: CPU count, "
                                             "only when the grid would take over 2 s in one "
                                             "process; 1: no pool)")
    sw.add_argument("--chunk-size", type=int, default=250, help="points per task (default 250)")

    o = sub.add_parser("optimize", help="find the best configuration (default: seed 004's "
                                        "ImageNet-22K DNN on its 20-machine cluster)")
    _add_job_flags(o, with_format=("table", "json"), model="layerwise")
    o.add_argument("--machines", type=int, help="machine budget (default: the cluster's)")
    o.add_argument("--objective", choices=("throughput", "time", "cost"), default="throughput")
    o.add_argument("--top", type=int, default=5, help="ranked configurations to show")
    o.add_argument("--rank", help="layerwise: rank these W/R/PS configurations, e.g. seed 004 "
                                   "Table 1: 4/4/4,4/4/2,2/9/2")
    o.add_argument("--spread", action="store_true",
                   help="layerwise: best and worst over every configuration (seed 004 Fig. 15)")
    o.add_argument("--min-efficiency", type=float,
                   help="coarse models: keep configurations whose scaling efficiency "
                        "(throughput / workers / one worker's) is at least this")
    o.add_argument("--exhaustive", action="store_true",
                   help="brute force instead of the dynamic program (small instances only; "
                        "the coarse search always is exhaustive)")

    pl = sub.add_parser("place", help="iteration latency of jobs placed in a datacenter (seed 002)")
    _add_place_flags(pl)
    pl.add_argument("--plot", help="save the latency CDFs to this PNG or SVG (extra perfmodel[plot])")
    pl.add_argument("--format", choices=("table", "json"), default="table")

    sm = sub.add_parser("simulate", help="trace-driven simulation (seeds 000 and 003)")
    sm.add_argument("--trace", required=True,
                    help="trace FILE (JSON/YAML) or zoo:NAME (a PipeDream layer profile, e.g. "
                         "zoo:resnet50)")
    sm.add_argument("--workers", default="1-8", help="workers: 1-10, 1-16:2 or 1,2,4 (default 1-8)")
    sm.add_argument("--bandwidth", default="10Gbps")
    sm.add_argument("--mode", choices=("async", "sync", "allreduce"), default="sync")
    sm.add_argument("--sharing", choices=("ps", "fcfs", "hybrid"), default="hybrid")
    sm.add_argument("--steps", type=int, default=300)
    sm.add_argument("--warmup", type=int, default=30)
    sm.add_argument("--seed", type=int, default=0)
    sm.add_argument("--per-flow-cap", help="largest rate of one flow, e.g. 10Gbps")
    sm.add_argument("--chrome-trace", help="write a Chrome trace (chrome://tracing) of 20 steps")
    sm.add_argument("--format", choices=("table", "json"), default="table")

    v = sub.add_parser("validate", help="every model against real measurements")
    v.add_argument("dataset", choices=("dl2", "matrix"),
                   help="dl2: MXNet PS training speeds (Optimus/DL2); matrix: every model before "
                        "and after calibration on DL2 and the ns-3 runs, and the selected model "
                        "(issue 10)")
    v.add_argument("--dnn", action="append", help="only this DNN (repeatable)")
    v.add_argument("--train-size", type=int, default=2,
                   help="dl2: fit on the N smallest server counts x N smallest worker counts")
    v.add_argument("--only", action="append", choices=("dl2", "ns3"),
                   help="matrix: only this dataset (repeatable)")
    v.add_argument("--ns3", help="matrix: the ns-3 runs CSV (default: the committed "
                                 "perfmodel/zoo/validation/ns3_matrix.csv)")
    v.add_argument("--train-workers", default="1,2",
                   help="matrix: worker counts of the ns-3 calibration runs (at most 2; "
                        "default 1,2)")
    v.add_argument("--format", choices=("table", "json", "markdown"), default="table",
                   help="markdown: the README's matrix (matrix only)")

    c = sub.add_parser("calibrate", help="measure seed 004's hardware constants on this machine "
                                         "(`calibrate`), or fit a model's tunables to measured "
                                         "throughputs (`calibrate fit`)")
    c.add_argument("action", nargs="?", choices=("machine", "fit"), default="machine")
    c.add_argument("--model", choices=registry.model_names(),
                   help="fit: the model (default: sync for sync measurements, async for async "
                        "ones, and async when --grid names a model option)")
    c.add_argument("--profile", default=DEFAULTS["profile"], help="fit: coarse profile FILE or zoo:NAME")
    c.add_argument("--cluster", help=f"fit: cluster FILE or zoo:NAME (default {DEFAULTS['cluster']})")
    c.add_argument("--measurements", help="fit: CSV of workers,n_ps,bandwidth,throughput")
    c.add_argument("--grid", action="append",
                   help="fit: KEY=START:STOP:STEP or KEY=A,B,C (repeatable), e.g. "
                        "rho_threshold=0.1:1.0:0.1")
    c.add_argument("--cv", default="loo", help="fit: loo, none, or K folds")
    c.add_argument("--params", help="fit: cluster fields to calibrate, comma-separated (default: "
                                    "link_efficiency,sharing_weight,update_growth,compute_cv; "
                                    "add timeout_probability on a lossy link; "
                                    "those without effect on the model are skipped)")
    c.add_argument("--save", help="fit: write the calibrated cluster file here (JSON or YAML)")
    c.add_argument("--search", choices=("auto", "joint", "coordinate"), default="auto",
                   help="fit: joint grid, one parameter at a time, or auto (coordinate for "
                        "--model sim, joint otherwise)")
    c.add_argument("--objective", choices=("mean_relative", "rms_relative", "max_relative"),
                   default="mean_relative")
    c.add_argument("--base", default=DEFAULTS["layerwise_cluster"],
                   help="cluster whose network and machine count are kept (default: %(default)s)")
    c.add_argument("--out", help="write the calibrated cluster file here (JSON or YAML)")
    c.add_argument("--quick", action="store_true", help="a few seconds instead of about one")
    c.add_argument("--threads", type=int, help="measure C_interf(H) up to this H (default: cores)")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--format", choices=("table", "json"), default="table")

    pt = sub.add_parser("plot", help="draw a figure to PNG or SVG (extra perfmodel[plot])")
    kinds = pt.add_subparsers(dest="kind", required=True, metavar="KIND")
    drawn = {"scalability": "throughput over workers per model, saturation points marked",
             "phases": "stacked phase breakdown of the step time over workers (one model)",
             "gantt": "Gantt chart of a few simulated steps of a trace",
             "cdf": "iteration-latency CDFs of the placement strategies (seed 002 Figs. 8-10)",
             "search-space": "epoch time over the configuration space (seed 004 Fig. 15)",
             "sweep": "a `perfmodel sweep` table: one line per combination of its other axes"}
    kp = {name: kinds.add_parser(name, help=text, description=text, conflict_handler="resolve")
          for name, text in drawn.items()}
    for name in ("scalability", "phases", "search-space"):
        _add_job_flags(kp[name], with_format=("table",),
                       model="layerwise" if name == "search-space" else "sync")
        kp[name].add_argument("--format", default="table", help=argparse.SUPPRESS)
    for name in ("scalability", "phases"):
        kp[name].add_argument("--workers", default="1-16" if name == "scalability" else "1,2,4,8,16",
                              help="workers: 1-16, 1-16:2 or 1,2,4 (default: %(default)s)")
        kp[name].add_argument("--bandwidth", help="NIC bandwidth, e.g. 10Gbps (default: the cluster's)")
    kp["scalability"].add_argument("--model", default="sync,allreduce,async",
                                   help="models, one curve each: e.g. sync,async,allreduce,gst "
                                        "(default: %(default)s)")
    kp["scalability"].add_argument("--threshold", type=float, default=0.1,
                                   help="saturation: the last K whose workers add more than this "
                                        "times one worker's throughput (default: %(default)s)")
    kp["scalability"].add_argument("--measurements", metavar="CSV",
                                   help="measured runs (the `calibrate fit` CSV): plot the model "
                                        "`predict --measurements` selects, its 90%% leave-one-out "
                                        "band and the measured points (--model is then not used)")
    kp["scalability"].add_argument("--lossy", action="store_true",
                                   help="with --measurements: a lossy link (as for predict)")
    _add_selection_flags(kp["scalability"])
    kp["search-space"].add_argument("--machines", type=int,
                                    help="machine budget (default: the cluster's)")
    g = kp["gantt"]
    g.add_argument("--trace", required=True, help="trace FILE or zoo:NAME, as for `perfmodel simulate`")
    g.add_argument("--workers", type=int, default=4, help="workers (default: %(default)s)")
    g.add_argument("--steps", type=int, default=3, help="steps per worker (default: %(default)s)")
    g.add_argument("--bandwidth", default="10Gbps")
    g.add_argument("--mode", choices=("async", "sync", "allreduce"), default="sync")
    g.add_argument("--sharing", choices=("ps", "fcfs", "hybrid"), default="hybrid")
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--per-flow-cap", help="largest rate of one flow, e.g. 10Gbps")
    _add_place_flags(kp["cdf"])
    kp["sweep"].add_argument("--table", required=True, help="table of `perfmodel sweep --out` "
                                                            "(CSV, JSON lines or Parquet)")
    kp["sweep"].add_argument("--x", default="workers", help="axis column (default: %(default)s)")
    kp["sweep"].add_argument("--y", choices=("throughput", "step_time", "epoch_time"),
                             default="throughput")
    for k in kp.values():
        k.add_argument("-o", "--output", required=True, help="FILE.png or FILE.svg")
    return parser


_COMMANDS = {"zoo": cmd_zoo, "predict": cmd_predict, "optimize": cmd_optimize,
             "calibrate": cmd_calibrate, "place": cmd_place, "validate": cmd_validate,
             "simulate": cmd_simulate, "sweep": cmd_sweep, "plot": cmd_plot}


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)  # exits 2 with a usage line on bad flags
    try:
        if getattr(args, "machines", None) is not None and args.machines < 1:
            raise CliError(f"--machines: must be >= 1, got {args.machines}")
        if getattr(args, "top", None) is not None and args.top < 1:
            raise CliError(f"--top: must be >= 1, got {args.top}")
        out = _COMMANDS[args.command](args)
    except CliError as err:
        print(f"perfmodel: error: {err}", file=sys.stderr)
        return 2
    except SpecError as err:
        print(f"perfmodel: error: {err}", file=sys.stderr)
        return 2
    except Infeasible as err:
        print(f"perfmodel: infeasible: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # finished sweep chunks are kept; the same command resumes
        print("perfmodel: interrupted", file=sys.stderr)
        return 130
    sys.stdout.write(out)
    return 0
