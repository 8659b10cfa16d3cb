"""optimizer.allocate: several jobs sharing one cluster.

Oracles: brute force over every allocation of exact machine counts (the
allocator works on "at most m machines" curves, so agreeing with brute force
on exact counts also checks the running maximum), the relaxation's own bound
and gap, and SyncCoarse's estimate for the configurations chosen on a real
case.
"""

import importlib
import itertools
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optimizer.allocate import (
    AUTO_EXACT_CELLS,
    Allocation,
    Curve,
    CurveModel,
    Job,
    allocate,
    concave_envelope,
    reference_throughputs,
    throughput_curve,
)
from optimizer.search import search
from perfmodel import zoo
from perfmodel.coarse import SyncCoarse
from perfmodel.errors import Infeasible, SpecError
from perfmodel.specs import Cluster, Config

allocate_module = importlib.import_module("optimizer.allocate")

REL = 1e-9


def cluster(n):
    return Cluster(machines=n, nic_bandwidth=1e9)


# --------------------------------------------------------------------------
# Brute force over exact machine counts
# --------------------------------------------------------------------------

FAIR = ("proportional", "speedup")
SUMS = FAIR + ("throughput",)
OBJECTIVES = SUMS + ("makespan",)


def options(job, n, objective):
    """(machines, throughput) choices of one job: exact counts within its bounds."""
    raw = job.model.throughputs
    low = 1 if job.min_machines is None else max(job.min_machines, 1)
    high = n if job.max_machines is None else min(job.max_machines, n)
    zero_ok = objective in ("throughput", "speedup")
    out = [(m, raw[m - 1]) for m in range(low, min(high, len(raw)) + 1)
           if raw[m - 1] is not None and (zero_ok or raw[m - 1] > 0)]
    if job.min_machines == 0 and zero_ok:
        out.insert(0, (0, 0.0))
    return out


def reference(job, n):
    """Throughput on the job's smallest allowed machine count with a positive one."""
    positive = [t for m, t in options(job, n, "proportional")]
    return positive[0] if positive else None


def term(job, n, objective, t):
    """One job's term of a sum objective, worked from the definitions."""
    if objective == "throughput":
        return job.weight * t
    speedup = t / reference(job, n) if t > 0 else 0.0
    return job.weight * (speedup if objective == "speedup" else math.log(speedup))


def brute_force(jobs, n, objective):
    """Best objective value over all allocations (None when nothing fits)."""
    best = None
    for combo in itertools.product(*(options(job, n, objective) for job in jobs)):
        if sum(m for m, _ in combo) > n:
            continue
        if objective in SUMS:
            value = sum(term(job, n, objective, t) for job, (_, t) in zip(jobs, combo))
            better = best is None or value > best
        else:
            value = max(job.work / t for job, (_, t) in zip(jobs, combo))
            better = best is None or value < best
        if better:
            best = value
    return best


@st.composite
def instances(draw, max_jobs=4, max_machines=10):
    n = draw(st.integers(1, max_machines))
    n_jobs = draw(st.integers(1, max_jobs))
    monotone = draw(st.booleans())
    value = st.one_of(st.none(), st.just(0.0), st.floats(0.1, 100.0))
    jobs = []
    for i in range(n_jobs):
        curve = draw(st.lists(value, min_size=1, max_size=n))
        if monotone:
            known = [v for v in curve if v is not None]
            curve = [None] * (len(curve) - len(known)) + sorted(known)
        low = draw(st.one_of(st.none(), st.integers(0, 3)))
        high = draw(st.one_of(st.none(), st.integers(max(low or 1, 1), max(n, low or 1) + 1)))
        jobs.append(Job.from_curve(curve, weight=draw(st.floats(0.1, 5.0)),
                                   work=draw(st.floats(1.0, 1000.0)),
                                   min_machines=low, max_machines=high, name=f"j{i}"))
    return jobs, n


def check_feasible(plan: Allocation, jobs, n):
    assert plan.used <= n
    for job, got in zip(jobs, plan.jobs):
        if got.config is None:
            assert got.machines == 0 and got.throughput == 0.0
            assert job.min_machines == 0 and plan.objective in ("throughput", "speedup")
            continue
        assert got.machines == got.config.machines
        assert got.machines >= (job.min_machines or 1)
        assert got.machines <= (job.max_machines or n)
        assert got.throughput == job.model.throughputs[got.machines - 1]


