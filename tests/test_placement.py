"""Tests of perfmodel.placement: topologies, ECMP routes, placement strategies, max-min fairness.

Jain, Kumar, Mao. Characterizing Distributed Deep Learning Training
Performance in Datacenters.  Sec. 4.1 (rack topology), Sec. 4.3 (strategies),
Sec. 4.4 (8 racks x 8 hosts at 10 Gbps, 8 jobs of 1 PS + 7 workers).

The simulator is tested in ``test_placement_sim.py``, the optimizer in
``test_placement_optimize.py``.
"""

import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import perfmodel.placement as pl
from perfmodel.errors import Infeasible, SpecError
from perfmodel.placement import (
    Placement,
    bottleneck_check,
    clustered,
    colocated,
    fat_tree,
    from_string,
    link_loads,
    max_min_rates,
    max_min_rates_reference,
    paper_racks,
    place,
    racks,
    random_placement,
    star,
    strided,
)

B10 = 10e9 / 8          # 10 Gbps in bytes/s
PAPER = paper_racks()


def test_public_names_exist():
    for name in pl.__all__:
        assert hasattr(pl, name), name


# ------------------------------------------------------------------ topology

def test_paper_preset_matches_seed_002():
    t = PAPER
    assert (t.n_hosts, t.n_racks, t.n_arcs) == (64, 8, 2 * (64 + 8))
    assert np.all(t.capacity == B10) and np.all(t.latency == 15e-9)
    assert t.oversubscription == 8.0       # 8 hosts x 10 Gbps over one 10 Gbps uplink
    kinds = nx.get_node_attributes(t.graph, "kind")
    assert sorted(set(kinds.values())) == ["host", "top", "tor"]
    assert [int(t.rack_of[h]) for h in (0, 7, 8, 63)] == [0, 0, 1, 7]


def test_routes_in_rack_and_across_racks():
    t = PAPER
    arcs, frac = t.route(0, 1)
    assert [t.arcs[a] for a in arcs] == [("h0", "tor0"), ("tor0", "h1")]
    arcs, frac = t.route(63, 0)
    assert [t.arcs[a] for a in arcs] == [("h63", "tor7"), ("tor7", "top0"), ("top0", "tor0"),
                                         ("tor0", "h0")]
    assert frac.tolist() == [1.0] * 4
    assert t.path_latency(63, 0) == pytest.approx(4 * 15e-9)
    assert t.route("h63", "h0")[0].tolist() == arcs.tolist()


def test_ecmp_split_over_top_switches():
    t = racks(4, 2, B10, n_top=4)
    arcs, frac = t.route(0, 7)
    names = [t.arcs[a] for a in arcs]
    ups = [f for a, f in zip(names, frac) if a[0] == "tor0"]
    assert len(ups) == 4 and ups == [0.25] * 4
    assert t.oversubscription == pytest.approx(2 * B10 / (4 * B10))


def test_oversubscription_sets_uplink_capacity():
    t = racks(4, 8, B10, oversubscription=4)
    up = t.uplink_arcs()
    assert np.allclose(t.capacity[up], 8 * B10 / 4)
    assert t.oversubscription == 4.0
    t2 = racks(4, 8, B10, n_top=2, uplink_bandwidth=2 * B10)
    assert t2.oversubscription == pytest.approx(2.0)


def test_fat_tree_shape_and_core_split():
    k = 4
    t = fat_tree(k)
    kinds = list(nx.get_node_attributes(t.graph, "kind").values())
    assert t.n_hosts == k ** 3 // 4
    assert kinds.count("core") == (k // 2) ** 2
    assert kinds.count("agg") == kinds.count("tor") == k * k // 2
    assert t.oversubscription == 1.0
    arcs, frac = t.route(0, t.n_hosts - 1)           # different pods
    core_in = [f for a, f in zip(arcs, frac) if t.arcs[a][1].startswith("core")]
    assert len(core_in) == (k // 2) ** 2 and np.allclose(core_in, 1 / (k // 2) ** 2)
    assert t.route(0, 1)[0].size == 2                 # same edge switch


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["fattree:4", "racks:3x2", "racks3top", "paper"]), st.data())
def test_routes_conserve_flow(name, data):
    t = racks(3, 2, B10, n_top=3) if name == "racks3top" else from_string(name)
    s = data.draw(st.integers(0, t.n_hosts - 1))
    d = data.draw(st.integers(0, t.n_hosts - 1).filter(lambda x: x != s))
    arcs, frac = t.route(s, d)
    net = {}
    for a, f in zip(arcs, frac):
        u, v = t.arcs[a]
        net[u] = net.get(u, 0.0) - f
        net[v] = net.get(v, 0.0) + f
    src, dst = t.hosts[s], t.hosts[d]
    assert net.pop(src) == pytest.approx(-1.0)
    assert net.pop(dst) == pytest.approx(1.0)
    assert all(abs(x) < 1e-12 for x in net.values())
    # shortest: every path has the hop count of the BFS distance
    hops = nx.shortest_path_length(t.graph, src, dst)
    assert sum(frac) == pytest.approx(hops)


