"""io: JSON and YAML files with unit strings; errors name the file and the field."""

import json
import math
import os
import stat
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfmodel import io
from perfmodel.errors import SpecError
from perfmodel.specs import Cluster, Profile


def test_yaml_and_json_give_the_same_spec(tmp_path):
    (tmp_path / "c.yaml").write_text("machines: 4\nnic_bandwidth: 10 Gbps\nlatency: 50us\n")
    (tmp_path / "c.json").write_text('{"machines": 4, "nic_bandwidth": "1.25 GB/s", '
                                     '"latency": "0.05 ms"}')
    a, b = io.load_cluster(tmp_path / "c.yaml"), io.load_cluster(tmp_path / "c.json")
    assert a == b
    assert a.nic_bandwidth == 1.25e9


@pytest.mark.parametrize("text, field, hint", [
    ('{"machines": 4, "nic_bandwidth": 10}', "nic_bandwidth", "'10 B/s'"),
    ('{"machines": 4, "nic_bandwidth": "10Gbps", "latency": 5e-5}', "latency", "'50 us'"),
    ('{"machines": 4, "nic_bandwidth": "10Gbps", "cache_bytes": 25e6}', "cache_bytes", "'25 MB'"),
])
def test_files_need_units_for_sizes_rates_and_times(tmp_path, text, field, hint):
    """A bare number in a file is refused (it would be SI, 10 B/s for a '10'); the message
    names the file and field and gives the exact unit string SI would mean."""
    path = tmp_path / "c.json"
    path.write_text(text)
    with pytest.raises(SpecError) as err:
        io.load_cluster(path)
    assert err.value.field == field and "c.json" in str(err.value) and hint in str(err.value)


