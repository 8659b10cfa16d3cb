"""Which level two runs should give: the larger slowdown, or one between the two.

``perfmodel.fit.level`` fits one slowdown of every step by the mean relative
error, which on two runs lands on the larger of the two runs' own slowdowns
(the module's notes).  This script replays the user's path of ``perfmodel
validate matrix --only corpus`` (runs of 1-2 workers, every committed set)
with the fits' objective as it is, then with the largest relative error
(``max_relative``: on two runs the arithmetic mean of their slowdowns, the
midway level) and with the root mean square (``rms_relative``: between the
two), and prints the loss-free regimes' mean and max error and the chosen
models' coverage per mode and group.  The objective reaches every fit of the
selection; on a loss-free link those are levels.

    python docs/experiments/level_two_runs.py      # about 3 minutes
"""

import functools
import statistics

from perfmodel.fit import grid, selection
from perfmodel.fit.corpus import evaluate_corpus
from perfmodel.placement.ns3_corpus import PROTOCOL_SETS, read_rows

OBJECTIVES = ("mean_relative", "rms_relative", "max_relative")
GROUPS = {"train": lambda s: s == "train", "test": lambda s: s == "test",
          "probes": lambda s: s.startswith("probe")}


def every_set_rows() -> list[dict]:
    """The rows of the corpus and every probe committed."""
    return [r for path in PROTOCOL_SETS for r in read_rows(path)]


def results(rows, objective: str) -> list:
    """The protocol's loss-free regime results with every fit minimizing ``objective``."""
    selection.fit_tunables = functools.partial(grid.fit_tunables, objective=objective)
    try:
        return [r for r in evaluate_corpus(rows=rows).results if not r.lossy]
    finally:
        selection.fit_tunables = grid.fit_tunables


def main() -> None:
    rows = every_set_rows()
    table = {obj: results(rows, obj) for obj in OBJECTIVES}
    print("mode  group   regimes  " + "  ".join(f"{o:>22s}" for o in OBJECTIVES))
    for mode in ("sync", "async"):
        for name, member in GROUPS.items():
            cells = []
            for obj in OBJECTIVES:
                sel = [r for r in table[obj] if r.mode == mode and member(r.split)]
                cells.append(f"{100 * statistics.mean(r.mean_error for r in sel):5.1f}% "
                             f"({100 * max(r.max_error for r in sel):3.0f}%) "
                             f"{100 * statistics.mean(r.coverage for r in sel):3.0f}% cov")
            print(f"{mode:5s} {name:7s} {len(sel):7d}  " + "  ".join(f"{c:>22s}" for c in cells))


if __name__ == "__main__":
    main()
