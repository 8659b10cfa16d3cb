"""Import PyTorch profiler traces (Chrome trace JSON) as layer-level traces.

``torch.profiler.profile(...).export_chrome_trace(path)`` writes the
`Chrome trace event format`_: ``{"traceEvents": [...], ...}`` (or a bare
list of events) where complete events (``"ph": "X"``) carry a ``name``, a
category ``cat``, a thread ``tid``, a start ``ts`` and a duration ``dur``
in microseconds, and ``args``.  :func:`load_torch_profiler` turns the
events of one worker into the trace of :func:`~perfmodel.sim.trace.from_layers`:

* **steps**: one per ``ProfilerStep#N`` event (the profiler writes them when
  run with a ``schedule`` and ``prof.step()``); without any, the whole file
  is one step.  Every step must show the same layers.
* **layers (forward)**: the top-level CPU events (``cat`` ``cpu_op`` or
  ``user_annotation``, not nested in another such event of the same thread)
  of the step's thread, in time order, are the layers: ``aten::conv2d``,
  ``aten::linear``, or a block you wrapped in
  ``torch.profiler.record_function("block1")``.  A layer's forward time is
  its event's duration.  Top-level ops that record no autograd ``Sequence
  number`` (in them or below) are not differentiable (copies of the input,
  the ``ones_like`` that seeds the backward pass; the op that creates
  autograd node s is the last one recording s): their time joins the
  previous layer's forward (the next one's, before the first layer), unless
  no event of the step has a sequence number.  ``Optimizer.step#...``
  events are the update, ``Optimizer.zero_grad#...`` events are dropped.
  ``python_function`` events (``with_stack=True``) are ignored.
* **backward**: each ``autograd::engine::evaluate_function: XBackward0``
  event (on any thread) goes to the layer whose forward recorded the same
  ``Sequence number`` (the profiler's forward/backward link).  Events
  without a known sequence number (``AccumulateGrad``, which writes a
  parameter's gradient right after the node that computed it) go to the
  layer of the backward event before them in time (the last layer when
  there is none).
* **parameter bytes**: with ``record_shapes=True`` the ``AccumulateGrad``
  events show each parameter's shape and dtype (``"Input Dims"``,
  ``"Input type"``): their bytes go to the same layer as their time.
  Without shapes the format does not give parameter sizes: they are 0 and
  you must pass ``layer_bytes`` (the importer says so).
* **update**: the summed ``Optimizer.step#...`` durations of the step,
  unless ``t_update`` is given (0 when there is neither).

Times are host (CPU) durations: for a GPU run they are launch times, not
kernel times (device kernels are ignored), so profile GPU runs with
:func:`perfmodel.sim.torch_profile.profile_module`, which synchronizes.

.. _Chrome trace event format:
   https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU

References
----------
Li, Paolieri, Golubchik, Lin, Yan. Predicting Throughput of Distributed SGD.
IEEE TPDS, 2022.  Sec. 2.2.1 (a profile of one worker
as operations with dependencies) and Sec. 4.1 (layer-level traces).
"""

from __future__ import annotations

import math
import re

import numpy as np

from ..errors import SpecError
from .trace import Trace, from_layers

__all__ = ["DTYPE_BYTES", "load_torch_profiler"]

#: Bytes per element of the profiler's ``"Input type"`` names.
DTYPE_BYTES = {
    "float": 4, "double": 8, "c10::Half": 2, "c10::BFloat16": 2, "half": 2, "bfloat16": 2,
    "long int": 8, "int": 4, "short int": 2, "signed char": 1, "unsigned char": 1, "bool": 1,
    "c10::complex<float>": 8, "c10::complex<double>": 16,
    "c10::Float8_e4m3fn": 1, "c10::Float8_e5m2": 1,
}

_STEP = re.compile(r"^ProfilerStep#(\d+)$")
_BACKWARD = "autograd::engine::evaluate_function: "
_ACCUMULATE = "AccumulateGrad"
_CATEGORIES = ("cpu_op", "user_annotation")
_US = 1e-6


class _Event:
    __slots__ = ("i", "name", "cat", "tid", "ts", "end", "dur", "args", "parent", "top")

    def __init__(self, i, name, cat, tid, ts, dur, args):
        self.i, self.name, self.cat, self.tid = i, name, cat, tid
        self.ts, self.dur, self.end, self.args = ts, dur, ts + dur, args
        self.parent = None
        self.top = self


def _number(i: int, key: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value):
        raise SpecError(f"traceEvents[{i}].{key}", f"must be a finite number (microseconds), "
                                                   f"got {value!r}")
    return float(value)


