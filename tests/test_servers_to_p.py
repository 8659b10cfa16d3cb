"""Async jobs on P servers measured below P workers: the servers met at once up to P.

Up to K = P workers no server link carries two workers' shards, so nothing queues
there: the fork-join network is exact, and the stations visited in turn queue at links
nobody else uses.  Beyond P the servers' links are contended and the throughput grows
as the in-turn network's does from P.  Checked by hand (K workers alone where nothing
queues), against the two layouts it joins, and through ``select_model``.
"""

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfmodel.errors import SpecError
from perfmodel.fit.level import Leveled
from perfmodel.fit.selection import (
    TO_P_CANDIDATE,
    ModelCandidate,
    select_model,
    servers_to_p,
)
from perfmodel.measurements import Measurement
from perfmodel.queueing import AsyncMVA
from perfmodel.specs import Cluster, Config, Profile

# M / B = 0.1 s a transfer, compute 0.3 s, no update time: alone a cycle is 0.5 s
PROFILE = Profile(model_bytes=100e6, t_forward=0.1, t_backward=0.2, t_update=0.0,
                  batch_size=32)
CLUSTER = Cluster(machines=40, nic_bandwidth="1GB/s")
TO_P, JOINED, IN_TURN = (AsyncMVA(servers=s) for s in ("fork-join-to-p", "fork-join",
                                                        "in-turn"))


def _async(k, p):
    return Config(n_replicas=k, n_ps=p, mode="async")


def _x(model, k, p, profile=PROFILE):
    return model.estimate(profile, CLUSTER, _async(k, p)).throughput


def test_up_to_p_workers_nothing_queues_by_hand():
    # 32 samples every 0.5 s a worker, K of them side by side while K <= P
    assert [_x(TO_P, k, 4) for k in (1, 2, 3, 4)] == pytest.approx(
        [64.0, 128.0, 192.0, 256.0], rel=1e-9)
    # the stations visited in turn queue there although no link is shared
    assert _x(IN_TURN, 4, 4) < 0.99 * 256.0


def test_beyond_p_the_in_turn_growth_from_p():
    for p in (2, 3, 4):
        at_p = _x(JOINED, p, p) / _x(IN_TURN, p, p)
        for k in (p + 1, 2 * p, 16):
            assert _x(TO_P, k, p) == pytest.approx(_x(IN_TURN, k, p) * at_p, rel=1e-9)


def test_one_server_is_the_in_turn_network():
    assert [_x(TO_P, k, 1) for k in (1, 2, 5, 16)] == pytest.approx(
        [_x(IN_TURN, k, 1) for k in (1, 2, 5, 16)], rel=1e-9)


def test_phases_sum_to_the_step_and_the_equation_says_so():
    est = TO_P.estimate(PROFILE, CLUSTER, _async(8, 3))
    assert sum(est.phases.values()) == pytest.approx(est.step_time, rel=1e-12)
    assert est.meta["servers"] == "fork-join-to-p"
    assert "scaled to the fork-join at P" in est.meta["equation"]
    assert 0 < est.meta["to_p_scale"] <= 1


@settings(max_examples=40, deadline=None)
@given(m=st.floats(1e6, 1e9), tf=st.floats(1e-3, 1.0), tb=st.floats(1e-3, 1.0),
       ts=st.floats(0.0, 0.05), p=st.integers(2, 4), k=st.integers(1, 16))
def test_between_the_in_turn_network_and_the_fork_join(m, tf, tb, ts, p, k):
    profile = Profile(model_bytes=m, t_forward=tf, t_backward=tb, t_update=ts, batch_size=8)
    got = _x(TO_P, k, p, profile)
    assert got >= _x(IN_TURN, k, p, profile) * (1 - 1e-9)
    if k <= p:
        assert got == pytest.approx(_x(JOINED, k, p, profile), rel=1e-9)


def _runs(workers, p, truth=JOINED):
    return [Measurement(k, p, CLUSTER.nic_bandwidth, _x(truth, k, p), PROFILE.batch_size,
                        "async") for k in workers]


def _inner(cal):
    return cal.model.model if isinstance(cal.model, Leveled) else cal.model


def test_selection_meets_the_servers_at_once_below_p_when_asked():
    sel = select_model(PROFILE, CLUSTER, _runs((1, 2), 4), mode="async", lossy=False,
                       fork_join_to_p=True)
    assert sel.chosen.name == TO_P_CANDIDATE
    assert _inner(sel.chosen).servers == "fork-join-to-p"
    assert "meets the P servers at once" in sel.chosen.why
    # the fork-join the runs came from, up to P
    est = sel.chosen.estimate(PROFILE, CLUSTER, _async(4, 4))
    assert est.throughput == pytest.approx(_x(JOINED, 4, 4), rel=0.02)
    # beyond P the interval reaches down to the in-turn network calibrated alone
    assert _inner(sel.chosen.in_turn).servers == "in-turn"
    beyond = sel.chosen.estimate(PROFILE, CLUSTER, _async(12, 4))
    reading = sel.chosen.in_turn.estimate(PROFILE, CLUSTER, _async(12, 4))
    assert beyond.throughput_interval[0] <= reading.throughput_interval[0] * (1 + 1e-12)
    assert reading.throughput < beyond.throughput
    assert "stations in turn below" in beyond.meta["interval_source"]
    # up to P it does not
    assert "stations in turn" not in est.meta["interval_source"]


