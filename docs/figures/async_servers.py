"""Async on several servers: where the packet-level runs sit between two readings of the
network (a figure of docs/validation.md).

Every loss-free async regime on 2-4 servers of the committed packet-level sets (the
corpus and the four probes).  Each model's prediction is scaled by one factor fitted
on the 1- and 2-worker runs (what a level calibration does), and the runs are drawn
as measured over scaled prediction against workers per server K / P:

* left, Li et al. 2022's network with the P servers' stations visited in turn
  (``AsyncMVA(discipline="ps")``, the selection's async model);
* right, the P servers met at once as one fork-join (``AsyncMVA(servers="fork-join")``).

Colour: how the hosts and TCP share a link (DCTCP; loss-based TCP on drop-tail FIFO
hosts; any TCP on per-flow fair hosts).  The script prints each group's mean error
up to and beyond K = P.

    python docs/figures/async_servers.py docs/figures/async_servers.png
"""

import collections
import sys

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from perfmodel import zoo  # noqa: E402
from perfmodel.placement.ns3_corpus import PROTOCOL_SETS, read_rows  # noqa: E402
from perfmodel.placement.ns3_job import LINK_EFFICIENCY  # noqa: E402
from perfmodel.queueing import async_throughput, fork_join_solve  # noqa: E402

GROUPS = {"DCTCP": "tab:purple", "loss-based TCP, FIFO hosts": "tab:orange",
          "fair hosts": "tab:blue"}


def group(row: dict) -> str:
    if row["tcp"] == "dctcp":
        return "DCTCP"
    return "loss-based TCP, FIFO hosts" if row["queue"] == "fifo" else "fair hosts"


def regimes(one_server: bool = False):
    """(rows sorted by workers) of every loss-free async regime on 2 or more servers
    (``one_server``: on one)."""
    by = collections.defaultdict(list)
    for path in PROTOCOL_SETS:
        for r in read_rows(path):
            by[r["regime"]].append(r)
    for _, rows in sorted(by.items()):
        rows.sort(key=lambda r: int(r["workers"]))
        if (rows[0]["mode"] == "async" and (int(rows[0]["n_ps"]) == 1) == one_server
                and not any(int(r["queue_drops"]) > 0 for r in rows)):
            yield rows


def job_of(rows) -> tuple:
    """(profile, T_S, servers P, link goodput, overlap, {K: measured steps/s}) of one
    regime's rows."""
    f = rows[0]
    prof = zoo.profile(f"{f['dnn']}-pipedream")
    link = float(f["bandwidth"]) * LINK_EFFICIENCY
    meas = {int(r["workers"]): float(r["throughput"]) / int(r["batch_size"]) for r in rows}
    return (prof, float(f["t_update"]), int(f["n_ps"]), link,
            f["overlap"] in ("1", "True", "true"), meas)


def scaled_ratios(rows) -> dict:
    """{model: {K: measured / prediction scaled on the 1- and 2-worker runs}}."""
    prof, tu, p, link, overlap, meas = job_of(rows)
    m = prof.model_bytes
    preds = {
        "in turn": {k: float(async_throughput(m, link, prof.t_forward, prof.t_backward, tu, k,
                                              "ps", overlap=overlap, n_ps=p)) for k in meas},
        "fork-join": {k: fork_join_solve(m, link, prof.t_forward, prof.t_backward, tu, k,
                                         n_ps=p, overlap=overlap).throughput for k in meas}}
    out = {}
    for name, pred in preds.items():
        ratio = {k: meas[k] / pred[k] for k in meas}
        level = np.mean([ratio[1], ratio[2]])
        out[name] = {k: v / level for k, v in ratio.items()}
    return out


def draw_runs(axes, ratios: dict, knee: float, color, errors: dict, key, label: str) -> None:
    """Each reading's runs of 2 or more workers on its axis, against K / ``knee``; the
    errors of those beyond 2 workers added to ``errors[reading, key, side of the knee]``
    (``label`` names the knee)."""
    for ax, (name, ratio) in zip(axes, ratios.items()):
        ks = sorted(k for k in ratio if k >= 2)
        ax.plot([k / knee for k in ks], [ratio[k] for k in ks], "o-", ms=3, lw=1,
                color=color, alpha=0.6)
        for k in ks[1:]:
            side = f"up to {label}" if k <= knee else f"beyond {label}"
            errors[name, key, side].append(abs(1 / ratio[k] - 1))


def finish(fig, axes, titles, ticks, ylabel: str, legend: str, path: str, errors: dict,
           width: int = 10) -> None:
    """Frame the two panels (K / P on a log axis, the knee and 1 marked), save the figure
    and print each group's mean error (``errors[reading, group, side]``)."""
    for ax, title in zip(axes, titles):
        ax.axhline(1.0, color="k", lw=0.8)
        ax.axvline(1.0, color="k", lw=0.8, ls=":")
        ax.set(xscale="log", xlabel="workers per server K / P", title=title)
        ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
        ax.minorticks_off()
    axes[0].set_ylabel(ylabel)
    for g, color in GROUPS.items():
        axes[0].plot([], [], "o-", color=color, label=g)
    axes[0].legend(loc=legend, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    for (name, g, side), v in sorted(errors.items()):
        print(f"{name:<{width}} {g:<27} {side:<9} mean error {np.mean(v):6.1%} ({len(v)} runs)")


def main(path: str) -> None:
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    errors = collections.defaultdict(list)
    for rows in regimes():
        p, g = int(rows[0]["n_ps"]), group(rows[0])
        draw_runs(axes, scaled_ratios(rows), p, GROUPS[g], errors, g, "P")
    finish(fig, axes, ("the P servers' stations in turn (the paper's network)",
                       "the P servers met at once (fork-join)"), [0.5, 1, 2, 4, 8],
           "measured / prediction (scaled on 1-2 workers)", "lower left", path, errors)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "async_servers.png")
