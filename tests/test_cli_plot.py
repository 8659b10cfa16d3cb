"""perfmodel plot KIND -o FILE: every kind writes a valid PNG and SVG, draws the library's numbers,
and bad input exits 2 with one line."""

import json
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from perfmodel import plot, zoo  # noqa: E402
from perfmodel.cli import main  # noqa: E402

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

#: Each kind with small inputs (a fraction of a second each).
KINDS = {
    "scalability": ["--model", "sync,allreduce", "--workers", "1-4"],
    "phases": ["--workers", "1,2,4"],
    "gantt": ["--trace", "zoo:alexnet", "--workers", "2", "--steps", "2"],
    "cdf": ["--topology", "racks:2x4", "--jobs", "2", "--workers", "3", "--iterations", "5",
            "--warmup", "1", "--strategy", "random"],
    "search-space": ["--dnn", "zoo:adam-mnist", "--machines", "4"],
    "sweep": ["--table", "{table}"],
}

#: The `perfmodel sweep` run whose table `plot sweep` reads.
SWEEP = ["sweep", "--model", "sync", "--workers", "1-4", "--bandwidth", "1Gbps,10Gbps",
         "--jobs", "1"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


@pytest.fixture
def drawn(monkeypatch):
    """The figures the command saves, kept open for reading back."""
    figures = []
    save = plot.save

    def keep(fig_or_ax, path, **options):
        figures.append(getattr(fig_or_ax, "figure", fig_or_ax))
        return save(fig_or_ax, path, **dict(options, close=False))

    monkeypatch.setattr(plot, "save", keep)
    return figures


@pytest.fixture
def table(tmp_path, capsys):
    path = tmp_path / "sweep.csv"
    code, _, err = run(capsys, *SWEEP, "--out", str(path))
    assert code == 0, err
    return path


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_writes_png_and_svg(kind, tmp_path, capsys, request):
    flags = [f.format(table=request.getfixturevalue("table")) if f == "{table}" else f
             for f in KINDS[kind]]
    for suffix in ("png", "svg"):
        path = tmp_path / f"{kind}.{suffix}"
        code, out, err = run(capsys, "plot", kind, *flags, "-o", str(path))
        assert code == 0 and err == "" and out == f"wrote {path}\n"
        data = path.read_bytes()
        if suffix == "png":
            assert data.startswith(PNG_SIGNATURE) and len(data) > 1000
        else:
            root = ET.fromstring(data)
            assert root.tag == "{http://www.w3.org/2000/svg}svg" and len(root) > 0


def test_scalability_draws_what_predict_prints(tmp_path, capsys, drawn):
    code, _, _ = run(capsys, "plot", "scalability", "--model", "sync,async", "--workers", "1-16",
                     "-o", str(tmp_path / "s.png"))
    assert code == 0
    (ax,) = drawn[0].axes
    lines = {line.get_label(): line for line in ax.lines}
    for model in ("sync", "async"):
        code, out, _ = run(capsys, "predict", "--model", model, "--workers", "1-16",
                           "--format", "json")
        expected = [r["throughput"] for r in json.loads(out)]
        np.testing.assert_allclose(lines[model].get_xdata(), np.arange(1, 17))
        np.testing.assert_allclose(lines[model].get_ydata(), expected, rtol=1e-12)
    # the sync saturation marker sits where Li et al. 2022's eq. 9 says the 11th worker adds < 10%
    from perfmodel.symbolic import saturation_workers

    p, c = zoo.profile("resnet50-pipedream"), zoo.cluster("aws-p3.2xlarge")
    k_star = saturation_workers("hybrid", model_bytes=p.model_bytes, bandwidth=c.nic_bandwidth,
                                t_forward=p.t_forward, t_backward=p.t_backward, t_update=p.t_update)
    assert f"sync: saturation K={k_star}" in lines
    assert np.allclose(lines[f"sync: saturation K={k_star}"].get_xdata(), [k_star])
    assert len(ax.collections) == 0  # no model here gives an interval: no band


def test_phases_stack_to_predicted_step_times(tmp_path, capsys, drawn):
    code, _, _ = run(capsys, "plot", "phases", "--model", "allreduce", "--workers", "1,2,4,8",
                     "-o", str(tmp_path / "p.svg"))
    assert code == 0
    (ax,) = drawn[0].axes
    _, out, _ = run(capsys, "predict", "--model", "allreduce", "--workers", "1,2,4,8",
                    "--format", "json")
    tops = {}
    for patch in ax.patches:
        x = round(patch.get_x() + patch.get_width() / 2, 6)
        tops[x] = max(tops.get(x, 0.0), patch.get_y() + patch.get_height())
    np.testing.assert_allclose([tops[x] for x in sorted(tops)],
                               [r["step_time"] for r in json.loads(out)], rtol=1e-12)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2", "4", "8"]


def test_sweep_draws_the_tables_rows(tmp_path, capsys, drawn, table):
    from perfmodel.sweep import read_table

    code, _, err = run(capsys, "plot", "sweep", "--table", str(table), "--y", "step_time",
                       "-o", str(tmp_path / "s.png"))
    assert code == 0, err
    lines = {line.get_label(): line for line in drawn[0].axes[0].lines}
    assert set(lines) == {"1 Gbps", "10 Gbps"}
    for row in read_table(table):
        line = lines[f"{row['bandwidth'] * 8 / 1e9:g} Gbps"]
        assert line.get_ydata()[list(line.get_xdata()).index(row["workers"])] == row["step_time"]


def test_gantt_has_a_row_per_worker_and_resource(tmp_path, capsys, drawn):
    code, _, _ = run(capsys, "plot", "gantt", "--trace", "zoo:alexnet", "--workers", "3",
                     "--steps", "2", "-o", str(tmp_path / "g.png"))
    assert code == 0
    labels = [t.get_text() for t in drawn[0].axes[0].get_yticklabels()]
    assert labels[0] == "w0 downlink" and labels[-1].startswith("w2 ") and len(labels) % 3 == 0


def test_flags_for_some_of_the_models_apply_to_those(tmp_path, capsys, drawn):
    from perfmodel.coarse import SyncCoarse
    from perfmodel.specs import Config

    code, _, err = run(capsys, "plot", "scalability", "--model", "sync,async", "--sharing", "ps",
                       "--bandwidth", "25Gbps", "--workers", "1-3", "-o", str(tmp_path / "s.png"))
    assert code == 0, err
    line = next(l for l in drawn[0].axes[0].lines if l.get_label() == "sync")
    p = zoo.profile("resnet50-pipedream")
    c = zoo.cluster("aws-p3.2xlarge").replace(nic_bandwidth=25e9 / 8)
    expected = [SyncCoarse(sharing="ps").estimate(p, c, Config(n_replicas=k)).throughput
                for k in (1, 2, 3)]
    np.testing.assert_allclose(line.get_ydata(), expected, rtol=1e-12)


@pytest.mark.parametrize("argv, needle", [
    (["scalability", "-o", "out.pdf"], "--output"),
    (["gantt", "--trace", "zoo:alexnet", "-o", "out"], "--output"),
    (["scalability", "--model", "sync,nope", "-o", "x.png"], "--model"),
    (["scalability", "--model", "async", "--sharing", "ps", "-o", "x.png"], "--sharing"),
    (["scalability", "--workers", "4,2", "-o", "x.png"], "--workers"),
    (["scalability", "--workers", "a-b", "-o", "x.png"], "--workers"),
    (["scalability", "--threshold", "1.5", "-o", "x.png"], "--threshold"),
    (["phases", "--model", "layerwise", "-o", "x.png"], "--model"),
    (["phases", "--t-forward=-3ms", "-o", "x.png"], "--t-forward"),
    (["phases", "--bandwidth", "10 furlongs", "-o", "x.png"], "--bandwidth"),
    (["gantt", "--trace", "zoo:alexnet", "--workers", "0", "-o", "x.png"], "--workers"),
    (["gantt", "--trace", "zoo:alexnet", "--bandwidth", "fast", "-o", "x.png"], "--bandwidth"),
    (["cdf", "--worker-compute", "nope:1", "-o", "x.png"], "--worker-compute"),
    (["search-space", "--model", "sync", "-o", "x.png"], "--model"),
    (["sweep", "--table", "missing.csv", "-o", "x.png"], "--table"),
    (["sweep", "--table", "missing.txt", "-o", "x.png"], "--table"),
])
def test_bad_input_exits_2_with_one_line(argv, needle, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "plot", *argv)
    assert code == 2 and out == "" and needle in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_sweep_bad_axis_names_table_and_column(tmp_path, capsys, table):
    code, out, err = run(capsys, "plot", "sweep", "--table", str(table), "--x", "phase_uplink",
                         "-o", str(tmp_path / "x.png"))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "--table" in err and "phase_uplink" in err and not (tmp_path / "x.png").exists()


def test_unknown_flag_is_argparses_usage_error(capsys):
    with pytest.raises(SystemExit) as caught:  # --ps is predict's, not plot scalability's
        main(["plot", "scalability", "--ps", "2", "-o", "x.png"])
    assert caught.value.code == 2 and "--ps" in capsys.readouterr().err


def test_missing_matplotlib_names_the_extra(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    code, out, err = run(capsys, "plot", "phases", "-o", str(tmp_path / "x.png"))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "pip install 'perfmodel[plot]'" in err
