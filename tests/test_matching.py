"""Yan et al. 2015, Sec. 5.3: segment-to-worker mapping by maximum-weight bipartite matching."""

import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment

from optimizer import matching as mt
from optimizer.space import ConstraintViolation, check_layer
from perfmodel import partition as pt
from perfmodel import zoo
from perfmodel.errors import SpecError
from perfmodel.layerwise import LayerPlan
from perfmodel.specs import Cluster, Config


# ---------------------------------------------------------------- oracles
def _brute(a):
    """(optimum, lexicographically smallest optimal worker vector) over all injective maps."""
    n_w, n_s = a.shape
    best, arg = None, None
    for perm in itertools.permutations(range(n_w), n_s):    # lexicographic order
        value = sum(int(a[w, j]) for j, w in enumerate(perm))
        if best is None or value > best:
            best, arg = value, perm
    return best, np.array(arg, dtype=np.int64)


def _networkx_optimum(a):
    """Maximum total affinity by networkx's blossom matching on the bipartite graph."""
    n_w, n_s = a.shape
    shift = 1 - int(a.min()) if a.size else 0    # all weights >= 1; every assignment has n_s edges
    g = nx.Graph()
    g.add_nodes_from(("w", w) for w in range(n_w))
    for w, j in itertools.product(range(n_w), range(n_s)):
        g.add_edge(("w", w), ("s", j), weight=int(a[w, j]) + shift)
    pairs = nx.max_weight_matching(g, maxcardinality=True)
    assert len(pairs) == n_s
    return sum(g[u][v]["weight"] for u, v in pairs) - n_s * shift


def _optimum(a):
    rows, cols = linear_sum_assignment(np.asarray(a, dtype=float), maximize=True)
    return int(np.asarray(a)[rows, cols].sum())


def _is_lexicographic_min(a, x):
    """No segment j can take a lower worker, keeping 0..j-1 and the optimum (LSA by forcing)."""
    a = np.asarray(a, dtype=float)
    n_w, n_s = a.shape
    best = _optimum(a)
    big = np.abs(a).sum() + 1
    for j in range(n_s):
        for w in range(x[j]):
            if w in x[:j]:
                continue
            forced = a.copy()
            forced[:, :j] = -big
            forced[x[:j], np.arange(j)] = a[x[:j], np.arange(j)]
            forced[:, j] = -big
            forced[w, j] = a[w, j]
            rows, cols = linear_sum_assignment(forced, maximize=True)
            if forced[rows, cols].sum() == best:
                return False
    return True


def _matrices(max_w=6, lo=-3, hi=12):
    return st.integers(1, max_w).flatmap(
        lambda w: st.integers(0, w).flatmap(
            lambda s: st.lists(st.integers(lo, hi), min_size=w * s, max_size=w * s).map(
                lambda v: np.array(v, dtype=np.int64).reshape(w, s))))


# ---------------------------------------------------------------- match_segments
@settings(max_examples=300, deadline=None)
@given(a=_matrices())
def test_match_equals_brute_force_and_lexicographic_rule(a):
    x = mt.match_segments(a)
    assert x.dtype == np.int64 and x.shape == (a.shape[1],)
    assert len(set(x.tolist())) == len(x)                                   # C3: injective
    assert ((0 <= x) & (x < a.shape[0])).all()
    best, lex = _brute(a)
    assert mt.assignment_value(a, x) == best
    np.testing.assert_array_equal(x, lex)                                   # the tie-break rule


@settings(max_examples=200, deadline=None)
@given(a=_matrices(lo=0, hi=9))
def test_match_equals_networkx(a):
    x = mt.match_segments(a)
    assert mt.assignment_value(a, x) == _networkx_optimum(a)
    y = mt.match_segments(a, tie_break="solver")
    assert mt.assignment_value(a, y) == mt.assignment_value(a, x)
    assert len(set(y.tolist())) == len(y)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), w=st.integers(8, 30), top=st.integers(0, 3))
def test_lexicographic_on_larger_tied_matrices(seed, w, top):
    rng = np.random.default_rng(seed)
    s = int(rng.integers(1, w + 1))
    a = rng.integers(0, top + 1, size=(w, s))            # few values: many ties
    x = mt.match_segments(a)
    assert mt.assignment_value(a, x) == _optimum(a)
    assert len(set(x.tolist())) == s
    assert _is_lexicographic_min(a, x)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), w=st.integers(1, 40), top=st.integers(0, 3),
       blocks=st.integers(1, 4))
