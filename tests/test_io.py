"""io: JSON and YAML files with unit strings; errors name the file and the field."""

import json

import jsonschema
import pytest

from perfmodel import io
from perfmodel.errors import SpecError
from perfmodel.specs import Cluster, Profile


def test_yaml_and_json_give_the_same_spec(tmp_path):
    (tmp_path / "c.yaml").write_text("machines: 4\nnic_bandwidth: 10 Gbps\nlatency: 50us\n")
    (tmp_path / "c.json").write_text('{"machines": 4, "nic_bandwidth": "1.25 GB/s", "latency": 5e-5}')
    a, b = io.load_cluster(tmp_path / "c.yaml"), io.load_cluster(tmp_path / "c.json")
    assert a == b
    assert a.nic_bandwidth == 1.25e9


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
