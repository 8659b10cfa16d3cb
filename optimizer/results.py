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
from perfmodel.result import Estimate, cut_text, one_line, seconds_text
from perfmodel.specs import Config

from .plans import compose_plan

__all__ = ["Candidate", "SearchResult", "DPResult"]

_REPR_LIMIT = 300  # characters of a result's repr (a Config and an estimate's summary)


def _config(config) -> str:
    return one_line(config, 100)


def _estimate(estimate) -> str:
    """An estimate's one-line summary, or a bounded repr of whatever stands in for it."""
    try:
        return estimate._summary() if isinstance(estimate, Estimate) else one_line(estimate, 100)
    except Exception:
        return one_line(estimate, 100)


def _score(value) -> str:
    try:
        return f"{float(value):.4g}"
    except Exception:
        return one_line(value)


def _bounded(result, text) -> str:
    """``Name(text())`` cut to one bounded line; never raises."""
    name = type(result).__name__
    try:
        return f"{name}({cut_text(text(), _REPR_LIMIT - len(name) - 2)})"
    except Exception:
        return f"<{name} at {id(result):#x}>"


@dataclass(frozen=True)
class Candidate:
    """One evaluated configuration with its estimate and objective value (lower is better)."""

    config: Config
    estimate: Estimate
    score: float

    def __repr__(self) -> str:
        """One line: the configuration, its estimate's summary and the score."""
        return _bounded(self, lambda: f"{_config(self.config)}, "
                        f"{_estimate(self.estimate)}, score={_score(self.score)}")

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

    def __repr__(self) -> str:
        """One line: the objective, the best configuration and its estimate, the search cost."""
        def text():
            try:
                ranked = f"{len(self.ranked)} ranked"
            except Exception:
                ranked = "ranked"
            best = getattr(self.best, "config", self.best)
            return (f"objective={one_line(self.objective)}, best={_config(best)} -> "
                    f"{_estimate(getattr(self.best, 'estimate', None))}; {ranked} of "
                    f"{one_line(self.n_evaluated)} evaluated in {seconds_text(self.seconds)}")
        return _bounded(self, text)

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

    def __repr__(self) -> str:
        """One line: the configuration, per-sample and epoch time, the plan's size."""
        def text():
            try:
                layers = f"{len(self.states)} layers"
            except Exception:
                layers = f"states={one_line(self.states)}"
            return (f"{_config(self.config)}, {seconds_text(self.per_sample)}/sample, "
                    f"epoch={seconds_text(self.epoch_time)}, {layers}, "
                    f"{one_line(self.n_states)} states priced, exact={one_line(self.exact)}")
        return _bounded(self, text)

    @functools.cached_property
    def plan(self) -> lw.Plan:
        """The plan of :attr:`states`, each layer matched against the one before."""
        return compose_plan(self.pricer.dnn, self.states, self.config.n_workers,
                            mapping=self.pricer.mapping)
