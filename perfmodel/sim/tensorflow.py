"""Li et al. 2020's TensorFlow-specific mechanisms, as trace transformations and helpers.

The simulator itself (:func:`perfmodel.sim.simulate`) implements the
mechanisms that act while steps run:

* HTTP/2 multiplexing with flow-control window WIN (Li et al. 2020, Sec. 3.2.2):
  ``simulate(..., window=WIN)``; :data:`GRPC_WINDOW` is the paper's average.
  A stream larger than WIN sends WIN, goes back to the end of its link's
  queue and is sent to completion on its second turn.
* Flow control disabled (Sec. 3.3): ``window=None`` (the default); each
  stream is sent whole, in the order it was queued -- enforce an order with
  :func:`order_transmissions`.
* Several parameter servers sharing bandwidth by Sec. 5's rule:
  ``simulate(..., server_sharing="nic")`` (the default), max-min fair rates
  under the servers' links and each worker's NIC.  :func:`fair_shares`
  computes those rates for a given set of flows.
* The per-flow cap (Li et al. 2022, Sec. 4.4): ``simulate(..., per_flow_cap=...)``.

This module adds what changes the trace before it runs:

* :func:`assign_servers`: TensorFlow's layer-to-server assignment (each layer
  to the server holding the fewest bytes so far), for ``Trace.from_layers(...,
  servers=...)``;
* :func:`add_parsing_overhead`: the parsing overhead ``alpha * size + beta``
  of a received tensor moved from the transmission to a dependent
  computation (Sec. 3.2.1);
* :func:`order_transmissions`: enforced transmission orders (in order,
  reverse, random, and a critical-path order in the spirit of TicTac).

References
----------
Li, Yan, Paolieri, Golubchik. Throughput Prediction of Asynchronous SGD in
TensorFlow. ICPE, 2020.  Sec. 3.2.1 (parsing overhead, Fig. 10), 3.2.2 (HTTP/2
multiplexing, WIN about 28 MB, Fig. 12), 3.3 (flow control disabled,
transmission orders, TicTac), 3.4 (Algorithm 3.1), 5 (two parameter servers,
Fig. 23 layer assignment, bandwidth sharing).
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from ..errors import SpecError
from .trace import COMMUNICATION, Op, Step, Trace

__all__ = ["GRPC_WINDOW", "ORDERS", "assign_servers", "add_parsing_overhead",
           "order_transmissions", "fair_shares"]

#: HTTP/2 flow-control window WIN of gRPC measured by Li et al. 2020 (Sec. 3.2.2: "on
#: average, 28 MB").
GRPC_WINDOW = 28e6
#: Transmission orders of :func:`order_transmissions`.
ORDERS = ("in_order", "reverse", "random", "critical_path")


def assign_servers(layer_bytes, n_servers: int) -> np.ndarray:
    """TensorFlow's assignment of layers to parameter servers (Li et al. 2020, Sec. 5).

    Layers are taken in order; each goes to the server currently holding the
    fewest bytes (the lowest index on ties).  Layers without parameters (0
    bytes) go to server 0 and change nothing.

    Parameters
    ----------
    layer_bytes : array_like, B
        Parameter bytes per layer.
    n_servers : int
        Parameter servers (>= 1).

    Returns
    -------
    ndarray of int
        The server of each layer.

    References
    ----------
    Li et al. 2020, Sec. 5 and Fig. 23 ("Each layer is assigned to the parameter
    server that is currently holding parameters with smallest total size").

    Examples
    --------
    VGG-like sizes: the big fully-connected layer makes the split uneven.

    >>> assign_servers([1, 2, 3, 400, 16, 4], 2).tolist()
    [0, 1, 0, 1, 0, 0]
    """
    if isinstance(n_servers, bool) or not isinstance(n_servers, (int, np.integer)) \
            or n_servers < 1:
        raise SpecError("n_servers", f"must be a whole number >= 1, got {n_servers!r}")
    m = np.asarray(layer_bytes, dtype=float)
    if m.ndim != 1 or not (np.isfinite(m) & (m >= 0)).all():
        raise SpecError("layer_bytes", "expected a 1-D array of finite bytes >= 0")
    totals = np.zeros(int(n_servers))
    out = np.zeros(len(m), dtype=int)
    for l, size in enumerate(m):
        if size > 0:
            s = int(np.argmin(totals))
            out[l] = s
            totals[s] += size
    return out


def _rebuild(trace: Trace, steps) -> Trace:
    return trace.replace(steps=tuple(steps))


def add_parsing_overhead(trace: Trace, alpha: float, beta: float) -> Trace:
    """Move the parsing of each received tensor into a computation after its transfer.

    Every transmission ``x`` of ``bytes > 0`` gets a follower ``parse:x`` of
    ``alpha * bytes + beta`` seconds on the receiver: the worker for a
    downlink (deserializing parameters), the op's server (``ps``) for an
    uplink (deserializing gradients).  The ops that waited for ``x`` wait for
    ``parse:x`` instead.  Transfer times themselves come from the bandwidth,
    so nothing is subtracted from ``x``.

    Parameters
    ----------
    trace : Trace
    alpha : float, s/B
        Parsing seconds per byte (>= 0).
    beta : float, s
        Fixed parsing seconds per tensor (>= 0).

    Returns
    -------
    Trace

    References
    ----------
    Li et al. 2020, Sec. 3.2.1 and Fig. 10 (``op.overhead = alpha * op.size + beta``,
    "We remove this parsing overhead from the duration of a communication
    operation and assign it to a dependent computation operation").

    Examples
    --------
    >>> t = Trace.from_layers([1e6], [0.01], [0.02], 0.0, overlap=False)
    >>> p = add_parsing_overhead(t, 1e-9, 1e-4)
    >>> [(op.id, op.res, op.deps) for op in p.steps[0].ops][:3]
    [('down0', 'downlink', ()), ('parse:down0', 'worker', ('down0',)),
     ('fwd0', 'worker', ('parse:down0',))]
    >>> round(p.steps[0].ops[1].seconds, 9)
    0.0011
    """
    for name, value in (("alpha", alpha), ("beta", beta)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) \
                or not (np.isfinite(value) and value >= 0):
            raise SpecError(name, f"must be a finite number >= 0, got {value!r}")
    steps = []
    for step in trace.steps:
        ids = {op.id for op in step.ops}
        renamed = {}
        ops = []
        for op in step.ops:
            if op.res in COMMUNICATION and op.bytes > 0:
                pid = f"parse:{op.id}"
                if pid in ids:
                    raise SpecError("trace", f"op id {pid!r} exists already; cannot add the "
                                             f"parsing op of {op.id!r}")
                renamed[op.id] = pid
        for op in step.ops:
            deps = tuple(renamed.get(d, d) for d in op.deps)
            ops.append(Op(op.id, op.res, op.bytes, op.seconds, deps, op.server, op.name))
            if op.id in renamed:
                res = "worker" if op.res == "downlink" else "ps"
                ops.append(Op(renamed[op.id], res, seconds=alpha * op.bytes + beta,
                              deps=(op.id,), server=op.server,
                              name=f"parse {op.name or op.id}"))
        steps.append(Step(tuple(ops)))
    return _rebuild(trace, steps)


def _earliest_starts(step: Step) -> np.ndarray:
    """Start of each op when transmissions take no time and compute is unlimited."""
    order = _topological(step)
    start = np.zeros(len(step.ops))
    for i in order:
        for p in step.preds[i]:
            op = step.ops[p]
            end = start[p] + (op.seconds if op.res not in COMMUNICATION else 0.0)
            start[i] = max(start[i], end)
    return start


def _topological(step: Step) -> list:
    indeg = [len(p) for p in step.preds]
    succ = defaultdict(list)
    for i, row in enumerate(step.preds):
        for p in row:
            succ[p].append(i)
    ready = [i for i, d in enumerate(indeg) if d == 0]
    out = []
    while ready:
        i = ready.pop(0)
        out.append(i)
        for j in succ[i]:
            indeg[j] -= 1
            if indeg[j] == 0:
                ready.append(j)
    return out


def order_transmissions(trace: Trace, order: str = "in_order", res: str = "downlink",
                        seed: int = 0) -> Trace:
    """Enforce the order in which a worker sends the transmissions of ``res``.

    With flow control disabled (Li et al. 2020, Sec. 3.3; ``simulate(window=None)``)
    a link sends whole streams in the order they were queued, and ready ops
    are queued in their listing order.  This reorders the listing of the
    ``res`` ops of every step (other ops keep their places):

    * ``"in_order"``: as profiled (no change);
    * ``"reverse"``: the reverse;
    * ``"random"``: a seeded random permutation per step;
    * ``"critical_path"``: by the time the first op waiting for each
      transmission could start if transmissions took no time (the schedule
      in the spirit of TicTac, which sends first what the computation needs
      first); ties keep the profiled order.

    Parameters
    ----------
    trace : Trace
    order : {"in_order", "reverse", "random", "critical_path"}
    res : {"downlink", "uplink"}
    seed : int
        Seeds ``"random"``.

    Returns
    -------
    Trace

    References
    ----------
    Li et al. 2020, Sec. 3.3 (TicTac, enforced orders with flow control disabled).

    Examples
    --------
    >>> t = Trace.from_layers([1e6, 2e6, 3e6], [0.01] * 3, [0.02] * 3, 0.0)
    >>> [op.id for op in order_transmissions(t, "reverse").steps[0].ops][:3]
    ['down2', 'down1', 'down0']
    >>> [op.id for op in order_transmissions(t, "critical_path").steps[0].ops][:3]
    ['down0', 'down1', 'down2']
    """
    if order not in ORDERS:
        raise SpecError("order", f"must be one of {', '.join(ORDERS)}; got {order!r}")
    if res not in COMMUNICATION:
        raise SpecError("res", f"must be one of {', '.join(COMMUNICATION)}; got {res!r}")
    rng = np.random.default_rng(seed)
    steps = []
    for step in trace.steps:
        slots = [i for i, op in enumerate(step.ops) if op.res == res]
        if order == "in_order":
            chosen = slots
        elif order == "reverse":
            chosen = slots[::-1]
        elif order == "random":
            chosen = [slots[i] for i in rng.permutation(len(slots))]
        else:
            start = _earliest_starts(step)
            need = {i: np.inf for i in slots}
            for j, row in enumerate(step.preds):
                for p in row:
                    if p in need:
                        need[p] = min(need[p], start[j])
            chosen = sorted(slots, key=lambda i: (need[i], slots.index(i)))
        ops = list(step.ops)
        for pos, i in zip(slots, chosen):
            ops[pos] = step.ops[i]
        steps.append(Step(tuple(ops)))
    return _rebuild(trace, steps)


def fair_shares(flows, per_flow_cap: float = 1.0) -> dict:
    """Max-min fair bandwidth fractions of worker-server flows in one direction.

    Each server link and each worker's NIC carries at most 1 (the bandwidth
    B); each flow at most ``per_flow_cap`` (a fraction of B).  This is the
    rule :func:`~perfmodel.sim.simulate` applies with several servers
    (``server_sharing="nic"``).

    Parameters
    ----------
    flows : iterable of (worker, server)
        Active flows.
    per_flow_cap : float
        Largest fraction of B one flow gets (0 < cap <= 1).

    Returns
    -------
    dict of (worker, server) to float
        Fraction of B of each flow.

    References
    ----------
    Li et al. 2020, Sec. 5: "all active connections with the same parameter server
    equally share its bandwidth ... [a worker that is the only one exchanging
    data with ps1 but contends with n - 1 others at ps2 gets] 1/n to the
    connections with ps2 ... but only up to 1 - 1/n to those with ps1".

    Examples
    --------
    Worker 0 is alone on server 0 and shares server 1 with workers 1 and 2 (n = 3):

    >>> shares = fair_shares([(0, 0), (0, 1), (1, 1), (2, 1)])
    >>> {f: round(x, 4) for f, x in shares.items()}
    {(0, 0): 0.6667, (0, 1): 0.3333, (1, 1): 0.3333, (2, 1): 0.3333}
    """
    flows = list(dict.fromkeys(tuple(f) for f in flows))
    if not (isinstance(per_flow_cap, (int, float)) and 0 < per_flow_cap <= 1):
        raise SpecError("per_flow_cap", f"must be in (0, 1], got {per_flow_cap!r}")
    rate = {f: 0.0 for f in flows}
    left: dict = defaultdict(lambda: 1.0)
    open_flows = list(flows)
    level = 0.0
    while open_flows:
        users: dict = defaultdict(int)
        for w, s in open_flows:
            users[("server", s)] += 1
            users[("nic", w)] += 1
        inc = max(0.0, min([per_flow_cap - level] + [left[r] / n for r, n in users.items()]))
        level += inc
        for r, n in users.items():
            left[r] -= inc * n
        still = []
        for f in open_flows:
            rate[f] += inc
            w, s = f
            if not (level >= per_flow_cap * (1 - 1e-12) or left[("server", s)] <= 1e-12
                    or left[("nic", w)] <= 1e-12):
                still.append(f)
        open_flows = still
    return rate
