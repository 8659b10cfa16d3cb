"""`perfmodel sweep`: tables that agree with `perfmodel predict`, resume, exit codes."""

from __future__ import annotations

import json
import re

import pytest

from perfmodel.cli import main
from perfmodel.sweep import read_table


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_sweep_matches_predict_and_resumes(capsys, tmp_path):
    out = str(tmp_path / "r.csv")
    flags = ("--model", "sync", "--ps", "1-2", "--bandwidth", "1Gbps,10Gbps", "--jobs", "1")
    code, text, err = run(capsys, "sweep", *flags, "--workers", "1-4", "--out", out)
    assert (code, err) == (0, "")
    assert re.fullmatch(r"sweep: 16 points \(16 computed, 0 already in .*r\.csv\), 0 with errors, "
                        r"[\d.]+ s -> .*r\.csv \(csv\)\n", text)
    code, text, _ = run(capsys, "sweep", *flags, "--workers", "1-6", "--out", out)
    assert code == 0 and "24 points (8 computed, 16 already in" in text
    rows = read_table(out)
    code, text, _ = run(capsys, "predict", "--model", "sync", "--ps", "1-2",
                        "--bandwidth", "1Gbps,10Gbps", "--workers", "1-6", "--format", "json")
    expected = {(r["workers"], r["n_ps"], r["bandwidth"]): r for r in json.loads(text)}
    assert len(rows) == len(expected) == 24
    for row in rows:  # the same model through two commands: the same numbers
        want = expected[(row["workers"], row["n_ps"], row["bandwidth"])]
        assert row["step_time"] == want["step_time"] and row["epoch_time"] == want["epoch_time"]
        assert row["phase_uplink"] == want["phases"]["uplink"]


def test_sweep_model_flags_batches_and_formats(capsys, tmp_path):
    out = tmp_path / "r.data"
    code, _, _ = run(capsys, "sweep", "--model", "allreduce", "--overlap", "--workers", "2,4",
                     "--batch", "32,64", "--out", str(out), "--format", "jsonl", "--jobs", "1")
    rows = read_table(out, "jsonl")
    assert code == 0 and [(r["batch_size"], r["workers"]) for r in rows] == [
        (32, 2), (32, 4), (64, 2), (64, 4)]
    assert all(r["overlap"] is True and r["n_ps"] == 0 for r in rows)
    pytest.importorskip("pyarrow", reason="Parquet needs pyarrow (extra perfmodel[parquet])")
    code, text, _ = run(capsys, "sweep", "--workers", "1-3", "--out", str(tmp_path / "r.parquet"))
    assert code == 0 and "(parquet)" in text and len(read_table(tmp_path / "r.parquet")) == 3


@pytest.mark.parametrize("argv, flag", [
    (("--workers", "0-2"), "--workers"),
    (("--workers", "a-b"), "--workers"),
    (("--bandwidth", "fast"), "--bandwidth"),
    (("--batch", "0"), "--batch"),
    (("--chunk-size", "0"), "--chunk-size"),
    (("--jobs", "0"), "--jobs"),
    (("--scheduler", "nonsense://x"), "--scheduler"),
    (("--model", "allreduce", "--sharing", "ps"), "--sharing"),
    (("--profile", "nope.yaml"), "nope.yaml"),
    (("--model", "async", "--rho-threshold", "-1"), "--rho-threshold"),
    (("--epoch-samples", "0"), "--epoch-samples"),
])
def test_sweep_bad_input_exits_2_naming_the_flag(argv, flag, capsys, tmp_path):
    code, out, err = run(capsys, "sweep", *argv, "--out", str(tmp_path / "r.csv"))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and flag in err and "Traceback" not in err


def test_sweep_refuses_an_out_file_that_is_not_a_sweep_table(capsys, tmp_path):
    out = tmp_path / "r.csv"
    out.write_text("a,b\n1,2\n")
    code, _, err = run(capsys, "sweep", "--out", str(out))
    assert code == 2 and err == f"perfmodel: error: {out}: row 1.key: missing: not a sweep table\n"
    assert out.read_text() == "a,b\n1,2\n"


def test_sweep_unknown_suffix_exits_2(capsys, tmp_path):
    code, _, err = run(capsys, "sweep", "--out", str(tmp_path / "r.txt"))
    assert code == 2 and err.startswith("perfmodel: error: --format:")
    assert list(tmp_path.iterdir()) == []


def test_sweep_where_every_point_fails_exits_1_and_keeps_the_rows(capsys, tmp_path):
    out = tmp_path / "r.csv"
    code, _, err = run(capsys, "sweep", "--model", "sync", "--ps", "0", "--workers", "1-2",
                       "--out", str(out), "--jobs", "1")
    assert code == 1 and err.startswith("perfmodel: infeasible: all 2 points failed")
    assert [r["error"].split(":")[0] for r in read_table(out)] == ["SpecError"] * 2


def test_sweep_on_a_dask_scheduler(capsys, tmp_path):
    distributed = pytest.importorskip(
        "distributed", reason="the Dask path needs distributed (extra perfmodel[dask])")
    out = tmp_path / "r.csv"
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        code, text, _ = run(capsys, "sweep", "--workers", "1-8", "--ps", "1-2", "--out", str(out),
                            "--scheduler", cluster.scheduler_address, "--chunk-size", "5")
    assert code == 0 and "16 points (16 computed" in text
    assert [(r["n_ps"], r["workers"]) for r in read_table(out)] == [
        (s, k) for s in (1, 2) for k in range(1, 9)]
