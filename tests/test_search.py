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


# --------------------------------------------------------------------------
# Batch pricing (estimate_many) against the one-by-one loop
# --------------------------------------------------------------------------

import dataclasses  # noqa: E402
import weakref  # noqa: E402

import numpy as np  # noqa: E402

from perfmodel.baselines import LinAsync  # noqa: E402
from perfmodel.coarse import AllReduceCoarse, LockStep, SyncCoarse  # noqa: E402
from perfmodel.floors import config_floor, config_floors  # noqa: E402
from perfmodel.gst.model import GST  # noqa: E402
from perfmodel.interface import BatchEstimate, ConfigBatch  # noqa: E402
from perfmodel.queueing import AsyncMVA  # noqa: E402
from perfmodel.specs import Profile  # noqa: E402

PROFILE = Profile(model_bytes=102e6, t_forward=0.18, t_backward=0.26, t_update=0.004,
                  batch_size=128)
NET = Cluster(machines=64, nic_bandwidth="10Gbps")
#: Every model with estimate_many, in options that batch and options that decline.
BATCH_MODELS = [
    SyncCoarse(), SyncCoarse("ps", True), SyncCoarse("fcfs"), AllReduceCoarse(),
    AllReduceCoarse("tree", True), LockStep(), GST(), GST(sigma=0.01, cv=0.05, t_io=0.3),
    GST(server_link="dedicated"),
    GST(switch_rate=1e7, agg_a=1e-5, agg_b=1e-8, compression_ratio=0.3,
        compression_time=0.01, tail=True, units="sound"),
    GST(layers=4),   # declines: several buckets
    AsyncMVA(), AsyncMVA(discipline="ps"), AsyncMVA(discipline="fcfs", residual="exponential"),
    AsyncMVA(rho_threshold=0.9, residual=0.3),
    AsyncMVA(overlap=True),   # declines: eq. 6
    LinAsync(), LinAsync(t_uplink=0.05, t_downlink=0.07, discipline="fcfs"),
]
CLUSTERS = [
    NET,
    NET.replace(link_efficiency=0.8, per_flow_cap=4e8, update_growth=0.3, sharing_weight=0.3,
                timeout_probability=0.01, latency=1e-4, compute_cv=0.05),
    NET.replace(gpus_per_machine=4, intra_bandwidth=50e9),   # async models: Infeasible
]


def _grid(machines, epoch_samples=None):
    configs = list(candidate_configs(machines, epoch_samples=epoch_samples))
    batch = ConfigBatch(np.ones(len(configs), dtype=np.int64),
                        np.array([c.n_replicas for c in configs]),
                        np.array([c.n_ps for c in configs]), epoch_samples=epoch_samples)
    return configs, batch


def _same_search(model, workload, cluster, **kwargs):
    """search with batch pricing and one by one: the same answer, field by field."""
    try:
        fast = search(model, workload, cluster, **kwargs)
    except Infeasible as err:
        with pytest.raises(Infeasible) as info:
            search(model, workload, cluster, _batch=False, **kwargs)
        assert str(info.value) == str(err)
        return None
    slow = search(model, workload, cluster, _batch=False, **kwargs)
    assert fast.best == slow.best
    assert fast.ranked == slow.ranked
    assert fast.meta == slow.meta
    assert (fast.n_evaluated, fast.objective) == (slow.n_evaluated, slow.objective)
    return fast


MODEL_IDS = [f"{type(m).__name__}-{i}" for i, m in enumerate(BATCH_MODELS)]


