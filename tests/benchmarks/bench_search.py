"""Benchmark: :func:`optimizer.search.search` with batch pricing against one by one (a script).

Prints, in one run, for each closed-form model at ``--machines`` machines
(default 1,024: 523,776 parameter-server configurations, 1,024 all-reduce
ones):

* ``batch``: the search as it runs, pricing blocks of candidates with the
  model's ``estimate_many`` and keeping only the top k;
* ``one-by-one``: the same search made to call ``estimate`` per
  configuration (``search(..., _batch=False)``; it also keeps only the top k);
* ``keep-all`` (with ``--keep-all``): the loop before batch pricing, which
  estimated each configuration and kept every candidate, reproduced here;
* with ``--per-machines``, a second table: the best configuration at every
  machine count (what :func:`optimizer.allocate.throughput_curve` needs),
  ``search(per_machines=True)`` against ranking every candidate
  (``top=sys.maxsize``, how the curve was built before) and grouping;

each as CPU seconds (``time.process_time``, median of ``--repeats`` runs for
the batch path, one run for the others), peak traced memory (``tracemalloc``,
a separate run, since tracing slows allocation) and the ratios, and checks
that every path finds the same best configuration (and the same ranked list).

Usage::

    python tests/benchmarks/bench_search.py [--machines 1024] [--repeats 5] [--keep-all]
                                            [--per-machines]
                                            [--models sync allreduce lin async gst]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc

from optimizer.results import Candidate
from optimizer.search import candidate_configs, objective_value, search
from perfmodel import zoo
from perfmodel.baselines import LinAsync
from perfmodel.coarse import AllReduceCoarse, SyncCoarse
from perfmodel.gst.model import GST
from perfmodel.queueing import AsyncMVA

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # also when loaded by path
from _timing import median_seconds  # noqa: E402

MODELS = {"sync": SyncCoarse(), "allreduce": AllReduceCoarse(), "lin": LinAsync(),
          "async": AsyncMVA(), "gst": GST()}


def keep_all(model, workload, cluster, top=5):
    """The search loop before batch pricing: every candidate estimated and kept, then sorted
    (no efficiency bound or floors: they refuse nothing on this profile)."""
    servers = "ps" if model.uses_parameter_servers else "none"
    scored = []
    for config in candidate_configs(cluster.machines, servers=servers):
        est = model.estimate(workload, cluster, config)
        scored.append(Candidate(config, est, objective_value("throughput", est, config)[0]))
    scored.sort(key=lambda c: objective_value("throughput", c.estimate, c.config))
    return tuple(scored[:top])


def cpu(fn, repeats: int):
    """Median CPU seconds of ``fn()`` over ``repeats`` calls, and its last result."""
    return median_seconds(fn, repeats, clock=time.process_time)


def peak_mib(fn) -> float:
    """Peak memory traced while ``fn()`` runs, MiB."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2 ** 20
    finally:
        tracemalloc.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machines", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--keep-all", action="store_true",
                        help="also time the loop that keeps every candidate (slow)")
    parser.add_argument("--per-machines", action="store_true",
                        help="also time the best-per-machine-count search (slow reference)")
    parser.add_argument("--models", nargs="+", choices=list(MODELS), default=list(MODELS))
    args = parser.parse_args()
    profile = zoo.profile("resnet50-pipedream")
    cluster = zoo.cluster("aws-p3.2xlarge").replace(machines=args.machines)
    print(f"search over {args.machines} machines, profile {profile.name}, objective throughput, "
          "top 5; CPU s (median), peak MiB (tracemalloc)")
    header = (f"{'model':<10} {'configs':>8} {'batch s':>8} {'MiB':>6} {'1-by-1 s':>9} "
              f"{'MiB':>6} {'ratio':>6}")
    if args.keep_all:
        header += f" {'keep-all s':>10} {'MiB':>6} {'ratio':>6}"
    print(header + "  best (replicas, servers)  same")
    for name in args.models:
        row = _row(name, MODELS[name], profile, cluster, args)
        print(row, flush=True)
    if args.per_machines:
        print("\nbest at every machine count: per_machines=True against ranking all "
              "(top=sys.maxsize) and grouping; CPU s")
        print(f"{'model':<10} {'counts':>7} {'per-machines s':>15} {'rank-all s':>11} "
              f"{'ratio':>6}  same")
        for name in args.models:
            print(_per_machines_row(name, MODELS[name], profile, cluster, args), flush=True)


def _per_machines_row(name, model, profile, cluster, args) -> str:
    fast_s, fast = cpu(lambda: search(model, profile, cluster, per_machines=True),
                       args.repeats)
    slow_s, slow = cpu(lambda: search(model, profile, cluster, top=sys.maxsize), 1)
    first: dict = {}
    for cand in slow.ranked:
        first.setdefault(cand.config.machines, cand)
    same = list(fast.ranked) == sorted(first.values(), key=slow.ranked.index)
    return (f"{name:<10} {len(fast.ranked):>7} {fast_s:>15.3f} {slow_s:>11.2f} "
            f"{slow_s / fast_s:>5.0f}x  {'yes' if same else 'NO'}")


def _row(name, model, profile, cluster, args) -> str:
    """One line of the table: the paths' CPU time, peak memory, ratios and answers."""
    fast_s, fast = cpu(lambda: search(model, profile, cluster), args.repeats)
    fast_mib = peak_mib(lambda: search(model, profile, cluster))
    slow_s, slow = cpu(lambda: search(model, profile, cluster, _batch=False), 1)
    slow_mib = peak_mib(lambda: search(model, profile, cluster, _batch=False))
    same = fast.ranked == slow.ranked
    row = (f"{name:<10} {fast.n_evaluated:>8,} {fast_s:>8.3f} {fast_mib:>6.1f} "
           f"{slow_s:>9.2f} {slow_mib:>6.1f} {slow_s / fast_s:>5.0f}x")
    if args.keep_all:
        old_s, old = cpu(lambda: keep_all(model, profile, cluster), 1)
        old_mib = peak_mib(lambda: keep_all(model, profile, cluster))
        same = same and old == fast.ranked
        row += f" {old_s:>10.2f} {old_mib:>6.1f} {old_s / fast_s:>5.0f}x"
    best = fast.best.config
    return f"{row}  ({best.n_replicas}, {best.n_ps}){'':<14}{'yes' if same else 'NO'}"


if __name__ == "__main__":
    main()
