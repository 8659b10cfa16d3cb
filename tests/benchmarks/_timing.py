"""Timing helper shared by the benchmark scripts (run as ``python tests/benchmarks/bench_*.py``,
so this directory is on ``sys.path``)."""

import statistics
import time

__all__ = ["median_seconds"]


def median_seconds(fn, repeats: int, clock=time.perf_counter) -> tuple[float, object]:
    """Median time (s) of ``fn()`` over ``repeats`` calls, and the last call's result.

    ``clock`` is wall time by default; ``time.process_time`` gives CPU time.
    """
    times, result = [], None
    for _ in range(repeats):
        start = clock()
        result = fn()
        times.append(clock() - start)
    return statistics.median(times), result
