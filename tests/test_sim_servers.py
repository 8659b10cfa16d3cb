"""Several parameter servers in the simulator: every tensor split evenly, or whole tensors."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfmodel import Config, zoo
from perfmodel.coarse import SyncCoarse
from perfmodel.errors import SpecError
from perfmodel.sim import Trace, shard_servers, split_servers
from perfmodel.sim.model import BlockTrace, TraceSim

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
