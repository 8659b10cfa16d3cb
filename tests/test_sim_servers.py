"""Several parameter servers in the simulator: every tensor split evenly, or whole tensors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfmodel import Config, zoo
from perfmodel.coarse import SyncCoarse
from perfmodel.errors import SpecError
from perfmodel.floors import serial_floor
from perfmodel.sim import Trace, shard_servers, split_servers
from perfmodel.sim.model import BlockTrace, TraceSim
from perfmodel.specs import Cluster, Profile

PROFILE = zoo.profile("vgg16-pipedream").replace(t_update=0.11)
CLUSTER = zoo.cluster("aws-p3.2xlarge").replace(machines=40)


@given(servers=st.integers(1, 6), layers=st.integers(1, 5))
@settings(max_examples=30, deadline=None)
def test_shards_conserve_bytes_and_update_time(servers, layers):
    t = Trace.from_layers([1e6 * (i + 1) for i in range(layers)], [0.01] * layers,
                          [0.02] * layers, 0.05, overlap=True)
    s = shard_servers(t, servers)
    assert s.n_servers == servers
    for res in ("downlink", "uplink"):
        assert s.bytes(res) == pytest.approx(t.bytes(res), rel=1e-12)
    assert s.seconds("ps") == pytest.approx(t.seconds("ps"), rel=1e-12)
    assert s.seconds("worker") == t.seconds("worker")
    for server in range(servers):   # an even share on every server
        mine = sum(op.bytes for op in s.steps[0].ops if op.res == "uplink" and op.server == server)
        assert mine == pytest.approx(t.bytes("uplink") / servers, rel=1e-12)


@pytest.mark.parametrize("servers", [1, 2, 3, 4])
def test_profile_on_several_servers_is_eq7_with_servers(servers):
    # sequential phases, equal sharing: the simulator replays eq. 7 with M / P per server
    config = Config(n_replicas=8, n_ps=servers)
    sim = TraceSim(sharing="ps", steps=10, warmup=1).estimate(PROFILE, CLUSTER, config)
    closed = SyncCoarse("ps").estimate(PROFILE, CLUSTER, config)
    assert sim.step_time == pytest.approx(closed.step_time, rel=1e-9)


def test_whole_tensors_put_a_profile_on_one_server():
    config = Config(n_replicas=8, n_ps=4)
    tensor = TraceSim(sharing="ps", steps=10, warmup=1, server_split="tensor")
    one = TraceSim(sharing="ps", steps=10, warmup=1).estimate(PROFILE, CLUSTER,
                                                             config.replace(n_ps=1))
    assert tensor.estimate(PROFILE, CLUSTER, config).step_time == pytest.approx(one.step_time,
                                                                                rel=1e-9)


def test_block_trace_splits_every_block_over_the_servers():
    model = BlockTrace(TraceSim(sharing="ps", steps=10, warmup=1))
    times = [model.estimate(PROFILE, CLUSTER, Config(n_replicas=8, n_ps=p)).step_time
             for p in (1, 2, 3, 4)]
    assert times == sorted(times, reverse=True) and times[3] < 0.4 * times[0]


def test_bad_arguments():
    t = Trace.from_layers([1e6], [0.01], [0.02], 0.0)
    with pytest.raises(SpecError, match="n_servers"):
        shard_servers(t, 0)
    with pytest.raises(SpecError, match="already"):
        shard_servers(split_servers(Trace.from_layers([1e6, 1e6], [0.01] * 2, [0.02] * 2, 0.0),
                                    2), 2)
    with pytest.raises(SpecError, match="server_split"):
        TraceSim(server_split="round-robin")


# --------------------------------------------------------------------------
# The user's per-layer trace in the selection
# --------------------------------------------------------------------------

def test_trace_at_batch_and_coarse_profile():
    trace = zoo.pipedream_trace("resnet50", t_update=0.02)
    coarse = trace.coarse_profile()
    profile = zoo.profile("resnet50-pipedream")
    assert coarse.model_bytes == profile.model_bytes and coarse.batch_size == profile.batch_size
    assert coarse.t_forward == pytest.approx(profile.t_forward, rel=1e-12)
    assert coarse.t_backward == pytest.approx(profile.t_backward, rel=1e-12)
    assert coarse.t_update == pytest.approx(0.02, rel=1e-12)
    half = trace.at_batch(64)
    assert half.seconds("worker") == pytest.approx(trace.seconds("worker") / 2, rel=1e-12)
    assert half.bytes("uplink") == trace.bytes("uplink") and half.batch_size == 64


def test_profiled_trace_runs_the_trace_at_the_workload_batch_on_every_server():
    from perfmodel.sim.model import ProfiledTrace
    trace = zoo.pipedream_trace("resnet50", t_update=0.02)
    model = ProfiledTrace(TraceSim(sharing="ps", steps=10, warmup=1), trace)
    direct = TraceSim(sharing="ps", steps=10, warmup=1)
    config = Config(n_replicas=4, n_ps=2)
    small = trace.coarse_profile().at_batch(32)
    assert model.estimate(small, CLUSTER, config).step_time == pytest.approx(
        direct.estimate(shard_servers(trace.at_batch(32), 2), CLUSTER, config).step_time,
        rel=1e-12)
    with pytest.raises(SpecError, match="trace"):
        ProfiledTrace(direct, "resnet50")


def test_selection_on_a_trace_runs_the_simulator_on_it():
    from perfmodel.fit.level import Leveled
    from perfmodel.fit.selection import select_model
    from perfmodel.measurements import Measurement
    from perfmodel.sim.model import ProfiledTrace
    trace = zoo.pipedream_trace("resnet50", t_update=0.02)
    runs = [Measurement(1, 1, "10Gbps", 204.8), Measurement(2, 1, "10Gbps", 329.7)]
    sel = select_model(trace, CLUSTER, runs, simulate=True)
    sims = [c for c in sel.calibrated if c is not None and c.family == "simulation"]
    # sim-ps is fitted by its level on 1-2 workers: the trace-driven model is inside
    models = [c.model.model if isinstance(c.model, Leveled) else c.model for c in sims]
    assert sims and all(isinstance(m, ProfiledTrace) for m in models)
    assert all(m.trace is trace for m in models)
    assert any(isinstance(c.model, Leveled) for c in sims)


def test_worker_spread_is_zero_in_lock_step_and_grows_with_jitter():
    from perfmodel.sim.engine import simulate, worker_spread
    from perfmodel.sim.trace import from_layers

    trace = from_layers([1e6], [0.05], [0.05])
    locked = simulate(trace, 4, 1.25e8, mode="async", sharing="ps", steps=30, warmup=0,
                      jitter=0.0)
    np.testing.assert_allclose(worker_spread(locked.ends), 0.0, atol=1e-9)   # PS keeps gaps
    drifting = simulate(trace, 4, 1.25e8, mode="async", sharing="ps", steps=30, warmup=0,
                        jitter=0.3, seed=1)
    s = worker_spread(drifting.ends)
    assert s[-10:].mean() > s[:3].mean() and s[-10:].mean() > 0.2


@given(shift=st.floats(-100, 100), scale=st.floats(0.1, 10))
def test_worker_spread_ignores_when_and_in_which_unit(shift, scale):
    from perfmodel.sim.engine import worker_spread

    ends = np.array([[1.0, 2.0, 3.1, 4.0], [1.3, 2.2, 3.3, 4.6], [0.9, 2.1, 2.9, 4.1]])
    np.testing.assert_allclose(worker_spread(ends * scale + shift), worker_spread(ends),
                               rtol=1e-6, atol=1e-9)



#: 3 MB gradients over 1 MB/s NICs: a worker's own link needs 3 s each way.
SERIAL = Profile(model_bytes=3e6, t_forward=0.1, t_backward=0.2, batch_size=1)
SLOW = Cluster(machines=16, nic_bandwidth=1e6)


@pytest.mark.parametrize("sharing", ["ps", "fcfs", "hybrid"])
@pytest.mark.parametrize("workers, servers", [(1, 3), (2, 2)])
def test_a_worker_nic_carries_its_gradient_once_whatever_the_servers(sharing, workers,
                                                                     servers):
    # By hand: the worker's NIC (and each server's link) carries 3 MB each way, 3 s at
    # 1 MB/s, after 0.3 s of compute: 6.3 s a step.  Sending to the servers one after
    # another (FCFS) or together (PS) moves the same bytes through the same NIC.
    config = Config(n_replicas=workers, n_ps=servers)
    est = TraceSim(sharing=sharing, steps=6, warmup=1).estimate(SERIAL, SLOW, config)
    assert est.step_time == pytest.approx(6.3, rel=1e-9)
    # each server link on its own (a NIC per server) is what the option says: 3x faster
    own = TraceSim(sharing=sharing, steps=6, warmup=1, server_sharing="independent")
    if workers == 1:
        assert own.estimate(SERIAL, SLOW, config).step_time == pytest.approx(2.3, rel=1e-9)


@given(workers=st.integers(1, 6), servers=st.integers(2, 6),
       sharing=st.sampled_from(["ps", "fcfs", "hybrid"]), mode=st.sampled_from(["sync", "async"]),
       size=st.floats(1e5, 1e8), compute=st.floats(1e-3, 1.0))
@settings(max_examples=60, deadline=None)
def test_no_sharing_beats_the_serial_floor(workers, servers, sharing, mode, size, compute):
    profile = Profile(model_bytes=size, t_forward=compute / 3, t_backward=2 * compute / 3,
                      batch_size=1)
    config = Config(n_replicas=workers, n_ps=servers, mode=mode)
    sim = TraceSim(sharing=sharing, steps=30, warmup=10, jitter=0.0)
    est = sim.estimate(profile, CLUSTER, config)
    assert est.step_time >= serial_floor(profile, CLUSTER, config) * (1 - 1e-6)
    if workers == 1:    # one worker has its NIC to itself: the sharing cannot matter
        ps = TraceSim(sharing="ps", steps=30, warmup=10, jitter=0.0)
        assert est.step_time == pytest.approx(ps.estimate(profile, CLUSTER, config).step_time,
                                              rel=1e-9)
