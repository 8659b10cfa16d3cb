"""Tests of perfmodel.gst (Zhang et al. 2023): GST, pipelines, normal maxima, network, use cases.

Reference values of e(n) = E[max of n iid standard normals] were computed with
mpmath at 30 significant digits:

    mp.quad(lambda x: x * n * mp.npdf(x) * mp.ncdf(x) ** (n - 1),
            [-mp.inf, c - 3, c - 1, c, c + 1, c + 3, mp.inf]),  c = Phi^-1(1 - 1/n)

(two of them are recomputed live in ``test_expected_max_normal_live_mpmath``).

Running example of the model, worked by hand (``HAND``):
    M = 100 MB, pks = 1000 B -> PN = 1e5 packets; B = 10 Gbps = 1.25e9 B/s;
    latency (base delay) 1e-4 s; N = 4 workers, K = 2 servers;
    FC = BC = 1e-4 + 1e5 * 1000 / 1.25e9 = 0.0801 s                  (eq. 10)
    G = 1e5 / 2 = 5e4 packets                                         (eq. 13)
    printed units: min delay 5e4 / 1.25e9 = 4e-5 s                    (eq. 15)
                   max delay (4 * 5e4 - 4 + 1) / 1.25e9 = 1.599976e-4 s (eq. 16)
                   theta = 0.5 -> 9.99988e-5 s
    AG = 9.99988e-5 + 4 * ceil(1) * (1e-4 + 1e-9 * 5e4) = 6.999988e-4 s (eqs. 14, 18)
    step (no pipelines, sigma = 0) = 0.05 + 0.1 + 0.2 + 0.0801 + 6.999988e-4 + 0.0801 + 0.01
                                   = 0.5208999988 s
"""

import dataclasses
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, special, stats

from perfmodel import gst
from perfmodel.errors import Infeasible, SpecError
from perfmodel.gst import (
    GST,
    Empirical,
    aggregation_delay,
    aggregation_delay_max,
    aggregation_delay_min,
    aggregation_granularity,
    aggregation_time,
    barrier_forward_time,
    barrier_links,
    barrier_time,
    best_compression_ratio,
    blom_max_normal,
    bottleneck_evaluation,
    clark_expected_max,
    communication_time,
    compression_time,
    epoch_time,
    expected_epoch_time,
    expected_max,
    expected_max_normal,
    expected_max_normals,
    io_pipeline,
    layer_pipeline,
    max_aggregation_time,
    max_cdf,
    max_normal_cdf,
    max_normal_pdf,
    max_normal_ppf,
    max_normal_sf,
    max_normal_std,
    max_ppf,
    monte_carlo_epoch_time,
    non_barrier_time,
    packet_count,
    sample_max,
    speedup_ratio,
    type1_completion,
    type2_completion,
)
from perfmodel.result import Estimate
from perfmodel.specs import Cluster, Config, Profile

SQRT_PI = math.sqrt(math.pi)

#: e(n) from mpmath at 30 digits (module docstring), 20 digits kept.
MPMATH_E = {
    2: 0.56418958354775628695, 3: 0.84628437532163443042, 5: 1.1629644736405196128,
    10: 1.538752730835172856, 100: 2.5075936364416843725, 1024: 3.2482396013754123419,
    10_000: 3.8516158170666748307, 100_000: 4.3843194031075881101,
    1_000_000: 4.8628974861964627212, 100_000_000: 5.7072184756730877042,
    1_000_000_000_000: 7.1124636847674710331,
}

PROFILE = Profile(model_bytes=100e6, t_forward=0.1, t_backward=0.2, t_update=0.01, batch_size=32)
CLUSTER = Cluster(machines=16, nic_bandwidth="10Gbps", latency=1e-4)
CONFIG = Config(n_replicas=4, n_ps=2)
#: The hand sums read eq. 10 as printed: every message at line rate whatever N / K.
HAND = dict(t_io=0.05, io_pipeline=False, layer_pipeline=False, packet_size=1000.0,
            agg_a=1e-4, agg_b=1e-9, server_link="dedicated")
HAND_STEP = 0.05 + 0.1 + 0.2 + 0.0801 + 6.999988e-4 + 0.0801 + 0.01


# ------------------------------------------------------------- normal maxima

@pytest.mark.parametrize("mu,sigma", [(0.0, 1.0), (3.0, 0.5), (-2.0, 7.0), (1e3, 1e-3)])
def test_expected_max_normal_known_values(mu, sigma):
    assert expected_max_normal(1, mu, sigma) == mu
    assert expected_max_normal(2, mu, sigma) == pytest.approx(mu + sigma / SQRT_PI,
                                                              rel=1e-12, abs=1e-12 * sigma)
    assert expected_max_normal(3, mu, sigma) == pytest.approx(mu + 1.5 * sigma / SQRT_PI,
                                                              rel=1e-12, abs=1e-12 * sigma)


def test_expected_max_normal_against_mpmath_table():
    ns = np.array(list(MPMATH_E))
    got = expected_max_normal(ns)
    want = np.array(list(MPMATH_E.values()))
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)  # 1e-9 is the requirement


def test_expected_max_normal_live_mpmath():
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 25
    for n in (7, 10**6):
        nn = mp.mpf(n)
        c = -mp.sqrt(2) * mp.erfinv(2 / nn - 1)
        ref = mp.quad(lambda x, nn=nn: x * nn * mp.npdf(x) * mp.ncdf(x) ** (nn - 1),
                      [-mp.inf, c - 3, c - 1, c, c + 1, c + 3, mp.inf])
        assert expected_max_normal(n) == pytest.approx(float(ref), rel=1e-13)


