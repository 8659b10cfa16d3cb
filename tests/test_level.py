"""Fitting a model's level: one slowdown of every step (perfmodel.fit.level)."""

import dataclasses
import math

import pytest
from cli_json import records_or_json
from hypothesis import given, settings
from hypothesis import strategies as st

from perfmodel import zoo
from perfmodel.cli import main
from perfmodel.coarse import SyncCoarse
from perfmodel.errors import SpecError
from perfmodel.fit.grid import fit_tunables
from perfmodel.fit.level import SLOWDOWNS, Leveled, leveled
from perfmodel.fit.selection import (
    LEVELED,
    default_candidates,
    levels_on,
    select_model,
    tunables_earned,
)
from perfmodel.measurements import Measurement
from perfmodel.queueing import AsyncMVA
from perfmodel.result import Estimate
from perfmodel.specs import Cluster, Config

PROFILE = zoo.profile("resnet50-pipedream")
CLUSTER = Cluster(machines=20, nic_bandwidth="10Gbps")


@given(slowdown=st.floats(0.1, 10.0), workers=st.integers(1, 32))
@settings(max_examples=40, deadline=None)
def test_every_step_phase_and_epoch_is_slowed_by_the_same_factor(slowdown, workers):
    config = Config(n_replicas=workers, n_ps=2, epoch_samples=1_000_000)
    plain = SyncCoarse().estimate(PROFILE, CLUSTER, config)
    slow = Leveled(SyncCoarse(), slowdown).estimate(PROFILE, CLUSTER, config)
    assert slow.step_time == pytest.approx(plain.step_time * slowdown, rel=1e-12)
    assert slow.throughput == pytest.approx(plain.throughput / slowdown, rel=1e-12)
    assert slow.epoch_time == pytest.approx(plain.epoch_time * slowdown, rel=1e-12)
    assert math.isclose(sum(slow.phases.values()), slow.step_time, rel_tol=1e-9)
    assert slow.bottleneck == plain.bottleneck and slow.meta["slowdown"] == slowdown


def test_an_interval_is_slowed_with_its_estimate():
    est = Estimate(step_time=2.0, throughput=10.0, throughput_interval=(8.0, 12.0))
    assert leveled(est, 2.0).throughput_interval == (4.0, 6.0)


@pytest.mark.parametrize("bad", [0, -1.0, math.nan, math.inf, True, "1.2"])
def test_a_bad_slowdown_is_named(bad):
    with pytest.raises(SpecError, match="slowdown"):
        Leveled(SyncCoarse(), bad)


def test_the_grid_tries_the_model_as_it_is_first_and_reaches_three():
    assert SLOWDOWNS[0] == 1.0 and min(SLOWDOWNS) == 0.7 and max(SLOWDOWNS) == 3.0
    assert len(set(SLOWDOWNS)) == len(SLOWDOWNS)


def test_on_a_loss_free_link_the_fair_sync_candidates_fit_their_level():
    plain = default_candidates("sync", simulate=True)
    assert not any(isinstance(c.model, Leveled) for c in plain)
    for lossy in (False, None, True):
        cands = {c.name: c for c in default_candidates("sync", simulate=True, lossy=lossy,
                                                       leveled=True)}
        for name in LEVELED["sync"]:
            leveled_here = isinstance(cands[name].model, Leveled)
            assert leveled_here == (lossy is False), (name, lossy)
            if leveled_here:
                assert list(cands[name].grid) == ["slowdown"]
                assert cands[name].exact_links == ()
        assert not isinstance(cands["sync-fcfs"].model, Leveled)
    for lossy in (False, None, True):   # async: by its level on any link
        leveled_async = [c.name for c in default_candidates("async", simulate=True, lossy=lossy,
                                                            leveled=True)
                         if isinstance(c.model, Leveled)]
        assert leveled_async == list(LEVELED["async"]) == [
            "async-mva", "async-fcfs", "async-convoy"], lossy


def test_levels_on_loss_free_links_and_for_async_on_any():
    assert [levels_on(m, lossy) for m in ("sync", "async") for lossy in (False, None, True)] \
        == [True, False, False, True, True, True]


