"""optimizer: search for the fastest (or cheapest) training configuration.

* :mod:`optimizer.search` -- model-agnostic search over (workers, replicas,
  servers) for any model with ``estimate(workload, cluster, config)``;
* :mod:`optimizer.dp` -- the dynamic program of Yan et al. 2015 over layers,
  with bipartite-matched segment mappings (:mod:`optimizer.matching`), in the
  space of their Fig. 7 (:mod:`optimizer.space`); its per-layer states and
  plan composition (:mod:`optimizer.plans`) are shared with the brute-force
  reference it is checked against (:mod:`optimizer.exhaustive`);
* :mod:`optimizer.results` -- what the searches return;
* :mod:`optimizer.rank`, :mod:`optimizer.decisions` -- configurations ranked
  at their best plans, and the partition-or-replicate choice of one layer;
* :mod:`optimizer.allocate` -- several jobs sharing one cluster.

``search`` and ``allocate`` are the modules, callable as their functions
(``search(model, profile, cluster)`` is :func:`optimizer.search.search`;
:mod:`perfmodel._callable`), so ``optimizer.search.SEARCH_OBJECTIVES`` and
``import optimizer.allocate as a`` reach the modules.

``OBJECTIVES`` here is :data:`optimizer.search.SEARCH_OBJECTIVES` (the
objectives of :func:`search`), kept under its old name; the allocator's are
:data:`ALLOCATION_OBJECTIVES`.
"""

from . import allocate, search  # modules that are callable as their main function
from .allocate import ALLOCATION_OBJECTIVES, Allocation, Job
from .dp import optimize
from .results import Candidate, SearchResult
from .search import OBJECTIVES, SEARCH_OBJECTIVES, candidate_configs

__all__ = ["OBJECTIVES", "SEARCH_OBJECTIVES", "ALLOCATION_OBJECTIVES", "Candidate", "SearchResult",
           "candidate_configs", "search", "optimize", "allocate", "Allocation", "Job"]
