"""Tests of perfmodel.coarse (Li et al. 2022, eqs. 7-11 and extensions).

Running example, worked by hand:
    M = 100 MB = 1e8 B, B = 10 Gbps = 1.25e9 B/s  ->  M/B = 0.08 s
    K = 4 workers, T_F = 0.1 s, T_B = 0.2 s, T_S = 0.01 s
"""

import dataclasses
import functools
import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfmodel import coarse
from perfmodel.coarse import (
    AllReduceCoarse,
    SyncCoarse,
    allreduce_phases,
    allreduce_step_time,
    hierarchical_step_time,
    sync_phases,
    sync_step_time,
)
from perfmodel.errors import Infeasible, SpecError
from perfmodel.result import Estimate
from perfmodel.specs import Cluster, Config, Profile

M, B, K, TF, TB, TS = 100e6, 1.25e9, 4, 0.1, 0.2, 0.01
GBPS = 1e9 / 8


# ---------------------------------------------------------------- hand values

def test_eq7_ps():
    # K M/B + T_F + T_B + K M/B + T_S = 0.32 + 0.1 + 0.2 + 0.32 + 0.01 = 0.95 s
    assert sync_step_time(M, B, TF, TB, TS, K, sharing="ps") == pytest.approx(0.95)


def test_eq8_fcfs():
    # K M/B + T_F + T_B + M/B + T_S = 0.32 + 0.3 + 0.08 + 0.01 = 0.71 s
    assert sync_step_time(M, B, TF, TB, TS, K, sharing="fcfs") == pytest.approx(0.71)


def test_eq9_hybrid_is_default():
    # K M/B + T_F + T_B + (K+1) M/(2B) + T_S = 0.32 + 0.3 + 5*0.08/2 + 0.01 = 0.83 s
    assert sync_step_time(M, B, TF, TB, TS, K) == pytest.approx(0.83)
    assert sync_step_time(M, B, TF, TB, TS, K, "hybrid") == pytest.approx(0.83)


def test_eq10_overlap():
    # max(K M/B, T_F) + max((K+1) M/(2B), T_B) + T_S = max(0.32, 0.1) + max(0.2, 0.2) + 0.01
    assert sync_step_time(M, B, TF, TB, TS, K, overlap=True) == pytest.approx(0.53)
    # ps: max(0.32, 0.1) + max(0.32, 0.2) + 0.01 = 0.65 s
    assert sync_step_time(M, B, TF, TB, TS, K, "ps", True) == pytest.approx(0.65)
    # fcfs: max(0.32, 0.1) + max(0.08, 0.2) + 0.01 = 0.53 s
    assert sync_step_time(M, B, TF, TB, TS, K, "fcfs", True) == pytest.approx(0.53)
    # K = 1: max(0.08, 0.1) + max(0.08, 0.2) + 0.01 = 0.31 s (communication hidden)
    assert sync_step_time(M, B, TF, TB, TS, 1, overlap=True) == pytest.approx(0.31)


def test_eq11_ring():
    # (T_F + T_B) + 2 (K-1) M/(K B) = 0.3 + 2*3/4*0.08 = 0.42 s
    assert allreduce_step_time(M, B, TF, TB, K) == pytest.approx(0.42)
    # K = 1 communicates nothing: 0.3 s
    assert allreduce_step_time(M, B, TF, TB, 1) == pytest.approx(0.3)
    # tree: 0.3 + 2 ceil(log2 4) * 0.08 = 0.62 s
    assert allreduce_step_time(M, B, TF, TB, K, algorithm="tree") == pytest.approx(0.62)
    # overlap (our extension): 0.1 + max(0.2, 0.12) = 0.3 s
    assert allreduce_step_time(M, B, TF, TB, K, overlap=True) == pytest.approx(0.3)


def test_eq11_tends_to_two_transfers():
    # T -> T_F + T_B + 2 M/B = 0.3 + 0.16 = 0.46 s, from below
    ks = np.array([1, 10, 100, 10**4, 10**6])
    t = allreduce_step_time(M, B, TF, TB, ks)
    assert np.all(np.diff(t) > 0) and np.all(t < 0.46)
    assert t[-1] == pytest.approx(0.46, rel=1e-6)


