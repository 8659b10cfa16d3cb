"""Tests of perfmodel.fit.microbench (Yan et al. 2015, Sec. 4.1-4.2 micro-benchmarks).

The timing runs once per module in quick mode.  Timing assertions are loose
on purpose: they check physics that a broken benchmark would violate (out of
cache is not faster than in cache, a multiply-add takes between a picosecond
and a microsecond), not figures of this machine.
"""

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

from perfmodel.errors import SpecError
from perfmodel.fit import microbench as cal_mod
from perfmodel.fit.microbench import (
    ACTIVATIONS,
    BLAS_THREAD_VARIABLES,
    BenchmarkPlan,
    CacheInfo,
    HardwareCalibration,
    activate,
    calibrate,
    calibrated_cluster,
    canonical_forward,
    detect_cache,
    error_term,
    make_plan,
    parse_cache_size,
    weights,
)
from perfmodel.specs import Cluster

CORES = os.cpu_count() or 1
THREADS = min(2, CORES)
CONSTANTS = ("c_muladd", "c_muladd_mem", "c_act", "c_err")


@pytest.fixture(scope="module")
def env_before():
    return {k: os.environ.get(k) for k in BLAS_THREAD_VARIABLES}


@pytest.fixture(scope="module")
def cal(env_before) -> HardwareCalibration:
    return calibrate(quick=True, max_threads=THREADS, seed=0)


@pytest.fixture
def base() -> Cluster:
    return Cluster(machines=4, nic_bandwidth="10Gbps", name="test", source="hand-written")


# ---------------------------------------------------------------- the constants

def test_constants_finite_and_positive(cal):
    for name in CONSTANTS:
        value = getattr(cal, name)
        assert math.isfinite(value) and value > 0, name
    assert cal.cache_bytes > 0 and cal.cache_source
    assert cal.cores == CORES
    assert cal.seconds > 0


def test_interference_table(cal):
    for table in (cal.interference, cal.interference_cache):
        assert isinstance(table, tuple)
        assert len(table) == THREADS
        assert table[0] == 1.0
        assert all(math.isfinite(x) and x > 0 for x in table)


def test_c_muladd_is_physical(cal):
    assert 1e-12 <= cal.c_muladd <= 1e-6
    assert 1e-12 <= cal.c_muladd_mem <= 1e-5
    # Weights streamed from memory are not faster than weights in cache (20% noise allowed).
    assert cal.c_muladd_mem >= 0.8 * cal.c_muladd


def test_elementwise_costs_are_physical(cal):
    for name in ("c_act", "c_err"):
        assert 1e-13 <= getattr(cal, name) <= 1e-5, name


def test_eq5_composition_is_close(cal):
    # The whole Fig. 5 code against C_muladd W + C_act N: a broken split would be far off.
    assert 0.3 < cal.eq5_ratio < 3
    assert 0.3 < cal.eq5_ratio_mem < 3


def test_spreads_reported_and_non_negative(cal):
    names = set(CONSTANTS) | {"forward_cache", "forward_mem"}
    names |= {f"interference_{m}[{h}]" for m in ("cache", "mem") for h in range(2, THREADS + 1)}
    assert names <= set(cal.spreads)
    for name, spread in cal.spreads.items():
        assert spread.name == name
        assert 0 < spread.minimum <= spread.median <= spread.maximum, name
        assert spread.iqr_rel >= 0 and spread.std_rel >= 0, name
        assert spread.n >= cal.plan.repeats
    for name in CONSTANTS:
        assert cal.spreads[name].median == getattr(cal, name)
        assert cal.spreads[name].n == cal.plan.repeats


# ---------------------------------------------------------------- Cluster wiring

def test_to_cluster_fields(cal):
    fields = cal.to_cluster_fields()
    assert set(fields) == {"c_muladd", "c_muladd_mem", "c_act", "c_err", "cache_bytes",
                           "interference", "cores"}
    assert isinstance(fields["interference"], tuple) and fields["interference"][0] == 1.0


