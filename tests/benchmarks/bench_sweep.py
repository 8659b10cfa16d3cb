"""Benchmark: a 10,000-point coarse sweep in one process, on a process pool and on Dask
(a script, not a test).

The grid is Li et al. 2022's Sync-SGD coarse model (``SyncCoarse``, eq. 9) on the
zoo's measured ResNet-50 profile: 625 worker counts x 4 server counts x 4
bandwidths = 10,000 points.  Each executor sweeps it ``--repeats`` times
(no output file, no progress bar); the script checks that every executor gives
the same rows, then prints the median points/s of each and its ratio to the
serial sweep.

* serial: ``sweep(grid, jobs=1)``, this process;
* pool: ``sweep(grid, jobs=N)``, a fresh spawn-started ProcessPoolExecutor per
  repeat (its start-up is part of the cost a user pays);
* dask: ``sweep(grid, executor=client.get_executor())`` on a
  ``distributed.LocalCluster`` of N one-thread worker processes started once
  (a cluster outlives many sweeps).

Usage::

    python tests/benchmarks/bench_sweep.py [--workers 625] [--jobs 2] [--repeats 5]
                                           [--chunk-size 250] [--model sync]

``--model sim --workers 10 --chunk-size 4 --repeats 1`` (160 simulations of
about 50 ms each) shows the other side: a model slow enough for the pool to pay.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys

from perfmodel.sweep import Grid, sweep

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # also when loaded by path
from _timing import median_seconds  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=625, help="worker counts 1..N (x 16)")
    parser.add_argument("--jobs", type=int, default=2, help="processes of the pool and of Dask")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--chunk-size", type=int, default=250)
    parser.add_argument("--model", default="sync", help="a perfmodel.registry name")
    args = parser.parse_args(argv)

    grid = Grid.from_axes(model=args.model, workers=range(1, args.workers + 1), n_ps=range(1, 5),
                          bandwidth=["1Gbps", "10Gbps", "25Gbps", "100Gbps"])
    n = len(grid)
    common = dict(chunk_size=args.chunk_size, progress=False)
    runs = {"serial": lambda: sweep(grid, jobs=1, **common),
            f"pool ({args.jobs} processes)": lambda: sweep(grid, jobs=args.jobs, **common)}
    cluster = client = None
    try:
        from distributed import Client, LocalCluster

        cluster = LocalCluster(n_workers=args.jobs, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
        executor = client.get_executor()
        runs[f"dask LocalCluster ({args.jobs} workers)"] = lambda: sweep(grid, executor=executor,
                                                                         **common)
    except ImportError:
        print("dask: skipped (pip install 'perfmodel[dask]')")
    try:
        results = {name: median_seconds(fn, args.repeats) for name, fn in runs.items()}
    finally:
        if client is not None:
            client.close()
            cluster.close()

    reference = results["serial"][1].records
    for name, (_, result) in results.items():
        if result.records != reference:
            raise SystemExit(f"{name}: rows differ from the serial sweep")
    print(f"{n:,} points of model {args.model!r}, chunks of {args.chunk_size}, median of "
          f"{args.repeats}; {platform.python_version()} on {os.cpu_count()} CPUs")
    serial = results["serial"][0]
    for name, (seconds, _) in results.items():
        print(f"  {name:32s} {seconds:7.3f} s  {n / seconds:10,.0f} points/s  "
              f"x{serial / seconds:.2f} of serial")


if __name__ == "__main__":  # the pool's spawned processes import this file
    main()