@pytest.mark.parametrize("options, workers", [
    ({}, (1, 2)),                             # the default, the link unknown: the paper's network
    ({"link_sharing": "fair"}, (1, 2)),       # a fair link keeps the workers together
    ({"fork_join_to_p": True, "lossy": True}, (1, 2)),  # a lossy link: not judged there
    ({"fork_join_to_p": True}, (1, 2, 4)),              # a run at P shows the level there
])
def test_selection_keeps_the_servers_in_turn(options, workers):
    options = {"lossy": False, **options}
    sel = select_model(PROFILE, CLUSTER, _runs(workers, 4), mode="async", **options)
    mva = sel.calibrated[[s.name for s in sel.scores].index(TO_P_CANDIDATE)]
    assert _inner(mva).servers == "in-turn"
    assert sel.chosen.in_turn is None


def test_servers_to_p_changes_only_its_candidate():
    mva = ModelCandidate(TO_P_CANDIDATE, "queueing", Leveled(AsyncMVA(overlap=True), 1.1),
                         modes=("async",))
    moved = servers_to_p(mva)
    assert moved.model.slowdown == 1.1 and moved.model.model == AsyncMVA(
        overlap=True, servers="fork-join-to-p")
    plain = servers_to_p(dataclasses.replace(mva, model=AsyncMVA()))
    assert plain.model == AsyncMVA(servers="fork-join-to-p")
    other = dataclasses.replace(mva, name="async-convoy")
    assert servers_to_p(other) is other


def _servers(**options):
    sel = select_model(PROFILE, CLUSTER, _runs((1, 2), 4), mode="async", lossy=False,
                       **options)
    return _inner(sel.calibrated[[s.name for s in sel.scores].index(TO_P_CANDIDATE)]).servers


@pytest.mark.parametrize("link, servers", [
    ("fifo", "fork-join-to-p"),   # drop-tail queues stagger the workers that meet
    ("fair", "in-turn"),          # a fair queue keeps them together
    (None, "in-turn"),            # unknown: the prior, a fair link
])
def test_fork_join_to_p_fifo_acts_only_where_the_link_is_said_fifo(link, servers):
    assert _servers(fork_join_to_p="fifo", link_sharing=link) == servers
    assert _servers(link_sharing=link) == servers     # the default
    on = select_model(PROFILE, CLUSTER, _runs((1, 2), 4), mode="async", lossy=False,
                      link_sharing=link, fork_join_to_p=servers == "fork-join-to-p")
    asked = select_model(PROFILE, CLUSTER, _runs((1, 2), 4), mode="async", lossy=False,
                         link_sharing=link, fork_join_to_p="fifo")
    assert asked.chosen.name == on.chosen.name
    for k in (3, 4, 8, 16):
        assert (asked.chosen.estimate(PROFILE, CLUSTER, _async(k, 4)).throughput
                == on.chosen.estimate(PROFILE, CLUSTER, _async(k, 4)).throughput)


def test_fork_join_to_p_refuses_other_values():
    with pytest.raises(SpecError, match="fork_join_to_p"):
        select_model(PROFILE, CLUSTER, _runs((1, 2), 4), mode="async", fork_join_to_p="auto")


def _fifo(**options):
    return select_model(PROFILE, CLUSTER, _runs((1, 2), 4), mode="async", lossy=False,
                        link_sharing="fifo", **options).chosen


def test_toward_the_bound_beyond_p_by_hand():
    plain, toward = _fifo(), _fifo(fifo_toward_bound=True)
    assert toward.toward_bound and not plain.toward_bound
    assert "halfway (geometrically) to the contention-free bound" in toward.why
    one = toward.estimate(PROFILE, CLUSTER, _async(1, 4)).throughput
    for k in (1, 2, 3, 4):   # up to P: the servers met at once, as without the rule
        assert (toward.estimate(PROFILE, CLUSTER, _async(k, 4)).throughput
                == plain.estimate(PROFILE, CLUSTER, _async(k, 4)).throughput)
    # the links carry 4 servers x 32 samples / 0.1 s = 1280 samples/s, above K alone here
    for k in (6, 8, 16, 24):
        base = plain.estimate(PROFILE, CLUSTER, _async(k, 4)).throughput
        est = toward.estimate(PROFILE, CLUSTER, _async(k, 4))
        top = min(k * one, 1280.0)
        assert base < top
        assert est.throughput == pytest.approx((base * top) ** 0.5, rel=1e-9)
        assert est.step_time == pytest.approx(k * 32 / est.throughput, rel=1e-9)
        # the servers' contended growth stays inside the interval
        assert est.throughput_interval[0] <= base <= est.throughput_interval[1]


@pytest.mark.parametrize("link", ["fair", None])
def test_toward_the_bound_only_where_the_link_is_fifo(link):
    kw = dict(mode="async", lossy=False, link_sharing=link)
    with_rule = select_model(PROFILE, CLUSTER, _runs((1, 2), 4), fifo_toward_bound=True,
                             **kw).chosen
    without = select_model(PROFILE, CLUSTER, _runs((1, 2), 4), **kw).chosen
    assert not with_rule.toward_bound
    for k in (3, 8, 16):
        assert (with_rule.estimate(PROFILE, CLUSTER, _async(k, 4)).throughput
                == without.estimate(PROFILE, CLUSTER, _async(k, 4)).throughput)
