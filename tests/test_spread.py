"""The timeout probability read off the spread of step times (lossy links).

Hand-worked values of the moment estimator, its inverse by hypothesis, a
cross-check against the simulator's drawn stalls, the measurement field and
CSV column, the band of the selection, and the ns-3 matrix's batch-means
conversion.
"""

import dataclasses
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfmodel import coarse
from perfmodel.errors import SpecError
from perfmodel.fit.selection import TIMEOUT_BAND, default_candidates, select_model
from perfmodel.fit.timeouts import timeouts_from_step_times, with_timeout_band
from perfmodel.measurements import Measurement, measurements_csv, parse_measurements
from perfmodel.specs import Cluster, Config, Profile

PROF = Profile(model_bytes=100e6, t_forward=0.1, t_backward=0.2, t_update=0.01, batch_size=32)


def _spread(q, r, n, compute_std=0.0):
    """The step-time spread of two phases each stalled by r with chance 1 - (1 - q)**n."""
    pi = 1.0 - (1.0 - q) ** n
    return math.sqrt(compute_std ** 2 + 2.0 * pi * (1.0 - pi) * r * r)


# ---------------------------------------------------------------- the estimator

def test_estimator_by_hand():
    # 2 pi (1 - pi) = 0.18 -> pi = 0.1; two messages per phase: q = 1 - 0.9 ** 0.5
    got = coarse.timeout_probability_from_spread(math.sqrt(0.18), 1.0, 2)
    assert got == pytest.approx(1.0 - math.sqrt(0.9), rel=1e-12)
    # a 200 ms timeout: the same spread relative to r
    assert coarse.timeout_probability_from_spread(math.sqrt(0.095) * 0.2, 0.2, 1) == \
        pytest.approx(0.05)
    # an excess of at least r^2 / 2 is the largest spread stalls can make: pi = 1/2
    assert coarse.timeout_probability_from_spread(5.0, 1.0, 1) == pytest.approx(0.5)
    # vectorized
    out = coarse.timeout_probability_from_spread([0.0, math.sqrt(0.095)], 1.0, [1, 1])
    assert out.shape == (2,) and out[0] == 0.0 and out[1] == pytest.approx(0.05)


@settings(max_examples=200, deadline=None)
@given(q=st.floats(0.0, 0.25), r=st.floats(0.01, 5.0), n=st.integers(1, 24),
       c=st.floats(0.0, 2.0))
def test_estimator_inverts_the_spread(q, r, n, c):
    if 1.0 - (1.0 - q) ** n > 0.499:   # past pi = 1/2 the spread no longer grows
        return
    got = coarse.timeout_probability_from_spread(_spread(q, r, n, c), r, n, c)
    assert got == pytest.approx(q, abs=1e-7)


@settings(max_examples=100, deadline=None)
@given(s1=st.floats(0.0, 3.0), s2=st.floats(0.0, 3.0), n=st.integers(1, 12))
def test_estimator_is_monotone_and_bounded(s1, s2, n):
    lo, hi = sorted((s1, s2))
    a = coarse.timeout_probability_from_spread(lo, 1.0, n)
    b = coarse.timeout_probability_from_spread(hi, 1.0, n)
    assert 0.0 <= a <= b <= 1.0 - 0.5 ** (1.0 / n) + 1e-12


@pytest.mark.parametrize("kwargs, field", [
    (dict(step_time_std=-0.1, timeout=1.0, messages=1), "step_time_std"),
    (dict(step_time_std=0.1, timeout=0.0, messages=1), "timeout"),
    (dict(step_time_std=0.1, timeout=1.0, messages=0), "messages"),
    (dict(step_time_std=0.1, timeout=1.0, messages=1.5), "messages"),
    (dict(step_time_std=0.1, timeout=1.0, messages=1, compute_std=float("nan")), "compute_std"),
])
def test_estimator_bad_values_name_the_argument(kwargs, field):
    with pytest.raises(SpecError) as err:
        coarse.timeout_probability_from_spread(**kwargs)
    assert err.value.field == field


