"""Coarse-grained models of synchronous SGD (Li et al. 2022, Sec. 3.1, eqs. 7-11).

Two levels, as everywhere in perfmodel:

* formulas -- :func:`sync_step_time` (parameter server, eqs. 7-10) and
  :func:`allreduce_step_time` (ring all-reduce, eq. 11), with their per-phase
  breakdowns :func:`sync_phases` and :func:`allreduce_phases` and the multi-GPU
  wrapper :func:`hierarchical_step_time`.  They take floats or arrays that
  broadcast (a grid of worker counts against a grid of bandwidths is one call)
  and return a float for scalar input, an array otherwise.  A step time is by
  construction the sum of its exposed phases: one source of truth.
* models -- :class:`SyncCoarse` and :class:`AllReduceCoarse`, frozen objects
  holding only options, whose ``estimate(profile, cluster, config)`` returns an
  :class:`~perfmodel.result.Estimate`.

Phases of a parameter-server step, in time order: ``downlink`` (pull of the
model), ``forward``, ``backward``, ``uplink`` (push of the gradients),
``update`` (on the server).  With ``overlap=True`` (Li et al. 2022, eq. 10) the
downlink runs alongside the forward pass and the uplink alongside the backward
pass, so only the longer of each pair is on the critical path: that one is
reported with its full duration and the hidden one as 0 s (ties count as
compute), which keeps ``sum(phases) == step_time``.

Options the paper does not have are keyword-only and default to its behaviour:
``n_ps`` servers splitting the model evenly, a ``per_flow_cap`` (Sec. 4.4),
``link_efficiency`` (goodput over line rate: the bandwidth used is
``bandwidth * link_efficiency``), ``sharing_weight`` w (hybrid =
``w * T_PS + (1 - w) * T_FCFS``; 0.5 is eq. 9), ``update_growth`` g (the
server update of a step takes ``T_S ((1 - g) + g K)``: 0 is once per step as
eqs. 7-10 print, 1 once per gradient) and, for machines with several
GPUs, ``gpus_per_machine`` with ``intra_bandwidth`` (Sec. 4.4), which adds the
phases ``intra_broadcast`` (after the downlink) and ``intra_reduce`` (before
the uplink), and for a lossy link ``timeout_probability`` with
``retransmit_timeout``, which adds a last phase ``timeouts``
(:func:`timeout_stall`).

Examples
--------
>>> import numpy as np
>>> sync_step_time(100e6, 1.25e9, 0.1, 0.2, 0.01, 4, sharing="ps")   # 0.32+0.3+0.32+0.01
0.95
>>> sync_step_time(100e6, 1.25e9, 0.1, 0.2, 0.01, np.array([1, 2, 4])).round(3)
array([0.47, 0.59, 0.83])

References
----------
Li, Paolieri, Golubchik, Lin, Yan. Predicting Throughput of Distributed SGD.
IEEE TPDS, 2022.  Sec. 3.1, eqs. 7-11; Sec. 4.4.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from . import _fluid
from . import _validate as _v
from . import collectives as _c
from .errors import SpecError
from .interface import BatchEstimate, ConfigBatch, check_inputs
from .result import Estimate
from .specs import Cluster, Config, Profile

__all__ = [
    "SHARINGS", "ALGORITHMS", "SYNC_PHASES", "ALLREDUCE_PHASES", "ARCHITECTURES",
    "sync_phases", "sync_step_time", "timeout_stall", "timeout_probability_from_spread",
    "timeout_probability_from_delay",
    "allreduce_phases", "allreduce_step_time",
    "hierarchical_step_time",
    "SyncCoarse", "AllReduceCoarse", "LockStep", "check_data_parallel_inputs",
]

#: Link-sharing models of the parameter server (Li et al. 2022, eqs. 7, 8, 9).
SHARINGS = ("ps", "fcfs", "hybrid")
#: All-reduce algorithms (``"ring"`` is Li et al. 2022, eq. 11).
ALGORITHMS = _c.ALLREDUCE_ALGORITHMS
#: Architectures of :func:`hierarchical_step_time`.
ARCHITECTURES = ("ps", "allreduce")
#: Phases of a parameter-server step, in time order (single GPU per machine).
SYNC_PHASES = ("downlink", "forward", "backward", "uplink", "update")
#: Phases of an all-reduce step, in time order (single GPU per machine).
ALLREDUCE_PHASES = ("forward", "backward", "allreduce")

_EQUATION = {("ps", False): "Li et al. 2022 eq. 7", ("fcfs", False): "Li et al. 2022 eq. 8",
             ("hybrid", False): "Li et al. 2022 eq. 9",
             ("ps", True): "Li et al. 2022 eq. 10 applied to eq. 7 (our extension)",
             ("fcfs", True): "Li et al. 2022 eq. 10 applied to eq. 8 (our extension)",
             ("hybrid", True): "Li et al. 2022 eq. 10",
             ("ring", False): "Li et al. 2022 eq. 11",
             ("ring", True): "Li et al. 2022 eq. 11 with eq. 10's overlap (our extension)",
             ("tree", False): "binomial tree all-reduce (our extension)",
             ("tree", True): "binomial tree all-reduce with overlap (our extension)"}


# --------------------------------------------------------------------------
# Shared machinery
# --------------------------------------------------------------------------

def _total(phases: dict):
    """Sum of the phases, smallest arrays first (fewer full-size additions)."""
    terms = sorted(phases.values(), key=np.size)
    total = terms[0]
    for term in terms[1:]:
        total = total + term
    return total


#: Elements per block when a step time is evaluated blockwise (fits in L2 cache).
_BLOCK = 1 << 16


def _blockwise(kernel, arrays: tuple, options: tuple):
    """``_total(kernel(*arrays, *options))`` evaluated in cache-sized blocks.

    A big broadcast (say 1000 workers x 1000 bandwidths) is cut along its
    longest axis into blocks of about ``_BLOCK`` elements, so the temporaries
    of the kernel stay in cache and are recycled by the allocator instead of
    being fresh multi-megabyte arrays; the result is written into one output
    array.  A few dozen Python iterations over blocks, never over elements.
    ``arrays`` may hold None (absent options), passed through unchanged.
    """
    shape = _shape(*arrays)
    size = math.prod(shape)
    if size <= 2 * _BLOCK:
        return _total(kernel(*arrays, *options))
    axis = int(np.argmax(shape))
    step = max(1, _BLOCK // (size // shape[axis]))
    nd = len(shape)
    padded = [a if np.ndim(a) == 0 else a.reshape((1,) * (nd - a.ndim) + a.shape)
              for a in arrays]
    out = np.empty(shape)
    lead = (slice(None),) * axis
    for start in range(0, shape[axis], step):
        cut = lead + (slice(start, start + step),)
        block = [a if np.ndim(a) == 0 or a.shape[axis] == 1 else a[cut] for a in padded]
        out[cut] = _total(kernel(*block, *options))
    return out


def _finish(phases: dict, shape: tuple) -> dict:
    """Phases as floats (scalar input) or as arrays of the inputs' broadcast shape."""
    if shape == ():
        return {name: float(value) for name, value in phases.items()}
    return {name: np.array(np.broadcast_to(value, shape), dtype=float)
            for name, value in phases.items()}


def _shaped(total, shape: tuple):
    """A step time as a float (scalar input) or an array of the inputs' broadcast shape."""
    if shape == ():
        return float(total)
    if np.shape(total) != shape:
        return np.array(np.broadcast_to(total, shape), dtype=float)
    return total


def _shape(*arrays) -> tuple:
    """Broadcast shape of the arguments (None, floats and ints are scalars)."""
    shapes = [a.shape if isinstance(a, np.ndarray) else np.shape(a) for a in arrays
              if a is not None and type(a) is not float and type(a) is not int]
    shapes = [sh for sh in shapes if sh]
    if not shapes:
        return ()
    return shapes[0] if len(shapes) == 1 else np.broadcast_shapes(*shapes)


