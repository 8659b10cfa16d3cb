"""The train half's worst sync regime (c028) with its TCP and host queue swapped.

c028 (DCTCP, FIFO hosts, three servers, 25 Gbps, alexnet, steady compute) runs
up to 1.4 times slower than every model beyond the knee.  This runs it at 8
workers with DCTCP or NewReno on FIFO or fair-queued hosts, with and without
overlap, at the corpus's segments and at 8 times as many, with ns-3's 200 ms
delayed-ACK timer (the corpus's) or Linux's 40 ms, and prints each
step against the two-phase link time: a sync step moves K shards of M / P
bytes into each server and, after the barrier, K out again, at the goodput
1448/1502 of the line rate, plus the update T_S / P (compute overlapped).
It is not a strict floor: a worker that has its model early pushes while
others still pull, so a server link may carry both directions at once.

    python docs/experiments/dctcp_sync.py [--seeds] [--async-long]

about five minutes of one core; ``--seeds`` then runs c028 as in the corpus
with four more seeds (DCTCP marks at random between 20 and 40 queued
packets, so a run's speed is a draw), at both segment counts: seven more
minutes.  ``--async-long`` runs the long train half's DCTCP async regimes on
two to four servers as long jobs (after 32 gradients per worker) at 8 and 16
workers with either ACK timer: about ten more minutes.
"""

import argparse
import statistics

from perfmodel import zoo
from perfmodel.floors import link_floor
from perfmodel.placement import ns3_corpus as nc
from perfmodel.placement.ns3_job import LINK_EFFICIENCY
from perfmodel.specs import Cluster, Config

WORKERS = 8
LINUX = {"delayed_ack_timeout": 0.04}   # Linux's shortest delayed-ACK timeout
VARIANTS = (  # (label, factors changed, segments as a multiple of the corpus's, engine options)
    ("DCTCP, FIFO hosts (c028)", {}, 1, {}),
    ("DCTCP, fair hosts", {"queue": "fair"}, 1, {}),
    ("NewReno, FIFO hosts", {"tcp": "newreno"}, 1, {}),
    ("NewReno, fair hosts", {"tcp": "newreno", "queue": "fair"}, 1, {}),
    ("DCTCP, FIFO hosts, no overlap", {"overlap": False}, 1, {}),
    ("NewReno, FIFO hosts, no overlap", {"tcp": "newreno", "overlap": False}, 1, {}),
    ("DCTCP, FIFO hosts (c028), 8x the segments", {}, 8, {}),
    ("NewReno, FIFO hosts, 8x the segments", {"tcp": "newreno"}, 8, {}),
    ("DCTCP, FIFO hosts, 40 ms ACK timer", {}, 1, LINUX),
    ("DCTCP, fair hosts, 40 ms ACK timer", {"queue": "fair"}, 1, LINUX),
    ("DCTCP, FIFO hosts, 40 ms ACK timer, 8x", {}, 8, LINUX),
    ("NewReno, FIFO hosts, 40 ms ACK timer", {"tcp": "newreno"}, 1, LINUX),
)


#: c028's own seed (its number, as the corpus seeds it) and four more.
SEEDS = (28, 1, 2, 3, 4)
#: The long train half's DCTCP async regimes on 2-4 servers where the long job's answer
#: ran too fast, and the worker counts and warm-up of their runs here.
ASYNC_REGIMES, ASYNC_WORKERS, LONG_WARMUP = ("c001", "c026", "c040", "c058"), (8, 16), 32


def async_long() -> None:
    """Each regime's long-job throughput with ns-3's ACK timer and Linux's."""
    regimes = {r["regime"]: r for r in nc.design()}
    for name in ASYNC_REGIMES:
        for k in ASYNC_WORKERS:
            ns3, linux = (nc.regime_run(regimes[name], k, warmup=LONG_WARMUP, **engine).throughput
                          for engine in ({}, LINUX))
            print(f"  {name} at {k:2d} workers, async after {LONG_WARMUP} gradients: "
                  f"{ns3:.1f} samples/s, with a 40 ms ACK timer {linux:.1f} "
                  f"({linux / ns3:.2f} x)", flush=True)


def main(seeds: bool = False) -> None:
    base = {r["regime"]: r for r in nc.design()}["c028"]
    profile = zoo.profile(f"{base['dnn']}-pipedream")
    row = next(r for r in nc.read_rows(nc.CORPUS_PATH) if r["regime"] == "c028")
    cluster = Cluster(machines=WORKERS + base["n_ps"], nic_bandwidth=float(row["bandwidth"]))
    one_way = link_floor(profile, cluster, Config(n_replicas=WORKERS, n_ps=base["n_ps"]))
    two_phase = 2 * one_way / LINK_EFFICIENCY + float(row["t_update"]) / base["n_ps"]
    print(f"c028 at {WORKERS} workers: two-phase link time {two_phase:.3f} s a step")
    for label, changed, segments, engine in VARIANTS:
        regime = {**base, **changed}
        res = nc.regime_run(regime, WORKERS,
                            scale=nc.scale_for(profile.model_bytes, segments), **engine)
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
    parser.add_argument("--async-long", action="store_true",
                        help="also the long train half's DCTCP async regimes, either ACK timer")
    args = parser.parse_args()
    main(args.seeds)
    if args.async_long:
        async_long()
