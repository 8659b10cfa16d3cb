"""Frozen, validated specifications: Layer, DNN, Profile, Cluster, Config.

Every spec is a frozen dataclass whose fields carry their own rules (type,
unit, bounds, choices) in ``dataclasses.field(metadata=...)``.  The same rules
drive three things, so they can never disagree:

* validation on construction (:class:`~perfmodel.errors.SpecError` naming the
  field and the bad value; never ``assert``);
* reading dictionaries with unit strings (:meth:`Spec.from_dict`), which also
  rejects unknown and missing fields;
* the JSON Schema of each file format (:meth:`Spec.json_schema`).

Unit strings (``"10Gbps"``) are accepted by the constructors too, because a
notebook cell is as much an edge as a file; they are converted to SI once, here,
and every model sees plain floats.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers
from dataclasses import dataclass, field
from typing import Any, ClassVar

from . import units
from .errors import SpecError

__all__ = [
    "Spec", "Layer", "DNN", "Profile", "Cluster", "Config",
    "LAYER_KINDS", "BYTES_PER_PARAM", "UNIT_REQUIRED",
]

#: Layer kinds the zoo and importers use (Yan et al. 2015, Sec. 4 names conv, pool, fc, softmax).
LAYER_KINDS = ("input", "conv", "pool", "fc", "softmax", "norm", "act", "add",
               "concat", "dropout", "flatten", "lrn", "embedding", "rnn", "other")

#: Bytes per parameter of an FP32 model (the papers' setting).
BYTES_PER_PARAM = 4


def spec_field(kind: str, *, doc: str, unit: str | None = None, minimum: float | None = None,
               exclusive_minimum: bool = False, maximum: float | None = None,
               choices: tuple | None = None, optional: bool = False,
               default: Any = dataclasses.MISSING):
    """A dataclass field with its validation rules in ``metadata``.

    ``kind`` is one of ``float``, ``int``, ``str``, ``bool``, ``shape`` (tuple of
    positive ints), ``pair`` (an int or two ints, stored as a 2-tuple), ``names``
    (tuple of str) or ``layers`` (tuple of :class:`Layer`).
    """
    if default is dataclasses.MISSING and optional:
        default = None
    required = default is dataclasses.MISSING
    meta = dict(kind=kind, doc=doc, unit=unit, minimum=minimum,
                exclusive_minimum=exclusive_minimum, maximum=maximum,
                choices=choices, optional=optional, required=required)
    # Required fields get a sentinel default so that a missing one is a SpecError
    # naming it (not a TypeError), and field order is free.
    return field(default=_REQUIRED if required else default, metadata=meta)


class _Required:
    def __repr__(self):
        return "<required>"


_REQUIRED = _Required()


def _fail(name: str, message: str):
    raise SpecError(name, message)


def _as_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        _fail(name, f"expected an integer, got {type(value).__name__} {value!r}")
    if isinstance(value, numbers.Integral):
        return int(value)
    if not math.isfinite(value) or value != int(value):
        _fail(name, f"expected an integer, got {value!r}")
    return int(value)


def _as_float(name: str, value, unit: str | None) -> float:
    if isinstance(value, str) and unit is None:
        _fail(name, f"expected a number, got the string {value!r}")
    try:
        return units.parse(value, unit or "1")
    except SpecError as err:
        raise err.within(name) from None


def _check_bounds(name: str, value, meta) -> None:
    lo, hi = meta["minimum"], meta["maximum"]
    if lo is not None:
        if meta["exclusive_minimum"] and not value > lo:
            _fail(name, f"must be > {lo}, got {value!r}")
        if not meta["exclusive_minimum"] and not value >= lo:
            _fail(name, f"must be >= {lo}, got {value!r}")
    if hi is not None and not value <= hi:
        _fail(name, f"must be <= {hi}, got {value!r}")


def _as_shape(name: str, value, minimum: int = 1) -> tuple[int, ...]:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        _fail(name, f"expected a list of integers >= {minimum}, got {value!r}")
    out = tuple(_as_int(f"{name}[{i}]", v) for i, v in enumerate(value))
    for i, v in enumerate(out):
        if v < minimum:
            _fail(f"{name}[{i}]", f"must be >= {minimum}, got {v}")
    return out


def _coerce(name: str, value, meta):
    """Validate one field value against its metadata and return it normalized."""
    kind = meta["kind"]
    if value is _REQUIRED:
        _fail(name, "missing required field")
    if value is None:
        if meta["optional"]:
            return None
        _fail(name, "is required (got None)")
    if kind == "float":
        out = _as_float(name, value, meta["unit"])
    elif kind == "int":
        out = _as_int(name, value)
    elif kind == "str":
        if not isinstance(value, str):
            _fail(name, f"expected a string, got {type(value).__name__} {value!r}")
        out = value
    elif kind == "bool":
        if not isinstance(value, bool):
            _fail(name, f"expected true or false, got {value!r}")
        out = value
    elif kind == "shape":
        out = _as_shape(name, value)
        if not out:
            _fail(name, "must have at least one dimension, got []")
    elif kind == "pair":
        lo = int(meta["minimum"])
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            value = (value, value)
        out = _as_shape(name, value, lo)
        if len(out) != 2:
            _fail(name, f"expected an integer or two integers, got {value!r}")
        return out
    elif kind == "floats":
        if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
            _fail(name, f"expected a list of numbers, got {value!r}")
        out = tuple(_as_float(f"{name}[{i}]", v, meta["unit"]) for i, v in enumerate(value))
        for i, v in enumerate(out):
            _check_bounds(f"{name}[{i}]", v, meta)
        return out
    elif kind == "names":
        if isinstance(value, str) or not hasattr(value, "__iter__"):
            _fail(name, f"expected a list of names, got {value!r}")
        out = tuple(value)
        for i, v in enumerate(out):
            if not isinstance(v, str):
                _fail(f"{name}[{i}]", f"expected a string, got {v!r}")
        return out
    elif kind == "layers":
        if isinstance(value, (str, dict)) or not hasattr(value, "__iter__"):
            _fail(name, f"expected a list of layers, got {type(value).__name__}")
        out = []
        for i, v in enumerate(value):
            try:
                out.append(v if isinstance(v, Layer) else Layer.from_dict(v))
            except SpecError as err:
                raise err.within(f"{name}[{i}]") from None
        return tuple(out)
    else:  # pragma: no cover - a programming error in a spec definition
        raise TypeError(f"unknown field kind {kind!r}")
    if meta["choices"] is not None and out not in meta["choices"]:
        _fail(name, f"must be one of {', '.join(map(str, meta['choices']))}; got {out!r}")
    if kind in ("float", "int"):
        _check_bounds(name, out, meta)
    return out


#: Dimensions whose values a file must write with a unit (a bare 0 aside).
UNIT_REQUIRED = ("B", "B/s", "s")


def _check_units(data: dict, fields: dict) -> None:
    """Refuse bare non-zero numbers for the quantities of :data:`UNIT_REQUIRED`."""
    for name, value in data.items():
        unit = fields[name].metadata.get("unit")
        if unit not in UNIT_REQUIRED:
            continue
        many = fields[name].metadata["kind"] == "floats" and isinstance(value, (list, tuple))
        for i, item in enumerate(value if many else [value]):
            if isinstance(item, numbers.Real) and not isinstance(item, bool):
                where = f"{name}[{i}]" if many else name
                try:
                    si = units.parse(item, unit)
                except SpecError as err:
                    raise err.within(where) from None
                if si != 0:
                    raise SpecError(where, f"{units.shown(item)} needs a unit: write "
                                           f"{units.exact_text(si, unit)!r} if it is in "
                                           f"{unit} (SI), or the unit meant")


@functools.cache
def _fields_of(cls) -> dict:
    """A spec class's dataclass fields by name (ClassVars left out, as ``fields`` does)."""
    return {f.name: f for f in dataclasses.fields(cls)}


