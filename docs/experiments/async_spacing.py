"""Where the async selection misses, against the update spacing ``T_S B / M``.

Replays the user's path of ``perfmodel validate matrix --only corpus`` (runs of
1-2 workers, then 3-16) on the async regimes of every committed set and prints,
for the loss-free ones, the chosen model's signed error ``predicted / measured
- 1`` at 8-16 workers, grouped by host queue, servers (1-2 or 3-4) and the
update spacing: how long a server's update of one gradient takes beside one
model's transfer over one link.  A server applies one gradient at a time, so
the spacing is how far it pulls apart workers that reach it together; fair
links keep transfers that start apart just as far apart (processor sharing
preserves equal jobs' gaps), so with a small spacing nothing but TCP and the
compute's jitter breaks a convoy up.

With ``--spaced-everywhere`` it also replays the train and test halves with the
spaced simulator (``selection.spaced_candidate``) answering every async job,
whatever its spacing and level: the experiment behind "tried, not adopted" in
docs/validation.md.

    python docs/experiments/async_spacing.py [--jobs 2] [--by-link] [--spaced-everywhere]

about 30 s (the last option adds a minute).
"""

import argparse
import collections

import numpy as np

from perfmodel import zoo
from perfmodel.fit import selection
from perfmodel.fit.corpus import evaluate_corpus
from perfmodel.placement.ns3_corpus import CORPUS_PATH, PROTOCOL_SETS, read_rows
from perfmodel.sweep import process_pool

#: Spacing classes: below the spaced simulator's threshold, split twice, then up to the
#: servers' bound (``selection.SPACED_SPACING``, ``selection.SERVER_BOUND_SPACING``).
EDGES = (0.05, 0.15, selection.SPACED_SPACING, selection.SERVER_BOUND_SPACING)


def spacing(row: dict) -> float:
    """``T_S B / M`` of a corpus row (its update time, line rate and DNN)."""
    model_bytes = zoo.profile(f"{row['dnn']}-pipedream").model_bytes
    return float(row["t_update"]) * float(row["bandwidth"]) / model_bytes


def spacing_class(s: float) -> str:
    lows = (0.0, *EDGES)
    i = int(np.searchsorted(EDGES, s, side="right"))
    return f">= {lows[i]:g}" if i == len(EDGES) else f"{lows[i]:g}-{EDGES[i]:g}"


def signed_errors(jobs: int, by_link: bool = False) -> dict:
    """(queue, servers, spacing class[, Gbps]) -> signed errors of the chosen model at
    K >= 8."""
    rows = [r for path in PROTOCOL_SETS for r in read_rows(path) if r["mode"] == "async"]
    first = {r["regime"]: r for r in rows}
    with process_pool(jobs) as pool:
        report = evaluate_corpus(rows=rows, splits=sorted({r["split"] for r in rows}),
                                 executor=pool)
    out = collections.defaultdict(list)
    for res in report.results:
        if res.lossy:
            continue
        row = first[res.regime]
        key = (row["queue"], "1-2" if int(row["n_ps"]) <= 2 else "3-4",
               spacing_class(spacing(row)))
        key += (f"{float(row['bandwidth']) * 8e-9:g}",) if by_link else ()
        out[key] += [p["predicted"] / p["measured"] - 1 for p in res.points
                     if p["workers"] >= 8]
    return out


def spaced_everywhere() -> None:
    """Train and test, async loss-free: the selection as it is, then the spaced simulator
    answering every job (one process: the constants are this module's change)."""
    rows = [r for r in read_rows(CORPUS_PATH) if r["mode"] == "async"]
    kept = selection.SPACED_SPACING, selection.SPACED_LEVEL
    try:
        for label, (at, level) in {"as it is": kept,
                                   "spaced everywhere": (0.0, float("inf"))}.items():
            selection.SPACED_SPACING, selection.SPACED_LEVEL = at, level
            report = evaluate_corpus(rows=rows)
            for split in ("train", "test"):
                rs = [r for r in report.results if r.split == split and not r.lossy]
                print(f"{label:18s} {split:5s} {len(rs):3d} regimes  mean error "
                      f"{100 * np.mean([r.mean_error for r in rs]):5.1f}%  max "
                      f"{100 * max(r.max_error for r in rs):5.1f}%")
    finally:
        selection.SPACED_SPACING, selection.SPACED_LEVEL = kept


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--spaced-everywhere", action="store_true")
    p.add_argument("--by-link", action="store_true", help="also by the link's Gbps")
    args = p.parse_args()
    print("queue  servers  spacing    " + ("Gbps " if args.by_link else "")
          + "runs  signed mean  |error| mean   (K = 8-16)")
    for key, errs in sorted(signed_errors(args.jobs, args.by_link).items()):
        e = np.asarray(errs)
        link = f"{key[3]:>4s} " if args.by_link else ""
        print(f"{key[0]:6s} {key[1]:8s} {key[2]:10s} {link}{len(e):4d}  "
              f"{100 * e.mean():+10.1f}%  {100 * np.abs(e).mean():11.1f}%")
    if args.spaced_everywhere:
        spaced_everywhere()


if __name__ == "__main__":
    main()
