"""How far apart async workers drift: ns-3 against the simulator (a figure of docs/validation.md).

Runs two async regimes of the ns-3 corpus at 8 workers with 40 gradients per worker
(the corpus measures 16), and the trace-driven simulator with fair sharing on the
same job, and plots the spread of the workers' n-th gradient (in cycles).

    python docs/figures/async_drift.py docs/figures/async_drift.png
"""

import sys

from perfmodel import plot, zoo
from perfmodel.placement import ns3_corpus as nc
from perfmodel.sim.engine import worker_spread
from perfmodel.sim.model import TraceSim
from perfmodel.specs import Cluster, Config

REGIMES = ("c023", "c036")
WORKERS, STEPS = 8, 40


def spreads(name: str) -> dict:
    regime = next(r for r in nc.design() if r["regime"] == name)
    run = nc.regime_run(regime, WORKERS, async_steps=STEPS, warmup=0, batches=1)
    profile = zoo.profile(f"{regime['dnn']}-pipedream").replace(
        t_update=regime_update(regime))
    cluster = Cluster(machines=WORKERS + regime["n_ps"],
                      nic_bandwidth=regime["bandwidth_gbps"] * 1.25e8,
                      compute_cv=nc.JITTER_CV[regime["jitter"]])
    sim = TraceSim(sharing="ps", overlap=bool(regime["overlap"]), steps=STEPS, warmup=0,
                   seed=int(name[1:]), server_cpu="fcfs")
    result = sim.simulate(profile, cluster, Config(n_replicas=WORKERS, n_ps=regime["n_ps"],
                                                   mode="async"))
    label = (f"{name}: {regime['tcp']}, {regime['queue']} hosts, "
             f"{regime['bandwidth_gbps']} Gbps, {regime['jitter']} jitter")
    return {f"ns-3 {label}": worker_spread(run.ends),
            f"simulator {name}": worker_spread(result.ends)}


def regime_update(regime: dict) -> float:
    profile = zoo.profile(f"{regime['dnn']}-pipedream")
    return profile.model_bytes / nc.UPDATE_RATE


def main(path: str) -> None:
    series = {}
    for name in REGIMES:
        series.update(spreads(name))
    for label, s in series.items():
        print(f"{label}: first 4 {[round(x, 2) for x in s[:4]]}, last 4 "
              f"{[round(x, 2) for x in s[-4:]]}")
    ax = plot.spread_over_steps(series, steady=(WORKERS - 1) / WORKERS)
    ax.set_title(f"async workers drifting apart, {WORKERS} workers")
    plot.save(ax, path, close=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "async_drift.png")