def test_vectorized_tie_break_equals_the_plain_one(seed, w, top, blocks):
    """The tie-break with candidates flagged for all segments at once (array operations) makes
    the same moves as checking every segment in turn: the same assignment, on heavily tied
    matrices, also block-structured ones like layer replicas' (kron of a count matrix)."""
    rng = np.random.default_rng(seed)
    s = int(rng.integers(1, w + 1))
    a = rng.integers(0, top + 1, size=(w, s))
    if blocks > 1:
        a = np.kron(np.eye(blocks, dtype=np.int64), a) + np.kron(
            np.ones((blocks, blocks), dtype=np.int64), rng.integers(0, 2, size=(w, s)))
    rows, cols = linear_sum_assignment(a.astype(float), maximize=True)
    x = np.empty(a.shape[1], dtype=np.int64)
    x[cols] = rows
    np.testing.assert_array_equal(mt._lexicographic(a, x), mt._lexicographic_plain(a, x))


def test_tie_cases_with_known_answers():
    np.testing.assert_array_equal(mt.match_segments(np.zeros((4, 3), dtype=int)), [0, 1, 2])
    np.testing.assert_array_equal(mt.match_segments([[1, 0], [1, 1], [0, 1]]), [0, 1])
    np.testing.assert_array_equal(mt.match_segments([[0, 1], [1, 0], [1, 1]]), [1, 0])
    # every worker equally good for both segments, except worker 0 for none: lowest ids 1, 2
    np.testing.assert_array_equal(mt.match_segments([[0, 0], [5, 5], [5, 5], [5, 5]]), [1, 2])
    # anti-diagonal optimum is unique: the tie-break must not touch it
    np.testing.assert_array_equal(mt.match_segments([[0, 0, 9], [0, 9, 0], [9, 0, 0]]),
                                  [2, 1, 0])


def test_determinism():
    rng = np.random.default_rng(7)
    a = rng.integers(0, 3, size=(12, 9))
    first = mt.match_segments(a)
    for _ in range(3):
        np.testing.assert_array_equal(mt.match_segments(a.copy()), first)
        np.testing.assert_array_equal(mt.match_segments(a.astype(float)), first)
        np.testing.assert_array_equal(mt.match_segments(a.tolist()), first)


def test_match_input_errors():
    err = pytest.raises(ConstraintViolation, mt.match_segments, np.zeros((2, 3), dtype=int)).value
    assert err.constraint == "C3" and err.value == 3 and err.limit == 2
    with pytest.raises(SpecError, match="integer"):
        mt.match_segments([[0.5, 1.0]])
    with pytest.raises(SpecError, match="integer"):
        mt.match_segments([[np.nan], [1.0]])
    with pytest.raises(SpecError, match="2-D"):
        mt.match_segments([1, 2, 3])
    with pytest.raises(SpecError, match="exceed"):
        mt.match_segments([[2 ** 60], [0]])
    with pytest.raises(SpecError, match="tie_break"):
        mt.match_segments([[1]], tie_break="random")
    assert mt.match_segments(np.zeros((3, 0))).shape == (0,)


# ---------------------------------------------------------------- the paper's greedy
@settings(max_examples=200, deadline=None)
@given(a=_matrices(lo=0, hi=9))
def test_greedy_is_injective_and_never_better(a):
    g = mt.greedy_segments(a)
    assert len(set(g.tolist())) == len(g) and ((0 <= g) & (g < a.shape[0])).all()
    assert mt.assignment_value(a, g) <= _brute(a)[0]


@settings(max_examples=100, deadline=None)
@given(a=_matrices(lo=0, hi=50))
def test_greedy_optimal_without_conflicts(a):
    if a.shape[1] == 0:
        return
    best = a.argmax(axis=0)
    unique_max = (a == a.max(axis=0)).sum(axis=0) == 1
    if unique_max.all() and len(set(best.tolist())) == len(best):
        np.testing.assert_array_equal(mt.greedy_segments(a), best)
        np.testing.assert_array_equal(mt.match_segments(a), best)


def test_greedy_conflict_rule():
    # both segments prefer worker 0; giving it to segment 1 leaves 4 + 6 > 5 + 1
    np.testing.assert_array_equal(mt.greedy_segments([[5, 6], [4, 1]]), [1, 0])
    np.testing.assert_array_equal(mt.greedy_segments([[5, 4], [0, 3]]), [0, 1])
    # greedy can lose to the matching: 3 segments, chain of conflicts
    a = np.array([[10, 9, 0], [9, 0, 0], [0, 8, 0]])
    assert mt.assignment_value(a, mt.match_segments(a)) >= mt.assignment_value(
        a, mt.greedy_segments(a))


# ---------------------------------------------------------------- map_layer on zoo layers
_CLUSTER = Cluster(machines=20, nic_bandwidth=1.25e9, cores=16)


def _pairs(name, picks):
    dnn = zoo.load(name)
    return [(dnn.layers[i - 1], dnn.layers[i]) for i in picks]


_LAYER_PAIRS = _pairs("adam-mnist", range(1, 5)) + _pairs("adam-imagenet22k", (1, 3, 5, 6, 7))


