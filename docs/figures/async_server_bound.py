"""Async where the servers' update CPUs are the bottleneck: the packet-level runs on the
asymptotic bound, the MVA below it (a figure of docs/validation.md).

Every loss-free async regime of the committed packet-level sets (the corpus and the
probes) whose update spacing ``T_S B / M`` is 1 or more: a server takes longer to apply
a gradient's share than its link takes to move it.  Throughput over what the servers
apply (``P / T_S`` gradients a second) against the workers over the knee ``K*``, where
K workers each as fast as one alone would reach it (one worker's speed: the mean of the
1-worker run and half the 2-worker run).  The asymptotic bound of the closed network
(Lazowska et al. 1984, Sec. 5.2) is ``min(K / K*, 1)``, the black line.  Dots: the
runs, coloured by line rate; grey crosses: Li et al. 2022's MVA with processor-sharing
links (eq. 4) scaled by one factor fitted on the 1- and 2-worker runs, as the
selection's level fits it (above 1 it passes what the servers can apply, which the
selection's estimates no longer do).  The script prints the mean error of each beyond 2
workers.

    python docs/figures/async_server_bound.py docs/figures/async_server_bound.png
"""

import sys

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from async_knee import RATES, level_of  # noqa: E402  (this directory: the same level fit)
from async_servers import job_of, regimes  # noqa: E402  (this directory: the same regimes)

from perfmodel.queueing import async_throughput  # noqa: E402

#: Least update spacing drawn (``perfmodel.fit.selection.SERVER_BOUND_SPACING``).
SPACING = 1.0


def normalized(rows):
    """(spacing, {K: (K / K*, measured / servers' rate, scaled MVA / servers' rate)}) of
    one regime, or None when its spacing is below :data:`SPACING`."""
    prof, tu, p, link, overlap, meas = job_of(rows)
    m = prof.model_bytes
    spacing = tu * float(rows[0]["bandwidth"]) / m
    if spacing < SPACING:
        return None
    servers = p / tu
    knee = servers / np.mean([meas[1], meas[2] / 2])
    mva = {k: float(async_throughput(m, link, prof.t_forward, prof.t_backward, tu, k, "ps",
                                     overlap=overlap, n_ps=p)) for k in meas}
    level = level_of(meas[1] / mva[1], meas[2] / mva[2])
    return spacing, {k: (k / knee, meas[k] / servers, level * mva[k] / servers)
                     for k in sorted(meas)}


def main(path: str) -> None:
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    errors = {"bound": [], "MVA": []}
    count, spread, rates = 0, [], set()
    for rows in [*regimes(one_server=True), *regimes(one_server=False)]:
        point = normalized(rows)
        if point is None:
            continue
        count += 1
        _, runs = point
        color = RATES[round(float(rows[0]["bandwidth"]) * 8 / 1e9)]
        xs, ys, ms = zip(*runs.values())
        spread += xs
        rates.add(round(float(rows[0]["bandwidth"]) * 8 / 1e9))
        ax.plot(xs, ys, "o", ms=4, alpha=0.6, color=color)
        ax.plot(xs, ms, "x", ms=4, alpha=0.5, color="gray")
        for k, (x, y, mva) in runs.items():
            if k > 2:
                errors["bound"].append(abs(min(x, 1.0) / y - 1))
                errors["MVA"].append(abs(mva / y - 1))
    grid = np.geomspace(min(spread), max(spread), 200)
    ax.plot(grid, np.minimum(grid, 1.0), "k-", lw=1.2, label="asymptotic bound")
    ax.plot([], [], "x", color="gray", label="MVA, scaled on 1-2 workers")
    for gbps in sorted(rates):
        ax.plot([], [], "o", color=RATES[gbps], label=f"runs, {gbps} Gbps")
    ax.set(xscale="log", xlabel="workers over the knee, K / K*",
           ylabel="throughput over what the servers apply",
           title=f"update spacing T_S B / M >= {SPACING:g} ({count} regimes)")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    for name, e in errors.items():
        print(f"{name:<6} mean error beyond 2 workers {100 * np.mean(e):.1f}% "
              f"(max {100 * np.max(e):.0f}%, {len(e)} runs, {count} regimes)")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "async_server_bound.png")
