"""Convoys beyond the saturation population: ``AsyncMVA(convoys=True)``, and convoys spread
by the server's updates: ``AsyncMVA(convoys="spacing")``, checked by hand."""

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfmodel import zoo
from perfmodel.cli import main
from perfmodel.errors import SpecError
from perfmodel.fit.selection import default_candidates, select_model
from perfmodel.measurements import Measurement
from perfmodel.queueing import AsyncMVA, async_throughput, convoy_groups, saturation_workers, update_spread
from perfmodel.specs import Cluster, Config, Profile

PROFILE = Profile(model_bytes=100e6, t_forward=0.1, t_backward=0.2, t_update=0.01,
                  batch_size=32)
CLUSTER = Cluster(machines=64, nic_bandwidth="10Gbps")   # 1.25e9 B/s: M / B = 0.08 s


def test_saturation_by_hand():
    # Z = 0.3, D = 2 * 0.08 + 0.01 = 0.17, D_max = 0.08: N* = 0.47 / 0.08
    assert saturation_workers(100e6, 1.25e9, 0.1, 0.2, 0.01) == pytest.approx(5.875)
    # two servers halve D_max, not D
    assert saturation_workers(100e6, 1.25e9, 0.1, 0.2, 0.01, n_ps=2) == pytest.approx(11.75)
    # the update dominates: D_max = 0.5, D = 0.16 + 0.5
    assert saturation_workers(100e6, 1.25e9, 0.1, 0.2, 0.5) == pytest.approx(0.96 / 0.5)
    # a stall is delay, not demand
    assert saturation_workers(100e6, 1.25e9, 0.1, 0.2, 0.01, t_stall=0.08) == \
        pytest.approx(6.875)
    assert math.isinf(saturation_workers(0.0, 1.25e9, 0.1, 0.2, 0.0))


def test_groups_by_hand():
    assert convoy_groups(5, 5.875) == [(5, 1.0)]
    assert convoy_groups(6, 6.0) == [(6, 1.0)]
    assert convoy_groups(16, 6.0) == [(6, 1.0)]
    assert convoy_groups(16, 5.875) == [(5, pytest.approx(0.125)), (6, pytest.approx(0.875))]
    assert convoy_groups(16, 0.3) == [(1, 1.0)]
    assert convoy_groups(16, math.inf) == [(16, 1.0)]      # no demand: nothing saturates


@given(st.integers(1, 64), st.floats(0.0, 100.0))
def test_groups_are_a_mixture_of_at_most_k(k, n_star):
    groups = convoy_groups(k, n_star)
    assert len(groups) in (1, 2)
    assert sum(w for _, w in groups) == pytest.approx(1.0)
    assert all(1 <= g <= k and 0 < w <= 1 for g, w in groups)
    mean = sum(g * w for g, w in groups)
    assert mean == pytest.approx(min(k, max(1.0, n_star)))


def _est(k, convoys, **profile):
    return AsyncMVA(discipline="ps", convoys=convoys).estimate(
        PROFILE.replace(**profile) if profile else PROFILE, CLUSTER, Config(n_replicas=k, n_ps=1))


@pytest.mark.parametrize("k", [1, 2, 4, 5])
def test_up_to_saturation_nothing_changes(k):
    assert _est(k, True).throughput == _est(k, False).throughput


def test_twelve_workers_as_whole_groups_by_hand():
    # t_update 0.02: D = 0.18, N* = 0.48 / 0.08 = 6 exactly, so 12 workers are 6 pairs:
    # the MVA of 6 workers each moving 200 MB and updating for 0.04 s, times 2 workers
    est = _est(12, True, t_update=0.02)
    pairs = async_throughput(200e6, 1.25e9, 0.1, 0.2, 0.04, 6, "ps")
    assert est.throughput == pytest.approx(2 * pairs * 32, rel=1e-12)
    assert est.meta["groups"] == [6] and est.meta["saturation_workers"] == pytest.approx(6.0)
    assert sum(est.phases.values()) == pytest.approx(est.step_time)


