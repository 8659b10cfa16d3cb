"""Estimate: the one result type every model returns."""

from __future__ import annotations

import dataclasses
import html
import math
import numbers
import reprlib
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from itertools import islice
from types import MappingProxyType
from typing import Any

from . import units

__all__ = ["Estimate", "PHASES", "one_line", "seconds_text", "cut_text"]

#: The one set of phase names every model's ``Estimate.phases`` and
#: ``Estimate.bottleneck`` use, with what each means.  A model's own terms
#: (Yan et al.'s U_f..M_w, Zhang et al.'s IO..UP) are in its ``meta["terms"]``.
PHASES = {
    "input": "loading and preprocessing the batch",
    "downlink": "model or weights sent to the workers (a pull, a broadcast)",
    "forward": "forward pass on the worker",
    "backward": "backward pass on the worker",
    "compute": "forward and backward together, when a model does not split them",
    "activations": "activations sent between the machines of one model replica",
    "errors": "backpropagated errors sent between the machines of one model replica",
    "uplink": "gradients sent to the parameter servers (a push)",
    "network": "uplink and downlink together, when a model does not split them",
    "aggregate": "parameter servers aggregating the gradients",
    "allreduce": "gradients exchanged among the workers (all-reduce)",
    "update": "applying the gradients to the weights",
    "weights": "weights read from the parameter servers by a model-parallel replica",
    "straggler": "waiting for the slowest worker beyond the mean",
    "timeouts": "stalled for retransmission timeouts on a lossy link",
    "intra_reduce": "gradients reduced among the GPUs of one machine",
    "intra_broadcast": "weights broadcast to the GPUs of one machine",
    "cpu_ceiling": "slowed to the CPU ceiling that measured runs put on the speed",
    "overhead": "a fitted term no physical phase explains (Optimus's fixed, per-worker "
                "and per-server terms)",
}


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


# Short display (repr and Jupyter's _repr_html_): bounded whatever meta holds, never raising.
_REPR_LIMIT = 200  # characters of Estimate's repr
_NAME_LIMIT = 40  # a model or bottleneck name in a repr
_CELL_LIMIT = 80  # a value in the HTML table
_HTML_PHASES = 12  # phases listed in the HTML table
_HTML_META = 40  # meta entries listed in the HTML table

_SHORT = reprlib.Repr()
_SHORT.maxstring, _SHORT.maxother, _SHORT.maxlevel, _SHORT.maxlong = 200, 200, 2, 40


def cut_text(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:max(limit - 3, 0)] + "..."


def one_line(value, limit: int = _NAME_LIMIT) -> str:
    """``value`` on one line of at most ``limit`` characters: a printable str as
    itself, anything else as a bounded ``reprlib`` repr.  Never raises."""
    try:
        if isinstance(value, str):
            head = str.__getitem__(value, slice(None, limit + 1))
            if head.isprintable():
                return cut_text(head, limit)
        text = _SHORT.repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    text = "".join(c if c.isprintable() else " " for c in text[:4 * limit])
    return cut_text(" ".join(text.split()), limit)


def seconds_text(value) -> str:
    """A time for people (ms below one second), via :func:`units.format_value`."""
    try:
        return units.format_value(float(value), "s")
    except Exception:
        return one_line(value)


def _count(value) -> str:
    """A rate such as samples/s: 4 significant digits, thousands separated."""
    try:
        value = float(value)
        if 1e4 <= abs(value) < 1e12:
            return f"{value:,.0f}"
        return units.format_value(value, "1")
    except Exception:
        return one_line(value)


def _level(meta) -> str:
    """``"90% "`` for ``meta["interval_level"] == 0.9``; ``""`` when absent or odd."""
    try:
        level = meta.get("interval_level")
        if isinstance(level, numbers.Real) and not isinstance(level, bool) and 0 < level < 1:
            return f"{float(level) * 100:.3g}% "
    except Exception:
        pass
    return ""


