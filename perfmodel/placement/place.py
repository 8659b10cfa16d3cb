"""Placement by strategy name: the one dispatcher over every placement strategy.

:data:`PLACEMENT_FUNCTIONS` maps each name to a function of one signature,
``f(topology, jobs, workers, seed) -> Placement``; :func:`place` checks the
name and calls it.  The names are the four fixed strategies of Jain, Kumar and
Mao (:mod:`~perfmodel.placement.strategies`, Sec. 4.3), best case first, then
``"optimized"``: our network-aware optimizer
(:func:`~perfmodel.placement.optimize.optimize_placement`) with its defaults.

The dispatcher lives in its own module, above both
:mod:`~perfmodel.placement.strategies` and :mod:`~perfmodel.placement.optimize`,
so that the optimizer can build on the strategies' :class:`Placement` without
the strategies having to import the optimizer back.

Examples
--------
>>> from perfmodel.placement.topology import paper_racks
>>> p = place(paper_racks(), "colocated", jobs=2, workers=3)
>>> p.strategy, p.ps, p.workers
('colocated', (0, 8), ((1, 2, 3), (9, 10, 11)))
>>> place(paper_racks(), "optimized", jobs=2, workers=3).strategy
'optimized'

References
----------
Jain, Kumar, Mao, "Characterizing Distributed Deep Learning Training
Performance in Datacenters": Sec. 4.3 (the colocated, random, strided and
clustered strategies).
"""

from __future__ import annotations

from types import MappingProxyType

from .. import _validate as _v
from .._callable import make_callable
from .optimize import optimize_placement
from .strategies import STRATEGIES, Placement, clustered, colocated, random_placement, strided
from .topology import Topology

__all__ = ["PLACEMENT_FUNCTIONS", "STRATEGIES", "place"]


def _colocated(topology: Topology, jobs: int, workers: int, seed) -> Placement:
    return colocated(topology, jobs, workers)


def _random(topology: Topology, jobs: int, workers: int, seed) -> Placement:
    return random_placement(topology, jobs, workers, seed)


def _strided(topology: Topology, jobs: int, workers: int, seed) -> Placement:
    return strided(topology, jobs, workers)


def _clustered(topology: Topology, jobs: int, workers: int, seed) -> Placement:
    return clustered(topology, jobs, workers)


def _optimized(topology: Topology, jobs: int, workers: int, seed) -> Placement:
    return optimize_placement(topology, jobs, workers, seed=seed).placement


#: Every name :func:`place` accepts -> ``f(topology, jobs, workers, seed) -> Placement``:
#: the strategies of :data:`STRATEGIES` in their order, then ``"optimized"``.
PLACEMENT_FUNCTIONS = MappingProxyType({
    "colocated": _colocated,
    "random": _random,
    "strided": _strided,
    "clustered": _clustered,
    "optimized": _optimized,
})


def place(topology: Topology, strategy: str, jobs: int, workers: int, seed=0) -> Placement:
    """Placement by strategy name (one of :data:`STRATEGIES`, or ``"optimized"``).

    Parameters
    ----------
    topology : Topology
    strategy : str
        A key of :data:`PLACEMENT_FUNCTIONS`.
    jobs, workers : int
        J jobs (>= 1) of one parameter server and W workers (>= 1).
    seed : int or numpy.random.Generator
        Used by ``"random"`` and ``"optimized"`` only.  ``"optimized"`` is
        :func:`perfmodel.placement.optimize.optimize_placement` with its defaults.

    Returns
    -------
    Placement

    Raises
    ------
    SpecError
        An unknown strategy name, or a bad argument.
    Infeasible
        The jobs do not fit the topology as the strategy places them.
    """
    _v.choice("strategy", strategy, tuple(PLACEMENT_FUNCTIONS))
    return PLACEMENT_FUNCTIONS[strategy](topology, jobs, workers, seed)


make_callable(__name__, place)   # perfmodel.placement.place(...) is place(...)
