"""Packet-level PS job engine: closed forms where they are exact.

The ns-3 runs are skipped, with the reason, when the optional ``ns3`` package
is absent.  Job: resnet50-pipedream's numbers (M = 102.2 MB, T_F = 0.182 s,
T_B = 0.261 s) with T_S = 20 ms, scale 1000, few steps (each run < 1 s).
"""

import csv
import importlib.resources
import io
import math

import pytest

from perfmodel.coarse import sync_step_time
from perfmodel.errors import SpecError
from perfmodel.placement import ns3_job
from perfmodel.placement.ns3_job import LINK_EFFICIENCY as EFF
from perfmodel.placement.ns3_job import simulate_ps_job_ns3
from perfmodel.queueing import async_solve

needs_ns3 = pytest.mark.skipif(not ns3_job.available(),
                               reason="ns-3 not installed: pip install 'perfmodel[ns3]' "
                                      "(the 'ns3' package from PyPI)")

M, TF, TB, TS = 102228128.0, 0.182488, 0.260931, 0.02
G10 = 10e9 / 8


@needs_ns3
@pytest.mark.parametrize("workers", [4, 12])
def test_sync_fair_lossless_matches_eq7_with_header_efficiency(workers):
    # fair queues, constant compute: all pulls end together at K M / B', all pushes
    # take K M / B' again: eq. 7 with B' = B * 1448/1502
    r = simulate_ps_job_ns3(M, G10, TF, TB, TS, workers, queue="fair", steps=5, warmup=1,
                            batches=1)
    expected = sync_step_time(M, G10, TF, TB, TS, workers, sharing="ps",
                              link_efficiency=EFF)
    # K = 4 by hand: 8 * 0.081783 / 0.96405 + 0.443419 + 0.02 = 1.1421 s
    assert expected == pytest.approx(2 * workers * M / G10 / (1448 / 1502) + TF + TB + TS,
                                     rel=1e-12)
    assert r.mean_step_time == pytest.approx(expected, rel=0.03)
    assert r.step_rate == pytest.approx(workers / r.mean_step_time, rel=1e-9)


@needs_ns3
def test_async_single_worker_cycle_is_pull_compute_push_update():
    r = simulate_ps_job_ns3(M, G10, TF, TB, TS, 1, mode="async", steps=5, warmup=1,
                            batches=1, batch_size=128)
    cycle = 2 * M / (G10 * 1448 / 1502) + TF + TB + TS          # 0.6331 s
    assert r.step_rate == pytest.approx(1 / cycle, rel=0.03)
    assert r.throughput == pytest.approx(128 * r.step_rate, rel=1e-12)


@needs_ns3
def test_overlap_single_worker_pays_one_block_each_way():
    # 4 blocks: block 0 must arrive before forward starts and the last gradient block
    # leaves after backward ends; a block's transfer (21 ms) hides under a block's compute
    r = simulate_ps_job_ns3(M, G10, TF, TB, TS, 1, overlap=True, chunks=4, steps=5,
                            warmup=1, batches=1)
    pipeline = 2 * M / (4 * G10 * 1448 / 1502) + TF + TB + TS  # 0.5058 s
    assert r.mean_step_time == pytest.approx(pipeline, rel=0.03)
    eq10 = sync_step_time(M, G10, TF, TB, TS, 1, sharing="ps", overlap=True,
                          link_efficiency=EFF)
    assert eq10 < r.mean_step_time                              # eq. 10: infinitely many blocks


@needs_ns3
def test_async_lock_step_on_fair_link_falls_below_mva():
    # constant compute + fair sharing: the workers pull, compute and push together,
    # so the MVA's averages overpredict; a spread breaks the lock-step
    kw = dict(mode="async", queue="fair", steps=10, warmup=2, batches=1)
    lock = simulate_ps_job_ns3(M, 1.25e8, TF, TB, TS, 4, compute_cv=0.0, **kw)
    mva = async_solve(M, 1.25e8 * EFF, TF, TB, TS, 4, discipline="ps").throughput
    assert lock.step_rate < 0.8 * mva


@needs_ns3
def test_loss_slows_a_short_transfer():
    kw = dict(steps=10, warmup=1, batches=1, seed=3)
    clean = simulate_ps_job_ns3(M, G10, TF, TB, TS, 1, **kw)
    lossy = simulate_ps_job_ns3(M, G10, TF, TB, TS, 1, loss_rate=0.01, **kw)
    assert lossy.throughput < 0.95 * clean.throughput


