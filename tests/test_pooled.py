"""Pooling the sync candidates the runs cannot tell apart (``Calibrated.pooled``,
``select_model(pool=True)``)."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfmodel import zoo
from perfmodel.coarse import SyncCoarse
from perfmodel.fit.selection import Calibrated, Score, pooled_with, select_model
from perfmodel.measurements import Measurement
from perfmodel.specs import Cluster, Config, Profile

PROFILE = Profile(model_bytes=100e6, t_forward=0.1, t_backward=0.2, t_update=0.01,
                  batch_size=32)
CLUSTER = Cluster(machines=8, nic_bandwidth="10Gbps")


def eq7(name, efficiency, residuals=(0.01, -0.01)):
    return Calibrated(name, "closed form", SyncCoarse("ps"), {"link_efficiency": efficiency},
                      residuals)


def test_the_pooled_estimate_is_the_geometric_mean_by_hand():
    # eq. 7 at 4 workers, 100 MB over 10 Gbps (0.08 s a transfer): 0.3 s compute, 0.01 s
    # update and 2 x 4 x 0.08 s of transfers = 0.95 s; at half the link's efficiency the
    # transfers take 1.28 s, 1.59 s a step.  Pooled: sqrt(0.95 x 1.59) = 1.229024 s.
    fast, slow = eq7("a", 1.0), eq7("b", 0.5)
    cal = Calibrated("a", "closed form", SyncCoarse("ps"), {"link_efficiency": 1.0},
                     (0.01, -0.01), pooled=(slow,))
    config = Config(n_replicas=4)
    est = cal.estimate(PROFILE, CLUSTER, config)
    assert est.step_time == pytest.approx(math.sqrt(0.95 * 1.59), rel=1e-9)
    assert est.throughput == pytest.approx(4 * 32 / math.sqrt(0.95 * 1.59), rel=1e-9)
    assert est.meta["pooled"] == pytest.approx({"a": 128 / 0.95, "b": 128 / 1.59})
    # every phase scales alike, and the interval still reaches the chosen one's own answer
    own = fast.estimate(PROFILE, CLUSTER, config)
    assert sum(est.phases.values()) / sum(own.phases.values()) == pytest.approx(
        est.step_time / own.step_time)
    assert est.throughput_interval[1] == pytest.approx(128 / 0.95)   # the links' cap
    assert est.throughput_interval[0] < est.throughput


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(0.3, 1.0), min_size=1, max_size=3), st.integers(1, 16))
def test_the_pooled_answer_lies_between_its_members(efficiencies, workers):
    members = tuple(eq7(f"m{i}", e) for i, e in enumerate(efficiencies))
    cal = Calibrated("own", "closed form", SyncCoarse("ps"), {"link_efficiency": 0.7},
                     (0.01, -0.01), pooled=members)
    config = Config(n_replicas=workers)
    each = [m.estimate(PROFILE, CLUSTER, config).throughput for m in (eq7("own", 0.7),
                                                                      *members)]
    got = cal.estimate(PROFILE, CLUSTER, config)
    assert min(each) * (1 - 1e-12) <= got.throughput <= max(each) * (1 + 1e-12)
    assert got.throughput_interval[0] <= min(got.throughput, each[0])
    assert got.throughput_interval[1] >= max(got.throughput, each[0])


def test_pooled_with_keeps_the_equals_of_the_choice():
    scores = [Score("sync-ps", "closed form", True, "ok", 0.010, prior=True),
              Score("sim-ps", "simulation", True, "ok", 0.015, prior=True),
              Score("sync-fcfs", "closed form", True, "ok", 0.012, prior=False),
              Score("gst", "closed form", False, "outside", 0.011, prior=True),
              Score("sim-exact", "simulation", True, "ok", 0.011, exact=True, prior=True)]
    assert pooled_with(scores, 0, [1, 2, 3, 4]) == [1]     # same prior, valid, not exact
    assert pooled_with(scores, 4, [0, 1]) == []             # an exact choice answers alone
    assert pooled_with(scores, 2, [0, 1]) == []             # the prior's models are not its


@pytest.fixture(scope="module")
def jittery():
    return (zoo.profile("resnet50-pipedream").replace(t_update=0.02, model_bytes=10e6),
            zoo.cluster("aws-p3.2xlarge").replace(machines=32, compute_cv=0.05))


def test_select_model_pools_a_sync_tie_and_not_an_async_job(jittery):
    # Runs of eq. 7 at 1 and 2 workers: eq. 7 and the simulator, each fitted by its level,
    # both reproduce them; with compute jitter the simulator's 16 workers part from eq. 7.
    profile, cluster = jittery
    ms = [Measurement(k, 1, cluster.nic_bandwidth, SyncCoarse("ps").estimate(
        profile, cluster, Config(n_replicas=k)).throughput) for k in (1, 2)]
    sel = select_model(profile, cluster, ms, simulate=True, pool=True)
    assert [p.name for p in sel.chosen.pooled] == [a.name for a in sel.chosen.alternatives]
    assert sel.chosen.pooled and "geometric mean" in sel.chosen.why
    assert sel.to_dict()["pooled"] == ["sim-ps"]
    config = Config(n_replicas=16)
    each = [c.own_estimate(profile, cluster, config).throughput
            for c in (sel.chosen, *sel.chosen.pooled)]
    assert max(each) / min(each) > 1.02                     # they part at 16 workers
    got = sel.chosen.estimate(profile, cluster, config).throughput
    assert got == pytest.approx(math.exp(sum(map(math.log, each)) / len(each)), rel=1e-9)
    alone = select_model(profile, cluster, ms, simulate=True)   # the default: no pooling
    assert alone.chosen.pooled == () and "geometric mean" not in alone.chosen.why
    assert alone.chosen.estimate(profile, cluster, config).throughput == pytest.approx(
        each[0], rel=1e-9)
    runs = [Measurement(k, 1, cluster.nic_bandwidth, 100.0 * k, mode="async") for k in (1, 2)]
    assert select_model(profile, cluster, runs, simulate=True, pool=True).chosen.pooled == ()