def test_from_string_presets():
    assert from_string("paper").name == "paper"
    t = from_string("racks:4x2@1Gbps")
    assert (t.n_hosts, float(t.capacity[0])) == (8, 1e9 / 8)
    assert from_string("racks:2x3", bandwidth=5.0).capacity.max() == 5.0
    assert from_string("fattree:4").n_hosts == 16
    assert from_string("star:5").n_racks == 1


@pytest.mark.parametrize("call, field", [
    (lambda: racks(0, 8), "n_racks"),
    (lambda: racks(2, 2, -1.0), "bandwidth"),
    (lambda: racks(2, 2, latency="fast"), "latency"),
    (lambda: racks(2, 2, n_top=0), "n_top"),
    (lambda: racks(2, 2, uplink_bandwidth=1.0, oversubscription=2), "oversubscription"),
    (lambda: fat_tree(3), "k"),
    (lambda: from_string("torus:4"), "topology"),
    (lambda: PAPER.route(3, 3), "dst"),
    (lambda: PAPER.route(0, 64), "host"),
    (lambda: pl.Topology(nx.DiGraph()), "graph"),
])
def test_topology_errors_name_the_argument(call, field):
    with pytest.raises(SpecError) as err:
        call()
    assert err.value.field == field


def test_custom_graph_validation():
    g = nx.Graph()
    g.add_node("a", kind="host", rack=0)
    g.add_node("b", kind="host")                       # no rack
    g.add_node("s", kind="switch")
    g.add_edge("a", "s", capacity=1.0)
    g.add_edge("b", "s", capacity=1.0)
    with pytest.raises(SpecError, match="rack"):
        pl.Topology(g)
    g.nodes["b"]["rack"] = 0
    g.edges["b", "s"]["capacity"] = 0.0
    with pytest.raises(SpecError, match="capacity"):
        pl.Topology(g)


# ---------------------------------------------------------------- strategies

def _racks_of(t, hosts):
    return [int(t.rack_of[h]) for h in hosts]


def test_colocated_each_job_in_its_own_rack_no_top_traffic():
    p = colocated(PAPER, 8, 7)
    racks_used = []
    for ps, ws in zip(p.ps, p.workers):
        rs = set(_racks_of(PAPER, (ps,) + ws))
        assert len(rs) == 1
        racks_used += rs
    assert len(set(racks_used)) == 8
    loads = link_loads(PAPER, p)
    assert np.all(loads[PAPER.uplink_arcs()] == 0)      # nothing through the top switch


def test_colocated_big_jobs_take_dedicated_racks():
    t = racks(8, 4)
    p = colocated(t, 2, 6)                              # 7 nodes: two racks each
    for j, (ps, ws) in enumerate(zip(p.ps, p.workers)):
        assert set(_racks_of(t, (ps,) + ws)) <= {2 * j, 2 * j + 1}
    with pytest.raises(Infeasible):
        colocated(t, 5, 6)


def test_random_is_seeded_and_injective():
    a = random_placement(PAPER, 8, 7, seed=3)
    assert a == random_placement(PAPER, 8, 7, seed=3)
    assert a != random_placement(PAPER, 8, 7, seed=4)
    assert sorted(a.hosts().tolist()) == list(range(64))
    b = random_placement(PAPER, 3, 4, seed=np.random.default_rng(1))
    assert len(set(b.hosts().tolist())) == 15


def test_random_is_uniform_over_hosts():
    counts = np.zeros(PAPER.n_hosts)
    n = 2000
    for s in range(n):
        counts[random_placement(PAPER, 1, 3, seed=s).ps[0]] += 1
    # each host is the PS with probability 1/64: chi-square with 63 dof, far tail ~ 110
    expected = n / 64
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < 110


