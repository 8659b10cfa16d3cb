"""optimizer: search for the fastest (or cheapest) training configuration.

* :mod:`optimizer.search` -- model-agnostic search over (workers, replicas,
  servers) for any model with ``estimate(workload, cluster, config)``;
* :mod:`optimizer.dp` -- seed 004's dynamic program over layers with
  bipartite-matched segment mappings (:mod:`optimizer.matching`) in the space
  of Fig. 7 (:mod:`optimizer.space`), checked against :mod:`optimizer.exhaustive`;
* :mod:`optimizer.allocate` -- several jobs sharing one cluster.
"""

from .allocate import Allocation, Job, allocate
from .dp import optimize
from .search import OBJECTIVES, Candidate, SearchResult, candidate_configs, search

__all__ = ["OBJECTIVES", "Candidate", "SearchResult", "candidate_configs", "search", "optimize",
           "allocate", "Allocation", "Job"]
