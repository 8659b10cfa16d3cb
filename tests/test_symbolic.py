"""Tests of perfmodel.symbolic: sympy forms against the numeric models, sensitivities,
saturation (closed form vs numeric vs brute force) and LaTeX."""

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from perfmodel import symbolic as sym
from perfmodel.errors import SpecError
from perfmodel.symbolic import T_B, T_F, T_S, B, K, M, w

NAMES = sym.FORM_NAMES
VALUE_RANGES = {"model_bytes": (1e5, 1e9), "bandwidth": (1e7, 1e10), "t_forward": (0.0, 1.0),
                "t_backward": (0.0, 2.0), "t_update": (0.0, 0.1),
                "sharing_weight": (0.0, 1.0)}


def values_for(f, draw_float):
    out = {a: draw_float(*VALUE_RANGES[a]) for a in f.args if a != "workers"}
    out["t_forward"] = max(out["t_forward"], 1e-3)  # a step needs compute
    return out


@st.composite
def form_values(draw, names=NAMES):
    f = sym.form(draw(st.sampled_from(names)))
    values = values_for(f, lambda lo, hi: draw(st.floats(lo, hi)))
    return f, values


# ---------------------------------------------------------------- forms vs numeric

def test_every_form_listed_once():
    assert tuple(f.name for f in sym.forms()) == NAMES
    for f in sym.forms():
        assert f.expr.free_symbols <= set(f.symbols)
        assert "Li et al. 2022" in f.equation
        assert callable(f.numeric)


@pytest.mark.parametrize("name", NAMES)
def test_symbolic_equals_numeric_on_random_arrays(name):
    f = sym.form(name)
    rng = np.random.default_rng(NAMES.index(name))
    n = 2000
    values = {a: rng.uniform(*VALUE_RANGES[a], size=n) for a in f.args if a != "workers"}
    values["workers"] = rng.integers(1, 1000, size=n)
    lam = f.evaluate(**values)
    num = f.numeric(**values)
    np.testing.assert_allclose(lam, num, rtol=1e-12, atol=1e-15)
    # positional lambdified function, in Form.args order
    np.testing.assert_allclose(f.function()(*[values[a] for a in f.args]), num, rtol=1e-12)


@settings(max_examples=300, deadline=None)
@given(form_values(), st.integers(1, 10**5))
def test_symbolic_equals_numeric_hypothesis(fv, k):
    f, values = fv
    values["workers"] = k
    assert float(f.evaluate(**values)) == pytest.approx(f.numeric(**values), rel=1e-12,
                                                        abs=1e-15)


def test_forms_are_the_printed_equations():
    half = sp.Rational(1, 2)
    eq7 = K * M / B + (T_F + T_B) + K * M / B + T_S
    eq8 = K * M / B + (T_F + T_B) + M / B + T_S
    eq9 = K * M / B + (T_F + T_B) + (K + 1) * M / (2 * B) + T_S
    eq10 = sp.Max(K * M / B, T_F) + sp.Max((K + 1) * M / (2 * B), T_B) + T_S
    eq11 = (T_F + T_B) + 2 * (K - 1) * M / (K * B)
    assert sp.simplify(sym.form("ps").expr - eq7) == 0
    assert sp.simplify(sym.form("fcfs").expr - eq8) == 0
    assert sp.simplify(sym.form("hybrid").expr.subs(w, half) - eq9) == 0
    assert sp.simplify((sym.form("ps").expr + sym.form("fcfs").expr) / 2 - eq9) == 0
    hyb10 = sym.form("hybrid_overlap").expr.subs(w, half)
    pts = np.random.default_rng(1).uniform(0.01, 2.0, size=(50, 6))
    for m, b, tf, tb, ts, kk in pts:
        sub = {M: m, B: b, T_F: tf, T_B: tb, T_S: ts, K: 1 + 10 * kk}
        assert float(hyb10.subs(sub)) == pytest.approx(float(eq10.subs(sub)), rel=1e-12)
    assert sp.simplify(sym.form("allreduce").expr - eq11) == 0


