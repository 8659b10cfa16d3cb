"""Benchmark: model selection on n measured runs (a script, not a test).

``select_model`` calibrates every candidate and scores it by leave-one-out
(LOO) error.  Refitting each fold costs one grid of predictions per point,
O(n^2) estimates; when every fold searches the same grid (one more point
than tunables) the LOO comes from one grid of predictions, O(n).  In one run
the script prints, for n sync runs (1-20 workers x 1-3 servers, 10 Gbps,
2-3% noise):

1. ``select_model`` wall time and the model it chose;
2. for the chosen candidate, the LOO by refitting each fold (the reference
   procedure) against the one-grid LOO: both times, the ratio, and that the
   residuals are equal.

Usage::

    python tests/benchmarks/bench_select.py [--sizes 5,10,20,40] [--repeats 3]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import sys

from perfmodel import zoo
from perfmodel.fit.grid import predict_measurements
from perfmodel.fit.selection import _loo_by_refitting, calibrate_candidate, default_candidates, select_model
from perfmodel.measurements import Measurement

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # also when loaded by path
from _timing import median_seconds  # noqa: E402


def runs(n: int, job, cluster) -> tuple:
    """n sync runs of the job, the sync model's throughput with -2, 0, +2% noise."""
    configs = [(w, p) for w in range(1, 21) for p in (1, 2, 3)][:n]
    shells = [Measurement(w, p, "10Gbps", 1.0) for w, p in configs]
    truth = predict_measurements("sync", job, cluster, shells)
    return tuple(dataclasses.replace(m, throughput=t * (1 + 0.02 * (i % 3 - 1)))
                 for i, (m, t) in enumerate(zip(shells, truth)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="5,10,20,40")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    job = zoo.profile("resnet50-pipedream").replace(t_update=0.02)
    cluster = zoo.cluster("aws-p3.2xlarge").replace(machines=64)
    by_name = {c.name: c for c in default_candidates("sync")}
    print(f"select_model on n sync runs; medians of {args.repeats}; Python "
          f"{platform.python_version()} on {platform.machine()}")
    print(f"{'n':>4} {'select s':>9}  {'chosen':<12} {'refit LOO s':>11} {'grid LOO s':>10} "
          f"{'ratio':>6}  equal")
    for n in (int(x) for x in args.sizes.split(",")):
        print(row(n, runs(n, job, cluster), job, cluster, by_name, args.repeats))


def row(n, ms, job, cluster, by_name, repeats) -> str:
    """One size: select_model, then the chosen candidate's two LOO procedures."""
    t_select, sel = median_seconds(lambda: select_model(job, cluster, ms), repeats)
    cand = by_name[sel.chosen.name]
    t_grid, cal = median_seconds(lambda: calibrate_candidate(cand, job, cluster, ms), repeats)
    t_refit, ref = median_seconds(lambda: _loo_by_refitting(cand, job, cluster, ms), 1)
    return (f"{n:>4} {t_select:>9.3f}  {sel.chosen.name:<12} {t_refit:>11.3f} {t_grid:>10.3f} "
            f"{t_refit / t_grid:>6.1f}  {cal.log_residuals == tuple(ref)}")

if __name__ == "__main__":
    main()
