"""Fine-grained profiling traces: SGD steps as DAGs of operations (Li et al. 2020, 2022).

A :class:`Trace` is what one worker recorded (or what a builder synthesized):
several profiled SGD steps, each a directed acyclic graph of :class:`Op`.
Every op uses exactly one resource (Li et al. 2022, Sec. 2.2.1; Li et al. 2020, Sec. 2):

========== ===================================================== ===========
resource   what                                                  amount
========== ===================================================== ===========
downlink   parameters sent by a parameter server to the worker   ``bytes``
worker     forward / backward computation on the worker          ``seconds``
uplink     gradients sent by the worker to a parameter server    ``bytes``
ps         update of the model on a parameter server             ``seconds``
========== ===================================================== ===========

``deps`` lists the ids of the ops (of the same step) an op waits for and
``server`` the parameter server a communication or update op talks to
(0-based; several servers are Li et al. 2020, Sec. 5).  Transmission times
are not stored: the simulator divides ``bytes`` by the bandwidth it is given,
as Li et al. 2022, Sec. 2.2.1 do after validating that transfer time is linear
in size.

The JSON format (docs/usage.md; YAML works too, and values may be unit strings
such as ``"4 MB"`` or ``"12 ms"``)::

    {"name": "...", "batch_size": 32,
     "steps": [{"ops": [{"id": "down0", "res": "downlink", "bytes": 37632, "deps": []},
                        {"id": "fwd0", "res": "worker", "seconds": 0.0097,
                         "deps": ["down0"], "server": 0, "name": "conv1 forward"}]}]}

Validation happens on construction and raises
:class:`~perfmodel.errors.SpecError` naming the step and op: duplicate or
dangling ids, unknown resources, a communication op with ``seconds`` (or a
computation op with ``bytes``), negative amounts, and dependency cycles (the
message spells the cycle out).

Examples
--------
>>> t = Trace.from_layers([4e6, 8e6], [0.01, 0.02], [0.02, 0.04], 0.003, overlap=False)
>>> len(t.steps), len(t.steps[0].ops)
(1, 10)
>>> t.steps[0].ops[2].id, t.steps[0].ops[2].deps     # forward of layer 0 waits for all pulls
('fwd0', ('down0', 'down1'))
>>> t.model_bytes, round(t.seconds("worker"), 6)
(12000000.0, 0.09)
>>> Trace.from_dict(t.to_dict()) == t
True

References
----------
Li, Paolieri, Golubchik, Lin, Yan. Predicting Throughput of Distributed SGD.
IEEE TPDS, 2022.  Sec. 2.2.1 (profiled operations,
``op.res``, ``op.size``, ``op.dur``, ``op.waiting_for``).

Li, Yan, Paolieri, Golubchik. Throughput Prediction of Asynchronous SGD in
TensorFlow. ICPE, 2020.  Sec. 2 and Sec. 5 (several
parameter servers).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from .. import io, units
from ..errors import SpecError
from ..pipedream import PipeDreamGraph, layer_table
from ..specs import Profile

__all__ = ["RESOURCES", "PHASE_OF", "COMMUNICATION", "COMPUTATION", "Op", "Step", "Trace",
           "from_layers", "from_pipedream"]

#: Resources an op can use, in the order of Li et al. 2022, Algorithm 1.
RESOURCES = ("downlink", "worker", "uplink", "ps")
#: The phase name (:data:`perfmodel.result.PHASES`) of each resource kind.
PHASE_OF = {"downlink": "downlink", "worker": "compute", "uplink": "uplink", "ps": "update"}
#: Resources whose ops carry ``bytes`` (transmissions).
COMMUNICATION = ("downlink", "uplink")
#: Resources whose ops carry ``seconds`` (computations).
COMPUTATION = ("worker", "ps")

_OP_KEYS = ("id", "res", "bytes", "seconds", "deps", "server", "name")


def _amount(name: str, value, unit: str) -> float:
    try:
        out = units.parse(value, unit)
    except SpecError as err:
        raise err.within(name) from None
    if not math.isfinite(out) or out < 0:
        raise SpecError(name, f"must be finite and >= 0, got {value!r}")
    return out


def _check_id(name: str, value):
    if isinstance(value, bool) or not isinstance(value, (str, int, np.integer)):
        raise SpecError(name, f"an op id must be a string or an integer, got {value!r}")
    return int(value) if isinstance(value, np.integer) else value


@dataclass(frozen=True)
class Op:
    """One profiled operation.

    Attributes
    ----------
    id : str or int
        Unique within its step.
    res : {"downlink", "worker", "uplink", "ps"}
        The resource the op uses.
    bytes : float or None, B
        Size of a transmission (``downlink``/``uplink`` ops only).
    seconds : float or None, s
        Duration of a computation (``worker``/``ps`` ops only).
    deps : tuple
        Ids of the ops of the same step this op waits for (``op.waiting_for``).
    server : int
        Parameter server the op talks to or runs on (0-based; ignored for
        ``worker`` ops).
    name : str
        Free label (layer name), shown in Chrome traces.
    """

    id: Any
    res: str
    bytes: float | None = None
    seconds: float | None = None
    deps: tuple = ()
    server: int = 0
    name: str = ""

    def __post_init__(self):
        object.__setattr__(self, "id", _check_id("id", self.id))
        if self.res not in RESOURCES:
            raise SpecError("res", f"op {self.id!r}: unknown resource {self.res!r}; "
                                   f"expected one of {', '.join(RESOURCES)}")
        if self.res in COMMUNICATION:
            if self.seconds is not None:
                raise SpecError("seconds", f"op {self.id!r} uses {self.res}, a link: give its "
                                           "'bytes', not 'seconds'")
            if self.bytes is None:
                raise SpecError("bytes", f"op {self.id!r} uses {self.res} and needs 'bytes'")
            object.__setattr__(self, "bytes", _amount("bytes", self.bytes, "B"))
        else:
            if self.bytes is not None:
                raise SpecError("bytes", f"op {self.id!r} is a computation on {self.res}: give "
                                         "its 'seconds', not 'bytes'")
            if self.seconds is None:
                raise SpecError("seconds", f"op {self.id!r} uses {self.res} and needs 'seconds'")
            object.__setattr__(self, "seconds", _amount("seconds", self.seconds, "s"))
        deps = self.deps
        if isinstance(deps, (str, bytes)) or not isinstance(deps, Iterable):
            raise SpecError("deps", f"op {self.id!r}: deps must be a list of op ids, got {deps!r}")
        deps = tuple(_check_id(f"deps[{i}]", d) for i, d in enumerate(deps))
        object.__setattr__(self, "deps", deps)
        if isinstance(self.server, bool) or not isinstance(self.server, (int, np.integer)) \
                or self.server < 0:
            raise SpecError("server", f"op {self.id!r}: server must be an integer >= 0, "
                                      f"got {self.server!r}")
        object.__setattr__(self, "server", int(self.server))
        if not isinstance(self.name, str):
            raise SpecError("name", f"op {self.id!r}: name must be a string, got {self.name!r}")

    @property
    def amount(self) -> float:
        """``bytes`` for a transmission, ``seconds`` for a computation."""
        return self.bytes if self.res in COMMUNICATION else self.seconds

    def to_dict(self) -> dict:
        out: dict = {"id": self.id, "res": self.res}
        if self.res in COMMUNICATION:
            out["bytes"] = self.bytes
        else:
            out["seconds"] = self.seconds
        out["deps"] = list(self.deps)
        if self.server:
            out["server"] = self.server
        if self.name:
            out["name"] = self.name
        return out

    @classmethod
    def from_dict(cls, data) -> Op:
        if not isinstance(data, dict):
            raise SpecError("", f"an op must be a mapping, got {type(data).__name__}")
        unknown = sorted(set(data) - set(_OP_KEYS))
        if unknown:
            raise SpecError(unknown[0], f"unknown op field {unknown[0]!r}; known: "
                                        f"{', '.join(_OP_KEYS)}")
        for key in ("id", "res"):
            if key not in data:
                raise SpecError(key, "is required")
        deps = data.get("deps", ())
        if deps is None:
            deps = ()
        return cls(id=data["id"], res=data["res"], bytes=data.get("bytes"),
                   seconds=data.get("seconds"), deps=deps, server=data.get("server", 0),
                   name=data.get("name", ""))


def _find_cycle(ids: list, preds: list) -> list:
    """A dependency cycle (list of op ids) among the ops Kahn's algorithm could not order."""
    n = len(ids)
    color = [0] * n
    for start in range(n):
        if color[start]:
            continue
        stack = [(start, iter(preds[start]))]
        path = [start]
        color[start] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                path.pop()
                color[node] = 2
            elif color[nxt] == 1:
                cycle = path[path.index(nxt):] + [nxt]
                return [ids[i] for i in cycle]
            elif color[nxt] == 0:
                color[nxt] = 1
                path.append(nxt)
                stack.append((nxt, iter(preds[nxt])))
    return []