def _overlapped(comm: dict, compute_name: str, compute, phases: dict) -> None:
    """Add a communication group overlapped with one compute phase, critical path charged.

    The longer of (sum of ``comm``, ``compute``) keeps its full duration, the
    other is hidden (0 s), so the pair contributes ``max(sum(comm), compute)``.
    """
    busy = _total(comm)
    exposed = busy > compute
    for name, value in comm.items():
        phases[name] = np.where(exposed, value, 0.0)
    phases[compute_name] = np.where(exposed, 0.0, compute)


def _check_common(model_bytes, bandwidth, t_forward, t_backward, workers, link_efficiency,
                  workers_name="workers"):
    m = _v.checked("model_bytes", model_bytes)
    b = _v.checked("bandwidth", bandwidth, positive=True, finite=False)
    tf = _v.checked("t_forward", t_forward)
    tb = _v.checked("t_backward", t_backward)
    k = _v.checked(workers_name, workers, minimum=1, integer=True)
    eff = _v.checked("link_efficiency", link_efficiency, positive=True, maximum=1.0)
    if not np.all(eff == 1):
        b = b * eff
    return m, b, tf, tb, k, eff


def _check_gpus(gpus_per_machine, intra_bandwidth):
    """``(G, b_intra)`` arrays, or ``(None, None)`` for the flat (one GPU) model."""
    g = _v.checked("gpus_per_machine", gpus_per_machine, minimum=1, integer=True)
    if intra_bandwidth is None:
        if not _fluid.is_one(g):
            raise SpecError("intra_bandwidth", "is required when gpus_per_machine > 1 "
                                               f"(gpus_per_machine={gpus_per_machine!r})")
        return None, None
    return g, _v.checked("intra_bandwidth", intra_bandwidth, positive=True, finite=False)


# --------------------------------------------------------------------------
# Scalar fast path
# --------------------------------------------------------------------------
#
# A call with plain numbers everywhere (a search or a notebook loop evaluating
# one configuration at a time) skips the array machinery: one pass of float
# comparisons makes the same checks as :func:`_check_sync` and
# :func:`_check_allreduce`, then the arithmetic of :func:`_sync_terms`,
# :func:`_allreduce_terms` and :mod:`perfmodel._fluid` is repeated operation for
# operation on Python floats, in the same order, so the result is the array
# path's to the bit.  Whenever a check fails or an argument is not a plain
# number these return None and the caller takes the array path, which raises
# the SpecError naming the argument (one source of the messages).  A result
# that is not finite (an overflowing M / B) also goes back to the array path,
# whose NaN and inf propagation the float code does not copy.

_SCALARS = _v.SCALAR_TYPES
_INF = math.inf


def _scalar_total(phases: dict):
    """Sum of scalar phases in their order (as :func:`_total`), or None when not finite."""
    total = None
    for value in phases.values():
        total = value if total is None else total + value
    return total if total < _INF else None


def _sync_scalar(m, b, tf, tb, ts, k, sharing, overlap, p, cap, eff, w, g, bi, growth, tq,
                 rto, phases: bool):
    """One parameter-server step on floats, or None: take the array path.

    Returns the step time, or with ``phases`` the dict of :func:`sync_phases`.
    """
    if not (_SCALARS.issuperset((type(m), type(b), type(tf), type(tb), type(ts), type(k),
                                 type(p), type(eff), type(w), type(g), type(growth), type(tq),
                                 type(rto)))
            and (cap is None or type(cap) in _SCALARS) and (bi is None or type(bi) in _SCALARS)
            and type(sharing) is str and (overlap is True or overlap is False)):
        return None
    m, b, tf, tb, ts, k = float(m), float(b), float(tf), float(tb), float(ts), float(k)
    p, eff, w, g = float(p), float(eff), float(w), float(g)
    growth, tq, rto = float(growth), float(tq), float(rto)
    inf = _INF
    # the checks of _check_sync (x % 1.0 == 0.0: a finite whole number); float
    # literals keep every comparison float against float, the fastest kind
    if not (0.0 <= m < inf and b > 0.0 and 0.0 <= tf < inf and 0.0 <= tb < inf
            and 0.0 <= ts < inf and k >= 1.0 and k % 1.0 == 0.0 and 0.0 < eff <= 1.0
            and p >= 1.0 and p % 1.0 == 0.0 and 0.0 <= w <= 1.0 and g >= 1.0
            and g % 1.0 == 0.0 and 0.0 <= growth <= 1.0 and 0.0 <= tq <= 1.0
            and 0.0 < rto < inf and sharing in SHARINGS):
        return None
    if bi is None:
        if g != 1:
            return None
    else:
        bi = float(bi)
        if not bi > 0:
            return None
    if cap is not None:
        cap = float(cap)
        if not cap > 0:
            return None
        cap = None if cap == _INF else cap
    if eff != 1:
        b = b * eff
        if cap is not None:
            cap = cap * eff
    one = p == 1                       # n_ps=None in the kernels: one server
    # _fluid.shared_time and _fluid.solo_time
    if one:
        shared = k * (m / b)
    else:
        shared = k * (m / (p * b))
        if not shared >= m / b:
            shared = m / b
    solo = m / b
    if cap is not None:
        capped = m / cap if one else m / (p * cap)
        if not shared >= capped:
            shared = capped
        if not solo >= capped:
            solo = capped
    down = shared
    if sharing == "ps":
        up = shared
    elif sharing == "fcfs":
        up = solo
    else:
        up = w * shared + (1.0 - w) * solo
    update = ts if growth == 0 else ts * ((1.0 - growth) + growth * k)
    if not one:
        update = update / p
    if tq == 0:
        stall = None
    else:   # timeout_stall on floats
        a = shared - solo
        exposed = rto - a / 2.0 if a <= rto else rto * rto / (2.0 * (a if a >= rto else rto))
        # numpy's power, as the array path takes it: libm's pow may differ from it by an ulp
        kept = float(np.power(np.float64(1.0 - tq), np.float64(k if one else k * p)))
        stall = 2.0 * ((1.0 - kept) * exposed)
    if bi is None:
        if overlap:   # _overlapped: the longer of each pair is charged, the other is 0 s
            if down > tf:
                tf = 0.0
            else:
                down = 0.0
            if up > tb:
                tb = 0.0
            else:
                up = 0.0
        if not phases:
            total = down + tf + tb + up + update
            if stall is not None:
                total = total + stall
            return total if total < _INF else None
        out = {"downlink": down, "forward": tf, "backward": tb, "uplink": up, "update": update}
    else:
        bcast = m / bi if g > 1 else 0.0
        reduce = (2.0 * (g - 1.0) / g) * (m / bi)
        if overlap:
            if down + bcast > tf:
                tf = 0.0
            else:
                down = bcast = 0.0
            if reduce + up > tb:
                tb = 0.0
            else:
                reduce = up = 0.0
        out = {"downlink": down, "intra_broadcast": bcast, "forward": tf, "backward": tb,
               "intra_reduce": reduce, "uplink": up, "update": update}
    if stall is not None:
        out["timeouts"] = stall
    total = _scalar_total(out)
    if total is None:
        return None
    return out if phases else total