def test_strided_properties_on_the_paper_setting():
    p = strided(PAPER, 8, 7)
    ps_racks = _racks_of(PAPER, p.ps)
    assert sorted(ps_racks) == list(range(8))                    # a PS per rack
    for r, ws in zip(ps_racks, p.workers):
        assert r not in _racks_of(PAPER, ws)                      # workers off the PS's rack
    loads = link_loads(PAPER, p, B10)                             # s per iteration
    up = loads[PAPER.uplink_arcs()]
    assert np.allclose(up, up[0]) and up[0] == pytest.approx(14.0)   # no rack busier
    # all traffic crosses the top switch: each flow uses two uplink arcs
    assert up.sum() == pytest.approx(2 * 2 * 56)


def test_clustered_properties_on_the_paper_setting():
    p = clustered(PAPER, 8, 7)
    assert set(_racks_of(PAPER, p.ps)) == {0}
    assert all(0 not in _racks_of(PAPER, ws) for ws in p.workers)
    loads = link_loads(PAPER, p, B10)
    into0 = PAPER.arc_index[("top0", "tor0")]
    assert loads[into0] == pytest.approx(56.0)                   # every gradient on one link
    assert loads.argmax() in (into0, PAPER.arc_index[("tor0", "top0")])


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 5), st.integers(1, 5), st.integers(1, 4), st.integers(1, 5),
       st.sampled_from(["colocated", "random", "strided", "clustered"]))
def test_strategies_defining_properties(n_racks, per_rack, jobs, workers, name):
    t = racks(n_racks, per_rack)
    try:
        p = place(t, name, jobs, workers, seed=7)
    except Infeasible:
        return
    assert p.n_jobs == jobs and all(len(w) == workers for w in p.workers)
    assert len(set(p.hosts().tolist())) == jobs * (workers + 1)
    ps_racks = _racks_of(t, p.ps)
    if name == "colocated":
        groups = [set(_racks_of(t, (ps,) + ws)) for ps, ws in zip(p.ps, p.workers)]
        for a, b in itertools.combinations(groups, 2):
            assert not a & b                                       # dedicated racks
    if name in ("strided", "clustered"):
        for r, ws in zip(ps_racks, p.workers):
            assert r not in _racks_of(t, ws)
    if name == "strided" and jobs <= n_racks:
        assert len(set(ps_racks)) == jobs
    if name == "clustered":
        assert set(ps_racks) == {0}
        assert all(0 not in _racks_of(t, ws) for ws in p.workers)


def test_placement_validation_and_layout():
    with pytest.raises(SpecError, match="twice"):
        Placement((0, 1), ((2,), (2,)))
    with pytest.raises(SpecError) as err:
        Placement((0,), ((),))
    assert err.value.field == "workers[0]"
    with pytest.raises(SpecError):
        Placement((0,), ((1,), (2,)))
    with pytest.raises(SpecError, match="does not exist"):
        Placement((0,), ((99,),)).check(star(4))
    text = colocated(racks(2, 3), 2, 2).layout(racks(2, 3))
    assert text.splitlines() == ["rack 0: P0 w0 w0", "rack 1: P1 w1 w1"]
    with pytest.raises(Infeasible):
        place(PAPER, "random", 9, 7)
    with pytest.raises(SpecError) as err:
        place(PAPER, "bogus", 1, 1)
    assert err.value.field == "strategy"
    with pytest.raises(SpecError) as err:
        random_placement(PAPER, 1, 1, seed=None)
    assert err.value.field == "seed"


# -------------------------------------------------------------- max-min fairness

def test_max_min_hand_example():
    # links: 0 (cap 10) shared by f0, f1; 1 (cap 4) shared by f0, f2.
    # Round 1: all rise to 2, link 1 full (2 + 2) -> f0, f2 frozen at 2.
    # Round 2: f1 rises to 10 - 2 = 8, link 0 full.
    A = np.array([[1, 1, 0], [1, 0, 1]])
    assert max_min_rates(A, [10.0, 4.0]).tolist() == [2.0, 8.0, 2.0]


