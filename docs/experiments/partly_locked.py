"""Async workers partly in lock-step on one or two servers: the rule against the MVA.

Replays the user's path of ``perfmodel validate matrix --only corpus`` on the
async regimes of every committed set (or of ``--sets``), with
``select_model(partly_locked=False)`` and ``True``, and prints per set, over the
loss-free async regimes the rule changes (its answer differs), the mean of
their mean errors, the largest max error, the interval's mean coverage and
median half-width, each without and with the rule; then the same over every
loss-free async regime of the set.

    python docs/experiments/partly_locked.py [--jobs 2] [--sets corpus probe5 ...]
        [--csv FILE ...] [--each]

about a minute on two cores over every set.
"""

import argparse

import numpy as np

from perfmodel.fit.corpus import evaluate_corpus
from perfmodel.placement.ns3_corpus import COMMITTED_SETS, PROTOCOL_SETS, read_rows
from perfmodel.sweep import process_pool


def results(rows, jobs: int, **options) -> dict:
    """regime -> RegimeResult of the loss-free regimes, the protocol run with ``options``
    (of :func:`~perfmodel.fit.corpus.evaluate_corpus`)."""
    with process_pool(jobs) as pool:
        report = evaluate_corpus(rows=rows, splits=sorted({r["split"] for r in rows}),
                                 executor=pool, **options)
    return {r.regime: r for r in report.results if not r.lossy}


def line(rs) -> str:
    if not rs:
        return "-"
    return (f"{100 * np.mean([r.mean_error for r in rs]):5.1f}% "
            f"(max {100 * max(r.max_error for r in rs):4.0f}%), "
            f"{100 * np.mean([r.coverage for r in rs]):3.0f}% / "
            f"{100 * np.median([r.halfwidth for r in rs]):4.1f}%")


def set_arguments(description: str) -> tuple[argparse.Namespace, list]:
    """The options a rule's replay takes (--jobs, --sets, --csv, --each) and the set files
    they name (default: every set the protocol reads)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--sets", nargs="*", help="committed sets by name (default: every one)")
    p.add_argument("--csv", nargs="*", default=[], help="corpus CSV files of your own")
    p.add_argument("--each", action="store_true", help="also each regime the rule changes")
    args = p.parse_args()
    paths = ([COMMITTED_SETS[s] for s in args.sets or ()] + list(args.csv)
             or list(PROTOCOL_SETS))
    return args, paths


def main() -> None:
    args, paths = set_arguments(__doc__.splitlines()[0])
    rows = [r for path in paths for r in read_rows(path) if r["mode"] == "async"]
    before, after = (results(rows, args.jobs, partly_locked=flag) for flag in (False, True))
    print("split     changed  without the rule                  with the rule")
    for split in sorted({r.split for r in before.values()}):
        names = [k for k, r in before.items() if r.split == split and k in after]
        changed = [k for k in names if after[k].chosen != before[k].chosen]
        for label, keys in ((f"{len(changed):3d}", changed), ("all", names)):
            print(f"{split:9s} {label:>7s}  {line([before[k] for k in keys]):32s}  "
                  f"{line([after[k] for k in keys])}")
        for k in changed if args.each else ():
            f = before[k].factors
            print(f"  {k} {f['queue']:4s} {f['tcp']:9s} {f['dnn']:14s} P={f['n_ps']} "
                  f"{f['bandwidth_gbps']:g} Gbps {f['jitter']:9s} {before[k].chosen} "
                  f"{100 * before[k].mean_error:5.1f}% -> {after[k].chosen} "
                  f"{100 * after[k].mean_error:5.1f}%")


if __name__ == "__main__":
    main()