@pytest.mark.parametrize("field, kwargs", [
    ("mode", dict(mode="hogwild")), ("queue", dict(queue="red")),
    ("loss_rate", dict(loss_rate=1.0)), ("update", dict(update="never")),
    ("overlap", dict(overlap=1)), ("steps", dict(steps=2, batches=5)),
    ("compute_cv", dict(compute_cv=-0.1)), ("scale", dict(scale=1e9)),
])
def test_bad_options_name_the_field(field, kwargs):
    with pytest.raises(SpecError) as err:
        simulate_ps_job_ns3(M, G10, TF, TB, TS, 2, **kwargs)
    assert err.value.field == field


def test_bad_job_numbers_name_the_field():
    with pytest.raises(SpecError) as err:
        simulate_ps_job_ns3(M, G10, TF, TB, TS, 0)
    assert err.value.field == "workers"
    with pytest.raises(SpecError) as err:
        simulate_ps_job_ns3(M, "1 Gbit/s", TF, -1.0, TS, 2)
    assert err.value.field == "t_backward"


def test_cli_rejects_bad_workers_with_exit_2(tmp_path, capsys):
    assert ns3_job.main(["--out", str(tmp_path / "m.csv"), "--workers", "1,x"]) == 2
    assert "--workers" in capsys.readouterr().err


def test_cli_rejects_bad_seeds_with_exit_2(tmp_path, capsys):
    assert ns3_job.main(["--out", str(tmp_path / "m.csv"), "--seeds", "0,a"]) == 2
    assert "--seeds" in capsys.readouterr().err


def test_noisier_regimes_run_more_seeds():
    regimes = {r["regime"]: r for r in ns3_job.matrix_regimes()}
    sync = regimes["sync-fair-lossfree-10G-seq-per_step-cv0.1"]
    lossy = regimes["sync-fair-lossy-10G-seq-per_step-cv0.1"]
    async_ = regimes["async-fair-lossfree-10G-seq-per_gradient-cv0.1"]
    assert ns3_job._regime_seeds(sync, range(9)) == (0,)
    assert ns3_job._regime_seeds(lossy, range(9)) == tuple(range(9))
    assert ns3_job._regime_seeds(async_, range(9)) == (0, 1, 2)
    assert ns3_job._regime_seeds(async_, (5, 6)) == (5, 6)


def _matrix():
    text = (importlib.resources.files("perfmodel.zoo") / "validation" / "ns3_matrix.csv"
            ).read_text()
    comments = [line for line in text.splitlines() if line.startswith("#")]
    body = "\n".join(line for line in text.splitlines() if not line.startswith("#"))
    return comments, list(csv.DictReader(io.StringIO(body)))


def test_shipped_matrix_has_every_regime_and_worker_count():
    comments, rows = _matrix()
    assert any("regenerate: python -m perfmodel.placement.ns3_job" in c for c in comments)
    assert tuple(rows[0]) == ns3_job.MATRIX_COLUMNS
    cells = {(r["regime"], int(r["workers"])) for r in rows}
    names = [g["regime"] for g in ns3_job.matrix_regimes()]
    assert len(set(names)) == len(names)
    assert cells == {(n, k) for n in names for k in ns3_job.MATRIX_WORKERS}
    # every seed once per configuration: the first everywhere, all of them where noisy
    seeds = {}
    for r in rows:
        seeds.setdefault((r["regime"], int(r["workers"])), []).append(int(r["seed"]))
    for g in ns3_job.matrix_regimes():
        want = ns3_job._regime_seeds(g, ns3_job.MATRIX_SEEDS)
        for k in ns3_job.MATRIX_WORKERS:
            assert tuple(seeds[(g["regime"], k)]) == want, (g["regime"], k)


def test_shipped_matrix_respects_compute_and_nic_bounds():
    # a worker cannot beat its own compute; the PS NIC carries one model per gradient
    _, rows = _matrix()
    for r in rows:
        k, b, bw = int(r["workers"]), int(r["batch_size"]), float(r["bandwidth"])
        x = float(r["throughput"])
        assert 0 < x <= 1.15 * k * b / (TF + TB), r   # 1.15: sampled compute means
        assert x <= 1.02 * b * bw * EFF / M, r
        assert math.isfinite(float(r["throughput_std"])) and float(r["throughput_std"]) >= 0