def test_calibrated_cluster_fields_equal_calibration(cal, base):
    cluster = calibrated_cluster(base, cal)
    assert isinstance(cluster, Cluster)
    for name, value in cal.to_cluster_fields().items():
        assert getattr(cluster, name) == value, name
    assert cluster.nic_bandwidth == base.nic_bandwidth and cluster.machines == base.machines
    assert cluster.source.startswith("hand-written; ")


def test_cluster_fields_round_trip_through_from_dict(cal, base):
    data = dict(base.to_dict(), **cal.to_cluster_fields())
    data = json.loads(json.dumps(data))  # as a file would hold it
    cluster = Cluster.from_dict(data)
    assert cluster == base.replace(**cal.to_cluster_fields())
    assert Cluster.from_dict(cluster.to_dict()) == cluster


def test_to_dict_is_json_ready(cal):
    data = json.loads(json.dumps(cal.to_dict()))
    assert data["interference"][0] == 1.0
    assert data["spreads"]["c_muladd"]["median"] == cal.c_muladd
    assert "C_muladd" in cal.summary()


# ---------------------------------------------------------------- how it ran

def test_workers_ran_with_one_blas_thread(cal):
    workers = cal.machine["workers"]
    assert len(workers) == THREADS
    assert len({w["pid"] for w in workers}) == THREADS
    for w in workers:
        assert all(v == "1" for v in w["blas_env"].values())


def test_parent_environment_restored_and_no_shared_memory_left(cal, env_before):
    assert {k: os.environ.get(k) for k in BLAS_THREAD_VARIABLES} == env_before
    shm = Path("/dev/shm")
    if shm.is_dir():
        assert not [p for p in shm.iterdir() if p.name.startswith(cal_mod._SHM_PREFIX)]


def test_one_thread_and_given_cache():
    small = calibrate(quick=True, max_threads=1, repeats=3, cache_bytes=4 * 2**20)
    assert small.interference == (1.0,) and small.interference_cache == (1.0,)
    assert small.cache_bytes == 4 * 2**20 and small.cache_source == "argument"
    assert small.plan.repeats == 3


# ---------------------------------------------------------------- determinism

def test_same_seed_same_plan(cal):
    again = make_plan(cal.cache_bytes, quick=True, threads=THREADS, seed=0)
    assert again == cal.plan
    assert make_plan(cal.cache_bytes, quick=True, threads=THREADS, seed=0) == again


def test_plan_sizes_follow_the_cache():
    plan = make_plan(32 * 2**20, seed=3)
    assert plan.cache_shape == (1024, 1024)
    assert plan.cache_working_set <= 32 * 2**20 / 8 + 8192
    assert plan.mem_working_set >= 4 * 32 * 2**20 * 0.99
    quick = make_plan(32 * 2**20, quick=True)
    assert quick.repeats < plan.repeats and quick.mem_working_set < plan.mem_working_set
    assert make_plan(2**40).mem_working_set <= 512 * 2**20  # capped for huge caches
    assert make_plan(64 * 2**10).mem_working_set >= 0.99 * 64 * 2**20  # floor for tiny ones


def test_same_seed_same_matrices():
    a, b = weights((64, 48), seed=7), weights((64, 48), seed=7)
    assert a.dtype == np.float32 and a.shape == (64, 48)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, weights((64, 48), seed=8))
    assert not np.array_equal(a, weights((64, 48), seed=7, stream=1))
    assert -0.5 <= a.min() and a.max() < 0.5


# ---------------------------------------------------------------- bad arguments

