"""What the optimizers return: ranked candidates, and the best plan of one resource triple.

* :class:`Candidate` and :class:`SearchResult`: the answer of
  :func:`optimizer.search.search` (any model, configurations ranked by an
  objective) and of :func:`optimizer.dp.optimize` (the layer-wise model,
  resource triples ranked by the T_epoch of their best plan); the CLI prints
  their ``to_dict()``.
* :class:`DPResult`: the dynamic program's answer for one resource triple
  (:func:`optimizer.dp.solve`), whose plan is composed from its state
  sequence on first use.

Kept apart from the searches so that each optimizer builds these without
importing another.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from perfmodel import layerwise as lw
from perfmodel.result import Estimate
from perfmodel.specs import Config

from .plans import compose_plan

__all__ = ["Candidate", "SearchResult", "DPResult"]


@dataclass(frozen=True)
class Candidate:
    """One evaluated configuration with its estimate and objective value (lower is better)."""

    config: Config
    estimate: Estimate
    score: float

    def to_dict(self) -> dict:
        """Contract fields (``n_workers``, ``n_replicas``, ``n_ps``, ``epoch_time``,
        ``layers``) and the estimate."""
        out = {"n_workers": self.config.n_workers, "n_replicas": self.config.n_replicas,
               "n_ps": self.config.n_ps, "machines": self.config.machines,
               "epoch_time": self.estimate.epoch_time,
               "layers": list(self.estimate.meta.get("layers", []))}
        out.update(self.estimate.to_dict())
        out.pop("meta", None)
        return out


@dataclass(frozen=True)
class SearchResult:
    """Outcome of a search: the best candidate, the top-k ranked, and the search cost."""

    best: Candidate
    ranked: tuple[Candidate, ...]
    n_evaluated: int
    seconds: float
    objective: str
    meta: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """The CLI's JSON: ``{"best", "ranked", "n_evaluated", "seconds", "objective"}``."""
        return {"best": self.best.to_dict(), "ranked": [c.to_dict() for c in self.ranked],
                "n_evaluated": self.n_evaluated, "seconds": self.seconds,
                "objective": self.objective}



@dataclass(frozen=True)
class DPResult:
    """The best plan of one resource triple, its per-sample time and T_epoch.

    ``plan`` (the state sequence composed with the matched mappings,
    :func:`optimizer.plans.compose_plan`) is built on first use; ``pricer``
    (:class:`optimizer.dp.Pricer`) supplies the DNN and the cached mappings.
    """

    config: Config
    per_sample: float
    epoch_time: float
    states: tuple
    n_states: int
    exact: bool
    pricer: Any = field(repr=False, compare=False, default=None)

    @functools.cached_property
    def plan(self) -> lw.Plan:
        """The plan of :attr:`states`, each layer matched against the one before."""
        return compose_plan(self.pricer.dnn, self.states, self.config.n_workers,
                            mapping=self.pricer.mapping)