def _allreduce_scalar(m, b, tf, tb, k, algorithm, overlap, eff, g, bi, phases: bool):
    """One all-reduce step on floats, or None: take the array path.

    Returns the step time, or with ``phases`` the dict of :func:`allreduce_phases`.
    """
    if not (_SCALARS.issuperset((type(m), type(b), type(tf), type(tb), type(k), type(eff),
                                 type(g)))
            and (bi is None or type(bi) in _SCALARS)
            and type(algorithm) is str and (overlap is True or overlap is False)):
        return None
    m, b, tf, tb, k, eff, g = float(m), float(b), float(tf), float(tb), float(k), float(eff), \
        float(g)
    inf = _INF
    if not (0.0 <= m < inf and b > 0.0 and 0.0 <= tf < inf and 0.0 <= tb < inf
            and k >= 1.0 and k % 1.0 == 0.0 and 0.0 < eff <= 1.0 and g >= 1.0
            and g % 1.0 == 0.0 and algorithm in ALGORITHMS):
        return None
    if bi is None:
        if g != 1:
            return None
    else:
        bi = float(bi)
        if not bi > 0:
            return None
    if eff != 1:
        b = b * eff
    if algorithm == "ring":
        comm = (2.0 * (k - 1.0) / k) * (m / b)
    else:
        comm = (2.0 * math.ceil(math.log2(k))) * (m / b)
    if bi is None:
        if overlap:
            if comm > tb:
                tb = 0.0
            else:
                comm = 0.0
        if not phases:
            total = tf + tb + comm
            return total if total < _INF else None
        out = {"forward": tf, "backward": tb, "allreduce": comm}
    else:
        reduce = (2.0 * (g - 1.0) / g) * (m / bi)
        bcast = m / bi if g > 1 else 0.0
        if overlap:
            if reduce + comm + bcast > tb:
                tb = 0.0
            else:
                reduce = comm = bcast = 0.0
        out = {"forward": tf, "backward": tb, "intra_reduce": reduce, "allreduce": comm,
               "intra_broadcast": bcast}
    total = _scalar_total(out)
    if total is None:
        return None
    return out if phases else total


# --------------------------------------------------------------------------
# Parameter server (eqs. 7-10)
# --------------------------------------------------------------------------

def _update_time(ts, k, growth, n_ps):
    """Server update of one sync step: ``T_S ((1 - g) + g K) / n_ps`` (g = 0: eqs. 7-10)."""
    if growth is not None:  # None: g = 0, the paper's one update per step, bit for bit
        ts = ts * ((1.0 - growth) + growth * k)
    return ts if n_ps is None else ts / n_ps


def timeout_stall(probability, timeout, messages, hidden):
    """Expected seconds that retransmission timeouts add to one transfer phase (ours).

    A phase (every worker's push, or every worker's pull) ends when its last
    message is delivered.  On a lossy link TCP recovers most losses by fast
    retransmit, but a lost retransmission or a loss among a message's last
    packets waits for the retransmission timeout ``r`` (the minimum RTO:
    200 ms on Linux, 1 s in ns-3).  Each of the phase's ``n`` messages
    stalls so with probability ``q``, independently.  While one message is
    stalled the link carries the others' bytes, so the stall delays the
    phase only by what those bytes cannot fill.  For a stall at a uniformly
    random point of the message (the losses are uniform over its packets),
    with ``a`` seconds of the other messages' work at the link's rate,
    ``a v`` of it is still to be sent (v uniform in [0, 1]) and the exposed
    stall is ``max(0, r - a v)``, whose mean is

    * ``r - a / 2`` when ``a <= r``,
    * ``r**2 / (2 a)`` when ``a > r``.

    The phase is delayed by ``(1 - (1 - q)**n)`` times that: at least one
    message stalls; stalls of several messages overlap (they wait at the
    same time), so we count one.

    Parameters
    ----------
    probability : float or array_like
        q, the chance that one message stalls, in [0, 1].
    timeout : float or array_like, s
        r, the length of one stall (> 0).
    messages : int or array_like
        n, messages of the phase (K workers times the servers).
    hidden : float or array_like, s
        a, the other messages' transmission time at the link's rate
        (``(K - 1) M / (n_ps B)`` for equal sharing; >= 0).

    Returns
    -------
    float or ndarray, s
        The expected exposed stall of the phase.

    Examples
    --------
    One worker (nothing hides a stall): ``q r``; 2 messages with 0.4 s of the
    other's bytes against a 1 s timeout: ``(1 - 0.9**2) (1 - 0.2)``.

    >>> timeout_stall(0.1, 1.0, 1, 0.0)
    0.1
    >>> round(timeout_stall(0.1, 1.0, 2, 0.4), 6)
    0.152
    >>> round(timeout_stall(0.1, 1.0, 2, 4.0), 6)     # mostly hidden: 0.19 / 8
    0.02375

    References
    ----------
    Ours (a loss-aware link model); Li et al. 2022 model loss-free links.
    Validated against the ns-3 matrix's lossy regimes (docs/validation.md).
    """
    q = np.asarray(probability, dtype=float)
    r = np.asarray(timeout, dtype=float)
    a = np.asarray(hidden, dtype=float)
    exposed = np.where(a <= r, r - a / 2.0, r * r / (2.0 * np.maximum(a, r)))
    out = (1.0 - (1.0 - q) ** np.asarray(messages, dtype=float)) * exposed
    return float(out) if out.ndim == 0 else out


def timeout_probability_from_spread(step_time_std, timeout, messages, compute_std=0.0):
    """The timeout probability q that explains a measured spread of step times (ours).

    On a lossy link a timeout and a slower link both just lengthen a step,
    so a step's mean cannot tell them apart (from 1 and 2 workers the
    calibration trades one for the other).  Their spread can: a slower
    link lengthens every step a little, a timeout lengthens a few steps by
    a whole ``r``.  A step has two transfer phases (push and pull), each
    stalled by ``r`` with probability ``pi = 1 - (1 - q)**n`` (one of its
    ``n`` messages stalls, :func:`timeout_stall` with nothing hidden), so the
    stalls add ``2 pi (1 - pi) r**2`` to the variance of the step time.  The
    moment estimator solves

        step_time_std**2 - compute_std**2 = 2 pi (1 - pi) r**2

    for ``pi`` (the smaller root; an excess above ``r**2 / 2`` gives
    ``pi = 1/2``, none gives 0) and returns ``q = 1 - (1 - pi)**(1 / n)``.

    Exact for one worker, where nothing hides a stall; with more workers
    the others' bytes hide part of it (:func:`timeout_stall`) and the
    estimate is low, so :func:`perfmodel.fit.selection.select_model` uses the
    measurement with the fewest workers.  A dozen stalls measure the
    variance to about +-50% (stall counts are Poisson, and back-to-back
    timeouts make them clump), so the selection treats the estimate as a
    band (:data:`perfmodel.fit.timeouts.TIMEOUT_BAND`), not a value; with per-step
    times :func:`timeout_probability_from_delay` is the more robust reading.

    Parameters
    ----------
    step_time_std : float or array_like, s
        Standard deviation of one worker's step time (sync: the step;
        async: the worker's own cycle), >= 0.
    timeout : float or array_like, s
        r, the length of one stall (``Cluster.retransmit_timeout``), > 0.
    messages : int or array_like
        n, the messages of one phase that can stall the step: K workers
        times the servers (sync), the servers (async, one worker's cycle).
    compute_std : float or array_like, s
        The spread the step has without loss (the compute time's, e.g.
        ``compute_cv * (t_forward + t_backward)``), >= 0.

    Returns
    -------
    float or ndarray
        q in [0, 1 - 0.5**(1/n)].

    Raises
    ------
    SpecError
        Naming the argument: negative spreads, a timeout <= 0, messages < 1.

    Examples
    --------
    One worker, one server, a 1 s timeout, a variance of 0.18 s^2 beyond the
    compute's: ``2 pi (1 - pi) = 0.18``, so ``pi = q = 0.1``.

    >>> round(timeout_probability_from_spread(0.18 ** 0.5, 1.0, 1), 6)
    0.1
    >>> round(timeout_probability_from_spread((0.18 + 0.16) ** 0.5, 1.0, 1, compute_std=0.4), 6)
    0.1
    >>> timeout_probability_from_spread(0.1, 1.0, 1, compute_std=0.2)   # no excess
    0.0

    References
    ----------
    Ours; the stall model is :func:`timeout_stall`'s.
    """
    sd = _v.checked("step_time_std", step_time_std)
    r = _v.checked("timeout", timeout, positive=True)
    n = _v.checked("messages", messages, minimum=1, integer=True)
    c = _v.checked("compute_std", compute_std)
    excess = np.maximum(sd * sd - c * c, 0.0) / (r * r)
    half = np.minimum(excess / 2.0, 0.25)            # pi (1 - pi)
    return _per_message(0.5 * (1.0 - np.sqrt(1.0 - 4.0 * half)), n)


