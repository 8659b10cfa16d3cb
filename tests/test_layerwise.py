"""Yan et al. 2015's layer-wise model: equations by hand, invariants, and the paper's results."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfmodel import layerwise as lw
from perfmodel import zoo
from perfmodel.errors import Infeasible, SpecError
from perfmodel.specs import DNN, Cluster, Config, Layer

HW = dict(machines=20, cores=4, nic_bandwidth=1e9, latency=1e-4, c_muladd=1e-9,
          c_muladd_mem=4e-9, c_act=5e-9, c_err=2e-9, cache_bytes=1e6, read_period=10)


def fc(name, n_in, n_out, kind="fc"):
    return Layer(name=name, kind=kind, in_shape=[n_in], out_shape=[n_out],
                 weights=n_in * n_out + n_out, connections=n_in * n_out)


# ------------------------------------------------------------ equations by hand
def test_equations_5_to_8_by_hand():
    # eq. 5: 1e-9 * 1000 + 5e-9 * 10 = 1.05e-6
    assert lw.feedforward_compute_time(1000, 10, 1e-9, 5e-9) == pytest.approx(1.05e-6)
    # eq. 7: 1e-9 * 2000 + 2e-9 * 10 = 2.02e-6
    assert lw.backprop_compute_time(2000, 10, 1e-9, 2e-9) == pytest.approx(2.02e-6)
    # eq. 8: 1e-9 * 1000
    assert lw.weight_update_time(1000, 1e-9) == pytest.approx(1e-6)
    # eq. 6: 1e-4 + 500 * 4 B / 1e9 B/s = 1.02e-4
    assert lw.transfer_time(500, 4, 1e9, 1e-4) == pytest.approx(1.02e-4)


def test_equation_9_threads():
    # C_interf(4) from the table; C_nbw(4) = B / 4; C_ncost(4) = 1e-4 + 3 * 1e-5
    assert lw.threaded_compute_time(2.0, 4, (1.0, 1.1, 1.2, 1.5)) == pytest.approx(3.0)
    assert lw.thread_bandwidth(1e9, 4) == pytest.approx(2.5e8)
    assert lw.thread_latency(1e-4, 4, 1e-5) == pytest.approx(1.3e-4)
    assert lw.interference_factor(1) == 1.0


def test_equations_10_and_11_by_hand():
    w = [4e6, 8e6]                       # W(l) in bytes
    # eq. 10: 2 layers x (1e-4 + 3 * W / (1e9 / 2)): 2e-4 + 3 * 12e6 * 2 / 1e9 = 0.0722
    assert lw.weight_read_time_max(w, 3, 1e9, [2, 2], 1e-4) == pytest.approx(0.0722)
    # eq. 11: 2e-4 + 12e6 * 2 / (1e9 * min(4, 2)) = 0.0122
    assert lw.weight_read_time_min(w, 4, 2, 1e9, [2, 2], 1e-4) == pytest.approx(0.0122)
    assert lw.weight_read_time(0.0122, 0.0722, 0.5) == pytest.approx(0.0422)


def test_epoch_time_by_hand():
    # M_w N / N_read + N sum T/Q = 0.1 * 1000 / 10 + 1000 * (4e-3/8 + 6e-3/4) = 10 + 2.0
    assert lw.epoch_time([4e-3, 6e-3], [8, 4], 0.1, 1000, 10) == pytest.approx(12.0)


def test_one_layer_one_worker_is_the_sum_of_its_components():
    dnn = DNN(name="one", layers=[fc("out", 100, 10)])
    cluster = Cluster(**HW)
    est = lw.LayerWise(threads=1).estimate(dnn, cluster, Config(n_ps=0, epoch_samples=1000))
    # U_f = 1e-9 * 1000 + 5e-9 * 10; U_b = 0 (no next layer) + 2e-9 * 10; U_w = 1e-9 * 1000
    u_f, u_b, u_w = 1.05e-6, 2e-8, 1e-6
    assert est.phases["forward"] == pytest.approx(u_f)
    assert est.phases["backward"] == pytest.approx(u_b)
    assert est.phases["update"] == pytest.approx(u_w)
    assert est.phases["activations"] == est.phases["errors"] == est.phases["weights"] == 0.0
    assert est.epoch_time == pytest.approx(1000 * (u_f + u_b + u_w))
    assert est.epoch_time == pytest.approx(1000 * sum(est.phases.values()))


def test_two_fc_layers_on_two_workers_by_hand():
    # fc1 100->40, fc2 40->10, P = 2 on 2 workers, H = 1, one replica, no PS.
    dnn = DNN(name="two", layers=[fc("fc1", 100, 40), fc("fc2", 40, 10)])
    cluster = Cluster(**HW)
    est = lw.LayerWise(threads=1).estimate(dnn, cluster, Config(n_workers=2, n_ps=0,
                                                                 epoch_samples=1))
    rows = {r["name"]: r for r in est.meta["layers"]}
    # fc2 segment: 5 neurons x 40 inputs = 200 connections; 20 of fc1's 40 activations are remote
    assert rows["fc2"]["U_f"] == pytest.approx(1e-9 * 200 + 5e-9 * 5)
    assert rows["fc2"]["M_f"] == pytest.approx(1e-4 + 20 * 4 / 1e9)
    # fc1 segment: 20 neurons x 100 inputs; W' = 400 connections of fc2 x 20/40 of fc1's neurons
    assert rows["fc1"]["U_b"] == pytest.approx(1e-9 * 200 + 2e-9 * 20)
    # fc1 receives the error terms of fc2's 5 remote neurons
    assert rows["fc1"]["M_b"] == pytest.approx(1e-4 + 5 * 4 / 1e9)
    assert rows["fc1"]["M_f"] == 0.0  # the first layer reads its input locally


# ------------------------------------------------------------ invariants
@settings(max_examples=40, deadline=None)
@given(w=st.integers(1, 4), r=st.integers(1, 6), s=st.integers(1, 6),
       pos=st.floats(0, 1))
def test_weight_read_between_bounds(w, r, s, pos):
    dnn = zoo.load("adam-mnist")
    cluster = zoo.cluster("yan2015").replace(machines=100)
    cfg = Config(n_workers=w, n_replicas=r, n_ps=s)
    model = lw.LayerWise(mw_position=pos)
    reads = model.weight_reads(dnn, cluster, cfg, lw.default_plan(dnn, cluster, cfg))
    assert reads["M_w_min"] <= reads["M_w"] + 1e-15 <= reads["M_w_max"] + 2e-15


@settings(max_examples=30, deadline=None)
@given(name=st.sampled_from(["adam-mnist", "adam-imagenet22k", "alexnet"]),
       p=st.integers(1, 7))
def test_more_partitions_never_increase_segment_compute(name, p):
    dnn = zoo.load(name)
    cluster = zoo.cluster("yan2015")
    model = lw.LayerWise(threads=1)

    def compute(parts):
        cfg = Config(n_workers=parts, n_ps=0)
        table = model.layer_table(dnn, cluster, cfg, lw.default_plan(dnn, cluster, cfg, 1))
        return np.array([t.U_f + t.U_b + t.U_w for t in table])

    assert np.all(compute(p + 1) <= compute(p) * (1 + 1e-12))


def test_errors():
    dnn = zoo.load("adam-mnist")
    with pytest.raises(SpecError, match="cluster.c_muladd"):
        lw.LayerWise().estimate(dnn, Cluster(machines=4, nic_bandwidth=1e9), Config())
    with pytest.raises(Infeasible):
        lw.LayerWise().estimate(dnn, zoo.cluster("yan2015"), Config(n_replicas=2, n_ps=0))
    with pytest.raises(Infeasible):
        lw.LayerWise().estimate(dnn, zoo.cluster("yan2015"), Config(n_workers=5, n_replicas=5))
    with pytest.raises(SpecError, match="mw_position"):
        lw.LayerWise(mw_position=1.5)
    with pytest.raises(SpecError, match="workers"):
        lw.LayerPlan(partitions=2, threads=1, workers=(0,))
