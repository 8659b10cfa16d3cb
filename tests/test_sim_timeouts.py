"""Retransmission-timeout stalls in the simulator (``timeout_probability``, ``retransmit_timeout``).

A stalling transmission op frees its link when its bytes are delivered and
completes ``rto`` later (:mod:`perfmodel.sim.engine` module notes, "Timeouts").
Checked: q = 0 is the loss-free simulator bit for bit (and draws nothing),
hand-worked timelines with every message stalling and with chosen messages
stalling (through a monkeypatched :func:`~perfmodel.sim.engine.timeout_draws`),
a hypothesis property (q = 1 adds exactly 2 rto per step to a no-overlap
trace), the Monte Carlo mean of K = 1, the compiled engine against CPython,
``TraceSim`` reading the cluster fields, and input validation.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfmodel.errors import SpecError
from perfmodel.sim import Trace, TraceSim, simulate
from perfmodel.sim import engine as sim_engine
from perfmodel.sim import model as sim_model
from perfmodel.specs import Cluster, Config, Profile

# one layer, sequential phases (ops: down0, fwd0, bwd0, up0, upd0): at B = 1.25e9 B/s the
# pull and the push take M/B = 0.08 s alone, T_F + T_B = 0.3 s, the update 0.01 s; alone a
# step takes 0.47 s.
B = 1.25e9
ONE = Trace.from_layers([1e8], [0.1], [0.2], 0.01, overlap=False)
HALF = Trace.from_layers([5e7], [0.1], [0.2], 0.01, overlap=False)     # M/B = 0.04 s
RTO = 0.2
DOWN0 = 0                           # local index of down0 in ONE and HALF (for the draws)
# several profiled steps, overlap, two servers: exercises sampling, queues and the NIC rule
RICH = Trace.from_layers([3e7, 5e7, 2e7, 4e7], [[0.01, 0.02, 0.03, 0.01],
                                                [0.012, 0.02, 0.031, 0.02]],
                         [0.02, 0.03, 0.01, 0.02], 0.005, overlap=True, servers=[0, 1, 0, 1])


def _same(a, b):
    """Two SimResults identical bit for bit (arrays, paths, utilizations, events, records)."""
    np.testing.assert_array_equal(a.starts, b.starts)
    np.testing.assert_array_equal(a.ends, b.ends)
    assert dict(a.critical) == dict(b.critical)
    assert dict(a.utilization) == dict(b.utilization)
    assert a.events == b.events and a.throughput == b.throughput
    if a.ops is not None or b.ops is not None:
        assert set(a.ops) == set(b.ops)
        for k in a.ops:
            np.testing.assert_array_equal(a.ops[k], b.ops[k])


def _op_times(res, worker, step, op_id):
    """(start, end) of the op with id ``op_id`` in ``worker``'s step ``step`` (recorded run)."""
    ids = np.array([res.labels[int(o)][1] for o in res.ops["op"]])
    sel = (res.ops["worker"] == worker) & (res.ops["step"] == step) & (ids == op_id)
    assert sel.sum() == 1
    return float(res.ops["start"][sel][0]), float(res.ops["end"][sel][0])


def _keep_nothing(monkeypatch):
    """Runs under a hook are not the runs of their inputs: TraceSim keeps none of them."""
    monkeypatch.setattr(sim_model, "_kept_estimate",
                        lambda model, workload, cluster, config: model._estimate(
                            workload, cluster, config))


def _force(monkeypatch, pattern):
    """Replace the timeout draws by ``pattern(K, steps, M) -> bool array`` (a test hook)."""
    def fake(workers, steps, ops, seed, probability):
        out = np.zeros((workers, steps, ops), bool)
        pattern(out)
        return out
    monkeypatch.setattr(sim_engine, "timeout_draws", fake)
    _keep_nothing(monkeypatch)


# ---------------------------------------------------------------------- 1. q = 0 is loss-free

@pytest.mark.parametrize("mode,sharing,cpu,window", [
    ("async", "ps", "own", None), ("sync", "fcfs", "own", None), ("async", "hybrid", "fcfs", 2e7),
    ("sync", "ps", "fcfs", 1e7), ("allreduce", "ps", "own", None)])
