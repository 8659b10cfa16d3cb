"""The interval's growth beyond the calibration runs rises with how much the compute varies."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from perfmodel import zoo
from perfmodel.errors import SpecError
from perfmodel.fit.level import Leveled
from perfmodel.fit.selection import (
    COMPUTE_CV_GROWTH,
    EXTRAPOLATION_GROWTH,
    default_candidates,
    draws_compute_spread,
    extrapolation_growth,
    select_model,
)
from perfmodel.gst.maxima import expected_max_normal
from perfmodel.measurements import Measurement
from perfmodel.queueing import AsyncMVA
from perfmodel.sim.model import TraceSim
from perfmodel.specs import Config


def test_growth_worked_by_hand():
    # hypot(0.03, 0.5 c): steady compute 0.03; c = 0.1: sqrt(0.03^2 + 0.05^2) = 0.0583095;
    # c = 0.3: sqrt(0.03^2 + 0.15^2) = 0.1529706
    assert EXTRAPOLATION_GROWTH == {"sync": 0.03, "async": 0.03} and COMPUTE_CV_GROWTH == 0.5
    assert extrapolation_growth("sync") == 0.03
    assert extrapolation_growth("sync", 0.1) == pytest.approx(0.0583095, abs=1e-7)
    assert extrapolation_growth("async", 0.3) == pytest.approx(0.1529706, abs=1e-7)


def test_the_cv_growth_is_about_the_expected_maximums():
    # the expected maximum of K standard normals rises by 1.766 - 0.564 from 2 to 16
    # workers, 0.578 per e-fold of K: the growth per unit CV of a step of compute alone;
    # a step with transfers in it grows less, so the constant sits at or below it
    per_efold = (expected_max_normal(16) - expected_max_normal(2)) / math.log(8)
    assert per_efold == pytest.approx(0.578, abs=0.002)
    assert 0.4 * per_efold < COMPUTE_CV_GROWTH <= per_efold


@given(mode=st.sampled_from(["sync", "async"]),
       a=st.floats(0, 3, allow_nan=False), b=st.floats(0, 3, allow_nan=False))
def test_growth_rises_with_the_cv_from_the_steady_floor(mode, a, b):
    lo, hi = sorted((a, b))
    assert EXTRAPOLATION_GROWTH[mode] <= extrapolation_growth(mode, lo) \
        <= extrapolation_growth(mode, hi) <= EXTRAPOLATION_GROWTH[mode] + COMPUTE_CV_GROWTH * hi


@pytest.mark.parametrize("mode, cv", [("both", 0.1), ("sync", -0.1), ("sync", math.nan)])
def test_growth_refuses_bad_input(mode, cv):
    with pytest.raises(SpecError):
        extrapolation_growth(mode, cv)


def test_selection_widens_the_interval_by_the_jobs_compute_cv():
    # the same two runs: the job whose compute varies gets the wider interval at 16
    # workers, by hypot(h, g ln 8) with g = hypot(0.03, 0.5 c), and the same prediction
    profile = zoo.profile("resnet50-pipedream").replace(t_update=0.02)
    cluster = zoo.cluster("aws-p3.2xlarge").replace(machines=32)
    model = AsyncMVA()
    runs = [Measurement(k, 1, cluster.nic_bandwidth, model.estimate(profile, cluster, Config(
        n_replicas=k, n_ps=1, mode="async")).throughput, mode="async") for k in (1, 2)]
    config = Config(n_replicas=16, n_ps=1, mode="async")
    widths, speeds = [], []
    for cv in (0.0, 0.3):
        chosen = select_model(profile, cluster, runs, compute_cv=cv, simulate=False).chosen
        assert chosen.growth == pytest.approx(extrapolation_growth("async", cv), rel=1e-12)
        assert chosen.halfwidth_at(16) == pytest.approx(
            math.hypot(chosen.halfwidth, chosen.growth * math.log(8)), rel=1e-12)
        est = chosen.estimate(profile, cluster, config)
        low, high = est.throughput_interval
        widths.append(math.log(high / low))
        assert ("pulls away" in chosen.why) == (cv > 0)
        speeds.append(est.throughput)
    assert widths[1] > widths[0] and np.isclose(speeds[0], speeds[1], rtol=1e-12)


@pytest.mark.parametrize("name, drawn", [("sim-ps", True), ("sync-ps", False)])
def test_a_model_that_draws_the_spread_need_not_widen_for_it(name, drawn):
    # the simulator samples every worker's compute (CV 0.3), so its sync step already
    # waits for the slowest of K: without widen_drawn_spread its growth is the steady
    # 0.03; a closed form (mean compute) widens by hypot(0.03, 0.15) either way
    profile = zoo.profile("resnet50-pipedream").replace(t_update=0.02)
    cluster = zoo.cluster("aws-p3.2xlarge").replace(machines=32, compute_cv=0.3)
    cand = next(c for c in default_candidates("sync", simulate=True) if c.name == name)
    assert draws_compute_spread(cand.model) == drawn
    runs = [Measurement(k, 1, cluster.nic_bandwidth, speed, mode="sync")
            for k, speed in ((1, 50.0), (2, 90.0))]
    growths, speeds = {}, {}
    for widen in (True, False):
        chosen = select_model(profile, cluster, runs, candidates=[cand], mode="sync",
                              compute_cv=0.3, widen_drawn_spread=widen).chosen
        growths[widen] = chosen.growth
        speeds[widen] = chosen.estimate(profile, cluster, Config(n_replicas=8)).throughput
        assert ("is in its prediction" in chosen.why) == (drawn and not widen)
    assert growths[True] == pytest.approx(0.1529706, abs=1e-7)
    assert growths[False] == pytest.approx(0.03 if drawn else 0.1529706, abs=1e-7)
    assert speeds[True] == speeds[False]   # the interval changes, not the prediction


def test_draws_compute_spread_looks_inside_a_leveled_model():
    assert draws_compute_spread(Leveled(TraceSim(), 1.1))
    assert not draws_compute_spread(Leveled(TraceSim(jitter=0.0), 1.1))
    assert not draws_compute_spread(Leveled(AsyncMVA(), 1.1))