def timeout_probability_from_delay(step_time_mean, step_time_median, timeout, messages):
    """The timeout probability q that explains the mean step's excess over the median (ours).

    The robust sibling of :func:`timeout_probability_from_spread`.  Fewer
    than half the steps stall, so the median step is a loss-free one, and
    the mean exceeds it by the expected stall of a step: two phases each
    stalled by ``r`` with probability ``pi = 1 - (1 - q)**n``, so

        step_time_mean - step_time_median = 2 pi r

    gives ``pi`` (clipped to [0, 1/2]) and ``q = 1 - (1 - pi)**(1 / n)``.
    Unlike the variance, the mean counts a back-to-back pair of timeouts
    (a backed-off RTO: 1 + 2 s in ns-3) by its length, not its square, and
    that is what the throughput pays: on ns-3's one-worker runs of a lossy
    link the mean's reading of q agrees between async and sync, the
    variance's does not (``tests/test_spread.py``).  A
    skewed compute time adds its own mean-median gap (about
    ``cv**2 / 2`` of the compute for a lognormal, 0.5% at cv 0.1), ignored.

    Parameters
    ----------
    step_time_mean, step_time_median : float or array_like, s
        Mean and median of one worker's step time (sync: the step; async:
        the worker's own cycle), > 0.
    timeout : float or array_like, s
        r (``Cluster.retransmit_timeout``), > 0.
    messages : int or array_like
        n, the messages of one phase (as for :func:`timeout_stall`).

    Returns
    -------
    float or ndarray
        q in [0, 1 - 0.5**(1/n)].

    Raises
    ------
    SpecError
        Naming the argument.

    Examples
    --------
    A 0.64 s median step, 0.80 s on average, 1 s timeouts, one server:
    ``2 pi = 0.16``.

    >>> round(timeout_probability_from_delay(0.80, 0.64, 1.0, 1), 6)
    0.08

    References
    ----------
    Ours; the stall model is :func:`timeout_stall`'s.
    """
    mean = _v.checked("step_time_mean", step_time_mean, positive=True)
    median = _v.checked("step_time_median", step_time_median, positive=True)
    r = _v.checked("timeout", timeout, positive=True)
    n = _v.checked("messages", messages, minimum=1, integer=True)
    return _per_message(np.clip((mean - median) / (2.0 * r), 0.0, 0.5), n)


def _per_message(pi, n):
    """q of one message from the chance ``pi = 1 - (1 - q)**n`` that a phase of n stalls."""
    out = 1.0 - (1.0 - pi) ** (1.0 / n)
    return float(out) if out.ndim == 0 else out


def _sync_terms(m, b, tf, tb, ts, k, n_ps, cap, w, g, bi, growth, tq, rto, sharing,
                overlap) -> dict:
    """Exposed phases (arrays, not yet broadcast) of a parameter-server step.

    ``n_ps=None`` is one server, ``cap=None`` no cap, ``g=None`` one GPU,
    ``growth=None`` an update time independent of K, ``tq=None`` a loss-free link.
    """
    # Pulls end at the same instant under ps and fcfs, and a "ps" push is the
    # same concurrent transfer (collectives._pull_time / _push_time).
    shared = _fluid.shared_time(m, b, k, n_ps, cap)
    down = shared
    if sharing == "ps":
        up = shared
    else:
        solo = _fluid.solo_time(m, b, n_ps, cap)  # the uncontended FCFS push
        if sharing == "fcfs":
            up = solo
        else:
            up = w * shared + (1.0 - w) * solo
    before = {"downlink": down}
    after = {"uplink": up}
    if g is not None:
        before["intra_broadcast"] = _fluid.broadcast_time(m, bi, g)
        after = {"intra_reduce": _fluid.ring_time(m, bi, g), "uplink": up}
    update = _update_time(ts, k, growth, n_ps)
    phases: dict = {}
    if overlap:
        _overlapped(before, "forward", tf, phases)
        _overlapped(after, "backward", tb, phases)
    else:
        phases.update(before)
        phases["forward"], phases["backward"] = tf, tb
        phases.update(after)
    phases["update"] = update
    if tq is not None:   # push and pull: each phase waits for its slowest message
        messages = k if n_ps is None else k * n_ps
        phases["timeouts"] = 2.0 * timeout_stall(tq, rto, messages,
                                                 shared - _fluid.solo_time(m, b, n_ps, cap))
    order = ("downlink", "intra_broadcast", "forward", "backward", "intra_reduce",
             "uplink", "update", "timeouts")
    return {name: phases[name] for name in order if name in phases}


def _check_sync(model_bytes, bandwidth, t_forward, t_backward, t_update, workers, sharing,
                overlap, n_ps, per_flow_cap, link_efficiency, sharing_weight, gpus_per_machine,
                intra_bandwidth, update_growth=0.0, timeout_probability=0.0,
                retransmit_timeout=0.2):
    """Validated kernel arrays, options and the broadcast shape of every input."""
    m, b, tf, tb, k, eff = _check_common(model_bytes, bandwidth, t_forward, t_backward,
                                         workers, link_efficiency)
    ts = _v.checked("t_update", t_update)
    _v.choice("sharing", sharing, SHARINGS)
    overlap = _v.boolean("overlap", overlap)
    p = _v.checked("n_ps", n_ps, minimum=1, integer=True)
    cap = _v.checked_cap("per_flow_cap", per_flow_cap)
    w = _v.checked("sharing_weight", sharing_weight, maximum=1.0)
    g, bi = _check_gpus(gpus_per_machine, intra_bandwidth)
    growth = _v.checked("update_growth", update_growth, maximum=1.0)
    tq = _v.checked("timeout_probability", timeout_probability, maximum=1.0)
    rto = _v.checked("retransmit_timeout", retransmit_timeout, positive=True)
    shape = _shape(m, b, tf, tb, ts, k, eff, p, w, bi, per_flow_cap, gpus_per_machine, growth,
                   tq, rto)
    if cap is not None and not np.all(eff == 1):
        cap = cap * eff
    growth = None if np.all(growth == 0) else growth
    if np.all(tq == 0):   # None: a loss-free link, no "timeouts" phase (the paper, bit for bit)
        tq = rto = None
    return ((m, b, tf, tb, ts, k, _fluid.servers(p), cap, w, g, bi, growth, tq, rto),
            (sharing, overlap), shape)