def test_expected_max_normal_vectorized_and_types():
    assert type(expected_max_normal(5)) is float
    assert type(expected_max_normal(5, 1.0, 2.0)) is float
    n = np.array([[1, 2], [1024, 2]])
    out = expected_max_normal(n, mu=np.array([1.0, 2.0]), sigma=0.5)
    assert out.shape == (2, 2)
    assert out[0, 0] == 1.0 and out[0, 1] == pytest.approx(2.0 + 0.5 / SQRT_PI, rel=1e-13)
    assert out[1, 0] == pytest.approx(1.0 + 0.5 * MPMATH_E[1024], rel=1e-13)
    # a long array of iterations with a few distinct n costs a few integrations
    many = expected_max_normal(np.tile([2, 10, 100], 10_000), sigma=np.linspace(0, 1, 30_000))
    assert many.shape == (30_000,) and many[0] == 0.0
    assert expected_max_normal(10, 4.0, 0.0) == 4.0


def test_expected_max_normal_monotone_in_n():
    e = expected_max_normal(np.arange(1, 5000))
    assert np.all(np.diff(e) > 0)


@pytest.mark.parametrize("n", [1, 2, 10, 100, 1000, 10_000])
def test_expected_max_normal_monte_carlo_1e6_draws(n):
    # 10^6 seeded maxima drawn as Phi^-1(U^(1/n)) (one uniform each, see sample_max):
    # the integral must lie within a few standard errors of the sample mean.
    rng = np.random.default_rng(20240601 + n)
    u = rng.random(1_000_000) + 2.0 ** -54
    draws = special.ndtri_exp(np.log(u) / n)
    se = draws.std(ddof=1) / math.sqrt(draws.size)
    z = (draws.mean() - expected_max_normal(n)) / se
    assert abs(z) < 3.5, z
    # and the spread of the draws is the std of the maximum
    assert draws.std() == pytest.approx(max_normal_std(n), rel=5e-3)


def test_inverse_sampling_agrees_with_brute_force_maxima():
    rng = np.random.default_rng(7)
    brute = rng.standard_normal((100_000, 16)).max(axis=1)
    fast = sample_max(stats.norm(), 16, 100_000, seed=8)
    se = math.hypot(brute.std(), fast.std()) / math.sqrt(100_000)
    assert abs(brute.mean() - fast.mean()) < 4 * se
    assert abs(brute.mean() - expected_max_normal(16)) < 4 * brute.std() / math.sqrt(1e5)
    # same seed, same draws
    np.testing.assert_array_equal(sample_max(stats.norm(), 16, 10, seed=8),
                                  sample_max(stats.norm(), 16, 10, seed=8))


def test_max_normal_std_known_values():
    assert max_normal_std(1, 2.0) == pytest.approx(2.0, rel=1e-13)
    assert max_normal_std(2) == pytest.approx(math.sqrt(1 - 1 / math.pi), rel=1e-12)
    # Var(max of 3) = 1 + sqrt(3)/(2 pi) - 9/(4 pi)  (known closed form)
    assert max_normal_std(3) ** 2 == pytest.approx(1 + math.sqrt(3) / (2 * math.pi)
                                                   - 9 / (4 * math.pi), rel=1e-12)


@pytest.mark.parametrize("n", [1, 2, 37, 1024, 10**6])
def test_distribution_of_the_maximum(n):
    mu, sigma = 0.3, 0.02
    q = np.array([1e-6, 0.01, 0.5, 0.99, 1 - 1e-9])
    t = max_normal_ppf(q, n, mu, sigma)
    np.testing.assert_allclose(max_normal_cdf(t, n, mu, sigma), q, rtol=1e-9)
    np.testing.assert_allclose(max_normal_sf(t, n, mu, sigma), 1 - q, rtol=1e-6)
    # pdf integrates to 1, its mean is E[max], and it is the derivative of the cdf
    lo, hi = max_normal_ppf(1e-15, n, mu, sigma), max_normal_ppf(1 - 1e-15, n, mu, sigma)
    pdf = lambda x: max_normal_pdf(x, n, mu, sigma)  # noqa: E731
    assert integrate.quad(pdf, lo, hi, epsabs=1e-13)[0] == pytest.approx(1.0, abs=1e-9)
    mean = integrate.quad(lambda x: x * pdf(x), lo, hi, epsabs=1e-13)[0]
    assert mean == pytest.approx(expected_max_normal(n, mu, sigma), rel=1e-9)
    x, h = t[2], 1e-6 * sigma
    deriv = (max_normal_cdf(x + h, n, mu, sigma) - max_normal_cdf(x - h, n, mu, sigma)) / (2 * h)
    assert deriv == pytest.approx(pdf(x), rel=1e-6)


def test_distribution_edges():
    assert max_normal_cdf(0.0, 3) == pytest.approx(0.125, rel=1e-15)
    assert max_normal_ppf(0.0, 5) == -math.inf and max_normal_ppf(1.0, 5) == math.inf
    assert max_normal_ppf(0.3, 5, mu=2.0, sigma=0.0) == 2.0
    assert max_normal_cdf([1.0, 2.0, 3.0], 5, mu=2.0, sigma=0.0).tolist() == [0.0, 1.0, 1.0]
    # the upper tail keeps its digits: 1 - Phi(10)^1000 ~ 1000 Q(10)
    assert max_normal_sf(10.0, 1000) == pytest.approx(1000 * special.ndtr(-10.0), rel=1e-9)
    with pytest.raises(SpecError, match="sigma"):
        max_normal_pdf(0.0, 2, sigma=0.0)