@pytest.mark.parametrize("cluster", CLUSTERS, ids=["plain", "calibrated", "gpus"])
@pytest.mark.parametrize("model", BATCH_MODELS, ids=MODEL_IDS)
def test_estimate_many_is_estimate_bit_for_bit(model, cluster):
    configs, batch = _grid(30, epoch_samples=1_281_167)
    priced = model.estimate_many(PROFILE, cluster, batch)
    if priced is None:   # declined: search prices these one by one
        return
    for i, config in enumerate(configs):
        try:
            est = model.estimate(PROFILE, cluster, config)
        except Infeasible:
            assert np.isnan(priced.step_time[i])
            continue
        if np.isnan(priced.step_time[i]):   # the model asks for estimate() here
            continue
        assert (priced.step_time[i], priced.throughput[i], priced.epoch_time[i]) == \
            (est.step_time, est.throughput, est.epoch_time), config


@pytest.mark.parametrize("objective", ["throughput", "time", "cost"])
@pytest.mark.parametrize("model", BATCH_MODELS, ids=MODEL_IDS)
def test_batch_search_equals_one_by_one(model, objective):
    for cluster in CLUSTERS:
        for machines in (2, 37):
            _same_search(model, PROFILE, cluster, machines=machines, objective=objective,
                         top=4, epoch_samples=1_281_167)


@given(m=st.floats(1e6, 1e9), tf=st.floats(1e-3, 1.0), tb=st.floats(1e-3, 1.0),
       ts=st.floats(0.0, 0.05), gbps=st.floats(1.0, 100.0), machines=st.integers(1, 28),
       top=st.integers(1, 30), objective=st.sampled_from(["throughput", "time", "cost"]),
       which=st.sampled_from([0, 1, 3, 6, 7, 8, 11, 13, 16]),
       efficiency=st.sampled_from([None, 0.5, 0.9]),
       epoch=st.sampled_from([None, 50_000]))
@settings(max_examples=40, deadline=None)
def test_batch_search_equals_one_by_one_property(m, tf, tb, ts, gbps, machines, top, objective,
                                                 which, efficiency, epoch):
    profile = Profile(model_bytes=m, t_forward=tf, t_backward=tb, t_update=ts, batch_size=32)
    cluster = Cluster(machines=28, nic_bandwidth=gbps * 1.25e8)
    _same_search(BATCH_MODELS[which], profile, cluster, machines=machines, objective=objective,
                 top=top, epoch_samples=epoch, min_efficiency=efficiency)


def test_below_floor_refusals_are_the_same():
    # The printed GST (dedicated server links) promises steps the server's link cannot carry.
    p = Profile(model_bytes=553e6, t_forward=0.1, t_backward=0.2, batch_size=32)
    c = Cluster(machines=32, nic_bandwidth="10Gbps")
    result = _same_search(GST(server_link="dedicated"), p, c, top=3)
    assert len(result.meta["below_floor"]) > 10


def test_given_configs_mixed_and_uniform():
    cfgs = [Config(n_replicas=k, n_ps=s, mode=mode) for k in (1, 5, 9) for s in (1, 3)
            for mode in ("sync", "async")]
    _same_search(AsyncMVA(), PROFILE, NET, configs=cfgs, top=5)   # mixed modes: one by one
    _same_search(SyncCoarse(), PROFILE, NET, configs=[c for c in cfgs if c.mode == "sync"])
    with pytest.raises(Infeasible, match="mode"):   # every config rejected, reason kept
        search(SyncCoarse(), PROFILE, NET, configs=[c for c in cfgs if c.mode == "async"])


@dataclass(frozen=True)
class Counted:
    """A batch model that counts its ``estimate`` calls and keeps weak references to the
    estimates it made; ``nan_every`` leaves every n-th entry of a batch unpriced."""

    inner: object
    nan_every: int = 0
    calls: list = dataclasses.field(default_factory=list, compare=False)
    made: list = dataclasses.field(default_factory=list, compare=False)   # weak references
    batch: bool = True

    uses_parameter_servers = True

    def estimate(self, workload, cluster, config):
        self.calls.append(self.alive())   # estimates alive when this one is asked for
        est = dataclasses.replace(self.inner.estimate(workload, cluster, config))
        self.made.append(weakref.ref(est))
        return est

    def alive(self) -> int:
        return sum(ref() is not None for ref in self.made[-2048:])

    def estimate_many(self, workload, cluster, batch):
        if not self.batch:
            return None
        out = self.inner.estimate_many(workload, cluster, batch)
        if self.nan_every:
            step = np.array(out.step_time)
            step[::self.nan_every] = np.nan
            out = BatchEstimate(step, out.throughput, out.epoch_time)
        return out


