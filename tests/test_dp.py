"""The dynamic program of Yan et al. 2015, Sec. 5.3 against brute force; its plans against C1-C4."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from optimizer import dp, exhaustive, plans
from optimizer.matching import match_segments
from optimizer.space import check_plan, resource_triples
from perfmodel import zoo
from perfmodel.errors import SpecError
from perfmodel.layerwise import LayerWise
from perfmodel.specs import DNN, Cluster, Config, Layer


def conv(name, c_in, c_out, h_in, k, s):
    h_out = (h_in - k) // s + 1
    return Layer(name=name, kind="conv", in_shape=[c_in, h_in, h_in], out_shape=[c_out, h_out, h_out],
                 weights=c_out * (c_in * k * k + 1), connections=c_out * h_out * h_out * c_in * k * k,
                 kernel=k, stride=s, padding=0)


def fc(name, n_in, n_out, in_shape=None):
    return Layer(name=name, kind="fc", in_shape=in_shape or [n_in], out_shape=[n_out],
                 weights=n_in * n_out + n_out, connections=n_in * n_out)


@st.composite
def chains(draw):
    """Random chain DNNs of 1-4 layers: optional small convolutions, then fully connected."""
    n_conv = draw(st.integers(0, 2))
    n_fc = draw(st.integers(1 if n_conv == 0 else 0, 4 - n_conv))
    layers, c, h = [], draw(st.integers(1, 3)), draw(st.integers(6, 12))
    for i in range(n_conv):
        k, s, c_out = draw(st.integers(1, min(3, h))), draw(st.integers(1, 2)), draw(st.integers(1, 4))
        layers.append(conv(f"conv{i}", c, c_out, h, k, s))
        c, h = c_out, (h - k) // s + 1
    width = c * h * h
    shape = [c, h, h]
    for i in range(n_fc):
        out = draw(st.integers(2, 40))
        layers.append(fc(f"fc{i}", width, out, in_shape=shape if i == 0 and n_conv else None))
        width, shape = out, None
    return DNN(name="random", layers=layers)


@st.composite
def clusters(draw):
    c = draw(st.floats(1e-10, 1e-8))
    return Cluster(machines=8, cores=draw(st.integers(1, 2)), nic_bandwidth=draw(st.floats(1e7, 1e10)),
                   latency=draw(st.floats(0, 1e-4)), c_muladd=c, c_muladd_mem=c * draw(st.floats(1, 8)),
                   c_act=draw(st.floats(0, 1e-8)), c_err=draw(st.floats(0, 1e-8)),
                   cache_bytes=draw(st.floats(1e2, 1e5)), read_period=draw(st.integers(1, 100)),
                   interference=(1.0, draw(st.floats(1.0, 1.5))))


models = st.builds(LayerWise, mw_position=st.floats(0, 1), working_set=st.just("layer"),
                   read_bandwidth=st.sampled_from(["thread", "machine"]),
                   read_term=st.sampled_from(["printed", "per_replica"]),
                   cache_model=st.sampled_from(["blend", "step"]))


@settings(max_examples=200, deadline=None)
@given(dnn=chains(), cluster=clusters(), model=models,
       triple=st.sampled_from([(0, 1, 1), (0, 1, 2), (1, 1, 2), (1, 2, 2), (2, 2, 2), (1, 3, 1),
                               (0, 1, 3), (2, 2, 3), (1, 1, 4), (3, 1, 4), (2, 3, 2)]))
def test_dynamic_program_equals_brute_force(dnn, cluster, model, triple):
    n_ps, n_mr, n_wr = triple
    config = Config(n_workers=n_wr, n_replicas=n_mr, n_ps=n_ps, epoch_samples=1000)
    pairs, threads = plans.state_space(config, cluster, None)
    assume((len(pairs) * len(threads)) ** len(dnn.layers) <= 300)
    result = dp.solve(dp.Pricer(model, dnn, cluster), config)
    brute, _, _ = exhaustive.best_plan(model, dnn, cluster, config)
    assert result.epoch_time == pytest.approx(brute, rel=1e-9)
    # the program's own plan, priced by the model itself, is worth what the program says
    assert model.evaluate(dnn, cluster, config, result.plan).epoch_time == \
        pytest.approx(result.epoch_time, rel=1e-9)
    check_plan(result.plan, config, cluster, dnn=dnn)  # C1-C4


@settings(max_examples=25, deadline=None)
@given(dnn=chains(), cluster=clusters(), model=models, machines=st.integers(2, 6))
def test_server_pruning_keeps_the_optimum(dnn, cluster, model, machines):
    """Solving only useful_triples finds the same best T_epoch as solving every triple of C1."""
    pricer = dp.Pricer(model, dnn, cluster)
    every = min(dp.solve(pricer, Config(n_workers=t.n_workers, n_replicas=t.n_replicas,
                                        n_ps=t.n_ps, epoch_samples=1000)).epoch_time
                for t in resource_triples(machines))
    best = dp.optimize(model, dnn, cluster.replace(machines=machines), epoch_samples=1000)
    assert best.best.score == pytest.approx(every, rel=1e-12)


def test_optimize_matches_exhaustive_end_to_end():
    dnn = DNN(name="m", layers=zoo.load("adam-mnist").layers[2:5])
    cluster = zoo.cluster("yan2015").replace(machines=4, cores=2)
    model = LayerWise(working_set="layer")
    fast = dp.optimize(model, dnn, cluster, epoch_samples=60000, top=3)
    slow = dp.optimize(model, dnn, cluster, epoch_samples=60000, top=3, exhaustive=True)
    assert [c.config for c in fast.ranked] == [c.config for c in slow.ranked]
    assert fast.best.score == pytest.approx(slow.best.score, rel=1e-12)
    assert slow.n_evaluated > fast.n_evaluated


def test_imagenet22k_on_20_machines():
    """Yan et al. 2015's question: the whole space of 20 machines, in seconds, within C1."""
    result = dp.optimize(LayerWise(working_set="layer"), zoo.load("adam-imagenet22k"),
                         zoo.cluster("yan2015"), epoch_samples=15_000_000, top=5)
    best = result.best
    assert best.config.machines <= 20
    check_plan_from_estimate(best)
    times = [c.score for c in result.ranked]
    assert times == sorted(times)
    print(f"\nImageNet-22K on 20 machines: best {best.config.n_workers}/{best.config.n_replicas}/"
          f"{best.config.n_ps} at {best.score / 60:.1f} min, searched in {result.seconds:.2f} s")


