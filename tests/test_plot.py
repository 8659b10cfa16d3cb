"""perfmodel.plot: every figure runs on small real inputs, saves a non-empty file, draws the right data."""

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from perfmodel import (  # noqa: E402
    SyncCoarse,  # noqa: E402
    plot,
    zoo,
)
from perfmodel.coarse import sync_step_time  # noqa: E402
from perfmodel.specs import Cluster, Config, Profile  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _saved(ax, path):
    out = plot.save(ax, path)
    assert out.exists() and out.stat().st_size > 0
    return out


def test_scalability_marks_saturation(tmp_path):
    from perfmodel.symbolic import saturation_workers

    v = dict(model_bytes=102.2e6, bandwidth=1.25e9, t_forward=0.182, t_backward=0.261)
    k = np.arange(1, 21)
    x = k / sync_step_time(v["model_bytes"], v["bandwidth"], v["t_forward"], v["t_backward"],
                           0.0, k, sharing="ps")
    sat = saturation_workers("ps", t_update=0.0, **v)
    ax = plot.scalability(k, {"ps": x}, saturation=sat)
    np.testing.assert_allclose(ax.lines[0].get_ydata(), x)
    assert any(len(line.get_xdata()) == 2 and np.allclose(line.get_xdata(), [sat, sat])
               for line in ax.lines)  # the marker line
    _saved(ax, tmp_path / "scal.png")
    _saved(ax, tmp_path / "scal.svg")


def test_phase_breakdown_stacks_to_step_times(tmp_path):
    prof = Profile(model_bytes=100e6, t_forward=0.1, t_backward=0.2, t_update=0.01, batch_size=32)
    cl = Cluster(machines=16, nic_bandwidth="10Gbps")
    ests = {k: SyncCoarse().estimate(prof, cl, Config(n_replicas=k)) for k in (1, 2, 4, 8)}
    ax = plot.phase_breakdown(ests)
    tops = {}
    for patch in ax.patches:
        x = round(patch.get_x() + patch.get_width() / 2, 6)
        tops[x] = max(tops.get(x, 0.0), patch.get_y() + patch.get_height())
    np.testing.assert_allclose([tops[x] for x in sorted(tops)],
                               [e.step_time for e in ests.values()], rtol=1e-12)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2", "4", "8"]
    _saved(ax, tmp_path / "phases.png")


def test_latency_cdf_lines_end_at_one(tmp_path):
    from perfmodel.placement import compare, racks

    res = compare(racks(2, 4), ["colocated", "random"], jobs=2, workers=3,
                  worker_compute=0.3, server_compute=0.05, iterations=5, warmup=1)
    ax = plot.latency_cdf(res)
    assert len(ax.lines) == 2
    for line, r in zip(ax.lines, res.values()):
        assert line.get_ydata()[-1] == pytest.approx(1.0)
        np.testing.assert_allclose(line.get_xdata(), np.sort(r.samples))
    _saved(ax, tmp_path / "cdf.png")


def test_gantt_one_row_per_worker_and_resource(tmp_path):
    from perfmodel.sim import Trace, simulate

    t = Trace.from_layers([50e6, 50e6], [0.05, 0.05], [0.1, 0.1], 0.01, overlap=False)
    r = simulate(t, 3, 1.25e9, mode="sync", sharing="fcfs", steps=3, warmup=0, record=True)
    ax = plot.gantt(r)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == 3 * 4 and labels[0] == "w0 downlink" and labels[-1] == "w2 ps"
    assert len(ax.collections) == 3 * 4
    assert ax.get_xlim()[1] == pytest.approx(float(r.ops["end"].max()))
    _saved(ax, tmp_path / "gantt.png")
    with pytest.raises(ValueError, match="record=True"):
        plot.gantt(simulate(t, 2, 1.25e9, mode="sync", steps=2, warmup=0))


def test_search_space_one_point_per_replicas_workers(tmp_path):
    from optimizer.rank import rank_configs
    from optimizer.space import resource_triples
    from perfmodel.layerwise import LayerWise

    cfgs = [t.config() for t in resource_triples(6, max_workers=4)]  # adam-mnist: at most 4
    ranked = rank_configs(LayerWise(working_set="layer"), zoo.load("adam-mnist"),
                          zoo.cluster("yan2015"), cfgs, epoch_samples=60_000)
    ax = plot.search_space(ranked)
    pairs = {(r.config.n_replicas, r.config.n_workers) for r in ranked}
    offsets = ax.collections[0].get_offsets()
    assert len(offsets) == len(pairs)
    star = ax.collections[1].get_offsets()[0]
    assert tuple(star) == (ranked[0].config.n_replicas, ranked[0].config.n_workers)
    _saved(ax, tmp_path / "space.png")
    # dicts (the CLI's JSON records) work too
    plot.search_space([r.to_dict() for r in ranked])


