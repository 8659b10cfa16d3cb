"""Error bars from the models themselves: the simulator's replications,
GST's iteration-time percentiles, and how the CLI and the plots show them."""

import json
import math

import numpy as np
import pytest
from scipy import stats

from perfmodel.cli import main
from perfmodel.errors import SpecError
from perfmodel.gst import GST
from perfmodel.sim.model import TraceSim
from perfmodel.specs import Cluster, Config, Profile

#: The example of Li et al. 2022, eq. 7 (TraceSim's docstring): step 2 K M / B + T_F + T_B + T_S.
PROFILE = Profile(model_bytes=100e6, t_forward=0.1, t_backward=0.2, t_update=0.01,
                  batch_size=32)
CLUSTER = Cluster(machines=8, nic_bandwidth="10Gbps")
#: A tiny job for many simulations (~1 ms each): compute dominates, so jitter shows.
TINY = Profile(model_bytes=10e6, t_forward=0.01, t_backward=0.02, t_update=0.001, batch_size=32)
JITTERY = Cluster(machines=8, nic_bandwidth="10Gbps", compute_cv=0.2)
TWO = Config(n_replicas=2, n_ps=1)
Z95 = 1.6448536269514722  # Phi^-1(0.95)


def tiny_sim(**options) -> TraceSim:
    return TraceSim(sharing="ps", steps=12, warmup=2, engine="python", **options)


# ---------------------------------------------------------------- simulator replications

def test_one_replication_is_todays_estimate_and_a_deterministic_trace_has_zero_width():
    cfg = Config(n_replicas=4, n_ps=1)
    one = TraceSim(sharing="ps", steps=20, warmup=2, replications=1).estimate(PROFILE, CLUSTER,
                                                                               cfg)
    assert one == TraceSim(sharing="ps", steps=20, warmup=2).estimate(PROFILE, CLUSTER, cfg)
    assert one.throughput_interval is None
    # eq. 7 by hand: 2 * 4 * 1e8 B / 1.25e9 B/s + 0.1 + 0.2 + 0.01 = 0.95 s for 4 * 32 samples
    assert one.step_time == pytest.approx(0.95, rel=1e-12)
    three = TraceSim(sharing="ps", steps=20, warmup=2, replications=3).estimate(PROFILE, CLUSTER,
                                                                                 cfg)
    assert three.throughput == pytest.approx(128 / 0.95, rel=1e-12)
    assert three.throughput_interval == pytest.approx((128 / 0.95, 128 / 0.95), rel=1e-12)
    assert three.meta["interval_source"] == "simulator replications"
    assert three.meta["replications"] == 3 and three.meta["interval_level"] == 0.9


def test_replications_are_the_mean_and_student_t_interval_of_independent_runs():
    sim = tiny_sim(replications=4, seed=7)
    est = sim.estimate(TINY, JITTERY, TWO)
    seeds = sim.replication_seeds()
    assert len(set(seeds)) == 4 and sim.seed not in seeds
    runs = [tiny_sim(seed=s).estimate(TINY, JITTERY, TWO).throughput for s in seeds]
    assert len(set(runs)) == 4  # the jitter makes every run different
    low, high = stats.t.interval(0.9, df=3, loc=np.mean(runs), scale=stats.sem(runs))
    assert est.throughput == pytest.approx(np.mean(runs), rel=1e-12)
    assert est.throughput_interval == pytest.approx((low, high), rel=1e-12)
    assert est.meta["replication_throughputs"] == pytest.approx(runs, rel=1e-12)
    # samples per step stay K * batch: step time and its interval follow the throughput
    assert est.step_time * est.throughput == pytest.approx(2 * 32, rel=1e-9)
    assert est.step_time_interval == pytest.approx((64 / high, 64 / low), rel=1e-9)
    assert sum(est.phases.values()) == pytest.approx(est.step_time, rel=1e-9)
    # deterministic: the same seed gives the same numbers, another seed others
    assert tiny_sim(replications=4, seed=7).estimate(TINY, JITTERY, TWO) == est
    assert tiny_sim(replications=4, seed=8).estimate(TINY, JITTERY, TWO).throughput \
        != est.throughput


def test_epoch_time_and_level_follow_the_mean():
    cfg = Config(n_replicas=2, n_ps=1, epoch_samples=6400)
    est = tiny_sim(replications=5).estimate(TINY, JITTERY, cfg)
    assert est.epoch_time == pytest.approx(6400 / est.throughput, rel=1e-12)
    wide = tiny_sim(replications=5, level=0.99).estimate(TINY, JITTERY, cfg)
    assert wide.throughput == est.throughput
    ratio = stats.t.ppf(0.995, 4) / stats.t.ppf(0.95, 4)  # same runs, another t quantile
    assert (wide.throughput_interval[1] - wide.throughput) == pytest.approx(
        ratio * (est.throughput_interval[1] - est.throughput), rel=1e-9)