def check_plan_from_estimate(candidate):
    for layer in candidate.estimate.meta["layers"]:
        assert len(set(layer["workers"])) == layer["partitions"] * layer["replicas"]
        assert max(layer["workers"]) < candidate.config.n_workers


def test_not_a_chain():
    with pytest.raises(SpecError, match="chain"):
        dp.Pricer(LayerWise(), zoo.load("resnet50"), zoo.cluster("yan2015"))


def test_exhaustive_refuses_huge_spaces():
    with pytest.raises(SpecError, match="exhaustive"):
        exhaustive.best_plan(LayerWise(), zoo.load("adam-imagenet22k"), zoo.cluster("yan2015"),
                             Config(n_workers=8, n_replicas=1, n_ps=0))


def test_useful_triples_fit_c1():
    for machines in range(1, 12):
        for n_ps, n_mr, n_wr in dp.useful_triples(machines):
            assert n_ps + n_mr * n_wr <= machines and (n_mr == 1 or n_ps >= 1)


# ---------------------------------------------------------------- speed-ups stay exact
def _reference_items(pricer, l, prev, cur):
    """The plain pricing of a transition: map_layer, then the model's own traffic."""
    from optimizer.matching import map_layer
    from perfmodel import layerwise as lw

    before = dp.canonical_plan(*prev)
    after = map_layer(pricer.dnn.layers[l - 1], pricer.dnn.layers[l], before, cur[0], cur[1], 1,
                      plans.used_workers(prev, cur))
    plan = pricer._plan_with(**{str(l - 1): before, str(l): after})
    a, _ = lw._segment_traffic(pricer.dnn, l, plan)
    _, e = lw._segment_traffic(pricer.dnn, l - 1, plan)
    return float(a.max()), float(e.max()), after.workers


@settings(max_examples=60, deadline=None)
@given(dnn=chains(), cluster=clusters(), n_workers=st.integers(1, 9))
def test_pricing_equals_map_layer(dnn, cluster, n_workers):
    """Closed form, greedy look-ahead and matching give map_layer's items (and mapping)."""
    assume(len(dnn.layers) >= 2)
    pricer = dp.Pricer(LayerWise(working_set="layer"), dnn, cluster)
    pairs, _ = plans.state_space(Config(n_workers=n_workers, n_replicas=1, n_ps=1), cluster, None)
    for l in range(1, len(dnn.layers)):
        a, e = pricer.item_matrix(l, pairs, pairs)       # vectorized path (closed form in bulk)
        a_lb, e_lb = pricer.item_bounds(l, pairs, pairs)  # rule 4's bounds hold
        assert (a_lb <= a).all() and (e_lb <= e).all()
        for i, prev in enumerate(map(tuple, pairs)):
            for j, cur in enumerate(map(tuple, pairs)):
                ra, re_, workers = _reference_items(pricer, l, prev, cur)
                assert (a[i, j], e[i, j]) == (ra, re_)
                assert pricer.items(l, prev, cur) == (ra, re_)
                assert tuple(pricer.mapping(l, prev, cur).tolist()) == workers
    assert sum(pricer.stats.values()) > 0