def test_estimator_recovers_the_simulators_stalls():
    """One worker, no compute jitter: the simulator's drawn stalls (q = 0.05, 1 s) give a
    step-time spread from which the estimator recovers q (4000 steps: ~400 stalls)."""
    from perfmodel.sim import Trace, simulate

    trace = Trace.from_layers([1e8], [0.1], [0.2], 0.01, overlap=False)
    res = simulate(trace, 1, 1.25e9, mode="sync", steps=4000, warmup=10, seed=3,
                   timeout_probability=0.05, retransmit_timeout=1.0)
    sd = float(np.std(res.step_times, ddof=1))
    got = coarse.timeout_probability_from_spread(sd, 1.0, 1)
    assert got == pytest.approx(0.05, rel=0.15)
    # and loss-free runs have no spread to read
    calm = simulate(trace, 1, 1.25e9, mode="sync", steps=200, warmup=10, seed=3)
    assert coarse.timeout_probability_from_spread(float(np.std(calm.step_times)), 1.0, 1) == 0


def test_delay_estimator_by_hand():
    assert coarse.timeout_probability_from_delay(0.80, 0.64, 1.0, 1) == pytest.approx(0.08)
    # two messages per phase: pi = 0.08 -> q = 1 - 0.92 ** 0.5
    assert coarse.timeout_probability_from_delay(0.80, 0.64, 1.0, 2) == pytest.approx(
        1.0 - math.sqrt(0.92))
    assert coarse.timeout_probability_from_delay(0.60, 0.64, 1.0, 1) == 0.0   # no excess
    assert coarse.timeout_probability_from_delay(5.0, 0.6, 1.0, 1) == 0.5     # clipped
    out = coarse.timeout_probability_from_delay([0.8, 0.64], 0.64, 1.0, 1)
    assert out.shape == (2,) and out[1] == 0.0
    for kwargs, field in ((dict(step_time_mean=0.0), "step_time_mean"),
                          (dict(step_time_median=-1.0), "step_time_median"),
                          (dict(timeout=0.0), "timeout"), (dict(messages=0), "messages")):
        args = dict(step_time_mean=0.8, step_time_median=0.64, timeout=1.0, messages=1)
        args.update(kwargs)
        with pytest.raises(SpecError) as err:
            coarse.timeout_probability_from_delay(**args)
        assert err.value.field == field


def test_delay_estimator_recovers_the_simulators_stalls():
    from perfmodel.sim import Trace, simulate

    trace = Trace.from_layers([1e8], [0.1], [0.2], 0.01, overlap=False)
    res = simulate(trace, 1, 1.25e9, mode="sync", steps=4000, warmup=10, seed=3,
                   timeout_probability=0.05, retransmit_timeout=1.0, jitter=0.1)
    st = res.step_times.ravel()
    got = coarse.timeout_probability_from_delay(st.mean(), np.median(st), 1.0, 1)
    assert got == pytest.approx(0.05, rel=0.15)


# ---------------------------------------------------------------- measurements

def test_measurement_step_time_std_field_and_column():
    m = Measurement(1, 1, "10Gbps", 100.0, step_time_std="250ms")
    assert m.step_time_std == pytest.approx(0.25)
    assert Measurement(1, 1, "10Gbps", 100.0).step_time_std is None
    with pytest.raises(SpecError) as err:
        Measurement(1, 1, "10Gbps", 100.0, step_time_std=-1)
    assert err.value.field == "step_time_std"
    ms = parse_measurements("workers,n_ps,bandwidth,throughput,step_time_std\n"
                            "1,1,10Gbps,100,300ms\n2,1,10Gbps,150,\n")
    assert ms[0].step_time_std == 0.3 and ms[1].step_time_std is None
    with pytest.raises(SpecError, match="line 2, column step_time_std: '0.3' needs a unit"):
        parse_measurements("workers,n_ps,bandwidth,throughput,step_time_std\n"
                           "1,1,10Gbps,100,0.3\n")
    with pytest.raises(SpecError) as err:
        parse_measurements("workers,n_ps,bandwidth,throughput,step_time_std\n1,1,1Gbps,1,x\n",
                           "m.csv")
    assert "line 2, column step_time_std" in str(err.value)
    med = parse_measurements("workers,n_ps,bandwidth,throughput,step_time_median\n"
                             "1,1,10Gbps,100,640ms\n")
    assert med[0].step_time_median == pytest.approx(0.64)
    with pytest.raises(SpecError) as err:
        Measurement(1, 1, "10Gbps", 100.0, step_time_median=0)
    assert err.value.field == "step_time_median"


# ---------------------------------------------------------------- selection

