"""PipeDream graph.txt importer: a hand-checked fixture, the 14 real files, bad input."""

from __future__ import annotations

import math
import re
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfmodel import io, pipedream
from perfmodel.errors import SpecError
from perfmodel.pipedream import (
    COMMIT,
    REPOSITORY,
    PipeDreamGraph,
    guess_kind,
    infer_batch_size,
    layer_table,
    parse_graph,
    to_profile,
)
from perfmodel.specs import LAYER_KINDS, Profile

DATA = Path(__file__).parent / "data"
FIXTURE = DATA / "small_graph.txt"
GRAPHS = Path(__file__).parents[1] / "perfmodel" / "zoo" / "pipedream"
GRAPH_FILES = sorted(GRAPHS.glob("*.txt"))

#: Minibatch size of each real file, worked out by hand from its Input and first
#: conv (or LSTM hidden state) activation sizes; see zoo/pipedream/PROVENANCE.md.
BATCH = {"alexnet": 256, "densenet121": 64, "gnmt": 32, "gnmt_large": 128,
         "inception_v3": 128, "nasnetalarge": 16, "nasnetamobile": 128, "resnet101": 64,
         "resnet18": 256, "resnet50": 128, "resnext101": 64, "resnext50": 128,
         "squeezenet1_0": 256, "vgg16": 128}

NODE = ("node1 -- Input -- forward_compute_time=1.000, backward_compute_time=0.000, "
        "activation_size=8.000, parameter_size=0.000")


def _line(node_id="node2", op="ReLU(inplace)", fwd="0.500", bwd="0.250", act="8.000",
          params="0.000"):
    return (f"{node_id} -- {op} -- forward_compute_time={fwd}, backward_compute_time={bwd}, "
            f"activation_size={act}, parameter_size={params}")


@pytest.fixture(scope="module")
def small() -> PipeDreamGraph:
    return pipedream.load_graph(FIXTURE)


# --------------------------------------------------------------------- the fixture, by hand

#: id, kind, forward ms, backward ms, activation B, parameter B, line (worked by hand).
SMALL_NODES = [
    ("node1", "input", 12.5, 0.0, 1204224, 0, 2),      # 2 x 3x224x224 x 4 B
    ("node2", "conv", 1.5, 3.0, 788544, 896, 3),       # 2 x 8x111x111 x 4; (8*27+8) x 4
    ("node3", "act", 0.25, 0.125, 788544, 0, 1),
    ("node4", "pool", 0.375, 0.5, 193600, 0, 5),       # 2 x 8x55x55 x 4
    ("node5", "conv", 0.5, 1.0, 193600, 288, 4),       # (8*8+8) x 4
    ("node6", "add", 0.125, 0.25, 193600, 0, 6),
    ("node7", "pool", 0.1, 0.2, 64, 0, 7),             # 2 x 8 x 4
    ("node8", "flatten", 0.0, 0.0, 64, 0, 8),
    ("node9", "fc", 0.75, 1.25, 80, 360, 9),           # 2 x 10 x 4; (8*10+10) x 4
]


def test_fixture_nodes_every_field(small):
    assert small.order == tuple(f"node{i}" for i in range(1, 10))
    assert small.source == "small_graph.txt"
    for node, (nid, kind, fwd_ms, bwd_ms, act, params, line) in zip(small.topological,
                                                                     SMALL_NODES):
        assert (node.id, node.kind, node.line, node.stage) == (nid, kind, line, None)
        assert node.t_forward == pytest.approx(fwd_ms * 1e-3, rel=1e-15)
        assert node.t_backward == pytest.approx(bwd_ms * 1e-3, rel=1e-15)
        assert node.activation_bytes == act and node.activation_parts == (act,)
        assert node.parameter_bytes == params
    assert small.node("node2").op == "Conv2d(3, 8, kernel_size=(3, 3), stride=(2, 2))"
    assert small.node("node6").op == "Add"


