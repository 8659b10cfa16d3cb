"""perfmodel.plot: every figure runs on small real inputs, saves a non-empty file, draws the right data."""

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from perfmodel import plot, zoo  # noqa: E402
from perfmodel.coarse import sync_step_time  # noqa: E402
from perfmodel.specs import Cluster, Config, Profile  # noqa: E402
from perfmodel import SyncCoarse  # noqa: E402


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

    cfgs = [t.config() for t in resource_triples(6)]
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