def _cell(value) -> str:
    """One meta value for the HTML table: scalars as themselves (strings cut to
    ~80 characters), containers as a summary such as ``"dict of 5"``."""
    try:
        if value is None or isinstance(value, bool):
            return str(value)
        if isinstance(value, str):
            return one_line(value, _CELL_LIMIT)
        if isinstance(value, numbers.Integral):
            value = int(value)
            if abs(value) < 10 ** 40:
                return str(value)
            return f"int of {value.bit_length()} bits"
        if isinstance(value, numbers.Real):
            return f"{float(value):.6g}"
        if isinstance(value, Collection):
            return f"{type(value).__name__} of {len(value)}"
    except Exception:
        pass
    return one_line(value, _CELL_LIMIT)


def _get(mapping, key, default=None):
    try:
        return mapping.get(key, default)
    except Exception:
        return default


def _present(value) -> bool:
    """Worth showing: neither None nor the empty string (no truth test on odd objects)."""
    return value is not None and not (isinstance(value, str) and value == "")


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
        Exposed seconds per phase; they sum to ``step_time``.  The names
        are those of :data:`PHASES` for every model of the toolkit.
    bottleneck : str
        Name of the dominant phase or resource (a :data:`PHASES` name).
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

    def _summary(self) -> str:
        """One line: ``"AsyncMVA: 412 ms/step, 77.6 samples/s, bottleneck=uplink, ..."``."""
        model = _get(self.meta, "model")
        head = f"{one_line(model)}: " if _present(model) else ""
        parts = [f"{head}{seconds_text(self.step_time)}/step", f"{_count(self.throughput)} samples/s"]
        if _present(self.bottleneck):
            parts.append(f"bottleneck={one_line(self.bottleneck)}")
        if self.epoch_time is not None:
            parts.append(f"epoch={seconds_text(self.epoch_time)}")
        if self.throughput_interval is not None:
            try:
                low, high = self.throughput_interval
                parts.append(f"{_level(self.meta)}[{_count(low)}, {_count(high)}] samples/s")
            except Exception:
                parts.append(f"interval={one_line(self.throughput_interval)}")
        return ", ".join(parts)

    def __repr__(self) -> str:
        """One bounded line; the fields are ``dataclasses.asdict`` or :meth:`to_dict`."""
        try:
            return f"Estimate({cut_text(self._summary(), _REPR_LIMIT - len('Estimate()'))})"
        except Exception:
            return f"<Estimate at {id(self):#x}>"

    def _repr_html_(self) -> str:
        """A small table for Jupyter: the headline numbers, the phases, and meta's
        entries (containers summarised, strings cut), all text escaped."""
        rows: list[tuple[str, str]] = []

        def row(name, value):
            rows.append((name, value))

        try:
            model = _get(self.meta, "model")
            if _present(model):
                row("model", one_line(model, _CELL_LIMIT))
            row("step time", seconds_text(self.step_time))
            row("throughput", f"{_count(self.throughput)} samples/s")
            if self.throughput_interval is not None:
                try:
                    low, high = self.throughput_interval
                    text = f"[{_count(low)}, {_count(high)}] samples/s"
                except Exception:
                    text = one_line(self.throughput_interval, _CELL_LIMIT)
                row(f"{_level(self.meta)}interval", text)
            if _present(self.bottleneck):
                row("bottleneck", one_line(self.bottleneck, _CELL_LIMIT))
            if self.epoch_time is not None:
                row("epoch time", seconds_text(self.epoch_time))
            if self.phases:
                shown = [f"{one_line(k)} {seconds_text(v)}"
                         for k, v in islice(self.phases.items(), _HTML_PHASES)]
                more = len(self.phases) - len(shown)
                row("phases", ", ".join(shown) + (f", and {more} more" if more > 0 else ""))
        except Exception:
            row("estimate", repr(self))
        try:
            entries = ((k, v) for k, v in self.meta.items() if not (isinstance(k, str) and k == "model"))
            listed = 0
            for key, value in islice(entries, _HTML_META):
                row(f"meta: {one_line(key)}", _cell(value))
                listed += 1
            more = len(self.meta) - ("model" in self.meta) - listed
            if more > 0:
                row("meta: ...", f"{more} more entries")
        except Exception:
            row("meta", "(cannot be listed)")
        body = "".join(f"<tr><th style=\"text-align:left\">{html.escape(name)}</th>"
                       f"<td style=\"text-align:left\">{html.escape(value)}</td></tr>"
                       for name, value in rows)
        return f"<table class=\"perfmodel-estimate\"><caption>Estimate</caption>{body}</table>"

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