def test_zero_probability_is_bit_identical_and_draws_nothing(monkeypatch, mode, sharing, cpu,
                                                             window):
    kw = dict(steps=12, warmup=2, seed=5, record=True, engine="python", server_cpu=cpu,
              window=window)
    plain = simulate(RICH, 3, B, mode, sharing, **kw)

    def boom(*args):
        raise AssertionError("q = 0 must not draw timeouts")
    monkeypatch.setattr(sim_engine, "timeout_draws", boom)
    zero = simulate(RICH, 3, B, mode, sharing, timeout_probability=0.0, retransmit_timeout=1.5,
                    **kw)
    _same(plain, zero)
    for r in [zero, *zero.runs]:
        assert r.meta["timeout_probability"] == 0.0 and r.meta["retransmit_timeout"] == 1.5
        assert r.meta["timeouts"] == "none"


def test_timeouts_leave_the_sampling_and_jitter_draws_alone():
    # the profiled step each worker runs at each step (read off the recorded ops) is the same
    # with and without timeouts: the timeout draws come from a stream of their own
    kw = dict(steps=15, warmup=0, seed=11, record=True, engine="python", jitter=0.1)
    plain = simulate(RICH, 3, B, "async", "ps", **kw)
    lossy = simulate(RICH, 3, B, "async", "ps", timeout_probability=0.4, **kw)

    def profiled(r):
        return {(int(w), int(k)): r.labels[int(o)][0]
                for w, k, o in zip(r.ops["worker"], r.ops["step"], r.ops["op"])}
    assert profiled(plain) == profiled(lossy)
    assert len(set(profiled(plain).values())) == 2           # both profiled steps were sampled
    assert lossy.step_time > plain.step_time


def test_allreduce_ignores_timeouts():
    kw = dict(steps=6, warmup=1, seed=2, engine="python")
    plain = simulate(RICH, 3, B, "allreduce", **kw)
    lossy = simulate(RICH, 3, B, "allreduce", timeout_probability=1.0, **kw)
    _same(plain, lossy)
    assert lossy.meta["timeouts"] == "ignored in all-reduce mode"


# ---------------------------------------------------------------------- 2. every message stalls

def test_one_worker_sync_every_message_stalls():
    # down0 0-0.08, stall to 0.28; fwd0 + bwd0 to 0.58; up0 to 0.66, stall to 0.86; upd0 0.87
    r = simulate(ONE, 1, B, "sync", "ps", steps=4, warmup=1, record=True, engine="python",
                 timeout_probability=1.0, retransmit_timeout=RTO)
    assert r.step_time == pytest.approx(0.08 + RTO + 0.3 + 0.08 + RTO + 0.01)      # 0.87
    np.testing.assert_allclose(r.ends[0], 0.87 * np.arange(1, 5), atol=1e-12)
    assert _op_times(r, 0, 2, "down0") == pytest.approx((1.74, 1.74 + 0.28))
    assert _op_times(r, 0, 2, "fwd0")[0] == pytest.approx(1.74 + 0.28)
    assert _op_times(r, 0, 2, "up0") == pytest.approx((1.74 + 0.58, 1.74 + 0.86))
    # the stall is charged to the message's link on the critical path ...
    assert r.critical["downlink"] == pytest.approx(0.28)
    assert r.critical["uplink"] == pytest.approx(0.28)
    assert r.critical["worker"] == pytest.approx(0.3)
    # ... but the link is busy only while it transmits
    assert r.utilization["downlink"] == pytest.approx(0.08 / 0.87)
    assert r.utilization["uplink"] == pytest.approx(0.08 / 0.87)
    assert r.meta["timeouts"] == "8 of 8 messages stalled"


def test_one_worker_async_every_message_stalls():
    r = simulate(ONE, 1, B, "async", "ps", steps=5, warmup=0, engine="python",
                 timeout_probability=1.0, retransmit_timeout=0.5)
    np.testing.assert_allclose(r.step_times, 0.47 + 2 * 0.5, atol=1e-12)


def test_two_workers_ps_sync_both_stall_together():
    # the pulls share the link, both done at 2 M/B = 0.16, both wait to 0.36; compute to
    # 0.66; pushes shared to 0.82, stalls to 1.02; updates 1.03
    r = simulate(ONE, 2, B, "sync", "ps", steps=4, warmup=1, record=True, engine="python",
                 timeout_probability=1.0, retransmit_timeout=RTO)
    assert r.step_time == pytest.approx(4 * 0.08 + 0.3 + 0.01 + 2 * RTO)           # 1.03
    for w in range(2):
        assert _op_times(r, w, 0, "down0") == pytest.approx((0.0, 0.36))
        assert _op_times(r, w, 0, "up0") == pytest.approx((0.66, 1.02))


