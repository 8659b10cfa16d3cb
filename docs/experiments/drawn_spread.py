"""Whether a model that draws each worker's compute should widen its interval for it.

``select_model`` widens a prediction's 90% interval beyond the runs by
``hypot(g0, 0.5 c)`` per e-fold of workers when the job's compute varies (CV c):
the slowest of K workers pulls away from the mean, which runs of 1-2 workers
cannot show.  The simulator draws every worker's compute from that spread, so
its sync step already waits for the slowest of K; ``widen_drawn_spread=False``
lets its interval widen at the steady rate ``g0`` only.  This script replays the
user's path of ``perfmodel validate matrix --only corpus`` on the sync regimes of
every committed set whose compute varies, with and without the widening, and
prints per set the loss-free regimes, how many chose the simulator, their mean
error, the interval's coverage and its median half-width.

    python docs/experiments/drawn_spread.py [--jobs 2]     # about 20 s on one core
"""

import argparse
import statistics

from perfmodel.fit.corpus import SPLITS, evaluate_corpus
from perfmodel.placement.ns3_corpus import PROTOCOL_SETS, read_rows
from perfmodel.sweep import process_pool


def varying_sync_rows() -> list[dict]:
    """The sync rows of every committed set whose compute varies."""
    return [r for path in PROTOCOL_SETS for r in read_rows(path)
            if r["mode"] == "sync" and r["jitter"] != "none"]


def table(rows, jobs: int) -> dict:
    """(split, widen) -> (regimes, simulator chosen, mean error, coverage, half-width)."""
    out = {}
    for widen in (True, False):
        with process_pool(jobs) as pool:
            report = evaluate_corpus(rows=rows, executor=pool, widen_drawn_spread=widen)
        for split in SPLITS:
            rs = [r for r in report.results if r.split == split and not r.lossy]
            if rs:
                out[split, widen] = (len(rs), sum(r.chosen.startswith("sim") for r in rs),
                                     statistics.mean(r.mean_error for r in rs),
                                     statistics.mean(r.coverage for r in rs),
                                     statistics.median(r.halfwidth for r in rs))
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--jobs", type=int, default=1)
    out = table(varying_sync_rows(), p.parse_args(argv).jobs)
    print("| set | regimes | simulator chosen | mean error | widened: coverage, half-width "
          "| not widened: coverage, half-width |\n|---|---|---|---|---|---|")
    for split in SPLITS:
        if (split, True) in out:
            n, sims, err, cov, hw = out[split, True]
            _, _, err2, cov2, hw2 = out[split, False]
            assert abs(err - err2) < 1e-12   # the rule moves no prediction
            print(f"| {split} | {n} | {sims} | {100 * err:.1f}% | {100 * cov:.0f}%, "
                  f"{100 * hw:.0f}% | {100 * cov2:.0f}%, {100 * hw2:.0f}% |")


if __name__ == "__main__":
    main()