def recomputed(plan: Allocation):
    if plan.objective == "throughput":
        return sum(j.weight * j.throughput for j in plan.jobs)
    if plan.objective == "speedup":
        return sum(j.weight * j.speedup for j in plan.jobs)
    if plan.objective == "proportional":
        return sum(j.weight * math.log(j.speedup) for j in plan.jobs)
    return max(j.finish_time for j in plan.jobs)


@pytest.mark.parametrize("objective", OBJECTIVES)
@settings(max_examples=150, deadline=None)
@given(case=instances())
def test_exact_equals_brute_force(objective, case):
    jobs, n = case
    expected = brute_force(jobs, n, objective)
    if expected is None:
        with pytest.raises(Infeasible):
            allocate(jobs, cluster(n), objective=objective, method="exact")
        return
    plan = allocate(jobs, cluster(n), objective=objective, method="exact")
    assert plan.method == "exact" and plan.gap == 0.0 and plan.bound == plan.value
    assert plan.value == pytest.approx(expected, rel=REL)
    assert recomputed(plan) == pytest.approx(plan.value, rel=REL)
    check_feasible(plan, jobs, n)


@pytest.mark.parametrize("objective", OBJECTIVES)
@settings(max_examples=40, deadline=None)
@given(case=instances())
def test_relaxed_is_feasible_and_within_its_gap(objective, case):
    jobs, n = case
    if brute_force(jobs, n, objective) is None:
        with pytest.raises(Infeasible):
            allocate(jobs, cluster(n), objective=objective, method="relaxed")
        return
    plan = allocate(jobs, cluster(n), objective=objective, method="relaxed", compare=True)
    check_feasible(plan, jobs, n)
    assert plan.method == "relaxed"
    assert recomputed(plan) == pytest.approx(plan.value, rel=REL)
    exact, tol = plan.exact_value, 1e-7 * abs(plan.exact_value) + 1e-12
    if objective in SUMS:
        assert plan.bound >= exact - tol                      # relaxation bounds the optimum
        assert plan.value <= exact + tol
        assert exact - plan.value <= plan.gap * plan.bound + tol
    else:
        assert plan.bound <= exact + tol
        assert plan.value >= exact - tol
        assert plan.value - exact <= plan.gap * plan.bound + tol
    expected_gap = 0.0 if plan.value == exact else abs(plan.value - exact) / abs(exact)
    assert plan.exact_gap == pytest.approx(expected_gap, abs=1e-12)


# --------------------------------------------------------------------------
# Real case: SyncCoarse on the zoo's PipeDream profiles
# --------------------------------------------------------------------------

P3 = zoo.cluster("aws-p3.2xlarge").replace(machines=24)
NAMES = ("resnet50-pipedream", "vgg16-pipedream", "alexnet-pipedream")


@pytest.fixture(scope="module")
def real_jobs():
    return [Job(SyncCoarse(), zoo.profile(name), weight=w, work=1_281_167, name=name)
            for name, w in zip(NAMES, (1.0, 2.0, 1.0))]


@pytest.fixture(scope="module")
def real_curves(real_jobs):
    return [throughput_curve(job, P3) for job in real_jobs]


@pytest.mark.parametrize("objective", ["throughput", "makespan"])
@pytest.mark.parametrize("method", ["exact", "relaxed"])
def test_sync_coarse_on_zoo_profiles(real_jobs, real_curves, objective, method):
    plan = allocate(real_jobs, P3, objective=objective, method=method, curves=real_curves,
                    compare=True)
    assert plan.machines == 24 and plan.used <= 24
    for job, got in zip(real_jobs, plan.jobs):
        assert got.config is not None and got.config.n_ps >= 1
        truth = SyncCoarse().estimate(zoo.profile(job.name), P3, got.config)
        assert got.throughput == truth.throughput
        assert got.finish_time == pytest.approx(1_281_167 / truth.throughput, rel=REL)
    if method == "relaxed":
        assert plan.exact_gap <= plan.gap + 1e-12
    json.dumps(plan.to_dict(), allow_nan=False)


def test_sync_coarse_beats_an_even_split(real_jobs, real_curves):
    plan = allocate(real_jobs, P3, objective="throughput", method="exact", curves=real_curves)
    even = sum(job.weight * search(SyncCoarse(), job.workload, P3, machines=8).best.estimate
               .throughput for job in real_jobs)
    assert plan.value >= even * (1 - REL)
    span = allocate(real_jobs, P3, objective="makespan", curves=real_curves)
    even_span = max(job.work / search(SyncCoarse(), job.workload, P3, machines=8).best.estimate
                    .throughput for job in real_jobs)
    assert span.value <= even_span * (1 + REL)