def test_phases_by_hand():
    # eq. 9: downlink 0.32, forward 0.1, backward 0.2, uplink 0.2, update 0.01
    ph = sync_phases(M, B, TF, TB, TS, K)
    assert list(ph) == list(coarse.SYNC_PHASES)
    assert ph == pytest.approx({"downlink": 0.32, "forward": 0.1, "backward": 0.2,
                                "uplink": 0.2, "update": 0.01})
    # overlap, T_B = 0.25: downlink 0.32 > T_F = 0.1 exposed, uplink 0.2 < 0.25 hidden
    ph = sync_phases(M, B, TF, 0.25, TS, K, overlap=True)
    assert ph == pytest.approx({"downlink": 0.32, "forward": 0.0, "backward": 0.25,
                                "uplink": 0.0, "update": 0.01})
    assert allreduce_phases(M, B, TF, TB, K) == pytest.approx(
        {"forward": 0.1, "backward": 0.2, "allreduce": 0.12})


def test_several_servers_by_hand():
    # n_ps = 2, eq. 7: downlink = uplink = max(4*0.08/2, 0.08) = 0.16 s; update 0.01/2
    # 0.16 + 0.3 + 0.16 + 0.005 = 0.625 s
    assert sync_step_time(M, B, TF, TB, TS, K, "ps", n_ps=2) == pytest.approx(0.625)


def test_per_flow_cap_by_hand():
    # B = 25 Gbps, cap = 10 Gbps (Li et al. 2022, Sec. 4.4), eq. 7:
    # K = 1, 2: pulls and pushes at 10 Gbps -> 0.08 s each: 0.08 + 0.3 + 0.08 + 0.01 = 0.47 s
    # K = 3: 3 * 0.032 = 0.096 s each: 0.096 + 0.3 + 0.096 + 0.01 = 0.502 s
    t = sync_step_time(M, 25 * GBPS, TF, TB, TS, np.array([1, 2, 3]), "ps",
                       per_flow_cap=10 * GBPS)
    np.testing.assert_allclose(t, [0.47, 0.47, 0.502])


def test_link_efficiency_and_weight_by_hand():
    # efficiency 0.8: B_eff = 1e9 B/s, M/B = 0.1 s; eq. 9: 0.4 + 0.3 + 0.25 + 0.01 = 0.96 s
    assert sync_step_time(M, B, TF, TB, TS, K, link_efficiency=0.8) == pytest.approx(0.96)
    # weight 0.25: uplink 0.25*0.32 + 0.75*0.08 = 0.14 s: 0.32 + 0.3 + 0.14 + 0.01 = 0.77 s
    assert sync_step_time(M, B, TF, TB, TS, K, sharing_weight=0.25) == pytest.approx(0.77)


def test_hierarchical_by_hand():
    # K = 2 machines of G = 8 GPUs, intra 100 GB/s (M/b = 1 ms):
    # all-reduce: 0.3 + 1.75 ms (intra ring) + 0.08 (ring of 2) + 1 ms (broadcast) = 0.38275 s
    t = hierarchical_step_time(M, B, TF, TB, TS, 2, 8, 100e9, architecture="allreduce")
    assert t == pytest.approx(0.38275)
    # PS, eq. 9 with K = 2: 0.16 + 0.001 + 0.3 + 0.00175 + 3*0.08/2 + 0.01 = 0.59275 s
    t = hierarchical_step_time(M, B, TF, TB, TS, 2, 8, 100e9)
    assert t == pytest.approx(0.59275)
    ph = sync_phases(M, B, TF, TB, TS, 2, gpus_per_machine=8, intra_bandwidth=100e9)
    assert list(ph) == ["downlink", "intra_broadcast", "forward", "backward", "intra_reduce",
                        "uplink", "update"]
    assert sum(ph.values()) == pytest.approx(0.59275)


def test_one_gpu_hierarchy_equals_flat():
    for arch in coarse.ARCHITECTURES:
        flat = (sync_step_time(M, B, TF, TB, TS, K) if arch == "ps"
                else allreduce_step_time(M, B, TF, TB, K))
        assert hierarchical_step_time(M, B, TF, TB, TS, K, 1, 1e11,
                                      architecture=arch) == pytest.approx(flat)


# ---------------------------------------------------------------- relations between equations

