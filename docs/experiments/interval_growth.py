"""How fast an interval widens beyond the calibration runs, set on every seen set.

``perfmodel.fit.selection.extrapolation_growth`` gives the growth ``g`` of the
log misfit per e-fold of workers beyond the calibration runs (the half-width at
K workers is ``hypot(h_LOO, g ln(K / K_cal))``): ``hypot(g0, 0.5 CV)``, with
``g0 = EXTRAPOLATION_GROWTH[mode]`` and CV the compute's coefficient of
variation.  This script replays the user's path of ``perfmodel validate matrix
--only corpus`` with one ``g`` for every regime, at every ``g`` of a grid, and
finds, for each predicted run and each side of its 90% interval, the least
``g`` at which that side holds the run (the low end below it, the high end
above it).  Each side is to miss at most 5% of the runs: per mode and group
it prints the split-conformal quantile of those needs (the
``ceil(0.95 (n + 1))``-th smallest of n; Lei et al., Distribution-free
predictive inference for regression, JASA 2018), the larger side's.  Groups:
the corpus's halves, the probes, every seen set, and each compute CV.  ``g0``
is the every-seen-set value, taken over the loss-free runs of every committed
set but the held one (``--hold``, the newest probe by default, which judges
it and chose nothing).

    python docs/experiments/interval_growth.py      # about 16 minutes
"""

import argparse
import math

from perfmodel.fit import selection
from perfmodel.fit.corpus import evaluate_corpus
from perfmodel.placement.ns3_corpus import PROBE_PATHS, PROTOCOL_SETS, read_rows

GRID = (0.0, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.1, 0.11, 0.12, 0.14, 0.16,
        0.2, 0.25)


def needs(rows) -> dict:
    """(regime, workers) -> [split, mode, compute CV, low side's need, high side's need]
    over the loss-free runs of ``rows``, every regime at one growth g of :data:`GRID`."""
    cv = {r["regime"]: float(r["compute_cv"]) for r in rows}
    out = {}
    for g in GRID:
        selection.EXTRAPOLATION_GROWTH = {"sync": g, "async": g}
        selection.COMPUTE_CV_GROWTH = 0.0
        for r in evaluate_corpus(rows=rows).results:
            if r.lossy:
                continue
            for p in r.points:
                entry = out.setdefault((r.regime, p["workers"]),
                                       [r.split, r.mode, cv[r.regime], math.inf, math.inf])
                if p["low"] <= p["measured"]:
                    entry[3] = min(entry[3], g)
                if p["measured"] <= p["high"]:
                    entry[4] = min(entry[4], g)
    return out


def conformal(values: list[float], level: float = 0.95) -> float:
    """The split-conformal quantile of the needs (inf when beyond the grid)."""
    values = sorted(values)
    rank = math.ceil(level * (len(values) + 1))
    return values[rank - 1] if rank <= len(values) else math.inf


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hold", default=list(PROBE_PATHS)[-1],
                        help="the set that judges the rule and chooses nothing")
    held = PROBE_PATHS[parser.parse_args().hold]
    rows = [r for path in PROTOCOL_SETS if path != held for r in read_rows(path)]
    need = needs(rows)
    groups = {"train": lambda e: e[0] == "train", "test": lambda e: e[0] == "test",
              "probes": lambda e: e[0].startswith("probe"), "every seen set": lambda e: True}
    for c in sorted({e[2] for e in need.values()}):
        groups[f"compute CV {c:g}"] = lambda e, c=c: e[2] == c
    for mode in ("sync", "async"):
        for name, member in groups.items():
            sel = [e for e in need.values() if e[1] == mode and member(e)]
            if sel:
                g = max(conformal([e[3] for e in sel]), conformal([e[4] for e in sel]))
                print(f"{mode:5s} {name:16s} {len(sel):5d} runs: conformal g {g}")


if __name__ == "__main__":
    main()
