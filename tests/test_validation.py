"""Tests of perfmodel.fit.validation: the ns-3 CSV, the matrix cells, the command."""

import json

import numpy as np
import pytest

from perfmodel import zoo
from perfmodel.cli import main
from perfmodel.coarse import LockStep, SyncCoarse
from perfmodel.errors import SpecError
from perfmodel.fit import dl2
from perfmodel.fit.validation import NS3_COLUMNS, Matrix, dl2_cells, ns3_cells, parse_ns3, validation_matrix
from perfmodel.specs import Cluster, Config

T_UPDATE = 0.03
HEADER = ("# synthetic ns-3 matrix for tests\n# job: resnet50-pipedream, t_update = 30 ms\n"
          + ",".join(NS3_COLUMNS) + "\n")


def synthetic_csv(model, mode, queue, efficiency, workers=range(1, 7), cv=0.0, timeouts=0.0):
    """Rows whose throughput is ``model``'s on a 10 Gbps link at ``efficiency`` (and a
    timeout probability, 1 s stalls: a lossy regime)."""
    prof = zoo.profile("resnet50-pipedream").replace(t_update=T_UPDATE)
    clu = Cluster(machines=32, nic_bandwidth=1.25e9, link_efficiency=efficiency,
                  timeout_probability=timeouts, retransmit_timeout=1.0)
    loss = 0.003 if timeouts else 0
    lines = []
    for w in workers:
        t = model.estimate(prof, clu, Config(n_replicas=w, mode=mode)).throughput
        lines.append(f"r-{queue}-{mode},{queue},{loss},1.25e9,{mode},0,per-step,{cv},{w},1,128,"
                     f"{t!r},0,100,1,1.0")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- the CSV

def test_parse_ns3_header_and_rows():
    header, runs = parse_ns3(HEADER + synthetic_csv(SyncCoarse("ps"), "sync", "fifo", 0.9))
    assert header["t_update"] == pytest.approx(0.03)
    assert len(runs) == 6 and runs[0].workers == 1 and runs[0].bandwidth == 1.25e9
    assert runs[0].overlap is False and runs[0].line == 4
    assert len({r.key for r in runs}) == 1


@pytest.mark.parametrize("row, field", [
    ("a,fifo,0,x,sync,0,per-step,0,1,1,128,10,0,100,1,1", "line 4, column bandwidth"),
    ("a,fifo,0,1e9,both,0,per-step,0,1,1,128,10,0,100,1,1", "line 4, column mode"),
    ("a,fifo,0,1e9,sync,0,per-step,0,0,1,128,10,0,100,1,1", "line 4"),
])
def test_parse_ns3_bad_rows_name_line_and_column(row, field):
    with pytest.raises(SpecError) as err:
        parse_ns3(HEADER + row + "\n")
    assert err.value.field == field


def test_parse_ns3_missing_column():
    with pytest.raises(SpecError, match="missing column.*throughput"):
        parse_ns3("regime,queue\n")


# ---------------------------------------------------------------- ns-3 cells

def test_ns3_cells_calibration_recovers_the_generating_model():
    """Sync data of eq. 7 at 90% goodput: the calibrated eq. 7 is exact to the grid
    (efficiency 0.90 is on it), the default one is off by the 10% goodput."""
    header, runs = parse_ns3(HEADER + synthetic_csv(SyncCoarse("ps"), "sync", "fifo", 0.9))
    cells = {(c.model, c.stage): c for c in ns3_cells(runs=runs, header=header)}
    cal, default = cells[("sync-ps", "calibrated")], cells[("sync-ps", "default")]
    assert cal.n_train == 2 and cal.n_test == 4
    assert cal.max_error < 1e-9 and "link_efficiency=0.9" in cal.detail
    assert default.mean_error > 0.03
    # The selection fits the level (two worker counts, select_model's default): a pure
    # efficiency change is a shape it cannot see, so it lands between the two.
    level = cells[("sync-ps (level)", "calibrated")]
    assert "slowdown=" in level.detail
    sel = cells[("selected", "selected")]
    assert sel.mean_error == level.mean_error and "(level)" in sel.detail
    assert cal.mean_error < sel.mean_error < default.mean_error / 2 and sel.coverage == 1.0


