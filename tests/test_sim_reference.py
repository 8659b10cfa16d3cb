"""A plain transliteration of Li et al. 2022, Algorithm 1 (Li et al. 2020, Algorithm 3.1), and the
fast engine checked against it op by op.

``reference`` below follows the pseudo-code line by line: a queue Q of ops in
progress, re-scanned at every iteration for the op with the least time left
(lines 10-11), every op in Q charged for the elapsed time (lines 15-16),
dependencies released (17-26), the worker's next op on the resource started or
the worker removed from ``active`` (27-30), and steps restarted (31-39).  It
has the two documented fixes, marked FIX 1 and FIX 2, and the extensions the
engine offers (HTTP/2 window, per-flow cap, several servers with max-min
sharing over server links and worker NICs, FCFS links under worker NICs,
all-reduce contraction), written
as plainly as possible.  It is slow on purpose: O(|Q|) work per event.

The engine (:mod:`perfmodel.sim._kernel`) must give every op of every step
the same start and end, in both of its forms (CPython and numba).
"""

from __future__ import annotations

from collections import defaultdict, deque

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from perfmodel.errors import SpecError
from perfmodel.sim import RESOURCES, Op, Step, Trace, numba_available, simulate
from perfmodel.sim.engine import draws

LINKS = ("downlink", "uplink")


class ROp:
    """One op of one worker's step, as Algorithm 1 handles it."""

    def __init__(self, w, k, op, work):
        self.w, self.k, self.id = w, k, op.id
        self.res, self.server = op.res, (0 if op.res == "worker" else op.server)
        self.work = work              # service still owed (s at full bandwidth for links)
        self.remaining = 0.0          # op.remaining of the chunk in progress
        self.turns = 0                # services received (HTTP/2: at most 2)
        self.waiting_for: set = set()
        self.dependent_ops: list = []
        self.start = None

    @property
    def key(self):                    # scheduler[w, r]
        return (self.w, self.res, self.server)


def maxmin_rates(flows, cap, left=None):
    """Max-min fair rates of (worker, server) flows: server links and worker NICs hold
    1, or what ``left`` (a mapping of ("link", s) and ("nic", w), updated) says is left."""
    rate = {f: 0.0 for f in flows}
    open_flows = set(flows)
    left = defaultdict(lambda: 1.0) if left is None else left
    level = 0.0
    while open_flows:
        users = defaultdict(int)
        for w, s in open_flows:
            users[("link", s)] += 1
            users[("nic", w)] += 1
        inc = min([cap - level] + [left[r] / n for r, n in users.items()])
        inc = max(inc, 0.0)
        level += inc
        for r, n in users.items():
            left[r] -= inc * n
        blocked = set()
        for f in open_flows:
            rate[f] += inc
            w, s = f
            if level >= cap * (1 - 1e-12) or left[("link", s)] <= 1e-12 \
                    or left[("nic", w)] <= 1e-12:
                blocked.add(f)
        open_flows -= blocked
    return rate


def fcfs_nic_rates(orders, cap):
    """FCFS server links under worker NICs: ``orders`` maps each server to its workers in
    arrival order.  Place by place (the first of every link, then the second, ...), the
    flows share what the earlier places left of their links and NICs, max-min."""
    rate, left = {}, defaultdict(lambda: 1.0)
    for place in range(max(len(ws) for ws in orders.values())):
        rate.update(maxmin_rates([(ws[place], s) for s, ws in orders.items()
                                  if place < len(ws)], cap, left))
    return rate


