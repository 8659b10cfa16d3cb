"""Yan et al. 2015, footnote 7: the Adam DNNs allowed at most 4 workers per replica.

The limit is a DNN spec field; the dynamic program, the brute force, the
ranking, the spread and the CLI keep to it, and the search says when it bound
the answer.
"""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optimizer import dp
from optimizer.rank import rank_configs, space_spread
from optimizer.space import check_model_parallelism, resource_triples
from perfmodel import zoo
from perfmodel.cli import main
from perfmodel.errors import ConstraintViolation, SpecError
from perfmodel.layerwise import LayerWise
from perfmodel.specs import DNN, Config

MODEL = LayerWise(working_set="layer")


def test_adam_dnns_carry_the_limit_and_others_do_not():
    assert zoo.load("adam-mnist").max_workers_per_replica == 4
    assert zoo.load("adam-imagenet22k").max_workers_per_replica == 4
    assert zoo.load("vgg16").max_workers_per_replica is None


def test_the_field_validates_and_round_trips():
    dnn = zoo.load("adam-mnist")
    assert DNN.from_dict(dnn.to_dict()).max_workers_per_replica == 4
    with pytest.raises(SpecError, match="max_workers_per_replica"):
        DNN.from_dict({**dnn.to_dict(), "max_workers_per_replica": 0})


@settings(max_examples=40, deadline=None)
@given(machines=st.integers(1, 14), limit=st.integers(1, 16))
def test_triples_under_a_limit_are_the_unlimited_ones_filtered(machines, limit):
    free = list(resource_triples(machines))
    assert list(resource_triples(machines, max_workers=limit)) == [
        t for t in free if t.n_workers <= limit]
    assert list(dp.useful_triples(machines, limit)) == [
        t for t in dp.useful_triples(machines) if t[2] <= limit]


def test_check_model_parallelism():
    check_model_parallelism(Config(n_workers=4, n_replicas=4, n_ps=4), 4)
    check_model_parallelism(Config(n_workers=9, n_replicas=1, n_ps=0), None)
    with pytest.raises(ConstraintViolation, match="MP: n_workers = 5 exceeds the 4") as err:
        check_model_parallelism(Config(n_workers=5, n_replicas=1, n_ps=1), 4)
    assert err.value.constraint == "MP" and err.value.limit == 4


def test_default_search_answers_within_the_limit_and_says_it_bound():
    dnn, cluster = zoo.load("adam-imagenet22k"), zoo.cluster("yan2015")
    result = dp.optimize(MODEL, dnn, cluster, epoch_samples=15_000_000, top=3)
    assert all(c.config.n_workers <= 4 for c in result.ranked)
    assert result.meta["max_workers_per_replica"] == 4
    free = dp.optimize(MODEL, dnn, cluster, epoch_samples=15_000_000, top=1,
                       max_workers_per_replica=20)
    assert free.meta["max_workers_per_replica"] is None and "limit_binding" not in free.meta
    # The unlimited optimum is what meta reports, and binding means it is faster.
    assert result.meta["unlimited_best"]["epoch_time"] == pytest.approx(
        free.best.estimate.epoch_time)
    assert result.meta["limit_binding"] == (
        free.best.estimate.epoch_time < result.best.estimate.epoch_time * (1 - 1e-9))
    assert result.meta["limit_binding"] is (free.best.config.n_workers > 4)


def test_dp_equals_brute_force_under_the_limit():
    dnn, cluster = zoo.load("adam-mnist"), zoo.cluster("yan2015").replace(machines=3, cores=2)
    fast = dp.optimize(MODEL, dnn, cluster, top=4, max_workers_per_replica=2, check_limit=False)
    slow = dp.optimize(MODEL, dnn, cluster, top=4, max_workers_per_replica=2, exhaustive=True,
                       check_limit=False)
    assert "limit_binding" not in slow.meta
    assert [c.config for c in fast.ranked] == [c.config for c in slow.ranked]
    assert [c.estimate.epoch_time for c in fast.ranked] == pytest.approx(
        [c.estimate.epoch_time for c in slow.ranked], rel=1e-12)
    assert max(c.config.n_workers for c in slow.ranked) <= 2


def test_rank_refuses_and_spread_skips_configurations_beyond_the_limit():
    dnn, cluster = zoo.load("adam-mnist"), zoo.cluster("yan2015")
    with pytest.raises(ConstraintViolation, match="MP"):
        rank_configs(MODEL, dnn, cluster, [Config(n_workers=8, n_replicas=2, n_ps=2)])
    ranked = rank_configs(MODEL, dnn, cluster, [Config(n_workers=8, n_replicas=2, n_ps=2)],
                          max_workers_per_replica=8)
    assert ranked[0].config.n_workers == 8
    best, worst, count = space_spread(MODEL, dnn, cluster.replace(machines=8))
    assert count == len(list(resource_triples(8, max_workers=4)))
    assert max(best.config.n_workers, worst.config.n_workers) <= 4


def test_optimize_cli_reports_the_limit_and_validates_the_flag(capsys):
    assert main(["optimize", "--format", "json", "--top", "1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["max_workers_per_replica"] == 4 and data["best"]["n_workers"] <= 4
    assert isinstance(data["limit_binding"], bool)
    assert main(["optimize", "--dnn", "zoo:adam-mnist", "--machines", "6", "--top", "1",
                 "--max-workers-per-replica", "6", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["max_workers_per_replica"] is None
    assert main(["optimize", "--max-workers-per-replica", "0"]) == 2
    assert "--max-workers-per-replica" in capsys.readouterr().err
    assert main(["optimize", "--model", "sync", "--max-workers-per-replica", "2"]) == 2
    assert "--model layerwise" in capsys.readouterr().err
    assert main(["optimize", "--dnn", "zoo:adam-mnist", "--rank", "8/2/2"]) == 2
    assert "MP" in capsys.readouterr().err
