"""Tests of the flow-level simulator and compute distributions of perfmodel.placement.

Oracles: the closed form of one job alone (Li et al. 2022, eq. 7 under equal
sharing: ``K M/B + T_C + K M/B + T_S``), the pure-Python max-min engine, and
Jain et al.'s qualitative findings (Sec. 5.2-5.3).

Running example, by hand: M = 100 MB, B = 10 Gbps = 1.25e9 B/s -> M/B = 0.08 s.
"""

import math

import numpy as np
import pytest

import perfmodel.gst
import perfmodel.placement
from perfmodel.coarse import SyncCoarse, sync_step_time
from perfmodel.errors import Infeasible, SpecError
from perfmodel.gst import expected_max
from perfmodel.placement import (
    PHASES,
    Constant,
    Empirical,
    FlowSim,
    LogNormal,
    Normal,
    Pareto,
    Placement,
    compare,
    fat_tree,
    heavy_tailed_server,
    heavy_tailed_worker,
    latency_table,
    paper_racks,
    racks,
    random_placement,
    simulate,
    star,
)
from perfmodel.placement.distributions import Distribution, as_distribution, from_string
from perfmodel.specs import Cluster, Config, Profile

M, B = 100e6, 1.25e9
PAPER = paper_racks()


def _one_job(k):
    return Placement((0,), (tuple(range(1, k + 1)),))


# ------------------------------------------------------------- closed forms

def test_single_worker_alone_is_the_closed_form_exactly():
    # M/B + c + M/B + u = 0.08 + 0.3 + 0.08 + 0.01 = 0.47 s
    r = simulate(star(2, B), _one_job(1), M, 0.3, 0.01, iterations=4, warmup=0)
    assert np.all(r.latencies == pytest.approx(0.47, abs=1e-12))
    assert r.mean_phases() == pytest.approx({"downlink": 0.08, "compute": 0.3,
                                             "uplink": 0.08, "update": 0.01})


def test_latency_adds_the_path_latency_per_transfer():
    # host 0 (rack 0) <-> host 9 (rack 1): 4 links of 15 ns each way
    r = simulate(PAPER, Placement((0,), ((9,),)), M, 0.3, 0.01, iterations=2, warmup=0)
    assert r.latencies == pytest.approx(np.full((1, 2), 0.47 + 2 * 4 * 15e-9), abs=1e-12)


@pytest.mark.parametrize("k", [1, 2, 4, 7, 16])
def test_one_job_on_a_star_reproduces_seed_003_eq_7(k):
    # equal sharing of the PS link: K M/B + T_F + T_B + K M/B + T_S
    r = simulate(star(k + 1, B), _one_job(k), M, 0.3, 0.01, iterations=3, warmup=1)
    expected = sync_step_time(M, B, 0.1, 0.2, 0.01, k, sharing="ps")
    assert np.allclose(r.latencies, expected, rtol=1e-9)


def test_flowsim_model_matches_sync_coarse_within_one_percent():
    profile = Profile(model_bytes=97.49e6, t_forward=0.1, t_backward=0.2, t_update=0.02,
                      batch_size=32)
    cluster = Cluster(machines=8, nic_bandwidth="10Gbps")
    config = Config(n_replicas=7, n_ps=1)
    est = FlowSim(topology="star:8", strategy="colocated", jobs=1, iterations=5).estimate(
        profile, cluster, config)
    ref = SyncCoarse(sharing="ps").estimate(profile, cluster, config)
    assert est.step_time == pytest.approx(ref.step_time, rel=0.01)
    assert est.throughput == pytest.approx(ref.throughput, rel=0.01)
    assert sum(est.phases.values()) == pytest.approx(est.step_time)
    assert est.meta["model"] == "FlowSim" and est.meta["strategy"] == "colocated"


def test_flowsim_model_errors():
    profile = Profile(model_bytes=1e6, t_forward=0.1, t_backward=0.1, batch_size=1)
    cluster = Cluster(machines=8, nic_bandwidth="10Gbps")
    with pytest.raises(SpecError) as err:
        FlowSim().estimate(profile, cluster, Config(n_replicas=2, n_ps=2))
    assert err.value.field == "config.n_ps"
    with pytest.raises(Infeasible):
        FlowSim(topology="star:4", jobs=2).estimate(profile, cluster, Config(n_replicas=3))
    with pytest.raises(SpecError) as err:
        FlowSim(strategy="best")
    assert err.value.field == "strategy"


def test_two_jobs_sharing_one_uplink_hand_worked():
    # racks 2 x 2, one 10 Gbps uplink per rack.  Job 0: PS h0 -> worker h2; job 1:
    # PS h1 -> worker h3.  Both pulls cross tor0 -> top0 -> tor1: each gets B/2, so
    # 2 M/B = 0.16 s; same for the pushes: 0.16 + 0.3 + 0.16 + 0.01 = 0.63 s.
    t = racks(2, 2, B, latency=0.0)
    r = simulate(t, Placement((0, 1), ((2,), (3,))), M, 0.3, 0.01, iterations=3, warmup=0)
    assert r.latencies == pytest.approx(np.full((2, 3), 0.63), abs=1e-12)