@pytest.mark.parametrize("kwargs, field", [
    ({"max_threads": 0}, "max_threads"),
    ({"max_threads": CORES + 1}, "max_threads"),
    ({"max_threads": 1.5}, "max_threads"),
    ({"max_threads": True}, "max_threads"),
    ({"repeats": 2}, "repeats"),
    ({"seed": -1}, "seed"),
    ({"seed": "zero"}, "seed"),
    ({"activation": "swish"}, "activation"),
    ({"quick": "yes"}, "quick"),
    ({"pin": 1}, "pin"),
    ({"cache_bytes": 0}, "cache_bytes"),
    ({"cache_bytes": "32MB"}, "cache_bytes"),
    ({"cache_bytes": float("nan")}, "cache_bytes"),
])
def test_bad_arguments_raise_spec_error_naming_them(kwargs, field):
    with pytest.raises(SpecError) as err:
        calibrate(**kwargs)
    assert err.value.field == field
    assert field in str(err.value)


def test_calibrated_cluster_rejects_wrong_types(cal, base):
    with pytest.raises(SpecError, match="base"):
        calibrated_cluster(None, cal)
    with pytest.raises(SpecError, match="calibration"):
        calibrated_cluster(base, cal.to_cluster_fields())


# ---------------------------------------------------------------- the canonical code

@pytest.mark.parametrize("kind", ACTIVATIONS)
def test_kernels_compute_what_they_time(kind):
    rng = np.random.default_rng(0)
    y = (rng.random(257, dtype=np.float32) - 0.5) * 8
    e = rng.random(257, dtype=np.float32) - 0.5
    f = {"sigmoid": lambda v: 1 / (1 + np.exp(-v)), "tanh": np.tanh,
         "relu": lambda v: np.maximum(v, 0)}[kind]
    df = {"sigmoid": lambda v: f(v) * (1 - f(v)), "tanh": lambda v: 1 - np.tanh(v) ** 2,
          "relu": lambda v: (v > 0).astype(np.float32)}[kind]
    a = activate(y, np.empty_like(y), kind)
    np.testing.assert_allclose(a, f(y.astype(float)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(error_term(a, e, np.empty_like(y), kind),
                               df(y.astype(float)) * e, rtol=1e-4, atol=1e-6)
    w, x = weights((33, 257), seed=1), e
    out = canonical_forward(w, x, np.empty(33, dtype=np.float32), kind)
    np.testing.assert_allclose(out, f(w.astype(float) @ x.astype(float)), rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- cache detection

@pytest.mark.parametrize("text, expected", [
    ("32768K", 32 * 2**20), ("1M\n", 2**20), ("512", 512), ("2G", 2 * 2**30), ("48KB", 48 * 1024),
])
def test_parse_cache_size(text, expected):
    assert parse_cache_size(text) == expected


@pytest.mark.parametrize("text", ["", "K", "big", "1.5M"])
def test_parse_cache_size_rejects(text):
    with pytest.raises(ValueError):
        parse_cache_size(text)


def test_sysfs_reader_picks_the_largest_data_level(tmp_path):
    levels = [("1", "Data", "48K"), ("1", "Instruction", "32K"), ("2", "Unified", "1024K"),
              ("3", "Unified", "32768K")]
    for i, (level, kind, size) in enumerate(levels):
        index = tmp_path / f"index{i}"
        index.mkdir()
        for name, value in (("level", level), ("type", kind), ("size", size)):
            (index / name).write_text(value + "\n")
    (tmp_path / "index9").mkdir()  # unreadable entries are skipped
    found = cal_mod._cache_from_sysfs(tmp_path)
    assert found.bytes == 32 * 2**20 and found.level == 3
    assert "index3" in found.source and found.source.startswith("sysfs")
    assert cal_mod._cache_from_sysfs(tmp_path / "missing") is None


def test_detect_cache_reports_its_source():
    found = detect_cache()
    assert isinstance(found, CacheInfo)
    assert found.bytes >= 4096
    assert found.source.split()[0] in ("sysfs", "sysconf", "lscpu", "sysctl", "default")


def test_plan_is_frozen():
    plan = make_plan(2**20)
    assert isinstance(plan, BenchmarkPlan)
    with pytest.raises(AttributeError):
        plan.repeats = 1
