"""Choosing the model that fits a calibrated network, with error bars.

Each model of the papers carries assumptions about the network (the fixed
50/50 PS/FCFS average of Li et al. 2022, eq. 9, the nominal line rate, a
per-step PS update, workers that drift apart in the MVA).  Given a few
measured configurations of one job on one network, this module

* calibrates every *candidate* (a model and the tunables it may fit) on the
  measurements by :func:`perfmodel.fit.grid.fit_tunables` (grid search, tunables
  in the cluster file: ``link_efficiency``, ``sharing_weight``,
  ``update_growth``; model options such as ``rho_threshold``), with
  leave-one-out (LOO) residuals; on a loss-free link whose runs span less
  than a factor :data:`SHAPE_SPAN` in workers, the sync fair-sharing
  candidates and the async MVA by their level instead (one slowdown of every
  step, :mod:`perfmodel.fit.level`: such runs show how much slower the job
  runs than the model, not how the gap grows with the workers), and on a
  wider span by their tunables only where these earn it
  (:func:`tunables_earned`);
* chooses among them (:func:`choose`): the candidates valid in the job's
  regime; among them those that agree with the prior (below) unless another
  beats them by :data:`EVIDENCE`; the lowest LOO error, and within
  ``tolerance`` of that error one that replays the link exactly (the
  simulator on a fair link, or on a link of unknown sharing, which the prior
  takes as fair) or else the simplest family (closed form, then
  queueing, then simulation);
* keeps the candidates the runs cannot rule out (:func:`plausible`: LOO error
  within :data:`EVIDENCE` of the chosen one's) as the choice's
  ``alternatives``: their predictions widen its interval (model uncertainty),
  and :func:`suggest_run` names the worker count where they part most, where
  one more run would settle which one answers;
* with ``pool=True``, for a sync job, pools the chosen one's prediction
  with those of the alternatives on the same side of the prior
  (:func:`pooled_with`): their geometric mean answers, since the runs give
  neither more weight (an option: judged on a held-out probe, it fell short
  of the gain set for it beforehand);
* wraps the choice in :class:`Calibrated`, a model whose ``estimate`` returns
  an :class:`~perfmodel.result.Estimate` with ``meta["model"]`` (the
  candidate's name), ``meta["why"]`` (the reason it was chosen) and a
  ``throughput_interval`` from the LOO residuals.

Prior
-----
Two or three runs hardly tell the models apart: on two points a FIFO model's
leave-one-out error is often within a point of a fair one's, while their
predictions at 12 workers differ by half.  So what is known of networks
before any run decides ties: TCP flows share a bottleneck about fairly (on a
FIFO queue too, while nothing drops), so when the link's sharing is not given
(``link_sharing=None``), or is said to be FIFO (``fifo_prior="fair"`` of
:func:`select_model`: saying the queue does not say the runs would show FIFO
sharing), the candidates that model fair sharing (:data:`PRIOR_LINK`) are
preferred, and a FIFO-only model (``sync-fcfs``,
``sync-hybrid``, ``sim-fcfs``) is chosen only when its LOO error beats theirs
by more than :data:`EVIDENCE` (two points: about the run-to-run spread of a
measured throughput), which the ``why`` says.  Likewise async workers drift
apart (any jitter, a TCP flow finishing a little early, a lost packet moves a
worker's phase, and nothing pulls it back), so the lock-step model must earn
its place the same way; where the regime rules make it the only valid
closed form (a fair link and near-constant compute, below) it answers.  For
async jobs only runs of at least :data:`ASYNC_EVIDENCE_WORKERS` workers count
as evidence: the workers of a run start together, so one or two of them
cannot show whether they drift apart, and the lock-step model and the
simulator's transient fit such runs best whatever larger jobs do.  From runs
of 1-2 workers the MVA (drifted-apart workers) answers, and
``Selection.suggested_run`` names the worker count where it and the models
the prior kept out part most: the run that would show the drift.

Readings
--------
Some candidates are another candidate's network under an assumption only
larger runs can show (``ModelCandidate.reading_of``): ``async-fcfs`` is
the async MVA with FCFS links (Li et al. 2022, eq. 3 with eq. 2's
deterministic residual), the workers passing the link whole in turn, where
``async-mva`` shares it (eq. 5, processor sharing beyond rho_T).  Li et al.
fit rho_T, the utilization where one gives way to the other, once per
platform; runs of 1-2 workers sit below any knee and cannot.  Which one a
link follows is how TCP passes concurrent transfers (a late flow still in
slow start, a fair queue's quantum), which only the runs can show.  A reading
disagrees with the prior, so it answers only when runs of
:data:`ASYNC_EVIDENCE_WORKERS` or more workers favour it by
:data:`EVIDENCE`; while the runs cannot rule it out (:func:`readings`: from
smaller runs, always) it is among the chosen one's ``alternatives``, so the
interval spans its prediction and :func:`suggest_run` names where the two
part most.

Regime validity (named options of :func:`select_model`)
-------------------------------------------------------
* ``mode``: sync candidates for sync jobs, async candidates for async jobs.
* Async lock-step: async workers with near-constant compute times on a fairly
  shared link can stay in lock-step: every worker sends at the same moment and
  the link is shared as in a synchronous step, so the MVA's averages (which
  assume workers drift apart, Li et al. 2022, eqs. 1-5) overpredict.  They can
  also drift apart: TCP's own dynamics (flows finishing a little apart) move a
  worker's phase without any compute jitter.  So with the compute time's
  coefficient of variation below ``lockstep_cv`` (default 0.05) on a fair
  link (``link_sharing="fair"``) both the lock-step model
  (:class:`~perfmodel.coarse.LockStep`: Li et al. 2022, eq. 7 per worker) and
  the MVA are valid, and the prior (workers drift apart, above) decides
  unless runs of 3 or more workers show lock-step; with ``compute_cv >=
  lockstep_cv`` or a FIFO link only the models of drifted-apart workers are.
  With the link's sharing unknown (``link_sharing=None``) both stay valid.
  The threshold 0.05 is our choice: below it a worker's step drifts by less
  than one transfer time of a ResNet-50-sized model at 10 Gbps within about
  ten steps.  A fair link with near-constant compute once made the lock-step
  model the only valid one; on the held-out corpus's train half its three
  such regimes (DCTCP on fair-queued hosts) drifted apart instead, the
  lock-step model 25-33% off where the MVA was 6-14% (docs/validation.md).
* Link sharing (``link_sharing``, when known): a fair queue shares the
  server's link as processor sharing, Li et al. 2022, eq. 7 (``sync-ps``,
  ``sim-ps``, the lock-step model).  TCP flows through a FIFO (drop-tail)
  queue also share it about equally: on the ns-3 matrix's loss-free FIFO
  regimes eq. 7 / ``sim-ps`` with the header efficiency stays close to ns-3
  up to 10 workers, where FCFS sharing (eq. 8) is far too fast.  So the
  PS-sharing candidates are valid on both; Li et al. 2022's FCFS and hybrid
  (eq. 9, fitted on AWS, whose network may serve flows more unequally) stay
  valid on FIFO links only: ``sync-hybrid`` with its fitted weight,
  ``sync-fcfs`` and ``sim-fcfs`` (eq. 8, the FIFO extreme).  The async MVA
  selects its discipline itself (eq. 5) and stays valid with either.  A
  candidate that does not share the server's link between workers at all
  (Zhang et al. 2023's GST, whose eqs. 10-12 time one worker's transfer) is
  valid only when the sharing is unknown.
* Lossy links (``lossy=True`` of :func:`select_model`): every candidate fits
  first the chance ``q`` that a message stalls for one retransmission
  timeout (``Cluster.timeout_probability``; the stall is
  ``Cluster.retransmit_timeout``, which the user gives: 200 ms on Linux),
  then the link efficiency.  A timeout costs a whole RTO whatever the
  bandwidth, so it cannot be folded into the efficiency: in a sync step it
  is exposed minus what the other workers' bytes hide
  (:func:`perfmodel.coarse.timeout_stall`), in an async step it delays the
  worker itself (:func:`perfmodel.queueing.async_stall_time`); the simulator
  draws the stalls.  From one or two configurations a timeout and a slower
  link both just lengthen a step, so the two trade along a ridge; when the
  measurements give the median or the spread of the step time
  (``step_time_median``, ``step_time_std``),
  :func:`~perfmodel.fit.timeouts.timeouts_from_step_times` reads q off them (a
  timeout lengthens a few steps by a whole RTO, a slower link every step a
  little) and every candidate's q is held within a factor
  :data:`~perfmodel.fit.timeouts.TIMEOUT_BAND` of that estimate, its grid
  values in the band ordered nearest first
  (:func:`~perfmodel.fit.timeouts.with_timeout_band`); the means then fit the
  efficiency.  On the ns-3 matrix this is a large improvement on the sync
  lossy regimes (docs/validation.md).  An async job is the exception: its
  MVA is calibrated by its level on a lossy link as on a loss-free one
  (:func:`levels_on`): without a barrier a worker's stall holds back that
  worker alone while the others keep the links busy, so what one or two
  runs show is a slowdown of every cycle, not a stall a sync step would
  expose whole.
* A candidate outside its regime is chosen only when no candidate is valid.

Error bars
----------
The LOO residuals of the chosen candidate, in log space, ``d_i = log(measured_i
/ predicted_i)`` (each point predicted by a fit on the others), give a
symmetric half-width ``h`` and the interval ``[T exp(-h), T exp(h)]`` around
the prediction ``T`` at level ``level`` (default 0.9):

* ``n`` residuals with ``ceil((n + 1) level) <= n`` (n >= 9 at 0.9): the
  ``ceil((n + 1) level)``-th smallest ``|d_i|`` (the split-conformal quantile;
  the jackknife+ coverage argument, Barber et al. 2021, for LOO residuals);
* fewer residuals: Student's t with ``n`` degrees of freedom (the residuals
  are taken as centred) times the RMS of ``d_i``, the usual small-sample
  inflation: at n = 2 it is 2.92 RMS for 90%;
* never less than ``min_width`` (default 0.02, i.e. about 2%): with two
  calibration points the fit can reproduce both by chance, and a zero width
  would claim what two points cannot show;
* fewer than 2 measurements (no LOO): ``prior_width`` (default 0.3).

LOO residuals measure errors among the calibration points; a prediction far
beyond them (12 workers from runs with 1 and 2) also carries the model's
misfit growing with the distance, which two points cannot show.  With
``extrapolation="growth"`` (the default) the half-width at K workers beyond
K_cal (the most workers among the calibration points) is
``sqrt(h**2 + (g log(K / K_cal))**2)``: the LOO error and a misfit that grows
by ``g`` per e-fold of workers, added as independent errors.  Between
calibration runs far apart (1, 2 and 12 workers) the model is as unsure as
that far from its evidence: the distance is the log ratio to the nearest run
(``|log(K / k)|`` for the run k closest to K), which beyond the runs is
``log(K / K_cal)`` again.  ``g`` is a prior on how far the papers' models
stray from a real network when extrapolated, and it grows with how much the
compute varies (:func:`extrapolation_growth`): ``hypot(g0, 0.5 c)`` for
compute of coefficient of variation c (``Cluster.compute_cv``; 0, the
default, takes the compute as steady).  The 0.5 c is the physics: the
expected slowest of K workers pulls away from the mean by about that much
per e-fold of K, which runs of 1-2 workers cannot show.  A model that draws each
worker's compute from that spread (the simulator, :func:`draws_compute_spread`)
already waits for the slowest of K, so its interval widens at ``g0`` only
(``widen_drawn_spread``).  ``g0``
(:data:`EXTRAPOLATION_GROWTH`, 0.03 both modes) is set on the loss-free
regimes of every packet-level set (:mod:`perfmodel.fit.corpus`) so that each
side of the 90% interval misses at most 5% of the runs: for each run and
side, the least ``g`` at which that side holds the run; per side, the
``ceil(0.95 (n + 1))``-th smallest of those n needs (the split-conformal
quantile: Lei et al., Distribution-free predictive inference for
regression, JASA 2018); ``g0`` the larger side's.  The newest set judges it
(``docs/experiments/interval_growth.py``).  ``"linear"``
multiplies the LOO width by ``K / K_cal`` (a relative misfit of the step
time's slope grows about linearly in K), ``"sqrt"`` by its square root;
both hang on two LOO residuals, which are tiny when a model happens to fit
both points and large when it misses one.  ``"none"`` keeps the LOO width
(right when the model is correct and only the noise is left).

Async runs with no more workers than servers cannot show how much the
workers queue at two or more servers: up to K = P workers each worker's own
link is the bottleneck and the servers' links are not contended, beyond it
they are, and whether the workers then queue at the P servers in turn (the
MVA's stations) or pass them as one fork-join is what the runs would have to
show.  Above the prediction such an interval reaches the contention-free
bound instead of widening with the workers (:func:`contention_free_throughput`,
the asymptotic bound of a closed network: K times one worker alone, or what
the servers' links carry); below, it widens as above.  A run with more
workers than servers shows the queueing at its own count, not where it sets
in: the knee between P and that run is where the in-turn and fork-join
readings part most, so below that run's workers the top still reaches the
bound.  Where the user says the link is FIFO (``link_sharing="fifo"``: loss-based
TCP on drop-tail host queues) the runs need not show it: such a queue passes the
flows of workers that meet in the order their packets queued, so they leave
staggered, and the MVA meets the servers at once up to P (:func:`servers_to_p`,
``fork_join_to_p``); a fair queue keeps equal transfers, and so the workers,
together.

A sync job on a link that drops packets (``lossy=True``) can
collapse as its workers grow: their transfers meet at a server's port at
once, overflow a shallow switch buffer, and a flow that loses its tail waits
for a retransmission timeout, during which the barrier holds every worker
(TCP incast; Phanishayee et al. 2008).  Runs at one or two workers need not
show it, and where it sets in depends on the buffer, the windows and the
fan-in, none of which they give.  Beyond the calibration runs the bottom of
such an interval reaches :func:`incast_throughput`, the speed with one
timeout in every step.  Not when the losses are unknown (``lossy=None``):
on a deep-buffer or lossless fabric that bottom would be width without
cause, and a user who knows their switches drop packets says so.

When the candidate's own estimate carries an interval (GST percentiles, a
simulator's replications) the two are joined (the wider on each side), and
the interval reaches the predictions of the ``alternatives`` (the models the
runs cannot rule out), which ``meta["model_spread"]`` lists.

Whatever widened it, no interval reaches above what the hardware allows
(:func:`contention_free_throughput` with the top of one worker's interval):
K workers run no faster than K times one worker alone, nor than the busiest
link carries at line rate (:func:`perfmodel.floors.link_floor`).

The estimate itself stops at the links' bound too: a model calibrated by a level below 1
(runs faster than the model at 1-2 workers) would otherwise carry a link
past its line rate once the link is the bottleneck, so it is slowed
to that bound (the added seconds are transfers: ``uplink``, or
``allreduce`` without servers).  Nor does it go faster than the servers
apply updates, when each applies one at a time
(``server_cpu="fcfs"``, :func:`select_model`'s default: the server station of
Li et al. 2022's async queueing model, and a parameter server with one update
thread): async SGD applies every gradient, so K workers on P servers apply at
most ``P / t_update`` gradients a second (:func:`server_throughput`).  Models
without that queue (lock-step workers, the simulator with an update core per
worker) and a level calibrated below 1 would pass it; the estimate is slowed
to it (``bottleneck = "update"``) and the interval stops there.  It is a
cap, not a fit: a declared ``t_update`` and the server count fix it.  A
server that updates on a core per worker is ``server_cpu="own"``.

References
----------
Li, Paolieri, Golubchik, Lin, Yan. Predicting Throughput of Distributed SGD.
IEEE TPDS, 2022.  Eqs. 1-5 (MVA), eq. 7 (PS sharing), eqs. 7-10 (sync coarse),
Sec. 4.2.1 (calibration by profiling).

Zhang, Zhang, Wei, Pan, Huang. Performance Modeling and Analysis of
Distributed Deep Neural Network Training with Parameter Server. 2023
(GST percentiles).

Barber, Candes, Ramdas, Tibshirani, "Predictive inference with the
jackknife+", Ann. Statist. 49(1), 2021.

Phanishayee, Krevat, Vasudevan, Andersen, Ganger, Gibson, Seshan,
"Measurement and analysis of TCP throughput collapse in cluster-based
storage systems", USENIX FAST 2008 (incast: a barrier-synchronized request
waits for one timeout of the minimum RTO).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.stats import t as student_t

from .. import _validate as _v
from .. import registry
from ..coarse import LockStep
from ..errors import Infeasible, PerfModelError, SpecError
from ..floors import link_floor
from ..measurements import measured_cluster, measured_profile
from ..operational import fit_utilization_ceiling
from ..queueing import AsyncMVA, link_rate, update_spread
from ..registry import FAMILIES, ModelEntry, Variant
from ..result import Estimate
from ..sim.model import BlockTrace, ProfiledTrace, TraceSim
from ..sim.trace import Trace
from ..specs import Cluster, Config, Profile
from .grid import error_objective, fit_tunables, predict_measurements
from .level import SLOWDOWNS, Leveled, leveled
from .timeouts import TIMEOUT_BAND, timeout_why, timeouts_from_step_times, with_timeout_band

__all__ = ["FAMILIES", "LOCKSTEP_CV", "LOSSY_REPLICATIONS", "EVIDENCE", "evidence_of", "plausible",
           "readings",
           "suggest_run", "TUNABLE_GRIDS", "SIM_TUNABLE_GRIDS", "LEVELED", "level_candidate",
           "levels_on", "CALIBRATIONS", "SHAPE_SPAN", "calibrated_by_level", "tunables_earned",
           "SPACED_SPACING", "SPACED_LEVEL", "SPACED_STEPS", "SPACED_WARMUP", "update_spacing",
           "runs_spacing",
           "spaced_candidate", "spaced_choice", "SERVER_BOUND_SPACING", "AsymptoticBound",
           "server_bound_candidate", "server_bound_choice", "PARTLY_LOCKED_SERVERS",
           "free_weight", "PartlyLocked", "partly_locked_candidate", "partly_locked_choice",
           "ModelCandidate", "candidate_grid", "simulated_on", "variant_candidate",
           "default_candidates",
           "matrix_candidates", "servers_to_p", "TO_P_CANDIDATE", "MVA_CANDIDATE",
           "cpu_ceiling", "cpu_runs", "interval_halfwidth", "pooled_with", "CONVOYS", "HORIZONS",
           "CONVOY_POOL_SERVERS",
           "CONVOY_CANDIDATE", "convoy_partners",
           "extrapolated_halfwidth", "EXTRAPOLATION_GROWTH", "COMPUTE_CV_GROWTH",
           "extrapolation_growth", "draws_compute_spread", "contention_free_throughput", "SERVER_CPUS",
           "server_throughput", "incast_throughput",
           "ASYNC_EVIDENCE_WORKERS", "Calibrated",
           "Score", "Selection", "choose", "validity", "calibrate_candidate", "select_model"]

#: Compute-time coefficient of variation below which async workers may stay in lock-step.
LOCKSTEP_CV = 0.05

#: The simulator candidates' replications on a (possibly) lossy link (see
#: :func:`default_candidates`).
LOSSY_REPLICATIONS = 4

#: Relative slack of the hardware's caps on an estimate (the links, the servers): a run's
#: throughput, rounded to the digits a results file keeps, may read a hair above the
#: bound it sits on.
_CAP_SLACK = 1e-6

#: How a server applies updates: one at a time ("fcfs") or each worker's on its own core
#: ("own"); the simulator's ``server_cpu`` values (:class:`~perfmodel.sim.model.TraceSim`).
SERVER_CPUS = ("fcfs", "own")

#: How an interval widens beyond the calibrated worker counts (:class:`Calibrated`).
EXTRAPOLATIONS = ("growth", "linear", "sqrt", "none")
#: Growth of the log misfit per e-fold of workers beyond the calibration runs
#: (``extrapolation="growth"``) of a job whose compute does not vary, by mode: each side
#: of the interval misses at most 5% of the loss-free runs of the packet-level sets
#: (split-conformal quantiles, module notes).
EXTRAPOLATION_GROWTH: Mapping[str, float] = {"sync": 0.03, "async": 0.03}
#: Further growth per unit of the compute's coefficient of variation
#: (:func:`extrapolation_growth`): about how fast the expected slowest of K workers pulls
#: away from the mean as K grows, per e-fold of K, which 1-2 runs cannot show.
COMPUTE_CV_GROWTH = 0.5

#: What an unknown link is taken to do before the runs are read: TCP flows share a
#: bottleneck about fairly (on a FIFO queue too, when nothing drops).
PRIOR_LINK = "fair"

#: What :func:`select_model` may take for granted on a link said FIFO (``fifo_prior``).
FIFO_PRIORS = ("fair", "fifo")

#: How :func:`select_model` weighs async workers that travel in convoys (``convoys``).
CONVOYS = ("reading", "prior", "pooled", "pooled-servers")
#: Least servers every run must be on for ``convoys="pooled-servers"`` to pool: on one
#: server the convoys' model is far too slow (its convoys seem not to pass each other on
#: the server link's two directions), so it pools nothing there.
CONVOY_POOL_SERVERS = 2
#: The candidate whose workers travel in convoys beyond the saturation point.
CONVOY_CANDIDATE = "async-convoy"

#: What speed :func:`select_model` answers (``horizon``): the window a short run
#: measures after its workers start together, or a long job's, and the ``convoys`` and
#: ``fork_join_to_p`` each one takes where they are not given.
HORIZONS = {"window": {"convoys": "pooled", "fork_join_to_p": "fifo"},
            "long": {"convoys": "reading", "fork_join_to_p": True}}

#: Mean relative LOO error a candidate that the prior does not favour must gain to be
#: chosen, and within which candidates count as indistinguishable: two points, about
#: the run-to-run spread of a measured throughput.
EVIDENCE = 0.02
#: Async runs with fewer workers than this are no evidence against drifting workers: the
#: workers of a run start together, and with one or two of them whether they drift apart
#: does not show yet (the lock-step and the simulated transient fit such runs best and
#: part from the steady state at larger K).
ASYNC_EVIDENCE_WORKERS = 3

#: Candidate values of each tunable, preferred first (ties in a fit go to the first):
#: the link efficiency (goodput / line rate) from 1.0, so ties keep the nominal rate;
#: the update growth g of t_U(K) = t_update ((1 - g) + g K) from 0 (an update per step);
#: the sharing weight (1: PS sharing, 0: FCFS) from eq. 9's 0.5 outwards; rho_T from
#: the grid of Li et al. 2022, Sec. 4.2.1, its AWS value 0.6 first; the timeout probability q
#: per message on a lossy link (``Cluster.timeout_probability``) from 0.
TUNABLE_GRIDS: Mapping[str, tuple] = {
    "link_efficiency": tuple(round(1.0 - 0.02 * i, 2) for i in range(26)),
    "update_growth": tuple(round(0.1 * i, 1) for i in range(11)),
    "sharing_weight": (0.5, 0.6, 0.4, 0.7, 0.3, 0.8, 0.2, 0.9, 0.1, 1.0, 0.0),
    "rho_threshold": (0.6, 0.5, 0.7, 0.4, 0.8, 0.3, 0.9, 0.2, 1.0, 0.1),
    "timeout_probability": (0.0, 0.005, 0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07,
                            0.08, 0.09, 0.1, 0.12, 0.14, 0.16, 0.18, 0.2, 0.25, 0.3, 0.4, 0.5),
}

#: Candidates calibrated by their level on a loss-free link (:func:`level_candidate`), by
#: mode: the sync fair-sharing ones, which the prior prefers (the FIFO-only ones keep
#: their tunables), and the MVA, which answers async runs of 1-2 workers.
LEVELED = {"sync": ("sync-ps", "sim-ps"), "async": ("async-mva", "async-fcfs", "async-convoy")}
#: How :func:`select_model` calibrates them (``calibration=``).
CALIBRATIONS = ("auto", "level", "tunables")
#: Least span of the runs' worker counts (largest over smallest) for
#: ``calibration="auto"`` to fit the tunables: runs closer together (1 and 2 workers)
#: show how much slower the job runs than the model, not how the step grows with K.
SHAPE_SPAN = 3

#: The simulator's coarser grids (each point is a simulation); other tunables as above.
SIM_TUNABLE_GRIDS: Mapping[str, tuple] = {
    "link_efficiency": (1.0, 0.96, 0.92, 0.88, 0.84, 0.8, 0.7, 0.6, 0.5),
    "timeout_probability": (0.0, 0.02, 0.04, 0.06, 0.08, 0.1, 0.15, 0.2, 0.3),
}


# --------------------------------------------------------------------------
# Candidates
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class ModelCandidate:
    """A model with the tunables it may fit on measurements.

    Attributes
    ----------
    name : str
        Short name shown in reports (``"sync-hybrid"``).
    family : {"closed form", "queueing", "simulation"}
        Its kind, for the simplicity tie-break.
    model : object
        Any model with ``estimate(workload, cluster, config)``, a frozen dataclass.
    grid : mapping of str to tuple
        Tunables and their candidate values, preferred values first (ties in
        the fit go to the first): Cluster fields or model options, as for
        :func:`perfmodel.fit.grid.fit_tunables`.
    modes : tuple of str
        Synchronisation modes it models (``"sync"``, ``"async"``).
    lockstep : bool or None
        True: valid only when async workers are in lock-step; False: valid
        only when they drift apart; None: either (see the module docstring).
    links : tuple of str
        Link queues whose sharing it represents (``"fair"``, ``"fifo"``);
        empty: it does not share the server's link among workers at all.
    exact_links : tuple of str
        Link queues it replays exactly rather than approximates (the
        simulator's processor sharing on a ``"fair"`` queue): :func:`choose`
        prefers it there within the tolerance.
    reading_of : str
        The candidate it reads another way (``async-fcfs``: the MVA's network
        with eq. 3's FCFS links, ``"async-mva"``): it disagrees with the prior,
        and where the runs cannot rule it out it widens that candidate's
        interval (module notes, "Readings").  Empty: none.
    """

    name: str
    family: str
    model: Any
    grid: Mapping = field(default_factory=dict)
    modes: tuple = ("sync",)
    lockstep: bool | None = None
    links: tuple = ("fair", "fifo")
    exact_links: tuple = ()
    reading_of: str = ""

    def __post_init__(self):
        if self.family not in FAMILIES:
            raise SpecError("family", f"must be one of {', '.join(FAMILIES)}, got {self.family!r}")
        if not hasattr(self.model, "estimate"):
            raise SpecError("model", f"needs estimate(), got {type(self.model).__name__}")
        for mode in self.modes:
            if mode not in ("sync", "async"):
                raise SpecError("modes", f"expected 'sync' or 'async', got {mode!r}")


def candidate_grid(variant: Variant, family: str, lossy: bool | None) -> dict:
    """The grid of a variant's tunables; on a lossy link (or one not known to be
    loss-free) with the timeout probability first (lossy) or last (unknown)."""
    grids = {**TUNABLE_GRIDS, **SIM_TUNABLE_GRIDS} if family == "simulation" else TUNABLE_GRIDS
    grid = {name: grids[name] for name in variant.tunables}
    if lossy is False:
        return grid
    if lossy:
        return {"timeout_probability": grids["timeout_probability"], **grid}
    return {**grid, "timeout_probability": grids["timeout_probability"]}


def simulated_on(model, overlap: bool, blocks: int = 4, trace: Trace | None = None):
    """A trace-driven ``model`` as the selection runs it: on the user's per-layer
    ``trace`` when there is one (:class:`ProfiledTrace`), else, with ``overlap``, on
    the profile split into ``blocks`` equal layer blocks (:class:`BlockTrace`): a
    profile of one block cannot push any gradient before the whole backward pass
    ends."""
    if trace is not None:
        return ProfiledTrace(model, trace)
    return BlockTrace(model, blocks) if overlap else model


def variant_candidate(model_entry: ModelEntry, variant: Variant, mode: str, *,
                      overlap: bool = False, lossy: bool | None = False,
                      simulation: Mapping | None = None, blocks: int = 4,
                      trace: Trace | None = None) -> ModelCandidate:
    """The candidate of one registry variant for a job in ``mode``.

    The variant's options build the model; a model with an ``overlap`` option
    gets ``overlap`` unless the variant fixes it.  A simulation model gets the
    ``simulation`` options (its horizon and replications) and runs the user's
    per-layer ``trace`` when there is one (:class:`ProfiledTrace`), else, with
    overlap, the profile split into ``blocks`` layer blocks (:class:`BlockTrace`).
    """
    cls = registry.model_class(model_entry.name)
    options = dict(variant.options)
    if model_entry.family == "simulation":
        model = simulated_on(cls(**options, **dict(simulation or {})), overlap, blocks, trace)
    else:
        if "overlap" in {f.name for f in dataclasses.fields(cls)}:
            options.setdefault("overlap", overlap)
        model = cls(**options)
    return ModelCandidate(variant.name, model_entry.family, model,
                          candidate_grid(variant, model_entry.family, lossy), (mode,),
                          variant.lockstep, variant.links, variant.exact_links,
                          variant.reading_of)


def _registry_candidates(candidate_set: str, mode: str, overlap: bool, simulate: bool,
                         exclude: Sequence[str] = (), **options) -> list[ModelCandidate]:
    return [variant_candidate(e, v, mode, overlap=overlap, **options)
            for e, v in registry.variants(candidate_set)
            if mode in e.modes and overlap in v.overlap and v.name not in exclude
            and (simulate or e.family != "simulation")]


def _check_job(mode: str, lossy) -> None:
    if mode not in ("sync", "async"):
        raise SpecError("mode", f"expected 'sync' or 'async', got {mode!r}")
    if lossy not in (True, False, None):
        raise SpecError("lossy", f"expected True, False or None, got {lossy!r}")


def _simulation_options(sim_steps: int, sim_warmup: int, replications: int | None,
                        server_cpu: str, lossy) -> dict:
    if replications is None:
        replications = 1 if lossy is False else LOSSY_REPLICATIONS
    cpu = {} if server_cpu == "own" else {"server_cpu": server_cpu}
    return {"steps": sim_steps, "warmup": sim_warmup, "replications": replications, **cpu}


def default_candidates(mode: str = "sync", *, overlap: bool = False,
                       simulate: bool = False, blocks: int = 4, sim_steps: int = 40,
                       sim_warmup: int = 4, replications: int | None = None,
                       server_cpu: str = "own", lossy: bool | None = False,
                       trace: Trace | None = None, leveled: bool = False
                       ) -> tuple[ModelCandidate, ...]:
    """The candidates for a parameter-server job: the registry's ``"selection"`` variants.

    Parameters
    ----------
    mode : {"sync", "async"}
        The job's synchronisation.
    overlap : bool
        Communication overlapped with computation (Li et al. 2022, eqs. 6 and 10).
    simulate : bool
        Include the trace-driven simulator (a simulation per estimate: the slowest).
    blocks : int
        With ``overlap`` and no ``trace``, the simulator runs the profile split
        into this many equal layer blocks (:class:`~perfmodel.sim.model.BlockTrace`).
    trace : Trace or None
        The job's measured per-layer trace: the simulator runs it
        (:class:`~perfmodel.sim.model.ProfiledTrace`) at each measurement's batch.
    sim_steps, sim_warmup : int
        The simulator's steps per worker (warm-up included) and warm-up: the
        horizon of the runs it stands for.  Async workers on a fairly shared
        link drift out of lock-step only slowly (their offsets random-walk by
        about ``compute_cv (t_F + t_B) sqrt(n)`` after n steps), so a short
        run from a common start measures a different throughput than the
        steady state; the simulator reproduces either when given the horizon.
    replications : int or None
        The simulator's replications (:class:`~perfmodel.sim.model.TraceSim`),
        averaging out the random walk of a short horizon.  None: 1 on a
        loss-free link, :data:`LOSSY_REPLICATIONS` otherwise, since stalls are
        rare events: a 40-step run draws about ``80 q`` of them, so one run's
        count is off by about ``1 / sqrt(80 q)`` (40% at q = 0.08), and a
        two-point fit then buys the noise with a wrong efficiency.
    server_cpu : {"own", "fcfs"}
        The simulator's server update CPU: one per worker (Li et al. 2022,
        Algorithm 1) or one per server applying gradients first come first
        served, which spaces async workers' restarts by the update time.
    lossy : bool or None
        Whether the link drops packets.  True: every candidate first fits the
        timeout probability q (``Cluster.timeout_probability``: messages that
        stall for one ``retransmit_timeout``), so two calibration points fit q
        and the link efficiency; None (unknown): q is fitted last, only when
        there are more points than the other tunables; False (default, the
        papers' loss-free link): q stays 0.
    leveled : bool
        On a loss-free link (async: on any link, :func:`levels_on`), calibrate
        the candidates of :data:`LEVELED` (sync: the fair-sharing ones; async:
        the MVA) by their level instead of their tunables
        (:func:`level_candidate`): what runs at one or two worker counts can
        determine (:mod:`perfmodel.fit.level`).

    Returns
    -------
    tuple of ModelCandidate
        In registry order: sync: ``sync-ps`` (eq. 7), ``sync-fcfs`` (eq. 8),
        ``sync-hybrid`` (eq. 9/10 with a fitted sharing weight); async:
        ``async-lockstep`` (:class:`~perfmodel.coarse.LockStep`),
        ``async-mva`` (eqs. 1-6, fitted rho_T); with ``simulate``, ``sim-ps``
        and ``sim-fcfs`` (Algorithm 1, by default 40 steps including 4 of
        warm-up; with ``overlap`` on ``blocks`` layer blocks).  Each fits the
        link efficiency; ``sync-ps`` and ``sync-fcfs`` also the update growth,
        ``sync-hybrid`` the sharing weight instead (with one bandwidth both
        only change the slope of the step time in K, so fitting both on two
        points would be arbitrary).
    """
    _check_job(mode, lossy)
    sim = _simulation_options(sim_steps, sim_warmup, replications, server_cpu, lossy)
    cands = _registry_candidates("selection", mode, overlap, simulate, lossy=lossy,
                                 simulation=sim, blocks=blocks, trace=trace)
    if leveled and levels_on(mode, lossy):
        cands = [level_candidate(c) if c.name in LEVELED[mode] else c for c in cands]
    return tuple(cands)


def levels_on(mode: str, lossy: bool | None) -> bool:
    """Whether the candidates of :data:`LEVELED` may be calibrated by their level: on a
    loss-free link, and for an async job on any link (module notes, lossy links)."""
    return lossy is False or mode == "async"


def calibrated_by_level(calibration: str, workers) -> bool:
    """Whether ``calibration`` (of :func:`select_model`) fits the level on runs at these
    worker counts: ``"auto"`` when they span less than a factor :data:`SHAPE_SPAN`."""
    if calibration not in CALIBRATIONS:
        raise SpecError("calibration", f"expected one of {', '.join(CALIBRATIONS)}, "
                                       f"got {calibration!r}")
    return calibration == "level" or (
        calibration == "auto" and max(workers) < SHAPE_SPAN * min(workers))


def tunables_earned(by_tunables: Calibrated, by_level: Calibrated,
                    evidence: float = EVIDENCE) -> bool:
    """Whether a candidate fitted by its tunables earns them over its level: its LOO
    error beats the level's by more than ``evidence`` (``calibration="auto"`` on runs
    spanning :data:`SHAPE_SPAN` or more).

    The tunables (a link efficiency and an update growth, or rho_T) are two
    numbers where the level is one; on three runs both reproduce the runs
    they are fitted on, and only the left-out run tells whether the growth
    they fit is there.  A model with more freedom must earn it, as a FIFO
    model must earn its place over a fair one (:func:`choose`)."""
    return by_tunables.loo_error < by_level.loo_error - evidence


#: Update spacing ``T_S B / M`` from which the spaced rule answers async runs with the
#: simulator (``select_model(spaced=True)``, :func:`spaced_choice`).
SPACED_SPACING = 0.5
#: Largest ``|log slowdown|`` of the simulator fitted by its level on those runs for it
#: to answer: it must reproduce them unaided (within about 5%).
SPACED_LEVEL = 0.05
#: Steps per worker (warm-up included) and warm-up of the spaced simulator: long enough
#: for the update spacing to stagger the workers from their common start.
SPACED_STEPS, SPACED_WARMUP = 200, 20


#: Least update spacing ``T_S B / M`` at which a server's update CPU, not its link, is the
#: bottleneck station of an async job: each server applies a gradient's share in
#: ``T_S / P`` and moves it in ``M / (P B)`` (:func:`server_bound_choice`).
SERVER_BOUND_SPACING = 1.0


#: The async MVA's candidate (:class:`~perfmodel.queueing.AsyncMVA`): the workers drifted
#: apart, which the convoy and partly-locked rules weigh against other readings.
MVA_CANDIDATE = "async-mva"
#: The candidate :func:`servers_to_p` changes: the MVA.
TO_P_CANDIDATE = MVA_CANDIDATE


def servers_to_p(cand: ModelCandidate) -> ModelCandidate:
    """``cand`` with the servers met at once up to P workers, if it is
    :data:`TO_P_CANDIDATE` (the MVA with ``servers="fork-join-to-p"``,
    :class:`~perfmodel.queueing.AsyncMVA`); any other candidate as it is.

    Up to K = P workers each worker's own link is its bottleneck and no server
    link carries two workers' shards, so the fork-join is exact there, where the
    stations visited in turn queue at links nobody else uses; beyond P the
    servers' links are contended and the throughput grows as the in-turn
    network's does from P.  :func:`select_model` uses it when every run has
    fewer workers than servers: a run at P or beyond would show the level there
    itself."""
    if cand.name != TO_P_CANDIDATE:
        return cand
    if isinstance(cand.model, Leveled):
        return dataclasses.replace(cand, model=dataclasses.replace(
            cand.model, model=dataclasses.replace(cand.model.model, servers="fork-join-to-p")))
    return dataclasses.replace(cand, model=dataclasses.replace(cand.model,
                                                               servers="fork-join-to-p"))


def update_spacing(profile: Profile, cluster: Cluster) -> float:
    """``T_S B / M``: how long a server's update of one gradient takes beside one
    model's transfer over one link (the same with P servers, each moving and applying
    ``M / P``)."""
    return profile.t_update * cluster.nic_bandwidth / profile.model_bytes


def runs_spacing(profile: Profile, cluster: Cluster, measurements) -> float:
    """:func:`update_spacing` at the runs' line rate (the least over the runs): the
    cluster given for the predictions may be another network than the one measured."""
    return min(update_spacing(profile, measured_cluster(cluster, m)) for m in measurements)


def spaced_candidate(compute_cv: float, overlap: bool, blocks: int = 4) -> ModelCandidate:
    """The trace-driven simulator that replays the staggered schedule: fair links
    (processor sharing keeps transfers that start apart just as far apart), one update
    CPU per server applying gradients first come first served (it spaces workers that
    arrive together), the job's own compute jitter and a steady-state horizon;
    calibrated by its level.  With ``overlap`` it runs the profile split into
    ``blocks`` equal layer blocks, as the other simulator candidates do
    (:func:`simulated_on`)."""
    sim = TraceSim(sharing="ps", server_cpu="fcfs", jitter=compute_cv, steps=SPACED_STEPS,
                   warmup=SPACED_WARMUP, overlap=overlap, seed=1)
    return level_candidate(ModelCandidate("sim-spaced", "simulation",
                                          simulated_on(sim, overlap, blocks),
                                          modes=("async",), lockstep=False, links=("fair",)))


@dataclass(frozen=True)
class AsymptoticBound:
    """K async workers, each as fast as ``model`` predicts for one worker alone (with
    every step ``slowdown`` times longer), up to what the links carry at line rate and
    what the servers apply one update at a time: the asymptotic bound of a closed
    network (Lazowska, Zahorjan, Graham, Sevcik, Quantitative System Performance, 1984,
    Sec. 5.2), which deterministic stations reach sharply at the knee.

    Examples
    --------
    >>> from perfmodel.queueing import AsyncMVA
    >>> from perfmodel.specs import Profile, Cluster, Config
    >>> p = Profile(model_bytes=100e6, t_forward=0.1, t_backward=0.2, t_update=0.2,
    ...             batch_size=32)
    >>> c = Cluster(machines=20, nic_bandwidth="1GB/s")
    >>> bound = AsymptoticBound(AsyncMVA())       # alone: 0.3 + 2 x 0.1 + 0.2 s a cycle
    >>> [round(bound.estimate(p, c, Config(n_replicas=k, mode="async")).throughput, 1)
    ...  for k in (1, 2, 4)]                      # 32 / 0.7 a worker, then 32 / 0.2
    [45.7, 91.4, 160.0]
    """

    model: Any
    slowdown: float = 1.0

    def __post_init__(self):
        if not hasattr(self.model, "estimate"):
            raise SpecError("model", f"needs estimate(), got {type(self.model).__name__}")
        _v.scalar("slowdown", self.slowdown, positive=True)

    @property
    def modes(self) -> tuple:
        """Async only: a sync step waits for every worker, which this bound ignores."""
        return ("async",)

    def estimate(self, workload, cluster: Cluster, config: Config) -> Estimate:
        """The bound for ``config`` (async, data-parallel)."""
        if config.mode != "async" or config.n_workers > 1:
            raise Infeasible("the asymptotic bound answers async data-parallel jobs only")
        one = leveled(self.model.estimate(workload, cluster, config.replace(n_replicas=1)),
                      float(self.slowdown))
        k = config.n_replicas
        est = dataclasses.replace(
            one, throughput=one.throughput * k, throughput_interval=None,
            epoch_time=None if one.epoch_time is None else one.epoch_time / k,
            meta=dict(one.meta, model="async-bound"))
        return _under_servers(_under_links(est, workload, cluster, config), workload, config)


def server_bound_candidate(overlap: bool) -> ModelCandidate:
    """:class:`AsymptoticBound` of the MVA (Li et al. 2022, eqs. 1-6) at one worker:
    compute, the transfers and one update, no queue, its P servers applying their
    shares at once (``serialized_bound=True``, exact for one worker, where the MVA
    visits them in turn), calibrated by its level."""
    return ModelCandidate("async-bound", "closed form",
                          AsymptoticBound(AsyncMVA(overlap=overlap, serialized_bound=True)),
                          grid={"slowdown": SLOWDOWNS}, modes=("async",), lockstep=False)


#: Most servers on which :class:`PartlyLocked` keeps async workers partly in lock-step.
PARTLY_LOCKED_SERVERS = 2


def free_weight(workers, t_update, model_bytes, bandwidth):
    """The MVA's weight in :class:`PartlyLocked`'s step: ``(1 + min(1, K T_S B / M)) / 2``.
    Vectorized.

    ``min(1, K T_S B / M)`` is how far the servers' K updates, applied one at a
    time, spread workers that reach them together, in transfers
    (:func:`perfmodel.queueing.update_spread`); where they spread nothing, the
    workers sit halfway (geometrically) between lock-step and drifted apart.

    Examples
    --------
    >>> float(free_weight(8, 0.02, 100e6, 1.25e8))     # 8 x 20 ms over 0.8 s: 0.2
    0.6
    >>> float(free_weight(16, 0.02, 100e6, 1.25e9))    # 16 x 20 ms over 80 ms: spread
    1.0
    """
    return 0.5 * (1.0 + update_spread(workers, t_update, model_bytes, bandwidth))


@dataclass(frozen=True)
class PartlyLocked:
    """Async workers between lock-step and drifted apart, on one or two servers (ours).

    Workers that start together and share a link fairly stay together (equal
    transfers on a processor-sharing link keep their gaps), and the servers' updates,
    applied one at a time, spread them by ``T_S / P`` each; TCP's unequal flow
    completion and the compute's jitter spread them further, by amounts no input
    says.  Between the two ends the step is their weighted geometric mean,
    ``T_free^w T_locked^(1 - w)``, with ``w`` = :func:`free_weight`:
    halfway where the updates spread nothing, the drifted-apart workers where the
    K updates span a transfer.  ``free`` is the drifted-apart model (default: the MVA
    of Li et al. 2022, eqs. 1-6), ``locked`` the lock-step one (default:
    :class:`~perfmodel.coarse.LockStep`, eq. 7 per worker step).  On three or more
    servers it is ``free``: there the servers' stations visited in turn already queue
    more than the runs do (docs/validation.md).  Its phases are ``free``'s, scaled.

    Examples
    --------
    >>> p = Profile(model_bytes=100e6, t_forward=0.05, t_backward=0.1, t_update=0.002,
    ...             batch_size=32)
    >>> c = Cluster(machines=20, nic_bandwidth="1GB/s")
    >>> part = PartlyLocked()
    >>> est = part.estimate(p, c, Config(n_replicas=8, mode="async"))
    >>> round(est.meta["free_weight"], 3)
    0.58
    """

    free: Any = None
    locked: Any = None
    overlap: bool = False

    def __post_init__(self):
        _v.boolean("overlap", self.overlap)
        for name in ("free", "locked"):
            model = getattr(self, name)
            if model is not None and not callable(getattr(model, "estimate", None)):
                raise SpecError(name, f"needs estimate(), got {type(model).__name__}")

    @property
    def modes(self) -> tuple:
        """Async only."""
        return ("async",)

    def free_model(self):
        """The drifted-apart model (default ``AsyncMVA(overlap=overlap)``)."""
        return self.free if self.free is not None else AsyncMVA(overlap=self.overlap)

    def locked_model(self):
        """The lock-step model (default ``LockStep(overlap=overlap)``)."""
        return self.locked if self.locked is not None else LockStep(overlap=self.overlap)

    def estimate(self, workload, cluster: Cluster, config: Config) -> Estimate:
        """The step between the two ends for ``config`` (async, data-parallel)."""
        if config.mode != "async" or config.n_workers > 1:
            raise Infeasible("partly locked workers are async data-parallel ones")
        free = self.free_model().estimate(workload, cluster, config)
        w = 1.0
        if 1 <= config.n_ps <= PARTLY_LOCKED_SERVERS:
            w = float(free_weight(config.n_replicas, workload.t_update, workload.model_bytes,
                                  link_rate(cluster)))
        meta = dict(free.meta, model="async-partly-locked", free_weight=w)
        if w >= 1.0:
            return dataclasses.replace(free, meta=meta)
        locked = self.locked_model().estimate(workload, cluster, config)
        scale = (locked.step_time / free.step_time) ** (1.0 - w)
        est = Estimate.from_phases({k: v * scale for k, v in free.phases.items()},
                                   config.n_replicas * workload.batch_size,
                                   epoch_samples=config.epoch_samples,
                                   meta=dict(meta, locked_step=locked.step_time))
        return dataclasses.replace(est, bottleneck=free.bottleneck)


def partly_locked_candidate(free: Any = None, overlap: bool = False) -> ModelCandidate:
    """:class:`PartlyLocked` of ``free`` (default: the MVA) calibrated by its level."""
    return level_candidate(ModelCandidate(
        "async-partly-locked", "queueing", PartlyLocked(free=free, overlap=overlap),
        modes=("async",), lockstep=False, links=("fair",)))


def level_candidate(cand: ModelCandidate) -> ModelCandidate:
    """``cand`` calibrated by its level (:class:`~perfmodel.fit.level.Leveled`: one
    slowdown of every step) instead of its tunables.  Fitted by its level, the
    simulator is no more exact than eq. 7 fitted by its level, so it loses the
    preference for exact candidates: the runs decide, then the simpler."""
    return dataclasses.replace(cand, model=Leveled(cand.model), grid={"slowdown": SLOWDOWNS},
                               exact_links=())


def matrix_candidates(mode: str = "sync", *, overlap: bool = False, blocks: int = 4,
                      sim_steps: int = 40, sim_warmup: int = 4, replications: int | None = None,
                      server_cpu: str = "own", lossy: bool | None = False
                      ) -> tuple[ModelCandidate, ...]:
    """The validation matrix's candidates: :func:`default_candidates` with the simulator,
    then the registry's other ``"matrix"`` variants (GST, the baselines), which fit the
    link efficiency only.  Parameters as for :func:`default_candidates`."""
    selection = default_candidates(mode, overlap=overlap, simulate=True, blocks=blocks,
                                   sim_steps=sim_steps, sim_warmup=sim_warmup,
                                   replications=replications, server_cpu=server_cpu,
                                   lossy=lossy)
    extra = _registry_candidates("matrix", mode, overlap, True,
                                 exclude=[c.name for c in selection], lossy=False)
    return selection + tuple(extra)


# --------------------------------------------------------------------------
# The CPU ceiling of runs with CPU readings
# --------------------------------------------------------------------------

def cpu_ceiling(profile: Profile, measurements, *, capacity: float | None = None,
                mode: str | None = None):
    """The CPU ceiling the measured sync runs' CPU readings put on the speed, or None.

    Uses the sync measurements with at least one server and both
    ``server_cpu`` and ``worker_cpu``
    (:func:`perfmodel.operational.fit_utilization_ceiling`: each run's
    demands per step from the utilization law, extrapolated in workers and
    servers); a step's samples are ``workers * batch_size`` (the profile's
    batch when the run gives none).  Async runs have no common step and
    are not used.

    Parameters
    ----------
    profile : Profile
    measurements : sequence of perfmodel.measurements.Measurement
    capacity : float or None, cores
        CPU a server or a worker may use; None: the largest reading, right
        when some run saturated a server or a worker.
    mode : {"sync", "async"} or None
        For measurements without a mode (default sync).

    Returns
    -------
    perfmodel.operational.UtilizationCeiling or None
        None when fewer than 3 such runs or only one worker count.

    Raises
    ------
    SpecError
        A run with one of the two readings but not the other, naming it.
    """
    ms = cpu_runs(measurements, mode)
    if not ms:
        return None
    batch = [m.workers * (m.batch_size or profile.batch_size) for m in ms]
    return fit_utilization_ceiling([m.n_ps for m in ms], [m.workers for m in ms], batch,
                                   [m.throughput for m in ms], [m.server_cpu for m in ms],
                                   [m.worker_cpu for m in ms], capacity=capacity)


def cpu_runs(measurements, mode: str | None) -> list:
    """The sync runs with servers and both CPU readings, when there are enough for a
    ceiling (3, with 2 worker counts), else []; a run with one reading is an error."""
    for m in measurements:
        if (m.server_cpu is None) != (m.worker_cpu is None):
            missing = "worker_cpu" if m.worker_cpu is None else "server_cpu"
            raise SpecError(f"{m.label}, column {missing}",
                            "a run with one CPU reading needs the other too (server_cpu: the "
                            "busiest server's cores, worker_cpu: the workers' mean)")
    ms = [m for m in measurements if (m.mode or mode or "sync") == "sync" and m.n_ps >= 1
          and m.server_cpu is not None]
    return ms if len(ms) >= 3 and len({m.workers for m in ms}) >= 2 else []


def _under_ceiling(est: Estimate, ceiling, config: Config) -> Estimate:
    """``est`` slowed to the CPU ceiling where it predicts more (sync, with servers); the
    ceiling is fitted on the runs, so the estimate's own interval moves with it."""
    if ceiling is None or config.mode != "sync" or config.n_ps < 1 or est.throughput <= 0:
        return est
    top = float(ceiling.speed(config.n_ps, config.n_replicas, est.throughput * est.step_time))
    return _slowed_to(est, top, "cpu_ceiling", "cpu_ceiling", scale_interval=True)


