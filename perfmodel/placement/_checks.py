"""Input checks shared by :mod:`perfmodel.placement` (SpecError naming the argument)."""

from __future__ import annotations

import math
import numbers

import numpy as np

from .. import units
from ..errors import SpecError

__all__: list[str] = []


def number(name: str, value, unit: str = "1", *, positive: bool = False,
           minimum: float | None = None, finite: bool = True) -> float:
    """``value`` as a float (unit strings accepted at the edge), or SpecError naming ``name``."""
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


def integer(name: str, value, *, minimum: int = 0) -> int:
    """``value`` as an int >= ``minimum``, or SpecError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise SpecError(name, f"expected an integer, got {type(value).__name__} {value!r}")
    if isinstance(value, numbers.Integral):
        out = int(value)
    elif math.isfinite(value) and value == int(value):
        out = int(value)
    else:
        raise SpecError(name, f"expected an integer, got {value!r}")
    if out < minimum:
        raise SpecError(name, f"must be >= {minimum}, got {out}")
    return out


def choice(name: str, value, choices: tuple) -> str:
    """``value`` if it is one of ``choices``, else SpecError naming ``name``."""
    if not isinstance(value, str) or value not in choices:
        raise SpecError(name, f"must be one of {', '.join(choices)}; got {value!r}")
    return value


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
