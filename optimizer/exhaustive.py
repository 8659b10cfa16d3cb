"""Brute force over the same space and cost model as :mod:`optimizer.dp`, for small instances.

Every sequence of per-layer states (P_l, R_l, H_l) allowed by C2-C3 is
composed into a plan with :func:`optimizer.plans.compose_plan` (the same
bipartite-matched mappings as the dynamic program's plans) and priced by the layer-wise model itself
(:meth:`perfmodel.layerwise.LayerWise.evaluate`), so nothing of the dynamic
program's decomposition is reused: it is the reference the program must equal.
The space grows as (states per layer)^L: keep it to a few layers and machines.
"""

from __future__ import annotations

import itertools

import numpy as np

from perfmodel import layerwise as lw
from perfmodel.errors import SpecError
from perfmodel.specs import DNN, Cluster, Config

from .plans import check_chain, compose_plan, state_space

__all__ = ["best_plan", "MAX_SEQUENCES"]

#: Refuse brute force beyond this many state sequences (it would take hours).
MAX_SEQUENCES = 2_000_000


def best_plan(model: lw.LayerWise, dnn: DNN, cluster: Cluster, config: Config, *,
              max_threads: int | None = None) -> tuple[float, lw.Plan, int]:
    """(T_epoch, plan, sequences evaluated) of the best state sequence by brute force."""
    check_chain(dnn)
    pairs, threads = state_space(config, cluster, max_threads)
    states = [(int(p), int(r), int(h)) for p, r in pairs for h in threads]
    count = len(states) ** len(dnn.layers)
    if count > MAX_SEQUENCES:
        raise SpecError("exhaustive", f"{count:,} state sequences exceed {MAX_SEQUENCES:,}; "
                                      "use the dynamic program")
    best = (np.inf, None)
    for seq in itertools.product(states, repeat=len(dnn.layers)):
        plan = compose_plan(dnn, seq, config.n_workers)
        t = model.evaluate(dnn, cluster, config, plan).epoch_time
        if t < best[0]:
            best = (t, plan)
    return best[0], best[1], count
