"""Estimate: phases sum to the step time, bottleneck is the longest phase, no NaN."""

import math

import pytest

from perfmodel.result import Estimate


def test_from_phases_by_hand():
    # phases 10 + 30 + 20 ms; 4 workers x 32 samples = 128 samples per step
    est = Estimate.from_phases({"downlink": 0.01, "compute": 0.03, "uplink": 0.02}, 128,
                               epoch_samples=1280)
    assert est.step_time == pytest.approx(0.06)
    assert est.throughput == pytest.approx(128 / 0.06)
    assert est.bottleneck == "compute"
    assert est.epoch_time == pytest.approx(1280 / (128 / 0.06))  # = 10 steps = 0.6 s
    assert est.to_dict()["epoch_time"] == pytest.approx(0.6)


def test_phases_must_sum_to_step_time():
    with pytest.raises(ValueError, match="sum"):
        Estimate(step_time=1.0, throughput=1.0, phases={"a": 0.4})


@pytest.mark.parametrize("bad", [math.nan, math.inf, -1.0])
def test_no_nan_or_negative(bad):
    with pytest.raises(ValueError):
        Estimate(step_time=bad, throughput=1.0)


def test_phases_are_read_only():
    est = Estimate.from_phases({"a": 1.0}, 1)
    with pytest.raises(TypeError):
        est.phases["a"] = 2.0


def test_interval_is_checked_and_maps_to_step_time():
    est = Estimate.from_phases({"compute": 0.5}, 100)  # 200 samples/s
    with_bar = est.with_interval(150.0, 250.0, level=0.9, source="residuals")
    assert with_bar.throughput_interval == (150.0, 250.0)
    # 100 samples per step: 100/250 = 0.4 s and 100/150 = 0.667 s
    assert with_bar.step_time_interval == pytest.approx((0.4, 100 / 150))
    assert with_bar.meta["interval_level"] == 0.9
    assert with_bar.to_dict()["throughput_interval"] == [150.0, 250.0]
    assert est.throughput_interval is None and est.step_time_interval is None
    # a one-sided bar is widened to contain the point estimate
    assert est.with_interval(210.0, 260.0, level=0.9, source="x").throughput_interval == (200.0, 260.0)


@pytest.mark.parametrize("pair", [(250.0, 150.0), (-1.0, 300.0), (100.0, float("nan")), (1.0,)])
def test_bad_interval_is_rejected(pair):
    with pytest.raises(ValueError, match="throughput_interval"):
        Estimate(step_time=0.5, throughput=200.0, throughput_interval=pair)
