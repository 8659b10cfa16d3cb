"""Operational analysis: the utilization law, the bottleneck bound and the CPU ceiling."""

import dataclasses
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfmodel.errors import SpecError
from perfmodel.fit import dl2
from perfmodel.operational import (
    UtilizationCeiling,
    bottleneck_throughput,
    fit_utilization_ceiling,
    service_demand,
)
from perfmodel.units import exact_text


def test_laws_by_hand():
    # a server 1.5 cores busy while the job does 30 samples/s: 0.05 core-s per sample,
    # so 2 cores sustain at most 40 samples/s
    assert service_demand(1.5, 30.0) == pytest.approx(0.05)
    assert bottleneck_throughput(2.0, 0.05) == pytest.approx(40.0)
    assert bottleneck_throughput(2.0, 0.0) == np.inf
    np.testing.assert_allclose(service_demand([1.0, 0.5], [10.0, 20.0]), [0.1, 0.025])


@pytest.mark.parametrize("call, field", [
    (lambda: service_demand(-0.1, 1.0), "utilization"),
    (lambda: service_demand(1.0, 0.0), "throughput"),
    (lambda: service_demand(float("nan"), 1.0), "utilization"),
    (lambda: bottleneck_throughput(0.0, 1.0), "capacity"),
    (lambda: bottleneck_throughput(1.0, "x"), "demand"),
])
def test_bad_values_name_the_argument(call, field):
    with pytest.raises(SpecError) as err:
        call()
    assert err.value.field == field


def test_ceiling_by_hand():
    """G = 32, 2 cores; worker 0.5 + 0.02 * G/w, busiest server (1 + 0.5 w) p**-0.5."""
    c = UtilizationCeiling(2.0, (0.5, 0.02), (1.0, 0.5, 0.5))
    # p=1, w=1: worker 0.5 + 0.64 = 1.14, server 1.5 -> step 0.75 s -> 42.67 samples/s
    assert c.speed(1, 1, 32) == pytest.approx(32 / 0.75)
    # p=4, w=2: worker 0.5 + 0.32 = 0.82, server 2 / 2 = 1 -> step 0.5 -> 64
    assert c.speed(4, 2, 32) == pytest.approx(64.0)
    # p=16, w=1: worker 1.14, server 1.5 / 4 = 0.375 -> worker-bound, step 0.57
    assert c.speed(16, 1, 32) == pytest.approx(32 / 0.57)
    np.testing.assert_allclose(c.speed([1, 4], [1, 2], 32), [32 / 0.75, 64.0])


@pytest.mark.parametrize("kwargs, field", [
    (dict(capacity=0.0), "capacity"),
    (dict(worker=(0.1,)), "worker"),
    (dict(worker=(0.1, -0.2)), "worker"),
    (dict(server=(1.0, 0.1, 1.5)), "server"),
    (dict(server=(1.0, float("nan"), 0.5)), "server"),
])
def test_ceiling_validates_on_construction(kwargs, field):
    args = dict(capacity=2.0, worker=(0.1, 0.01), server=(1.0, 0.1, 0.5))
    args.update(kwargs)
    with pytest.raises(SpecError) as err:
        UtilizationCeiling(**args)
    assert err.value.field == field


def _readings(ceiling, ps, ws, g, speeds):
    """CPU readings that a job with exactly ``ceiling``'s demands shows at ``speeds``."""
    ps, ws, speeds = (np.asarray(v, float) for v in (ps, ws, speeds))
    step = g / speeds
    return ceiling.server_demand(ps, ws) / step, ceiling.worker_demand(ws, g) / step


def test_fit_recovers_the_demands_it_was_made_from():
    true = UtilizationCeiling(2.0, (0.3, 0.015), (0.8, 0.25, 0.7))
    ps, ws, g = [1, 1, 2, 2], [1, 2, 1, 2], 64
    speeds = [20.0, 22.0, 31.0, 35.0]          # any speeds: the law reads demand = U * step
    us, uw = _readings(true, ps, ws, g, speeds)
    fit = fit_utilization_ceiling(ps, ws, g, speeds, us, uw, capacity=2.0)
    assert fit.worker == pytest.approx(true.worker, rel=1e-6)
    assert fit.server == pytest.approx(true.server, rel=1e-4)
    for p, w in [(8, 1), (23, 12), (3, 7)]:
        assert fit.speed(p, w, g) == pytest.approx(true.speed(p, w, g), rel=1e-4)