def test_blom_error_is_as_stated():
    n = np.unique(np.r_[np.arange(1, 3001), np.logspace(3.4, 6, 400).round()])
    err = blom_max_normal(n) - expected_max_normal(n)
    assert err[0] == 0.0  # exact for n = 1
    assert np.abs(err).max() <= gst.BLOM_MAX_ERROR
    assert n[np.argmax(np.abs(err))] == 2 and err[1] == pytest.approx(0.0253, abs=5e-5)
    big = n >= 10
    assert np.abs(err[big]).max() < 0.0157
    assert np.abs(err[big] / expected_max_normal(n[big])).max() < 0.0052


@pytest.mark.parametrize("bad,field", [
    (dict(n=0), "n"), (dict(n=2.5), "n"), (dict(n="4"), "n"), (dict(n=np.nan), "n"),
    (dict(n=3, sigma=-1.0), "sigma"), (dict(n=3, mu=math.inf), "mu"),
    (dict(n=3, sigma=[1.0, math.nan]), "sigma"),
])
def test_expected_max_normal_rejects_bad_input(bad, field):
    with pytest.raises(SpecError) as err:
        expected_max_normal(**bad)
    assert err.value.field == field


def test_ppf_rejects_bad_probabilities():
    with pytest.raises(SpecError, match="q"):
        max_normal_ppf(1.5, 3)
    with pytest.raises(SpecError, match="q"):
        max_ppf(-0.1, stats.norm(), 3)


# ------------------------------------------------------- non-identical normals

def test_clark_two_variables_identical_and_deterministic():
    assert clark_expected_max(0.0, 1.0, 0.0, 1.0) == pytest.approx(1 / SQRT_PI, rel=1e-14)
    assert clark_expected_max(1.0, 0.0, 2.0, 0.0) == 2.0
    assert clark_expected_max(0.0, 1.0, 0.0, 1.0, rho=1.0) == pytest.approx(0.0, abs=1e-15)
    with pytest.raises(SpecError, match="rho"):
        clark_expected_max(0.0, 1.0, 0.0, 1.0, rho=2.0)


def test_non_identical_equals_clark():
    rng = np.random.default_rng(11)
    worst = 0.0
    for _ in range(120):
        m1, m2 = rng.normal(size=2) * rng.choice([0.01, 1.0, 100.0])
        s1, s2 = np.exp(rng.normal(size=2) * rng.choice([0.1, 1.0, 3.0, 6.0]))
        got = expected_max_normals([m1, m2], [s1, s2])
        want = clark_expected_max(m1, s1, m2, s2)
        worst = max(worst, abs(got - want) / max(s1, s2))
    assert worst < 1e-12  # sigma ratios up to ~1e10 among the cases


def test_non_identical_with_a_deterministic_worker():
    # E[max(X, 2)], X ~ N(1, 0.5^2): 2 + sigma (phi(d) - d Q(d)), d = 2
    d = 2.0
    want = 2.0 + 0.5 * (math.exp(-d * d / 2) / math.sqrt(2 * math.pi) - d * special.ndtr(-d))
    assert expected_max_normals([1.0, 2.0], [0.5, 0.0]) == pytest.approx(want, rel=1e-13)
    assert expected_max_normals([1.0, 2.0], [0.0, 0.0]) == 2.0


def test_non_identical_reduces_to_iid_and_counts_group_workers():
    for n in (2, 7, 1000, 10**6):
        assert expected_max_normals(0.3, 2.0, counts=n) == pytest.approx(
            expected_max_normal(n, 0.3, 2.0), rel=1e-13)
    # groups: 3 workers of one kind and 2 of another, grouped or spelled out
    grouped = expected_max_normals([0.0, 0.5], [1.0, 0.2], counts=[3, 2])
    spelled = expected_max_normals([0.0, 0.0, 0.0, 0.5, 0.5], [1.0, 1.0, 1.0, 0.2, 0.2])
    assert grouped == pytest.approx(spelled, rel=1e-13)


def test_non_identical_axis_and_rows():
    mu = np.array([[0.0, 1.0, 0.5], [2.0, 2.0, 2.0]])
    sigma = np.array([[1.0, 0.1, 0.3], [0.5, 0.5, 0.5]])
    rows = expected_max_normals(mu, sigma)
    assert rows.shape == (2,)
    assert rows[1] == pytest.approx(expected_max_normal(3, 2.0, 0.5), rel=1e-13)
    cols = expected_max_normals(mu.T, sigma.T, axis=0)
    np.testing.assert_allclose(cols, rows, rtol=1e-14)
    with pytest.raises(SpecError, match="axis"):
        expected_max_normals(mu, sigma, axis=2)
    with pytest.raises(SpecError, match="counts"):
        expected_max_normals(mu, sigma, counts=0)


def test_non_identical_against_monte_carlo():
    rng = np.random.default_rng(5)
    mu = rng.normal(1.0, 0.05, size=64)
    sigma = rng.uniform(0.001, 0.1, size=64)
    draws = (mu + sigma * rng.standard_normal((200_000, 64))).max(axis=1)
    se = draws.std() / math.sqrt(draws.size)
    assert abs(draws.mean() - expected_max_normals(mu, sigma)) < 4 * se


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(-5, 5), st.floats(0, 3)), min_size=1, max_size=6),
       st.floats(-10, 10), st.floats(0.1, 10))