# --------------------------------------------------------------------------
# Intervals
# --------------------------------------------------------------------------

def interval_halfwidth(log_residuals: Sequence[float], level: float = 0.9, *,
                       min_width: float = 0.02, prior_width: float = 0.3) -> float:
    """Half-width h (in log throughput) of the interval ``[T e^-h, T e^h]``.

    Parameters
    ----------
    log_residuals : sequence of float
        ``log(measured / predicted)`` of held-out predictions (LOO).
    level : float
        Nominal coverage in (0, 1).
    min_width : float
        Smallest half-width returned.
    prior_width : float
        Half-width with fewer than 2 residuals.

    Returns
    -------
    float
        The half-width (see the module docstring for the rule).

    Examples
    --------
    >>> round(interval_halfwidth([0.01, -0.03], 0.9), 4)   # t(2, 0.95) = 2.92 x RMS 0.0224
    0.0653
    >>> interval_halfwidth([0.1] * 9 + [0.5], 0.9)          # the 10th smallest of 10
    0.5
    """
    level = _v.unit_interval("level", level)
    min_width = _v.nonnegative("min_width", min_width)
    prior_width = _v.nonnegative("prior_width", prior_width)
    d = np.abs(np.asarray(log_residuals, dtype=float).ravel())
    if not np.isfinite(d).all():
        raise SpecError("log_residuals", "must be finite")
    n = d.size
    if n < 2:
        return max(prior_width, min_width)
    rank = math.ceil((n + 1) * level)
    if rank <= n:
        width = float(np.sort(d)[rank - 1])
    else:
        width = float(student_t.ppf(0.5 + level / 2, df=n) * np.sqrt(np.mean(d ** 2)))
    return max(width, min_width)


