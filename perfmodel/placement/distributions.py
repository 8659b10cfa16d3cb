"""Compute-time distributions of workers and parameter servers (Jain, Kumar, Mao, Sec. 5).

Jain, Kumar and Mao sample each worker's gradient computation and each
parameter server's update from empirical, heavy-tailed latency distributions
measured on EC2 (Figs. 6 and 7), then repeat their experiments with normal
distributions of the same mean and standard deviation, smaller standard
deviations (Fig. 9) and smaller means (Fig. 10).  Every distribution here is a
small frozen object with ``sample(rng, size)``, ``mean`` and ``std``;
randomness comes only from the numpy Generator passed in.

* :class:`Constant` -- deterministic (the closed-form oracle).
* :class:`Normal` -- mean and standard deviation; clipped below at ``minimum``
  (default 0 s: a computation cannot take negative time).  ``mean``/``std``
  report the parameters, not the clipped moments.
* :class:`LogNormal` -- parameterized by its own mean and standard deviation.
* :class:`Pareto` -- heavy tail: ``loc + scale * X`` with ``X >= 1`` Pareto of
  index ``shape`` (durations start at ``loc + scale``).
* :class:`Empirical` -- resampling with replacement from measured samples.

:class:`Empirical` is :class:`perfmodel.gst.maxima.Empirical`, shared with the
GST model's order statistics so that a measured sample is one object in both
places.  It lives below this package (gst must not import placement), so it
is a *registered* :class:`Distribution`: ``isinstance`` holds, but it does not
inherit :meth:`Distribution.scaled` (call ``Distribution.scaled(sample,
...)``).  It accepts values of any sign (the GST model takes deviations);
:func:`as_distribution`, through which every simulator takes its compute
times, rejects a sample with a negative duration.

The figures' underlying samples are not published in the paper (its text
carries only the histograms' captions: heavy tails, "a few samples were
distributed out to 8 s"), so :func:`heavy_tailed_worker` and
:func:`heavy_tailed_server` are *assumed* stand-ins of that shape, documented
as such; load real measurements with :class:`Empirical`.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> LogNormal(0.5, 0.25).sample(rng, 100_000).mean().round(2)
np.float64(0.5)
>>> from_string("normal:0.3,0.05")
Normal(mean=0.3, std=0.05, minimum=0.0)

References
----------
Jain, Kumar, Mao, "Characterizing Distributed Deep Learning Training
Performance in Datacenters": Sec. 4.2 (sampled compute delays), Sec. 5.1
(Figs. 6-7, heavy tails), Sec. 5.3 (Figs. 9-10, normal with ``mu0, sigma0``
scaled).
"""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass

import numpy as np

from .. import _validate as _v
from ..errors import SpecError
from ..gst.maxima import Empirical

__all__ = ["Distribution", "Constant", "Normal", "LogNormal", "Pareto", "Empirical",
           "as_distribution", "from_string", "heavy_tailed_worker", "heavy_tailed_server"]


class Distribution(abc.ABC):
    """Base class: a non-negative random duration (s).

    Subclasses provide ``sample(rng, size)`` and the attributes or properties
    ``mean`` and ``std`` (s).  :class:`Empirical` is registered as one (module
    notes) and does not inherit :meth:`scaled`.
    """

    @abc.abstractmethod
    def sample(self, rng: np.random.Generator, size) -> np.ndarray:
        """``size`` independent draws (s) using ``rng``."""

    def scaled(self, mean_factor: float = 1.0, std_factor: float = 1.0) -> Normal:
        """The normal of Jain, Kumar, Mao, Sec. 5.3: ``N(mean_factor mu0, std_factor sigma0)``.

        ``mu0``, ``sigma0`` are this distribution's mean and standard deviation
        (Fig. 9 varies ``std_factor`` in 1, 1/2, 1/4; Fig. 10 ``mean_factor``
        in 1, 1/2, 1/4 with ``std_factor = 1/4``).
        """
        m = _v.number("mean_factor", mean_factor, minimum=0.0)
        s = _v.number("std_factor", std_factor, minimum=0.0)
        return Normal(self.mean * m, self.std * s)


@dataclass(frozen=True)
class Constant(Distribution):
    """Always ``value`` seconds (>= 0)."""

    value: float

    def __post_init__(self):
        object.__setattr__(self, "value", _v.number("value", self.value, "s", minimum=0.0))

    def sample(self, rng, size):
        return np.full(size, self.value)

    @property
    def mean(self) -> float:
        return self.value

    @property
    def std(self) -> float:
        return 0.0


@dataclass(frozen=True)
class Normal(Distribution):
    """Normal with mean ``mean`` and standard deviation ``std`` (s), clipped below at ``minimum``."""

    mean: float
    std: float
    minimum: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "mean", _v.number("mean", self.mean, "s", minimum=0.0))
        object.__setattr__(self, "std", _v.number("std", self.std, "s", minimum=0.0))
        object.__setattr__(self, "minimum", _v.number("minimum", self.minimum, "s",
                                                           minimum=0.0))

    def sample(self, rng, size):
        return np.maximum(rng.normal(self.mean, self.std, size), self.minimum)


@dataclass(frozen=True)
class LogNormal(Distribution):
    """Lognormal with the given mean and standard deviation (s) of the variable itself.

    ``sigma^2 = ln(1 + std^2 / mean^2)``, ``mu = ln(mean) - sigma^2 / 2`` for
    the underlying normal.
    """

    mean: float
    std: float

    def __post_init__(self):
        object.__setattr__(self, "mean", _v.number("mean", self.mean, "s", positive=True))
        object.__setattr__(self, "std", _v.number("std", self.std, "s", minimum=0.0))

    @property
    def log_params(self) -> tuple[float, float]:
        """``(mu, sigma)`` of the underlying normal."""
        s2 = math.log1p((self.std / self.mean) ** 2)
        return math.log(self.mean) - s2 / 2, math.sqrt(s2)

    def sample(self, rng, size):
        mu, sigma = self.log_params
        return rng.lognormal(mu, sigma, size)