# ---------------------------------------------------------------- sensitivities

def test_sensitivity_closed_forms():
    assert sp.simplify(sym.sensitivity("ps", "bandwidth") + 2 * K * M / B**2) == 0
    assert sym.sensitivity("ps", "t_forward") == 1
    assert sym.sensitivity("hybrid", T_F) == 1
    assert sp.simplify(sym.sensitivity("allreduce", "bandwidth")
                       + 2 * (K - 1) * M / (K * B**2)) == 0


def _central_difference(f, values, arg, rel=1e-5):
    x = values[arg]
    h = rel * max(abs(x), 1e-3)
    hi = f.numeric(**dict(values, **{arg: x + h}))
    mid = f.numeric(**values)
    lo = f.numeric(**dict(values, **{arg: x - h}))
    rounding = 1e-12 * abs(mid) / h  # ~2000x the float rounding of the differences
    return (hi - lo) / (2 * h), (hi - mid) / h, (mid - lo) / h, rounding


@settings(max_examples=300, deadline=None)
@given(form_values(), st.integers(1, 1000), st.sampled_from(["bandwidth", "t_forward"]))
def test_sensitivities_match_finite_differences(fv, k, wrt):
    f, values = fv
    values["workers"] = k
    central, forward, backward, rounding = _central_difference(f, values, wrt)
    scale = max(abs(forward), abs(backward), 1e-12)
    assume(abs(forward - backward) <= 1e-3 * scale + 2 * rounding)  # not at a kink of a Max
    d = sym.sensitivity_function(f.name, wrt)(**values)
    assert float(d) == pytest.approx(central, rel=1e-4, abs=rounding)


def test_sensitivity_function_is_vectorized():
    d = sym.sensitivity_function("hybrid", "bandwidth")
    out = d(model_bytes=1e8, bandwidth=np.array([1e9, 2e9]), t_forward=0.1, t_backward=0.2,
            workers=4)
    # d/dB [K M/B + (wK + 1 - w) M/B] = -(K + wK + 1 - w) M / B^2 = -6.5e8 / B^2 ... with w = 1/2
    np.testing.assert_allclose(out, -(4 + 2 + 0.5) * 1e8 / np.array([1e9, 2e9]) ** 2)


# ---------------------------------------------------------------- saturation

def test_saturation_by_hand():
    # eq. 7, M/B = 0.08 s, T_F + T_B = 0.3 s, T_S = 0: T = 0.3 + 0.16 K
    # alpha = 0.3, beta = 0.16, T(1) = 0.46, eps = 0.1:
    # K* = (sqrt(0.46 * 0.3 / 0.1) - 0.3) / 0.16 = (1.174734 - 0.3) / 0.16 = 5.46709
    kw = dict(model_bytes=1e8, bandwidth=1.25e9, t_forward=0.1, t_backward=0.2)
    assert sym.saturation_point("ps", **kw) == pytest.approx(5.467088, rel=1e-6)
    # gains X(K) - X(K-1) with X = K / (0.3 + 0.16 K), eps X(1) = 0.1/0.46 = 0.21739:
    # K=5: 5/1.1 - 4/0.94 = 0.2901 >= 0.2174;  K=6: 6/1.26 - 5/1.1 = 0.2165 < 0.2174
    assert sym.saturation_workers("ps", **kw) == 5


def test_saturation_gain_equals_threshold_at_interior_point():
    kw = dict(model_bytes=3e8, bandwidth=1.25e9, t_forward=0.2, t_backward=0.5, t_update=0.02)
    for name in ("ps", "fcfs", "hybrid"):
        k = sym.saturation_point(name, threshold=0.05, **kw)
        assert k > 1
        g = sym.marginal_gain_expr(name).subs({sym.SYMBOLS[a]: v for a, v in kw.items()})
        g = g.subs({w: 0.5, K: k})
        assert float(g) == pytest.approx(0.05, rel=1e-9)


