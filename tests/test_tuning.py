"""Tests of perfmodel.fit.grid and perfmodel.fit.network: tunables chosen on a grid.

The grid choice of Li et al. 2022, Sec. 4.2.1, with CV error, and the per-network calibration.
"""

import dataclasses
import json
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from perfmodel import zoo
from perfmodel.coarse import SyncCoarse
from perfmodel.errors import Infeasible, SpecError
from perfmodel.fit import dl2
from perfmodel.fit.grid import RHO_GRID, FitResult, fit_tunables, grid_range, parse_grid, predict_measurements
from perfmodel.io import load_measurements
from perfmodel.measurements import Measurement, measurements_csv, parse_measurements
from perfmodel.queueing import AsyncMVA
from perfmodel.specs import Cluster, Profile

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def profile():
    return zoo.profile("resnet50-pipedream")


@pytest.fixture(scope="module")
def cluster():
    return zoo.cluster("aws-p3.2xlarge")


def synthetic(truth, profile, cluster, configs, truth_cluster=None):
    """Measurements whose throughput is exactly ``truth``'s prediction."""
    shells = [Measurement(w, p, bw, 1.0) for w, p, bw in configs]
    pred = predict_measurements(truth, profile, truth_cluster or cluster, shells)
    return [dataclasses.replace(m, throughput=t) for m, t in zip(shells, pred)]


# Configurations whose rho^FCFS (resnet50 on 10/25 Gbps) falls in every interval
# (0.1 k, 0.1 (k + 1)] up to 0.8 with >= 2 workers, so that each grid value of
# rho_T selects a different set of disciplines.
ASYNC_CONFIGS = [(w, 1, "10Gbps") for w in range(1, 8)] + [(w, 1, "25Gbps") for w in range(2, 8)]


# ------------------------------------------------------------------ recovery

def test_rho_threshold_fits_the_same_as_model_option_or_cluster_field(profile, cluster):
    """AsyncMVA's rho_threshold=None defers to the cluster's field, so an unprefixed grid
    key names the model option (it overrides the cluster's 0.6) and cluster.rho_threshold
    tunes the field: both find the truth with the same errors."""
    assert cluster.rho_threshold == 0.6
    truth = AsyncMVA(rho_threshold=0.3)
    ms = synthetic(truth, profile, cluster, ASYNC_CONFIGS)
    via_model = fit_tunables("async", profile, cluster, ms, {"rho_threshold": RHO_GRID})
    via_cluster = fit_tunables("async", profile, cluster, ms, {"cluster.rho_threshold": RHO_GRID})
    assert via_model.model.rho_threshold == 0.3 and via_model.cluster.rho_threshold == 0.6
    assert via_cluster.model.rho_threshold is None and via_cluster.cluster.rho_threshold == 0.3
    assert via_model.cv_errors == via_cluster.cv_errors == (0.0,) * len(ms)


def test_async_rho_threshold_recovered_exactly(profile, cluster):
    truth = AsyncMVA(rho_threshold=0.3)
    ms = synthetic(truth, profile, cluster, ASYNC_CONFIGS)
    fit = fit_tunables("async", profile, cluster, ms, {"rho_threshold": RHO_GRID})
    assert fit.best == {"rho_threshold": 0.3}
    assert fit.model == truth
    assert fit.train_error == 0.0 and fit.train_max_error == 0.0
    assert fit.cv_error == 0.0 and fit.cv_errors == (0.0,) * len(ms)
    # the error surface has one zero, and the untuned default (0.6) is worse
    assert fit.surface.shape == (10,)
    assert np.count_nonzero(fit.surface == 0.0) == 1
    assert fit.base_error == pytest.approx(fit.surface[RHO_GRID.index(0.6)]) and fit.base_error > 0


def test_numpy_grid_accepted(profile, cluster):
    """np.arange values (0.30000000000000004) work; the fitted option is a plain float."""
    ms = synthetic(AsyncMVA(rho_threshold=0.3), profile, cluster, ASYNC_CONFIGS)
    fit = fit_tunables("async", profile, cluster, ms,
                       {"rho_threshold": np.arange(0.1, 1.01, 0.1)})
    assert fit.best["rho_threshold"] == pytest.approx(0.3)
    assert type(fit.model.rho_threshold) is float
    assert fit.train_error == 0.0


