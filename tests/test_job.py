"""Job files (`--job`): the same answers as the flags they stand for, and clear errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from perfmodel.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def run(capsys, *argv):
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_every_example_job_runs_the_command_in_its_first_line(capsys, monkeypatch):
    monkeypatch.chdir(EXAMPLES.parent)
    jobs = sorted(EXAMPLES.glob("*job.yaml"))
    assert len(jobs) >= 4
    for job in jobs:
        first = job.read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith("# perfmodel ") and first.endswith(f"--job examples/{job.name}")
        code, out, err = run(capsys, *first[len("# perfmodel "):].split())
        assert code == 0 and out and not err, (job.name, err)


@pytest.mark.parametrize("job, flags", [
    ("job.yaml", ["predict", "--profile", "zoo:resnet50-pipedream", "--cluster",
                  "zoo:aws-p3.2xlarge", "--model", "sync", "--workers", "1-16", "--ps", "1",
                  "--bandwidth", "10Gbps", "--sharing", "ps"]),
    ("inline_job.yaml", ["predict", "--profile", "examples/my_profile.yaml", "--cluster",
                         "examples/my_cluster.yaml", "--model", "async", "--workers", "1-8"]),
    ("optimize_job.yaml", ["optimize", "--dnn", "zoo:adam-mnist", "--cluster", "zoo:yan2015",
                           "--machines", "16", "--top", "3"]),
    ("simulate_job.yaml", ["simulate", "--trace", "zoo:resnet50", "--workers", "1,2,4,8",
                           "--bandwidth", "10Gbps", "--steps", "200", "--warmup", "20"]),
])
def test_a_job_answers_as_its_flags(job, flags, capsys, monkeypatch):
    monkeypatch.chdir(EXAMPLES.parent)
    code, by_flags, _ = run(capsys, *flags, "--format", "json")
    assert code == 0
    code, by_job, _ = run(capsys, flags[0], "--job", f"examples/{job}", "--format", "json")
    assert code == 0
    # wall times differ between runs
    by_flags, by_job = (re.sub(r'"\w*seconds": [-+.\deE]+', "", t) for t in (by_flags, by_job))
    assert by_job == by_flags


def test_flags_on_the_command_line_win_over_the_job(capsys):
    job = str(EXAMPLES / "job.yaml")
    _, ps, _ = run(capsys, "predict", "--job", job, "--workers", "8", "--format", "csv")
    _, fcfs, _ = run(capsys, "predict", "--job", job, "--workers", "8", "--sharing", "fcfs",
                     "--format", "csv")
    _, direct, _ = run(capsys, "predict", "--workers", "8", "--bandwidth", "10Gbps",
                       "--sharing", "fcfs", "--format", "csv")
    assert ps.count("\n") == fcfs.count("\n") == 2 and ps != fcfs and fcfs == direct


@pytest.mark.parametrize("text, words", [
    ("", "expected the sections"),
    ("[1, 2]", "expected the sections"),
    ("workload: {profile: zoo:resnet50-pipedream}\nwarp: 1\n", "warp: unknown section"),
    ("workload: {model: x}\n", "workload.model: unknown"),
    ("workload: 5\n", "workload: expected a mapping"),
    ("execution: {warp: 1}\n", "execution.warp: not a flag"),
    ("execution: {workers: {a: 1}}\n", "execution.workers: expected a value"),
    ("execution: {overlap: 3}\n", "execution.overlap: expected true or false"),
    ("execution: {model: warp}\n", "execution.model: 'warp' is not one of"),
    ("execution: {batch_size: many}\n", "execution.batch_size: cannot read"),
    ("execution: {bandwidth: 10}\n", "--bandwidth: '10' needs a unit"),
    ("cluster: {machines: 8, nic_bandwidth: 10 furlongs}\n", "cluster.nic_bandwidth: unknown unit"),
    ("cluster: {machines: -8, nic_bandwidth: 10Gbps}\n", "cluster.machines"),
    ("cluster: missing.yaml\n", "cannot read file"),
    ("cluster: 5\n", "cluster: expected zoo:NAME"),
    ("workload: {profile: {model_bytes: 1MB}}\n", "workload.profile.t_forward"),
    ("workload: {trace: 5}\n", "workload.trace: expected zoo:NAME"),
    ("a: &a 1\nb: *a\n", "aliases"),
])
def test_a_bad_job_is_one_line_naming_the_file_and_field(text, words, capsys, tmp_path):
    job = tmp_path / "job.yaml"
    job.write_text(text, encoding="utf-8")
    code, out, err = run(capsys, "predict", "--job", str(job))
    assert code == 2 and not out and err.count("\n") == 1, err
    assert words in err, err
    assert "internal error" not in err
    if "--bandwidth" not in words:
        assert str(job) in err or "missing.yaml" in err, err
