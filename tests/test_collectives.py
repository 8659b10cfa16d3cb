"""Tests of perfmodel.collectives: hand-worked values, broadcasting, properties, errors.

Running example: M = 100 MB = 1e8 B, B = 10 Gbps = 1.25e9 B/s, so M/B = 0.08 s.
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from perfmodel import collectives as c
from perfmodel.errors import SpecError

M, B = 100e6, 1.25e9          # M/B = 0.08 s
GBPS = 1e9 / 8


# ---------------------------------------------------------------- hand values

def test_pull_is_k_transfers():
    # eq. 7/8 downlink: K M / B = 4 * 0.08 = 0.32 s, under both sharings
    assert c.ps_pull_time(M, B, 4) == pytest.approx(0.32)
    assert c.ps_pull_time(M, B, 4, sharing="fcfs") == pytest.approx(0.32)


def test_push_ps_vs_fcfs():
    # eq. 7 uplink K M / B = 0.32 s; eq. 8 uplink M / B = 0.08 s whatever K
    assert c.ps_push_time(M, B, 4) == pytest.approx(0.32)
    assert c.ps_push_time(M, B, 4, sharing="fcfs") == pytest.approx(0.08)
    assert c.ps_push_time(M, B, 40, sharing="fcfs") == pytest.approx(0.08)


def test_several_servers_split_the_model():
    # n_ps = 2: each server link carries 4 * 50 MB = 200 MB -> 0.16 s (> NIC bound 0.08 s)
    assert c.ps_pull_time(M, B, 4, n_ps=2) == pytest.approx(0.16)
    # n_ps = 8 > K = 4: server links need 4 * 12.5 MB / B = 0.04 s but a worker's
    # NIC still receives 100 MB -> 0.08 s
    assert c.ps_pull_time(M, B, 4, n_ps=8) == pytest.approx(0.08)
    # FCFS push with 2 servers: the worker's NIC sends 100 MB -> 0.08 s
    assert c.ps_push_time(M, B, 4, n_ps=2, sharing="fcfs") == pytest.approx(0.08)


def test_per_flow_cap_seed003_sec44():
    # B = 25 Gbps = 3.125e9 B/s, cap = 10 Gbps = 1.25e9 B/s, M = 100 MB.
    # K = 1: max(M/B = 0.032, M/cap = 0.08) = 0.08 s
    # K = 2: each flow min(12.5, 10) Gbps = 10 Gbps -> 0.08 s (same as K = 1, Fig. 23)
    # K = 3: each flow 25/3 Gbps -> 3 * 0.032 = 0.096 s (grows)
    b, cap = 25 * GBPS, 10 * GBPS
    t = c.ps_pull_time(M, b, np.array([1, 2, 3]), per_flow_cap=cap)
    np.testing.assert_allclose(t, [0.08, 0.08, 0.096])
    assert c.ps_flow_rate(b, 2, per_flow_cap=cap) == pytest.approx(cap)
    assert c.ps_flow_rate(b, 3, per_flow_cap=cap) == pytest.approx(b / 3)
    # FCFS push: one flow alone is still capped -> 0.08 s
    assert c.ps_push_time(M, b, 5, per_flow_cap=cap, sharing="fcfs") == pytest.approx(0.08)


def test_flow_rate_with_servers():
    # 4 workers, 8 servers: min(B/4, B/8) = B/8 (the worker NIC splits among its 8 flows)
    assert c.ps_flow_rate(B, 4, n_ps=8) == pytest.approx(B / 8)


def test_ring_allreduce():
    # 2 (K-1)/K * M/B: K=1 -> 0; K=2 -> 0.08; K=4 -> 2*3/4*0.08 = 0.12 s
    np.testing.assert_allclose(c.ring_allreduce_time(M, B, np.array([1, 2, 4])),
                               [0.0, 0.08, 0.12])
    # tends to 2 M / B = 0.16 s
    assert c.ring_allreduce_time(M, B, 10**6) == pytest.approx(0.16, rel=1e-5)


def test_tree_allreduce():
    # 2 ceil(log2 K) M/B: K=1 -> 0, 2 -> 0.16, 4 -> 0.32, 5 -> 2*3*0.08 = 0.48, 8 -> 0.48
    np.testing.assert_allclose(c.tree_allreduce_time(M, B, np.array([1, 2, 4, 5, 8])),
                               [0.0, 0.16, 0.32, 0.48, 0.48])
    assert c.allreduce_time(M, B, 4, algorithm="tree") == pytest.approx(0.32)
    assert c.allreduce_time(M, B, 4) == pytest.approx(0.12)


def test_intra_machine_steps():
    # G = 8, b = 100 GB/s: M/b = 1 ms; ring 2*7/8*1 ms = 1.75 ms; broadcast 1 ms
    assert c.intra_allreduce_time(M, 100e9, 8) == pytest.approx(1.75e-3)
    assert c.intra_broadcast_time(M, 100e9, 8) == pytest.approx(1e-3)
    assert c.intra_allreduce_time(M, 100e9, 1) == 0.0
    assert c.intra_broadcast_time(M, 100e9, 1) == 0.0


def test_hierarchical_allreduce():
    # K = 2 machines, G = 8: 1.75 ms + ring(2) 0.08 s + 1 ms broadcast = 0.08275 s
    assert c.hierarchical_allreduce_time(M, B, 2, 8, 100e9) == pytest.approx(0.08275)
    # across machines by PS (equal sharing): push 0.16 + pull 0.16
    assert c.hierarchical_allreduce_time(M, B, 2, 8, 100e9, inter="ps") == \
        pytest.approx(1.75e-3 + 0.32 + 1e-3)
    # one GPU per machine: just the inter-machine exchange
    assert c.hierarchical_allreduce_time(M, B, 4, 1, 100e9) == pytest.approx(0.12)
    assert c.hierarchical_allreduce_time(M, B, 4, 1, 100e9, inter="tree") == pytest.approx(0.32)


# ---------------------------------------------------------------- shapes

def test_scalar_in_float_out():
    assert type(c.ps_pull_time(M, B, 4)) is float
    assert type(c.ring_allreduce_time(M, B, 4)) is float


def test_broadcast_grid():
    k = np.arange(1, 6)[:, None]
    b = np.array([1.0, 10.0, 100.0]) * GBPS
    t = c.ps_pull_time(M, b, k)
    assert t.shape == (5, 3)
    np.testing.assert_allclose(t, k * M / b)
    assert c.ring_allreduce_time(M, b, k).shape == (5, 3)


def test_free_options_keep_their_shape():
    # n_ps of ones and an infinite cap cost nothing but still shape the result
    assert c.ps_pull_time(M, B, 4, n_ps=[1, 1, 1]).shape == (3,)
    assert c.ps_push_time(M, B, 4, per_flow_cap=[np.inf, np.inf]).shape == (2,)


# ---------------------------------------------------------------- properties

sizes = st.floats(1e3, 1e10)
rates = st.floats(1e6, 1e11)
counts = st.integers(1, 512)


@given(sizes, rates, counts, st.integers(1, 64))
def test_cap_none_equals_inf(m, b, k, p):
    for sharing in c.LINK_SHARINGS:
        for f in (c.ps_pull_time, c.ps_push_time):
            assert f(m, b, k, p, None, sharing) == f(m, b, k, p, math.inf, sharing)


@given(sizes, rates, counts, st.integers(1, 64), st.one_of(st.none(), rates))
def test_pull_bounds_and_monotonicity(m, b, k, p, cap):
    t = c.ps_pull_time(m, b, k, p, cap)
    assert t >= m / b * (1 - 1e-12)                         # a worker's NIC carries M
    assert c.ps_pull_time(m, b, k + 1, p, cap) >= t         # more workers never faster
    assert c.ps_pull_time(m, b, k, p + 1, cap) <= t * (1 + 1e-12)  # more servers never slower
    assert c.ps_pull_time(m, 2 * b, k, p, cap) <= t         # more bandwidth never slower
    assert c.ps_push_time(m, b, k, p, cap, "fcfs") <= c.ps_push_time(m, b, k, p, cap, "ps")


@given(sizes, rates, counts)
def test_ring_below_two_transfers_and_growing(m, b, k):
    t = c.ring_allreduce_time(m, b, k)
    assert 0 <= t < 2 * m / b
    assert c.ring_allreduce_time(m, b, k + 1) >= t


# ---------------------------------------------------------------- errors

@pytest.mark.parametrize("call, field", [
    (lambda: c.ps_pull_time(M, -1.0, 4), "bandwidth"),
    (lambda: c.ps_pull_time(M, float("nan"), 4), "bandwidth"),
    (lambda: c.ps_pull_time(M, [B, 0.0], 4), "bandwidth"),
    (lambda: c.ps_pull_time(-M, B, 4), "model_bytes"),
    (lambda: c.ps_pull_time("100MB", B, 4), "model_bytes"),
    (lambda: c.ps_pull_time(M, B, 0), "workers"),
    (lambda: c.ps_pull_time(M, B, 2.5), "workers"),
    (lambda: c.ps_pull_time(M, B, 4, n_ps=0), "n_ps"),
    (lambda: c.ps_pull_time(M, B, 4, per_flow_cap=0.0), "per_flow_cap"),
    (lambda: c.ps_push_time(M, B, 4, sharing="hybrid"), "sharing"),
    (lambda: c.allreduce_time(M, B, 4, algorithm="butterfly"), "algorithm"),
    (lambda: c.ring_allreduce_time(M, B, math.inf), "workers"),
    (lambda: c.intra_broadcast_time(M, -1.0, 8), "intra_bandwidth"),
    (lambda: c.hierarchical_allreduce_time(M, B, 2, 0, 1e11), "gpus_per_machine"),
    (lambda: c.hierarchical_allreduce_time(M, B, 2, 8, 1e11, inter="mesh"), "inter"),
])
def test_errors_name_the_argument(call, field):
    with pytest.raises(SpecError) as err:
        call()
    assert err.value.field == field
    assert field in str(err.value)


def test_error_shows_the_bad_value():
    with pytest.raises(SpecError, match="-3"):
        c.ps_pull_time(M, [B, -3.0, B], 4)
