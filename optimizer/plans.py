"""Per-layer states and plans shared by the dynamic program and its brute-force reference.

The dynamic program (:mod:`optimizer.dp`) and the exhaustive search
(:mod:`optimizer.exhaustive`) search the same space and turn a sequence of
layer states into a plan the same way; this module holds those two pieces
and nothing of the program's decomposition, so that the reference checks the
program without depending on it.

States.  The state of layer l is s_l = (P_l, R_l, H_l): partitions, layer
replicas and threads, under C2 (H_l <= K, the cores of a machine) and C3
(the P_l R_l segments on distinct workers of the replica, so P_l R_l <=
N_wr) of Yan et al. 2015, Fig. 7 (:func:`state_space`).  Without a parameter
server R_l = 1: nothing would keep the copies of a replicated layer in sync.

Composition.  Workers are identical, so layer l is matched (maximum-weight
bipartite matching, :func:`optimizer.matching.map_layer`) against layer l-1
on its canonical workers (segment k on worker k, :func:`canonical_plan`),
and :func:`compose_plan` relabels that matching by the permutation that put
layer l-1 where it is.  Every adjacent pair of the composed plan is then the
matched pair up to a relabeling of workers, so it costs what the program
priced for it.

Both need a chain DNN (:func:`check_chain`): each layer fed by the one
before and feeding only the one after.

References
----------
Yan, Ruwase, He, Chilimbi 2015, "Performance Modeling and Scalability
Optimization of Distributed Deep Learning Systems" (KDD): Sec. 5.1 and Fig. 7
(C2, C3), Sec. 5.3 (segment-to-worker mapping by bipartite matching).
"""

from __future__ import annotations

import functools

import numpy as np

from perfmodel import layerwise as lw
from perfmodel.errors import SpecError
from perfmodel.specs import DNN, Cluster, Config

from .matching import map_layer
from .space import layer_choices

__all__ = ["check_chain", "canonical_plan", "used_workers", "compose_plan", "state_space"]


def check_chain(dnn: DNN) -> None:
    """Raise SpecError unless every layer is fed by the previous one and feeds only the next.

    Parameters
    ----------
    dnn : DNN

    Raises
    ------
    SpecError
        A layer not fed by the layer before it, or with several inputs.
    """
    for i, layer in enumerate(dnn.layers):
        if i and lw.producer_index(dnn, i) != i - 1:
            raise SpecError(f"layers[{i}].inputs", f"the dynamic program needs a chain DNN; layer "
                                                   f"{layer.name!r} is not fed by the layer before it")
        if len(layer.inputs) > 1:
            raise SpecError(f"layers[{i}].inputs", f"layer {layer.name!r} has several inputs; the "
                                                   "dynamic program needs a chain DNN")


def canonical_plan(partitions: int, replicas: int, threads: int = 1) -> lw.LayerPlan:
    """The layer plan with segment k = r P + p on worker k.

    >>> canonical_plan(2, 2).workers
    (0, 1, 2, 3)
    """
    return lw.LayerPlan(int(partitions), int(threads), int(replicas))


def used_workers(prev: tuple, cur: tuple) -> int:
    """Workers a transition (P', R') -> (P, R) occupies: max(P' R', P R).

    The workers the matching of layer l against a canonical layer l-1 chooses
    among (idle workers beyond them never change it).

    >>> used_workers((2, 1), (1, 3))
    3
    """
    return max(prev[0] * prev[1], cur[0] * cur[1])


def compose_plan(dnn: DNN, states, n_workers: int, *, mapping=None) -> lw.Plan:
    """The plan of a state sequence: each layer matched against the one before, relabeled.

    See the module docstring for why the relabeling keeps every transition's price.

    Parameters
    ----------
    dnn : DNN
        A chain (:func:`check_chain`).
    states : sequence of (P, R, H)
        One state per layer.
    n_workers : int
        N_wr, the workers of a model replica.
    mapping : callable, optional
        ``mapping(l, prev, cur)`` returns the matched workers of layer l
        (state ``cur`` = (P, R)) against a canonical layer l-1 (state ``prev``)
        (:meth:`optimizer.dp.Pricer.mapping`, cached); by default
        :func:`optimizer.matching.map_layer` computes them.

    Returns
    -------
    perfmodel.layerwise.Plan
    """
    layers, sigma = [], np.arange(n_workers)
    for l, (p, r, h) in enumerate(states):
        if l == 0:
            relative = np.arange(p * r)
        else:
            prev = states[l - 1]
            relative = np.asarray(mapping(l, prev[:2], (p, r)) if mapping else map_layer(
                dnn.layers[l - 1], dnn.layers[l], canonical_plan(prev[0], prev[1]), p, r, 1,
                used_workers(prev[:2], (p, r))).workers)
        actual = sigma[relative]
        layers.append(lw.LayerPlan(int(p), int(h), int(r), tuple(int(w) for w in actual)))
        rest = np.setdiff1d(np.arange(n_workers), actual)
        sigma = np.concatenate([actual, rest])
    return lw.Plan(tuple(layers))


def state_space(config: Config, cluster: Cluster, max_threads: int | None):
    """The states (P, R, H) a layer may take in ``config``, as (P, R) pairs and thread counts.

    Parameters
    ----------
    config : Config
        N_wr and whether there is a server (N_ps = 0: R = 1).
    cluster : Cluster
        K, the cores of a machine.
    max_threads : int, optional
        Cap on H below K.

    Returns
    -------
    pairs : numpy.ndarray of int, shape (n, 2), read-only
        (P, R) with P R <= N_wr (C3), R = 1 without a server, in
        lexicographic order.
    threads : numpy.ndarray of int, read-only
        The thread counts H (C2).  Together: the (P, R, H) of
        :func:`optimizer.space.layer_choices`.  Cached per (N_wr, serverless,
        K, cap).
    """
    return _space(int(config.n_workers), config.n_ps == 0, cluster.cores, max_threads)


@functools.lru_cache(maxsize=4096)
def _space(n_workers: int, serverless: bool, cores, max_threads):
    """:func:`state_space` by its arguments (cached)."""
    threads = np.unique(layer_choices(1, cores, max_threads=max_threads).threads)
    if serverless:  # without a server, replicated layers could not sync their copies
        p = np.arange(1, n_workers + 1, dtype=np.int64)
        pairs = np.stack([p, np.ones_like(p)], axis=1)
    else:
        p = np.repeat(np.arange(1, n_workers + 1), n_workers // np.arange(1, n_workers + 1))
        starts = np.concatenate([[0], np.cumsum(n_workers // np.arange(1, n_workers + 1))])
        r = np.arange(len(p)) - np.repeat(starts[:-1], n_workers // np.arange(1, n_workers + 1)) + 1
        pairs = np.stack([p, r], axis=1).astype(np.int64)
    pairs.setflags(write=False)
    threads.setflags(write=False)
    return pairs, threads