def test_sync_sharing_weight_recovered(profile, cluster):
    truth_cluster = cluster.replace(sharing_weight=0.7)
    configs = [(w, 1, "10Gbps") for w in range(1, 8)] + [(4, 2, "10Gbps"), (6, 2, "25Gbps")]
    ms = synthetic(SyncCoarse(), profile, cluster, configs, truth_cluster)
    fit = fit_tunables("sync", profile, cluster, ms, {"sharing_weight": grid_range(0, 1, 0.1)})
    assert fit.best == {"sharing_weight": 0.7}
    assert fit.cluster == truth_cluster
    assert fit.train_error == pytest.approx(0.0, abs=1e-15)
    assert np.count_nonzero(fit.surface < 1e-12) == 1
    assert fit.cv_error == pytest.approx(0.0, abs=1e-15)


def test_model_option_and_cluster_field_together(profile, cluster):
    truth_cluster = cluster.replace(link_efficiency=0.8)
    ms = synthetic(AsyncMVA(rho_threshold=0.4), profile, cluster, ASYNC_CONFIGS, truth_cluster)
    grid = {"rho_threshold": RHO_GRID, "cluster.link_efficiency": grid_range(0.5, 1.0, 0.1)}
    fit = fit_tunables("async", profile, cluster, ms, grid, cv=4)
    assert fit.best == {"rho_threshold": 0.4, "link_efficiency": 0.8}
    assert fit.model.rho_threshold == 0.4 and fit.cluster.link_efficiency == 0.8
    assert fit.cluster.nic_bandwidth == cluster.nic_bandwidth  # not a measurement's
    assert fit.surface.shape == (10, 6)
    assert fit.predictions.shape == (60, len(ms))
    assert fit.points[fit.best_index] == fit.best
    assert fit.surface[3, 3] == fit.train_error == 0.0
    assert len(fit.cv_choices) == 4


def test_fixed_options_passed_to_the_model(profile, cluster):
    truth = AsyncMVA(discipline="hybrid", rho_threshold=0.7, overlap=True)
    ms = synthetic(truth, profile, cluster, ASYNC_CONFIGS)
    fit = fit_tunables("async", profile, cluster, ms, {"rho_threshold": RHO_GRID},
                       options={"overlap": True}, cv=None)
    assert fit.model.overlap is True and fit.train_error == 0.0
    assert math.isnan(fit.cv_error) and fit.cv_errors == () and fit.cv_choices == ()


# ------------------------------------------------------------------ worked by hand

@dataclasses.dataclass(frozen=True)
class Scaled:
    """A toy model: throughput = scale * workers (samples/s)."""

    scale: float = 1.0
    unused: int = 0

    def estimate(self, workload, cluster, config):
        return SimpleNamespace(throughput=self.scale * config.n_replicas)


HAND = [Measurement(1, 1, "1Gbps", 1.0), Measurement(2, 1, "1Gbps", 2.4),
        Measurement(3, 1, "1Gbps", 3.3)]


def test_loo_worked_by_hand(profile, cluster):
    # predictions: scale 1.0 -> (1, 2, 3); scale 1.2 -> (1.2, 2.4, 3.6)
    # |errors|: scale 1.0 -> (0, 1/6, 1/11); scale 1.2 -> (0.2, 0, 1/11)
    # all points: means 0.0859 (1.0) < 0.0970 (1.2) -> 1.0
    # leave out 1: train {2, 3}: 1/6 + 1/11 > 0 + 1/11 -> 1.2, held-out +0.2
    # leave out 2: train {1, 3}: 1/11 < 0.2 + 1/11 -> 1.0, held-out -1/6
    # leave out 3: train {1, 2}: 1/6 < 0.2 -> 1.0, held-out -1/11
    fit = fit_tunables(Scaled(), profile, cluster, HAND, {"scale": (1.0, 1.2)})
    assert fit.best == {"scale": 1.0} and fit.model == Scaled(1.0)
    assert fit.train_error == pytest.approx((0 + 1 / 6 + 1 / 11) / 3)
    assert fit.surface == pytest.approx([(1 / 6 + 1 / 11) / 3, (0.2 + 1 / 11) / 3])
    assert [c["scale"] for c in fit.cv_choices] == [1.2, 1.0, 1.0]
    assert fit.cv_errors == pytest.approx((0.2, -1 / 6, -1 / 11))
    assert fit.cv_error == pytest.approx((0.2 + 1 / 6 + 1 / 11) / 3)
    assert fit.cv_max_error == pytest.approx(0.2)
    # 3 folds of one point each is leave-one-out
    three = fit_tunables(Scaled(), profile, cluster, HAND, {"scale": (1.0, 1.2)}, cv=3)
    assert three.cv_errors == fit.cv_errors
    # max objective: scale 1.0 -> 1/6, scale 1.2 -> 0.2
    worst = fit_tunables(Scaled(), profile, cluster, HAND, {"scale": (1.0, 1.2)},
                         objective="max_relative")
    assert worst.train_error == pytest.approx(1 / 6)


