"""The train half's worst sync regime (c028) with its TCP and host queue swapped.

c028 (DCTCP, FIFO hosts, three servers, 25 Gbps, alexnet, steady compute) runs
up to 1.4 times slower than every model beyond the knee.  This runs it at 8
workers with DCTCP or NewReno on FIFO or fair-queued hosts, with and without
overlap, at the corpus's segments and at 8 times as many, and prints each
step against the two-phase link time: a sync step moves K shards of M / P
bytes into each server and, after the barrier, K out again, at the goodput
1448/1502 of the line rate, plus the update T_S / P (compute overlapped).
It is not a strict floor: a worker that has its model early pushes while
others still pull, so a server link may carry both directions at once.

    python docs/experiments/dctcp_sync.py [--seeds]

about four minutes of one core; ``--seeds`` then runs c028 as in the corpus
with four more seeds (DCTCP marks at random between 20 and 40 queued
packets, so a run's speed is a draw), at both segment counts: seven more
minutes.
"""

import argparse
import statistics

from perfmodel import zoo
from perfmodel.floors import link_floor
from perfmodel.placement import ns3_corpus as nc
from perfmodel.placement.ns3_job import LINK_EFFICIENCY
from perfmodel.specs import Cluster, Config

WORKERS = 8
VARIANTS = (  # (label, factors changed, segments per transfer as a multiple of the corpus's)
    ("DCTCP, FIFO hosts (c028)", {}, 1),
    ("DCTCP, fair hosts", {"queue": "fair"}, 1),
    ("NewReno, FIFO hosts", {"tcp": "newreno"}, 1),
    ("NewReno, fair hosts", {"tcp": "newreno", "queue": "fair"}, 1),
    ("DCTCP, FIFO hosts, no overlap", {"overlap": False}, 1),
    ("NewReno, FIFO hosts, no overlap", {"tcp": "newreno", "overlap": False}, 1),
    ("DCTCP, FIFO hosts (c028), 8x the segments", {}, 8),
    ("NewReno, FIFO hosts, 8x the segments", {"tcp": "newreno"}, 8),
)


#: c028's own seed (its number, as the corpus seeds it) and four more.
SEEDS = (28, 1, 2, 3, 4)


def main(seeds: bool = False) -> None:
    base = {r["regime"]: r for r in nc.design()}["c028"]
    profile = zoo.profile(f"{base['dnn']}-pipedream")
    row = next(r for r in nc.read_rows(nc.CORPUS_PATH) if r["regime"] == "c028")
    cluster = Cluster(machines=WORKERS + base["n_ps"], nic_bandwidth=float(row["bandwidth"]))
    one_way = link_floor(profile, cluster, Config(n_replicas=WORKERS, n_ps=base["n_ps"]))
    two_phase = 2 * one_way / LINK_EFFICIENCY + float(row["t_update"]) / base["n_ps"]
    print(f"c028 at {WORKERS} workers: two-phase link time {two_phase:.3f} s a step")
    for label, changed, segments in VARIANTS:
        regime = {**base, **changed}
        res = nc.regime_run(regime, WORKERS,
                            scale=nc.scale_for(profile.model_bytes, segments))
        step = WORKERS * profile.batch_size / res.throughput
        print(f"  {label:44s} step {step:.3f} s = {step / two_phase:.2f} x that, "
              f"{res.meta['ecn_marks']} ECN marks", flush=True)
    if seeds:
        for segments in (1, 8):
            steps = [WORKERS * profile.batch_size / nc.regime_run(
                base, WORKERS, scale=nc.scale_for(profile.model_bytes, segments),
                seed=seed).throughput for seed in SEEDS]
            print(f"  c028, {segments}x the segments, seeds {SEEDS}: step "
                  + ", ".join(f"{s_:.3f}" for s_ in steps)
                  + f" s; median {statistics.median(steps) / two_phase:.2f} x, range "
                  f"{min(steps) / two_phase:.2f}-{max(steps) / two_phase:.2f} x", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", action="store_true",
                        help="also run c028 with four more seeds at both segment counts")
    main(parser.parse_args().seeds)