def test_two_workers_fcfs_sync_second_sends_during_first_stall():
    # FCFS: worker 0 pulls 0-0.08 and stalls to 0.28 while worker 1 pulls 0.08-0.16 (stall to
    # 0.36).  Worker 0 computes 0.28-0.58, pushes 0.58-0.66, stalls to 0.86, updates to 0.87;
    # worker 1 computes 0.36-0.66, pushes 0.66-0.74 (the link freed at 0.66), stalls to
    # 0.94, updates to 0.95 = the barrier.  Loss-free: 0.55.
    r = simulate(ONE, 2, B, "sync", "fcfs", steps=3, warmup=0, record=True, engine="python",
                 timeout_probability=1.0, retransmit_timeout=RTO)
    np.testing.assert_allclose(r.ends[:, 0], [0.87, 0.95], atol=1e-12)
    assert _op_times(r, 1, 0, "down0") == pytest.approx((0.0, 0.36))    # queued at 0, sent later
    assert _op_times(r, 1, 0, "up0") == pytest.approx((0.66, 0.94))
    assert r.step_time == pytest.approx(0.95)
    plain = simulate(ONE, 2, B, "sync", "fcfs", steps=3, warmup=0, engine="python")
    assert plain.step_time == pytest.approx(0.55)


def test_window_chunks_stall_once_per_message():
    # WIN = half the tensor: each message is sent in two chunks but stalls once, after its
    # last chunk: still 0.47 + 2 rto
    r = simulate(ONE, 1, B, "sync", "ps", steps=3, warmup=0, engine="python", window=5e7,
                 timeout_probability=1.0, retransmit_timeout=RTO)
    assert r.step_time == pytest.approx(0.87)


@settings(max_examples=25, deadline=None)
@given(sizes=st.lists(st.floats(1e6, 2e8), min_size=1, max_size=4),
       seconds=st.floats(0.001, 0.2), workers=st.integers(1, 3),
       rto=st.floats(0.01, 1.0), mode=st.sampled_from(["sync", "async"]))
def test_every_message_stalling_adds_two_timeouts_per_step(sizes, seconds, workers, rto, mode):
    # no overlap: fwd0 waits for every pull and the updates for every push; the pulls (and
    # pushes) go back to back and the last one's stall ends last, so each phase ends exactly
    # rto later than loss-free (workers in lock-step under PS sharing)
    n = len(sizes)
    t = Trace.from_layers(sizes, [seconds] * n, [2 * seconds] * n, 0.01, overlap=False)
    kw = dict(steps=4, warmup=1, engine="python", jitter=0.0)
    plain = simulate(t, workers, B, mode, "ps", **kw)
    lossy = simulate(t, workers, B, mode, "ps", timeout_probability=1.0,
                     retransmit_timeout=rto, **kw)
    assert lossy.step_time == pytest.approx(plain.step_time + 2 * rto, rel=1e-9)
    assert lossy.critical["worker"] == pytest.approx(plain.critical["worker"], rel=1e-9)


# ---------------------------------------------------------------------- 3. chosen stalls: hiding

def test_stalled_pull_lets_the_other_push_alone(monkeypatch):
    # only worker 0's pull stalls (every step).  Pulls shared to 0.16; worker 1 computes
    # 0.16-0.46 and pushes alone 0.46-0.54 (worker 0 is still stalled/computing), updates to
    # 0.55; worker 0 waits to 0.36, computes to 0.66, pushes alone to 0.74, updates to 0.75.
    # Step 0.16 + rto + 0.3 + 0.08 + 0.01 = 0.75: of the rto, the push phase hides M/B.
    def pattern(a):
        a[0, :, DOWN0] = True
    _force(monkeypatch, pattern)
    r = simulate(ONE, 2, B, "sync", "ps", steps=3, warmup=0, record=True, engine="python",
                 timeout_probability=0.5, retransmit_timeout=RTO)
    np.testing.assert_allclose(r.ends[:, 0], [0.75, 0.55], atol=1e-12)
    assert r.step_time == pytest.approx(0.75)
    assert _op_times(r, 1, 0, "up0") == pytest.approx((0.46, 0.54))
    assert _op_times(r, 0, 0, "down0") == pytest.approx((0.0, 0.36))
    assert r.meta["timeouts"] == "3 of 12 messages stalled"