def test_spread_timeouts_reads_the_fewest_workers():
    clu = Cluster(machines=8, nic_bandwidth=1.25e9, retransmit_timeout=1.0, compute_cv=0.1)
    comp = 0.1 * (PROF.t_forward + PROF.t_backward)
    ms = [Measurement(2, 1, 1.25e9, 150.0, step_time_std=9.0),        # ignored: more workers
          Measurement(1, 1, 1.25e9, 100.0, step_time_std=_spread(0.04, 1.0, 1, comp))]
    q, used = timeouts_from_step_times(PROF, clu, ms)
    assert q == pytest.approx(0.04) and used.workers == 1
    # a sync step's phase has K n_ps messages, an async worker's n_ps
    two = [Measurement(2, 2, 1.25e9, 150.0, step_time_std=_spread(0.04, 1.0, 4, comp))]
    assert timeouts_from_step_times(PROF, clu, two)[0] == pytest.approx(0.04)
    two_async = [Measurement(2, 2, 1.25e9, 150.0, mode="async",
                             step_time_std=_spread(0.04, 1.0, 2, comp))]
    assert timeouts_from_step_times(PROF, clu, two_async)[0] == pytest.approx(0.04)
    # the compute's spread scales with the measurement's batch
    big = [Measurement(1, 1, 1.25e9, 100.0, batch_size=64,
                       step_time_std=_spread(0.04, 1.0, 1, 2 * comp))]
    assert timeouts_from_step_times(PROF, clu, big)[0] == pytest.approx(0.04)
    assert timeouts_from_step_times(PROF, clu, [Measurement(1, 1, 1.25e9, 100.0)]) is None
    # the median, when given, is read first: 32 samples at 40/s is a 0.8 s mean step
    both = [Measurement(1, 1, 1.25e9, 40.0, step_time_std=9.0, step_time_median=0.64)]
    assert timeouts_from_step_times(PROF, clu, both)[0] == pytest.approx(0.08)


def test_timeout_band_orders_the_grid_nearest_first():
    cand = default_candidates("sync", lossy=True)[0]
    banded = with_timeout_band(cand, 0.033)
    values = banded.grid["timeout_probability"]
    assert values[0] == 0.033
    assert all(0.033 / TIMEOUT_BAND <= v <= 0.033 * TIMEOUT_BAND for v in values)
    assert list(values) == sorted(values, key=lambda v: abs(v - 0.033))
    assert 0.02 in values and 0.06 in values and 0.015 not in values and 0.07 not in values
    assert banded.grid["link_efficiency"] == cand.grid["link_efficiency"]
    assert with_timeout_band(cand, 0.0).grid["timeout_probability"] == (0.0,)
    whole = with_timeout_band(cand, 0.033, math.inf).grid["timeout_probability"]
    assert whole[0] == 0.033 and set(whole) == set(cand.grid["timeout_probability"]) | {0.033}
    plain = default_candidates("sync")[0]
    assert with_timeout_band(plain, 0.05) is plain
    for bad, field in ((dict(probability=1.5), "probability"),
                       (dict(probability=0.1, band=0.5), "band"),
                       (dict(probability=0.1, band=float("nan")), "band")):
        with pytest.raises(SpecError) as err:
            with_timeout_band(cand, **bad)
        assert err.value.field == field


def _eq7_runs(q=0.06, eff=0.9, ks=(1, 2, 8)):
    truth = Cluster(machines=13, nic_bandwidth=1.25e9, link_efficiency=eff,
                    timeout_probability=q, retransmit_timeout=1.0)
    model = coarse.SyncCoarse("ps")
    return {k: model.estimate(PROF, truth, Config(n_replicas=k, n_ps=1)).throughput for k in ks}


def test_select_model_holds_q_near_the_spread():
    """Runs of eq. 7 with q = 0.06: with the spread of the 1-worker runs, q stays in the
    band around 0.06 and the choice says so; without loss (lossy=False) it is ignored."""
    runs = _eq7_runs()
    sd = _spread(0.06, 1.0, 1)
    ms = [Measurement(1, 1, 1.25e9, runs[1], 32, "sync", step_time_std=sd),
          Measurement(2, 1, 1.25e9, runs[2], 32, "sync")]
    base = Cluster(machines=13, nic_bandwidth=1.25e9, retransmit_timeout=1.0)
    sel = select_model(PROF, base, ms, link_sharing="fair", lossy=True)
    assert sel.timeout_estimate == pytest.approx(0.06)
    assert sel.chosen.overrides["timeout_probability"] == pytest.approx(0.06)
    assert "read off the step times" in sel.chosen.why and "1 worker" in sel.chosen.why
    got = sel.chosen.estimate(PROF, base, Config(n_replicas=8, n_ps=1)).throughput
    assert got == pytest.approx(runs[8], rel=1e-9)
    assert sel.to_dict()["timeout_estimate"] == pytest.approx(0.06)
    # every candidate's q was held in the band
    for cal in sel.calibrated:
        q = cal.overrides.get("timeout_probability")
        assert q is None or 0.03 <= q <= 0.12
    off = select_model(PROF, base, ms, link_sharing="fair")
    assert off.timeout_estimate is None and "timeout_probability" not in off.chosen.overrides
    with pytest.raises(SpecError) as err:
        select_model(PROF, base, ms, lossy=True, timeout_band=0.5)
    assert err.value.field == "timeout_band"


