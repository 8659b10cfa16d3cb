"""The model zoo's DNN specs: exact parameter counts, shapes, the Adam totals, files.

Reference parameter counts are torchvision's published ones (``torchvision.models``
documentation); the Adam totals are Yan et al. 2015, Sec. 6 "Benchmarks".
"""

import json
import math
from pathlib import Path

import jsonschema
import pytest

from perfmodel import zoo
from perfmodel.specs import DNN
from perfmodel.zoo import _build

DNN_DIR = Path(zoo.__file__).parent / "dnns"

#: torchvision's published parameter counts.
TORCHVISION_PARAMS = {
    "alexnet": 61_100_840,
    "vgg11": 132_863_336,
    "vgg16": 138_357_544,
    "resnet50": 25_557_032,
    "resnet152": 60_192_808,
    "inception_v3": 27_161_264,  # with aux logits (torchvision's default)
    "googlenet": 6_624_904,      # published count, without the aux classifiers
}

ALL = sorted(_build.BUILDERS)


@pytest.fixture(scope="module", params=ALL)
def dnn(request):
    return zoo.load(request.param)


# ----------------------------------------------------------------------------- loading

def test_names_lists_every_built_dnn():
    assert set(ALL) <= set(zoo.names())
    assert {"resnet50", "vgg16", "alexnet", "adam-mnist", "adam-imagenet22k"} <= set(zoo.names())


@pytest.mark.parametrize("name", zoo.names())
def test_every_zoo_name_loads(name):
    loaded = zoo.load(name)
    assert isinstance(loaded, DNN)
    assert loaded.name == name
    assert loaded.source and loaded.notes


