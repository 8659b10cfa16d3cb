"""Cost formulas of communication patterns (SI units: bytes, bytes/s, seconds).

Pure functions of floats or arrays that broadcast with numpy: the transfer times
of parameter-server push/pull under processor-sharing ("ps") and FCFS link
sharing, with several parameter servers and an optional per-flow rate cap, and
the times of ring, tree and hierarchical (multi-GPU) all-reduce.

The model is a fluid one.  A parameter server's link and a worker's NIC both run
at ``bandwidth`` B in each direction.  With ``n_ps`` servers the model is split
evenly: each worker exchanges ``M / n_ps`` bytes with every server, so each
server's link carries ``K * M / n_ps`` bytes per direction, while a worker's own
NIC still carries all ``M`` bytes (a transfer never beats ``M / B``).  A
per-flow cap ``c`` (Li et al. 2022, Sec. 4.4: AWS limits one flow to 10 Gbps)
bounds the rate of every single flow, even when it is alone on the link.

Every function validates its inputs and raises
:class:`~perfmodel.errors.SpecError` naming the argument; the unvalidated
kernels they share with :mod:`perfmodel.coarse` (which validates once and
composes them) live in ``perfmodel._fluid``.

References
----------
Li, Paolieri, Golubchik, Lin, Yan. Predicting Throughput of Distributed SGD.
IEEE TPDS, 2022.  Sec. 3.1.1 eqs. 7-8 (PS and FCFS link sharing),
Sec. 3.1.2 and eq. 11 (ring all-reduce), Sec. 4.4 (multi-GPU machines,
per-flow caps).
"""

from __future__ import annotations

import numpy as np

from ._fluid import broadcast_time, pull_time, push_time, ring_time, servers, tree_time
from ._validate import broadcast_result, checked, checked_cap, choice

__all__ = [
    "LINK_SHARINGS", "ALLREDUCE_ALGORITHMS",
    "ps_flow_rate", "ps_pull_time", "ps_push_time",
    "ring_allreduce_time", "tree_allreduce_time", "allreduce_time",
    "intra_allreduce_time", "intra_broadcast_time", "hierarchical_allreduce_time",
]

#: Link-sharing disciplines of one parameter-server link (Li et al. 2022, Sec. 3.1.1).
LINK_SHARINGS = ("ps", "fcfs")

#: All-reduce algorithms with a cost formula here.
ALLREDUCE_ALGORITHMS = ("ring", "tree")


# --------------------------------------------------------------------------
# Public formulas
# --------------------------------------------------------------------------

def ps_flow_rate(bandwidth, workers, n_ps=1, per_flow_cap=None):
    """Rate of one worker-server flow when K workers use every server's link at once.

    Equal (processor) sharing: a server's link is split among the K workers, a
    worker's NIC among its ``n_ps`` flows, and no flow exceeds the cap:
    ``min(B / K, B / n_ps, per_flow_cap)``.

    Parameters
    ----------
    bandwidth : float or array_like, bytes/s
        Line rate B of every NIC (> 0).
    workers : int or array_like, workers
        Number K of concurrent workers (whole, >= 1).
    n_ps : int or array_like, servers
        Parameter servers sharing the model evenly (whole, >= 1).
    per_flow_cap : float or array_like or None, bytes/s
        Largest rate of one flow; ``None`` or ``inf`` for no cap.

    Returns
    -------
    float or ndarray, bytes/s
        Rate of each flow.

    References
    ----------
    Li et al. 2022, Sec. 3.1.1, eq. 7 (equal split B/K); Sec. 4.4 (a single flow is
    capped at 10 Gbps on AWS: ``min(B/K, cap)``).  The ``n_ps`` term is our own
    extension.

    Examples
    --------
    >>> ps_flow_rate(25e9 / 8, 2, per_flow_cap=10e9 / 8) * 8 / 1e9   # Gbps
    10.0
    """
    b = checked("bandwidth", bandwidth, positive=True, finite=False)
    k = checked("workers", workers, minimum=1, integer=True)
    p = checked("n_ps", n_ps, minimum=1, integer=True)
    cap = checked_cap("per_flow_cap", per_flow_cap)
    rate = np.minimum(b / k, b / p)
    if cap is not None:
        rate = np.minimum(rate, cap)
    return broadcast_result(rate, bandwidth, workers, n_ps, per_flow_cap)