def test_select_model_spread_fixes_q_when_lossiness_is_unknown():
    """lossy=None fits q only beyond the other tunables; the spread still sets it."""
    runs = _eq7_runs()
    ms = [Measurement(1, 1, 1.25e9, runs[1], 32, "sync", step_time_std=_spread(0.06, 1.0, 1)),
          Measurement(2, 1, 1.25e9, runs[2], 32, "sync")]
    base = Cluster(machines=13, nic_bandwidth=1.25e9, retransmit_timeout=1.0)
    sel = select_model(PROF, base, ms, link_sharing="fair", lossy=None)
    assert sel.chosen.overrides["timeout_probability"] == pytest.approx(0.06)


def test_cli_predict_reads_the_step_time_spread(capsys, tmp_path):
    from perfmodel.cli import main
    from perfmodel.io import save

    runs = _eq7_runs()
    csv = tmp_path / "m.csv"
    csv.write_text("workers,n_ps,bandwidth,throughput,batch_size,step_time_std\n"
                   f"1,1,10Gbps,{runs[1]!r},32,{_spread(0.06, 1.0, 1)!r} s\n"
                   f"2,1,10Gbps,{runs[2]!r},32,\n")
    prof, clu = tmp_path / "p.json", tmp_path / "c.json"
    save(PROF, prof)
    save(Cluster(machines=13, nic_bandwidth=1.25e9, retransmit_timeout=1.0), clu)
    code = main(["predict", "--measurements", str(csv), "--profile", str(prof), "--cluster",
                 str(clu), "--lossy", "--workers", "8", "--bandwidth", "10Gbps",
                 "--format", "json"])
    out, _ = capsys.readouterr()
    assert code == 0
    (record,) = json.loads(out)
    assert record["calibration"]["timeout_probability"] == pytest.approx(0.06)
    assert "read off the step times" in record["why"]
    assert record["throughput"] == pytest.approx(runs[8], rel=1e-9)


# ---------------------------------------------------------------- the ns-3 matrix

def test_ns3_step_time_std_from_batch_means():
    from perfmodel.fit.validation import NS3Run, _step_time_std

    def run(mode, workers, thr, std, seed=0):
        return NS3Run("r", "fair", 0.003, 1.25e9, mode, False, "per_step", 0.1, workers, 1,
                      128, thr, std, 12, seed, 1.0)

    # sync, one worker: T = 1.28 s, batches of 3 steps at 10% spread -> 3 (0.128)^2
    assert _step_time_std([run("sync", 1, 100.0, 10.0)], 4) == pytest.approx(
        math.sqrt(3) * 0.128)
    # seeds pool their variances
    two = [run("sync", 1, 100.0, 10.0), run("sync", 1, 100.0, 20.0, 1)]
    assert _step_time_std(two, 4) == pytest.approx(math.sqrt(3 * (0.128 ** 2 + 0.256 ** 2) / 2))
    # async, two workers: a batch holds 3 cycles of each, the two average
    assert _step_time_std([run("async", 2, 200.0, 20.0)], 4) == pytest.approx(
        math.sqrt(6) * 0.128)