def test_a_bare_zero_and_counts_need_no_unit(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("machines: 4\nnic_bandwidth: 10Gbps\nlatency: 0\ncores: 8\n")
    assert io.load_cluster(path).latency == 0.0
    # the Python API stays SI
    assert Cluster.from_dict({"machines": 4, "nic_bandwidth": 1.25e9}).nic_bandwidth == 1.25e9


@settings(max_examples=200, deadline=None)
@given(value=st.floats(1e-12, 1e9), bandwidth=st.floats(1.0, 1e15),
       size=st.floats(1.0, 1e17))
def test_saved_files_write_units_and_read_back_exactly(tmp_path_factory, value, bandwidth, size):
    spec = Cluster(machines=2, nic_bandwidth=bandwidth, latency=value, cache_bytes=size)
    path = tmp_path_factory.mktemp("save") / "c.json"
    io.save(spec, path)
    data = json.loads(path.read_text())
    assert all(isinstance(data[k], str) for k in ("nic_bandwidth", "latency", "cache_bytes"))
    assert io.load_cluster(path) == spec


def test_error_names_file_and_field(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("model_bytes: 100 MB\nt_forward: 10 parsecs\nt_backward: 1 s\n")
    with pytest.raises(SpecError) as info:
        io.load_profile(path)
    assert info.value.source == str(path)
    assert info.value.field == "t_forward"
    assert str(info.value).startswith(f"{path}: t_forward: unknown unit 'parsecs'")


def test_nested_error_path(tmp_path):
    path = tmp_path / "d.json"
    path.write_text(json.dumps({"name": "d", "layers": [
        {"name": "a", "kind": "fc", "out_shape": [4]},
        {"name": "b", "kind": "fc", "out_shape": [4], "weights": -3}]}))
    with pytest.raises(SpecError, match=r"d.json: layers\[1\].weights: must be >= 0, got -3"):
        io.load_dnn(path)


@pytest.mark.parametrize("text, message", [
    ("{not json", "invalid JSON at line 1"),
    ("[1, 2]", "expected an object"),
])
def test_malformed_json(tmp_path, text, message):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(SpecError, match=message):
        io.load_profile(path)


def test_malformed_yaml(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("a: [1, 2\n")
    with pytest.raises(SpecError, match="invalid YAML"):
        io.load_profile(path)


def test_missing_file(tmp_path):
    with pytest.raises(SpecError, match="cannot read file"):
        io.load_cluster(tmp_path / "nope.yaml")


def test_save_and_load_round_trip(tmp_path):
    p = Profile(model_bytes=97.49e6, t_forward=0.04, t_backward=0.08, batch_size=64, name="r50")
    for suffix in (".json", ".yaml"):
        io.save(p, tmp_path / f"p{suffix}")
        assert io.load_profile(tmp_path / f"p{suffix}") == p


def test_schemas_written_and_valid(tmp_path):
    paths = io.write_schemas(tmp_path)
    assert {p.name for p in paths} == {f"{k}.schema.json" for k in io.SPEC_TYPES}
    for p in paths:
        jsonschema.Draft202012Validator.check_schema(json.loads(p.read_text()))
    schema = json.loads((tmp_path / "cluster.schema.json").read_text())
    jsonschema.validate({"machines": 2, "nic_bandwidth": "10Gbps"}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"machines": 2}, schema)  # nic_bandwidth is required
    assert schema == Cluster.json_schema()


def test_missing_file_error_names_the_file_without_an_empty_field(tmp_path):
    from perfmodel.io import read_text
    with pytest.raises(SpecError) as err:
        read_text(tmp_path / "nope.json")
    assert str(err.value) == f"{tmp_path / 'nope.json'}: cannot read file: No such file or directory"


# ------------------------------------------------------------------ hostile files
@pytest.mark.parametrize("text, value", [
    ("1:30", "1:30"),            # YAML 1.1: 90 (base 60)
    ("010", 10),                 # YAML 1.1: 8 (octal)
    ("0o17", 15), ("0x10", 16), ("-3", -3),
    ("on", "on"), ("no", "no"),  # YAML 1.1: booleans
    ("true", True), ("False", False),
    ("2024-01-01", "2024-01-01"),  # YAML 1.1: a date
    ("1e9", 1e9), ("1.5e-3", 1.5e-3), ("+.5", 0.5), (".inf", math.inf),
    ("1_000", "1_000"), ("10Gbps", "10Gbps"), ("null", None),
])
def test_yaml_plain_scalars_follow_the_yaml_12_core_schema(text, value):
    got = io.parse_data(f"x: {text}\n", "yaml")["x"]
    assert got == value and type(got) is type(value)


def test_yaml_sexagesimal_time_is_refused_not_read_as_seconds(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("model_bytes: 100MB\nt_forward: 1:30\nt_backward: 80ms\nbatch_size: 32\n")
    with pytest.raises(SpecError) as err:
        io.load_profile(path)
    assert "t_forward" in str(err.value) and "1:30" in str(err.value)


def test_yaml_refuses_aliases_and_repeated_keys(tmp_path):
    from perfmodel.io import read_data
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("a: &a [1, 2]\nb: [*a, *a]\n", encoding="utf-8")
    with pytest.raises(SpecError, match="aliases"):
        read_data(bomb)
    dup = tmp_path / "dup.yaml"
    dup.write_text("machines: 8\nmachines: 9\n", encoding="utf-8")
    with pytest.raises(SpecError, match="machines: key given twice"):
        read_data(dup)
    keys = tmp_path / "keys.yaml"
    keys.write_text("1: 2\n", encoding="utf-8")
    with pytest.raises(SpecError, match="keys must be names"):
        read_data(keys)


def test_json_refuses_repeated_keys_deep_nesting_and_long_numbers(tmp_path):
    from perfmodel.io import MAX_DEPTH, read_data
    cases = {'{"a": 1, "a": 2}': "key given twice",
             "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1): "nested more than",
             "[" * 100_000 + "]" * 100_000: "nested more than",
             '{"a": ' + "9" * 5000 + "}": "too long"}
    for i, (text, message) in enumerate(cases.items()):
        path = tmp_path / f"{i}.json"
        path.write_text(text, encoding="utf-8")
        with pytest.raises(SpecError, match=message):
            read_data(path)
    ok = tmp_path / "ok.json"
    ok.write_text("[" * MAX_DEPTH + "]" * MAX_DEPTH, encoding="utf-8")
    read_data(ok)  # exactly the limit is fine


def test_read_text_refuses_what_is_not_a_regular_text_file(tmp_path):
    from perfmodel.io import read_text
    with pytest.raises(SpecError, match="a directory"):
        read_text(tmp_path)
    nul = tmp_path / "nul.json"
    nul.write_bytes(b'{"a": 1}\x00')
    with pytest.raises(SpecError, match="NUL"):
        read_text(nul)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(SpecError, match="not a regular file"):
        read_text(fifo)   # would block forever if opened


def test_write_text_is_atomic_and_never_replaces_a_device(tmp_path, monkeypatch):
    from perfmodel import io as pio
    target = tmp_path / "c.json"
    target.write_text("old", encoding="utf-8")

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(pio.os, "replace", full_disk)
    with pytest.raises(SpecError, match="No space left"):
        pio.write_text("new", target)
    monkeypatch.undo()
    assert target.read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.json"]   # no temporary left
    pio.write_text("new", target)
    assert target.read_text(encoding="utf-8") == "new"
    if Path("/dev/null").exists():
        pio.write_text("x", "/dev/null")
        assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    with pytest.raises(SpecError, match="is a directory"):
        pio.write_text("x", tmp_path)
