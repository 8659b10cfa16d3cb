"""Connectivity of stripe-partitioned layers (Yan et al. 2015, Sec. 4.1, footnote 3).

Yan et al. 2015 cut every layer l into P(l) *segments* and, "for clarity", assume
*stripe* partitioning (footnote 3).  This module turns a pair of chained
:class:`~perfmodel.specs.Layer` specs and their segment counts into the counts
the layer-wise model (eqs. 5-8) and the optimizer (Sec. 5.3) need: neurons
N_neuron(l, p), weighted connections W(l, p), parameters held, and the matrices
of activations and error terms crossing segment boundaries, from which the
remote counts A(l, p) (eq. 6) and E(l, p) (the M_b equation after eq. 7) follow
for any segment-to-worker mapping.  Everything here is a count (no SI units);
functions are pure and return numpy integer arrays.

The public functions check their arguments.  The fast paths the optimizer's
inner loops call many times with the same arguments, :func:`cached_segment_sizes`
and :func:`cached_transfer_matrix` (with :func:`is_dense_pair`,
:func:`stripe_units`, :func:`is_spatial`), skip the checks; the cached ones
return read-only arrays.

Stripes
-------
A layer whose ``out_shape`` is spatial, ``[C, H, W]``, is cut along its rows:
segment p of P holds rows ``[floor(p*H/P), floor((p+1)*H/P))`` with every
channel and column.  Any other ``out_shape`` (``[N]``, or a rank other than 3)
is cut the same way along its flattened neurons.  ``P`` may exceed the number
of rows (or neurons): the extra stripes are *empty* and every count for them is
zero (no capping, so that a P chosen for one layer can be applied to any).

Connectivity rules, by the kind of the consuming layer
------------------------------------------------------
The *producer* is the layer feeding the consumer (the previous layer, or one of
``consumer.inputs``).  Its ``out_shape`` must chain with the consumer's
``in_shape`` (equal shapes; for ``concat`` a branch with the same H, W and no
more channels; or any reshape with the same number of elements), else
:class:`~perfmodel.errors.SpecError`.

* ``fc``, ``softmax``, ``embedding``, ``rnn``, ``other`` -- **dense**: every
  consumer neuron reads every producer activation (also after a spatial
  producer, i.e. flatten -> fc).  ``embedding``/``rnn``/``other`` are dense
  because their specs carry no geometry (a conservative upper bound).
* ``conv``, ``pool`` -- **windowed**: output row y reads input rows
  ``[y*s - pad, y*s - pad + k)`` clipped to ``[0, H_in)``, columns likewise;
  an output neuron reads every input channel of its group, so a stripe reads
  *all* ``C_in`` channels of the rows it reaches (also with ``groups``).  The
  geometry is resolved per axis from ``kernel``/``stride``/``padding`` and the
  in/out sizes:

  - out size = floor or ceil of ``(H_in + 2 pad - k) / s + 1`` (ceil-mode
    pools): the plain windows above, the ones past the edge clipped;
  - conv size divisible by the out size (a pooling fused into the conv, as in
    the zoo's DNNs from Yan et al. 2015): output y reads the union of the windows of conv
    outputs ``y f .. y f + f - 1``, f = conv size / out size (non-overlapping
    f x f pooling; the window ``k + (f-1) s`` wide with stride ``f s`` when
    ``k >= s``);
  - no ``kernel`` on a ``pool``: adaptive pooling (PyTorch's exact rule, rows
    ``[floor(y H_in/H_out), ceil((y+1) H_in/H_out))``);
  - anything else (a ``conv`` without kernel, unexplained sizes): that axis
    is dense (every output row reads every row of the input).

  A conv/pool whose shapes are not spatial, or whose producer only reshapes
  into its ``in_shape`` (same element count, different shape), is dense.

  Only the columns some window reaches are counted, so a stripe of a 1x1
  stride-2 conv reads half the columns of its rows (exact, where ``C_in *
  W_in`` would overcount).
* ``act``, ``norm``, ``dropout``, ``add``, ``lrn``, ``concat``, ``flatten`` --
  **one-to-one**: element e of the consumer reads element e of the producer
  (for ``concat`` the producer's channel slice; the slice's position does not
  change row counts).  Row stripes of equal H, W overlap row by row;
  spatial <-> flat (``flatten``) is mapped exactly through the flattened
  index ``c*H*W + y*W + x``.  A flat ``concat`` branch (unknown offset) and a
  reshape between two different spatial shapes fall back to dense.  ``norm``
  is treated as element-wise: the per-channel statistics a spatially cut batch
  norm would reduce across stripes (2 C values) are ignored.
* ``input`` -- has no producer: :class:`~perfmodel.errors.SpecError`.

Matrices are oriented producer x consumer: ``activation_matrix(prev, layer,
P_prev, P)[i, j]`` counts the distinct activations of producer segment i that
consumer segment j reads; ``error_matrix(layer, next_layer, P, P_next)[i, j]``
counts the distinct error terms of consumer (layer l+1) segment j that producer
(layer l) segment i needs, i.e. the layer-(l+1) neurons of stripe j connected
to a neuron of stripe i.

Examples
--------
>>> from perfmodel.specs import Layer
>>> prev = Layer(name="c0", kind="conv", out_shape=(2, 6, 5))
>>> conv = Layer(name="c1", kind="conv", in_shape=(2, 6, 5), out_shape=(4, 6, 5),
...              kernel=3, stride=1, padding=1, connections=2160)
>>> activation_matrix(prev, conv, 2, 3)        # halo of one row, 2 * 5 values per row
array([[30, 20,  0],
       [ 0, 20, 30]])
>>> remote_counts(activation_matrix(prev, conv, 2, 3), [0, 1], [0, 1, 1])   # A(l, p)
array([ 0, 20,  0])

References
----------
Yan, Ruwase, He, Chilimbi 2015, "Performance Modeling and Scalability
Optimization of Distributed Deep Learning Systems" (KDD): Sec. 4.1 (eqs. 5-8,
footnote 3) and Sec. 5.3 (segment-to-worker mapping by bipartite matching).
"""