@dataclass(frozen=True, eq=False)
class Step:
    """One profiled SGD step: a DAG of :class:`Op` (validated on construction).

    Attributes
    ----------
    ops : tuple of Op
        In the order the profile lists them; ops that become ready together
        are queued in this order (ready roots at the start of a step, too).
    """

    ops: tuple

    def __post_init__(self):
        ops = tuple(self.ops)
        object.__setattr__(self, "ops", ops)
        if not ops:
            raise SpecError("ops", "a step needs at least one op")
        index: dict = {}
        for i, op in enumerate(ops):
            if not isinstance(op, Op):
                raise SpecError(f"ops[{i}]", f"expected an Op, got {type(op).__name__}")
            if op.id in index:
                raise SpecError(f"ops[{i}].id", f"duplicate op id {op.id!r} "
                                                f"(also ops[{index[op.id]}])")
            index[op.id] = i
        preds = []
        for i, op in enumerate(ops):
            row = []
            for j, d in enumerate(op.deps):
                k = index.get(d)
                if k is None:
                    raise SpecError(f"ops[{i}].deps[{j}]",
                                    f"op {op.id!r} depends on unknown op id {d!r}")
                if k == i:
                    raise SpecError(f"ops[{i}].deps[{j}]", f"op {op.id!r} depends on itself")
                row.append(k)
            if len(set(row)) != len(row):
                raise SpecError(f"ops[{i}].deps", f"op {op.id!r} lists a dependency twice")
            preds.append(row)
        # Kahn's algorithm: every op must be reachable in a topological order.
        indeg = [len(p) for p in preds]
        succ: list = [[] for _ in ops]
        for i, row in enumerate(preds):
            for k in row:
                succ[k].append(i)
        ready = [i for i in range(len(ops)) if indeg[i] == 0]
        seen = 0
        while ready:
            i = ready.pop()
            seen += 1
            for j in succ[i]:
                indeg[j] -= 1
                if indeg[j] == 0:
                    ready.append(j)
        if seen != len(ops):
            cycle = _find_cycle([op.id for op in ops], preds)
            text = " -> ".join(repr(c) for c in cycle)
            raise SpecError("ops", f"dependency cycle: {text} (each op waits for the next)")
        object.__setattr__(self, "_preds", tuple(tuple(p) for p in preds))

    def __eq__(self, other):
        return isinstance(other, Step) and self.ops == other.ops

    def __hash__(self):
        return hash(self.ops)

    def __len__(self) -> int:
        return len(self.ops)

    @property
    def preds(self) -> tuple:
        """Per op, the indices (into :attr:`ops`) of the ops it waits for."""
        return self._preds

    def to_dict(self) -> dict:
        return {"ops": [op.to_dict() for op in self.ops]}

    @classmethod
    def from_dict(cls, data) -> Step:
        if not isinstance(data, dict) or "ops" not in data:
            raise SpecError("", "a step must be a mapping with 'ops'")
        unknown = sorted(set(data) - {"ops"})
        if unknown:
            raise SpecError(unknown[0], f"unknown step field {unknown[0]!r}")
        ops = data["ops"]
        if not isinstance(ops, list):
            raise SpecError("ops", f"must be a list, got {type(ops).__name__}")
        parsed = []
        for i, op in enumerate(ops):
            try:
                parsed.append(Op.from_dict(op))
            except SpecError as err:
                raise err.within(f"ops[{i}]") from None
        return cls(tuple(parsed))