@pytest.mark.parametrize("name", zoo.names())
def test_json_validates_against_schema(name):
    data = json.loads((DNN_DIR / f"{name}.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(DNN.json_schema()).validate(data)


# ----------------------------------------------------------------------------- counts

@pytest.mark.parametrize("name, params", sorted(TORCHVISION_PARAMS.items()))
def test_torchvision_parameter_counts_exact(name, params):
    assert zoo.load(name).n_params == params


def test_resnet50_forward_macs_match_published():
    # Published: ~4.1 GMACs (torchvision lists 4.09 GFLOPS counting multiply-adds).
    assert zoo.load("resnet50").n_connections == pytest.approx(4.1e9, rel=0.03)


def test_vgg16_conv1_1_hand_checked():
    layer = zoo.load("vgg16").layer("conv1_1")
    macs = 64 * 224 * 224 * 3 * 3 * 3
    assert layer.connections == macs == 86_704_128
    assert layer.flops == 2 * macs
    assert layer.weights == 64 * 3 * 3 * 3 + 64
    assert layer.out_shape == (64, 224, 224)
    assert layer.neurons == 64 * 224 * 224


def test_alexnet_layers_hand_checked():
    net = zoo.load("alexnet")
    conv1 = net.layer("conv1")
    assert conv1.out_shape == (64, 55, 55)  # (224 + 2*2 - 11) // 4 + 1
    assert conv1.connections == 64 * 55 * 55 * 3 * 11 * 11
    fc6 = net.layer("fc6")
    assert fc6.in_shape == (256 * 6 * 6,)
    assert fc6.connections == 9216 * 4096
    assert fc6.weights == 9216 * 4096 + 4096


def test_resnet50_block_hand_checked():
    net = zoo.load("resnet50")
    conv2 = net.layer("layer2.0.conv2")  # the stride-2 3x3 conv of stage 2
    assert conv2.out_shape == (128, 28, 28)
    assert conv2.connections == 128 * 28 * 28 * 128 * 3 * 3
    assert net.layer("layer2.0.downsample.0").inputs == ("layer1.2.relu3",)
    assert set(net.layer("layer2.0.add").inputs) == {"layer2.0.bn3", "layer2.0.downsample.1"}
    assert net.layer("bn1").weights == 2 * 64


def test_inception_and_googlenet_shapes():
    v3 = zoo.load("inception_v3")
    assert v3.layer("Mixed_6e").out_shape == (768, 17, 17)
    assert v3.layer("Mixed_7c").out_shape == (2048, 8, 8)
    assert v3.layer("AuxLogits.fc").out_shape == (1000,)
    assert v3.layer("Mixed_7a.branch3x3_1.conv").inputs == ("Mixed_6e",)
    g = zoo.load("googlenet")
    assert g.layer("maxpool1").out_shape == (64, 56, 56)  # ceil_mode
    assert g.layer("inception5b").out_shape == (1024, 7, 7)


def test_conv_and_fc_connections_follow_shapes(dnn):
    for layer in dnn.layers:
        if layer.kind == "conv" and not dnn.name.startswith("adam"):
            kh, kw = layer.kernel
            fan_in = layer.in_shape[0] // layer.groups * kh * kw
            assert layer.connections == math.prod(layer.out_shape) * fan_in, layer.name
        elif layer.kind in ("fc", "softmax"):
            fan_in, out = math.prod(layer.in_shape), layer.out_shape[0]
            assert layer.connections == fan_in * out, layer.name
            assert layer.weights == fan_in * out + out, layer.name
        if layer.connections:
            assert layer.flops == 2 * layer.connections, layer.name


# ------------------------------------------------------------------- Adam (Yan et al. 2015)

def test_adam_mnist_matches_seed_004():
    net = zoo.load("adam-mnist")
    assert [layer.kind for layer in net.layers] == ["conv", "conv", "fc", "fc", "softmax"]
    assert net.n_connections == pytest.approx(2.5e6, rel=0.10)
    assert net.input_shape == (1, 28, 28)
    assert net.layers[-1].out_shape == (10,)
    assert net.layers[-1].weights > 0


def test_adam_imagenet22k_matches_seed_004():
    net = zoo.load("adam-imagenet22k")
    assert [layer.kind for layer in net.layers] == ["conv"] * 5 + ["fc"] * 2 + ["softmax"]
    assert net.n_connections > 2e9
    assert net.input_shape == (3, 256, 256)
    assert net.layers[-1].out_shape == (22000,)
    assert net.layers[-1].weights == 4096 * 22000 + 22000


@pytest.mark.parametrize("name", ["adam-mnist", "adam-imagenet22k"])
def test_adam_notes_state_the_assumed_shapes(name):
    net = zoo.load(name)
    assert "Assumed shapes" in net.notes
    for layer in net.layers:
        assert layer.name in net.notes


# ----------------------------------------------------------------------------- shape chaining

def _producers(net: DNN, index: int) -> list:
    layer = net.layers[index]
    if layer.inputs:
        return [net.layer(name) for name in layer.inputs]
    return [net.layers[index - 1]] if index else []


def test_shapes_chain(dnn):
    for i, layer in enumerate(dnn.layers):
        producers = _producers(dnn, i)
        shapes = [p.out_shape for p in producers] or [dnn.input_shape]
        if layer.kind == "concat":
            assert len(shapes) >= 2 and len({s[1:] for s in shapes}) == 1, layer.name
            assert layer.in_shape == (sum(s[0] for s in shapes),) + shapes[0][1:], layer.name
            assert layer.out_shape == layer.in_shape
        elif layer.kind == "add":
            assert len(shapes) >= 2 and set(shapes) == {layer.in_shape}, layer.name
        else:
            assert shapes == [layer.in_shape], layer.name


def test_every_network_ends_in_a_classifier(dnn):
    classes = 10 if dnn.name == "adam-mnist" else 22000 if dnn.name == "adam-imagenet22k" else 1000
    assert dnn.layers[-1].kind in ("fc", "softmax")
    assert dnn.layers[-1].out_shape == (classes,)


# ----------------------------------------------------------------------------- builder

@pytest.mark.parametrize("name", ALL)
def test_builder_reproduces_committed_json(name):
    text = (DNN_DIR / f"{name}.json").read_text(encoding="utf-8")
    built = _build.build(name)
    assert built.to_dict() == json.loads(text)
    assert _build.render(built) == text


def test_write_all_writes_every_file(tmp_path):
    paths = _build.write_all(tmp_path)
    assert sorted(p.stem for p in paths) == ALL
    for path in paths:
        assert path.read_text(encoding="utf-8") == (DNN_DIR / path.name).read_text(encoding="utf-8")


def test_build_unknown_name():
    with pytest.raises(KeyError, match="no builder"):
        _build.build("lenet-9000")


def test_layer_helpers_reject_bad_graphs():
    net = _build.Net((3, 8, 8))
    a = _build.conv(net, "a", 4, 3, padding=1)
    b = _build.conv(net, "b", 4, 3, src=a)  # 6x6: no padding
    with pytest.raises(ValueError, match="cannot add"):
        _build.add(net, "sum", [a, b])
    with pytest.raises(ValueError, match="cannot concatenate"):
        _build.concat(net, "cat", [a, b])
    with pytest.raises(ValueError, match="duplicate"):
        _build.act(net, "a")
    with pytest.raises(ValueError, match="groups"):
        _build.conv(net, "g", 4, 1, groups=3)
    with pytest.raises(ValueError, match="does not fit"):
        _build.conv(net, "big", 4, 9)
    with pytest.raises(ValueError, match="uneven"):
        _build.adaptive_pool(net, "ap", 4)


def test_layer_helpers_inputs_and_costs():
    net = _build.Net((2, 4, 4))
    x = _build.conv(net, "x", 2, 1, bias=False)
    y = _build.conv(net, "y", 2, 3, padding=1, groups=2, src=x)
    z = _build.add(net, "z", [x, y])
    _build.flatten(net, "f")
    _build.softmax(net, "s", 3)
    assert net.layers[0].inputs == () and net.layers[1].inputs == ()
    assert net.layers[2].inputs == (x, y)
    assert net.layers[1].connections == 2 * 4 * 4 * 1 * 3 * 3
    assert net.layers[1].weights == 2 * 1 * 3 * 3 + 2
    dnn = net.dnn("tiny", "test", "")
    assert dnn.layer("f").flops == 0 and dnn.layer(z).flops == 2 * 4 * 4
    assert dnn.layer("s").weights == 32 * 3 + 3


def test_a_trace_answers_to_its_coarse_profile_name_too():
    """`zoo list` shows resnet50-pipedream; `simulate --trace zoo:resnet50-pipedream` works."""
    a, b = zoo.pipedream_trace("resnet50"), zoo.pipedream_trace("resnet50-pipedream")
    assert a == b
    assert "resnet50" in zoo.pipedream_names()
