"""Tests of perfmodel.baselines: Lin et al., Cynthia, Optimus.

Running example: M = 100 MB, B = 10 Gbps -> M/B = 0.08 s, T_F = 0.1 s,
T_B = 0.2 s, T_S = 0.01 s, batch 32.
"""

import numpy as np
import pytest

from perfmodel.baselines import (
    Cynthia,
    LinAsync,
    Optimus,
    cynthia_throughput,
    fit_optimus,
    optimus_speed,
)
from perfmodel.errors import Infeasible, SpecError
from perfmodel.queueing import AsyncMVA, async_solve
from perfmodel.specs import Cluster, Config, Profile

M, B, TF, TB, TS = 100e6, 1.25e9, 0.1, 0.2, 0.01
PROFILE = Profile(model_bytes=M, t_forward=TF, t_backward=TB, t_update=TS, batch_size=32)
CLUSTER = Cluster(machines=32, nic_bandwidth="10Gbps")


# ---------------------------------------------------------------- Lin et al.

@pytest.mark.parametrize("k", [1, 3, 8])
def test_lin_is_seed003_without_overlap(k):
    cfg = Config(n_replicas=k)
    lin = LinAsync().estimate(PROFILE, CLUSTER, cfg)
    ours = AsyncMVA(overlap=False).estimate(PROFILE, CLUSTER, cfg)
    assert lin.throughput == pytest.approx(ours.throughput, rel=1e-12)
    assert dict(lin.phases) == pytest.approx(dict(ours.phases))
    # the overlap correction of Li et al. 2022 predicts more
    assert AsyncMVA(overlap=True).estimate(PROFILE, CLUSTER, cfg).throughput >= lin.throughput


def test_lin_with_measured_link_durations():
    lin = LinAsync(t_downlink=0.05, t_uplink=0.12)
    one = lin.estimate(PROFILE, CLUSTER, Config(n_replicas=1))
    # K = 1: 0.05 + 0.1 + 0.2 + 0.12 + 0.01 = 0.48 s
    assert one.step_time == pytest.approx(0.48)
    assert one.phases["downlink"] == pytest.approx(0.05)
    assert one.phases["uplink"] == pytest.approx(0.12)
    four = lin.estimate(PROFILE, CLUSTER, Config(n_replicas=4, n_ps=2))
    sol = async_solve(M, B, TF, TB, TS, 4, n_ps=2, t_uplink=0.12, t_downlink=0.05)
    assert four.meta["steps_per_second"] == pytest.approx(sol.throughput)


def test_lin_bad_options():
    with pytest.raises(SpecError, match="t_uplink"):
        LinAsync(t_uplink=-1.0)
    with pytest.raises(SpecError, match="discipline"):
        LinAsync(discipline="random")
    with pytest.raises(Infeasible):
        LinAsync().estimate(PROFILE, CLUSTER, Config(n_workers=2))


# ---------------------------------------------------------------- Cynthia

def test_cynthia_formula_by_hand():
    # U_1 = 2 T_C / (T_P + 2 T_C) = 0.16 / 0.46; W = 4: W U_1 = 1.3913 > 1
    u1 = 0.16 / 0.46
    assert cynthia_throughput(0.3, 0.08, 1, 32) == pytest.approx(32 / 0.46)
    assert cynthia_throughput(0.3, 0.08, 4, 32) == pytest.approx(4 * 32 / (0.3 * 4 * u1 + 0.16))
    # a measured U_1
    assert cynthia_throughput(0.3, 0.08, 4, 1, utilization=0.5) == pytest.approx(
        4 / (0.3 * 2 + 0.16))
    # Li et al. 2020's variant: T_C halved (and U_1 with it)
    u_half = 0.08 / 0.38
    assert cynthia_throughput(0.3, 0.08, 8, 1, split_links=True) == pytest.approx(
        8 / (0.3 * 8 * u_half + 0.08))
    # several servers divide the load
    assert cynthia_throughput(0.3, 0.08, 4, 1, n_ps=2) == pytest.approx(
        4 / (0.3 * max(1, 2 * u1) + 0.16))


def test_cynthia_broadcasts_and_saturates():
    x = cynthia_throughput(0.3, 0.08, np.arange(1, 65))
    assert x.shape == (64,)
    assert np.all(np.diff(x) > 0)
    # W -> inf: W / (T_P W U_1) -> 1 / (T_P U_1)
    assert x[-1] < 1 / (0.3 * 0.16 / 0.46)


def test_cynthia_estimate():
    est = Cynthia().estimate(PROFILE, CLUSTER, Config(n_replicas=8))
    x = cynthia_throughput(TF + TB, M / B, 8, 32)
    assert est.throughput == pytest.approx(x)
    assert sum(est.phases.values()) == pytest.approx(est.step_time)
    assert est.bottleneck == "network"
    assert Cynthia().estimate(PROFILE, CLUSTER, Config(n_replicas=1)).bottleneck == "compute"
    with pytest.raises(SpecError, match="utilization"):
        Cynthia(utilization=2.0)


