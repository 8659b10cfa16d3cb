"""Sympy forms of the coarse Sync-SGD models (Li et al. 2022, eqs. 7-11).

Every closed-form step time of :mod:`perfmodel.coarse` (single parameter
server, no per-flow cap, ``link_efficiency`` folded into ``B``) exists here as a
sympy expression, paired with its numeric counterpart so that tests can check
one against the other (:func:`forms`).  On top of the expressions:

* **sensitivities** -- ``dT/dB``, ``dT/dT_F``, ... as expressions
  (:func:`sensitivity`) and as numpy functions (:func:`sensitivity_function`);
* **saturation** -- the number of workers beyond which throughput
  ``K * batch / T(K)`` stops growing (:func:`saturation_point`, real-valued,
  closed form where one exists; :func:`saturation_workers`, the integer);
* **LaTeX** strings for notebooks (:func:`latex`, :func:`saturation_latex`).

Saturation
----------
For every Li et al. 2022 form the throughput ``X(K) = K / T(K)`` never decreases
with K, so it has no interior peak: the PS forms (eqs. 7-10) have ``T`` linear
(or convex piecewise linear) in K with a non-negative intercept, so ``X``
rises towards a plateau (reached exactly only by the overlap forms with
``T_S = 0`` once communication hides all compute); the all-reduce form (eq.
11) grows without bound.  The literal "argmax of X" is therefore infinite or
a whole plateau.  "Saturation" is made precise with a threshold epsilon on the
*relative marginal gain*

    g(K) = T(1) * d/dK [K / T(K)],

the throughput one more worker adds, in units of one worker's throughput
(``g = 1`` is perfect scaling).  The saturation point is the K beyond which
no worker adds more than epsilon, ``inf{K >= 1 : g(k) <= epsilon for all k > K}``.
For eqs. 7-9 (``T = alpha + beta K``) ``g = T(1) alpha / (alpha + beta K)^2``
(setting ``g(K*) = epsilon``; a square root, as for any "d/dK [K/T] = epsilon"
with T linear) and

    K* = max(1, (sqrt(T(1) alpha / epsilon) - alpha) / beta);

for eq. 11 ``g`` increases with K towards ``T(1) / T(inf)``, so ``K*`` is 1
(never worth epsilon) or infinite; the overlap forms are solved numerically.
With ``epsilon = 0``, ``K*`` is where throughput stops growing at all:
infinite for eqs. 7-9 and 11, the start of the exact plateau for an overlap
form that has one.  The integer counterpart (:func:`saturation_workers`) is
the largest K whose K-th worker adds more than ``epsilon * X(1)``:
``X(K) - X(K-1) > epsilon * X(1)``.  Batch size scales ``X`` and leaves
``K*`` unchanged.

References
----------
Li, Paolieri, Golubchik, Lin, Yan. Predicting Throughput of Distributed SGD.
IEEE TPDS, 2022.  Sec. 3.1, eqs. 7-11.

The saturation criterion, the sharing weight and the overlap variants of
eqs. 7, 8 and 11 are our own extensions.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import sympy as sp

from . import coarse
from .errors import SpecError

__all__ = [
    "M", "B", "K", "T_F", "T_B", "T_S", "w", "EPSILON", "SYMBOLS",
    "Form", "forms", "form", "FORM_NAMES",
    "downlink_expr", "uplink_expr", "sync_step_expr", "allreduce_step_expr",
    "throughput_expr", "marginal_gain_expr",
    "sensitivity", "sensitivity_function",
    "saturation_expr", "saturation_point", "saturation_workers",
    "latex", "saturation_latex",
]

#: Model size (bytes).
M = sp.Symbol("M", positive=True)
#: Effective bandwidth, ``bandwidth * link_efficiency`` (bytes/s).
B = sp.Symbol("B", positive=True)
#: Workers.
K = sp.Symbol("K", positive=True)
#: Forward, backward and update times (s).
T_F = sp.Symbol("T_F", nonnegative=True)
T_B = sp.Symbol("T_B", nonnegative=True)
T_S = sp.Symbol("T_S", nonnegative=True)
#: Weight of the PS model in the hybrid (1/2 is eq. 9).
w = sp.Symbol("w", nonnegative=True)
#: Saturation threshold on the relative marginal gain.
EPSILON = sp.Symbol("epsilon", positive=True)

#: Argument name (as in :mod:`perfmodel.coarse`) of each symbol.
SYMBOLS = {"model_bytes": M, "bandwidth": B, "t_forward": T_F, "t_backward": T_B,
           "t_update": T_S, "workers": K, "sharing_weight": w}

_SYNC_ARGS = ("model_bytes", "bandwidth", "t_forward", "t_backward", "t_update", "workers")
_ALLREDUCE_ARGS = ("model_bytes", "bandwidth", "t_forward", "t_backward", "workers")
_DEFAULTS = {"t_update": 0.0, "sharing_weight": 0.5}


# --------------------------------------------------------------------------
# Expressions
# --------------------------------------------------------------------------

def downlink_expr(sharing: str = "hybrid") -> sp.Expr:
    """Downlink time ``K M / B`` (identical in eqs. 7, 8 and 9).

    Parameters
    ----------
    sharing : {"hybrid", "ps", "fcfs"}
        Link-sharing model (all give the same downlink).

    Returns
    -------
    sympy.Expr, s
        The downlink term.

    References
    ----------
    Li et al. 2022, eqs. 7-9, first term.
    """
    _check_sharing(sharing)
    return K * M / B


def uplink_expr(sharing: str = "hybrid") -> sp.Expr:
    """Uplink time: ``K M / B`` (ps), ``M / B`` (fcfs), ``w K M / B + (1 - w) M / B`` (hybrid).

    Parameters
    ----------
    sharing : {"hybrid", "ps", "fcfs"}
        Link-sharing model.

    Returns
    -------
    sympy.Expr, s
        The uplink term; with ``w = 1/2`` the hybrid one is eq. 9's ``(K+1) M / (2 B)``.

    References
    ----------
    Li et al. 2022, eqs. 7, 8, 9 (third term); the weight w is our extension.
    """
    _check_sharing(sharing)
    ps, fcfs = K * M / B, M / B
    return {"ps": ps, "fcfs": fcfs, "hybrid": w * ps + (1 - w) * fcfs}[sharing]


def sync_step_expr(sharing: str = "hybrid", overlap: bool = False) -> sp.Expr:
    """Step time of parameter-server Sync-SGD as a sympy expression.

    Parameters
    ----------
    sharing : {"hybrid", "ps", "fcfs"}
        Eq. 9, 7 or 8.
    overlap : bool
        Eq. 10: ``Max(downlink, T_F) + Max(uplink, T_B) + T_S``.

    Returns
    -------
    sympy.Expr, s
        T(K) in the symbols :data:`M`, :data:`B`, :data:`K`, :data:`T_F`,
        :data:`T_B`, :data:`T_S` (and :data:`w` for the hybrid).

    References
    ----------
    Li et al. 2022, eqs. 7-10.

    Examples
    --------
    >>> sync_step_expr("hybrid").subs(w, sp.Rational(1, 2)).expand()
    T_B + T_F + T_S + 3*K*M/(2*B) + M/(2*B)
    """
    down, up = downlink_expr(sharing), uplink_expr(sharing)
    if overlap:
        return sp.Max(down, T_F) + sp.Max(up, T_B) + T_S
    return down + T_F + T_B + up + T_S


def allreduce_step_expr(overlap: bool = False) -> sp.Expr:
    """Step time of ring all-reduce Sync-SGD, ``T_F + T_B + 2 (K - 1) M / (K B)``.

    Parameters
    ----------
    overlap : bool
        Overlap the all-reduce with the backward pass (our extension):
        ``T_F + Max(T_B, 2 (K - 1) M / (K B))``.

    Returns
    -------
    sympy.Expr, s
        T(K).

    References
    ----------
    Li et al. 2022, eq. 11.
    """
    ring = 2 * (K - 1) * M / (K * B)
    if overlap:
        return T_F + sp.Max(T_B, ring)
    return T_F + T_B + ring


def _check_sharing(sharing) -> None:
    if sharing not in coarse.SHARINGS:
        raise SpecError("sharing", f"must be one of {', '.join(coarse.SHARINGS)}; got {sharing!r}")


# --------------------------------------------------------------------------
# Forms: expression + numeric counterpart
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class Form:
    """One closed-form step time with its numeric counterpart.

    Attributes
    ----------
    name : str
        E.g. ``"hybrid"``, ``"ps_overlap"``, ``"allreduce"``.
    expr : sympy.Expr
        T(K) in seconds.
    equation : str
        Where it comes from (paper and equation, or "our extension").
    args : tuple of str
        Argument names (as in :mod:`perfmodel.coarse`), the order of
        :meth:`function`'s positional arguments.
    numeric : callable
        The :mod:`perfmodel.coarse` function it must equal, called with the
        ``args`` as keywords.
    label : str
        LaTeX subscript of T (``\\mathrm{PS}``, ...).
    superscript : str
        LaTeX superscript of T (``\\mathrm{Overlap}`` or empty).
    """

    name: str
    expr: sp.Expr
    equation: str
    args: tuple
    numeric: Callable
    label: str
    superscript: str = ""

    @property
    def symbols(self) -> tuple:
        """The sympy symbols of :attr:`args`, in order."""
        return tuple(SYMBOLS[a] for a in self.args)

    def function(self) -> Callable:
        """``sympy.lambdify`` of :attr:`expr` (numpy), positional in :attr:`args` order."""
        return _lambdified(self.name, "step")

    def evaluate(self, **values):
        """The lambdified expression at keyword ``values`` (arrays broadcast)."""
        return self.function()(*_ordered(self, values))

    def latex(self) -> str:
        """``T_{label}^{superscript} = <expr>`` as a LaTeX string."""
        sup = f"^{{{self.superscript}}}" if self.superscript else ""
        return f"T_{{{self.label}}}{sup} = {sp.latex(self.expr)}"


def _sync_numeric(sharing: str, overlap: bool) -> Callable:
    def numeric(model_bytes, bandwidth, t_forward, t_backward, t_update, workers,
                sharing_weight=0.5):
        return coarse.sync_step_time(model_bytes, bandwidth, t_forward, t_backward, t_update,
                                     workers, sharing, overlap, sharing_weight=sharing_weight)
    numeric.__name__ = f"sync_step_time_{sharing}{'_overlap' if overlap else ''}"
    return numeric


def _allreduce_numeric(overlap: bool) -> Callable:
    def numeric(model_bytes, bandwidth, t_forward, t_backward, workers):
        return coarse.allreduce_step_time(model_bytes, bandwidth, t_forward, t_backward,
                                          workers, overlap=overlap)
    numeric.__name__ = f"allreduce_step_time{'_overlap' if overlap else ''}"
    return numeric


_SYNC_EQ = {"ps": "7", "fcfs": "8", "hybrid": "9"}
_LABEL = {"ps": r"\mathrm{PS}", "fcfs": r"\mathrm{FCFS}", "hybrid": r"\mathrm{Hybrid}"}
_OVERLAP = r"\mathrm{Overlap}"


@functools.cache
def forms() -> tuple:
    """Every symbolic form with its numeric counterpart.

    Returns
    -------
    tuple of Form
        ``ps`` (eq. 7), ``fcfs`` (eq. 8), ``hybrid`` (eq. 9 with weight w),
        their ``*_overlap`` variants (eq. 10 and its analogues), ``allreduce``
        (eq. 11) and ``allreduce_overlap``.

    References
    ----------
    Li et al. 2022, eqs. 7-11.
    """
    out = []
    for overlap in (False, True):
        for sharing in coarse.SHARINGS:
            name = sharing + ("_overlap" if overlap else "")
            if overlap:
                eq = ("Li et al. 2022 eq. 10" if sharing == "hybrid" else
                      f"Li et al. 2022 eq. 10 applied to eq. {_SYNC_EQ[sharing]} (our extension)")
            else:
                eq = f"Li et al. 2022 eq. {_SYNC_EQ[sharing]}"
            args = _SYNC_ARGS + (("sharing_weight",) if sharing == "hybrid" else ())
            out.append(Form(name, sync_step_expr(sharing, overlap), eq, args,
                            _sync_numeric(sharing, overlap), _LABEL[sharing],
                            _OVERLAP if overlap else ""))
    out.append(Form("allreduce", allreduce_step_expr(False), "Li et al. 2022 eq. 11",
                    _ALLREDUCE_ARGS, _allreduce_numeric(False), r"\mathrm{AllReduce}"))
    out.append(Form("allreduce_overlap", allreduce_step_expr(True),
                    "Li et al. 2022 eq. 11 with eq. 10's overlap (our extension)", _ALLREDUCE_ARGS,
                    _allreduce_numeric(True), r"\mathrm{AllReduce}", _OVERLAP))
    return tuple(out)


#: Names of :func:`forms`.
FORM_NAMES = ("ps", "fcfs", "hybrid", "ps_overlap", "fcfs_overlap", "hybrid_overlap",
              "allreduce", "allreduce_overlap")


def form(name: str) -> Form:
    """The :class:`Form` called ``name`` (one of :data:`FORM_NAMES`)."""
    for f in forms():
        if f.name == name:
            return f
    raise SpecError("form", f"must be one of {', '.join(FORM_NAMES)}; got {name!r}")


def _complete(f: Form, values: dict) -> dict:
    """``values`` with the defaults of missing optional arguments, checked against ``f.args``."""
    return dict(zip(f.args, _ordered(f, values)))


def _ordered(f: Form, values: dict) -> list:
    unknown = set(values) - set(f.args)
    if unknown:
        raise SpecError(sorted(unknown)[0], f"is not an argument of form {f.name!r} "
                                            f"(arguments: {', '.join(f.args)})")
    out = []
    for name in f.args:
        if name in values:
            out.append(values[name])
        elif name in _DEFAULTS:
            out.append(_DEFAULTS[name])
        else:
            raise SpecError(name, f"is required by form {f.name!r}")
    return out


# --------------------------------------------------------------------------
# Throughput, marginal gain, sensitivities
# --------------------------------------------------------------------------

def throughput_expr(name: str, batch_size=1) -> sp.Expr:
    """Throughput ``K * batch_size / T(K)`` of form ``name`` (samples/s).

    Parameters
    ----------
    name : str
        A form name (:data:`FORM_NAMES`).
    batch_size : int or sympy.Expr
        Samples per worker per step.

    Returns
    -------
    sympy.Expr, samples/s
    """
    return K * batch_size / form(name).expr


def marginal_gain_expr(name: str) -> sp.Expr:
    """Relative marginal gain ``g(K) = T(1) * d/dK [K / T(K)]`` of form ``name``.

    The throughput one more worker adds, in units of one worker's throughput
    (1 means perfect scaling).  See the module docstring.

    Returns
    -------
    sympy.Expr, dimensionless
    """
    t = form(name).expr
    return t.subs(K, 1) * sp.diff(K / t, K)


def _symbol(wrt) -> sp.Symbol:
    if isinstance(wrt, sp.Symbol):
        return wrt
    if wrt not in SYMBOLS:
        raise SpecError("wrt", f"must be one of {', '.join(SYMBOLS)}; got {wrt!r}")
    return SYMBOLS[wrt]


def sensitivity(name: str, wrt) -> sp.Expr:
    """Partial derivative ``dT/d(wrt)`` of form ``name``.

    Parameters
    ----------
    name : str
        A form name (:data:`FORM_NAMES`).
    wrt : str or sympy.Symbol
        ``"bandwidth"`` (dT/dB, s per byte/s), ``"t_forward"`` (dT/dT_F,
        dimensionless), or any other argument name or symbol.

    Returns
    -------
    sympy.Expr
        The derivative; for overlap forms it contains Heaviside steps.

    Examples
    --------
    >>> sensitivity("ps", "bandwidth")
    -2*K*M/B**2
    """
    return sp.diff(form(name).expr, _symbol(wrt))


def sensitivity_function(name: str, wrt) -> Callable:
    """Numpy function of keyword arguments evaluating :func:`sensitivity`.

    Returns
    -------
    callable
        ``f(**values)``, values named as the form's :attr:`Form.args`
        (``t_update`` and ``sharing_weight`` default to 0 and 0.5).

    Examples
    --------
    >>> d = sensitivity_function("hybrid", "t_forward")
    >>> float(d(model_bytes=1e8, bandwidth=1.25e9, t_forward=0.1, t_backward=0.2, workers=4))
    1.0
    """
    f = form(name)
    fn = _lambdified(name, "d", _symbol(wrt))

    def evaluate(**values):
        return fn(*_ordered(f, values))

    evaluate.__name__ = f"d_{name}_d_{_symbol(wrt)}"
    evaluate.__doc__ = f"dT/d{_symbol(wrt)} of form {name!r}: {sensitivity(name, wrt)}"
    return evaluate


@functools.cache
def _lambdified(name: str, what: str, wrt: sp.Symbol | None = None) -> Callable:
    """Cached numpy function of form ``name``: its step time, marginal gain,
    closed-form saturation point (extra last argument epsilon) or ``dT/d(wrt)``."""
    f = form(name)
    extra = ()
    if what == "step":
        expr = f.expr
    elif what == "gain":
        expr = marginal_gain_expr(name)
    elif what == "saturation":
        expr, extra = saturation_expr(name), (EPSILON,)
    else:  # "d"
        expr = sp.diff(f.expr, wrt)
    return sp.lambdify(f.symbols + extra, expr, "numpy")


# --------------------------------------------------------------------------
# Saturation
# --------------------------------------------------------------------------

def saturation_expr(name: str) -> sp.Expr | None:
    """Closed-form saturation point K*(epsilon) of form ``name``, or None.

    Returns
    -------
    sympy.Expr or None
        For eqs. 7-9 (T linear in K, ``T = alpha + beta K``):
        ``Max(1, (sqrt(T(1) alpha / epsilon) - alpha) / beta)``.  For eq. 11
        (``K T`` linear in K): ``oo`` if ``T(1) / T(oo) > epsilon`` else 1.
        None for the overlap forms (no closed form; see :func:`saturation_point`).

    Examples
    --------
    >>> k = saturation_expr("ps").subs({M: 1e8, B: 1.25e9, T_F: 0.1, T_B: 0.2, T_S: 0,
    ...                                 EPSILON: 0.1})
    >>> round(float(k), 4)
    5.4671
    >>> saturation_expr("hybrid_overlap") is None
    True
    """
    t = form(name).expr
    if t.has(sp.Max):
        return None
    t1 = t.subs(K, 1)
    if sp.simplify(sp.diff(t, K, 2)) == 0:
        alpha, beta = t.subs(K, 0), sp.diff(t, K)
        return sp.Max(1, (sp.sqrt(t1 * alpha / EPSILON) - alpha) / beta)
    if sp.simplify(sp.diff(K * t, K, 2)) == 0:
        limit = sp.limit(t, K, sp.oo)
        return sp.Piecewise((sp.oo, t1 / limit > EPSILON), (1, True))
    return None  # pragma: no cover - every form is one of the above


def saturation_latex(name: str) -> str | None:
    """``K^* = <closed form>`` as LaTeX, or None when there is no closed form."""
    expr = saturation_expr(name)
    return None if expr is None else f"K^{{*}} = {sp.latex(expr)}"


def _check_threshold(threshold) -> float:
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.floating)) or \
            not 0 <= threshold < 1:
        raise SpecError("threshold", f"must be a number in [0, 1), got {threshold!r}")
    return float(threshold)


#: Marginal gains within this of the threshold count as equal to it (rounding).
_GAIN_TOL = 1e-12


def _numeric_saturation(gain: Callable, args: list, eps: float, k_max: float = 1e12) -> float:
    """``inf{K >= 1 : g(k) <= eps for all k > K}`` by a geometric scan and bisection.

    The scan (4097 points from 1 to ``k_max``) finds the last K whose gain
    exceeds ``eps``; bisection then locates the crossing to 1e-12 relative.
    A gain still above ``eps`` at ``k_max`` means no saturation (``inf``).
    """
    ks = np.geomspace(1.0, k_max, 4097)
    with np.errstate(all="ignore"):
        above = np.flatnonzero(gain(*args, ks) > eps + _GAIN_TOL)
    if above.size == 0:
        return 1.0
    i = int(above[-1])
    if i == ks.size - 1:
        return math.inf
    lo, hi = float(ks[i]), float(ks[i + 1])
    while hi - lo > 1e-12 * hi:
        mid = 0.5 * (lo + hi)
        if gain(*args, mid) > eps + _GAIN_TOL:
            lo = mid
        else:
            hi = mid
    return lo


def saturation_point(name: str, *, threshold: float = 0.1, **values) -> float:
    """Real-valued number of workers K* beyond which throughput stops growing.

    The K beyond which no additional worker adds more than ``threshold`` times
    one worker's throughput (see the module docstring); closed form for eqs. 7-9
    and 11, numeric (scan and bisection of the marginal gain) for the overlap
    forms.

    Parameters
    ----------
    name : str
        A form name (:data:`FORM_NAMES`).
    threshold : float
        Relative marginal gain epsilon in [0, 1); 0 gives the point where
        throughput stops growing at all (infinite for eqs. 7-9 and 11).
    **values : float
        The form's arguments except ``workers`` (model_bytes in bytes,
        bandwidth in bytes/s, times in s; ``t_update`` defaults to 0 and
        ``sharing_weight`` to 0.5).

    Returns
    -------
    float, workers
        K* >= 1, or ``inf`` when throughput keeps growing by more than the
        threshold forever.

    Raises
    ------
    SpecError
        For a bad value (named), an unknown form or threshold.

    Examples
    --------
    Eq. 7 with M/B = 0.08 s, T_F + T_B = 0.3 s: alpha = 0.3, beta = 0.16,
    T(1) = 0.46; K* = (sqrt(0.46 * 0.3 / 0.1) - 0.3) / 0.16:

    >>> round(saturation_point("ps", model_bytes=1e8, bandwidth=1.25e9, t_forward=0.1,
    ...                        t_backward=0.2), 4)
    5.4671
    """
    f = form(name)
    eps = _check_threshold(threshold)
    if "workers" in values:
        raise SpecError("workers", "is what saturation_point solves for; do not pass it")
    full = _complete(f, dict(values, workers=1))
    f.numeric(**full)  # validates every value, naming the bad one
    args = [float(v) for v in full.values()]
    args.pop(f.args.index("workers"))
    if saturation_expr(name) is not None:
        with np.errstate(all="ignore"):
            k = float(_closed_saturation(f, args, eps))
        return max(1.0, k) if not math.isnan(k) else math.inf
    gain = _gain_by_position(name)
    return _numeric_saturation(gain, args, eps)


def _closed_saturation(f: Form, args: list, eps: float) -> float:
    positional = list(args)
    positional.insert(f.args.index("workers"), 1.0)  # K does not appear in K*
    return _lambdified(f.name, "saturation")(*positional, eps)


@functools.cache
def _gain_by_position(name: str) -> Callable:
    """The marginal gain as ``g(*args_without_workers, K)``."""
    f = form(name)
    fn = _lambdified(name, "gain")
    k_at = f.args.index("workers")

    def gain(*args):
        *rest, k = args
        rest.insert(k_at, k)
        return fn(*rest)

    return gain


def saturation_workers(name: str, *, threshold: float = 0.1, **values):
    """Integer saturation point: the largest K whose K-th worker is still worth it.

    The largest whole K >= 1 with ``X(K) - X(K-1) > threshold * X(1)``, where
    ``X(K) = K / T(K)`` is computed by the numeric model (:attr:`Form.numeric`)
    and ``X(0) = 0``.  It is ``floor(K*)`` or ``floor(K*) + 1`` of
    :func:`saturation_point`, whichever satisfies the condition.

    Parameters
    ----------
    name : str
        A form name (:data:`FORM_NAMES`).
    threshold : float
        Relative marginal gain epsilon in [0, 1).
    **values : float
        As for :func:`saturation_point`.

    Returns
    -------
    int or float
        The number of workers, or ``math.inf`` when throughput never saturates.

    Examples
    --------
    >>> saturation_workers("ps", model_bytes=1e8, bandwidth=1.25e9, t_forward=0.1,
    ...                    t_backward=0.2)
    5
    """
    k_real = saturation_point(name, threshold=threshold, **values)
    if math.isinf(k_real):
        return math.inf
    full = _complete(form(name), dict(values, workers=1))

    def rate(k):
        return k / form(name).numeric(**dict(full, workers=k))

    floor = rate(1) * threshold

    def worth(k):
        high = rate(k)
        return k == 1 or high - rate(k - 1) > floor + _GAIN_TOL * high

    n = max(1, int(math.floor(k_real)))
    while n > 1 and not worth(n):
        n -= 1
    while n < k_real + 2 and worth(n + 1):
        n += 1
    return n


def latex(name: str) -> str:
    r"""``T_{label} = <expression>`` of form ``name`` as a LaTeX string.

    Examples
    --------
    >>> print(latex("fcfs"))
    T_{\mathrm{FCFS}} = T_{B} + T_{F} + T_{S} + \frac{K M}{B} + \frac{M}{B}
    """
    return form(name).latex()