def ps_pull_time(model_bytes, bandwidth, workers, n_ps=1, per_flow_cap=None, sharing="ps"):
    """Downlink time: K workers pull the model from ``n_ps`` parameter servers at once.

    ``max(K M / (n_ps B), M / B, M / (n_ps cap))``: the server links must send
    ``K M / n_ps`` bytes each, a worker's NIC receives ``M`` bytes, and each of
    its ``n_ps`` flows is capped.  With one server and no cap this is eq. 7's
    ``K M / B``.  Under FCFS the last pull ends at the same instant (eq. 8 has
    the same downlink term); FCFS only staggers the workers' finishing times.

    Parameters
    ----------
    model_bytes : float or array_like, bytes
        Model size M (>= 0).
    bandwidth : float or array_like, bytes/s
        Line rate B of every NIC (> 0).
    workers : int or array_like, workers
        Number K of workers pulling (whole, >= 1).
    n_ps : int or array_like, servers
        Parameter servers sharing the model evenly (whole, >= 1).
    per_flow_cap : float or array_like or None, bytes/s
        Largest rate of one flow; ``None`` or ``inf`` for no cap.
    sharing : {"ps", "fcfs"}
        Link sharing; both give the same completion time of the last pull.

    Returns
    -------
    float or ndarray, s
        Time until every worker holds the model.

    References
    ----------
    Li et al. 2022, eqs. 7 and 8 (first term ``K M / B``); Sec. 4.4 for the per-flow
    cap.  Several servers and the NIC bound ``M / B`` are our own extension.
    With FCFS and a cap we take the same work-conserving fluid bound (an exact
    whole-flow FCFS schedule can end up to ``M / (n_ps cap)`` later).

    Examples
    --------
    >>> ps_pull_time(100e6, 1.25e9, 4)      # 4 * 0.08 s
    0.32
    """
    m, b, k, p, cap = _checked_ps_args(model_bytes, bandwidth, workers, n_ps, per_flow_cap, sharing)
    t = pull_time(m, b, k, p, cap, sharing)
    return broadcast_result(t, model_bytes, bandwidth, workers, n_ps, per_flow_cap)


def _checked_ps_args(model_bytes, bandwidth, workers, n_ps, per_flow_cap, sharing):
    """Validated arrays of the PS transfer arguments (shared by pull and push)."""
    m = checked("model_bytes", model_bytes)
    b = checked("bandwidth", bandwidth, positive=True, finite=False)
    k = checked("workers", workers, minimum=1, integer=True)
    p = servers(checked("n_ps", n_ps, minimum=1, integer=True))
    cap = checked_cap("per_flow_cap", per_flow_cap)
    choice("sharing", sharing, LINK_SHARINGS)
    return m, b, k, p, cap


def ps_push_time(model_bytes, bandwidth, workers, n_ps=1, per_flow_cap=None, sharing="ps"):
    """Uplink time: K workers push their gradients (M bytes each) to the servers.

    Equal sharing ("ps"): all pushes run at once, as the pulls do,
    ``max(K M / (n_ps B), M / B, M / (n_ps cap))``.  FCFS: the downlink has
    staggered the workers by one transfer each, so the pushes do not contend
    and the exposed uplink is one worker's own transfer,
    ``max(M / B, M / (n_ps cap))``.

    Parameters
    ----------
    model_bytes : float or array_like, bytes
        Gradient size M (>= 0), equal to the model size.
    bandwidth : float or array_like, bytes/s
        Line rate B of every NIC (> 0).
    workers : int or array_like, workers
        Number K of workers pushing (whole, >= 1).
    n_ps : int or array_like, servers
        Parameter servers sharing the model evenly (whole, >= 1).
    per_flow_cap : float or array_like or None, bytes/s
        Largest rate of one flow; ``None`` or ``inf`` for no cap.
    sharing : {"ps", "fcfs"}
        Link sharing of the servers' links.

    Returns
    -------
    float or ndarray, s
        Exposed uplink time of a synchronous step.

    References
    ----------
    Li et al. 2022, eq. 7 (``K M / B``, "ps") and eq. 8 (``M / B``, "fcfs"); Sec. 4.4
    for the per-flow cap.  Several servers are our own extension.

    Examples
    --------
    >>> ps_push_time(100e6, 1.25e9, 4, sharing="fcfs")
    0.08
    """
    m, b, k, p, cap = _checked_ps_args(model_bytes, bandwidth, workers, n_ps, per_flow_cap, sharing)
    t = push_time(m, b, k, p, cap, sharing)
    return broadcast_result(t, model_bytes, bandwidth, workers, n_ps, per_flow_cap)


