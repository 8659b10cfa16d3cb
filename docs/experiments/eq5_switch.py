"""Eq. 5's switch from FCFS to processor-sharing links: where it sits, and made continuous.

Li et al. 2022's async MVA (eq. 5) answers with FCFS links (eq. 3) while their
utilization stays at or below rho_T and with processor sharing (eq. 4) above.
FCFS with a deterministic residual passes a link faster than processor
sharing, so where a job's utilization crosses rho_T the predicted throughput
drops as a worker is added.  This script replays the user's path of
``perfmodel validate matrix --only corpus`` (runs of 1-2 workers, every
committed set) with

* rho_T at 0.4, 0.5, 0.6 (the default: Li et al.'s AWS value), 0.7, 0.8;
* the switch made continuous (rho_T 0.6): beyond the last population K* that
  eq. 5 answers with FCFS links, the processor-sharing solution scaled by the
  FCFS solution's step at K* over its own there, so the prediction grows as
  processor sharing does from where FCFS left it;

and prints the async loss-free regimes' mean error, coverage and median
half-width per group, first the drop itself over the zoo's DNNs.

    python docs/experiments/eq5_switch.py      # about 7 minutes
"""

import dataclasses
import statistics

import numpy as np
from level_two_runs import GROUPS, every_set_rows  # (this directory)

from perfmodel import queueing, zoo
from perfmodel.fit.corpus import evaluate_corpus
from perfmodel.queueing import AsyncMVA
from perfmodel.result import Estimate
from perfmodel.specs import Cluster, Config

RHO = (0.4, 0.5, 0.6, 0.7, 0.8)
DNNS = ("alexnet", "vgg16", "resnet50", "resnet101", "densenet121", "squeezenet1_0",
        "nasnetamobile", "gnmt")
_PLAIN = AsyncMVA._mva_estimate


def continuous(self, workload, cluster, config) -> Estimate:
    """Eq. 5 with processor sharing's growth beyond the last FCFS population."""
    est = _PLAIN(self, workload, cluster, config)
    if (self.discipline != "hybrid" or self.convoys or self.servers != "in-turn"
            or est.meta.get("selected") != "ps"):
        return est
    for k in range(config.n_replicas - 1, 0, -1):
        fcfs = _PLAIN(self, workload, cluster, config.replace(n_replicas=k))
        if fcfs.meta.get("selected") == "fcfs":
            break
    else:
        return est
    ps = _PLAIN(dataclasses.replace(self, discipline="ps"), workload, cluster,
                config.replace(n_replicas=k))
    scale = fcfs.step_time / ps.step_time
    if scale >= 1.0:
        return est
    return Estimate.from_phases({n: v * scale for n, v in est.phases.items()},
                                config.n_replicas * workload.batch_size,
                                epoch_samples=config.epoch_samples,
                                meta=dict(est.meta, continuous_scale=scale))


def drops() -> None:
    """The largest fall of the default MVA's throughput from K to K + 1 workers."""
    falls = []
    for dnn in DNNS:
        profile = zoo.profile(f"{dnn}-pipedream")
        for gbps in (1, 10, 25):
            cluster = Cluster(machines=40, nic_bandwidth=f"{gbps}Gbps")
            for servers in (1, 2, 3, 4):
                x = np.array([AsyncMVA().estimate(profile, cluster, Config(
                    n_replicas=k, n_ps=servers, mode="async")).throughput
                    for k in range(1, 33)])
                falls.append(float(np.min(np.diff(x) / x[:-1])))
    falls = np.array(falls)
    print(f"1-32 workers, {len(DNNS)} DNNs x 1/10/25 Gbps x 1-4 servers: the throughput "
          f"falls somewhere in {np.sum(falls < 0)} of {len(falls)}, by up to "
          f"{-100 * falls.min():.1f}% (median of those {-100 * np.median(falls[falls < 0]):.1f}%)")


def summary(results) -> str:
    cells = []
    for member in GROUPS.values():
        sel = [r for r in results if r.mode == "async" and not r.lossy and member(r.split)]
        cells.append(f"{100 * statistics.mean(r.mean_error for r in sel):5.1f}% "
                     f"{100 * statistics.mean(r.coverage for r in sel):3.0f}% "
                     f"{100 * statistics.median(r.halfwidth for r in sel):3.0f}%")
    return "  ".join(f"{c:>17s}" for c in cells)


def main() -> None:
    drops()
    rows = every_set_rows()
    print("async, loss-free: mean error, coverage, median half-width")
    print(f"{'':22s}" + "  ".join(f"{g:>17s}" for g in GROUPS))
    for rho in RHO:
        queueing.DEFAULT_RHO_THRESHOLD = rho
        print(f"rho_T {rho:<16g}" + summary(evaluate_corpus(rows=rows).results))
    queueing.DEFAULT_RHO_THRESHOLD = 0.6
    AsyncMVA._mva_estimate = continuous
    try:
        print(f"{'continuous, 0.6':22s}" + summary(evaluate_corpus(rows=rows).results))
    finally:
        AsyncMVA._mva_estimate = _PLAIN


if __name__ == "__main__":
    main()