def extrapolation_growth(mode: str = "sync", compute_cv: float = 0.0) -> float:
    """The interval's growth ``g`` per e-fold of workers beyond the runs (module notes):
    ``hypot(EXTRAPOLATION_GROWTH[mode], COMPUTE_CV_GROWTH * compute_cv)``.

    A model calibrated on 1-2 runs misses how far the slowest of K workers falls
    behind as K grows: with compute of coefficient of variation c the expected
    maximum of K normal draws sits about ``c sqrt(2 ln K)`` above the mean
    (Zhang et al. 2023, eqs. 7-9), which rises by about ``0.57 c`` per e-fold of K
    between 2 and 16 workers for a step of compute alone and by less where the
    transfers take part of the step; :data:`COMPUTE_CV_GROWTH` rounds it to 0.5 c.
    It adds to the growth of a job whose compute does not vary as an independent
    error.

    Examples
    --------
    >>> extrapolation_growth("sync", 0.0)
    0.03
    >>> round(extrapolation_growth("async", 0.3), 4)     # hypot(0.03, 0.15)
    0.153
    """
    if mode not in EXTRAPOLATION_GROWTH:
        raise SpecError("mode", f"expected 'sync' or 'async', got {mode!r}")
    compute_cv = _v.nonnegative("compute_cv", compute_cv)
    return math.hypot(EXTRAPOLATION_GROWTH[mode], COMPUTE_CV_GROWTH * compute_cv)