def test_one_server_count_splits_evenly_and_default_capacity_is_the_top_reading():
    true = UtilizationCeiling(1.5, (0.2, 0.01), (0.5, 0.2, 1.0))
    ps, ws, g, speeds = [2, 2, 2], [1, 2, 4], 32, [10.0, 12.0, 13.0]
    us, uw = _readings(true, ps, ws, g, speeds)
    fit = fit_utilization_ceiling(ps, ws, g, speeds, us, uw)
    assert fit.server[2] == 1.0
    assert fit.capacity == pytest.approx(max(us.max(), uw.max()))


@settings(max_examples=40, deadline=None)
@given(st.floats(0.05, 2.0), st.floats(1e-3, 0.1), st.floats(0.1, 3.0), st.floats(0.0, 1.0),
       st.floats(0.0, 1.0), st.floats(1.0, 4.0))
def test_ceiling_never_below_the_runs_it_was_fitted_on(aw, bw, a_s, b_s, g, cap):
    """Runs no resource saturated (readings <= capacity) lie under the ceiling fitted to
    them: the law's bound holds at the measured points, and grows with the capacity."""
    true = UtilizationCeiling(cap, (aw, bw), (a_s, b_s + 1e-3, g))
    ps, ws, gb = np.array([1, 1, 3, 3]), np.array([1, 3, 1, 3]), 96
    top = true.speed(ps, ws, gb)
    speeds = 0.8 * top                               # every run at 80% of its bound
    us, uw = _readings(true, ps, ws, gb, speeds)
    fit = fit_utilization_ceiling(ps, ws, gb, speeds, us, uw, capacity=cap)
    assert np.all(fit.speed(ps, ws, gb) >= speeds * (1 - 1e-6))
    wider = fit_utilization_ceiling(ps, ws, gb, speeds, us, uw, capacity=2 * cap)
    np.testing.assert_allclose(wider.speed(ps, ws, gb), 2 * fit.speed(ps, ws, gb))


@pytest.mark.parametrize("kwargs, field", [
    (dict(n_ps=[1, 1], n_workers=[1, 2], speed=[10.0, 11.0], server_cpu=[1.9, 1.9],
          worker_cpu=[0.5, 0.4]), "n_workers"),                       # too few runs
    (dict(n_workers=[1, 1, 1]), "n_workers"),                        # one worker count
    (dict(speed=[1.0, 0.0, 1.0]), "speed"),
    (dict(server_cpu=[1.0, -1.0, 1.0]), "server_cpu"),
    (dict(worker_cpu=[1.0, 1.0]), "speed"),                          # lengths differ
    (dict(capacity=0.0), "capacity"),
])
def test_fit_bad_input_names_the_field(kwargs, field):
    args = dict(n_ps=[1, 1, 2], n_workers=[1, 2, 1], batch_size=32, speed=[10.0, 11.0, 18.0],
                server_cpu=[1.9, 1.9, 1.9], worker_cpu=[0.5, 0.4, 0.9])
    args.update(kwargs)
    with pytest.raises(SpecError) as err:
        fit_utilization_ceiling(**args)
    assert err.value.field == field


def test_dl2_resnet50_ceiling_on_its_calibration_runs():
    """ResNet-50's 4 runs ({1,2} servers x {1,2} workers): the single server reads 1.91
    cores at 15.78 samples/s, so at 2.022 cores the law allows 15.78 * 2.022 / 1.91 =
    16.7; the fit passes close to the 4 demands, and with 1 worker and many servers the
    worker's own CPU (0.55 cores at 15.8 samples/s: 1.11 core-s per 32-sample step)
    caps the speed near 60 samples/s, where the measured runs plateau (48-62 at 8-22
    servers)."""
    recs = [r for r in dl2.load_builtin() if r.model == "resnet-50" and not r.failed]
    train = [r for r in recs if r.n_ps <= 2 and r.n_workers <= 2]
    c = dl2.utilization_ceiling(train, capacity=2.022)
    one = next(r for r in train if (r.n_ps, r.n_workers) == (1, 1))
    assert one.ps_cpu[0] == pytest.approx(1.908, abs=1e-3)
    assert c.speed(1, 1, 32) == pytest.approx(one.speed * 2.022 / 1.908, rel=0.06)
    plateau = [r.speed for r in recs if r.n_workers == 1 and 8 <= r.n_ps <= 22]
    assert 50 < c.speed(16, 1, 32) < 70 and min(plateau) > 48 and max(plateau) < 63
    with pytest.raises(SpecError, match="zero speed"):
        dl2.utilization_ceiling([r for r in dl2.load_builtin() if r.failed][:3] + train)