def test_ns3_cells_interval_grows_with_the_regimes_compute_cv():
    """As select_model: the same FCFS data and the same choice (eq. 7 by its level, 27%
    off at 3-12 workers), but the regime whose compute varies (CV 0.3) gets intervals
    that grow faster with the workers and so cover more of its runs."""
    coverage = {}
    for cv in (0.0, 0.3):
        header, runs = parse_ns3(HEADER + synthetic_csv(SyncCoarse("fcfs"), "sync", "fair",
                                                        0.9, workers=range(1, 13), cv=cv))
        sel = {(c.model, c.stage): c for c in ns3_cells(runs=runs, header=header)}[
            ("selected", "selected")]
        assert sel.detail.startswith("sync-ps (level)") and sel.mean_error > 0.2
        coverage[cv] = sel.coverage
    assert coverage[0.0] < 0.5 < coverage[0.3]


def test_ns3_cells_lossy_regime_fits_the_timeouts():
    """A lossy regime (loss_rate > 0) made by eq. 7 with q = 0.06 and 1 s stalls: the header's
    min RTO is read, every candidate fits q first, and eq. 7 is recovered exactly."""
    head = HEADER.replace("# job:", "# engine: TCP NewReno, min RTO 1 s\n# job:")
    header, runs = parse_ns3(head + synthetic_csv(SyncCoarse("ps"), "sync", "fair", 0.9,
                                                  timeouts=0.06))
    assert header["min_rto"] == pytest.approx(1.0)
    cells = {(c.model, c.stage): c for c in ns3_cells(runs=runs, header=header)}
    cal = cells[("sync-ps", "calibrated")]
    assert "timeout_probability=0.06" in cal.detail and "link_efficiency=0.9" in cal.detail
    assert cal.max_error < 1e-9
    sel = cells[("selected", "selected")]
    assert sel.mean_error < 1e-9 and "sync-ps" in sel.detail


def test_ns3_cells_lockstep_regime_selects_lockstep():
    csv = synthetic_csv(LockStep(), "async", "fair", 1.0)
    header, runs = parse_ns3(HEADER + csv)
    cells = ns3_cells(runs=runs, header=header)
    sel = next(c for c in cells if c.stage == "selected")
    assert "async-lockstep" in sel.detail and sel.max_error < 1e-9
    models = {c.model for c in cells}
    assert {"async-mva", "lin", "cynthia", "async-lockstep"} <= models


def test_ns3_cells_need_t_update():
    _, runs = parse_ns3(HEADER + synthetic_csv(SyncCoarse("ps"), "sync", "fifo", 0.9))
    with pytest.raises(SpecError, match="t_update"):
        ns3_cells(runs=runs, header={})


# ---------------------------------------------------------------- DL2 cells

@pytest.fixture(scope="module")
def vgg_cells():
    return dl2_cells(dnns=["vgg-16"])


def test_dl2_default_stage_equals_validate_dl2(vgg_cells):
    """The default stage is the same fit as `perfmodel validate dl2`: same errors."""
    rep = dl2.validate_dl2(dnns=["vgg-16"])
    ref = {r["candidate"]: r for r in rep.rows}
    for c in vgg_cells:
        if c.stage == "default":
            assert c.mean_error == pytest.approx(ref[c.model]["mean_error"], rel=1e-6)
            assert c.max_error == pytest.approx(ref[c.model]["max_error"], rel=1e-6)


