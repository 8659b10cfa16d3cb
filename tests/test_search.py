"""The model-agnostic search against brute force on toy models with known optima."""

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optimizer.search import candidate_configs, objective_value, search
from perfmodel.errors import Infeasible, SpecError
from perfmodel.result import Estimate
from perfmodel.specs import Cluster, Config


@dataclass(frozen=True)
class Toy:
    """Step time = 1 + c*K/S: throughput K/(1 + cK/S) rises with K and with servers."""

    c: float = 0.1

    def estimate(self, workload, cluster, config):
        step = 1.0 + self.c * config.n_replicas / config.n_ps
        return Estimate.from_phases({"compute": 1.0, "comm": step - 1.0}, config.n_replicas,
                                    epoch_samples=config.epoch_samples)


CLUSTER = Cluster(machines=10, nic_bandwidth=1e9)


def brute_force(model, machines, objective):
    best = None
    for k in range(1, machines):
        for s in range(1, machines - k + 1):
            cfg = Config(n_replicas=k, n_ps=s)
            key = objective_value(objective, model.estimate(None, CLUSTER, cfg), cfg)
            if best is None or key < best[0]:
                best = (key, cfg)
    return best[1]


@pytest.mark.parametrize("objective", ["throughput", "time", "cost"])
@pytest.mark.parametrize("c", [0.05, 0.5, 3.0])
def test_search_equals_brute_force(objective, c):
    model = Toy(c)
    result = search(model, None, CLUSTER, objective=objective)
    expected = brute_force(model, CLUSTER.machines, objective)
    got = result.best.config
    assert objective_value(objective, result.best.estimate, got) == \
        objective_value(objective, model.estimate(None, CLUSTER, expected), expected)


def test_toy_optimum_by_hand():
    # c = 0.5, 10 machines: K/(1 + 0.5K/S) with K + S <= 10, S <= K.
    # K=6,S=4: 6/1.75 = 3.43; K=5,S=5: 5/1.5 = 3.33; K=7,S=3: 7/2.167 = 3.23 -> best (6, 4)
    best = search(Toy(0.5), None, CLUSTER, objective="throughput").best
    assert (best.config.n_replicas, best.config.n_ps) == (6, 4)
    # cost = (K+S)/K * (1 + 0.5K/S) = 1.5 + 0.5/r + r with r = S/K, least at r = 0.707:
    # (3,2) and (4,3) both give 2.9167; the tie goes to more throughput: (4,3), 2.4 vs 1.71
    cheap = search(Toy(0.5), None, CLUSTER, objective="cost").best
    assert (cheap.config.n_replicas, cheap.config.n_ps) == (4, 3)
    assert cheap.score == pytest.approx(7 / 2.4)


@given(st.integers(min_value=1, max_value=30))
@settings(max_examples=30)
def test_candidates_fit_budget(machines):
    full = {(c.n_replicas, c.n_ps) for c in candidate_configs(machines)}
    assert full == {(k, s) for k in range(1, machines) for s in range(1, machines - k + 1)}
    configs = list(candidate_configs(machines, servers_capped_by_workers=True))
    for cfg in configs:
        assert cfg.machines <= machines and 1 <= cfg.n_ps <= cfg.n_replicas
    # every (K, S) with S <= K and K + S <= machines appears exactly once
    expected = {(k, s) for k in range(1, machines) for s in range(1, min(k, machines - k) + 1)}
    assert sorted((c.n_replicas, c.n_ps) for c in configs) == sorted(expected)
    assert {c.n_replicas for c in candidate_configs(machines, servers="none")} == \
        set(range(1, machines + 1))


def test_ranked_and_counts():
    result = search(Toy(0.5), None, CLUSTER, top=3)
    assert len(result.ranked) == 3
    assert result.n_evaluated == len(list(candidate_configs(10))) == 45  # 9+8+...+1
    scores = [c.estimate.throughput for c in result.ranked]
    assert scores == sorted(scores, reverse=True)
    data = result.to_dict()
    assert set(data) == {"best", "ranked", "n_evaluated", "seconds", "objective"}
    assert {"n_workers", "n_replicas", "n_ps", "epoch_time", "layers"} <= set(data["best"])


def test_infeasible_when_model_rejects_everything():
    class Never:
        def estimate(self, *_):
            raise Infeasible("never fits")

    with pytest.raises(Infeasible, match="never fits"):
        search(Never(), None, CLUSTER)


@pytest.mark.parametrize("kwargs, field", [({"objective": "speed"}, "objective"),
                                           ({"top": 0}, "top"), ({"machines": 11}, "machines")])
def test_bad_arguments(kwargs, field):
    with pytest.raises(SpecError) as info:
        search(Toy(), None, CLUSTER, **kwargs)
    assert info.value.field == field


def test_min_efficiency_keeps_only_efficient_configs():
    # Toy(0.5): efficiency of (K, S) = [K / (1 + 0.5 K / S)] / (K / 1.5) = 1.5 / (1 + 0.5 K / S)
    result = search(Toy(0.5), None, CLUSTER, min_efficiency=0.9, top=100)
    for cand in result.ranked:
        k, s = cand.config.n_replicas, cand.config.n_ps
        efficiency = 1.5 / (1 + 0.5 * k / s)
        assert efficiency >= 0.9 - 1e-12
    # (K, S) = (2, 3) is efficient (1.5 / 1.333 = 1.125) but (8, 1) is not (0.3)
    kept = {(c.config.n_replicas, c.config.n_ps) for c in result.ranked}
    assert (2, 3) in kept and (8, 1) not in kept
    with pytest.raises(SpecError, match="min_efficiency"):
        search(Toy(0.5), None, CLUSTER, min_efficiency=1.5)


def test_worst_is_reported():
    result = search(Toy(0.5), None, CLUSTER)
    worst = result.meta["worst"]
    assert worst.estimate.throughput == min(
        Toy(0.5).estimate(None, CLUSTER, Config(n_replicas=k, n_ps=s)).throughput
        for k in range(1, 10) for s in range(1, 11 - k))