# ---------------------------------------------------------------- in the selection

def _runs_with_cpu(truth, ceiling, profile, cluster, cells):
    """Sync measurements of ``truth`` at (workers, servers) with the CPU readings a job with
    ``ceiling``'s demands shows at those speeds."""
    from perfmodel.measurements import Measurement
    from perfmodel.specs import Config

    out = []
    for w, p in cells:
        x = truth.estimate(profile, cluster, Config(n_replicas=w, n_ps=p)).throughput
        step = w * profile.batch_size / x
        out.append(Measurement(w, p, cluster.nic_bandwidth, x,
                               server_cpu=float(ceiling.server_demand(p, w)) / step,
                               worker_cpu=float(ceiling.worker_demand(w, w * profile.batch_size))
                               / step))
    return out


def test_select_model_caps_the_chosen_estimate_at_the_runs_cpu_ceiling():
    """Runs at {1,2} workers x {1,2} servers carry CPU readings of a job whose busiest server
    needs (0.5 + 0.5 w) / p core-seconds a step: the selection fits that ceiling back and
    slows the chosen model to it where the model is faster (8 workers on 1 server), with
    the added seconds as a ``cpu_ceiling`` phase; where the model is slower it is unchanged."""
    from perfmodel import zoo
    from perfmodel.coarse import SyncCoarse
    from perfmodel.fit.selection import select_model
    from perfmodel.specs import Config

    prof = zoo.profile("resnet50-pipedream").replace(t_update=0.02)
    clu = zoo.cluster("aws-p3.2xlarge").replace(machines=32)
    true = UtilizationCeiling(2.0, (0.05, 0.002), (0.5, 0.5, 1.0))
    runs = _runs_with_cpu(SyncCoarse("ps"), true, prof, clu, [(1, 1), (2, 1), (1, 2), (2, 2)])
    sel = select_model(prof, clu, runs, cpu_capacity=2.0)
    assert sel.ceiling.server == pytest.approx(true.server, rel=1e-4)
    assert "CPU ceiling" in sel.chosen.why
    plain = select_model(prof, clu, [dataclasses.replace(m, server_cpu=None, worker_cpu=None)
                                       for m in runs])
    assert plain.ceiling is None and "CPU ceiling" not in plain.chosen.why
    for w, p in [(8, 1), (1, 4)]:
        cfg = Config(n_replicas=w, n_ps=p)
        free = plain.chosen.estimate(prof, clu, cfg)
        est = sel.chosen.estimate(prof, clu, cfg)
        top = true.speed(p, w, w * prof.batch_size)
        assert est.throughput == pytest.approx(min(free.throughput, top), rel=1e-4)
        low, high = est.throughput_interval
        assert low <= est.throughput <= high
        if (w, p) == (8, 1):             # 2.25 s of server CPU against the model's 1.77 s
            assert free.throughput > top and est.bottleneck == "cpu_ceiling"
            assert sum(est.phases.values()) == pytest.approx(est.step_time)
            assert est.phases["cpu_ceiling"] > 0
        else:
            assert free.throughput < top and est.bottleneck == free.bottleneck
    data = json.loads(json.dumps(sel.to_dict()))
    assert data["cpu_ceiling"]["capacity"] == 2.0
    # async runs have no common step: no ceiling
    asy = [dataclasses.replace(m, mode="async") for m in runs]
    assert select_model(prof, clu, asy, cpu_capacity=2.0).ceiling is None
    # a capacity with no readings to act on is an error, not silently unused
    bare = [dataclasses.replace(m, server_cpu=None, worker_cpu=None) for m in runs]
    with pytest.raises(SpecError, match="cpu_capacity: the measurements have no"):
        select_model(prof, clu, bare, cpu_capacity=2.0)