from __future__ import annotations

import functools
import math
import numbers

import numpy as np

from .errors import SpecError
from .specs import Layer

__all__ = [
    "DENSE_KINDS", "WINDOWED_KINDS", "ONE_TO_ONE_KINDS",
    "stripe_bounds", "segment_sizes", "segment_weights", "segment_params",
    "activation_matrix", "error_matrix", "connection_matrix",
    "remote_counts", "remote_activations", "remote_errors", "worker_affinity",
    "is_spatial", "stripe_units", "is_dense_pair", "cached_segment_sizes", "cached_transfer_matrix",
]

#: Kinds whose every neuron reads every activation of the producer.
DENSE_KINDS = ("fc", "softmax", "embedding", "rnn", "other")
#: Kinds whose neurons read a kernel window of rows and columns.
WINDOWED_KINDS = ("conv", "pool")
#: Kinds whose element e reads element e of the producer.
ONE_TO_ONE_KINDS = ("act", "norm", "dropout", "add", "lrn", "concat", "flatten")


# ------------------------------------------------------------------ checking
def _count(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (
            isinstance(value, numbers.Integral) or float(value).is_integer()):
        raise SpecError(name, f"expected an integer, got {value!r}")
    if value < minimum:
        raise SpecError(name, f"must be >= {minimum}, got {value!r}")
    return int(value)


def _layer(name: str, value) -> Layer:
    if not isinstance(value, Layer):
        raise SpecError(name, f"expected a Layer, got {type(value).__name__}")
    return value


def is_spatial(shape) -> bool:
    """True when ``shape`` is spatial, ``[C, H, W]``: its stripes cut rows, not neurons.

    Parameters
    ----------
    shape : sequence of int
        A layer's ``out_shape`` or ``in_shape``.

    Returns
    -------
    bool
        ``len(shape) == 3``.

    Examples
    --------
    >>> is_spatial((64, 56, 56)), is_spatial((1000,))
    (True, False)
    """
    return len(shape) == 3


def _chain(prev: Layer, layer: Layer, name: str = "layer") -> tuple:
    """The consumer's input shape, after checking that ``prev`` can feed it."""
    src = tuple(prev.out_shape)
    dst = tuple(layer.in_shape) if layer.in_shape is not None else src
    if layer.kind == "input":
        raise SpecError(f"{name}.kind", f"{layer.name!r} is an input layer: it has no producer")
    branch = (layer.kind == "concat" and len(src) == len(dst) and src[1:] == dst[1:]
              and src[0] <= dst[0])
    if src != dst and not branch and math.prod(src) != math.prod(dst):
        raise SpecError(f"{name}.in_shape", f"{layer.name!r} expects input {list(dst)} but "
                                            f"{prev.name!r} produces {list(src)}")
    return dst


# ------------------------------------------------------------------ stripes
def stripe_bounds(n: int, parts: int) -> np.ndarray:
    """Half-open index ranges of ``parts`` stripes cutting ``n`` rows or neurons.

    Stripe p is ``[floor(p*n/parts), floor((p+1)*n/parts))``: sizes differ by at
    most one, and stripes are empty when ``parts > n``.

    Parameters
    ----------
    n : int
        Rows (spatial layers) or neurons (flat layers), >= 0.
    parts : int
        Number of segments P(l), >= 1.

    Returns
    -------
    numpy.ndarray of int, shape (parts, 2)
        ``[start, stop)`` of each stripe.

    Examples
    --------
    >>> stripe_bounds(7, 3)
    array([[0, 2],
           [2, 4],
           [4, 7]])

    References
    ----------
    Yan et al. 2015, Sec. 4.1, footnote 3 (stripe partitioning).
    """
    n = _count("n", n, 0)
    parts = _count("parts", parts, 1)
    edges = np.arange(parts + 1, dtype=np.int64) * n // parts
    return np.stack([edges[:-1], edges[1:]], axis=1)


def stripe_units(layer: Layer) -> int:
    """Rows (spatial ``out_shape``) or neurons (any other) along which the stripes of ``layer`` cut.

    A P above this count leaves empty stripes (module docstring).  No
    argument check: ``layer`` must be a :class:`~perfmodel.specs.Layer`.

    Parameters
    ----------
    layer : Layer

    Returns
    -------
    int
        ``H`` of a ``[C, H, W]`` out_shape, else the product of the out_shape.

    Examples
    --------
    >>> stripe_units(Layer(name="c", kind="conv", out_shape=(4, 6, 5)))
    6
    """
    shape = layer.out_shape
    return shape[1] if is_spatial(shape) else math.prod(shape)


def _split(total: int, units: int, parts: int) -> np.ndarray:
    """Split ``total`` over stripes in proportion to their units (cumulative floor).

    Exact (``total * size / units``) when ``units`` divides ``total``, and the
    parts always sum to ``total``.
    """
    edges = np.arange(parts + 1, dtype=np.int64) * units // parts
    return np.diff(int(total) * edges // units)


def segment_sizes(layer: Layer, parts: int) -> np.ndarray:
    """Neurons N_neuron(l, p) of each of the ``parts`` stripes of ``layer``.

    Parameters
    ----------
    layer : Layer
    parts : int
        P(l) >= 1.

    Returns
    -------
    numpy.ndarray of int, shape (parts,)
        Sums to ``layer.neurons``; ``rows_in_stripe * C * W`` for ``[C, H, W]``.

    References
    ----------
    Yan et al. 2015, Sec. 4.1, eq. 5 (N_neuron(l, p)), footnote 3.
    """
    layer = _layer("layer", layer)
    return _split(layer.neurons, stripe_units(layer), _count("parts", parts, 1))


def segment_weights(layer: Layer, parts: int) -> np.ndarray:
    """Weighted connections W(l, p) into each stripe, per sample.

    ``layer.connections`` shared out by the stripe's share of rows (spatial) or
    neurons (flat).  For a conv with explicit geometry this is exactly
    ``rows * C_out * W_out * (C_in / groups) * kh * kw``; for fc it is
    ``neurons_in_segment * in_features``; for a conv with a fused pooling it is
    the convolution's multiply-adds of the pooled rows' share.

    Parameters
    ----------
    layer : Layer
    parts : int
        P(l) >= 1.

    Returns
    -------
    numpy.ndarray of int, shape (parts,)
        Sums to ``layer.connections``.

    References
    ----------
    Yan et al. 2015, Sec. 4.1, eqs. 5 and 8 (W(l, p)).
    """
    layer = _layer("layer", layer)
    return _split(layer.connections, stripe_units(layer), _count("parts", parts, 1))


def segment_params(layer: Layer, parts: int) -> np.ndarray:
    """Trainable parameters each stripe of ``layer`` holds (for the cache model).

    A spatial stripe computes every output channel of its rows, so it needs the
    *whole* kernel (and the per-channel norm parameters): parameters of layers
    with a ``[C, H, W]`` out_shape are **replicated**, not split, and the
    segments hold ``P * weights`` in total.  A flat layer (fc, softmax, flat
    norm ...) is split by output neurons: a segment holds the weight rows of
    its own neurons.  Empty stripes hold nothing.

    Parameters
    ----------
    layer : Layer
    parts : int
        P(l) >= 1.

    Returns
    -------
    numpy.ndarray of int, shape (parts,)

    References
    ----------
    Yan et al. 2015, Sec. 4.1 (weights stay with their segment: no weight traffic in
    model parallelism) and Sec. 4.2 (cache effects of partitioning).
    """
    layer = _layer("layer", layer)
    parts = _count("parts", parts, 1)
    units = stripe_units(layer)
    if is_spatial(layer.out_shape):
        return np.where(np.diff(stripe_bounds(units, parts), axis=1)[:, 0] > 0,
                        int(layer.weights), 0)
    return _split(layer.weights, units, parts)


# ------------------------------------------------------------------ windows
def _resolve(n_in: int, n_out: int, k, s, p, kind: str):
    """Per-axis geometry ``(k, s, pad, f)`` (f: fused pooling factor), ``"adaptive"`` or
    ``None`` (dense)."""
    if k is None:
        return "adaptive" if kind == "pool" else None
    span = n_in + 2 * p - k
    if span < 0:
        return None
    floor_out, ceil_out = span // s + 1, -(-span // s) + 1
    if n_out in (floor_out, ceil_out):
        return k, s, p, 1
    if floor_out % n_out == 0:
        return k, s, p, floor_out // n_out
    return None


@functools.lru_cache(maxsize=4096)
def _windows(layer: Layer, axis: int, n_in: int, n_out: int):
    """:func:`_windows_uncached`, cached (they do not depend on the segment counts) and
    read-only."""
    start, end = _windows_uncached(layer, axis, n_in, n_out)
    start.setflags(write=False)
    end.setflags(write=False)
    return start, end


def _windows_uncached(layer: Layer, axis: int, n_in: int, n_out: int):
    """Clipped input windows ``[start, end)`` of every output index along ``axis``.

    Arrays of shape (n_out, f): output y of a conv with a fused f-wide pooling
    reads the union of the windows of conv outputs ``y*f .. y*f + f - 1``
    (a union with gaps when the kernel is narrower than the stride).
    """
    def pick(t, d):
        return d if t is None else t[axis]
    rule = _resolve(n_in, n_out, pick(layer.kernel, None), pick(layer.stride, 1),
                    pick(layer.padding, 0), layer.kind)
    y = np.arange(n_out, dtype=np.int64)[:, None]
    if rule is None:
        start, end = np.zeros_like(y), np.full_like(y, n_in)
    elif rule == "adaptive":
        start, end = y * n_in // n_out, -(-(y + 1) * n_in // n_out)
    else:
        k, s, p, f = rule
        start = (y * f + np.arange(f)) * s - p
        end = start + k
    start, end = np.clip(start, 0, n_in), np.clip(end, 0, n_in)
    return start, np.maximum(start, end)


def _cumulative(mask: np.ndarray) -> np.ndarray:
    """Prefix sums along the last axis with a leading zero."""
    pad = np.zeros(mask.shape[:-1] + (1,), dtype=np.int64)
    return np.concatenate([pad, np.cumsum(mask, axis=-1, dtype=np.int64)], axis=-1)


def _read_counts(start, end, out_bounds, in_bounds, n_in) -> np.ndarray:
    """[i, j]: input indices of in-stripe i inside a window of out-stripe j."""
    seg = np.repeat(np.arange(len(out_bounds)), np.diff(out_bounds, axis=1)[:, 0])
    seg = np.broadcast_to(seg[:, None], start.shape)
    diff = np.zeros((len(out_bounds), n_in + 1), dtype=np.int64)
    np.add.at(diff, (seg, start), 1)
    np.add.at(diff, (seg, end), -1)
    covered = _cumulative(np.cumsum(diff, axis=1)[:, :n_in] > 0)
    return (covered[:, in_bounds[:, 1]] - covered[:, in_bounds[:, 0]]).T


def _hit_counts(start, end, out_bounds, in_bounds) -> np.ndarray:
    """[i, j]: output indices of out-stripe j with a window meeting in-stripe i."""
    lo, hi = in_bounds[:, :1, None], in_bounds[:, 1:, None]
    hit = ((start < end) & (start < hi) & (end > lo) & (lo < hi)).any(axis=2)
    cum = _cumulative(hit)
    return cum[:, out_bounds[:, 1]] - cum[:, out_bounds[:, 0]]


def _windowed(prev: Layer, layer: Layer, p_prev: int, p: int, errors: bool) -> np.ndarray:
    (c_in, h_in, w_in), (c_out, h_out, w_out) = prev.out_shape, layer.out_shape
    rows = _windows(layer, 0, h_in, h_out)
    in_b, out_b = _stripes(h_in, p_prev), _stripes(h_out, p)
    if errors:
        n_cols = _column_hits(layer, w_in, w_out)
        return _hit_counts(*rows, out_b, in_b) * c_out * n_cols
    n_cols = _column_reads(layer, w_in, w_out)
    return _read_counts(*rows, out_b, in_b, h_in) * c_in * n_cols


@functools.lru_cache(maxsize=65536)
def _stripes(n: int, parts: int) -> np.ndarray:
    """:func:`stripe_bounds` without the argument checks, cached and read-only."""
    edges = np.arange(parts + 1, dtype=np.int64) * n // parts
    out = np.stack([edges[:-1], edges[1:]], axis=1)
    out.setflags(write=False)
    return out


@functools.lru_cache(maxsize=4096)
def _column_hits(layer: Layer, w_in: int, w_out: int) -> int:
    """Input columns some output column's window meets (one stripe of all columns)."""
    return int(_hit_counts(*_windows(layer, 1, w_in, w_out), _stripes(w_out, 1),
                           _stripes(w_in, 1))[0, 0])


@functools.lru_cache(maxsize=4096)
def _column_reads(layer: Layer, w_in: int, w_out: int) -> int:
    """Distinct input columns the windows of all output columns read."""
    return int(_read_counts(*_windows(layer, 1, w_in, w_out), _stripes(w_out, 1),
                            _stripes(w_in, 1), w_in)[0, 0])


# ------------------------------------------------------------------ one-to-one
def _overlap(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """[i, j]: length of the intersection of ranges a[i] and b[j]."""
    lo = np.maximum(a[:, None, 0], b[None, :, 0])
    return np.maximum(np.minimum(a[:, None, 1], b[None, :, 1]) - lo, 0)


def _flat_in_rows(shape, rows: np.ndarray, flat: np.ndarray) -> np.ndarray:
    """[i, j]: flat indices in ``flat[j]`` whose row in ``shape`` [C, H, W] is in ``rows[i]``."""
    _, h, w = shape

    def below(m, r):  # indices n < m with (n // w) % h < r
        return (m // (h * w)) * r * w + np.minimum(m % (h * w), r * w)

    m0, m1 = flat[None, :, 0], flat[None, :, 1]
    r0, r1 = rows[:, None, 0], rows[:, None, 1]
    return below(m1, r1) - below(m1, r0) - below(m0, r1) + below(m0, r0)


def _one_to_one(prev: Layer, layer: Layer, p_prev: int, p: int, dense) -> np.ndarray:
    src, dst = tuple(prev.out_shape), tuple(layer.out_shape)
    a, b = stripe_bounds(stripe_units(prev), p_prev), stripe_bounds(stripe_units(layer), p)
    if is_spatial(src) and is_spatial(dst) and src[1:] == dst[1:] and src[0] <= dst[0]:
        return _overlap(a, b) * src[0] * src[2]
    if math.prod(src) != math.prod(dst):
        return dense()
    if is_spatial(src) and not is_spatial(dst):
        return _flat_in_rows(src, a, b)
    if is_spatial(dst) and not is_spatial(src):
        return _flat_in_rows(dst, b, a).T
    if not is_spatial(src) and not is_spatial(dst):
        return _overlap(a, b)
    return dense()


# ------------------------------------------------------------------ matrices
def _dense(prev: Layer, layer: Layer, p_prev: int, p: int, errors: bool) -> np.ndarray:
    src, dst = cached_segment_sizes(prev, p_prev), cached_segment_sizes(layer, p)
    if errors:
        return (src[:, None] > 0) * dst[None, :]
    return src[:, None] * (dst[None, :] > 0)


@functools.lru_cache(maxsize=65536)
def cached_transfer_matrix(prev: Layer, layer: Layer, p_prev: int, p: int,
                           errors: bool) -> np.ndarray:
    """:func:`activation_matrix` or :func:`error_matrix` without argument checks, cached.

    The fast path for callers that ask for the same pairs many times (the
    optimizer's dynamic program): the arguments are trusted, and the result
    is cached and read-only, so that no caller can change the cached copy.

    Parameters
    ----------
    prev, layer : Layer
        Producer and consumer (layers l-1 and l).
    p_prev, p : int
        Their segment counts, each >= 1 (not checked).
    errors : bool
        False: ``activation_matrix(prev, layer, p_prev, p)``; True:
        ``error_matrix(prev, layer, p_prev, p)``.

    Returns
    -------
    numpy.ndarray of int, shape (p_prev, p), read-only

    Raises
    ------
    SpecError
        Shapes that do not chain.
    """
    out = np.asarray(_matrix_uncached(prev, layer, p_prev, p, errors))
    out.setflags(write=False)
    return out


def _matrix_uncached(prev: Layer, layer: Layer, p_prev: int, p: int, errors: bool) -> np.ndarray:
    in_shape = _chain(prev, layer)
    def dense():
        return _dense(prev, layer, p_prev, p, errors)
    if layer.kind in ONE_TO_ONE_KINDS:
        return _one_to_one(prev, layer, p_prev, p, dense)
    if (layer.kind in WINDOWED_KINDS and is_spatial(layer.out_shape)
            and is_spatial(in_shape) and tuple(prev.out_shape) == in_shape):
        return _windowed(prev, layer, p_prev, p, errors)
    return dense()


@functools.lru_cache(maxsize=4096)
def is_dense_pair(prev: Layer, layer: Layer) -> bool:
    """True when ``layer`` reads ``prev`` densely, whatever the segment counts.

    Dense: every consumer neuron reads every producer activation, so the
    connection matrices depend only on the segment sizes (the optimizer
    prices such pairs in closed form).  The same branch test as the matrices
    use, without building one; ``one-to-one`` kinds, which fall back to dense
    only for some shapes, answer False (conservative).  Cached; no argument
    check beyond the chaining of the shapes.

    Parameters
    ----------
    prev, layer : Layer
        Producer and consumer (layers l-1 and l).

    Returns
    -------
    bool

    Raises
    ------
    SpecError
        Shapes that do not chain.

    Examples
    --------
    >>> conv = Layer(name="c", kind="conv", out_shape=(4, 6, 5))
    >>> is_dense_pair(conv, Layer(name="fc", kind="fc", in_shape=(4, 6, 5), out_shape=(10,)))
    True
    """
    in_shape = _chain(prev, layer)
    if layer.kind in ONE_TO_ONE_KINDS:
        return False
    return not (layer.kind in WINDOWED_KINDS and is_spatial(layer.out_shape)
                and is_spatial(in_shape) and tuple(prev.out_shape) == in_shape)


@functools.lru_cache(maxsize=65536)
def cached_segment_sizes(layer: Layer, parts: int) -> np.ndarray:
    """:func:`segment_sizes` without the argument checks, cached and read-only.

    The fast path for callers that ask for the same counts many times (the
    optimizer's dynamic program).

    Parameters
    ----------
    layer : Layer
    parts : int
        P(l) >= 1 (not checked).

    Returns
    -------
    numpy.ndarray of int, shape (parts,), read-only
        Neurons N_neuron(l, p) of each stripe.

    Examples
    --------
    >>> cached_segment_sizes(Layer(name="fc", kind="fc", out_shape=(10,)), 4)
    array([2, 3, 2, 3])
    """
    out = _split(layer.neurons, stripe_units(layer), parts)
    out.setflags(write=False)
    return out


def activation_matrix(prev: Layer, layer: Layer, p_prev: int, p: int) -> np.ndarray:
    """Distinct activations of each segment of ``prev`` read by each segment of ``layer``.

    Parameters
    ----------
    prev : Layer
        The producer, layer l-1 (or the input of ``layer`` in a DAG).
    layer : Layer
        The consumer, layer l.
    p_prev, p : int
        Segments P(l-1) and P(l), each >= 1.

    Returns
    -------
    numpy.ndarray of int, shape (p_prev, p)
        ``[i, j]`` = activations of segment i of ``prev`` that segment j of
        ``layer`` needs in the forward pass (each counted once however many of
        j's neurons read it).  Column j summed over the segments on other
        workers is A(l, j) of eq. 6 (:func:`remote_activations`).  The rule per
        kind is in the module docstring.

    Raises
    ------
    SpecError
        ``p_prev`` or ``p`` < 1, an argument that is not a Layer, or shapes
        that do not chain.

    References
    ----------
    Yan et al. 2015, Sec. 4.1.1, eq. 6 (A(l, p)); footnote 3 (stripes).
    """
    prev, layer = _layer("prev", prev), _layer("layer", layer)
    p_prev, p = _count("p_prev", p_prev, 1), _count("p", p, 1)
    return cached_transfer_matrix(prev, layer, p_prev, p, errors=False)


def error_matrix(layer: Layer, next_layer: Layer, p: int, p_next: int) -> np.ndarray:
    """Distinct error terms of each segment of ``next_layer`` needed by each segment of ``layer``.

    Parameters
    ----------
    layer : Layer
        Layer l, the producer of ``next_layer``.
    next_layer : Layer
        Layer l+1 (a consumer of ``layer``).
    p, p_next : int
        Segments P(l) and P(l+1), each >= 1.

    Returns
    -------
    numpy.ndarray of int, shape (p, p_next)
        ``[i, j]`` = neurons of segment j of ``next_layer`` connected to any
        neuron of segment i of ``layer``: the error terms i receives from j in
        back-propagation.  Row i summed over the segments on other workers is
        E(l, i) (:func:`remote_errors`).

    Raises
    ------
    SpecError
        ``p`` or ``p_next`` < 1, an argument that is not a Layer, or shapes
        that do not chain.

    References
    ----------
    Yan et al. 2015, Sec. 4.1.2, eq. 7 and the M_b equation (E(l, p)).
    """
    layer, next_layer = _layer("layer", layer), _layer("next_layer", next_layer)
    p, p_next = _count("p", p, 1), _count("p_next", p_next, 1)
    return cached_transfer_matrix(layer, next_layer, p, p_next, errors=True)


def connection_matrix(prev: Layer, layer: Layer, p_prev: int, p: int, *,
                      backward: bool = True) -> np.ndarray:
    """Traffic saved per sample by co-locating segment i of ``prev`` with segment j of ``layer``.

    The weight the optimizer's maximum-weight bipartite matching (Yan et al.
    2015, Sec. 5.3) maximizes: activations i sends to j in the forward pass plus,
    with ``backward=True``, the error terms j sends back to i.  Both flows
    vanish from the network when i and j share a worker, so minimizing remote
    connections is maximizing the matched weight.  Use :func:`worker_affinity`
    to turn it into a worker x segment weight once ``prev`` is mapped.

    Parameters
    ----------
    prev, layer : Layer
        Producer (layer l-1) and consumer (layer l).
    p_prev, p : int
        Segments P(l-1) and P(l), each >= 1.
    backward : bool, optional
        Add the back-propagated error terms (default) or count activations only.

    Returns
    -------
    numpy.ndarray of int, shape (p_prev, p)
        ``activation_matrix(prev, layer, p_prev, p)`` (+ ``error_matrix(prev,
        layer, p_prev, p)``).

    References
    ----------
    Yan et al. 2015, Sec. 5.3 (segment-worker mapping, bipartite matching); eqs. 6-7.
    """
    saved = activation_matrix(prev, layer, p_prev, p)
    return saved + error_matrix(prev, layer, p_prev, p) if backward else saved


# ------------------------------------------------------------------ workers
def _workers(name: str, workers, n: int | None = None) -> np.ndarray:
    """``workers`` as a 1-D array of one worker id per segment (``n`` of them if given)."""
    arr = np.asarray(workers)
    if arr.ndim != 1 or len(arr) == 0 or (n is not None and len(arr) != n):
        want = "at least one" if n is None else str(n)
        raise SpecError(name, f"needs one worker per segment ({want}), got {workers!r}")
    return arr


def remote_counts(matrix, src_workers, dst_workers) -> np.ndarray:
    """Per destination segment, the items it receives from segments on other workers.

    Parameters
    ----------
    matrix : array_like, shape (n_src, n_dst)
        Items segment i sends to segment j (:func:`activation_matrix`, or the
        transpose of :func:`error_matrix`).
    src_workers : array_like, shape (n_src,)
        Worker id of each source segment.
    dst_workers : array_like, shape (n_dst,)
        Worker id of each destination segment.

    Returns
    -------
    numpy.ndarray, shape (n_dst,)
        ``sum_i matrix[i, j] * (src_workers[i] != dst_workers[j])``.

    Examples
    --------
    >>> remote_counts([[5, 1], [2, 7]], [0, 1], [0, 1])
    array([2, 1])

    References
    ----------
    Yan et al. 2015, Sec. 4.1, eq. 6 (A(l, p)) and the M_b equation (E(l, p)).
    """
    mat = np.asarray(matrix)
    if mat.ndim != 2:
        raise SpecError("matrix", f"must be 2-D (sources x destinations), got shape {mat.shape}")
    src = _workers("src_workers", src_workers, mat.shape[0])
    dst = _workers("dst_workers", dst_workers, mat.shape[1])
    return (mat * (src[:, None] != dst[None, :])).sum(axis=0)


def remote_activations(prev: Layer, layer: Layer, prev_workers, workers) -> np.ndarray:
    """A(l, p): remote activations each segment of ``layer`` receives from ``prev`` (eq. 6).

    Parameters
    ----------
    prev, layer : Layer
        Producer (layer l-1) and consumer (layer l).
    prev_workers, workers : array_like
        Worker of each segment of ``prev`` and of ``layer``; their lengths are
        P(l-1) and P(l).

    Returns
    -------
    numpy.ndarray of int, shape (P(l),)

    References
    ----------
    Yan et al. 2015, Sec. 4.1.1, eq. 6.
    """
    prev_workers = _workers("prev_workers", prev_workers)
    workers = _workers("workers", workers)
    mat = activation_matrix(prev, layer, len(prev_workers), len(workers))
    return remote_counts(mat, prev_workers, workers)


def remote_errors(layer: Layer, next_layer: Layer, workers, next_workers) -> np.ndarray:
    """E(l, p): remote error terms each segment of ``layer`` receives from ``next_layer``.

    Parameters
    ----------
    layer, next_layer : Layer
        Layer l and its consumer, layer l+1.
    workers, next_workers : array_like
        Worker of each segment of ``layer`` and of ``next_layer``; their
        lengths are P(l) and P(l+1).

    Returns
    -------
    numpy.ndarray of int, shape (P(l),)

    References
    ----------
    Yan et al. 2015, Sec. 4.1.2 (M_b, E(l, p)).
    """
    workers = _workers("workers", workers)
    next_workers = _workers("next_workers", next_workers)
    mat = error_matrix(layer, next_layer, len(workers), len(next_workers))
    return remote_counts(mat.T, next_workers, workers)


def worker_affinity(matrix, src_workers, n_workers: int | None = None) -> np.ndarray:
    """Weight of placing each destination segment on each worker, for bipartite matching.

    Parameters
    ----------
    matrix : array_like, shape (n_src, n_dst)
        Traffic between source and destination segments, e.g.
        :func:`connection_matrix`.
    src_workers : array_like of int, shape (n_src,)
        Worker (0 .. n_workers-1) of each source segment.
    n_workers : int, optional
        Number of workers (default: ``max(src_workers) + 1``).

    Returns
    -------
    numpy.ndarray, shape (n_workers, n_dst)
        ``[w, j]`` = traffic segment j avoids on worker w, i.e. the sum of
        ``matrix[i, j]`` over sources i on w.  A maximum-weight matching of
        workers to destination segments (``scipy.optimize.linear_sum_assignment
        (-affinity)``) minimizes the remote traffic.

    Examples
    --------
    >>> worker_affinity([[5, 1], [2, 7]], [1, 0])
    array([[2, 7],
           [5, 1]])

    References
    ----------
    Yan et al. 2015, Sec. 5.3 (maximum weighted bipartite matching).
    """
    mat = np.asarray(matrix)
    if mat.ndim != 2:
        raise SpecError("matrix", f"must be 2-D (sources x destinations), got shape {mat.shape}")
    src = _workers("src_workers", src_workers, mat.shape[0])
    if not np.issubdtype(src.dtype, np.integer) or (src.size and src.min() < 0):
        raise SpecError("src_workers", f"must be worker indices >= 0, got {src_workers!r}")
    top = int(src.max()) + 1 if src.size else 0
    n = top if n_workers is None else _count("n_workers", n_workers, max(top, 1))
    out = np.zeros((n, mat.shape[1]), dtype=mat.dtype)
    np.add.at(out, src, mat)
    return out