def test_greedy_is_the_lexicographic_matching():
    """_greedy answers exactly when an assignment reaches the column maxima, and then with
    match_segments' own mapping."""
    import itertools

    from optimizer.matching import match_segments

    rng = np.random.default_rng(4)
    answered = 0
    for _ in range(1500):
        n_w = int(rng.integers(1, 7))
        n_s = int(rng.integers(1, n_w + 1))
        aff = rng.integers(0, 3, size=(n_w, n_s)) * (rng.random((n_w, n_s)) < 0.6)
        aff[:, rng.random(n_s) < 0.2] = 0
        got = dp._greedy(aff)
        if got is None:
            best = max(sum(aff[p[j], j] for j in range(n_s))
                       for p in itertools.permutations(range(n_w), n_s))
            assert best < aff.max(axis=0).sum()
        else:
            answered += 1
            assert np.array_equal(got, match_segments(aff))
    assert answered > 500


@settings(max_examples=300, deadline=None)
@given(sizes=st.tuples(st.integers(1, 30), st.integers(1, 30), st.integers(1, 30)),
       p1=st.integers(1, 12), p=st.integers(1, 12), r1=st.integers(1, 5), r=st.integers(1, 5))
def test_dense_mapping_is_the_lexicographic_matching(sizes, p1, r1, p, r):
    """Pricing 1b: the counting construction for a dense consumer with replicas gives
    match_segments' mapping of the affinity (empty segments and idle workers included)."""
    from perfmodel import partition as pt

    a, b, c = sizes
    prev, layer = fc("a", a, b), fc("b", b, c)
    assert pt.is_dense_pair(prev, layer)
    aff = dp._affinity(pt.cached_transfer_matrix(prev, layer, p1, p, False),
                       pt.cached_transfer_matrix(prev, layer, p1, p, True), p1, r1, p, r)
    got = dp._dense_workers(np.asarray(pt.cached_segment_sizes(prev, p1)),
                            np.asarray(pt.cached_segment_sizes(layer, p)), p1, r1, p, r)
    assert np.array_equal(got, match_segments(aff))


@pytest.mark.parametrize("l, p1, r1, p, r", [(6, 274, 1, 131, 2), (7, 301, 1, 170, 3),
                                             (7, 300, 2, 512, 1), (5, 16, 16, 256, 1),
                                             (6, 137, 3, 400, 1), (5, 9, 4, 40, 6),
                                             (6, 64, 4, 64, 4)])
def test_dense_mapping_on_imagenet22k(l, p1, r1, p, r):
    """The same on Yan et al. 2015's dense layers, through the pricer: items and mapping."""
    from perfmodel import partition as pt

    pricer = dp.Pricer(LayerWise(working_set="layer"), zoo.load("adam-imagenet22k"),
                       zoo.cluster("yan2015"))
    prev, layer = pricer.dnn.layers[l - 1], pricer.dnn.layers[l]
    act = pt.cached_transfer_matrix(prev, layer, p1, p, False)
    err = pt.cached_transfer_matrix(prev, layer, p1, p, True)
    want = match_segments(dp._affinity(act, err, p1, r1, p, r))
    assert pricer.items(l, (p1, r1), (p, r)) == dp._items_of(act, err, want, p1, r1, p, r)
    assert pricer.stats["dense"] == 1 and pricer.stats["matched"] == 0
    assert np.array_equal(pricer.mapping(l, (p1, r1), (p, r)), want)


def test_compute_table_equals_layer_costs():
    for name in ("adam-imagenet22k", "adam-mnist", "alexnet"):
        for cache_model in ("blend", "step"):
            pricer = dp.Pricer(LayerWise(working_set="layer", cache_model=cache_model),
                               zoo.load(name), zoo.cluster("yan2015"))
            for l in range(len(pricer.dnn.layers)):
                table = pricer.compute_table(l, 40)
                assert np.array_equal(table[1:], [pricer.compute(l, p) for p in range(1, 41)])


@settings(max_examples=40, deadline=None)
@given(dnn=chains(), cluster=clusters(), model=models,
       triple=st.sampled_from([(0, 1, 3), (1, 1, 4), (2, 2, 3), (3, 1, 5), (1, 2, 4)]))
def test_bounds_keep_the_optimum(dnn, cluster, model, triple):
    """Rule 3: with a bound >= the optimum the program is unchanged, below it it says None;
    rule 2: the triple bound is below the optimum."""
    n_ps, n_mr, n_wr = triple
    config = Config(n_workers=n_wr, n_replicas=n_mr, n_ps=n_ps, epoch_samples=1000)
    pricer = dp.Pricer(model, dnn, cluster.replace(machines=12))
    full = dp.solve(pricer, config)
    assert dp.triple_bounds(pricer, [config])[0] <= full.epoch_time * (1 + 1e-12)
    same = dp.solve(pricer, config, bound=full.epoch_time)
    assert same.epoch_time == pytest.approx(full.epoch_time, rel=1e-12)
    assert model.evaluate(dnn, pricer.cluster, config, same.plan).epoch_time == \
        pytest.approx(same.epoch_time, rel=1e-9)
    assert dp.solve(pricer, config, bound=full.epoch_time * (1 - 1e-6)) is None


