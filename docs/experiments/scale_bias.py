"""How far the protocol's async predictions sit above the runs, by worker count and scale.

Replays the user's path of ``perfmodel validate matrix --only corpus`` (the
link unknown) on the loss-free async regimes of the sets run at 8 times the
segments per transfer (every probe designed at that scale and the corpus
so, ``corpus-8x``) and of the sets at the corpus's scale, and prints
per scale, one server or more, and worker count the geometric mean of
predicted over measured throughput and the share of points more than 10% too
fast or too slow.

    python docs/experiments/scale_bias.py [--jobs 2]

about ten minutes on two cores.
"""

import argparse
import collections

import numpy as np
from partly_locked import results  # (this directory)

from perfmodel.placement.ns3_corpus import CORPUS_8X_PATH, DESIGNS, PROBE_PATHS, PROTOCOL_SETS, read_rows


def report(label: str, paths, jobs: int) -> None:
    rows = [r for p in paths for r in read_rows(p) if r["mode"] == "async"]
    ratios = collections.defaultdict(list)
    for r in results(rows, jobs).values():
        for q in r.points:
            key = (int(r.factors["n_ps"]) > 1, q["workers"])
            ratios[key].append(np.log(q["predicted"] / q["measured"]))
    for (many, k), v in sorted(ratios.items()):
        v = np.asarray(v)
        print(f"{label:22s} {'2+ servers' if many else '1 server':10s} K={k:2d} n={len(v):3d}  "
              f"predicted / measured {np.exp(v.mean()):.3f}  >10% fast "
              f"{np.mean(v > np.log(1.1)):.2f}  >10% slow {np.mean(v < -np.log(1.1)):.2f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--jobs", type=int, default=2)
    a = p.parse_args()
    at_8x = [PROBE_PATHS[name] for name, d in DESIGNS.items()
             if name in PROBE_PATHS and d.segments_factor > 1] + [CORPUS_8X_PATH]
    report("8 times the segments", at_8x, a.jobs)
    report("the corpus's scale", [q for q in PROTOCOL_SETS if q not in at_8x], a.jobs)


if __name__ == "__main__":
    main()