def sync_phases(model_bytes, bandwidth, t_forward, t_backward, t_update, workers,
                sharing="hybrid", overlap=False, *, n_ps=1, per_flow_cap=None,
                link_efficiency=1.0, sharing_weight=0.5, gpus_per_machine=1,
                intra_bandwidth=None, update_growth=0.0, timeout_probability=0.0,
                retransmit_timeout=0.2) -> dict:
    """Exposed seconds per phase of a synchronous parameter-server SGD step.

    Terms (``M`` model bytes, ``B`` bandwidth times ``link_efficiency``, K
    workers, one server, no cap; see :mod:`perfmodel.collectives` for the
    general terms):

    ========  ===============  =============  =========================================
    phase     ``"ps"`` (eq. 7) ``"fcfs"`` (8) ``"hybrid"`` (9), weight w
    ========  ===============  =============  =========================================
    downlink  K M / B          K M / B        K M / B
    uplink    K M / B          M / B          (w K + 1 - w) M / B  (w = 1/2: (K+1)M/2B)
    ========  ===============  =============  =========================================

    plus ``forward`` T_F, ``backward`` T_B and ``update``
    ``T_S ((1 - g) + g K) / n_ps`` (g = ``update_growth``; 0 is the paper's
    T_S / n_ps).  With
    ``overlap=True`` the step is ``max(downlink, T_F) + max(uplink, T_B) + T_S``
    (eq. 10 for "hybrid"; the same construction on eq. 7's or eq. 8's terms for
    "ps" and "fcfs"); the shorter member of each pair is reported as 0 s.

    Parameters
    ----------
    model_bytes : float or array_like, bytes
        Model size M (>= 0); gradients have the same size.
    bandwidth : float or array_like, bytes/s
        NIC line rate B of workers and servers (> 0).
    t_forward, t_backward : float or array_like, s
        Forward and backward time T_F, T_B of one worker's step (>= 0).
    t_update : float or array_like, s
        Update time T_S on the parameter server (>= 0).
    workers : int or array_like, workers
        K data-parallel workers (machines when ``gpus_per_machine > 1``), whole, >= 1.
    sharing : {"hybrid", "ps", "fcfs"}
        Link-sharing model (eq. 9, 7 or 8).
    overlap : bool
        Overlap downlink with forward and uplink with backward (eq. 10).
    n_ps : int or array_like, servers
        Parameter servers; the model is split evenly and each updates its share
        (update time ``T_S / n_ps``).  Our extension; 1 is the paper.
    per_flow_cap : float or array_like or None, bytes/s
        Largest rate of one flow, line rate (Li et al. 2022, Sec. 4.4); ``None`` or ``inf``: no cap.
    link_efficiency : float or array_like
        Goodput over line rate in (0, 1]; scales ``bandwidth`` and ``per_flow_cap``.
    sharing_weight : float or array_like
        Weight w in [0, 1] of the PS model in the hybrid (0.5 is eq. 9).
    gpus_per_machine : int or array_like, GPUs
        G GPUs per worker machine (Li et al. 2022, Sec. 4.4): the machine's gradients
        are first all-reduced over ``intra_bandwidth`` and the pulled model is
        broadcast to its GPUs.
    intra_bandwidth : float or array_like or None, bytes/s
        Bandwidth between GPUs of one machine; required when G > 1.  When given,
        the phases ``intra_broadcast`` and ``intra_reduce`` are reported.
    update_growth : float or array_like
        g in [0, 1]: the server applies the K gradients of a step at a cost
        ``T_S ((1 - g) + g K)``; 0 (default) is one update per step as eqs.
        7-10 print, 1 one update per gradient (``K T_S``).  Our extension,
        fitted per network by :func:`perfmodel.fit.network.calibrate_network`.
    timeout_probability, retransmit_timeout : float or array_like
        A lossy link (our extension): each message stalls for one
        ``retransmit_timeout`` (s) with probability ``timeout_probability``;
        when the probability is not 0 a last phase ``timeouts`` of ``2
        timeout_stall(q, r, K n_ps, (K - 1) M / (n_ps B))`` (push and pull,
        :func:`timeout_stall`; with a cap, the others' work is the shared
        time minus one message's) is reported.  0 (default): loss-free.

    Returns
    -------
    dict of str to float or ndarray, s
        Exposed time of each phase, in time order; floats for scalar input,
        otherwise arrays of the broadcast shape.  They sum to
        :func:`sync_step_time`.

    Raises
    ------
    SpecError
        Naming the argument, for NaN or out-of-range values, non-whole counts,
        an unknown ``sharing`` or a missing ``intra_bandwidth``.

    References
    ----------
    Li et al. 2022, Sec. 3.1.1, eqs. 7-10; Sec. 4.4 (multi-GPU machines, per-flow
    caps).  Multi-PS, link efficiency, the sharing weight and the update
    growth are our own extensions; the defaults reproduce the paper.

    Examples
    --------
    >>> sync_phases(100e6, 1.25e9, 0.1, 0.25, 0.01, 4, overlap=True)
    {'downlink': 0.32, 'forward': 0.0, 'backward': 0.25, 'uplink': 0.0, 'update': 0.01}
    """
    phases = _sync_scalar(model_bytes, bandwidth, t_forward, t_backward, t_update, workers,
                          sharing, overlap, n_ps, per_flow_cap, link_efficiency, sharing_weight,
                          gpus_per_machine, intra_bandwidth, update_growth, timeout_probability,
                          retransmit_timeout, True)
    if phases is not None:
        return phases
    arrays, options, shape = _check_sync(
        model_bytes, bandwidth, t_forward, t_backward, t_update, workers, sharing, overlap,
        n_ps, per_flow_cap, link_efficiency, sharing_weight, gpus_per_machine, intra_bandwidth,
        update_growth, timeout_probability, retransmit_timeout)
    return _finish(_sync_terms(*arrays, *options), shape)


def sync_step_time(model_bytes, bandwidth, t_forward, t_backward, t_update, workers,
                   sharing="hybrid", overlap=False, *, n_ps=1, per_flow_cap=None,
                   link_efficiency=1.0, sharing_weight=0.5, gpus_per_machine=1,
                   intra_bandwidth=None, update_growth=0.0, timeout_probability=0.0,
                   retransmit_timeout=0.2):
    """Duration of one synchronous parameter-server SGD step (Li et al. 2022, eqs. 7-10).

    The sum of the exposed phases of :func:`sync_phases` (see there for the
    terms and every option):

    * ``sharing="ps"``, eq. 7: ``2 K M / B + T_F + T_B + T_S``;
    * ``sharing="fcfs"``, eq. 8: ``(K + 1) M / B + T_F + T_B + T_S``;
    * ``sharing="hybrid"``, eq. 9: ``K M / B + T_F + T_B + (K + 1) M / (2 B) + T_S``;
    * ``overlap=True``, eq. 10: ``max(K M / B, T_F) + max((K + 1) M / (2 B), T_B) + T_S``
      (for "ps"/"fcfs" the same max() on that model's downlink/uplink terms).

    Parameters
    ----------
    model_bytes : float or array_like, bytes
        Model size M (>= 0).
    bandwidth : float or array_like, bytes/s
        NIC line rate B (> 0).
    t_forward, t_backward : float or array_like, s
        Forward and backward time of one worker's step (>= 0).
    t_update : float or array_like, s
        Parameter-server update time T_S (>= 0).
    workers : int or array_like, workers
        K workers (whole, >= 1).
    sharing : {"hybrid", "ps", "fcfs"}
        Link-sharing model.
    overlap : bool
        Overlap communication with computation (eq. 10).
    n_ps, per_flow_cap, link_efficiency, sharing_weight, gpus_per_machine, intra_bandwidth,
    update_growth, timeout_probability, retransmit_timeout
        Keyword-only extensions; see :func:`sync_phases`.

    Returns
    -------
    float or ndarray, s
        Step time; a float for scalar input, else an array of the broadcast shape.

    Raises
    ------
    SpecError
        Naming the bad argument.

    References
    ----------
    Li et al. 2022, Sec. 3.1.1, eqs. 7 (ps), 8 (fcfs), 9 (hybrid), 10 (overlap).

    Examples
    --------
    M = 100 MB, B = 10 Gbps = 1.25e9 B/s (M/B = 0.08 s), K = 4, T_F = 0.1 s,
    T_B = 0.2 s, T_S = 0.01 s; eq. 9: 0.32 + 0.3 + 0.2 + 0.01:

    >>> sync_step_time(100e6, 1.25e9, 0.1, 0.2, 0.01, 4)
    0.83
    """
    total = _sync_scalar(model_bytes, bandwidth, t_forward, t_backward, t_update, workers,
                         sharing, overlap, n_ps, per_flow_cap, link_efficiency, sharing_weight,
                         gpus_per_machine, intra_bandwidth, update_growth, timeout_probability,
                         retransmit_timeout, False)
    if total is not None:
        return total
    arrays, options, shape = _check_sync(
        model_bytes, bandwidth, t_forward, t_backward, t_update, workers, sharing, overlap,
        n_ps, per_flow_cap, link_efficiency, sharing_weight, gpus_per_machine, intra_bandwidth,
        update_growth, timeout_probability, retransmit_timeout)
    return _shaped(_blockwise(_sync_terms, arrays, options), shape)