def test_max_min_second_hand_example_parking_lot():
    # parking lot: a long flow f0 over links 0, 1, 2 (cap 6, 6, 9); short flows f1 on
    # link 0, f2 on link 1, f3 and f4 on link 2.
    # Round 1: all rise to 3 -> links 0 and 1 full (3 + 3): f0, f1, f2 frozen at 3.
    # Round 2: link 2 has 9 - 3 = 6 left for f3, f4: 3 + 3 -> each at 3 + 0... then
    # they reach 3 together with link 2 at 3 + 3 + 3 = 9: all 3.
    A = np.array([[1, 1, 0, 0, 0], [1, 0, 1, 0, 0], [1, 0, 0, 1, 1]])
    assert max_min_rates(A, [6.0, 6.0, 9.0]).tolist() == [3.0] * 5
    # with link 2 at 12: f3, f4 continue to (12 - 3) / 2 = 4.5
    assert max_min_rates(A, [6.0, 6.0, 12.0]).tolist() == [3.0, 3.0, 3.0, 4.5, 4.5]


def test_max_min_flow_cap_and_fractional_routes():
    A = np.array([[1, 1, 0], [1, 0, 1]])
    assert max_min_rates(A, [10.0, 4.0], flow_cap=[1, 100, 100]).tolist() == [1.0, 9.0, 3.0]
    # an ECMP flow split 1/2-1/2 over two links of 1, against one flow on link 0:
    # both rise to r with r/2 + r = 1 on link 0 -> r = 2/3; then the split flow is
    # frozen (link 0 full) though link 1 has 2/3 left.
    A = np.array([[0.5, 1.0], [0.5, 0.0]])
    assert max_min_rates(A, [1.0, 1.0]) == pytest.approx([2 / 3, 2 / 3])


def _random_instance(rng, fractional=False):
    n_links = int(rng.integers(1, 6))
    n_flows = int(rng.integers(1, 7))
    A = (rng.random((n_links, n_flows)) < 0.5).astype(float)
    for f in range(n_flows):
        if not A[:, f].any():
            A[rng.integers(n_links), f] = 1.0
    if fractional:
        A *= rng.choice([0.25, 0.5, 1.0], size=A.shape)
    c = rng.uniform(0.5, 10.0, n_links).round(3)
    return A, c


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.booleans())
def test_max_min_is_feasible_and_bottlenecked(seed, fractional):
    A, c = _random_instance(np.random.default_rng(seed), fractional)
    r = max_min_rates(A, c)
    check = bottleneck_check(A, c, r)
    assert check["feasible"] and check["bottlenecked"], check
    assert r == pytest.approx(max_min_rates_reference(A, c), rel=1e-12)


def _lexicographic_max_min_lp(A, c):
    """The max-min allocation as a sequence of LPs (cvxpy): maximize the smallest
    unfrozen rate, then freeze every flow that cannot exceed it."""
    import cvxpy as cp
    n = A.shape[1]
    fixed = {}
    while len(fixed) < n:
        free = [f for f in range(n) if f not in fixed]
        r, t = cp.Variable(n), cp.Variable()
        cons = [A @ r <= c, r >= 0] + [r[f] == v for f, v in fixed.items()]
        cp.Problem(cp.Maximize(t), cons + [r[f] >= t for f in free]).solve(solver="CLARABEL")
        level = float(t.value)
        for f in free:
            probe = cp.Problem(cp.Maximize(r[f]),
                               cons + [r[g] >= level * (1 - 1e-7) for g in free])
            probe.solve(solver="CLARABEL")
            if probe.value <= level * (1 + 1e-6) + 1e-9:
                fixed[f] = level
        if not any(f in fixed for f in free):   # numerical safety: freeze the argmin
            fixed[free[0]] = level
    return np.array([fixed[f] for f in range(n)])


@pytest.mark.parametrize("seed", range(8))
def test_max_min_equals_lexicographic_lp(seed):
    A, c = _random_instance(np.random.default_rng(1000 + seed), fractional=seed % 2 == 1)
    assert max_min_rates(A, c) == pytest.approx(_lexicographic_max_min_lp(A, c), rel=1e-5)


def test_max_min_errors():
    with pytest.raises(SpecError) as err:
        max_min_rates(np.ones(3), [1.0])
    assert err.value.field == "incidence"
    with pytest.raises(SpecError) as err:
        max_min_rates(np.ones((2, 2)), [1.0, 0.0])
    assert err.value.field == "capacity"
    with pytest.raises(SpecError, match="unbounded"):
        max_min_rates(np.array([[1.0, 0.0]]), [1.0])
    assert max_min_rates(np.array([[1.0, 0.0]]), [1.0], flow_cap=[5.0, 2.0]).tolist() == [1.0, 2.0]
    with pytest.raises(SpecError) as err:
        max_min_rates(np.array([[1.0, -1.0]]), [1.0])
    assert err.value.field == "incidence"