@settings(max_examples=25, deadline=None)
@given(dnn=chains(), cluster=clusters(), model=models, machines=st.integers(2, 7),
       top=st.integers(1, 4))
def test_pruned_ranking_equals_full_ranking(dnn, cluster, model, machines, top):
    """Rules 2-3 keep the whole top-k: same configurations, same order, same times."""
    pricer = dp.Pricer(model, dnn, cluster)
    full = []
    for index, (n_ps, n_mr, n_wr) in enumerate(dp.useful_triples(machines)):
        config = Config(n_workers=n_wr, n_replicas=n_mr, n_ps=n_ps, epoch_samples=1000)
        full.append((dp.solve(pricer, config).epoch_time, config.machines, index, config))
    full.sort(key=lambda item: item[:3])
    got = dp.optimize(model, dnn, cluster.replace(machines=machines), epoch_samples=1000, top=top)
    assert [c.config for c in got.ranked] == [item[3] for item in full[:top]]
    assert [c.score for c in got.ranked] == pytest.approx([item[0] for item in full[:top]],
                                                          rel=1e-12)
    for c in got.ranked:  # each plan, priced by the model itself, is worth its score
        assert c.estimate.epoch_time == pytest.approx(c.score, rel=1e-9)


def test_imagenet22k_pruned_ranking_equals_full_ranking():
    model, dnn = LayerWise(working_set="layer"), zoo.load("adam-imagenet22k")
    cluster = zoo.cluster("yan2015")
    pricer = dp.Pricer(model, dnn, cluster)
    full = []
    for index, (n_ps, n_mr, n_wr) in enumerate(dp.useful_triples(20)):
        config = Config(n_workers=n_wr, n_replicas=n_mr, n_ps=n_ps, epoch_samples=15_000_000)
        full.append((dp.solve(pricer, config).epoch_time, config.machines, index, config))
    full.sort(key=lambda item: item[:3])
    got = dp.optimize(model, dnn, cluster, epoch_samples=15_000_000, top=5,
                      max_workers_per_replica=20)  # the whole space, as `full`
    assert [c.config for c in got.ranked] == [item[3] for item in full[:5]]
    assert [c.score for c in got.ranked] == pytest.approx([item[0] for item in full[:5]], rel=1e-12)
    assert got.meta["pruned"] > 0 and got.meta["solved"] + got.meta["pruned"] == len(full)
    assert got.meta["triples"] == len(full)


def test_pricing_on_imagenet22k_layers():
    """The fast pricing and its bounds on Yan et al. 2015's real layers (conv halos, fused pooling,
    conv -> fc, fc -> softmax), with layer replicas, against map_layer."""
    pricer = dp.Pricer(LayerWise(working_set="layer"), zoo.load("adam-imagenet22k"),
                       zoo.cluster("yan2015"))
    pairs, _ = plans.state_space(Config(n_workers=12, n_replicas=1, n_ps=1), pricer.cluster, None)
    rng = np.random.default_rng(0)
    for l in range(1, len(pricer.dnn.layers)):
        a, e = pricer.item_matrix(l, pairs, pairs)
        a_lb, e_lb = pricer.item_bounds(l, pairs, pairs)
        assert (a_lb <= a).all() and (e_lb <= e).all()
        for i, j in rng.integers(0, len(pairs), size=(25, 2)):
            ra, re_, workers = _reference_items(pricer, l, tuple(pairs[i]), tuple(pairs[j]))
            assert (a[i, j], e[i, j]) == (ra, re_)
            assert tuple(pricer.mapping(l, tuple(pairs[i]), tuple(pairs[j])).tolist()) == workers


