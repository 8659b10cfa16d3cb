"""Argument checks shared by every module: a SpecError naming the argument, or the value.

Public names inside a private module: the formulas, models and fitting code
import these instead of each keeping a copy.  The array checks are a handful of
whole-array numpy operations (never a Python loop over elements), and a plain
``float``/``int`` that passes takes a scalar fast path, because the formulas
validate on every call and a search calls them millions of times.

NaN fails every check that compares (every comparison with NaN is false).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from . import units
from .errors import SpecError

__all__ = [
    # arrays (broadcasting formulas)
    "as_array", "first_bad", "checked", "counts", "checked_cap", "finite_real", "fraction",
    "broadcast_result", "axis_index",
    # scalars
    "number", "scalar", "integer", "boolean", "choice", "unit_interval", "at_least_one",
    "nonnegative",
    # randomness
    "generator", "seed_sequence",
    "MAX_CV", "SCALAR_TYPES",
]

#: Largest coefficient of variation of a compute time accepted anywhere: beyond
#: it a normal or lognormal step time is meaningless and its maxima overflow.
MAX_CV = 100.0

#: Types of a plain real number: Python's float and int and numpy's real scalars
#: (``bool`` and ``np.bool_`` are not numbers here).  A value whose type is in
#: this set takes the scalar fast paths (a type lookup, then float comparisons);
#: anything else goes through the array checks, which raise the SpecError.
SCALAR_TYPES = frozenset({float, int, np.float64, np.float32, np.float16,
                          np.int64, np.int32, np.int16, np.int8,
                          np.uint64, np.uint32, np.uint16, np.uint8})


# --------------------------------------------------------------------------
# Arrays
# --------------------------------------------------------------------------

def as_array(name: str, value) -> np.ndarray:
    """``value`` as a float array, or SpecError naming ``name`` (booleans and strings fail)."""
    if isinstance(value, (bool, np.bool_)):
        raise SpecError(name, f"expected a number, got {value!r}")
    if isinstance(value, str):
        raise SpecError(name, f"expected a number or an array of numbers, "
                              f"got the string {value!r}")
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise SpecError(name, f"expected a number or an array of numbers, "
                              f"got {type(value).__name__} {value!r}") from None


def first_bad(array: np.ndarray, ok: np.ndarray) -> float:
    """The first element of ``array`` where ``ok`` is false (for error messages)."""
    return array.flat[int(np.flatnonzero(~np.broadcast_to(ok, array.shape))[0])]


def _scalar_ok(x: float, positive: bool, finite: bool, integer: bool, minimum, maximum) -> bool:
    """Whether a plain float passes every check of :func:`checked` (else take the slow path)."""
    if minimum is not None:
        ok = x >= minimum
    else:
        ok = x > 0 if positive else x >= 0
    if maximum is not None:
        ok = ok and x <= maximum
    if finite:
        ok = ok and x != math.inf
    if integer:
        ok = ok and math.isfinite(x) and x == math.floor(x)
    return ok


def checked(name: str, value, *, positive: bool = False, finite: bool = True,
            integer: bool = False, minimum: float | None = None,
            maximum: float | None = None) -> np.ndarray:
    """``value`` as a float array (a float for a plain scalar), or SpecError naming
    ``name`` and the first bad element.

    Non-negative by default; ``positive`` asks for > 0, ``minimum`` for >= it
    (instead of either), ``maximum`` for <= it, ``integer`` for whole numbers;
    ``finite=False`` admits ``inf``.
    """
    if type(value) in SCALAR_TYPES:  # fast path for plain scalars
        x = float(value)
        if _scalar_ok(x, positive, finite, integer, minimum, maximum):
            return x
    a = as_array(name, value)
    if minimum is not None:
        ok, rule = a >= minimum, f">= {minimum:g}"
    elif positive:
        ok, rule = a > 0, "> 0"
    else:
        ok, rule = a >= 0, ">= 0"
    if not ok.all():
        raise SpecError(name, f"must be {rule} (and not NaN), got {first_bad(a, ok)!r}")
    if maximum is not None and not (a <= maximum).all():
        raise SpecError(name, f"must be <= {maximum:g}, got {first_bad(a, a <= maximum)!r}")
    if finite and not np.isfinite(a).all():
        raise SpecError(name, f"must be finite, got {first_bad(a, np.isfinite(a))!r}")
    if integer:
        whole = a == np.floor(a)
        if not whole.all():
            raise SpecError(name, f"must be a whole number, got {first_bad(a, whole)!r}")
    return a


def counts(name: str, value):
    """Whole numbers >= 1 (workers, servers), as a float (plain scalar) or an array."""
    return checked(name, value, minimum=1, integer=True)


def checked_cap(name: str, value) -> np.ndarray | None:
    """A per-flow cap: None (no cap) or positive rates; ``inf`` means no cap."""
    if value is None:
        return None
    cap = checked(name, value, positive=True, finite=False)
    return None if np.all(np.isinf(cap)) else cap


def finite_real(name: str, value):
    """Finite real numbers of any sign, as a float (plain scalar) or an array."""
    if type(value) in SCALAR_TYPES:
        if math.isfinite(value):
            return float(value)
    a = as_array(name, value)
    ok = np.isfinite(a)
    if not ok.all():
        raise SpecError(name, f"must be finite (and not NaN), got {first_bad(a, ok)!r}")
    return a


def fraction(name: str, value, *, closed: bool = True):
    """Numbers in [0, 1] (``closed=False``: [0, 1)), as a float or an array."""
    x = checked(name, value, maximum=1.0)
    if not closed and np.any(np.asarray(x) >= 1.0):
        a = np.asarray(x)
        raise SpecError(name, f"must be < 1, got {first_bad(a, a < 1)!r}")
    return x


def broadcast_result(result, *inputs):
    """A float when every input was a scalar, else an array of the inputs' broadcast shape.

    Inputs that are None (an absent option) do not shape the result.
    """
    shape = np.broadcast_shapes(*(np.shape(x) for x in inputs if x is not None))
    if shape == ():
        return float(result)
    result = np.asarray(result, dtype=float)
    if result.shape != shape:  # inputs that cost nothing (one server, no cap) still shape it
        result = np.array(np.broadcast_to(result, shape))
    return result


def axis_index(name: str, axis, ndim: int) -> int:
    """``axis`` as a non-negative axis of an ``ndim``-dimensional array."""
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, numbers.Integral):
        raise SpecError(name, f"expected an integer axis, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise SpecError(name, f"axis {axis} is out of range for {ndim}-dimensional input")
    return int(axis) % ndim


# --------------------------------------------------------------------------
# Scalars
# --------------------------------------------------------------------------

def scalar(name: str, value, **rules) -> float:
    """One number passing :func:`checked`'s ``rules``, as a float (arrays fail)."""
    if np.ndim(value) != 0:
        raise SpecError(name, f"expected a number, got {value!r}")
    return float(checked(name, value, **rules))


