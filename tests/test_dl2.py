"""Tests of perfmodel.fit.dl2: the DL2 measurements, their parser and the validation report."""

import hashlib
import json
import re

import numpy as np
import pytest

from perfmodel.baselines import optimus_speed
from perfmodel.coarse import SyncCoarse
from perfmodel.errors import SpecError
from perfmodel.fit import dl2
from perfmodel.fit.dl2 import (
    BUILTIN_PATH,
    DL2Record,
    OptimusCandidate,
    fit_model,
    load_builtin,
    parse_dl2,
    validate_dl2,
)


@pytest.fixture(scope="module")
def records():
    return load_builtin()


# ---------------------------------------------------------------- the data file

def test_builtin_copy_is_unchanged():
    text = (BUILTIN_PATH.parent / "PROVENANCE.md").read_text(encoding="utf-8")
    expected = re.search(r"`dl2_config_speed.txt` \| `config_speed.txt` \| 804 \| "
                         r"156,844 \| `([0-9a-f]{64})`", text).group(1)
    assert hashlib.sha256(BUILTIN_PATH.read_bytes()).hexdigest() == expected


def test_builtin_contents(records):
    assert len(records) == 804
    counts = {}
    for r in records:
        counts[r.model] = counts.get(r.model, 0) + 1
    assert counts == {"resnet-50": 210, "vgg-16": 210, "inception-bn": 57, "resnext-110": 57,
                      "seq2seq": 57, "wlm": 57, "cnn-text-classification": 78, "dssm": 78}
    assert {r.sync_mode for r in records} == {"dist_sync"}
    failed = [(r.model, r.n_ps, r.n_workers) for r in records if r.failed]
    assert len(failed) == 10
    assert ("inception-bn", 1, 5) in failed and ("vgg-16", 1, 11) in failed
    first = records[0]
    assert (first.model, first.batch_size, first.n_ps, first.n_workers) == ("resnet-50", 32, 1, 1)
    assert first.speed == pytest.approx(15.783) and first.line == 1


def test_global_batch_is_split_evenly(records):
    """Per-worker speed / local batch is equal across workers (the PROVENANCE claim)."""
    within, rows = 0, 0
    for r in records:
        if r.failed or r.n_workers == 1:
            continue
        q, rem = divmod(r.batch_size, r.n_workers)
        sizes = np.array(sorted([q + 1] * rem + [q] * (r.n_workers - rem)))
        rate = np.array(sorted(r.speeds)) / sizes
        rows += 1
        within += rate.max() / rate.min() - 1 <= 0.05
    assert (rows, within) == (676, 671)


# ---------------------------------------------------------------- parser

def test_parse_and_properties():
    recs = parse_dl2("\n('dssm', 'dist_sync', 256, 2, 3, [1.0, 2.0, 3.0], [0.5, 0.5], "
                     "[0.1, 0.1, 0.1])\n\n")
    (r,) = recs
    assert r.speed == 6.0 and r.local_batch == 86 and r.line == 2 and not r.failed
    assert isinstance(r, DL2Record)


@pytest.mark.parametrize("line,message", [
    ("not python", "literal"),
    ("__import__('os').system('true')", "literal"),
    ("('m', 'dist_sync', 32, 1)", "8 fields"),
    ("('m', 'dist_sync', 32, 1, 2, [1.0], [1.0], [1.0, 1.0])", "speeds"),
    ("('m', 'dist_sync', 32, 0, 1, [1.0], [], [1.0])", "num_ps"),
    ("('m', 'dist_sync', 32, 1, 1, [-1.0], [1.0], [1.0])", "speeds"),
    ("(3, 'dist_sync', 32, 1, 1, [1.0], [1.0], [1.0])", "strings"),
])
def test_parse_errors_name_the_line(line, message):
    with pytest.raises(SpecError, match=message) as err:
        parse_dl2("('m', 'dist_sync', 32, 1, 1, [1.0], [1.0], [1.0])\n" + line, source="x.txt")
    assert err.value.field == "line 2" and err.value.source == "x.txt"


# ---------------------------------------------------------------- fitting

def _synthetic(model, c, tau, u, batch=64, grid=(1, 2, 3, 5, 8)):
    """Records whose speeds are the model's own predictions."""
    fit = dl2.DL2Fit(model, c, tau, u)
    out = []
    for p in grid:
        for w in grid:
            speed = fit.predict(p, w, batch)
            out.append(DL2Record("synthetic", "dist_sync", batch, p, w, (speed / w,) * w,
                                 (1.0,) * p, (1.0,) * w))
    return out