def test_a_lossy_async_selection_fits_the_mva_by_its_level():
    """An async job on a lossy link: the MVA answers calibrated by its level (no
    timeout probability among its fitted values)."""
    truth = Leveled(AsyncMVA(), 1.15)
    runs = [Measurement(k, 1, CLUSTER.nic_bandwidth,
                        truth.estimate(PROFILE, CLUSTER, Config(n_replicas=k, mode="async"))
                        .throughput, PROFILE.batch_size, "async", step_time_std=0.05)
            for k in (1, 2)]
    sel = select_model(PROFILE, CLUSTER, runs, mode="async", lossy=True)
    assert sel.chosen.name == "async-mva"
    assert isinstance(sel.chosen.model, Leveled)
    assert sel.chosen.model.slowdown == pytest.approx(1.15)
    assert "timeout_probability" not in sel.chosen.overrides
    # the spread was read (for the other candidates), but the answer fits no q: why says so
    assert sel.timeout_estimate is not None
    assert "timeout probability held near" not in sel.chosen.why
    assert "stall holds back that worker alone" in sel.chosen.why


def test_runs_slower_than_eq7_by_a_constant_factor_are_predicted_at_every_size():
    """Runs made by eq. 7 with every step 1.23 times longer: the selection fits the
    slowdown on 1 and 2 workers and predicts 16 workers as made."""
    truth = Leveled(SyncCoarse(sharing="ps"), 1.23)
    runs = [Measurement(k, 1, CLUSTER.nic_bandwidth,
                        truth.estimate(PROFILE, CLUSTER, Config(n_replicas=k)).throughput,
                        PROFILE.batch_size, "sync") for k in (1, 2)]
    sel = select_model(PROFILE, CLUSTER, runs, mode="sync")
    assert sel.chosen.name == "sync-ps"
    want = truth.estimate(PROFILE, CLUSTER, Config(n_replicas=16)).throughput
    got = sel.chosen.estimate(PROFILE, CLUSTER, Config(n_replicas=16))
    assert got.throughput == pytest.approx(want, rel=1e-9)
    assert got.meta["slowdown"] == 1.23
    assert "every step 1.23 times the model's" in sel.chosen.why


def _runs(model, workers, cluster=CLUSTER):
    return [Measurement(k, 1, cluster.nic_bandwidth,
                        model.estimate(PROFILE, cluster, Config(n_replicas=k)).throughput,
                        PROFILE.batch_size, "sync") for k in workers]


def test_auto_fits_the_level_on_two_worker_counts_and_the_shape_on_more():
    """A slower link changes the shape: from runs at 1-6 workers the tunables recover it;
    runs at 1-2 workers fit the level (the span rule of ``calibration``)."""
    truth = SyncCoarse(sharing="ps")
    slow_link = CLUSTER.replace(link_efficiency=0.8)
    many = select_model(PROFILE, CLUSTER, _runs(truth, range(1, 7), slow_link))
    assert many.chosen.overrides["link_efficiency"] == pytest.approx(0.8)
    assert not isinstance(many.chosen.model, Leveled)
    few = select_model(PROFILE, CLUSTER, _runs(truth, (1, 2, 2), slow_link))
    assert isinstance(few.chosen.model, Leveled) and few.chosen.model.slowdown > 1
    forced = select_model(PROFILE, CLUSTER, _runs(truth, (1, 2), slow_link),
                          calibration="tunables")
    assert "link_efficiency" in forced.chosen.overrides
    wide = select_model(PROFILE, CLUSTER, _runs(truth, (1, 12), slow_link))
    assert wide.chosen.overrides["link_efficiency"] == pytest.approx(0.8)
    with pytest.raises(SpecError, match="calibration"):
        select_model(PROFILE, CLUSTER, _runs(truth, (1, 2)), calibration="shape")


def test_the_cli_fits_the_level_by_default_and_the_tunables_on_request(tmp_path, capsys):
    truth = Leveled(SyncCoarse(sharing="ps"), 1.1)
    path = tmp_path / "runs.csv"
    path.write_text("workers,n_ps,bandwidth,throughput\n" + "".join(
        f"{m.workers},1,10Gbps,{m.throughput!r}\n" for m in _runs(truth, (1, 2))))
    common = ["predict", "--measurements", str(path), "--profile", "zoo:resnet50-pipedream",
              "--workers", "8", "--bandwidth", "10Gbps", "--format", "json"]
    whys = {}
    for extra in ([], ["--calibration", "tunables"]):
        assert main(common + extra) == 0
        (record,) = records_or_json(capsys.readouterr().out)
        whys[tuple(extra)] = record["why"]
    assert "calibrated by its level: every step 1.1 times" in whys[()]
    assert "calibrated by its level" not in whys[("--calibration", "tunables")]
    assert main(["predict", "--calibration", "level"]) == 2   # the flag needs the runs
    assert "--calibration: acts only with --measurements" in capsys.readouterr().err