def reference(traces, counts, bandwidth, mode="async", sharing="ps", steps=3, seed=0, *,
              per_flow_cap=None, window=None, jitter=None, server_sharing="nic"):
    """Li et al. 2022, Algorithm 1 with docs/models.md's fixes.

    Returns ``({(w, k, op id): (start, end)}, step ends of shape (K, steps),
    ambiguous)``.  ``ambiguous`` is set when two ops were due to finish within
    rounding of each other without being exactly tied: which goes first then
    depends on how the rounding fell, which differs between this loop (it
    subtracts elapsed work from every op at every event) and the engine (it
    computes end times directly), so the two may legitimately part ways.
    """
    traces = [t for t, n in zip(traces, counts) if n > 0]     # worker types in use
    counts = [n for n in counts if n > 0]
    samples, factors, _, _ = draws(traces, counts, steps, seed, mode, jitter)
    K = sum(counts)
    kind = [i for i, n in enumerate(counts) for _ in range(n)]
    allreduce = mode == "allreduce"
    n_servers = max(t.n_servers for t in traces)
    cap = 1.0 if (per_flow_cap is None or allreduce) else min(1.0, per_flow_cap / bandwidth)
    win = np.inf if (window is None or allreduce) else window / bandwidth
    now = 0.0
    Q: list = []                                  # ops in progress, in the order they started
    scheduler = defaultdict(deque)                # ready ops per (worker, resource, server)
    running: dict = {}                            # the op in Q of each (worker, resource, server)
    active = defaultdict(list)                    # workers using each link, in arrival order
    completed = [0] * K
    left = [0] * K
    done = {}
    ends = np.zeros((K, steps))
    ambiguous = False

    def start_next(key):                          # Q.add(scheduler[w, r].remove_op())
        op = scheduler[key].popleft()
        running[key] = op
        if op.start is None:
            op.start = now
        if op.res in LINKS:
            op.remaining = win if (op.turns == 0 and op.work > win) else op.work
            if op.w not in active[(op.res, op.server)]:
                active[(op.res, op.server)].append(op.w)     # line 25
        else:
            op.remaining = op.work
        op.turns += 1
        Q.append(op)

    def make_ready(op):                           # lines 21-26 with FIX 1
        scheduler[op.key].append(op)
        if op.key not in running:                 # FIX 1: "using" = running or queued
            start_next(op.key)

    def start_random_step(w):
        k = completed[w]
        step = traces[kind[w]].steps[samples[w, k]]
        ops = {}
        for op in step.ops:
            if allreduce and op.res in ("downlink", "ps"):
                continue                          # Sec. 3.2.2: skipped (no server, no pull)
            if op.res in LINKS:
                work = op.bytes / bandwidth
                if allreduce:
                    work *= 2 * (K - 1) / K
            else:
                work = op.seconds * factors[w, k]
            ops[op.id] = ROp(w, k, op, work)
        by_id = {op.id: op for op in step.ops}

        def kept_deps(op_id):                     # dependencies through skipped ops
            out = []
            for d in by_id[op_id].deps:
                out.extend([d] if d in ops else kept_deps(d))
            return list(dict.fromkeys(out))

        for op_id, r in ops.items():
            for d in kept_deps(op_id):
                r.waiting_for.add(d)
                ops[d].dependent_ops.append(r)
        left[w] = len(ops)
        for r in ops.values():                    # each step starts with its ready ops
            if not r.waiting_for:
                make_ready(r)

    def share(x):                                 # Share(w, r, active)
        if x.res not in LINKS or allreduce:
            return 1.0
        users = active[(x.res, x.server)]
        if sharing == "fcfs" and server_sharing == "nic" and n_servers > 1:
            orders = {s: ws for (res, s), ws in active.items() if res == x.res and ws}
            return fcfs_nic_rates(orders, cap)[(x.w, x.server)]
        if sharing == "fcfs":
            return cap if users[0] == x.w else 0.0
        if server_sharing == "nic" and n_servers > 1:
            flows = [(w, s) for (res, s), ws in active.items() if res == x.res for w in ws]
            return maxmin_rates(flows, cap)[(x.w, x.server)]
        return min(1.0 / len(users), cap)

    for w in range(K):
        start_random_step(w)
    while Q:
        shares = [share(x) for x in Q]
        best, eta = None, np.inf                  # lines 10-11 (ties: first started)
        for x, s in zip(Q, shares):
            if s > 0 and x.remaining / s < eta:
                best, eta = x, x.remaining / s
        for x, s in zip(Q, shares):
            if s > 0 and x is not best and x.remaining / s != eta \
                    and abs(x.remaining / s - eta) <= 1e-9 * max(1.0, now):
                ambiguous = True
        now += eta
        for x, s in zip(Q, shares):               # lines 15-16
            x.remaining -= eta * s
        Q.remove(best)
        w, key = best.w, best.key
        del running[key]
        finished = True
        if best.res in LINKS:
            chunk = win if (best.turns == 1 and best.work > win) else best.work
            if chunk < best.work:      # Li et al. 2020: a stream waits for its second turn
                best.work -= chunk
                scheduler[key].append(best)
                finished = False
        if finished:
            left[w] -= 1
            done[(w, best.k, best.id)] = (best.start, now)
            for d in best.dependent_ops:          # lines 18-26
                d.waiting_for.remove(best.id)
                if not d.waiting_for:
                    make_ready(d)
        if key not in running:
            if scheduler[key]:                    # line 28
                start_next(key)
            elif best.res in LINKS:               # line 30
                active[(best.res, best.server)].remove(w)
        if left[w] == 0:                          # FIX 2: every op of the step has finished
            ends[w, completed[w]] = now
            completed[w] += 1
            if completed[w] < steps:
                if mode == "async":
                    start_random_step(w)
                elif all(c == completed[w] for c in completed):    # barrier (line 36)
                    for w2 in range(K):
                        start_random_step(w2)
    return done, ends, ambiguous


