"""TCP Vegas on FIFO hosts: how much of the servers' links async jobs reach.

Over the loss-free async regimes of every committed set, prints per host
queue and TCP control the share of the servers' links the fastest run
reaches (its throughput over ``P B / M`` samples of batch per second: every
gradient crosses each server's link once each way), then the protocol's
(``perfmodel validate matrix --only corpus``, the link unknown) mean error,
mean predicted / measured and coverage on the Vegas regimes, on FIFO and on
fair hosts.  A diagnostic: no rule uses it.

    python docs/experiments/vegas_fifo.py [--jobs 2]

about a minute on two cores.
"""

import argparse
import collections

import numpy as np
from partly_locked import results  # (this directory)

from perfmodel import zoo
from perfmodel.floors import link_floor
from perfmodel.placement.ns3_corpus import PROTOCOL_SETS, read_rows
from perfmodel.specs import Cluster, Config


def link_share(rows: list[dict]) -> float:
    """The fastest run's throughput over what the servers' links carry (the link floor
    of P workers on P servers: beyond P it grows with the workers)."""
    first = rows[0]
    servers = int(first["n_ps"])
    floor = link_floor(zoo.profile(f"{first['dnn']}-pipedream"),
                       Cluster(machines=2 * servers, nic_bandwidth=float(first["bandwidth"])),
                       Config(n_replicas=servers, n_ps=servers, mode="async"))
    bound = servers * int(first["batch_size"]) / floor
    return max(float(r["throughput"]) for r in rows) / bound


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--jobs", type=int, default=2)
    a = p.parse_args()
    rows = [r for path in PROTOCOL_SETS for r in read_rows(path)
            if r["mode"] == "async" and int(r["queue_drops"]) == 0]
    regimes = collections.defaultdict(list)
    for r in rows:
        regimes[r["regime"]].append(r)
    shares = collections.defaultdict(list)
    for rs in regimes.values():
        shares[(rs[0]["queue"], rs[0]["tcp"])].append(link_share(rs))
    print("queue tcp        regimes  share of the servers' links: median  max")
    for (queue, tcp), v in sorted(shares.items()):
        print(f"{queue:5} {tcp:10} {len(v):7}  {np.median(v):35.2f}  {max(v):.2f}")
    vegas = results([r for r in rows if r["tcp"] == "vegas"], a.jobs)
    for queue in ("fifo", "fair"):
        rs = [r for r in vegas.values() if r.factors["queue"] == queue]
        ratio = np.mean([np.mean([q["predicted"] / q["measured"] for q in r.points])
                         for r in rs])
        print(f"Vegas on {queue} hosts: {len(rs)} regimes, mean error "
              f"{100 * np.mean([r.mean_error for r in rs]):.1f}%, predicted / measured "
              f"{ratio:.2f}, coverage {100 * np.mean([r.coverage for r in rs]):.0f}%")


if __name__ == "__main__":
    main()