class Spec:
    """Shared behaviour of the frozen spec dataclasses (validation, dicts, schema)."""

    _schema_title: ClassVar[str] = ""

    def __post_init__(self):
        for f in dataclasses.fields(self):
            value = _coerce(f.name, getattr(self, f.name), f.metadata)
            object.__setattr__(self, f.name, value)
        self._check()

    def _check(self) -> None:
        """Cross-field rules; subclasses override."""

    @classmethod
    def from_dict(cls, data: dict, *, require_units: bool = False):
        """Build the spec from a mapping (e.g. parsed JSON), unit strings allowed.

        Parameters
        ----------
        data : dict
            Field names to values; a quantity is a number (SI) or a unit string.
        require_units : bool
            Refuse a bare non-zero number for a size, rate or time
            (:data:`UNIT_REQUIRED`), as files do: ``nic_bandwidth: 10`` is far
            more likely 10 Gbps than the 10 bytes/s it would mean.

        Raises
        ------
        SpecError
            For a non-mapping, an unknown field, a missing required field, or any
            bad value; the field is named.
        """
        if not isinstance(data, dict):
            raise SpecError("", f"expected an object with the fields of {cls.__name__}, "
                                f"got {type(data).__name__}")
        names = {f.name: f for f in dataclasses.fields(cls)}
        for key in data:
            if key not in names:
                raise SpecError(str(key), f"unknown field for {cls.__name__} "
                                          f"(known: {', '.join(names)})")
        if require_units:
            _check_units(data, names)
        return cls(**data)

    def to_file_dict(self) -> dict:
        """:meth:`to_dict` with sizes, rates and times as exact unit strings (for files)."""
        out = self.to_dict()
        for f in dataclasses.fields(self):
            unit = f.metadata.get("unit")
            if unit in UNIT_REQUIRED and isinstance(out.get(f.name), float):
                out[f.name] = units.exact_text(out[f.name], unit)
        return out

    def to_dict(self) -> dict:
        """A JSON-ready dict in SI units; ``from_dict(to_dict())`` round-trips."""
        out = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.metadata["kind"] == "layers":
                value = [layer.to_dict() for layer in value]
            elif isinstance(value, tuple):
                value = list(value)
            if value is None and f.default is None:
                continue
            out[f.name] = value
        return out

    def replace(self, **changes):
        """A copy with some fields changed, those validated and the cross-field rules again.

        The other fields were validated when this spec was made, and a field's
        check reads that field alone, so only the changed ones are coerced: the
        result equals ``dataclasses.replace`` (which checks every field), at a
        fraction of the cost for the many small changes calibration makes.

        Raises
        ------
        SpecError
            An unknown field, or a bad value (the field named).
        """
        fields = _fields_of(type(self))
        new = object.__new__(type(self))
        for name in changes:
            if name not in fields:
                raise SpecError(name, f"unknown field for {type(self).__name__} "
                                      f"(known: {', '.join(fields)})")
        for name, f in fields.items():
            if name in changes:
                value = _coerce(name, changes[name], f.metadata)
            else:
                value = getattr(self, name)
            object.__setattr__(new, name, value)
        new._check()
        return new

    @classmethod
    def json_schema(cls) -> dict:
        """JSON Schema (draft 2020-12) of this spec's file format, made from its fields."""
        props, required = {}, []
        for f in dataclasses.fields(cls):
            props[f.name] = _field_schema(f.metadata)
            if f.metadata["required"]:
                required.append(f.name)
        return {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": cls.__name__,
            "description": (cls.__doc__ or "").strip().split("\n")[0],
            "type": "object",
            "properties": props,
            "required": required,
            "additionalProperties": False,
        }