def test_dl2_selected_is_one_of_the_variants_capped(vgg_cells):
    """The selected row is the chosen variant's prediction held under the CPU ceiling
    fitted on the same 4 runs, with the testbed's capacity (all DNNs' largest reading)."""
    from perfmodel.fit.validation import DL2_GROWTH, _dl2_fit, _split_dl2, dl2_models

    sel = next(c for c in vgg_cells if c.stage == "selected")
    assert sel.n_train == 4 and 0 <= sel.coverage <= 1
    assert "capped at the CPU ceiling" in sel.detail
    chosen = sel.detail.split(" (closed form)")[0]          # "sync-fcfs (default)"
    name, stage = chosen.rsplit(" (", 1)
    recs = [r for r in dl2.load_builtin() if not r.failed]
    capacity = max(max((*r.ps_cpu, *r.worker_cpu))
                   for d in {r.model for r in recs}
                   for r in _split_dl2([x for x in recs if x.model == d])[0])
    assert capacity == pytest.approx(2.022)
    train, test = _split_dl2([r for r in recs if r.model == "vgg-16"])
    model = dl2_models()[name]
    fit = _dl2_fit(model, train, 0.0)
    if stage.rstrip(")") == "calibrated":
        fit = _dl2_fit(model, train, DL2_GROWTH, (fit.c, fit.tau, fit.u))
    ceiling = dl2.utilization_ceiling(train, capacity=capacity)
    pred = np.array([min(fit.predict(r.n_ps, r.n_workers, r.batch_size),
                         ceiling.speed(r.n_ps, r.n_workers, r.batch_size)) for r in test])
    meas = np.array([r.speed for r in test])
    assert sel.mean_error == pytest.approx(np.mean(np.abs(pred / meas - 1)), rel=1e-9)


def test_dl2_ceiling_lowers_the_selected_error(vgg_cells):
    """On vgg-16 the ceiling cuts the sync models' high predictions at many servers: the
    calibrated (capped) stage is at least as good as the default stage for every model."""
    err = {(c.model, c.stage): c.mean_error for c in vgg_cells}
    for name in ("sync-ps", "sync-fcfs", "sync-hybrid", "optimus"):
        assert err[(name, "calibrated")] <= err[(name, "default")] + 1e-12
    assert err[("cpu-ceiling", "calibrated")] < 0.5


def test_matrix_tables_and_json(vgg_cells, tmp_path):
    m = Matrix(tuple(vgg_cells), ("a note",))
    summary = {(r["model"], r["stage"]): r for r in m.summary()}
    assert summary[("sync-ps", "default")]["groups"] == 1
    md = m.text(markdown=True)
    assert "| dl2 | sync | sync-ps |" in md and "note: a note" in md
    data = json.loads(json.dumps(m.to_dict(), allow_nan=False))
    assert len(data["cells"]) == len(vgg_cells)


# ---------------------------------------------------------------- the command

def test_cli_validate_matrix_ns3_only(capsys, tmp_path):
    path = tmp_path / "ns3.csv"
    path.write_text(HEADER + synthetic_csv(SyncCoarse("ps"), "sync", "fifo", 0.9))
    code = main(["validate", "matrix", "--only", "ns3", "--ns3", str(path), "--format", "json"])
    out, _ = capsys.readouterr()
    data = json.loads(out)
    assert code == 0
    lib = {(r["model"], r["stage"]): r for r in
           validation_matrix(dl2=False, ns3_path=path).summary()}
    for r in data["summary"]:
        assert r["mean_error"] == pytest.approx(lib[(r["model"], r["stage"])]["mean_error"])
    code = main(["validate", "matrix", "--only", "ns3", "--ns3", str(path), "--format",
                 "markdown"])
    out, _ = capsys.readouterr()
    assert code == 0 and "| ns3 | sync | **selected** |" in out


