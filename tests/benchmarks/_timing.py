"""Timing helper shared by the benchmark scripts (run as ``python tests/benchmarks/bench_*.py``,
so this directory is on ``sys.path``)."""

import statistics
import time

__all__ = ["median_seconds"]


def median_seconds(fn, repeats: int) -> tuple[float, object]:
    """Median wall time (s) of ``fn()`` over ``repeats`` calls, and the last call's result."""
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result