def test_non_identical_properties(workers, shift, scale):
    mu = np.array([w[0] for w in workers])
    sigma = np.array([w[1] for w in workers])
    e = expected_max_normals(mu, sigma)
    tol = 1e-11 * (1 + sigma.max() + np.abs(mu).max())
    assert e >= mu.max() - tol                         # E[max] >= max E
    perm = np.random.default_rng(0).permutation(mu.size)
    assert expected_max_normals(mu[perm], sigma[perm]) == pytest.approx(e, abs=tol)
    # location-scale equivariance
    assert expected_max_normals(shift + scale * mu, scale * sigma) == pytest.approx(
        shift + scale * e, abs=scale * tol + 1e-12 * abs(shift))
    # one more worker never lowers the maximum
    assert expected_max_normals(np.r_[mu, 0.0], np.r_[sigma, 1.0]) >= e - tol


# ------------------------------------------------------------ heavier tails

@pytest.mark.parametrize("n", [1, 2, 10, 1000])
def test_expected_max_any_distribution_closed_forms(n):
    # normal, exponential (harmonic number), uniform n/(n+1), Pareto Gamma-ratio
    assert expected_max(stats.norm(2.0, 3.0), n) == pytest.approx(
        expected_max_normal(n, 2.0, 3.0), rel=1e-10)
    assert expected_max(stats.expon(), n) == pytest.approx(
        sum(1.0 / k for k in range(1, n + 1)), rel=1e-10)
    assert expected_max(stats.uniform(), n) == pytest.approx(n / (n + 1), rel=1e-10)
    for a in (1.5, 2.5):
        want = math.exp(math.lgamma(n + 1) + math.lgamma(1 - 1 / a) - math.lgamma(n + 1 - 1 / a))
        assert expected_max(stats.pareto(a), n) == pytest.approx(want, rel=1e-10)


def test_expected_max_infinite_mean():
    assert expected_max(stats.pareto(1.0), 8) == math.inf
    with pytest.raises(Infeasible, match="infinite"):
        GST(distribution=stats.pareto(0.9)).estimate(PROFILE, CLUSTER, CONFIG)


def test_empirical_exact_against_enumeration():
    sample = [0.3, 1.0, 1.0, 2.5]
    for n in (1, 2, 3):
        brute = np.mean([max(c) for c in itertools.product(sample, repeat=n)])
        assert expected_max(sample, n) == pytest.approx(brute, rel=1e-14)
        assert Empirical(sample).expected_max(n) == pytest.approx(brute, rel=1e-14)
    d = Empirical(sample)
    assert d.cdf(1.0) == 0.75 and d.ppf(0.75) == 1.0 and d.ppf(0.76) == 2.5
    assert d.isf(0.25) == 1.0 and d.mean() == pytest.approx(1.2)
    assert max_cdf(1.0, sample, 2) == pytest.approx(0.5625)
    with pytest.raises(SpecError, match="sample"):
        Empirical([])
    with pytest.raises(SpecError, match="dist"):
        expected_max("lognormal", 3)


def test_expected_max_monte_carlo_seeded():
    d = stats.lognorm(0.5, scale=0.01)
    a = expected_max(d, 100, method="mc", draws=200_000, seed=3)
    assert a == expected_max(d, 100, method="mc", draws=200_000, seed=3)
    x = sample_max(d, 100, 200_000, seed=3)
    assert abs(a - expected_max(d, 100)) < 4 * x.std() / math.sqrt(x.size)
    assert max_ppf(0.5, d, 100) == pytest.approx(np.median(x), rel=5e-3)
    assert max_cdf(max_ppf(0.99, d, 100), d, 100) == pytest.approx(0.99, rel=1e-9)


# ------------------------------------------------------ GST and epoch time

def test_gst_eq1_by_hand():
    # two iterations, two workers
    g = gst.gst(t_io=0.5, t_fp=1.0, t_bp=[2.0, 3.0], t_fc=0.25, t_ag=0.125,
                t_bc=[[0.5], [9.0]], t_up=0.0625)
    first = 0.5 + 1.0 + np.array([2.0, 3.0]) + 0.25 + 0.125
    np.testing.assert_allclose(g, [first, first + 0.5 + 0.0625])


def test_epoch_time_eq2_by_hand():
    fc = [[1.0, 2.0], [0.0, 2.0]]
    # iteration 1: max(3+1, 3+2) = 5; iteration 2: 0.5 + max(3, 5) = 5.5; tail 0.5
    assert epoch_time(t_fp=1.0, t_bp=2.0, t_fc=fc, t_bc=0.5) == 11.0
    assert epoch_time(t_fp=1.0, t_bp=2.0, t_fc=fc, t_bc=0.5, tail=False) == 10.5
    with pytest.raises(SpecError, match="t_fc"):
        epoch_time(t_fc=np.ones((2, 2, 2)))
    with pytest.raises(SpecError, match="t_bp"):
        epoch_time(t_bp=-1.0)


def test_zero_variance_reduces_to_the_deterministic_sum():
    mu = np.array([1.0, 1.5, 0.75])
    assert expected_epoch_time(mu, 0.0, 64) == pytest.approx(3.25, rel=1e-15)
    assert expected_epoch_time(mu, 0.0, 64, tail=0.5) == pytest.approx(3.75, rel=1e-15)
    # and equals eq. 2 on the same (identical-worker) times
    assert epoch_time(t_fp=mu[:, None] * np.ones((1, 64)), tail=False) == pytest.approx(3.25)