def test_save_rejects_other_formats(tmp_path):
    ax = plot.scalability([1, 2], {"a": [1.0, 2.0]})
    with pytest.raises(ValueError, match="png or .svg"):
        plot.save(ax.figure, tmp_path / "x.pdf")


# ---------------------------------------------------------------- error bars
def _with_bars(k, x, spread=0.1):
    """Estimates of throughput x at K workers with a +-spread (relative) 90% interval."""
    from perfmodel.result import Estimate

    return [Estimate(step_time=k_ * 32 / x_, throughput=x_).with_interval(
        x_ * (1 - spread), x_ * (1 + spread), level=0.9, source="test")
        for k_, x_ in zip(k, x)]


def test_scalability_band_runs_through_the_intervals():
    k = np.array([1, 2, 4, 8])
    x = np.array([100.0, 180.0, 300.0, 420.0])
    ax = plot.scalability(k, {"m": _with_bars(k, x)})
    np.testing.assert_allclose(ax.lines[0].get_ydata(), x)
    (band,) = ax.collections
    verts = band.get_paths()[0].vertices
    # the outline visits (K, low) and (K, high) for every K: low = 0.9 x, high = 1.1 x
    for kk, lo, hi in zip(k, 0.9 * x, 1.1 * x):
        assert np.any(np.all(np.isclose(verts, [kk, lo]), axis=1))
        assert np.any(np.all(np.isclose(verts, [kk, hi]), axis=1))
    assert verts[:, 1].min() == pytest.approx(90.0) and verts[:, 1].max() == pytest.approx(462.0)
    assert band.get_label() == "m: 90% interval"


def test_scalability_without_intervals_draws_no_band():
    from perfmodel.result import Estimate

    ests = [Estimate(step_time=1.0, throughput=float(v)) for v in (10, 19, 27)]
    ax = plot.scalability([1, 2, 3], {"m": ests})
    assert len(ax.collections) == 0
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["m"]
    np.testing.assert_allclose(ax.lines[0].get_ydata(), [10, 19, 27])


def test_scalability_interval_arrays_and_bad_bands():
    ax = plot.scalability([1, 2], {"a": [10.0, 18.0]}, intervals={"a": ([9.0, 15.0], [12.0, 20.0])},
                          level=0.95)
    assert ax.collections[0].get_label() == "a: 95% interval"
    with pytest.raises(ValueError, match="hold its value"):  # low above the curve
        plot.scalability([1, 2], {"a": [10.0, 18.0]}, intervals={"a": ([11.0, 15.0], [12.0, 20.0])})
    mixed = _with_bars([1], [10.0]) + [SyncCoarse().estimate(
        Profile(model_bytes=1e6, t_forward=0.1, t_backward=0.1),
        Cluster(machines=4, nic_bandwidth="10Gbps"),
        Config(n_replicas=2))]
    with pytest.raises(ValueError, match="some estimates"):
        plot.scalability([1, 2], {"m": mixed})


def test_phase_breakdown_error_bars_span_step_time_intervals():
    from perfmodel.result import Estimate

    # 64 samples per step; throughput 200 +- 20% -> step 0.32 s in [64/240, 64/160] = [0.2667, 0.4]
    ests = [Estimate.from_phases({"compute": 0.2, "uplink": 0.12}, 64).with_interval(
        160.0, 240.0, level=0.8, source="test")] * 2
    ax = plot.phase_breakdown(ests, xlabel="workers")
    bars = ax.containers[-1]
    segments = bars.lines[2][0].get_segments()
    np.testing.assert_allclose([s[:, 1] for s in segments], [[64 / 240, 0.4]] * 2)
    assert bars.get_label() == "80% interval" and ax.get_xlabel() == "workers"
    plain = plot.phase_breakdown([Estimate.from_phases({"compute": 0.2}, 64)])
    assert not any(hasattr(c, "has_yerr") for c in plain.containers)


def test_curve_saturation_equals_the_symbolic_integer_saturation():
    from perfmodel.symbolic import saturation_workers

    k = np.arange(1, 257)
    cases = ((102.2e6, 1.25e9, "hybrid"), (50e6, 1.25e9, "ps"), (20e6, 3.125e9, "fcfs"))
    for mb, bw, sharing in cases:
        v = dict(model_bytes=mb, bandwidth=bw, t_forward=0.18, t_backward=0.26)
        x = k / sync_step_time(v["model_bytes"], v["bandwidth"], v["t_forward"], v["t_backward"],
                               0.0, k, sharing=sharing)
        expected = saturation_workers(sharing, **v)
        assert expected > 1 and expected < 256
        assert plot.curve_saturation_workers(k, x) == expected