@dataclass(frozen=True, eq=False)
class Trace:
    """Profiled SGD steps of one worker type (Li et al. 2022, Sec. 2.2.1).

    Attributes
    ----------
    steps : tuple of Step
        Profiled steps; the simulator samples them with replacement.
    name : str
        Label (the DNN, the batch size ...).
    batch_size : int
        Samples per worker per step (turns steps/s into samples/s).
    source : str
        Provenance of the numbers.

    Raises
    ------
    SpecError
        On construction, naming ``steps[i].ops[j]...`` and the op id.
    """

    steps: tuple
    name: str = ""
    batch_size: int = 1
    source: str = ""

    def __post_init__(self):
        steps = tuple(self.steps)
        object.__setattr__(self, "steps", steps)
        if not steps:
            raise SpecError("steps", "a trace needs at least one step")
        for i, step in enumerate(steps):
            if not isinstance(step, Step):
                raise SpecError(f"steps[{i}]", f"expected a Step, got {type(step).__name__}")
        if isinstance(self.batch_size, bool) or not isinstance(self.batch_size, (int, np.integer)) \
                or self.batch_size < 1:
            raise SpecError("batch_size", f"must be a whole number >= 1, got {self.batch_size!r}")
        object.__setattr__(self, "batch_size", int(self.batch_size))
        for name in ("name", "source"):
            if not isinstance(getattr(self, name), str):
                raise SpecError(name, f"must be a string, got {getattr(self, name)!r}")

    def __eq__(self, other):
        return (isinstance(other, Trace) and self.steps == other.steps
                and self.name == other.name and self.batch_size == other.batch_size)

    def __hash__(self):
        return hash((self.steps, self.name, self.batch_size))

    def __len__(self) -> int:
        return len(self.steps)

    # ------------------------------------------------------------------ summaries

    @cached_property
    def n_servers(self) -> int:
        """Parameter servers the trace talks to (1 + the largest ``server`` of a link/ps op)."""
        return 1 + max((op.server for s in self.steps for op in s.ops if op.res != "worker"),
                       default=0)

    def bytes(self, res: str = "downlink", step: int | None = None) -> float:
        """Mean bytes per step on ``res`` (``"downlink"`` or ``"uplink"``), or of one step."""
        steps = self.steps if step is None else (self.steps[step],)
        return float(np.mean([sum(op.bytes for op in s.ops if op.res == res) for s in steps]))

    def seconds(self, res: str = "worker", step: int | None = None) -> float:
        """Mean seconds per step on ``res`` (``"worker"`` or ``"ps"``), or of one step."""
        steps = self.steps if step is None else (self.steps[step],)
        return float(np.mean([sum(op.seconds for op in s.ops if op.res == res) for s in steps]))

    @property
    def model_bytes(self) -> float:
        """Mean bytes pulled per step (the model size M of a plain trace)."""
        return self.bytes("downlink")

    def at_batch(self, batch_size: int) -> Trace:
        """The trace at another batch size: every computation on the worker scaled with the
        batch, transfers and server updates unchanged (as
        :meth:`perfmodel.specs.Profile.at_batch`)."""
        scale = batch_size / self.batch_size
        steps = tuple(Step(tuple(dataclasses.replace(op, seconds=op.seconds * scale)
                                 if op.res == "worker" else op for op in step.ops))
                      for step in self.steps)
        return self.replace(steps=steps, batch_size=int(batch_size))

    def coarse_profile(self) -> Profile:
        """The coarse profile of the trace's mean step: M, T_F, T_B, T_S and the batch.

        T_F is the worker time of ops named ``... forward`` (the names
        :func:`from_layers` and the importers give), T_B the rest of the
        worker time.
        """
        forward = float(np.mean([sum(op.seconds for op in s.ops if op.res == "worker"
                                     and op.name.endswith("forward")) for s in self.steps]))
        total = self.seconds("worker")
        return Profile(model_bytes=max(self.model_bytes, self.bytes("uplink")),
                       t_forward=forward, t_backward=total - forward,
                       t_update=self.seconds("ps"), batch_size=self.batch_size,
                       name=self.name, source=f"coarse profile of trace {self.name!r}")

    # ------------------------------------------------------------------ (de)serialization

    def to_dict(self) -> dict:
        """JSON-ready dict in the trace file format (SI units)."""
        out: dict = {}
        if self.name:
            out["name"] = self.name
        if self.batch_size != 1:
            out["batch_size"] = self.batch_size
        if self.source:
            out["source"] = self.source
        out["steps"] = [s.to_dict() for s in self.steps]
        return out

    @classmethod
    def from_dict(cls, data) -> Trace:
        """Build a trace from the file format (unit strings allowed in amounts).

        Raises
        ------
        SpecError
            Naming the field, e.g. ``steps[1].ops[4].deps[0]: op 'fwd3' depends
            on unknown op id 'down9'``.
        """
        if not isinstance(data, dict):
            raise SpecError("", f"a trace must be a mapping with 'steps', got "
                                f"{type(data).__name__}")
        unknown = sorted(set(data) - {"steps", "name", "batch_size", "source"})
        if unknown:
            raise SpecError(unknown[0], f"unknown trace field {unknown[0]!r}; known: steps, "
                                        "name, batch_size, source")
        if "steps" not in data:
            raise SpecError("steps", "is required")
        steps = data["steps"]
        if not isinstance(steps, list):
            raise SpecError("steps", f"must be a list, got {type(steps).__name__}")
        parsed = []
        for i, step in enumerate(steps):
            try:
                parsed.append(Step.from_dict(step))
            except SpecError as err:
                raise err.within(f"steps[{i}]") from None
        return cls(tuple(parsed), name=data.get("name", ""), batch_size=data.get("batch_size", 1),
                   source=data.get("source", ""))

    @classmethod
    def load(cls, path: str | Path) -> Trace:
        """Read a trace file (JSON, or YAML for other suffixes) through :mod:`perfmodel.io`.

        Errors name the file and the field: ``trace.json: steps[0].ops[2].res: ...``.
        """
        data = io.read_data(path)
        try:
            return cls.from_dict(data)
        except SpecError as err:
            raise err.within(source=str(path)) from None

    def dumps(self) -> str:
        """The trace as JSON text (write it with your own I/O or the CLI)."""
        import json

        return json.dumps(self.to_dict(), indent=1) + "\n"

    def replace(self, **changes) -> Trace:
        """A copy with some attributes changed (``steps``, ``name``, ...)."""
        return dataclasses.replace(self, **changes)

    # ------------------------------------------------------------------ builders

    @classmethod
    def from_layers(cls, layer_bytes, t_forward, t_backward, t_update=0.0, overlap=True, *,
                    servers=None, names=None, name: str = "", batch_size: int = 1,
                    source: str = "") -> Trace:
        """A layer-level trace; see :func:`from_layers`."""
        return from_layers(layer_bytes, t_forward, t_backward, t_update, overlap,
                           servers=servers, names=names, name=name, batch_size=batch_size,
                           source=source)

    @classmethod
    def from_pipedream(cls, graph, t_update=0.0, overlap=True, *, servers=None,
                       batch_size: int = 1) -> Trace:
        """A layer-level trace of a PipeDream profile; see :func:`from_pipedream`."""
        return from_pipedream(graph, t_update, overlap, servers=servers, batch_size=batch_size)