def test_stalled_flow_gives_the_link_to_the_other_at_once(monkeypatch):
    # worker 0 pulls 5e7 B (0.04 s alone), worker 1 1e8 B (0.08 s).  Shared, worker 0's bytes
    # are delivered at 0.08; it stalls to 0.28 while worker 1 gets the whole link and ends
    # at 0.08 + 0.04 = 0.12 -- as loss-free (holding its share it would end at 0.16).
    def pattern(a):
        a[0, :, DOWN0] = True
    _force(monkeypatch, pattern)
    kw = dict(steps=2, warmup=0, record=True, engine="python")
    r = simulate([HALF, ONE], [1, 1], B, "sync", "ps", timeout_probability=0.5,
                 retransmit_timeout=RTO, **kw)
    plain = simulate([HALF, ONE], [1, 1], B, "sync", "ps", **kw)
    assert _op_times(r, 0, 0, "down0") == pytest.approx((0.0, 0.28))
    assert _op_times(r, 1, 0, "down0") == pytest.approx((0.0, 0.12))
    assert _op_times(plain, 1, 0, "down0") == pytest.approx((0.0, 0.12))
    # worker 1: compute 0.12-0.42, push alone to 0.50, update 0.51; worker 0: compute
    # 0.28-0.58, push alone (0.04) to 0.62, update to 0.63 = the barrier
    np.testing.assert_allclose(r.ends[:, 0], [0.63, 0.51], atol=1e-12)


def test_stalled_message_frees_the_workers_next_transmission(monkeypatch):
    # two layers, no overlap: down0 (0.08 s) then down1 (0.04 s) on the same link.  down0
    # stalls: down1 is sent 0.08-0.12 during the stall, fwd0 starts when down0 completes
    # at 0.28 (not 0.08 + 0.2 + 0.04)
    two = Trace.from_layers([1e8, 5e7], [0.1, 0.1], [0.2, 0.2], 0.01, overlap=False)

    def pattern(a):
        a[:, :, 0] = True                # down0 of every step
    _force(monkeypatch, pattern)
    r = simulate(two, 1, B, "sync", "ps", steps=2, warmup=0, record=True, engine="python",
                 timeout_probability=0.5, retransmit_timeout=RTO)
    assert _op_times(r, 0, 0, "down0") == pytest.approx((0.0, 0.28))
    assert _op_times(r, 0, 0, "down1") == pytest.approx((0.08, 0.12))
    assert _op_times(r, 0, 0, "fwd0")[0] == pytest.approx(0.28)
    plain = simulate(two, 1, B, "sync", "ps", steps=2, warmup=0, engine="python")
    assert r.step_time == pytest.approx(plain.step_time + RTO - 0.04)


# ---------------------------------------------------------------------- 4. Monte Carlo

@pytest.mark.parametrize("q", [0.1, 0.3])
def test_monte_carlo_mean_step_is_loss_free_plus_two_q_rto(q):
    # K = 1: the step's two messages each add rto with probability q, independently:
    # step = 0.47 + rto Bin(2, q), mean 0.47 + 2 q rto, sd rto sqrt(2 q (1 - q))
    n = 4000
    r = simulate(ONE, 1, B, "async", "ps", steps=n, warmup=0, seed=3, engine="python",
                 timeout_probability=q, retransmit_timeout=RTO)
    times = r.step_times.ravel()
    stalls = np.round((times - 0.47) / RTO)
    np.testing.assert_allclose(times, 0.47 + RTO * stalls, atol=1e-9)
    assert set(np.unique(stalls)) <= {0.0, 1.0, 2.0}
    se = RTO * math.sqrt(2 * q * (1 - q) / n)
    assert abs(times.mean() - (0.47 + 2 * q * RTO)) < 4 * se
    assert times.std() == pytest.approx(RTO * math.sqrt(2 * q * (1 - q)), rel=0.1)


# ---------------------------------------------------------------------- 5. engines agree

@pytest.mark.parametrize("mode,sharing,cpu,window,workers", [
    ("async", "ps", "own", None, 4), ("sync", "ps", "fcfs", 2e7, 3),
    ("async", "fcfs", "fcfs", None, 3), ("sync", "hybrid", "own", 1e7, 2)])