@settings(max_examples=200, deadline=None)
@given(form_values(("ps", "fcfs", "hybrid", "allreduce")), st.floats(0.01, 0.9))
def test_closed_form_matches_numeric_solver(fv, eps):
    f, values = fv
    closed = sym.saturation_point(f.name, threshold=eps, **values)
    full = sym._complete(f, dict(values, workers=1))
    args = [full[a] for a in f.args if a != "workers"]
    numeric = sym._numeric_saturation(sym._gain_by_position(f.name), args, eps)
    if math.isinf(closed) or closed > 1e11:
        assert numeric > 1e11 or math.isinf(numeric)
    else:
        assert numeric == pytest.approx(closed, rel=1e-9, abs=1e-9)


def _brute_force_workers(f, values, eps, k_max):
    ks = np.arange(0, k_max + 1)
    x = np.zeros(k_max + 1)
    x[1:] = ks[1:] / f.numeric(**dict(values, workers=ks[1:]))
    gains = np.diff(x)                        # gains[i] = X(i+1) - X(i)
    ok = np.flatnonzero(gains > eps * x[1])
    return int(ok[-1]) + 1, gains, x


@settings(max_examples=200, deadline=None)
@given(form_values(("ps", "fcfs", "hybrid", "ps_overlap", "fcfs_overlap", "hybrid_overlap")),
       st.floats(0.02, 0.9))
def test_integer_saturation_against_brute_force(fv, eps):
    f, values = fv
    k_real = sym.saturation_point(f.name, threshold=eps, **values)
    assume(k_real < 20000)
    k_int = sym.saturation_workers(f.name, threshold=eps, **values)
    expected, gains, x = _brute_force_workers(f, values, eps, int(2 * k_real) + 10)
    # skip draws where a gain sits on the threshold within the tolerance saturation_workers
    # grants rounding (sym._GAIN_TOL of X(K), which grows with K: 1e-8 of X(1) at K ~ 2e4)
    assume(np.all(np.abs(gains - eps * x[1]) > 2 * sym._GAIN_TOL * x[1:]))
    assert k_int == expected
    assert math.floor(k_real) <= k_int <= math.floor(k_real) + 1


def test_integer_saturation_counts_a_gain_within_rounding_as_equal():
    """A draw hypothesis found: the 18528th worker's gain exceeds the threshold by 1.0e-9
    of X(1), inside the 1e-12 X(K) = 1.6e-8 X(1) that saturation_workers counts as equal
    (rounding), so the answer is the 18527 below it, not the brute force's 18528."""
    f = sym.form("hybrid_overlap")
    values = {"model_bytes": 1e5, "bandwidth": 8315926176.0, "t_forward": 0.6306135356075265,
              "t_backward": 0.0, "t_update": 0.08133250954648347,
              "sharing_weight": 0.6306135356075265}
    eps = 0.6975384244927211
    brute, gains, x = _brute_force_workers(f, values, eps, 40000)
    excess = gains[brute - 1] - eps * x[1]
    assert brute == 18528 and 0 < excess < sym._GAIN_TOL * x[brute]
    assert sym.saturation_workers(f.name, threshold=eps, **values) == brute - 1


@settings(max_examples=100, deadline=None)
@given(form_values(), st.integers(2, 400))
def test_throughput_never_peaks(fv, k_max):
    # the brute-force argmax of K / T(K) over 1..k_max is k_max (ties allowed on a
    # plateau) for the PS forms; threshold 0 gives "stops growing at all"
    f, values = fv
    ks = np.arange(1, k_max + 1)
    x = ks / f.numeric(**dict(values, workers=ks))
    if not f.name.startswith("allreduce"):
        assert np.all(np.diff(x) >= -1e-12 * x[-1])
        assert x[np.argmax(x)] == pytest.approx(x[-1], rel=1e-12)
    k_star = sym.saturation_point(f.name, threshold=0.0, **values)
    if "overlap" not in f.name:
        assert k_star == math.inf          # eqs. 7-9, 11: grows forever
    elif k_star < k_max:                   # an exact plateau: flat from K* on
        flat = x[int(math.ceil(k_star)) - 1:]
        np.testing.assert_allclose(flat, flat[-1], rtol=1e-9)


