"""Estimate: the one result type every model returns."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

__all__ = ["Estimate"]


def _interval(pair, throughput: float) -> tuple[float, float]:
    try:
        low, high = (float(x) for x in pair)
    except (TypeError, ValueError):
        raise ValueError(f"Estimate.throughput_interval must be a (low, high) pair, "
                         f"got {pair!r}") from None
    if not (math.isfinite(low) and math.isfinite(high) and 0 <= low <= throughput <= high):
        raise ValueError(f"Estimate.throughput_interval must satisfy 0 <= low <= throughput "
                         f"<= high (all finite), got {pair!r} around {throughput!r}")
    return (low, high)


def _frozen(mapping: Mapping | None) -> Mapping:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True)
class Estimate:
    """A model's prediction for one (workload, cluster, config).

    Attributes
    ----------
    step_time : float, s
        Duration of one synchronous SGD step (for async models: the mean time
        between two steps of one worker).
    throughput : float, samples/s
        Samples processed per second by the whole job.
    phases : mapping of str to float, s
        Exposed seconds per phase; they sum to ``step_time``.
    bottleneck : str
        Name of the dominant phase or resource.
    epoch_time : float or None, s
        Time of one epoch, when the epoch size is known.
    meta : mapping
        Model name, options and anything else worth reporting.
    throughput_interval : (float, float) or None, samples/s
        Error bar on ``throughput``: ``(low, high)`` with ``low <= throughput
        <= high``, at confidence ``meta["interval_level"]`` (e.g. 0.9), from
        ``meta["interval_source"]`` (a fit's residuals, a straggler model's
        percentiles, a simulator's replications).  ``None`` when the model
        gives a point estimate only.
    """

    step_time: float
    throughput: float
    phases: Mapping[str, float] = field(default_factory=dict)
    bottleneck: str = ""
    epoch_time: float | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    throughput_interval: tuple[float, float] | None = None

    def __post_init__(self):
        object.__setattr__(self, "phases", _frozen(self.phases))
        object.__setattr__(self, "meta", _frozen(self.meta))
        for name in ("step_time", "throughput"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"Estimate.{name} must be finite and >= 0, got {value!r}")
        if self.throughput_interval is not None:
            object.__setattr__(self, "throughput_interval", _interval(self.throughput_interval,
                                                                      self.throughput))
        total = sum(self.phases.values())
        if self.phases and not math.isclose(total, self.step_time, rel_tol=1e-9, abs_tol=1e-12):
            raise ValueError(f"Estimate.phases sum to {total!r}, not step_time {self.step_time!r}")

    @classmethod
    def from_phases(cls, phases: Mapping[str, float], samples_per_step: float, *,
                    epoch_samples: int | None = None, meta: Mapping | None = None) -> Estimate:
        """Build an estimate whose step time is the sum of its exposed phases.

        The bottleneck is the longest phase; throughput is
        ``samples_per_step / step_time``.
        """
        step = float(sum(phases.values()))
        phases = {k: float(v) for k, v in phases.items()}
        bottleneck = max(phases, key=phases.get) if phases else ""
        throughput = samples_per_step / step if step > 0 else math.inf
        epoch = None
        if epoch_samples is not None and throughput > 0:
            epoch = epoch_samples / throughput
        return cls(step_time=step, throughput=throughput, phases=phases,
                   bottleneck=bottleneck, epoch_time=epoch, meta=meta or {})

    @property
    def step_time_interval(self) -> tuple[float, float] | None:
        """Error bar on ``step_time`` (s) implied by ``throughput_interval``.

        Samples per step are fixed, so step time is inversely proportional to
        throughput: ``(step_time * throughput / high, step_time * throughput / low)``.
        """
        if self.throughput_interval is None:
            return None
        low, high = self.throughput_interval
        work = self.step_time * self.throughput
        return (work / high if high > 0 else 0.0, work / low if low > 0 else math.inf)

    def with_interval(self, low: float, high: float, *, level: float,
                      source: str) -> Estimate:
        """A copy with ``throughput_interval = (low, high)``, its level and source in meta.

        ``low`` and ``high`` are widened to include ``throughput`` when a
        one-sided source (e.g. a fit whose residuals all have one sign) leaves it out.
        """
        if not 0 < level < 1:
            raise ValueError(f"interval level must be in (0, 1), got {level!r}")
        meta = dict(self.meta, interval_level=float(level), interval_source=str(source))
        return dataclasses.replace(self, meta=meta, throughput_interval=(
            min(float(low), self.throughput), max(float(high), self.throughput)))

    def to_dict(self) -> dict:
        """Plain JSON-ready dict (the CLI's record fields)."""
        out = {"step_time": self.step_time, "throughput": self.throughput,
               "phases": dict(self.phases), "bottleneck": self.bottleneck}
        if self.epoch_time is not None:
            out["epoch_time"] = self.epoch_time
        if self.throughput_interval is not None:
            out["throughput_interval"] = list(self.throughput_interval)
        if self.meta:
            out["meta"] = dict(self.meta)
        return out