def test_compiled_engine_matches_python_with_timeouts(mode, sharing, cpu, window, workers):
    pytest.importorskip("numba")
    kw = dict(steps=25, warmup=3, seed=9, record=True, server_cpu=cpu, window=window,
              timeout_probability=0.35, retransmit_timeout=0.05)
    py = simulate(RICH, workers, B, mode, sharing, engine="python", **kw)
    nb = simulate(RICH, workers, B, mode, sharing, engine="numba", **kw)
    _same(py, nb)
    for a, b in zip(py.runs, nb.runs):
        _same(a, b)
    assert py.meta["timeouts"] != "none"
    if mode == "sync":
        # (async: stalls can desynchronize lock-stepped workers and *raise* the throughput)
        plain = simulate(RICH, workers, B, mode, sharing, engine="python",
                         **dict(kw, timeout_probability=0.0))
        assert py.step_time > plain.step_time


# ---------------------------------------------------------------------- TraceSim

def test_tracesim_reads_the_cluster_fields():
    # Li et al. 2022, eq. 7 for K = 4 (0.95 s) plus the pull's and the push's stall
    profile = Profile(model_bytes=100e6, t_forward=0.1, t_backward=0.2, t_update=0.01,
                      batch_size=32)
    cluster = Cluster(machines=8, nic_bandwidth="10Gbps", timeout_probability=1.0,
                      retransmit_timeout=0.1)
    est = TraceSim(sharing="ps", steps=6, warmup=1, engine="python").estimate(
        profile, cluster, Config(n_replicas=4, n_ps=1, mode="sync"))
    assert est.step_time == pytest.approx(0.95 + 2 * 0.1)
    assert est.meta["timeout_probability"] == 1.0 and est.meta["retransmit_timeout"] == 0.1
    assert est.phases["downlink"] == pytest.approx(4 * 0.08 + 0.1)     # K shared pulls + rto


def test_tracesim_replications_draw_their_own_stalls():
    # one worker, one profiled step, sync, no jitter: loss-free every replication is the same
    # (zero-width interval); with timeouts each replication's own draws spread them
    profile = Profile(model_bytes=100e6, t_forward=0.1, t_backward=0.2, t_update=0.01,
                      batch_size=32)
    model = TraceSim(sharing="ps", steps=20, warmup=0, engine="python", replications=4)
    config = Config(n_replicas=1, n_ps=1, mode="sync")
    plain = model.estimate(profile, Cluster(machines=8, nic_bandwidth="10Gbps"), config)
    assert len(set(plain.meta["replication_throughputs"])) == 1
    lossy = model.estimate(profile, Cluster(machines=8, nic_bandwidth="10Gbps",
                                            timeout_probability=0.3), config)
    assert len(set(lossy.meta["replication_throughputs"])) > 1
    assert len(lossy.meta["timeouts"]) == 4
    assert lossy.step_time > plain.step_time


# ---------------------------------------------------------------------- 6. validation

@pytest.mark.parametrize("value", [-0.1, 1.5, math.nan, math.inf, "0.1", True, None])
def test_bad_timeout_probability(value):
    with pytest.raises(SpecError) as err:
        simulate(ONE, 1, B, steps=2, warmup=0, timeout_probability=value)
    assert err.value.field == "timeout_probability"


@pytest.mark.parametrize("value", [0.0, -1.0, math.nan, math.inf, "0.2", False, None])
def test_bad_retransmit_timeout(value):
    with pytest.raises(SpecError) as err:
        simulate(ONE, 1, B, steps=2, warmup=0, retransmit_timeout=value)
    assert err.value.field == "retransmit_timeout"


# ---------------------------------------------------------------------- 7. timeout_position

UP0 = 3                             # local index of up0 in ONE (for the draws)


def _force_points(monkeypatch, u):
    """Replace the stall points of ``timeout_position="uniform"`` by the constant ``u``."""
    def fake(workers, steps, ops, seed):
        return np.full((workers, steps, ops), float(u))
    monkeypatch.setattr(sim_engine, "timeout_points", fake)
    _keep_nothing(monkeypatch)


@pytest.mark.parametrize("mode,sharing,cpu,window,q", [
    ("async", "ps", "own", None, 0.3), ("sync", "hybrid", "fcfs", 2e7, 0.5),
    ("sync", "fcfs", "own", None, 0.0), ("allreduce", "ps", "own", None, 0.4)])