def test_expected_epoch_time_eq9():
    mu = np.linspace(0.1, 0.2, 1000)
    got = expected_epoch_time(mu, 0.01, 1024)
    assert got == pytest.approx(mu.sum() + 1000 * 0.01 * MPMATH_E[1024], rel=1e-13)
    sig = np.linspace(0.0, 0.02, 1000)
    assert expected_epoch_time(mu, sig, 8) == pytest.approx(
        mu.sum() + sig.sum() * expected_max_normal(8), rel=1e-13)
    # batches of epochs along a leading axis; iterations along axis 0
    both = expected_epoch_time(np.stack([mu, 2 * mu]), 0.01, 16)
    assert both.shape == (2,)
    assert expected_epoch_time(np.stack([mu, 2 * mu]).T, 0.01, 16, axis=0) == pytest.approx(both)


def test_expected_epoch_time_against_monte_carlo():
    mu = np.random.default_rng(1).uniform(0.1, 0.2, 200)
    want = expected_epoch_time(mu, 0.01, 256, tail=0.05)
    for method in ("workers", "inverse"):
        mean, se = monte_carlo_epoch_time(mu, 0.01, 256, replications=60, tail=0.05, seed=2,
                                          method=method)
        assert abs(mean - want) < 4 * se


def test_expected_epoch_time_with_a_distribution():
    mu = np.full(10, 0.2)
    d = stats.expon(scale=0.01)
    assert expected_epoch_time(mu, n_workers=3, distribution=d) == pytest.approx(
        2.0 + 10 * 0.01 * (1 + 1 / 2 + 1 / 3), rel=1e-10)
    with pytest.raises(SpecError, match="sigma"):
        expected_epoch_time(mu, 0.1, 3, distribution=d)


# ----------------------------------------------------------------- pipelines

def longest_path(grid):
    """Brute force: completion of the last cell of a P x L grid DAG = max over monotone paths."""
    p, l = grid.shape
    best = -math.inf
    for downs in itertools.combinations(range(p + l - 2), p - 1):
        i = j = 0
        total = grid[0, 0]
        for step in range(p + l - 2):
            if step in downs:
                i += 1
            else:
                j += 1
            total += grid[i, j]
        best = max(best, total)
    return best


def test_type1_and_type2_by_hand():
    np.testing.assert_array_equal(type1_completion([1.0, 2.0, 3.0]), [1.0, 3.0, 6.0])
    # tau = max(ready, previous) + t: 1+1, max(1.5, 2)+1, max(5, 3)+1
    np.testing.assert_array_equal(type2_completion([1.0, 1.0, 1.0], [1.0, 1.5, 5.0]),
                                  [2.0, 3.0, 6.0])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 10), st.floats(0, 30)), min_size=1, max_size=12))
def test_type2_equals_its_recurrence(pairs):
    t = np.array([p[0] for p in pairs])
    ready = np.array([p[1] for p in pairs])
    want, prev = [], -math.inf
    for ti, ri in zip(t, ready):
        prev = max(ri, prev) + ti
        want.append(prev)
    np.testing.assert_allclose(type2_completion(t, ready), want, rtol=1e-12, atol=1e-12)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 6), st.data())
def test_layer_pipeline_equals_brute_force_paths(layers, data):
    times = np.array(data.draw(st.lists(st.lists(st.floats(0, 5), min_size=layers,
                                                 max_size=layers), min_size=4, max_size=4)))
    ex = layer_pipeline(*times, order="backward")
    for name, value in ex.items():
        assert value >= 0.0, name                                  # exposed >= 0
    # completion of the last layer of process p = longest path in rows 0..p
    ends = [longest_path(times[:p + 1]) for p in range(4)]
    assert ex["bp"] == pytest.approx(times[0].sum(), abs=1e-9)
    assert ex["bp"] + ex["fc"] == pytest.approx(ends[1], abs=1e-9)
    assert ex["bp"] + ex["fc"] + ex["ag"] == pytest.approx(ends[2], abs=1e-9)
    assert sum(ex.values()) == pytest.approx(ends[3], abs=1e-9)
    # communication is hidden, never lengthened: bounded by the sequential sum
    assert sum(ex.values()) <= times.sum() + 1e-9
    # "forward" order lists the same layers reversed
    fwd = layer_pipeline(*times[:, ::-1])
    for name in ex:
        assert fwd[name] == pytest.approx(ex[name], abs=1e-12)


def test_layer_pipeline_by_hand_and_batched():
    ex = layer_pipeline([1.0, 1.0], [0.5, 0.5], [0.0, 0.0], [0.25, 0.25])
    assert ex == {"bp": 2.0, "fc": 0.5, "ag": 0.0, "bc": 0.25}
    batch = layer_pipeline(np.ones((3, 4)), 0.5, 0.1, 0.25)
    assert batch["fc"].shape == (3,)
    # one layer: nothing to overlap
    assert layer_pipeline(2.0, 0.5, 0.1, 0.25) == pytest.approx(
        {"bp": 2.0, "fc": 0.5, "ag": 0.1, "bc": 0.25}, rel=1e-14)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 5), st.floats(0, 5)), min_size=1, max_size=10))
def test_io_pipeline_equals_brute_force_paths(pairs):
    io = np.array([p[0] for p in pairs])
    dt = np.array([p[1] for p in pairs])
    e = io_pipeline(io, dt)
    assert np.all(e >= 0) and e[0] == io[0]
    end = longest_path(np.stack([io, dt]))  # IO row then DT row
    assert (e + dt).sum() == pytest.approx(end, abs=1e-9)


def test_io_pipeline_steady_state():
    np.testing.assert_allclose(io_pipeline([2.0] * 4, [1.0] * 4), [2.0, 1.0, 1.0, 1.0])
    np.testing.assert_allclose(io_pipeline([1.0] * 4, [2.0] * 4), [1.0, 0.0, 0.0, 0.0])


# ------------------------------------------------------------------- network

