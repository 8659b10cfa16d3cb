"""perfmodel.sweep: grids, the oracle (model.estimate called directly), resume,
file formats, bad input, and the executors (process pool, Dask LocalCluster)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from processes import any_alive_after

from perfmodel import registry, zoo
from perfmodel.coarse import SyncCoarse
from perfmodel.errors import SpecError
from perfmodel.specs import Config
from perfmodel.sweep import Grid, process_pool, read_table, sweep, write_table

PROFILE, CLUSTER = zoo.profile("resnet50-pipedream"), zoo.cluster("aws-p3.2xlarge")


def small_grid(**extra) -> Grid:
    axes = dict(model=["sync", "allreduce"], workers=[1, 3, 8], n_ps=None,
                bandwidth=["1Gbps", "10Gbps"], sharing=["ps", "hybrid"])
    return Grid.from_axes(**(axes | extra))


def run(grid, **kw):
    return sweep(grid, jobs=kw.pop("jobs", 1), progress=kw.pop("progress", False), **kw)


# ---------------------------------------------------------------- values
def test_one_worker_by_hand():
    """K=1, one server, 1 Gbps: 2 M/B + T_F + T_B (Li et al. 2022, eq. 9 with K=1)."""
    rows = run(Grid.from_axes(workers=1, bandwidth="1Gbps")).records
    m_over_b = 102228128 / 125e6  # s
    assert rows[0]["step_time"] == pytest.approx(2 * m_over_b + 0.182488 + 0.260931, rel=1e-12)
    assert rows[0]["throughput"] == pytest.approx(128 / rows[0]["step_time"], rel=1e-12)
    assert rows[0]["phase_downlink"] == pytest.approx(m_over_b, rel=1e-12)
    assert rows[0]["bottleneck"] == "downlink" and rows[0]["error"] is None


def test_rows_equal_estimate_called_directly():
    """The oracle: every row is what model.estimate returns for its point."""
    rows = run(small_grid(epoch_samples=50_000)).records
    assert len(rows) == 2 * 3 * 2 + 3 * 2  # sync x sharing, allreduce without it
    for row in rows:
        options = {"sharing": row["sharing"]} if row["model"] == "sync" else {}
        est = registry.make(row["model"], **options).estimate(
            PROFILE, CLUSTER.replace(nic_bandwidth=row["bandwidth"]),
            Config(n_replicas=row["workers"], n_ps=row["n_ps"], epoch_samples=50_000))
        assert row["step_time"] == est.step_time and row["throughput"] == est.throughput
        assert row["bottleneck"] == est.bottleneck and row["epoch_time"] == est.epoch_time
        assert {k[6:]: v for k, v in row.items() if k.startswith("phase_") and v is not None} \
            == dict(est.phases)
        assert row["n_ps"] == (1 if row["model"] == "sync" else 0)


def test_options_cross_only_models_that_have_them():
    rows = run(small_grid()).records
    assert {r["sharing"] for r in rows if r["model"] == "sync"} == {"ps", "hybrid"}
    assert {r["sharing"] for r in rows if r["model"] == "allreduce"} == {None}
    assert {r["bandwidth"] for r in rows} == {125e6, 1.25e9}


def test_batch_axis_changes_the_profile():
    rows = run(Grid.from_axes(workers=4, batch_size=[32, 128])).records
    assert [r["batch_size"] for r in rows] == [32, 128]
    # same step time (the profile's times are per step), throughput scales with the batch
    assert rows[0]["step_time"] == rows[1]["step_time"]
    assert rows[1]["throughput"] == pytest.approx(4 * rows[0]["throughput"], rel=1e-12)


def test_infeasible_and_bad_points_become_error_rows():
    rows = run(Grid.from_axes(workers=2, n_ps=[0, 1], n_workers=[1, 2])).records
    errors = {(r["n_ps"], r["n_workers"]): r["error"] for r in rows}
    assert errors[(1, 1)] is None
    assert errors[(0, 1)].startswith("SpecError: config.n_ps")
    assert errors[(1, 2)].startswith("Infeasible")
    failed = [r for r in rows if r["error"]]
    assert all(r["step_time"] is None and r["throughput"] is None for r in failed)
    assert list(rows[0])[-1] == "error"


def test_layerwise_points_use_the_dnn_and_its_cluster():
    rows = run(Grid.from_axes(model="layerwise", workers=[1, 2], n_ps=2, n_workers=2,
                              epoch_samples=1000)).records
    assert {(r["workload"], r["cluster"]) for r in rows} == {("adam-imagenet22k", "yan2015")}
    est = registry.make("layerwise").estimate(
        zoo.load("adam-imagenet22k"), zoo.cluster("yan2015"),
        Config(n_workers=2, n_replicas=2, n_ps=2, epoch_samples=1000))
    assert rows[1]["epoch_time"] == est.epoch_time and rows[1]["batch_size"] is None


# ---------------------------------------------------------------- keys
def _key(row: dict, workload, cluster) -> str:
    """The documented key: SHA-256 of the canonical JSON, specs as digests of to_dict()."""
    def digest(data):
        text = json.dumps(data, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]
    ident = {k: v for k, v in row.items() if k != "key"} | {
        "workload": digest(workload.to_dict()), "cluster": digest(cluster.to_dict())}
    return digest(ident)


def test_keys_follow_the_documented_definition_and_ignore_order():
    forward = run(Grid.from_axes(workers=[1, 2], bandwidth=["1Gbps", "10Gbps"])).records
    backward = run(Grid.from_axes(workers=[2, 1], bandwidth=["10Gbps", "1Gbps"])).records
    axes = ("model", "workload", "cluster", "workers", "n_workers", "n_ps", "bandwidth",
            "batch_size", "mode", "epoch_samples")
    for row in forward:
        assert row["key"] == _key({a: row[a] for a in axes}, PROFILE, CLUSTER)
    assert {r["key"] for r in forward} == {r["key"] for r in backward}
    other_batch = run(Grid.from_axes(workload=PROFILE.replace(t_update=0.01), workers=1,
                                     bandwidth="1Gbps")).records[0]
    assert other_batch["key"] not in {r["key"] for r in forward}


@settings(max_examples=25, deadline=None)
@given(workers=st.lists(st.integers(1, 64), min_size=1, max_size=4, unique=True),
       n_ps=st.lists(st.integers(1, 8), min_size=1, max_size=3, unique=True),
       bandwidth=st.lists(st.sampled_from([1e8, 1.25e9, 3.125e9]), min_size=1, max_size=3,
                          unique=True),
       sharing=st.lists(st.sampled_from(["ps", "fcfs", "hybrid"]), min_size=1, max_size=3,
                        unique=True))
def test_grid_size_is_the_product_of_its_axes(workers, n_ps, bandwidth, sharing):
    grid = Grid.from_axes(workers=workers, n_ps=n_ps, bandwidth=bandwidth, sharing=sharing)
    points = list(grid.points())
    assert len(points) == len(workers) * len(n_ps) * len(bandwidth) * len(sharing)
    assert len({p["key"] for p in points}) == len(points)


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("axes, field", [
    (dict(foo=[1]), "grid.foo"),
    (dict(model="nope"), "grid.model"),
    (dict(workload="nope"), "grid.workload"),
    (dict(cluster="zoo:nope"), "grid.cluster"),
    (dict(workers=[0, 1]), "grid.workers"),
    (dict(workers=[]), "grid.workers"),
    (dict(n_ps=[-1]), "grid.n_ps"),
    (dict(bandwidth="fast"), "grid.bandwidth"),
    (dict(bandwidth=[-1.0]), "grid.bandwidth"),
    (dict(mode="sometimes"), "grid.mode"),
    (dict(model="allreduce", sharing="ps"), "grid.sharing"),  # an option of sync only
    (dict(model=["sync", "allreduce"], sharing=["ps", "bogus"]), "grid.sharing"),
    (dict(model="async", rho_threshold=[0.5, -1]), "grid.rho_threshold"),
    (dict(model="layerwise", batch_size=32), "grid.batch_size"),
])
def test_bad_axes_raise_spec_error_naming_them(axes, field):
    with pytest.raises(SpecError) as err:
        Grid.from_axes(**axes)
    assert err.value.field == field


@pytest.mark.parametrize("kw, field", [
    (dict(chunk_size=0), "chunk_size"), (dict(jobs=0), "jobs"),
    (dict(out="table.txt"), "format"), (dict(out="t.csv", format="xls"), "format"),
    (dict(scheduler="nonsense://x"), "scheduler"), (dict(start_method="teleport"), "start_method"),
])
def test_bad_sweep_arguments_raise_spec_error(kw, field, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SpecError) as err:
        sweep(Grid(), progress=False, **kw)
    assert err.value.field == field
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_a_file_that_is_not_a_sweep_table_is_refused(tmp_path):
    out = tmp_path / "t.csv"
    out.write_text("a,b\n1,2\n")
    with pytest.raises(SpecError, match="key"):
        run(Grid(), out=out)


# ---------------------------------------------------------------- formats
@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_every_format_round_trips(fmt, tmp_path):
    if fmt == "parquet":
        pytest.importorskip("pyarrow", reason="Parquet needs pyarrow (extra perfmodel[parquet])")
    grid = small_grid(n_ps=[0, 1], overlap=[False, True])  # error rows, bools, None options
    result = run(grid, out=tmp_path / f"t.{fmt}")
    assert result.errors > 0 and result.path == tmp_path / f"t.{fmt}"
    back = read_table(result.path)
    assert back == result.records
    assert [type(v) for v in back[0].values()] == [type(v) for v in result.records[0].values()]
    assert list(tmp_path.iterdir()) == [result.path]  # journal gone


def test_write_table_fills_missing_columns_with_none(tmp_path):
    rows = [{"key": "a", "x": 1}, {"key": "b", "y": 2.5}]
    for name in ("t.csv", "t.jsonl"):
        assert read_table(write_table(tmp_path / name, rows)) == [
            {"key": "a", "x": 1, "y": None}, {"key": "b", "x": None, "y": 2.5}]


# ---------------------------------------------------------------- resume
@pytest.fixture
def count_estimates(monkeypatch):
    """Count SyncCoarse.estimate calls (in this process: jobs=1); optionally interrupt."""
    calls = {"n": 0, "interrupt_at": None}
    original = SyncCoarse.estimate

    def counting(self, *args):
        calls["n"] += 1
        if calls["n"] == calls["interrupt_at"]:
            raise KeyboardInterrupt
        return original(self, *args)
    monkeypatch.setattr(SyncCoarse, "estimate", counting)
    return calls


def grid40(workers=range(1, 21)) -> Grid:
    return Grid.from_axes(workers=workers, n_ps=[1, 2], bandwidth="10Gbps")


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_interrupted_sweep_resumes_only_missing_points(fmt, tmp_path, count_estimates):
    if fmt == "parquet":
        pytest.importorskip("pyarrow", reason="Parquet needs pyarrow (extra perfmodel[parquet])")
    whole = run(grid40(), out=tmp_path / f"whole.{fmt}")
    out = tmp_path / f"t.{fmt}"
    count_estimates["n"], count_estimates["interrupt_at"] = 0, 23
    with pytest.raises(KeyboardInterrupt):
        run(grid40(), out=out, chunk_size=5)  # chunks 1-4 finish, the 5th is cut
    journal = out if fmt == "jsonl" else tmp_path / f"t.{fmt}.partial.jsonl"
    assert len(read_table(journal, "jsonl")) == 20
    count_estimates["n"], count_estimates["interrupt_at"] = 0, None
    again = run(grid40(), out=out, chunk_size=5)
    assert (again.computed, again.skipped, count_estimates["n"]) == (20, 20, 20)
    assert read_table(out) == read_table(whole.path) == whole.records == again.records
    assert not (tmp_path / f"t.{fmt}.partial.jsonl").exists()


def test_a_grown_grid_computes_only_new_points(tmp_path, count_estimates):
    out = tmp_path / "t.csv"
    run(grid40(range(1, 11)), out=out)
    count_estimates["n"] = 0
    grown = run(grid40(), out=out)
    assert (grown.computed, grown.skipped, count_estimates["n"]) == (20, 20, 20)
    assert read_table(out) == run(grid40()).records


def test_a_cut_jsonl_line_is_recomputed(tmp_path, count_estimates):
    out = tmp_path / "t.jsonl"
    whole = run(grid40(), out=out)
    out.write_bytes(out.read_bytes()[:-30])  # an interruption in the middle of a line
    count_estimates["n"] = 0
    again = run(grid40(), out=out)
    assert (again.computed, count_estimates["n"]) == (1, 1)
    assert read_table(out) == whole.records


def test_rows_of_other_grids_are_kept(tmp_path):
    out = tmp_path / "t.jsonl"
    first = run(Grid.from_axes(workers=[1, 2], bandwidth="1Gbps"), out=out)
    second = run(Grid.from_axes(workers=[1, 2], bandwidth="10Gbps"), out=out)
    assert second.computed == 2 and read_table(out) == first.records + second.records


# ---------------------------------------------------------------- executors
def test_process_pool_sweeps_10000_points_with_progress(capsys):
    grid = Grid.from_axes(workers=range(1, 626), n_ps=range(1, 5),
                          bandwidth=["1Gbps", "10Gbps", "25Gbps", "100Gbps"])
    result = sweep(grid, jobs=2, chunk_size=1000, progress=True)
    assert len(result.records) == result.computed == 10_000 and result.errors == 0
    assert "10000/10000" in capsys.readouterr().err
    for row in result.records[::2499]:
        est = SyncCoarse().estimate(PROFILE, CLUSTER.replace(nic_bandwidth=row["bandwidth"]),
                                    Config(n_replicas=row["workers"], n_ps=row["n_ps"]))
        assert row["step_time"] == est.step_time


def test_no_progress_bar_when_asked(capsys):
    run(Grid(), progress=False)
    assert capsys.readouterr().err == ""


@pytest.fixture(scope="module")
def local_cluster():
    distributed = pytest.importorskip(
        "distributed", reason="the Dask path needs distributed (extra perfmodel[dask])")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        yield cluster


def test_dask_executor_gives_the_serial_rows(local_cluster, tmp_path):
    from distributed import Client

    grid = small_grid()
    with Client(local_cluster) as client:
        on_dask = sweep(grid, executor=client.get_executor(), out=tmp_path / "t.jsonl",
                        chunk_size=4, progress=False)
        assert not client.status == "closed"  # a caller's executor is left open
    assert on_dask.records == run(grid).records
    assert read_table(tmp_path / "t.jsonl") == on_dask.records


def test_dask_scheduler_address_resumes(local_cluster, tmp_path):
    out = tmp_path / "t.parquet"
    pytest.importorskip("pyarrow", reason="Parquet needs pyarrow (extra perfmodel[parquet])")
    run(grid40(range(1, 11)), out=out)
    resumed = sweep(grid40(), out=out, scheduler=local_cluster.scheduler_address,
                    chunk_size=7, progress=False)
    assert (resumed.computed, resumed.skipped) == (20, 20)
    assert read_table(out) == run(grid40()).records
    assert not any(math.isnan(r["step_time"]) for r in resumed.records)


KILLED_AT_23 = """
import os, signal, sys
from perfmodel.coarse import SyncCoarse
from perfmodel.sweep import Grid, sweep
calls, original = [0], SyncCoarse.estimate
def dying(self, *args):
    calls[0] += 1
    if calls[0] == 23:  # a hard kill: no exception handler, no file closing
        os.kill(os.getpid(), signal.SIGKILL)
    return original(self, *args)
