"""The per-network Cluster fields update_growth and compute_cv, read by every model.

Expected values are worked by hand from Li et al. 2022, eqs. 7-9 with
M = 100 MB, B = 10 Gbps (M / B = 0.08 s), T_F = 0.1 s, T_B = 0.2 s,
T_S = 10 ms and K = 4 workers unless a test says otherwise.
"""

import math

import numpy as np
import pytest

from perfmodel.coarse import SyncCoarse, hierarchical_step_time, sync_phases, sync_step_time
from perfmodel.errors import SpecError
from perfmodel.gst import GST
from perfmodel.queueing import AsyncMVA
from perfmodel.sim.model import TraceSim, update_factor
from perfmodel.specs import Cluster, Config, Profile

PROF = Profile(model_bytes=100e6, t_forward=0.1, t_backward=0.2, t_update=0.01, batch_size=32)
CLU = Cluster(machines=8, nic_bandwidth="10Gbps")
K4 = Config(n_replicas=4, n_ps=1)


# ---------------------------------------------------------------- the fields
def test_defaults_are_the_papers():
    assert CLU.update_growth == 0.0 and CLU.compute_cv == 0.0


@pytest.mark.parametrize("field,value", [("update_growth", 1.5), ("update_growth", -0.1),
                                         ("compute_cv", -0.01), ("compute_cv", math.nan)])
def test_out_of_range_values_name_the_field(field, value):
    with pytest.raises(SpecError) as err:
        CLU.replace(**{field: value})
    assert err.value.field == field


def test_fields_round_trip_and_appear_in_the_schema():
    clu = CLU.replace(update_growth=0.25, compute_cv=0.05)
    assert Cluster.from_dict(clu.to_dict()) == clu
    props = Cluster.json_schema()["properties"]
    assert props["update_growth"]["minimum"] == 0 and props["update_growth"]["maximum"] == 1
    assert props["compute_cv"]["minimum"] == 0
    with pytest.raises(SpecError, match="update_growth"):
        Cluster.from_dict(dict(clu.to_dict(), update_growth="a lot"))


# ---------------------------------------------------------------- coarse sync
@pytest.mark.parametrize("g,k,n_ps,update", [(1.0, 4, 1, 0.040), (0.5, 4, 1, 0.025),
                                             (0.0, 4, 1, 0.010), (1.0, 1, 1, 0.010),
                                             (1.0, 4, 2, 0.020)])
def test_update_phase_by_hand(g, k, n_ps, update):
    # t_U(K) = T_S ((1 - g) + g K) / n_ps
    phases = sync_phases(100e6, 1.25e9, 0.1, 0.2, 0.01, k, update_growth=g, n_ps=n_ps)
    assert phases["update"] == pytest.approx(update, rel=1e-12)


def test_sync_step_by_hand_with_growth():
    # eq. 9 with K = 4: 0.32 + 0.1 + 0.2 + (4 + 1) 0.08 / 2 + 4 x 0.01
    assert sync_step_time(100e6, 1.25e9, 0.1, 0.2, 0.01, 4, update_growth=1.0) \
        == pytest.approx(0.86, rel=1e-12)
    est = SyncCoarse().estimate(PROF, CLU.replace(update_growth=1.0), K4)
    assert est.step_time == pytest.approx(0.86, rel=1e-12)
    assert est.phases["update"] == pytest.approx(0.04, rel=1e-12)
    assert est.meta["update_growth"] == 1.0 and est.meta["compute_cv"] == 0.0


def test_growth_broadcasts_over_workers():
    # slope in K grows by g T_S: K = 1, 2, 4 -> 0.47, 0.59, 0.83 plus (0, 1, 3) x 0.01 at g = 1
    times = sync_step_time(100e6, 1.25e9, 0.1, 0.2, 0.01, np.array([1, 2, 4]),
                           update_growth=np.array([[0.0], [1.0]]))
    assert times == pytest.approx(np.array([[0.47, 0.59, 0.83], [0.47, 0.60, 0.86]]), rel=1e-12)