def test_barrier_links():
    assert barrier_links(8, 2) == ("ps", 2)
    assert barrier_links(2, 2) == ("workers", 2)
    assert barrier_links(2, 5) == ("workers", 2)
    with pytest.raises(SpecError, match="n_ps"):
        barrier_links(2, 0)


def test_network_equations_by_hand():
    assert packet_count(100e6, 1000) == 1e5
    assert packet_count(1001, 1000) == 2.0
    # eq. 10
    assert non_barrier_time(1e5, 1.25e9, 1000, 1e-4) == pytest.approx(0.0801, rel=1e-14)
    assert non_barrier_time(1e5, 1.25e9, 1000, 0.0, alpha=1.5) == pytest.approx(0.12)
    # eq. 11 printed: 1 / (S_f - 1/B); sound: 1 / (S_f - B / pks)
    assert barrier_forward_time(1e6, 1.25e9) == pytest.approx(1 / (1e6 - 1 / 1.25e9))
    assert barrier_forward_time(2e6, 1.25e9, units="sound", packet_size=1250) == \
        pytest.approx(1e-6)
    assert barrier_forward_time(2e6, 1.25e9, units="sound", arrival_rate=1.5e6) == \
        pytest.approx(2e-6)
    assert barrier_forward_time(1e6, 1.25e9, units="sound", packet_size=1250) == math.inf
    # eq. 12
    assert barrier_time(2e6, 1.25e9, 3, units="sound", packet_size=1250) == pytest.approx(3e-6)
    assert barrier_time(2e6, 1.25e9, 0) == 0.0
    # eqs. 10 + 12
    assert communication_time(1e5, 1.25e9, packet_size=1000, base_delay=1e-4, switch_rate=2e6,
                              hops=2, units="sound", arrival_rate=1e6) == \
        pytest.approx(0.0801 + 2e-6)
    assert communication_time(0, 1.25e9, base_delay=1e-4) == 0.0
    # eqs. 13-16
    assert aggregation_granularity(1e5, 2) == 5e4
    assert aggregation_time(5e4, 1e-4, 1e-9) == pytest.approx(1.5e-4)
    assert aggregation_delay_min(5e4, 1.25e9) == pytest.approx(4e-5)
    assert aggregation_delay_max(5e4, 4, 1.25e9) == pytest.approx(1.599976e-4)
    assert aggregation_delay_min(5e4, 1.25e9, units="sound", packet_size=1000) == \
        pytest.approx(0.04)
    assert aggregation_delay_max(5e4, 4, 1.25e9, units="sound", packet_size=1000) == \
        pytest.approx(0.1599976)
    assert aggregation_delay(5e4, 4, 1.25e9, 0.0) == pytest.approx(4e-5)
    assert aggregation_delay(5e4, 4, 1.25e9, 1.0) == pytest.approx(1.599976e-4)
    assert aggregation_delay(5e4, 4, 1.25e9) == pytest.approx(9.99988e-5)
    assert aggregation_delay_max(0.5, 4, 1.0) == aggregation_delay_min(0.5, 1.0)  # G < 1
    # eq. 18: delay + N ceil(PN / (G K)) (a + b G)
    assert max_aggregation_time(1e5, 4, 2, 1.25e9, 1e-4, 1e-9) == pytest.approx(6.999988e-4)
    given_g = max_aggregation_time(1e5, 4, 2, 1.25e9, 1e-4, 1e-9, granularity=3e4, theta=0.0)
    assert given_g == pytest.approx(3e4 / 1.25e9 + 4 * 2 * (1e-4 + 3e-5))  # ceil(1e5/6e4) = 2
    assert max_aggregation_time(0, 4, 2, 1.25e9, 1e-4, 1e-9) == 0.0
    with pytest.raises(SpecError, match="theta"):
        aggregation_delay(5e4, 4, 1.25e9, 1.5)
    with pytest.raises(SpecError, match="units"):
        aggregation_delay_min(5e4, 1.25e9, units="si")


@settings(max_examples=60, deadline=None)
@given(st.floats(0, 1e6), st.integers(1, 1000), st.floats(1e6, 1e11), st.floats(0, 1),
       st.sampled_from(gst.UNITS))
def test_aggregation_delay_between_its_extremes(g, n, bw, theta, units):
    lo = aggregation_delay_min(g, bw, units=units)
    hi = aggregation_delay_max(g, n, bw, units=units)
    mid = aggregation_delay(g, n, bw, theta, units=units)
    assert lo <= hi * (1 + 1e-12)
    assert lo * (1 - 1e-12) <= mid <= hi * (1 + 1e-12)


# --------------------------------------------------------------- the model

def test_model_zero_variance_is_the_hand_sum():
    est = GST(**HAND).estimate(PROFILE, CLUSTER, CONFIG)
    assert isinstance(est, Estimate)
    assert est.step_time == pytest.approx(HAND_STEP, rel=1e-12)
    assert dict(est.phases) == pytest.approx({"input": 0.05, "forward": 0.1, "backward": 0.2,
                                              "uplink": 0.0801, "aggregate": 6.999988e-4,
                                              "downlink": 0.0801, "update": 0.01,
                                              "straggler": 0.0}, rel=1e-12)
    assert est.meta["terms"]["uplink"] == "FC" and est.meta["terms"]["downlink"] == "BC"
    assert est.bottleneck == "backward"
    assert est.throughput == pytest.approx(4 * 32 / HAND_STEP)
    assert est.meta["p50"] == pytest.approx(HAND_STEP)
    assert est.meta["p99"] == pytest.approx(HAND_STEP)
    assert est.meta["barrier_links"] == "ps" and est.meta["n_barrier_links"] == 2
    assert est.meta["comm_comp_ratio"] == pytest.approx((0.1602 + 6.999988e-4) / 0.31)