def test_tail_position_is_the_default_bit_for_bit(monkeypatch, mode, sharing, cpu, window, q):
    kw = dict(steps=15, warmup=2, seed=7, record=True, engine="python", server_cpu=cpu,
              window=window, timeout_probability=q, retransmit_timeout=0.05)
    default = simulate(RICH, 3, B, mode, sharing, **kw)

    def boom(*args):
        raise AssertionError("'tail' must not draw stall points")
    monkeypatch.setattr(sim_engine, "timeout_points", boom)
    tail = simulate(RICH, 3, B, mode, sharing, timeout_position="tail", **kw)
    _same(default, tail)
    for a, b in zip(default.runs, tail.runs):
        _same(a, b)
    assert default.meta["timeout_position"] == tail.meta["timeout_position"] == "tail"


@pytest.mark.parametrize("u", [0.25, 0.5, 0.9])
def test_uniform_one_worker_alone_adds_two_timeouts(monkeypatch, u):
    # K = 1, q = 1: nothing else is on the link, so a stall at any point of the message
    # delays it by exactly rto.  down0: 0.08 u of work to 0.08 u, stalled to 0.08 u + 0.2,
    # the rest (0.08 (1 - u)) to 0.28; fwd0 + bwd0 to 0.58; up0 likewise to 0.86; upd0 0.87.
    _force_points(monkeypatch, u)
    r = simulate(ONE, 1, B, "sync", "ps", steps=3, warmup=0, record=True, engine="python",
                 timeout_probability=1.0, retransmit_timeout=RTO, timeout_position="uniform")
    plain = simulate(ONE, 1, B, "sync", "ps", steps=3, warmup=0, engine="python")
    assert r.step_time == pytest.approx(plain.step_time + 2 * RTO, rel=1e-12)      # 0.87
    for k in range(3):
        t0 = 0.87 * k
        assert _op_times(r, 0, k, "down0") == pytest.approx((t0, t0 + 0.08 + RTO))
        assert _op_times(r, 0, k, "up0") == pytest.approx((t0 + 0.58, t0 + 0.58 + 0.08 + RTO))
    # the stall counts with its link on the critical path; the links carry the same bytes
    assert r.critical["downlink"] == pytest.approx(0.28)
    assert r.critical["uplink"] == pytest.approx(0.28)
    assert r.utilization["uplink"] == pytest.approx(0.08 / 0.87)
    assert r.meta["timeout_position"] == "uniform"
    assert r.meta["timeouts"] == "6 of 6 messages stalled"


def _one_push_stalls(monkeypatch, u):
    """Worker 0's push stalls at ``u`` in every step; no other message stalls."""
    def pattern(a):
        a[0, :, UP0] = True
    _force(monkeypatch, pattern)
    _force_points(monkeypatch, u)


@pytest.mark.parametrize("u,delay", [(0.5, 0.08), (0.9, 0.176), (0.1, 0.0), (0.0, 0.0)])
def test_uniform_stall_is_hidden_by_the_other_pushes(monkeypatch, u, delay):
    # K = 4 sync PS, size/B = 0.08 s, rto = 0.2.  The four pushes start together; worker 0's
    # stops at 4 u 0.08 s (its u of the bytes sent at a quarter share), the other three send
    # their (1 - u) 0.08 s each in 3 (1 - u) 0.08 s more, then worker 0 sends its rest alone
    # from 4 u 0.08 + rto: the phase ends max(0, rto - 3 (1 - u) 0.08) after 4 x 0.08
    # (the link is never idle when rto <= 3 (1 - u) 0.08: no delay).  Hand values:
    # u = 0.5: 0.2 - 0.12 = 0.08; u = 0.9: 0.2 - 0.024 = 0.176.
    K = 4
    assert delay == pytest.approx(max(0.0, RTO - (K - 1) * (1 - u) * 0.08), abs=1e-15)
    _one_push_stalls(monkeypatch, u)
    kw = dict(steps=3, warmup=1, record=True, engine="python")
    r = simulate(ONE, K, B, "sync", "ps", timeout_probability=0.5, retransmit_timeout=RTO,
                 timeout_position="uniform", **kw)
    plain = simulate(ONE, K, B, "sync", "ps", **kw)
    assert plain.step_time == pytest.approx(8 * 0.08 + 0.31)      # Li et al. 2022, eq. 7
    assert r.step_time - plain.step_time == pytest.approx(delay, abs=1e-12)
    # the phase itself: the last push's end, and the others' pushes
    push_start = 4 * 0.08 + 0.3
    ends = [_op_times(r, w, 0, "up0")[1] for w in range(K)]
    assert max(ends) == pytest.approx(push_start + 4 * 0.08 + delay, abs=1e-12)
    if delay > 0:
        for w in range(1, K):       # the others finish at 4 u 0.08 + 3 (1 - u) 0.08
            assert ends[w] == pytest.approx(push_start + (4 * u + 3 * (1 - u)) * 0.08)