def test_defaults_reproduce_the_papers_numbers():
    # the module's own hand-worked examples (eqs. 7 and 9), unchanged by the new fields
    assert sync_step_time(100e6, 1.25e9, 0.1, 0.2, 0.01, 4) == pytest.approx(0.83, rel=1e-12)
    est = SyncCoarse(sharing="ps").estimate(PROF, CLU, K4)
    assert est.step_time == pytest.approx(0.95, rel=1e-12)   # 0.32 + 0.3 + 0.32 + 0.01
    # the omitted keyword and an explicit 0 are the same computation, bit for bit
    ks = np.arange(1, 40)
    assert np.array_equal(sync_step_time(100e6, 1.25e9, 0.1, 0.2, 0.01, ks),
                          sync_step_time(100e6, 1.25e9, 0.1, 0.2, 0.01, ks, update_growth=0.0))


def test_compute_cv_does_not_move_the_deterministic_coarse_model():
    base = SyncCoarse().estimate(PROF, CLU, K4)
    noisy = SyncCoarse().estimate(PROF, CLU.replace(compute_cv=0.2), K4)
    assert noisy.step_time == base.step_time and noisy.meta["compute_cv"] == 0.2


def test_hierarchical_passes_growth_on():
    # 2 machines of 2 GPUs: the update is T_S (1 + 1 x (2 - 1)) = 2 T_S at g = 1
    a = hierarchical_step_time(100e6, 1.25e9, 0.1, 0.2, 0.01, 2, 2, 100e9)
    b = hierarchical_step_time(100e6, 1.25e9, 0.1, 0.2, 0.01, 2, 2, 100e9, update_growth=1.0)
    assert b - a == pytest.approx(0.01, rel=1e-9)


def test_bad_growth_argument_is_named():
    with pytest.raises(SpecError, match="update_growth"):
        sync_step_time(100e6, 1.25e9, 0.1, 0.2, 0.01, 4, update_growth=2.0)


# ---------------------------------------------------------------- async MVA
def test_async_update_stays_per_gradient_and_ignores_the_spread():
    cfg = Config(n_replicas=4, n_ps=1, mode="async")
    base = AsyncMVA().estimate(PROF, CLU, cfg)
    other = AsyncMVA().estimate(PROF, CLU.replace(update_growth=1.0, compute_cv=0.3), cfg)
    assert other.throughput == base.throughput and other.phases == base.phases
    assert other.meta["update_growth"] == 1.0 and other.meta["compute_cv"] == 0.3


# ---------------------------------------------------------------- simulator
def test_update_factor_by_hand():
    assert update_factor(CLU.replace(update_growth=1.0), K4, "sync") == 4.0
    assert update_factor(CLU.replace(update_growth=0.5), K4, "sync") == 2.5
    assert update_factor(CLU.replace(update_growth=1.0), K4, "async") == 1.0


def test_sim_sync_update_per_gradient_by_hand():
    # deterministic sync PS run reproduces eq. 7: 0.95 s, plus (4 - 1) x 10 ms at g = 1
    sim = TraceSim(sharing="ps", steps=20, warmup=2)
    assert sim.estimate(PROF, CLU, K4).step_time == pytest.approx(0.95, rel=1e-9)
    est = sim.estimate(PROF, CLU.replace(update_growth=1.0), K4)
    assert est.step_time == pytest.approx(0.98, rel=1e-9)
    assert est.meta["update_factor"] == 4.0 and est.meta["update_growth"] == 1.0


def test_sim_async_ignores_growth():
    cfg = Config(n_replicas=3, n_ps=1, mode="async")
    sim = TraceSim(sharing="ps", steps=40, warmup=5)
    assert sim.estimate(PROF, CLU, cfg).throughput == \
        sim.estimate(PROF, CLU.replace(update_growth=1.0), cfg).throughput