def engine_ops(result):
    """{(w, k, op id): (start, end)} of a recorded simulation."""
    ops = result.ops
    return {(int(w), int(k), result.labels[int(o)][1]): (float(a), float(b))
            for w, k, o, a, b in zip(ops["worker"], ops["step"], ops["op"], ops["start"],
                                     ops["end"])}


def assert_same(ref, res, rel=1e-9):
    done, ends, _ = ref
    got = engine_ops(res)
    assert got.keys() == done.keys()
    scale = max(1.0, float(ends.max()))
    for key, (start, end) in done.items():
        assert got[key][0] == pytest.approx(start, rel=rel, abs=rel * scale), key
        assert got[key][1] == pytest.approx(end, rel=rel, abs=rel * scale), key
    np.testing.assert_allclose(res.ends, ends, rtol=rel, atol=rel * scale)


# ---------------------------------------------------------------- random small traces

AMOUNT = st.one_of(st.just(0.0), st.floats(0.05, 2.0))


@st.composite
def steps_(draw, n_servers):
    n = draw(st.integers(1, 7))
    ops = []
    for i in range(n):
        res = draw(st.sampled_from(RESOURCES))
        deps = tuple(f"o{j}" for j in range(i) if draw(st.booleans()))
        server = draw(st.integers(0, n_servers - 1))
        amount = draw(AMOUNT)
        if res in LINKS:
            ops.append(Op(f"o{i}", res, bytes=amount, deps=deps, server=server))
        else:
            ops.append(Op(f"o{i}", res, seconds=amount, deps=deps, server=server))
    order = draw(st.permutations(range(n)))    # listing order is free (deps are by id)
    return Step(tuple(ops[i] for i in order))


@st.composite
def traces(draw, n_servers=1):
    return Trace(tuple(draw(steps_(n_servers)) for _ in range(draw(st.integers(1, 3)))))


CASES = dict(mode=st.sampled_from(["async", "sync", "allreduce"]),
             sharing=st.sampled_from(["ps", "fcfs"]), workers=st.integers(1, 4),
             steps=st.integers(1, 4), seed=st.integers(0, 2 ** 16))