def test_ns3_cells_read_the_spread_of_a_lossy_regime():
    """A lossy regime of eq. 7 (q = 0.06) whose 1-worker rows carry the batch-means spread
    the stalls make: the header's batch count is read and q is held at the spread's."""
    from perfmodel import zoo
    from perfmodel.fit.validation import NS3_COLUMNS, ns3_cells, parse_ns3

    prof = zoo.profile("resnet50-pipedream").replace(t_update=0.03)
    truth = Cluster(machines=32, nic_bandwidth=1.25e9, link_efficiency=0.9,
                    timeout_probability=0.06, retransmit_timeout=1.0)
    rows = []
    for w in range(1, 7):
        thr = coarse.SyncCoarse("ps").estimate(prof, truth, Config(n_replicas=w)).throughput
        step = w * 128 / thr
        sd = _spread(0.06, 1.0, 1) / math.sqrt(100 / 4) / step * thr if w == 1 else 0.0
        rows.append(f"r,fair,0.003,1.25e9,sync,0,per_step,0,{w},1,128,{thr!r},{sd!r},100,0,1.0")
    text = ("# engine: TCP NewReno, min RTO 1 s\n# job: resnet50-pipedream, t_update = 30 ms\n"
            "# throughput_std = std (ddof 1) of the throughput over 4 equal batches\n" +
            ",".join(NS3_COLUMNS) + "\n" + "\n".join(rows) + "\n")
    header, runs = parse_ns3(text)
    assert header["batches"] == 4
    cells = {(c.model, c.stage): c for c in ns3_cells(runs=runs, header=header)}
    cal = cells[("sync-ps", "calibrated")]
    assert "timeout_probability=0.06" in cal.detail and cal.max_error < 1e-9
    assert "read off the step times at 1 worker" in cells[("selected", "selected")].detail


def test_calibrate_network_holds_q_near_the_spread():
    """`calibrate fit` (fit.network.calibrate_network) bands q as the selection does; an explicit
    grid for it is left alone."""
    from perfmodel.fit.network import calibrate_network

    runs = _eq7_runs(q=0.06, eff=0.9, ks=(1, 2))
    base = Cluster(machines=13, nic_bandwidth=1.25e9, retransmit_timeout=1.0)
    ms = [Measurement(1, 1, 1.25e9, runs[1], 32, "sync", step_time_std=_spread(0.06, 1.0, 1)),
          Measurement(2, 1, 1.25e9, runs[2], 32, "sync")]
    cal = calibrate_network(PROF, base, ms, model=coarse.SyncCoarse("ps"),
                            params=("link_efficiency", "timeout_probability"), cv=None)
    values = cal.grids["timeout_probability"]
    assert values[0] == 0.06 and 0.0 not in values
    assert all(0.03 <= v <= 0.12 for v in values)
    assert cal.cluster.timeout_probability == pytest.approx(0.06)
    assert cal.cluster.link_efficiency == pytest.approx(0.9)
    mine = calibrate_network(PROF, base, ms, model=coarse.SyncCoarse("ps"), cv=None,
                             params=("link_efficiency", "timeout_probability"),
                             grids={"timeout_probability": (0.0, 0.3)})
    assert set(mine.grids["timeout_probability"]) == {0.0, 0.3}


def test_calibrate_network_reads_a_modeless_spread_as_the_models_mode():
    """A CSV without a mode column: the spread at 2 workers is one sync step's (2 messages a
    phase) for a sync model, one worker's cycle (1 message) for the async MVA."""
    from perfmodel.fit.network import CALIBRATION_GRIDS, calibrate_network
    from perfmodel.fit.timeouts import TIMEOUT_BAND, band_values
    from perfmodel.queueing import AsyncMVA

    base = Cluster(machines=13, nic_bandwidth=1.25e9, retransmit_timeout=1.0)
    std = _spread(0.06, 1.0, 2)
    ms = [Measurement(2, 1, 1.25e9, 150.0, 32, step_time_std=std),
          Measurement(3, 1, 1.25e9, 200.0, 32)]
    grid = CALIBRATION_GRIDS["timeout_probability"]
    for model, n in ((coarse.SyncCoarse("ps"), 2), (AsyncMVA(), 1)):
        cal = calibrate_network(PROF, base, ms, model=model, cv=None,
                                params=("link_efficiency", "timeout_probability"))
        q = coarse.timeout_probability_from_spread(std, 1.0, n, 0.0)
        assert cal.grids["timeout_probability"] == band_values(grid, q, TIMEOUT_BAND)
    assert coarse.timeout_probability_from_spread(std, 1.0, 1, 0.0) > 0.1 > 0.06


def test_simulator_candidates_replicate_on_lossy_links():
    from perfmodel.fit.selection import LOSSY_REPLICATIONS

    def reps(**kw):
        sims = [c.model for c in default_candidates("sync", simulate=True, **kw)
                if c.family == "simulation"]
        return {s.replications for s in sims}

    assert reps() == {1} and reps(lossy=True) == {LOSSY_REPLICATIONS} == reps(lossy=None)
    assert reps(lossy=True, replications=2) == {2}