def test_fractional_groups_interpolate_step_times():
    est = _est(16, True)                 # N* = 5.875: 5 groups (weight 1/8), 6 (7/8)
    # a worker's step is its group's: g groups make X_g group steps a second in all
    steps = [g / async_throughput(100e6 * 16 / g, 1.25e9, 0.1, 0.2, 0.01 * 16 / g, g, "ps")
             for g in (5, 6)]
    assert est.step_time == pytest.approx(0.125 * steps[0] + 0.875 * steps[1], rel=1e-12)
    assert est.throughput == pytest.approx(16 * 32 / est.step_time)


@settings(max_examples=60, deadline=None)
@given(k=st.integers(1, 24), mb=st.floats(1e6, 1e9), tf=st.floats(1e-3, 1.0),
       tu=st.floats(0.0, 0.2), ps=st.integers(1, 4))
def test_convoys_never_beat_independent_workers_nor_the_link(k, mb, tf, tu, ps):
    profile = PROFILE.replace(model_bytes=mb, t_forward=tf, t_backward=2 * tf, t_update=tu)
    config = Config(n_replicas=k, n_ps=ps)
    together = AsyncMVA(discipline="ps", convoys=True).estimate(profile, CLUSTER, config)
    apart = AsyncMVA(discipline="ps").estimate(profile, CLUSTER, config)
    assert together.throughput <= apart.throughput * (1 + 1e-9)
    # every group still moves its bytes over the servers' links: the link floor holds
    floor = mb / ps / 1.25e9 * k            # seconds of one server link per round of steps
    assert k * 32 / together.throughput >= floor * (1 - 1e-9)


def test_bad_option_is_a_spec_error():
    with pytest.raises(SpecError, match="convoys"):
        AsyncMVA(convoys="yes")


def test_update_spread_by_hand():
    # K updates of T_S / P one after another against one transfer M / (P B): K T_S B / M
    assert update_spread(4, 0.01, 100e6, 1.25e9) == pytest.approx(4 * 0.01 / 0.08)
    assert update_spread(8, 0.01, 100e6, 1.25e9) == 1.0          # 0.08 s of updates: spread
    assert update_spread(16, 0.0, 100e6, 1.25e9) == 0.0          # no update: one convoy
    assert update_spread(2, 0.01, 0.0, 1.25e9) == 1.0            # nothing to transfer


@given(k=st.integers(1, 64), tu=st.floats(0.0, 1.0), mb=st.floats(1e3, 1e10),
       b=st.floats(1e6, 1e11))
def test_update_spread_is_a_weight_that_grows_with_workers_and_updates(k, tu, mb, b):
    w = float(update_spread(k, tu, mb, b))
    assert 0.0 <= w <= 1.0
    assert float(update_spread(k + 1, tu, mb, b)) >= w
    assert float(update_spread(k, 2 * tu, mb, b)) >= w


def _spaced(k, ps, profile=PROFILE, cluster=CLUSTER):
    config = Config(n_replicas=k, n_ps=ps)
    return [AsyncMVA(discipline="ps", convoys=c).estimate(profile, cluster, config)
            for c in (False, True, "spacing")]


@pytest.mark.parametrize("k", [1, 4, 16])
def test_spacing_leaves_one_server_to_the_mva(k):
    free, _, spaced = _spaced(k, 1, cluster=CLUSTER.replace(nic_bandwidth="1Gbps"))
    assert spaced.step_time == pytest.approx(free.step_time, rel=1e-12)
    assert spaced.meta["spread"] == 1.0


def test_spacing_weighs_the_convoy_and_the_mva_by_the_spread_by_hand():
    # 1 Gbps: M / B = 0.8 s, T_S = 10 ms; 2 servers, 32 workers: N* = (0.3 + 1.61) / 0.4
    cluster = CLUSTER.replace(nic_bandwidth="1Gbps")
    free, held, spaced = _spaced(32, 2, cluster=cluster)
    w = 32 * 0.01 / 0.8                                      # 0.4 of a transfer
    assert spaced.meta["spread"] == pytest.approx(w)
    assert held.step_time > free.step_time                   # beyond N*: the convoy is slower
    assert spaced.step_time == pytest.approx((1 - w) * held.step_time + w * free.step_time,
                                             rel=1e-12)
    assert sum(spaced.phases.values()) == pytest.approx(spaced.step_time, rel=1e-12)
    assert spaced.throughput == pytest.approx(32 * 32 / spaced.step_time, rel=1e-12)