def number(name: str, value, unit: str = "1", *, positive: bool = False,
           minimum: float | None = None, finite: bool = True) -> float:
    """``value`` as a float (unit strings accepted at the edge), or SpecError naming ``name``.

    ``unit`` is a :func:`perfmodel.units.parse` dimension (``"B"``, ``"B/s"``,
    ``"s"``); ``"1"`` (the default) reads a plain number from a string.
    """
    if isinstance(value, bool):
        raise SpecError(name, f"expected a number, got {value!r}")
    if isinstance(value, str):
        try:
            x = units.parse(value, unit) if unit != "1" else _plain(name, value)
        except SpecError as err:
            raise SpecError(name, err.message) from None
    elif isinstance(value, numbers.Real):
        x = float(value)
    else:
        raise SpecError(name, f"expected a number, got {type(value).__name__} {value!r}")
    if math.isnan(x):
        raise SpecError(name, "must be a number, got nan")
    if finite and math.isinf(x):
        raise SpecError(name, f"must be finite, got {x!r}")
    if positive and not x > 0:
        raise SpecError(name, f"must be > 0, got {value!r}")
    if minimum is not None and not x >= minimum:
        raise SpecError(name, f"must be >= {minimum:g}, got {value!r}")
    return x


def _plain(name: str, value: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise SpecError(name, f"expected a number, got {value!r}") from None


def integer(name: str, value, *, minimum: int = 0, maximum: int | None = None,
            whole_floats: bool = True) -> int:
    """``value`` as an int in [minimum, maximum], or SpecError naming ``name``.

    ``whole_floats`` admits a float without a fraction (``3.0``); counts that
    size arrays or loops (simulation steps) refuse them.
    """
    integral = isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))
    if not integral:
        if not (whole_floats and isinstance(value, numbers.Real)
                and not isinstance(value, (bool, np.bool_))
                and math.isfinite(value) and value == int(value)):
            raise SpecError(name, f"expected an integer, got {type(value).__name__} {value!r}")
    out = int(value)
    if out < minimum or (maximum is not None and out > maximum):
        bound = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
        raise SpecError(name, f"must be {bound}, got {out}")
    return out


