"""Benchmark: the held-out protocol in one process vs a process pool (a script, not a test).

Times :func:`perfmodel.fit.corpus.evaluate_corpus` on the first ``--regimes``
regimes of the ns-3 corpus (both halves, sync and async, coarse profiles: what
``perfmodel validate matrix --only corpus`` runs per set), or with ``--layers``
on its loss-free sync train regimes with each job's per-layer profile (the
replay of ``--layers``), once in this process and once on a pool of ``--jobs``
processes (:func:`perfmodel.sweep.process_pool`, its start-up included), and
prints the median wall time of each, their ratio and whether the two reports
are equal (they must be).

Usage::

    python tests/benchmarks/bench_corpus.py [--regimes 96] [--layers] [--jobs 2] [--repeats 1]

Each repeat starts cold: the simulator's kept runs are cleared, as a fresh
command's would be, and a new pool is started.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys

from perfmodel.fit import level
from perfmodel.fit.corpus import evaluate_corpus
from perfmodel.placement.ns3_corpus import CORPUS_PATH, read_rows
from perfmodel.sim import model as sim_model
from perfmodel.sweep import process_pool

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # also when loaded by path
from _timing import median_seconds  # noqa: E402


def first_regimes(n_regimes: int, keep=lambda row: True) -> list[dict]:
    """The corpus's rows of its first ``n_regimes`` regimes whose rows ``keep`` takes."""
    rows = read_rows(CORPUS_PATH)
    names = set(list(dict.fromkeys(r["regime"] for r in rows if keep(r)))[:n_regimes])
    return [r for r in rows if r["regime"] in names]


def loss_free_sync_train(row: dict) -> bool:
    """A row of a loss-free sync regime of the train half (the ``--layers`` set)."""
    return row["split"] == "train" and row["mode"] == "sync" and row["buffer"] != "shallow"


def here(rows, layers: bool):
    sim_model._kept_estimate.cache_clear()   # cold, as a fresh command's caches are
    level._cached_estimate.cache_clear()
    return evaluate_corpus(rows=rows, layers=layers)


def pooled(rows, layers: bool, jobs: int):
    with process_pool(jobs) as pool:
        return evaluate_corpus(rows=rows, layers=layers, executor=pool)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--regimes", type=int, default=96)
    p.add_argument("--layers", action="store_true",
                   help="loss-free sync train regimes with per-layer profiles")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--repeats", type=int, default=1)
    args = p.parse_args(argv)
    rows = first_regimes(args.regimes, loss_free_sync_train if args.layers else lambda r: True)
    what = "sync regimes with per-layer profiles" if args.layers else "regimes, coarse profiles"
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; "
          f"{len({r['regime'] for r in rows})} {what}, {args.repeats} repeat(s)")
    t_here, a = median_seconds(lambda: here(rows, args.layers), args.repeats)
    t_pool, b = median_seconds(lambda: pooled(rows, args.layers, args.jobs), args.repeats)
    print(f"one process      {t_here:8.1f} s")
    print(f"{args.jobs} processes      {t_pool:8.1f} s   ({t_here / t_pool:.2f}x faster)")
    print(f"same report: {a == b}")


if __name__ == "__main__":
    main()