# --------------------------------------------------------------------------
# All-reduce (eq. 11)
# --------------------------------------------------------------------------

def _allreduce_terms(m, b, tf, tb, k, g, bi, algorithm, overlap) -> dict:
    comm = {"allreduce": _fluid.allreduce_time(m, b, k, algorithm)}
    if g is not None:
        comm = {"intra_reduce": _fluid.ring_time(m, bi, g), "allreduce": comm["allreduce"],
                "intra_broadcast": _fluid.broadcast_time(m, bi, g)}
    phases = {"forward": tf}
    if overlap:
        _overlapped(comm, "backward", tb, phases)
        order = ("forward", "backward", "intra_reduce", "allreduce", "intra_broadcast")
        return {name: phases[name] for name in order if name in phases}
    phases["backward"] = tb
    phases.update(comm)
    return phases


def _check_allreduce(model_bytes, bandwidth, t_forward, t_backward, workers, algorithm,
                     overlap, link_efficiency, gpus_per_machine, intra_bandwidth):
    m, b, tf, tb, k, eff = _check_common(model_bytes, bandwidth, t_forward, t_backward,
                                         workers, link_efficiency)
    _v.choice("algorithm", algorithm, ALGORITHMS)
    overlap = _v.boolean("overlap", overlap)
    g, bi = _check_gpus(gpus_per_machine, intra_bandwidth)
    shape = _shape(m, b, tf, tb, k, eff, bi, gpus_per_machine)
    return (m, b, tf, tb, k, g, bi), (algorithm, overlap), shape


def allreduce_phases(model_bytes, bandwidth, t_forward, t_backward, workers, *,
                     algorithm="ring", overlap=False, link_efficiency=1.0,
                     gpus_per_machine=1, intra_bandwidth=None) -> dict:
    """Exposed seconds per phase of a decentralized (all-reduce) synchronous SGD step.

    Phases ``forward`` T_F, ``backward`` T_B and ``allreduce``
    (``2 (K - 1) / K * M / B`` for the ring, eq. 11).  With several GPUs per
    machine (``intra_bandwidth`` given) the exchange is hierarchical (Li et al. 2022,
    Sec. 4.4): ``intra_reduce`` (ring over the machine's GPUs), ``allreduce``
    across the K machines, ``intra_broadcast``.  With ``overlap=True`` (our
    extension, eq. 10's heuristic) the exchange runs alongside the backward
    pass: ``T_F + max(T_B, exchange)``.

    Parameters
    ----------
    model_bytes : float or array_like, bytes
        Model size M (>= 0).
    bandwidth : float or array_like, bytes/s
        NIC line rate B (> 0).  No per-flow cap: NCCL opens several sockets
        and fills the link (Li et al. 2022, Sec. 4.4).
    t_forward, t_backward : float or array_like, s
        Forward and backward time of one worker's step (>= 0).
    workers : int or array_like, workers
        K participants (machines when ``gpus_per_machine > 1``), whole, >= 1.
    algorithm : {"ring", "tree"}
        All-reduce algorithm across workers.
    overlap : bool
        Overlap the exchange with the backward pass.
    link_efficiency : float or array_like
        Goodput over line rate in (0, 1]; scales ``bandwidth``.
    gpus_per_machine : int or array_like, GPUs
        G GPUs per machine.
    intra_bandwidth : float or array_like or None, bytes/s
        Bandwidth between GPUs of one machine; required when G > 1.

    Returns
    -------
    dict of str to float or ndarray, s
        Exposed time of each phase, summing to :func:`allreduce_step_time`.

    Raises
    ------
    SpecError
        Naming the bad argument.

    References
    ----------
    Li et al. 2022, Sec. 3.1.2, eq. 11; Sec. 4.4 (hierarchical scheme).  ``"tree"``,
    ``overlap`` and ``link_efficiency`` are our own extensions.

    Examples
    --------
    >>> allreduce_phases(100e6, 1.25e9, 0.1, 0.2, 4)
    {'forward': 0.1, 'backward': 0.2, 'allreduce': 0.12}
    """
    phases = _allreduce_scalar(model_bytes, bandwidth, t_forward, t_backward, workers,
                               algorithm, overlap, link_efficiency, gpus_per_machine,
                               intra_bandwidth, True)
    if phases is not None:
        return phases
    arrays, options, shape = _check_allreduce(model_bytes, bandwidth, t_forward, t_backward,
                                              workers, algorithm, overlap, link_efficiency,
                                              gpus_per_machine, intra_bandwidth)
    return _finish(_allreduce_terms(*arrays, *options), shape)


def allreduce_step_time(model_bytes, bandwidth, t_forward, t_backward, workers, *,
                        algorithm="ring", overlap=False, link_efficiency=1.0,
                        gpus_per_machine=1, intra_bandwidth=None):
    """Duration of one ring all-reduce synchronous SGD step (Li et al. 2022, eq. 11).

    ``T = (T_F + T_B) + 2 (K - 1) M / (K B)``: the sum of
    :func:`allreduce_phases` (see there for the keyword-only extensions).

    Parameters
    ----------
    model_bytes : float or array_like, bytes
        Model size M (>= 0).
    bandwidth : float or array_like, bytes/s
        NIC line rate B (> 0).
    t_forward, t_backward : float or array_like, s
        Forward and backward time of one worker's step (>= 0).
    workers : int or array_like, workers
        K workers (whole, >= 1).
    algorithm, overlap, link_efficiency, gpus_per_machine, intra_bandwidth
        Keyword-only extensions; see :func:`allreduce_phases`.

    Returns
    -------
    float or ndarray, s
        Step time; a float for scalar input.

    Raises
    ------
    SpecError
        Naming the bad argument.

    References
    ----------
    Li et al. 2022, Sec. 3.1.2, eq. 11.

    Examples
    --------
    M = 100 MB, B = 1.25e9 B/s, K = 4: 0.1 + 0.2 + 2 * 3/4 * 0.08

    >>> allreduce_step_time(100e6, 1.25e9, 0.1, 0.2, 4)
    0.42
    """
    total = _allreduce_scalar(model_bytes, bandwidth, t_forward, t_backward, workers,
                              algorithm, overlap, link_efficiency, gpus_per_machine,
                              intra_bandwidth, False)
    if total is not None:
        return total
    arrays, options, shape = _check_allreduce(model_bytes, bandwidth, t_forward, t_backward,
                                              workers, algorithm, overlap, link_efficiency,
                                              gpus_per_machine, intra_bandwidth)
    return _shaped(_blockwise(_allreduce_terms, arrays, options), shape)


