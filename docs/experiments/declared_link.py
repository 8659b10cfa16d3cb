"""Rules for links the user says are FIFO: before and after.

Replays ``perfmodel validate matrix --only corpus --link-known`` (the user says how
the hosts' queues and TCP share a link: ``ns3_job.link_sharing_of``) on the async
regimes of every committed set, or of the CSVs given, before and after one rule:

* ``--rule to-p`` (default): ``select_model(fork_join_to_p=False)`` against
  ``fork_join_to_p="fifo"`` (the servers met at once up to P workers, the in-turn
  growth beyond, only where the link is FIFO: loss-based TCP on drop-tail host
  queues);
* ``--rule toward-bound``: that, against it with ``fifo_toward_bound=True`` (beyond
  P, halfway, geometrically, to the contention-free bound);
* ``--rule fifo-prior`` (with ``--mode sync``): ``fifo_prior="fifo"`` (every model
  valid on a link said FIFO on an equal footing) against ``"fair"`` (TCP taken to
  share it fairly until the runs favour a FIFO-only model by two points).

Prints, per split, the loss-free regimes' mean (max) error, coverage and median
half-width, over all of them and over the ones the rule changes.  With ``--unknown``
the baseline is the protocol as it is (the link unknown) instead, which shows what
saying the link alone does.

    python docs/experiments/declared_link.py [--jobs 2] [--rule to-p|toward-bound|fifo-prior]
        [--unknown] [--mode sync] [CSV ...]

about a minute with two processes over every committed set.
"""

import argparse
import collections

from partly_locked import line, results  # (this directory)

from perfmodel.placement.ns3_corpus import PROTOCOL_SETS, read_rows

#: Each rule's (baseline, rule) options of ``select_model``.
RULES = {"to-p": ({"fork_join_to_p": False}, {"fork_join_to_p": "fifo"}),
         "toward-bound": ({}, {"fifo_toward_bound": True}),
         "fifo-prior": ({"fifo_prior": "fifo"}, {"fifo_prior": "fair"})}


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
        print(f"{split:8} {len(names):3d}  {line([before[n] for n in names]):33} "
              f"{line([after[n] for n in names]):33} {len(changed)}: "
              f"{line([before[n] for n in changed])} -> "
              f"{line([after[n] for n in changed])}")
    for name, r in before.items():
        if after[name].points != r.points:
            f = r.factors
            print(f"  {name} {r.split:8} {f['tcp']:10} {f['queue']:4} P={f['n_ps']} "
                  f"{f['bandwidth_gbps']:g} Gbps: {100 * r.mean_error:5.1f}% -> "
                  f"{100 * after[name].mean_error:5.1f}%")


if __name__ == "__main__":
    main()