def draws_compute_spread(model) -> bool:
    """Whether ``model`` (or the model a wrapper such as :class:`~perfmodel.fit.level.Leveled`
    holds) draws each worker's compute from a spread: the trace-driven simulator with
    ``jitter`` unset (the cluster's ``compute_cv``) or positive.

    Such a model's sync step already waits for the slowest of K sampled workers,
    which the closed forms (mean compute) leave out.

    Examples
    --------
    >>> from perfmodel.coarse import SyncCoarse
    >>> draws_compute_spread(TraceSim()), draws_compute_spread(TraceSim(jitter=0.0))
    (True, False)
    >>> draws_compute_spread(SyncCoarse())
    False
    """
    while not isinstance(model, TraceSim) and hasattr(model, "model"):
        model = model.model
    return isinstance(model, TraceSim) and model.jitter != 0


def extrapolated_halfwidth(halfwidth: float, workers: int, calibration_workers: int | None,
                           extrapolation: str = "growth", *,
                           growth: float = EXTRAPOLATION_GROWTH["sync"],
                           runs: Sequence[int] = ()) -> float:
    """The log half-width at ``workers``, widened beyond the calibration points.

    Parameters
    ----------
    halfwidth : float
        The LOO half-width (:func:`interval_halfwidth`).
    workers : int
        Workers of the predicted configuration.
    calibration_workers : int or None
        Most workers among the calibration points (None: no widening).
    extrapolation : {"growth", "linear", "sqrt", "none"}
        The rule (module docstring).
    growth : float
        Log misfit per e-fold of workers for ``"growth"``
        (:data:`EXTRAPOLATION_GROWTH` of the job's mode).
    runs : sequence of int
        Workers of every calibration run.  With ``"growth"``, the misfit grows
        with the log distance to the nearest of them, so a configuration
        between runs far apart widens too; empty: only beyond
        ``calibration_workers``.

    Returns
    -------
    float

    Examples
    --------
    >>> round(extrapolated_halfwidth(0.05, 16, 2, growth=0.15), 4)   # hypot(0.05, 0.15 ln 8)
    0.3159
    >>> extrapolated_halfwidth(0.05, 16, 2, "linear")
    0.4
    >>> round(extrapolated_halfwidth(0.05, 6, 12, growth=0.15, runs=(1, 2, 12)), 4)   # ln 2
    0.1154
    """
    if extrapolation not in EXTRAPOLATIONS:
        raise SpecError("extrapolation", f"expected one of {', '.join(EXTRAPOLATIONS)}, "
                                         f"got {extrapolation!r}")
    growth = _v.nonnegative("growth", growth)
    if extrapolation == "none" or not calibration_workers:
        return halfwidth
    ratio = max(1.0, workers / calibration_workers)
    if extrapolation == "growth":
        distance = min((abs(math.log(workers / k)) for k in runs), default=math.log(ratio))
        return math.hypot(halfwidth, growth * distance)
    return halfwidth * (ratio if extrapolation == "linear" else math.sqrt(ratio))


def contention_free_throughput(model, workload, cluster: Cluster, config: Config, *,
                               halfwidth: float = 0.0) -> float:
    """Samples/s of ``config`` if no worker ever waited for another: an upper bound.

    The asymptotic bound of a closed queueing network (Lazowska, Zahorjan,
    Graham, Sevcik, Quantitative System Performance, Prentice-Hall 1984,
    Sec. 5.2): K workers do no better than K times one worker alone (``model``
    at one worker, times ``exp(halfwidth)``: the top of its interval), nor
    than the busiest link carries at line rate
    (:func:`perfmodel.floors.link_floor`: ``M max(1, K / P) / B`` a cycle
    through P servers, an all-reduce ring's bytes without them).
    Model-parallel configurations: no bound (inf).

    Examples
    --------
    >>> from perfmodel.queueing import AsyncMVA
    >>> from perfmodel.specs import Profile, Cluster, Config
    >>> p = Profile(model_bytes=100e6, t_forward=0.1, t_backward=0.2)
    >>> c = Cluster(machines=20, nic_bandwidth="1GB/s")
    >>> one = AsyncMVA().estimate(p, c, Config(n_replicas=1, n_ps=4, mode="async")).throughput
    >>> round(one, 3)                       # compute 0.3 s, 0.1 s each way
    2.0
    >>> contention_free_throughput(AsyncMVA(), p, c, Config(n_replicas=2, n_ps=4, mode="async"))
    4.0
    >>> # 32 workers alone would do 64 samples/s; 4 links carry 1 GB/s / 100 MB each
    >>> contention_free_throughput(AsyncMVA(), p, c, Config(n_replicas=32, n_ps=4, mode="async"))
    40.0
    >>> round(contention_free_throughput(AsyncMVA(), p, c,
    ...                                  Config(n_replicas=2, n_ps=4, mode="async"),
    ...                                  halfwidth=0.1), 3)                    # 2 x 2 e^0.1
    4.421
    """
    if config.n_workers > 1:
        return math.inf
    one = model.estimate(workload, cluster, config.replace(n_replicas=1)).throughput
    return min(config.n_replicas * one * math.exp(halfwidth),
               _links_carry(workload, cluster, config))


def _links_carry(workload, cluster: Cluster, config: Config) -> float:
    """Samples/s the busiest link carries at line rate (:func:`perfmodel.floors.link_floor`)."""
    profile = workload if isinstance(workload, Profile) else workload.coarse_profile()
    floor = link_floor(profile, cluster, config,
                       architecture="ps" if config.n_ps >= 1 else "allreduce")
    return config.n_replicas * profile.batch_size / floor if floor > 0 else math.inf


def server_throughput(workload, config: Config) -> float:
    """Samples/s the parameter servers' update CPUs allow: an upper bound.

    Each of the P servers holds 1/P of the model and applies its share of an
    update in ``t_update / P``, one update at a time (one update CPU a server:
    the parameter server's queue of Li et al. 2022's async model, eqs. 1-6,
    and the ns-3 engine's server).  An async job makes every gradient an
    update, so its K workers together apply at most ``P / t_update``
    gradients a second, ``P batch / t_update`` samples/s whatever K is; a
    sync step of K gradients is one update, ``P K batch / t_update``.
    All-reduce (no servers), a model-parallel configuration or a free update
    (``t_update = 0``): no bound (inf).

    Examples
    --------
    >>> from perfmodel.specs import Profile, Config
    >>> p = Profile(model_bytes=100e6, t_forward=0.1, t_backward=0.2, t_update=0.02,
    ...             batch_size=32)
    >>> server_throughput(p, Config(n_replicas=8, n_ps=2, mode="async"))   # 2 x 32 / 0.02
    3200.0
    >>> server_throughput(p, Config(n_replicas=8, n_ps=2))                 # sync: 8 x 3200
    25600.0
    >>> server_throughput(p, Config(n_replicas=8, n_ps=0))                 # all-reduce
    inf
    """
    profile = workload if isinstance(workload, Profile) else workload.coarse_profile()
    if config.n_ps < 1 or config.n_workers > 1 or profile.t_update <= 0:
        return math.inf
    gradients = 1 if config.mode == "async" else config.n_replicas
    return config.n_ps * gradients * profile.batch_size / profile.t_update


def _under_servers(est: Estimate, workload, config: Config) -> Estimate:
    """``est`` slowed to :func:`server_throughput` where it predicts more; the added
    seconds are waits for the update CPU (the MVA's queue at its server station)."""
    top = server_throughput(workload, config) * (1.0 + _CAP_SLACK)
    return _slowed_to(est, top, "update", "server_throughput")


def _under_links(est: Estimate, workload, cluster: Cluster, config: Config) -> Estimate:
    """``est`` slowed to what its busiest link carries at line rate
    (:func:`perfmodel.floors.link_floor`), which a level below 1 can pass; the added
    seconds are transfers (``allreduce`` without servers, else ``uplink``)."""
    if config.n_workers > 1:
        return est
    top = _links_carry(workload, cluster, config) * (1.0 + _CAP_SLACK)
    return _slowed_to(est, top, "uplink" if config.n_ps >= 1 else "allreduce", "links_carry")


def _slowed_to(est: Estimate, top: float, phase: str, key: str, *,
               scale_interval: bool = False) -> Estimate:
    """``est`` with its step lengthened so that its throughput is ``top``, where it is
    above; ``phase`` takes the added seconds and becomes the bottleneck, ``meta[key]``
    holds ``top``, and the estimate's own interval stops at ``top`` (a hardware bound)
    or, with ``scale_interval``, moves with the throughput (a fitted ceiling)."""
    if est.throughput <= top:
        return est
    ratio = top / est.throughput
    step = est.step_time / ratio
    phases = (dict(est.phases, **{phase: est.phases.get(phase, 0.0) + step - est.step_time})
              if est.phases else {})
    interval = (None if est.throughput_interval is None else
                tuple(v * ratio if scale_interval else min(v, top)
                      for v in est.throughput_interval))
    return dataclasses.replace(
        est, step_time=step, throughput=top, phases=phases, bottleneck=phase,
        epoch_time=None if est.epoch_time is None else est.epoch_time / ratio,
        throughput_interval=interval, meta=dict(est.meta, **{key: top}))


def incast_throughput(estimate: Estimate, retransmit_timeout: float) -> float:
    """Samples/s of a sync ``estimate`` with one retransmission timeout in every step.

    TCP incast (Phanishayee et al., USENIX FAST 2008): when a step's transfers
    overflow a switch buffer, a flow that loses its last segments has no
    duplicate ACKs to recover with and waits ``retransmit_timeout``, and the
    barrier makes every worker wait with it.  One timeout a step is the
    collapse they measured; the models on a lossy link draw a timeout per
    message with a fixed probability instead, which runs at few workers fit.

    Examples
    --------
    >>> from perfmodel.result import Estimate
    >>> est = Estimate.from_phases({"compute": 0.3, "comm": 0.2}, 8)   # 8 samples a 0.5 s step
    >>> incast_throughput(est, 1.0)                  # 8 samples a 1.5 s step
    5.333333333333333
    """
    _v.scalar("retransmit_timeout", retransmit_timeout, positive=True)
    return estimate.throughput * estimate.step_time / (estimate.step_time + retransmit_timeout)


