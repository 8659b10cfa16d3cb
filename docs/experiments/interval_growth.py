"""How fast an interval widens beyond the calibration runs, set on the corpus's train half.

``perfmodel.fit.selection.EXTRAPOLATION_GROWTH`` holds, per mode, the growth
``g`` of the log misfit per e-fold of workers beyond the calibration runs
(the half-width at K workers is ``hypot(h_LOO, g ln(K / K_cal))``).  This
script replays the user's path of ``perfmodel validate matrix --only corpus``
at every ``g`` of a grid and finds, for each predicted run and each side of its
90% interval, the least ``g`` at which that side holds the run (the low end
below it, the high end above it).  Each side is to miss at most 5% of the
runs: per mode, regime class and side it prints the split-conformal quantile
of those needs (the ``ceil(0.95 (n + 1))``-th smallest of n; Lei et al.,
Distribution-free predictive inference for regression, JASA 2018), and ``g``
is the larger of the two sides' quantiles.  Then the coverage and the median
half-width at the chosen values.  The values adopted are those of the train
half's loss-free classes; the test half is printed beside them and chose
nothing.

    python docs/experiments/interval_growth.py      # about 8 minutes
"""

import math

import numpy as np

from perfmodel.fit import selection
from perfmodel.fit.corpus import evaluate_corpus

GRID = (0.0, 0.05, 0.08, 0.09, 0.1, 0.11, 0.12, 0.13, 0.14, 0.15, 0.16, 0.2, 0.25, 0.3)
CLASSES = ("sync, loss-free", "async, loss-free", "sync, lossy", "async, lossy")


def points_at(g: float) -> list[dict]:
    """Every predicted run of the corpus with its interval at growth ``g`` (both modes)."""
    selection.EXTRAPOLATION_GROWTH = {"sync": g, "async": g}
    out = []
    for r in evaluate_corpus().results:
        out += [dict(p, split=r.split, cls=r.regime_class, regime=r.regime) for p in r.points]
    return out


def conformal(needs: list[float], level: float = 0.95) -> float:
    """The split-conformal quantile of the needs (inf when beyond the grid)."""
    needs = sorted(needs)
    rank = math.ceil(level * (len(needs) + 1))
    return needs[rank - 1] if rank <= len(needs) else math.inf


def main() -> None:
    runs = {g: points_at(g) for g in GRID}
    need = {}   # (regime, workers) -> [split, class, low side's need, high side's need]
    for g in GRID:
        for p in runs[g]:
            entry = need.setdefault((p["regime"], p["workers"]),
                                    [p["split"], p["cls"], math.inf, math.inf])
            if p["low"] <= p["measured"]:
                entry[2] = min(entry[2], g)
            if p["measured"] <= p["high"]:
                entry[3] = min(entry[3], g)
    chosen = {}
    for cls in CLASSES:
        for split in ("train", "test"):
            sides = [conformal([n[side] for n in need.values() if n[:2] == [split, cls]])
                     for side in (2, 3)]
            if split == "train" and cls.endswith("loss-free"):
                chosen[cls.split(",")[0]] = max(sides)
            print(f"{cls:17s} {split:5s} conformal g: low side {sides[0]}, high side {sides[1]}")
    print(f"\nadopted (train, loss-free): {chosen}")
    for cls in CLASSES:
        g = chosen[cls.split(",")[0]]
        for split in ("train", "test"):
            ps = [p for p in runs[g] if p["split"] == split and p["cls"] == cls]
            cov = np.mean([p["low"] <= p["measured"] <= p["high"] for p in ps])
            width = np.median([0.5 * (p["high"] - p["low"]) / p["predicted"] for p in ps])
            print(f"g = {g:.2f}  {cls:17s} {split:5s} {len(ps):3d} runs: coverage {cov:.0%}, "
                  f"median half-width {width:.1%}")


if __name__ == "__main__":
    main()