@dataclass(frozen=True)
class Pareto(Distribution):
    """Heavy-tailed Pareto durations: ``loc + scale * X`` with ``X`` Pareto (type I) of index ``shape``.

    ``X >= 1`` has survival ``x**-shape``; so durations start at ``loc +
    scale``.  The mean is finite for ``shape > 1``, the variance for ``shape
    > 2`` (``std`` is ``inf`` otherwise).
    """

    scale: float
    shape: float
    loc: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "scale", _v.number("scale", self.scale, "s", positive=True))
        object.__setattr__(self, "shape", _v.number("shape", self.shape, positive=True))
        object.__setattr__(self, "loc", _v.number("loc", self.loc, "s", minimum=0.0))

    @classmethod
    def from_mean(cls, mean: float, shape: float, loc: float = 0.0) -> Pareto:
        """The Pareto of index ``shape`` (> 1) whose mean is ``mean`` (> ``loc``)."""
        a = _v.number("shape", shape, positive=True)
        if a <= 1:
            raise SpecError("shape", f"a finite mean needs shape > 1, got {shape!r}")
        m = _v.number("mean", mean, "s", positive=True)
        lo = _v.number("loc", loc, "s", minimum=0.0)
        if m <= lo:
            raise SpecError("mean", f"must exceed loc={lo!r}, got {mean!r}")
        return cls((m - lo) * (a - 1) / a, a, lo)

    def sample(self, rng, size):
        return self.loc + self.scale * (1.0 + rng.pareto(self.shape, size))

    @property
    def mean(self) -> float:
        a = self.shape
        return math.inf if a <= 1 else self.loc + self.scale * a / (a - 1)

    @property
    def std(self) -> float:
        a = self.shape
        if a <= 2:
            return math.inf
        return self.scale * math.sqrt(a / ((a - 1) ** 2 * (a - 2)))


# Shared with perfmodel.gst (module notes): a Distribution by registration.
Distribution.register(Empirical)


def as_distribution(value, name: str = "distribution") -> Distribution:
    """A Distribution from a Distribution, a number of seconds (Constant) or a spec string."""
    if isinstance(value, Empirical) and value.values[0] < 0:
        raise SpecError(name, f"durations must be >= 0, got the sample value {value.values[0]!r}")
    if isinstance(value, Distribution):
        return value
    if isinstance(value, str):
        return from_string(value, name)
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return Constant(_v.number(name, value, "s", minimum=0.0))
    raise SpecError(name, f"expected a Distribution, a duration or a string such as "
                          f"'lognormal:0.4,0.4', got {type(value).__name__} {value!r}")


def from_string(text: str, name: str = "distribution") -> Distribution:
    """Parse ``"0.3"``, ``"const:0.3"``, ``"normal:MEAN,STD"``, ``"lognormal:MEAN,STD"``,
    ``"pareto:SCALE,SHAPE[,LOC]"`` (seconds; unit strings such as ``"300ms"`` accepted)."""
    if not isinstance(text, str):
        raise SpecError(name, f"expected a string, got {text!r}")
    kind, _, rest = text.strip().partition(":")
    if not rest:
        return Constant(_v.number(name, kind, "s", minimum=0.0))
    args = [a.strip() for a in rest.split(",")]
    ctor = {"const": (Constant, 1, 1), "constant": (Constant, 1, 1), "normal": (Normal, 2, 3),
            "lognormal": (LogNormal, 2, 2), "pareto": (Pareto, 2, 3)}.get(kind.strip().lower())
    if ctor is None:
        raise SpecError(name, f"unknown distribution {kind!r}; expected const, normal, "
                              "lognormal or pareto")
    cls, lo, hi = ctor
    if not lo <= len(args) <= hi:
        raise SpecError(name, f"{kind} takes {lo}-{hi} parameters, got {len(args)} in {text!r}")
    try:
        return cls(*args)
    except SpecError as err:
        raise err.within(name) from None
    except ValueError:
        raise SpecError(name, f"bad parameters in {text!r}") from None


def heavy_tailed_worker() -> Distribution:
    """Assumed heavy-tailed gradient-computation time of a worker (stand-in for Jain's Fig. 6).

    ``0.25 s + 0.1 s x Pareto(index 2.5)``: at least 0.35 s, mean 0.417 s,
    median 0.382 s, P(> 1 s) = 7.5**-2.5 = 0.65 %, P(> 8 s) = 2e-5 ("a few
    samples were distributed out to 8 s").  The figure's samples are not in the paper: these numbers
    are **our assumption** of its shape (a GPU ResNet-50 step of a few tenths
    of a second with a power-law tail), not the paper's data.

    References
    ----------
    Jain, Kumar, Mao, Sec. 5.1, Fig. 6.
    """
    return Pareto(scale=0.1, shape=2.5, loc=0.25)


def heavy_tailed_server() -> Distribution:
    """Assumed heavy-tailed aggregation time of a parameter server (stand-in for Jain's Fig. 7).

    ``0.02 s + 0.03 s x Pareto(index 3)``: at least 0.05 s, mean 0.065 s.  **Our
    assumption** of the shape (a CPU reduction of tens of milliseconds with a
    tail), not the paper's data.

    References
    ----------
    Jain, Kumar, Mao, Sec. 5.1, Fig. 7.
    """
    return Pareto(scale=0.03, shape=3.0, loc=0.02)