# --------------------------------------------------------------------------
# The calibrated model
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class Calibrated:
    """A candidate with its fitted tunables and LOO residuals: a model with error bars.

    Attributes
    ----------
    name, family : str
        The candidate's name and family.
    model : object
        The model with its fitted options.
    overrides : mapping of str to float
        Fitted Cluster fields, applied to the cluster given to :meth:`estimate`.
    log_residuals : tuple of float
        LOO ``log(measured / predicted)`` on the calibration points.
    level : float
        Interval level (default 0.9).
    why : str
        Why this model answers (set by :func:`select_model`).
    min_width, prior_width : float
        See :func:`interval_halfwidth`.
    calibration_workers : int or None
        Most workers among the calibration points (None: unknown, no
        extrapolation widening).
    calibration_runs : tuple of int
        Workers of every calibration point (empty: unknown; the interval then
        widens beyond ``calibration_workers`` only).
    extrapolation : {"growth", "linear", "sqrt", "none"}
        Widening beyond ``calibration_workers`` (see the module docstring).
    growth : float or None
        Log misfit per e-fold of workers for ``"growth"``; None (default):
        :data:`EXTRAPOLATION_GROWTH` of ``mode`` (steady compute).
        :func:`select_model` sets :func:`extrapolation_growth` of the job's
        compute CV.
    mode : {"sync", "async"}
        Synchronisation of the calibration runs: what the model answers for
        (front ends build their configurations with it, e.g. ``perfmodel
        predict --measurements``).
    reach_contention_free : bool
        Above the prediction, an async estimate on 2 or more servers reaches
        :func:`contention_free_throughput` instead of widening with the
        workers, unless a run in ``queueing_runs`` had at most its workers:
        no run shows how much the workers queue at the servers up to there
        (see the module docstring).
    queueing_runs : tuple of int
        Workers of the calibration runs on 2 or more servers with more
        workers than servers, each showing the queueing at its own count.
    incast : bool
        Below the prediction, a sync estimate beyond ``calibration_workers``
        reaches :func:`incast_throughput` on the calibrated cluster's
        ``retransmit_timeout`` (the link drops packets: see the module
        notes).
    ceiling : perfmodel.operational.UtilizationCeiling or None
        The CPU ceiling of the calibration runs (:func:`cpu_ceiling`); a sync
        estimate above it is slowed to it (``bottleneck = "cpu_ceiling"``,
        a ``cpu_ceiling`` phase holds the added seconds).
    server_cpu : {"own", "fcfs"}
        ``"fcfs"``: each server applies one update at a time, so an estimate
        above :func:`server_throughput` is slowed to it (``bottleneck =
        "update"``, the ``update`` phase holds the added seconds,
        ``meta["server_throughput"]`` the cap) and no interval reaches above
        it.  ``"own"`` (default here; not in
        :func:`select_model`): no such bound.
    alternatives : tuple of Calibrated
        The other candidates the runs cannot rule out (:func:`plausible`):
        the interval reaches their predictions too (model uncertainty), and
        ``meta["model_spread"]`` gives each one's throughput.
    pooled : tuple of Calibrated
        Candidates the runs cannot tell from this one, on an equal footing
        (:func:`pooled_with`): the estimate's throughput is the geometric
        mean of its own and theirs (every step and phase scaled alike,
        ``meta["pooled"]`` gives each one's throughput), and the interval
        reaches its own prediction too.  The half-width stays this
        candidate's.
    in_turn : Calibrated or None
        The servers' stations visited in turn, calibrated on the same runs, where
        this one meets them at once up to P (:func:`servers_to_p`): beyond P
        workers the interval reaches down to the bottom of its interval, since
        runs below P cannot show how the contended servers' links are shared.
        None: no such reading.
    toward_bound : bool
        Beyond P workers, the estimate is the geometric mean of this model's and
        the contention-free bound (:func:`contention_free_throughput`, with the
        servers' update CPUs), where the link is FIFO and the servers are met at
        once up to P (``select_model(fifo_toward_bound=True)``).
    """

    name: str
    family: str
    model: Any
    overrides: Mapping = field(default_factory=dict)
    log_residuals: tuple = ()
    level: float = 0.9
    why: str = ""
    min_width: float = 0.02
    prior_width: float = 0.3
    calibration_workers: int | None = None
    calibration_runs: tuple = ()
    extrapolation: str = "growth"
    growth: float | None = None
    mode: str = "sync"
    reach_contention_free: bool = False
    queueing_runs: tuple = ()
    incast: bool = False
    ceiling: Any = None
    server_cpu: str = "own"
    alternatives: tuple = ()
    pooled: tuple = ()
    in_turn: Any = None
    toward_bound: bool = False

    def __post_init__(self):
        _v.unit_interval("level", self.level)
        if self.extrapolation not in EXTRAPOLATIONS:
            raise SpecError("extrapolation", f"expected one of {', '.join(EXTRAPOLATIONS)}, "
                                             f"got {self.extrapolation!r}")
        if self.growth is not None:
            _v.nonnegative("growth", self.growth)
        if self.mode not in EXTRAPOLATION_GROWTH:
            raise SpecError("mode", f"expected 'sync' or 'async', got {self.mode!r}")
        _v.choice("server_cpu", self.server_cpu, SERVER_CPUS)

    def halfwidth_at(self, workers: int) -> float:
        """Log half-width for a configuration of ``workers`` (extrapolation widening)."""
        growth = extrapolation_growth(self.mode) if self.growth is None else self.growth
        return extrapolated_halfwidth(self.halfwidth, workers, self.calibration_workers,
                                      self.extrapolation, growth=growth,
                                      runs=self.calibration_runs)

    @property
    def halfwidth(self) -> float:
        """Log half-width of the interval (:func:`interval_halfwidth`)."""
        return interval_halfwidth(self.log_residuals, self.level, min_width=self.min_width,
                                  prior_width=self.prior_width)

    @property
    def loo_error(self) -> float:
        """Mean relative LOO error ``mean |exp(-d) - 1|`` (NaN without residuals)."""
        if not self.log_residuals:
            return float("nan")
        return float(np.mean(np.abs(np.exp(-np.asarray(self.log_residuals)) - 1.0)))

    def estimate(self, workload, cluster: Cluster, config: Config) -> Estimate:
        """The candidate's estimate on the calibrated cluster, with an interval.

        ``meta["model"]`` is the candidate's name, ``meta["inner_model"]`` the
        model's own name, ``meta["why"]`` the reason for the choice,
        ``meta["calibration"]`` the fitted tunables.
        """
        calibrated = cluster.replace(**dict(self.overrides))
        est = self._on_calibrated(workload, calibrated, config)
        own = est.throughput
        if self.pooled:   # the runs cannot tell them apart: equal weights, in log space
            each = {self.name: own, **{p.name: p.own_estimate(workload, cluster, config).throughput
                                       for p in self.pooled}}
            mean = math.exp(float(np.mean(np.log(list(each.values())))))
            est = dataclasses.replace(leveled(est, own / mean),
                                      meta=dict(est.meta, pooled=each))
        # the contention-free bound (K workers alone, or the links), priced once for both uses
        alone = (math.inf if config.n_workers > 1 else config.n_replicas * self.model.estimate(
            workload, calibrated, config.replace(n_replicas=1)).throughput)
        carried = _links_carry(workload, calibrated, config) if math.isfinite(alone) else math.inf
        if self.server_cpu == "fcfs":
            carried = min(carried, server_throughput(workload, config) * (1.0 + _CAP_SLACK))
        top = min(alone, carried)
        if self.toward_bound and config.n_replicas > config.n_ps and est.throughput < top < math.inf:
            # halfway, geometrically, from the contended growth to no worker waiting
            est = dataclasses.replace(leveled(est, math.sqrt(est.throughput / top)),
                                      meta=dict(est.meta, toward_bound=top))
        h = self.halfwidth_at(config.n_replicas)
        low, high = est.throughput * math.exp(-h), est.throughput * math.exp(h)
        low, high = min(low, own), max(high, own)
        source = f"LOO residuals of {len(self.log_residuals)} calibration points"
        if (self.reach_contention_free and config.n_ps >= 2   # set for async jobs only
                and not any(k <= config.n_replicas for k in self.queueing_runs)):
            high = max(est.throughput * math.exp(self.halfwidth), top)
            source += " below, the contention-free bound above"
        if (self.incast and config.mode == "sync" and self.calibration_workers is not None
                and config.n_replicas > self.calibration_workers):
            low = min(low, incast_throughput(est, calibrated.retransmit_timeout))
            source += ", one retransmission timeout a step below"
        if est.throughput_interval is not None:
            low, high = min(low, est.throughput_interval[0]), max(high, est.throughput_interval[1])
            source += " joined with " + str(est.meta.get("interval_source", "the model's own"))
        if self.in_turn is not None and config.n_replicas > config.n_ps:
            low = min(low, self.in_turn.estimate(workload, cluster, config).throughput_interval[0])
            source += ", the servers' stations in turn below"
        meta = dict(est.meta, model=self.name, inner_model=est.meta.get("model", ""),
                    family=self.family, why=self.why, calibration=dict(self.overrides))
        if self.alternatives:   # what the runs cannot rule out widens the interval
            others = {a.name: a.estimate(workload, cluster, config) for a in self.alternatives}
            meta["model_spread"] = {name: e.throughput for name, e in others.items()}
            low = min([low] + [e.throughput for e in others.values()])
            high = max([high] + [e.throughput for e in others.values()])
            source += " and the models the runs cannot tell apart (" + ", ".join(others) + ")"
        top = min(alone * math.exp(self.halfwidth), carried)   # what the hardware allows
        if high > max(top, est.throughput):
            high = max(top, est.throughput)
            source += ", capped at what the hardware allows"
        est = dataclasses.replace(est, meta=meta, throughput_interval=None)
        return est.with_interval(low, high, level=self.level, source=source)

    def own_estimate(self, workload, cluster: Cluster, config: Config) -> Estimate:
        """This candidate's own estimate on the calibrated cluster (under its CPU ceiling),
        before pooling and with the model's own interval, if any."""
        return self._on_calibrated(workload, cluster.replace(**dict(self.overrides)), config)

    def _on_calibrated(self, workload, calibrated: Cluster, config: Config) -> Estimate:
        est = _under_ceiling(self.model.estimate(workload, calibrated, config), self.ceiling,
                             config)
        est = _under_links(est, workload, calibrated, config)
        return _under_servers(est, workload, config) if self.server_cpu == "fcfs" else est


def calibrate_candidate(candidate: ModelCandidate, profile: Profile, cluster: Cluster,
                        measurements, *, level: float = 0.9) -> Calibrated:
    """Fit a candidate's tunables on measurements; LOO residuals for its interval.

    Parameters
    ----------
    candidate : ModelCandidate
    profile : Profile
        One worker's profile.
    cluster : Cluster
        The network before calibration.
    measurements : sequence of perfmodel.measurements.Measurement
    level : float
        Interval level.

    Returns
    -------
    Calibrated
        With the fitted cluster fields as ``overrides`` (``why`` empty).

    Raises
    ------
    SpecError, Infeasible
        From :func:`perfmodel.fit.grid.fit_tunables`.
    """
    ms = tuple(measurements)
    if not candidate.grid:   # nothing to fit: predictions as given, LOO = plain residuals
        pred = predict_measurements(candidate.model, profile, cluster, ms)
        resid = tuple(float(np.log(m.throughput / p)) for m, p in zip(ms, pred))
        return Calibrated(candidate.name, candidate.family, candidate.model, {}, resid, level,
                          calibration_workers=max(m.workers for m in ms),
                          calibration_runs=_runs(ms), mode=_mode_of(ms))
    if len(ms) - 1 >= len(candidate.grid):   # every fold searches the whole grid
        fit = _grid_fit(candidate, profile, cluster, ms)
        model, overrides = _fitted(fit)
        resid = _loo_from_grid(fit, ms)
    else:
        model, overrides = _fit(candidate, profile, cluster, ms)
        resid = _loo_by_refitting(candidate, profile, cluster, ms)
    return Calibrated(candidate.name, candidate.family, model, overrides, tuple(resid), level,
                      calibration_workers=max(m.workers for m in ms),
                      calibration_runs=_runs(ms), mode=_mode_of(ms))


def _runs(ms) -> tuple:
    """The distinct worker counts of the measurements, ascending."""
    return tuple(sorted({m.workers for m in ms}))


def _mode_of(ms) -> str:
    """The runs' synchronisation: async if any run is (:func:`select_model` checks they agree)."""
    return "async" if any(m.mode == "async" for m in ms) else "sync"


def _loo_by_refitting(candidate: ModelCandidate, profile: Profile, cluster: Cluster,
                     ms: tuple) -> list[float]:
    """Leave-one-out log residuals ``log(measured / predicted)``, refitting without each point.

    The reference procedure: each fold runs :func:`_fit` on the other
    points, whose free tunables depend on how many there are.
    """
    resid = []
    for i in range(len(ms) if len(ms) >= 2 else 0):
        rest = ms[:i] + ms[i + 1:]
        m_i, o_i = _fit(candidate, profile, cluster, rest)
        pred = predict_measurements(m_i, profile, cluster.replace(**o_i), [ms[i]])[0]
        resid.append(float(np.log(ms[i].throughput / pred)))
    return resid


def _loo_from_grid(fit, ms: tuple) -> list[float]:
    """:func:`_loo_by_refitting` from one grid's predictions, when every fold frees the same
    tunables: the predictions do not depend on the data, so a fold's fit is the arg-min of
    the same rows over the other columns (the same numbers, the same first minimum), and
    the cost is one grid of predictions instead of one per point."""
    measured = np.array([m.throughput for m in ms])
    abs_err = np.abs(fit.predictions / measured - 1.0)
    abs_err[~np.isfinite(abs_err)] = np.inf
    resid = []
    for i in range(len(ms)):
        train = np.setdiff1d(np.arange(len(ms)), [i])
        choice = int(np.argmin(error_objective(fit.objective, abs_err[:, train])))
        resid.append(float(np.log(ms[i].throughput / fit.predictions[choice, i])))
    return resid


def _fit(candidate: ModelCandidate, profile: Profile, cluster: Cluster, ms: tuple):
    """Best grid point on ``ms``, fitting at most ``len(ms)`` tunables.

    A fit never has more free tunables than points: the first ``len(ms)``
    tunables of the candidate's grid are searched, the others keep their
    preferred (first) value.  With two calibration points each LOO fold fits
    one tunable, so a second tunable cannot buy a lower LOO error by fitting
    the one remaining point along a ridge (an identifiability rule, ours).
    """
    return _fitted(_grid_fit(candidate, profile, cluster, ms))


def _grid_fit(candidate: ModelCandidate, profile: Profile, cluster: Cluster, ms: tuple):
    """The grid search of :func:`_fit` (its FitResult)."""
    free = list(candidate.grid)[:max(1, len(ms))]
    grid = {k: (v if k in free else tuple(v)[:1]) for k, v in candidate.grid.items()}
    return fit_tunables(candidate.model, profile, cluster, ms, grid, cv=None)


def _fitted(fit) -> tuple:
    """(fitted model, fitted cluster fields) of a grid search."""
    cluster_fields = {f.name for f in dataclasses.fields(Cluster)}
    return fit.model, {k: v for k, v in fit.best.items() if k in cluster_fields}


# --------------------------------------------------------------------------
# Choosing
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class Score:
    """One candidate's standing in a selection.

    Attributes
    ----------
    name, family : str
    valid : bool
        In its regime (see the module docstring).
    reason : str
        Why it is or is not valid.
    loo_error : float
        Mean relative LOO error on the calibration points (NaN: not fitted).
    error : str
        The failure message when it could not be calibrated ("" otherwise).
    n_tunables : int
        Tunables fitted (the second simplicity criterion).
    exact : bool
        It replays the job's link exactly (``ModelCandidate.exact_links``):
        preferred over simpler candidates within the tolerance.
    prior : bool
        It agrees with what is assumed of the network before the runs are read
        (an unknown link shares fairly, as TCP does); a candidate that does
        not is chosen only when the runs favour it by :data:`EVIDENCE`.
    """

    name: str
    family: str
    valid: bool
    reason: str
    loo_error: float
    error: str = ""
    n_tunables: int = 0
    exact: bool = False
    prior: bool = True


def _pools(scores: Sequence[Score], evidence: float) -> tuple[list, list, list]:
    """(candidates to choose from, every candidate in the regime, those that beat the prior)."""
    fitted = [i for i, s in enumerate(scores) if not s.error and math.isfinite(s.loo_error)]
    if not fitted:
        raise PerfModelError("no candidate model could be calibrated on the measurements: " +
                             "; ".join(f"{s.name}: {s.error}" for s in scores))
    pool = [i for i in fitted if scores[i].valid] or fitted
    prior = [i for i in pool if scores[i].prior] or pool
    best_prior = min(scores[i].loo_error for i in prior)
    beat = [i for i in pool if i not in prior and scores[i].loo_error < best_prior - evidence]
    return (pool if beat else prior), pool, beat


