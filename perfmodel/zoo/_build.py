"""Builder of the zoo's DNN specs (``perfmodel/zoo/dnns/*.json``).

The JSON files are generated, never edited by hand: run ::

    python -m perfmodel.zoo._build

to (re)write them.  Small layer constructors (:func:`conv`, :func:`pool`,
:func:`fc`, ...) propagate shapes through the real architectures and compute
each layer's counts per sample:

* ``weights``: trainable parameters (conv/fc kernels and biases, batch-norm
  gamma and beta; running statistics are buffers, not parameters);
* ``connections``: Yan et al. 2015's W(l), the forward multiply-adds (MACs):
  ``Cout*Hout*Wout*(Cin/groups)*kh*kw`` for a convolution, ``in*out`` for a
  fully connected (or softmax output) layer, 0 for the others;
* ``flops``: ``2*connections`` for conv/fc/softmax layers, one operation per
  output element for pool, norm, act, add and dropout layers, 0 for flatten
  and concat (pure data movement).

The torchvision networks follow torchvision's module definitions; their
parameter counts equal torchvision's published ones exactly (checked in
``tests/test_zoo.py``).  The two Adam networks of Yan et al. 2015, Sec. 6 have no
published layer shapes: the shapes chosen here (written in each DNN's
``notes``) match the published totals (about 2.5 M and over 2 billion
connections).

>>> dnn = build("vgg16")
>>> dnn.n_params
138357544
>>> dnn.layer("conv1_1").connections == 64 * 224 * 224 * 3 * 3 * 3
True

References
----------
Yan, Ruwase, He, Chilimbi. Performance Modeling and Scalability Optimization of
Distributed Deep Learning Systems. KDD, 2015.  Sec. 4.1 (neurons, weights,
connections W(l)) and Sec. 6 "Benchmarks"; Chilimbi et al., Project Adam,
OSDI 2014.
"""

from __future__ import annotations

import json
import math
from functools import partial
from pathlib import Path

from ..specs import DNN, Layer

__all__ = [
    "Net", "conv", "pool", "adaptive_pool", "fc", "softmax", "norm", "act", "add",
    "concat", "flatten", "dropout", "basic_conv",
    "alexnet", "vgg", "resnet", "inception_v3", "googlenet", "adam_mnist",
    "adam_imagenet22k", "BUILDERS", "build", "render", "write_all", "main",
]

#: Folder of the generated DNN files.
DNN_DIR = Path(__file__).parent / "dnns"

_FLOP_NOTE = ("Counts are per sample. connections = forward multiply-adds (MACs), "
              "Yan et al. 2015's W(l); flops = 2*MACs for conv/fc/softmax layers, one op per "
              "output element for pool/norm/act/add/dropout, 0 for flatten/concat. "
              "weights = trainable parameters (incl. biases and batch-norm gamma/beta).")


def _pair(value) -> tuple[int, int]:
    """``value`` as a (height, width) pair."""
    return (value, value) if isinstance(value, int) else (int(value[0]), int(value[1]))