def test_fixture_edges_and_neighbours(small):
    assert small.edges == (("node2", "node3"), ("node1", "node2"), ("node3", "node4"),
                           ("node4", "node5"), ("node5", "node6"), ("node4", "node6"),
                           ("node6", "node7"), ("node7", "node8"), ("node8", "node9"))
    assert small.successors("node4") == ("node5", "node6")
    assert small.predecessors("node6") == ("node5", "node4")
    assert small.predecessors("node1") == () and small.successors("node9") == ()
    assert len(small) == 9


def test_fixture_totals_in_seconds(small):
    # Sums over the 8 non-input nodes, by hand: 3.6 ms forward, 6.325 ms backward.
    assert small.t_forward == pytest.approx(3.6e-3, rel=1e-14)
    assert small.t_backward == pytest.approx(6.325e-3, rel=1e-14)
    assert small.t_input == pytest.approx(12.5e-3, rel=1e-15)
    assert small.parameter_bytes == 896 + 288 + 360
    assert [n.id for n in small.compute_nodes] == [f"node{i}" for i in range(2, 10)]


def test_ms_are_converted_to_seconds_exactly():
    g = parse_graph(NODE + "\n" + _line(fwd="0.539", bwd="635.902") + "\n\tnode1 -- node2")
    assert g.node("node2").t_forward == 0.000539  # nearest double to 539 us, not 0.539*1e-3
    assert g.node("node2").t_backward == 0.635902
    assert g.node("node1").t_forward == 0.001


def test_layer_table_of_fixture(small):
    table = layer_table(small)
    assert table.ids == tuple(f"node{i}" for i in range(2, 10)) and len(table) == 8
    assert table.kinds == ("conv", "act", "pool", "conv", "add", "pool", "flatten", "fc")
    np.testing.assert_allclose(table.t_forward * 1e3, [1.5, .25, .375, .5, .125, .1, 0, .75])
    np.testing.assert_allclose(table.t_backward * 1e3, [3, .125, .5, 1, .25, .2, 0, 1.25])
    np.testing.assert_array_equal(table.parameter_bytes, [896, 0, 0, 288, 0, 0, 0, 360])
    np.testing.assert_array_equal(table.activation_bytes,
                                  [788544, 788544, 193600, 193600, 193600, 64, 64, 80])
    assert math.fsum(table.t_forward) == pytest.approx(small.t_forward, rel=1e-15)
    with pytest.raises(ValueError):
        table.t_forward[0] = 1.0  # read-only
    full = layer_table(small, include_input=True)
    assert full.ids[0] == "node1" and full.kinds[0] == "input" and len(full) == 9
    assert full.t_forward[0] == pytest.approx(0.0125)


def test_to_profile_of_fixture(small):
    p = to_profile(small, batch_size=2, name="small", dnn="toy")
    assert isinstance(p, Profile)
    assert p.model_bytes == 1544.0 and p.batch_size == 2 and p.t_update == 0.0
    assert p.t_forward == small.t_forward and p.t_backward == small.t_backward
    assert (p.name, p.dnn, p.measured) == ("small", "toy", True)
    for text in (REPOSITORY, COMMIT, "small_graph.txt", "t_update = 0", "12.500 ms"):
        assert text in p.source
    q = to_profile(small, 2, "small", t_update=0.01, note="extra words")
    assert q.t_update == 0.01 and q.source.endswith("extra words")
    assert "given by the caller" in q.source
    with pytest.raises(SpecError, match="batch_size"):
        to_profile(small, batch_size=0, name="small")


def test_infer_batch_size_of_fixture(small):
    found = infer_batch_size(small)
    assert (found.batch_size, found.resolution, found.node, found.method) == (2, 224, "node2",
                                                                              "conv")
    assert "2 x 3x224x224" in found.explanation and "2 x 8x111x111" in found.explanation
    assert infer_batch_size(small, resolution=224).batch_size == 2
    assert infer_batch_size(small, resolution=299) is None