def _mean_width(replications: int, seeds) -> float:
    return float(np.mean([np.diff(tiny_sim(replications=replications, seed=s).estimate(
        TINY, JITTERY, TWO).throughput_interval)[0] for s in seeds]))


def test_width_shrinks_like_one_over_sqrt_r():
    w8, w32 = _mean_width(8, range(6)), _mean_width(32, range(100, 106))
    # expected ratio: t(0.95, 31) / t(0.95, 7) * sqrt(8 / 32) = 0.447 (the sd is the same)
    expected = stats.t.ppf(0.95, 31) / stats.t.ppf(0.95, 7) * 0.5
    assert 0.7 * expected < w32 / w8 < 1.3 * expected


def test_five_replications_cover_the_long_run_mean_about_90_percent_of_the_time():
    truth = tiny_sim(replications=200, seed=10_000).estimate(TINY, JITTERY, TWO).throughput
    covered = 0
    for trial in range(40):
        low, high = tiny_sim(replications=5, seed=trial).estimate(TINY, JITTERY,
                                                                   TWO).throughput_interval
        covered += low <= truth <= high
    # Binomial(40, 0.9) is 36 +- 1.9; the long run's own error (~sd / sqrt(200)) costs little
    assert 31 <= covered <= 40


@pytest.mark.parametrize("options, field", [
    ({"replications": 0}, "replications"), ({"replications": 2.0}, "replications"),
    ({"replications": True}, "replications"), ({"level": 1.0}, "level"),
    ({"level": 0}, "level"), ({"level": "0.9"}, "level"),
])
def test_bad_replication_options_name_their_field(options, field):
    with pytest.raises(SpecError) as err:
        TraceSim(**options)
    assert err.value.field == field


# ---------------------------------------------------------------- GST percentiles

def gst(**options) -> GST:
    return GST(layer_pipeline=False, **options)


def test_gst_interval_is_off_by_default_and_changes_nothing_else():
    cfg = Config(n_replicas=4, n_ps=1, epoch_samples=10_000)
    plain = gst(sigma=0.01).estimate(PROFILE, CLUSTER, cfg)
    ranged = gst(sigma=0.01, interval="iteration").estimate(PROFILE, CLUSTER, cfg)
    assert plain.throughput_interval is None
    assert (ranged.throughput, ranged.step_time, ranged.epoch_time) == \
        (plain.throughput, plain.step_time, plain.epoch_time)
    assert ranged.meta["interval_source"] == "GST iteration-time percentiles"


def test_gst_one_worker_interval_is_the_normal_5th_and_95th_percentiles():
    est = gst(sigma=0.01, interval="iteration").estimate(PROFILE, CLUSTER,
                                                        Config(n_replicas=1, n_ps=1))
    # one worker: no straggler excess; 0.1 + 0.2 + 2 * 0.08 + 0.01 s plus a tiny AG delay
    assert est.phases["straggler"] == 0.0
    assert est.step_time == pytest.approx(0.47, rel=1e-3)
    t = est.step_time
    assert est.throughput_interval == pytest.approx((32 / (t + Z95 * 0.01),
                                                     32 / (t - Z95 * 0.01)), rel=1e-12)


def test_gst_interval_matches_monte_carlo_maxima_of_normals():
    n, sigma = 8, 0.02
    est = gst(sigma=sigma, interval="iteration").estimate(PROFILE, CLUSTER,
                                                         Config(n_replicas=n, n_ps=1))
    fixed = est.step_time - est.phases["straggler"]  # everything but the slowest worker's excess
    rng = np.random.default_rng(3)
    slowest = rng.normal(0.0, sigma, size=(200_000, n)).max(axis=1)
    t05, t95 = fixed + np.quantile(slowest, [0.05, 0.95])
    assert est.meta["iteration_quantiles"] == pytest.approx((t05, t95), rel=5e-4)
    samples = n * 32
    assert est.throughput_interval == pytest.approx((samples / t95, samples / t05), rel=5e-4)
    # the mean of the slowest (the straggler phase) lies inside; the interval holds throughput
    assert est.phases["straggler"] == pytest.approx(slowest.mean(), abs=2e-4)
    low, high = est.throughput_interval
    assert low < est.throughput < high


