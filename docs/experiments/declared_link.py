"""Rules for links the user says are FIFO: before and after.

Replays ``perfmodel validate matrix --only corpus --link-known`` (the user says how
the hosts' queues and TCP share a link: ``ns3_job.link_sharing_of``) on the async
regimes of every committed set, or of the CSVs given, before and after one rule:

* ``--rule to-p`` (default): ``select_model(fork_join_to_p=False)`` against
  ``fork_join_to_p="fifo"`` (the servers met at once up to P workers, the in-turn
  growth beyond, only where the link is FIFO: loss-based TCP on drop-tail host
  queues);
* ``--rule toward-bound``: that, against it with ``fifo_toward_bound=True`` (beyond
  P, halfway, geometrically, to the contention-free bound).

Prints, per split, the loss-free regimes' mean (max) error, coverage and median
half-width, over all of them and over the ones the rule changes.  With ``--unknown``
the baseline is the protocol as it is (the link unknown) instead, which shows what
saying the link alone does.

    python docs/experiments/declared_link.py [--jobs 2] [--rule to-p|toward-bound]
        [--unknown] [--mode sync] [CSV ...]

about a minute with two processes over every committed set.
"""

import argparse
import collections

import numpy as np

from perfmodel.fit.corpus import evaluate_corpus
from perfmodel.placement.ns3_corpus import PROTOCOL_SETS, read_rows
from perfmodel.sweep import process_pool

#: Each rule's (baseline, rule) options of ``select_model``.
RULES = {"to-p": ({"fork_join_to_p": False}, {"fork_join_to_p": "fifo"}),
         "toward-bound": ({}, {"fifo_toward_bound": True})}


def results(rows: list, jobs: int, **options) -> dict:
    """regime -> RegimeResult of the protocol with ``options``, loss-free regimes only."""
    with process_pool(jobs) as pool:
        report = evaluate_corpus(rows=rows, splits=sorted({r["split"] for r in rows}),
                                 executor=pool, **options)
    return {r.regime: r for r in report.results if not r.lossy}


def summary(rs: list) -> str:
    if not rs:
        return "-"
    return (f"{100 * np.mean([r.mean_error for r in rs]):5.1f}% "
            f"(max {100 * max(r.max_error for r in rs):3.0f}%) "
            f"{100 * np.mean([r.coverage for r in rs]):3.0f}% / "
            f"{100 * np.median([r.halfwidth for r in rs]):2.0f}%")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", nargs="*", help="corpus CSVs (default: every committed set)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--mode", choices=("async", "sync"), default="async")
    ap.add_argument("--rule", choices=RULES, default="to-p")
    ap.add_argument("--unknown", action="store_true",
                    help="baseline: the link unknown (the protocol as it is)")
    a = ap.parse_args()
    rows = [r for p in (a.csv or PROTOCOL_SETS) for r in read_rows(p) if r["mode"] == a.mode]
    base, rule = RULES[a.rule]
    before = results(rows, a.jobs, link_known=not a.unknown, **base)
    after = results(rows, a.jobs, link_known=True, **rule)
    by_split = collections.defaultdict(list)
    for name, r in before.items():
        by_split[r.split].append(name)
    print(f"{a.mode}, loss-free: mean (max) error, coverage / median half-width")
    print(f"{'split':8} {'n':>3}  {'before':33} {'after':33} changed")
    for split, names in sorted(by_split.items()):
        changed = [n for n in names if after[n].points != before[n].points]
        print(f"{split:8} {len(names):3d}  {summary([before[n] for n in names]):33} "
              f"{summary([after[n] for n in names]):33} {len(changed)}: "
              f"{summary([before[n] for n in changed])} -> "
              f"{summary([after[n] for n in changed])}")
    for name, r in before.items():
        if after[name].points != r.points:
            f = r.factors
            print(f"  {name} {r.split:8} {f['tcp']:10} {f['queue']:4} P={f['n_ps']} "
                  f"{f['bandwidth_gbps']:g} Gbps: {100 * r.mean_error:5.1f}% -> "
                  f"{100 * after[name].mean_error:5.1f}%")


if __name__ == "__main__":
    main()