# ---------------------------------------------------------------------- builders

def _layer_array(name: str, value, n_layers: int | None, allow_2d: bool) -> np.ndarray:
    if isinstance(value, str):
        raise SpecError(name, f"expected numbers, got the string {value!r}")
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise SpecError(name, f"expected numbers, got {value!r}") from None
    if a.ndim == 0 or a.ndim > (2 if allow_2d else 1):
        shape = "(layers,) or (steps, layers)" if allow_2d else "(layers,)"
        raise SpecError(name, f"expected an array of shape {shape}, got shape {a.shape}")
    if n_layers is not None and a.shape[-1] != n_layers:
        raise SpecError(name, f"has {a.shape[-1]} layers, layer_bytes has {n_layers}")
    bad = ~(np.isfinite(a) & (a >= 0))
    if bad.any():
        first = a.flat[int(np.flatnonzero(bad)[0])]
        raise SpecError(name, f"must be finite and >= 0, got {first!r}")
    return a


def from_layers(layer_bytes, t_forward, t_backward, t_update=0.0, overlap=True, *,
                servers=None, names=None, name: str = "", batch_size: int = 1,
                source: str = "") -> Trace:
    """A trace of a layered DNN from per-layer sizes and times.

    Layer l (in forward order) with ``layer_bytes[l] > 0`` gets a pull
    ``down{l}`` (downlink), a push ``up{l}`` (uplink) and, when the update
    time is > 0, an update ``upd{l}`` (ps) on its server; every layer gets a
    forward ``fwd{l}`` and a backward ``bwd{l}`` (worker).

    With ``overlap=True`` (Li et al. 2022, Sec. 2.2.1; Li et al. 2020, Fig. 6):
    ``fwd{l}`` waits for ``down{l}`` and ``fwd{l-1}``; ``bwd{L-1}`` waits for
    ``fwd{L-1}`` and ``bwd{l}`` for ``bwd{l+1}``; ``up{l}`` starts when
    ``bwd{l}`` ends; ``upd{l}`` waits for ``up{l}``.  Pulls are queued in
    layer order, pushes as their gradients appear.

    With ``overlap=False`` the phases are sequential, as in Li et al. 2022's coarse
    model (Fig. 4b): ``fwd0`` waits for every pull, the pushes all wait for
    ``bwd0`` (the end of the backward pass), and every update waits for every
    push.  With one server this step takes ``M/B + T_F + T_B + M/B + T_S``
    alone, and under the simulator's sync mode it reproduces eqs. 7 and 8.

    Parameters
    ----------
    layer_bytes : array_like, B
        Parameter (and gradient) bytes per layer, shape (L,); 0 for layers
        without parameters.
    t_forward, t_backward : array_like, s
        Per-layer times, shape (L,) or (S, L) for S profiled steps (a step per row).
    t_update : float or array_like, s
        Total update time per step (split over the layers in proportion to
        their bytes), or per-layer times of shape (L,) or (S, L).
    overlap : bool
        Overlap communication with computation (see above).
    servers : array_like of int, optional
        Parameter server of each layer (see
        :func:`perfmodel.sim.tensorflow.assign_servers`); all on server 0 by default.
    names : sequence of str, optional
        Layer names, used in op names (Chrome traces).
    name, batch_size, source
        Stored on the trace.

    Returns
    -------
    Trace
        S steps with the same DAG and the rows' times.

    Raises
    ------
    SpecError
        Naming the argument: mismatched lengths, negative or NaN values, no
        layer with bytes.

    References
    ----------
    Li et al. 2022, Sec. 2.2.1 ("the feedforward computation operation of a DNN layer
    depends on the communication operation transmitting that layer, and the
    feedforward computation operation of the previous layer"; uplinks start
    when a layer's backward ends) and Sec. 4.1 (layer-level traces); Fig. 4
    (no overlap).

    Examples
    --------
    >>> t = from_layers([1e6], [0.01], [0.02], 0.001, overlap=False)
    >>> [(op.id, op.res, op.deps) for op in t.steps[0].ops]   # doctest: +NORMALIZE_WHITESPACE
    [('down0', 'downlink', ()), ('fwd0', 'worker', ('down0',)), ('bwd0', 'worker', ('fwd0',)),
     ('up0', 'uplink', ('bwd0',)), ('upd0', 'ps', ('up0',))]
    """
    if not isinstance(overlap, (bool, np.bool_)):
        raise SpecError("overlap", f"expected True or False, got {overlap!r}")
    m = _layer_array("layer_bytes", layer_bytes, None, False)
    n = m.shape[0]
    if n == 0 or not (m > 0).any():
        raise SpecError("layer_bytes", "needs at least one layer with bytes > 0")
    tf = _layer_array("t_forward", t_forward, n, True)
    tb = _layer_array("t_backward", t_backward, n, True)
    n_steps = max(tf.shape[0] if tf.ndim == 2 else 1, tb.shape[0] if tb.ndim == 2 else 1)
    tu_in = t_update
    if np.ndim(tu_in) == 0:
        total = _layer_array("t_update", [tu_in], None, False)[0]
        tu = total * m / m.sum()
    else:
        tu = _layer_array("t_update", tu_in, n, True)
        n_steps = max(n_steps, tu.shape[0] if tu.ndim == 2 else 1)
    rows = []
    for name_, a in (("t_forward", tf), ("t_backward", tb), ("t_update", tu)):
        if a.ndim == 2 and a.shape[0] != n_steps:
            raise SpecError(name_, f"has {a.shape[0]} steps, another argument has {n_steps}")
        rows.append(np.broadcast_to(a, (n_steps, n)))
    tf, tb, tu = rows
    if servers is None:
        srv = np.zeros(n, dtype=int)
    else:
        srv = np.asarray(servers)
        if srv.shape != (n,) or not np.issubdtype(srv.dtype, np.integer) or (srv < 0).any():
            raise SpecError("servers", f"expected {n} integers >= 0 (a server per layer), "
                                       f"got {servers!r}")
    if names is None:
        labels = [f"layer{l}" for l in range(n)]
    else:
        labels = [str(x) for x in names]
        if len(labels) != n:
            raise SpecError("names", f"has {len(labels)} names for {n} layers")
    has = [l for l in range(n) if m[l] > 0]
    last = n - 1
    steps = []
    for s in range(n_steps):
        ops = []
        for l in has:
            ops.append(Op(f"down{l}", "downlink", bytes=float(m[l]), server=int(srv[l]),
                          name=f"{labels[l]} pull"))
        for l in range(n):
            if overlap:
                deps = ([f"down{l}"] if m[l] > 0 else []) + ([f"fwd{l - 1}"] if l else [])
            else:
                deps = [f"down{j}" for j in has] if l == 0 else [f"fwd{l - 1}"]
            ops.append(Op(f"fwd{l}", "worker", seconds=float(tf[s, l]), deps=tuple(deps),
                          name=f"{labels[l]} forward"))
        for l in range(last, -1, -1):
            deps = (f"fwd{last}",) if l == last else (f"bwd{l + 1}",)
            ops.append(Op(f"bwd{l}", "worker", seconds=float(tb[s, l]), deps=deps,
                          name=f"{labels[l]} backward"))
            if overlap and m[l] > 0:
                ops.append(Op(f"up{l}", "uplink", bytes=float(m[l]), deps=(f"bwd{l}",),
                              server=int(srv[l]), name=f"{labels[l]} push"))
        if not overlap:
            for l in reversed(has):
                ops.append(Op(f"up{l}", "uplink", bytes=float(m[l]), deps=("bwd0",),
                              server=int(srv[l]), name=f"{labels[l]} push"))
        if tu[s].sum() > 0:
            for l in reversed(has):
                deps = (f"up{l}",) if overlap else tuple(f"up{j}" for j in reversed(has))
                ops.append(Op(f"upd{l}", "ps", seconds=float(tu[s, l]), deps=deps,
                              server=int(srv[l]), name=f"{labels[l]} update"))
        steps.append(Step(tuple(ops)))
    return Trace(tuple(steps), name=name, batch_size=batch_size, source=source)