SETTINGS = settings(max_examples=120, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def _run_both(trace, workers, mode, sharing, steps, seed, **kw):
    if mode == "allreduce" and all(all(op.res in ("downlink", "ps") for op in s.ops)
                                   for s in trace.steps):
        return None
    if mode == "allreduce" and any(all(op.res in ("downlink", "ps") for op in s.ops)
                                   for s in trace.steps):
        return None
    ref = reference([trace], [workers], 1.0, mode, sharing, steps, seed, **kw)
    assume(not ref[2])
    try:
        res = simulate(trace, workers, 1.0, mode, sharing, steps=steps, warmup=0, seed=seed,
                       record=True, engine="python", **kw)
    except SpecError as err:             # every sampled op takes no time
        assert "take no time" in str(err)
        assume(False)
    return ref, res


@SETTINGS
@given(trace=traces(), **CASES)
def test_engine_equals_reference(trace, workers, mode, sharing, steps, seed):
    out = _run_both(trace, workers, mode, sharing, steps, seed)
    if out is not None:
        assert_same(*out)


@SETTINGS
@given(trace=traces(), cap=st.one_of(st.none(), st.floats(0.2, 1.5)),
       window=st.one_of(st.none(), st.floats(0.1, 1.5)), jitter=st.sampled_from([None, 0.3]),
       **CASES)
def test_engine_equals_reference_with_options(trace, workers, mode, sharing, steps, seed, cap,
                                              window, jitter):
    out = _run_both(trace, workers, mode, sharing, steps, seed, per_flow_cap=cap, window=window,
                    jitter=jitter)
    if out is not None:
        assert_same(*out)


@SETTINGS
@given(trace=traces(n_servers=3), server_sharing=st.sampled_from(["nic", "independent"]),
       cap=st.one_of(st.none(), st.floats(0.2, 1.5)),
       window=st.one_of(st.none(), st.floats(0.1, 1.5)), **CASES)
def test_engine_equals_reference_several_servers(trace, workers, mode, sharing, steps, seed,
                                                 server_sharing, cap, window):
    out = _run_both(trace, workers, mode, sharing, steps, seed, server_sharing=server_sharing,
                    per_flow_cap=cap, window=window)
    if out is not None:
        assert_same(*out)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(a=traces(), b=traces(), counts=st.tuples(st.integers(0, 3), st.integers(1, 3)),
       mode=st.sampled_from(["async", "sync"]), sharing=st.sampled_from(["ps", "fcfs"]),
       seed=st.integers(0, 99))
def test_heterogeneous_workers_equal_reference(a, b, counts, mode, sharing, seed):
    ref = reference([a, b], list(counts), 1.0, mode, sharing, 3, seed)
    assume(not ref[2])
    try:
        res = simulate([a, b], list(counts), 1.0, mode, sharing, steps=3, warmup=0, seed=seed,
                       record=True, engine="python")
    except SpecError:
        assume(False)
    assert_same(ref, res)


@pytest.mark.skipif(not numba_available(), reason="numba is not installed")
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trace=traces(n_servers=2), window=st.one_of(st.none(), st.floats(0.1, 1.5)), **CASES)
def test_compiled_engine_equals_python_engine(trace, workers, mode, sharing, steps, seed, window):
    if mode == "allreduce" and any(all(op.res in ("downlink", "ps") for op in s.ops)
                                   for s in trace.steps):
        return
    kw = dict(mode=mode, sharing=sharing, steps=steps, warmup=0, seed=seed, window=window,
              record=True)
    try:
        a = simulate(trace, workers, 1.0, engine="python", **kw)
    except SpecError:
        assume(False)
    b = simulate(trace, workers, 1.0, engine="numba", **kw)
    np.testing.assert_array_equal(a.ends, b.ends)
    assert engine_ops(a) == engine_ops(b)
    assert a.events == b.events


def test_reference_reproduces_eq7_by_hand():
    # the transliteration itself against a hand value: K = 3, M/B = 1, T_C = 2, T_S = 0.5,
    # sync + PS: K M/B + T_C + K M/B + T_S = 3 + 2 + 3 + 0.5
    t = Trace.from_layers([1.0], [0.5], [1.5], 0.5, overlap=False)
    _, ends, _ = reference([t], [3], 1.0, "sync", "ps", 2)
    np.testing.assert_allclose(ends, [[8.5, 17.0]] * 3)