def test_empty_segments_priced_through_the_compressed_problem():
    """More partitions than rows: when every optimal assignment of the compressed problem has
    the same items, the pricer reuses them; they equal map_layer's on the expanded problem."""
    pricer = dp.Pricer(LayerWise(working_set="layer"), zoo.load("adam-imagenet22k"),
                       zoo.cluster("yan2015"))
    reused = 0
    for l in range(1, 5):
        u1, u = pricer._units[l - 1], pricer._units[l]
        for p1, p in [(u1, u + 1), (u1 + 3, u), (u1 + 1, u + 5), (2 * u1 + 1, 2 * u + 3),
                      (u1 // 2, u + 2), (3, u + 7)]:
            for r1, r in [(1, 1), (1, 2), (2, 1)]:
                before = pricer.stats["compressed"]
                got = pricer.items(l, (p1, r1), (p, r))
                reused += pricer.stats["compressed"] - before
                ra, re_, _ = _reference_items(pricer, l, (p1, r1), (p, r))
                assert got == (ra, re_), (l, p1, r1, p, r)
    assert reused > 10


def test_tie_free_items_are_every_optimal_assignments():
    """_tie_free_items answers only when all optimal assignments agree: check against every
    optimal assignment by brute force on small random count matrices."""
    import itertools

    rng = np.random.default_rng(7)
    answered = 0
    for _ in range(400):
        p1, p = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        r1, r = int(rng.integers(1, 3)), int(rng.integers(1, 3))
        if max(p1 * r1, p * r) > 6:
            continue
        act = rng.integers(0, 3, size=(p1, p)) * (rng.random((p1, p)) < 0.7)
        err = rng.integers(0, 3, size=(p1, p)) * (rng.random((p1, p)) < 0.7)
        got = dp._tie_free_items(act, err, p1, r1, p, r)
        aff = dp._affinity(act, err, p1, r1, p, r)
        n_w, n_s = aff.shape
        values = {}
        for perm in itertools.permutations(range(n_w), n_s):
            w = np.array(perm)
            values.setdefault(int(aff[w, np.arange(n_s)].sum()), set()).add(
                dp._items_of(act, err, w, p1, r1, p, r))
        optimal = values[max(values)]
        if got is not None:
            answered += 1
            assert optimal == {got}
    assert answered > 50


@pytest.mark.parametrize("layers, machines", [(4, 256), (8, 64), (2, 128)])
def test_large_searches_are_consistent(layers, machines):
    """Bounds, lazy transitions and compressed problems on Yan et al. 2015's DNN at scale: every
    ranked plan is worth its score, the best is the program's own optimum for its triple,
    and the runner-ups' triples have no better plan."""
    dnn = DNN(name="prefix", layers=zoo.load("adam-imagenet22k").layers[:layers])
    model, cluster = LayerWise(working_set="layer"), zoo.cluster("yan2015").replace(machines=machines)
    got = dp.optimize(model, dnn, cluster, epoch_samples=15_000_000, top=3)
    pricer = dp.Pricer(model, dnn, cluster)
    for c in got.ranked:
        assert c.estimate.epoch_time == pytest.approx(c.score, rel=1e-9)
        full = dp.solve(pricer, c.config)
        assert full.epoch_time == pytest.approx(c.score, rel=1e-9)


@pytest.mark.parametrize("machines, layers, cache_model, read_term", [
    (40, 2, "blend", "printed"), (33, 8, "step", "per_replica"), (64, 4, "blend", "per_replica")])
def test_lazy_triple_order_is_the_sorted_order(machines, layers, cache_model, read_term):
    """Rule 2b: the quick bounds are below the triple bounds, and the heap gives the
    configurations in the order of sorting every triple bound (ties: more workers first)."""
    dnn = DNN(name="prefix", layers=zoo.load("adam-imagenet22k").layers[:layers])
    model = LayerWise(working_set="layer", cache_model=cache_model, read_term=read_term,
                      mw_position=0.5, read_bandwidth="thread")
    pricer = dp.Pricer(model, dnn, zoo.cluster("yan2015").replace(machines=machines))
    configs = [Config(n_workers=w, n_replicas=r, n_ps=p, epoch_samples=15_000_000)
               for p, r, w in dp.useful_triples(machines)]
    bounds = dp.triple_bounds(pricer, configs)
    assert (dp.quick_triple_bounds(pricer, configs) <= bounds).all()
    expected = np.lexsort((-np.array([c.n_workers for c in configs]), bounds)).tolist()
    order = dp._TripleOrder(pricer, configs, None)
    assert order.first(3) == expected[:3]
    assert list(order) == expected
    assert [order.bound(k) for k in expected] == bounds[expected].tolist()


def _triple_bound_every_r(pricer, config):
    """Rules 2 and 11's bound with every R <= N_wr (the plain computation)."""
    from perfmodel import layerwise as lw

    dnn, cluster = pricer.dnn, pricer.cluster
    threads = np.unique(np.arange(1, cluster.cores + 1))
    per = (lw.interference_factor(threads, cluster.interference) / threads)[:, None]
    charges = dp._charges(pricer, config.n_workers, threads)
    prefix = np.stack([np.minimum.accumulate(pricer.compute_table(l, config.n_workers)[None, :]
                                             * per + charges[l], axis=1)
                       for l in range(len(dnn.layers))])             # (L, H, N_wr + 1)
    r = np.arange(1, (config.n_workers if config.n_ps else 1) + 1)
    reads = dp._read_costs(pricer.layer_model, dnn, cluster, config, r, threads)
    node = (prefix[:, :, config.n_workers // r] / (r * config.n_replicas)[None, None, :]
            + np.transpose(reads, (2, 1, 0)))
    return node.reshape(len(dnn.layers), -1).min(axis=1).sum() * config.epoch_samples


def _floors_below_items(pricer, n_workers):
    """Rule 11: every transition's exact items are >= the floors of its two states."""
    pairs, _ = plans.state_space(Config(n_workers=n_workers, n_replicas=1, n_ps=1),
                                 pricer.cluster, None)
    for l in range(1, len(pricer.dnn.layers)):
        a, e = pricer.transfer_floors(l, n_workers)
        assert np.isinf(a[0]) and np.isinf(e[0]) and (a[1:] >= 0).all() and (e[1:] >= 0).all()
        for prev in pairs.tolist():
            for cur in pairs.tolist():
                got_a, got_e = pricer.items(l, tuple(prev), tuple(cur))
                assert a[cur[0]] <= got_a and e[prev[0]] <= got_e, (l, prev, cur)


@settings(max_examples=60, deadline=None)
@given(dnn=chains(), cluster=clusters(), n_workers=st.integers(1, 9))
def test_transfer_floors_below_every_transition(dnn, cluster, n_workers):
    """Rule 11's floors are below the items of every transition, whatever the other
    layer's state and the replicas (random chains, empty segments included)."""
    _floors_below_items(dp.Pricer(LayerWise(working_set="layer"), dnn, cluster), n_workers)


def test_transfer_floors_below_every_transition_on_imagenet22k():
    dnn = DNN(name="prefix", layers=zoo.load("adam-imagenet22k").layers)
    pricer = dp.Pricer(LayerWise(working_set="layer"), dnn, zoo.cluster("yan2015"))
    _floors_below_items(pricer, 6)
    a, e = pricer.transfer_floors(6, 64)   # fc6 -> fc7, dense: the floors are not trivial
    assert (a[2:] > 0).all() and (e[2:] > 0).all()


@settings(max_examples=120, deadline=None)
@given(dnn=chains(), cluster=clusters(), model=models,
       triple=st.sampled_from([(0, 1, 1), (0, 1, 3), (1, 1, 2), (1, 2, 2), (2, 2, 3), (1, 3, 1),
                               (1, 1, 4), (3, 1, 4), (2, 3, 2)]))
def test_charged_triple_bound_below_brute_force(dnn, cluster, model, triple):
    """Rule 11: the key (charged node minima) and its quick bound are below the
    triple's optimum by brute force, and so is every state's charged bound in the
    program (the program still equals brute force with its pruning)."""
    n_ps, n_mr, n_wr = triple
    config = Config(n_workers=n_wr, n_replicas=n_mr, n_ps=n_ps, epoch_samples=1000)
    pairs, threads = plans.state_space(config, cluster, None)
    assume((len(pairs) * len(threads)) ** len(dnn.layers) <= 300)
    pricer = dp.Pricer(model, dnn, cluster)
    brute, _, _ = exhaustive.best_plan(model, dnn, cluster, config)
    key = dp.triple_bounds(pricer, [config])[0]
    assert dp.quick_triple_bounds(pricer, [config])[0] <= key
    assert key <= brute * (1 + 1e-12)
    _, _, _, _, layer_min, _, _, _ = dp._program(pricer, config, None)
    assert layer_min.sum() * config.epoch_samples <= brute * (1 + 1e-12)
    assert dp.solve(pricer, config, bound=brute * (1 + 1e-9)).epoch_time == \
        pytest.approx(brute, rel=1e-9)


def test_charged_triple_bound_is_tight_on_imagenet22k():
    """Rule 11's key is within 2% of the optimum of the best triples of 256 machines (the
    node minima alone were 5-10% below)."""
    dnn = DNN(name="prefix", layers=zoo.load("adam-imagenet22k").layers)
    pricer = dp.Pricer(LayerWise(working_set="layer"), dnn,
                       zoo.cluster("yan2015").replace(machines=256))
    for w, r, p in ((52, 4, 48), (32, 7, 32), (64, 3, 64)):
        config = Config(n_workers=w, n_replicas=r, n_ps=p, epoch_samples=15_000_000)
        best = dp.solve(pricer, config).epoch_time
        assert 0.98 * best <= dp.triple_bounds(pricer, [config])[0] <= best


@pytest.mark.parametrize("layers, mw_position, read_bandwidth", [
    (2, 0.0, "machine"), (8, 1.0, "thread"), (4, 0.3, "machine")])
def test_triple_bounds_stop_early_and_equal_every_r(layers, mw_position, read_bandwidth):
    """Trying R in chunks and stopping once the reads alone are too dear gives the bound of
    every R, to the bit."""
    dnn = DNN(name="prefix", layers=zoo.load("adam-imagenet22k").layers[:layers])
    model = LayerWise(working_set="layer", mw_position=mw_position, read_bandwidth=read_bandwidth)
    pricer = dp.Pricer(model, dnn, zoo.cluster("yan2015").replace(machines=300))
    configs = [Config(n_workers=w, n_replicas=r, n_ps=p, epoch_samples=15_000_000)
               for p, r, w in dp.useful_triples(300) if w in (1, 2, 7, 17, 40, 150, 299)]
    got = dp.triple_bounds(pricer, configs)
    assert got.tolist() == [_triple_bound_every_r(pricer, c) for c in configs]


def test_mean_bounds_hold_for_every_assignment():
    """Rule 4's mean bounds are below the items of every assignment (not only the optimal
    ones), by brute force over small random count matrices with layer replicas."""
    import itertools

    rng = np.random.default_rng(11)
    tight = 0
    for _ in range(300):
        p1, p = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        r1, r = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        if max(p1 * r1, p * r) > 6:
            continue
        act = rng.integers(0, 4, size=(p1, p)) * (rng.random((p1, p)) < 0.7)
        err = rng.integers(0, 4, size=(p1, p)) * (rng.random((p1, p)) < 0.7)
        mean_a, mean_e = dp._mean_bounds(dp._sums(act), dp._sums(err), p1, r1, p, r)
        aff = dp._affinity(act, err, p1, r1, p, r)
        n_w, n_s = aff.shape
        lowest = (np.inf, np.inf)
        for perm in itertools.permutations(range(n_w), n_s):
            a, e = dp._items_of(act, err, np.array(perm), p1, r1, p, r)
            assert mean_a <= a and mean_e <= e
            lowest = (min(lowest[0], a), min(lowest[1], e))
        tight += lowest[0] == mean_a or lowest[1] == mean_e
    assert tight > 20


def _price_every_transition(pricer, l, prev_pairs, cur_pairs, mask, *args):
    """Rule 8 undone: every transition within the bound priced (the plain computation)."""
    return pricer.item_matrix(l, prev_pairs, cur_pairs, mask, lazy=True)


@settings(max_examples=40, deadline=None)
@given(dnn=chains(), cluster=clusters(), model=models,
       triple=st.sampled_from([(0, 1, 4), (1, 1, 4), (2, 2, 3), (3, 1, 6), (1, 2, 5)]))
def test_lazy_pricing_gives_the_same_program(dnn, cluster, model, triple):
    """Rule 8: pricing only what a state's minimum needs gives the same values, plans and
    tie-breaks as pricing every transition, with and without a bound."""
    n_ps, n_mr, n_wr = triple
    config = Config(n_workers=n_wr, n_replicas=n_mr, n_ps=n_ps, epoch_samples=1000)
    lazy = dp.solve(dp.Pricer(model, dnn, cluster), config)
    lazy_bounded = dp.solve(dp.Pricer(model, dnn, cluster), config, bound=lazy.epoch_time * 1.01)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(dp, "_lazy_items", _price_every_transition)
        full = dp.solve(dp.Pricer(model, dnn, cluster), config)
        full_bounded = dp.solve(dp.Pricer(model, dnn, cluster), config,
                                bound=lazy.epoch_time * 1.01)
    assert (lazy.epoch_time, lazy.states) == (full.epoch_time, full.states)
    assert (lazy_bounded.epoch_time, lazy_bounded.states) == \
        (full_bounded.epoch_time, full_bounded.states)


@pytest.mark.parametrize("layers, machines", [(8, 40), (4, 64)])
def test_lazy_pricing_on_imagenet22k(layers, machines, monkeypatch):
    """Rule 8 on Yan et al. 2015's layers (replicas, conv halos, empty segments): the same
    optimum and plan as pricing every transition, and the relaxed value below it (rule 7)."""
    dnn = DNN(name="prefix", layers=zoo.load("adam-imagenet22k").layers[:layers])
    model, cluster = LayerWise(working_set="layer"), zoo.cluster("yan2015").replace(machines=machines)
    configs = [Config(n_workers=w, n_replicas=r, n_ps=p, epoch_samples=15_000_000)
               for w, r, p in [(16, 2, 8), (12, 3, 4), (machines // 2, 1, machines // 2)]]
    for config in configs:
        lazy = dp.solve(dp.Pricer(model, dnn, cluster), config)
        with monkeypatch.context() as m:
            m.setattr(dp, "_lazy_items", _price_every_transition)
            full = dp.solve(dp.Pricer(model, dnn, cluster), config)
        assert (lazy.epoch_time, lazy.states) == (full.epoch_time, full.states)
        low = dp.relaxed_value(dp.Pricer(model, dnn, cluster), config, lazy.epoch_time * 2)
        assert low <= lazy.epoch_time
        assert dp.relaxed_value(dp.Pricer(model, dnn, cluster), config, low * (1 - 1e-6)) is None


def _relaxed_every_predecessor(pricer, l, pairs, prev, cur, best, node, lag, c_item, n_mr,
                               room):
    """Rule 10 undone: every transition at its lower bounds, every predecessor at once."""
    r_prev = pairs[prev, 1].astype(float) * n_mr
    r_cur = pairs[cur, 1].astype(float) * n_mr
    b0 = best.min(axis=1)
    b1 = (best + lag[None, :] / r_prev[:, None]).min(axis=1)
    a, e = pricer.item_bounds(l, pairs[prev], pairs[cur])
    y0, y1 = dp._arrivals(a, e, b0, b1, c_item, r_prev, r_cur)
    via1 = y1.min(axis=0)[:, None] + lag[None, :] / r_cur[:, None]
    return node + np.minimum(via1, y0.min(axis=0)[:, None])


def _relaxed_both(model, dnn, cluster, config, bound):
    """(relaxed_value, the same with rule 10 undone), each on a fresh pricer."""
    fast = dp.relaxed_value(dp.Pricer(model, dnn, cluster), config, bound)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(dp, "_relaxed_step", _relaxed_every_predecessor)
        plain = dp.relaxed_value(dp.Pricer(model, dnn, cluster), config, bound)
    return fast, plain


@settings(max_examples=40, deadline=None)
@given(dnn=chains(), cluster=clusters(), model=models,
       triple=st.sampled_from([(0, 1, 4), (1, 1, 4), (2, 2, 3), (3, 1, 6), (1, 2, 5)]),
       scale=st.sampled_from([0.5, 0.9, 1.0, 1.05, 2.0]))
def test_relaxed_predecessors_in_order_give_the_same_value(dnn, cluster, model, triple, scale):
    """Rule 10: taking predecessors in increasing order of their best, only while they can
    lower a value within the bound, gives the relaxed value to the bit (or None alike)."""
    n_ps, n_mr, n_wr = triple
    config = Config(n_workers=n_wr, n_replicas=n_mr, n_ps=n_ps, epoch_samples=1000)
    optimum = dp.solve(dp.Pricer(model, dnn, cluster), config).epoch_time
    fast, plain = _relaxed_both(model, dnn, cluster, config, optimum * scale)
    assert fast == plain
    if scale >= 1.0:
        assert fast is not None and fast <= optimum * (1 + 1e-12)


@pytest.mark.parametrize("layers, machines", [(8, 40), (4, 64)])
def test_relaxed_predecessors_in_order_on_imagenet22k(layers, machines):
    """Rule 10 on Yan et al. 2015's layers, at bounds around the relaxed value."""
    dnn = DNN(name="prefix", layers=zoo.load("adam-imagenet22k").layers[:layers])
    model, cluster = LayerWise(working_set="layer"), zoo.cluster("yan2015").replace(machines=machines)
    for w, r, p in [(16, 2, 8), (12, 3, 4), (machines // 2, 1, machines // 2)]:
        config = Config(n_workers=w, n_replicas=r, n_ps=p, epoch_samples=15_000_000)
        fast, plain = _relaxed_both(model, dnn, cluster, config, 1e12)
        assert fast == plain
        for scale in (1 - 1e-6, 1.0, 1.01):
            assert _relaxed_both(model, dnn, cluster, config, fast * scale)[0] == \
                _relaxed_both(model, dnn, cluster, config, fast * scale)[1]


def _dominates(big, small):
    """Rule 9: ``big`` has at least ``small``'s workers and read lanes, same N_mr, both with
    servers (or both serverless with one replica)."""
    def lanes(c):
        return 0 if c.n_ps == 0 else min(max(c.n_ps, 1), c.n_workers)
    same = (big.n_ps == 0) == (small.n_ps == 0) and big.n_replicas == small.n_replicas
    return same and big.n_workers >= small.n_workers and lanes(big) >= lanes(small)


@settings(max_examples=25, deadline=None)
@given(dnn=chains(), cluster=clusters(), model=models, machines=st.integers(3, 8))
def test_dominating_triples_are_no_slower(dnn, cluster, model, machines):
    """Rule 9: a triple with the same N_mr and at least the workers and read lanes of
    another (both with servers, or both serverless) has an optimum no larger, and
    :class:`optimizer.dp._Dominance` finds exactly those triples."""
    pricer = dp.Pricer(model, dnn, cluster)
    configs = [Config(n_workers=w, n_replicas=r, n_ps=p, epoch_samples=1000)
               for p, r, w in dp.useful_triples(machines)]
    optima = [dp.solve(pricer, c).epoch_time for c in configs]
    order = dp._Dominance(configs)
    for k, small in enumerate(configs):
        for j, big in enumerate(configs):
            if _dominates(big, small):
                assert optima[j] <= optima[k] * (1 + 1e-12)
        for j, t in enumerate(optima):
            order.low[:] = -np.inf
            order.raise_to(j, t)
            assert (order.floor(k) == t) == _dominates(configs[j], small)
