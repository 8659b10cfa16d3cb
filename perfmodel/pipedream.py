"""Importer for PipeDream ``graph.txt`` per-layer profiles.

PipeDream's profiler (github.com/msr-fiddle/pipedream, ``profiler/``) writes one
text file per DNN: a line per layer (node), then a line per dependency (edge,
tab-indented); here a node line is wrapped::

    node2 -- Conv2d(3, 64, kernel_size=(7, 7), ...) -- forward_compute_time=9.706,
        backward_compute_time=4.551, activation_size=411041792.000, parameter_size=37632.000
    \\tnode1 -- node2

Times are milliseconds averaged over the profiled minibatches; sizes are bytes
(FP32) for the whole minibatch.  A node line may end with `` -- stage_id=N``
(partitioned graphs); ``activation_size`` may be a list ``[a; b; c]`` for a
layer with several outputs (LSTMs), counted as its sum, as PipeDream does.

Everything here is SI: times are converted from ms to seconds exactly once,
when a line is read.

The ``Input`` nodes are not compute: the profiler stores the average time spent
*waiting for the data loader* as the Input node's forward time (alexnet: 636 ms).
Like PipeDream's optimizer, which zeroes Input nodes before partitioning, the
totals :attr:`PipeDreamGraph.t_forward` / :attr:`~PipeDreamGraph.t_backward`
and :func:`layer_table` leave them out; :attr:`PipeDreamGraph.t_input` keeps
that time.

:func:`parse_graph` parses text; :func:`load_graph` reads a file through
:func:`perfmodel.io.read_text`.

Examples
--------
>>> text = "\\n".join([
...     "node1 -- Input -- forward_compute_time=5.000, backward_compute_time=0.000, "
...     "activation_size=1204224.000, parameter_size=0.000",
...     "node2 -- Linear(in_features=10, out_features=2, bias=True) -- "
...     "forward_compute_time=1.500, backward_compute_time=2.000, activation_size=16.000, "
...     "parameter_size=88.000",
...     "\\tnode1 -- node2"])
>>> g = parse_graph(text)
>>> g.t_forward, g.t_backward, g.t_input, g.parameter_bytes
(0.0015, 0.002, 0.005, 88.0)
>>> [n.kind for n in g.topological]
['input', 'fc']

References
----------
PipeDream profiler and graph format: msr-fiddle/pipedream, ``graph/graph.py``
(``Node.from_str``) and ``profiler/image_classification/main.py``, commit
7db6a1c3e64996d5b319faec6ca38cb31bfea1c4.  Li et al. 2022, Sec. 2.2.1 and
Yan et al. 2015, Sec. 4 consume per-layer times like these.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np

from .errors import SpecError
from .io import read_text
from .specs import Profile

if TYPE_CHECKING:
    import networkx as nx

__all__ = [
    "REPOSITORY", "COMMIT", "PipeDreamNode", "PipeDreamGraph", "LayerTable",
    "BatchInference", "parse_graph", "load_graph", "guess_kind", "to_profile", "layer_table",
    "infer_batch_size", "PROFILER_RESOLUTIONS",
]

#: Upstream repository of the profiles and of the format.
REPOSITORY = "msr-fiddle/pipedream"
#: Commit of :data:`REPOSITORY` the bundled profiles were taken from.
COMMIT = "7db6a1c3e64996d5b319faec6ca38cb31bfea1c4"

#: Input crops of PipeDream's image profiler (``profiler/image_classification/main.py``):
#: 299x299 for inception_v3, 224x224 for every other model.
PROFILER_RESOLUTIONS = (224, 299)

#: Metadata fields of a node line, in the order PipeDream writes them.
_FIELDS = ("forward_compute_time", "backward_compute_time", "activation_size", "parameter_size")
_NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
_SEP = " -- "

#: Layer kind of a module repr's leading name (see :func:`guess_kind`).
_KINDS = {
    "conv": ("Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
             "ConvTranspose3d"),
    "fc": ("Linear", "Bilinear", "Classifier"),
    "pool": ("MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
             "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d",
             "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "LPPool2d"),
    "norm": ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm",
             "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "SyncBatchNorm"),
    "lrn": ("LocalResponseNorm", "CrossMapLRN2d"),
    "act": ("ReLU", "ReLU6", "LeakyReLU", "PReLU", "ELU", "SELU", "CELU", "GELU", "SiLU",
            "Sigmoid", "Tanh", "Hardtanh", "Hardswish", "Hardsigmoid", "Softplus"),
    "dropout": ("Dropout", "Dropout2d", "Dropout3d", "AlphaDropout"),
    "add": ("Add",),
    "concat": ("Concat", "Cat"),
    "flatten": ("View", "Flatten", "Reshape"),
    "softmax": ("Softmax", "LogSoftmax", "Softmax2d"),
    "embedding": ("Embedding", "EmbeddingBag"),
    "rnn": ("LSTM", "GRU", "RNN", "LSTMCell", "GRUCell", "EmuBidirLSTM", "RecurrentAttention"),
}
_KIND_OF = {name: kind for kind, names in _KINDS.items() for name in names}


def guess_kind(op: str) -> str:
    """The layer kind (one of :data:`perfmodel.specs.LAYER_KINDS`) of a PyTorch module repr.

    The leading name decides: ``Conv2d`` is ``"conv"``, ``Linear`` (and GNMT's
    ``Classifier`` wrapping one) ``"fc"``, ``MaxPool2d``/``AvgPool2d``/
    ``AdaptiveAvgPool2d`` ``"pool"``, ``BatchNorm2d`` ``"norm"``, ``ReLU``
    ``"act"``, ``Dropout`` ``"dropout"``, ``Add`` ``"add"``, ``Concat``
    ``"concat"``, ``View`` ``"flatten"``, ``Embedding`` ``"embedding"``, ``LSTM``
    (and GNMT's ``EmuBidirLSTM``/``RecurrentAttention``) ``"rnn"``; PipeDream's
    ``Input``/``Input0``... nodes are ``"input"``; anything else (``Size``,
    ``__getitem__``, ``hidden``) is ``"other"``.

    Examples
    --------
    >>> guess_kind("Conv2d(3, 64, kernel_size=(7, 7), stride=(2, 2))")
    'conv'
    >>> guess_kind("Input1"), guess_kind("__getitem__(0)"), guess_kind("ReLU(inplace)")
    ('input', 'other', 'act')
    """
    match = re.match(r"[A-Za-z_][A-Za-z0-9_]*", op.strip())
    name = match.group(0) if match else ""
    if re.fullmatch(r"Input\d*", name):
        return "input"
    return _KIND_OF.get(name, "other")


@dataclass(frozen=True)
class PipeDreamNode:
    """One layer of a PipeDream profile (SI units).

    Attributes
    ----------
    id : str
        Node id as written, e.g. ``"node7"``.
    op : str
        The PyTorch module repr, e.g. ``"Conv2d(3, 64, kernel_size=(7, 7), ...)"``.
    kind : str
        Layer kind guessed from ``op`` (:func:`guess_kind`).
    t_forward, t_backward : float, s
        Forward and backward time of the layer for one minibatch.
    activation_bytes : float, B
        Output activation size for one minibatch (sum of ``activation_parts``).
    parameter_bytes : float, B
        Parameter size of the layer.
    activation_parts : tuple of float, B
        The output sizes as written (several for multi-output layers such as LSTMs).
    line : int
        1-based line number in the file.
    stage : int or None
        ``stage_id`` of a partitioned graph, when present.
    """

    id: str
    op: str
    kind: str
    t_forward: float
    t_backward: float
    activation_bytes: float
    parameter_bytes: float
    activation_parts: tuple = ()
    line: int = 0
    stage: int | None = None


@dataclass(frozen=True)
class PipeDreamGraph:
    """A parsed PipeDream profile: layers, dependencies and a topological order.

    Attributes
    ----------
    nodes : tuple of PipeDreamNode
        Nodes in file order.
    edges : tuple of (str, str)
        ``(from_id, to_id)`` in file order.
    source : str
        Where the text came from (file name), for provenance and messages.
    order : tuple of str
        Node ids in topological order (networkx; ties broken by the number in
        the id, so ``node2`` comes before ``node10``).  Computed on construction.
    """

    nodes: tuple
    edges: tuple
    source: str = ""
    order: tuple = field(init=False)
    _index: MappingProxyType = field(init=False, repr=False, compare=False)
    _succ: MappingProxyType = field(init=False, repr=False, compare=False)
    _pred: MappingProxyType = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        index = {n.id: n for n in self.nodes}
        if len(index) != len(self.nodes):
            raise SpecError("nodes", "node ids must be unique", self.source or None)
        succ = {n.id: [] for n in self.nodes}
        pred = {n.id: [] for n in self.nodes}
        for i, (a, b) in enumerate(self.edges):
            if a not in index or b not in index:
                raise SpecError(f"edges[{i}]", f"edge {a} -- {b} names a node that does not "
                                               "exist", self.source or None)
            succ[a].append(b)
            pred[b].append(a)
        object.__setattr__(self, "_index", MappingProxyType(index))
        object.__setattr__(self, "_succ", MappingProxyType({k: tuple(v) for k, v in succ.items()}))
        object.__setattr__(self, "_pred", MappingProxyType({k: tuple(v) for k, v in pred.items()}))
        object.__setattr__(self, "order", _topological_order(self.nodes, self.edges))

    def __len__(self) -> int:
        return len(self.nodes)

    def node(self, node_id: str) -> PipeDreamNode:
        """The node called ``node_id`` (KeyError if there is none)."""
        return self._index[node_id]

    def successors(self, node_id: str) -> tuple:
        """Ids of the nodes fed by ``node_id``, in file order."""
        return self._succ[node_id]

    def predecessors(self, node_id: str) -> tuple:
        """Ids of the nodes feeding ``node_id``, in file order."""
        return self._pred[node_id]

    @property
    def topological(self) -> tuple:
        """The nodes in topological order (see :attr:`order`)."""
        return tuple(self._index[i] for i in self.order)

    @property
    def compute_nodes(self) -> tuple:
        """The non-input nodes in topological order: the layers that compute."""
        return tuple(n for n in self.topological if n.kind != "input")

    @property
    def t_forward(self) -> float:
        """Forward time of one minibatch (s): sum over the non-input nodes."""
        return math.fsum(n.t_forward for n in self.compute_nodes)

    @property
    def t_backward(self) -> float:
        """Backward time of one minibatch (s): sum over the non-input nodes."""
        return math.fsum(n.t_backward for n in self.compute_nodes)

    @property
    def t_input(self) -> float:
        """Time the profiler charged to the Input nodes (s): data-loader wait, not compute."""
        return math.fsum(n.t_forward + n.t_backward for n in self.topological
                         if n.kind == "input")

    @property
    def parameter_bytes(self) -> float:
        """Total parameter size (B), the model size M of Li et al. 2022."""
        return math.fsum(n.parameter_bytes for n in self.topological)

    def to_networkx(self) -> nx.DiGraph:
        """A new ``networkx.DiGraph`` with the node fields as node attributes."""
        import networkx as nx  # heavy: only when a graph is built

        g = nx.DiGraph()
        for n in self.topological:
            g.add_node(n.id, op=n.op, kind=n.kind, t_forward=n.t_forward,
                       t_backward=n.t_backward, activation_bytes=n.activation_bytes,
                       parameter_bytes=n.parameter_bytes)
        g.add_edges_from(self.edges)
        return g


def _natural_key(node_id: str):
    match = re.search(r"(\d+)$", node_id)
    return (int(match.group(1)) if match else math.inf, node_id)


def _topological_order(nodes, edges) -> tuple:
    import networkx as nx  # heavy: only when a graph is parsed

    g = nx.DiGraph()
    g.add_nodes_from(n.id for n in nodes)
    g.add_edges_from(edges)
    try:
        return tuple(nx.lexicographical_topological_sort(g, key=_natural_key))
    except nx.NetworkXUnfeasible:
        cycle = nx.find_cycle(g)
        path = " -> ".join([a for a, _ in cycle] + [cycle[0][0]])
        raise SpecError("edges", f"the layer graph has a cycle: {path}") from None


# ----------------------------------------------------------------------------- parsing

def _fail(lineno: int, message: str, source: str):
    raise SpecError(f"line {lineno}", message, source or None)


def _short(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _number(text: str, key: str, lineno: int, source: str) -> Decimal:
    text = text.strip()
    if not _NUMBER.match(text):
        _fail(lineno, f"{key}: expected a number, got {_short(text)}", source)
    value = Decimal(text)
    if value < 0:
        _fail(lineno, f"{key}: must be >= 0, got {text}", source)
    if not math.isfinite(float(value)):
        _fail(lineno, f"{key}: too large, got {text}", source)
    return value


def _activation(text: str, lineno: int, source: str) -> tuple:
    text = text.strip()
    if not text.startswith("["):
        return (float(_number(text, "activation_size", lineno, source)),)
    if not text.endswith("]") or len(text) < 3:
        _fail(lineno, f"activation_size: expected a number or a list '[a; b; ...]', "
                      f"got {_short(text)}", source)
    return tuple(float(_number(part, "activation_size", lineno, source))
                 for part in text[1:-1].split(";"))


def _metadata(text: str, lineno: int, source: str) -> dict:
    items = text.split(", ")
    if len(items) != len(_FIELDS):
        _fail(lineno, f"expected the {len(_FIELDS)} fields {', '.join(_FIELDS)}; "
                      f"got {_short(text)}", source)
    raw = {}
    for position, (item, key) in enumerate(zip(items, _FIELDS), start=1):
        name, sep, value = item.partition("=")
        if not sep or name.strip() != key:
            _fail(lineno, f"field {position} must be '{key}=<value>', got {_short(item)}", source)
        raw[key] = value
    return raw


def _node(line: str, lineno: int, source: str) -> PipeDreamNode:
    tokens = line.strip().split(_SEP)
    stage = None
    if len(tokens) > 3 and tokens[-1].startswith("stage_id="):
        stage_text = tokens.pop()[len("stage_id="):]
        if not stage_text.isdigit():
            _fail(lineno, f"stage_id: expected a non-negative integer, got {_short(stage_text)}",
                  source)
        stage = int(stage_text)
    if len(tokens) < 3:
        _fail(lineno, "expected '<id> -- <module> -- forward_compute_time=<ms>, "
                      "backward_compute_time=<ms>, activation_size=<B>, parameter_size=<B>'; "
                      f"got {_short(line.strip())}", source)
    node_id, op = tokens[0].strip(), _SEP.join(tokens[1:-1]).strip()
    if not node_id or any(c.isspace() for c in node_id):
        _fail(lineno, f"node id must be one word, got {node_id!r}", source)
    if not op:
        _fail(lineno, f"node {node_id!r} has an empty module description", source)
    raw = _metadata(tokens[-1], lineno, source)
    t_fwd = _number(raw["forward_compute_time"], "forward_compute_time", lineno, source)
    t_bwd = _number(raw["backward_compute_time"], "backward_compute_time", lineno, source)
    parts = _activation(raw["activation_size"], lineno, source)
    params = _number(raw["parameter_size"], "parameter_size", lineno, source)
    return PipeDreamNode(
        id=node_id, op=op, kind=guess_kind(op),
        t_forward=float(t_fwd.scaleb(-3)), t_backward=float(t_bwd.scaleb(-3)),  # ms -> s, exact
        activation_bytes=math.fsum(parts), parameter_bytes=float(params),
        activation_parts=parts, line=lineno, stage=stage)


def _edge(line: str, lineno: int, source: str) -> tuple:
    ends = [t.strip() for t in line.strip().split(_SEP)]
    if len(ends) != 2 or not all(ends) or any(c.isspace() for e in ends for c in e):
        _fail(lineno, f"an edge line must be '<tab><from id> -- <to id>', "
                      f"got {_short(line.strip())}", source)
    if ends[0] == ends[1]:
        _fail(lineno, f"edge from {ends[0]!r} to itself", source)
    return ends[0], ends[1]


def _check_edges(edges, edge_lines, node_lines, source):
    seen = {}
    for (a, b), lineno in zip(edges, edge_lines):
        for end in (a, b):
            if end not in node_lines:
                _fail(lineno, f"edge {a} -- {b} refers to {end!r}, which has no node line",
                      source)
        if (a, b) in seen:
            _fail(lineno, f"duplicate edge {a} -- {b} (first on line {seen[(a, b)]})", source)
        seen[(a, b)] = lineno


def load_graph(path: str | Path) -> PipeDreamGraph:
    """Load a PipeDream ``graph.txt`` profile.

    Errors name the file and the line (``<path>: line 7: forward_compute_time: ...``).
    """
    path = Path(path)
    text = read_text(path)
    try:
        return parse_graph(text, source=path.name)
    except SpecError as err:
        raise err.within(source=str(path)) from None


def parse_graph(text: str, source: str = "") -> PipeDreamGraph:
    """Parse the text of a PipeDream ``graph.txt`` profile.

    Parameters
    ----------
    text : str
        The file contents.  Node lines ``<id> -- <module repr> --
        forward_compute_time=<ms>, backward_compute_time=<ms>,
        activation_size=<bytes>, parameter_size=<bytes>`` (optionally
        `` -- stage_id=<n>``) and edge lines ``\\t<from id> -- <to id>``, in any
        order; blank lines are ignored.
    source : str, optional
        Name of the file, kept in :attr:`PipeDreamGraph.source` and put in errors.

    Returns
    -------
    PipeDreamGraph
        Times in seconds (converted from ms), sizes in bytes.

    Raises
    ------
    SpecError
        Field ``"line N"`` for a malformed node or edge line (saying what is
        wrong), a duplicate node id or edge, or an edge to an unknown node;
        field ``"edges"`` for a cycle; field ``""`` for text without nodes.
    """
    nodes, node_lines, edges, edge_lines = [], {}, [], []
    for lineno, line in enumerate(text.split("\n"), start=1):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        if line[0].isspace():
            edges.append(_edge(line, lineno, source))
            edge_lines.append(lineno)
            continue
        node = _node(line, lineno, source)
        if node.id in node_lines:
            _fail(lineno, f"duplicate node id {node.id!r} (first on line {node_lines[node.id]})",
                  source)
        node_lines[node.id] = lineno
        nodes.append(node)
    if not nodes:
        raise SpecError("", "no node lines: not a PipeDream graph.txt profile", source or None)
    _check_edges(edges, edge_lines, node_lines, source)
    try:
        return PipeDreamGraph(nodes=tuple(nodes), edges=tuple(edges), source=source)
    except SpecError as err:
        raise err.within(source=source or None) from None


# ----------------------------------------------------------------------------- outputs

@dataclass(frozen=True, eq=False)
class LayerTable:
    """Per-layer arrays of a profile, in topological order (SI units, read-only arrays).

    Attributes
    ----------
    ids, ops, kinds : tuple of str
        Node id, module repr and layer kind of each row.
    t_forward, t_backward : numpy.ndarray, s
        Forward and backward time of each layer for one minibatch.
    parameter_bytes : numpy.ndarray, B
        Parameter size of each layer.
    activation_bytes : numpy.ndarray, B
        Output activation size of each layer for one minibatch.
    """

    ids: tuple
    ops: tuple
    kinds: tuple
    t_forward: np.ndarray
    t_backward: np.ndarray
    parameter_bytes: np.ndarray
    activation_bytes: np.ndarray

    def __len__(self) -> int:
        return len(self.ids)


def _frozen_array(values) -> np.ndarray:
    out = np.array(values, dtype=float)
    out.flags.writeable = False
    return out


def layer_table(graph: PipeDreamGraph, include_input: bool = False) -> LayerTable:
    """Per-node arrays (forward s, backward s, parameter B, activation B) in topological order.

    Parameters
    ----------
    graph : PipeDreamGraph
    include_input : bool, default False
        Keep the ``Input`` nodes (whose time is data loading, not compute).
        Without them the sums of the time columns equal ``graph.t_forward``
        and ``graph.t_backward``.

    Returns
    -------
    LayerTable
    """
    rows = graph.topological if include_input else graph.compute_nodes
    return LayerTable(
        ids=tuple(n.id for n in rows), ops=tuple(n.op for n in rows),
        kinds=tuple(n.kind for n in rows),
        t_forward=_frozen_array([n.t_forward for n in rows]),
        t_backward=_frozen_array([n.t_backward for n in rows]),
        parameter_bytes=_frozen_array([n.parameter_bytes for n in rows]),
        activation_bytes=_frozen_array([n.activation_bytes for n in rows]))


def _profile_source(graph: PipeDreamGraph, t_update_given: bool) -> str:
    n_input = sum(1 for n in graph.nodes if n.kind == "input")
    update = ("t_update given by the caller." if t_update_given else
              "t_update = 0: the profile does not measure the parameter-server update "
              "(PipeDream's profiler leaves optimizer.step() out of the layer times).")
    return (f"Measured: PipeDream profiler graph {graph.source or '(text)'} from github.com/"
            f"{REPOSITORY} at commit {COMMIT} (MIT licence): per-layer GPU times of one "
            f"worker averaged over the profiled minibatches (GPU model not recorded). "
            f"t_forward/t_backward = sums over the {len(graph) - n_input} non-input nodes "
            f"(Input nodes: {n_input}, with {graph.t_input * 1e3:.3f} ms of data-loader wait, "
            f"left out as PipeDream's optimizer does); model_bytes = sum of parameter_size. "
            + update)


def to_profile(graph: PipeDreamGraph, batch_size: int, name: str, dnn: str = "", *,
               t_update: float | None = None, note: str = "") -> Profile:
    """The coarse single-worker profile (Li et al. 2022, Table 3: M, T_F, T_B, T_S) of a graph.

    Parameters
    ----------
    graph : PipeDreamGraph
    batch_size : int
        Samples per minibatch the graph was profiled with (see :func:`infer_batch_size`).
    name : str
        Profile name, e.g. ``"resnet50-pipedream"``.
    dnn : str, optional
        Zoo name of the DNN profiled.
    t_update : float, s, optional
        Parameter-server update time T_S; 0 when not given (not in the profile).
    note : str, optional
        Appended to the provenance text in ``Profile.source``.

    Returns
    -------
    Profile
        ``model_bytes`` = total parameter bytes, ``t_forward``/``t_backward`` =
        sums over the non-input nodes, ``measured=True``, ``source`` citing the
        file, repository and commit.

    References
    ----------
    Li et al. 2022 (IEEE TPDS), Sec. 2.1.2 and Table 3.
    """
    source = _profile_source(graph, t_update is not None)
    if note:
        source = f"{source} {note}"
    return Profile(model_bytes=graph.parameter_bytes, t_forward=graph.t_forward,
                   t_backward=graph.t_backward,
                   t_update=0.0 if t_update is None else t_update,
                   batch_size=batch_size, name=name, dnn=dnn, measured=True, source=source)


# ----------------------------------------------------------------------------- batch size

@dataclass(frozen=True)
class BatchInference:
    """The minibatch size a profile was taken with, and the evidence.

    Attributes
    ----------
    batch_size : int
    node : str
        Id of the layer whose activation size fixed it.
    method : str
        ``"conv"`` (input image and first convolution) or ``"lstm"`` (hidden state).
    explanation : str
        The arithmetic, for provenance notes.
    resolution : int or None
        Input image height = width (CNNs).
    seq_len : int or None
        Sequence length of the LSTM output (RNNs).
    """

    batch_size: int
    node: str
    method: str
    explanation: str
    resolution: int | None = None
    seq_len: int | None = None


def _int_or_none(value: float) -> int | None:
    return int(value) if value > 0 and float(value).is_integer() else None


def _module_args(op: str, name: str):
    """Positional ints and keyword values of ``Name(a, b, k=(x, y), ...)``, or None."""
    if not op.startswith(name + "("):
        return None
    body = op[len(name) + 1:op.rfind(")")]
    keywords = {}
    try:
        for key, tup, scalar in re.findall(r"(\w+)=(?:\(([^)]*)\)|([^,()]+))", body):
            keywords[key] = (tuple(int(x) for x in tup.split(",") if x.strip()) if tup
                             else scalar.strip())
    except ValueError:  # a tuple of non-integers: not a geometry we read
        return None
    head = body.split("=")[0]
    positional = [int(x) for x in re.findall(r"(?:^|,\s*)(\d+)(?=\s*(?:,|$))", head)]
    return positional, keywords


def _pair(keywords: dict, key: str, default: int) -> tuple:
    value = keywords.get(key, (default, default))
    if isinstance(value, str):
        value = (int(value),) * 2
    return value if len(value) == 2 else (value[0], value[0])


def _conv_geometry(op: str):
    args = _module_args(op, "Conv2d")
    if args is None or len(args[0]) < 2:
        return None
    (c_in, c_out), kw = args[0][:2], args[1]
    return dict(c_in=c_in, c_out=c_out, kernel=_pair(kw, "kernel_size", 1),
                stride=_pair(kw, "stride", 1), padding=_pair(kw, "padding", 0),
                dilation=_pair(kw, "dilation", 1))


def _conv_out(size: int, conv: dict, axis: int) -> int:
    k, s, p, d = (conv[key][axis] for key in ("kernel", "stride", "padding", "dilation"))
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _conv_batch(in_bytes: int, out_bytes: int, conv: dict, res: int, width: int):
    per_in = conv["c_in"] * res * res * width
    if in_bytes % per_in:
        return None
    batch = in_bytes // per_in
    h, w = _conv_out(res, conv, 0), _conv_out(res, conv, 1)
    if h < 1 or w < 1 or out_bytes != batch * conv["c_out"] * h * w * width:
        return None
    return batch


def _from_conv(graph, resolutions, width):
    for node in graph.topological:
        in_bytes = _int_or_none(node.activation_bytes)
        if node.kind != "input" or in_bytes is None:
            continue
        for succ_id in graph.successors(node.id):
            succ = graph.node(succ_id)
            conv, out_bytes = _conv_geometry(succ.op), _int_or_none(succ.activation_bytes)
            if conv is None or out_bytes is None:
                continue
            fits = [(r, b) for r in resolutions
                    if (b := _conv_batch(in_bytes, out_bytes, conv, r, width))]
            if len(fits) == 1:
                return _conv_inference(node, succ, conv, *fits[0], resolutions, width)
    return None


def _conv_inference(node, conv_node, conv, res, batch, resolutions, width):
    h, w = _conv_out(res, conv, 0), _conv_out(res, conv, 1)
    text = (f"{node.id} ({node.op}) activation {node.activation_bytes:.0f} B = "
            f"{batch} x {conv['c_in']}x{res}x{res} x {width} B, and the first convolution "
            f"{conv_node.id} ({conv['c_out']} channels, kernel {conv['kernel']}, stride "
            f"{conv['stride']}, padding {conv['padding']}) outputs "
            f"{conv_node.activation_bytes:.0f} B = {batch} x {conv['c_out']}x{h}x{w} x {width} B"
            f" (FP32, NCHW); of the input resolutions tried "
            f"({', '.join(map(str, resolutions))}) only {res}x{res} fits both")
    return BatchInference(batch_size=batch, node=conv_node.id, method="conv", explanation=text,
                          resolution=res)


def _lstm_geometry(op: str):
    args = _module_args(op, "LSTM")
    if args is None or len(args[0]) < 2:
        return None
    positional, kw = args
    layers = positional[2] if len(positional) > 2 else int(kw.get("num_layers", 1))
    dirs = 2 if kw.get("bidirectional") == "True" else 1
    return dict(hidden=positional[1], layers=layers, dirs=dirs)


def _from_lstm(graph, width):
    for node in graph.topological:
        lstm = _lstm_geometry(node.op)
        if lstm is None or len(node.activation_parts) != 3:
            continue
        out, h_n, c_n = (_int_or_none(x) for x in node.activation_parts)
        per_sample = lstm["layers"] * lstm["dirs"] * lstm["hidden"] * width
        if None in (out, h_n) or h_n != c_n or h_n % per_sample:
            continue
        batch = h_n // per_sample
        per_step = batch * lstm["dirs"] * lstm["hidden"] * width
        if out % per_step:
            continue
        text = (f"{node.id} ({node.op}) final hidden state h_n = {h_n} B = "
                f"{lstm['layers'] * lstm['dirs']} x {batch} x {lstm['hidden']} x {width} B "
                f"(FP32; c_n the same), and its output {out} B = {out // per_step} steps x "
                f"{batch} x {lstm['dirs'] * lstm['hidden']} x {width} B")
        return BatchInference(batch_size=batch, node=node.id, method="lstm", explanation=text,
                              seq_len=out // per_step)
    return None


def infer_batch_size(graph: PipeDreamGraph, resolution=PROFILER_RESOLUTIONS,
                     bytes_per_value: int = 4) -> BatchInference | None:
    """Infer the minibatch size a profile was measured with from its activation sizes.

    The files do not record the batch size, but every activation size is
    ``batch x (values per sample) x bytes_per_value``.

    * CNNs: the Input node holds ``B x C x R x R`` values and the convolution
      it feeds ``B x C_out x H x W``, with ``H, W`` given by ``R`` and the
      kernel, stride, padding and dilation in the conv's repr.  Of the
      candidate resolutions ``R``, exactly one must fit both sizes with the
      same integer ``B``.  (The stem conv alone cannot pin ``R`` down: a
      stride-2 conv scales both sizes alike, so the resolution must be known.)
    * RNNs (GNMT): an ``LSTM(in, hidden)`` node's activation list is
      ``[output; h_n; c_n]`` with ``h_n`` = layers x directions x B x hidden
      values, and the output a whole number of time steps.

    Parameters
    ----------
    graph : PipeDreamGraph
    resolution : int or sequence of int, default PROFILER_RESOLUTIONS
        Known input height = width, or candidates: by default 224 and 299, the
        crops of PipeDream's profiler (299 for inception_v3, 224 otherwise).
    bytes_per_value : int, default 4
        FP32.

    Returns
    -------
    BatchInference or None
        None when no rule applies, or the sizes fit no candidate resolution or several.

    Examples
    --------
    Two 3x224x224 images into ``Conv2d(3, 8, kernel_size=(3, 3), stride=(2, 2))``,
    whose output is 2 x 8x111x111 FP32 values:

    >>> text = ("node1 -- Input -- forward_compute_time=0, backward_compute_time=0, "
    ...         "activation_size=1204224, parameter_size=0\\n"
    ...         "node2 -- Conv2d(3, 8, kernel_size=(3, 3), stride=(2, 2)) -- "
    ...         "forward_compute_time=1, backward_compute_time=1, activation_size=788544, "
    ...         "parameter_size=896\\n"
    ...         "\\tnode1 -- node2")
    >>> found = infer_batch_size(parse_graph(text))
    >>> found.batch_size, found.resolution
    (2, 224)
    """
    resolutions = (resolution,) if isinstance(resolution, int) else tuple(resolution)
    return (_from_conv(graph, resolutions, bytes_per_value)
            or _from_lstm(graph, bytes_per_value))
