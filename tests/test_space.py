"""Yan et al. 2015, Fig. 7: constraints C1-C4 and the enumeration of the configuration space."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optimizer import space as sp
from optimizer.space import ConstraintViolation
from perfmodel import zoo
from perfmodel.errors import SpecError
from perfmodel.layerwise import LayerPlan, Plan, default_plan
from perfmodel.specs import Cluster, Config


def _cluster(machines=20, cores=16):
    return Cluster(machines=machines, nic_bandwidth=1.25e9, cores=cores)


def _violation(constraint, fn, *args, **kwargs):
    with pytest.raises(ConstraintViolation) as info:
        fn(*args, **kwargs)
    err = info.value
    assert err.constraint == constraint
    assert str(err).split(": ", 1)[1].startswith(f"{constraint}: ")
    assert isinstance(err, SpecError) and isinstance(err, ValueError)
    return err


# ---------------------------------------------------------------- C1 and the PS rule
def test_c1_names_constraint_and_value():
    err = _violation("C1", sp.check_config, Config(n_workers=7, n_replicas=3, n_ps=2), _cluster())
    assert err.value == 23 and err.limit == 20 and err.field == "config"
    assert "n_ps + n_replicas * n_workers = 2 + 3 * 7 = 23 exceeds 20 machines" in str(err)


def test_c1_boundary_and_machine_override():
    sp.check_config(Config(n_workers=6, n_replicas=3, n_ps=2), _cluster())      # exactly 20
    sp.check_config(Config(n_workers=7, n_replicas=3, n_ps=2), _cluster(), machines=23)
    err = _violation("C1", sp.check_config, Config(n_workers=2, n_replicas=2, n_ps=1), None,
                     machines=4)
    assert err.value == 5 and err.limit == 4


def test_ps_rule_and_its_switch():
    config = Config(n_workers=2, n_replicas=3, n_ps=0)
    err = _violation("PS", sp.check_config, config, _cluster())
    assert err.field == "config.n_ps" and err.value == 0
    sp.check_config(config, _cluster(), ps_for_replicas=False)
    sp.check_config(Config(n_workers=4, n_replicas=1, n_ps=0), _cluster())   # one replica: no PS


def test_check_config_bad_arguments():
    with pytest.raises(SpecError, match="config"):
        sp.check_config((1, 1, 1), _cluster())
    with pytest.raises(SpecError, match="cluster"):
        sp.check_config(Config(), None)
    with pytest.raises(SpecError, match="machines"):
        sp.check_config(Config(), None, machines=0)


# ---------------------------------------------------------------- C2, C3, C4
def test_c2_threads_exceed_cores():
    err = _violation("C2", sp.check_layer, LayerPlan(2, 17), Config(n_workers=2), _cluster(),
                     layer_index=4)
    assert err.field == "layers[4].threads" and err.value == 17 and err.limit == 16
    assert "threads = 17 exceeds 16 cores" in str(err) and err.layer == 4
    sp.check_layer(LayerPlan(2, 16), Config(n_workers=2), _cluster())


def test_c3_too_many_segments():
    err = _violation("C3", sp.check_layer, LayerPlan(3, 1, 2), Config(n_workers=5), _cluster())
    assert err.value == 6 and err.limit == 5
    assert "partitions * replicas = 3 * 2 = 6 segments exceed 5 workers" in str(err)


@pytest.mark.parametrize("bad", [4, -1, 9])
def test_c3_worker_out_of_range(bad):
    err = _violation("C3", sp.check_layer, LayerPlan(2, 1, 1, (0, bad)), Config(n_workers=4),
                     _cluster())
    assert err.value == bad and err.field == "layer.workers[1]"
    assert f"worker {bad} of segment (p=1, r=0) is outside 0..3" in str(err)


def test_c3_shared_worker_across_replicas():
    err = _violation("C3", sp.check_layer, LayerPlan(2, 1, 2, (0, 1, 2, 1)),
                     Config(n_workers=4), _cluster(), layer_index=1, layer_name="conv2")
    assert err.value == 1 and err.field == "layers[1].workers[3]"
    assert "layer 'conv2': segments (p=1, r=0) and (p=1, r=1) share worker 1" in str(err)


def test_c4_full_mapping():
    f = np.zeros((2, 3, 2), dtype=int)                 # P=2, H=3, R=2
    f[0, :, 0], f[1, :, 0], f[0, :, 1], f[1, :, 1] = 2, 0, 1, 3
    plan = sp.layer_plan_from_mapping(f)
    assert (plan.partitions, plan.threads, plan.replicas, plan.workers) == (2, 3, 2, (2, 0, 1, 3))
    np.testing.assert_array_equal(sp.full_mapping(plan), f)
    f[1, 2, 1] = 0
    err = _violation("C4", sp.layer_plan_from_mapping, f, layer_index=5)
    assert err.value == [0, 3] and err.field == "layers[5].mapping"
    assert "threads of segment (p=1, r=1) are on workers [0, 3]" in str(err)


def test_c4_dict_mapping_and_c3_check():
    f = {(0, 0, 0): 1, (0, 1, 0): 1, (1, 0, 0): 2, (1, 1, 0): 2}
    assert sp.layer_plan_from_mapping(f).workers == (1, 2)
    _violation("C3", sp.layer_plan_from_mapping, f, Config(n_workers=2), _cluster())
    _violation("C2", sp.layer_plan_from_mapping, f, Config(n_workers=3), _cluster(cores=1))
    _violation("C4", sp.layer_plan_from_mapping, {**f, (1, 1, 0): 0})
    with pytest.raises(SpecError, match="no worker for"):
        sp.layer_plan_from_mapping({(0, 0, 0): 1, (1, 1, 0): 1})
    with pytest.raises(SpecError, match="shape"):
        sp.layer_plan_from_mapping(np.zeros((2, 2)))


def test_check_plan_names_the_layer():
    dnn = zoo.load("adam-mnist")
    config, cluster = Config(n_workers=4, n_replicas=2, n_ps=2), _cluster()
    plan = default_plan(dnn, cluster, config)
    sp.check_plan(plan, config, cluster, dnn=dnn)
    layers = list(plan.layers)
    layers[2] = LayerPlan(4, 32)
    err = _violation("C2", sp.check_plan, Plan(layers), config, cluster, dnn=dnn)
    assert err.field == "layers[2].threads" and "layer 'fc1'" in str(err) and err.layer == 2
    layers[2] = LayerPlan(2, 4, 1, (0, 0))
    err = _violation("C3", sp.check_plan, layers, config, cluster)
    assert err.field == "layers[2].workers[1]"
    _violation("C1", sp.check_plan, plan, config, cluster, machines=9)
    with pytest.raises(SpecError, match="4 layer plans for 5 layers"):
        sp.check_plan(plan.layers[:4], config, cluster, dnn=dnn)
    with pytest.raises(SpecError, match="LayerPlan"):
        sp.check_plan([(1, 1)], config, cluster)


def test_within_keeps_the_type():
    err = ConstraintViolation("C2", "threads", 9, "threads = 9 exceeds 8 cores", limit=8)
    nested = err.within("layers[1]", source="plan.json")
    assert isinstance(nested, ConstraintViolation) and nested.constraint == "C2"
    assert str(nested) == "plan.json: layers[1].threads: C2: threads = 9 exceeds 8 cores"


# ---------------------------------------------------------------- enumeration
def _brute_triples(n, min_ps, max_ps, ps_rule):
    out = []
    for n_ps in range(n + 1):
        for n_mr in range(1, n + 1):
            for n_wr in range(1, n + 1):
                if (n_ps + n_mr * n_wr <= n and n_ps >= min_ps
                        and (max_ps is None or n_ps <= max_ps)
                        and not (ps_rule and n_mr > 1 and n_ps == 0)):
                    out.append((n_ps, n_mr, n_wr))
    return out


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 12), min_ps=st.integers(0, 3),
       max_ps=st.none() | st.integers(0, 12), ps_rule=st.booleans())
def test_resource_triples_equal_brute_force(n, min_ps, max_ps, ps_rule):
    got = [tuple(t) for t in sp.resource_triples(n, min_ps=min_ps, max_ps=max_ps,
                                                 ps_for_replicas=ps_rule)]
    assert got == _brute_triples(n, min_ps, max_ps, ps_rule)
    assert len(got) <= n ** 3                           # Yan et al. 2015, Sec. 5.2: at most N^3


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 7), ps_rule=st.booleans())
def test_resource_triples_are_exactly_the_configs_passing_c1(n, ps_rule):
    yielded = set(sp.resource_triples(n, ps_for_replicas=ps_rule))
    for n_ps, n_mr, n_wr in itertools.product(range(n + 2), range(1, n + 2), range(1, n + 2)):
        config = Config(n_workers=n_wr, n_replicas=n_mr, n_ps=n_ps)
        try:
            sp.check_config(config, None, machines=n, ps_for_replicas=ps_rule)
            ok = True
        except ConstraintViolation:
            ok = False
        assert ok == ((n_ps, n_mr, n_wr) in yielded)
    assert all(t.config().machines <= n for t in yielded)


@settings(max_examples=60, deadline=None)
@given(w=st.integers(1, 12), k=st.integers(1, 8), cap=st.none() | st.integers(1, 10))
def test_layer_choices_equal_brute_force(w, k, cap):
    got = sp.layer_choices(w, k, max_threads=cap)
    h_max = k if cap is None else min(k, cap)
    brute = [(p, r, h) for p in range(1, w + 1) for r in range(1, w + 1)
             for h in range(1, k + 1) if p * r <= w and h <= h_max]
    assert list(zip(*(c.tolist() for c in got))) == brute
    assert all(c.dtype == np.int64 for c in got)
    assert len(set(zip(got.partitions.tolist(), got.replicas.tolist()))) <= w * w   # <= N^2


@settings(max_examples=30, deadline=None)
@given(w=st.integers(1, 6), k=st.integers(1, 4))
def test_layer_choices_pass_and_neighbours_fail(w, k):
    config, cluster = Config(n_workers=w), _cluster(cores=k)
    for p, r, h in zip(*(c.tolist() for c in sp.layer_choices(w, k))):
        sp.check_layer(LayerPlan(p, h, r), config, cluster)
    _violation("C2", sp.check_layer, LayerPlan(1, k + 1), config, cluster)
    _violation("C3", sp.check_layer, LayerPlan(w + 1, 1), config, cluster)


def test_iter_layer_plans_all_valid_and_distinct():
    config, cluster = Config(n_workers=3), _cluster(cores=2)
    plans = list(sp.iter_layer_plans(3, 2))
    assert len(plans) == len(set(plans)) == sp.layer_space_size(3, 2)
    for plan in plans:
        sp.check_layer(plan, config, cluster)


def _brute_space(n, k, depth, mapping, ps_rule):
    count = 0
    for t in _brute_triples(n, 0, None, ps_rule):
        layer = []
        for p, r, h in itertools.product(range(1, t[2] + 1), range(1, t[2] + 1), range(1, k + 1)):
            if p * r <= t[2]:
                maps = itertools.permutations(range(t[2]), p * r) if mapping else [()]
                layer.extend((p, r, h, m) for m in maps)
        count += sum(1 for _ in itertools.product(layer, repeat=depth))
    return count


@pytest.mark.parametrize("n,k,depth", [(1, 1, 1), (2, 1, 2), (3, 2, 1), (3, 2, 2), (4, 1, 2)])
@pytest.mark.parametrize("mapping", [True, False])
@pytest.mark.parametrize("ps_rule", [True, False])
def test_space_size_equals_enumeration(n, k, depth, mapping, ps_rule):
    size = sp.space_size(n, k, depth, mapping=mapping, ps_for_replicas=ps_rule)
    assert size == _brute_space(n, k, depth, mapping, ps_rule)
    assert size <= sp.paper_bound(n, k, depth)


def test_space_size_paper_combinatorics():
    # Yan et al. 2015, Sec. 5.2: per layer K x (P, R pairs) x mappings; N^3 [K N^2 N!]^L overall.
    assert sp.layer_space_size(4, 3, mapping=False) == 3 * sum(4 // p for p in range(1, 5))
    assert sp.layer_space_size(3, 1) == sum(math.perm(3, s) * sum(1 for p in range(1, 4)
                                                                     for r in range(1, 4)
                                                                     if p * r == s)
                                            for s in range(1, 4))
    assert sp.paper_bound(20, 16, 8) == 20 ** 3 * (16 * 400 * math.factorial(20)) ** 8
    # the Yan et al. 2015 case: 20 machines, 16 cores, 8 layers -- huge, exact, and below the bound
    big = sp.space_size(20, 16, 8)
    assert 10 ** 100 < big < sp.paper_bound(20, 16, 8)
    assert sp.mapping_count(5, 6) == 0 and sp.mapping_count(5, 0) == 1


def test_enumeration_argument_checks():
    for bad in (0, 1.5, True):
        with pytest.raises(SpecError):
            list(sp.resource_triples(bad))
        with pytest.raises(SpecError):
            sp.layer_choices(bad, 2)
    with pytest.raises(SpecError, match="max_threads"):
        sp.layer_choices(2, 2, max_threads=0)
    with pytest.raises(SpecError, match="n_layers"):
        sp.space_size(2, 2, 0)
