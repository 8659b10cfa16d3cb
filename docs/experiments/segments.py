"""What the corpus's scale does: the same regimes with more segments per transfer.

The committed sets leave a whole-model transfer at most 1000 segments
(``ns3_corpus.scale_for``); a set re-run with ``--segments-factor F`` has F times
as many (its CSV header says so).  For every regime and worker count in both, this
prints the committed speed, the re-run's and their ratio; then the user's path of
``perfmodel validate matrix --only corpus`` (the 1- and 2-worker runs, the link
unknown) judged on each, over the worker counts both have, per split and mode.

    python docs/experiments/segments.py perfmodel/zoo/validation/ns3_corpus_8x.csv
        [--base perfmodel/zoo/validation/ns3_corpus.csv] [--jobs 2]

under a minute.
"""

import argparse
import collections

from partly_locked import line, results  # (this directory)

from perfmodel.placement.ns3_corpus import CORPUS_PATH, read_rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rerun", help="a set re-run with --segments-factor")
    ap.add_argument("--base", default=str(CORPUS_PATH), help="the committed set it re-ran")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    rerun = read_rows(a.rerun)
    have = {(r["regime"], r["workers"]) for r in rerun}
    base = [r for r in read_rows(a.base) if (r["regime"], r["workers"]) in have]
    speed = {(r["regime"], int(r["workers"])): float(r["throughput"]) for r in base}
    by_regime = collections.defaultdict(list)
    for r in rerun:
        k, x = int(r["workers"]), float(r["throughput"])
        was = speed.get((r["regime"], k))   # None: the committed run stalled
        by_regime[r["regime"]].append(f"{k}: - -> {x:.4g}" if was is None else
                                      f"{k}: {was:.4g} -> {x:.4g} ({x / was:.3f})")
    segments = {r["regime"]: round(float(r["scale"]), 3) for r in rerun}
    print("speed (samples/s), committed -> re-run (ratio), by worker count")
    for name, cells in sorted(by_regime.items()):
        print(f"  {name} (scale {segments[name]:g}): " + "; ".join(cells))
    before, after = results(base, a.jobs), results(rerun, a.jobs)
    print("the protocol, loss-free: mean (max) error, coverage / median half-width")
    for split, mode in sorted({(r.split, r.mode) for r in after.values()}):
        for label, rs in (("committed", before), ("re-run", after)):
            group = [r for r in rs.values() if (r.split, r.mode) == (split, mode)]
            print(f"  {split:5s} {mode:5s} {label:9s} {line(group)}")
    for name in sorted(after.keys() & before.keys()):
        b, f = before[name], after[name]
        print(f"  {name} {b.mode} {b.factors['queue']:4} P={b.factors['n_ps']} "
              f"{b.factors['bandwidth_gbps']:g} Gbps, {b.chosen}: "
              f"{100 * b.mean_error:5.1f}% -> {100 * f.mean_error:5.1f}%, covered "
              f"{100 * b.coverage:3.0f}% -> {100 * f.coverage:3.0f}%")


if __name__ == "__main__":
    main()
