"""The spaced rule of ``select_model(spaced=True)``: async runs answered by the simulator
that replays the staggered schedule, where the update spacing makes one and the
simulator reproduces the runs unaided (and, from runs of 3 or more workers, fits their
growth about as well as the ordinary choice)."""

import math

import pytest

from perfmodel import zoo
from perfmodel.fit.level import Leveled
from perfmodel.fit.selection import (
    EVIDENCE,
    SPACED_LEVEL,
    SPACED_SPACING,
    select_model,
    spaced_candidate,
    spaced_choice,
    update_spacing,
)
from perfmodel.fit.validation import load_ns3
from perfmodel.measurements import Measurement
from perfmodel.queueing import AsyncMVA
from perfmodel.specs import Cluster, Config, Profile

# M / B = 0.08 s; T_S = 0.06 s: spacing 0.75, above the rule's 0.5
PROFILE = Profile(model_bytes=100e6, t_forward=0.03, t_backward=0.06, t_update=0.06,
                  batch_size=32)
CLUSTER = Cluster(machines=32, nic_bandwidth="10Gbps", compute_cv=0.0)


def _runs(model, workers, profile=PROFILE):
    return [Measurement(k, 1, CLUSTER.nic_bandwidth,
                        model.estimate(profile, CLUSTER, Config(n_replicas=k, mode="async"))
                        .throughput, profile.batch_size, "async") for k in workers]


def test_update_spacing_by_hand():
    assert update_spacing(PROFILE, CLUSTER) == pytest.approx(0.06 * 1.25e9 / 100e6)
    assert update_spacing(PROFILE.replace(t_update=0.008), CLUSTER) == pytest.approx(0.1)
    assert SPACED_SPACING == 0.5 and SPACED_LEVEL == 0.05


def test_an_overlapping_job_runs_on_four_layer_blocks_worked_by_hand():
    # one worker, T_F 0.03, T_B 0.06, M / B 0.08, T_S 0.06.  One block: nothing overlaps,
    # 0.09 + 0.08 + 0.06 + 0.08 = 0.31 s.  Four blocks (each T_F/4, T_B/4, M/4): the pull
    # of block i ends at S + 0.02 i and its forward follows (the forward ends at
    # S + 0.0875); each block's push (0.02) starts once its backward (0.015) is done and
    # the link is free, the last ending at S + 0.1825; the whole update then takes 0.06,
    # so the next pull starts at S + 0.2425
    config = Config(n_replicas=1, mode="async")
    serial = spaced_candidate(0.0, False).model.model.estimate(PROFILE, CLUSTER, config)
    blocked = spaced_candidate(0.0, True).model.model.estimate(PROFILE, CLUSTER, config)
    assert serial.step_time == pytest.approx(0.31, rel=1e-9)
    assert blocked.step_time == pytest.approx(0.2425, rel=1e-9)


def test_the_simulator_answers_where_the_spacing_staggers_and_it_fits_unaided():
    truth = spaced_candidate(0.0, False).model.model   # the simulator itself, unscaled
    sel = select_model(PROFILE, CLUSTER, _runs(truth, (1, 2)), mode="async", spaced=True)
    chosen = sel.chosen
    assert chosen.name == "sim-spaced" and isinstance(chosen.model, Leveled)
    assert chosen.model.slowdown == pytest.approx(1.0, abs=0.011)
    assert "update spacing T_S B / M = 0.75 >= 0.5" in chosen.why
    plain = select_model(PROFILE, CLUSTER, _runs(truth, (1, 2)), mode="async", spaced=False)
    assert chosen.alternatives[0].name == plain.chosen.name == "async-mva"
    # beyond the knee the staggered workers are faster than independent ones, and the
    # interval spans both
    config = Config(n_replicas=6, mode="async")
    est, mva = chosen.estimate(PROFILE, CLUSTER, config), plain.chosen.estimate(
        PROFILE, CLUSTER, config)
    assert est.throughput > mva.throughput
    low, high = est.throughput_interval
    assert low <= mva.throughput <= high and low <= est.throughput <= high


def test_it_declines_where_the_runs_need_a_correction_or_the_updates_are_short():
    truth = Leveled(spaced_candidate(0.0, False).model.model, 1.3)   # 30% slower than it
    runs = _runs(truth, (1, 2))
    sel = select_model(PROFILE, CLUSTER, runs, mode="async")   # the default
    assert sel.chosen.name == "async-mva" and "needs a slowdown of 1.3" in sel.chosen.why
    short = PROFILE.replace(t_update=0.008)   # spacing 0.1: the rule does not look
    plain = select_model(short, CLUSTER, _runs(truth, (1, 2), short), mode="async",
                         spaced=False)
    ruled = select_model(short, CLUSTER, _runs(truth, (1, 2), short), mode="async")
    assert ruled.chosen.name == plain.chosen.name and ruled.chosen.why == plain.chosen.why
    assert spaced_choice(plain.chosen, short, CLUSTER, runs, compute_cv=0.0,
                         overlap=False) is plain.chosen


def test_with_a_run_of_three_workers_or_more_it_must_fit_the_growth_too():
    # runs the simulator made itself, at 1, 2 and 4 workers: it answers, its LOO error at
    # most the ordinary choice's plus 2 points
    truth = spaced_candidate(0.0, False).model.model
    sel = select_model(PROFILE, CLUSTER, _runs(truth, (1, 2, 4)), mode="async")
    plain = select_model(PROFILE, CLUSTER, _runs(truth, (1, 2, 4)), mode="async",
                         spaced=False)
    assert sel.chosen.name == "sim-spaced" != plain.chosen.name
    assert sel.chosen.loo_error <= plain.chosen.loo_error + EVIDENCE
    assert sel.chosen.alternatives[0].name == plain.chosen.name
    # runs the MVA made: at 1-2 workers the simulator matches them (it answers), but the
    # 6-worker run shows the MVA's queueing, which the simulator misses
    mva = AsyncMVA()
    small = select_model(PROFILE, CLUSTER, _runs(mva, (1, 2)), mode="async")
    wide = select_model(PROFILE, CLUSTER, _runs(mva, (1, 2, 6)), mode="async")
    assert small.chosen.name == "sim-spaced"
    assert wide.chosen.name != "sim-spaced" and "fits the runs worse" in wide.chosen.why
    wide_plain = select_model(PROFILE, CLUSTER, _runs(mva, (1, 2, 6)), mode="async",
                              spaced=False)
    assert wide.chosen.name == wide_plain.chosen.name
    assert not math.isnan(wide.chosen.loo_error)


def test_the_ns3_matrix_replica_of_the_selection_never_meets_the_spaced_rule():
    # ns3_cells replays select_model's choice without the spaced rule: sound only while
    # every async regime of the ns-3 matrix has short updates (0.025 at 1 Gbps, 0.25 at 10)
    header, runs = load_ns3()
    job = zoo.profile("resnet50-pipedream").replace(t_update=header["t_update"])
    spacings = {update_spacing(job, Cluster(machines=2, nic_bandwidth=r.bandwidth))
                for r in runs if r.mode == "async"}
    assert spacings and max(spacings) < SPACED_SPACING
