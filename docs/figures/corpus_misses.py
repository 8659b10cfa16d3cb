"""Where the held-out corpus misses, and why (a figure of docs/validation.md).

Three panels from the committed ns-3 corpus and the user's path (the 1- and
2-worker runs calibrate the selected model, which predicts 3-16 workers):

* sync on shallow buffers: packets the switch dropped per step against the
  workers (incast: the drops grow 20-100 fold from 2 to 16 workers, or start
  only at 8-12 workers, past the runs the calibration sees);
* the same regimes: measured throughput over the selected model's prediction
  with one more retransmission timeout (the 1 s minimum RTO) in every step,
  the bottom of a lossy sync interval beyond the runs
  (:func:`perfmodel.fit.selection.incast_throughput`): where the runs
  collapse (TCP incast) they sit near it;
* sync, loss-free, several servers: measured over predicted against K / P
  (the dip at K = P: up to P workers no link is the bottleneck and the step
  waits for the slowest jittered computation; beyond, the servers' links hide it).

    python docs/figures/corpus_misses.py docs/figures/corpus_misses.png
"""

import collections
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from perfmodel.fit.corpus import MIN_RTO, evaluate_corpus  # noqa: E402
from perfmodel.fit.selection import incast_throughput  # noqa: E402
from perfmodel.placement.ns3_corpus import CORPUS_PATH, read_rows  # noqa: E402
from perfmodel.result import Estimate  # noqa: E402

STYLE = {"train": dict(color="tab:blue", alpha=0.55), "test": dict(color="tab:red", alpha=0.7)}


def drops_per_step(rows) -> dict:
    """regime -> {workers: packets dropped per step of one worker}."""
    out = collections.defaultdict(dict)
    for r in rows:
        out[r["regime"]][int(r["workers"])] = int(r["queue_drops"]) / int(r["steps"])
    return out


def one_timeout_a_step(point: dict, batch_size: int) -> float:
    """Samples/s of a point's prediction with one more minimum RTO in every step (the
    bottom of the interval, :func:`perfmodel.fit.selection.incast_throughput`)."""
    step = point["workers"] * batch_size / point["predicted"]
    return incast_throughput(Estimate(step, point["predicted"]), MIN_RTO)


def main(path: str) -> None:
    rows = read_rows(CORPUS_PATH)
    drops = drops_per_step(rows)
    report = evaluate_corpus(rows=[r for r in rows if r["mode"] == "sync"])
    batch = {r["regime"]: int(r["batch_size"]) for r in rows}
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for res in report.results:
        style = STYLE[res.split]
        ratio = {p["workers"]: p["measured"] / p["predicted"] for p in res.points}
        if res.lossy:
            ks = sorted(drops[res.regime])
            axes[0].plot(ks, [max(drops[res.regime][k], 0.05) for k in ks], "o-", ms=3,
                         **style)
            over = {p["workers"]: p["measured"] / one_timeout_a_step(p, batch[res.regime])
                    for p in res.points}
            ks = sorted(over)
            axes[1].plot(ks, [over[k] for k in ks], "o-", ms=3, **style)
        elif int(res.factors["n_ps"]) >= 2:
            p = int(res.factors["n_ps"])
            axes[2].plot([k / p for k in sorted(ratio)], [ratio[k] for k in sorted(ratio)],
                         "o-", ms=3, **style)
    axes[0].set(yscale="log", xlabel="workers K", ylabel="drops per step (0 drawn at 0.05)",
                title="sync, shallow buffers: incast")
    axes[1].set(yscale="log", xlabel="workers K",
                ylabel="measured / (prediction + one RTO a step)",
                title="sync, lossy: against one timeout a step")
    axes[2].set(xscale="log", xlabel="workers per server K / P", ylabel="measured / predicted",
                title="sync, loss-free, 2-4 servers")
    axes[1].axhline(1.0, color="k", lw=0.8, ls="--")
    axes[1].set_yticks([0.5, 1, 2, 4], ["0.5", "1", "2", "4"])
    axes[1].minorticks_off()
    axes[2].axhline(1.0, color="k", lw=0.8)
    axes[2].axvline(1.0, color="k", lw=0.8, ls=":")
    axes[2].set_xticks([0.5, 1, 2, 4, 8], ["0.5", "1", "2", "4", "8"])
    axes[2].minorticks_off()
    for split, style in STYLE.items():
        axes[0].plot([], [], "o-", label=f"{split} half", **style)
    axes[0].legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    for res in report.results:
        if res.lossy:
            print(f"{res.regime} {res.split}: drops/step "
                  f"{[round(drops[res.regime][k], 1) for k in sorted(drops[res.regime])]}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "corpus_misses.png")
