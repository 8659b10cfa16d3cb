"""The simulator's O(log K) link events against its O(K) scan of every flow.

The kernel (:mod:`perfmodel.sim._kernel`) keeps, per link, a heap of its
flows keyed by (virtual finish tag, start sequence) under equal sharing and
all-reduce, and only the head of the active list under FCFS; the scan path
(``engine._SCAN_ALWAYS``, otherwise used only for the max-min NIC rule)
brings every active flow up to date at every event of its direction, as the
engine did before.  FCFS does the same arithmetic on both paths and must
agree bit for bit; equal sharing and all-reduce differ in the rounding of the
lazy update only, so every op must start and end within a relative 1e-9 of
the scan path (on jittered inputs, where rounding is not amplified by
lock-step ties).  (With exact ties, as in lock-step traces of round numbers,
the order of simultaneous events is decided by rounding on both paths; the
transliteration of Li et al. 2022's Algorithm 1 in ``test_sim_reference.py``
flags those and compares the rest.)
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from perfmodel.errors import SpecError
from perfmodel.sim import Op, Step, Trace, engine, numba_available, simulate

B = 1.25e9
RICH = Trace.from_layers([3e7, 5e7, 2e7, 4e7], [[0.01, 0.02, 0.03, 0.01],
                                                [0.012, 0.02, 0.031, 0.02]],
                         [0.02, 0.03, 0.01, 0.02], 0.005, overlap=True)
TWO = Trace.from_layers([3e7, 5e7, 2e7, 4e7], [0.01, 0.02, 0.03, 0.01],
                        [0.02, 0.03, 0.01, 0.02], 0.005, overlap=True, servers=[0, 1, 0, 1])


def _paths(monkeypatch, trace, workers, *args, **kw):
    """The same simulation on the scan path and on the heap path."""
    monkeypatch.setattr(engine, "_SCAN_ALWAYS", True)
    scan = simulate(trace, workers, *args, **kw)
    monkeypatch.setattr(engine, "_SCAN_ALWAYS", False)
    return scan, simulate(trace, workers, *args, **kw)


def _identical(a, b):
    np.testing.assert_array_equal(a.starts, b.starts)
    np.testing.assert_array_equal(a.ends, b.ends)
    assert a.events == b.events
    for k in a.ops:
        np.testing.assert_array_equal(a.ops[k], b.ops[k])


def _close(a, b, rel=1e-9):
    """The same ops, each starting and ending within ``rel`` of the run's span.

    Events that tie in exact arithmetic (equal pulls started together end
    together) may come in either order after rounding, so ops are matched by
    (worker, step, op), not by position.
    """
    assert a.events == b.events
    scale = max(1.0, float(a.ends.max()))

    def by_op(r):
        order = np.lexsort((r.ops["op"], r.ops["step"], r.ops["worker"]))
        return {k: r.ops[k][order] for k in r.ops}

    x, y = by_op(a), by_op(b)
    for k in ("worker", "step", "op"):
        np.testing.assert_array_equal(x[k], y[k])
    for k in ("start", "end"):
        np.testing.assert_allclose(y[k], x[k], rtol=rel, atol=rel * scale)
    np.testing.assert_allclose(b.ends, a.ends, rtol=rel, atol=rel * scale)


OPTIONS = [{}, {"window": 2e7}, {"per_flow_cap": 4e8}, {"server_cpu": "fcfs"},
           {"timeout_probability": 0.2}, {"timeout_probability": 0.3,
                                          "timeout_position": "uniform"}]


@pytest.mark.parametrize("workers", [3, 40])
@pytest.mark.parametrize("mode", ["async", "sync", "allreduce"])
@pytest.mark.parametrize("sharing", ["ps", "fcfs"])
@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(o) or "plain")
def test_heap_path_equals_scan_path(monkeypatch, workers, mode, sharing, options):
    kw = dict(steps=8, warmup=1, seed=4, record=True, engine="python", jitter=0.2, **options)
    scan, heap = _paths(monkeypatch, RICH, workers, B, mode, sharing, **kw)
    if sharing == "fcfs" and mode != "allreduce":
        _identical(scan, heap)
    else:
        _close(scan, heap)
        assert heap.throughput == pytest.approx(scan.throughput, rel=1e-9)


@pytest.mark.parametrize("server_sharing", ["nic", "independent"])
@pytest.mark.parametrize("sharing", ["ps", "fcfs"])
def test_heap_path_with_two_servers(monkeypatch, server_sharing, sharing):
    # "nic" with "ps" stays on the scan path (max-min rates): identical by construction
    kw = dict(steps=8, warmup=1, seed=2, record=True, engine="python", jitter=0.2,
              server_sharing=server_sharing)
    scan, heap = _paths(monkeypatch, TWO, 12, B, "async", sharing, **kw)
    if sharing == "ps" and server_sharing == "independent":
        _close(scan, heap)
    else:
        _identical(scan, heap)


def test_lock_step_ties_keep_the_start_order():
    # K workers start equal pulls together: under PS they all end at once, in the order
    # they started (worker order); then each computes alone
    t = Trace.from_layers([1e8], [0.1], [0.2], 0.01, overlap=False)
    r = simulate(t, 5, B, "sync", "ps", steps=2, warmup=0, record=True, engine="python")
    first = (r.ops["step"] == 0) & (r.ops["res"] == 0)
    assert r.ops["worker"][first].tolist() == [0, 1, 2, 3, 4]
    ends = r.ops["end"][first]
    assert len(set(ends.tolist())) == 1 and ends[0] == pytest.approx(5 * 0.08, rel=1e-12)


AMOUNT = st.floats(0.05, 2.0)


@st.composite
def _traces(draw):
    steps = []
    for _ in range(draw(st.integers(1, 3))):
        ops = []
        for i in range(draw(st.integers(1, 6))):
            res = draw(st.sampled_from(["downlink", "worker", "uplink", "ps"]))
            deps = tuple(f"o{j}" for j in range(i) if draw(st.booleans()))
            amount = draw(AMOUNT)
            key = "bytes" if res in ("downlink", "uplink") else "seconds"
            ops.append(Op(f"o{i}", res, deps=deps, **{key: amount}))
        steps.append(Step(tuple(ops)))
    return Trace(tuple(steps))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trace=_traces(), workers=st.integers(1, 24),
       mode=st.sampled_from(["async", "sync", "allreduce"]),
       sharing=st.sampled_from(["ps", "fcfs"]), seed=st.integers(0, 2 ** 16),
       window=st.one_of(st.none(), st.floats(0.1, 1.5)),
       cap=st.one_of(st.none(), st.floats(0.2, 1.5)))
def test_heap_path_equals_scan_path_on_random_traces(trace, workers, mode, sharing, seed, window,
                                                     cap):
    if mode == "allreduce" and any(all(op.res in ("downlink", "ps") for op in s.ops)
                                   for s in trace.steps):
        return
    kw = dict(steps=4, warmup=0, seed=seed, record=True, engine="python", jitter=0.3,
              window=window, per_flow_cap=cap)
    try:
        engine._SCAN_ALWAYS = True
        scan = simulate(trace, workers, 1.0, mode, sharing, **kw)
    except SpecError:
        assume(False)
    finally:
        engine._SCAN_ALWAYS = False
    heap = simulate(trace, workers, 1.0, mode, sharing, **kw)
    if sharing == "fcfs" and mode != "allreduce":
        _identical(scan, heap)
    else:
        # jittered computations make ties unlikely, not impossible: equal pulls started
        # together may end together; compare by op, to the tolerance
        assert scan.events == heap.events
        scale = max(1.0, float(scan.ends.max()))
        np.testing.assert_allclose(heap.ends, scan.ends, rtol=1e-9, atol=1e-9 * scale)


@pytest.mark.skipif(not numba_available(), reason="numba is not installed")
@pytest.mark.parametrize("sharing", ["ps", "fcfs"])
def test_compiled_heap_path_equals_python(sharing):
    kw = dict(steps=10, warmup=1, seed=1, record=True, jitter=0.2)
    a = simulate(RICH, 64, B, "async", sharing, engine="python", **kw)
    b = simulate(RICH, 64, B, "async", sharing, engine="numba", **kw)
    _identical(a, b)