def test_fit_model_recovers_its_own_predictions():
    model = SyncCoarse(sharing="ps")
    recs = _synthetic(model, 0.004, 0.08, 0.02)
    train = [r for r in recs if r.n_ps <= 2 and r.n_workers <= 2]
    fit = fit_model(model, train)
    assert fit.train_error < 1e-6
    for r in recs:
        assert fit.predict(r.n_ps, r.n_workers, r.batch_size) == pytest.approx(r.speed, rel=1e-4)


def test_fit_model_bad_input():
    with pytest.raises(SpecError, match="records"):
        fit_model(SyncCoarse(), [])
    bad = DL2Record("m", "dist_sync", 32, 1, 1, (0.0,), (1.0,), (1.0,))
    with pytest.raises(SpecError, match="records"):
        fit_model(SyncCoarse(), [bad])
    ok = DL2Record("m", "dist_sync", 32, 1, 1, (2.0,), (1.0,), (1.0,))
    with pytest.raises(SpecError, match="forward_fraction"):
        fit_model(SyncCoarse(), [ok], forward_fraction=2.0)


def test_report_on_synthetic_data_is_exact_for_the_true_model():
    recs = _synthetic(SyncCoarse(sharing="fcfs"), 0.003, 0.05, 0.01)
    truth = [0.002, 0.05, 0.02, 0.001, 0.003]
    for r in list(recs):     # a second DNN generated by Optimus's formula
        speed = r.batch_size * optimus_speed(truth, r.n_workers, r.n_ps, "sync", r.batch_size)
        recs.append(DL2Record("optimus-made", "dist_sync", r.batch_size, r.n_ps, r.n_workers,
                              (speed,), r.ps_cpu[:1] * r.n_ps, (1.0,)))
    rep = validate_dl2(recs, candidates={"fcfs": SyncCoarse(sharing="fcfs"),
                                         "optimus": OptimusCandidate()}, train_size=3)
    cell = {(r["dnn"], r["candidate"]): r for r in rep.rows}
    assert cell[("synthetic", "fcfs")]["max_error"] < 1e-4
    assert cell[("optimus-made", "optimus")]["max_error"] < 1e-4
    assert cell[("synthetic", "fcfs")]["n_train"] == 9
    assert cell[("synthetic", "fcfs")]["n_test"] == 16


# ---------------------------------------------------------------- the report

def test_report_on_real_data(records):
    rep = validate_dl2(records, dnns=["resnet-50", "inception-bn"],
                       candidates={"sync-hybrid": SyncCoarse(), "optimus": OptimusCandidate()})
    assert rep.train == {"resnet-50": [(1, 1), (1, 2), (2, 1), (2, 2)],
                         "inception-bn": [(1, 1), (1, 3), (3, 1), (3, 3)]}
    assert [s["n_workers"] for s in rep.skipped] == [5]
    rows = {(r["dnn"], r["candidate"]): r for r in rep.rows}
    assert rows[("resnet-50", "optimus")]["n_test"] == 206
    assert rows[("inception-bn", "sync-hybrid")]["n_test"] == 52
    for r in rep.rows:
        assert 0 <= r["mean_error"] <= r["max_error"] < 10
    text = rep.text()
    assert "resnet-50" in text and "optimus" in text and "skipped 1 zero-speed" in text
    data = json.loads(json.dumps(rep.to_dict()))
    assert set(data["summary"]) == {"sync-hybrid", "optimus"}


def test_report_bad_options(records):
    with pytest.raises(SpecError, match="dnns"):
        validate_dl2(records, dnns=["alexnet"])
    with pytest.raises(SpecError, match="train_size"):
        validate_dl2(records, train_size=0)


def test_report_models_cover_our_models():
    names = set(dl2.report_models())
    assert {"sync-ps", "sync-fcfs", "sync-hybrid", "async-mva", "optimus"} <= names


def test_dnn_names_accept_either_spelling():
    from perfmodel.fit.dl2 import dnn_names
    known = ["resnet-50", "vgg-16", "inception-bn"]
    assert dnn_names(["resnet50", "VGG_16", "inception-bn"], known) == known
    with pytest.raises(SpecError, match="unknown DNN 'resnet152'"):
        dnn_names(["resnet152"], known)