# ---------------------------------------------------------- engine, seeds

def test_vectorized_and_reference_engines_agree():
    t = racks(4, 4, B)
    p = random_placement(t, 4, 3, seed=2)
    kw = dict(iterations=8, warmup=1, seed=5)
    a = simulate(t, p, M, LogNormal(0.2, 0.1), 0.02, engine="vectorized", **kw)
    b = simulate(t, p, M, LogNormal(0.2, 0.1), 0.02, engine="reference", **kw)
    assert np.allclose(a.latencies, b.latencies, rtol=1e-9)
    assert a.n_rate_updates == b.n_rate_updates


def test_same_seed_same_answer_and_different_seed_differs():
    p = random_placement(PAPER, 4, 7, seed=1)
    kw = dict(iterations=5, warmup=1)
    a = simulate(PAPER, p, seed=11, **kw)
    b = simulate(PAPER, p, seed=11, **kw)
    c = simulate(PAPER, p, seed=12, **kw)
    assert np.array_equal(a.latencies, b.latencies)
    assert not np.array_equal(a.latencies, c.latencies)
    gen = np.random.SeedSequence(11)
    assert np.array_equal(simulate(PAPER, p, seed=gen, **kw).latencies, a.latencies)


def test_phases_sum_to_latency_and_cdf_shape():
    r = simulate(fat_tree(4), random_placement(fat_tree(4), 3, 4, seed=0), iterations=6,
                 warmup=1, seed=0)
    total = sum(r.phases[k] for k in PHASES)
    assert np.allclose(total, r.latencies, rtol=1e-12)
    x, f = r.cdf()
    assert np.all(np.diff(x) >= 0) and f[-1] == 1.0 and x.size == 18
    s = r.summary()
    assert s["p50"] <= s["p99"] <= s["max"] and s["n"] == 18
    assert r.p50 == pytest.approx(np.median(r.samples))
    est = r.to_estimate(samples_per_step=4 * 32)
    assert est.step_time == pytest.approx(r.mean) and est.meta["p99"] == r.p99


def test_per_flow_cap_slows_a_lone_transfer():
    # one flow capped at B/4: M / (B/4) = 0.32 s each way
    r = simulate(star(2, B), _one_job(1), M, 0.3, 0.01, iterations=2, warmup=0,
                 per_flow_cap=B / 4)
    assert r.latencies == pytest.approx(np.full((1, 2), 0.32 + 0.3 + 0.32 + 0.01))


@pytest.mark.parametrize("kwargs, field", [
    (dict(iterations=0), "iterations"),
    (dict(warmup=-1), "warmup"),
    (dict(engine="gpu"), "engine"),
    (dict(seed=None), "seed"),
    (dict(model_bytes=0), "model_bytes"),
    (dict(worker_compute=-1.0), "worker_compute"),
    (dict(server_compute="weibull:1,2"), "server_compute"),
    (dict(per_flow_cap=0), "per_flow_cap"),
])
def test_simulate_errors_name_the_argument(kwargs, field):
    with pytest.raises(SpecError) as err:
        simulate(star(3, B), _one_job(2), **kwargs)
    assert err.value.field == field


def test_simulate_rejects_placement_outside_topology():
    with pytest.raises(SpecError, match="does not exist"):
        simulate(star(3, B), Placement((0,), ((5,),)))


# ------------------------------------------------------------ distributions

def test_distributions_moments_and_support():
    rng = np.random.default_rng(0)
    ln = LogNormal(0.5, 0.25)
    x = ln.sample(rng, 200_000)
    assert x.mean() == pytest.approx(0.5, rel=0.01) and x.std() == pytest.approx(0.25, rel=0.02)
    p = Pareto.from_mean(0.4, 2.5, loc=0.25)
    assert p.mean == pytest.approx(0.4)
    y = p.sample(rng, 200_000)
    assert y.min() >= 0.25 + p.scale and y.mean() == pytest.approx(0.4, rel=0.02)
    n = Normal(0.1, 0.2)
    assert n.sample(rng, 1000).min() >= 0.0                       # clipped at 0 s
    e = Empirical([0.1, 0.2, 0.7])
    assert set(e.sample(rng, 100).tolist()) <= {0.1, 0.2, 0.7}
    assert e.mean == pytest.approx(1 / 3)
    assert Constant(0.3).sample(rng, 3).tolist() == [0.3] * 3
    assert Pareto(1.0, 1.0).mean == math.inf and Pareto(1.0, 2.0).std == math.inf


