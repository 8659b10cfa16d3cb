"""Estimate: the one result type every model returns."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

__all__ = ["Estimate"]


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
    """

    step_time: float
    throughput: float
    phases: Mapping[str, float] = field(default_factory=dict)
    bottleneck: str = ""
    epoch_time: float | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "phases", _frozen(self.phases))
        object.__setattr__(self, "meta", _frozen(self.meta))
        for name in ("step_time", "throughput"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"Estimate.{name} must be finite and >= 0, got {value!r}")
        total = sum(self.phases.values())
        if self.phases and not math.isclose(total, self.step_time, rel_tol=1e-9, abs_tol=1e-12):
            raise ValueError(f"Estimate.phases sum to {total!r}, not step_time {self.step_time!r}")

    @classmethod
    def from_phases(cls, phases: Mapping[str, float], samples_per_step: float, *,
                    epoch_samples: int | None = None, meta: Mapping | None = None) -> "Estimate":
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

    def to_dict(self) -> dict:
        """Plain JSON-ready dict (the CLI's record fields)."""
        out = {"step_time": self.step_time, "throughput": self.throughput,
               "phases": dict(self.phases), "bottleneck": self.bottleneck}
        if self.epoch_time is not None:
            out["epoch_time"] = self.epoch_time
        if self.meta:
            out["meta"] = dict(self.meta)
        return out