# --------------------------------------------------------------------------
# Several servers, TCP variants, buffers, jitter and per-layer blocks
# --------------------------------------------------------------------------

def _matrix_row(regime: str, workers: int, seed: int) -> dict:
    text = importlib.resources.files("perfmodel").joinpath(
        "zoo/validation/ns3_matrix.csv").read_text()
    lines = [ln for ln in text.splitlines() if not ln.startswith("#")]
    return next(r for r in csv.DictReader(lines) if r["regime"] == regime
                and int(r["workers"]) == workers and int(r["seed"]) == seed)


@needs_ns3
@pytest.mark.parametrize("regime, workers", [
    ("sync-fifo-lossfree-1G-seq-per_step-cv0.1", 3),
    ("async-fair-lossfree-10G-overlap-per_gradient-cv0.1", 2)])
def test_engine_still_reproduces_the_committed_matrix(regime, workers):
    # one server and NewReno: the extended engine runs the same events as the one that
    # made the committed rows
    row = _matrix_row(regime, workers, 0)
    steps = ns3_job.MATRIX_ASYNC_STEPS if row["mode"] == "async" else ns3_job.MATRIX_STEPS
    r = simulate_ps_job_ns3(
        M, float(row["bandwidth"]), TF, TB, TS, workers, mode=row["mode"],
        overlap=row["overlap"] == "1", queue=row["queue"], update=row["update"],
        compute_cv=float(row["compute_cv"]), batch_size=128, scale=ns3_job.MATRIX_SCALE,
        steps=steps, warmup=ns3_job.MATRIX_WARMUP, batches=ns3_job.MATRIX_BATCHES, seed=0)
    assert round(r.throughput, 6) == float(row["throughput"])


@needs_ns3
@pytest.mark.parametrize("servers", [2, 4])
def test_servers_split_the_model_and_the_update(servers):
    # fair queues, constant compute, 8 workers: each server link carries K M / P bytes a
    # way, each server updates its 1/P share: eq. 7 with P servers
    r = simulate_ps_job_ns3(M, G10, TF, TB, TS, 8, queue="fair", steps=4, warmup=1,
                            batches=1, n_ps=servers)
    expected = sync_step_time(M, G10, TF, TB, TS, 8, sharing="ps", n_ps=servers,
                              link_efficiency=EFF)
    assert r.mean_step_time == pytest.approx(expected, rel=0.05)
    assert r.meta["n_ps"] == servers and r.meta["queue_drops"] == 0


@needs_ns3
def test_async_worker_waits_for_every_server():
    one = simulate_ps_job_ns3(M, G10, TF, TB, TS, 1, mode="async", steps=4, warmup=1,
                              batches=1)
    four = simulate_ps_job_ns3(M, G10, TF, TB, TS, 1, mode="async", steps=4, warmup=1,
                               batches=1, n_ps=4)
    # one worker's NIC still carries M each way; only the update is split
    assert four.mean_step_time == pytest.approx(one.mean_step_time - 0.75 * TS, rel=0.03)


@needs_ns3
def test_tcp_variants_and_dctcp_marks_instead_of_dropping():
    runs = {tcp: simulate_ps_job_ns3(M, G10, TF, TB, TS, 8, queue="fifo", steps=3, warmup=1,
                                     batches=1, tcp=tcp) for tcp in ns3_job.TCP_VARIANTS}
    assert runs["dctcp"].meta["ecn_marks"] > 0
    assert runs["newreno"].meta["ecn_marks"] == runs["cubic"].meta["ecn_marks"] == 0
    # a loss-free FIFO port: every variant moves the bytes between FCFS (eq. 8: pulls end
    # one by one, so computing starts early) and equal sharing (eq. 7)
    low = sync_step_time(M, G10, TF, TB, TS, 8, sharing="fcfs", link_efficiency=EFF)
    high = sync_step_time(M, G10, TF, TB, TS, 8, sharing="ps", link_efficiency=EFF)
    for r in runs.values():
        assert 0.95 * low <= r.mean_step_time <= 1.05 * high


