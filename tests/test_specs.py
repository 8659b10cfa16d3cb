"""Specs validate on construction: every field's bad value is a SpecError naming the field."""

import dataclasses
import json
import math

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from perfmodel import io
from perfmodel.errors import SpecError
from perfmodel.specs import DNN, Cluster, Config, Layer, Profile

VALID = {
    Layer: {"name": "fc1", "kind": "fc", "out_shape": [10], "in_shape": [20], "weights": 210,
            "connections": 200, "kernel": 1, "stride": 1, "padding": 0},
    DNN: {"name": "tiny", "layers": [{"name": "fc1", "kind": "fc", "out_shape": [10],
                                      "weights": 210, "connections": 200}],
          "input_shape": [20]},
    Profile: {"model_bytes": "97.49MB", "t_forward": "40ms", "t_backward": "80ms",
              "t_update": "5ms", "batch_size": 32},
    Cluster: {"machines": 8, "nic_bandwidth": "10Gbps", "latency": "50us",
              "per_flow_cap": "10Gbps", "gpus_per_machine": 2, "intra_bandwidth": "100GB/s",
              "c_muladd": "0.2ns", "c_muladd_mem": "1ns", "c_act": "2ns", "c_err": "2ns",
              "cache_bytes": "20MiB", "interference": [1.0, 1.1, 1.3], "read_period": 70,
              "write_period": 40, "peak_flops": "268.8 GFLOP/s"},
    Config: {"n_workers": 2, "n_replicas": 4, "n_ps": 2, "mode": "async", "epoch_samples": 1000},
}


def _bad_values(meta):
    """Values that break a field's rules, derived from its metadata."""
    kind = meta["kind"]
    bad = [None] if not meta["optional"] else []
    if kind == "float":
        bad += [float("nan"), float("inf"), "nan", [1.0], True]
        bad += ["3 furlongs"] if meta["unit"] else ["3"]
        if meta["minimum"] is not None:
            bad.append(meta["minimum"] - 1.0)
            if meta["exclusive_minimum"]:
                bad.append(meta["minimum"])
        if meta["maximum"] is not None:
            bad.append(meta["maximum"] + 0.5)
    elif kind == "int":
        bad += [1.5, "4", True, float("nan")]
        if meta["minimum"] is not None:
            bad.append(int(meta["minimum"]) - 1)
    elif kind == "str":
        bad += [5, ["a"]]
        if meta["choices"]:
            bad.append("no-such-choice")
    elif kind == "bool":
        bad += ["yes", 1]
    elif kind in ("shape", "pair"):
        lo = int(meta["minimum"]) if kind == "pair" else 1
        bad += ["3x3", [lo - 1, 3], [1.5, 2], lo - 1, [1, 2, 3] if kind == "pair" else []]
    elif kind == "names":
        bad += ["a", [1]]
    elif kind == "floats":
        bad += ["1.0", [1.0, "x"], [1.0, float("nan")], [1.0, -2.0]]
    elif kind == "layers":
        bad += ["x", [], [{"name": "a"}]]
    return bad


CASES = [(cls, f.name, bad) for cls in VALID for f in dataclasses.fields(cls)
         for bad in _bad_values(f.metadata)]


def test_valid_examples_build():
    for cls, data in VALID.items():
        spec = cls.from_dict(data)
        assert cls.from_dict(spec.to_dict()) == spec


@pytest.mark.parametrize("cls, name, bad", CASES,
                         ids=[f"{c.__name__}.{n}={b!r}" for c, n, b in CASES])
def test_bad_value_names_field(cls, name, bad):
    data = dict(VALID[cls], **{name: bad})
    with pytest.raises(SpecError) as info:
        cls.from_dict(data)
    assert info.value.field.split("[")[0].split(".")[0] == name, info.value


@pytest.mark.parametrize("cls, name, bad", CASES,
                         ids=[f"{c.__name__}.{n}={b!r}" for c, n, b in CASES])
def test_replace_checks_the_changed_field_as_construction_does(cls, name, bad):
    spec = cls.from_dict(VALID[cls])
    with pytest.raises(SpecError) as info:
        spec.replace(**{name: bad})
    assert info.value.field.split("[")[0].split(".")[0] == name, info.value


@given(data=st.data())
def test_replace_equals_rebuilding_every_field(data):
    # the fast path coerces only the changed fields: the same spec as checking all of them
    cls = data.draw(st.sampled_from(list(VALID)))
    spec = cls.from_dict(VALID[cls])
    other = {Profile: {"t_forward": "7ms", "batch_size": 8, "model_bytes": 1e6},
             Cluster: {"machines": 3, "link_efficiency": 0.5, "nic_bandwidth": "1Gbps",
                       "interference": (1.0, 2.0), "name": "x"},
             Config: {"n_replicas": 1, "mode": "sync", "n_ps": 0},
             Layer: {"weights": 5, "name": "z"},
             DNN: {"name": "other"}}[cls]
    changes = {k: v for k, v in other.items() if data.draw(st.booleans())}
    try:
        expected = dataclasses.replace(spec, **changes)
    except SpecError as err:   # a cross-field rule: the fast path must refuse it alike
        with pytest.raises(SpecError) as info:
            spec.replace(**changes)
        assert info.value.field == err.field
        return
    fast = spec.replace(**changes)
    assert fast == expected and type(fast) is cls
    assert fast.to_dict() == expected.to_dict()
    with pytest.raises(SpecError) as info:
        spec.replace(colour="blue")
    assert info.value.field == "colour"


