"""
Global Synchronization Time: synchronous training with parameter servers (Zhang et al. 2023)
============================================================================================

One epoch of synchronous data-parallel training with N workers and K
parameter servers is a sequence of global synchronization times (GST), each
the maximum over workers of their per-worker times.  Formulas are pure
functions of floats or arrays that broadcast; the model is a frozen object.
Each module's docstring states its decisions on the paper's ambiguities.

Maxima of the workers' times, eqs. 7-9 (:mod:`perfmodel.gst.maxima`)
--------------------------------------------------------------------

==========================  =====================================================
expected_max_normal         E[max of n iid normals] (numerical integration)
max_normal_std              standard deviation of that maximum
max_normal_cdf, _sf, _pdf   distribution of the maximum, F^n (eq. 8)
max_normal_ppf              quantiles of the maximum
blom_max_normal             Blom's closed-form approximation
expected_max_normals        E[max] of non-identical normals
clark_expected_max          Clark's exact E[max] of two normals
Empirical                   the empirical distribution of a sample
expected_max                E[max of n iid draws] of any distribution
max_cdf, max_ppf            distribution and quantiles of that maximum
sample_max                  seeded draws of the maximum
METHODS                     ways to compute ``expected_max``
BLOM_ALPHA, BLOM_MAX_ERROR  Blom's constant and the approximation's error
==========================  =====================================================

GST and epoch time, Definition 4, eqs. 1-2, 9 (:mod:`perfmodel.gst.epoch`)
--------------------------------------------------------------------------

==========================  =====================================================
gst                         GST(m, n) of realized per-worker times (eq. 1)
epoch_time                  epoch time of realized times (eq. 2)
expected_epoch_time         expected epoch time, a sum of expected maxima (eq. 9)
monte_carlo_epoch_time      seeded Monte Carlo of eq. 9
==========================  =====================================================

Pipelines, eqs. 3-6 (:mod:`perfmodel.gst.pipelines`)
----------------------------------------------------

==========================  =====================================================
type1_completion            completion times of a type I process (eq. 3)
type2_completion            completion times of a type II process (eq. 4)
io_pipeline                 exposed data-loading time (eq. 5)
layer_pipeline              exposed BP, FC, AG, BC of the layer pipeline (eq. 6)
==========================  =====================================================

Network, eqs. 10-18 (:mod:`perfmodel.gst.network`)
--------------------------------------------------

==========================  =====================================================
barrier_links               which links are the barrier links (Definition 7)
packet_count                packets of a message
non_barrier_time            time on a non-barrier link (eq. 10)
barrier_forward_time        M/M/1 sojourn at the barrier switch (eq. 11)
barrier_time                barrier-link time over h hops (eq. 12)
communication_time          FC or BC time (eqs. 10-12)
aggregation_granularity     granule G per server (eq. 13)
aggregation_time            time to aggregate one granule (eq. 14)
aggregation_delay_min       smallest aggregation delay (eq. 15)
aggregation_delay_max       largest aggregation delay (eq. 16)
aggregation_delay           delay between the extremes (eqs. 15-16)
max_aggregation_time        latest aggregation completion (eq. 18)
UNITS                       readings of eqs. 11, 15, 16
==========================  =====================================================

The model and its use cases, Sec. V-C (:mod:`perfmodel.gst.model`)
------------------------------------------------------------------

==========================  =====================================================
GST                         the model: ``estimate(profile, cluster, config)``
compression_time            compression time from the ratio (inverse square)
best_compression_ratio      the ratio minimizing the step time (Fig. 6)
speedup_ratio               speedup of N workers over one
bottleneck_evaluation       speedup and comm/comp ratio grids (Fig. 5)
PROCESSES, PHASES           processes of an iteration, phases of an estimate
PHASE_OF, TERMS             a process's phase name, a phase's paper name
INTERVALS                   intervals ``GST`` can attach
==========================  =====================================================

The modules import downward: ``maxima`` <- ``epoch``; ``pipelines`` and
``network`` stand alone; ``model`` uses ``maxima``, ``pipelines`` and ``network``.

References
----------
Zhang, Zhang, Wei, Pan, Huang 2023, "Performance Modeling and Analysis of
Distributed Deep Neural Network Training with Parameter Server", Definition 4,
eqs. 1-18, Sec. V-C, Figs. 5-6.
"""

from .epoch import epoch_time, expected_epoch_time, gst, monte_carlo_epoch_time
from .maxima import (
                     BLOM_ALPHA,
                     BLOM_MAX_ERROR,
                     METHODS,
                     Empirical,
                     blom_max_normal,
                     clark_expected_max,
                     expected_max,
                     expected_max_normal,
                     expected_max_normals,
                     max_cdf,
                     max_normal_cdf,
                     max_normal_pdf,
                     max_normal_ppf,
                     max_normal_sf,
                     max_normal_std,
                     max_ppf,
                     sample_max,
)
from .model import (
                     GST,
                     INTERVALS,
                     PHASE_OF,
                     PHASES,
                     PROCESSES,
                     TERMS,
                     best_compression_ratio,
                     bottleneck_evaluation,
                     compression_time,
                     speedup_ratio,
)
from .network import (
                     UNITS,
                     aggregation_delay,
                     aggregation_delay_max,
                     aggregation_delay_min,
                     aggregation_granularity,
                     aggregation_time,
                     barrier_forward_time,
                     barrier_links,
                     barrier_time,
                     communication_time,
                     max_aggregation_time,
                     non_barrier_time,
                     packet_count,
)
from .pipelines import io_pipeline, layer_pipeline, type1_completion, type2_completion

__all__ = [
    # constants
    "PROCESSES", "PHASES", "PHASE_OF", "TERMS", "UNITS", "METHODS", "INTERVALS", "BLOM_ALPHA",
    "BLOM_MAX_ERROR",
    # maxima of normals (eqs. 7-9)
    "expected_max_normal", "max_normal_std", "max_normal_cdf", "max_normal_sf",
    "max_normal_pdf", "max_normal_ppf", "expected_max_normals", "clark_expected_max",
    "blom_max_normal",
    # other distributions
    "Empirical", "expected_max", "max_cdf", "max_ppf", "sample_max",
    # GST and epoch time (Definition 4, eqs. 1-2, 9)
    "gst", "epoch_time", "expected_epoch_time", "monte_carlo_epoch_time",
    # pipelines (eqs. 3-6)
    "type1_completion", "type2_completion", "io_pipeline", "layer_pipeline",
    # network (eqs. 10-18)
    "barrier_links", "packet_count", "non_barrier_time", "barrier_forward_time",
    "barrier_time", "communication_time", "aggregation_granularity", "aggregation_time",
    "aggregation_delay_min", "aggregation_delay_max", "aggregation_delay",
    "max_aggregation_time",
    # use cases (Sec. V-C)
    "compression_time", "speedup_ratio", "best_compression_ratio", "bottleneck_evaluation",
    # model
    "GST",
]
