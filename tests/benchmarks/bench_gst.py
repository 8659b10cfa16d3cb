"""Benchmark: the expected epoch time of Zhang et al. 2023 (eq. 9), integration vs Monte Carlo.

A script, not a test.  Evaluates the epoch time of M iterations with N workers
(defaults: M = 10^4, N = 1,024), every worker's GST in iteration m normal with
mean mu_m (seeded, around 0.2 s) and standard deviation sigma:

* integration: :func:`perfmodel.gst.expected_epoch_time`, i.e.
  ``sum_m mu_m + sigma e(N)`` with e(N) = E[max of N standard normals]
  integrated once (eqs. 7-9);
* Monte Carlo: :func:`perfmodel.gst.monte_carlo_epoch_time` with
  ``method="workers"``, drawing all N workers' GST in all M iterations and
  summing the per-iteration maxima, for ``--replications`` epochs (seeded).

It prints the median time of each (repeats), their ratio, the two answers
(the Monte-Carlo one with its standard error and the z-score of the
difference), the time of the inverse-cdf Monte Carlo (one uniform per
maximum) for reference, and one line to paste into docs/benchmarks.md.

Usage::

    python tests/benchmarks/bench_gst.py [--iterations 10000] [--workers 1024]
                                         [--sigma 0.01] [--replications 5] [--repeats 21]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys

import numpy as np

from perfmodel.gst import expected_epoch_time, monte_carlo_epoch_time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # also when loaded by path
from _timing import median_seconds  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=int, default=10_000, help="M (default 10000)")
    parser.add_argument("--workers", type=int, default=1024, help="N (default 1024)")
    parser.add_argument("--sigma", type=float, default=0.01, help="sigma in s (default 0.01)")
    parser.add_argument("--replications", type=int, default=5,
                        help="Monte-Carlo epochs (default 5)")
    parser.add_argument("--repeats", type=int, default=21,
                        help="timing repeats of the integration (default 21)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    mu = np.random.default_rng(args.seed).uniform(0.18, 0.22, args.iterations)
    m, n, sigma = args.iterations, args.workers, args.sigma

    t_int, exact = median_seconds(lambda: expected_epoch_time(mu, sigma, n), args.repeats)
    t_mc, (mc, se) = median_seconds(
        lambda: monte_carlo_epoch_time(mu, sigma, n, replications=args.replications,
                                       seed=args.seed + 1, method="workers"), 1)
    t_inv, (inv, inv_se) = median_seconds(
        lambda: monte_carlo_epoch_time(mu, sigma, n, replications=args.replications,
                                       seed=args.seed + 2, method="inverse"), 3)

    print(f"perfmodel.gst eq. 9: epoch time of M = {m:,} iterations, N = {n:,} workers, "
          f"sigma = {sigma:g} s")
    print(f"  python {platform.python_version()}, numpy {np.__version__}, "
          f"{platform.machine()}")
    print(f"  integration   : {t_int * 1e3:10.3f} ms  T = {exact:.9f} s")
    print(f"  Monte Carlo   : {t_mc * 1e3:10.1f} ms  T = {mc:.9f} +- {se:.2g} s "
          f"({args.replications} epochs x {m:,} x {n:,} normal draws; "
          f"z = {(mc - exact) / se:+.2f})")
    print(f"  MC, inverse   : {t_inv * 1e3:10.3f} ms  T = {inv:.9f} +- {inv_se:.2g} s "
          f"(one uniform per maximum)")
    ratio = t_mc / t_int
    print(f"  ratio Monte Carlo / integration: {ratio:,.0f}x "
          f"({ratio / args.replications:,.0f}x per simulated epoch)")
    print()
    print(f"docs/benchmarks.md: eq. 9 epoch time, {m:,} iterations x {n:,} workers: integration "
          f"{t_int * 1e3:.2f} ms vs brute-force Monte Carlo {t_mc:.2f} s "
          f"({args.replications} epochs), {ratio:,.0f}x faster; the answers differ by "
          f"{abs(mc - exact) / se:.1f} standard errors.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
