"""Benchmark: exact answer vs cvxpy relaxation in ``optimizer.allocate`` (a script, not a test).

For J jobs in (4, 16, 64) and N machines in (32, 128, 512), three objectives,
it builds synthetic "concave-ish" throughput curves (seeded), computes the
jobs' throughput curves once, then times

* exact (``method="exact"``): the O(J N^2) dynamic program for the weighted
  sum, the O(J N log(J N)) threshold search for the makespan;
* relaxed: concave envelopes + LP (cvxpy) + rounding (``method="relaxed"``);

and prints the median time of each over a few repeats, the relaxed answer's
gap to its own bound and to the exact optimum, in one run.

Synthetic curve of a job: ``T(m) = s * m / (1 + m / k) ** p`` with a knee
``k = (N / J) * U(0.3, 3)`` (so the jobs together want more than N machines
and the budget binds), ``p`` in [0.5, 1.5] (p > 1: past the knee more
workers slow the job down, so its curve peaks), multiplicative noise of +-4 %
(so the curve is neither exactly concave nor monotone before the running
maximum), and a quarter of the jobs needing at least 2 machines (a parameter
server).  With the weighted sum the jobs may be left out (``min_machines=0``);
the makespan needs every job, so J > N is infeasible there.

Usage::

    python tests/benchmarks/bench_allocate.py [--repeats 3] [--seed 0] [--solver CLARABEL]
                                              [--large]

``--large`` adds (J, N) = (64, 2048), (256, 2048), (256, 4096), where the
relaxation pays off (one repeat each; about a minute, most of it building
the curves through ``optimizer.search``, which is timed apart as "curves").
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import numpy as np

from optimizer.allocate import Job, allocate, throughput_curve
from perfmodel.errors import Infeasible
from perfmodel.specs import Cluster

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # also when loaded by path
from _timing import median_seconds  # noqa: E402

JOBS = (4, 16, 64)
MACHINES = (32, 128, 512)
LARGE = [(64, 2048), (256, 2048), (256, 4096)]


def synthetic_jobs(n_jobs: int, machines: int, rng: np.random.Generator,
                   optional: bool) -> list[Job]:
    """Seeded concave-ish jobs with weights and work amounts (``optional``: min_machines=0)."""
    jobs = []
    m = np.arange(1, machines + 1)
    for j in range(n_jobs):
        speed = rng.uniform(50, 500)
        knee, p = machines / n_jobs * rng.uniform(0.3, 3.0), rng.uniform(0.5, 1.5)
        curve = speed * m / (1 + m / knee) ** p * rng.uniform(0.96, 1.04, machines)
        values = [None if (k == 1 and j % 4 == 3) else float(v) for k, v in zip(m, curve)]
        jobs.append(Job.from_curve(values, weight=float(rng.uniform(0.5, 2.0)),
                                   work=float(rng.uniform(1e5, 1e7)), name=f"job{j}",
                                   min_machines=0 if optional else None))
    return jobs


def run_case(n_jobs: int, machines: int, objective: str, repeats: int, seed: int,
             solver: str | None) -> dict:
    rng = np.random.default_rng(seed)
    cluster = Cluster(machines=machines, nic_bandwidth=1.25e9)
    # The weighted sum may leave jobs out (J > N); the makespan needs every job.
    jobs = synthetic_jobs(n_jobs, machines, rng, optional=objective == "throughput")
    start = time.perf_counter()
    curves = [throughput_curve(job, cluster, machines) for job in jobs]
    t_curves = time.perf_counter() - start
    common = dict(objective=objective, curves=curves)
    t_exact, exact = median_seconds(lambda: allocate(jobs, cluster, method="exact", **common), repeats)
    t_relax, relax = median_seconds(lambda: allocate(jobs, cluster, method="relaxed", solver=solver,
                                            **common), repeats)
    exact_gap = abs(relax.value - exact.value) / abs(exact.value)
    return {"J": n_jobs, "N": machines, "objective": objective, "curves": t_curves,
            "exact": t_exact, "relaxed": t_relax, "gap_bound": relax.gap,
            "gap_exact": exact_gap, "bound_ok": _bound_ok(relax, exact.value),
            "solver": relax.meta["solver"]}


def _bound_ok(relax, optimum: float) -> bool:
    tol = 1e-9 * abs(optimum)
    if relax.objective != "makespan":
        return relax.bound >= optimum - tol
    return relax.bound <= optimum + tol


def print_row(objective: str, n_jobs: int, machines: int, repeats: int, args) -> str | None:
    """Run one case and print its line; returns the LP solver used (None if infeasible)."""
    try:
        r = run_case(n_jobs, machines, objective, repeats, args.seed, args.solver)
    except Infeasible as err:
        print(f"{objective:>12} {n_jobs:>3} {machines:>4}  infeasible: {str(err)[:60]}")
        return None
    print(f"{objective:>12} {n_jobs:>3} {machines:>4} {r['curves']:>9.4f} {r['exact']:>9.4f} "
          f"{r['relaxed']:>9.4f} {r['exact'] / r['relaxed']:>8.2f} {r['gap_bound']:>10.2e} "
          f"{r['gap_exact']:>10.2e} {'ok' if r['bound_ok'] else 'VIOLATED'}")
    return r["solver"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--solver", default=None, help="cvxpy LP solver (default: allocate's)")
    parser.add_argument("--large", action="store_true", help="add larger cases")
    args = parser.parse_args()
    warm = [Job.from_curve([1.0, 2.0])]       # import cvxpy and probe solvers once, untimed
    allocate(warm, Cluster(machines=2, nic_bandwidth=1e9), method="relaxed", solver=args.solver)
    print(f"optimizer.allocate: exact vs cvxpy relaxation; median of {args.repeats} "
          f"(1 for --large cases); Python {platform.python_version()} on {platform.machine()}")
    header = (f"{'objective':>12} {'J':>3} {'N':>4} {'curves s':>9} {'exact s':>9} "
              f"{'relaxed s':>9} {'speedup':>8} {'gap/bound':>10} {'gap/exact':>10} bound")
    print(header)
    print("-" * len(header))
    cases = [(j, n) for j in JOBS for n in MACHINES] + (LARGE if args.large else [])
    solvers = set()
    for objective in ("proportional", "throughput", "makespan"):
        for n_jobs, machines in cases:
            repeats = 1 if (n_jobs, machines) in LARGE else args.repeats
            solvers.add(print_row(objective, n_jobs, machines, repeats, args))
    print(f"LP solver: {', '.join(sorted(s for s in solvers if s))}.  speedup = exact / relaxed "
          "time (curves excluded); gaps are relative: gap/bound = |value - bound| / bound, "
          "gap/exact = |value - optimum| / optimum.")


if __name__ == "__main__":
    main()