def boolean(name: str, value) -> bool:
    """``value`` as a bool (numpy's too); anything else is a SpecError."""
    if not isinstance(value, (bool, np.bool_)):
        raise SpecError(name, f"expected True or False, got {value!r}")
    return bool(value)


def choice(name: str, value, choices: tuple) -> str:
    """``value`` if it is one of ``choices``, else SpecError naming ``name``."""
    if not isinstance(value, str) or value not in choices:
        raise SpecError(name, f"must be one of {', '.join(choices)}; got {value!r}")
    return value


def _real_scalar(value) -> bool:
    return not isinstance(value, (bool, np.bool_)) and isinstance(value, numbers.Real)


def unit_interval(name: str, value) -> float:
    """A number strictly between 0 and 1 (an interval level), as a float."""
    if not _real_scalar(value) or not 0 < value < 1:
        raise SpecError(name, f"must be a number in (0, 1), got {value!r}")
    return float(value)


def at_least_one(name: str, value) -> float:
    """A number >= 1 (``math.inf`` allowed), as a float: a factor that widens a band."""
    if not _real_scalar(value) or not value >= 1.0:
        raise SpecError(name, f"must be a number >= 1, got {value!r}")
    return float(value)


def nonnegative(name: str, value) -> float:
    """A finite number >= 0, as a float."""
    if not _real_scalar(value) or not math.isfinite(value) or value < 0:
        raise SpecError(name, f"must be a finite number >= 0, got {value!r}")
    return float(value)


# --------------------------------------------------------------------------
# Randomness (always through an explicit seed)
# --------------------------------------------------------------------------

def generator(seed) -> np.random.Generator:
    """A numpy Generator from an int seed, a SeedSequence or a Generator (passed through)."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, np.random.SeedSequence):
        return np.random.default_rng(seed)
    if seed is None or isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise SpecError("seed", f"expected an int, a SeedSequence or a numpy Generator "
                                f"(randomness needs an explicit seed), got {seed!r}")
    if seed < 0:
        raise SpecError("seed", f"must be >= 0, got {seed}")
    return np.random.default_rng(int(seed))


def seed_sequence(seed) -> np.random.SeedSequence:
    """A SeedSequence from an int seed or a SeedSequence; SpecError otherwise."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if seed is None or isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise SpecError("seed", f"expected an int or a numpy SeedSequence "
                                f"(randomness needs an explicit seed), got {seed!r}")
    if seed < 0:
        raise SpecError("seed", f"must be >= 0, got {seed}")
    return np.random.SeedSequence(int(seed))
