"""Benchmark: exact MVA of Li et al. 2022's Async-SGD network at scale (a script, not a test).

Prints, in one run:

1. homogeneous workers, K = 1,000: exact class-aggregated MVA (1,001 population
   vectors), timed for the network solve alone (:func:`perfmodel.queueing.mva`,
   the scalar one-class loop), for the general level-vectorized recursion
   forced on the same network, and for the whole hybrid model
   (:func:`perfmodel.queueing.async_solve`: FCFS and PS solves, eq. 5)
   -- aim: under 50 ms;
2. 16 workers of 16 distinct types: exact aggregated MVA (2^16 = 65,536
   population vectors) and the whole hybrid model -- aim: under 2 s;
3. the ratio against the paper's {0,1}^K recursion
   (:func:`perfmodel.queueing.mva_binary`) for the cases where it finishes
   (K up to ``--max-binary``), after checking both give the same throughput;
4. for reference, the approximations (Linearizer, Schweitzer-Bard) on many
   distinct workers, with their error where the exact answer is known.

Each time is the median of ``--repeats`` runs.

Usage::

    python tests/benchmarks/bench_mva.py [--repeats 7] [--max-binary 16]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys

import numpy as np

from perfmodel import queueing as q

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # also when loaded by path
from _timing import median_seconds  # noqa: E402

# The running example: 100 MB model on 10 Gbps links (M/B = 80 ms), 5 ms update.
M, B, TS = 100e6, 1.25e9, 0.005
LINK = M / B


def network(delays: np.ndarray):
    """Service matrix and disciplines of the FCFS network of Fig. 5 for these workers."""
    service = np.tile([LINK, TS, LINK], (len(delays), 1))
    return service, ["fcfs", "ps", "fcfs"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--max-binary", type=int, default=16,
                        help="largest K for the {0,1}^K recursion (2^K states, memory ~ K 2^K)")
    args = parser.parse_args(argv)
    r = args.repeats
    print(f"python {platform.python_version()}, numpy {np.__version__}, "
          f"{platform.machine()} {platform.system()}; median of {r} runs")
    print()

    # 1. homogeneous K = 1000
    k = 1000
    service, disc = network(np.array([0.3]))
    t_mva, res = median_seconds(lambda: q.mva([0.3], service, [k], disc), r)
    z, s, n, fcfs, cp, gamma = q._check_network([0.3], service, [k], disc, None,
                                                "deterministic")
    t_vec, (x_vec, _) = median_seconds(lambda: q._exact_levels(z, s, n, fcfs, cp, gamma), r)
    assert abs(x_vec.sum() / res.total_throughput - 1) < 1e-12
    t_solve, sol = median_seconds(lambda: q.async_solve(M, B, 0.1, 0.2, TS, k), r)
    print(f"homogeneous K = {k} ({res.states} population vectors):")
    print(f"  exact MVA, one-class loop        {1e3 * t_mva:9.3f} ms   X = "
          f"{res.total_throughput:.4f} steps/s")
    print(f"  exact MVA, level-vectorized      {1e3 * t_vec:9.3f} ms")
    print(f"  async_solve (hybrid, eq. 5)      {1e3 * t_solve:9.3f} ms   "
          f"aim < 50 ms: {'ok' if t_solve < 0.05 else 'MISSED'}")
    print()

    # 2. 16 workers of 16 types
    rng = np.random.default_rng(0)
    tf16 = rng.uniform(0.02, 0.3, 16)
    delays16 = 3 * tf16
    service16, _ = network(delays16)
    t16, res16 = median_seconds(lambda: q.mva(delays16, service16, None, disc), r)
    t16s, sol16 = median_seconds(lambda: q.async_solve(M, B, tf16, 2 * tf16, TS, 16), r)
    print(f"16 workers of 16 types ({res16.states} population vectors):")
    print(f"  exact MVA (FCFS network)         {1e3 * t16:9.3f} ms")
    print(f"  async_solve (hybrid, eq. 5)      {1e3 * t16s:9.3f} ms   "
          f"aim < 2 s: {'ok' if t16s < 2 else 'MISSED'}")
    print()

    # 3. ratio against the {0,1}^K recursion
    print("{0,1}^K recursion (paper) vs class-aggregated (ours), FCFS network, exact:")
    print(f"  {'K':>3} {'types':>5} {'states 2^K':>11} {'states ours':>12} "
          f"{'binary ms':>11} {'ours ms':>9} {'ratio':>9}")
    for kk in (4, 8, 12, args.max_binary):
        for kind in ("homogeneous", "distinct"):
            delays = np.full(kk, 0.3) if kind == "homogeneous" else rng.uniform(0.06, 0.9, kk)
            svc, _ = network(delays)
            types, inverse, pops = np.unique(delays, return_inverse=True, return_counts=True)
            reps = max(1, r if kk <= 12 else 3)
            tb, rb = median_seconds(lambda d=delays, s=svc: q.mva_binary(d, s, disc), reps)
            ta, ra = median_seconds(
                lambda t=types, s=svc, p=pops: q.mva(t, s[:len(t)], p, disc), reps)
            assert abs(rb.total_throughput / ra.total_throughput - 1) < 1e-11
            print(f"  {kk:>3} {len(types):>5} {2 ** kk:>11,} {ra.states:>12,} "
                  f"{1e3 * tb:>11.3f} {1e3 * ta:>9.3f} {tb / ta:>8.1f}x")
    print()

    # 4. approximations
    print("approximate MVA on distinct workers (FCFS network):")
    for kk in (16, 128, 1000):
        delays = rng.uniform(0.06, 0.9, kk)
        svc, _ = network(delays)
        exact = q.mva(delays, svc, None, disc).total_throughput if kk <= 16 else None
        for name, fn in (("linearizer", q.mva_linearizer), ("schweitzer", q.mva_schweitzer)):
            if name == "linearizer" and kk > q.MAX_LINEARIZER_TYPES:
                continue
            t, res_a = median_seconds(lambda f=fn, d=delays, s=svc: f(d, s, None, disc), 3)
            err = "" if exact is None else \
                f"   error {100 * (res_a.total_throughput / exact - 1):+.3f} %"
            print(f"  K = {kk:>4} {name:<11} {1e3 * t:9.3f} ms{err}")
    print()
    print(f"docs/benchmarks.md: exact MVA, K = 1,000 identical workers: {1e3 * t_solve:.1f} ms for the "
          f"hybrid model ({1e3 * t_mva:.2f} ms per solve); 16 workers of 16 types: "
          f"{1e3 * t16s:.0f} ms (65,536 states); {{0,1}}^16 recursion: see table.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