def test_model_shared_server_link_by_hand():
    """4 workers on 2 servers: each server's link carries 2 workers' shares, both ways."""
    shared = GST(**dict(HAND, server_link="shared")).estimate(PROFILE, CLUSTER, CONFIG)
    # eq. 10: 1e-4 s base delay + 2 x 100,000 packets x 1000 B / 1.25 GB/s
    assert shared.phases["uplink"] == pytest.approx(1e-4 + 0.16, rel=1e-12)
    assert shared.phases["downlink"] == pytest.approx(1e-4 + 0.16, rel=1e-12)
    assert shared.step_time == pytest.approx(HAND_STEP + 2 * 0.08, rel=1e-12)
    # As many servers as workers: the worker's own link is the barrier, nothing changes.
    even = CONFIG.replace(n_ps=4)
    assert GST(**dict(HAND, server_link="shared")).estimate(PROFILE, CLUSTER, even).phases[
        "uplink"] == pytest.approx(GST(**HAND).estimate(PROFILE, CLUSTER, even).phases["uplink"])
    with pytest.raises(SpecError, match="server_link"):
        GST(server_link="fair")


def test_model_straggler_percentiles():
    sigma = 0.02
    est = GST(sigma=sigma, **HAND).estimate(PROFILE, CLUSTER, CONFIG)
    assert est.phases["straggler"] == pytest.approx(sigma * expected_max_normal(4), rel=1e-13)
    assert est.step_time == pytest.approx(HAND_STEP + sigma * expected_max_normal(4))
    assert est.meta["p50"] == pytest.approx(HAND_STEP + max_normal_ppf(0.5, 4, 0.0, sigma))
    assert est.meta["p99"] == pytest.approx(HAND_STEP + max_normal_ppf(0.99, 4, 0.0, sigma))
    assert est.meta["p50"] < est.step_time < est.meta["p99"]
    # cv adds sigma proportional to the worker-side mean (everything but AG)
    mean = HAND_STEP - 6.999988e-4
    cv = GST(cv=0.1, **HAND).estimate(PROFILE, CLUSTER, CONFIG)
    assert cv.meta["sigma"] == pytest.approx(0.1 * mean)
    # one worker: no straggler
    one = GST(sigma=sigma, **HAND).estimate(PROFILE, CLUSTER, CONFIG.replace(n_replicas=1))
    assert one.phases["straggler"] == 0.0


def test_model_epoch_time_eq9_by_hand():
    cfg = CONFIG.replace(epoch_samples=1280)           # 10 iterations of 4 x 32 samples
    est = GST(**HAND).estimate(PROFILE, CLUSTER, cfg)
    assert est.meta["iterations"] == 10
    # GST(1) has no previous BC and UP (eq. 1); eq. 9 without the tail term
    assert est.epoch_time == pytest.approx(10 * HAND_STEP - 0.0801 - 0.01, rel=1e-12)
    tailed = GST(tail=True, **HAND).estimate(PROFILE, CLUSTER, cfg)
    assert tailed.epoch_time == pytest.approx(10 * HAND_STEP, rel=1e-12)
    # with the IO pipeline IO hides after the first iteration
    piped = GST(**dict(HAND, io_pipeline=True)).estimate(PROFILE, CLUSTER, cfg)
    assert piped.phases["input"] == 0.0
    assert piped.epoch_time == pytest.approx(10 * (HAND_STEP - 0.05) + 0.05 - 0.0901, rel=1e-12)


def test_model_pipelines_and_layers():
    base = dict(HAND, layer_pipeline=True)
    one = GST(**base).estimate(PROFILE, CLUSTER, CONFIG)
    assert one.step_time == pytest.approx(HAND_STEP, rel=1e-12)  # one bucket: no overlap
    many = GST(**dict(base, layers=10)).estimate(PROFILE, CLUSTER, CONFIG)
    assert many.step_time < one.step_time
    assert all(v >= 0 for v in many.phases.values())
    assert sum(many.phases.values()) == pytest.approx(many.step_time)
    # relative layer sizes in forward order: the last (output) layer is sent first
    weighted = GST(**dict(base, layers=(1, 1, 8))).estimate(PROFILE, CLUSTER, CONFIG)
    assert weighted.phases["backward"] == pytest.approx(0.2)
    assert GST(layers=4).layers == 4 and GST(layers=[1, 3]).layers == (0.25, 0.75)


def test_model_units_and_network_options():
    printed = GST(**HAND).estimate(PROFILE, CLUSTER, CONFIG)
    sound = GST(units="sound", **HAND).estimate(PROFILE, CLUSTER, CONFIG)
    # sound: delay (0.04 + 0.1599976) / 2 = 0.0999988 s instead of 9.99988e-5 s
    assert sound.phases["aggregate"] == pytest.approx(0.0999988 + 6e-4, rel=1e-12)
    assert sound.step_time > printed.step_time
    queued = GST(switch_rate=1e6, hops=2, **HAND).estimate(PROFILE, CLUSTER, CONFIG)
    assert queued.phases["uplink"] == pytest.approx(0.0801 + 2 / (1e6 - 1 / 1.25e9))
    with pytest.raises(Infeasible, match="unstable"):
        GST(switch_rate=1e5, units="sound", **HAND).estimate(PROFILE, CLUSTER, CONFIG)
    own = GST(base_delay=0.0, **HAND).estimate(PROFILE, CLUSTER, CONFIG)
    assert own.phases["uplink"] == pytest.approx(0.08)


