"""Pipelines of one worker's processes (Zhang et al. 2023, Definitions 5-6, eqs. 3-6).

Processes of one iteration overlap in two pipelines.  A *type I* process waits
only for its own previous occurrence (eq. 3); a *type II* process also waits
for the preceding process of the same step (eq. 4, a max-plus recurrence
solved here without a loop).  Built from them:

* :func:`type1_completion`, :func:`type2_completion` -- completion times
  (eqs. 3-4);
* :func:`io_pipeline` -- data loading prefetched ahead of the rest of the
  iteration: the exposed IO time of each iteration (eq. 5);
* :func:`layer_pipeline` -- each layer's gradient sent, aggregated and sent
  back while back-propagation goes on: the exposed BP, FC, AG, BC times
  (eqs. 3-4, 6).

Pure functions of arrays (the sequence along ``axis``), validated like the
rest of the package.

References
----------
Zhang, Zhang, Wei, Pan, Huang 2023, "Performance Modeling and Analysis of
Distributed Deep Neural Network Training with Parameter Server", Definitions
5-6, eqs. 3-6.
"""

from __future__ import annotations

import numpy as np

from .. import _validate as _v
from ..errors import SpecError

__all__ = ["type1_completion", "type2_completion", "io_pipeline", "layer_pipeline"]


def _exclusive_cumsum(t: np.ndarray, axis: int) -> np.ndarray:
    s = np.cumsum(t, axis=axis)
    out = np.zeros_like(s)
    dst = [slice(None)] * t.ndim
    src = [slice(None)] * t.ndim
    dst[axis], src[axis] = slice(1, None), slice(None, -1)
    out[tuple(dst)] = s[tuple(src)]
    return out


def type1_completion(t, axis=-1):
    """Completion times of a type I process: tau^m = sum_{i<=m} t^i (eq. 3).

    A type I process waits only for its own previous occurrence (data loading
    in the IO pipeline, back-propagation in the layer pipeline).

    Parameters
    ----------
    t : array_like, s
        Durations (>= 0) along ``axis`` (iterations, or layers in execution order).
    axis : int
        The sequence axis.

    Returns
    -------
    ndarray, s
        Completion times, same shape.

    References
    ----------
    Zhang et al. 2023, eq. 3.

    Examples
    --------
    >>> type1_completion([1.0, 2.0, 3.0])
    array([1., 3., 6.])
    """
    a = np.asarray(_v.checked("t", t), dtype=float)
    if a.ndim == 0:
        a = a[None]
    return np.cumsum(a, axis=_v.axis_index("axis", axis, a.ndim))


def type2_completion(t, ready, axis=-1):
    """Completion times of a type II process: tau^m = max(ready^m, tau^(m-1)) + t^m (eq. 4).

    A type II process waits for its own previous occurrence and for the
    previous process of the same step (``ready``, its completion time).  The
    max-plus recurrence is solved without a loop:
    ``tau^m = S^m + max_{j<=m} (ready^j - S^(j-1))`` with S the cumulative sum
    of t.

    Parameters
    ----------
    t : array_like, s
        Durations (>= 0) along ``axis``.
    ready : array_like, s
        Completion time of the preceding process at each step, broadcast against t.
    axis : int
        The sequence axis.

    Returns
    -------
    ndarray, s
        Completion times, broadcast shape.

    References
    ----------
    Zhang et al. 2023, eq. 4.

    Examples
    --------
    >>> type2_completion([1.0, 1.0, 1.0], [1.0, 1.5, 5.0])
    array([2., 3., 6.])
    """
    a = np.asarray(_v.checked("t", t), dtype=float)
    r = np.asarray(_v.finite_real("ready", ready), dtype=float)
    a, r = np.broadcast_arrays(a, r)
    if a.ndim == 0:
        a, r = a[None], r[None]
    ax = _v.axis_index("axis", axis, a.ndim)
    return np.cumsum(a, axis=ax) + np.maximum.accumulate(r - _exclusive_cumsum(a, ax), axis=ax)


