"""Stripe partitioning (Yan et al. 2015, Sec. 4.1, footnote 3): counts against brute force."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from perfmodel import partition as pt
from perfmodel import zoo
from perfmodel.errors import SpecError
from perfmodel.specs import Layer


# ---------------------------------------------------------------- brute force
def _stripe_of(index, n, parts):
    """Stripe holding ``index`` among ``parts`` stripes of ``n`` (loop, no formula reuse)."""
    for p in range(parts):
        if p * n // parts <= index < (p + 1) * n // parts:
            return p
    raise AssertionError(index)


def _window(y, k, s, pad, n):
    """Input indices output ``y`` reaches along one axis, clipped to [0, n)."""
    return [t for t in range(y * s - pad, y * s - pad + k) if 0 <= t < n]


def _adaptive(y, n_in, n_out):
    return list(range(y * n_in // n_out, -(-(y + 1) * n_in // n_out)))


def _edges_windowed(cin, h, w, cout, out_h, out_w, rows, cols, groups, channelwise):
    """Every connection (output neuron, input neuron) of a conv/pool, built by loops.

    ``rows(y)`` / ``cols(x)`` give the input rows / columns output (y, x) reaches.
    """
    edges = {}
    for co, y, x in itertools.product(range(cout), range(out_h), range(out_w)):
        if channelwise:
            chans = [co]
        else:
            g = co // (cout // groups)
            chans = range(g * cin // groups, (g + 1) * cin // groups)
        edges[(co, y, x)] = {(ci, yi, xi) for ci in chans for yi in rows(y) for xi in cols(x)}
    return edges


def _fused(f, k, s, pad, n):
    """Rows a pooled output reaches through a f x f / stride f pool over a conv window."""
    return lambda y: sorted({t for d in range(f) for t in _window(y * f + d, k, s, pad, n)})


def _brute(edges, n_in, n_out, p_in, p_out, in_row, out_row):
    """Activation and error matrices counted from explicit connections.

    ``in_row`` / ``out_row`` map an input / output neuron to its stripe coordinate.
    """
    acts = [[set() for _ in range(p_out)] for _ in range(p_in)]
    errs = [[set() for _ in range(p_out)] for _ in range(p_in)]
    for out, ins in edges.items():
        j = _stripe_of(out_row(out), n_out, p_out)
        for neuron in ins:
            i = _stripe_of(in_row(neuron), n_in, p_in)
            acts[i][j].add(neuron)
            errs[i][j].add(out)
    count = np.vectorize(len, otypes=[int])
    return count(np.array(acts, dtype=object)), count(np.array(errs, dtype=object))


def _row(neuron):
    return neuron[1]


def _spatial_layers(kind, cin, h, w, cout, out_h, out_w, **geometry):
    prev = Layer(name="prev", kind="act", out_shape=(cin, h, w))
    layer = Layer(name="layer", kind=kind, in_shape=(cin, h, w), out_shape=(cout, out_h, out_w),
                  **geometry)
    return prev, layer


def _check(prev, layer, edges, p_in, p_out, in_row=_row, out_row=_row):
    n_in = prev.out_shape[1] if len(prev.out_shape) == 3 else prev.neurons
    n_out = layer.out_shape[1] if len(layer.out_shape) == 3 else layer.neurons
    acts, errs = _brute(edges, n_in, n_out, p_in, p_out, in_row, out_row)
    np.testing.assert_array_equal(pt.activation_matrix(prev, layer, p_in, p_out), acts)
    np.testing.assert_array_equal(pt.error_matrix(prev, layer, p_in, p_out), errs)


# ---------------------------------------------------------------- conv / pool halos
@st.composite
def conv_cases(draw):
    h, w = draw(st.integers(1, 12)), draw(st.integers(1, 5))
    kh, kw = draw(st.integers(1, 5)), draw(st.integers(1, 3))
    ph, pw = draw(st.integers(0, 2)), draw(st.integers(0, 2))
    assume(h + 2 * ph >= kh and w + 2 * pw >= kw)
    groups = draw(st.integers(1, 3))
    cin, cout = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    assume(cin <= 3 or cout <= 3)
    return dict(h=h, w=w, kh=kh, kw=kw, sh=draw(st.integers(1, 3)), sw=draw(st.integers(1, 3)),
                ph=ph, pw=pw, groups=groups, cin=cin, cout=cout,
                p_in=draw(st.integers(1, 4)), p_out=draw(st.integers(1, 4)))


@settings(max_examples=150, deadline=None)
@given(conv_cases())
def test_conv_matrices_equal_brute_force(c):
    out_h = (c["h"] + 2 * c["ph"] - c["kh"]) // c["sh"] + 1
    out_w = (c["w"] + 2 * c["pw"] - c["kw"]) // c["sw"] + 1
    prev, layer = _spatial_layers("conv", c["cin"], c["h"], c["w"], c["cout"], out_h, out_w,
                                  kernel=(c["kh"], c["kw"]), stride=(c["sh"], c["sw"]),
                                  padding=(c["ph"], c["pw"]), groups=c["groups"])
    edges = _edges_windowed(c["cin"], c["h"], c["w"], c["cout"], out_h, out_w,
                            lambda y: _window(y, c["kh"], c["sh"], c["ph"], c["h"]),
                            lambda x: _window(x, c["kw"], c["sw"], c["pw"], c["w"]),
                            c["groups"], channelwise=False)
    _check(prev, layer, edges, c["p_in"], c["p_out"])


@settings(max_examples=80, deadline=None)
@given(conv_cases(), st.booleans())
def test_pool_matrices_equal_brute_force_incl_ceil_mode(c, ceil_mode):
    c["kh"] = min(c["kh"], c["h"] + c["ph"])  # keep windows starting inside (PyTorch rule)
    span = c["h"] + 2 * c["ph"] - c["kh"]
    out_h = (-(-span // c["sh"]) if ceil_mode else span // c["sh"]) + 1
    out_w = (c["w"] + 2 * c["pw"] - c["kw"]) // c["sw"] + 1
    ch = c["cin"]
    prev, layer = _spatial_layers("pool", ch, c["h"], c["w"], ch, out_h, out_w,
                                  kernel=(c["kh"], c["kw"]), stride=(c["sh"], c["sw"]),
                                  padding=(c["ph"], c["pw"]))
    edges = _edges_windowed(ch, c["h"], c["w"], ch, out_h, out_w,
                            lambda y: _window(y, c["kh"], c["sh"], c["ph"], c["h"]),
                            lambda x: _window(x, c["kw"], c["sw"], c["pw"], c["w"]),
                            1, channelwise=True)
    _check(prev, layer, edges, c["p_in"], c["p_out"])


@st.composite
def fused_axis(draw, f, most):
    """(n_in, k, s, pad) whose conv output f * m (m >= 1) a f-wide pooling divides."""
    k, s, pad = draw(st.integers(1, 5)), draw(st.integers(1, 3)), draw(st.integers(0, 2))
    m, r = draw(st.integers(1, most)), draw(st.integers(0, s - 1))
    n_in = (f * m - 1) * s + k - 2 * pad + r
    assume(1 <= n_in <= 14 and n_in + 2 * pad >= k)
    return n_in, k, s, pad


@settings(max_examples=80, deadline=None)
@given(st.integers(2, 3), st.data(), st.integers(1, 3), st.integers(1, 4), st.integers(1, 4))
def test_conv_with_fused_pool_equals_brute_force(f, data, groups, p_in, p_out):
    h, kh, sh, ph = data.draw(fused_axis(f, 4))
    w, kw, sw, pw = data.draw(fused_axis(f, 2))
    cin, cout = groups, groups * data.draw(st.integers(1, 2))
    out_h = ((h + 2 * ph - kh) // sh + 1) // f
    out_w = ((w + 2 * pw - kw) // sw + 1) // f
    prev, layer = _spatial_layers("conv", cin, h, w, cout, out_h, out_w, kernel=(kh, kw),
                                  stride=(sh, sw), padding=(ph, pw), groups=groups)
    edges = _edges_windowed(cin, h, w, cout, out_h, out_w, _fused(f, kh, sh, ph, h),
                            _fused(f, kw, sw, pw, w), groups, channelwise=False)
    _check(prev, layer, edges, p_in, p_out)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12), st.integers(1, 4), st.data())
def test_adaptive_pool_equals_brute_force(h, w, data):
    out_h, out_w = data.draw(st.integers(1, h)), data.draw(st.integers(1, w))
    p_in, p_out = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
    prev, layer = _spatial_layers("pool", 2, h, w, 2, out_h, out_w)
    edges = _edges_windowed(2, h, w, 2, out_h, out_w, lambda y: _adaptive(y, h, out_h),
                            lambda x: _adaptive(x, w, out_w), 1, channelwise=True)
    _check(prev, layer, edges, p_in, p_out)


# ---------------------------------------------------------------- one-to-one kinds
@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3), st.integers(1, 6), st.integers(1, 4), st.integers(1, 5),
       st.integers(1, 5), st.booleans())
def test_flatten_maps_flat_index_exactly(c, h, w, p_in, p_out, unflatten):
    n = c * h * w
    spatial = Layer(name="sp", kind="act", out_shape=(c, h, w))
    flat = Layer(name="fl", kind="flatten", in_shape=(c, h, w), out_shape=(n,))
    edges = {(e,): {(e // (h * w), e // w % h, e % w)} for e in range(n)}
    if not unflatten:
        _check(spatial, flat, edges, p_in, p_out, out_row=lambda t: t[0])
        return
    src = Layer(name="src", kind="dropout", out_shape=(n,))
    dst = Layer(name="dst", kind="act", in_shape=(n,), out_shape=(c, h, w))
    back = {(e // (h * w), e // w % h, e % w): {(e,)} for e in range(n)}
    _check(src, dst, back, p_in, p_out, in_row=lambda t: t[0])


@pytest.mark.parametrize("kind", ["act", "norm", "dropout", "add", "lrn"])
def test_elementwise_is_identity_in_rows(kind):
    prev = Layer(name="prev", kind="conv", out_shape=(3, 7, 2))
    layer = Layer(name="x", kind=kind, in_shape=(3, 7, 2), out_shape=(3, 7, 2))
    edges = {t: {t} for t in itertools.product(range(3), range(7), range(2))}
    for p_in, p_out in itertools.product(range(1, 5), repeat=2):
        _check(prev, layer, edges, p_in, p_out)


def test_concat_branch_counts_its_own_channels_only():
    branch = Layer(name="b", kind="act", out_shape=(2, 5, 3))
    cat = Layer(name="cat", kind="concat", in_shape=(6, 5, 3), out_shape=(6, 5, 3),
                inputs=("a", "b"))
    offset = 4   # where the branch sits does not change the counts
    edges = {(offset + c, y, x): {(c, y, x)}
             for c, y, x in itertools.product(range(2), range(5), range(3))}
    for p_in, p_out in itertools.product(range(1, 6), repeat=2):
        _check(branch, cat, edges, p_in, p_out)


def test_flat_elementwise_overlaps_ranges():
    prev = Layer(name="fc", kind="fc", out_shape=(10,))
    drop = Layer(name="drop", kind="dropout", in_shape=(10,), out_shape=(10,))
    edges = {(e,): {(e,)} for e in range(10)}
    _check(prev, drop, edges, 3, 4, in_row=lambda t: t[0], out_row=lambda t: t[0])


# ---------------------------------------------------------------- dense kinds
@pytest.mark.parametrize("prev_shape", [(7,), (2, 3, 2)])
@pytest.mark.parametrize("p_in,p_out", [(1, 1), (2, 3), (4, 4), (3, 9)])
def test_dense_fc_sums_and_brute_force(prev_shape, p_in, p_out):
    prev = Layer(name="prev", kind="act", out_shape=prev_shape)
    n_in = math.prod(prev_shape)
    fc = Layer(name="fc", kind="fc", in_shape=prev_shape, out_shape=(5,), connections=5 * n_in)
    acts = pt.activation_matrix(prev, fc, p_in, p_out)
    errs = pt.error_matrix(prev, fc, p_in, p_out)
    nonempty_out = np.diff(pt.stripe_bounds(5, p_out), axis=1)[:, 0] > 0
    # each non-empty consumer stripe reads every producer activation once
    np.testing.assert_array_equal(acts.sum(axis=0), n_in * nonempty_out)
    np.testing.assert_array_equal(acts[:, nonempty_out].T,
                                  np.tile(pt.segment_sizes(prev, p_in), (nonempty_out.sum(), 1)))
    # each non-empty producer stripe needs every error term of the fc layer
    nonempty_in = pt.segment_sizes(prev, p_in) > 0
    np.testing.assert_array_equal(errs.sum(axis=1), 5 * nonempty_in)
    # brute force: every output neuron reads every input neuron
    if len(prev_shape) == 1:
        edges = {(o,): {(i,) for i in range(n_in)} for o in range(5)}
        _check(prev, fc, edges, p_in, p_out, in_row=lambda t: t[0], out_row=lambda t: t[0])


# ---------------------------------------------------------------- worked by hand
def test_worked_conv_example():
    # input [2, 6, 5] in 2 stripes: rows {0,1,2} and {3,4,5}.
    # conv 3x3, stride 1, pad 1 -> [4, 6, 5] in 3 stripes: rows {0,1}, {2,3}, {4,5}.
    # Output row y reads input rows y-1 .. y+1 (clipped), so stripe 0 reads rows 0..2,
    # stripe 1 rows 1..4, stripe 2 rows 3..5.  A row of input is 2 ch * 5 cols = 10 values:
    #   prev 0 -> (3 rows, 2 rows {1,2}, 0) * 10 = (30, 20, 0)
    #   prev 1 -> (0, 2 rows {3,4}, 3 rows) * 10 = (0, 20, 30)
    # Errors: output rows whose window touches prev stripe 0 are y <= 3, stripe 1 y >= 2;
    # an output row is 4 ch * 5 cols = 20 neurons:
    #   prev 0 <- (2 rows, 2 rows, 0) * 20 = (40, 40, 0);  prev 1 <- (0, 40, 40)
    # W(l, p): 4*6*5 outputs * 2*3*3 MACs = 2160 in all, 360 per output row, 2 rows each.
    prev = Layer(name="c0", kind="conv", out_shape=(2, 6, 5))
    conv = Layer(name="c1", kind="conv", in_shape=(2, 6, 5), out_shape=(4, 6, 5),
                 kernel=3, stride=1, padding=1, connections=2160, weights=4 * 2 * 9)
    np.testing.assert_array_equal(pt.activation_matrix(prev, conv, 2, 3),
                                  [[30, 20, 0], [0, 20, 30]])
    np.testing.assert_array_equal(pt.error_matrix(prev, conv, 2, 3), [[40, 40, 0], [0, 40, 40]])
    np.testing.assert_array_equal(pt.segment_weights(conv, 3), [720, 720, 720])
    np.testing.assert_array_equal(pt.segment_sizes(conv, 3), [40, 40, 40])
    np.testing.assert_array_equal(pt.segment_params(conv, 3), [72, 72, 72])  # kernel replicated
    # prev stripes on workers 0, 1; conv stripes on 0, 1, 1: only prev 0 -> conv 1 is remote
    np.testing.assert_array_equal(pt.remote_activations(prev, conv, [0, 1], [0, 1, 1]), [0, 20, 0])
    # E of prev stripe 0 (worker 0): from conv 1 (worker 1) = 40; stripe 1: from conv 0 = 0
    np.testing.assert_array_equal(pt.remote_errors(prev, conv, [0, 1], [0, 1, 1]), [40, 0])
    np.testing.assert_array_equal(pt.connection_matrix(prev, conv, 2, 3),
                                  [[70, 60, 0], [0, 60, 70]])
    np.testing.assert_array_equal(pt.connection_matrix(prev, conv, 2, 3, backward=False),
                                  [[30, 20, 0], [0, 20, 30]])


def test_adam_mnist_fused_pool_by_hand():
    # conv1: 1x28x28, 5x5 conv -> 24x24, 2x2 pool -> 12x12 (zoo convention).  A pooled row y
    # reads conv rows 2y, 2y+1, i.e. input rows 2y .. 2y+5.  Two stripes of 6 pooled rows
    # read input rows 0..15 and 12..27 (16 rows each, 28 values a row); the halo is 12..15.
    conv1 = zoo.load("adam-mnist").layers[0]
    image = Layer(name="image", kind="input", out_shape=(1, 28, 28))
    np.testing.assert_array_equal(pt.activation_matrix(image, conv1, 2, 2),
                                  [[14 * 28, 2 * 28], [2 * 28, 14 * 28]])
    np.testing.assert_array_equal(pt.segment_weights(conv1, 2), [144000, 144000])


# ---------------------------------------------------------------- sizes and weights
layer_cases = st.one_of(
    st.builds(lambda c, h, w, per: Layer(name="c", kind="conv", out_shape=(c, h, w),
                                         connections=c * h * w * per),
              st.integers(1, 8), st.integers(1, 60), st.integers(1, 8), st.integers(1, 50)),
    st.builds(lambda n, c: Layer(name="f", kind="fc", out_shape=(n,), connections=c),
              st.integers(1, 300), st.integers(0, 10**7)),
)


@settings(max_examples=200, deadline=None)
@given(layer_cases, st.integers(1, 70))
def test_segment_weights_sum_and_shrink_with_more_parts(layer, parts):
    w = pt.segment_weights(layer, parts)
    assert w.sum() == layer.connections and (w >= 0).all()
    assert pt.segment_sizes(layer, parts).sum() == layer.neurons
    assert pt.segment_weights(layer, parts + 1).max() <= w.max()


def test_segment_weights_match_explicit_formulas():
    conv = Layer(name="c", kind="conv", in_shape=(6, 10, 10), out_shape=(8, 10, 10), kernel=3,
                 padding=1, groups=2, connections=8 * 10 * 10 * 3 * 9, weights=8 * 3 * 9)
    rows = np.diff(pt.stripe_bounds(10, 4), axis=1)[:, 0]            # 2, 3, 2, 3
    np.testing.assert_array_equal(pt.segment_weights(conv, 4), rows * 8 * 10 * (6 // 2) * 9)
    fc = Layer(name="f", kind="fc", in_shape=(30,), out_shape=(7,), connections=210, weights=217)
    np.testing.assert_array_equal(pt.segment_weights(fc, 3), [2 * 30, 2 * 30, 3 * 30])
    np.testing.assert_array_equal(pt.segment_params(fc, 3), [62, 62, 93])   # split by output
    # 12 stripes of 10 rows: stripes 0 and 6 are empty and hold nothing; the others the
    # whole kernel
    np.testing.assert_array_equal(pt.segment_params(conv, 12),
                                  [0, 216, 216, 216, 216, 216, 0, 216, 216, 216, 216, 216])


def test_stripe_bounds_and_empty_stripes():
    np.testing.assert_array_equal(pt.stripe_bounds(3, 5), [[0, 0], [0, 1], [1, 1], [1, 2], [2, 3]])
    tiny = Layer(name="t", kind="conv", out_shape=(4, 2, 2), connections=16)
    np.testing.assert_array_equal(pt.segment_sizes(tiny, 4), [0, 8, 0, 8])
    np.testing.assert_array_equal(pt.segment_weights(tiny, 4), [0, 8, 0, 8])


# ---------------------------------------------------------------- remote counts
@settings(max_examples=50, deadline=None)
@given(st.integers(1, 6), st.integers(1, 6), st.integers(0, 2**31))
def test_remote_counts_extremes(n_src, n_dst, seed):
    mat = np.random.default_rng(seed).integers(0, 100, size=(n_src, n_dst))
    assert (pt.remote_counts(mat, [3] * n_src, [3] * n_dst) == 0).all()
    own = pt.remote_counts(mat, np.arange(n_src), np.arange(n_dst))
    expected = mat.sum(axis=0) - np.array([mat[j, j] if j < n_src else 0 for j in range(n_dst)])
    np.testing.assert_array_equal(own, expected)
    # all sources elsewhere: everything is remote
    np.testing.assert_array_equal(pt.remote_counts(mat, [0] * n_src, [1] * n_dst), mat.sum(axis=0))


def test_worker_affinity_gives_remote_counts():
    mat = np.array([[5, 1, 0], [2, 7, 3]])
    aff = pt.worker_affinity(mat, [1, 0], n_workers=3)
    np.testing.assert_array_equal(aff, [[2, 7, 3], [5, 1, 0], [0, 0, 0]])
    dst = [1, 0, 2]
    np.testing.assert_array_equal(pt.remote_counts(mat, [1, 0], dst),
                                  mat.sum(axis=0) - aff[dst, np.arange(3)])


# ---------------------------------------------------------------- bad input
def test_bad_input_is_a_spec_error_naming_the_argument():
    a = Layer(name="a", kind="act", out_shape=(3, 4, 4))
    b = Layer(name="b", kind="conv", in_shape=(3, 4, 4), out_shape=(3, 4, 4), kernel=1)
    cases = [
        (lambda: pt.stripe_bounds(4, 0), "parts"),
        (lambda: pt.stripe_bounds(-1, 2), "n"),
        (lambda: pt.segment_sizes(b, 1.5), "parts"),
        (lambda: pt.segment_weights(b, True), "parts"),
        (lambda: pt.segment_params("b", 2), "layer"),
        (lambda: pt.activation_matrix(a, b, 0, 1), "p_prev"),
        (lambda: pt.activation_matrix(a, b, 1, 0), "p"),
        (lambda: pt.error_matrix(a, b, 2, -1), "p_next"),
        (lambda: pt.activation_matrix(None, b, 1, 1), "prev"),
        (lambda: pt.error_matrix(a, {}, 1, 1), "next_layer"),
        (lambda: pt.activation_matrix(Layer(name="x", kind="act", out_shape=(2, 4, 4)), b, 1, 1),
         "layer.in_shape"),
        (lambda: pt.activation_matrix(a, Layer(name="i", kind="input", out_shape=(3, 4, 4)), 1, 1),
         "layer.kind"),
        (lambda: pt.remote_counts([1, 2], [0], [0, 1]), "matrix"),
        (lambda: pt.remote_counts([[1, 2]], [0, 1], [0, 1]), "src_workers"),
        (lambda: pt.remote_activations(a, b, [0], [0, 1, 2][:0]), "workers"),
        (lambda: pt.worker_affinity([[1]], [-1]), "src_workers"),
        (lambda: pt.worker_affinity([[1]], [2], n_workers=2), "n_workers"),
    ]
    for call, field in cases:
        with pytest.raises(SpecError) as err:
            call()
        assert err.value.field == field, (field, err.value)


# ---------------------------------------------------------------- the real zoo
def _pairs():
    for name in zoo.names():
        dnn = zoo.load(name)
        for k, layer in enumerate(dnn.layers[1:], start=1):
            prev = dnn.layer(layer.inputs[0]) if layer.inputs else dnn.layers[k - 1]
            yield name, prev, layer


def test_every_zoo_layer_gets_matrices():
    for name, prev, layer in _pairs():
        for p_prev, p in itertools.product((1, 2, 4), repeat=2):
            acts = pt.activation_matrix(prev, layer, p_prev, p)
            errs = pt.error_matrix(prev, layer, p_prev, p)
            assert acts.shape == errs.shape == (p_prev, p), (name, layer.name)
            assert (acts >= 0).all() and (errs >= 0).all(), (name, layer.name)
            # a segment reads no more than its producer segment holds, and needs no more
            # error terms than the consumer segment has
            assert (acts <= pt.segment_sizes(prev, p_prev)[:, None]).all(), (name, layer.name)
            assert (errs <= pt.segment_sizes(layer, p)[None, :]).all(), (name, layer.name)
        assert pt.segment_weights(layer, 4).sum() == layer.connections
        assert pt.remote_activations(prev, layer, [0, 0], [0, 0, 0, 0]).sum() == 0


def test_zoo_conv_halos_are_small_and_fc_is_dense():
    vgg = zoo.load("vgg16")
    layers = [l for l in vgg.layers if l.kind == "conv"]
    k = vgg.layers.index(layers[1])
    prev, conv = vgg.layers[k - 1], vgg.layers[k]
    c, h, w = prev.out_shape
    acts = pt.activation_matrix(prev, conv, 4, 4)
    # 3x3 pad 1: each stripe reads its own rows plus one halo row from each neighbour
    np.testing.assert_array_equal(np.diag(acts), pt.segment_sizes(prev, 4))
    np.testing.assert_array_equal(np.diag(acts, 1), [c * w] * 3)
    fc = vgg.layers[-1]
    assert (pt.activation_matrix(vgg.layers[-2], fc, 4, 4)
            == pt.segment_sizes(vgg.layers[-2], 4)[:, None]).all()
