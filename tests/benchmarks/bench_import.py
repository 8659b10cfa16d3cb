"""Benchmark: start-up cost of ``import perfmodel`` and of ``perfmodel --help`` (a script).

Each measurement is a fresh interpreter: ``python -X importtime -c "import perfmodel"``,
whose last line is the package's cumulative import time (its own code and
everything it imports), and the wall time of ``python -c`` running the import
or building the CLI's parser.  It prints medians over ``--repeats`` runs, and
with ``--baseline DIR`` (another checkout, e.g. ``git worktree add /tmp/old
<commit>``) the same for that checkout and the ratios, from one run.

Usage::

    python tests/benchmarks/bench_import.py [--repeats 15] [--baseline /tmp/old]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CASES = {"import perfmodel": "import perfmodel",
         "perfmodel --help": "from perfmodel.cli import build_parser; build_parser()",
         "a model and zoo": "from perfmodel import SyncCoarse, zoo; zoo.profile('resnet50-pipedream')"}


def _run(code: str, checkout: Path, importtime: bool) -> tuple[float, float]:
    """(wall seconds, import seconds of perfmodel's modules) of one fresh process.

    The import seconds add the cumulative times of the top-level imports of
    perfmodel's modules: their own code and everything they import.
    """
    args = [sys.executable] + (["-X", "importtime"] if importtime else []) + ["-c", code]
    env = dict(os.environ, PYTHONPATH=str(checkout))   # this checkout's perfmodel first
    start = time.perf_counter()
    out = subprocess.run(args, capture_output=True, text=True, cwd=checkout, env=env, check=True)
    wall = time.perf_counter() - start
    own = 0.0
    for line in out.stderr.splitlines():   # "import time: self | cumulative | name"
        parts = line.split("|")
        if len(parts) == 3 and parts[2].startswith(" perfmodel"):   # not nested: one space
            own += int(parts[1]) / 1e6
    return wall, own if importtime else float("nan")


def measure(checkout: Path, repeats: int) -> dict[str, tuple[float, float]]:
    """Per case: (median wall seconds, median cumulative import seconds)."""
    out = {}
    for name, code in CASES.items():
        walls = [_run(code, checkout, False)[0] for _ in range(repeats)]
        owns = [_run(code, checkout, True)[1] for _ in range(repeats)]
        out[name] = (statistics.median(walls), statistics.median(owns))
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--baseline", type=Path, help="another checkout to compare with")
    args = parser.parse_args(argv)
    empty = statistics.median(_run("pass", ROOT, False)[0] for _ in range(args.repeats))
    now = measure(ROOT, args.repeats)
    before = measure(args.baseline, args.repeats) if args.baseline else None
    print(f"python {sys.version.split()[0]}; empty interpreter {empty * 1e3:.0f} ms "
          f"(median of {args.repeats})")
    for name, (wall, own) in now.items():
        line = f"{name:<17} wall {wall * 1e3:6.0f} ms, perfmodel's imports {own * 1e3:6.1f} ms"
        if before:
            b_wall, b_own = before[name]
            line += (f"   baseline: wall {b_wall * 1e3:6.0f} ms, imports {b_own * 1e3:6.1f} ms"
                     f"   ratio {b_own / own:.0f}x" if own == own and b_own == b_own else "")
        print(line)


if __name__ == "__main__":
    main()