def test_ties_go_to_the_first_grid_point(profile, cluster):
    fit = fit_tunables(Scaled(), profile, cluster, HAND, {"unused": (3, 1, 2)})
    assert fit.best == {"unused": 3}
    assert [c["unused"] for c in fit.cv_choices] == [3, 3, 3]
    twice = fit_tunables(Scaled(), profile, cluster, HAND, {"unused": (3, 1, 2)})
    assert twice.to_dict() == fit.to_dict()


def test_report_is_json_ready(profile, cluster):
    fit = fit_tunables(Scaled(), profile, cluster, HAND, {"scale": (1.0, 1.2)})
    data = json.loads(json.dumps(fit.to_dict()))
    assert data["best"] == {"scale": 1.0}
    assert [p["error"] for p in data["surface"]] == pytest.approx(list(fit.surface))
    assert data["measurements"][0]["cv_error"] == pytest.approx(0.2)
    assert "cross-validation (loo)" in fit.text()
    assert isinstance(fit, FitResult)


# ------------------------------------------------------------------ CSV

def test_load_small_csv_and_recover(profile, cluster):
    ms = load_measurements(DATA / "measurements_small.csv")
    assert len(ms) == 10
    assert ms[0].line == 6 and ms[0].mode == "async" and ms[0].batch_size == 128
    assert ms[-1].bandwidth == 25e9 / 8
    fit = fit_tunables("async", profile, cluster, ms, {"rho_threshold": RHO_GRID})
    assert fit.best == {"rho_threshold": 0.5}  # the value the file was generated with
    assert fit.train_max_error < 1e-4  # rounding to 0.01 samples/s only
    # Leave-one-out shows what the file cannot pin down: the last row (7 workers at
    # 25 Gbps, rho^FCFS = 0.435) is the only one with rho^FCFS in (0.4, 0.5]; without
    # it 0.4 and 0.5 tie and the first (0.4) is chosen, which mispredicts that row.
    assert [c["rho_threshold"] for c in fit.cv_choices] == [0.5] * 9 + [0.4]
    assert max(abs(e) for e in fit.cv_errors[:9]) < 1e-4
    wrong = fit.predictions[RHO_GRID.index(0.4), -1] / ms[-1].throughput - 1
    assert fit.cv_errors[-1] == wrong and fit.cv_max_error == abs(wrong) > 0.01


