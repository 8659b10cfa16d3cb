"""Rank given configurations, and measure the spread of the whole space.

Each configuration (N_wr, N_mr, N_ps) is priced at its best per-layer plan, found
by the dynamic program of :mod:`optimizer.dp`, so two configurations are compared
as the optimizer would run them: the ranking of Yan et al. 2015 (Table 1) and
the spread of their whole space (Fig. 15).
"""

from __future__ import annotations

from dataclasses import dataclass

from perfmodel.layerwise import LayerWise
from perfmodel.specs import DNN, Cluster, Config

from . import dp
from .space import check_model_parallelism, model_parallelism_limit, resource_triples

__all__ = ["Ranked", "rank_configs", "space_spread"]


@dataclass(frozen=True)
class Ranked:
    """A configuration, the T_epoch of its best plan, and that plan."""

    config: Config
    epoch_time: float
    plan: object

    def to_dict(self) -> dict:
        """``{"config": "W/R/PS", "n_workers", "n_replicas", "n_ps", "epoch_time"}``."""
        c = self.config
        return {"config": f"{c.n_workers}/{c.n_replicas}/{c.n_ps}", "n_workers": c.n_workers,
                "n_replicas": c.n_replicas, "n_ps": c.n_ps, "epoch_time": self.epoch_time}


def rank_configs(model: LayerWise, dnn: DNN, cluster: Cluster, configs, *,
                 epoch_samples: int | None = None, pricer: dp.Pricer | None = None,
                 max_workers_per_replica: int | None = None) -> list[Ranked]:
    """The configurations sorted by the T_epoch of their best plan (fastest first).

    A configuration with more workers per replica than ``max_workers_per_replica``
    (default: the DNN's own limit, none when unset) raises
    :class:`~perfmodel.errors.ConstraintViolation` (rule ``"MP"``).
    """
    pricer = pricer or dp.Pricer(model, dnn, cluster)
    limit = model_parallelism_limit(dnn, max_workers_per_replica)
    out = []
    for config in configs:
        check_model_parallelism(config, limit)
        config = config.replace(epoch_samples=epoch_samples or config.epoch_samples)
        result = dp.solve(pricer, config)
        out.append(Ranked(config, result.epoch_time, result.plan))
    return sorted(out, key=lambda r: (r.epoch_time, r.config.machines))


def space_spread(model: LayerWise, dnn: DNN, cluster: Cluster, *, machines: int | None = None,
                 epoch_samples: int | None = None,
                 max_workers_per_replica: int | None = None) -> tuple[Ranked, Ranked, int]:
    """(best, worst, count) over every (N_ps, N_mr, N_wr) of C1, each at its best plan.

    The spread of Yan et al. 2015, Fig. 15 (in the paper, 11.88 against 218.08
    minutes for ImageNet-22K on 20 machines); unlike :func:`optimizer.dp.optimize` nothing
    is pruned, since the worst configurations are wanted too.  Configurations
    beyond the model-parallelism limit (as in :func:`rank_configs`) are left out.
    """
    machines = cluster.machines if machines is None else machines
    limit = model_parallelism_limit(dnn, max_workers_per_replica)
    configs = [t.config() for t in resource_triples(machines, max_workers=limit)]
    ranked = rank_configs(model, dnn, cluster, configs, epoch_samples=epoch_samples,
                          max_workers_per_replica=limit)
    return ranked[0], ranked[-1], len(ranked)