times = st.floats(0.0, 5.0)
sizes = st.floats(1e3, 1e10)
rates = st.floats(1e6, 1e11)
counts = st.integers(1, 256)
caps = st.one_of(st.none(), st.floats(1e6, 1e11))


@given(sizes, rates, times, times, times, counts)
def test_eq9_is_mean_of_eq7_and_eq8(m, b, tf, tb, ts, k):
    mean = (sync_step_time(m, b, tf, tb, ts, k, "ps") + sync_step_time(m, b, tf, tb, ts, k,
                                                                       "fcfs")) / 2
    assert sync_step_time(m, b, tf, tb, ts, k, "hybrid") == pytest.approx(mean, rel=1e-12)


@given(sizes, rates, times, times, times, st.booleans())
def test_one_worker_all_sharings_agree(m, b, tf, tb, ts, overlap):
    t = [sync_step_time(m, b, tf, tb, ts, 1, s, overlap) for s in coarse.SHARINGS]
    assert t == pytest.approx([t[0]] * 3, rel=1e-12)


@given(sizes, rates, times, times, times, counts, st.integers(1, 32))
def test_weight_extremes_are_ps_and_fcfs(m, b, tf, tb, ts, k, p):
    for w, sharing in ((1.0, "ps"), (0.0, "fcfs")):
        assert sync_step_time(m, b, tf, tb, ts, k, sharing_weight=w, n_ps=p) == pytest.approx(
            sync_step_time(m, b, tf, tb, ts, k, sharing, n_ps=p), rel=1e-12)


@given(sizes, rates, times, times, times, counts, st.sampled_from(coarse.SHARINGS),
       st.booleans())
def test_single_server_and_no_cap_are_the_paper(m, b, tf, tb, ts, k, sharing, overlap):
    t = sync_step_time(m, b, tf, tb, ts, k, sharing, overlap)
    assert sync_step_time(m, b, tf, tb, ts, k, sharing, overlap, n_ps=1) == t
    assert sync_step_time(m, b, tf, tb, ts, k, sharing, overlap, per_flow_cap=None) == t
    assert sync_step_time(m, b, tf, tb, ts, k, sharing, overlap, per_flow_cap=math.inf) == t


@given(sizes, rates, times, times, times, counts, st.integers(1, 16), caps,
       st.floats(0.05, 1.0), st.sampled_from(coarse.SHARINGS), st.booleans())
def test_cap_none_equals_inf_with_options(m, b, tf, tb, ts, k, p, cap, eff, sharing, overlap):
    base = dict(n_ps=p, link_efficiency=eff)
    assert sync_step_time(m, b, tf, tb, ts, k, sharing, overlap, per_flow_cap=None, **base) == \
        sync_step_time(m, b, tf, tb, ts, k, sharing, overlap, per_flow_cap=math.inf, **base)


@given(sizes, rates, times, times, times, counts, st.floats(0.05, 1.0))
def test_link_efficiency_scales_bandwidth(m, b, tf, tb, ts, k, eff):
    assert sync_step_time(m, b, tf, tb, ts, k, link_efficiency=eff) == pytest.approx(
        sync_step_time(m, b * eff, tf, tb, ts, k), rel=1e-12)
    assert allreduce_step_time(m, b, tf, tb, k, link_efficiency=eff) == pytest.approx(
        allreduce_step_time(m, b * eff, tf, tb, k), rel=1e-12)


@given(sizes, rates, times, times, counts, st.integers(1, 16), caps)
def test_phases_are_the_collectives(m, b, tf, tb, k, p, cap):
    # one formula for each transfer: the step's phases are perfmodel.collectives' times
    from perfmodel import collectives as c
    for sharing in ("ps", "fcfs"):
        ph = sync_phases(m, b, tf, tb, 0.0, k, sharing, n_ps=p, per_flow_cap=cap)
        assert ph["downlink"] == c.ps_pull_time(m, b, k, p, cap, sharing)
        assert ph["uplink"] == c.ps_push_time(m, b, k, p, cap, sharing)
    assert allreduce_phases(m, b, tf, tb, k)["allreduce"] == c.ring_allreduce_time(m, b, k)
    assert allreduce_phases(m, b, tf, tb, k, algorithm="tree")["allreduce"] == \
        c.tree_allreduce_time(m, b, k)


# ---------------------------------------------------------------- properties