def test_model_with_a_heavy_tailed_distribution():
    d = stats.lognorm(1.0, scale=0.01)
    est = GST(distribution=d, **HAND).estimate(PROFILE, CLUSTER, CONFIG)
    assert est.phases["straggler"] == pytest.approx(expected_max(d, 4), rel=1e-12)
    assert est.meta["p99"] == pytest.approx(HAND_STEP + max_ppf(0.99, d, 4), rel=1e-12)
    mc = GST(distribution=d, method="mc", draws=100_000, seed=1, **HAND)
    assert mc.estimate(PROFILE, CLUSTER, CONFIG).step_time == pytest.approx(est.step_time,
                                                                            rel=2e-3)
    sample = GST(distribution=[0.0, 0.01, 0.05], **HAND).estimate(PROFILE, CLUSTER, CONFIG)
    assert sample.phases["straggler"] == pytest.approx(expected_max([0.0, 0.01, 0.05], 4))
    with pytest.raises(SpecError, match="sigma"):
        GST(sigma=0.1, distribution=d)


def test_model_rejects_what_it_cannot_model():
    with pytest.raises(Infeasible, match="data-parallel"):
        GST().estimate(PROFILE, CLUSTER, Config(n_workers=2, n_replicas=2))
    with pytest.raises(Infeasible, match="sync"):
        GST().estimate(PROFILE, CLUSTER, Config(n_replicas=2, mode="async"))
    with pytest.raises(SpecError) as err:
        GST().estimate(PROFILE, CLUSTER, Config(n_replicas=2, n_ps=0))
    assert err.value.field == "config.n_ps"
    with pytest.raises(SpecError, match="workload"):
        GST().estimate("resnet", CLUSTER, CONFIG)


@pytest.mark.parametrize("bad,field", [
    (dict(sigma=-1.0), "sigma"), (dict(theta=1.5), "theta"), (dict(units="si"), "units"),
    (dict(layers=0), "layers"), (dict(layers=[]), "layers"), (dict(hops=-1), "hops"),
    (dict(compression_ratio=1.0), "compression_ratio"), (dict(packet_size=0.0), "packet_size"),
    (dict(io_pipeline="yes"), "io_pipeline"), (dict(method="exact"), "method"),
    (dict(sigma=[0.1, 0.2]), "sigma"),
])
def test_model_options_are_validated(bad, field):
    with pytest.raises(SpecError) as err:
        GST(**bad)
    assert err.value.field == field


def test_model_is_frozen_and_works_with_the_optimizer():
    from optimizer.search import search

    model = GST(sigma=0.005, units="sound", layers=8)
    with pytest.raises(dataclasses.FrozenInstanceError):
        model.sigma = 1.0
    hash(model)
    result = search(model, PROFILE, CLUSTER, machines=12)
    assert result.n_evaluated == sum(12 - k for k in range(1, 12))
    best = result.best.estimate
    assert best.meta["p99"] >= best.step_time
    for cand in result.ranked:
        assert cand.estimate.throughput <= best.throughput * (1 + 1e-12)


# --------------------------------------------------------------- use cases

def test_compression_time_inverse_square():
    assert compression_time(0.0, 0.01) == 0.01
    assert compression_time(0.5, 0.01) == pytest.approx(0.04)
    assert compression_time(0.9, 0.01, exponent=1.0) == pytest.approx(0.1)
    with pytest.raises(SpecError, match="ratio"):
        compression_time(1.0, 0.01)


def test_gradient_compression_fig6_optimum_is_0_6():
    # Assumed parameters: 100 MB model, 10 Gbps, 4 workers, 1 server, sound units,
    # no layer pipeline.  Communication FC + AG + BC at r = 0 is A = 0.36 s and the
    # step is const + A (1 - r) + t0 / (1 - r)^2, minimal at (1 - r)^3 = 2 t0 / A:
    # t0 = 0.032 A = 11.52 ms puts the optimum at r = 0.6, as in Fig. 6.
    cluster = Cluster(machines=8, nic_bandwidth="10Gbps")
    config = Config(n_replicas=4, n_ps=1)
    model = GST(units="sound", layer_pipeline=False, compression_time=0.01152,
                server_link="dedicated")
    res = best_compression_ratio(model, PROFILE, cluster, config)
    assert res["best"] == pytest.approx(0.6, abs=2e-3)
    times = res["step_times"]
    i = int(np.argmin(times))
    assert res["ratios"][i] == pytest.approx(0.6, abs=0.011)
    assert np.all(np.diff(times[:i]) < 0) and np.all(np.diff(times[i:]) > 0)  # Fig. 6 shape
    assert res["step_time"] <= times.min()


def test_bottleneck_evaluation_fig5_trends():
    model = GST(units="sound", sigma=0.002, layers=8)
    out = bottleneck_evaluation(model, PROFILE, CLUSTER, Config(n_replicas=2, n_ps=1),
                                bandwidths=[1.25e8, 1.25e9, 1.25e10],
                                compute_speedups=[1.0, 4.0])
    speed, ratio = out["speedup"], out["comm_comp_ratio"]
    assert speed.shape == ratio.shape == (3, 2)
    assert np.all(speed <= 2.0 + 1e-12) and np.all(speed > 0)
    assert np.all(np.diff(speed, axis=0) >= -1e-12)       # more bandwidth, more speedup
    assert np.all(np.diff(ratio, axis=0) < 0)              # ... and less communication
    assert np.all(ratio[:, 1] > ratio[:, 0])              # faster compute: comm dominates more
    assert speedup_ratio(1.0, 1.25, 4) == pytest.approx(3.2)
