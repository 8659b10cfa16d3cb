"""`perfmodel simulate`: the trace-driven simulator over worker counts."""

from __future__ import annotations

from .. import io, zoo
from ..sim import (
    Trace,
    add_parsing_overhead,
    chrome_trace,
    order_transmissions,
    simulate,
    split_servers,
)
from ..sim.model import simulate_range
from .common import (
    CliError,
    check_sim_size,
    json_text,
    parse_int_range,
    progress_bar,
    quantities,
    stamped_records,
    table_text,
)

__all__ = ["run", "trace_from_arg"]


def trace_from_arg(source: str, overlap: bool = True):
    """A zoo PipeDream trace (built with or without ``overlap``) or a trace file."""
    if source.startswith("zoo:"):
        return zoo.pipedream_trace(source[4:], overlap=overlap)
    return Trace.load(source)


def _parsing(text: str) -> tuple[float, float]:
    try:
        alpha, beta = (float(x) for x in text.split(","))
    except ValueError:
        raise CliError(f"--parsing: expected S_PER_BYTE,S_PER_TENSOR, e.g. 1e-10,50e-6; "
                       f"got {text!r}") from None
    return alpha, beta


def _shaped_trace(args) -> tuple[Trace, str]:
    """The trace with the options applied, and a line saying what was simulated."""
    if not args.trace:
        raise CliError("--trace: required (a trace file or zoo:NAME, or workload.trace of --job)")
    zoo_trace = args.trace.startswith("zoo:")
    if args.overlap is not None and not zoo_trace:
        raise CliError("--overlap: a trace file keeps its own dependencies; applies to zoo:NAME")
    overlap = bool(args.overlap)
    trace = trace_from_arg(args.trace, overlap)
    if args.servers is not None:
        if args.servers < 1 or trace.n_servers != 1:
            raise CliError(f"--servers: needs a one-server trace and N >= 1, got {args.servers} "
                           f"for a trace of {trace.n_servers} servers")
        trace = split_servers(trace, args.servers)
    if args.parsing:
        trace = add_parsing_overhead(trace, *_parsing(args.parsing))
    if args.order:
        trace = order_transmissions(trace, args.order, "downlink", seed=args.seed)
    said = [f"overlap {'on' if overlap else 'off'}" if zoo_trace else "overlap as in the file",
            f"{trace.n_servers} server{'s' if trace.n_servers > 1 else ''}",
            f"window {args.window}" if args.window else "no flow control",
            f"parsing {args.parsing}" if args.parsing else "no parsing overhead",
            f"pull order {args.order or 'as profiled'}"]
    return trace, ", ".join(said)


def run(args) -> str:
    trace, said = _shaped_trace(args)
    workers = parse_int_range(args.workers, "--workers")
    check_sim_size(workers, args.steps)
    warmup = args.warmup if args.warmup is not None else args.steps // 20   # 50 of 1,000
    bandwidth = quantities(args.bandwidth, "B/s", "--bandwidth")[0]
    cap = quantities(args.per_flow_cap, "B/s", "--per-flow-cap")[0] if args.per_flow_cap else None
    window = quantities(args.window, "B", "--window")[0] if args.window else None
    with progress_bar(len(workers), "worker counts") as tick:
        done = iter(range(1, len(workers) + 1))
        results = simulate_range(trace, workers, bandwidth, args.mode, args.sharing,
                                 steps=args.steps, warmup=warmup, seed=args.seed,
                                 per_flow_cap=cap, window=window,
                                 progress=lambda _result: tick(next(done)))
    records = [dict(r.summary(), workers=k) for k, r in zip(workers, results)]
    if args.chrome_trace:
        shown = simulate(trace, workers[-1], bandwidth, args.mode, args.sharing,
                         steps=min(args.steps, 20), warmup=0, seed=args.seed, per_flow_cap=cap,
                         window=window, record=True)
        io.write_json(chrome_trace(shown), args.chrome_trace)
    if args.format == "json":
        return json_text(stamped_records("simulate", "sim", records))
    rows = [{"workers": r["workers"], "steps_per_s": r["throughput"],
             "samples_per_s": r["sample_throughput"], "step_ms": r["step_time"] * 1e3,
             "bottleneck": r["bottleneck"]} for r in records]
    head = (f"simulated {args.mode} SGD, {args.sharing} sharing, {args.steps} steps per worker "
            f"({trace.name or args.trace}; {said})\n")
    return head + table_text(rows, ["workers", "steps_per_s", "samples_per_s", "step_ms", "bottleneck"])
