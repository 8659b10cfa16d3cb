"""Benchmark: the trace-driven simulator on a layer-level ResNet-50 trace (a script, not a test).

The trace is built from the PipeDream profile copied into the package
(``perfmodel/zoo/pipedream/resnet50.txt``: 176 compute layers, 107 with
parameters, 102 MB) with :func:`perfmodel.sim.Trace.from_pipedream` and a 5 ms
update: 673 ops per step.  In one run the script

1. checks that the engines agree (compiled, CPython, and the readable
   transliteration of Li et al. 2022, Algorithm 1 kept in ``tests/test_sim_reference.py``)
   on a short run, op by op;
2. prints simulated ops (events) per second of each and the ratios;
3. times 1,000 steps of 8 workers (async and sync), and the prediction of
   2..10 workers x 1,000 steps (Li et al. 2020, Sec. 4.5 reports 117 s for its
   comparable job; the aim here is under 5 s in all).

Usage::

    python tests/benchmarks/bench_sim.py [--steps 1000] [--workers 8] [--mode sync]
                                         [--sharing ps] [--bandwidth 1.25e9]
"""

from __future__ import annotations

import argparse
import importlib.util
import platform
import sys
import time
from pathlib import Path

import perfmodel
from perfmodel.pipedream import load_graph as load_pipedream
from perfmodel.sim import Trace, numba_available, simulate

ROOT = Path(__file__).resolve().parents[2]


def reference_module():
    """tests/test_sim_reference.py, imported by path (it holds the transliteration)."""
    path = ROOT / "tests" / "test_sim_reference.py"
    spec = importlib.util.spec_from_file_location("sim_reference", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def resnet50_trace() -> Trace:
    graph = load_pipedream(Path(perfmodel.__file__).parent / "zoo" / "pipedream" / "resnet50.txt")
    return Trace.from_pipedream(graph, t_update=0.005)


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--mode", default="sync", choices=["async", "sync", "allreduce"])
    ap.add_argument("--sharing", default="ps", choices=["ps", "fcfs", "hybrid"])
    ap.add_argument("--bandwidth", type=float, default=1.25e9, help="bytes/s (10 Gbps)")
    args = ap.parse_args(argv)
    trace = resnet50_trace()
    n_ops = len(trace.steps[0].ops)
    fast = "numba" if numba_available() else "python"
    print(f"perfmodel.sim benchmark: ResNet-50 layer trace, {n_ops} ops/step, "
          f"B = {args.bandwidth:.3g} B/s; Python {platform.python_version()}, "
          f"fast engine = {fast}")
    if fast == "numba":                  # compile (or load the cache) outside the timings
        _, dt = timed(lambda: simulate(trace, 2, args.bandwidth, steps=2, warmup=0,
                                       engine="numba"))
        print(f"  numba compile or cache load: {dt:.2f} s")

    # 1. agreement on a short run, op by op
    ref = reference_module()
    kw = dict(mode=args.mode, sharing="ps" if args.sharing == "hybrid" else args.sharing,
              steps=3, warmup=0, seed=0)
    (done, ends, _), t_ref = timed(lambda: ref.reference([trace], [args.workers], args.bandwidth,
                                                         kw["mode"], kw["sharing"], 3, 0))
    runs = {}
    for engine in dict.fromkeys([fast, "python"]):
        runs[engine] = timed(lambda e=engine: simulate(trace, args.workers, args.bandwidth,
                                                       record=True, engine=e, **kw))
    for res, _ in runs.values():
        ref.assert_same((done, ends, False), res)
    events = runs["python"][0].events
    print(f"  agreement: {fast} == python == reference transliteration on "
          f"{args.workers} workers x 3 steps ({events} ops): ok")

    # 2. ops per second
    rate_ref = events / t_ref
    res_py, t_py = timed(lambda: simulate(trace, args.workers, args.bandwidth, steps=30,
                                          warmup=0, engine="python", mode=args.mode,
                                          sharing=kw["sharing"]))
    rate_py = res_py.events / t_py
    res_fast, t_fast = timed(lambda: simulate(trace, args.workers, args.bandwidth,
                                              steps=args.steps, warmup=50, engine=fast,
                                              mode=args.mode, sharing=kw["sharing"]))
    rate_fast = res_fast.events / t_fast
    print(f"  reference transliteration : {rate_ref:12,.0f} ops/s")
    print(f"  engine, CPython           : {rate_py:12,.0f} ops/s  ({rate_py / rate_ref:.1f}x)")
    print(f"  engine, {fast:<18}: {rate_fast:12,.0f} ops/s  ({rate_fast / rate_ref:.1f}x "
          f"the reference, aim >= 20x)")

    # 3. wall times of the benchmark's jobs
    for mode in ("async", "sync"):
        res, dt = timed(lambda m=mode: simulate(trace, args.workers, args.bandwidth, m,
                                                 kw["sharing"], steps=args.steps, warmup=50,
                                                 engine=fast))
        print(f"  {args.workers} workers x {args.steps} steps, {mode:5s}: {dt:6.2f} s "
              f"({res.events:,} ops), throughput {res.throughput:.3f} steps/s")
    lines = []
    total = 0.0
    for k in range(2, 11):
        res, dt = timed(lambda k=k: simulate(trace, k, args.bandwidth, args.mode, args.sharing,
                                              steps=args.steps, warmup=50, engine=fast))
        total += dt
        lines.append(f"{k}:{res.throughput:.2f}")
    print(f"  predict 2..10 workers x {args.steps} steps ({args.mode}, {args.sharing}): "
          f"{total:.2f} s in all (aim < 5 s; Li et al. 2020 Sec. 4.5: 117 s)")
    print(f"    steps/s by workers: {' '.join(lines)}")
    ratio = rate_fast / rate_ref
    print(f"docs/benchmarks.md: sim {fast} {rate_fast / 1e6:.2f}M ops/s, {ratio:.0f}x the transliteration; "
          f"2..10 workers x {args.steps} steps of ResNet-50 in {total:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