sync_options = st.fixed_dictionaries({
    "sharing": st.sampled_from(coarse.SHARINGS), "overlap": st.booleans(),
    "n_ps": st.integers(1, 16), "per_flow_cap": caps, "link_efficiency": st.floats(0.05, 1.0),
    "sharing_weight": st.floats(0.0, 1.0)})


@given(sizes, rates, times, times, times, counts, sync_options)
def test_more_bandwidth_is_never_slower(m, b, tf, tb, ts, k, opts):
    slow = sync_step_time(m, b, tf, tb, ts, k, **opts)
    assert sync_step_time(m, 1.5 * b, tf, tb, ts, k, **opts) <= slow
    assert allreduce_step_time(m, 1.5 * b, tf, tb, k) <= allreduce_step_time(m, b, tf, tb, k)


@given(sizes, rates, times, times, times, counts, sync_options)
def test_step_is_never_shorter_than_compute(m, b, tf, tb, ts, k, opts):
    t = sync_step_time(m, b, tf, tb, ts, k, **opts)
    assert t >= (tf + tb) * (1 - 1e-12)
    assert t >= ts / opts["n_ps"] * (1 - 1e-12)
    for algorithm in coarse.ALGORITHMS:
        for overlap in (False, True):
            assert allreduce_step_time(m, b, tf, tb, k, algorithm=algorithm,
                                       overlap=overlap) >= (tf + tb) * (1 - 1e-12)


@given(sizes, rates, times, times, times, counts, sync_options)
def test_more_workers_never_shorten_a_ps_step(m, b, tf, tb, ts, k, opts):
    t = sync_step_time(m, b, tf, tb, ts, np.array([k, k + 1, 2 * k]), **opts)
    assert np.all(np.diff(t) >= -1e-12 * t[0])


@given(sizes, rates, times, times, times, counts, sync_options,
       st.integers(1, 8), st.floats(1e9, 1e12))
def test_phases_sum_to_step_time(m, b, tf, tb, ts, k, opts, g, intra):
    kw = dict(opts, gpus_per_machine=g, intra_bandwidth=intra)
    phases = sync_phases(m, b, tf, tb, ts, k, **kw)
    assert sum(phases.values()) == pytest.approx(sync_step_time(m, b, tf, tb, ts, k, **kw),
                                                 rel=1e-12)
    assert all(v >= 0 for v in phases.values())
    for overlap in (False, True):
        for algorithm in coarse.ALGORITHMS:
            kw = dict(algorithm=algorithm, overlap=overlap, gpus_per_machine=g,
                      intra_bandwidth=intra)
            ph = allreduce_phases(m, b, tf, tb, k, **kw)
            assert sum(ph.values()) == pytest.approx(allreduce_step_time(m, b, tf, tb, k, **kw),
                                                     rel=1e-12)


@given(sizes, rates, times, times, times, counts, st.booleans())
def test_overlap_never_slower(m, b, tf, tb, ts, k, sharing_is_ps):
    sharing = "ps" if sharing_is_ps else "hybrid"
    assert sync_step_time(m, b, tf, tb, ts, k, sharing, True) <= \
        sync_step_time(m, b, tf, tb, ts, k, sharing, False) * (1 + 1e-12)


# ---------------------------------------------------------------- vectorization

def test_scalar_in_float_out():
    assert type(sync_step_time(M, B, TF, TB, TS, K)) is float
    assert type(allreduce_step_time(M, B, TF, TB, K)) is float
    assert all(type(v) is float for v in sync_phases(M, B, TF, TB, TS, K).values())


def test_grid_matches_scalar_calls():
    ks = np.arange(1, 9)[:, None]
    bs = np.array([1, 10, 25, 100]) * GBPS
    for sharing in coarse.SHARINGS:
        for overlap in (False, True):
            grid = sync_step_time(M, bs, TF, TB, TS, ks, sharing, overlap)
            assert grid.shape == (8, 4)
            ref = [[sync_step_time(M, b, TF, TB, TS, int(k), sharing, overlap) for b in bs]
                   for k in ks[:, 0]]
            np.testing.assert_allclose(grid, ref, rtol=1e-14)
            phases = sync_phases(M, bs, TF, TB, TS, ks, sharing, overlap)
            assert all(v.shape == (8, 4) for v in phases.values())
            np.testing.assert_allclose(sum(phases.values()), grid, rtol=1e-14)