def test_uniform_stall_mean_exposure_matches_the_closed_form(monkeypatch):
    # the mean over a midpoint grid of u of the phase's delay against
    # perfmodel.coarse.timeout_stall (q = 1, one message, a = (K - 1) size/B)
    from perfmodel.coarse import timeout_stall

    K, n = 4, 200
    kw = dict(steps=2, warmup=1, engine="python")
    plain = simulate(ONE, K, B, "sync", "ps", **kw).step_time
    delays = []
    for u in (np.arange(n) + 0.5) / n:
        _one_push_stalls(monkeypatch, u)
        r = simulate(ONE, K, B, "sync", "ps", timeout_probability=0.5, retransmit_timeout=RTO,
                     timeout_position="uniform", **kw)
        delays.append(r.step_time - plain)
    expected = float(timeout_stall(1.0, RTO, 1, (K - 1) * 0.08))
    assert expected == pytest.approx(RTO ** 2 / (2 * 0.24))           # a > r branch
    assert np.mean(delays) == pytest.approx(expected, rel=1e-3)
    # and the a <= r branch: a longer timeout, never fully hidden
    delays = []
    for u in (np.arange(n) + 0.5) / n:
        _one_push_stalls(monkeypatch, u)
        r = simulate(ONE, K, B, "sync", "ps", timeout_probability=0.5, retransmit_timeout=0.5,
                     timeout_position="uniform", **kw)
        delays.append(r.step_time - plain)
    assert np.mean(delays) == pytest.approx(float(timeout_stall(1.0, 0.5, 1, 0.24)), rel=1e-3)
    assert np.mean(delays) == pytest.approx(0.5 - 0.24 / 2, rel=1e-3)


def test_uniform_stall_rejoins_fcfs_at_the_back(monkeypatch):
    # FCFS, K = 2, only worker 0's pull stalls at u = 0.5: worker 0 sends 0.04 s (0-0.04),
    # leaves; worker 1 gets the link and sends 0.04-0.12; worker 0 rejoins at 0.24 (the
    # link is free) and ends at 0.28.  With rto = 0.05 it rejoins at 0.09 behind worker 1,
    # which keeps the link to 0.12; worker 0 then ends at 0.16.
    def pattern(a):
        a[0, :, DOWN0] = True
    _force(monkeypatch, pattern)
    _force_points(monkeypatch, 0.5)
    kw = dict(steps=2, warmup=0, record=True, engine="python", timeout_probability=0.5,
              timeout_position="uniform")
    r = simulate(ONE, 2, B, "sync", "fcfs", retransmit_timeout=RTO, **kw)
    assert _op_times(r, 0, 0, "down0") == pytest.approx((0.0, 0.28))
    assert _op_times(r, 1, 0, "down0") == pytest.approx((0.0, 0.12))
    r = simulate(ONE, 2, B, "sync", "fcfs", retransmit_timeout=0.05, **kw)
    assert _op_times(r, 0, 0, "down0") == pytest.approx((0.0, 0.16))
    assert _op_times(r, 1, 0, "down0") == pytest.approx((0.0, 0.12))


@pytest.mark.parametrize("u", [0.25, 0.75])
def test_uniform_stall_with_the_window(monkeypatch, u):
    # WIN = half the tensor (0.04 s of work): the stall point applies to the whole message,
    # whichever chunk it falls in; alone (K = 1) the step is still 0.47 + 2 rto.
    _force_points(monkeypatch, u)
    r = simulate(ONE, 1, B, "sync", "ps", steps=3, warmup=0, record=True, engine="python",
                 window=5e7, timeout_probability=1.0, retransmit_timeout=RTO,
                 timeout_position="uniform")
    assert r.step_time == pytest.approx(0.87)
    assert _op_times(r, 0, 1, "down0") == pytest.approx((0.87, 0.87 + 0.28))


def test_uniform_position_lowers_the_sync_ps_step_time():
    # K = 4 sync PS: a tail stall is never hidden (all flows end together), a stall at a
    # random point partly is (by the other workers' bytes)
    kw = dict(steps=60, warmup=2, seed=1, engine="python", timeout_probability=0.3,
              retransmit_timeout=RTO)
    tail = simulate(ONE, 4, B, "sync", "ps", **kw)
    uniform = simulate(ONE, 4, B, "sync", "ps", timeout_position="uniform", **kw)
    plain = simulate(ONE, 4, B, "sync", "ps", steps=60, warmup=2, engine="python")
    assert plain.step_time < uniform.step_time < tail.step_time
    assert uniform.meta["timeouts"] == tail.meta["timeouts"]         # the same messages stall