def from_pipedream(graph, t_update=0.0, overlap=True, *, servers=None,
                   batch_size: int = 1) -> Trace:
    """A layer-level trace of a PipeDream ``graph.txt`` profile.

    The compute layers of :func:`perfmodel.pipedream.layer_table` (topological
    order, ``Input`` nodes left out) become the layers of :func:`from_layers`:
    their parameter bytes, forward and backward seconds.  One GPU runs the
    layers one after the other, so the DAG's branches (residual adds) become
    a chain in topological order.

    Parameters
    ----------
    graph : PipeDreamGraph
        From :func:`perfmodel.pipedream.load_graph` or
        :func:`perfmodel.pipedream.parse_graph`.
    t_update : float or array_like, s
        Update time per step on the servers (PipeDream does not profile it).
    overlap : bool
        See :func:`from_layers`.
    servers : array_like of int, optional
        Server per compute layer.
    batch_size : int
        Samples per step of the profile (see
        :func:`perfmodel.pipedream.infer_batch_size`).

    Returns
    -------
    Trace
        One step (PipeDream keeps averages only), named after the graph.

    References
    ----------
    Li et al. 2022, Sec. 4.1 (layer-level traces); PipeDream's profile format (see
    :mod:`perfmodel.pipedream`).
    """
    if not isinstance(graph, PipeDreamGraph):
        raise SpecError("graph", f"expected a PipeDreamGraph, got {type(graph).__name__}")
    table = layer_table(graph)
    label = graph.source or "pipedream"
    return from_layers(table.parameter_bytes, table.t_forward, table.t_backward, t_update,
                       overlap, servers=servers, names=table.ids, name=label,
                       batch_size=batch_size,
                       source=f"PipeDream profile {label}: per-layer times and parameter bytes")
