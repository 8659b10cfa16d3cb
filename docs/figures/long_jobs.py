"""Async at 8 times the segments: the committed window against a long job (a figure of
docs/validation.md).

Five loss-free async regimes of the corpus's test half on two to four servers at 1 and
10 Gbps, at 8 times the segments per transfer: the speeds the committed window measures
(16 gradients per worker after 2) and those of a long job (after 32), with the default
selection's prediction from the 1- and 2-worker runs of the long job and its 90%
interval, whose top on two or more servers is the contention-free bound.  Beyond the
knee the long job runs up to 1.5 times faster, near the bound: the convoys of a common
start outlast a short window when transfers are long, and dissolve over a long job.

    python docs/figures/long_jobs.py docs/figures/long_jobs.png
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from perfmodel.fit.corpus import evaluate_corpus  # noqa: E402
from perfmodel.placement.ns3_corpus import COMMITTED_SETS, read_rows  # noqa: E402

LONG_JOB = Path(__file__).parents[1] / "experiments" / "ns3_corpus_8x_async_warm32.csv"
REGIMES = ("c020", "c047", "c064", "c066", "c084")


def speeds(path) -> dict:
    """regime -> {workers: samples/s} of the regimes drawn."""
    out = {name: {} for name in REGIMES}
    for r in read_rows(path):
        if r["regime"] in out:
            out[r["regime"]][int(r["workers"])] = float(r["throughput"])
    return out


def main(path: str) -> None:
    window, long_job = speeds(COMMITTED_SETS["corpus-8x"]), speeds(LONG_JOB)
    rows = [r for r in read_rows(LONG_JOB) if r["regime"] in REGIMES]
    report = {r.regime: r for r in evaluate_corpus(rows=rows, splits=["test"]).results}
    fig, axes = plt.subplots(1, len(REGIMES), figsize=(18, 3.8))
    for ax, name in zip(axes, REGIMES):
        res = report[name]
        ks = [p["workers"] for p in res.points]
        ax.fill_between(ks, [p["low"] for p in res.points], [p["high"] for p in res.points],
                        color="tab:grey", alpha=0.25, label="90% interval")
        ax.plot(ks, [p["predicted"] for p in res.points], "k--", label="the default's answer")
        for runs, style, label in ((window[name], "o-", "committed window"),
                                   (long_job[name], "s-", "long job")):
            ax.plot(sorted(runs), [runs[k] for k in sorted(runs)], style, label=label)
        f = res.factors
        ax.set_title(f"{name}: {f['queue']} hosts, P={f['n_ps']}, {f['bandwidth_gbps']:g} Gbps",
                     fontsize=10)
        ax.set_xlabel("workers")
        print(f"{name}: " + ", ".join(f"{k}: {window[name][k]:.0f} -> {long_job[name][k]:.0f}"
                                      for k in sorted(long_job[name])))
    axes[0].set_ylabel("samples/s")
    axes[0].legend(fontsize=8)
    fig.suptitle("async at 8 times the segments: a long job runs near the top of the interval "
                 "(the contention-free bound)", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=90)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "long_jobs.png")