def test_cli_validate_bad_input_exits_2(capsys, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text(HEADER + "a,fifo,0,x,sync,0,per-step,0,1,1,128,10,0,100,1,1\n")
    code = main(["validate", "matrix", "--only", "ns3", "--ns3", str(bad)])
    _, err = capsys.readouterr()
    assert code == 2 and "bandwidth" in err and len(err.strip().splitlines()) == 1
    code = main(["validate", "dl2", "--format", "markdown"])
    _, err = capsys.readouterr()
    assert code == 2 and "markdown" in err


def test_classes_summary_by_hand():
    from perfmodel.fit.validation import Cell, Matrix
    cells = (Cell("ns3", "sync-fair-lossfree-a", "sync", "selected", "selected", 2, 4, 0.02, 0.04,
                  coverage=1.0),
             Cell("ns3", "sync-fair-lossfree-b", "sync", "selected", "selected", 2, 4, 0.06, 0.08,
                  coverage=0.5),
             Cell("ns3", "sync-fair-lossy-c", "sync", "selected", "selected", 2, 4, 0.2, 0.5,
                  coverage=0.0),
             Cell("ns3", "sync-fair-lossy-c", "sync", "sync-ps", "default", 2, 4, 0.9, 0.9))
    lines = Matrix(cells, ()).classes_markdown().splitlines()
    assert lines[2] == "| sync, loss-free | 4.0% | 8% | 1 of 2 | 75% |"
    assert lines[3] == "| sync, lossy | 20.0% | 50% | 0 of 1 | 0% |"
    assert len(lines) == 4


def test_dl2_extra_runs_move_one_configuration_from_test_to_train():
    from perfmodel.cli import build_parser
    from perfmodel.fit.validation import DL2_EXTRA_RUNS, _split_dl2

    recs = [r for r in dl2.load_builtin() if not r.failed and r.model == "vgg-16"]
    train, test = _split_dl2(recs)
    more, rest = _split_dl2(recs, extra_runs=("most-servers",))
    assert {(r.n_ps, r.n_workers) for r in train} == {(1, 1), (1, 2), (2, 1), (2, 2)} & \
        {(r.n_ps, r.n_workers) for r in recs}
    added = {(r.n_ps, r.n_workers) for r in more} - {(r.n_ps, r.n_workers) for r in train}
    most = max(r.n_ps for r in recs if r.n_workers == min(r.n_workers for r in recs))
    assert added == {(most, 1)} and len(more) + len(rest) == len(recs)
    workers = _split_dl2(recs, extra_runs=("most-workers",))[0]
    assert max(r.n_workers for r in workers) == max(r.n_workers for r in recs if r.n_ps == 1)
    with pytest.raises(SpecError, match="extra_runs"):
        _split_dl2(recs, extra_runs=("everything",))
    cells = dl2_cells(dnns=["vgg-16"], extra_runs=("most-servers",))
    assert next(c for c in cells if c.stage == "selected").n_train == len(more)
    # the CLI offers the same names
    action = next(a for a in build_parser()._subparsers._group_actions[0].choices["validate"]
                  ._actions if a.dest == "dl2_extra")
    assert tuple(action.choices) == DL2_EXTRA_RUNS


def test_dl2_train_size_calibrates_on_n_server_counts_by_n_worker_counts(capsys):
    recs = [r for r in dl2.load_builtin() if not r.failed and r.model == "dssm"]
    servers, workers = sorted({r.n_ps for r in recs}), sorted({r.n_workers for r in recs})
    cells = dl2_cells(dnns=["dssm"], train_size=3)
    sel = next(c for c in cells if c.stage == "selected")
    in_grid = [r for r in recs if r.n_ps in servers[:3] and r.n_workers in workers[:3]]
    assert sel.n_train == len(in_grid) and sel.n_test == len(recs) - len(in_grid)
    for bad in (0, 5, 2.5, True):
        with pytest.raises(SpecError) as err:
            dl2_cells(dnns=["dssm"], train_size=bad)
        assert err.value.field == "train_size"
    assert main(["validate", "matrix", "--only", "dl2", "--train-size", "0"]) == 2
    assert "--train-size" in capsys.readouterr().err


def test_matrix_reports_progress_over_dnns_and_regimes(tmp_path):
    """One DL2 DNN and one ns-3 regime: the total counts the regimes still to come from
    the start, and the last call is (total, total)."""
    path = tmp_path / "ns3.csv"
    path.write_text(HEADER + synthetic_csv(SyncCoarse("ps"), "sync", "fifo", 0.9))
    calls = []
    matrix = validation_matrix(dnns=["vgg-16"], ns3_path=path,
                               progress=lambda done, total: calls.append((done, total)))
    assert calls == [(0, 2), (1, 2), (1, 2), (2, 2)]
    assert {c.dataset for c in matrix.cells} == {"dl2", "ns3"}
