"""Tests of the network-aware placement optimizer (our extension of Jain et al., Sec. 6).

Oracles: the lower bound W M / B on the most loaded link (a PS's own link
carries the model to each of its W workers), exhaustive enumeration on tiny
instances, and the four strategies of Jain et al., Sec. 4.3 under the flow-level
simulator.
"""

import numpy as np
import pytest

from perfmodel.errors import Infeasible, SpecError
from perfmodel.placement import (
    STRATEGIES,
    compare,
    exhaustive_placement,
    job_times,
    link_loads,
    max_link_load,
    optimize_placement,
    paper_racks,
    place,
    racks,
    star,
)

B = 10e9 / 8
PAPER = paper_racks()


def test_link_loads_by_hand():
    # star of 3: PS h0, workers h1, h2, 1 byte each way: the PS's up arc carries 2 bytes
    t = star(3, 1.0)
    p = place(t, "colocated", 1, 2)
    loads = link_loads(t, p)
    assert loads[t.arc_index[("h0", "tor0")]] == 2.0
    assert loads[t.arc_index[("tor0", "h0")]] == 2.0
    assert loads[t.arc_index[("h1", "tor0")]] == 1.0
    assert max_link_load(t, p, model_bytes=5.0) == 10.0
    assert job_times(t, p).tolist() == [4.0]


def test_paper_setting_reaches_the_lower_bound():
    best = optimize_placement(PAPER, 8, 7, seed=0)
    assert best.max_load * B == pytest.approx(7.0)        # lower bound W M / B
    for name in STRATEGIES:
        assert best.max_load <= max_link_load(PAPER, place(PAPER, name, 8, 7, seed=0)) + 1e-15
    assert best.placement.strategy == "optimized"
    assert len(set(best.placement.hosts().tolist())) == 64


def test_jobs_that_do_not_fit_a_rack():
    # 6 jobs of 1 PS + 9 workers: colocated is infeasible (a job needs two racks, 12 > 8)
    with pytest.raises(Infeasible):
        place(PAPER, "colocated", 6, 9)
    best = optimize_placement(PAPER, 6, 9, seed=0)
    assert best.max_load * B == pytest.approx(9.0)        # the lower bound again
    for name in ("random", "strided", "clustered"):
        p = place(PAPER, name, 6, 9, seed=0)
        assert best.max_load < max_link_load(PAPER, p)
        assert best.mean_job_time < job_times(PAPER, p).mean()


def test_optimized_placement_simulates_faster_than_every_strategy():
    best = optimize_placement(PAPER, 6, 9, seed=0).placement
    runs = compare(PAPER, ["random", "strided", "clustered", best], jobs=6, workers=9,
                   iterations=8, warmup=1, seed=0)
    for name in ("random", "strided", "clustered"):
        assert runs["optimized"].mean < runs[name].mean
    assert runs["optimized"].mean < 0.85 * runs["strided"].mean


@pytest.mark.parametrize("topo, jobs, workers, available", [
    (racks(2, 3, 1.0), 2, 2, None),
    (racks(3, 2, 1.0), 2, 2, None),
    (racks(3, 3, 1.0), 2, 1, [0, 1, 3, 4, 6, 8]),
    (racks(2, 4, 1.0, uplink_bandwidth=0.5), 2, 2, [0, 1, 2, 4, 5, 6, 7]),
])
@pytest.mark.parametrize("objective", ["max_load", "job_time"])
def test_optimizer_equals_exhaustive_on_tiny_instances(topo, jobs, workers, available,
                                                       objective):
    opt = optimize_placement(topo, jobs, workers, available=available, objective=objective,
                             seed=1, restarts=2)
    ref = exhaustive_placement(topo, jobs, workers, available=available, objective=objective)
    assert opt.value == pytest.approx(ref.value, rel=1e-9)
    if available is not None:
        assert set(opt.placement.hosts().tolist()) <= set(available)


def test_job_time_objective_and_determinism():
    a = optimize_placement(PAPER, 6, 9, objective="job_time", seed=4)
    b = optimize_placement(PAPER, 6, 9, objective="job_time", seed=4)
    assert a.placement == b.placement and a.value == b.value
    for name in ("random", "strided", "clustered"):
        assert a.mean_job_time < job_times(PAPER, place(PAPER, name, 6, 9, seed=0)).mean()


def test_optimizer_errors():
    with pytest.raises(Infeasible):
        optimize_placement(PAPER, 2, 7, available=range(10))
    with pytest.raises(SpecError) as err:
        optimize_placement(PAPER, 1, 1, objective="latency")
    assert err.value.field == "objective"
    with pytest.raises(SpecError) as err:
        optimize_placement(PAPER, 1, 1, restarts=-1)
    assert err.value.field == "restarts"
    with pytest.raises(SpecError) as err:
        optimize_placement(PAPER, 1, 1, available=["nohost"])
    assert err.value.field == "host"


def test_place_optimized_by_name():
    p = place(PAPER, "optimized", 8, 7, seed=0)
    assert p.strategy == "optimized"
    assert max_link_load(PAPER, p) * B == pytest.approx(7.0)
    assert np.all(link_loads(PAPER, p)[PAPER.uplink_arcs()] == 0)