def test_exact_plateau_of_overlap_form():
    # ps with overlap, T_S = 0, T_B = 0: T = max(K M/B, 0) + max(K M/B, T_F) = 2 K M/B once
    # K M/B >= T_F, i.e. K >= T_F B / M = 0.1 / 0.08 = 1.25: throughput flat from there on
    kw = dict(model_bytes=1e8, bandwidth=1.25e9, t_forward=0.1, t_backward=0.0)
    assert sym.saturation_point("ps_overlap", threshold=0.0, **kw) == pytest.approx(1.25)
    # integer: X(1) = 1 / (0.08 + 0.1) = 5.56, X(2) = 2 / 0.32 = 6.25, X(3) = 3 / 0.48 = 6.25:
    # the 2nd worker still adds, the 3rd adds nothing
    assert sym.saturation_workers("ps_overlap", threshold=0.0, **kw) == 2


def test_allreduce_saturates_never_or_at_once():
    # eq. 11: gain rises to T(1)/T(inf) = T_C / (T_C + 2 M/B)
    # T_C = 0.3, 2 M/B = 0.16: limit 0.652 -> eps 0.5: inf; eps 0.7: 1
    kw = dict(model_bytes=1e8, bandwidth=1.25e9, t_forward=0.1, t_backward=0.2)
    assert sym.saturation_point("allreduce", threshold=0.5, **kw) == math.inf
    assert sym.saturation_point("allreduce", threshold=0.7, **kw) == 1.0
    assert sym.saturation_workers("allreduce", threshold=0.7, **kw) == 1
    assert sym.saturation_workers("allreduce", threshold=0.5, **kw) == math.inf


def test_overlap_saturation_at_kink():
    # eq. 10 with M/B = 0.08, T_F = 0.1, T_B = 0.2, T_S = 0: the uplink term 0.04 (K+1)
    # reaches T_B at K = 4, where the gain drops from 0.22 to 0.05 < eps = 0.1
    kw = dict(model_bytes=1e8, bandwidth=1.25e9, t_forward=0.1, t_backward=0.2)
    assert sym.saturation_point("hybrid_overlap", **kw) == pytest.approx(4.0, rel=1e-9)
    assert sym.saturation_expr("hybrid_overlap") is None


def test_saturation_errors():
    kw = dict(model_bytes=1e8, bandwidth=1.25e9, t_forward=0.1, t_backward=0.2)
    with pytest.raises(SpecError) as err:
        sym.saturation_point("ps", threshold=1.5, **kw)
    assert err.value.field == "threshold"
    with pytest.raises(SpecError) as err:
        sym.saturation_point("ps", **dict(kw, bandwidth=-1.0))
    assert err.value.field == "bandwidth"
    with pytest.raises(SpecError) as err:
        sym.saturation_point("ps", workers=3, **kw)
    assert err.value.field == "workers"
    with pytest.raises(SpecError) as err:
        sym.saturation_point("nope", **kw)
    assert err.value.field == "form"
    with pytest.raises(SpecError) as err:
        sym.saturation_point("ps", model_bytes=1e8, bandwidth=1e9, t_forward=0.1)
    assert err.value.field == "t_backward"
    with pytest.raises(SpecError) as err:
        sym.sensitivity("ps", "color")
    assert err.value.field == "wrt"


# ---------------------------------------------------------------- LaTeX

@pytest.mark.parametrize("name", NAMES)
def test_latex_strings(name):
    text = sym.latex(name)
    assert text.startswith("T_{") and " = " in text and r"\frac" in text
    sat = sym.saturation_latex(name)
    if "overlap" in name:
        assert sat is None
    else:
        assert sat.startswith("K^{*} = ")


def test_throughput_expr():
    x = sym.throughput_expr("ps", batch_size=32)
    assert sp.simplify(x - 32 * K / sym.form("ps").expr) == 0
