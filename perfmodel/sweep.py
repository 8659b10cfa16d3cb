"""Grids of configurations evaluated with any model.

This first version evaluates serially; the executor-based, resumable sweep of
the notebooks issue builds on :func:`grid_records`.
"""

from __future__ import annotations

import itertools
from typing import Any, Iterable

from .specs import Cluster, Config

__all__ = ["grid_records"]


def grid_records(model: Any, workload: Any, cluster: Cluster, *, workers: Iterable[int],
                 bandwidths: Iterable[float] | None = None, n_ps: Iterable[int] | None = None,
                 epoch_samples: int | None = None) -> list[dict]:
    """Estimate every (workers, bandwidth, servers) point and return one record each.

    Each record holds the configuration (``workers``, ``n_ps``, ``bandwidth`` in
    bytes/s) followed by the estimate's fields (``step_time``, ``throughput``,
    ``phases``, ``bottleneck``, and ``epoch_time`` when known).
    """
    bandwidths = [cluster.nic_bandwidth] if bandwidths is None else list(bandwidths)
    if n_ps is None:  # all-reduce models have no servers
        n_ps = (1,) if getattr(model, "uses_parameter_servers", True) else (0,)
    records = []
    for bandwidth, k, s in itertools.product(bandwidths, workers, n_ps):
        net = cluster if bandwidth == cluster.nic_bandwidth else cluster.replace(nic_bandwidth=bandwidth)
        config = Config(n_replicas=k, n_ps=s, epoch_samples=epoch_samples)
        est = model.estimate(workload, net, config)
        record = {"workers": k, "n_ps": s, "bandwidth": bandwidth}
        record.update(est.to_dict())
        record.pop("meta", None)
        records.append(record)
    return records
