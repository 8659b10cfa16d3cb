"""Micro-decisions priced by the layer-wise model: partition or replicate a layer.

Yan et al. 2015 (Sec. 6.4, Figs. 13-14) weigh, for ImageNet-22K's output layer
on a 4-worker replica, partitioning (each worker computes a quarter of the layer
for every sample and exchanges activations) against replication (each worker
computes the whole layer for a quarter of the samples and holds a full copy
of its weights, which it reads from the parameter servers).  The same model
that drives the dynamic program prices both; the cheaper one is chosen.
"""

from __future__ import annotations

import numpy as np

from perfmodel import layerwise as lw
from perfmodel.errors import SpecError
from perfmodel.specs import DNN, Cluster, Config

__all__ = ["partition_or_replicate"]


def _layer_index(dnn: DNN, layer: str | None) -> int:
    if layer is None:
        return len(dnn.layers) - 1
    for i, l in enumerate(dnn.layers):
        if l.name == layer:
            return i
    raise SpecError("layer", f"no layer called {layer!r} in {dnn.name}")


def _price(model: lw.LayerWise, dnn: DNN, cluster: Cluster, config: Config, plan: lw.Plan,
           index: int) -> dict:
    """Per-sample seconds of layer ``index`` by kind of work, and the epoch time."""
    est = model.evaluate(dnn, cluster, config, plan)
    row = est.meta["layers"][index]
    q = row["parallelism"]
    threads = np.array([lp.threads for lp in plan.layers])
    copies = np.array([lp.replicas for lp in plan.layers])
    reads = model.weight_read_layers(dnn, cluster, config, threads, copies)["M_w"][index]
    return {"compute": (row["U_f"] + row["U_b"] + row["U_w"]) / q,
            "activations": (row["M_f"] + row["M_b"]) / q,
            "weights": float(reads) * model.reads_per_sample(cluster, config),
            "epoch_time": est.epoch_time}


def partition_or_replicate(model: lw.LayerWise, dnn: DNN, cluster: Cluster, config: Config, *,
                           layer: str | None = None) -> dict:
    """Price a layer partitioned over the replica's workers against replicated on them.

    Every other layer follows the default plan (partitioned over all
    ``config.n_workers`` workers).  Returns ``{"partition": {...}, "replicate":
    {...}, "choice": name}`` where each option holds the layer's per-sample
    compute, activation traffic (M_f + M_b) and weight-read traffic (its share
    of M_w), in seconds per sample of the job, and the whole epoch time.
    """
    index = _layer_index(dnn, layer)
    base = lw.default_plan(dnn, cluster, config, model.threads)
    h, n = base.layers[index].threads, config.n_workers
    options = {"partition": lw.LayerPlan(n, h, 1), "replicate": lw.LayerPlan(1, h, n)}
    out = {}
    for name, choice in options.items():
        layers = list(base.layers)
        layers[index] = choice
        out[name] = _price(model, dnn, cluster, config, lw.Plan(tuple(layers)), index)
    out["choice"] = min(options, key=lambda k: out[k]["epoch_time"])
    out["layer"] = dnn.layers[index].name
    return out