def test_spacing_is_the_mva_once_the_updates_spread_a_transfer():
    # 10 Gbps: a transfer of 0.08 s, 8 updates of 10 ms span it
    free, _, spaced = _spaced(8, 2)
    assert spaced.step_time == pytest.approx(free.step_time, rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(k=st.integers(1, 24), mb=st.floats(1e6, 1e9), tf=st.floats(1e-3, 1.0),
       tu=st.floats(0.0, 0.2), ps=st.integers(1, 4))
def test_spacing_lies_between_the_convoy_and_independent_workers(k, mb, tf, tu, ps):
    profile = PROFILE.replace(model_bytes=mb, t_forward=tf, t_backward=2 * tf, t_update=tu)
    free, held, spaced = _spaced(k, ps, profile)
    assert held.throughput * (1 - 1e-9) <= spaced.throughput <= free.throughput * (1 + 1e-9)


def test_batch_pricing_declines():
    assert AsyncMVA(convoys=True).estimate_many(PROFILE, CLUSTER, None) is None


def test_selection_keeps_it_as_a_fair_link_candidate():
    names = {c.name: c for c in default_candidates("async")}
    assert names["async-convoy"].model.convoys is True
    assert names["async-mva"].model.convoys is False   # spread by the updates: not kept
    assert names["async-convoy"].links == ("fair",)


def test_cli_flag_is_the_option(capsys):
    code = main(["predict", "--model", "async", "--convoys", "--workers", "16",
                 "--bandwidth", "1Gbps", "--format", "json"])
    (record,) = json.loads(capsys.readouterr().out)
    est = AsyncMVA(convoys=True).estimate(zoo.profile("resnet50-pipedream"),
                                          Cluster(machines=64, nic_bandwidth="1Gbps"),
                                          Config(n_replicas=16, n_ps=1))
    assert code == 0 and record["throughput"] == pytest.approx(est.throughput, rel=1e-12)
    assert record["throughput"] < AsyncMVA().estimate(
        zoo.profile("resnet50-pipedream"), Cluster(machines=64, nic_bandwidth="1Gbps"),
        Config(n_replicas=16, n_ps=1)).throughput


def test_cli_spacing_is_the_option(capsys):
    argv = ["predict", "--model", "async", "--convoys", "spacing", "--workers", "16", "--ps", "2",
            "--bandwidth", "1Gbps", "--format", "json"]
    assert main(argv) == 0
    (record,) = json.loads(capsys.readouterr().out)
    est = AsyncMVA(convoys="spacing").estimate(zoo.profile("resnet50-pipedream"),
                                               Cluster(machines=64, nic_bandwidth="1Gbps"),
                                               Config(n_replicas=16, n_ps=2))
    assert record["throughput"] == pytest.approx(est.throughput, rel=1e-12)


def test_runs_beyond_saturation_decide_runs_below_it_leave_both():
    profile, net = zoo.profile("resnet50-pipedream"), Cluster(machines=20, nic_bandwidth="1Gbps")
    assert AsyncMVA().saturation(profile, net, Config(n_replicas=1, n_ps=1)) < 3

    def runs(model, workers):
        return [Measurement(k, 1, net.nic_bandwidth, model.estimate(
            profile, net, Config(n_replicas=k, n_ps=1, mode="async")).throughput, mode="async")
            for k in workers]
    for truth in (AsyncMVA(), AsyncMVA(convoys=True)):
        below = select_model(profile, net, runs(truth, (1, 2))).chosen
        assert below.name == "async-mva"          # the prior answers ...
        # ... and spans both (and the MVA's FCFS reading, which such runs cannot rule out)
        assert [a.name for a in below.alternatives] == ["async-convoy", "async-fcfs"]
        beyond = select_model(profile, net, runs(truth, (1, 2, 4, 8))).chosen
        assert beyond.name == ("async-convoy" if truth.convoys else "async-mva")
