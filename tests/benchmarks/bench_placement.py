"""Benchmark: the flow-level placement simulator, vectorized vs reference max-min (a script, not a test).

Jain et al.'s scenario (Sec. 4.4): 8 racks x 8 hosts at 10 Gbps, 8 jobs of one
parameter server + 7 workers, ResNet-50's 97.49 MB, heavy-tailed compute.
In one run it:

1. simulates ``--iterations`` iterations per job (after ``--warmup``) for each
   placement strategy with both max-min engines -- ``vectorized`` (numpy
   progressive filling over the link x flow incidence matrix) and
   ``reference`` (the same progressive filling in pure Python) -- checks that
   the two agree, and prints the wall time per simulated iteration (one
   iteration = every job doing one SGD step), events and rate updates;
2. times the max-min solver alone on random subsets of the scenario's flows,
   and on a larger fat tree (k = 8, 16 jobs x 7 workers: 224 flows), where
   vectorization pays more;
3. when the ``ns3`` package is importable (``perfmodel[ns3]``), times the
   packet-level engine on the same scenario scaled down as Jain et al., Sec. 4.4
   does, and prints its ratio to the flow-level engine.

Usage::

    python tests/benchmarks/bench_placement.py [--iterations 100] [--warmup 5]
                                               [--strategies all] [--repeats 3]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time

import numpy as np

from perfmodel.placement import STRATEGIES, fat_tree, paper_racks, place, random_placement, simulate
from perfmodel.placement.maxmin import filled_rates as _fill
from perfmodel.placement.maxmin import filled_rates_reference as _fill_reference


def _solver_snapshots(topo, placement, n, rng):
    """Incidence matrices of random subsets of the placement's flows (used rows only)."""
    pairs = [(s, d) for _, _, s, d in placement.flows()]
    full = topo.incidence(pairs)
    out = []
    for _ in range(n):
        k = int(rng.integers(1, len(pairs) + 1))
        cols = np.sort(rng.choice(len(pairs), size=k, replace=False))
        A = full[:, cols]
        rows = A.any(axis=1)
        A = np.ascontiguousarray(A[rows])
        c = topo.capacity[rows].copy()
        routes = [[(int(l), float(A[l, f])) for l in np.flatnonzero(A[:, f])]
                  for f in range(A.shape[1])]
        out.append((A, c, routes, list(map(float, c))))
    return out


def _time_solvers(snapshots, repeats):
    def run_vec():
        for A, c, _, _ in snapshots:
            _fill(A, c, None)

    def run_ref():
        for _, _, routes, caps in snapshots:
            _fill_reference(routes, caps, None)

    for A, c, routes, caps in snapshots[:20]:
        if not np.allclose(_fill(A, c, None), _fill_reference(routes, caps, None), rtol=1e-9):
            raise SystemExit("max-min engines disagree")
    times = {}
    for name, fn in (("vectorized", run_vec), ("reference", run_ref)):
        samples = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - t0)
        times[name] = statistics.median(samples) / len(snapshots)
    return times


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--strategies", default="all",
                    help="comma-separated strategies, or 'all' (default)")
    ap.add_argument("--repeats", type=int, default=3, help="repeats of the solver timing")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-ns3", action="store_true", help="skip the packet-level engine")
    args = ap.parse_args(argv)
    names = list(STRATEGIES) if args.strategies == "all" else args.strategies.split(",")
    topo = paper_racks()
    steps = args.iterations + args.warmup
    print(f"# perfmodel.placement benchmark  python {platform.python_version()} "
          f"numpy {np.__version__}  {platform.machine()}")
    print(f"# scenario: {topo.name} (8 racks x 8 hosts, 10 Gbps), 8 jobs x (1 PS + 7 workers), "
          f"{args.iterations} iterations + {args.warmup} warm-up, seed {args.seed}")
    print(f"{'strategy':<10} {'engine':<11} {'wall s':>8} {'ms/iter':>9} {'events':>8} "
          f"{'rate upd':>9} {'mean s':>8}")
    totals = {"vectorized": 0.0, "reference": 0.0}
    flow_wall = {}
    for name in names:
        p = place(topo, name, 8, 7, seed=args.seed)
        res = {}
        for engine in ("vectorized", "reference"):
            r = simulate(topo, p, iterations=args.iterations, warmup=args.warmup,
                         seed=args.seed, engine=engine)
            res[engine] = r
            totals[engine] += r.wall_time
            print(f"{name:<10} {engine:<11} {r.wall_time:8.2f} {1e3 * r.wall_time / steps:9.2f} "
                  f"{r.n_events:8d} {r.n_rate_updates:9d} {r.mean:8.4f}")
        if not np.allclose(res["vectorized"].latencies, res["reference"].latencies, rtol=1e-9):
            print("ERROR: engines disagree", file=sys.stderr)
            return 1
        flow_wall[name] = res["vectorized"].wall_time
    ratio = totals["reference"] / totals["vectorized"]
    print(f"# whole simulation: reference / vectorized = {ratio:.2f}x "
          f"({1e3 * totals['vectorized'] / (steps * len(names)):.2f} vs "
          f"{1e3 * totals['reference'] / (steps * len(names)):.2f} ms per simulated iteration)")

    rng = np.random.default_rng(args.seed)
    snaps = _solver_snapshots(topo, random_placement(topo, 8, 7, seed=args.seed), 300, rng)
    t = _time_solvers(snaps, args.repeats)
    print(f"# max-min solve alone, {topo.name}, subsets of 112 flows: vectorized "
          f"{1e6 * t['vectorized']:.1f} us, reference {1e6 * t['reference']:.1f} us, "
          f"ratio {t['reference'] / t['vectorized']:.2f}x")
    big = fat_tree(8)
    snaps = _solver_snapshots(big, random_placement(big, 16, 7, seed=args.seed), 100, rng)
    t = _time_solvers(snaps, args.repeats)
    print(f"# max-min solve alone, {big.name}, subsets of 224 flows: vectorized "
          f"{1e6 * t['vectorized']:.1f} us, reference {1e6 * t['reference']:.1f} us, "
          f"ratio {t['reference'] / t['vectorized']:.2f}x")

    if not args.no_ns3:
        try:
            from perfmodel.placement import ns3 as ns3_engine
        except ImportError:
            ns3_engine = None
        if ns3_engine is None or not ns3_engine.available():
            print("# ns-3 engine: not installed (pip install 'perfmodel[ns3]'); skipped")
        else:
            name = "random" if "random" in names else names[0]
            p = place(topo, name, 8, 7, seed=args.seed)
            r = ns3_engine.simulate_ns3(topo, p, iterations=args.iterations,
                                        warmup=args.warmup, seed=args.seed)
            print(f"# ns-3 engine ({name}, scaled 1/{r.meta['scale']:g}): wall "
                  f"{r.wall_time:.2f} s, mean {r.mean:.4f} s; flow-level wall "
                  f"{flow_wall[name]:.2f} s; ns-3 / flow-level = "
                  f"{r.wall_time / flow_wall[name]:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
