"""Async jobs whose servers' update CPUs are the bottleneck: the asymptotic bound answers.

With an update spacing ``T_S B / M`` of 1 or more a server applies a gradient's share
more slowly than its link moves it; one update CPU applying gradients in a fixed time
spaces the workers evenly, so the closed network reaches its asymptotic bound (K workers
alone, up to what the servers apply) sharply.  Checked by hand, against the simulator
with one update CPU per server (which replays the schedule), and through
``select_model``.
"""

import dataclasses
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfmodel.errors import Infeasible, SpecError
from perfmodel.fit.selection import (
    SERVER_BOUND_SPACING,
    AsymptoticBound,
    select_model,
    server_throughput,
    update_spacing,
)
from perfmodel.measurements import Measurement
from perfmodel.queueing import AsyncMVA
from perfmodel.sim.model import TraceSim
from perfmodel.specs import Cluster, Config, Profile

# M / B = 0.1 s, T_S = 0.2 s: spacing 2; alone a cycle is 0.3 + 2 x 0.1 + 0.2 = 0.7 s
PROFILE = Profile(model_bytes=100e6, t_forward=0.1, t_backward=0.2, t_update=0.2,
                  batch_size=32)
CLUSTER = Cluster(machines=40, nic_bandwidth="1GB/s")
BOUND = AsymptoticBound(AsyncMVA(serialized_bound=True))


def _async(k, p=1):
    return Config(n_replicas=k, n_ps=p, mode="async")


def _runs(profile, p, workers=(1, 2), scale=1.0):
    """Runs of the simulator that replays the schedule (one update CPU per server)."""
    sim = TraceSim(sharing="ps", server_cpu="fcfs", steps=200, warmup=20)
    return [Measurement(k, p, CLUSTER.nic_bandwidth,
                        scale * sim.estimate(profile, CLUSTER, _async(k, p)).throughput,
                        profile.batch_size, "async") for k in workers]


def test_the_bound_by_hand():
    # one server: 32 / 0.7 a worker up to 32 / 0.2 = 160 samples/s, reached at 4 workers
    got = [BOUND.estimate(PROFILE, CLUSTER, _async(k)).throughput for k in (1, 2, 3, 4, 16)]
    assert got == pytest.approx([32 / 0.7, 64 / 0.7, 96 / 0.7, 160.0, 160.0], rel=1e-5)
    # two servers apply their halves at once: alone 0.3 + 0.1 + 0.1 + 0.05 = 0.55... the
    # worker's own link still carries the whole model each way: 0.3 + 0.2 + 0.1 = 0.6 s
    two = BOUND.estimate(PROFILE, CLUSTER, _async(1, 2))
    assert two.throughput == pytest.approx(32 / 0.6, rel=1e-5)
    assert BOUND.estimate(PROFILE, CLUSTER, _async(16, 2)).throughput == pytest.approx(
        server_throughput(PROFILE, _async(16, 2)), rel=1e-5)
    # a level slows the worker alone, not what the servers apply
    slow = dataclasses.replace(BOUND, slowdown=1.4)
    assert slow.estimate(PROFILE, CLUSTER, _async(1)).throughput == pytest.approx(32 / 0.98)
    assert slow.estimate(PROFILE, CLUSTER, _async(16)).throughput == pytest.approx(160.0)


def test_the_bound_answers_async_data_parallel_jobs_only():
    with pytest.raises(Infeasible):
        BOUND.estimate(PROFILE, CLUSTER, Config(n_replicas=4))
    with pytest.raises(Infeasible):
        BOUND.estimate(PROFILE, CLUSTER, Config(n_workers=2, n_replicas=4, mode="async"))
    with pytest.raises(SpecError, match="slowdown"):
        AsymptoticBound(AsyncMVA(), slowdown=0.0)
    with pytest.raises(SpecError, match="model"):
        AsymptoticBound("mva")


@pytest.mark.parametrize("p", [1, 2])
def test_the_simulator_with_one_update_cpu_per_server_reaches_the_bound(p):
    # the simulator replays the schedule the bound assumes; the MVA's exponential
    # stations queue at the knee where the deterministic update CPU does not
    sim = TraceSim(sharing="ps", server_cpu="fcfs", steps=200, warmup=20)
    worst_mva = 0.0
    for k in (1, 2, 3, 4, 6, 8, 16):
        bound = BOUND.estimate(PROFILE, CLUSTER, _async(k, p)).throughput
        simulated = sim.estimate(PROFILE, CLUSTER, _async(k, p)).throughput
        assert simulated == pytest.approx(bound, rel=0.04), k
        worst_mva = max(worst_mva, 1 - AsyncMVA().estimate(
            PROFILE, CLUSTER, _async(k, p)).throughput / simulated)
    assert worst_mva > 0.15