def choose(scores: Sequence[Score], *, tolerance: float = 0.01,
           evidence: float = EVIDENCE) -> tuple[int, str]:
    """Index of the chosen score and the reason, by regime, prior, LOO error and simplicity.

    Valid candidates that could be calibrated come first (all calibrated ones
    when none is valid).  Among them, those that agree with the prior
    (``Score.prior``: an unknown link shares fairly) unless another beats the
    best of them by more than ``evidence`` (absolute, in relative error): two
    or three runs hardly tell the models apart, so a model that assumes more
    must earn it.  Then the lowest LOO error; among those within
    ``tolerance`` of it, one that replays the link exactly (``Score.exact``:
    the simulator on a fair link) if any, else the simplest: family in
    :data:`FAMILIES` order, then fewer tunables, then the lowest error.
    Fidelity before simplicity where a candidate is exact: two calibration
    points cannot tell an approximation from the mechanism it approximates
    (both fit 1 and 2 workers), but they part at 12.

    Raises
    ------
    PerfModelError
        No candidate could be calibrated.
    """
    tolerance = _v.nonnegative("tolerance", tolerance)
    if not (isinstance(evidence, (int, float)) and evidence >= 0):   # inf: the prior alone
        raise SpecError("evidence", f"must be a number >= 0 (inf allowed), got {evidence!r}")
    pool, regime, beat = _pools(scores, evidence)
    prior_used = len(pool) < len(regime)
    best = min(scores[i].loo_error for i in pool)
    near = [i for i in pool if scores[i].loo_error <= best + tolerance]
    exact = [i for i in near if scores[i].exact]
    pick = min(exact or near, key=lambda i: (FAMILIES.index(scores[i].family),
                                             scores[i].n_tunables, scores[i].loo_error))
    s = scores[pick]
    which = "that agree with the prior" if prior_used and not beat else "in this regime"
    why = (f"{s.name} ({s.family}): LOO error {100 * s.loo_error:.1f}% on the calibration "
           f"points")
    if s.loo_error > best:
        why += (f", within {100 * tolerance:.0f} points of the best "
                f"{100 * best:.1f}% and " +
                ("exact on this link (preferred to approximations)" if exact else "simpler"))
    elif exact and len(pool) > 1:
        why += f", the lowest of the candidates {which}, and exact on this link"
    elif len(pool) > 1 or prior_used:
        why += f", the lowest of the candidates {which}"
    why += f"; {s.reason}" if s.valid else f"; no candidate is valid here ({s.reason})"
    if prior_used and not beat:
        kept = [scores[i].name for i in regime if i not in pool]
        if math.isinf(evidence):
            why += (f"; async workers are taken to drift apart and share the link: runs of "
                    f"{ASYNC_EVIDENCE_WORKERS - 1} workers or fewer start together and cannot "
                    f"show whether they do, so they cannot favour {', '.join(kept)} (a run at "
                    f"{ASYNC_EVIDENCE_WORKERS} or more workers can)")
        else:
            why += (f"; fair sharing and async workers that drift apart are assumed until the "
                    f"runs favour another model by {100 * evidence:.0f} points, which they do "
                    f"not for {', '.join(kept)}")
    elif beat:
        why += (f"; the runs favour {scores[beat[0]].name} over the models that assume fair "
                f"sharing and drifting async workers by more than {100 * evidence:.0f} points")
    return pick, why


def plausible(scores: Sequence[Score], pick: int, *, evidence: float = EVIDENCE) -> list[int]:
    """The other candidates the runs cannot rule out: in the pool :func:`choose` chose from,
    with a LOO error within ``evidence`` of the chosen one's."""
    pool = _pools(scores, evidence)[0]
    top = scores[pick].loo_error + evidence
    return [i for i in pool if i != pick and scores[i].loo_error <= top]


def pooled_with(scores: Sequence[Score], pick: int, spanned: Sequence[int]) -> list[int]:
    """The candidates among ``spanned`` (those the runs cannot rule out) whose predictions
    are pooled with the chosen one's: valid, on the same side of the prior, and none exact
    on the link (an exact replay answers alone, :func:`choose`).

    Two candidates whose LOO errors lie within :data:`EVIDENCE` of each other fit the
    runs equally well, yet at the asked workers they may part (the closed form of
    eq. 7 holds every worker's compute at its mean, the simulator draws each one's and
    waits for the slowest).  Choosing one by a tie-break bets on it; their geometric
    mean, equal weights in log space as the runs give neither more (Bayesian model
    averaging with a flat prior: Hoeting et al., Bayesian model averaging: a tutorial,
    Statistical Science 1999), errs at most half their spread when the truth lies
    between them.
    """
    if scores[pick].exact:
        return []
    return [i for i in spanned if scores[i].valid and not scores[i].exact
            and scores[i].prior == scores[pick].prior]


def convoy_partners(candidates: Sequence[ModelCandidate], scores: Sequence[Score],
                    pick: int) -> list[int]:
    """Where the chosen candidate is the MVA or the convoys' model (:data:`CONVOY_CANDIDATE`),
    the other one, if valid and calibrated: independent workers and workers in convoys
    beyond the saturation point fit runs of 1-2 workers alike (none has passed it), and
    which one a network follows depends on how many packets a transfer takes, which the
    runs do not show (``convoys="pooled"`` of :func:`select_model`)."""
    pair = (MVA_CANDIDATE, CONVOY_CANDIDATE)
    if scores[pick].name not in pair:
        return []
    return [i for i, (c, s) in enumerate(zip(candidates, scores))
            if i != pick and c.name in pair and s.valid and not s.error]


def evidence_of(mode: str, measurements) -> float:
    """How far a candidate the prior keeps out must beat the prior's LOO error to answer:
    :data:`EVIDENCE`, or inf for async runs all under :data:`ASYNC_EVIDENCE_WORKERS`
    workers, which start together and cannot show how the workers drift or pass the link."""
    small = max(m.workers for m in measurements) < ASYNC_EVIDENCE_WORKERS
    return math.inf if mode == "async" and small else EVIDENCE


def readings(candidates: Sequence[ModelCandidate], scores: Sequence[Score], pick: int, *,
             evidence: float = EVIDENCE) -> list[int]:
    """The valid readings of the chosen candidate (``ModelCandidate.reading_of``) the runs
    cannot rule out: their LOO error within ``evidence`` of the chosen one's (inf: every
    one, as from async runs too small to show how the workers pass the link)."""
    name, top = scores[pick].name, scores[pick].loo_error + evidence
    return [i for i, (c, s) in enumerate(zip(candidates, scores))
            if c.reading_of == name and s.valid and not s.error and s.loo_error <= top]


def validity(candidate: ModelCandidate, mode: str, compute_cv: float | None,
              link_sharing: str | None, lockstep_cv: float) -> tuple[bool, str]:
    if mode not in candidate.modes:
        return False, f"models {'/'.join(candidate.modes)} SGD, the job is {mode}"
    if link_sharing is not None and link_sharing not in candidate.links:
        what = (f"{'/'.join(candidate.links)} link sharing" if candidate.links
                else "no sharing of the server's link between workers")
        return False, f"models {what}, the link is {link_sharing}"
    if candidate.lockstep is None or mode != "async" or compute_cv is None:
        return True, f"models {mode} SGD"
    steady = compute_cv < lockstep_cv
    if link_sharing is None:
        return True, (f"compute CV {compute_cv:g} {'<' if steady else '>='} {lockstep_cv:g}, "
                      "link sharing unknown: either regime")
    if steady and link_sharing == "fair":   # TCP may desynchronize them anyway
        return True, (f"compute CV {compute_cv:g} < {lockstep_cv:g} on a fair link: workers "
                      "may stay in lock-step or drift apart")
    regime = (f"workers drift apart (compute CV {compute_cv:g} vs {lockstep_cv:g}, "
              f"{link_sharing} link)")
    if candidate.lockstep is False:
        return True, regime
    return False, "outside its regime: " + regime


@dataclass(frozen=True)
class Selection:
    """The outcome of :func:`select_model`.

    Attributes
    ----------
    chosen : Calibrated
        The model that answers (its ``why`` says why).
    scores : tuple of Score
        Every candidate's validity and LOO error, in candidate order.
    calibrated : tuple of Calibrated or None
        Every candidate calibrated (None where it failed), in candidate order.
    timeout_estimate : float or None
        The timeout probability read off the step times
        (:func:`timeouts_from_step_times`) that held every candidate's q
        near it; None when none was used.
    ceiling : perfmodel.operational.UtilizationCeiling or None
        The CPU ceiling of the runs (:func:`cpu_ceiling`) that caps the
        chosen model's sync estimates; None when the runs carry no CPU
        readings.
    suggested_run : int or None
        The worker count where the models the runs cannot tell apart
        (``chosen.alternatives``) differ most (:func:`suggest_run`): a run
        there would settle which one answers.  None when they agree.
    """

    chosen: Calibrated
    scores: tuple
    calibrated: tuple
    timeout_estimate: float | None = None
    ceiling: Any = None
    suggested_run: int | None = None

    def to_dict(self) -> dict:
        """JSON-ready summary."""
        def num(x):
            return float(x) if math.isfinite(x) else None
        return {"chosen": self.chosen.name, "why": self.chosen.why,
                "calibration": dict(self.chosen.overrides),
                "halfwidth": self.chosen.halfwidth, "level": self.chosen.level,
                "timeout_estimate": self.timeout_estimate,
                "cpu_ceiling": (None if self.ceiling is None else
                                dataclasses.asdict(self.ceiling)),
                "alternatives": [a.name for a in self.chosen.alternatives],
                "pooled": [p.name for p in self.chosen.pooled],
                "suggested_run": self.suggested_run,
                "candidates": [dict(dataclasses.asdict(s), loo_error=num(s.loo_error))
                               for s in self.scores]}

    def text(self) -> str:
        """Plain-text table of the candidates and the choice."""
        lines = [f"{'candidate':<16}{'family':<13}{'valid':<7}{'LOO error':>10}  reason"]
        for s in self.scores:
            err = "-" if not math.isfinite(s.loo_error) else f"{100 * s.loo_error:.1f}%"
            lines.append(f"{s.name:<16}{s.family:<13}{'yes' if s.valid else 'no':<7}"
                         f"{err:>10}  {s.error or s.reason}")
        lines.append(f"chosen: {self.chosen.why}")
        return "\n".join(lines)


def _in_place_of(chosen: Calibrated, cal: Calibrated, why: str) -> Calibrated:
    """``cal`` answering instead of ``chosen``: with ``chosen``'s interval settings, and
    ``chosen`` (and what it spanned) among the alternatives its interval reaches."""
    return dataclasses.replace(
        cal, why=why, extrapolation=chosen.extrapolation, growth=chosen.growth,
        mode=chosen.mode,
        reach_contention_free=chosen.reach_contention_free, queueing_runs=chosen.queueing_runs,
        incast=chosen.incast, ceiling=chosen.ceiling, server_cpu=chosen.server_cpu,
        alternatives=(dataclasses.replace(chosen, alternatives=()), *chosen.alternatives))


def _in_place_if_fits(chosen: Calibrated, cal: Calibrated, why: str, *,
                      loo_bound: float | None, declined: str) -> Calibrated:
    """:func:`_in_place_of`, unless runs of 3 or more workers show ``cal`` fitting them
    worse than ``loo_bound`` (None: none shows it): then ``chosen``, its why ending
    with ``declined``."""
    if loo_bound is not None and cal.loo_error > loo_bound:
        return dataclasses.replace(chosen, why=chosen.why + declined)
    return _in_place_of(chosen, cal, why)


def _calibrated_rule(cand: ModelCandidate, profile: Profile, cluster: Cluster, measurements,
                     level: float) -> Calibrated | None:
    """A rule's candidate calibrated on the runs, or None where it cannot be (the rule
    then leaves the choice as it is)."""
    try:
        return calibrate_candidate(cand, profile, cluster, measurements, level=level)
    except (PerfModelError, Infeasible):
        return None


def spaced_choice(chosen: Calibrated, profile: Profile, cluster: Cluster, measurements, *,
                  compute_cv: float, overlap: bool, level: float = 0.9,
                  loo_bound: float | None = None) -> Calibrated:
    """``chosen`` (the selection's async choice), or the simulator of
    :func:`spaced_candidate` where the update spacing staggers the workers.

    A server applies gradients one at a time, so workers that reach it together
    leave it ``T_S / P`` apart, and fair links keep transfers that start apart
    just as far apart: with updates at least :data:`SPACED_SPACING` of a
    transfer, the workers settle into a staggered schedule that queues less
    than the MVA's independent workers and reaches the bottleneck's speed
    sharply at the saturation point.  The simulator replays that schedule; it
    answers only where it reproduces the runs unaided (its level within
    :data:`SPACED_LEVEL`), since a model the runs must correct by more has
    missed something that need not scale as its correction.  ``chosen`` and
    its alternatives stay in the interval.

    ``loo_bound`` is the largest LOO error it may have on the runs (None: no
    bound).  Runs of 1-2 workers start together and cannot show how the
    workers stagger, so the level alone decides there; runs of 3 or more
    workers show the growth, and the simulator must fit it about as well as
    ``chosen`` (:func:`select_model` passes ``chosen``'s LOO error plus
    :data:`EVIDENCE`)."""
    spacing = runs_spacing(profile, cluster, measurements)
    if spacing < SPACED_SPACING:
        return chosen
    cal = _calibrated_rule(spaced_candidate(compute_cv, overlap), profile, cluster,
                           measurements, level)
    if cal is None:
        return chosen
    slowdown = cal.model.slowdown
    miss = (f"fits the runs worse (LOO error {100 * cal.loo_error:.1f}%)"
            if loo_bound is not None and cal.loo_error > loo_bound
            else f"needs a slowdown of {slowdown:g} to fit the runs"
            if abs(math.log(slowdown)) >= SPACED_LEVEL else None)
    if miss is not None:
        return dataclasses.replace(chosen, why=chosen.why + (
            f"; the update spacing {spacing:.2f} staggers the workers, but the simulator "
            f"that replays it {miss}, so it does not answer"))
    why = (f"{cal.name} (simulation): the update spacing T_S B / M = {spacing:.2f} >= "
           f"{SPACED_SPACING:g} staggers the async workers (the server applies one gradient "
           f"at a time and fair links keep the gaps), which the simulator replays and the "
           f"MVA's independent workers do not; it reproduces the runs unaided (slowdown "
           f"{slowdown:g}); in place of {chosen.why}")
    return _in_place_of(chosen, cal, why)


def server_bound_choice(chosen: Calibrated, profile: Profile, cluster: Cluster, measurements,
                        *, overlap: bool, level: float = 0.9,
                        loo_bound: float | None = None) -> Calibrated:
    """``chosen`` (the selection's async choice), or :func:`server_bound_candidate`
    where the servers' update CPUs are the bottleneck.

    With an update spacing ``T_S B / M`` of at least :data:`SERVER_BOUND_SPACING`, a
    server takes longer to apply a gradient's share than to move it.  Its update CPU,
    applying one gradient at a time in a fixed ``T_S / P``, releases queued workers
    exactly that far apart, and their transfers, each shorter than the gap, no longer
    meet on the links: up to the knee each worker runs as fast as it does alone, beyond
    it the servers are never idle.  That is the asymptotic bound of the closed network,
    reached sharply because the bottleneck's service time does not vary; the MVA's
    exponential stations queue at the knee where this one does not.  It answers only
    with servers that apply one update at a time (``chosen.server_cpu == "fcfs"``),
    and, where runs of 3 or more workers show the growth (``loo_bound`` not None),
    only if its LOO error is at most ``loo_bound``.  ``chosen`` and its alternatives
    stay in the interval."""
    spacing = runs_spacing(profile, cluster, measurements)
    if spacing < SERVER_BOUND_SPACING or chosen.server_cpu != "fcfs":
        return chosen
    cal = _calibrated_rule(server_bound_candidate(overlap), profile, cluster, measurements,
                           level)
    if cal is None:
        return chosen
    declined = (f"; the servers' update CPUs are the bottleneck (update spacing "
                f"{spacing:.2f}), but the asymptotic bound fits the runs worse (LOO error "
                f"{100 * cal.loo_error:.1f}%), so it does not answer")
    why = (f"{cal.name} (closed form): the update spacing T_S B / M = {spacing:.2f} >= "
           f"{SERVER_BOUND_SPACING:g} makes the servers' update CPUs the bottleneck; applying "
           f"one gradient at a time in a fixed time, they release the workers evenly spaced, "
           f"so each runs as fast as alone (slowdown {cal.model.slowdown:g}) up to what the "
           f"servers apply, the asymptotic bound of the closed network; in place of "
           f"{chosen.why}")
    return _in_place_if_fits(chosen, cal, why, loo_bound=loo_bound, declined=declined)