@pytest.mark.parametrize("kwargs,field", [
    ({"t_process": -1}, "t_process"), ({"t_comm": float("nan")}, "t_comm"),
    ({"workers": 0}, "workers"), ({"batch_size": 0}, "batch_size"),
    ({"utilization": 1.5}, "utilization"), ({"split_links": "no"}, "split_links"),
])
def test_cynthia_bad_input(kwargs, field):
    args = dict(t_process=0.3, t_comm=0.08, workers=2)
    args.update(kwargs)
    with pytest.raises(SpecError) as err:
        cynthia_throughput(**args)
    assert err.value.field == field


# ---------------------------------------------------------------- Optimus

W = np.array([1, 2, 4, 8, 1, 2, 4, 8, 3, 6])
P = np.array([1, 1, 1, 1, 2, 2, 2, 2, 3, 3])


def test_optimus_formulas_by_hand():
    # sync: 1 / (a M/w + b + c w/p + d w + e p) with M = 32, w = 2, p = 1
    c = [0.01, 0.1, 0.05, 0.002, 0.003]
    assert optimus_speed(c, 2, 1, "sync", 32) == pytest.approx(
        1 / (0.16 + 0.1 + 0.1 + 0.004 + 0.003))
    # async: w / (a + b w/p + c w + d p)
    c = [0.3, 0.04, 0.001, 0.002]
    assert optimus_speed(c, 4, 2, "async") == pytest.approx(4 / (0.3 + 0.08 + 0.004 + 0.004))
    grid = optimus_speed(c, W[:, None], P[None, :], "async")
    assert grid.shape == (10, 10)


@pytest.mark.parametrize("mode,truth", [
    ("sync", [0.004, 0.08, 0.03, 0.002, 0.005]),
    ("async", [0.3, 0.05, 0.003, 0.004]),
])
def test_optimus_fit_recovers_coefficients(mode, truth):
    x = optimus_speed(truth, W, P, mode, global_batch=64 if mode == "sync" else None)
    fit = fit_optimus(W, P, x, mode, global_batch=64 if mode == "sync" else None)
    assert np.allclose(fit.coefficients, truth, rtol=1e-6, atol=1e-9)
    assert fit.train_error < 1e-8
    # with 2 % multiplicative noise (seeded), predictions stay within a few percent
    rng = np.random.default_rng(0)
    noisy = x * rng.normal(1.0, 0.02, len(x))
    fit = Optimus.fit(W, P, noisy, mode, global_batch=64 if mode == "sync" else None)
    assert np.allclose(fit.speed(W, P), x, rtol=0.06)
    assert all(c >= 0 for c in fit.coefficients)


def test_optimus_underdetermined_fit_is_deterministic():
    w, p = [1, 2, 1, 2], [1, 1, 2, 2]
    y = [15.8, 15.4, 28.7, 27.3]
    a = fit_optimus(w, p, y, "sync", 32)
    b = fit_optimus(w, p, y, "sync", 32)
    assert a == b
    assert np.all(np.isfinite(a.speed(W, P)))
    # these speeds (ResNet-50 of the DL2 data) need c w/p to fall by half from
    # p = 1 to 2 yet by less than e p rises: no non-negative fit is exact.
    assert 0 < a.train_error < 0.2
    assert all(c >= 0 for c in a.coefficients)


def test_optimus_estimate():
    m = Optimus((0.01, 0.1, 0.05, 0.0, 0.0), "sync", global_batch=32)
    est = m.estimate(PROFILE, CLUSTER, Config(n_replicas=2))
    assert est.step_time == pytest.approx(0.36)
    assert est.throughput == pytest.approx(32 / 0.36)
    # global batch from the profile when not fixed
    est = Optimus((0.01, 0.1, 0.05, 0.0, 0.0)).estimate(PROFILE, CLUSTER, Config(n_replicas=4))
    assert est.phases["compute"] == pytest.approx(0.01 * 32)
    assert est.throughput == pytest.approx(128 / est.step_time)
    a = Optimus((0.3, 0.04, 0.001, 0.002), "async")
    est = a.estimate(PROFILE, CLUSTER, Config(n_replicas=4, n_ps=2))
    assert est.throughput == pytest.approx(32 * optimus_speed(a.coefficients, 4, 2, "async"))


def test_optimus_bad_input():
    with pytest.raises(SpecError, match="coefficients"):
        Optimus((1.0, 2.0), "sync")
    with pytest.raises(SpecError, match="coefficients"):
        Optimus((1.0, -2.0, 0, 0), "async")
    with pytest.raises(SpecError, match="mode"):
        Optimus((1.0,) * 5, "semi")
    with pytest.raises(SpecError, match="speed"):
        fit_optimus([1, 2], [1], [1.0, 2.0])
    with pytest.raises(SpecError, match="speed"):
        fit_optimus([1, 2], [1, 1], [1.0, 0.0])
    with pytest.raises(SpecError, match="global_batch"):
        optimus_speed((1.0,) * 5, 1, 1, "sync", global_batch=-3)
    with pytest.raises(SpecError, match="n_ps"):
        Optimus((1.0,) * 5).estimate(PROFILE, CLUSTER, Config(n_replicas=2, n_ps=0))
