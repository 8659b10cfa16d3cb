"""Async workers in convoys: ``select_model(convoys=...)``'s rules against "reading".

Replays the user's path of ``perfmodel validate matrix --only corpus`` on the
async regimes of the committed sets (or ``--sets``) and of any CSV given
(``--csv``: e.g. a set re-run with more segments per transfer), with
``convoys="reading"`` (the convoy model and the MVA on equal terms, the LOO
error decides), ``"prior"`` (the MVA must earn its place over the convoys),
``"pooled"`` (their geometric mean) and ``"pooled-servers"`` (that where every
run is on two servers or more), and prints per file and split, over the
loss-free async regimes whose answer changes (under any rule, beyond rounding) and over all:
mean error (max), coverage / median half-width.

    python docs/experiments/convoy_prior.py [--jobs 2] [--sets corpus probe5 ...]
        [--csv FILE ...] [--each]

about a minute per set on two cores.
"""

import math

from partly_locked import line, results, set_arguments  # (this directory)

from perfmodel.fit.selection import CONVOYS
from perfmodel.placement.ns3_corpus import read_rows


def main() -> None:
    args, paths = set_arguments(__doc__.splitlines()[0])
    for path in paths:
        rows = [r for r in read_rows(path) if r["mode"] == "async"]
        before, *after = (results(rows, args.jobs, convoys=rule) for rule in CONVOYS)
        print(f"{path}\nsplit     changed  " + "".join(f"{'convoys=' + repr(r):34s}"
                                                       for r in CONVOYS))
        for split in sorted({r.split for r in before.values()}):
            names = [k for k, r in before.items() if r.split == split]
            # a geometric mean of two equal predictions differs in its last bits only
            changed = [k for k in names if any(
                not math.isclose(a[k].mean_error, before[k].mean_error, rel_tol=1e-9)
                for a in after)]
            for label, keys in ((f"{len(changed):3d}", changed), ("all", names)):
                print(f"{split:9s} {label:>7s}  " + "  ".join(
                    f"{line([rs[k] for k in keys]):32s}" for rs in (before, *after)))
            for k in changed if args.each else ():
                f = before[k].factors
                print(f"  {k} {f['queue']:4s} {f['tcp']:9s} {f['dnn']:14s} P={f['n_ps']} "
                      f"{f['bandwidth_gbps']:g} Gbps {f['jitter']:9s} {before[k].chosen} "
                      f"{100 * before[k].mean_error:5.1f}% -> " + ", ".join(
                          f"{a[k].chosen} {100 * a[k].mean_error:5.1f}%" for a in after))


if __name__ == "__main__":
    main()