def _parse(data) -> list:
    """The complete ("X") events, validated, as :class:`_Event`."""
    if isinstance(data, dict):
        if "traceEvents" not in data:
            raise SpecError("traceEvents", "is required (a PyTorch profiler Chrome trace "
                                           "export is a mapping with 'traceEvents')")
        events = data["traceEvents"]
    else:
        events = data
    if not isinstance(events, list):
        raise SpecError("traceEvents", f"must be a list of events, got {type(events).__name__}")
    out = []
    for i, e in enumerate(events):
        if not isinstance(e, dict):
            raise SpecError(f"traceEvents[{i}]", f"an event must be a mapping, got "
                                                 f"{type(e).__name__}")
        if e.get("ph") != "X":
            continue
        name = e.get("name")
        if not isinstance(name, str):
            raise SpecError(f"traceEvents[{i}].name", f"must be a string, got {name!r}")
        for key in ("ts", "dur"):
            if key not in e:
                raise SpecError(f"traceEvents[{i}].{key}", f"is required for a complete "
                                                           f"('X') event ({name!r})")
        ts = _number(i, "ts", e["ts"])
        dur = _number(i, "dur", e["dur"])
        if dur < 0:
            raise SpecError(f"traceEvents[{i}].dur", f"must be >= 0, got {dur!r} ({name!r})")
        args = e.get("args", {})
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise SpecError(f"traceEvents[{i}].args", f"must be a mapping, got {args!r}")
        cat = e.get("cat")
        if cat is not None and not isinstance(cat, str):
            raise SpecError(f"traceEvents[{i}].cat", f"must be a string, got {cat!r}")
        out.append(_Event(i, name, cat, e.get("tid"), ts, dur, args))
    return out


def _nest(events: list) -> None:
    """Set ``parent`` and ``top`` of events of one thread by interval containment."""
    eps = 1e-3   # microseconds: the export rounds to nanoseconds
    stack: list = []
    for ev in sorted(events, key=lambda e: (e.ts, -e.dur, e.i)):
        while stack and ev.end > stack[-1].end + eps:
            stack.pop()     # ev is not inside the top (ended, or overlaps it: a sibling)
        if stack:
            ev.parent = stack[-1]
            ev.top = stack[-1].top
        stack.append(ev)


def _seq(i: int, ev: _Event):
    value = ev.args.get("Sequence number")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise SpecError(f"traceEvents[{i}].args.Sequence number",
                        f"must be an integer, got {value!r}")
    return value


def _param_bytes(ev: _Event, children: dict) -> float:
    """Bytes of the parameter an AccumulateGrad event writes (0 without shapes)."""
    for cand in [ev] + children.get(id(ev), []):
        dims = cand.args.get("Input Dims")
        types = cand.args.get("Input type")
        if dims is None or types is None:
            continue
        where = f"traceEvents[{cand.i}].args"
        if not isinstance(dims, list) or not dims or not isinstance(dims[0], list) \
                or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0
                           for d in dims[0]):
            raise SpecError(f"{where}.Input Dims", f"expected a list of shapes (lists of "
                                                   f"whole numbers), got {dims!r}")
        if not isinstance(types, list) or not types or not isinstance(types[0], str):
            raise SpecError(f"{where}.Input type", f"expected a list of type names, got "
                                                   f"{types!r}")
        size = DTYPE_BYTES.get(types[0])
        if size is None:
            raise SpecError(f"{where}.Input type", f"unknown element type {types[0]!r}; "
                                                   f"known: {', '.join(DTYPE_BYTES)}")
        return float(math.prod(dims[0]) * size)
    return 0.0


