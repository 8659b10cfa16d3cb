"""`perfmodel place`: iteration latency of jobs placed in a datacenter, per placement strategy."""

from __future__ import annotations

from .. import placement as pl
from .. import plot
from ..placement import distributions, ns3
from .common import json_text, progress_bar, quantities

__all__ = ["run"]


def run(args) -> str:
    topo = pl.topology.from_string(args.topology)
    strategies = (*pl.STRATEGIES, "optimized") if args.strategy == "all" else (args.strategy,)
    options = {"iterations": args.iterations, "warmup": args.warmup, "seed": args.seed,
               "model_bytes": quantities(args.model_bytes, "B", "--model-bytes")[0]}
    for flag in ("worker_compute", "server_compute"):
        if getattr(args, flag):
            options[flag] = distributions.from_string(getattr(args, flag), "--" + flag.replace("_", "-"))
    results = {}
    with progress_bar(len(strategies), "strategies") as tick:
        for name in strategies:  # each strategy alone: the same seeds, the same answer
            if args.engine == "ns3":
                placed = pl.place(topo, name, args.jobs, args.workers, seed=args.seed)
                results[name] = ns3.simulate_ns3(topo, placed, **options)
            else:
                results.update(pl.compare(topo, (name,), args.jobs, args.workers, **options))
            tick(len(results))
    if args.plot:
        plot.save(plot.latency_cdf(results), args.plot)
    if args.format == "json":
        return json_text({name: dict(r.summary(), phases=r.mean_phases()) for name, r in results.items()})
    head = (f"{args.jobs} jobs x (1 PS + {args.workers} workers) on {topo.name or args.topology}, "
            f"{args.iterations} iterations, {args.engine} engine; iteration latency:\n")
    return head + pl.latency_table(results, baseline="random" if "random" in results else None) + "\n"