def test_sim_jitter_comes_from_compute_cv_unless_given():
    sim = TraceSim(sharing="ps", steps=40, warmup=5)
    est = sim.estimate(PROF, CLU.replace(compute_cv=0.1), K4)
    assert est.meta["jitter"] == 0.1
    # compute-bound sync (M / B = 0.8 ms): the barrier waits for the slowest of 4 workers,
    # about 0.3 s x (1 + 0.1 e(4)) = 0.331 s against 0.3 s + 2.4 ms without spread
    fast = CLU.replace(nic_bandwidth="1000Gbps")
    spread = sim.estimate(PROF, fast.replace(compute_cv=0.1), K4).step_time
    assert spread > sim.estimate(PROF, fast, K4).step_time + 0.015
    own = TraceSim(sharing="ps", steps=40, warmup=5, jitter=0.0)
    assert own.estimate(PROF, CLU.replace(compute_cv=0.1), K4).meta["jitter"] == 0.0
    # one worker, no barrier: jitter of mean 1 leaves the mean near 0.47 s (eq. 7, K = 1)
    one = sim.estimate(PROF, CLU.replace(compute_cv=0.1), Config(n_replicas=1, n_ps=1))
    assert one.step_time == pytest.approx(0.47, rel=0.03)


def test_sim_hybrid_uses_the_sharing_weight():
    cfg = Config(n_replicas=4, n_ps=1)
    kw = dict(steps=20, warmup=2)
    ps = TraceSim(sharing="ps", **kw).estimate(PROF, CLU, cfg)
    fcfs = TraceSim(sharing="fcfs", **kw).estimate(PROF, CLU, cfg)
    hyb = TraceSim(sharing="hybrid", **kw)
    assert hyb.estimate(PROF, CLU.replace(sharing_weight=1.0), cfg).throughput == \
        pytest.approx(ps.throughput, rel=1e-12)
    assert hyb.estimate(PROF, CLU.replace(sharing_weight=0.0), cfg).throughput == \
        pytest.approx(fcfs.throughput, rel=1e-12)
    mid = hyb.estimate(PROF, CLU, cfg)   # the default is the engine's plain average
    assert mid.throughput == pytest.approx(0.5 * (ps.throughput + fcfs.throughput), rel=1e-12)
    assert mid.step_time == pytest.approx(4 * 32 / mid.throughput, rel=1e-12)


# ---------------------------------------------------------------- GST
def test_gst_sigma_from_compute_cv():
    # sigma = 0.1 x (0.1 + 0.2) = 0.03 s, the same as GST(sigma=0.03) on a plain cluster
    noisy = GST(layer_pipeline=False).estimate(PROF, CLU.replace(compute_cv=0.1), K4)
    given = GST(sigma=0.03, layer_pipeline=False).estimate(PROF, CLU, K4)
    assert noisy.step_time == pytest.approx(given.step_time, rel=1e-12)
    assert noisy.meta["sigma"] == pytest.approx(0.03, rel=1e-12)
    assert noisy.meta["sigma_source"] == "cluster.compute_cv"
    # e(4) = 1.0294: the straggler phase is 0.03 x 1.0294
    assert noisy.phases["straggler"] == pytest.approx(0.03 * 1.029375, rel=1e-5)


def test_gst_own_spread_wins():
    est = GST(sigma=0.01, layer_pipeline=False).estimate(PROF, CLU.replace(compute_cv=0.1), K4)
    assert est.meta["sigma"] == pytest.approx(0.01) and est.meta["sigma_source"] == "model"


def test_gst_update_growth_by_hand():
    base = GST(layer_pipeline=False).estimate(PROF, CLU, K4)
    grown = GST(layer_pipeline=False).estimate(PROF, CLU.replace(update_growth=1.0), K4)
    assert grown.phases["update"] == pytest.approx(0.04, rel=1e-12)
    assert grown.step_time - base.step_time == pytest.approx(0.03, rel=1e-9)
    assert grown.meta["update_growth"] == 1.0
