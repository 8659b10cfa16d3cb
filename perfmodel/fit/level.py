"""Fitting the level of a model, not its shape: one slowdown for every step.

Runs of one or two workers sit where a data-parallel model barely bends, so
they say how much slower the job runs than the model predicts, not how that
gap grows with the workers.  Fitting the link efficiency to them answers the
second question anyway: a gap seen where the transfers are a third of the
step becomes a gap in every transfer, and grows with the workers as the
transfers do.  Where the gap has another cause (a worker's NIC serving
several servers' flows at once, TCP's own dynamics at a step's start), that
extrapolation misses by more than the gap itself (docs/validation.md shows
it on the held-out corpus).

:class:`Leveled` makes every predicted step ``slowdown`` times longer.
Fitting ``slowdown`` to the runs keeps the physics of the model (how its step
grows with the workers, the bytes over the busiest link) and moves only its
level: one number, which two runs can determine.  The selection of
:mod:`perfmodel.fit.selection` calibrates the fair-sharing sync candidates
(eq. 7 and the simulator) and the async MVA this way on a loss-free link,
from runs close together in workers; on a lossy one they fit the stall
probability and the link efficiency as before, since a stall costs a whole
timeout whatever the step.

Which level the runs give
-------------------------
Let ``r_i`` be the slowdown that makes run i exact (the model's throughput over
the measured one).  At slowdown ``s`` run i is off by ``|r_i / s - 1|``, so the
mean relative error the fit minimizes (``objective="mean_relative"`` of
:func:`~perfmodel.fit.grid.fit_tunables`) is
``(sum of r_i above s - sum of r_i below s) / s`` plus a constant between two
``r_i``: it falls while the runs above ``s`` outweigh those below and rises
after.  The fit is therefore the median of the ``r_i`` weighted by themselves,
and on two runs it is the larger one: the run that shows more slowdown than the
model (usually the larger, whose workers already share a link) sets the level,
the more cautious reading.  This is deliberate: the gap a 2-worker run shows
over one worker alone is sharing the larger jobs keep, not noise to average
away.  docs/validation.md compares it with the midway level of the
``max_relative`` objective (on two runs the mean of the two slowdowns).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from typing import Any

from ..errors import SpecError
from ..result import Estimate

__all__ = ["SLOWDOWNS", "Leveled", "leveled"]

#: Candidate slowdowns (measured over predicted step time), nearest 1 first so that
#: ties keep the model as it is: 1% steps from 0.7 to 1.6, then coarser to 3.
SLOWDOWNS = tuple(sorted({round(1.0 + 0.01 * i, 2) for i in range(-30, 61)}
                         | {1.7, 1.8, 1.9, 2.0, 2.25, 2.5, 2.75, 3.0},
                         key=lambda v: (abs(v - 1.0), v)))


# A fit asks again only for its own runs (one job's, a few dozen estimates), and a key
# may hold a per-layer trace of megabytes: room for a few jobs, not hundreds.
@functools.lru_cache(maxsize=1024)
def _cached_estimate(model, workload, cluster, config) -> Estimate:
    return model.estimate(workload, cluster, config)


def _inner_estimate(model, workload, cluster, config) -> Estimate:
    """The wrapped model's estimate, computed once per (model, specs): a fit tries every
    slowdown on the same runs, and a simulation is worth keeping."""
    try:
        return _cached_estimate(model, workload, cluster, config)
    except TypeError:   # an unhashable model or spec: no cache
        return model.estimate(workload, cluster, config)


def leveled(est: Estimate, slowdown: float) -> Estimate:
    """``est`` with every step (and phase, and the epoch) ``slowdown`` times longer."""
    interval = (None if est.throughput_interval is None
                else tuple(v / slowdown for v in est.throughput_interval))
    return dataclasses.replace(
        est, step_time=est.step_time * slowdown, throughput=est.throughput / slowdown,
        phases={k: v * slowdown for k, v in est.phases.items()},
        epoch_time=None if est.epoch_time is None else est.epoch_time * slowdown,
        throughput_interval=interval, meta=dict(est.meta, slowdown=slowdown))


@dataclass(frozen=True)
class Leveled:
    """``model`` with every predicted step ``slowdown`` times longer (module notes).

    Parameters
    ----------
    model : object with ``estimate(workload, cluster, config) -> Estimate``
    slowdown : float
        Measured over predicted step time, > 0 (1: the model as it is).

    Examples
    --------
    >>> from perfmodel import SyncCoarse, zoo, Config
    >>> p, c = zoo.profile("resnet50-pipedream"), zoo.cluster("aws-p3.2xlarge")
    >>> plain = SyncCoarse().estimate(p, c, Config(n_replicas=4))
    >>> slow = Leveled(SyncCoarse(), slowdown=1.25).estimate(p, c, Config(n_replicas=4))
    >>> round(slow.step_time / plain.step_time, 12), slow.meta["slowdown"]
    (1.25, 1.25)
    """

    model: Any
    slowdown: float = 1.0

    def __post_init__(self):
        if not hasattr(self.model, "estimate"):
            raise SpecError("model", f"needs estimate(), got {type(self.model).__name__}")
        s = self.slowdown
        if isinstance(s, bool) or not isinstance(s, (int, float)) or not (
                math.isfinite(s) and s > 0):
            raise SpecError("slowdown", f"must be a finite number > 0, got {s!r}")

    @property
    def modes(self) -> tuple:
        """The wrapped model's modes."""
        return getattr(self.model, "modes", ("sync", "async"))

    @property
    def uses_parameter_servers(self) -> bool:
        """Whether the wrapped model's configurations have parameter servers."""
        return getattr(self.model, "uses_parameter_servers", True)

    def estimate(self, workload, cluster, config) -> Estimate:
        """The wrapped model's estimate with every step ``slowdown`` times longer."""
        return leveled(_inner_estimate(self.model, workload, cluster, config),
                       float(self.slowdown))
