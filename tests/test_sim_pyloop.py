"""The CPython event loop (:mod:`perfmodel.sim._pyloop`) against the kernel's own source.

``engine="python"`` runs the kernel's heap path rewritten for the
interpreter; ``engine._KERNEL_ALWAYS`` makes it run the kernel's source
(:mod:`perfmodel.sim._kernel`, the code numba compiles) on Python lists
instead.  The two must agree bit for bit: every op's start and end, every
step's, the critical paths, the utilizations and the event count, for every
mode, sharing and option (window, cap, one update CPU per server, timeouts,
several servers, worker types).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_sim_heap import RICH, TWO, B  # the heap path's own traces

from perfmodel.errors import SpecError
from perfmodel.sim import RESOURCES, Op, Step, Trace, _pyloop, engine, numba_available, simulate

COARSE = Trace((Step((Op("pull", "downlink", bytes=1e8),
                      Op("compute", "worker", seconds=0.3, deps=("pull",)),
                      Op("push", "uplink", bytes=1e8, deps=("compute",)),
                      Op("update", "ps", seconds=0.01, deps=("push",)))),))
OPTIONS = [{}, {"window": 2e7}, {"per_flow_cap": 4e8}, {"server_cpu": "fcfs"},
           {"timeout_probability": 0.2},
           {"timeout_probability": 0.3, "timeout_position": "uniform"},
           {"window": 2e7, "per_flow_cap": 6e8, "server_cpu": "fcfs",
            "timeout_probability": 0.3, "timeout_position": "uniform"}]


def _both(trace, workers, *args, **kw):
    """The same simulation by the CPython loop and by the kernel's source in CPython."""
    fast = simulate(trace, workers, *args, engine="python", **kw)
    engine._KERNEL_ALWAYS = True
    try:
        kernel = simulate(trace, workers, *args, engine="python", **kw)
    finally:
        engine._KERNEL_ALWAYS = False
    return fast, kernel


def _identical(a, b):
    assert a.events == b.events
    for x, y in ((a.starts, b.starts), (a.ends, b.ends), (a.step_times, b.step_times)):
        np.testing.assert_array_equal(x, y)
    assert a.throughput == b.throughput and a.sample_throughput == b.sample_throughput
    assert dict(a.critical) == dict(b.critical)
    assert dict(a.utilization) == dict(b.utilization)
    assert (a.ops is None) == (b.ops is None)
    for k in a.ops or {}:
        np.testing.assert_array_equal(a.ops[k], b.ops[k])
    assert a.meta["timeouts"] == b.meta["timeouts"]
    for x, y in zip(a.runs, b.runs):
        _identical(x, y)


@pytest.mark.parametrize("trace", [RICH, COARSE], ids=["rich", "coarse"])
@pytest.mark.parametrize("workers", [1, 3, 17])
@pytest.mark.parametrize("mode", ["async", "sync", "allreduce"])
@pytest.mark.parametrize("sharing", ["ps", "fcfs"])
def test_python_loop_equals_kernel(trace, workers, mode, sharing):
    for options in OPTIONS:
        _identical(*_both(trace, workers, B, mode, sharing, steps=6, warmup=1, seed=3,
                          record=True, jitter=0.2, **options))


@pytest.mark.parametrize("server_sharing", ["independent", "nic"])
@pytest.mark.parametrize("mode", ["async", "sync", "allreduce"])
@pytest.mark.parametrize("sharing", ["ps", "fcfs"])
def test_python_loop_equals_kernel_two_servers(server_sharing, mode, sharing):
    # (nic with "ps" is the scan path, run by the kernel's source either way)
    for options in OPTIONS:
        _identical(*_both(TWO, 9, B, mode, sharing, steps=6, warmup=1, seed=5, record=True,
                          jitter=0.2, server_sharing=server_sharing, **options))


@pytest.mark.parametrize("mode", ["async", "sync"])
def test_python_loop_equals_kernel_hybrid_and_worker_types(mode):
    _identical(*_both([RICH, COARSE], [5, 4], B, mode, "hybrid", steps=5, warmup=1, seed=2,
                      record=True, server_cpu="fcfs", timeout_probability=0.2))


