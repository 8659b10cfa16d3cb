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