@pytest.mark.parametrize("mode,sharing,cpu,window,workers", [
    ("sync", "ps", "own", None, 4), ("async", "ps", "own", None, 3),
    ("sync", "fcfs", "own", None, 3), ("async", "fcfs", "fcfs", 2e7, 3),
    ("sync", "ps", "fcfs", 1e7, 2), ("async", "hybrid", "own", None, 2)])
def test_compiled_engine_matches_python_with_uniform_stalls(mode, sharing, cpu, window,
                                                            workers):
    pytest.importorskip("numba")
    kw = dict(steps=25, warmup=3, seed=13, record=True, server_cpu=cpu, window=window,
              timeout_probability=0.3, retransmit_timeout=0.05, timeout_position="uniform")
    py = simulate(RICH, workers, B, mode, sharing, engine="python", **kw)
    nb = simulate(RICH, workers, B, mode, sharing, engine="numba", **kw)
    _same(py, nb)
    for a, b in zip(py.runs, nb.runs):
        _same(a, b)
    assert py.meta["timeouts"] != "none" and nb.meta["timeout_position"] == "uniform"
    tail = simulate(RICH, workers, B, mode, sharing, engine="python",
                    **dict(kw, timeout_position="tail"))
    assert not np.array_equal(tail.ends, py.ends)                      # the option acts


def test_tracesim_passes_the_timeout_position(monkeypatch):
    # K = 4 sync PS (M/B = 0.08 s), q = 1, every message stalls at u = 0.5: each phase's
    # four stalls overlap; all flows leave at 4 x 0.04, the link idles until they rejoin
    # at 0.16 + rto and the rests take 4 x 0.04 more: each phase is 0.32 + rto, as at the
    # tail (eq. 7's 0.95 + 2 rto).
    _force_points(monkeypatch, 0.5)
    profile = Profile(model_bytes=100e6, t_forward=0.1, t_backward=0.2, t_update=0.01,
                      batch_size=32)
    cluster = Cluster(machines=8, nic_bandwidth="10Gbps", timeout_probability=1.0,
                      retransmit_timeout=0.1)
    config = Config(n_replicas=4, n_ps=1, mode="sync")
    model = TraceSim(sharing="ps", steps=4, warmup=1, engine="python",
                     timeout_position="uniform")
    est = model.estimate(profile, cluster, config)
    assert est.step_time == pytest.approx(0.95 + 2 * 0.1)
    assert est.meta["timeout_position"] == "uniform"

    def pattern(a):
        a[0, :, DOWN0] = True
    # Only worker 0's pull stalls (u = 0.5, rto = 0.1): all four pull at 1/4 to 0.16;
    # workers 1-3 then pull at 1/3 to 0.26 (0.04 - 0.1/3 s of work left each); worker 0
    # rejoins, the four share the link and workers 1-3 finish at 0.26 + 4 (0.04 - 0.1/3).
    # The link never idled (rto < 3 x 0.04), so worker 0 finishes at 0.32, and it computes
    # to 0.62 while workers 1-3 compute to e + 0.3 and start pushing: from then on the link
    # is never idle again and carries 4 x 0.08 of pushes; update 0.01.
    _force(monkeypatch, pattern)
    est = model.estimate(profile, cluster, config)
    e = 0.26 + 4 * (0.04 - 0.1 / 3)
    assert est.step_time == pytest.approx(e + 0.3 + 4 * 0.08 + 0.01)         # 0.9167 < 0.95
    default = TraceSim(sharing="ps", steps=4, warmup=1, engine="python")
    assert default.timeout_position == "tail"
    assert default.estimate(profile, cluster, config).meta["timeout_position"] == "tail"


@pytest.mark.parametrize("value", ["middle", "Tail", "", None, 0.5, True])
def test_bad_timeout_position(value):
    with pytest.raises(SpecError) as err:
        simulate(ONE, 1, B, steps=2, warmup=0, timeout_position=value)
    assert err.value.field == "timeout_position"
    with pytest.raises(SpecError) as err:
        TraceSim(timeout_position=value)
    assert err.value.field == "timeout_position"