def ring_allreduce_time(model_bytes, bandwidth, workers):
    """Ring all-reduce of M bytes among K workers: ``2 (K - 1) / K * M / B``.

    Reduce-scatter then all-gather, each sending ``M / K`` bytes ``K - 1``
    times per worker; every worker has its full bandwidth (one flow per link).

    Parameters
    ----------
    model_bytes : float or array_like, bytes
        Data reduced, M (>= 0).
    bandwidth : float or array_like, bytes/s
        Bandwidth B of each worker's link (> 0).
    workers : int or array_like, workers
        Participants K (whole, >= 1); one worker communicates nothing.

    Returns
    -------
    float or ndarray, s
        Duration of the all-reduce.

    References
    ----------
    Li et al. 2022, Sec. 3.1.2 and eq. 11 (citing Patarasuk and Yuan for ``2(K-1)T/K``).

    Examples
    --------
    >>> ring_allreduce_time(100e6, 1.25e9, 4)    # 2 * 3/4 * 0.08 s
    0.12
    """
    m = checked("model_bytes", model_bytes)
    b = checked("bandwidth", bandwidth, positive=True, finite=False)
    k = checked("workers", workers, minimum=1, integer=True)
    return broadcast_result(ring_time(m, b, k), model_bytes, bandwidth, workers)


def tree_allreduce_time(model_bytes, bandwidth, workers):
    """Binomial-tree all-reduce: reduce then broadcast, ``2 ceil(log2 K) M / B``.

    Each of the ``ceil(log2 K)`` levels moves the whole M bytes once up (reduce)
    and once down (broadcast); no pipelining of chunks.

    Parameters
    ----------
    model_bytes : float or array_like, bytes
        Data reduced, M (>= 0).
    bandwidth : float or array_like, bytes/s
        Bandwidth B of each worker's link (> 0).
    workers : int or array_like, workers
        Participants K (whole, >= 1).

    Returns
    -------
    float or ndarray, s
        Duration of the all-reduce.

    References
    ----------
    Our own extension (Li et al. 2022 model only the ring); the bandwidth term of
    the binomial-tree reduce and broadcast of Thakur, Rabenseifner and Gropp,
    "Optimization of collective communication operations in MPICH" (2005).

    Examples
    --------
    >>> tree_allreduce_time(100e6, 1.25e9, 4)    # 2 * 2 * 0.08 s
    0.32
    """
    m = checked("model_bytes", model_bytes)
    b = checked("bandwidth", bandwidth, positive=True, finite=False)
    k = checked("workers", workers, minimum=1, integer=True)
    return broadcast_result(tree_time(m, b, k), model_bytes, bandwidth, workers)


def allreduce_time(model_bytes, bandwidth, workers, algorithm="ring"):
    """All-reduce time by ``algorithm``: :func:`ring_allreduce_time` or
    :func:`tree_allreduce_time`.

    Parameters
    ----------
    model_bytes : float or array_like, bytes
        Data reduced, M (>= 0).
    bandwidth : float or array_like, bytes/s
        Bandwidth B of each worker's link (> 0).
    workers : int or array_like, workers
        Participants K (whole, >= 1).
    algorithm : {"ring", "tree"}
        The collective's algorithm.

    Returns
    -------
    float or ndarray, s
        Duration of the all-reduce.

    References
    ----------
    Li et al. 2022, eq. 11 ("ring"); "tree" is our own extension.
    """
    choice("algorithm", algorithm, ALLREDUCE_ALGORITHMS)
    if algorithm == "ring":
        return ring_allreduce_time(model_bytes, bandwidth, workers)
    return tree_allreduce_time(model_bytes, bandwidth, workers)


def intra_allreduce_time(model_bytes, intra_bandwidth, gpus_per_machine):
    """Ring all-reduce among the G GPUs of one machine: ``2 (G - 1) / G * M / b``.

    Parameters
    ----------
    model_bytes : float or array_like, bytes
        Gradient size M (>= 0).
    intra_bandwidth : float or array_like, bytes/s
        Bandwidth b between GPUs of one machine (> 0).
    gpus_per_machine : int or array_like, GPUs
        G (whole, >= 1); one GPU needs no reduction.

    Returns
    -------
    float or ndarray, s
        Duration of the intra-machine all-reduce.

    References
    ----------
    Li et al. 2022, Sec. 4.4 (first step of the multi-GPU scheme, following Goyal et
    al.); the ring cost of eq. 11 applied to the intra-machine links.
    """
    m = checked("model_bytes", model_bytes)
    bi = checked("intra_bandwidth", intra_bandwidth, positive=True, finite=False)
    g = checked("gpus_per_machine", gpus_per_machine, minimum=1, integer=True)
    return broadcast_result(ring_time(m, bi, g), model_bytes, intra_bandwidth, gpus_per_machine)