def _out_size(size: int, kernel: int, stride: int, pad: int, ceil: bool = False) -> int:
    """Output length of a convolution or pooling window along one axis (PyTorch rule)."""
    span = size + 2 * pad - kernel
    out = (-(-span // stride) if ceil else span // stride) + 1
    if ceil and (out - 1) * stride >= size + pad:  # last window must start inside
        out -= 1
    if out < 1:
        raise ValueError(f"window {kernel}/{stride} pad {pad} does not fit size {size}")
    return out


class Net:
    """A DNN under construction: its layers in execution order and their shapes.

    Parameters
    ----------
    input_shape : sequence of int
        Shape of one input sample, e.g. ``(3, 224, 224)``.
    """

    def __init__(self, input_shape):
        self.input_shape = tuple(input_shape)
        self.layers: list[Layer] = []
        self._shapes: dict[str, tuple] = {}

    @property
    def last(self) -> str | None:
        """Name of the last layer added (``None`` before the first)."""
        return self.layers[-1].name if self.layers else None

    def source(self, src: str | None) -> str | None:
        """The producer name ``src``, defaulting to the last layer added."""
        return self.last if src is None else src

    def shape(self, src: str | None) -> tuple:
        """Output shape of layer ``src`` (the network input for ``None``)."""
        return self.input_shape if src is None else self._shapes[src]

    def add(self, name: str, kind: str, sources: list, out_shape, *, in_shape=None,
            **fields) -> str:
        """Append a layer fed by ``sources`` and return its name.

        ``inputs`` is left empty when the only producer is the previous layer.
        """
        if name in self._shapes:
            raise ValueError(f"duplicate layer name {name!r}")
        inputs = [] if sources == [self.last] else list(sources)
        if in_shape is None:
            in_shape = self.shape(sources[0])
        layer = Layer(name=name, kind=kind, out_shape=tuple(out_shape),
                      in_shape=tuple(in_shape), inputs=tuple(inputs), **fields)
        self.layers.append(layer)
        self._shapes[name] = layer.out_shape
        return name

    def dnn(self, name: str, source: str, notes: str, **fields) -> DNN:
        """The finished :class:`~perfmodel.specs.DNN` (``fields``: its other spec fields)."""
        return DNN(name=name, layers=tuple(self.layers), input_shape=self.input_shape,
                   source=source, notes=notes, **fields)


# ----------------------------------------------------------------------------- layers

def conv(net: Net, name: str, cout: int, kernel, stride=1, padding=0, *, groups: int = 1,
         bias: bool = True, pool_size: int = 0, src: str | None = None) -> str:
    """Add a 2-D convolution; return its name.

    Parameters
    ----------
    net : Net
        The network being built.
    name : str
        Layer name.
    cout : int
        Output channels.
    kernel, stride, padding : int or (int, int)
        Window geometry (PyTorch semantics, floor rounding).
    groups : int
        Convolution groups; ``Cin`` and ``cout`` must be multiples of it.
    bias : bool
        Whether the convolution has a bias (``cout`` extra parameters).
    pool_size : int
        When > 0, a ``pool_size`` x ``pool_size`` max-pool with the same stride is
        fused into the layer (the Adam networks count pooling inside conv layers):
        ``out_shape`` is the pooled shape, ``connections`` the convolution's MACs.
    src : str, optional
        Producer layer (default: the previous layer).
    """
    src = net.source(src)
    cin, h, w = net.shape(src)
    (kh, kw), (sh, sw), (ph, pw) = _pair(kernel), _pair(stride), _pair(padding)
    if cin % groups or cout % groups:
        raise ValueError(f"{name}: channels {cin}->{cout} not divisible by groups {groups}")
    ho, wo = _out_size(h, kh, sh, ph), _out_size(w, kw, sw, pw)
    fan_in = cin // groups * kh * kw
    macs = cout * ho * wo * fan_in
    if pool_size:
        ho, wo = ho // pool_size, wo // pool_size
    return net.add(name, "conv", [src], (cout, ho, wo), weights=cout * fan_in + bias * cout,
                   connections=macs, flops=2.0 * macs, kernel=(kh, kw), stride=(sh, sw),
                   padding=(ph, pw), groups=groups)


def pool(net: Net, name: str, kernel, stride=None, padding=0, *, ceil: bool = False,
         src: str | None = None) -> str:
    """Add a max- or average-pooling layer (``stride`` defaults to ``kernel``); return its name.

    ``ceil`` selects PyTorch's ``ceil_mode`` rounding of the output size.
    """
    src = net.source(src)
    c, h, w = net.shape(src)
    (kh, kw), (ph, pw) = _pair(kernel), _pair(padding)
    sh, sw = _pair(kernel if stride is None else stride)
    out = (c, _out_size(h, kh, sh, ph, ceil), _out_size(w, kw, sw, pw, ceil))
    return net.add(name, "pool", [src], out, kernel=(kh, kw), stride=(sh, sw), padding=(ph, pw))


def adaptive_pool(net: Net, name: str, size, *, src: str | None = None) -> str:
    """Add an adaptive average pool to ``size`` (an exact window when it divides the input)."""
    src = net.source(src)
    c, h, w = net.shape(src)
    oh, ow = _pair(size)
    if h % oh or w % ow:
        raise ValueError(f"{name}: adaptive pool {h}x{w} -> {oh}x{ow} has uneven windows")
    window = (h // oh, w // ow)
    return net.add(name, "pool", [src], (c, oh, ow), kernel=window, stride=window, padding=(0, 0))


def fc(net: Net, name: str, out: int, *, bias: bool = True, kind: str = "fc",
       src: str | None = None) -> str:
    """Add a fully connected layer over the flattened input; return its name."""
    src = net.source(src)
    fan_in = math.prod(net.shape(src))
    return net.add(name, kind, [src], (out,), weights=fan_in * out + bias * out,
                   connections=fan_in * out, flops=2.0 * fan_in * out)


def softmax(net: Net, name: str, classes: int, *, src: str | None = None) -> str:
    """Add a softmax output layer with its weights (an fc layer followed by softmax)."""
    return fc(net, name, classes, kind="softmax", src=src)


def norm(net: Net, name: str, *, src: str | None = None) -> str:
    """Add a batch-norm layer (gamma and beta per channel are its weights)."""
    src = net.source(src)
    shape = net.shape(src)
    return net.add(name, "norm", [src], shape, weights=2 * shape[0])


def act(net: Net, name: str, *, src: str | None = None) -> str:
    """Add an element-wise activation (ReLU)."""
    src = net.source(src)
    return net.add(name, "act", [src], net.shape(src))


def dropout(net: Net, name: str, *, src: str | None = None) -> str:
    """Add a dropout layer."""
    src = net.source(src)
    return net.add(name, "dropout", [src], net.shape(src))


def flatten(net: Net, name: str, *, src: str | None = None) -> str:
    """Add a flatten (reshape) layer; it costs no FLOP."""
    src = net.source(src)
    shape = net.shape(src)
    return net.add(name, "flatten", [src], (math.prod(shape),), flops=0.0)


def add(net: Net, name: str, sources: list[str]) -> str:
    """Add an element-wise sum of ``sources`` (all of one shape), e.g. a residual join."""
    shapes = {net.shape(s) for s in sources}
    if len(shapes) != 1:
        raise ValueError(f"{name}: cannot add shapes {sorted(shapes)}")
    shape = shapes.pop()
    return net.add(name, "add", list(sources), shape, in_shape=shape)


def concat(net: Net, name: str, sources: list[str]) -> str:
    """Add a channel concatenation of ``sources``; ``in_shape`` is the concatenated shape."""
    shapes = [net.shape(s) for s in sources]
    if len({s[1:] for s in shapes}) != 1:
        raise ValueError(f"{name}: cannot concatenate shapes {shapes}")
    out = (sum(s[0] for s in shapes),) + shapes[0][1:]
    return net.add(name, "concat", list(sources), out, in_shape=out, flops=0.0)


def basic_conv(net: Net, prefix: str, cout: int, kernel, stride=1, padding=0, *,
               src: str | None = None) -> str:
    """torchvision's ``BasicConv2d``: conv (no bias), batch norm, ReLU; return the ReLU's name."""
    conv(net, f"{prefix}.conv", cout, kernel, stride, padding, bias=False, src=src)
    norm(net, f"{prefix}.bn")
    return act(net, f"{prefix}.relu")


# ----------------------------------------------------------------------------- AlexNet, VGG

def alexnet() -> DNN:
    """torchvision's AlexNet (61,100,840 parameters)."""
    net = Net((3, 224, 224))
    spec = [(64, 11, 4, 2, True), (192, 5, 1, 2, True), (384, 3, 1, 1, False),
            (256, 3, 1, 1, False), (256, 3, 1, 1, True)]
    for i, (cout, k, s, p, pooled) in enumerate(spec, 1):
        conv(net, f"conv{i}", cout, k, s, p)
        act(net, f"relu{i}")
        if pooled:
            pool(net, f"pool{i}", 3, 2)
    adaptive_pool(net, "avgpool", 6)
    flatten(net, "flatten")
    for i, width in ((6, 4096), (7, 4096)):
        dropout(net, f"drop{i}")
        fc(net, f"fc{i}", width)
        act(net, f"relu{i}")
    fc(net, "fc8", 1000)
    notes = ("torchvision variant (64-192-384-256-256 channels, no LRN, adaptive average "
             "pool to 6x6, identity at 224x224), 1000 classes, 224x224 input. " + _FLOP_NOTE)
    return net.dnn("alexnet", "torchvision.models.alexnet architecture "
                   "(Krizhevsky 2014 'One weird trick' variant)", notes)


_VGG_CFG = {
    "vgg11": (1, 1, 2, 2, 2),
    "vgg16": (2, 2, 3, 3, 3),
}


def vgg(name: str) -> DNN:
    """torchvision's VGG without batch norm: ``"vgg11"`` (config A) or ``"vgg16"`` (config D)."""
    net = Net((3, 224, 224))
    for stage, (reps, width) in enumerate(zip(_VGG_CFG[name], (64, 128, 256, 512, 512)), 1):
        for j in range(1, reps + 1):
            conv(net, f"conv{stage}_{j}", width, 3, 1, 1)
            act(net, f"relu{stage}_{j}")
        pool(net, f"pool{stage}", 2, 2)
    adaptive_pool(net, "avgpool", 7)
    flatten(net, "flatten")
    for i in (6, 7):
        fc(net, f"fc{i}", 4096)
        act(net, f"relu{i}")
        dropout(net, f"drop{i}")
    fc(net, "fc8", 1000)
    notes = ("torchvision variant without batch norm, adaptive average pool to 7x7 "
             "(identity at 224x224), 1000 classes, 224x224 input. " + _FLOP_NOTE)
    return net.dnn(name, f"torchvision.models.{name} architecture (Simonyan & Zisserman 2015)",
                   notes)


# ----------------------------------------------------------------------------- ResNet

def _bottleneck(net: Net, prefix: str, planes: int, stride: int) -> str:
    """torchvision's ``Bottleneck`` (stride on the 3x3 conv, "ResNet v1.5")."""
    x = net.last
    cin = net.shape(x)[0]
    for i, (k, s, p, cout) in enumerate(((1, 1, 0, planes), (3, stride, 1, planes),
                                         (1, 1, 0, 4 * planes)), 1):
        conv(net, f"{prefix}.conv{i}", cout, k, s, p, bias=False)
        norm(net, f"{prefix}.bn{i}")
        if i < 3:
            act(net, f"{prefix}.relu{i}")
    main_path, shortcut = net.last, x
    if stride != 1 or cin != 4 * planes:
        conv(net, f"{prefix}.downsample.0", 4 * planes, 1, stride, bias=False, src=x)
        shortcut = norm(net, f"{prefix}.downsample.1")
    add(net, f"{prefix}.add", [main_path, shortcut])
    return act(net, f"{prefix}.relu3")


def resnet(name: str, blocks: tuple[int, int, int, int]) -> DNN:
    """torchvision's bottleneck ResNet with ``blocks`` per stage (50: 3-4-6-3, 152: 3-8-36-3)."""
    net = Net((3, 224, 224))
    conv(net, "conv1", 64, 7, 2, 3, bias=False)
    norm(net, "bn1")
    act(net, "relu")
    pool(net, "maxpool", 3, 2, 1)
    for stage, (n, planes) in enumerate(zip(blocks, (64, 128, 256, 512)), 1):
        for b in range(n):
            stride = 2 if stage > 1 and b == 0 else 1
            _bottleneck(net, f"layer{stage}.{b}", planes, stride)
    adaptive_pool(net, "avgpool", 1)
    flatten(net, "flatten")
    fc(net, "fc", 1000)
    notes = ("torchvision Bottleneck blocks (stride on the 3x3 conv, 'v1.5'), 1x1 conv + BN "
             "downsample on the first block of each stage, convs without bias, 1000 classes, "
             "224x224 input. Residual joins are 'add' layers listing both producers. "
             + _FLOP_NOTE)
    return net.dnn(name, f"torchvision.models.{name} architecture (He et al. 2016)", notes)


# ----------------------------------------------------------------------------- Inception-v3

def _inception_a(net: Net, p: str, pool_features: int) -> str:
    """torchvision's ``InceptionA`` (35x35 grid); return the concat's name."""
    x = net.last
    b1 = basic_conv(net, f"{p}.branch1x1", 64, 1, src=x)
    basic_conv(net, f"{p}.branch5x5_1", 48, 1, src=x)
    b5 = basic_conv(net, f"{p}.branch5x5_2", 64, 5, padding=2)
    basic_conv(net, f"{p}.branch3x3dbl_1", 64, 1, src=x)
    basic_conv(net, f"{p}.branch3x3dbl_2", 96, 3, padding=1)
    b3 = basic_conv(net, f"{p}.branch3x3dbl_3", 96, 3, padding=1)
    pool(net, f"{p}.avgpool", 3, 1, 1, src=x)
    bp = basic_conv(net, f"{p}.branch_pool", pool_features, 1)
    return concat(net, p, [b1, b5, b3, bp])


def _inception_b(net: Net, p: str) -> str:
    """torchvision's ``InceptionB`` (35x35 -> 17x17 reduction)."""
    x = net.last
    b3 = basic_conv(net, f"{p}.branch3x3", 384, 3, 2, src=x)
    basic_conv(net, f"{p}.branch3x3dbl_1", 64, 1, src=x)
    basic_conv(net, f"{p}.branch3x3dbl_2", 96, 3, padding=1)
    bd = basic_conv(net, f"{p}.branch3x3dbl_3", 96, 3, 2)
    bp = pool(net, f"{p}.maxpool", 3, 2, src=x)
    return concat(net, p, [b3, bd, bp])


def _inception_c(net: Net, p: str, c7: int) -> str:
    """torchvision's ``InceptionC`` (17x17 grid, factorized 7x7 convs with ``c7`` channels)."""
    x, row, col = net.last, ((1, 7), 1, (0, 3)), ((7, 1), 1, (3, 0))
    b1 = basic_conv(net, f"{p}.branch1x1", 192, 1, src=x)
    basic_conv(net, f"{p}.branch7x7_1", c7, 1, src=x)
    basic_conv(net, f"{p}.branch7x7_2", c7, *row)
    b7 = basic_conv(net, f"{p}.branch7x7_3", 192, *col)
    basic_conv(net, f"{p}.branch7x7dbl_1", c7, 1, src=x)
    for i, (geometry, cout) in enumerate(((col, c7), (row, c7), (col, c7), (row, 192)), 2):
        bd = basic_conv(net, f"{p}.branch7x7dbl_{i}", cout, *geometry)
    pool(net, f"{p}.avgpool", 3, 1, 1, src=x)
    bp = basic_conv(net, f"{p}.branch_pool", 192, 1)
    return concat(net, p, [b1, b7, bd, bp])


def _inception_d(net: Net, p: str, src: str) -> str:
    """torchvision's ``InceptionD`` (17x17 -> 8x8 reduction) reading layer ``src``."""
    x = src
    basic_conv(net, f"{p}.branch3x3_1", 192, 1, src=x)
    b3 = basic_conv(net, f"{p}.branch3x3_2", 320, 3, 2)
    basic_conv(net, f"{p}.branch7x7x3_1", 192, 1, src=x)
    basic_conv(net, f"{p}.branch7x7x3_2", 192, (1, 7), 1, (0, 3))
    basic_conv(net, f"{p}.branch7x7x3_3", 192, (7, 1), 1, (3, 0))
    b7 = basic_conv(net, f"{p}.branch7x7x3_4", 192, 3, 2)
    bp = pool(net, f"{p}.maxpool", 3, 2, src=x)
    return concat(net, p, [b3, b7, bp])


def _split_1x3_3x1(net: Net, p: str, src: str, name: str) -> str:
    """The parallel (1,3) and (3,1) convs ``<p>a``, ``<p>b`` of InceptionE, concatenated."""
    a = basic_conv(net, f"{p}a", 384, (1, 3), 1, (0, 1), src=src)
    b = basic_conv(net, f"{p}b", 384, (3, 1), 1, (1, 0), src=src)
    return concat(net, name, [a, b])


def _inception_e(net: Net, p: str) -> str:
    """torchvision's ``InceptionE`` (8x8 grid, expanded filter banks)."""
    x = net.last
    b1 = basic_conv(net, f"{p}.branch1x1", 320, 1, src=x)
    s3 = basic_conv(net, f"{p}.branch3x3_1", 384, 1, src=x)
    b3 = _split_1x3_3x1(net, f"{p}.branch3x3_2", s3, f"{p}.branch3x3")
    basic_conv(net, f"{p}.branch3x3dbl_1", 448, 1, src=x)
    sd = basic_conv(net, f"{p}.branch3x3dbl_2", 384, 3, padding=1)
    bd = _split_1x3_3x1(net, f"{p}.branch3x3dbl_3", sd, f"{p}.branch3x3dbl")
    pool(net, f"{p}.avgpool", 3, 1, 1, src=x)
    bp = basic_conv(net, f"{p}.branch_pool", 192, 1)
    return concat(net, p, [b1, b3, bd, bp])


def _inception_aux(net: Net, p: str) -> None:
    """torchvision's ``InceptionAux`` side classifier (a dead-end branch of the DAG)."""
    x = net.last
    pool(net, f"{p}.avgpool", 5, 3, src=x)
    basic_conv(net, f"{p}.conv0", 128, 1)
    basic_conv(net, f"{p}.conv1", 768, 5)
    adaptive_pool(net, f"{p}.adaptive_avgpool", 1)
    flatten(net, f"{p}.flatten")
    fc(net, f"{p}.fc", 1000)


def _inception_v3_stem(net: Net) -> str:
    """Inception-v3 layers before Mixed_5b (299x299 -> 192x35x35)."""
    basic_conv(net, "Conv2d_1a_3x3", 32, 3, 2)
    basic_conv(net, "Conv2d_2a_3x3", 32, 3)
    basic_conv(net, "Conv2d_2b_3x3", 64, 3, padding=1)
    pool(net, "maxpool1", 3, 2)
    basic_conv(net, "Conv2d_3b_1x1", 80, 1)
    basic_conv(net, "Conv2d_4a_3x3", 192, 3)
    return pool(net, "maxpool2", 3, 2)


def inception_v3() -> DNN:
    """torchvision's Inception-v3 with its auxiliary classifier (27,161,264 parameters)."""
    net = Net((3, 299, 299))
    _inception_v3_stem(net)
    for p, pf in (("Mixed_5b", 32), ("Mixed_5c", 64), ("Mixed_5d", 64)):
        _inception_a(net, p, pf)
    _inception_b(net, "Mixed_6a")
    for p, c7 in (("Mixed_6b", 128), ("Mixed_6c", 160), ("Mixed_6d", 160), ("Mixed_6e", 192)):
        mixed_6e = _inception_c(net, p, c7)
    _inception_aux(net, "AuxLogits")
    _inception_d(net, "Mixed_7a", src=mixed_6e)
    _inception_e(net, "Mixed_7b")
    _inception_e(net, "Mixed_7c")
    adaptive_pool(net, "avgpool", 1)
    dropout(net, "dropout")
    flatten(net, "flatten")
    fc(net, "fc", 1000)
    notes = ("torchvision Inception3 with aux_logits=True (its default): the AuxLogits "
             "classifier (avgpool 5/3, 1x1 conv 128, 5x5 conv 768, fc 1000) is a side "
             "branch read from Mixed_6e; it only runs in training and nothing consumes it. "
             "Mixed_7a reads Mixed_6e. BasicConv2d = conv without bias + BN + ReLU; "
             "1000 classes; 299x299 input. " + _FLOP_NOTE)
    return net.dnn("inception_v3", "torchvision.models.inception_v3 architecture "
                   "(Szegedy et al. 2016)", notes)


# ----------------------------------------------------------------------------- GoogLeNet

#: GoogLeNet body: (name, ch1x1, ch3x3red, ch3x3, ch5x5red, ch5x5, pool_proj) for an
#: Inception block, (name, kernel) for a stride-2 max-pool.
_GOOGLENET = (
    ("inception3a", 64, 96, 128, 16, 32, 32), ("inception3b", 128, 128, 192, 32, 96, 64),
    ("maxpool3", 3), ("inception4a", 192, 96, 208, 16, 48, 64),
    ("inception4b", 160, 112, 224, 24, 64, 64), ("inception4c", 128, 128, 256, 24, 64, 64),
    ("inception4d", 112, 144, 288, 32, 64, 64), ("inception4e", 256, 160, 320, 32, 128, 128),
    ("maxpool4", 2), ("inception5a", 256, 160, 320, 32, 128, 128),
    ("inception5b", 384, 192, 384, 48, 128, 128),
)


def _googlenet_inception(net: Net, p: str, c1: int, c3r: int, c3: int, c5r: int, c5: int,
                         proj: int) -> str:
    """torchvision's GoogLeNet ``Inception`` block (its "5x5" branch uses a 3x3 conv)."""
    x = net.last
    b1 = basic_conv(net, f"{p}.branch1", c1, 1, src=x)
    basic_conv(net, f"{p}.branch2.0", c3r, 1, src=x)
    b2 = basic_conv(net, f"{p}.branch2.1", c3, 3, padding=1)
    basic_conv(net, f"{p}.branch3.0", c5r, 1, src=x)
    b3 = basic_conv(net, f"{p}.branch3.1", c5, 3, padding=1)
    pool(net, f"{p}.branch4.0", 3, 1, 1, ceil=True, src=x)
    b4 = basic_conv(net, f"{p}.branch4.1", proj, 1)
    return concat(net, p, [b1, b2, b3, b4])


def googlenet() -> DNN:
    """torchvision's GoogLeNet without the auxiliary classifiers (6,624,904 parameters)."""
    net = Net((3, 224, 224))
    basic_conv(net, "conv1", 64, 7, 2, 3)
    pool(net, "maxpool1", 3, 2, ceil=True)
    basic_conv(net, "conv2", 64, 1)
    basic_conv(net, "conv3", 192, 3, padding=1)
    pool(net, "maxpool2", 3, 2, ceil=True)
    for name, *channels in _GOOGLENET:
        if len(channels) == 1:
            pool(net, name, channels[0], 2, ceil=True)
        else:
            _googlenet_inception(net, name, *channels)
    adaptive_pool(net, "avgpool", 1)
    flatten(net, "flatten")
    dropout(net, "dropout")
    fc(net, "fc", 1000)
    notes = ("torchvision GoogLeNet as published (6,624,904 parameters): without the two "
             "auxiliary classifiers aux1/aux2 (torchvision drops them from the pretrained "
             "model). BasicConv2d = conv without bias + BN + ReLU; max-pools use "
             "ceil_mode; the 'branch3' of each Inception block uses a 3x3 conv as in "
             "torchvision; 1000 classes; 224x224 input. " + _FLOP_NOTE)
    return net.dnn("googlenet", "torchvision.models.googlenet architecture "
                   "(Szegedy et al. 2015)", notes)


# ------------------------------------------------------------------- Adam (Yan et al. 2015)

#: "The DNN architectures restricted us to model-parallelism of <= 4" (Yan et al. 2015, fn. 7).
ADAM_MAX_WORKERS = 4

_ADAM_NOTE = ("Yan et al. 2015 Sec. 6 (after Chilimbi et al., Project Adam, OSDI 2014) gives "
              "only the totals; the layer shapes are assumptions of this zoo chosen to match "
              "them. Model parallelism is limited to 4 workers per replica (Sec. 6.2, footnote "
              "7: the DNN architectures restricted it). "
              "Pooling is fused into the conv layers (the papers' layer count): a conv "
              "layer's out_shape is the pooled shape, its connections are the convolution's "
              "MACs, and its neurons the pooled outputs. The softmax layer is the "
              "fully connected output layer (weights and connections like an fc layer). "
              "Biases are counted in weights. flops = 2*connections.")


def adam_mnist() -> DNN:
    """Yan et al. 2015's MNIST DNN: ~2.5 M connections in 5 layers.

    2 conv, 2 fc and a 10-way softmax layer.
    """
    net = Net((1, 28, 28))
    conv(net, "conv1", 20, 5, pool_size=2)
    conv(net, "conv2", 50, 5, pool_size=2)
    fc(net, "fc1", 500)
    fc(net, "fc2", 500)
    softmax(net, "softmax", 10)
    notes = ("Assumed shapes (LeNet-style): input 1x28x28; conv1 5x5 stride 1 no padding, "
             "1->20 channels (24x24) + 2x2 max-pool -> 20x12x12; conv2 5x5, 20->50 (8x8) + "
             "2x2 max-pool -> 50x4x4; fc1 800->500; fc2 500->500; softmax 500->10. "
             "Connections 288,000 + 1,600,000 + 400,000 + 250,000 + 5,000 = 2,543,000 "
             "(paper: about 2.5 million); 681,580 parameters (2.7 MB of 4-byte weights, "
             "0.27 per connection, 96 % in fc1, fc2 and softmax). Kept over conv-heavier, "
             "weight-lighter variants: Yan et al. 2015's Table 1 needs MNIST's weight reads to "
             "matter (tests/test_table1.py). " + _ADAM_NOTE)
    return net.dnn("adam-mnist", "Yan et al. 2015 Sec. 6 MNIST benchmark DNN (Adam, Chilimbi et al. "
                   "OSDI 2014); shapes assumed", notes, max_workers_per_replica=ADAM_MAX_WORKERS)


def adam_imagenet22k() -> DNN:
    """Yan et al. 2015's ImageNet-22K DNN: >2 billion connections in 8 layers.

    5 conv, 2 fc and a softmax layer.
    """
    net = Net((3, 256, 256))
    conv(net, "conv1", 96, 7, 2, 3, pool_size=2)
    conv(net, "conv2", 256, 5, 2, 2)
    conv(net, "conv3", 384, 3, 1, 1, pool_size=2)
    conv(net, "conv4", 384, 3, 1, 1)
    conv(net, "conv5", 256, 3, 1, 1, pool_size=2)
    fc(net, "fc6", 4096)
    fc(net, "fc7", 4096)
    softmax(net, "softmax", 22000)
    notes = ("Assumed shapes (AlexNet-like, widened for 256x256 input): input 3x256x256; "
             "conv1 7x7 stride 2 pad 3, 3->96 (128x128) + 2x2 max-pool -> 96x64x64; "
             "conv2 5x5 stride 2 pad 2, 96->256 -> 256x32x32; conv3 3x3 pad 1, 256->384 "
             "(32x32) + 2x2 max-pool -> 384x16x16; conv4 3x3 pad 1, 384->384 -> 384x16x16; "
             "conv5 3x3 pad 1, 384->256 (16x16) + 2x2 max-pool -> 256x8x8; fc6 16384->4096; "
             "fc7 4096->4096; softmax 4096->22000. Total 2,506,555,392 connections (paper: "
             "over 2 billion), 93 % in the conv layers; 177,754,736 parameters (711 MB of "
             "4-byte weights, 0.07 per connection, 98 % in fc6, fc7 and softmax). " + _ADAM_NOTE)
    return net.dnn("adam-imagenet22k", "Yan et al. 2015 Sec. 6 ImageNet-22K benchmark DNN (Adam, "
                   "Chilimbi et al. OSDI 2014); shapes assumed", notes,
                   max_workers_per_replica=ADAM_MAX_WORKERS)


# ----------------------------------------------------------------------------- files

#: Zoo name -> function building that DNN.
BUILDERS = {
    "alexnet": alexnet,
    "vgg11": partial(vgg, "vgg11"),
    "vgg16": partial(vgg, "vgg16"),
    "resnet50": partial(resnet, "resnet50", (3, 4, 6, 3)),
    "resnet152": partial(resnet, "resnet152", (3, 8, 36, 3)),
    "inception_v3": inception_v3,
    "googlenet": googlenet,
    "adam-mnist": adam_mnist,
    "adam-imagenet22k": adam_imagenet22k,
}


def build(name: str) -> DNN:
    """Build the zoo DNN called ``name`` in memory (see :data:`BUILDERS`)."""
    if name not in BUILDERS:
        raise KeyError(f"no builder for {name!r} (known: {', '.join(BUILDERS)})")
    return BUILDERS[name]()


def render(dnn: DNN) -> str:
    """The JSON text of ``dnn.to_dict()``: header fields, then one layer per line."""
    data = dnn.to_dict()
    layers = data.pop("layers")
    head = "".join(f" {json.dumps(key)}: {json.dumps(value)},\n" for key, value in data.items())
    rows = ",\n".join(json.dumps(layer, separators=(",", ":")) for layer in layers)
    return f'{{\n{head} "layers": [\n{rows}\n ]\n}}\n'


def write_all(folder: str | Path = DNN_DIR) -> list[Path]:
    """(Re)write every zoo DNN as ``<folder>/<name>.json``; return the paths written."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in BUILDERS:
        path = folder / f"{name}.json"
        path.write_text(render(build(name)), encoding="utf-8")
        paths.append(path)
    return paths


def main() -> None:
    """Entry point of ``python -m perfmodel.zoo._build``: write the files, print a summary."""
    for path in write_all():
        dnn = build(path.stem)
        print(f"{path.stem:18s} {len(dnn.layers):4d} layers {dnn.n_params:>12,d} params "
              f"{dnn.n_connections:>15,d} MACs  {path.stat().st_size:>7,d} B")


if __name__ == "__main__":
    main()