def test_infer_batch_size_from_lstm_hidden_state():
    # LSTM(16, 32), batch 3, 5 steps: output 5x3x32x4 = 1920 B, h_n = c_n = 1x3x32x4 = 384 B.
    text = "\n".join([NODE, _line(op="LSTM(16, 32)", act="[1920.0; 384.0; 384.0]"),
                      "\tnode1 -- node2"])
    g = parse_graph(text)
    assert g.node("node2").activation_parts == (1920.0, 384.0, 384.0)
    assert g.node("node2").activation_bytes == 2688.0
    found = infer_batch_size(g)
    assert (found.batch_size, found.seq_len, found.method) == (3, 5, "lstm")
    # bidirectional, 2 layers: h_n = 4 x 3 x 32 x 4 = 1536 B; output 5 x 3 x 64 x 4 = 3840 B.
    text = "\n".join([NODE, _line(op="LSTM(16, 32, num_layers=2, bidirectional=True)",
                                  act="[3840.0; 1536.0; 1536.0]"), "\tnode1 -- node2"])
    found = infer_batch_size(parse_graph(text))
    assert (found.batch_size, found.seq_len) == (3, 5)


def test_no_rule_gives_none():
    assert infer_batch_size(parse_graph(NODE + "\n" + _line() + "\n\tnode1 -- node2")) is None


def test_stage_id_blank_lines_and_crlf():
    text = (NODE + " -- stage_id=0\r\n\r\n" + _line() + " -- stage_id=1\r\n\tnode1 -- node2\r\n")
    g = parse_graph(text)
    assert [n.stage for n in g.topological] == [0, 1]
    assert g.node("node2").op == "ReLU(inplace)"


def test_to_networkx(small):
    g = small.to_networkx()
    assert g.number_of_nodes() == 9 and g.number_of_edges() == 9
    assert g.nodes["node2"]["kind"] == "conv"
    assert g.nodes["node9"]["parameter_bytes"] == 360


# --------------------------------------------------------------------- kinds

@pytest.mark.parametrize("op, kind", [
    ("Conv2d(3, 64, kernel_size=(11, 11), stride=(4, 4), padding=(2, 2))", "conv"),
    ("Linear(in_features=9216, out_features=4096, bias=True)", "fc"),
    ("Classifier(  (classifier): Linear(in_features=1024, out_features=32320, bias=True))",
     "fc"),
    ("MaxPool2d(kernel_size=3, stride=2, padding=0, dilation=1, ceil_mode=False)", "pool"),
    ("AvgPool2d(kernel_size=3, stride=1, padding=1)", "pool"),
    ("AdaptiveAvgPool2d(output_size=(1, 1))", "pool"),
    ("BatchNorm2d(64, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)",
     "norm"),
    ("ReLU(inplace)", "act"), ("Dropout(p=0.5)", "dropout"), ("Add", "add"),
    ("Concat(1)", "concat"), ("View(9216)", "flatten"), ("Input", "input"),
    ("Input0", "input"), ("Input2", "input"), ("Embedding(32320, 1024, padding_idx=0)",
                                              "embedding"),
    ("LSTM(2048, 1024)", "rnn"), ("EmuBidirLSTM(  (bidir): LSTM(1024, 1024))", "rnn"),
    ("RecurrentAttention(  (rnn): LSTM(1024, 1024))", "rnn"), ("Size(0)", "other"),
    ("__getitem__(0)", "other"), ("hidden", "other"), ("Inputs", "other"),
    ("LogSoftmax(dim=1)", "softmax"), ("LocalResponseNorm(5)", "lrn"),
])
def test_guess_kind(op, kind):
    assert guess_kind(op) == kind
    assert kind in LAYER_KINDS


def test_every_kind_in_the_real_files_is_known():
    for path in GRAPH_FILES:
        for node in pipedream.load_graph(path).nodes:
            assert node.kind in LAYER_KINDS
            if node.op.split("(")[0] in ("Conv2d", "Linear", "BatchNorm2d", "ReLU"):
                assert node.kind != "other", node.op


# --------------------------------------------------------------------- the real files

