"""`perfmodel simulate`: the trace-driven simulator over worker counts."""

from __future__ import annotations

from .. import io, zoo
from ..sim import Trace, chrome_trace, simulate
from ..sim.model import simulate_range
from .common import json_text, parse_int_range, progress_bar, quantities, table_text

__all__ = ["run", "trace_from_arg"]


def trace_from_arg(source: str):
    if source.startswith("zoo:"):
        return zoo.pipedream_trace(source[4:])
    return Trace.load(source)


def run(args) -> str:
    trace = trace_from_arg(args.trace)
    workers = parse_int_range(args.workers, "--workers")
    bandwidth = quantities(args.bandwidth, "B/s", "--bandwidth")[0]
    cap = quantities(args.per_flow_cap, "B/s", "--per-flow-cap")[0] if args.per_flow_cap else None
    with progress_bar(len(workers), "worker counts") as tick:
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
        return json_text(records)
    rows = [{"workers": r["workers"], "steps_per_s": r["throughput"],
             "samples_per_s": r["sample_throughput"], "step_ms": r["step_time"] * 1e3,
             "bottleneck": r["bottleneck"]} for r in records]
    head = (f"simulated {args.mode} SGD, {args.sharing} sharing, {args.steps} steps per worker "
            f"({trace.name or args.trace})\n")
    return head + table_text(rows, ["workers", "steps_per_s", "samples_per_s", "step_ms", "bottleneck"])