def test_batch_search_estimates_only_the_kept():
    model = Counted(SyncCoarse())
    result = search(model, PROFILE, NET, top=3)
    assert result.n_evaluated == len(list(candidate_configs(64))) == 2016
    assert len(model.calls) == 3 + 1        # the top 3 and the worst, through estimate()
    assert result.ranked == search(SyncCoarse(), PROFILE, NET, top=3, _batch=False).ranked


def test_one_by_one_search_holds_few_estimates():
    model = Counted(SyncCoarse(), batch=False)
    result = search(model, PROFILE, NET, top=3)
    assert len(model.calls) == 2016
    assert max(model.calls) <= 1024 + 3 + 1   # one flush buffer, the kept ones
    assert model.alive() <= 3 + 1
    del result
    assert model.alive() == 0


def test_unpriced_entries_go_through_estimate():
    model = Counted(SyncCoarse(), nan_every=7)
    fast = search(model, PROFILE, NET, top=6, objective="cost")
    assert len(model.calls) >= 2016 // 7
    slow = search(SyncCoarse(), PROFILE, NET, top=6, objective="cost", _batch=False)
    assert fast.ranked == slow.ranked and fast.meta == slow.meta


def test_progress_reaches_the_count():
    seen = []
    result = search(SyncCoarse(), PROFILE, NET, progress=seen.append)
    assert seen[-1] == result.n_evaluated and seen == sorted(seen)


def test_config_floors_are_config_floor():
    workers = np.array([1, 1, 1, 2, 1])
    replicas = np.array([1, 7, 16, 4, 9])
    servers = np.array([1, 3, 0, 2, 0])
    got = config_floors(PROFILE, NET, workers, replicas, servers)
    want = [config_floor(PROFILE, NET, Config(n_workers=w, n_replicas=k, n_ps=s))
            for w, k, s in zip(workers, replicas, servers)]
    assert got.tolist() == want
    assert config_floors(None, NET, workers, replicas, servers).tolist() == [0.0] * 5


def test_config_batch_checks_shapes():
    with pytest.raises(SpecError, match="1-d"):
        ConfigBatch(np.ones(3), np.ones(2), np.ones(3))
    batch = ConfigBatch([1, 2], [3, 4], [0, 1], mode="async", epoch_samples=10)
    assert len(batch) == 2 and batch.machines.tolist() == [3, 9]
    assert batch.config(1) == Config(n_workers=2, n_replicas=4, n_ps=1, mode="async",
                                     epoch_samples=10)


@pytest.mark.parametrize("objective", ["throughput", "time", "cost"])
@pytest.mark.parametrize("model", BATCH_MODELS, ids=MODEL_IDS)
def test_per_machines_is_the_best_of_each_count_of_the_whole_ranking(model, objective):
    """Grouping the full ranking by machine count gives what per_machines keeps, on
    both paths (estimate_many and estimate one by one)."""
    for cluster in CLUSTERS:
        try:
            full = search(model, PROFILE, cluster, machines=23, objective=objective,
                          top=10**6, epoch_samples=1_281_167)
        except Infeasible:
            continue
        first: dict = {}
        for cand in full.ranked:
            first.setdefault(cand.config.machines, cand)
        for batch in (True, False):
            per = search(model, PROFILE, cluster, machines=23, objective=objective,
                         per_machines=True, epoch_samples=1_281_167, _batch=batch)
            assert list(per.ranked) == sorted(first.values(), key=full.ranked.index)
            assert per.best == full.best and per.n_evaluated == full.n_evaluated