def test_gst_interval_with_exponential_delays_is_the_closed_form_quantile():
    n, scale = 4, 0.02
    est = GST(layer_pipeline=False, distribution=stats.expon(scale=scale),
              interval="iteration", level=0.8).estimate(PROFILE, CLUSTER,
                                                        Config(n_replicas=n, n_ps=1))
    fixed = est.step_time - est.phases["straggler"]
    # P(max <= x) = (1 - exp(-x / s))^n  =>  x_q = -s log(1 - q^(1/n))
    lo, hi = (fixed - scale * math.log(1 - q ** (1 / n)) for q in (0.1, 0.9))
    assert est.throughput_interval == pytest.approx((n * 32 / hi, n * 32 / lo), rel=1e-9)
    assert est.meta["interval_level"] == 0.8


def test_gst_without_spread_has_a_zero_width_interval():
    est = gst(interval="iteration").estimate(PROFILE, CLUSTER, Config(n_replicas=4, n_ps=1))
    assert est.throughput_interval == (est.throughput, est.throughput)


@pytest.mark.parametrize("options, field", [
    ({"interval": "mean"}, "interval"), ({"level": 1.5}, "level"), ({"level": True}, "level"),
])
def test_bad_gst_interval_options_name_their_field(options, field):
    with pytest.raises(SpecError) as err:
        GST(**options)
    assert err.value.field == field


# ---------------------------------------------------------------- the CLI

def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


RESNET = "resnet50-pipedream"


def _zoo_job():
    from perfmodel import zoo

    return zoo.profile(RESNET), zoo.cluster("aws-p3.2xlarge")


@pytest.mark.parametrize("flags, model, workers, words", [
    (("--model", "sim", "--replications", "3", "--jitter", "0.1"),
     lambda: TraceSim(replications=3, jitter=0.1), 2, ("throughput_low", "replications")),
    (("--model", "gst", "--interval", "iteration", "--cv", "0.05"),
     lambda: GST(cv=0.05, interval="iteration"), 4, ("throughput_high", "single iterations")),
])
def test_predict_prints_the_models_own_interval(capsys, flags, model, workers, words):
    """The simulator's replications and GST's single-iteration range reach JSON and the table."""
    code, out, _ = run(capsys, "predict", *flags, "--workers", str(workers), "--format", "json")
    assert code == 0
    (record,) = json.loads(out)
    profile, cluster = _zoo_job()
    est = model().estimate(profile, cluster, Config(n_replicas=workers, n_ps=1))
    assert record["throughput_interval"] == pytest.approx(list(est.throughput_interval))
    code, out, _ = run(capsys, "predict", *flags, "--workers", str(workers))
    assert code == 0 and all(w in out for w in words)


@pytest.mark.parametrize("argv, flag", [
    (["--model", "sync", "--replications", "3"], "--replications"),
    (["--model", "sim", "--interval", "iteration"], "--interval"),
])
def test_interval_flags_of_another_model_exit_2(capsys, argv, flag):
    code, _, err = run(capsys, "predict", *argv, "--workers", "2")
    assert code == 2 and flag in err and len(err.strip().splitlines()) == 1


# ---------------------------------------------------------------- the plots

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def drawn(monkeypatch):
    """The figures `perfmodel plot` saves, kept open for reading back."""
    import matplotlib.pyplot as plt

    from perfmodel import plot

    figures, save = [], plot.save

    def keep(fig_or_ax, path, **options):
        figures.append(getattr(fig_or_ax, "figure", fig_or_ax))
        return save(fig_or_ax, path, **dict(options, close=False))

    monkeypatch.setattr(plot, "save", keep)
    yield figures
    plt.close("all")


def _band_holds(band, workers, intervals):
    """The band's outline visits (K, low) and (K, high) at every K."""
    verts = band.get_paths()[0].vertices
    for k, (low, high) in zip(workers, intervals):
        assert np.any(np.all(np.isclose(verts, [k, low], rtol=1e-9), axis=1))
        assert np.any(np.all(np.isclose(verts, [k, high], rtol=1e-9), axis=1))