def test_empirical_is_shared_with_gst():
    # one Empirical for the GST model's order statistics and the placement simulators
    assert perfmodel.placement.Empirical is perfmodel.gst.Empirical is Empirical
    e = Empirical([0.3, 0.1, 0.2])
    assert isinstance(e, Distribution) and as_distribution(e) is e
    assert e.samples == (0.3, 0.1, 0.2) and e.values.tolist() == [0.1, 0.2, 0.3]
    assert e.mean == e.mean() == pytest.approx(0.2)               # placement's and scipy's
    assert e.std == e.std() == pytest.approx(np.std([0.1, 0.2, 0.3]))
    draws = e.sample(np.random.default_rng(4), 50)                 # the given order is kept
    assert draws.tolist() == np.random.default_rng(4).choice([0.3, 0.1, 0.2], 50).tolist()
    assert expected_max(e, 2) == pytest.approx((0.1 + 3 * 0.2 + 5 * 0.3) / 9)
    n = Distribution.scaled(e, 0.5, 0.25)                          # Sec. 5.3's normal
    assert isinstance(n, Normal) and (n.mean, n.std) == pytest.approx((0.1, e.std / 4))
    assert e == Empirical((0.3, 0.1, 0.2)) and hash(e) == hash(Empirical([0.3, 0.1, 0.2]))
    with pytest.raises(SpecError, match="worker_compute"):          # durations only
        as_distribution(Empirical([-0.1, 0.2]), "worker_compute")


def test_heavy_tailed_defaults_and_scaled_normals():
    w = heavy_tailed_worker()
    assert w.mean == pytest.approx(0.25 + 0.1 * 2.5 / 1.5)
    x = w.sample(np.random.default_rng(1), 100_000)
    assert np.mean(x > 1.0) == pytest.approx(7.5 ** -2.5, rel=0.15)   # the heavy tail
    n = w.scaled(0.5, 0.25)                                          # Jain et al., Fig. 10
    assert (n.mean, n.std) == pytest.approx((w.mean / 2, w.std / 4))
    assert heavy_tailed_server().mean == pytest.approx(0.065)


def test_distribution_parsing_and_errors():
    assert from_string("0.3") == Constant(0.3)
    assert from_string("lognormal:300ms,100ms") == LogNormal(0.3, 0.1)
    assert from_string("pareto:0.1,2.5,0.25") == Pareto(0.1, 2.5, 0.25)
    assert as_distribution(0.2) == Constant(0.2)
    with pytest.raises(SpecError):
        from_string("normal:1")
    with pytest.raises(SpecError) as err:
        LogNormal(0.0, 1.0)
    assert err.value.field == "mean"
    with pytest.raises(SpecError):
        Pareto.from_mean(1.0, 0.9)
    with pytest.raises(SpecError):
        Empirical([])


# ---------------------------------------------- Jain et al.'s findings (Sec. 5)

@pytest.fixture(scope="module")
def paper_runs():
    """Jain et al., Sec. 4.4: 8 jobs of 1 PS + 7 workers on 8 x 8 racks at 10 Gbps,
    ResNet-50's 97.49 MB, heavy-tailed compute (our assumed stand-ins for Figs. 6-7)."""
    return compare(PAPER, jobs=8, workers=7, iterations=25, warmup=2, seed=0)


def test_colocated_beats_random(paper_runs):
    # paper: colocated about 25% better than random
    ratio = paper_runs["colocated"].mean / paper_runs["random"].mean
    assert 0.55 < ratio < 0.85


def test_clustered_is_two_to_three_times_worse(paper_runs):
    # paper: 2-3x worse than the other strategies (ours is a bit worse: ~3.6x)
    ratio = paper_runs["clustered"].mean / paper_runs["random"].mean
    assert 2.0 < ratio < 4.5
    assert paper_runs["clustered"].p50 > paper_runs["random"].p99


def test_strided_close_to_random_with_lower_variance(paper_runs):
    ratio = paper_runs["strided"].mean / paper_runs["random"].mean
    assert 0.8 < ratio < 1.05
    assert paper_runs["strided"].std < paper_runs["random"].std
    table = latency_table(paper_runs)
    assert table.splitlines()[0].split()[:2] == ["strategy", "mean"]
    assert "clustered" in table


def test_faster_or_steadier_compute_helps_little():
    # Jain et al., Figs. 9-10: normal compute with mu0, sigma0 scaled; a quarter of the
    # mean saves far less than three quarters of the compute time
    w, s = heavy_tailed_worker(), heavy_tailed_server()
    runs = {}
    for label, (mf, sf) in {"base": (1, 1), "sd/4": (1, 0.25), "mu/4": (0.25, 0.25)}.items():
        runs[label] = compare(PAPER, ["random"], 8, 7, worker_compute=w.scaled(mf, sf),
                              server_compute=s.scaled(mf, sf), iterations=10, warmup=1,
                              seed=3)["random"]
    base = runs["base"].mean
    assert runs["sd/4"].mean == pytest.approx(base, rel=0.15)
    saved = base - runs["mu/4"].mean
    assert 0 < saved < 0.75 * (w.mean + s.mean)
    assert runs["mu/4"].mean > 0.7 * base                 # the network dominates
