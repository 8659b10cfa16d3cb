"""units.parse: the contract examples, prefixes, bits vs bytes, and bad input."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from perfmodel import units
from perfmodel.errors import SpecError


@pytest.mark.parametrize("text, unit, expected", [
    ("10Gbps", "B/s", 1.25e9),           # contract: 10e9 bits/s / 8
    ("97.49MB", "B", 97.49e6),           # contract
    ("40ms", "s", 0.04),                 # contract
    ("1 KiB", "B", 1024.0),
    ("2 GiB", "B", 2 * 1024 ** 3),
    ("1 MiB", "B", 1048576.0),
    ("8 b", "B", 1.0),                   # 8 bits = 1 byte
    ("8 Mbit", "B", 1e6),
    ("25 Gbit/s", "B/s", 25e9 / 8),
    ("100 MB/s", "B/s", 1e8),
    ("1 GBps", "B/s", 1e9),
    ("250us", "s", 250e-6),
    ("3 ns", "s", 3e-9),
    ("2 min", "s", 120.0),
    ("1.5h", "s", 5400.0),
    ("7", "s", 7.0),                      # bare numbers are already SI
    ("1e3", "B", 1000.0),
    ("15 TFLOP/s", "FLOP/s", 15e12),
])
def test_parse_known_values(text, unit, expected):
    assert units.parse(text, unit) == pytest.approx(expected, rel=1e-12)


def test_constants_are_si():
    assert units.Gbps == 1.25e8
    assert units.MiB == 2 ** 20
    assert units.ms == 1e-3
    assert 10 * units.Gbps == units.parse("10Gbps", "B/s")


@pytest.mark.parametrize("text, unit", [
    ("10 furlongs", "B"), ("10 Gbps", "s"), ("40 ms", "B"), ("abc", "B"), ("", "s"),
    ("10 mB", "B"),  # milli-bytes make no sense
])
def test_parse_rejects_unknown_or_wrong_dimension(text, unit):
    with pytest.raises(SpecError):
        units.parse(text, unit)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), "nan", "inf s", True, None, [1]])
def test_parse_rejects_non_numbers(value):
    with pytest.raises(SpecError):
        units.parse(value, "s")


@given(st.floats(min_value=8e-6, max_value=1e6, allow_nan=False))  # >= 1 B/s: PHYSICAL_RANGE
def test_bits_are_an_eighth_of_bytes(x):
    assert units.parse(f"{x!r} Mbps", "B/s") == pytest.approx(units.parse(f"{x!r} MB/s", "B/s") / 8)


@given(st.floats(min_value=0, max_value=1e12, allow_nan=False, allow_infinity=False))
def test_numbers_pass_through(x):
    assert units.parse(x, "B") == x
    assert units.parse(repr(x), "B") == pytest.approx(x)


def test_format_value_round_numbers():
    assert units.format_value(1.25e9, "B/s") == "10 Gbps"
    assert units.format_value(0.04, "s") == "40 ms"
    assert units.format_value(97.49e6, "B") == "97.49 MB"
    assert not math.isnan(units.parse("0 s", "s"))


def test_physical_range_refuses_what_would_overflow_and_names_the_bound():
    for text, unit in (("1e300B", "B"), ("1e308s", "s"), ("1e-300bps", "B/s"), ("1e17GB/s", "B/s")):
        with pytest.raises(SpecError, match="physical range"):
            units.parse(text, unit)
    low, high = units.PHYSICAL_RANGE["B/s"]
    assert units.parse(f"{low}B/s", "B/s") == low and units.parse(f"{high}B/s", "B/s") == high
    assert units.parse("0bps", "B/s") == 0.0          # 0 is always allowed
    # products of a few extreme values stay finite: the point of the bounds
    assert math.isfinite(units.PHYSICAL_RANGE["B"][1] * 1e6 / units.PHYSICAL_RANGE["B/s"][0])


def test_require_unit_refuses_bare_numbers_but_zero():
    for value in ("10", 10, 10.0, " 40 "):
        with pytest.raises(SpecError, match="needs a unit"):
            units.parse(value, "B/s", require_unit=True)
    assert units.parse("0", "B/s", require_unit=True) == 0.0
    assert units.parse("10Gbps", "B/s", require_unit=True) == 1.25e9
    assert units.parse("10", "1", require_unit=True) == 10.0   # dimensionless: no unit
    assert units.parse("10", "B/s") == 10.0                     # the API default: SI


def test_out_of_range_exponents_and_huge_integers_are_errors_not_crashes():
    for value in ("1e99999999999Gbps", 10 ** 400, "12 img/s"):
        with pytest.raises(SpecError):
            units.parse(value, "B/s" if not isinstance(value, str) or "Gbps" in value else "1")


def test_shown_bounds_the_repr_of_huge_and_deep_values():
    deep = []
    for _ in range(10_000):
        deep = [deep, deep]   # shared: cheap to build, exponential to print in full
    assert len(units.shown(deep)) <= 60
    assert len(units.shown("x" * 10 ** 6)) <= 60
    assert units.shown("10 Gbps") == "'10 Gbps'"