SyncCoarse.estimate = dying
sweep(Grid.from_axes(workers=range(1, 21), n_ps=[1, 2], bandwidth="10Gbps"),
      out=sys.argv[1], jobs=1, chunk_size=5, progress=False)
"""


@pytest.mark.skipif(not hasattr(__import__("signal"), "SIGKILL"), reason="needs POSIX SIGKILL")
def test_a_killed_sweep_loses_only_the_chunk_in_flight(tmp_path, count_estimates):
    import subprocess
    import sys

    out = tmp_path / "t.csv"
    proc = subprocess.run([sys.executable, "-c", KILLED_AT_23, str(out)], capture_output=True)
    assert proc.returncode == -9 and not out.exists()
    assert len(read_table(tmp_path / "t.csv.partial.jsonl", "jsonl")) == 20  # flushed per chunk
    again = run(grid40(), out=out)
    assert (again.computed, count_estimates["n"]) == (20, 20)
    assert read_table(out) == run(grid40()).records


@pytest.mark.parametrize("threshold, started", [(0.0, 2), (1e9, 1)])
def test_auto_jobs_start_a_pool_only_for_slow_grids(threshold, started, monkeypatch):
    """jobs=None: the first chunk runs here; a pool starts when the rest would be slow."""
    import concurrent.futures as cf

    from perfmodel import sweep as sweep_module

    asked = []

    def fake_pool(jobs, start_method):
        asked.append(jobs)
        pool = cf.ThreadPoolExecutor(jobs) if jobs > 1 else None
        return pool, (lambda: pool.shutdown()) if pool else (lambda: None)
    monkeypatch.setattr(sweep_module, "AUTO_POOL_SECONDS", threshold)
    monkeypatch.setattr(sweep_module.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(sweep_module, "_pool", fake_pool)
    result = sweep(grid40(), chunk_size=10, progress=False)
    assert asked == [started] and result.records == run(grid40()).records


# ---------------------------------------------------------------- model objects, intervals
@dataclasses.dataclass(frozen=True)
class Banded:
    """SyncCoarse with a +-10 % throughput interval at level 0.9 (a test model)."""

    sharing: str = "hybrid"

    def estimate(self, workload, cluster, config):
        est = SyncCoarse(sharing=self.sharing).estimate(workload, cluster, config)
        return est.with_interval(0.9 * est.throughput, 1.1 * est.throughput, level=0.9,
                                 source="test")


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_model_objects_and_interval_columns(fmt, tmp_path):
    if fmt == "parquet":
        pytest.importorskip("pyarrow", reason="Parquet needs pyarrow (extra perfmodel[parquet])")
    grid = Grid.from_axes(model=[Banded("ps"), Banded("fcfs"), "sync"], workers=[1, 4],
                          bandwidth="1Gbps")
    result = run(grid, out=tmp_path / f"t.{fmt}")
    labels = list(dict.fromkeys(r["model"] for r in result.records))
    assert len(labels) == 3 and labels[0].startswith("Banded#") and labels[2] == "sync"
    for row in result.records[:4]:
        sharing = "ps" if row["model"] == labels[0] else "fcfs"
        est = SyncCoarse(sharing=sharing).estimate(
            PROFILE, CLUSTER.replace(nic_bandwidth=125e6), Config(n_replicas=row["workers"]))
        assert row["throughput"] == est.throughput
        assert (row["throughput_low"], row["throughput_high"], row["interval_level"]) == (
            0.9 * est.throughput, 1.1 * est.throughput, 0.9)
    assert all(r["throughput_low"] is None for r in result.records[4:])  # sync: no interval
    assert read_table(result.path) == result.records
    again = run(Grid.from_axes(model=[Banded("ps"), Banded("fcfs"), "sync"], workers=[1, 4],
                               bandwidth="1Gbps"), out=result.path)
    assert again.computed == 0  # an equal model object has the same keys


class Unstable:
    def estimate(self, workload, cluster, config):  # pragma: no cover - never called
        raise AssertionError


@pytest.mark.parametrize("model", [Unstable(), object()])
def test_model_objects_need_estimate_and_a_stable_repr(model):
    with pytest.raises(SpecError) as err:
        Grid(model=model)
    assert err.value.field == "grid.model"


KILLED_WITH_A_POOL = """
import os, signal, sys, threading, time
from perfmodel.coarse import SyncCoarse
from perfmodel.sweep import Grid, sweep
original = SyncCoarse.estimate
def slow(self, *args):
    time.sleep(0.02)
    return original(self, *args)
