"""Async workers partly in lock-step on one or two servers (``PartlyLocked``).

The step is the geometric mean of the MVA's (drifted-apart workers) and lock-step's,
the MVA's weight ``(1 + min(1, K T_S B / M)) / 2``.  Checked by hand, as bounds
between its two ends, against the MVA where it must be the MVA, and through
``select_model(partly_locked=True)``.
"""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfmodel.coarse import LockStep
from perfmodel.errors import Infeasible, SpecError
from perfmodel.fit.level import Leveled
from perfmodel.fit.selection import PartlyLocked, free_weight, select_model
from perfmodel.measurements import Measurement
from perfmodel.queueing import AsyncMVA
from perfmodel.specs import Cluster, Config, Profile

# M / B = 0.1 s, T_S = 2 ms: update spacing 0.02; alone a cycle is
# 0.05 + 0.1 + 2 x 0.1 + 0.002 = 0.352 s
PROFILE = Profile(model_bytes=100e6, t_forward=0.05, t_backward=0.1, t_update=0.002,
                  batch_size=32)
CLUSTER = Cluster(machines=40, nic_bandwidth="1GB/s")
PART = PartlyLocked()


def _async(k, p=1):
    return Config(n_replicas=k, n_ps=p, mode="async")


def test_the_weight_by_hand():
    # M / B = 0.8 s at 125 MB/s: 8 updates of 20 ms span 0.2 of a transfer
    assert float(free_weight(8, 0.02, 100e6, 1.25e8)) == pytest.approx(0.6)
    assert float(free_weight(1, 0.0, 100e6, 1.25e8)) == 0.5         # nothing spreads them
    assert float(free_weight(16, 0.01, 100e6, 1e9)) == 1.0          # 16 x 10 ms over 0.1 s
    assert free_weight([2, 4], 0.1, 100e6, 1.25e8).tolist() == pytest.approx([0.625, 0.75])
    assert float(free_weight(4, 0.1, 0.0, 1e9)) == 1.0              # nothing to transfer


def test_one_worker_is_alone_in_both_ends():
    est = PART.estimate(PROFILE, CLUSTER, _async(1))
    assert est.meta["free_weight"] == pytest.approx(0.51)           # (1 + 0.02) / 2
    assert est.step_time == pytest.approx(0.352, rel=1e-9)
    assert est.throughput == pytest.approx(32 / 0.352, rel=1e-9)


def test_the_step_is_the_weighted_geometric_mean():
    k = 8
    free = AsyncMVA().estimate(PROFILE, CLUSTER, _async(k))
    locked = LockStep().estimate(PROFILE, CLUSTER, _async(k))
    est = PART.estimate(PROFILE, CLUSTER, _async(k))
    w = 0.5 * (1 + k * 0.02)
    assert est.step_time == pytest.approx(free.step_time ** w * locked.step_time ** (1 - w),
                                          rel=1e-12)
    assert est.throughput == pytest.approx(k * 32 / est.step_time, rel=1e-12)
    assert est.meta["locked_step"] == pytest.approx(locked.step_time)
    # the phases are the MVA's, scaled: same shares, same bottleneck
    scale = est.step_time / free.step_time
    assert {n: v / scale for n, v in est.phases.items()} == pytest.approx(dict(free.phases))
    assert est.bottleneck == free.bottleneck
    assert locked.throughput < est.throughput < free.throughput


def test_it_is_the_mva_where_the_updates_spread_the_workers_or_on_three_servers():
    for config in (_async(50), _async(8, 3), _async(16, 4)):
        free = AsyncMVA().estimate(PROFILE, CLUSTER, config)
        est = PART.estimate(PROFILE, CLUSTER, config)
        assert est.throughput == free.throughput
        assert est.meta["free_weight"] == 1.0


@settings(max_examples=40, deadline=None)
@given(k=st.integers(1, 32), p=st.integers(1, 2), t_update=st.floats(0.0, 0.2),
       overlap=st.booleans())
def test_between_lockstep_and_drifted_apart(k, p, t_update, overlap):
    prof = PROFILE.replace(t_update=t_update)
    part = PartlyLocked(overlap=overlap)
    est = part.estimate(prof, CLUSTER, _async(k, p))
    ends = [m.estimate(prof, CLUSTER, _async(k, p)).throughput
            for m in (AsyncMVA(overlap=overlap), LockStep(overlap=overlap))]
    assert min(ends) * (1 - 1e-9) <= est.throughput <= max(ends) * (1 + 1e-9)
    assert math.isfinite(est.throughput)
    if k * t_update * CLUSTER.effective_bandwidth / prof.model_bytes >= 1:
        assert est.throughput == pytest.approx(ends[0], rel=1e-12)


def test_bad_models_and_sync_configs_are_refused():
    with pytest.raises(SpecError, match="free"):
        PartlyLocked(free=3)
    with pytest.raises(SpecError, match="overlap"):
        PartlyLocked(overlap="yes")
    with pytest.raises(Infeasible):
        PART.estimate(PROFILE, CLUSTER, Config(n_replicas=4, n_ps=1, mode="sync"))


def _runs(workers, p=1, slowdown=1.1):
    """Runs of lock-step workers' halfway point, a level slower than the model."""
    return [Measurement(k, p, CLUSTER.nic_bandwidth,
                        PART.estimate(PROFILE, CLUSTER, _async(k, p)).throughput / slowdown,
                        PROFILE.batch_size, "async") for k in workers]


def test_select_model_answers_with_it_where_asked():
    runs = _runs((1, 2))
    plain = select_model(PROFILE, CLUSTER, runs, mode="async")
    part = select_model(PROFILE, CLUSTER, runs, mode="async", partly_locked=True)
    assert plain.chosen.name == "async-mva"
    assert part.chosen.name == "async-partly-locked"
    assert isinstance(part.chosen.model, Leveled)
    assert "async-mva" in [a.name for a in part.chosen.alternatives]
    assert "update spacing T_S B / M = 0.02" in part.chosen.why
    est = part.chosen.estimate(PROFILE, CLUSTER, _async(8))
    mva = plain.chosen.estimate(PROFILE, CLUSTER, _async(8))
    assert est.throughput < mva.throughput
    # the MVA it replaced stays in the interval
    assert est.throughput_interval[1] >= mva.throughput * (1 - 1e-9)


def test_select_model_keeps_the_mva_on_three_servers_or_spread_updates():
    on_three = select_model(PROFILE, CLUSTER, _runs((1, 2), p=3), mode="async",
                            partly_locked=True)
    assert on_three.chosen.name == "async-mva"
    slow_updates = PROFILE.replace(t_update=0.06)                   # spacing 0.6
    runs = [Measurement(k, 1, CLUSTER.nic_bandwidth,
                        AsyncMVA().estimate(slow_updates, CLUSTER, _async(k)).throughput,
                        32, "async") for k in (1, 2)]
    spread = select_model(slow_updates, CLUSTER, runs, mode="async", partly_locked=True,
                          spaced=False, server_bound=False)
    assert spread.chosen.name == "async-mva"
