"""The P servers met at once (``fork_join_solve``, ``AsyncMVA(servers="fork-join")``).

Checked against hand values, the paper's network where they must agree (one
server), an exact continuous-time Markov chain of the same network, and the
bounds a closed network cannot cross.
"""

import itertools
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfmodel import zoo
from perfmodel.cli import main
from perfmodel.errors import SpecError
from perfmodel.queueing import AsyncMVA, async_solve, fork_join_solve
from perfmodel.specs import Cluster, Config, Profile

M, B, TF, TB, TS = 100e6, 1.25e9, 0.1, 0.2, 0.04


def test_one_worker_meets_its_servers_at_once_by_hand():
    # 0.08 s each way over its own link, the update split over 4 CPUs in parallel
    sol = fork_join_solve(M, B, TF, TB, TS, 1, n_ps=4)
    assert sol.step_time[0] == pytest.approx(0.08 + 0.3 + 0.01 + 0.08, rel=1e-12)
    assert sol.phases["update"][0] == pytest.approx(0.01, rel=1e-12)
    # the in-turn network charges the whole update
    turn = async_solve(M, B, TF, TB, TS, 1, "ps", n_ps=4)
    assert turn.step_time[0] == pytest.approx(0.08 + 0.3 + 0.04 + 0.08, rel=1e-12)


@pytest.mark.parametrize("overlap", [False, True])
def test_one_server_is_the_papers_network_with_ps_links(overlap):
    for k in range(1, 11):
        fj = fork_join_solve(M, B, TF, TB, TS, k, overlap=overlap)
        turn = async_solve(M, B, TF, TB, TS, k, "ps", overlap=overlap)
        assert fj.throughput == pytest.approx(turn.throughput, rel=1e-10), k
        for name in turn.phases:
            assert fj.phases[name][0] == pytest.approx(turn.phases[name][0], rel=1e-9, abs=1e-15)


def _ctmc_throughput(z, demands, channels, k):
    """Steps/s of the closed network by its exact Markov chain (exponential services:
    a product-form network of PS stations is insensitive to the distribution)."""
    states = [s for s in itertools.product(range(k + 1), repeat=3) if sum(s) <= k]
    index = {s: i for i, s in enumerate(states)}
    q = np.zeros((len(states), len(states)))

    def rate(i, n):
        return min(n, channels[i]) / demands[i] if n else 0.0

    for s in states:
        thinking = k - sum(s)
        moves = [((s[0] + 1, s[1], s[2]), thinking / z),          # compute done: push
                 ((s[0] - 1, s[1] + 1, s[2]), rate(0, s[0])),      # pushed: update
                 ((s[0], s[1] - 1, s[2] + 1), rate(1, s[1])),      # updated: pull
                 ((s[0], s[1], s[2] - 1), rate(2, s[2]))]          # pulled: compute
        for target, r in moves:
            if r > 0:
                q[index[s], index[target]] += r
                q[index[s], index[s]] -= r
    a = np.vstack([q.T, np.ones(len(states))])
    pi = np.linalg.lstsq(a, np.r_[np.zeros(len(states)), 1.0], rcond=None)[0]
    return float(sum(pi[index[s]] * rate(2, s[2]) for s in states))


@pytest.mark.parametrize("k, p", [(1, 2), (2, 2), (3, 2), (4, 3), (5, 2), (6, 4)])
def test_the_mva_equals_the_exact_markov_chain(k, p):
    demands, channels = [M / B, TS / p, M / B], [p, 1, p]
    exact = _ctmc_throughput(TF + TB, demands, channels, k)
    assert fork_join_solve(M, B, TF, TB, TS, k, n_ps=p).throughput == pytest.approx(
        exact, rel=1e-9)


@settings(max_examples=60, deadline=None)
@given(m=st.floats(1e6, 1e9), b=st.floats(1e8, 1e10), tf=st.floats(0.0, 0.5),
       tb=st.floats(0.001, 1.0), ts=st.floats(0.0, 0.2), p=st.integers(1, 6),
       k=st.integers(1, 24), overlap=st.booleans())
def test_between_the_in_turn_network_and_the_contention_free_bound(m, b, tf, tb, ts, p, k,
                                                                   overlap):
    fj = fork_join_solve(m, b, tf, tb, ts, k, n_ps=p, overlap=overlap)
    turn = async_solve(m, b, tf, tb, ts, k, "ps", n_ps=p, overlap=overlap)
    # pooling the P stations never queues more than visiting them in turn
    assert fj.throughput >= turn.throughput * (1 - 1e-9)
    # no faster than K workers alone, nor than the P links or the P CPUs carry
    alone = fork_join_solve(m, b, tf, tb, ts, 1, n_ps=p, overlap=overlap).throughput
    caps = [k * alone, p * b / m if m else math.inf, p / ts if ts else math.inf]
    assert fj.throughput <= min(caps) * (1 + 1e-9)
    # more workers never run slower, and the phases sum to the step
    if k > 1:
        fewer = fork_join_solve(m, b, tf, tb, ts, k - 1, n_ps=p, overlap=overlap)
        assert fj.throughput >= fewer.throughput * (1 - 1e-9)
    total = sum(v[0] for v in fj.phases.values())
    assert total == pytest.approx(fj.step_time[0], rel=1e-12)
    assert fj.throughput == pytest.approx(k / fj.step_time[0], rel=1e-12)


def test_the_model_object_answers_with_the_fork_join():
    profile = Profile(model_bytes=M, t_forward=TF, t_backward=TB, t_update=TS, batch_size=32)
    cluster = Cluster(machines=20, nic_bandwidth=B)
    config = Config(n_replicas=6, n_ps=3, mode="async")
    est = AsyncMVA(servers="fork-join").estimate(profile, cluster, config)
    sol = fork_join_solve(M, B, TF, TB, TS, 6, n_ps=3)
    assert est.throughput == pytest.approx(sol.throughput * 32, rel=1e-12)
    assert est.meta["servers"] == "fork-join" and "fork-join" in est.meta["equation"]
    assert est.throughput > AsyncMVA(discipline="ps").estimate(profile, cluster,
                                                               config).throughput
    assert AsyncMVA(servers="fork-join").estimate_many(profile, cluster, None) is None
    with pytest.raises(SpecError, match="servers"):
        AsyncMVA(servers="pooled")


@pytest.mark.parametrize("bad, field", [(dict(workers=0), "workers"),
                                        (dict(n_ps=0), "n_ps"),
                                        (dict(model_bytes=float("nan")), "model_bytes"),
                                        (dict(overlap="yes"), "overlap")])
def test_bad_input_names_the_argument(bad, field):
    args = dict(model_bytes=M, bandwidth=B, t_forward=TF, t_backward=TB, t_update=TS,
                workers=2)
    args.update(bad)
    with pytest.raises(SpecError, match=field):
        fork_join_solve(**args)


def test_cli_flag_is_the_option(capsys):
    code = main(["predict", "--model", "async", "--servers", "fork-join", "--workers", "6",
                 "--ps", "3", "--bandwidth", "1Gbps", "--format", "json"])
    (record,) = json.loads(capsys.readouterr().out)
    est = AsyncMVA(servers="fork-join").estimate(
        zoo.profile("resnet50-pipedream"), Cluster(machines=64, nic_bandwidth="1Gbps"),
        Config(n_replicas=6, n_ps=3, mode="async"))
    assert code == 0 and record["throughput"] == pytest.approx(est.throughput, rel=1e-12)