SyncCoarse.estimate = slow   # inherited by the forked workers
def kill_when_the_pool_runs():
    kids = f"/proc/{os.getpid()}/task/{os.getpid()}/children"
    while len(open(kids).read().split()) < 2:
        time.sleep(0.05)
    time.sleep(0.3)
    open(sys.argv[2], "w").write(open(kids).read())
    os.kill(os.getpid(), signal.SIGKILL)
threading.Thread(target=kill_when_the_pool_runs, daemon=True).start()
sweep(Grid.from_axes(workers=range(1, 201), n_ps=[1, 2], bandwidth="10Gbps"),
      out=sys.argv[1], jobs=2, chunk_size=4, progress=False, start_method="fork")
"""


def test_a_sigkilled_sweep_leaves_no_pool_worker_behind(tmp_path):
    """Linux: the pool's workers end when the sweep's process is killed outright."""
    import subprocess
    import sys

    pids = tmp_path / "pids"
    proc = subprocess.run([sys.executable, "-c", KILLED_WITH_A_POOL, str(tmp_path / "t.csv"),
                           str(pids)], capture_output=True, timeout=60)
    assert proc.returncode == -9, proc.stderr.decode()[-500:]
    workers = [int(p) for p in pids.read_text().split()]
    assert len(workers) >= 2
    assert not any_alive_after(workers, 10)


def test_a_process_pool_runs_tasks_elsewhere_and_one_job_runs_here():
    with process_pool(2) as pool:
        assert pool.submit(os.getpid).result() != os.getpid()
    with process_pool(1) as pool:
        assert pool is None
    with pytest.raises(SpecError, match="jobs"):
        with process_pool(0):
            pass
