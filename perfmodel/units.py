"""Units: SI constants and parsing of unit strings at the edges.

Everything inside perfmodel is SI: seconds, bytes, bytes per second, FLOP and
FLOP/s.  Unit strings such as ``"10 Gbps"``, ``"97.49 MB"`` or ``"40ms"`` are
accepted only where users type them (files, the CLI) and are converted here.

Rules
-----
* ``b``/``bit`` are bits, ``B`` is bytes; ``bps`` and ``b/s`` are bits per second.
* ``k``/``K``, ``M``, ``G``, ``T``, ``P`` are SI powers of ten;
  ``Ki``, ``Mi``, ``Gi``, ``Ti`` are powers of two.
* Times: ``s``, ``ms``, ``us`` (or ``µs``), ``ns``, ``min``, ``h``.
* Plain numbers (or numeric strings) pass through unchanged as SI values.

Examples
--------
>>> parse("10Gbps", "B/s")
1250000000.0
>>> parse("97.49MB", "B")
97490000.0
>>> parse("40ms", "s")
0.04
>>> parse("1 KiB", "B")
1024.0
"""

from __future__ import annotations

import math
import re
import reprlib
from decimal import Decimal

from .errors import SpecError

__all__ = [
    "parse", "format_value", "exact_text", "shown", "DIMENSIONS", "PHYSICAL_RANGE",
    "B", "kB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB",
    "bit", "Kbit", "Mbit", "Gbit",
    "Bps", "kBps", "MBps", "GBps", "bps", "Kbps", "Mbps", "Gbps", "Tbps",
    "s", "ms", "us", "ns", "minute", "hour",
    "FLOP", "GFLOP", "TFLOP", "GFLOPS", "TFLOPS",
]

# Bytes
B = 1.0
kB, MB, GB, TB = 1e3, 1e6, 1e9, 1e12
KiB, MiB, GiB, TiB = 2.0 ** 10, 2.0 ** 20, 2.0 ** 30, 2.0 ** 40
bit = 1.0 / 8.0
Kbit, Mbit, Gbit = 1e3 * bit, 1e6 * bit, 1e9 * bit
# Bytes per second
Bps = 1.0
kBps, MBps, GBps = 1e3, 1e6, 1e9
bps = bit
Kbps, Mbps, Gbps, Tbps = 1e3 * bit, 1e6 * bit, 1e9 * bit, 1e12 * bit
# Seconds
s, ms, us, ns = 1.0, 1e-3, 1e-6, 1e-9
minute, hour = 60.0, 3600.0
# Floating-point work
FLOP, GFLOP, TFLOP = 1.0, 1e9, 1e12
GFLOPS, TFLOPS = 1e9, 1e12

_PREFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15,
           "Ki": 2.0 ** 10, "Mi": 2.0 ** 20, "Gi": 2.0 ** 30, "Ti": 2.0 ** 40, "Pi": 2.0 ** 50}
_TIME = {"s": 1.0, "sec": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "μs": 1e-6,
         "ns": 1e-9, "min": 60.0, "h": 3600.0}
_BASE_BYTES = {"B": 1.0, "byte": 1.0, "bytes": 1.0, "b": 0.125, "bit": 0.125, "bits": 0.125}
_BASE_RATE = {"B/s": 1.0, "Bps": 1.0, "bps": 0.125, "b/s": 0.125, "bit/s": 0.125}
_BASE_FLOPS = {"FLOP/s": 1.0, "FLOPS": 1.0, "flop/s": 1.0}
_BASE_FLOP = {"FLOP": 1.0, "flop": 1.0}

#: The dimensions :func:`parse` knows, with their SI unit strings.
DIMENSIONS = ("B", "B/s", "s", "FLOP", "FLOP/s", "1")

_NUMBER = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(.*?)\s*$")


def _unit_scale(suffix: str, dimension: str) -> float | None:
    """Scale of ``suffix`` in the SI unit of ``dimension``, or None if unknown."""
    if suffix == "":
        return 1.0  # a bare number is already SI
    if dimension == "s":
        return _TIME.get(suffix)
    if dimension == "1":
        return None  # a plain number takes no unit
    table = {"B": _BASE_BYTES, "B/s": _BASE_RATE, "FLOP": _BASE_FLOP,
             "FLOP/s": _BASE_FLOPS}[dimension]
    for base, scale in table.items():
        if suffix.endswith(base):
            prefix = suffix[: len(suffix) - len(base)]
            if prefix in _PREFIX:
                return _PREFIX[prefix] * scale
    return None


#: Magnitudes a quantity may take (SI), 0 aside: far beyond any real cluster, yet
#: small enough that products of a few of them (bytes x workers / rate) stay
#: finite, so overflow to inf is refused where it would start.
PHYSICAL_RANGE = {"B": (0.0, 1e18), "s": (0.0, 1e9), "B/s": (1.0, 1e16),
                  "FLOP": (0.0, 1e24), "FLOP/s": (1.0, 1e21)}

_SHORT = reprlib.Repr()
_SHORT.maxstring, _SHORT.maxother, _SHORT.maxlevel, _SHORT.maxlong = 50, 50, 3, 40

#: An example per dimension, for the error that asks for a unit.
_EXAMPLE = {"B": "100MB", "B/s": "10Gbps", "s": "40ms", "FLOP": "2GFLOP", "FLOP/s": "10TFLOP/s"}


