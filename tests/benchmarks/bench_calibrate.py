"""Benchmark: Yan et al. 2015's hardware constants measured here (a script, not a test).

Runs :func:`perfmodel.fit.microbench.calibrate` in quick and full mode, prints the
constants (C_muladd in and out of cache, C_act, C_err, C_interf(1..H), cache
size and its source), the spread of each measurement and the wall time of
each mode, and one line to paste into docs/benchmarks.md.

Usage::

    python tests/benchmarks/bench_calibrate.py [--max-threads H] [--seed S]
                                               [--activation sigmoid|tanh|relu] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from perfmodel.fit.microbench import ACTIVATIONS, calibrate


def _spread_table(cal) -> str:
    rows = [f"{'measurement':<24}{'median':>12}{'min':>12}{'max':>12}{'IQR %':>8}  unit"]
    for name, s in cal.spreads.items():
        rows.append(f"{name:<24}{s.median:>12.4g}{s.minimum:>12.4g}{s.maximum:>12.4g}"
                    f"{100 * s.iqr_rel:>8.1f}  {s.unit}")
    return "\n".join(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max-threads", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--activation", choices=ACTIVATIONS, default="sigmoid")
    parser.add_argument("--json", action="store_true", help="print the full calibration as JSON")
    args = parser.parse_args(argv)
    results = {}
    for quick in (True, False):
        start = time.perf_counter()
        cal = calibrate(quick=quick, max_threads=args.max_threads, seed=args.seed,
                        activation=args.activation)
        wall = time.perf_counter() - start
        results["quick" if quick else "full"] = (cal, wall)
        print(f"== calibrate(quick={quick}): {wall:.2f} s wall")
        print(cal.summary())
        print(_spread_table(cal))
        print()
    cal, wall = results["full"]
    print(f"docs/benchmarks.md: C_muladd {cal.c_muladd:.3g} s in cache, "
          f"{cal.c_muladd_mem:.3g} s from memory, "
          f"C_act {cal.c_act:.3g} s, C_err {cal.c_err:.3g} s, C_interf "
          f"{', '.join(f'{x:.2f}' for x in cal.interference)}; "
          f"{cal.machine['platform']}, {cal.cores} cores, calibrate() {wall:.1f} s, "
          f"quick {results['quick'][1]:.1f} s")
    if args.json:
        json.dump(cal.to_dict(), sys.stdout, indent=2)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
