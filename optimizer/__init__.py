"""optimizer: search for the fastest (or cheapest) training configuration.

Model-agnostic: any perfmodel model object with
``estimate(workload, cluster, config) -> Estimate`` can be searched.
"""

from .search import OBJECTIVES, Candidate, SearchResult, candidate_configs, search

__all__ = ["OBJECTIVES", "Candidate", "SearchResult", "candidate_configs", "search"]