def io_pipeline(t_io, t_dt, axis=-1):
    """Exposed data-loading time of each iteration in the IO pipeline (eq. 5).

    IO is a type I process (it prefetches ahead); the rest of the iteration
    ("DT": fp, bp, fc, ag, bc, up as one type II process) starts once its data
    is loaded and the previous iteration is done.  IO is exposed only when it
    is late: ``e^1 = t_io^1``, ``e^m = max(0, tau_IO^m - tau_DT^(m-1))``.  The
    timeline is then ``tau_DT^M = sum_m (e^m + t_dt^m)``.

    Parameters
    ----------
    t_io : array_like, s
        Data-loading time of each iteration (>= 0).
    t_dt : array_like, s
        Time of the rest of each iteration (>= 0), broadcast against ``t_io``.
    axis : int
        Iterations' axis.

    Returns
    -------
    ndarray, s
        Exposed IO time of each iteration (>= 0).

    References
    ----------
    Zhang et al. 2023, Definition 5, eqs. 3-5.

    Examples
    --------
    >>> io_pipeline([2.0, 2.0, 2.0], [1.0, 1.0, 1.0])   # IO-bound: 1 s exposed per iteration
    array([2., 1., 1.])
    >>> io_pipeline([1.0, 1.0, 1.0], [2.0, 2.0, 2.0])   # hidden after the first
    array([1., 0., 0.])
    """
    io = np.asarray(_v.checked("t_io", t_io), dtype=float)
    dt = np.asarray(_v.checked("t_dt", t_dt), dtype=float)
    io, dt = np.broadcast_arrays(io, dt)
    if io.ndim == 0:
        io, dt = io[None], dt[None]
    ax = _v.axis_index("axis", axis, io.ndim)
    tau_io = np.cumsum(io, axis=ax)
    tau_dt = type2_completion(dt, tau_io, axis=ax)
    prev = np.moveaxis(tau_dt, ax, -1)[..., :-1]
    later = np.maximum(0.0, np.moveaxis(tau_io, ax, -1)[..., 1:] - prev)
    first = np.moveaxis(io, ax, -1)[..., :1]
    return np.moveaxis(np.concatenate([first, later], axis=-1), -1, ax)


def layer_pipeline(t_bp, t_fc, t_ag, t_bc, *, axis=-1, order="forward"):
    """Exposed times of the layer pipeline hiding gradient communication behind BP (eqs. 3-4, 6).

    Back-propagation runs layer by layer from the output (type I, eq. 3); each
    layer's gradient is sent (FC), aggregated (AG) and sent back (BC) as soon
    as it and the same process of the previous layer are done (type II, eq. 4).
    Exposed times are what each process adds after its predecessor finished
    (eq. 6): ``e(fc) = tau_fc - tau_bp``, ``e(ag) = tau_ag - tau_fc``,
    ``e(bc) = tau_bc - tau_ag`` (last layer's completions), each >= 0; BP is
    fully exposed.  Their sum is the completion of the last BC.

    Parameters
    ----------
    t_bp, t_fc, t_ag, t_bc : array_like, s
        Per-layer times (>= 0), layers along ``axis``, broadcast together.
    axis : int
        The layers' axis.
    order : {"forward", "backward"}
        Order of the layers along the axis: ``"forward"`` lists them from the
        input to the output (as a DNN spec does; the backward pass runs them
        in reverse), ``"backward"`` in back-propagation order.

    Returns
    -------
    dict of str to float or ndarray, s
        ``{"bp", "fc", "ag", "bc"}``: exposed times with ``axis`` summed out.

    References
    ----------
    Zhang et al. 2023, Definition 6, eqs. 3, 4, 6.

    Examples
    --------
    >>> ex = layer_pipeline([1.0, 1.0], [0.5, 0.5], [0.0, 0.0], [0.25, 0.25])
    >>> {k: float(v) for k, v in ex.items()}   # the first layer's FC hides behind BP
    {'bp': 2.0, 'fc': 0.5, 'ag': 0.0, 'bc': 0.25}
    """
    _v.choice("order", order, ("forward", "backward"))
    arrays = [np.asarray(_v.checked(n, v), dtype=float)
              for n, v in (("t_bp", t_bp), ("t_fc", t_fc), ("t_ag", t_ag), ("t_bc", t_bc))]
    try:
        arrays = np.broadcast_arrays(*arrays)
    except ValueError:
        raise SpecError("t_bp", "the per-layer times do not broadcast: "
                                f"{', '.join(str(a.shape) for a in arrays)}") from None
    if arrays[0].ndim == 0:
        arrays = [a[None] for a in arrays]
    ax = _v.axis_index("axis", axis, arrays[0].ndim)
    if order == "forward":
        arrays = [np.flip(a, axis=ax) for a in arrays]
    bp, fc, ag, bc = arrays
    tau_bp = np.cumsum(bp, axis=ax)
    tau_fc = type2_completion(fc, tau_bp, axis=ax)
    tau_ag = type2_completion(ag, tau_fc, axis=ax)
    tau_bc = type2_completion(bc, tau_ag, axis=ax)
    last = [np.take(t, -1, axis=ax) for t in (tau_bp, tau_fc, tau_ag, tau_bc)]
    out = {"bp": last[0]}
    for name, hi, lo in (("fc", last[1], last[0]), ("ag", last[2], last[1]),
                         ("bc", last[3], last[2])):
        out[name] = np.maximum(0.0, hi - lo)
    return {k: (float(v) if np.ndim(v) == 0 else v) for k, v in out.items()}