def test_curve_matches_search_per_budget(real_jobs, real_curves):
    job, curve = real_jobs[0], real_curves[0]
    assert curve.lo == 2 and curve.throughput[1] == -np.inf     # one worker + one server
    assert np.all(np.diff(curve.throughput[curve.lo:]) >= 0)
    for m in (2, 5, 13, 24):
        best = search(SyncCoarse(), job.workload, P3, machines=m).best
        assert curve.throughput[m] == best.estimate.throughput
        assert curve.candidates[m].config.machines <= m


# --------------------------------------------------------------------------
# Behaviour
# --------------------------------------------------------------------------

def test_worked_example():
    # a: 10, 18, 24, 28; b (weight 2): 10, 20, 30, 40 weighted.  4 machines:
    # (1, 3) = 10 + 30 = 40 > (2, 2) = 38 > (3, 1) = 34.
    jobs = [Job.from_curve([10, 18, 24, 28], work=180),
            Job.from_curve([5, 10, 15, 20], weight=2.0, work=100)]
    plan = allocate(jobs, cluster(4), objective="throughput")
    assert [j.machines for j in plan.jobs] == [1, 3] and plan.value == 40.0
    assert [j.name for j in plan.jobs] == ["jobs[0]", "jobs[1]"]
    # makespan: (1,3): max(18, 6.67)=18; (2,2): max(10, 10)=10; (3,1): max(7.5, 20)=20
    span = allocate(jobs, cluster(4), objective="makespan")
    assert [j.machines for j in span.jobs] == [2, 2] and span.value == 10.0


def test_fair_objectives_worked_by_hand():
    # Speedups over 1 machine: a 1, 2, 3, 4; b 1, 1.9, 2.7, 3.4.  4 machines, both run:
    # raw sum (3, 1) = 310 > (2, 2) = 219; log-speedups (2, 2) = ln 2 + ln 1.9 = 1.335 >
    # (3, 1) = ln 3 = 1.099 > (1, 3) = ln 2.7 = 0.993; speedups (3, 1) = 4 > (2, 2) = 3.9.
    jobs = [Job.from_curve([100, 200, 300, 400], name="small"),
            Job.from_curve([10, 19, 27, 34], name="large")]
    assert [j.machines for j in allocate(jobs, cluster(4), objective="throughput").jobs] == [3, 1]
    fair = allocate(jobs, cluster(4))
    assert fair.objective == "proportional" and [j.machines for j in fair.jobs] == [2, 2]
    assert fair.value == pytest.approx(math.log(2) + math.log(1.9), rel=1e-15)
    assert [j.speedup for j in fair.jobs] == [2.0, 1.9]
    speed = allocate(jobs, cluster(4), objective="speedup")
    assert [j.machines for j in speed.jobs] == [3, 1] and speed.value == 4.0


def test_reference_is_the_smallest_running_configuration():
    curves = np.array([[-np.inf, -np.inf, 4.0, 6.0], [0.0, 0.0, 0.0, 0.0], [0.0, 2.0, 3.0, 3.0]])
    ref = reference_throughputs(curves)
    assert ref[0] == 4.0 and math.isnan(ref[1]) and ref[2] == 2.0
    # a job allowed out gets speedup 0 there (speedups: 3.25 for (0, 3) against 3 for (1, 2)
    # and (2, 1)), and must run under proportional fairness
    jobs = [Job.from_curve([1, 2, 3], min_machines=0, name="opt"), Job.from_curve([4, 8, 13])]
    speed = allocate(jobs, cluster(3), objective="speedup")
    assert [j.machines for j in speed.jobs] == [0, 3] and speed.jobs[0].speedup == 0.0
    fair = allocate(jobs, cluster(3))
    assert all(j.machines >= 1 for j in fair.jobs)


def test_proportional_does_not_starve_the_slow_dnn(real_jobs, real_curves):
    # samples/s differ 10x between these DNNs: the raw sum gives the smallest one nearly all
    # machines, proportional fairness gives every job more than its smallest configuration
    raw = allocate(real_jobs, P3, objective="throughput", curves=real_curves)
    fair = allocate(real_jobs, P3, curves=real_curves)
    assert min(j.machines for j in raw.jobs) == min(c.lo for c in real_curves)
    assert all(j.machines > c.lo for j, c in zip(fair.jobs, real_curves))
    assert all(j.speedup > 1.0 for j in fair.jobs)


