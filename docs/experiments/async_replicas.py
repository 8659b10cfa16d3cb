"""How far a second run of the same async regime lands from the first: the ground truth's own spread.

Reruns the jittered (lognormal, Pareto) loss-free async regimes of the
thirteenth, sixteenth and seventeenth probes at every worker count with
another seed (the regime's seed plus 1000: other compute draws and ns-3
random streams, everything else the same) and writes them beside the
committed runs.  Regimes with steady
compute are left out: their runs are deterministic, a second seed repeats them.

    python docs/experiments/async_replicas.py --out docs/experiments/ns3_async_replicas.csv  # 30 min
    python docs/experiments/async_replicas.py --report docs/experiments/ns3_async_replicas.csv

The report gives, by bandwidth and worker count, the relative difference
``|x2 / x1 - 1|`` of the replica ``x2`` against the committed run ``x1``
(mean and 90th percentile), and the corpus protocol's error against each
run: what no model judged on one short run can go below.
"""

import argparse
import collections
import concurrent.futures
import csv
import multiprocessing
import sys

import numpy as np

from perfmodel.fit.corpus import evaluate_corpus
from perfmodel.placement import ns3_corpus as nc

SETS = ("probe13", "probe16", "probe17")
SEED_OFFSET = 1000
COLUMNS = ("regime", "workers", "throughput", "throughput_std", "seed")


def regimes() -> list[dict]:
    """The jittered loss-free async regimes of :data:`SETS`, as their designs draw them."""
    out = []
    for name in SETS:
        rows = nc.read_rows(nc.PROBE_PATHS[name])
        lossy = {r["regime"] for r in rows if int(r["queue_drops"]) > 0}
        for reg in nc.design(spec=nc.DESIGNS[name]):
            if reg["mode"] == "async" and reg["jitter"] != "none" and reg["regime"] not in lossy:
                out.append(reg)
    return out


def replicate(regime: dict) -> list[dict]:
    """Every worker count of ``regime`` run again with the regime's seed plus SEED_OFFSET."""
    seed = int(regime["regime"][1:]) + SEED_OFFSET
    out = []
    for k in nc.CORPUS_WORKERS:
        res = nc.regime_run(regime, k, seed=seed)
        out.append(dict(regime=regime["regime"], workers=k, throughput=round(res.throughput, 6),
                        throughput_std=round(res.throughput_std, 6), seed=seed))
    return out


def generate(path: str, jobs: int) -> None:
    todo = regimes()
    rows = []
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
        for i, new in enumerate(pool.map(replicate, todo)):
            rows.extend(new)
            print(f"{i + 1}/{len(todo)} {new[0]['regime']}", file=sys.stderr, flush=True)
    with open(path, "w", newline="") as fh:
        fh.write(f"# replicas of the jittered loss-free async regimes of {', '.join(SETS)}, "
                 f"seed = regime seed + {SEED_OFFSET}; made by: python "
                 f"docs/experiments/async_replicas.py --out {path} --jobs {jobs}\n")
        w = csv.DictWriter(fh, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)


def _pairs(path: str) -> list[tuple[dict, dict]]:
    """(committed row, replica row) at every worker count the replica file holds."""
    first = {}
    for name in SETS:
        for r in nc.read_rows(nc.PROBE_PATHS[name]):
            first[(r["regime"], int(r["workers"]))] = r
    with open(path) as fh:
        second = list(csv.DictReader(ln for ln in fh if not ln.startswith("#")))
    return [(first[(r["regime"], int(r["workers"]))], r) for r in second]


def _as_rows(pairs, how: str) -> list[dict]:
    """Corpus rows of the committed runs (``how="first"``), the replicas (``"second"``) or
    the mean of both (``"mean"``)."""
    out = []
    for a, b in pairs:
        x1, x2 = float(a["throughput"]), float(b["throughput"])
        x = {"first": x1, "second": x2, "mean": 0.5 * (x1 + x2)}[how]
        out.append(dict(a, throughput=str(x)))
    return out


def report(path: str) -> None:
    pairs = _pairs(path)
    diff = collections.defaultdict(list)
    for a, b in pairs:
        gbps, k = round(float(a["bandwidth"]) * 8e-9), int(a["workers"])
        d = abs(float(b["throughput"]) / float(a["throughput"]) - 1.0)
        diff[(gbps, str(k))].append(d)
        if k >= 3:
            diff[(gbps, "3-16")].append(d)
    print("Two runs of one regime, seeds apart: |x2 / x1 - 1|\n")
    print("| Gbps | workers | regimes | mean | 90th percentile |")
    print("|---|---|---|---|---|")
    for key in sorted(diff, key=lambda k: (k[0], k[1].zfill(4))):
        v = np.array(diff[key])
        print(f"| {key[0]} | {key[1]} | {len(v)} | {100 * v.mean():.1f}% | "
              f"{100 * np.quantile(v, 0.9):.1f}% |")
    print("\nThe corpus protocol (1-2 runs, then 3-16 workers) against each truth\n")
    print("| truth | Gbps | regimes | mean of regime mean errors | coverage | median half-width |")
    print("|---|---|---|---|---|---|")
    for how in ("first", "second", "mean"):
        res = evaluate_corpus(rows=_as_rows(pairs, how)).results
        for gbps in sorted({r.factors["bandwidth_gbps"] for r in res}) + ["all"]:
            sel = [r for r in res if gbps == "all" or r.factors["bandwidth_gbps"] == gbps]
            print(f"| {how} | {gbps} | {len(sel)} | "
                  f"{100 * np.mean([r.mean_error for r in sel]):.1f}% | "
                  f"{100 * np.mean([r.coverage for r in sel]):.0f}% | "
                  f"{100 * np.median([r.halfwidth for r in sel]):.0f}% |")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out")
    p.add_argument("--report")
    p.add_argument("--jobs", type=int, default=2)
    a = p.parse_args()
    if a.out:
        generate(a.out, a.jobs)
    if a.report:
        report(a.report)


if __name__ == "__main__":
    main()