def _independent_sums(text: str):
    """Node count and sums done with regexes over the text, Input lines left out."""
    node_lines = re.findall(r"^node\S* -- .*$", text, flags=re.M)
    compute = [ln for ln in node_lines if not re.match(r"^\S+ -- Input\d* -- ", ln)]

    def total(key, lines):
        return sum(Decimal(v) for ln in lines for v in re.findall(key + r"=([0-9.]+)", ln))

    return dict(nodes=len(node_lines), edges=len(re.findall(r"^\t\S+ -- \S+$", text, re.M)),
                fwd_ms=total("forward_compute_time", compute),
                bwd_ms=total("backward_compute_time", compute),
                input_ms=total("forward_compute_time", set(node_lines) - set(compute)),
                params=total("parameter_size", node_lines))


def test_all_fourteen_files_are_there():
    assert [p.stem for p in GRAPH_FILES] == sorted(BATCH)


@pytest.mark.parametrize("path", GRAPH_FILES, ids=lambda p: p.stem)
def test_real_file_parses_with_independent_totals(path):
    text = path.read_text(encoding="utf-8")
    want = _independent_sums(text)
    g = pipedream.load_graph(path)
    assert len(g) == want["nodes"] and len(g.edges) == want["edges"]
    assert g.t_forward == pytest.approx(float(want["fwd_ms"]) / 1000, rel=1e-12)
    assert g.t_backward == pytest.approx(float(want["bwd_ms"]) / 1000, rel=1e-12)
    assert g.t_input == pytest.approx(float(want["input_ms"]) / 1000, rel=1e-12)
    assert g.parameter_bytes == float(want["params"])
    position = {nid: i for i, nid in enumerate(g.order)}
    assert sorted(position) == sorted(n.id for n in g.nodes)
    assert all(position[a] < position[b] for a, b in g.edges)
    table = layer_table(g)
    assert math.fsum(table.t_forward) == pytest.approx(g.t_forward, rel=1e-12)
    assert math.fsum(table.t_backward) == pytest.approx(g.t_backward, rel=1e-12)
    assert math.fsum(table.parameter_bytes) == g.parameter_bytes


@pytest.mark.parametrize("path", GRAPH_FILES, ids=lambda p: p.stem)
def test_real_file_batch_size(path):
    g = pipedream.load_graph(path)
    found = infer_batch_size(g)
    assert found is not None and found.batch_size == BATCH[path.stem]
    assert found.resolution == (None if path.stem.startswith("gnmt") else
                                299 if path.stem == "inception_v3" else 224)
    # Independent check for the ImageNet models: the 1000-way classifier outputs B x 1000 x 4 B.
    heads = [n for n in g.nodes if re.match(r"Linear\(.*out_features=1000,", n.op)]
    for head in heads:
        assert head.activation_bytes == BATCH[path.stem] * 1000 * 4


def test_resnet50_batch_from_the_brief():
    # resnet50's 512x28x28 FP32 activation of 205520896 bytes is batch 128.
    g = pipedream.load_graph(GRAPHS / "resnet50.txt")
    assert any(n.activation_bytes == 205520896 for n in g.nodes)
    assert 205520896 == 128 * 512 * 28 * 28 * 4
    assert infer_batch_size(g).batch_size == 128


# --------------------------------------------------------------------- malformed input

@pytest.mark.parametrize("bad, line, words", [
    ("node2 -- ReLU(inplace)", 2, "expected '<id> -- <module> --"),
    (_line(fwd="abc"), 2, "forward_compute_time: expected a number, got 'abc'"),
    (_line(bwd="-1.0"), 2, "backward_compute_time: must be >= 0"),
    (_line(act="[1.0; x]"), 2, "activation_size: expected a number"),
    (_line(act="[1.0; 2.0"), 2, "activation_size: expected a number or a list"),
    (_line(params="nan"), 2, "parameter_size: expected a number"),
    (_line(params="1e999"), 2, "parameter_size: too large"),
    (_line().replace("backward_compute_time", "backward_time"), 2,
     "field 2 must be 'backward_compute_time=<value>'"),
    (_line().replace(", parameter_size=0.000", ""), 2, "expected the 4 fields"),
    (_line(op=" "), 2, "empty module description"),
    (_line(node_id="node 2"), 2, "node id must be one word"),
    (_line(node_id="node1"), 2, "duplicate node id 'node1' (first on line 1)"),
    (_line() + " -- stage_id=x", 2, "stage_id: expected a non-negative integer"),
    ("\tnode1 -> node2", 2, "an edge line must be"),
    ("\tnode1 -- node1", 2, "edge from 'node1' to itself"),
    ("\tnode1 -- node7", 2, "refers to 'node7', which has no node line"),
])
def test_malformed_line_names_the_line(bad, line, words):
    with pytest.raises(SpecError) as info:
        parse_graph(NODE + "\n" + bad)
    assert info.value.field == f"line {line}"
    assert words in info.value.message