def test_curve_saturation_by_hand_and_beyond_the_range():
    # gains per added worker: 10, 8, 0.8, 0.4 against 0.1 * 10 = 1 -> K = 2
    assert plot.curve_saturation_workers([1, 2, 3, 4], [10.0, 18.0, 18.8, 19.2]) == 2
    # gaps of several workers: (30 - 10) / 2 = 10 per worker, (34 - 30) / 4 = 1 (not > 1) -> K = 3
    assert plot.curve_saturation_workers([1, 3, 7], [10.0, 30.0, 34.0]) == 3
    assert plot.curve_saturation_workers([1, 2, 3], [10.0, 20.0, 30.0]) == np.inf  # linear
    with pytest.raises(ValueError, match="increase"):
        plot.curve_saturation_workers([2, 1], [1.0, 2.0])


def test_model_scalability_draws_each_models_estimates_and_bands():
    from perfmodel.result import Estimate

    class Banded:
        """A model whose throughput carries a +-10% interval (as a fitted model's would)."""
        uses_parameter_servers = True

        def estimate(self, workload, cluster, config):
            est = SyncCoarse().estimate(workload, cluster, config)
            return est.with_interval(0.9 * est.throughput, 1.1 * est.throughput, level=0.9,
                                     source="test")

    prof, cl = zoo.profile("resnet50-pipedream"), zoo.cluster("aws-p3.2xlarge")
    k = list(range(1, 9))
    ax = plot.model_scalability({"sync": SyncCoarse(), "banded": Banded()}, prof, cl, k)
    sync = [SyncCoarse().estimate(prof, cl, Config(n_replicas=i, n_ps=1)).throughput for i in k]
    curves = [line for line in ax.lines if line.get_label() in ("sync", "banded")]
    for line in curves:
        np.testing.assert_allclose(line.get_ydata(), sync, rtol=1e-12)
    (band,) = ax.collections
    assert band.get_label() == "banded: 90% interval"
    assert band.get_paths()[0].vertices[:, 1].max() == pytest.approx(1.1 * max(sync))
    assert isinstance(plot.estimates_over_workers(Banded(), prof, cl, [2])[0], Estimate)


def _row(workers, bandwidth, throughput, band=None, level=0.9, error=None):
    """A sweep-table row: 32 samples per step, so step_time = 32 / throughput."""
    row = {"key": f"{workers}-{bandwidth}", "model": "sync", "workers": workers, "n_ps": 1,
           "bandwidth": bandwidth, "step_time": 32 / throughput, "throughput": throughput,
           "bottleneck": "uplink", "epoch_time": None}
    if band is not None:
        row.update(throughput_low=band[0], throughput_high=band[1], interval_level=level)
    return row | {"phase_uplink": 32 / throughput, "error": error}


def test_sweep_curves_one_line_per_other_axis_with_bands():
    rows = [_row(2, 1.25e9, 60.0, (50.0, 70.0)), _row(1, 1.25e9, 40.0, (35.0, 44.0)),
            _row(1, 1.25e8, 10.0), _row(2, 1.25e8, 12.0),
            _row(4, 1.25e8, 1.0, error="Infeasible: too many")]
    ax = plot.sweep_curves(rows)
    fast, slow = ax.lines
    assert fast.get_label() == "10 Gbps" and slow.get_label() == "1 Gbps"
    np.testing.assert_allclose(fast.get_xdata(), [1, 2])  # sorted by workers
    np.testing.assert_allclose(fast.get_ydata(), [40.0, 60.0])
    np.testing.assert_allclose(slow.get_xdata(), [1, 2])  # the failed row is left out
    (band,) = ax.collections  # only the 10 Gbps rows carry intervals
    verts = band.get_paths()[0].vertices
    assert band.get_label() == "10 Gbps: 90% interval"
    assert verts[:, 1].min() == pytest.approx(35.0) and verts[:, 1].max() == pytest.approx(70.0)
    # step time: 32 / throughput, band [32 / high, 32 / low]
    ax = plot.sweep_curves(rows, y="step_time")
    verts = ax.collections[0].get_paths()[0].vertices
    assert verts[:, 1].min() == pytest.approx(32 / 70.0)
    assert verts[:, 1].max() == pytest.approx(32 / 35.0)
    np.testing.assert_allclose(ax.lines[0].get_ydata(), [0.8, 32 / 60.0])