@pytest.mark.parametrize("p", [1, 2])
def test_select_model_answers_with_the_bound_where_the_servers_are_the_bottleneck(p):
    assert update_spacing(PROFILE, CLUSTER) >= SERVER_BOUND_SPACING
    sel = select_model(PROFILE, CLUSTER, _runs(PROFILE, p), mode="async")
    chosen = sel.chosen
    assert chosen.name == "async-bound" and "update spacing" in chosen.why
    assert chosen.server_cpu == "fcfs" and chosen.alternatives     # the choice it replaced
    truth = TraceSim(sharing="ps", server_cpu="fcfs", steps=200, warmup=20)
    for k in (4, 8, 16):
        est = chosen.estimate(PROFILE, CLUSTER, _async(k, p))
        measured = truth.estimate(PROFILE, CLUSTER, _async(k, p)).throughput
        assert est.throughput == pytest.approx(measured, rel=0.04)
        low, high = est.throughput_interval
        # a simulated window may end a hair past the servers' bound it sits on
        assert low <= measured <= high * 1.002
        assert high <= server_throughput(PROFILE, _async(k, p)) * (1 + 1e-5)
    # without it (nor the simulator that replays the schedule) the MVA's knee answers,
    # below the bound
    plain = select_model(PROFILE, CLUSTER, _runs(PROFILE, p), mode="async",
                         server_bound=False, spaced=False).chosen
    assert plain.name == "async-mva"
    assert plain.estimate(PROFILE, CLUSTER, _async(4, p)).throughput < 0.95 * chosen.estimate(
        PROFILE, CLUSTER, _async(4, p)).throughput


def test_the_bound_keeps_out_where_it_does_not_hold():
    runs = _runs(PROFILE, 1)
    # a short update (spacing 0.5): the links, not the update CPU, are the bottleneck
    short = PROFILE.replace(t_update=0.05)
    assert update_spacing(short, CLUSTER) < SERVER_BOUND_SPACING
    assert select_model(short, CLUSTER, _runs(short, 1), mode="async").chosen.name != \
        "async-bound"
    # a server with an update core per worker, or a link that may drop packets
    assert select_model(PROFILE, CLUSTER, runs, mode="async",
                        server_cpu="own").chosen.name != "async-bound"
    for lossy in (None, True):
        assert select_model(PROFILE, CLUSTER, runs, mode="async",
                            lossy=lossy).chosen.name != "async-bound"


def test_a_run_beyond_two_workers_must_not_contradict_it():
    # the measured runs fall well short of K workers alone at 3 workers (say convoys):
    # the bound fits them worse than the choice and does not answer
    runs = _runs(PROFILE, 1)
    third = Measurement(3, 1, CLUSTER.nic_bandwidth, 0.7 * 3 * runs[0].throughput,
                        PROFILE.batch_size, "async")
    chosen = select_model(PROFILE, CLUSTER, [*runs, third], mode="async").chosen
    assert chosen.name != "async-bound" and "asymptotic bound fits the runs worse" in chosen.why
    assert math.isfinite(chosen.loo_error)


profiles = st.builds(Profile, model_bytes=st.floats(1e5, 1e9), t_forward=st.floats(1e-4, 0.5),
                     t_backward=st.floats(1e-4, 1.0), t_update=st.floats(0.0, 0.5),
                     batch_size=st.integers(1, 256))


@settings(max_examples=60, deadline=None)
@given(profile=profiles, bandwidth=st.floats(1e8, 1e10), k=st.integers(1, 32),
       p=st.integers(1, 6), overlap=st.booleans())
def test_the_mva_never_beats_its_asymptotic_bound(profile, bandwidth, k, p, overlap):
    # the asymptotic bound holds for any queueing of the same demands (Lazowska et al.
    # 1984, Sec. 5.2); it grows with the workers and stops at what the servers apply
    cluster = Cluster(machines=40, nic_bandwidth=bandwidth)
    mva = AsyncMVA(overlap=overlap)
    bound = AsymptoticBound(mva)
    config = _async(k, p)
    top = bound.estimate(profile, cluster, config).throughput
    assert mva.estimate(profile, cluster, config).throughput <= top * (1 + 1e-9)
    assert top <= server_throughput(profile, config) * (1 + 1e-5)
    assert top <= k * mva.estimate(profile, cluster, _async(1, p)).throughput * (1 + 1e-12)
    assert top >= bound.estimate(profile, cluster, _async(max(1, k - 1), p)).throughput * (
        1 - 1e-12)


def test_the_spacing_is_the_measured_networks():
    # predictions asked on a cluster declared at 100 MB/s (spacing 0.2) from runs measured
    # at 1 GB/s (spacing 2): the runs' network decides, as it does for the spaced simulator
    slow = CLUSTER.replace(nic_bandwidth=1e8)
    assert update_spacing(PROFILE, slow) < SERVER_BOUND_SPACING
    chosen = select_model(PROFILE, slow, _runs(PROFILE, 1), mode="async").chosen
    assert chosen.name == "async-bound" and "T_S B / M = 2.00" in chosen.why