def test_batch_size_scales_compute(profile, cluster):
    half = Measurement(2, 1, "10Gbps", 1.0, batch_size=profile.batch_size // 2)
    scaled = profile.replace(batch_size=half.batch_size, t_forward=profile.t_forward / 2,
                             t_backward=profile.t_backward / 2)
    got = predict_measurements("sync", profile, cluster, [half])[0]
    want = predict_measurements("sync", scaled, cluster, [Measurement(2, 1, "10Gbps", 1.0)])[0]
    assert got == want


@pytest.mark.parametrize("text, field", [
    ("workers,n_ps,bandwidth,throughput\n2,1,10 furlongs,5\n", "line 2, column bandwidth"),
    ("workers,n_ps,bandwidth,throughput\n\n# c\n2.5,1,10Gbps,5\n", "line 4, column workers"),
    ("workers,n_ps,bandwidth,throughput\n2,-1,10Gbps,5\n", "line 2, column n_ps"),
    ("workers,n_ps,bandwidth,throughput\n2,1,10Gbps,0\n", "line 2, column throughput"),
    ("workers,n_ps,bandwidth,throughput\n2,1,10Gbps,\n", "line 2, column throughput"),
    ("workers,n_ps,bandwidth,throughput,mode\n2,1,10Gbps,5,maybe\n", "line 2, column mode"),
    ("workers,n_ps,bandwidth,throughput,batch_size\n2,1,10Gbps,5,x\n", "line 2, column batch_size"),
    ("workers,n_ps,bandwith,throughput\n", "line 1, column bandwith"),
    ("workers,n_ps,throughput\n2,1,5\n", "line 1, column bandwidth"),
    ("workers,n_ps,bandwidth,throughput\n2,1,10Gbps\n", "line 2"),
])
def test_csv_errors_name_line_and_column(text, field):
    with pytest.raises(SpecError) as err:
        parse_measurements(text, source="m.csv")
    assert err.value.field == field
    assert str(err.value).startswith(f"m.csv: {field}: ")


def test_csv_empty_and_missing_file(tmp_path):
    with pytest.raises(SpecError, match="no measurements"):
        parse_measurements("workers,n_ps,bandwidth,throughput\n")
    with pytest.raises(SpecError, match="no header"):
        parse_measurements("# nothing\n")
    with pytest.raises(SpecError, match="cannot read file"):
        load_measurements(tmp_path / "missing.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("workers,n_ps,bandwidth,throughput\n1,1,fast,3\n", encoding="utf-8")
    with pytest.raises(SpecError, match=r"bad\.csv: line 2, column bandwidth"):
        load_measurements(bad)


# ------------------------------------------------------------------ bad requests

@pytest.mark.parametrize("grid, field", [
    ({"rho": RHO_GRID}, "grid.rho"),
    ({"nic_bandwidth": (1e9,)}, "grid.nic_bandwidth"),
    ({"rho_threshold": ()}, "grid.rho_threshold"),
    ({"rho_threshold": 0.5}, "grid.rho_threshold"),
    ({"rho_threshold": (0.5, 1.5)}, "grid.rho_threshold"),
    ({"link_efficiency": (0.0,)}, "grid.link_efficiency"),
    ({"model.sharing_weight": (0.5,)}, "grid.model.sharing_weight"),
    ({}, "grid"),
])
def test_bad_grids_name_the_key(grid, field, profile, cluster):
    with pytest.raises(SpecError) as err:
        fit_tunables("async", profile, cluster, HAND, grid)
    assert err.value.field == field


def test_bad_options(profile, cluster):
    with pytest.raises(SpecError) as err:
        fit_tunables("async", profile, cluster, HAND, {"rho_threshold": RHO_GRID}, cv=1)
    assert err.value.field == "cv"
    with pytest.raises(SpecError) as err:
        fit_tunables("async", profile, cluster, HAND, {"rho_threshold": RHO_GRID},
                     objective="median")
    assert err.value.field == "objective"
    with pytest.raises(SpecError) as err:
        fit_tunables("async", profile, cluster, [], {"rho_threshold": RHO_GRID})
    assert err.value.field == "measurements"
    with pytest.raises(SpecError) as err:
        fit_tunables("nope", profile, cluster, HAND, {"rho_threshold": RHO_GRID})
    assert err.value.field == "model"


def test_measurement_the_model_cannot_predict_is_named(profile, cluster):
    ms = [Measurement(2, 1, "10Gbps", 100.0, mode="async", line=7)]
    with pytest.raises(Infeasible, match="measurement line 7"):
        fit_tunables("sync", profile, cluster, ms, {"sharing_weight": (0.5,)}, cv=None)
    with pytest.raises(SpecError) as err:
        fit_tunables("async", profile, cluster, [Measurement(2, 0, "10Gbps", 100.0)],
                     {"rho_threshold": (0.5,)}, cv=None)
    assert err.value.field.startswith("measurement workers=2, n_ps=0")


def test_grid_helpers():
    assert grid_range(0.1, 1.0, 0.1) == RHO_GRID == (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8,
                                                     0.9, 1.0)
    assert parse_grid("rho_threshold=0.1:1.0:0.1") == ("rho_threshold", RHO_GRID)
    assert parse_grid("overlap=true,false") == ("overlap", (True, False))
    assert parse_grid("per_flow_cap=5Gbps,10Gbps") == ("per_flow_cap", ("5Gbps", "10Gbps"))
    for bad in ("rho_threshold", "=1,2", "x=1:2", "x=1:0:0.1", "x=0:1:0", "x=1,,2"):
        with pytest.raises(SpecError):
            parse_grid(bad)


# ------------------------------------------------------------------ DL2 use

def test_dl2_sharing_weight_fit():
    """Li et al. 2022, Sec. 4.2.1 on real data: fit sync's sharing_weight on DL2 resnet-50.

    The per-DNN unknowns (c, tau, u) come from perfmodel.fit.dl2.fit_model on the
    2 x 2 smallest configurations; the measurements are the <= 4 x 4 ones,
    written as (workers, n_ps, bandwidth, throughput, batch_size) so that the
    predicted throughput's relative error equals the DL2 job-speed error.
    """
    recs = [r for r in dl2.load_builtin() if r.model == "resnet-50" and not r.failed]
    params = dl2.fit_model(SyncCoarse(), [r for r in recs if r.n_ps <= 2 and r.n_workers <= 2])
    phi, b_ref = params.forward_fraction, 1e9
    prof = Profile(model_bytes=params.tau * b_ref, t_forward=phi * params.c,
                   t_backward=(1 - phi) * params.c, t_update=params.u, batch_size=1)
    clu = Cluster(machines=8, nic_bandwidth=b_ref)
    sel = [r for r in recs if r.n_ps <= 4 and r.n_workers <= 4]
    # job speed G / step  ->  model throughput K * b / step, b = ceil(G / K)
    ms = [Measurement(r.n_workers, r.n_ps, b_ref, r.speed * r.n_workers * r.local_batch
                      / r.batch_size, batch_size=r.local_batch) for r in sel]
    assert len(ms) >= 10

    fit = fit_tunables("sync", prof, clu, ms, {"sharing_weight": grid_range(0, 1, 0.1)})
    assert math.isfinite(fit.cv_error) and math.isfinite(fit.cv_max_error)
    assert fit.train_error <= fit.base_error  # the default 0.5 is on the grid
    assert fit.train_error <= fit.cv_error
    # same relative error as the DL2 fit's own prediction at the default weight
    r, m = sel[-1], ms[-1]
    dl2_err = params.predict(r.n_ps, r.n_workers, r.batch_size) / r.speed - 1
    ours = predict_measurements("sync", prof, clu, [m])[0] / m.throughput - 1
    assert ours == pytest.approx(dl2_err, rel=1e-9)


# ---------------------------------------------------------------- per-network calibration
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from perfmodel.cli import main  # noqa: E402
from perfmodel.fit.network import CALIBRATION_GRIDS, NEAR_OPTIMAL, calibrate_network  # noqa: E402
from perfmodel.io import load_cluster, save  # noqa: E402
from perfmodel.sim.model import TraceSim  # noqa: E402

#: 1 worker pins link_efficiency; 4 workers at two bandwidths separate the
#: sharing weight (scales with M / B) from the update growth (does not).
IDENTIFYING = [(1, 1, "10Gbps"), (4, 1, "10Gbps"), (4, 1, "25Gbps")]
TRUTH = dict(link_efficiency=0.85, sharing_weight=0.3, update_growth=0.6)


@pytest.fixture(scope="module")
def job():
    """ResNet-50 with a 20 ms server update (the zoo profile has none)."""
    return zoo.profile("resnet50-pipedream").replace(t_update=0.02)


def test_calibration_recovers_the_generating_values(job, cluster):
    ms = synthetic("sync", job, cluster, IDENTIFYING, cluster.replace(**TRUTH))
    cal = calibrate_network(job, cluster, ms)
    assert cal.params == TRUTH
    assert cal.cluster.replace(source="") == cluster.replace(source="", **TRUTH)
    assert cal.fit.model_name == "sync" and cal.unused == ("compute_cv",)
    assert cal.train_error < 1e-12 and max(map(abs, cal.residuals)) < 1e-12
    assert cal.loo_error == cal.fit.cv_error and cal.base_error > 0.03
    assert "calibrate_network" in cal.cluster.source and "LOO error" in cal.cluster.source
    assert cal.cluster.source.startswith(cluster.source)


@settings(max_examples=5, deadline=None)
@given(e=st.sampled_from(CALIBRATION_GRIDS["link_efficiency"]),
       w=st.sampled_from(CALIBRATION_GRIDS["sharing_weight"]),
       g=st.sampled_from(CALIBRATION_GRIDS["update_growth"]))
def test_calibration_recovers_any_grid_point(e, w, g):
    prof = zoo.profile("resnet50-pipedream").replace(t_update=0.02)
    clu = zoo.cluster("aws-p3.2xlarge")
    truth = dict(link_efficiency=e, sharing_weight=w, update_growth=g)
    ms = synthetic("sync", prof, clu, IDENTIFYING, clu.replace(**truth))
    assert calibrate_network(prof, clu, ms, cv=None).params == truth


def test_one_bandwidth_leaves_weight_and_growth_traded_off(job, cluster):
    # T(K) = T_C + T_S (1 - g) + (1 - w) M/(eB) + K [(1 + w) M/(eB) + g T_S]: linear in K,
    # w and g both only move the slope, so the near-optimal set spans a ridge in (w, g)
    ms = synthetic("sync", job, cluster, [(1, 1, "10Gbps"), (2, 1, "10Gbps"), (4, 1, "10Gbps")],
                   cluster.replace(**TRUTH))
    cal = calibrate_network(job, cluster, ms)
    lo, hi = cal.ranges["update_growth"]
    assert lo < TRUTH["update_growth"] < hi and "not pinned down" in cal.text()


def test_overfit_calibration_warns_and_still_saves(job, cluster, tmp_path, capsys):
    # runs of the uncalibrated cluster with 3-5% noise: three parameters on three runs match
    # them better (train) but predict each held-out run worse than no calibration at all
    shells = [Measurement(w, 1, "10Gbps", 1.0) for w in (1, 2, 4)]
    pred = predict_measurements("sync", job, cluster, shells)
    ms = [dataclasses.replace(m, throughput=t * f)
          for m, t, f in zip(shells, pred, (1.03, 0.97, 1.03))]
    cal = calibrate_network(job, cluster, ms)
    assert cal.train_error < cal.base_error < cal.loo_error
    assert cal.worse_than_uncalibrated and cal.to_dict()["worse_than_uncalibrated"] is True
    assert "warning: the fit predicts held-out runs worse" in cal.text()
    assert not calibrate_network(job, cluster, ms, cv=None).worse_than_uncalibrated
    csv, out, prof = tmp_path / "runs.csv", tmp_path / "c.json", tmp_path / "job.json"
    save(job, prof)
    csv.write_text("workers,n_ps,bandwidth,throughput\n" + "".join(
        f"{m.workers},1,10Gbps,{m.throughput}\n" for m in ms))
    code = main(["calibrate", "fit", "--measurements", str(csv), "--save", str(out),
                 "--cluster", "zoo:aws-p3.2xlarge", "--profile", str(prof)])
    text, err = capsys.readouterr()
    assert code == 0 and out.exists() and "warning" in text
    assert err.count("\n") == 1 and err.startswith(f"perfmodel: warning: {out}: the fit")


def test_async_default_model_fits_the_link_only(job, cluster):
    shells = [Measurement(w, 1, "10Gbps", 1.0, mode="async") for w in (1, 2, 4)]
    pred = predict_measurements("async", job, cluster.replace(link_efficiency=0.7), shells)
    ms = [dataclasses.replace(m, throughput=t) for m, t in zip(shells, pred)]
    cal = calibrate_network(job, cluster, ms)
    assert cal.model_name == "async" and cal.params == {"link_efficiency": 0.7}
    assert set(cal.unused) == {"sharing_weight", "update_growth", "compute_cv"}


def test_simulator_recovers_compute_cv(job, cluster):
    sim = TraceSim(sharing="ps", steps=50, warmup=5)
    truth = cluster.replace(link_efficiency=0.8, compute_cv=0.1, nic_bandwidth="25Gbps")
    configs = [(1, 1, "25Gbps"), (2, 1, "25Gbps"), (4, 1, "25Gbps")]
    ms = synthetic(sim, job, cluster, configs, truth)
    cal = calibrate_network(job, cluster, ms, model=sim, params=["link_efficiency", "compute_cv"],
                            grids={"link_efficiency": (0.7, 0.8, 0.9),
                                   "compute_cv": (0.0, 0.05, 0.1, 0.2)})
    assert cal.params == {"link_efficiency": 0.8, "compute_cv": 0.1}
    assert cal.model_name == "TraceSim"


def test_noisy_measurements_calibrated_closer_than_uncalibrated(job, cluster):
    ms = synthetic("sync", job, cluster, IDENTIFYING + [(2, 1, "10Gbps"), (6, 1, "25Gbps")],
                   cluster.replace(**TRUTH))
    noise = np.random.default_rng(7).normal(0.0, 0.02, len(ms))
    ms = [dataclasses.replace(m, throughput=m.throughput * (1 + n)) for m, n in zip(ms, noise)]
    cal = calibrate_network(job, cluster, ms)
    assert cal.train_error < 0.03 < cal.base_error
    assert cal.loo_error < cal.base_error
    assert abs(cal.params["link_efficiency"] - 0.85) <= 0.05


@settings(max_examples=20, deadline=None)
@given(e=st.floats(0.31, 1.0), w=st.floats(0.0, 1.0), g=st.floats(0.0, 1.0),
       noise=st.lists(st.floats(-0.3, 0.3), min_size=3, max_size=3))
def test_calibrated_training_error_never_above_uncalibrated(e, w, g, noise):
    prof = Profile(model_bytes=100e6, t_forward=0.1, t_backward=0.2, t_update=0.01)
    clu = Cluster(machines=8, nic_bandwidth="10Gbps", link_efficiency=e, sharing_weight=w,
                  update_growth=g)   # off the grid: its own values stay candidates
    ms = synthetic("sync", prof, clu, IDENTIFYING)
    ms = [dataclasses.replace(m, throughput=m.throughput * (1 + n)) for m, n in zip(ms, noise)]
    grids = {"link_efficiency": (0.5, 1.0), "sharing_weight": (0.0, 1.0),
             "update_growth": (0.0, 1.0)}
    cal = calibrate_network(prof, clu, ms, grids=grids, cv=None)
    assert cal.train_error <= cal.base_error


def test_calibration_ranges_by_hand(job, cluster):
    ms = synthetic("sync", job, cluster, IDENTIFYING, cluster.replace(**TRUTH))
    cal = calibrate_network(job, cluster, ms, params=["link_efficiency"],
                            grids={"link_efficiency": (0.8, 0.85, 0.9)})
    # only link_efficiency is fitted; w and g stay at the cluster's 0.5 and 0
    assert cal.cluster.sharing_weight == 0.5 and set(cal.params) == {"link_efficiency"}
    scores = cal.fit.surface.ravel()
    near = [v for v, s in zip(cal.fit.values[0], scores) if s <= scores.min() + NEAR_OPTIMAL]
    assert cal.ranges["link_efficiency"] == (min(near), max(near))


@pytest.mark.parametrize("kwargs,field", [
    (dict(params=["foo"]), "params.foo"),
    (dict(params=["nic_bandwidth"]), "params.nic_bandwidth"),
    (dict(params="link_efficiency"), "params"),
    (dict(params=[]), "params"),
    (dict(params=["link_efficiency", "link_efficiency"]), "params.link_efficiency"),
    (dict(params=["latency"]), "grids.latency"),
    (dict(grids={"latency": (0.0, 1e-3)}), "grids.latency"),
    (dict(grids={"update_growth": (0.5, 1.5)}), "grids.update_growth"),
    (dict(params=["compute_cv"]), "params"),
])
def test_calibration_bad_input_names_the_field(kwargs, field, job, cluster):
    ms = synthetic("sync", job, cluster, IDENTIFYING)
    with pytest.raises(SpecError) as err:
        calibrate_network(job, cluster, ms, **kwargs)
    assert err.value.field == field


def test_calibration_bad_measurements(job, cluster, tmp_path):
    with pytest.raises(SpecError, match="measurements"):
        calibrate_network(job, cluster, [])
    mixed = [Measurement(1, 1, "10Gbps", 100.0), Measurement(2, 1, "10Gbps", 150.0, mode="async")]
    with pytest.raises(SpecError, match="mix sync and async"):
        calibrate_network(job, cluster, mixed)
    with pytest.raises(SpecError, match="missing.csv"):
        calibrate_network(job, cluster, tmp_path / "missing.csv")


def test_calibration_to_dict_and_file_round_trip(job, cluster, tmp_path):
    ms = synthetic("sync", job, cluster, IDENTIFYING, cluster.replace(**TRUTH))
    csv = tmp_path / "m.csv"
    csv.write_text(measurements_csv(ms))
    cal = calibrate_network(job, cluster, csv)
    assert cal.source == str(csv) and str(csv) in cal.cluster.source
    data = json.loads(json.dumps(cal.to_dict()))
    assert data["params"] == TRUTH and data["cluster"]["update_growth"] == 0.6
    assert len(data["measurements"]) == 3 and data["unused"] == ["compute_cv"]
    # the cluster's own link_efficiency 1.0 is on the default grid already: not added twice
    assert data["grid"]["link_efficiency"] == list(CALIBRATION_GRIDS["link_efficiency"])
    assert [m["residual"] for m in data["measurements"]] == pytest.approx([0, 0, 0], abs=1e-12)
    cal.save(tmp_path / "calibrated.json")
    loaded = load_cluster(tmp_path / "calibrated.json")
    assert loaded == cal.cluster
    assert predict_measurements("sync", job, loaded, ms) == pytest.approx(
        [m.throughput for m in ms], rel=1e-12)


def _cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_calibrate_save_then_predict(job, cluster, tmp_path, capsys):
    from perfmodel import io as pio

    pio.save(job, tmp_path / "job.json")
    ms = synthetic("sync", job, cluster, IDENTIFYING, cluster.replace(**TRUTH))
    csv = tmp_path / "m.csv"
    csv.write_text(measurements_csv(ms))
    saved = tmp_path / "calibrated.json"
    code, out, _ = _cli(capsys, "calibrate", "fit", "--measurements", str(csv), "--cluster",
                        "zoo:aws-p3.2xlarge", "--profile", str(tmp_path / "job.json"),
                        "--save", str(saved))
    assert code == 0
    assert "link_efficiency=0.85, sharing_weight=0.3, update_growth=0.6" in out
    assert "cross-validation (loo) error 0.00%" in out and f"wrote {saved}" in out
    assert load_cluster(saved).replace(source="") == cluster.replace(source="", **TRUTH)

    def errors(cluster_arg):
        code, out, _ = _cli(capsys, "predict", "--cluster", cluster_arg, "--profile",
                            str(tmp_path / "job.json"), "--workers", "1,4", "--bandwidth",
                            "10Gbps,25Gbps", "--format", "json")
        assert code == 0
        rows = {(r["workers"], round(r["bandwidth"])): r["throughput"] for r in json.loads(out)}
        return [abs(rows[(m.workers, round(m.bandwidth))] / m.throughput - 1) for m in ms]

    assert max(errors(str(saved))) < 1e-9
    assert np.mean(errors("zoo:aws-p3.2xlarge")) > 0.03


def test_cli_calibrate_json_and_errors(job, cluster, tmp_path, capsys):
    csv = tmp_path / "m.csv"
    csv.write_text("workers,n_ps,bandwidth,throughput\n1,1,10Gbps,250\n2,1,10Gbps,420\n"
                   "4,1,10Gbps,600\n")
    code, out, _ = _cli(capsys, "calibrate", "fit", "--measurements", str(csv),
                        "--params", "link_efficiency", "--format", "json")
    assert code == 0 and set(json.loads(out)["params"]) == {"link_efficiency"}
    for argv, flag in ((("--params", "foo"), "--params"),
                       (("--grid", "update_growth=0:2:1"), "--grid"),
                       (("--grid", "rho_threshold=0.1:1:0.1", "--save", "x.json"), "--grid"),
                       (("--save", str(tmp_path / "no" / "x.json")), "--save")):
        code, _, err = _cli(capsys, "calibrate", "fit", "--measurements", str(csv), *argv)
        assert code == 2 and err.count("\n") == 1 and flag in err, err
    code, _, err = _cli(capsys, "calibrate", "fit")
    assert code == 2 and "--measurements" in err


def test_coordinate_search_agrees_with_the_joint_grid(job, cluster):
    ms = synthetic("sync", job, cluster, IDENTIFYING, cluster.replace(**TRUTH))
    cal = calibrate_network(job, cluster, ms, search="coordinate")
    assert cal.search == "coordinate" and cal.params == TRUTH
    assert cal.train_error < 1e-12 and math.isfinite(cal.loo_error)
    assert math.isnan(cal.fit.cv_error) and cal.fit.cluster == cal.cluster.replace(
        source=cluster.source)
    assert set(cal.ranges) == set(TRUTH)
    data = cal.to_dict()
    assert data["cv"] == "loo" and data["search"] == "coordinate"
    assert data["grid"]["sharing_weight"] == list(CALIBRATION_GRIDS["sharing_weight"])
    assert "(coordinate search)" in cal.text()
    with pytest.raises(SpecError) as err:
        calibrate_network(job, cluster, ms, search="random")
    assert err.value.field == "search"


def test_the_clusters_own_value_is_a_candidate(job, cluster):
    clu = cluster.replace(link_efficiency=0.87)   # off the 0.05-step grid
    ms = synthetic("sync", job, clu, IDENTIFYING)
    cal = calibrate_network(job, clu, ms, params=["link_efficiency"])
    assert cal.grids["link_efficiency"][-1] == 0.87 and cal.params == {"link_efficiency": 0.87}
    assert cal.train_error == cal.base_error == 0.0


def test_grids_take_unit_strings_and_reject_junk(job, cluster):
    ms = synthetic("sync", job, cluster, IDENTIFYING, cluster.replace(per_flow_cap=0.5e9))
    cal = calibrate_network(job, cluster, ms, params=["per_flow_cap"],
                            grids={"per_flow_cap": ("2Gbps", "4Gbps", "8Gbps")})
    assert cal.params == {"per_flow_cap": 0.5e9}   # 4 Gbps = 0.5e9 B/s
    for bad in ("0.5", [], [None], ["fast"]):
        with pytest.raises(SpecError) as err:
            calibrate_network(job, cluster, ms, params=["per_flow_cap"], grids={"per_flow_cap": bad})
        assert err.value.field == "grids.per_flow_cap"
