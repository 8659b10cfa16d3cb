"""Long jobs: the async default against its alternatives on the sets measured after 32 gradients.

Replays the user's path of ``perfmodel validate matrix --only corpus`` on the
loss-free async regimes of every set measured as a long job (``ns3_corpus
--async-warmup 32``: the corpus's test and train halves at 8 times the
segments, the corpus and probes 5, 16, 20, 21, 22 and 27 at its scale), with
the default ``select_model()``, ``convoys="reading"``, ``fork_join_to_p=True``
(the servers met at once up to P workers) and ``horizon="long"`` (both), and prints
per set and split: mean error (max), coverage / median half-width; then the
corpus's halves at both scales pooled, train beside test (the regimes of the
train halves are where a long-job rule may be designed).

    python docs/experiments/long_jobs.py [--jobs 2] [--only FILE ...]

about four minutes on two cores.
"""

import argparse
from pathlib import Path

from partly_locked import line, results  # (this directory)

from perfmodel.placement.ns3_corpus import read_rows

HERE = Path(__file__).parent
CORPUS_SETS = ("ns3_corpus_8x_async_warm32.csv", "ns3_corpus_8x_async_warm32_train.csv",
               "ns3_corpus_async_warm32.csv")
LONG_JOB_SETS = (*CORPUS_SETS,
                 *(f"ns3_probe{n}_async_warm32.csv" for n in (5, 16, 20, 21, 22, 27)))
RULES = {"default": {}, 'convoys="reading"': {"convoys": "reading"},
         "fork_join_to_p=True": {"fork_join_to_p": True}, 'horizon="long"': {"horizon": "long"}}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--only", nargs="*", choices=LONG_JOB_SETS, help="only these sets")
    args = p.parse_args()
    print("set                                  split    "
          + "".join(f"{r:34s}" for r in RULES), flush=True)
    pooled = {split: [[] for _ in RULES] for split in ("train", "test")}
    for name in args.only or LONG_JOB_SETS:
        rows = [r for r in read_rows(HERE / name) if r["mode"] == "async"]
        by_rule = [results(rows, args.jobs, **options) for options in RULES.values()]
        for split in sorted({r.split for r in by_rule[0].values()}):
            names = [k for k, r in by_rule[0].items() if r.split == split]
            print(f"{name:36s} {split:8s} " + "  ".join(
                f"{line([rs[k] for k in names]):32s}" for rs in by_rule), flush=True)
            if name in CORPUS_SETS:
                for kept, rs in zip(pooled[split], by_rule):
                    kept.extend(rs[k] for k in names)
    for split, by_rule in pooled.items():
        if by_rule[0]:
            print(f"{'corpus halves, both scales, pooled':36s} {split:8s} "
                  + "  ".join(f"{line(rs):32s}" for rs in by_rule), flush=True)


if __name__ == "__main__":
    main()