def partly_locked_choice(chosen: Calibrated, profile: Profile, cluster: Cluster,
                         measurements, *, overlap: bool, level: float = 0.9,
                         loo_bound: float | None = None) -> Calibrated:
    """``chosen`` (the selection's async choice), or :func:`partly_locked_candidate`
    of it where its workers may stay partly in lock-step.

    It replaces only the MVA calibrated by its level (``async-mva`` of
    :class:`~perfmodel.fit.level.Leveled`), and only where every run is on at most
    :data:`PARTLY_LOCKED_SERVERS` servers and the servers' updates do not spread
    two workers over a transfer (update spacing below 0.5): elsewhere
    :class:`PartlyLocked` is the MVA.  Runs of 1-2 workers that start together
    cannot show how far the workers stay together; where runs of 3 or more workers
    show it (``loo_bound`` not None) it answers only if its LOO error is at most
    ``loo_bound``.  ``chosen`` and its alternatives stay in the interval."""
    if chosen.name != MVA_CANDIDATE or not isinstance(chosen.model, Leveled):
        return chosen
    spacing = runs_spacing(profile, cluster, measurements)
    if (spacing >= SPACED_SPACING
            or any(m.n_ps > PARTLY_LOCKED_SERVERS for m in measurements)):
        return chosen
    cal = _calibrated_rule(partly_locked_candidate(chosen.model.model, overlap), profile,
                           cluster, measurements, level)
    if cal is None:
        return chosen
    declined = (f"; with updates that barely space the workers (update spacing "
                f"{spacing:.2g}) they may stay partly in lock-step, but that fits the runs "
                f"worse (LOO error {100 * cal.loo_error:.1f}%), so the MVA answers")
    why = (f"{cal.name} (queueing): on {PARTLY_LOCKED_SERVERS} servers or fewer, with "
           f"updates that barely space the workers (update spacing T_S B / M = "
           f"{spacing:.2g}), workers that start together and share the link fairly stay "
           f"partly together; the step is the geometric mean of the MVA's and lock-step's, "
           f"the MVA's weight (1 + min(1, K T_S B / M)) / 2 (slowdown "
           f"{cal.model.slowdown:g}); in place of {chosen.why}")
    return _in_place_if_fits(chosen, cal, why, loo_bound=loo_bound, declined=declined)


def select_model(profile: Profile, cluster: Cluster, measurements, *,
                 candidates: Sequence[ModelCandidate] | None = None, mode: str | None = None,
                 overlap: bool = False, compute_cv: float | None = None,
                 link_sharing: str | None = None, lockstep_cv: float = LOCKSTEP_CV,
                 level: float = 0.9, tolerance: float = 0.01,
                 extrapolation: str = "growth", lossy: bool | None = False,
                 timeout_band: float = TIMEOUT_BAND, simulate: bool = False,
                 cpu_capacity: float | None = None, calibration: str = "auto",
                 spaced: bool = True, pool: bool = False,
                 server_cpu: str = "fcfs", server_bound: bool = True,
                 fork_join_to_p: bool | str | None = None, widen_drawn_spread: bool = False,
                 partly_locked: bool = False, fifo_toward_bound: bool = False,
                 fifo_prior: str = "fair", convoys: str | None = None,
                 horizon: str = "window") -> Selection:
    """Calibrate every candidate on the measurements and choose the one that answers.

    Parameters
    ----------
    profile : Profile or Trace
        One worker's profile, or its measured per-layer trace
        (:class:`~perfmodel.sim.trace.Trace`: PyTorch profiler, PipeDream
        ``graph.txt``, Chrome trace).  With a trace the closed forms and the
        queueing model read its coarse profile (:meth:`Trace.coarse_profile`)
        and the simulator runs the trace itself, layer by layer, with the
        overlap the trace was built with (build it with the job's: the
        ``overlap`` argument reaches only the other candidates).
    cluster : Cluster
        The network before calibration (its ``compute_cv`` is read when
        ``compute_cv`` is None).
    measurements : sequence of perfmodel.measurements.Measurement
        Measured configurations of the job, at least 2 (for LOO).
    candidates : sequence of ModelCandidate, optional
        Default: :func:`default_candidates` for ``mode`` and ``overlap``.
    mode : {"sync", "async"} or None
        The job's mode; None: the measurements' (all must agree; default sync).
    overlap : bool
        For the default candidates.
    compute_cv : float or None
        Coefficient of variation of a worker's compute time.
    link_sharing : {"fair", "fifo"} or None
        How the link shares bandwidth between flows, when known.
    lockstep_cv : float
        Lock-step threshold (see the module docstring).
    level : float
        Interval level.
    tolerance : float
        Simplicity tie-break of :func:`choose`.
    extrapolation : {"growth", "linear", "sqrt", "none"}
        Interval widening beyond the calibration points (:func:`extrapolated_halfwidth`).
    lossy : bool or None
        For the default candidates: the link drops packets (True), does not
        (False, default) or unknown (None); see :func:`default_candidates`.
        With True, beyond the runs the bottom of a sync job's interval
        reaches one retransmission timeout a step (:func:`incast_throughput`).
        Unless False, measurements with a ``step_time_std`` hold every
        candidate's timeout probability within ``timeout_band`` of the one
        the step times imply
        (:func:`~perfmodel.fit.timeouts.timeouts_from_step_times`,
        :func:`~perfmodel.fit.timeouts.with_timeout_band`).
    simulate : bool
        For the default candidates: include the trace-driven simulator
        (``sim-ps``, ``sim-fcfs``; slower, most of all on lossy links), as the
        validation matrix does; on a fair link (``link_sharing``)
        ``sim-ps`` is exact and preferred within the tolerance (:func:`choose`), and
        so on a link of unknown sharing, which the prior takes as fair.
    timeout_band : float
        That factor, >= 1 (default :data:`TIMEOUT_BAND`; ``math.inf`` keeps
        every grid value, the estimate first: with calibration points far
        apart, e.g. 1 and 12 workers, the means alone separate q from the
        efficiency, and the band then costs a little, see docs/validation.md).
    cpu_capacity : float or None, cores
        The CPU a server or a worker may use (a container's limit, a
        machine's cores).  With it, when 3 or more sync measurements carry
        ``server_cpu`` and ``worker_cpu``, the chosen model's estimates are
        capped at the CPU ceiling they imply (:func:`cpu_ceiling`, the
        utilization law).  None: no cap (the largest reading is the capacity
        only if some run saturated, which the runs do not say; the ``why``
        text says the readings went unused).  Leave-one-out errors are the
        models' own, before the cap.
    calibration : {"auto", "level", "tunables"}
        How the default candidates of :data:`LEVELED` (sync: eq. 7 and the
        simulator with fair sharing; async: the MVA) are calibrated on a
        loss-free link (``lossy=False``; async: on any link, :func:`levels_on`):
        ``"level"``, one slowdown of every step (:mod:`perfmodel.fit.level`);
        ``"tunables"``, their tunables (the link efficiency, with the update
        growth for eq. 7 and rho_T for the MVA); ``"auto"`` (default): the
        level when the runs' worker counts span less than a factor
        :data:`SHAPE_SPAN` (1 and 2 workers: they fix a level, not how the
        step grows with the workers, :func:`calibrated_by_level`); on a
        wider span each is fitted both ways and keeps its tunables only
        where their LOO error beats the level's by :data:`EVIDENCE`
        (:func:`tunables_earned`: the growth they fit must show in the
        left-out run; default candidates only).
    spaced : bool
        For an async job (default True): where the update spacing is at
        least :data:`SPACED_SPACING` and the simulator of
        :func:`spaced_candidate` reproduces the runs within
        :data:`SPACED_LEVEL` unaided, it answers instead, the choice kept in
        the interval (:func:`spaced_choice`); once a run has
        :data:`ASYNC_EVIDENCE_WORKERS` workers or more, only if its LOO error
        is also within :data:`EVIDENCE` of the choice's.  False: the choice
        alone.
    pool : bool
        For a sync job: pool the chosen candidate's prediction with those of
        the candidates the runs cannot tell from it (:func:`pooled_with`:
        their geometric mean, ``Calibrated.pooled``).  False (default): the
        chosen one's alone (pooling was judged on a held-out probe and fell
        short of the gain set for it beforehand, docs/validation.md).  Async
        jobs are never pooled: from 1-2 runs the prior, not a tie, picks
        their model.
    server_cpu : {"fcfs", "own"}
        How the job's parameter servers apply updates.  ``"fcfs"`` (default):
        one at a time, as the MVA's server station has it (Li et al. 2022,
        eqs. 1-6) and as a server with one update thread does, so no estimate,
        interval or suggested run goes above :func:`server_throughput` (an
        async job: ``P batch / t_update`` samples/s), which a model without
        that queue (the simulator's own update cores, lock-step workers) or a
        level below 1 would otherwise pass.  ``"own"``: each worker's update
        on its own core (Li et al. 2022's Algorithm 1), no such bound.
    server_bound : bool
        For an async job on a loss-free link (``lossy=False``) whose servers apply
        one update at a time (default True): where the update spacing is at least
        :data:`SERVER_BOUND_SPACING`, the asymptotic bound of
        :func:`server_bound_candidate` answers instead, the choice kept in the
        interval (:func:`server_bound_choice`); once a run has
        :data:`ASYNC_EVIDENCE_WORKERS` workers or more, only if its LOO error is
        also within :data:`EVIDENCE` of the choice's.  False: the choice alone.
    fork_join_to_p : bool, "fifo" or None
        For an async job on a loss-free link whose every run has fewer workers
        than servers: ``async-mva`` meets the servers at once up to P workers and
        grows as the in-turn network beyond (:func:`servers_to_p`), the interval
        reaching down to the in-turn network beyond P.  None (default): as
        ``horizon`` says (:data:`HORIZONS`).  ``"fifo"`` (a window's): only
        where ``link_sharing`` is ``"fifo"`` (loss-based TCP on drop-tail host
        queues): such a queue passes the flows of workers that meet there in the
        order their packets queued, so one finishes first and they leave
        staggered, where a fair queue keeps equal transfers together.  True (a
        long job's): on any link, which a held-out probe turned down for the
        window (too fast beyond P on fair links at 1 Gbps); False: the servers'
        stations visited in turn at every K, as Li et al. 2022 print them
        (docs/validation.md).
    fifo_toward_bound : bool
        Where the servers are met at once up to P (``fork_join_to_p``) on a link
        said FIFO: beyond P the prediction is the geometric mean of the in-turn
        growth and the contention-free bound (K workers as fast as one alone, or
        what the links and the servers' update CPUs carry), since a drop-tail
        queue keeps the workers it staggered apart while the contended links
        would queue them.  False (default): the in-turn growth.
    fifo_prior : {"fair", "fifo"}
        What is taken for granted before the runs on a link said FIFO
        (``link_sharing="fifo"``).  ``"fair"`` (default): what is taken on a link
        of unknown sharing, that TCP flows share it about fairly (on a drop-tail
        queue too, while nothing drops), so a FIFO-only model (``sync-fcfs``,
        ``sync-hybrid``, ``sim-fcfs``) answers only where the runs favour it by
        :data:`EVIDENCE`: two runs cannot tell the sharing apart, and a FIFO
        model picked on a point of LOO error is often far off at 12 workers.
        ``"fifo"``: saying the link puts every model valid on it on an equal
        footing, and the LOO error alone decides (judged on a held-out probe
        and turned into the option, docs/validation.md).  Only sync jobs have
        FIFO-only candidates the prior can keep out.
    convoys : {"reading", "prior", "pooled", "pooled-servers"} or None
        How an async job weighs workers that travel in convoys beyond the
        saturation point (:data:`CONVOY_CANDIDATE`, ``AsyncMVA(convoys=True)``)
        against the MVA's independent workers, where the link is not said FIFO.
        Runs of 1-2 workers fit both alike (neither has passed the saturation
        point), and which one a network follows depends on how many packets a
        transfer takes: a transfer of a few windows passes a queue about whole,
        which spaces the workers apart, a long one is interleaved packet by
        packet with the others, so equal transfers end together and the workers
        stay in step; real transfers are thousands of packets long.
        None (default): as ``horizon`` says (:data:`HORIZONS`).
        ``"pooled"`` (a window's): the chosen one of the two answers with the
        geometric mean of both (``Calibrated.pooled``), and its interval spans
        both.  ``"reading"`` (a long job's): the two on equal terms, the LOO
        error decides.
        ``"prior"``: convoys are taken for granted, and the MVA answers only
        where runs of :data:`ASYNC_EVIDENCE_WORKERS` or more workers favour it
        by :data:`EVIDENCE`.  ``"pooled-servers"``: ``"pooled"`` where every
        run is on :data:`CONVOY_POOL_SERVERS` servers or more, else
        ``"reading"``.  ``"pooled"`` became the default on a held-out probe run
        with 8 times the segments per transfer, judged on a bar written before
        it was run (docs/validation.md).
    widen_drawn_spread : bool
        With ``compute_cv`` given, whether the interval of a chosen model that
        draws each worker's compute from that spread itself (the simulator:
        :func:`draws_compute_spread`) widens for it beyond the runs, as a model
        with steady compute does (:func:`extrapolation_growth`).  False: it widens
        at the steady rate only (default), since the slowest of K workers is already
        in its prediction; what the spread adds there is how its shape differs from
        the simulator's Gamma draws.  True: the widening of a model with steady
        compute (judged on a held-out probe, docs/validation.md).
    partly_locked : bool
        For an async job on a loss-free link whose runs are all on one or two
        servers: where the MVA calibrated by its level answers and the update
        spacing is below 0.5, :class:`PartlyLocked` answers instead (the
        workers halfway between lock-step and drifted apart where the updates
        do not spread them, :func:`partly_locked_choice`), the MVA kept in the
        interval; once a run has :data:`ASYNC_EVIDENCE_WORKERS` workers or more,
        only if its LOO error is also within :data:`EVIDENCE` of the MVA's.
        False (default): the MVA.
    horizon : {"window", "long"}
        Which speed of an async job answers, and so the ``convoys`` and
        ``fork_join_to_p`` not given (:data:`HORIZONS`).  ``"window"`` (default):
        the speed a short run measures after its workers start together, as the
        runs the rules were designed on measure it.  ``"long"``: a long job's,
        where the convoys of the common start have dissolved, so beyond the
        saturation point the workers run nearer the contention-free bound: the
        MVA and the convoys' model on equal terms (``"reading"``) and the
        servers met at once up to P on any link (``True``).  Judged on a
        held-out probe measured as long jobs (docs/validation.md).  It assumes
        links that run at their rate: for loss- or delay-based TCP, not DCTCP,
        whose small windows left links idle in the packet-level runs.

    Returns
    -------
    Selection

    Raises
    ------
    SpecError
        Bad options or mixed modes.
    PerfModelError
        No candidate could be calibrated.
    """
    ms = tuple(measurements)
    mode = _job_mode(ms, mode)
    if link_sharing not in (None, "fair", "fifo"):
        raise SpecError("link_sharing", f"expected 'fair', 'fifo' or None, got {link_sharing!r}")
    if compute_cv is None:
        compute_cv = getattr(cluster, "compute_cv", None)
    lockstep_cv = _v.nonnegative("lockstep_cv", lockstep_cv)
    server_cpu = _v.choice("server_cpu", server_cpu, SERVER_CPUS)
    timeout_band = _v.at_least_one("timeout_band", timeout_band)
    fifo_prior = _v.choice("fifo_prior", fifo_prior, FIFO_PRIORS)
    by_horizon = HORIZONS[_v.choice("horizon", horizon, tuple(HORIZONS))]
    convoys = _v.choice("convoys", by_horizon["convoys"] if convoys is None else convoys,
                        CONVOYS)
    if fork_join_to_p is None:
        fork_join_to_p = by_horizon["fork_join_to_p"]
    if fork_join_to_p not in (False, True, "fifo"):
        raise SpecError("fork_join_to_p", f"expected True, False or 'fifo', got {fork_join_to_p!r}")
    trace = None
    if isinstance(profile, Trace):
        trace, profile = profile, profile.coarse_profile()
    by_level = calibrated_by_level(calibration, [m.workers for m in ms])
    cands = tuple(default_candidates(mode, overlap=overlap, lossy=lossy, simulate=simulate,
                                     trace=trace, leveled=by_level)
                  if candidates is None else candidates)
    if not cands:
        raise SpecError("candidates", "needs at least one candidate")
    to_p = ((fork_join_to_p is True or (fork_join_to_p == "fifo" and link_sharing == "fifo"))
            and candidates is None and mode == "async" and lossy is False
            and all(m.workers < m.n_ps for m in ms))
    in_turn_cand = next((c for c in cands if c.name == TO_P_CANDIDATE), None) if to_p else None
    if to_p:
        cands = tuple(servers_to_p(c) for c in cands)
    spread = (timeouts_from_step_times(profile, cluster, ms, mode=mode)
              if lossy is not False else None)
    if spread is not None:
        cands = tuple(with_timeout_band(c, spread[0], timeout_band) for c in cands)
    earn = (calibration == "auto" and not by_level and candidates is None
            and levels_on(mode, lossy))
    convoy_prior = (convoys == "prior" and mode == "async"
                    and any(c.name == CONVOY_CANDIDATE for c in cands))
    scores, fitted, kept_tunables = _scored(
        cands, profile, cluster, ms, mode=mode, compute_cv=compute_cv,
        link_sharing=link_sharing, lockstep_cv=lockstep_cv, level=level, earn=earn,
        fifo_prior=fifo_prior, convoy_prior=convoy_prior)
    evidence = evidence_of(mode, ms)
    pick, why = choose(scores, tolerance=tolerance, evidence=evidence)
    toward = fifo_toward_bound and link_sharing == "fifo"
    in_turn_picked = to_p and scores[pick].name == TO_P_CANDIDATE
    why += _calibration_why(fitted[pick], ms, in_turn_picked=in_turn_picked, toward=toward,
                            spread=spread, earn=earn,
                            tunables_kept=scores[pick].name in kept_tunables, lossy=lossy)
    ceiling, ceiling_why = _capped(profile, ms, cpu_capacity, mode)
    why += ceiling_why
    answering = dict(ceiling=ceiling, server_cpu=server_cpu)
    other_readings = readings(cands, scores, pick, evidence=evidence)
    spanned = [*plausible(scores, pick, evidence=evidence), *other_readings]
    alternatives = tuple(dataclasses.replace(fitted[i], **answering) for i in spanned)
    suggestion = _suggestion(fitted, scores, pick, spanned, alternatives, profile, cluster, ms,
                             evidence=evidence, other_readings=bool(other_readings),
                             server_cpu=server_cpu)
    if suggestion is not None:
        why += suggestion[1]
    reach, queueing, incast, interval_why = _interval_reach(mode, ms, lossy)
    why += interval_why
    pooled = tuple(dataclasses.replace(fitted[i], **answering)
                   for i in _pooled_with(cands, scores, pick, spanned, ms, mode=mode,
                                         pool=pool, convoys=convoys))
    if pooled:
        why += (f"; its prediction is the geometric mean of its own and "
                f"{', '.join(p.name for p in pooled)}'s, which fit the runs as well")
    growth, growth_why = _widening(fitted[pick].model, mode, compute_cv, extrapolation,
                                   widen_drawn_spread)
    why += growth_why
    if mode == "async" and horizon == "long":
        why += ("; it answers a long job's speed, after the convoys of the workers' common "
                "start dissolved (horizon='long')")
    shared = dict(extrapolation=extrapolation, growth=growth, mode=mode, **answering)
    in_turn = None
    if in_turn_cand is not None and in_turn_picked:
        in_turn = dataclasses.replace(
            calibrate_candidate(in_turn_cand, profile, cluster, ms, level=level), **shared)
    chosen = dataclasses.replace(fitted[pick], why=why, **shared,
                                 reach_contention_free=reach,
                                 queueing_runs=queueing, incast=incast,
                                 alternatives=alternatives, pooled=pooled, in_turn=in_turn,
                                 toward_bound=toward and in_turn is not None)
    if mode == "async":
        loo_bound = None if math.isinf(evidence) else scores[pick].loo_error + EVIDENCE
        rules = dict(overlap=overlap, level=level, loo_bound=loo_bound)
        if spaced:
            chosen = spaced_choice(chosen, profile, cluster, ms, compute_cv=compute_cv or 0.0,
                                   **rules)
        if server_bound and lossy is False:
            chosen = server_bound_choice(chosen, profile, cluster, ms, **rules)
        if partly_locked and lossy is False:
            chosen = partly_locked_choice(chosen, profile, cluster, ms, **rules)
    return Selection(chosen, tuple(scores), tuple(fitted),
                     None if spread is None else spread[0], ceiling,
                     None if suggestion is None else suggestion[0])