def test_plot_scalability_draws_the_replication_band(tmp_path, capsys, drawn):
    path = tmp_path / "sim.png"
    code, out, err = run(capsys, "plot", "scalability", "--model", "sim", "--replications", "2",
                         "--jitter", "0.1", "--workers", "1,2", "-o", str(path))
    assert code == 0 and err == "" and path.read_bytes().startswith(PNG_SIGNATURE)
    (ax,) = drawn[0].axes
    (band,) = ax.collections
    assert band.get_label() == "sim: 90% interval"
    profile, cluster = _zoo_job()
    sim = TraceSim(replications=2, jitter=0.1)
    ests = [sim.estimate(profile, cluster, Config(n_replicas=k, n_ps=1)) for k in (1, 2)]
    assert all(e.throughput_interval[0] < e.throughput_interval[1] for e in ests)
    _band_holds(band, (1, 2), [e.throughput_interval for e in ests])


def _measurements(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("workers,n_ps,bandwidth,throughput\n1,1,1Gbps,58.8\n2,1,1Gbps,80.4\n"
                    "3,1,1Gbps,91.6\n2,1,10Gbps,300\n")
    return path


def test_plot_scalability_with_measurements_draws_the_selected_model(tmp_path, capsys, drawn):
    from perfmodel.fit.selection import select_model
    from perfmodel.io import load_measurements

    m = _measurements(tmp_path)
    path = tmp_path / "selected.png"
    code, _, err = run(capsys, "plot", "scalability", "--measurements", str(m), "--bandwidth",
                       "1Gbps", "--workers", "1-4", "-o", str(path))
    assert code == 0 and err == "" and path.read_bytes().startswith(PNG_SIGNATURE)
    profile, cluster = _zoo_job()
    chosen = select_model(profile, cluster, load_measurements(m)).chosen
    ests = [chosen.estimate(profile, cluster.replace(nic_bandwidth=1.25e8),
                            Config(n_replicas=k, n_ps=1)) for k in range(1, 5)]
    (ax,) = drawn[0].axes
    lines = {line.get_label(): line for line in ax.lines}
    curve = lines[f"selected {chosen.name}"]
    np.testing.assert_allclose(curve.get_ydata(), [e.throughput for e in ests], rtol=1e-12)
    (band,) = ax.collections
    assert band.get_label() == f"selected {chosen.name}: 90% interval"
    _band_holds(band, range(1, 5), [e.throughput_interval for e in ests])
    # the runs at 1 Gbps are the markers; the 10 Gbps run is another job's
    np.testing.assert_array_equal(lines["measured"].get_xdata(), [1, 2, 3])
    np.testing.assert_array_equal(lines["measured"].get_ydata(), [58.8, 80.4, 91.6])


def test_plot_scalability_draws_the_cpu_ceiling_of_runs_with_cpu_readings(tmp_path, capsys,
                                                                          drawn):
    """Runs with server_cpu/worker_cpu: the chosen model is capped and the ceiling is drawn
    (dotted), above or on the curve at every K."""
    from perfmodel.fit.selection import select_model
    from perfmodel.io import load_measurements

    m = tmp_path / "cpu.csv"
    m.write_text("workers,n_ps,bandwidth,throughput,server_cpu,worker_cpu\n"
                 "1,1,10Gbps,204.2,1.57,0.2\n2,1,10Gbps,323.8,1.9,0.2\n"
                 "1,2,10Gbps,207.5,0.8,0.2\n2,2,10Gbps,414.9,1.2,0.2\n")
    code, _, err = run(capsys, "plot", "scalability", "--measurements", str(m), "--bandwidth",
                       "10Gbps", "--workers", "1-8", "--cpu-capacity", "2", "-o",
                       str(tmp_path / "c.png"))
    assert code == 0 and err == ""
    profile, cluster = _zoo_job()
    sel = select_model(profile, cluster, load_measurements(m), cpu_capacity=2.0)
    (ax,) = drawn[0].axes
    lines = {line.get_label(): line for line in ax.lines}
    top = lines["CPU ceiling of the runs"]
    k = np.arange(1, 9)
    np.testing.assert_allclose(top.get_ydata(),
                               sel.ceiling.speed(1, k, k * profile.batch_size), rtol=1e-12)
    curve = lines[f"selected {sel.chosen.name}"].get_ydata()
    assert np.all(curve <= top.get_ydata() * (1 + 1e-9)) and curve[-1] == pytest.approx(
        top.get_ydata()[-1])


def test_plot_measurements_without_a_run_at_the_bandwidth_exits_2(tmp_path, capsys):
    m = _measurements(tmp_path)
    code, _, err = run(capsys, "plot", "scalability", "--measurements", str(m), "--bandwidth",
                       "25Gbps", "--workers", "1-2", "-o", str(tmp_path / "x.png"))
    assert code == 2 and "--measurements" in err and "1Gbps, 10Gbps" in err
    assert len(err.strip().splitlines()) == 1
