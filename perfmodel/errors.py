"""Typed exceptions of perfmodel.

Every exception raised on purpose is here and derives from
:class:`PerfModelError`.  Every error a user can cause by bad input is a
:class:`SpecError` (a :class:`ConstraintViolation` when a configuration breaks
a constraint of the layer-wise problem); a request that is well formed but
cannot be satisfied (no configuration fits the machine budget, a model that
does not apply to a configuration) is :class:`Infeasible`; a hardware
micro-benchmark that fails is a :class:`CalibrationError`; a bad command-line
value a :class:`CliError`.
"""

from __future__ import annotations

__all__ = ["PerfModelError", "SpecError", "ConstraintViolation", "Infeasible",
           "CalibrationError", "CliError", "SimulationStalled"]


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

    def within(self, prefix: str | None = None, source: str | None = None) -> SpecError:
        """Return the same error with its field nested under ``prefix`` and/or a file name."""
        field = self.field
        if prefix:
            field = prefix if not field else (
                f"{prefix}{field}" if field.startswith("[") else f"{prefix}.{field}")
        return SpecError(field, self.message, source or self.source)


class ConstraintViolation(SpecError):
    """A configuration breaks a constraint of the layer-wise problem (a SpecError: bad input).

    The constraints are those of Yan et al. 2015, Fig. 7 (C1-C4) and ours (PS);
    ``optimizer.space.CONSTRAINTS`` states each.

    Parameters
    ----------
    constraint : str
        ``"C1"`` .. ``"C4"`` or ``"PS"`` (``optimizer.space.CONSTRAINTS``).
    field : str
        Path of the offending field, e.g. ``"config"`` or ``"layers[2].threads"``.
    value : object
        The offending value (a number, a worker id, a pair of segments ...).
    message : str
        What is wrong, naming the value; the constraint id is prefixed.
    limit : object, optional
        The bound the value broke (machines, cores, workers), when there is one.
    layer : int, optional
        Index of the layer, for C2-C4.
    source : str, optional
        File the value came from.

    Examples
    --------
    >>> err = ConstraintViolation("C2", "layers[1].threads", 20, "threads = 20 exceeds 16 cores",
    ...                           limit=16, layer=1)
    >>> str(err), err.constraint, err.value
    ('layers[1].threads: C2: threads = 20 exceeds 16 cores', 'C2', 20)
    """

    def __init__(self, constraint: str, field: str, value, message: str, *, limit=None,
                 layer: int | None = None, source: str | None = None):
        self.constraint = constraint
        self.value = value
        self.limit = limit
        self.layer = layer
        self.detail = message
        super().__init__(field, f"{constraint}: {message}", source)

    def within(self, prefix: str | None = None, source: str | None = None) -> ConstraintViolation:
        """The same violation with its field nested under ``prefix`` and/or a file name."""
        nested = super().within(prefix, source)
        return ConstraintViolation(self.constraint, nested.field, self.value, self.detail,
                                   limit=self.limit, layer=self.layer, source=nested.source)


class Infeasible(PerfModelError):
    """No configuration satisfies the request (exit code 1 in the CLI)."""


class CalibrationError(PerfModelError, RuntimeError):
    """A hardware micro-benchmark process failed or stopped answering."""


class SimulationStalled(PerfModelError, RuntimeError):
    """A packet-level run reached its stop time before its measured window was complete."""


class CliError(PerfModelError):
    """A bad command-line value: the flag and what is wrong with it (exit code 2)."""