def intra_broadcast_time(model_bytes, intra_bandwidth, gpus_per_machine):
    """Broadcast of M bytes from one GPU to the other ``G - 1`` GPUs of its machine.

    A pipelined chain broadcast of a large message: ``M / b`` when ``G > 1``,
    zero for one GPU.

    Parameters
    ----------
    model_bytes : float or array_like, bytes
        Model size M (>= 0).
    intra_bandwidth : float or array_like, bytes/s
        Bandwidth b between GPUs of one machine (> 0).
    gpus_per_machine : int or array_like, GPUs
        G (whole, >= 1).

    Returns
    -------
    float or ndarray, s
        Duration of the broadcast.

    References
    ----------
    Li et al. 2022, Sec. 4.4 (last step of the multi-GPU scheme); the cost ``M / b``
    (bandwidth term of a pipelined broadcast) is our own choice, the paper
    gives none.
    """
    m = checked("model_bytes", model_bytes)
    bi = checked("intra_bandwidth", intra_bandwidth, positive=True, finite=False)
    g = checked("gpus_per_machine", gpus_per_machine, minimum=1, integer=True)
    return broadcast_result(broadcast_time(m, bi, g), model_bytes, intra_bandwidth, gpus_per_machine)


def hierarchical_allreduce_time(model_bytes, bandwidth, machines, gpus_per_machine,
                                intra_bandwidth, inter="ring", n_ps=1, per_flow_cap=None,
                                sharing="ps"):
    """Gradient exchange of K machines with G GPUs each, in three steps.

    1. all-reduce among the G GPUs of each machine over ``intra_bandwidth``;
    2. one GPU per machine exchanges with the other machines: ``inter="ring"``
       or ``"tree"`` all-reduce, or ``"ps"``: push to and pull from ``n_ps``
       parameter servers under ``sharing``;
    3. that GPU broadcasts the result to the other ``G - 1`` GPUs.

    Parameters
    ----------
    model_bytes : float or array_like, bytes
        Model (and gradient) size M (>= 0).
    bandwidth : float or array_like, bytes/s
        NIC line rate B of each machine (> 0).
    machines : int or array_like, machines
        K (whole, >= 1).
    gpus_per_machine : int or array_like, GPUs
        G (whole, >= 1).
    intra_bandwidth : float or array_like, bytes/s
        Bandwidth between GPUs of one machine (> 0).
    inter : {"ring", "tree", "ps"}
        How machines exchange gradients.
    n_ps : int or array_like, servers
        Parameter servers when ``inter="ps"``.
    per_flow_cap : float or array_like or None, bytes/s
        Per-flow cap of the parameter-server flows (``inter="ps"``).
    sharing : {"ps", "fcfs"}
        Link sharing of the parameter-server links (``inter="ps"``).

    Returns
    -------
    float or ndarray, s
        Communication time of one step, with no overlap.

    References
    ----------
    Li et al. 2022, Sec. 4.4 (the scheme, following Goyal et al.); the costs of each
    step are eq. 11 and eqs. 7-8 applied to each level (our own composition).
    """
    m = checked("model_bytes", model_bytes)
    b = checked("bandwidth", bandwidth, positive=True, finite=False)
    k = checked("machines", machines, minimum=1, integer=True)
    g = checked("gpus_per_machine", gpus_per_machine, minimum=1, integer=True)
    bi = checked("intra_bandwidth", intra_bandwidth, positive=True, finite=False)
    choice("inter", inter, ALLREDUCE_ALGORITHMS + ("ps",))
    if inter == "ps":
        p = servers(checked("n_ps", n_ps, minimum=1, integer=True))
        cap = checked_cap("per_flow_cap", per_flow_cap)
        choice("sharing", sharing, LINK_SHARINGS)
        across = push_time(m, b, k, p, cap, sharing) + pull_time(m, b, k, p, cap, sharing)
    else:
        across = allreduce_time(m, b, k, inter)
    t = ring_time(m, bi, g) + across + broadcast_time(m, bi, g)
    return broadcast_result(t, model_bytes, bandwidth, machines, gpus_per_machine, intra_bandwidth,
                n_ps, per_flow_cap)