def test_lock_step_ties_equal_kernel():
    # no jitter, round numbers: many events tie exactly and go in start order
    t = Trace.from_layers([1.0, 2.0], [0.5, 0.5], [1.0, 1.0], 0.5, overlap=True)
    for mode in ("async", "sync", "allreduce"):
        for sharing in ("ps", "fcfs"):
            _identical(*_both(t, 6, 1.0, mode, sharing, steps=4, warmup=0, jitter=0.0,
                              record=True))


def test_engine_runs_the_python_loop_on_the_heap_path_only(monkeypatch):
    calls = []
    real = _pyloop.run
    monkeypatch.setattr(_pyloop, "run", lambda **kw: calls.append(1) or real(**kw))
    simulate(TWO, 3, B, steps=3, warmup=0, engine="python", server_sharing="independent")
    assert calls == [1]
    simulate(TWO, 3, B, steps=3, warmup=0, engine="python", server_sharing="nic")  # scan path
    assert calls == [1]
    r = simulate(COARSE, 2, B, steps=3, warmup=0, engine="python")
    assert calls == [1, 1] and r.meta["engine"] == "python"


@pytest.mark.skipif(not numba_available(), reason="numba is not installed")
@pytest.mark.parametrize("sharing", ["ps", "fcfs"])
def test_python_loop_equals_compiled_kernel(sharing):
    kw = dict(steps=6, warmup=1, seed=7, record=True, jitter=0.2)
    for options in OPTIONS:
        a = simulate(RICH, 24, B, "async", sharing, engine="python", **kw, **options)
        b = simulate(RICH, 24, B, "async", sharing, engine="numba", **kw, **options)
        _identical(a, b)


# ---------------------------------------------------------------- random small traces

AMOUNT = st.one_of(st.just(0.0), st.floats(0.05, 2.0))


@st.composite
def _traces(draw, n_servers):
    steps = []
    for _ in range(draw(st.integers(1, 3))):
        n = draw(st.integers(1, 7))
        ops = []
        for i in range(n):
            res = draw(st.sampled_from(RESOURCES))
            deps = tuple(f"o{j}" for j in range(i) if draw(st.booleans()))
            key = "bytes" if res in ("downlink", "uplink") else "seconds"
            ops.append(Op(f"o{i}", res, deps=deps, server=draw(st.integers(0, n_servers - 1)),
                          **{key: draw(AMOUNT)}))
        order = draw(st.permutations(range(n)))
        steps.append(Step(tuple(ops[i] for i in order)))
    return Trace(tuple(steps))


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(trace=_traces(3), workers=st.integers(1, 12),
       mode=st.sampled_from(["async", "sync", "allreduce"]),
       sharing=st.sampled_from(["ps", "fcfs"]), seed=st.integers(0, 2 ** 16),
       window=st.one_of(st.none(), st.floats(0.1, 1.5)),
       cap=st.one_of(st.none(), st.floats(0.2, 1.5)),
       jitter=st.sampled_from([None, 0.0, 0.3]),
       server_sharing=st.sampled_from(["nic", "independent"]),
       server_cpu=st.sampled_from(["own", "fcfs"]),
       timeouts=st.sampled_from([(0.0, "tail"), (0.3, "tail"), (0.4, "uniform")]))
def test_python_loop_equals_kernel_on_random_traces(trace, workers, mode, sharing, seed, window,
                                                    cap, jitter, server_sharing, server_cpu,
                                                    timeouts):
    if mode == "allreduce" and any(all(op.res in ("downlink", "ps") for op in s.ops)
                                   for s in trace.steps):
        return
    kw = dict(steps=4, warmup=0, seed=seed, record=True, window=window, per_flow_cap=cap,
              jitter=jitter, server_sharing=server_sharing, server_cpu=server_cpu,
              timeout_probability=timeouts[0], retransmit_timeout=0.7,
              timeout_position=timeouts[1])
    try:
        a, b = _both(trace, workers, 1.0, mode, sharing, **kw)
    except SpecError:                   # every sampled op takes no time
        assume(False)
    _identical(a, b)