def test_sweep_curves_bad_columns():
    rows = [_row(1, 1.25e9, 40.0), _row(2, 1.25e9, 60.0)]
    assert plot.sweep_curves(rows).lines[0].get_label() == "throughput"  # nothing else varies
    with pytest.raises(ValueError, match="x: 'phase_uplink'"):
        plot.sweep_curves(rows, x="phase_uplink")
    with pytest.raises(ValueError, match="y:"):
        plot.sweep_curves(rows, y="bottleneck")
    with pytest.raises(ValueError, match="rows:"):
        plot.sweep_curves([_row(1, 1.25e9, 1.0, error="SpecError: x")])


def test_single_iteration_spread_is_labelled_as_such():
    """GST's interval="iteration" is the spread of one iteration, not an error bar on the
    mean: the legend says so; a fit's interval keeps the plain label."""
    from perfmodel import GST, Config, zoo
    profile, cluster = zoo.profile("resnet50-pipedream"), zoo.cluster("aws-p3.2xlarge")
    gst = GST(interval="iteration", cv=0.05)
    ests = [gst.estimate(profile, cluster.replace(machines=8), Config(n_replicas=k))
            for k in (1, 2, 4)]
    ax = plot.scalability([1, 2, 4], {"gst": ests})
    labels = ax.get_legend_handles_labels()[1]
    assert "gst: 90% range of single iterations" in labels
    fitted = [e.with_interval(e.throughput * 0.9, e.throughput * 1.1, level=0.9,
                              source="LOO residuals of 2 calibration points") for e in ests]
    ax = plot.scalability([1, 2, 4], {"fit": fitted})
    assert "fit: 90% interval" in ax.get_legend_handles_labels()[1]


def test_spread_over_steps_draws_each_run_and_the_steady_level(tmp_path):
    from perfmodel.sim.engine import simulate, worker_spread
    from perfmodel.sim.trace import from_layers

    trace = from_layers([1e6], [0.05], [0.05])
    locked = simulate(trace, 4, 1.25e8, mode="async", sharing="ps", steps=12, warmup=0,
                      jitter=0.0)
    jittered = simulate(trace, 4, 1.25e8, mode="async", sharing="ps", steps=12, warmup=0,
                        jitter=0.3, seed=1)
    series = {"locked": worker_spread(locked.ends), "jitter": worker_spread(jittered.ends)}
    ax = plot.spread_over_steps(series, steady=0.75)
    assert len(ax.lines) == 3
    np.testing.assert_allclose(ax.lines[0].get_ydata(), series["locked"])
    assert ax.lines[2].get_ydata()[0] == pytest.approx(0.75)
    _saved(ax, tmp_path / "spread.png")


def _grid_rows(bandwidths, n_ps=(1,), models=("sync",)):
    return [dict(_row(w, b * 1.25e8, w * b * p), n_ps=p, model=m, key=f"{m}{w}-{b}-{p}")
            for m in models for p in n_ps for b in bandwidths for w in (1, 2, 4)]


def test_sweep_curves_many_lines_one_axis_get_a_colour_bar():
    ax = plot.sweep_curves(_grid_rows(range(1, 17)))            # 16 bandwidths
    assert len(ax.lines) == 16 and ax.get_legend() is None
    (bar,) = [a for a in ax.figure.axes if a is not ax]
    assert bar.get_ylabel() == "bandwidth (Gbps)"
    colours = [tuple(line.get_color()) for line in ax.lines]
    assert len(set(colours)) == 16                              # ordered along viridis
    assert [line.get_label() for line in ax.lines][:2] == ["1 Gbps", "2 Gbps"]


def test_sweep_curves_many_lines_two_axes_colour_and_style():
    ax = plot.sweep_curves(_grid_rows(range(1, 17), n_ps=(1, 2)))
    assert len(ax.lines) == 32
    styles = {(tuple(line.get_color()), line.get_linestyle()) for line in ax.lines}
    assert len(styles) == 32                                    # no two lines look alike
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["n_ps=1", "n_ps=2"]


def test_sweep_curves_many_lines_no_numeric_axis_legend_outside():
    rows = _grid_rows([1], models=[f"m{i}" for i in range(14)])
    ax = plot.sweep_curves(rows)
    legend = ax.get_legend()
    assert len(legend.get_texts()) == 14 and legend.get_bbox_to_anchor().x0 > 0


def test_latency_cdf_names_a_strategy_equal_to_another():
    from types import SimpleNamespace

    same = np.array([1.0, 2.0, 3.0])
    cdf = SimpleNamespace(cdf=lambda: (same, np.array([1 / 3, 2 / 3, 1.0])))
    ax = plot.latency_cdf({"optimized": cdf, "colocated": cdf})
    labels = [line.get_label() for line in ax.lines]
    assert labels[1] == "colocated (mean 2 s), same as optimized"
    assert ax.lines[0].get_linewidth() > ax.lines[1].get_linewidth()
    assert ax.lines[0].get_linestyle() != ax.lines[1].get_linestyle()
