"""Sync on the most faithful ground truth: 8 times the segments, heavy tails sampled long.

Replays the user's path of ``perfmodel validate matrix --only corpus`` on the
corpus's loss-free sync regimes at 8 times the segments
(``perfmodel/zoo/validation/ns3_corpus_8x.csv``), with the heavy-tailed
(Pareto-jitter) ones replaced by their re-runs measured four times as long
(``docs/experiments/ns3_corpus_8x_long_tail.csv``, the test half's, and
``ns3_corpus_8x_long_tail_train.csv``, the train half's; the commands in their
headers),
and prints each split's summary (mean error, max, coverage, median half-width)
and each regime that misses 10% at some worker count.

    python docs/experiments/long_tail_8x.py [--jobs 2]

about a minute on two cores.
"""

import argparse
from pathlib import Path

from partly_locked import line, results  # (this directory)

from perfmodel.placement.ns3_corpus import COMMITTED_SETS, read_rows

RERUNS = tuple(Path(__file__).parent / f"ns3_corpus_8x_long_tail{half}.csv"
               for half in ("", "_train"))


def faithful_rows() -> list:
    """The 8x set's loss-free sync rows, the re-run regimes' rows taken from the re-run."""
    rerun = [r for path in RERUNS for r in read_rows(path) if r["mode"] == "sync"]
    replaced = {r["regime"] for r in rerun}
    base = [r for r in read_rows(COMMITTED_SETS["corpus-8x"])
            if r["mode"] == "sync" and r["regime"] not in replaced]
    return base + rerun


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--jobs", type=int, default=2)
    args = p.parse_args()
    by_regime = results(faithful_rows(), args.jobs)
    for split in sorted({r.split for r in by_regime.values()}):
        group = [r for r in by_regime.values() if r.split == split]
        print(f"{split:6s} sync, loss-free: {len(group)} regimes, {line(group)}")
    for r in by_regime.values():
        if r.max_error > 0.10:
            pts = ", ".join(f"{p['workers']}: {p['measured']:.0f}/{p['predicted']:.0f}"
                            for p in r.points)
            print(f"  {r.split} {r.regime} {r.factors['jitter']:9s} {r.chosen}: "
                  f"{100 * r.mean_error:.1f}% (max {100 * r.max_error:.0f}%); "
                  f"measured/predicted {pts}")

if __name__ == "__main__":
    main()