_UNIT_PATTERN = r"^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*[A-Za-zµμ/]*\s*$"


def _field_schema(meta) -> dict:
    kind = meta["kind"]
    if kind in ("float", "int"):
        num = {"type": "number" if kind == "float" else "integer"}
        if meta["minimum"] is not None:
            num["exclusiveMinimum" if meta["exclusive_minimum"] else "minimum"] = meta["minimum"]
        if meta["maximum"] is not None:
            num["maximum"] = meta["maximum"]
        schema = num
        if meta["unit"] in UNIT_REQUIRED:   # files need the unit (a bare 0 aside, where valid)
            text = {"type": "string", "pattern": _UNIT_PATTERN}
            lo = meta["minimum"]
            zero_ok = lo is None or lo < 0 or (lo == 0 and not meta["exclusive_minimum"])
            schema = {"anyOf": [{"const": 0}, text] if zero_ok else [text],
                      "x-unit": meta["unit"]}
        elif meta["unit"]:
            schema = {"anyOf": [num, {"type": "string", "pattern": _UNIT_PATTERN}],
                      "x-unit": meta["unit"]}
    elif kind == "str":
        schema = {"type": "string"}
        if meta["choices"]:
            schema["enum"] = list(meta["choices"])
    elif kind == "bool":
        schema = {"type": "boolean"}
    elif kind == "shape":
        schema = {"type": "array", "items": {"type": "integer", "minimum": 1}, "minItems": 1}
    elif kind == "pair":
        item = {"type": "integer", "minimum": meta["minimum"]}
        schema = {"anyOf": [item, {"type": "array", "items": item, "minItems": 2, "maxItems": 2}]}
    elif kind == "floats":
        item = _field_schema(dict(meta, kind="float", optional=False))
        item.pop("description")
        schema = {"type": "array", "items": item}
    elif kind == "names":
        schema = {"type": "array", "items": {"type": "string"}}
    elif kind == "layers":
        layer = Layer.json_schema()
        layer.pop("$schema")
        schema = {"type": "array", "items": layer, "minItems": 1}
    else:  # pragma: no cover
        raise TypeError(kind)
    if meta["optional"]:
        schema = {"anyOf": [schema, {"type": "null"}]}
    schema["description"] = meta["doc"] + (f" [{meta['unit']}]" if meta["unit"] else "")
    return schema


