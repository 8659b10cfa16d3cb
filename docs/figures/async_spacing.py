"""Async beyond the knee: how far the packet-level runs fall below the MVA, against how
long an update takes beside a transfer (a figure of docs/validation.md).

Every loss-free async regime of the committed packet-level sets (the corpus and the
probes) with runs beyond 1.5 N* (Lazowska et al. 1984, Sec. 5.2: the saturation
population).  Li et al. 2022's MVA with processor-sharing links (eq. 4) is scaled by one
factor fitted on the 1- and 2-worker runs as the selection's level calibration fits it;
each regime is one point: the mean of log(measured / scaled MVA) over its runs beyond
1.5 N*, against the update spacing ``T_S B / M`` (one gradient's update over one
model's transfer on one link; the same with P servers, which split both).  In every
set but the seventh probe that spacing moved with the line rate alone; the seventh
probe drew the update rate as a factor of its own.

Left: one server; right: two or more.  Colour: the line rate; filled: per-flow fair
hosts, open: FIFO hosts.  The script prints each group's mean.

    python docs/figures/async_spacing.py docs/figures/async_spacing.png
"""

import collections
import sys

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from async_knee import RATES, level_of  # noqa: E402  (this directory: the same level fit)
from async_servers import job_of, regimes  # noqa: E402  (this directory: the same regimes)

from perfmodel.queueing import async_throughput, saturation_workers  # noqa: E402

#: Runs counted as beyond the knee: K >= BEYOND * N*.
BEYOND = 1.5


def deficit(rows) -> tuple[float, float] | None:
    """(update spacing T_S B / M, mean log(measured / scaled MVA) over the runs beyond
    :data:`BEYOND` N*), or None when no run of the regime is beyond it."""
    prof, tu, p, link, overlap, meas = job_of(rows)
    m = prof.model_bytes
    ratio = {k: meas[k] / float(async_throughput(m, link, prof.t_forward, prof.t_backward,
                                                 tu, k, "ps", overlap=overlap, n_ps=p))
             for k in meas}
    level = level_of(ratio[1], ratio[2])
    n_star = saturation_workers(m, link, prof.t_forward, prof.t_backward, tu, n_ps=p)
    beyond = [np.log(r / level) for k, r in ratio.items() if k > 2 and k >= BEYOND * n_star]
    return (tu * link / m, float(np.mean(beyond))) if beyond else None


def main(path: str) -> None:
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    groups = collections.defaultdict(list)
    for servers, ax in zip((True, False), axes):
        for rows in regimes(one_server=servers):
            point = deficit(rows)
            if point is None:
                continue
            gbps = round(float(rows[0]["bandwidth"]) * 8 / 1e9)
            fair = rows[0]["queue"] == "fair"
            color = RATES[gbps]
            ax.plot(*point, "o", ms=6, alpha=0.7, color=color,
                    markerfacecolor=color if fair else "none")
            where = "1 server" if servers else "2+ servers"
            groups[where, rows[0]["queue"], gbps, round(point[0], 3)].append(point[1])
    for ax, title in zip(axes, ("one server", "two or more servers")):
        ax.axhline(0.0, color="k", lw=0.8)
        ax.set(xscale="log", xlabel="update over transfer, T_S B / M", title=title)
    axes[0].set_ylabel(f"mean log(measured / MVA) beyond {BEYOND:g} N*")
    for gbps, color in RATES.items():
        axes[0].plot([], [], "o", color=color, label=f"{gbps} Gbps")
    axes[0].plot([], [], "o", color="gray", label="fair hosts")
    axes[0].plot([], [], "o", color="gray", markerfacecolor="none", label="FIFO hosts")
    axes[0].legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    for (where, queue, gbps, spacing), v in sorted(groups.items()):
        print(f"{where:<10} {queue:<4} {gbps:>3} Gbps  T_S B / M {spacing:<6g} "
              f"mean {np.mean(v):+.2f} ({len(v)} regimes)")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "async_spacing.png")
