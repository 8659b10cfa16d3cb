"""Benchmark: ``sync_step_time`` on grids and one configuration at a time (a script, not a test).

1. Grid: evaluates Li et al. 2022's coarse Sync-SGD step time (eq. 9 by default)
   over (workers 1..N) x (bandwidths) configurations twice in the same run:

   * vectorized: one call of :func:`perfmodel.coarse.sync_step_time` with the
     workers as a column and the bandwidths as a row (numpy broadcasting);
   * scalar: a plain Python loop calling :func:`reference_sync_step_time`, the same
     formulas written with floats and ``max`` only.

   It checks that both agree, then prints configurations per second of each
   (median of several repeats) and the ratio -- aim: >= 100x and >= 1e6/s.

2. Scalar calls: microseconds per call of ``sync_step_time`` with plain numbers
   (the scalar fast path), of the array path the same call takes with arrays
   (validation and kernels of :mod:`perfmodel.coarse`, as scalar calls ran before
   the fast path), of ``sympy.lambdify`` of the same formula
   (:mod:`perfmodel.symbolic`) and of :func:`reference_sync_step_time`, for every
   ``sharing`` and ``overlap`` -- aim: under 5 us a call.  It checks that the fast
   path equals the array path to the bit.  Each timed window is short (``--calls``
   calls, well under a millisecond) and the median is over many windows
   (``--scalar-repeats``), so that on a shared machine the time slices given to
   other processes land in few windows and do not move the median.

Then one line to paste into docs/benchmarks.md.

Usage::

    python tests/benchmarks/bench_coarse.py [--workers 1000] [--bandwidths 1000]
                                            [--repeats 11] [--sharing hybrid] [--overlap]
                                            [--calls 200] [--scalar-repeats 101]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys

import numpy as np

from perfmodel import coarse, symbolic
from perfmodel.coarse import sync_step_time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # also when loaded by path
from _timing import median_seconds  # noqa: E402

# A ResNet-50-like worker: 97.49 MB of FP32 parameters, 60 ms forward, 120 ms
# backward, 5 ms update on the parameter server.
MODEL_BYTES = 97.49e6
T_FORWARD, T_BACKWARD, T_UPDATE = 0.060, 0.120, 0.005


def reference_sync_step_time(model_bytes, bandwidth, t_forward, t_backward, t_update, workers,
                             sharing="hybrid", overlap=False, n_ps=1, per_flow_cap=None,
                             link_efficiency=1.0, sharing_weight=0.5):
    """Li et al. 2022, eqs. 7-10 (and perfmodel's extensions) on floats, one configuration."""
    b = bandwidth * link_efficiency
    shared = max(workers * model_bytes / (n_ps * b), model_bytes / b)
    solo = model_bytes / b
    if per_flow_cap is not None:
        capped = model_bytes / (n_ps * per_flow_cap * link_efficiency)
        shared, solo = max(shared, capped), max(solo, capped)
    downlink = shared
    if sharing == "ps":
        uplink = shared
    elif sharing == "fcfs":
        uplink = solo
    else:
        uplink = sharing_weight * shared + (1.0 - sharing_weight) * solo
    update = t_update / n_ps
    if overlap:
        return max(downlink, t_forward) + max(uplink, t_backward) + update
    return downlink + t_forward + t_backward + uplink + update


def vectorized(workers, bandwidths, sharing, overlap):
    return sync_step_time(MODEL_BYTES, bandwidths[None, :], T_FORWARD, T_BACKWARD, T_UPDATE,
                          workers[:, None], sharing, overlap)


def python_loop(workers, bandwidths, sharing, overlap):
    out = []
    for k in workers.tolist():
        for b in bandwidths.tolist():
            out.append(reference_sync_step_time(MODEL_BYTES, b, T_FORWARD, T_BACKWARD, T_UPDATE,
                                                k, sharing, overlap))
    return out


def array_path(model_bytes, bandwidth, t_forward, t_backward, t_update, workers, sharing,
               overlap):
    """The validation and kernels every call ran before the scalar fast path (defaults)."""
    arrays, options, shape = coarse._check_sync(
        model_bytes, bandwidth, t_forward, t_backward, t_update, workers, sharing, overlap,
        1, None, 1.0, 0.5, 1, None)
    return coarse._shaped(coarse._blockwise(coarse._sync_terms, arrays, options), shape)


def scalar_calls(calls: int, repeats: int) -> tuple[list, bool]:
    """Microseconds per scalar call of each implementation, per (sharing, overlap)."""
    rng = np.random.default_rng(0)
    workers = rng.integers(1, 257, calls).tolist()
    bandwidths = (rng.uniform(1, 100, calls) * 1e9 / 8).tolist()
    cases = list(zip(bandwidths, workers))
    rows, same = [], True
    for _ in range(3):   # warm-up: the interpreter specializes the hot code on first runs
        [sync_step_time(MODEL_BYTES, b, T_FORWARD, T_BACKWARD, T_UPDATE, k) for b, k in cases]
    for overlap in (False, True):
        for sharing in coarse.SHARINGS:
            name = sharing + ("_overlap" if overlap else "")
            lam = symbolic.form(name).function()
            extra = (0.5,) if sharing == "hybrid" else ()

            def fast(s=sharing, o=overlap):
                return [sync_step_time(MODEL_BYTES, b, T_FORWARD, T_BACKWARD, T_UPDATE, k, s, o)
                        for b, k in cases]

            def general(s=sharing, o=overlap):
                return [array_path(MODEL_BYTES, b, T_FORWARD, T_BACKWARD, T_UPDATE, k, s, o)
                        for b, k in cases]

            def lambdified(f=lam, e=extra):
                return [f(MODEL_BYTES, b, T_FORWARD, T_BACKWARD, T_UPDATE, k, *e)
                        for b, k in cases]

            def plain(s=sharing, o=overlap):
                return [reference_sync_step_time(MODEL_BYTES, b, T_FORWARD, T_BACKWARD,
                                                 T_UPDATE, k, s, o) for b, k in cases]

            times = {}
            for label, fn in (("fast", fast), ("array", general), ("lambdify", lambdified),
                              ("plain", plain)):
                fn()   # warm-up
                t, out = median_seconds(fn, repeats)
                times[label] = 1e6 * t / calls
                if label == "fast":
                    fast_out = out
                elif label == "array":
                    same = same and fast_out == out
                else:
                    same = same and bool(np.allclose(fast_out, out, rtol=1e-12, atol=0))
            rows.append((name, times))
    return rows, same


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, default=1000, help="workers 1..N (default 1000)")
    parser.add_argument("--bandwidths", type=int, default=1000,
                        help="bandwidths from 1 to 100 Gbps (default 1000)")
    parser.add_argument("--repeats", type=int, default=11,
                        help="timed repeats of the vectorized call (median; the Python loop "
                             "runs min(repeats, 5) times)")
    parser.add_argument("--sharing", default="hybrid", choices=("ps", "fcfs", "hybrid"))
    parser.add_argument("--overlap", action="store_true")
    parser.add_argument("--calls", type=int, default=200,
                        help="scalar calls per timed window (default 200)")
    parser.add_argument("--scalar-repeats", type=int, default=101,
                        help="timed windows of scalar calls (median; default 101)")
    args = parser.parse_args(argv)

    workers = np.arange(1, args.workers + 1, dtype=float)
    bandwidths = np.linspace(1e9, 100e9, args.bandwidths) / 8  # 1..100 Gbps in bytes/s
    n = workers.size * bandwidths.size
    label = f"sharing={args.sharing}, overlap={args.overlap}"

    for _ in range(3):  # warm-up at full size: first calls pay for fresh memory pages
        vectorized(workers, bandwidths, args.sharing, args.overlap)
    python_loop(workers[:10], bandwidths, args.sharing, args.overlap)
    t_vec, vec = median_seconds(lambda: vectorized(workers, bandwidths, args.sharing,
                                                   args.overlap), args.repeats)
    py_repeats = max(1, min(args.repeats, 5))
    t_py, ref = median_seconds(lambda: python_loop(workers, bandwidths, args.sharing,
                                                   args.overlap), py_repeats)
    ref = np.asarray(ref).reshape(vec.shape)
    worst = float(np.max(np.abs(vec - ref) / np.abs(ref)))
    if not np.allclose(vec, ref, rtol=1e-12, atol=0.0):
        print(f"MISMATCH: largest relative difference {worst:.3g}", file=sys.stderr)
        return 1

    rate_vec, rate_py = n / t_vec, n / t_py
    ratio = rate_vec / rate_py
    print(f"grid: {workers.size} workers x {bandwidths.size} bandwidths = {n:,} configurations "
          f"({label}); results agree (max rel. diff {worst:.1e})")
    print(f"vectorized : {t_vec * 1e3:10.3f} ms   {rate_vec:14,.0f} configurations/s "
          f"(median of {args.repeats})")
    print(f"python loop: {t_py * 1e3:10.3f} ms   {rate_py:14,.0f} configurations/s "
          f"(median of {py_repeats})")
    print(f"speed-up   : {ratio:,.0f}x")
    print()
    print(f"docs/benchmarks.md: `sync_step_time` evaluates {rate_vec / 1e6:,.0f} M configurations/s "
          f"vectorized vs {rate_py / 1e6:.2f} M/s for a pure-Python loop ({ratio:,.0f}x; "
          f"{workers.size} workers x {bandwidths.size} bandwidths, {label}, median of "
          f"{args.repeats}; Python {platform.python_version()}, numpy {np.__version__}, "
          f"{platform.machine()})")
    ok = ratio >= 100 and rate_vec >= 1e6
    if not ok:
        print("below target (>= 100x and >= 1e6 configurations/s)", file=sys.stderr)

    print()
    rows, same = scalar_calls(args.calls, args.scalar_repeats)
    print(f"scalar calls: microseconds per call (median of {args.scalar_repeats} windows of "
          f"{args.calls} calls); "
          f"fast path {'equals' if same else 'DIFFERS FROM'} the array path")
    print(f"  {'form':<15} {'fast':>7} {'array':>7} {'lambdify':>9} {'plain':>7} "
          f"{'array/fast':>11} {'lambdify/fast':>14}")
    for name, t in rows:
        print(f"  {name:<15} {t['fast']:7.2f} {t['array']:7.2f} {t['lambdify']:9.2f} "
              f"{t['plain']:7.2f} {t['array'] / t['fast']:10.1f}x {t['lambdify'] / t['fast']:13.2f}x")
    worst = max(t["fast"] for _, t in rows)
    print(f"  slowest fast path: {worst:.2f} us a call   aim < 5 us: "
          f"{'ok' if worst < 5 else 'MISSED'}")
    default = dict(rows)["hybrid"]
    print()
    print(f"docs/benchmarks.md: one `sync_step_time` call with plain numbers takes "
          f"{default['fast']:.1f} us (eq. 9; the array path {default['array']:.0f} us, "
          f"{default['array'] / default['fast']:.0f}x more; sympy.lambdify of the same formula "
          f"{default['lambdify']:.2f} us and the bare float formula {default['plain']:.2f} us, "
          f"without checks; median of {args.scalar_repeats} windows of {args.calls} calls)")
    if not same:
        print("MISMATCH between the scalar fast path and the array path", file=sys.stderr)
        return 1
    if worst >= 5:
        print("scalar calls above target (< 5 us)", file=sys.stderr)
        ok = False
    return 0 if ok else 2


if __name__ == "__main__":
    sys.exit(main())
