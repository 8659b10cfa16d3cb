"""Yan et al. 2015, Table 1 ranked by the optimizer, and Fig. 15's spread.

Each configuration is ranked at its best plan.
"""

import pytest
from scipy.stats import spearmanr

from optimizer import dp
from optimizer.rank import rank_configs, space_spread
from perfmodel import zoo
from perfmodel.layerwise import LayerWise
from perfmodel.specs import Config

TABLE1 = {"adam-mnist": ["2/9/2", "2/8/4", "2/6/8", "4/4/4", "1/19/1", "1/18/2", "1/16/4", "1/12/8"],
          "adam-imagenet22k": ["4/4/4", "4/4/2", "2/9/2", "4/3/6", "4/3/4", "2/8/4", "2/6/6", "2/6/4"]}
SAMPLES = {"adam-mnist": 60_000, "adam-imagenet22k": 15_000_000}
MODEL = LayerWise(working_set="layer")


def configs(names):
    return [Config(n_workers=w, n_replicas=r, n_ps=s) for w, r, s in
            (map(int, n.split("/")) for n in names)]


@pytest.mark.parametrize("name", list(TABLE1))
def test_table1_ranked_by_the_optimizer(name):
    dnn, cluster = zoo.load(name), zoo.cluster("yan2015")
    ranked = rank_configs(MODEL, dnn, cluster, configs(TABLE1[name]), epoch_samples=SAMPLES[name])
    order = [r.to_dict()["config"] for r in ranked]
    rho = spearmanr([TABLE1[name].index(c) for c in order], range(8)).statistic
    print(f"\n{name}: measured {TABLE1[name]}\n{name}: optimizer {order}  Spearman {rho:.2f}")
    times = [r.epoch_time for r in ranked]
    assert times == sorted(times) and len(order) == 8
    # each configuration's best plan is never slower than Adam's plan (all layers split N_wr ways)
    for r in ranked:
        default = MODEL.estimate(dnn, cluster, r.config).epoch_time
        assert r.epoch_time <= default * (1 + 1e-12)


def test_fig15_spread_imagenet22k():
    best, worst, count = space_spread(MODEL, zoo.load("adam-imagenet22k"), zoo.cluster("yan2015"),
                                      epoch_samples=15_000_000)
    print(f"\nImageNet-22K, 20 machines, {count} configurations: best {best.to_dict()['config']} "
          f"{best.epoch_time / 60:.1f} min, worst {worst.to_dict()['config']} "
          f"{worst.epoch_time / 60:.1f} min, spread {worst.epoch_time / best.epoch_time:.1f}x "
          "(paper: 11.88 vs 218.08 min, 18x)")
    assert worst.epoch_time > best.epoch_time
    pruned = dp.optimize(MODEL, zoo.load("adam-imagenet22k"), zoo.cluster("yan2015"),
                         epoch_samples=15_000_000)
    assert pruned.best.score == pytest.approx(best.epoch_time, rel=1e-12)  # pruning kept it