def hierarchical_step_time(model_bytes, bandwidth, t_forward, t_backward, t_update, machines,
                           gpus_per_machine, intra_bandwidth, *, architecture="ps",
                           sharing="hybrid", overlap=False, algorithm="ring", n_ps=1,
                           per_flow_cap=None, link_efficiency=1.0, sharing_weight=0.5,
                           update_growth=0.0):
    """Step time of K machines with G GPUs each (Li et al. 2022, Sec. 4.4).

    After all GPUs of a machine finish their step, their gradients are
    all-reduced inside the machine; one GPU then pushes them to the parameter
    servers (``architecture="ps"``) or all-reduces with the other machines
    (``"allreduce"``), and broadcasts the new model to the machine's GPUs.
    A convenience wrapper of :func:`sync_step_time` / :func:`allreduce_step_time`
    with ``gpus_per_machine`` and ``intra_bandwidth``.

    Parameters
    ----------
    model_bytes : float or array_like, bytes
        Model size M (>= 0).
    bandwidth : float or array_like, bytes/s
        NIC line rate of each machine (> 0).
    t_forward, t_backward : float or array_like, s
        Forward and backward time of one GPU's step (>= 0).
    t_update : float or array_like, s
        Parameter-server update time (>= 0); unused by ``"allreduce"``.
    machines : int or array_like, machines
        K machines (whole, >= 1).
    gpus_per_machine : int or array_like, GPUs
        G GPUs per machine (whole, >= 1).
    intra_bandwidth : float or array_like, bytes/s
        Bandwidth between GPUs of one machine (> 0).
    architecture : {"ps", "allreduce"}
        Centralized or decentralized exchange across machines.
    sharing, overlap, n_ps, per_flow_cap, link_efficiency, sharing_weight, update_growth
        As in :func:`sync_step_time` (``overlap`` also applies to all-reduce).
    algorithm : {"ring", "tree"}
        All-reduce algorithm across machines (``"allreduce"``).

    Returns
    -------
    float or ndarray, s
        Step time.  Samples per step are ``machines * G * batch``.

    References
    ----------
    Li et al. 2022, Sec. 4.4 (scheme), eqs. 7-11 for the terms; the composition and
    the intra-machine costs are our own.

    Examples
    --------
    >>> hierarchical_step_time(100e6, 1.25e9, 0.1, 0.2, 0.0, 2, 8, 100e9,
    ...                        architecture="allreduce")   # 0.3 + 0.00175 + 0.08 + 0.001
    0.38275
    """
    _v.choice("architecture", architecture, ARCHITECTURES)
    if intra_bandwidth is None:
        raise SpecError("intra_bandwidth", "is required by hierarchical_step_time")
    if architecture == "allreduce":
        return allreduce_step_time(model_bytes, bandwidth, t_forward, t_backward, machines,
                                   algorithm=algorithm, overlap=overlap,
                                   link_efficiency=link_efficiency,
                                   gpus_per_machine=gpus_per_machine,
                                   intra_bandwidth=intra_bandwidth)
    return sync_step_time(model_bytes, bandwidth, t_forward, t_backward, t_update, machines,
                          sharing, overlap, n_ps=n_ps, per_flow_cap=per_flow_cap,
                          link_efficiency=link_efficiency, sharing_weight=sharing_weight,
                          gpus_per_machine=gpus_per_machine, intra_bandwidth=intra_bandwidth,
                          update_growth=update_growth)


# --------------------------------------------------------------------------
# Model objects
# --------------------------------------------------------------------------

def check_data_parallel_inputs(workload, cluster, config, model: str = "coarse models") -> None:
    """Spec types and a synchronous data-parallel configuration (n_workers = 1).

    The former name of :func:`perfmodel.interface.check_inputs` with its defaults,
    kept for code written against it.
    """
    check_inputs(workload, cluster, config, model)


def _gpu_options(cluster: Cluster) -> dict:
    if cluster.gpus_per_machine > 1:
        return {"gpus_per_machine": cluster.gpus_per_machine,
                "intra_bandwidth": cluster.intra_bandwidth}
    return {}


def _batchable(workload, cluster, batch: ConfigBatch, modes: tuple, min_servers: int) -> bool:
    """Whether ``estimate_many`` prices ``batch`` (else each config goes through ``estimate``,
    which raises what it raises for the ones it rejects)."""
    return (isinstance(workload, Profile) and isinstance(cluster, Cluster)
            and isinstance(batch, ConfigBatch) and batch.mode in modes
            and bool(np.all(batch.n_workers == 1)) and bool(np.all(batch.n_ps >= min_servers)))


def _batch_estimate(phases: dict, workload: Profile, cluster: Cluster,
                    batch: ConfigBatch) -> BatchEstimate:
    samples = batch.n_replicas * cluster.gpus_per_machine * workload.batch_size
    return BatchEstimate.from_phases(phases, samples, batch.epoch_samples)


def _estimate(phases: dict, workload: Profile, cluster: Cluster, config: Config,
              meta: dict) -> Estimate:
    samples = config.n_replicas * cluster.gpus_per_machine * workload.batch_size
    return Estimate.from_phases(phases, samples, epoch_samples=config.epoch_samples, meta=meta)


@dataclass(frozen=True)
class SyncCoarse:
    """Coarse model of synchronous SGD with parameter servers (Li et al. 2022, eqs. 7-10).

    Parameters
    ----------
    sharing : {"hybrid", "ps", "fcfs"}
        Link-sharing model: eq. 9 (default), eq. 7 or eq. 8.
    overlap : bool
        Overlap communication with computation (eq. 10).

    Notes
    -----
    In :meth:`estimate`, K is ``config.n_replicas`` (each replica is one
    data-parallel worker machine); the bandwidth is ``cluster.nic_bandwidth``;
    ``link_efficiency``, ``sharing_weight``, ``update_growth``,
    ``timeout_probability``, ``retransmit_timeout`` (a lossy link: phase
    ``timeouts``, see :func:`timeout_stall`), ``per_flow_cap``,
    ``gpus_per_machine`` and ``intra_bandwidth`` come from the cluster, and
    ``n_ps`` from the config.  ``cluster.compute_cv`` is not
    used (the model is deterministic) but is recorded in ``meta``.  With G
    GPUs per machine, ``profile.batch_size`` is per GPU and a step processes
    ``K * G * batch_size`` samples.

    Examples
    --------
    >>> from perfmodel.specs import Profile, Cluster, Config
    >>> est = SyncCoarse(sharing="ps").estimate(
    ...     Profile(model_bytes=100e6, t_forward=0.1, t_backward=0.2, t_update=0.01,
    ...             batch_size=32),
    ...     Cluster(machines=8, nic_bandwidth="10Gbps"), Config(n_replicas=4, n_ps=1))
    >>> round(est.step_time, 6), round(est.throughput, 3), est.bottleneck
    (0.95, 134.737, 'downlink')
    """

    sharing: str = "hybrid"
    overlap: bool = False
    #: The configuration's ``n_ps`` parameter servers are used (sweeps read this).
    modes: ClassVar[tuple[str, ...]] = ("sync",)
    uses_parameter_servers: ClassVar[bool] = True

    def __post_init__(self):
        _v.choice("sharing", self.sharing, SHARINGS)
        _v.boolean("overlap", self.overlap)

    def estimate(self, workload: Profile, cluster: Cluster, config: Config) -> Estimate:
        """Predict one synchronous step of ``config.n_replicas`` workers.

        Parameters
        ----------
        workload : Profile
            One worker's profile (model bytes, T_F, T_B, T_S, batch size).
        cluster : Cluster
            NIC bandwidth, link efficiency, sharing weight, per-flow cap, GPUs.
        config : Config
            ``n_replicas`` workers (K) and ``n_ps`` servers (>= 1).

        Returns
        -------
        Estimate
            Step time, throughput (samples/s), phases, bottleneck, epoch time
            (when ``config.epoch_samples`` is set) and the options in ``meta``.

        Raises
        ------
        SpecError
            ``config.n_ps`` is 0, or an argument is not the expected spec.
        Infeasible
            ``config.n_workers > 1`` (model parallelism) or an async config.
        """
        check_inputs(workload, cluster, config, type(self).__name__)
        if config.n_ps < 1:
            raise SpecError("config.n_ps", f"SyncCoarse needs at least one parameter server, "
                                           f"got {config.n_ps}")
        phases = self._phases(workload, cluster, config.n_replicas, config.n_ps)
        meta = {"model": "SyncCoarse", "sharing": self.sharing, "overlap": self.overlap,
                "equation": _EQUATION[(self.sharing, self.overlap)],
                "workers": config.n_replicas, "n_ps": config.n_ps,
                "per_flow_cap": cluster.per_flow_cap,
                "link_efficiency": cluster.link_efficiency,
                "sharing_weight": cluster.sharing_weight,
                "update_growth": cluster.update_growth,
                "timeout_probability": cluster.timeout_probability,
                "retransmit_timeout": cluster.retransmit_timeout,
                # A deterministic model: the spread of compute times is not seen.
                "compute_cv": cluster.compute_cv,
                "gpus_per_machine": cluster.gpus_per_machine}
        return _estimate(phases, workload, cluster, config, meta)

    def _phases(self, workload: Profile, cluster: Cluster, workers, n_ps) -> dict:
        return self.phases_of(workload.model_bytes, workload.t_forward, workload.t_backward,
                              workload.t_update, cluster, workers, n_ps)

    def phases_of(self, model_bytes, t_forward, t_backward, t_update, cluster: Cluster,
                  workers, n_ps) -> dict:
        """The phases of :meth:`estimate` (s, floats or arrays) from a profile's four numbers
        and a cluster, with no specs built: for fits that price a profile's times hundreds
        of thousands of times.  Inputs are checked as :func:`sync_phases` checks them."""
        return sync_phases(model_bytes, cluster.nic_bandwidth, t_forward,
                           t_backward, t_update, workers,
                           self.sharing, self.overlap, n_ps=n_ps,
                           per_flow_cap=cluster.per_flow_cap,
                           link_efficiency=cluster.link_efficiency,
                           sharing_weight=cluster.sharing_weight,
                           update_growth=cluster.update_growth,
                           timeout_probability=cluster.timeout_probability,
                           retransmit_timeout=cluster.retransmit_timeout,
                           **_gpu_options(cluster))

    def estimate_many(self, workload: Profile, cluster: Cluster,
                      batch: ConfigBatch) -> BatchEstimate | None:
        """:meth:`estimate`'s step time, throughput and epoch time of every configuration
        of ``batch``, in one broadcast call of :func:`sync_phases`.

        None (price them one by one) unless every configuration is data-parallel
        (``n_workers == 1``), synchronous and has a server.
        """
        if not _batchable(workload, cluster, batch, self.modes, 1):
            return None
        phases = self._phases(workload, cluster, batch.n_replicas, batch.n_ps)
        return _batch_estimate(phases, workload, cluster, batch)