@pytest.mark.skipif(not __import__("perfmodel.placement.ns3_job",
                                   fromlist=["available"]).available(),
                    reason="the optional ns3 package is not installed")
def test_ns3_one_worker_stalls_read_by_delay_and_by_spread():
    """ns-3 (real TCP NewReno, 1 s minimum RTO, 0.3% loss per device), one worker on the
    fair 10 Gbps link: the mean-minus-median reading agrees between async (3 seeds x 39
    steps) and sync (9 x 12), the variance reading does not (the argument of
    coarse.timeout_probability_from_delay's docstring)."""
    from perfmodel import zoo
    from perfmodel.placement import ns3_job

    p = zoo.profile("resnet50-pipedream")
    comp = 0.1 * (p.t_forward + p.t_backward)
    got = {}
    for mode, steps, seeds in (("async", 40, range(3)), ("sync", 12, range(9))):
        st = np.concatenate([ns3_job.simulate_ps_job_ns3(
            p.model_bytes, 1.25e9, p.t_forward, p.t_backward, 0.02, 1, mode=mode, queue="fair",
            loss_rate=3e-3, compute_cv=0.1, batch_size=128, scale=100, steps=steps, warmup=2,
            batches=4, seed=seed, min_rto=1.0).step_times for seed in seeds])
        got[mode] = (coarse.timeout_probability_from_delay(st.mean(), np.median(st), 1.0, 1),
                     coarse.timeout_probability_from_spread(st.std(ddof=1), 1.0, 1, comp))
    assert got["async"][0] == pytest.approx(0.084, abs=0.002)
    assert got["sync"][0] == pytest.approx(0.069, abs=0.002)
    assert got["async"][1] == pytest.approx(0.196, abs=0.002)
    assert got["sync"][1] == pytest.approx(0.068, abs=0.002)
    ratio = got["async"][0] / got["sync"][0]
    assert 0.67 < ratio < 1.5


def test_measurement_from_a_log_of_step_times():
    steps = [0.6, 0.6, 1.6, 0.6]             # one stall of 1 s among four steps
    m = Measurement.from_step_times(2, 1, "10Gbps", steps, 32, "sync")
    assert m.throughput == pytest.approx(2 * 32 / 0.85)
    assert m.step_time_median == 0.6 and m.step_time_std == pytest.approx(0.5)
    assert m.bandwidth == 1.25e9 and m.mode == "sync" and m.batch_size == 32
    for bad, text in (([1.0], "at least 2"), ([0.5, -1.0], "-1.0"),
                      ([0.5, float("nan")], "nan"), ("ab", "seconds")):
        with pytest.raises(SpecError, match=text) as err:
            Measurement.from_step_times(1, 1, "1Gbps", bad, 32)
        assert err.value.field == "step_times"
    # a log of the simulator's stalled steps gives back its q through the selection's reading
    from perfmodel.sim import Trace, simulate

    trace = Trace.from_layers([1e8], [0.1], [0.2], 0.01, overlap=False)
    res = simulate(trace, 1, 1.25e9, mode="sync", steps=3000, warmup=10, seed=5,
                   timeout_probability=0.05, retransmit_timeout=1.0)
    logged = Measurement.from_step_times(1, 1, 1.25e9, res.step_times, 1)
    prof = Profile(model_bytes=1e8, t_forward=0.1, t_backward=0.2, t_update=0.01, batch_size=1)
    clu = Cluster(machines=2, nic_bandwidth=1.25e9, retransmit_timeout=1.0)
    assert timeouts_from_step_times(prof, clu, [logged])[0] == pytest.approx(0.05, rel=0.15)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 64), st.integers(0, 8), st.floats(1e6, 1e12),
                          st.floats(1e-3, 1e6), st.none() | st.floats(1e-6, 1e3),
                          st.none() | st.sampled_from(["sync", "async"])), min_size=1, max_size=8))
def test_measurements_csv_round_trips_with_units(rows):
    ms = [Measurement(w, p, b, t, step_time_std=sd, mode=mode) for w, p, b, t, sd, mode in rows]
    text = measurements_csv(ms)
    assert "bandwidth" in text.splitlines()[0]
    back = parse_measurements(text)
    strip = [dataclasses.replace(m, line=0) for m in back]
    assert strip == ms
