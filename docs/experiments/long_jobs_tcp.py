"""Long-job rules that read the TCP control, against ``horizon="long"``, on sets measured as long jobs.

The long job's answer (``select_model(horizon="long")``) assumes links that
run at their rate; DCTCP idles a server's link where many flows meet.  This
replays the user's path of ``perfmodel validate matrix --only corpus`` on the
loss-free async regimes of the given long-job sets with three rules fixed
before the twenty-eighth probe ran:

- ``L``: ``horizon="long"``;
- ``L1``: ``convoys="reading"`` with the fork-join on FIFO links only (the
  lowest mean of three rules on the corpus's long train halves);
- ``LT``: the window's default answer on DCTCP, ``L`` on every other control
  (a regime's answer is the one its rule's run gives, so LT is read off the
  default's and L's runs);

and prints, per set: mean error (max), coverage / median half-width of the
default and each rule, over every regime, the DCTCP ones and the others.

    python docs/experiments/long_jobs_tcp.py [--jobs 2] [--split S] [FILE ...]

(default: the train split of the corpus's halves at both scales measured as
long jobs; the judge is ``docs/experiments/ns3_probe28_async_warm32.csv``),
about a minute per set on two cores.
"""

import argparse
from pathlib import Path

from partly_locked import line, results  # (this directory)

from perfmodel.placement.ns3_corpus import read_rows

HERE = Path(__file__).parent
TRAIN_HALVES = ("ns3_corpus_async_warm32.csv", "ns3_corpus_8x_async_warm32_train.csv")
RUNS = {"default": {}, "L": {"horizon": "long"}, "L1": {"convoys": "reading"}}
#: The regimes each line reports, by their TCP control.
GROUPS = {"every": lambda tcp: True, "DCTCP": lambda tcp: tcp == "dctcp",
          "other TCP": lambda tcp: tcp != "dctcp"}


def rule_results(rows, jobs: int) -> dict:
    """rule -> regime -> RegimeResult; LT takes the default's on DCTCP and L's elsewhere."""
    by_rule = {name: results(rows, jobs, **options) for name, options in RUNS.items()}
    tcp = {r["regime"]: r["tcp"] for r in rows}
    by_rule["LT"] = {k: (by_rule["default"] if tcp[k] == "dctcp" else by_rule["L"])[k]
                     for k in by_rule["L"]}
    return by_rule


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--split", help="only this split (default: train without FILE, else every)")
    p.add_argument("files", nargs="*", help="long-job sets (default: the long train halves)")
    args = p.parse_args()
    paths = [Path(f) for f in args.files] or [HERE / name for name in TRAIN_HALVES]
    split_asked = args.split or (None if args.files else "train")
    print(f"{'set':38s} {'regimes':12s} " + "".join(f"{r:34s}" for r in (*RUNS, "LT")))
    for path in paths:
        rows = [r for r in read_rows(path) if r["mode"] == "async"
                and split_asked in (None, r["split"])]
        by_rule = rule_results(rows, args.jobs)
        tcp = {r["regime"]: r["tcp"] for r in rows}
        for label, keep in GROUPS.items():
            names = [k for k in by_rule["L"] if keep(tcp[k])]
            print(f"{path.name:38s} {label:12s} " + "".join(
                f"{line([rs[k] for k in names]):34s}" for rs in by_rule.values()), flush=True)


if __name__ == "__main__":
    main()