def parse(value, unit: str, *, require_unit: bool = False) -> float:
    """Convert a number or a unit string to SI.

    Parameters
    ----------
    value : float, int or str
        A plain number (taken as already SI) or a string such as ``"10 Gbps"``.
    unit : {"B", "B/s", "s", "FLOP", "FLOP/s", "1"}
        The dimension expected; a string in another dimension is an error.
    require_unit : bool
        Refuse a bare non-zero number (``"10"``, ``10``) for a dimensional
        ``unit``: on the command line ``--bandwidth 10`` is far more likely
        10 Gbps than 10 B/s, so it must say which.  ``0`` needs no unit.

    Returns
    -------
    float
        The value in the SI unit of ``unit`` (bytes, bytes/s, seconds, ...).

    Raises
    ------
    SpecError
        For an unknown unit, a unit of the wrong dimension, a non-number, NaN
        or infinity.  The error's field is empty; callers nest it with
        :meth:`SpecError.within`.
    """
    if unit not in DIMENSIONS:
        raise ValueError(f"unknown dimension {unit!r}; expected one of {DIMENSIONS}")
    if isinstance(value, bool):
        raise SpecError("", f"expected a number or a string with unit {unit!r}, got {value!r}")
    if isinstance(value, (int, float)):
        try:
            out = float(value)
        except OverflowError:
            raise SpecError("", f"integer of {value.bit_length()} bits is too large") from None
        bare = True
    elif isinstance(value, str):
        m = _NUMBER.match(value)
        if not m:
            raise SpecError("", f"cannot read {shown(value)} as a quantity in {unit!r}")
        scale = _unit_scale(m.group(2), unit)
        if scale is None:
            raise SpecError("", f"unknown unit {shown(m.group(2))} in {shown(value)} "
                                f"(expected a unit of {unit!r})")
        try:
            # Decimal keeps "50us" == 5e-05 exactly (50 * 1e-6 in binary is not).
            out = float(Decimal(m.group(1)) * Decimal(repr(scale)))
        except ArithmeticError:  # decimal.Overflow on exponents beyond Decimal's range
            raise SpecError("", f"value {shown(value)} is out of range") from None
        bare = m.group(2) == ""
    else:
        try:
            out = float(value)  # numpy scalars
        except (TypeError, ValueError):
            raise SpecError("", f"expected a number or a string with unit {unit!r}, "
                                f"got {type(value).__name__} {value!r}") from None
    if not math.isfinite(out):
        raise SpecError("", f"value {shown(value)} is not finite")
    low, high = PHYSICAL_RANGE.get(unit, (0.0, math.inf))
    if abs(out) > high or 0 < abs(out) < low:
        span = f"between {low:g} and {high:g} {unit}, or 0" if low else f"at most {high:g} {unit}"
        raise SpecError("", f"{shown(value)} is outside the physical range: {span}")
    if require_unit and bare and unit != "1" and out != 0:
        raise SpecError("", f"{shown(value)} needs a unit, e.g. {_EXAMPLE[unit]} "
                            f"(a bare number would mean {out:g} {unit})")
    return out


def shown(value, limit: int = 60) -> str:
    """``repr(value)`` for error messages, cut to ``limit`` characters.

    A long or deeply nested value (a YAML alias bomb expands to gigabytes) is
    shown by type and size, never in full: ``reprlib`` stops at its limits
    without building the whole representation.
    """
    text = _SHORT.repr(value)
    if len(text) <= limit:
        return text
    size = f" of length {len(value)}" if hasattr(value, "__len__") else ""
    head = f"<{type(value).__name__}{size}: "
    return head + text[:max(limit - len(head) - 4, 0)] + "...>"


def format_value(value: float, unit: str) -> str:
    """Format an SI value for people: bytes in MB/GB, rates in Gbps, times in ms/s."""
    if unit == "B/s":
        return f"{value * 8 / 1e9:.4g} Gbps"
    if unit == "B":
        for name, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
            if abs(value) >= scale:
                return f"{value / scale:.4g} {name}"
        return f"{value:.4g} B"
    if unit == "s":
        if abs(value) < 1.0:
            return f"{value * 1e3:.4g} ms"
        return f"{value:.4g} s"
    return f"{value:.4g}"


#: Units :func:`exact_text` writes, largest first, per dimension.
_FILE_UNITS = {"B": (("GB", 1e9), ("MB", 1e6), ("kB", 1e3), ("B", 1.0)),
               "B/s": (("Gbps", 1e9 / 8), ("Mbps", 1e6 / 8), ("B/s", 1.0)),
               "s": (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9))}


def exact_text(value: float, unit: str) -> str | float:
    """``value`` (SI) as a unit string that :func:`parse` reads back to exactly ``value``.

    Files written by the toolkit carry units, so that they are read the way
    people read them and never need the convention that a bare number is SI.
    The unit chosen is the largest that keeps the number at 1 or more (``"10
    Gbps"``, ``"97.49 MB"``, ``"40 ms"``), with the fewest digits that
    round-trip; 0 stays a bare 0.  Dimensions other than bytes, rates and
    times pass through as numbers.

    Examples
    --------
    >>> exact_text(1.25e9, "B/s"), exact_text(0.04, "s"), exact_text(0.0, "s")
    ('10 Gbps', '40 ms', 0.0)
    """
    if unit not in _FILE_UNITS or value == 0:
        return value
    candidates = _FILE_UNITS[unit]
    start = next((i for i, (_, scale) in enumerate(candidates) if abs(value) >= scale),
                 len(candidates) - 1)
    for name, scale in candidates[start:] + candidates[:start]:
        for digits in range(1, 18):
            number = repr(float(f"{value / scale:.{digits}g}"))
            text = f"{number[:-2] if number.endswith('.0') else number} {name}"
            if parse(text, unit) == value:
                return text
    return f"{value!r} {candidates[-1][0] if unit != 's' else 's'}"