@pytest.mark.parametrize("cls", list(VALID))
def test_missing_required_field(cls):
    for f in dataclasses.fields(cls):
        if f.metadata["required"]:
            data = {k: v for k, v in VALID[cls].items() if k != f.name}
            with pytest.raises(SpecError, match=f"^{f.name}: missing"):
                cls.from_dict(data)


@pytest.mark.parametrize("cls", list(VALID))
def test_unknown_field(cls):
    with pytest.raises(SpecError) as info:
        cls.from_dict(dict(VALID[cls], colour="blue"))
    assert info.value.field == "colour"


def test_not_a_mapping():
    with pytest.raises(SpecError):
        Profile.from_dict([1, 2])


def test_unit_strings_become_si():
    p = Profile.from_dict(VALID[Profile])
    assert (p.model_bytes, p.t_forward, p.t_backward, p.t_update) == (97.49e6, 0.04, 0.08, 0.005)
    c = Cluster.from_dict(VALID[Cluster])
    assert c.nic_bandwidth == 1.25e9 and c.latency == pytest.approx(50e-6)
    assert c.intra_bandwidth == 1e11


def test_frozen():
    p = Profile.from_dict(VALID[Profile])
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.t_forward = 1.0


def test_cross_field_rules():
    with pytest.raises(SpecError, match="intra_bandwidth"):
        Cluster(machines=2, nic_bandwidth=1e9, gpus_per_machine=8)
    with pytest.raises(SpecError, match=r"interference\[0\]"):
        Cluster(machines=2, nic_bandwidth=1e9, interference=[1.5, 2.0])
    with pytest.raises(SpecError, match="t_forward"):
        Profile(model_bytes=1e6, t_forward=0.0, t_backward=0.0)
    layer = {"name": "a", "kind": "fc", "out_shape": [2]}
    with pytest.raises(SpecError, match=r"layers\[1\].name"):
        DNN(name="d", layers=[layer, layer])
    with pytest.raises(SpecError, match=r"layers\[0\].inputs\[0\]"):
        DNN(name="d", layers=[dict(layer, inputs=["later"]), dict(layer, name="later")])


def test_layer_derived_fields():
    conv = Layer(name="c", kind="conv", out_shape=[64, 112, 112], weights=9472,
                 connections=118_013_952, kernel=7, stride=2, padding=3)
    assert conv.neurons == 64 * 112 * 112
    assert conv.flops == 2 * 118_013_952
    assert conv.kernel == (7, 7) and conv.stride == (2, 2)
    relu = Layer(name="r", kind="act", out_shape=[64, 112, 112])
    assert relu.flops == relu.neurons  # one operation per output


def test_dnn_totals():
    dnn = DNN.from_dict(VALID[DNN])
    assert dnn.n_params == 210 and dnn.n_connections == 200
    assert dnn.model_bytes() == 840.0
    assert dnn.layer("fc1").weights == 210


def test_config_machines():
    assert Config(n_workers=2, n_replicas=4, n_ps=3).machines == 11


@pytest.mark.parametrize("cls", list(VALID))
def test_schema_accepts_valid_and_matches_fields(cls):
    schema = cls.json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(VALID[cls], schema)
    jsonschema.validate(json.loads(json.dumps(cls.from_dict(VALID[cls]).to_file_dict())), schema)
    assert set(schema["properties"]) == {f.name for f in dataclasses.fields(cls)}


def _json_expressible(value):
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_json_expressible(v) for v in value)
    return True


@pytest.mark.parametrize("cls, name, bad", [c for c in CASES if _json_expressible(c[2])],
                         ids=lambda v: str(v)[:20])
def test_schema_rejects_what_specs_reject(cls, name, bad):
    """Where JSON can express the bad value, the schema rejects it too (one source of truth)."""
    data = dict(VALID[cls], **{name: bad})
    schema = cls.json_schema()
    meta = {f.name: f.metadata for f in dataclasses.fields(cls)}[name]
    if meta["unit"] and isinstance(bad, str):
        return  # unit names are checked by units.parse, the schema only checks the shape
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, schema)


@given(st.floats(min_value=1e-3, max_value=1e3), st.integers(min_value=1, max_value=4096))
def test_profile_round_trip(t, batch):
    p = Profile(model_bytes=1e8, t_forward=t, t_backward=2 * t, batch_size=batch)
    assert Profile.from_dict(json.loads(io.dump(p))) == p