@dataclass(frozen=True)
class Layer(Spec):
    """One DNN layer (Yan et al. 2015 Sec. 4.1: neurons, weights, connections).

    Counts are per sample.  ``connections`` is Yan et al. 2015's W(l): weighted
    connections from the layer's inputs into it, i.e. multiply-adds of the
    forward pass; ``flops`` defaults to ``2 * connections`` for layers with
    weights and to ``neurons`` for the others (one operation per output).
    """

    name: str = spec_field("str", doc="unique layer name")
    kind: str = spec_field("str", doc="layer type", choices=LAYER_KINDS)
    out_shape: tuple = spec_field("shape", doc="output shape per sample, e.g. [C, H, W]")
    in_shape: tuple = spec_field("shape", doc="input shape per sample", optional=True)
    neurons: int = spec_field("int", doc="output neurons per sample (default: product of out_shape)",
                              minimum=0, optional=True)
    weights: int = spec_field("int", doc="trainable parameters", minimum=0, default=0)
    connections: int = spec_field("int", doc="weighted connections per sample (forward multiply-adds)",
                                  minimum=0, default=0)
    flops: float = spec_field("float", doc="forward FLOP per sample", unit="FLOP", minimum=0,
                              optional=True)
    kernel: tuple = spec_field("pair", doc="kernel height and width", minimum=1, optional=True)
    stride: tuple = spec_field("pair", doc="stride height and width", minimum=1, optional=True)
    padding: tuple = spec_field("pair", doc="zero padding height and width", minimum=0, optional=True)
    groups: int = spec_field("int", doc="convolution groups", minimum=1, default=1)
    inputs: tuple = spec_field("names", doc="names of the layers feeding this one "
                                            "(empty: the previous layer)", default=())

    def _check(self):
        if not self.name:
            _fail("name", "must not be empty")
        if self.neurons is None:
            object.__setattr__(self, "neurons", math.prod(self.out_shape))
        if self.flops is None:
            flops = 2.0 * self.connections if self.connections else float(self.neurons)
            object.__setattr__(self, "flops", flops)


@dataclass(frozen=True)
class DNN(Spec):
    """A deep neural network: an ordered list of layers (a DAG through ``Layer.inputs``)."""

    name: str = spec_field("str", doc="network name")
    layers: tuple = spec_field("layers", doc="layers in execution order")
    input_shape: tuple = spec_field("shape", doc="input shape per sample, e.g. [3, 224, 224]",
                                    optional=True)
    source: str = spec_field("str", doc="where the architecture comes from", default="")
    notes: str = spec_field("str", doc="assumptions made in writing the spec down", default="")
    max_workers_per_replica: int = spec_field(
        "int", doc="largest model parallelism (workers per model replica) the architecture "
                   "allows; unset: no limit (Yan et al. 2015, Sec. 6.2, footnote 7: their DNNs "
                   "allowed at most 4)", minimum=1, optional=True)

    def _check(self):
        if not self.layers:
            _fail("layers", "must hold at least one layer")
        seen = set()
        for i, layer in enumerate(self.layers):
            if layer.name in seen:
                _fail(f"layers[{i}].name", f"duplicate layer name {layer.name!r}")
            for j, src in enumerate(layer.inputs):
                if src not in seen:
                    _fail(f"layers[{i}].inputs[{j}]",
                          f"{src!r} is not the name of an earlier layer")
            seen.add(layer.name)

    @property
    def n_params(self) -> int:
        """Total trainable parameter count."""
        return sum(layer.weights for layer in self.layers)

    @property
    def n_connections(self) -> int:
        """Weighted connections per sample (forward multiply-adds): Yan et al. 2015's sum W(l)."""
        return sum(layer.connections for layer in self.layers)

    @property
    def flops(self) -> float:
        """Forward FLOP per sample."""
        return float(sum(layer.flops for layer in self.layers))

    def model_bytes(self, bytes_per_param: int = BYTES_PER_PARAM) -> float:
        """Size of the parameters in bytes (FP32 by default)."""
        return float(self.n_params * bytes_per_param)

    def layer(self, name: str) -> Layer:
        """The layer called ``name``."""
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise KeyError(name)