def _step_layers(events: list, main_tid):
    """Layer names, forward/backward seconds and parameter bytes of one step's events."""
    by_tid: dict = {}
    for ev in events:
        by_tid.setdefault(ev.tid, []).append(ev)
    for evs in by_tid.values():
        _nest(evs)
    children: dict = {}
    for ev in events:
        if ev.parent is not None:
            children.setdefault(id(ev.parent), []).append(ev)

    def is_backward(ev):
        e = ev
        while e is not None:
            if e.name.startswith(_BACKWARD):
                return True
            e = e.parent
        return False

    t_update = 0.0
    has_update = False
    candidates = []
    for ev in sorted(events, key=lambda e: (e.ts, e.i)):
        if ev.parent is not None:
            continue
        if ev.name.startswith("Optimizer.step#"):
            t_update += ev.dur * _US
            has_update = True
        elif ev.name.startswith("Optimizer.zero_grad#") or ev.name.startswith(_BACKWARD):
            continue
        elif ev.tid == main_tid:
            candidates.append(ev)
    # Sequence numbers of the forward ops -> their top-level event.
    seq_top: dict = {}
    cand_ids = {id(ev) for ev in candidates}
    # The op that creates autograd node s is the last one recording s (creating it
    # increments the counter), e.g. aten::mse_loss after aten::broadcast_tensors.
    for ev in sorted(events, key=lambda e: (e.ts, e.i)):
        if ev.name.startswith(_BACKWARD) or is_backward(ev):
            continue
        s = _seq(ev.i, ev)
        if s is not None and id(ev.top) in cand_ids:
            seq_top[s] = ev.top
    differentiable = {id(t) for t in seq_top.values()}
    any_seq = bool(differentiable)
    layers = [ev for ev in candidates if not any_seq or id(ev) in differentiable]
    if not layers:
        return None
    col = {id(ev): c for c, ev in enumerate(layers)}
    n = len(layers)
    tf = np.array([ev.dur * _US for ev in layers])
    # Fold non-differentiable top-level ops into a neighbour's forward.
    for ev in candidates:
        if id(ev) in col:
            continue
        before = [c for c, lay in enumerate(layers) if lay.ts <= ev.ts]
        tf[before[-1] if before else 0] += ev.dur * _US
    tb = np.zeros(n)
    mb = np.zeros(n)
    backward = sorted((ev for ev in events if ev.name.startswith(_BACKWARD)
                       and (ev.parent is None or not is_backward(ev.parent))),
                      key=lambda e: (e.ts, e.i))
    last = None
    for ev in backward:
        s = _seq(ev.i, ev)
        top = seq_top.get(s) if s is not None else None
        c = col[id(top)] if top is not None else (last if last is not None else n - 1)
        tb[c] += ev.dur * _US
        if ev.name.endswith(_ACCUMULATE):
            mb[c] += _param_bytes(ev, children)
        last = c
    names = [ev.name for ev in layers]
    return names, tf, tb, mb, (t_update if has_update else None)