def test_optional_job_is_left_out_and_max_is_respected():
    jobs = [Job.from_curve([100, 200, 300]),
            Job.from_curve([1, 2, 3], min_machines=0, name="tiny"),
            Job.from_curve([50, 100, 150], max_machines=1)]
    plan = allocate(jobs, cluster(4), objective="throughput")
    assert [j.machines for j in plan.jobs] == [3, 0, 1]
    assert plan.jobs[1].config is None and plan.jobs[1].throughput == 0.0
    assert plan.value == 350.0


def test_idle_machines_stay_idle_when_nothing_gains():
    plan = allocate([Job.from_curve([5, 5, 5])], cluster(3))
    assert plan.used == 1 and plan.jobs[0].config.machines == 1
    plan = allocate([Job.from_curve([5, 5, 5], work=10)], cluster(3), objective="makespan")
    assert plan.used == 1 and plan.value == 2.0


def test_makespan_spare_machines_go_by_weighted_gain():
    # 'a' needs 1 machine for the optimal makespan 10; the spare ones raise its throughput.
    jobs = [Job.from_curve([10, 20, 30], work=100), Job.from_curve([1, 1, 1], work=10)]
    plan = allocate(jobs, cluster(4), objective="makespan")
    assert plan.value == 10.0
    assert [j.machines for j in plan.jobs] == [3, 1]


def test_infeasible_cases():
    with pytest.raises(Infeasible, match="minimums need 6"):
        allocate([Job.from_curve([1, 2, 3], min_machines=3)] * 2, cluster(5))
    with pytest.raises(Infeasible, match="jobs\\[1\\]"):
        allocate([Job.from_curve([1]), Job.from_curve([None, None])], cluster(2))
    with pytest.raises(Infeasible, match="never finishes"):
        allocate([Job.from_curve([0.0, 0.0], work=1)], cluster(2), objective="makespan")
    with pytest.raises(Infeasible, match="min_machines=3 exceeds"):
        allocate([Job.from_curve([1, 2], min_machines=3)], cluster(2))
    with pytest.raises(Infeasible, match="no configuration"):
        allocate([Job(SyncCoarse(), zoo.profile("alexnet-pipedream"), max_machines=1)], P3)


def test_deterministic_and_json():
    rng = np.random.default_rng(7)
    jobs = [Job.from_curve(np.cumsum(rng.uniform(0, 10, 12)), weight=w, work=1e3)
            for w in rng.uniform(0.5, 2, 6)]
    for objective in OBJECTIVES:
        a = allocate(jobs, cluster(12), objective=objective, method="relaxed", compare=True)
        b = allocate(jobs, cluster(12), objective=objective, method="relaxed", compare=True)
        da, db = a.to_dict(), b.to_dict()
        for d in (da, db):
            d.pop("seconds"), d.pop("meta")
        assert da == db
        text = json.dumps(a.to_dict(), allow_nan=False)
        assert json.loads(text)["jobs"][0]["config"]["n_replicas"] >= 1


def test_auto_method(monkeypatch):
    jobs = [Job.from_curve([1, 2], work=4.0), Job.from_curve([3, 4], work=4.0)]
    assert allocate(jobs, cluster(3)).method == "exact"
    assert 2 * 4 ** 2 <= AUTO_EXACT_CELLS
    monkeypatch.setattr(allocate_module, "AUTO_EXACT_CELLS", 0)
    assert allocate(jobs, cluster(3)).method == "relaxed"
    assert allocate(jobs, cluster(3), objective="makespan").method == "exact"


def test_other_solver():
    import cvxpy

    jobs = [Job.from_curve([3, 5, 6], work=9.0), Job.from_curve([2, 4, 6], work=9.0)]
    for solver in ("HIGHS", "SCIPY"):
        if solver in cvxpy.installed_solvers():
            # (2, 2) is best for both: 5 + 4 = 9 samples/s, ln(5/3) + ln(4/2) = ln(10/3)
            for objective, best in (("throughput", 9.0), ("proportional", math.log(10 / 3))):
                plan = allocate(jobs, cluster(4), objective=objective, method="relaxed",
                                solver=solver, compare=True)
                assert plan.meta["solver"] == solver
                assert plan.value == plan.exact_value == pytest.approx(best, rel=1e-15)