def test_cli_predict_reads_the_cpu_columns(capsys, tmp_path):
    from perfmodel import zoo
    from perfmodel.cli import main
    from perfmodel.coarse import SyncCoarse
    from perfmodel.fit.selection import select_model
    from perfmodel.io import load_measurements
    from perfmodel.specs import Config

    prof, clu = zoo.profile("resnet50-pipedream"), zoo.cluster("aws-p3.2xlarge")
    true = UtilizationCeiling(2.0, (0.05, 0.002), (0.5, 0.5, 1.0))
    runs = _runs_with_cpu(SyncCoarse("ps"), true, prof, clu, [(1, 1), (2, 1), (1, 2), (2, 2)])
    path = tmp_path / "runs.csv"
    path.write_text("workers,n_ps,bandwidth,throughput,server_cpu,worker_cpu\n" + "".join(
        f"{m.workers},{m.n_ps},{exact_text(m.bandwidth, 'B/s')},{m.throughput},{m.server_cpu},"
        f"{m.worker_cpu}\n"
        for m in runs))
    code = main(["predict", "--measurements", str(path), "--workers", "8", "--format", "json",
                 "--cpu-capacity", "2"])
    out, _ = capsys.readouterr()
    assert code == 0
    (record,) = json.loads(out)
    chosen = select_model(prof, clu, load_measurements(path), cpu_capacity=2.0).chosen
    est = chosen.estimate(prof, clu, Config(n_replicas=8))
    assert record["throughput"] == pytest.approx(est.throughput)
    assert record["bottleneck"] == "cpu_ceiling"
    # without the capacity the readings are unused, and the why text says so
    code = main(["predict", "--measurements", str(path), "--workers", "8", "--format", "json"])
    out, _ = capsys.readouterr()
    (record,) = json.loads(out)
    assert code == 0 and record["bottleneck"] != "cpu_ceiling"
    assert "CPU readings are unused without cpu_capacity" in record["why"]
    path.write_text("workers,n_ps,bandwidth,throughput,server_cpu\n1,1,10Gbps,100,x\n")
    code = main(["predict", "--measurements", str(path), "--workers", "8"])
    _, err = capsys.readouterr()
    assert code == 2 and "server_cpu" in err and len(err.strip().splitlines()) == 1
    # one reading without the other would silently drop the ceiling: an error naming it
    path.write_text("workers,n_ps,bandwidth,throughput,server_cpu\n1,1,10Gbps,100,1.5\n"
                    "2,1,10Gbps,150,1.8\n")
    code = main(["predict", "--measurements", str(path), "--workers", "8"])
    _, err = capsys.readouterr()
    assert code == 2 and "line 2, column worker_cpu" in err and len(err.strip().splitlines()) == 1


def test_cli_cpu_capacity_flag(capsys, tmp_path):
    """--cpu-capacity: 2 cores cap 8 workers on one server, 4 cores allow more; a bad value
    exits 2 with one line."""
    from perfmodel.cli import main

    path = tmp_path / "runs.csv"
    path.write_text("workers,n_ps,bandwidth,throughput,server_cpu,worker_cpu\n"
                    "1,1,10Gbps,204.2,1.57,0.2\n2,1,10Gbps,323.8,1.9,0.2\n"
                    "1,2,10Gbps,207.5,0.8,0.2\n2,2,10Gbps,414.9,1.2,0.2\n")
    tops = []
    for cap in ("2", "4"):
        code = main(["predict", "--measurements", str(path), "--workers", "8",
                     "--cpu-capacity", cap, "--format", "json"])
        out, _ = capsys.readouterr()
        assert code == 0
        (record,) = json.loads(out)
        tops.append((record["throughput"], record["bottleneck"]))
    assert tops[0][1] == "cpu_ceiling" and tops[1][0] > tops[0][0]
    code = main(["predict", "--measurements", str(path), "--workers", "8", "--cpu-capacity",
                 "-1"])
    _, err = capsys.readouterr()
    assert code == 2 and "capacity" in err and len(err.strip().splitlines()) == 1


SELECTION_CASES = [(command, flag) for command in ("predict", "plot scalability")
                   for flag in (["--lossy"], ["--simulate"], ["--link", "fifo"],
                                ["--cpu-capacity", "2"])] + [("predict", ["--trace", "zoo:resnet50"])]


@pytest.mark.parametrize(("command", "flag"), SELECTION_CASES)
def test_selection_flags_need_measurements(capsys, tmp_path, command, flag):
    """A flag that shapes the model chosen on measured runs, given without runs, is an error
    naming it (it used to do nothing)."""
    from perfmodel.cli import main

    out = ["-o", str(tmp_path / "s.png")] if command.startswith("plot") else []
    code = main([*command.split(), "--workers", "1-4", *flag, *out])
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1
    assert f"{flag[0]}: acts only with --measurements" in err
