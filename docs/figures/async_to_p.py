"""Async on 3-4 servers measured at 1-2 workers: the servers' stations in turn against the
servers met at once up to P (a figure of docs/validation.md).

Every loss-free async regime on 3 or 4 servers of the committed packet-level sets whose
1- and 2-worker runs the selection answers with its MVA either way.  Each run at 3-16
workers is drawn as measured over predicted, against workers per server K / P, for the
selection with the servers' stations visited in turn at every K (left: the default
unless the user says the link is FIFO) and with the servers met at once up to P, the
in-turn growth beyond (``select_model(fork_join_to_p=True)``, right: the default on a
link said FIFO, loss-based TCP on drop-tail hosts).  Colour: how the hosts and TCP share
a link.  The script prints each side's mean error up to and beyond K = P.

    python docs/figures/async_to_p.py docs/figures/async_to_p.png
"""

import collections
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from async_servers import GROUPS, finish, group, regimes  # noqa: E402  (this directory)

from perfmodel.fit.corpus import evaluate_regime  # noqa: E402
from perfmodel.fit.selection import TO_P_CANDIDATE  # noqa: E402

READINGS = {"the servers' stations in turn at every K (unless FIFO)": False,
            "met at once up to P, in turn beyond (the default on a FIFO link)": True}


def ratios(rows, to_p: bool) -> dict | None:
    """{K: measured / predicted} at 3-16 workers from the selection on the 1- and
    2-worker runs (the corpus protocol); None when it does not answer with its MVA."""
    result = evaluate_regime(rows, fork_join_to_p=to_p)
    if result.chosen != TO_P_CANDIDATE:
        return None
    return {p["workers"]: p["measured"] / p["predicted"] for p in result.points}


def main(path: str) -> None:
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    errors = collections.defaultdict(list)
    for rows in regimes():   # loss-free async on 2 or more servers; 3 or more here
        p, color = int(rows[0]["n_ps"]), GROUPS[group(rows[0])]
        if p < 3:
            continue
        both = {name: ratios(rows, to_p) for name, to_p in READINGS.items()}
        if any(ratio is None for ratio in both.values()):
            continue
        for ax, (name, ratio) in zip(axes, both.items()):
            ks = sorted(ratio)
            ax.plot([k / p for k in ks], [ratio[k] for k in ks], "o-", ms=3, lw=1,
                    color=color, alpha=0.6)
            for k in ks:
                side = "up to P" if k <= p else "beyond P"
                errors[name, group(rows[0]), side].append(abs(1 / ratio[k] - 1))
    finish(fig, axes, READINGS, [0.75, 1, 2, 4],
           "measured / predicted (from the 1-2 worker runs)", "upper right", path, errors,
           width=47)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "async_to_p.png")