@dataclass(frozen=True)
class Profile(Spec):
    """Coarse single-worker profile of one SGD step (Li et al. 2022 Table 3: M, T_F, T_B, T_S)."""

    model_bytes: float = spec_field("float", doc="model (and gradient) size M", unit="B",
                                    minimum=0, exclusive_minimum=True)
    t_forward: float = spec_field("float", doc="forward time T_F of one step", unit="s", minimum=0)
    t_backward: float = spec_field("float", doc="backward time T_B of one step", unit="s", minimum=0)
    t_update: float = spec_field("float", doc="parameter-server update time T_S", unit="s",
                                 minimum=0, default=0.0)
    batch_size: int = spec_field("int", doc="samples per worker per step", minimum=1, default=1)
    name: str = spec_field("str", doc="profile name", default="")
    dnn: str = spec_field("str", doc="zoo name of the DNN profiled", default="")
    measured: bool = spec_field("bool", doc="true when the times come from real measurements",
                                default=False)
    source: str = spec_field("str", doc="provenance of the numbers", default="")

    def _check(self):
        if self.t_forward + self.t_backward <= 0:
            _fail("t_forward", "t_forward + t_backward must be > 0 (a step needs compute), "
                               f"got {self.t_forward!r} + {self.t_backward!r}")

    @property
    def t_compute(self) -> float:
        """T_C = T_F + T_B (Li et al. 2022, Table 3)."""
        return self.t_forward + self.t_backward

    def at_batch(self, batch_size: int) -> Profile:
        """The profile at another batch size: compute time linear in the batch, the model
        bytes and the update unchanged."""
        scale = batch_size / self.batch_size
        return self.replace(batch_size=batch_size, t_forward=self.t_forward * scale,
                            t_backward=self.t_backward * scale)


