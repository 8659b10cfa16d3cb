"""Typed exceptions of perfmodel.

Every error a user can cause by bad input is a :class:`SpecError`; a request
that is well formed but cannot be satisfied (no configuration fits the machine
budget, a model that does not apply to a configuration) is :class:`Infeasible`.
"""

from __future__ import annotations

__all__ = ["PerfModelError", "SpecError", "Infeasible"]


class PerfModelError(Exception):
    """Base class of every exception raised on purpose by perfmodel."""


class SpecError(PerfModelError, ValueError):
    """A specification field holds a bad value.

    Parameters
    ----------
    field : str
        Dotted path of the offending field, e.g. ``"cluster.nic_bandwidth"``
        or ``"layers[3].kernel"``.
    message : str
        What is wrong with it, naming the value.
    source : str, optional
        The file the value came from, when it came from a file.
    """

    def __init__(self, field: str, message: str, source: str | None = None):
        self.field = field
        self.message = message
        self.source = source
        super().__init__(self._text())

    def _text(self) -> str:
        # a whole-file problem (missing, unreadable) has no field to name
        parts = [p for p in (self.source, self.field) if p]
        return ": ".join(parts + [self.message])

    def within(self, prefix: str | None = None, source: str | None = None) -> "SpecError":
        """Return the same error with its field nested under ``prefix`` and/or a file name."""
        field = self.field
        if prefix:
            field = prefix if not field else (
                f"{prefix}{field}" if field.startswith("[") else f"{prefix}.{field}")
        return SpecError(field, self.message, source or self.source)


class Infeasible(PerfModelError):
    """No configuration satisfies the request (exit code 1 in the CLI)."""
