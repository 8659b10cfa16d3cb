"""Sync on the most faithful ground truth: 8 times the segments, heavy tails sampled long.

Replays the user's path of ``perfmodel validate matrix --only corpus`` on the
corpus's loss-free sync regimes at 8 times the segments
(``perfmodel/zoo/validation/ns3_corpus_8x.csv``), with the heavy-tailed
(Pareto-jitter) ones replaced by their re-runs measured four times as long
(``docs/experiments/ns3_corpus_8x_long_tail.csv``, the command in its header),
and prints each split's summary (mean error, max, coverage, median half-width)
and each regime that misses 10% at some worker count.

    python docs/experiments/long_tail_8x.py [--jobs 2]

about a minute on two cores.
"""

import argparse
from pathlib import Path

from perfmodel.fit.corpus import evaluate_corpus
from perfmodel.placement.ns3_corpus import COMMITTED_SETS, read_rows
from perfmodel.sweep import process_pool

RERUN = Path(__file__).parent / "ns3_corpus_8x_long_tail.csv"


def faithful_rows() -> list:
    """The 8x set's loss-free sync rows, the re-run regimes' rows taken from the re-run."""
    rerun = [r for r in read_rows(RERUN) if r["mode"] == "sync"]
    replaced = {r["regime"] for r in rerun}
    base = [r for r in read_rows(COMMITTED_SETS["corpus-8x"])
            if r["mode"] == "sync" and r["regime"] not in replaced]
    return base + rerun


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--jobs", type=int, default=2)
    args = p.parse_args()
    rows = faithful_rows()
    splits = sorted({r["split"] for r in rows})
    with process_pool(args.jobs) as pool:
        report = evaluate_corpus(rows=rows, splits=splits, executor=pool)
    for s in report.summary():
        if s["class"].endswith("loss-free"):
            print(f"{s['split']:6s} {s['class']}: {s['regimes']} regimes, "
                  f"{100 * s['mean_error']:.1f}% (max {100 * s['max_error']:.0f}%), "
                  f"{100 * s['coverage']:.0f}% / {100 * s['halfwidth']:.1f}%")
    for r in report.results:
        if not r.lossy and r.max_error > 0.10:
            pts = ", ".join(f"{p['workers']}: {p['measured']:.0f}/{p['predicted']:.0f}"
                            for p in r.points)
            print(f"  {r.split} {r.regime} {r.factors['jitter']:9s} {r.chosen}: "
                  f"{100 * r.mean_error:.1f}% (max {100 * r.max_error:.0f}%); "
                  f"measured/predicted {pts}")


if __name__ == "__main__":
    main()
