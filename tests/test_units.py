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


@given(st.floats(min_value=1e-6, max_value=1e6, allow_nan=False))
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