def _total(prev_layer, layer, prev_plan, p, r):
    act = pt.activation_matrix(prev_layer, layer, prev_plan.partitions, p)
    err = pt.error_matrix(prev_layer, layer, prev_plan.partitions, p)
    return int(act.sum()) * r + int(err.sum()) * prev_plan.replicas


@settings(max_examples=60, deadline=None)
@given(pair=st.sampled_from(_LAYER_PAIRS), w=st.integers(1, 5), data=st.data(),
       backward=st.booleans())
def test_map_layer_beats_every_permutation(pair, w, data, backward):
    prev_layer, layer = pair
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    p_prev = data.draw(st.integers(1, w))
    r_prev = data.draw(st.integers(1, w // p_prev))
    prev_plan = LayerPlan(p_prev, 1, r_prev, tuple(rng.permutation(w)[:p_prev * r_prev].tolist()))
    p = data.draw(st.integers(1, w))
    r = data.draw(st.integers(1, w // p))
    plan = mt.map_layer(prev_layer, layer, prev_plan, p, r, 4, w, backward=backward)
    assert (plan.partitions, plan.replicas, plan.threads) == (p, r, 4)
    check_layer(plan, Config(n_workers=w), _CLUSTER)
    def traffic(lp):
        return mt.remote_traffic(prev_layer, layer, prev_plan, lp, backward=backward)
    got = traffic(plan)
    identity = traffic(LayerPlan(p, 4, r))
    every = [traffic(LayerPlan(p, 4, r, perm)) for perm in itertools.permutations(range(w), p * r)]
    assert got <= identity and got == min(every)
    # remote traffic = total traffic - matched affinity (two independent computations)
    aff = mt.layer_affinity(prev_layer, layer, prev_plan, p, r, w, backward=backward)
    if backward:
        total = _total(prev_layer, layer, prev_plan, p, r)
    else:
        total = int(pt.activation_matrix(prev_layer, layer, p_prev, p).sum()) * r
    assert got == total - mt.assignment_value(aff, plan.workers)


def test_map_layer_follows_the_previous_placement():
    dnn = zoo.load("adam-imagenet22k")
    prev_plan = LayerPlan(4, 1, 1, (3, 0, 2, 1))
    plan = mt.map_layer(dnn.layers[2], dnn.layers[3], prev_plan, 4, 1, 16, 4)   # conv3 -> conv4
    assert plan.workers == (3, 0, 2, 1)          # row stripes stay on their producers' workers
    assert mt.remote_traffic(dnn.layers[2], dnn.layers[3], prev_plan, plan) < \
        mt.remote_traffic(dnn.layers[2], dnn.layers[3], prev_plan, LayerPlan(4, 16))


def test_map_layer_first_layer_and_errors():
    layer = zoo.load("adam-mnist").layers[0]
    assert mt.map_layer(None, layer, None, 2, 2, 3, 5).workers == (0, 1, 2, 3)
    assert mt.remote_traffic(None, layer, None, LayerPlan(2, 1)) == 0
    dnn = zoo.load("adam-mnist")
    prev = LayerPlan(2, 1, 1, (0, 1))
    err = pytest.raises(ConstraintViolation, mt.map_layer, dnn.layers[0], dnn.layers[1], prev,
                        3, 2, 1, 5).value
    assert err.constraint == "C3" and err.value == 6
    err = pytest.raises(ConstraintViolation, mt.map_layer, dnn.layers[0], dnn.layers[1],
                        LayerPlan(2, 1, 1, (0, 7)), 2, 1, 1, 4).value
    assert err.constraint == "C3" and err.value == 7
    with pytest.raises(SpecError, match="prev_plan"):
        mt.map_layer(dnn.layers[0], dnn.layers[1], None, 2, 1, 1, 4)
    with pytest.raises(SpecError, match="partitions"):
        mt.map_layer(None, layer, None, 0, 1, 1, 4)


def test_replica_pairing_matches_layerwise_rule():
    # R(l) = 1 < R(l-1) = 2: the one replica reads from prev replica 0 and sends errors to both
    dnn = zoo.load("adam-mnist")
    prev_layer, layer = dnn.layers[2], dnn.layers[3]                 # fc1 -> fc2, dense
    prev_plan = LayerPlan(1, 1, 2, (0, 1))
    aff = mt.layer_affinity(prev_layer, layer, prev_plan, 1, 1, 3)
    act = int(pt.activation_matrix(prev_layer, layer, 1, 1).sum())
    err = int(pt.error_matrix(prev_layer, layer, 1, 1).sum())
    np.testing.assert_array_equal(aff[:, 0], [act + err, err, 0])
    assert mt.map_layer(prev_layer, layer, prev_plan, 1, 1, 1, 3).workers == (0,)