def load_torch_profiler(data, *, layer_bytes=None, t_update=None, overlap: bool = True,
                        skip_steps: int = 0, name: str = "", batch_size: int = 1,
                        servers=None) -> Trace:
    """A layer-level trace of a PyTorch profiler Chrome-trace export (see the module docstring).

    Parameters
    ----------
    data : dict or list
        The parsed JSON of ``torch.profiler.profile.export_chrome_trace``
        (read it with :func:`json.load` or :func:`perfmodel.io.read_data`).
    layer_bytes : array_like, optional, B
        Parameter bytes per layer (L,), replacing what ``AccumulateGrad``
        shapes give; needed when the profile was taken without
        ``record_shapes=True``.
    t_update : float, optional, s
        Update time per step on the servers; default: the profiled
        ``Optimizer.step#`` time of each step (0 without such events).
    overlap : bool
        Overlap communication with computation (see :func:`from_layers`).
    skip_steps : int
        Leading ``ProfilerStep`` windows to drop (warm-up).
    name : str
        Label; default: the file's ``traceName`` or ``"torch.profiler"``.
    batch_size : int
        Samples per step (the export does not record it).
    servers : array_like of int, optional
        Parameter server of each layer.

    Returns
    -------
    Trace
        One step per ``ProfilerStep#N`` window (or one for the whole file),
        with layers named after their top-level events (``aten::linear``,
        ``aten::linear#1`` for the second one ...).

    Raises
    ------
    SpecError
        ``traceEvents[i].<field>`` for a malformed event (not a mapping, a
        missing or non-numeric ``ts``/``dur``, a negative ``dur``, unknown
        dtypes); ``steps`` when steps show different layers or no layer;
        ``layer_bytes`` when no parameter sizes are known.

    Examples
    --------
    >>> ev = [{"ph": "X", "cat": "cpu_op", "name": "aten::linear", "tid": 1, "ts": 0, "dur": 30,
    ...        "args": {"Sequence number": 0}},
    ...       {"ph": "X", "cat": "cpu_op", "tid": 1, "ts": 40, "dur": 50,
    ...        "name": "autograd::engine::evaluate_function: AddmmBackward0",
    ...        "args": {"Sequence number": 0}}]
    >>> t = load_torch_profiler(ev, layer_bytes=[4000])
    >>> [(op.id, op.amount) for op in t.steps[0].ops]   # doctest: +NORMALIZE_WHITESPACE
    [('down0', 4000.0), ('fwd0', 3e-05), ('bwd0', 5e-05), ('up0', 4000.0)]
    """
    if not isinstance(skip_steps, int) or isinstance(skip_steps, bool) or skip_steps < 0:
        raise SpecError("skip_steps", f"must be a whole number >= 0, got {skip_steps!r}")
    events = _parse(data)
    considered = [ev for ev in events if ev.cat in _CATEGORIES or ev.cat is None]
    markers = sorted((ev for ev in considered if _STEP.match(ev.name)), key=lambda e: e.ts)
    if markers:
        windows = [(m.ts, m.end, m.tid, m.name) for m in markers][skip_steps:]
        if not windows:
            raise SpecError("skip_steps", f"skips all {len(markers)} ProfilerStep windows")
    else:
        if skip_steps:
            raise SpecError("skip_steps", "the trace has no ProfilerStep#N events (one step)")
        if not considered:
            raise SpecError("traceEvents", "no complete ('X') cpu_op or user_annotation events")
        tids: dict = {}
        for ev in considered:
            if not ev.name.startswith(_BACKWARD):
                tids[ev.tid] = tids.get(ev.tid, 0.0) + ev.dur
        main = max(tids, key=tids.get) if tids else considered[0].tid
        windows = [(min(e.ts for e in considered), max(e.end for e in considered), main,
                    "whole trace")]
    eps = 1e-3
    rows = []
    for start, end, tid, label in windows:
        inside = [ev for ev in considered if not _STEP.match(ev.name)
                  and ev.ts >= start - eps and ev.end <= end + eps]
        for ev in inside:
            ev.parent, ev.top = None, ev
        got = _step_layers(inside, tid)
        if got is None:
            raise SpecError("steps", f"{label}: no top-level forward op on thread {tid!r}")
        rows.append((label, *got))
    names0 = rows[0][1]
    for label, names, *_ in rows[1:]:
        if names != names0:
            raise SpecError("steps", f"{label} has {len(names)} layers "
                                     f"({', '.join(names[:4])}...), {rows[0][0]} has "
                                     f"{len(names0)} ({', '.join(names0[:4])}...): steps "
                                     "must run the same layers")
    n = len(names0)
    tf = np.array([r[2] for r in rows])
    tb = np.array([r[3] for r in rows])
    notes = []
    if layer_bytes is None:
        mb = rows[0][4]
        if not (mb > 0).any():
            raise SpecError("layer_bytes", "the profile gives no parameter sizes (profile with "
                                           "record_shapes=True, or pass layer_bytes: one "
                                           f"number of bytes per layer, {n} layers: "
                                           f"{', '.join(names0)})")
        notes.append("parameter bytes from AccumulateGrad shapes")
    else:
        mb = layer_bytes
    if t_update is None:
        tu_steps = np.array([r[5] if r[5] is not None else 0.0 for r in rows])
        if all(r[5] is None for r in rows):
            notes.append("no Optimizer.step events: update time 0")
    else:
        if isinstance(t_update, bool) or not isinstance(t_update, (int, float, np.number)) \
                or not math.isfinite(float(t_update)) or t_update < 0:
            raise SpecError("t_update", f"must be a finite number of seconds >= 0, "
                                        f"got {t_update!r}")
        tu_steps = np.full(len(rows), float(t_update))
    seen: dict = {}
    labels = []
    for nm in names0:
        k = seen.get(nm, 0)
        seen[nm] = k + 1
        labels.append(nm if k == 0 else f"{nm}#{k}")
    m = mb
    if not isinstance(mb, str):
        try:
            m = np.asarray(mb, dtype=float)
        except (TypeError, ValueError):
            m = mb            # from_layers names layer_bytes in its SpecError
    if isinstance(m, np.ndarray) and m.shape == (n,) and np.isfinite(m).all() and m.sum() > 0:
        tu = tu_steps[:, None] * (m / m.sum())[None, :]
    else:
        tu = tu_steps.mean()     # from_layers reports the bad layer_bytes
    if not name:
        name = data.get("traceName", "") if isinstance(data, dict) else ""
        name = name if isinstance(name, str) and name else "torch.profiler"
    source = (f"PyTorch profiler Chrome trace, {len(rows)} step(s), host times"
              + ("; " + "; ".join(notes) if notes else ""))
    return from_layers(m, tf, tb, tu, overlap, servers=servers, names=labels, name=name,
                       batch_size=batch_size, source=source)