def test_auto_keeps_the_tunables_only_where_the_left_out_run_shows_their_growth():
    """``calibration="auto"`` on runs spanning 1-6 workers: a slower link changes how
    the step grows with K, which the level cannot follow, so the tunables beat its LOO
    error and stay; a job uniformly slower than the model has no growth to show, and
    the level answers (one number, the same LOO error within EVIDENCE)."""
    truth = SyncCoarse(sharing="ps")
    slow_link = CLUSTER.replace(link_efficiency=0.8)
    shaped = select_model(PROFILE, CLUSTER, _runs(truth, (1, 2, 6), slow_link))
    assert not isinstance(shaped.chosen.model, Leveled)
    assert shaped.chosen.overrides["link_efficiency"] == pytest.approx(0.8)
    assert "calibrated by its tunables, which beat its level's LOO error" in shaped.chosen.why
    uniform = select_model(PROFILE, CLUSTER, _runs(Leveled(truth, 1.2), (1, 2, 6)))
    assert isinstance(uniform.chosen.model, Leveled)
    assert uniform.chosen.model.slowdown == pytest.approx(1.2)
    assert "its tunables did not beat the level's LOO error" in uniform.chosen.why
    # forced, the tunables answer whatever their LOO error
    forced = select_model(PROFILE, CLUSTER, _runs(Leveled(truth, 1.2), (1, 2, 6)),
                          calibration="tunables")
    assert not isinstance(forced.chosen.model, Leveled)


def test_tunables_earn_their_place_by_more_than_the_evidence_margin():
    by_tunables = select_model(PROFILE, CLUSTER, _runs(SyncCoarse(sharing="ps"), (1, 2, 6)),
                               calibration="tunables").chosen
    level = dataclasses.replace(by_tunables, log_residuals=(0.05, -0.05, 0.0))
    assert by_tunables.loo_error == pytest.approx(0.0, abs=1e-9)
    assert tunables_earned(by_tunables, level, evidence=0.02)
    assert not tunables_earned(by_tunables, level, evidence=0.05)
    assert not tunables_earned(level, level)


def _fitted_slowdown(needed):
    """The level fitted to runs at 1, 2, ... workers, run i slower than eq. 7 by
    ``needed[i]`` (the slowdown that makes it exact)."""
    model = SyncCoarse(sharing="ps")
    runs = [Measurement(k, 1, CLUSTER.nic_bandwidth,
                        model.estimate(PROFILE, CLUSTER, Config(n_replicas=k)).throughput / r,
                        PROFILE.batch_size, "sync") for k, r in enumerate(needed, start=1)]
    fit = fit_tunables(Leveled(model), PROFILE, CLUSTER, runs, {"slowdown": SLOWDOWNS},
                       cv=None)
    return fit.best["slowdown"], fit.train_error


def test_two_runs_give_the_larger_slowdown_worked_by_hand():
    """Slowdowns 1.10 and 1.25: at s = 1.25 the errors are |1.10/1.25 - 1| = 0.12 and 0
    (mean 0.06); at 1.10, 0 and 0.25/1.10 (mean 0.0682); midway at 1.175, 0.075/1.175
    twice (0.0638).  Between the two the mean is (1.25 - 1.10) / s: lowest at 1.25."""
    slowdown, error = _fitted_slowdown((1.10, 1.25))
    assert slowdown == 1.25
    assert error == pytest.approx(0.06, rel=1e-9)


def test_the_level_is_the_median_weighted_by_the_slowdowns():
    """Slowdowns 1.0, 1.1, 1.5 (sum 3.6): 1.1 has 1.5 above and 1.0 below, so the mean
    error falls up to it and rises after.  Slowdowns 1.0, 1.05, 2.5: the one slow run
    outweighs the two others (2.5 > 2.05), so it sets the level."""
    assert _fitted_slowdown((1.0, 1.1, 1.5))[0] == 1.1
    assert _fitted_slowdown((1.0, 1.05, 2.5))[0] == 2.5


@given(first=st.sampled_from(SLOWDOWNS), second=st.sampled_from(SLOWDOWNS))
@settings(max_examples=40, deadline=None)
def test_two_runs_give_the_larger_of_their_slowdowns(first, second):
    assert _fitted_slowdown((first, second))[0] == max(first, second)