@dataclass(frozen=True)
class Cluster(Spec):
    """Machines and network (SI units).  The knobs default to the papers' behaviour."""

    machines: int = spec_field("int", doc="machines available", minimum=1)
    nic_bandwidth: float = spec_field("float", doc="NIC line rate B", unit="B/s",
                                      minimum=0, exclusive_minimum=True)
    name: str = spec_field("str", doc="cluster name", default="")
    cores: int = spec_field("int", doc="cores per machine", minimum=1, default=1)
    latency: float = spec_field("float", doc="one-way network latency", unit="s",
                                minimum=0, default=0.0)
    per_flow_cap: float = spec_field("float", doc="largest rate one flow reaches (Li et al. 2022 Sec. 4.4)",
                                     unit="B/s", minimum=0, exclusive_minimum=True, optional=True)
    gpus_per_machine: int = spec_field("int", doc="accelerators per machine", minimum=1, default=1)
    intra_bandwidth: float = spec_field("float", doc="bandwidth between accelerators of one machine",
                                        unit="B/s", minimum=0, exclusive_minimum=True, optional=True)
    link_efficiency: float = spec_field("float", doc="goodput over line rate (1: nominal rate)",
                                        minimum=0, exclusive_minimum=True, maximum=1, default=1.0)
    sharing_weight: float = spec_field("float", doc="weight of PS sharing against FCFS "
                                                    "(0.5: Li et al. 2022 eq. 9)",
                                       minimum=0, maximum=1, default=0.5)
    update_growth: float = spec_field("float", doc="g: the PS update of one sync step takes "
                                                   "t_update * ((1 - g) + g * K) with K workers "
                                                   "(0: once per step, Li et al. 2022 eqs. 7-10; 1: once "
                                                   "per gradient); async applies each gradient "
                                                   "separately at t_update",
                                      minimum=0, maximum=1, default=0.0)
    compute_cv: float = spec_field("float", doc="coefficient of variation of one worker's "
                                                "compute time t_forward + t_backward (simulator "
                                                "jitter, GST sigma; 0: deterministic)",
                                   minimum=0, maximum=100, default=0.0)
    timeout_probability: float = spec_field(
        "float", doc="q: probability that one message (a worker's push or pull of its "
                     "share of the model in one step) stalls for one retransmission "
                     "timeout on a lossy link (0: loss-free); fitted by calibration",
        minimum=0, maximum=1, default=0.0)
    retransmit_timeout: float = spec_field(
        "float", doc="length of one stall: the TCP minimum retransmission timeout "
                     "(Linux 200 ms; ns-3 1 s)", unit="s", minimum=0, exclusive_minimum=True,
        default=0.2)
    rho_threshold: float = spec_field(
        "float", doc="rho_T of Li et al. 2022 eq. 5 on this cluster: below this FCFS "
                     "utilization the async MVA takes the FCFS solution (Sec. 5 found 0.5 on "
                     "CloudLab, 0.6 on AWS); unset: the model's own (0.6)",
        minimum=0, maximum=1, optional=True)
    # Yan et al. 2015 hardware constants (Sec. 4), measured by `perfmodel calibrate`.
    c_muladd: float = spec_field("float", doc="C_muladd: one multiply-add with its data in cache",
                                 unit="s", minimum=0, exclusive_minimum=True, optional=True)
    c_muladd_mem: float = spec_field("float", doc="C_muladd with the weights out of cache "
                                                  "(streamed from memory)",
                                     unit="s", minimum=0, exclusive_minimum=True, optional=True)
    c_act: float = spec_field("float", doc="C_act: one activation function", unit="s",
                              minimum=0, optional=True)
    c_err: float = spec_field("float", doc="C_err: one error-function evaluation", unit="s",
                              minimum=0, optional=True)
    cache_bytes: float = spec_field("float", doc="last-level cache of one machine", unit="B",
                                    minimum=0, exclusive_minimum=True, optional=True)
    interference: tuple = spec_field("floats", doc="C_interf(H) for H = 1, 2, ...: H-thread time "
                                                   "over one-thread time (first entry 1)",
                                     minimum=0, exclusive_minimum=True, optional=True)
    latency_per_thread: float = spec_field("float", doc="growth of C_ncost(H) per extra thread",
                                           unit="s", minimum=0, default=0.0)
    activation_bytes: float = spec_field("float", doc="C_bits: size of one activation or error term",
                                         unit="B", minimum=0, exclusive_minimum=True, default=4.0)
    weight_bytes: float = spec_field("float", doc="size of one weight", unit="B",
                                     minimum=0, exclusive_minimum=True, default=4.0)
    peak_flops: float = spec_field("float", doc="peak compute of one machine", unit="FLOP/s",
                                   minimum=0, exclusive_minimum=True, optional=True)
    read_period: int = spec_field("int", doc="N_read: samples a replica trains between weight reads",
                                  minimum=1, optional=True)
    write_period: int = spec_field("int", doc="samples a replica trains between weight writes",
                                   minimum=1, optional=True)
    source: str = spec_field("str", doc="provenance of the numbers", default="")

    def _check(self):
        if self.gpus_per_machine > 1 and self.intra_bandwidth is None:
            _fail("intra_bandwidth", "is required when gpus_per_machine > 1 "
                                     f"(gpus_per_machine={self.gpus_per_machine})")
        if self.interference is not None:
            if not self.interference:
                _fail("interference", "must list C_interf(1), C_interf(2), ...; got []")
            if abs(self.interference[0] - 1.0) > 1e-9:
                _fail("interference[0]", f"C_interf(1) is 1 by definition, got {self.interference[0]!r}")

    @property
    def effective_bandwidth(self) -> float:
        """Goodput of one NIC: ``nic_bandwidth * link_efficiency`` (bytes/s)."""
        return self.nic_bandwidth * self.link_efficiency


@dataclass(frozen=True)
class Config(Spec):
    """A training configuration (Yan et al. 2015 Fig. 7 naming).

    ``n_workers`` is workers per model replica (model parallelism);
    ``n_replicas`` data-parallel replicas; ``n_ps`` parameter servers.  The
    coarse data-parallel models treat each replica as one worker, so their K is
    ``n_replicas``.
    """

    n_workers: int = spec_field("int", doc="workers per replica", minimum=1, default=1)
    n_replicas: int = spec_field("int", doc="model replicas (data-parallel workers)", minimum=1,
                                 default=1)
    n_ps: int = spec_field("int", doc="parameter servers (0 for all-reduce)", minimum=0, default=1)
    mode: str = spec_field("str", doc="synchronisation", choices=("sync", "async"), default="sync")
    epoch_samples: int = spec_field("int", doc="samples in one epoch (for epoch_time)", minimum=1,
                                    optional=True)

    @property
    def machines(self) -> int:
        """Machines used: workers of every replica plus parameter servers."""
        return self.n_workers * self.n_replicas + self.n_ps