def test_duplicate_edge():
    text = "\n".join([NODE, _line(), "\tnode1 -- node2", "", "\tnode1 -- node2"])
    with pytest.raises(SpecError) as info:
        parse_graph(text)
    assert info.value.field == "line 5" and "first on line 3" in info.value.message


def test_cycle_is_an_error():
    text = "\n".join([NODE, _line(), "\tnode1 -- node2", "\tnode2 -- node1"])
    with pytest.raises(SpecError, match="cycle: node1 -> node2 -> node1|cycle: node2 -> node1"):
        parse_graph(text, source="loop.txt")


def test_direct_construction_checks_edges(small):
    with pytest.raises(SpecError, match=r"edges\[0\]: edge node1 -- node99"):
        PipeDreamGraph(nodes=small.nodes, edges=(("node1", "node99"),))
    with pytest.raises(SpecError, match="unique"):
        PipeDreamGraph(nodes=small.nodes + small.nodes[:1], edges=())


def test_empty_text():
    with pytest.raises(SpecError, match="no node lines"):
        parse_graph("\n\n")


def test_file_errors_name_file_and_line(tmp_path):
    path = tmp_path / "broken.txt"
    path.write_text(NODE + "\n" + _line(fwd="1,5"), encoding="utf-8")
    with pytest.raises(SpecError) as info:
        pipedream.load_graph(path)
    assert info.value.source == str(path)
    assert str(info.value).startswith(f"{path}: line 2: forward_compute_time:")
    with pytest.raises(SpecError, match="cannot read file"):
        pipedream.load_graph(tmp_path / "missing.txt")


# --------------------------------------------------------------------- properties

@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 99999), st.integers(0, 99999), st.integers(0, 10**9)),
                min_size=1, max_size=12),
       st.data())
def test_random_dags_parse_consistently(rows, data):
    n = len(rows)
    pairs = [(i, j) for j in range(n) for i in range(j)]
    edges = data.draw(st.lists(st.sampled_from(pairs), unique=True)) if pairs else []
    lines = [_line(node_id=f"node{i + 1}", fwd=f"{f / 1000:.3f}", bwd=f"{b / 1000:.3f}",
                   params=f"{p}.000") for i, (f, b, p) in enumerate(rows)]
    lines = data.draw(st.permutations(lines))
    lines += [f"\tnode{i + 1} -- node{j + 1}" for i, j in edges]
    g = parse_graph("\n".join(lines))
    position = {nid: k for k, nid in enumerate(g.order)}
    assert all(position[f"node{i + 1}"] < position[f"node{j + 1}"] for i, j in edges)
    assert g.t_forward == pytest.approx(sum(f for f, _, _ in rows) / 1e6, rel=1e-12, abs=0)
    assert g.t_backward == pytest.approx(sum(b for _, b, _ in rows) / 1e6, rel=1e-12, abs=0)
    assert g.parameter_bytes == sum(p for _, _, p in rows)


def test_old_loader_name_still_loads_with_a_deprecation_warning():
    with pytest.warns(DeprecationWarning, match="pipedream.load_graph"):
        loader = io.load_pipedream
    assert loader(FIXTURE).nodes == pipedream.load_graph(FIXTURE).nodes
    with pytest.raises(AttributeError):
        io.no_such_loader  # noqa: B018
