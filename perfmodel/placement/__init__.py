"""Network-aware placement of parameter-server jobs in a datacenter (Jain, Kumar, Mao).

Many synchronous parameter-server jobs share one datacenter network; how their
machines are placed changes their iteration time.  The package has these parts:

* :mod:`~perfmodel.placement.topology` -- racks under ToR switches joined by
  top switches (the paper's 8 x 8 at 10 Gbps: :func:`paper_racks`), k-ary fat
  trees, ECMP routes;
* :mod:`~perfmodel.placement.strategies` -- the paper's colocated, random,
  strided and clustered placements (Sec. 4.3);
* :mod:`~perfmodel.placement.optimize` -- our network-aware placement
  optimizer (greedy + local search on link loads);
* :mod:`~perfmodel.placement.place` -- :func:`place`, the one dispatcher from a
  strategy name (those of :data:`STRATEGIES`, or ``"optimized"``) to a placement;
* :mod:`~perfmodel.placement.flowsim` -- the flow-level simulator (the default
  engine): concurrent jobs run the paper's Algorithm 1 over max-min fair flows
  (:mod:`~perfmodel.placement.maxmin`), compute times from
  :mod:`~perfmodel.placement.distributions`; output: iteration-latency CDFs;
* :mod:`~perfmodel.placement.ns3` and :mod:`~perfmodel.placement.ns3_job` --
  the packet-level cross-checks in ns-3 (optional extra ``perfmodel[ns3]``).

Examples
--------
>>> from perfmodel.placement import paper_racks, compare, latency_table
>>> res = compare(paper_racks(), ["colocated", "clustered"], jobs=8, workers=7,
...               worker_compute=0.4, server_compute=0.05, iterations=3, warmup=1)
>>> res["clustered"].mean > 2 * res["colocated"].mean
True

References
----------
Jain, Kumar, Mao, "Characterizing Distributed Deep Learning Training Performance
in Datacenters": Algorithm 1, Sec. 4.1-4.4, Sec. 5.
"""

from . import place  # the module, callable as its function place (perfmodel._callable)
from .distributions import (
                            Constant,
                            Distribution,
                            Empirical,
                            LogNormal,
                            Normal,
                            Pareto,
                            heavy_tailed_server,
                            heavy_tailed_worker,
)
from .flowsim import (
                            ENGINES,
                            PHASES,
                            RESNET50_BYTES,
                            FlowSim,
                            FlowSimResult,
                            compare,
                            latency_table,
                            simulate,
)
from .maxmin import bottleneck_check, max_min_rates, max_min_rates_reference
from .optimize import (
                            OBJECTIVES,
                            PLACEMENT_OBJECTIVES,
                            OptimizedPlacement,
                            exhaustive_placement,
                            job_times,
                            link_loads,
                            max_link_load,
                            optimize_placement,
)
from .strategies import STRATEGIES, Placement, clustered, colocated, random_placement, strided
from .topology import (
                            PAPER_BANDWIDTH,
                            PAPER_LATENCY,
                            Topology,
                            fat_tree,
                            from_string,
                            paper_racks,
                            racks,
                            star,
)

__all__ = [
    # topology
    "Topology", "racks", "paper_racks", "fat_tree", "star", "from_string",
    "PAPER_BANDWIDTH", "PAPER_LATENCY",
    # strategies
    "Placement", "STRATEGIES", "colocated", "random_placement", "strided", "clustered", "place",
    # max-min fairness
    "max_min_rates", "max_min_rates_reference", "bottleneck_check",
    # compute-time distributions
    "Distribution", "Constant", "Normal", "LogNormal", "Pareto", "Empirical",
    "heavy_tailed_worker", "heavy_tailed_server",
    # flow-level simulator
    "simulate", "compare", "latency_table", "FlowSimResult", "FlowSim", "ENGINES", "PHASES",
    "RESNET50_BYTES",
    # optimizer
    "optimize_placement", "exhaustive_placement", "OptimizedPlacement", "PLACEMENT_OBJECTIVES",
    "OBJECTIVES",  # backward-compatible alias of PLACEMENT_OBJECTIVES
    "link_loads", "max_link_load", "job_times",
]