def test_concave_envelope():
    rng = np.random.default_rng(3)
    x = np.arange(20)
    y = np.maximum.accumulate(rng.uniform(0, 5, 20))
    xs, ys = concave_envelope(x, y)
    assert xs[0] == 0 and xs[-1] == 19
    slopes = np.diff(ys) / np.diff(xs)
    assert np.all(np.diff(slopes) <= 1e-12)                      # concave
    assert np.all(np.interp(x, xs, ys) >= y - 1e-12)             # above every point
    assert concave_envelope([4], [2.0])[0].tolist() == [4]


def monotone_chain(x, y):
    hull = []
    for i in range(len(x)):
        while len(hull) >= 2 and (y[hull[-1]] - y[hull[-2]]) * (x[i] - x[hull[-2]]) <= \
                (y[i] - y[hull[-2]]) * (x[hull[-1]] - x[hull[-2]]):
            hull.pop()
        hull.append(i)
    return hull


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-100, 100), min_size=1, max_size=60), st.booleans())
def test_concave_envelope_equals_monotone_chain(y, monotone):
    y = np.maximum.accumulate(y) if monotone else np.array(y)
    x = np.arange(len(y)) * 2 + 1
    xs, ys = concave_envelope(x, y)
    hull = monotone_chain(x, y)
    assert xs.tolist() == x[hull].tolist() and ys.tolist() == y[hull].tolist()


def test_throughput_curve_at_most_semantics():
    job = Job.from_curve([None, 4.0, 3.0, 9.0], min_machines=0)
    curve = throughput_curve(job, cluster(5))
    assert isinstance(curve, Curve) and curve.machines == 5
    assert curve.throughput.tolist() == [0.0, 0.0, 4.0, 4.0, 9.0, 9.0]
    assert curve.lo == 0 and curve.hi == 4
    assert [c and c.config.machines for c in curve.candidates] == [None, None, 2, 2, 4, 4]
    assert not curve.throughput.flags.writeable


# --------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------

GOOD = Job.from_curve([1.0, 2.0])


@pytest.mark.parametrize("call, field", [
    (lambda: allocate([], cluster(2)), "jobs"),
    (lambda: allocate(GOOD, cluster(2)), "jobs"),
    (lambda: allocate([GOOD, "job"], cluster(2)), "jobs[1]"),
    (lambda: allocate([GOOD], "cluster"), "cluster"),
    (lambda: allocate([GOOD], cluster(2), machines=3), "machines"),
    (lambda: allocate([GOOD], cluster(2), machines=0), "machines"),
    (lambda: allocate([GOOD], cluster(2), machines=1.5), "machines"),
    (lambda: allocate([GOOD], cluster(2), objective="speed"), "objective"),
    (lambda: allocate([GOOD], cluster(2), method="magic"), "method"),
    (lambda: allocate([GOOD], cluster(2), objective="makespan"), "jobs[0].work"),
    (lambda: allocate([GOOD], cluster(2), method="relaxed", solver="NOPE"), "solver"),
    (lambda: allocate([GOOD], cluster(2), curves=[]), "curves"),
    (lambda: allocate([GOOD], cluster(2), curves=[throughput_curve(GOOD, cluster(2), 1)]),
     "curves"),
    (lambda: Job(object()), "model"),
    (lambda: throughput_curve("job", cluster(2)), "job"),
    (lambda: Job.from_curve([1.0], weight=0), "weight"),
    (lambda: Job.from_curve([1.0], weight=float("nan")), "weight"),
    (lambda: Job.from_curve([1.0], work=-1), "work"),
    (lambda: Job.from_curve([1.0], min_machines=-1), "min_machines"),
    (lambda: Job.from_curve([1.0], min_machines=True), "min_machines"),
    (lambda: Job.from_curve([1.0], max_machines=0), "max_machines"),
    (lambda: Job.from_curve([1.0], min_machines=3, max_machines=2), "min_machines"),
    (lambda: Job.from_curve([1.0], name=3), "name"),
    (lambda: CurveModel([1.0, -2.0]), "throughputs[1]"),
    (lambda: CurveModel([1.0, math.inf]), "throughputs[1]"),
    (lambda: CurveModel(5), "throughputs"),
])
def test_bad_input_names_the_field(call, field):
    with pytest.raises(SpecError) as err:
        call()
    assert err.value.field == field


def test_curve_model_infeasible_counts():
    model = CurveModel([1.0, None])
    with pytest.raises(Infeasible):
        model.estimate(None, None, Config(n_replicas=2, n_ps=0))
    with pytest.raises(Infeasible):
        model.estimate(None, None, Config(n_replicas=3, n_ps=0))
    assert model.estimate(None, None, Config(n_replicas=1, n_ps=0)).throughput == 1.0
