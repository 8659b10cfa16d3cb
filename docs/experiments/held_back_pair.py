"""One-server async jobs whose two-worker run is held back: how the protocol does there.

In some one-server async regimes two workers that start together gain little
over one (they push, and then pull, at the same moments), while four or more
spread over the server link's two directions and gain much more.  This
prints, over the loss-free async regimes on one server of every committed
set, those whose 2-worker speedup is below ``--pair`` (1.6) while the
4-worker speedup exceeds it ``--gain`` (1.25) times, and the protocol's
(``perfmodel validate matrix --only corpus``, the link unknown) mean error
and mean predicted / measured there and over the other one-server regimes.
A diagnostic: no rule uses it.

    python docs/experiments/held_back_pair.py [--jobs 2] [--pair 1.6] [--gain 1.25]

about two minutes on two cores.
"""

import argparse
import collections

import numpy as np
from partly_locked import results  # (this directory)

from perfmodel.placement.ns3_corpus import PROTOCOL_SETS, read_rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--pair", type=float, default=1.6)
    p.add_argument("--gain", type=float, default=1.25)
    a = p.parse_args()
    rows = [r for path in PROTOCOL_SETS for r in read_rows(path) if r["mode"] == "async"]
    speed = collections.defaultdict(dict)
    for r in rows:
        speed[r["regime"]][int(r["workers"])] = float(r["throughput"])
    groups = {"held-back pair": [], "other one-server": []}
    for name, res in results(rows, a.jobs).items():
        x = speed[name]
        if str(res.factors["n_ps"]) != "1" or 4 not in x:
            continue
        held = x[2] / x[1] < a.pair and x[4] / x[2] > a.gain
        ratio = float(np.mean([q["predicted"] / q["measured"] for q in res.points]))
        groups["held-back pair" if held else "other one-server"].append((name, res, ratio))
        if held:
            print(f"  {name} {res.factors['queue']:4} {res.factors['jitter']:9} "
                  f"{res.factors['bandwidth_gbps']:g} Gbps: speedup 2 {x[2] / x[1]:.2f}, "
                  f"4 {x[4] / x[1]:.2f}; {res.chosen} {100 * res.mean_error:.1f}%, "
                  f"predicted / measured {ratio:.2f}")
    for label, group in groups.items():
        print(f"{label}: {len(group)} regimes, mean error "
              f"{100 * np.mean([g[1].mean_error for g in group]):.1f}%, predicted / measured "
              f"{np.mean([g[2] for g in group]):.2f}, coverage "
              f"{100 * np.mean([g[1].coverage for g in group]):.0f}%")


if __name__ == "__main__":
    main()
