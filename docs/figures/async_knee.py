"""Async on one server: where the packet-level runs sit between two readings of the
link (a figure of docs/validation.md).

Every loss-free async regime on one server of the committed packet-level sets (the
corpus and the probes).  Each model's prediction is scaled by one factor fitted on the
1- and 2-worker runs as the selection's level calibration fits it (least mean relative
error), and the runs are drawn as
measured over scaled prediction against the workers over the saturation population
N* (Lazowska et al. 1984, Sec. 5.2: where the knee of the MVA's bounds lies):

* left, Li et al. 2022's network with processor-sharing links (eq. 4: concurrent
  transfers share the link, the selection's ``async-mva`` past its knee);
* right, the same network with FCFS links (eq. 3 with eq. 2's deterministic residual:
  each transfer passes the link whole in turn, ``async-fcfs``).

Colour: the line rate.  The script prints each rate's mean error up to and beyond N*.

    python docs/figures/async_knee.py docs/figures/async_knee.png
"""

import collections
import sys

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from async_servers import draw_runs, job_of, regimes  # noqa: E402  (this directory: the same regimes)

from perfmodel.queueing import async_throughput, saturation_workers  # noqa: E402

RATES = {1: "tab:orange", 10: "tab:blue", 25: "tab:purple"}
READINGS = {"processor sharing (eq. 4)": "ps", "FCFS (eq. 3)": "fcfs"}


def level_of(*ratios: float) -> float:
    """The factor the selection's level fit picks on these runs' measured / predicted
    ratios: the least mean relative error ``mean |c / r - 1|``, which for two runs is
    one of them."""
    return min(ratios, key=lambda c: np.mean([abs(c / r - 1) for r in ratios]))


def scaled_ratios(rows) -> tuple[float, dict]:
    """(N*, {reading: {K: measured / prediction scaled on the 1- and 2-worker runs}})."""
    prof, tu, _, link, overlap, meas = job_of(rows)
    m = prof.model_bytes
    out = {}
    for name, discipline in READINGS.items():
        pred = {k: float(async_throughput(m, link, prof.t_forward, prof.t_backward, tu, k,
                                          discipline, overlap=overlap)) for k in meas}
        ratio = {k: meas[k] / pred[k] for k in meas}
        out[name] = {k: v / level_of(ratio[1], ratio[2]) for k, v in ratio.items()}
    return saturation_workers(m, link, prof.t_forward, prof.t_backward, tu), out


def main(path: str) -> None:
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    errors = collections.defaultdict(list)
    for rows in regimes(one_server=True):
        gbps = round(float(rows[0]["bandwidth"]) * 8 / 1e9)
        n_star, ratios = scaled_ratios(rows)
        draw_runs(axes, ratios, n_star, RATES[gbps], errors, gbps, "N*")
    for ax, name in zip(axes, READINGS):
        ax.axhline(1.0, color="k", lw=0.8)
        ax.axvline(1.0, color="k", lw=0.8, ls=":")
        ax.set(xscale="log", xlabel="workers over the saturation population, K / N*",
               title=f"one server, links {name}")
        ax.minorticks_off()
    axes[0].set_ylabel("measured / prediction (scaled on 1-2 workers)")
    for gbps, color in RATES.items():
        axes[0].plot([], [], "o-", color=color, label=f"{gbps} Gbps")
    axes[0].legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    for (name, gbps, side), v in sorted(errors.items()):
        print(f"{name:<26} {gbps:>3} Gbps {side:<9} mean error {np.mean(v):6.1%} "
              f"({len(v)} runs)")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "async_knee.png")