def _job_mode(measurements, mode: str | None) -> str:
    """The job's mode: ``mode``, or the measurements' (all must agree; default sync)."""
    if len(measurements) < 2:
        raise SpecError("measurements",
                        f"leave-one-out needs at least 2, got {len(measurements)}")
    modes = {m.mode or "sync" for m in measurements}
    if mode is None:
        if len(modes) > 1:
            raise SpecError("measurements", f"mix modes {sorted(modes)}; give mode")
        mode = modes.pop() if modes else "sync"
    if mode not in ("sync", "async"):
        raise SpecError("mode", f"expected 'sync' or 'async', got {mode!r}")
    return mode


def _scored(candidates, profile, cluster, measurements, *, mode, compute_cv, link_sharing,
            lockstep_cv, level, earn, fifo_prior, convoy_prior):
    """Every candidate calibrated and scored: (scores, calibrated or None, the names that
    kept their tunables).  With ``earn``, a candidate of :data:`LEVELED` keeps its tunables
    only where they beat its level (:func:`tunables_earned`), else it answers by its level."""
    scores, fitted, kept_tunables = [], [], []
    for cand in candidates:
        valid, reason = validity(cand, mode, compute_cv, link_sharing, lockstep_cv)
        try:
            cal = calibrate_candidate(cand, profile, cluster, measurements, level=level)
            if earn and cand.name in LEVELED[mode]:
                leveled_cand = level_candidate(cand)
                level_cal = calibrate_candidate(leveled_cand, profile, cluster, measurements,
                                                level=level)
                if tunables_earned(cal, level_cal):
                    kept_tunables.append(cand.name)
                else:
                    cand, cal = leveled_cand, level_cal
            scores.append(Score(cand.name, cand.family, valid, reason, cal.loo_error,
                                n_tunables=len(cand.grid),
                                exact=(link_sharing or PRIOR_LINK) in cand.exact_links,
                                prior=_agrees_with_prior(cand, link_sharing, mode,
                                                         fifo_prior, convoy_prior)))
            fitted.append(cal)
        except (PerfModelError, Infeasible) as err:
            scores.append(Score(cand.name, cand.family, valid, reason, float("nan"), str(err),
                                len(cand.grid)))
            fitted.append(None)
    return scores, fitted, kept_tunables


def _capped(profile, measurements, cpu_capacity, mode: str):
    """(the CPU ceiling the runs imply or None, its ``why`` clause): with ``cpu_capacity``,
    :func:`cpu_ceiling`; without it the largest reading is the capacity only if some run
    saturated, which is not assumed."""
    if cpu_capacity is None:
        unused = cpu_runs(measurements, mode)
        return None, "; the runs' CPU readings are unused without cpu_capacity" if unused else ""
    if all(m.server_cpu is None for m in measurements):
        raise SpecError("cpu_capacity", "the measurements have no server_cpu or worker_cpu "
                                        "readings for it to act on")
    ceiling = cpu_ceiling(profile, measurements, capacity=cpu_capacity, mode=mode)
    if ceiling is None:
        return None, ""
    return ceiling, "; capped at the CPU ceiling of the runs (utilization law)"


def _pooled_with(candidates, scores, pick, spanned, measurements, *, mode, pool, convoys):
    """The indices of the candidates whose predictions are pooled with the chosen one's: a
    sync job's ties with ``pool`` (:func:`pooled_with`), an async job's convoy partner with
    ``convoys`` pooled (:func:`convoy_partners`)."""
    if mode == "sync":
        return pooled_with(scores, pick, spanned) if pool else []
    pool_convoys = convoys == "pooled" or (
        convoys == "pooled-servers"
        and all(m.n_ps >= CONVOY_POOL_SERVERS for m in measurements))
    return convoy_partners(candidates, scores, pick) if pool_convoys else []

def _calibration_why(chosen: Calibrated | None, measurements, *, in_turn_picked: bool,
                     toward: bool, spread, earn: bool, tunables_kept: bool, lossy) -> str:
    """The clauses of ``why`` on how the chosen candidate was calibrated."""
    why = ""
    by_its_level = chosen is not None and isinstance(chosen.model, Leveled)
    if in_turn_picked:
        why += ("; up to P workers it meets the P servers at once (no server link carries "
                "two workers' shards, so nothing queues there), beyond P it grows as the "
                "servers' stations visited in turn do" + (
                    ", halfway (geometrically) to the contention-free bound: the FIFO link "
                    "keeps the workers it staggered apart" if toward else "") +
                ", and the interval reaches down to "
                "that network calibrated alone (every run had fewer workers than servers, so "
                "none shows how the contended servers' links are shared)")
    if spread is not None and not by_its_level:   # a level fits no timeout probability
        why += timeout_why(*spread)
    if by_its_level and earn:
        why += (f"; calibrated by its level: every step {chosen.model.slowdown:g} times "
                f"the model's (its tunables did not beat the level's LOO error by "
                f"{100 * EVIDENCE:.0f} points, so the runs do not show the growth they fit)")
    elif by_its_level:
        counts = len(_runs(measurements))
        why += (f"; calibrated by its level: every step {chosen.model.slowdown:g} times "
                f"the model's (runs at {counts} worker count{'s' if counts > 1 else ''} show "
                f"how much slower the job runs, not how that grows with the workers"
                + ("; on a link that may drop packets too, since an async worker's stall "
                   "holds back that worker alone)" if lossy is not False else ")"))
    elif tunables_kept:
        why += (f"; calibrated by its tunables, which beat its level's LOO error by more "
                f"than {100 * EVIDENCE:.0f} points")
    return why


def _suggestion(fitted, scores, pick, spanned, alternatives, profile, cluster, measurements,
                *, evidence, other_readings: bool, server_cpu):
    """(worker count, ``why`` clause) of the run that would tell the chosen candidate from
    the ones the runs cannot rule out (:func:`suggest_run`); with async runs too small to
    show the drift (``evidence`` inf), also from the models the prior keeps out.  None
    where they agree."""
    others, lead, spans = alternatives, "the runs cannot tell {} apart: they", "spans them"
    if math.isinf(evidence):   # async from 1-2 workers: name the drift the prior keeps out
        kept_out = [c for i, (s, c) in enumerate(zip(scores, fitted))
                    if c is not None and s.valid and not s.prior and i != pick
                    and i not in spanned]
        if kept_out:
            others = [*alternatives,
                      *(dataclasses.replace(c, server_cpu=server_cpu) for c in kept_out)]
            lead = ("whether the workers drift apart"
                    + (" and how they pass the link" if other_readings else "")
                    + " decides it: {}")
            spans = (f"spans {', '.join(a.name for a in alternatives)}, not the models the "
                     f"prior keeps out" if alternatives
                     else "does not span the models the prior keeps out")
    if not others:
        return None
    found = suggest_run(dataclasses.replace(fitted[pick], server_cpu=server_cpu), others,
                        profile, cluster, measurements)
    if found is None:
        return None
    k, gap, names = found
    return k, (f"; {lead.format(', '.join(names))} differ by {100 * gap:.0f}% at {k} "
               f"workers, where one more run would settle it (the interval {spans})")


def _interval_reach(mode: str, measurements, lossy):
    """(reaches the contention-free bound, the runs that show the servers' queueing, reaches
    down to TCP incast, the ``why`` clauses): how far the interval reaches beyond the runs."""
    why = ""
    reach = mode == "async"
    queueing = tuple(sorted({m.workers for m in measurements if m.workers > m.n_ps >= 2}))
    if reach and not queueing:
        why += ("; on 2 or more servers the interval reaches up to the contention-free bound "
                "(no run on 2 or more servers had more workers than servers, so none shows "
                "how much the workers queue there)")
    elif reach:
        why += (f"; on 2 or more servers the interval reaches up to the contention-free bound "
                f"below {queueing[0]} workers (the {queueing[0]}-worker run shows how much "
                f"the workers queue at the servers there, not where the queueing sets in)")
    incast = mode == "sync" and lossy is True
    if incast:
        why += ("; on a link that drops packets the interval reaches down to one "
                f"retransmission timeout a step beyond {max(m.workers for m in measurements)} "
                "workers (TCP incast, which the runs need not show)")
    return reach, queueing, incast, why


def _widening(model, mode: str, compute_cv, extrapolation: str, widen_drawn_spread: bool):
    """(the interval's growth per e-fold of workers, its ``why`` clause):
    :func:`extrapolation_growth`, with the compute's spread left out where the model draws
    it itself (:func:`draws_compute_spread`) unless ``widen_drawn_spread``."""
    drawn = bool(compute_cv) and not widen_drawn_spread and draws_compute_spread(model)
    growth = extrapolation_growth(mode, 0.0 if drawn else compute_cv or 0.0)
    if not (compute_cv and extrapolation == "growth"):
        return growth, ""
    return growth, (f"; beyond the runs the interval widens {100 * growth:.0f}% per e-fold of "
                    "workers, " + (f"as with steady compute: the model draws each worker's "
                                   f"compute (CV {compute_cv:g}), so the slowest of K workers "
                                   f"is in its prediction" if drawn else
                                   f"more than with steady compute: the slowest of K workers "
                                   f"(compute CV {compute_cv:g}) pulls away as K grows"))

def _agrees_with_prior(candidate: ModelCandidate, link_sharing: str | None,
                       mode: str = "sync", fifo_prior: str = "fair",
                       convoy_prior: bool = False) -> bool:
    """What a candidate assumes is what is taken for granted before the runs are read: a
    link of unknown sharing shares fairly (one said FIFO too, with ``fifo_prior="fair"``),
    and async workers drift apart (in async, only the models of drifted-apart workers,
    ``lockstep=False``, agree); with ``convoy_prior``, into convoys beyond the saturation
    point, where the link is not said FIFO (``convoys="prior"`` of :func:`select_model`)."""
    said = link_sharing is not None and not (link_sharing == "fifo" and fifo_prior == "fair")
    fair = said or PRIOR_LINK in candidate.links   # a said link: every model valid on it
    drift = candidate.lockstep is False if mode == "async" else candidate.lockstep is not True
    convoy = (not convoy_prior or link_sharing == "fifo"
              or candidate.name != MVA_CANDIDATE)   # the MVA is the convoys' reading
    return fair and drift and convoy and not candidate.reading_of


def _throughput_at(cal: Calibrated, profile, cluster: Cluster, template, workers: int) -> float:
    """A calibrated candidate's point prediction at ``workers`` (the template run's setup)."""
    m = dataclasses.replace(template, workers=workers, line=0)
    est = cal.model.estimate(measured_profile(profile, m),
                             measured_cluster(cluster, m).replace(**dict(cal.overrides)),
                             m.config())
    return float(_under_ceiling(est, cal.ceiling, m.config()).throughput)


def suggest_run(chosen: Calibrated, alternatives: Sequence[Calibrated], profile,
                cluster: Cluster, measurements, *, max_workers: int = 64):
    """The worker count where the models the runs cannot tell apart differ most.

    Among worker counts beyond the runs (a doubling grid up to the cluster's
    machines, at most ``max_workers``), the one where the largest and the
    smallest predicted throughput of ``chosen`` and ``alternatives`` part the
    most; a run there would tell them apart.

    Returns
    -------
    (int, float, tuple of str) or None
        The worker count, the relative gap ``max / min - 1`` there and the
        models' names; None when they agree within :data:`EVIDENCE` everywhere.
    """
    ms = tuple(measurements)
    template = max(ms, key=lambda m: m.workers)
    top = max(template.workers + 1, min(max_workers, cluster.machines - template.n_ps))
    grid = sorted({template.workers + 1, *(k for k in (3, 4, 6, 8, 12, 16, 24, 32, 48, 64)
                                           if template.workers < k <= top)})
    models = (chosen, *alternatives)
    best = None
    for k in grid:
        try:
            preds = [_throughput_at(c, profile, cluster, template, k) for c in models]
        except (PerfModelError, Infeasible):
            continue
        gap = max(preds) / min(preds) - 1.0
        if best is None or gap > best[1]:
            best = (k, gap)
    if best is None or best[1] < EVIDENCE:
        return None
    return best[0], best[1], tuple(c.name for c in models)