@pytest.mark.parametrize("overlap", [False, True])
def test_large_grid_blockwise_equals_unblocked(overlap):
    # > 2 blocks: the step time is evaluated blockwise; the phases are not
    rng = np.random.default_rng(0)
    ks = np.arange(1, 301)[:, None, None]
    bs = rng.uniform(1, 100, size=(1, 40, 1)) * GBPS
    tf = rng.uniform(0, 0.5, size=(1, 1, 30))
    caps = rng.uniform(1, 50, size=(1, 40, 1)) * GBPS
    ps = rng.integers(1, 5, size=(300, 1, 1))
    for sharing in coarse.SHARINGS:
        kw = dict(n_ps=ps, per_flow_cap=caps, link_efficiency=0.9)
        grid = sync_step_time(M, bs, tf, TB, TS, ks, sharing, overlap, **kw)
        phases = sync_phases(M, bs, tf, TB, TS, ks, sharing, overlap, **kw)
        assert grid.shape == (300, 40, 30)
        np.testing.assert_allclose(grid, sum(phases.values()), rtol=1e-13)
    grid = allreduce_step_time(M, bs, tf, TB, ks, overlap=overlap)
    np.testing.assert_allclose(grid, sum(allreduce_phases(M, bs, tf, TB, ks,
                                                          overlap=overlap).values()),
                               rtol=1e-13)


def test_free_options_keep_their_shape():
    assert sync_step_time(M, B, TF, TB, TS, K, n_ps=[1, 1]).shape == (2,)
    assert sync_step_time(M, B, TF, TB, TS, K, per_flow_cap=[math.inf] * 3).shape == (3,)
    assert sync_phases(M, B, TF, TB, TS, K, n_ps=[1, 1])["update"].shape == (2,)