@needs_ns3
def test_a_dctcp_run_depends_on_its_seed_not_on_the_runs_before_it():
    # RED marks at random between K and 2K packets (gentle mode); its stream must not
    # count on from earlier runs in the same process
    def run(k):
        return simulate_ps_job_ns3(M, G10, TF, TB, TS, k, queue="fifo", steps=3, warmup=1,
                                   batches=1, tcp="dctcp", n_ps=2).step_times
    first = run(4)
    run(2)
    assert list(run(4)) == list(first)


@needs_ns3
def test_dctcp_waits_out_the_delayed_ack_timer_and_newreno_does_not():
    # 8 workers on 3 servers, FIFO hosts, 25 Gbps at 200 times fewer bytes: DCTCP's
    # small windows leave lone segments whose ACK waits for the timer
    def step(tcp, timeout):
        return simulate_ps_job_ns3(M, 25e9 / 8, TF / 4, TB / 4, TS, 8, queue="fifo", steps=3,
                                   warmup=1, batches=1, tcp=tcp, n_ps=3, scale=200,
                                   delayed_ack_timeout=timeout).mean_step_time
    assert step("dctcp", ns3_job.DELAYED_ACK_TIMEOUT) > 1.3 * step("dctcp", 0.04)
    assert step("newreno", ns3_job.DELAYED_ACK_TIMEOUT) == pytest.approx(
        step("newreno", 0.04), rel=0.02)
    with pytest.raises(SpecError, match="delayed_ack_timeout"):
        simulate_ps_job_ns3(M, G10, TF, TB, TS, 1, delayed_ack_timeout=0)


@needs_ns3
def test_shallow_buffer_drops_at_incast_and_deep_does_not():
    deep = simulate_ps_job_ns3(M, G10, TF, TB, TS, 12, queue="fifo", steps=3, warmup=1,
                               batches=1, buffer=10000)
    shallow = simulate_ps_job_ns3(M, G10, TF, TB, TS, 12, queue="fifo", steps=3, warmup=1,
                                  batches=1, buffer=20)
    assert deep.meta["queue_drops"] == 0 < shallow.meta["queue_drops"]
    assert shallow.mean_step_time > deep.mean_step_time


def test_pareto_factors_have_mean_one_the_asked_spread_and_a_heavier_tail():
    from perfmodel.placement.ns3_job import _compute_factors
    a = ns3_job.PARETO_SHAPE
    s = 0.3 * math.sqrt(a * (a - 2))           # cv / CV(X): X Pareto of mean 1
    x_m = (a - 1) / a
    heavy = _compute_factors(0.3, 1, 400_000, 7, "pareto").ravel()
    light = _compute_factors(0.3, 1, 400_000, 7, "lognormal").ravel()
    assert heavy.mean() == pytest.approx(1.0, abs=0.005)
    assert heavy.min() >= 1 + s * (x_m - 1) - 1e-12
    for x in (1.5, 3.0):   # the tail of 1 + s (X - 1): P(X > x) = (x_m / x)^a
        assert (heavy > 1 + s * (x - 1)).mean() == pytest.approx((x_m / x) ** a, rel=0.05)
    assert (heavy > 3).mean() > (light > 3).mean()
    assert (_compute_factors(0.3, 2, 5, 7, "none") == 1).all()


def test_block_bytes_cover_the_model():
    assert ns3_job.block_bytes(1000.4, [0.25, 0.25, 0.5]) == [250, 250, 500]
    assert sum(ns3_job.block_bytes(1e6 + 0.7, [0.1] * 10)) == 1_000_000


@pytest.mark.parametrize("field, kwargs", [
    ("tcp", dict(tcp="reno2")), ("n_ps", dict(n_ps=0)), ("buffer", dict(buffer=1)),
    ("ce_threshold", dict(ce_threshold=0.0)), ("ce_threshold", dict(ce_threshold=-1e-3)),
    ("jitter", dict(jitter="uniform")), ("blocks", dict(blocks=[(0.5, 0.5, 0.5)])),
    ("blocks", dict(blocks=[(1.0, 1.0)]))])
def test_bad_new_options_name_the_field(field, kwargs):
    with pytest.raises(SpecError) as err:
        simulate_ps_job_ns3(M, G10, TF, TB, TS, 2, **kwargs)
    assert err.value.field == field
