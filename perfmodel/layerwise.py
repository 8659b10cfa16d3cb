"""Yan et al. 2015's layer-wise performance model (Sec. 4): per-segment costs and T_epoch.

Two levels, as everywhere in perfmodel:

* formulas -- pure functions that broadcast with numpy, one per equation:
  :func:`feedforward_compute_time` (eq. 5), :func:`transfer_time` (eq. 6 and its
  back-propagation twin), :func:`backprop_compute_time` (eq. 7),
  :func:`weight_update_time` (eq. 8), :func:`threaded_compute_time` (eq. 9),
  :func:`weight_read_time_max` (eq. 10), :func:`weight_read_time_min`
  (eq. 11), :func:`weight_read_time` (a point between them) and
  :func:`epoch_time` (T_epoch);
* the model -- :class:`LayerWise`, whose ``estimate(dnn, cluster, config)``
  evaluates the default plan of a configuration and whose ``evaluate`` takes
  any per-layer :class:`Plan` (partitions P(l), threads H(l), replicas R(l)
  and the segment-to-worker mapping f_l of Yan et al. 2015, Fig. 7).

Cache-aware compute (our extension): Yan et al. 2015 explain the
super-linear speedup of model parallelism on ImageNet-22K by the partitioned
weights fitting in L3 cache.  Here C_muladd depends on where a layer's weights
live: a layer that reuses each weight many times within a sample
(convolutions: connections / weights >= ``reuse_threshold``) keeps them in
cache and pays ``c_muladd``; a layer that touches each weight about once per
sample (fully connected, softmax) streams them, and pays ``c_muladd`` for the
fraction of the worker's weights that fits in the cache and ``c_muladd_mem``
for the rest (``cache_model="blend"``), or all-or-nothing
(``cache_model="step"``).  Partitioning shrinks a worker's share of the
weights, so the same machine computes faster: super-linear speedup.  The
working set is, by default (``working_set="worker"``), every weight the
busiest worker of a replica holds (all its layers' segments);
``working_set="layer"`` takes only the streaming layer's own segment (the
weights a thread streams while it computes that layer; the other layers'
weights are not touched meanwhile).

Decisions where the paper is silent (each a named option or written here):

* W(l) in eqs. 10-11 is "the data size of all weights of layer l": with
  ``weight_size="parameters"`` (default) it is the layer's trainable
  parameters times ``cluster.weight_bytes``; ``"connections"`` takes the
  connection count literally (convolutions share weights, so this overstates
  the traffic by orders of magnitude).
* C_ncost is paid by a segment only when it receives remote data (no message,
  no latency); C_ncost(H) = latency + latency_per_thread * (H - 1).
* C_nbw(H) = C_nbw / H (docs/models.md, design decisions), C_nbw = NIC rate x link efficiency, for
  the activations and errors of eq. 6.  Weight reads (eqs. 10-11) default to
  the whole C_nbw (``read_bandwidth="machine"``, H = 1 in eqs. 10-11): the H
  threads of a worker share one copy of the weights in memory (Sec. 4.2.1,
  "sharing weights through shared memory"), so the worker fetches them
  once, not once per thread.  ``read_bandwidth="thread"`` takes the
  C_nbw(H(l)) printed in eqs. 10-11, 1/H of the NIC per read.  C_ncost(H)
  keeps H either way.
* M_w = M_w^min + ``mw_position`` * (M_w^max - M_w^min), 0 the best case
  (eq. 11) and 1 the worst (eq. 10).  The default 0 is the case Sec. 6.2.2
  invokes to explain Table 1 (docs/models.md, design decisions); with one replica and no parameter
  server there is nothing to read and M_w = 0.
* T_epoch's read term is M_w N_sample / N_read as printed
  (``read_term="printed"``, docs/models.md): every one of the N_sample / N_read
  reads of the epoch stalls the job for M_w, i.e. the reads of different
  replicas never overlap in time (the premise of eq. 11).
  ``read_term="per_replica"`` divides it by N_mr: each replica stalls only
  itself, for the N_sample / (N_mr N_read) reads it makes, while the other
  replicas go on training (the premise of eq. 10, where the N_mr replicas
  read at the same time and the N_mr factor is already in M_w).
* W'(l, p) of eq. 7 (connections from layer l+1 into segment p) is the next
  layer's connections times segment p's share of layer l's neurons; the last
  layer has none.
* With layer replication, replica r of layer l takes its inputs from replica
  ``r mod R(l-1)`` of layer l-1 and sends errors to replica ``r mod R(l+1)``.
* A layer's time is that of its slowest segment (Sec. 4.1), taken component
  by component (the largest U_f, M_f, U_b, M_b, U_w over its segments): the
  same when segments are balanced, as the paper assumes, an upper bound
  otherwise, and it keeps T_epoch a sum of terms over adjacent layer pairs,
  so the optimizer's dynamic program is exact (``optimizer.dp``).

References
----------
Yan, Ruwase, He, Chilimbi. Performance Modeling and Scalability Optimization of
Distributed Deep Learning Systems. KDD, 2015.  Sec. 4.1 eqs. 5-8, Sec. 4.2 eqs. 9-11
and T_epoch, Fig. 7 (configuration variables), Sec. 6 (testbed).
``tests/test_table1.py`` reproduces Table 1 and Figs. 8-9 with the defaults and
with the printed reading (``read_bandwidth="thread", mw_position=0.5``) and
says what stays off.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from . import partition as _part
from .errors import Infeasible, SpecError
from .result import Estimate
from .specs import DNN, Cluster, Config

__all__ = [
    "COMPONENTS", "PHASE_OF", "feedforward_compute_time", "backprop_compute_time", "weight_update_time",
    "transfer_time", "threaded_compute_time", "interference_factor", "thread_bandwidth",
    "thread_latency", "weight_read_time_max", "weight_read_time_min", "weight_read_time",
    "weight_read_terms_max", "weight_read_terms_min",
    "epoch_time", "muladd_time", "LayerPlan", "Plan", "default_plan", "LayerCosts",
    "layer_costs", "LayerWise", "producer_index", "next_layer_connections",
]

#: Components of T_epoch (Yan et al. 2015, Sec. 4): per-sample U_f, M_f, U_b, M_b, U_w and M_w.
COMPONENTS = ("U_f", "M_f", "U_b", "M_b", "U_w", "M_w")
#: The phase name (:data:`perfmodel.result.PHASES`) of each component in an estimate.
PHASE_OF = {"U_f": "forward", "M_f": "activations", "U_b": "backward", "M_b": "errors",
            "U_w": "update", "M_w": "weights"}


# ---------------------------------------------------------------- formulas
def _out(value):
    """A float for scalar results, the array otherwise."""
    arr = np.asarray(value, dtype=float)
    return float(arr) if arr.ndim == 0 else arr


def feedforward_compute_time(connections, neurons, c_muladd, c_act):
    """U_f(l, p) = C_muladd W(l, p) + C_act N_neuron(l, p) (Yan et al. 2015, eq. 5).

    Parameters
    ----------
    connections : float or array_like
        W(l, p): weighted connections into the segment (multiply-adds per sample).
    neurons : float or array_like
        N_neuron(l, p): neurons of the segment.
    c_muladd, c_act : float or array_like, s
        Time of one multiply-add and of one activation function.

    Returns
    -------
    float or ndarray, s

    Examples
    --------
    >>> feedforward_compute_time(1000, 10, 1e-9, 5e-9)   # 1 us + 50 ns
    1.05e-06
    """
    return _out(np.asarray(c_muladd) * connections + np.asarray(c_act) * neurons)


def backprop_compute_time(connections_out, neurons, c_muladd, c_err):
    """U_b(l, p) = C_muladd W'(l, p) + N_neuron(l, p) C_err (Yan et al. 2015, eq. 7).

    ``connections_out`` is W'(l, p), the connections from layer l+1 into the
    segment.

    >>> backprop_compute_time(2000, 10, 1e-9, 5e-9)
    2.05e-06
    """
    return _out(np.asarray(c_muladd) * connections_out + np.asarray(c_err) * neurons)


def weight_update_time(connections, c_muladd):
    """U_w(l, p) = C_muladd W(l, p) (Yan et al. 2015, eq. 8).

    >>> weight_update_time(1000, 1e-9)
    1.0000000000000002e-06
    """
    return _out(np.asarray(c_muladd) * connections)


def transfer_time(items, item_bytes, bandwidth, latency):
    """M_f or M_b = C_ncost + A C_bits / C_nbw (Yan et al. 2015, eq. 6 and Sec. 4.1.2).

    ``items`` is A(l, p) (remote activations) or E(l, p) (remote error terms);
    no latency is paid when nothing is received (our reading: no message).

    Parameters
    ----------
    items : float or array_like
        Remote activations or error terms received by the segment.
    item_bytes : float, bytes
        C_bits: size of one item.
    bandwidth : float or array_like, bytes/s
        C_nbw (or C_nbw(H) with threads).
    latency : float or array_like, s
        C_ncost (or C_ncost(H)).

    >>> transfer_time(1000, 4, 1.25e9, 1e-4)      # 100 us + 4000 B / 1.25 GB/s
    0.0001032
    >>> float(transfer_time(0, 4, 1.25e9, 1e-4))
    0.0
    """
    items = np.asarray(items, dtype=float)
    return _out(np.where(items > 0, latency + items * item_bytes / np.asarray(bandwidth), 0.0))


def interference_factor(threads, table=None):
    """C_interf(H) (Yan et al. 2015, eq. 9): H-thread time over one-thread time.

    From a measured ``table`` (C_interf(1), C_interf(2), ...); beyond its end
    the last step is extrapolated linearly.  Without a table, 1 (no
    interference).

    >>> float(interference_factor(3, (1.0, 1.1, 1.3)))
    1.3
    >>> float(interference_factor(5, (1.0, 1.1, 1.3)))
    1.7
    """
    h = np.asarray(threads, dtype=float)
    if table is None:
        return np.ones_like(h)
    tab = np.asarray(table, dtype=float)
    slope = tab[-1] - tab[-2] if len(tab) > 1 else 0.0
    inside = np.interp(h, np.arange(1, len(tab) + 1), tab)
    return np.where(h > len(tab), tab[-1] + slope * (h - len(tab)), inside)


def threaded_compute_time(single_thread_time, threads, table=None):
    """U_i(l, p, h) = C_interf(H(l)) U_i(l, p), i in {F, B, W} (Yan et al. 2015, eq. 9)."""
    return interference_factor(threads, table) * np.asarray(single_thread_time)


def thread_bandwidth(bandwidth, threads):
    """C_nbw(H) = C_nbw / H: threads share the NIC (Yan et al. 2015, Sec. 4.2.1, docs/models.md)."""
    return np.asarray(bandwidth, dtype=float) / np.asarray(threads)


def thread_latency(latency, threads, per_thread=0.0):
    """C_ncost(H) = C_ncost + per_thread (H - 1): more connections, more latency (Sec. 4.2.1)."""
    return np.asarray(latency, dtype=float) + per_thread * (np.asarray(threads) - 1)


def weight_read_time_max(weight_bytes, replicas, bandwidth, threads, latency, per_thread=0.0):
    """M_w^max = sum_l C_ncost(H(l)) + N_mr W(l) / C_nbw(H(l)) (Yan et al. 2015, eq. 10).

    Worst case: every replica reads from the same server at once.

    Parameters
    ----------
    weight_bytes : array_like, bytes
        W(l) per layer (last axis is the layer).
    replicas : int or array_like
        N_mr.
    bandwidth : float, bytes/s
        C_nbw.
    threads : array_like
        H(l) per layer.
    latency : float, s
        C_ncost.

    >>> weight_read_time_max([1e6, 3e6], 2, 1e9, [1, 1], 0.0)   # 2 * 4e6 / 1e9
    0.008
    """
    terms = weight_read_terms_max(weight_bytes, np.asarray(replicas)[..., None], bandwidth,
                                  threads, latency, per_thread)
    return _out(terms.sum(axis=-1))


def weight_read_terms_max(weight_bytes, replicas, bandwidth, threads, latency, per_thread=0.0):
    """The per-layer terms of eq. 10, C_ncost(H(l)) + N_mr W(l) / C_nbw(H(l)) (they broadcast)."""
    return (thread_latency(latency, threads, per_thread)
            + np.asarray(replicas) * np.asarray(weight_bytes, dtype=float)
            / thread_bandwidth(bandwidth, threads))


def weight_read_time_min(weight_bytes, servers, workers, bandwidth, threads, latency,
                         per_thread=0.0):
    """M_w^min = sum_l C_ncost(H(l)) + W(l) / (C_nbw(H(l)) min(N_ps, N_wr)) (eq. 11).

    Best case (Yan et al. 2015, eq. 11): a replica reads from all servers in
    parallel with all its workers, and replicas never overlap.

    >>> weight_read_time_min([1e6, 3e6], 4, 2, 1e9, [1, 1], 0.0)   # 4e6 / (1e9 * 2)
    0.002
    """
    lanes = np.minimum(np.asarray(servers), np.asarray(workers))[..., None]
    terms = weight_read_terms_min(weight_bytes, lanes, bandwidth, threads, latency, per_thread)
    return _out(terms.sum(axis=-1))


def weight_read_terms_min(weight_bytes, lanes, bandwidth, threads, latency, per_thread=0.0):
    """The per-layer terms of eq. 11, C_ncost(H(l)) + W(l) / (C_nbw(H(l)) lanes), lanes = min(N_ps, N_wr)."""
    return (thread_latency(latency, threads, per_thread)
            + np.asarray(weight_bytes, dtype=float)
            / (thread_bandwidth(bandwidth, threads) * np.asarray(lanes)))


def weight_read_time(m_min, m_max, position):
    """M_w placed between eq. 11 (``position=0``) and eq. 10 (``position=1``), docs/models.md."""
    return np.asarray(m_min) + np.asarray(position) * (np.asarray(m_max) - np.asarray(m_min))


def epoch_time(layer_times, parallelism, m_w, samples, read_period):
    """T_epoch = M_w N_sample / N_read + sum_l T(l) N_sample / Q(l) (Yan et al. 2015, Sec. 4.2.3).

    Parameters
    ----------
    layer_times : array_like, s
        U_f + M_f + U_b + M_b + U_w of each layer's slowest segment.
    parallelism : array_like
        Q(l) = H(l) R(l) N_mr.
    m_w : float, s
        Weight read time M_w.
    samples : int
        N_sample.
    read_period : int
        N_read.

    >>> epoch_time([1e-3, 2e-3], [4, 2], 0.5, 1000, 100)   # 5 + 1000 (0.25e-3 + 1e-3)
    6.25
    """
    t = np.asarray(layer_times, dtype=float)
    q = np.asarray(parallelism, dtype=float)
    return _out(m_w * samples / read_period + samples * (t / q).sum(axis=-1))


def muladd_time(c_in, c_mem, cache_bytes, working_set, *, streaming, cache_model="blend"):
    """C_muladd of a layer, aware of the cache (our extension of Yan et al. 2015, eqs. 5-8).

    A layer that reuses its weights within a sample (``streaming=False``)
    pays ``c_in``.  A streaming layer pays ``c_in`` for the share of the
    ``working_set`` that fits in ``cache_bytes`` and ``c_mem`` for the rest
    (``"blend"``), or ``c_mem`` as soon as the working set exceeds the cache
    (``"step"``).

    >>> muladd_time(1e-10, 1e-9, 40e6, 20e6, streaming=True)      # fits: in-cache rate
    1e-10
    >>> round(muladd_time(1e-10, 1e-9, 40e6, 80e6, streaming=True), 20)   # half fits
    5.5e-10
    >>> muladd_time(1e-10, 1e-9, 40e6, 80e6, streaming=True, cache_model="step")
    1e-09
    """
    if not streaming or c_mem is None or cache_bytes is None or working_set <= cache_bytes:
        return c_in
    if cache_model == "step":
        return c_mem
    fits = cache_bytes / working_set
    return fits * c_in + (1.0 - fits) * c_mem


# ---------------------------------------------------------------- plans
@dataclass(frozen=True)
class LayerPlan:
    """Choices for one layer (Yan et al. 2015, Fig. 7): P(l), H(l), R(l) and the mapping f_l.

    ``workers[r * partitions + p]`` is the worker (0 .. N_wr - 1) holding
    segment p of layer replica r; its H(l) threads live on that worker (C4).
    """

    partitions: int
    threads: int
    replicas: int = 1
    workers: tuple = ()

    def __post_init__(self):
        for name in ("partitions", "threads", "replicas"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise SpecError(name, f"must be an integer >= 1, got {value!r}")
        if not self.workers:
            object.__setattr__(self, "workers", tuple(range(self.partitions * self.replicas)))
        if len(self.workers) != self.partitions * self.replicas:
            raise SpecError("workers", f"needs {self.partitions * self.replicas} entries "
                                       f"(partitions x replicas), got {len(self.workers)}")
        object.__setattr__(self, "workers", tuple(int(w) for w in self.workers))

    def worker_of(self, p: int, r: int) -> int:
        """Worker of segment ``p`` of layer replica ``r``."""
        return self.workers[r * self.partitions + p]

    def segment_workers(self, r: int) -> np.ndarray:
        """Workers of the segments of replica ``r``, indexed by p."""
        return np.asarray(self.workers[r * self.partitions:(r + 1) * self.partitions])

    def to_dict(self) -> dict:
        """JSON-ready dict (the optimizer's per-layer plan)."""
        return {"partitions": self.partitions, "threads": self.threads,
                "replicas": self.replicas, "workers": list(self.workers)}


@dataclass(frozen=True)
class Plan:
    """A whole configuration: one :class:`LayerPlan` per layer, in the DNN's order."""

    layers: tuple

    def __post_init__(self):
        object.__setattr__(self, "layers", tuple(self.layers))


def default_plan(dnn: DNN, cluster: Cluster, config: Config, threads: int | None = None) -> Plan:
    """Every layer split over all ``config.n_workers`` workers (segment p on worker p),
    ``threads`` (default: ``cluster.cores``) threads, no layer replication.

    This is how Adam runs a replica (Yan et al. 2015, Sec. 6), and the plan
    :meth:`LayerWise.estimate` evaluates.
    """
    h = cluster.cores if threads is None else threads
    plan = LayerPlan(partitions=config.n_workers, threads=h)
    return Plan(layers=(plan,) * len(dnn.layers))


def producer_index(dnn: DNN, index: int) -> int | None:
    """Index of the layer feeding layer ``index`` (its first input, else the previous one)."""
    layer = dnn.layers[index]
    if layer.inputs:
        return next(i for i, other in enumerate(dnn.layers) if other.name == layer.inputs[0])
    return index - 1 if index > 0 else None


# ---------------------------------------------------------------- per-layer costs
@dataclass(frozen=True)
class LayerCosts:
    """Per-sample seconds of one layer's slowest segment, and its parallelism Q(l)."""

    name: str
    U_f: float
    M_f: float
    U_b: float
    M_b: float
    U_w: float
    parallelism: float
    c_muladd: float
    plan: LayerPlan = field(repr=False, default=None)

    @property
    def total(self) -> float:
        """U_f + M_f + U_b + M_b + U_w."""
        return self.U_f + self.M_f + self.U_b + self.M_b + self.U_w


def _remote(matrix: np.ndarray, src_workers: np.ndarray, dst_workers: np.ndarray) -> np.ndarray:
    """Items each destination segment (column) receives from sources on other workers."""
    other = src_workers[:, None] != dst_workers[None, :]
    return (matrix * other).sum(axis=0)


def next_layer_connections(dnn: DNN, index: int) -> float:
    """Connections from the layers that consume layer ``index`` (W'(l) summed over segments)."""
    name = dnn.layers[index].name
    total = 0.0
    for j in range(index + 1, len(dnn.layers)):
        if producer_index(dnn, j) == index or name in dnn.layers[j].inputs:
            total += dnn.layers[j].connections
    return total


def layer_costs(dnn: DNN, index: int, plan: Plan, cluster: Cluster, n_replicas: int, *,
                c_muladd: float) -> LayerCosts:
    """Per-sample U_f, M_f, U_b, M_b, U_w (eqs. 5-9) of layer ``index``'s slowest segment."""
    layer, lp = dnn.layers[index], plan.layers[index]
    p = lp.partitions
    weights_in = _part.segment_weights(layer, p)
    neurons = _part.segment_sizes(layer, p)
    share = neurons / max(layer.neurons, 1)
    weights_out = next_layer_connections(dnn, index) * share
    c_interf = float(interference_factor(lp.threads, cluster.interference))
    u_f = c_interf * feedforward_compute_time(weights_in, neurons, c_muladd, cluster.c_act or 0.0)
    u_b = c_interf * backprop_compute_time(weights_out, neurons, c_muladd, cluster.c_err or 0.0)
    u_w = c_interf * weight_update_time(weights_in, c_muladd)
    bw = thread_bandwidth(cluster.effective_bandwidth, lp.threads)
    lat = thread_latency(cluster.latency, lp.threads, cluster.latency_per_thread)
    m_f, m_b = _segment_traffic(dnn, index, plan)
    m_f = transfer_time(m_f, cluster.activation_bytes, bw, lat)
    m_b = transfer_time(m_b, cluster.activation_bytes, bw, lat)
    q = lp.threads * lp.replicas * n_replicas
    # Slowest segment per component: equal to the paper's slowest segment when
    # segments are balanced, and it keeps T_epoch a sum of terms over pairs of
    # adjacent layers, which makes the optimizer's dynamic program exact.
    return LayerCosts(layer.name, *(float(np.max(x)) for x in (u_f, m_f, u_b, m_b, u_w)),
                      float(q), c_muladd, lp)


def _segment_traffic(dnn: DNN, index: int, plan: Plan) -> tuple[np.ndarray, np.ndarray]:
    """A(l, p) and E(l, p) of every segment, averaged over the layer's replicas."""
    layer, lp = dnn.layers[index], plan.layers[index]
    a = np.zeros(lp.partitions)
    e = np.zeros(lp.partitions)
    src = producer_index(dnn, index)
    dst = next((j for j in range(index + 1, len(dnn.layers))
                if producer_index(dnn, j) == index), None)
    for r in range(lp.replicas):
        mine = lp.segment_workers(r)
        if src is not None:
            sp = plan.layers[src]
            mat = _part.activation_matrix(dnn.layers[src], layer, sp.partitions, lp.partitions)
            a += _remote(mat, sp.segment_workers(r % sp.replicas), mine)
        if dst is not None:
            np_ = plan.layers[dst]
            mat = _part.error_matrix(layer, dnn.layers[dst], lp.partitions, np_.partitions)
            e += _remote(mat.T, np_.segment_workers(r % np_.replicas), mine)
    return a / lp.replicas, e / lp.replicas


# ---------------------------------------------------------------- the model
_CACHE_MODELS = ("blend", "step")
_WEIGHT_SIZES = ("parameters", "connections")
_READ_BANDWIDTHS = ("thread", "machine")
_READ_TERMS = ("printed", "per_replica")
_WORKING_SETS = ("worker", "layer")
_REQUIRED_HARDWARE = ("c_muladd",)


@dataclass(frozen=True)
class LayerWise:
    """Yan et al. 2015's layer-wise model of model- and data-parallel training (Sec. 4).

    Parameters
    ----------
    mw_position : float in [0, 1]
        Where M_w lies between M_w^min (eq. 11, 0, default) and M_w^max (eq. 10, 1).
    cache_model : {"blend", "step"}
        How C_muladd of streaming layers depends on the cache (see module doc).
    reuse_threshold : float
        A layer with at least this many connections per weight reuses its
        weights within a sample and computes at the in-cache rate.
    weight_size : {"parameters", "connections"}
        What W(l) of eqs. 10-11 counts (see module doc).
    read_bandwidth : {"machine", "thread"}
        The whole NIC, the weights being read once per worker (``"machine"``,
        default), or C_nbw(H) = C_nbw / H in eqs. 10-11 as printed (``"thread"``).
    read_term : {"printed", "per_replica"}
        T_epoch's read term M_w N_sample / N_read as printed, or divided by
        N_mr (each replica's reads stall only that replica).
    working_set : {"worker", "layer"}
        What must fit in the cache for a streaming layer to compute at the
        in-cache rate: all the weights the busiest worker holds, or that
        layer's segment only.
    threads : int, optional
        H(l) of the default plan (default: the cluster's cores).

    Notes
    -----
    The cluster must carry the constants of Yan et al. 2015 (``c_muladd``, and for the
    cache model ``c_muladd_mem`` and ``cache_bytes``), e.g. ``zoo:yan2015`` or
    a file written by ``perfmodel calibrate``.  ``config.epoch_samples`` is
    N_sample (default 1,000,000 when unset, so per-sample figures stay exact);
    N_read is ``cluster.read_period`` (default 1: read before every sample).

    Examples
    --------
    >>> from perfmodel import zoo, Config
    >>> est = LayerWise().estimate(zoo.load("adam-mnist"), zoo.cluster("yan2015"),
    ...                            Config(n_workers=2, n_replicas=9, n_ps=2, epoch_samples=60000))
    >>> est.bottleneck in est.phases and est.epoch_time > 0
    True
    """

    mw_position: float = 0.0
    cache_model: str = "blend"
    reuse_threshold: float = 8.0
    weight_size: str = "parameters"
    read_bandwidth: str = "machine"
    read_term: str = "printed"
    working_set: str = "worker"
    threads: int | None = None
    #: ``config.mode`` is not read: replicas read weights every N_read samples whatever
    #: the mode (Yan et al. 2015, Sec. 4.3).
    modes: ClassVar[tuple[str, ...]] = ("sync", "async")
    #: Configurations use parameter servers (searches read this).
    uses_parameter_servers: ClassVar[bool] = True

    def __post_init__(self):
        if not (isinstance(self.mw_position, (int, float)) and 0.0 <= self.mw_position <= 1.0):
            raise SpecError("mw_position", f"must be in [0, 1], got {self.mw_position!r}")
        if self.cache_model not in _CACHE_MODELS:
            raise SpecError("cache_model", f"must be one of {', '.join(_CACHE_MODELS)}; "
                                           f"got {self.cache_model!r}")
        if self.weight_size not in _WEIGHT_SIZES:
            raise SpecError("weight_size", f"must be one of {', '.join(_WEIGHT_SIZES)}; "
                                           f"got {self.weight_size!r}")
        for name, allowed in (("read_bandwidth", _READ_BANDWIDTHS), ("read_term", _READ_TERMS),
                              ("working_set", _WORKING_SETS)):
            if getattr(self, name) not in allowed:
                raise SpecError(name, f"must be one of {', '.join(allowed)}; "
                                      f"got {getattr(self, name)!r}")
        if not (math.isfinite(self.reuse_threshold) and self.reuse_threshold > 0):
            raise SpecError("reuse_threshold", f"must be > 0, got {self.reuse_threshold!r}")

    # -- inputs
    @staticmethod
    def check_hardware(cluster: Cluster) -> None:
        """SpecError naming the first hardware constant of Sec. 4 the cluster lacks."""
        for name in _REQUIRED_HARDWARE:
            if getattr(cluster, name) is None:
                raise SpecError(f"cluster.{name}", "is required by the layer-wise model "
                                                   "(use zoo:yan2015 or `perfmodel calibrate`)")

    def _check(self, dnn, cluster: Cluster, config: Config, plan: Plan) -> None:
        if not isinstance(dnn, DNN):
            raise SpecError("workload", f"LayerWise needs a DNN spec, got {type(dnn).__name__}")
        self.check_hardware(cluster)
        if len(plan.layers) != len(dnn.layers):
            raise SpecError("plan", f"has {len(plan.layers)} layer plans for "
                                    f"{len(dnn.layers)} layers")
        if config.n_replicas > 1 and config.n_ps < 1:
            raise Infeasible(f"{config.n_replicas} replicas need a parameter server (n_ps=0)")
        if config.n_ps < 1 and any(lp.replicas > 1 for lp in plan.layers):
            raise Infeasible("replicated layers keep copies of their weights in sync through a "
                             "parameter server (n_ps=0)")
        if config.machines > cluster.machines:
            raise Infeasible(f"configuration uses {config.machines} machines, "
                             f"the cluster has {cluster.machines}")
        for i, lp in enumerate(plan.layers):
            if max(lp.workers) >= config.n_workers:
                raise Infeasible(f"layer {dnn.layers[i].name}: worker {max(lp.workers)} does not "
                                 f"exist in a replica of {config.n_workers} workers")

    def _weight_bytes(self, dnn: DNN, cluster: Cluster) -> np.ndarray:
        counts = [l.weights if self.weight_size == "parameters" else l.connections
                  for l in dnn.layers]
        return np.asarray(counts, dtype=float) * cluster.weight_bytes

    def layer_muladd_time(self, dnn: DNN, index: int, plan: Plan, cluster: Cluster,
                          working_set: float) -> float:
        """C_muladd of layer ``index`` given its working set (see :func:`muladd_time`)."""
        layer = dnn.layers[index]
        streaming = layer.weights > 0 and layer.connections / layer.weights < self.reuse_threshold
        return muladd_time(cluster.c_muladd, cluster.c_muladd_mem, cluster.cache_bytes,
                           working_set, streaming=streaming, cache_model=self.cache_model)

    def _working_set(self, dnn: DNN, plan: Plan, cluster: Cluster) -> float:
        """Bytes of weights held by the busiest worker of a replica."""
        held = np.zeros(max(max(lp.workers) for lp in plan.layers) + 1)
        for layer, lp in zip(dnn.layers, plan.layers):
            params = _part.segment_params(layer, lp.partitions) * cluster.weight_bytes
            for r in range(lp.replicas):
                np.add.at(held, lp.segment_workers(r), params)
        return float(held.max())

    def layer_working_set(self, dnn: DNN, index: int, plan: Plan, cluster: Cluster) -> float:
        """Bytes of layer ``index``'s weights held by one worker (its busiest one)."""
        layer, lp = dnn.layers[index], plan.layers[index]
        params = _part.segment_params(layer, lp.partitions) * cluster.weight_bytes
        held = np.zeros(max(lp.workers) + 1)
        for r in range(lp.replicas):
            np.add.at(held, lp.segment_workers(r), params)
        return float(held.max())

    # -- evaluation
    def weight_read_layers(self, dnn: DNN, cluster: Cluster, config: Config, threads,
                           replicas=1) -> dict:
        """Per-layer terms of M_w^min (eq. 11), M_w^max (eq. 10) and M_w, seconds per read.

        ``threads`` holds H(l) per layer on its last axis and ``replicas`` R(l)
        (broadcast; leading axes let the optimizer price every H at once); each
        returned array has their broadcast shape.  A layer replicated R(l)
        times inside a model replica is held R(l) times, and each copy is read
        (Yan et al. 2015, Sec. 6.4: "replication incurs twice the weights communication
        overheads"), so its W(l) counts R(l) times.  The sums over the last axis
        are :meth:`weight_reads`.
        """
        h = np.asarray(threads, dtype=float)
        copies = np.asarray(replicas, dtype=float)
        if config.n_replicas == 1 and config.n_ps == 0:
            zero = np.zeros(np.broadcast_shapes(h.shape, copies.shape))
            return {"M_w_min": zero, "M_w_max": zero, "M_w": zero}
        w = self._weight_bytes(dnn, cluster) * copies
        if self.read_bandwidth == "machine":
            w = w / h  # bandwidth of the whole NIC; the latency C_ncost(H) keeps its H
        bw, lat, per = cluster.effective_bandwidth, cluster.latency, cluster.latency_per_thread
        m_max = weight_read_terms_max(w, config.n_replicas, bw, h, lat, per)
        lanes = min(max(config.n_ps, 1), config.n_workers)
        m_min = weight_read_terms_min(w, lanes, bw, h, lat, per)
        return {"M_w_min": m_min, "M_w_max": m_max,
                "M_w": weight_read_time(m_min, m_max, self.mw_position)}

    def reads_per_sample(self, cluster: Cluster, config: Config) -> float:
        """How many reads of M_w one sample of the epoch pays for (T_epoch's read term / M_w / N)."""
        stall = (cluster.read_period or 1) * (config.n_replicas if self.read_term == "per_replica"
                                              else 1)
        return 1.0 / stall

    def weight_reads(self, dnn: DNN, cluster: Cluster, config: Config, plan: Plan) -> dict:
        """M_w^min (eq. 11), M_w^max (eq. 10) and the M_w used, in seconds per read."""
        h = np.array([lp.threads for lp in plan.layers])
        r = np.array([lp.replicas for lp in plan.layers])
        per_layer = self.weight_read_layers(dnn, cluster, config, h, r)
        return {k: float(v.sum()) for k, v in per_layer.items()}

    def layer_table(self, dnn: DNN, cluster: Cluster, config: Config, plan: Plan) -> list[LayerCosts]:
        """Per-layer costs of ``plan`` (slowest segment of each layer)."""
        if self.working_set == "layer":
            sets = [self.layer_working_set(dnn, i, plan, cluster) for i in range(len(dnn.layers))]
        else:
            sets = [self._working_set(dnn, plan, cluster)] * len(dnn.layers)
        return [layer_costs(dnn, i, plan, cluster, config.n_replicas,
                            c_muladd=self.layer_muladd_time(dnn, i, plan, cluster, sets[i]))
                for i in range(len(dnn.layers))]

    def evaluate(self, dnn: DNN, cluster: Cluster, config: Config, plan: Plan) -> Estimate:
        """T_epoch of ``plan`` with the per-layer, per-component breakdown."""
        self._check(dnn, cluster, config, plan)
        samples = config.epoch_samples or 1_000_000
        read_period = cluster.read_period or 1
        table = self.layer_table(dnn, cluster, config, plan)
        reads = self.weight_reads(dnn, cluster, config, plan)
        phases = {PHASE_OF[c]: sum(getattr(t, c) / t.parallelism for t in table)
                  for c in COMPONENTS[:5]}
        phases["weights"] = reads["M_w"] * self.reads_per_sample(cluster, config)
        worst = max(table, key=lambda t: t.total / t.parallelism)
        layers = [dict(t.plan.to_dict(), name=t.name, parallelism=t.parallelism,
                       c_muladd=t.c_muladd,
                       **{c: getattr(t, c) for c in COMPONENTS[:5]},
                       epoch_share=samples * t.total / t.parallelism) for t in table]
        meta = {"model": "LayerWise", "terms": {v: k for k, v in PHASE_OF.items()},
                "mw_position": self.mw_position,
                "cache_model": self.cache_model, "weight_size": self.weight_size,
                "read_bandwidth": self.read_bandwidth, "read_term": self.read_term,
                "working_set": self.working_set,
                "n_workers": config.n_workers, "n_replicas": config.n_replicas,
                "n_ps": config.n_ps, "samples": samples, "read_period": read_period,
                "working_set_bytes": self._working_set(dnn, plan, cluster),
                "bottleneck_layer": worst.name, "layers": layers, **reads}
        est = Estimate.from_phases(phases, 1.0, epoch_samples=samples, meta=meta)
        return est

    def estimate(self, workload: DNN, cluster: Cluster, config: Config) -> Estimate:
        """T_epoch of the default plan of ``config`` (see :func:`default_plan`).

        ``step_time`` is seconds per sample of the whole job (T_epoch / N_sample),
        ``throughput`` samples per second, ``epoch_time`` T_epoch, ``phases``
        the per-sample components under their :data:`~perfmodel.result.PHASES`
        names (U_f: ``forward``, M_f: ``activations``, U_b: ``backward``, M_b:
        ``errors``, U_w: ``update``, M_w: ``weights``; ``meta["terms"]``).
        """
        if not isinstance(workload, DNN):
            raise SpecError("workload", f"LayerWise needs a DNN spec, got {type(workload).__name__}")
        return self.evaluate(workload, cluster, config,
                             default_plan(workload, cluster, config, self.threads))