@functools.cache
def _bench_reference():
    path = Path(__file__).parent / "benchmarks" / "bench_coarse.py"
    spec = importlib.util.spec_from_file_location("bench_coarse", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.reference_sync_step_time


@settings(max_examples=200, deadline=None)   # the first example loads the benchmark script
@given(sizes, rates, times, times, times, counts, sync_options)
def test_benchmark_reference_agrees(m, b, tf, tb, ts, k, opts):
    # the pure-Python reference of the benchmark computes the same formulas
    ref = _bench_reference()
    expected = ref(m, b, tf, tb, ts, k, **opts)
    assert sync_step_time(m, b, tf, tb, ts, k, **opts) == pytest.approx(expected, rel=1e-12)


# ---------------------------------------------------------------- scalar fast path

def _as_arrays(*values):
    """Each number as a 0-d array: the same values, but through the array path."""
    return [None if v is None else np.asarray(v, dtype=float) for v in values]


scalar_kinds = st.sampled_from([float, int, np.float64, np.int64])
extensions = st.fixed_dictionaries({
    "n_ps": st.integers(1, 8),
    "per_flow_cap": st.one_of(st.none(), st.just(math.inf), st.floats(1e6, 1e11)),
    "link_efficiency": st.floats(0.05, 1.0),
    "sharing_weight": st.floats(0.0, 1.0),
    "update_growth": st.one_of(st.just(0.0), st.floats(0.0, 1.0)),
    "timeout_probability": st.one_of(st.just(0.0), st.floats(0.0, 1.0)),
    "retransmit_timeout": st.floats(1e-3, 2.0),
})
gpus = st.one_of(st.just((1, None)), st.tuples(st.integers(1, 8), st.floats(1e9, 1e12)))


@settings(max_examples=300)
@given(sizes, rates, times, times, times, counts, st.sampled_from(coarse.SHARINGS),
       st.booleans(), extensions, gpus, scalar_kinds)
def test_scalar_fast_path_equals_array_path(m, b, tf, tb, ts, k, sharing, overlap, ext, gpu,
                                            kind):
    # plain numbers take the float fast path; the same numbers as 0-d arrays take the
    # array path; the arithmetic is the same, operation for operation: equal to the bit
    g, intra = gpu
    kw = dict(ext, gpus_per_machine=g, intra_bandwidth=intra)
    k = kind(k)
    fast = sync_step_time(m, b, tf, tb, ts, k, sharing, overlap, **kw)
    arr = dict(zip(kw, _as_arrays(*kw.values())))
    slow = sync_step_time(*_as_arrays(m, b, tf, tb, ts, k), sharing, overlap, **arr)
    assert type(fast) is float and type(slow) is float
    assert fast == slow
    fast_phases = sync_phases(m, b, tf, tb, ts, k, sharing, overlap, **kw)
    slow_phases = sync_phases(*_as_arrays(m, b, tf, tb, ts, k), sharing, overlap, **arr)
    assert fast_phases == slow_phases
    assert list(fast_phases) == list(slow_phases)
    assert all(type(v) is float for v in fast_phases.values())
    # and one element of a grid agrees to the last few ulps (other summation order)
    grid = sync_step_time(m, b, tf, np.array([tb, tb]), ts, k, sharing, overlap, **kw)
    assert grid[0] == pytest.approx(fast, rel=1e-15, abs=0)


@settings(max_examples=200)
@given(sizes, rates, times, times, counts, st.sampled_from(coarse.ALGORITHMS), st.booleans(),
       st.floats(0.05, 1.0), gpus, scalar_kinds)
def test_allreduce_fast_path_equals_array_path(m, b, tf, tb, k, algorithm, overlap, eff, gpu,
                                               kind):
    g, intra = gpu
    kw = dict(algorithm=algorithm, overlap=overlap, link_efficiency=eff, gpus_per_machine=g,
              intra_bandwidth=intra)
    k = kind(k)
    slow_kw = dict(kw, link_efficiency=np.asarray(eff), gpus_per_machine=np.asarray(g),
                   intra_bandwidth=None if intra is None else np.asarray(intra))
    fast = allreduce_step_time(m, b, tf, tb, k, **kw)
    slow = allreduce_step_time(*_as_arrays(m, b, tf, tb, k), **slow_kw)
    assert type(fast) is float and fast == slow
    assert allreduce_phases(m, b, tf, tb, k, **kw) == \
        allreduce_phases(*_as_arrays(m, b, tf, tb, k), **slow_kw)


def test_fast_path_takes_numpy_scalars_and_hands_back_overflow():
    # numpy scalars (float32 too: widened to float64 as the array path does)
    assert sync_step_time(np.float32(M), np.float64(B), TF, TB, TS, np.int32(K)) == \
        sync_step_time(np.asarray(np.float32(M), dtype=float), B, TF, TB, TS, np.asarray(K))
    # M / B overflows: the array path answers (inf), as before the fast path existed
    with np.errstate(all="ignore"):
        assert sync_step_time(1e300, 1e-300, TF, TB, TS, K) == math.inf
        assert allreduce_step_time(1e300, 1e-300, TF, TB, 2) == math.inf


@pytest.mark.parametrize("field, bad", [
    ("model_bytes", -1.0), ("model_bytes", math.nan), ("model_bytes", math.inf),
    ("bandwidth", 0), ("bandwidth", -math.inf), ("t_forward", -0.5), ("t_backward", math.nan),
    ("t_update", math.inf), ("workers", 2.5), ("workers", 0), ("workers", math.inf),
    ("workers", True), ("workers", "4"), ("n_ps", 1.5), ("per_flow_cap", 0.0),
    ("link_efficiency", 1.01), ("sharing_weight", -0.1), ("update_growth", 2.0),
    ("timeout_probability", math.nan), ("retransmit_timeout", 0.0),
    ("gpus_per_machine", 2), ("intra_bandwidth", -1.0), ("sharing", "PS"),
    ("overlap", 1), ("n_ps", np.bool_(True)),
])
def test_fast_path_errors_are_the_array_paths(field, bad):
    # a bad scalar leaves the fast path; the array path names the field and the value,
    # with the message a 0-d array of the same value gets
    args = dict(model_bytes=M, bandwidth=B, t_forward=TF, t_backward=TB, t_update=TS,
                workers=K)
    for fn in (sync_step_time, sync_phases):
        with pytest.raises(SpecError) as err:
            fn(**dict(args, **{field: bad}))
        expected = "intra_bandwidth" if field == "gpus_per_machine" else field
        assert err.value.field == expected
        if isinstance(bad, float):
            with pytest.raises(SpecError) as err_array:
                fn(**dict(args, **{field: np.asarray(bad)}))
            assert str(err.value) == str(err_array.value)
            assert repr(bad) in str(err.value)


# ---------------------------------------------------------------- errors

@pytest.mark.parametrize("kwargs, field", [
    (dict(bandwidth=-1.0), "bandwidth"),
    (dict(bandwidth=float("nan")), "bandwidth"),
    (dict(bandwidth=np.array([B, np.nan])), "bandwidth"),
    (dict(bandwidth=0.0), "bandwidth"),
    (dict(workers=0), "workers"),
    (dict(workers=np.array([1, 2, 0])), "workers"),
    (dict(workers=1.5), "workers"),
    (dict(workers=True), "workers"),
    (dict(workers=math.nan), "workers"),
    (dict(model_bytes=-5.0), "model_bytes"),
    (dict(t_forward=float("nan")), "t_forward"),
    (dict(t_backward=-0.1), "t_backward"),
    (dict(t_update=math.inf), "t_update"),
    (dict(sharing="equal"), "sharing"),
    (dict(overlap="yes"), "overlap"),
    (dict(n_ps=0), "n_ps"),
    (dict(per_flow_cap=-1.0), "per_flow_cap"),
    (dict(link_efficiency=0.0), "link_efficiency"),
    (dict(link_efficiency=1.5), "link_efficiency"),
    (dict(sharing_weight=1.5), "sharing_weight"),
    (dict(gpus_per_machine=8), "intra_bandwidth"),
    (dict(gpus_per_machine=0, intra_bandwidth=1e11), "gpus_per_machine"),
])
def test_sync_errors_name_the_argument(kwargs, field):
    args = dict(model_bytes=M, bandwidth=B, t_forward=TF, t_backward=TB, t_update=TS,
                workers=K)
    args.update(kwargs)
    with pytest.raises(SpecError) as err:
        sync_step_time(**args)
    assert err.value.field == field
    with pytest.raises(SpecError):
        sync_phases(**args)


@pytest.mark.parametrize("kwargs, field", [
    (dict(bandwidth=-1.0), "bandwidth"),
    (dict(workers=0), "workers"),
    (dict(algorithm="butterfly"), "algorithm"),
    (dict(gpus_per_machine=4), "intra_bandwidth"),
])
def test_allreduce_errors_name_the_argument(kwargs, field):
    args = dict(model_bytes=M, bandwidth=B, t_forward=TF, t_backward=TB, workers=K)
    args.update(kwargs)
    with pytest.raises(SpecError) as err:
        allreduce_step_time(**args)
    assert err.value.field == field


def test_hierarchical_errors():
    with pytest.raises(SpecError) as err:
        hierarchical_step_time(M, B, TF, TB, TS, 2, 8, 1e11, architecture="mesh")
    assert err.value.field == "architecture"
    with pytest.raises(SpecError) as err:
        hierarchical_step_time(M, B, TF, TB, TS, 2, 8, None)
    assert err.value.field == "intra_bandwidth"


# ---------------------------------------------------------------- model objects

PROFILE = Profile(model_bytes=M, t_forward=TF, t_backward=TB, t_update=TS, batch_size=32)
CLUSTER = Cluster(machines=16, nic_bandwidth="10Gbps")


def test_sync_coarse_estimate():
    est = SyncCoarse(sharing="ps").estimate(PROFILE, CLUSTER,
                                            Config(n_replicas=4, n_ps=1, epoch_samples=12800))
    assert isinstance(est, Estimate)
    assert est.step_time == pytest.approx(0.95)                  # eq. 7 by hand
    assert est.throughput == pytest.approx(4 * 32 / 0.95)        # K * batch / T
    assert est.epoch_time == pytest.approx(12800 / (4 * 32 / 0.95))
    assert dict(est.phases) == pytest.approx({"downlink": 0.32, "forward": 0.1, "backward": 0.2,
                                              "uplink": 0.32, "update": 0.01})
    assert est.bottleneck == "downlink"
    assert est.meta["model"] == "SyncCoarse"
    assert est.meta["sharing"] == "ps" and est.meta["overlap"] is False
    assert est.meta["equation"] == "Li et al. 2022 eq. 7"
    assert est.meta["workers"] == 4 and est.meta["n_ps"] == 1


def test_sync_coarse_defaults_and_no_epoch():
    est = SyncCoarse().estimate(PROFILE, CLUSTER, Config(n_replicas=4))
    assert est.step_time == pytest.approx(0.83)                  # eq. 9
    assert est.epoch_time is None
    est = SyncCoarse(overlap=True).estimate(PROFILE, CLUSTER, Config(n_replicas=4))
    assert est.step_time == pytest.approx(0.53)                  # eq. 10
    assert est.meta["equation"] == "Li et al. 2022 eq. 10"


def test_sync_coarse_uses_cluster_options():
    cluster = Cluster(machines=16, nic_bandwidth="25Gbps", per_flow_cap="10Gbps",
                      link_efficiency=0.9, sharing_weight=0.7)
    config = Config(n_replicas=6, n_ps=3)
    est = SyncCoarse(overlap=True).estimate(PROFILE, cluster, config)
    expected = sync_step_time(M, 25 * GBPS, TF, TB, TS, 6, "hybrid", True, n_ps=3,
                              per_flow_cap=10 * GBPS, link_efficiency=0.9, sharing_weight=0.7)
    assert est.step_time == pytest.approx(expected)
    assert est.meta["per_flow_cap"] == pytest.approx(10 * GBPS)


def test_multi_gpu_cluster():
    cluster = Cluster(machines=4, nic_bandwidth="10Gbps", gpus_per_machine=8,
                      intra_bandwidth=100e9)
    est = AllReduceCoarse().estimate(PROFILE, cluster, Config(n_replicas=2, n_ps=0))
    assert est.step_time == pytest.approx(0.38275)                # see test_hierarchical_by_hand
    assert est.throughput == pytest.approx(2 * 8 * 32 / 0.38275)  # K * G * batch / T
    assert "intra_reduce" in est.phases
    est = SyncCoarse().estimate(PROFILE, cluster, Config(n_replicas=2))
    assert est.step_time == pytest.approx(0.59275)


def test_allreduce_coarse_estimate():
    est = AllReduceCoarse().estimate(PROFILE, CLUSTER, Config(n_replicas=4, n_ps=0))
    assert est.step_time == pytest.approx(0.42)                  # eq. 11
    assert est.throughput == pytest.approx(4 * 32 / 0.42)
    assert dict(est.phases) == pytest.approx({"forward": 0.1, "backward": 0.2,
                                              "allreduce": 0.12})
    assert est.bottleneck == "backward"
    assert est.meta["model"] == "AllReduceCoarse" and est.meta["algorithm"] == "ring"
    tree = AllReduceCoarse(algorithm="tree").estimate(PROFILE, CLUSTER, Config(n_replicas=4))
    assert tree.step_time == pytest.approx(0.62)


def test_models_are_frozen_option_holders():
    model = SyncCoarse()
    with pytest.raises(dataclasses.FrozenInstanceError):
        model.sharing = "ps"
    assert SyncCoarse("ps", True) == SyncCoarse(sharing="ps", overlap=True)
    assert [f.name for f in dataclasses.fields(SyncCoarse)] == ["sharing", "overlap"]
    assert [f.name for f in dataclasses.fields(AllReduceCoarse)] == ["algorithm", "overlap"]
    assert SyncCoarse.uses_parameter_servers and not AllReduceCoarse.uses_parameter_servers
    with pytest.raises(SpecError) as err:
        SyncCoarse(sharing="equal")
    assert err.value.field == "sharing"
    with pytest.raises(SpecError) as err:
        AllReduceCoarse(algorithm="mesh")
    assert err.value.field == "algorithm"


def test_model_errors():
    with pytest.raises(Infeasible, match="data-parallel"):
        SyncCoarse().estimate(PROFILE, CLUSTER, Config(n_workers=2, n_replicas=2))
    with pytest.raises(Infeasible, match="data-parallel"):
        AllReduceCoarse().estimate(PROFILE, CLUSTER, Config(n_workers=2, n_replicas=2))
    with pytest.raises(SpecError) as err:
        SyncCoarse().estimate(PROFILE, CLUSTER, Config(n_replicas=2, n_ps=0))
    assert err.value.field == "config.n_ps"
    with pytest.raises(Infeasible, match="sync"):
        SyncCoarse().estimate(PROFILE, CLUSTER, Config(n_replicas=2, mode="async"))
    with pytest.raises(SpecError) as err:
        SyncCoarse().estimate({"model_bytes": M}, CLUSTER, Config())
    assert err.value.field == "workload"