@dataclass(frozen=True)
class AllReduceCoarse:
    """Coarse model of decentralized synchronous SGD (Li et al. 2022, eq. 11).

    Parameters
    ----------
    algorithm : {"ring", "tree"}
        All-reduce algorithm; ``"ring"`` is the paper's.
    overlap : bool
        Overlap the all-reduce with the backward pass (our extension; the
        paper's eq. 11 has none).

    Notes
    -----
    K is ``config.n_replicas``; ``config.n_ps`` is ignored (there is no
    server).  The cluster's ``per_flow_cap`` is not applied: NCCL opens
    several sockets per peer and fills the link (Li et al. 2022, Sec. 4.4).

    Examples
    --------
    >>> from perfmodel.specs import Profile, Cluster, Config
    >>> est = AllReduceCoarse().estimate(
    ...     Profile(model_bytes=100e6, t_forward=0.1, t_backward=0.2, batch_size=32),
    ...     Cluster(machines=8, nic_bandwidth="10Gbps"), Config(n_replicas=4, n_ps=0))
    >>> round(est.step_time, 6), est.bottleneck
    (0.42, 'backward')
    """

    algorithm: str = "ring"
    overlap: bool = False
    #: No parameter servers: sweeps set ``n_ps = 0``.
    modes: ClassVar[tuple[str, ...]] = ("sync",)
    uses_parameter_servers: ClassVar[bool] = False

    def __post_init__(self):
        _v.choice("algorithm", self.algorithm, ALGORITHMS)
        _v.boolean("overlap", self.overlap)

    def estimate(self, workload: Profile, cluster: Cluster, config: Config) -> Estimate:
        """Predict one all-reduce step of ``config.n_replicas`` workers.

        Parameters
        ----------
        workload : Profile
            One worker's profile (model bytes, T_F, T_B, batch size).
        cluster : Cluster
            NIC bandwidth, link efficiency, GPUs per machine.
        config : Config
            ``n_replicas`` workers (K).

        Returns
        -------
        Estimate
            Step time, throughput (samples/s), phases, bottleneck, epoch time.

        Raises
        ------
        SpecError
            An argument is not the expected spec.
        Infeasible
            ``config.n_workers > 1`` (model parallelism) or an async config.
        """
        check_inputs(workload, cluster, config, type(self).__name__)
        phases = self._phases(workload, cluster, config.n_replicas)
        meta = {"model": "AllReduceCoarse", "algorithm": self.algorithm,
                "overlap": self.overlap, "equation": _EQUATION[(self.algorithm, self.overlap)],
                "workers": config.n_replicas, "link_efficiency": cluster.link_efficiency,
                # No server update (update_growth has nothing to scale); deterministic.
                "compute_cv": cluster.compute_cv,
                "gpus_per_machine": cluster.gpus_per_machine}
        return _estimate(phases, workload, cluster, config, meta)

    def _phases(self, workload: Profile, cluster: Cluster, workers) -> dict:
        return allreduce_phases(workload.model_bytes, cluster.nic_bandwidth,
                                workload.t_forward, workload.t_backward, workers,
                                algorithm=self.algorithm, overlap=self.overlap,
                                link_efficiency=cluster.link_efficiency,
                                **_gpu_options(cluster))

    def estimate_many(self, workload: Profile, cluster: Cluster,
                      batch: ConfigBatch) -> BatchEstimate | None:
        """:meth:`estimate`'s step time, throughput and epoch time of every configuration
        of ``batch``, in one broadcast call of :func:`allreduce_phases`.

        None (price them one by one) unless every configuration is data-parallel
        (``n_workers == 1``) and synchronous.
        """
        if not _batchable(workload, cluster, batch, self.modes, 0):
            return None
        return _batch_estimate(self._phases(workload, cluster, batch.n_replicas), workload,
                               cluster, batch)


@dataclass(frozen=True)
class LockStep:
    """Async-SGD whose workers stay in lock-step: a synchronous step per worker step.

    With identical, near-constant compute times and a fairly shared link, async
    workers finish computing together, send together and share the link as in
    a synchronous step; each worker then waits for its own update only, which
    is the synchronous step of ``model`` (default: PS sharing, Li et al. 2022
    eq. 7).  The throughput is ``K b / T_sync(K)``.

    Parameters
    ----------
    model : object or None
        A synchronous model; None: ``SyncCoarse(sharing="ps", overlap=overlap)``.
    overlap : bool
        Communication overlapped with computation (eq. 10), for the default
        model.
    """

    model: Any = None
    overlap: bool = False
    modes: ClassVar[tuple[str, ...]] = ("async",)
    uses_parameter_servers: ClassVar[bool] = True

    def __post_init__(self):
        _v.boolean("overlap", self.overlap)
        if self.model is not None and not callable(getattr(self.model, "estimate", None)):
            raise SpecError("model", f"needs estimate(), got {type(self.model).__name__}")

    def synchronous_model(self):
        """The synchronous model whose step a lock-step worker takes."""
        return self.model if self.model is not None else SyncCoarse("ps", self.overlap)

    def estimate(self, workload: Profile, cluster: Cluster, config: Config) -> Estimate:
        """The synchronous step of ``config`` (mode set to sync), labelled lock-step."""
        est = self.synchronous_model().estimate(workload, cluster, config.replace(mode="sync"))
        meta = dict(est.meta, lockstep=True, mode=config.mode)
        return dataclasses.replace(est, meta=meta)

    def estimate_many(self, workload: Profile, cluster: Cluster,
                      batch: ConfigBatch) -> BatchEstimate | None:
        """The synchronous model's ``estimate_many`` of ``batch`` (mode set to sync), or
        None when it has none or declines."""
        many = getattr(self.synchronous_model(), "estimate_many", None)
        if many is None or not isinstance(batch, ConfigBatch):
            return None
        return many(workload, cluster, dataclasses.replace(batch, mode="sync"))
