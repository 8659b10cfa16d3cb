"""The GST model of Zhang et al. 2023 and its use cases (Sec. V-C).

:class:`GST` is a frozen object holding only options; its
``estimate(profile, cluster, config)`` assembles the formulas of the package
into one step: network times (:mod:`perfmodel.gst.network`, eqs. 10-18), the
pipelines that hide them (:mod:`perfmodel.gst.pipelines`, eqs. 3-6) and the
expected slowest worker (:mod:`perfmodel.gst.maxima`, eqs. 7-9).  It returns
an :class:`~perfmodel.result.Estimate` with the expected step time, its
``p50``/``p99`` in ``meta`` and the eq. 9 epoch time.

The use cases of Sec. V-C: :func:`compression_time`,
:func:`best_compression_ratio` (Fig. 6), :func:`speedup_ratio`,
:func:`bottleneck_evaluation` (Fig. 5).

Decisions on the paper's ambiguities, each a named option:

* sigma(m) of eq. 7 is given directly (``sigma``); the model also accepts
  ``cv`` (sigma proportional to the worker-side mean), added to it, since the
  paper says the sigma of a GST is the sum of its processes' values;
* eq. 2's tail term (BC and UP of the last iteration) is left out of the
  epoch time unless ``tail`` (eq. 9 as printed drops it);
* gradient compression (Sec. V-C): compression time and ratio follow an
  inverse-square law ``t_c = t_0 / (1 - r_c)**2`` (our reading of "inverse
  square relationship": more compression costs more time, unboundedly as
  ``r_c -> 1``); ``t_c`` is added to FC and every packet count is multiplied
  by ``1 - r_c``;
* the readings of eqs. 11, 15 and 16 (``units``) are those of
  :mod:`perfmodel.gst.network`;
* the barrier link (Definition 7) carries every worker's share
  (``server_link="shared"``, default): with K < N servers, each server's link
  moves N / K workers' gradients (FC) and models (BC), so eq. 10's bytes of
  one message are multiplied by ``max(1, N / K)``; with K >= N the worker's
  own link is the barrier and carries one model.  ``"dedicated"`` reads eq. 10
  as printed, every message at line rate whatever N: it then predicts steps
  below what the server's link can carry (e.g. 16 ResNet-50 workers through
  one 10 Gbps link in 0.1 s), which :mod:`perfmodel.floors` rules out.  Eq. 16,
  the aggregation delay of N granules over the same link, keeps its meaning
  (the wait for the last granule; negligible as printed).

References
----------
Zhang, Zhang, Wei, Pan, Huang 2023, "Performance Modeling and Analysis of
Distributed Deep Neural Network Training with Parameter Server", Definition 4,
eqs. 1-18, Sec. V-C, Figs. 5-6.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy import optimize

from .. import _validate as _v
from ..errors import Infeasible, SpecError
from ..interface import BatchEstimate, ConfigBatch, check_inputs
from ..result import Estimate
from ..specs import Cluster, Config, Profile
from ..units import PHYSICAL_RANGE
from .maxima import (
    METHODS,
    checked_distribution,
    expected_max,
    expected_max_normal,
    max_normal_ppf,
    max_quantile,
)
from .network import UNITS, barrier_links, communication_time, max_aggregation_time, packet_count
from .pipelines import layer_pipeline

__all__ = [
    "PROCESSES", "PHASE_OF", "PHASES", "TERMS", "INTERVALS", "SERVER_LINKS",
    # use cases (Sec. V-C)
    "compression_time", "speedup_ratio", "best_compression_ratio", "bottleneck_evaluation",
    # model
    "GST",
]

#: The processes of one iteration (Sec. III-A, Definitions 1-3), in time order.
PROCESSES = ("io", "fp", "bp", "fc", "ag", "bc", "up")
#: The phase name (:data:`perfmodel.result.PHASES`) of each process in an estimate.
PHASE_OF = {"io": "input", "fp": "forward", "bp": "backward", "fc": "uplink",
            "ag": "aggregate", "bc": "downlink", "up": "update"}
#: Phases of a :class:`GST` estimate: the processes' exposed times and the
#: expected excess of the slowest worker over the mean (eqs. 7-9).
PHASES = tuple(PHASE_OF[p] for p in PROCESSES) + ("straggler",)
#: The paper's name of each phase (``meta["terms"]``).
TERMS = {PHASE_OF[p]: p.upper() for p in PROCESSES}
#: Intervals :class:`GST` can attach (``interval=``; None: none).
INTERVALS = ("iteration",)
#: Readings of the barrier link (``server_link=``, module notes).
SERVER_LINKS = ("shared", "dedicated")


# --------------------------------------------------------------------------
# Use cases (Sec. V-C)
# --------------------------------------------------------------------------

def compression_time(ratio, t0, exponent=2.0):
    """Gradient-compression time from the compression ratio: t_0 / (1 - r_c)^exponent.

    Sec. V-C relates compression time and ratio by an "inverse square
    relationship"; we read it as ``t_c = t_0 / (1 - r_c)^2`` (``exponent=2``):
    t_0 at r_c = 0, growing without bound as all gradients are removed.

    Parameters
    ----------
    ratio : float or array_like
        r_c in [0, 1): fraction of the packets removed.
    t0 : float or array_like, s
        Compression time at r_c = 0 (>= 0).
    exponent : float or array_like
        Power of the law (>= 0).

    Returns
    -------
    float or ndarray, s

    References
    ----------
    Zhang et al. 2023, Sec. V-C ("Optimization"), Fig. 6.

    Examples
    --------
    >>> compression_time(0.5, 0.01)
    0.04
    """
    r = _v.fraction("ratio", ratio, closed=False)
    t = _v.checked("t0", t0)
    e = _v.checked("exponent", exponent)
    return _v.broadcast_result(t / (1.0 - r) ** e, r, t, e)


def speedup_ratio(step_time_one, step_time_n, n_workers):
    """Speedup of N workers over one: N T(1) / T(N) (throughput ratio).

    Parameters
    ----------
    step_time_one : float or array_like, s
        Step time of one worker (> 0).
    step_time_n : float or array_like, s
        Step time with N workers (> 0).
    n_workers : int or array_like, workers
        N (whole, >= 1).

    Returns
    -------
    float or ndarray
        Speedup (N = linear scaling).

    References
    ----------
    Zhang et al. 2023, Sec. V-C ("Evaluation"), Fig. 5.

    Examples
    --------
    >>> speedup_ratio(1.0, 1.25, 4)
    3.2
    """
    t1 = _v.checked("step_time_one", step_time_one, positive=True)
    tn = _v.checked("step_time_n", step_time_n, positive=True)
    n = _v.counts("n_workers", n_workers)
    return _v.broadcast_result(n * t1 / tn, t1, tn, n)


# --------------------------------------------------------------------------
# The model object
# --------------------------------------------------------------------------

@functools.lru_cache(maxsize=4096)
def _distribution_max(dist, n: int, method: str, draws: int, seed: int) -> tuple:
    """(E[max], p50, p99) of n draws of ``dist``, cached: a search asks for the same N often."""
    mean = float(expected_max(dist, n, method=method, draws=draws, seed=seed))
    p50, p99 = (float(x) for x in max_quantile(dist, np.array([0.5, 0.99]), float(n)))
    return mean, p50, p99


def _layer_weights(name: str, layers) -> tuple[float, ...]:
    if isinstance(layers, (bool, np.bool_)):
        raise SpecError(name, f"expected a layer count or a list of layer weights, got {layers!r}")
    if isinstance(layers, numbers.Integral):
        count = _v.integer(name, layers, minimum=1)
        return (1.0 / count,) * count
    if isinstance(layers, (str, bytes)) or not hasattr(layers, "__iter__"):
        raise SpecError(name, f"expected a layer count or a list of layer weights, got {layers!r}")
    w = np.asarray(_v.checked(name, list(layers)), dtype=float).ravel()
    if w.size == 0 or w.sum() <= 0:
        raise SpecError(name, f"must hold at least one positive weight, got {layers!r}")
    return tuple(float(x) for x in w / w.sum())


@dataclass(frozen=True)
class GST:
    """Zhang et al. 2023's model: synchronous SGD with parameter servers, stragglers, pipelines.

    One step is a global synchronization time (Definition 4).  With
    ``profile`` giving FP (``t_forward``), BP (``t_backward``) and UP
    (``t_update``) of one worker, and the network giving FC, AG and BC:

    1. every layer bucket sends ``PN_l = ceil(bytes_l (1 - r_c) / pks)``
       packets; FC and BC take :func:`communication_time` (eqs. 10-12, plus the
       compression time on FC), AG takes :func:`max_aggregation_time` (eqs.
       13-18) for N = ``config.n_replicas`` workers and K = ``config.n_ps``
       servers;
    2. the layer pipeline (eqs. 3-4, 6) hides FC, AG, BC behind BP, and the IO
       pipeline (eq. 5) hides data loading (steady state:
       ``max(0, t_io - rest)``);
    3. eq. 17 splits the aggregation off: the step is
       ``E[max_n(worker-side time)] + e(AG)``, with the worker-side time
       ``mu + sigma Z`` (eq. 7; ``sigma`` given directly, plus ``cv * mu``) or
       ``mu + X`` with X from ``distribution``; the expected excess of the
       slowest worker over mu is the phase ``"straggler"`` (eqs. 8-9).

    Parameters
    ----------
    sigma : float, s
        Standard deviation of one worker's GST (eq. 7's tunable sigma(m)).
    cv : float
        Extra standard deviation per second of worker-side mean time (added
        to ``sigma``: the paper sums the processes' values).
    distribution : scipy.stats frozen distribution, Empirical, array_like or None
        Per-worker extra time X (s) replacing the normal deviation (heavier
        tails); ``sigma`` and ``cv`` must then be 0.
    method : {"quad", "mc"}
        How E[max X] is computed for ``distribution``.
    draws : int
        Monte Carlo draws (``method="mc"``); ``seed`` seeds them.
    seed : int
        Seed of the Monte Carlo draws.
    t_io : float, s
        Data loading of one iteration (IO).
    io_pipeline : bool
        Overlap IO with the rest of the iteration (eq. 5).
    layer_pipeline : bool
        Overlap FC, AG, BC with BP layer by layer (eqs. 3-4, 6).
    layers : int or sequence of float
        Layer buckets: a count (equal split of the model bytes and of BP) or
        relative sizes in forward order (bytes and BP split alike).
    packet_size : float, bytes
        pks.
    alpha : float
        Protocol factor of eq. 10.
    base_delay : float or None, s
        t_base-delay of eq. 10 per message; None: ``cluster.latency``.
    switch_rate : float or None, packets/s
        S_f of eq. 11; None leaves the barrier queueing term out.
    hops : int
        h of eq. 12.
    arrival_rate : float or None, packets/s
        lambda of eq. 11 with ``units="sound"`` (None: B / pks).
    agg_a : float, s
        a of eq. 14.
    agg_b : float, s/packet
        b of eq. 14.
    granularity : float or None, packets
        G; None: eq. 13 (PN / K).
    theta : float
        Position of the aggregation delay between eqs. 15 and 16, in [0, 1].
    units : {"printed", "sound"}
        Reading of eqs. 11, 15, 16 (:mod:`perfmodel.gst.network`).
    compression_ratio : float
        r_c in [0, 1) (Sec. V-C); packets are multiplied by ``1 - r_c``.
    compression_time : float, s
        t_0 of :func:`compression_time` (0: compression is free).
    compression_exponent : float
        Power of the compression-time law (2: inverse square).
    tail : bool
        Add eq. 2's last term (BC and UP of the last iteration) to the epoch time.
    server_link : {"shared", "dedicated"}
        Whether FC and BC share the barrier link among the N / K workers of a
        server (default) or run at line rate as printed (module notes).
    interval : {None, "iteration"}
        None (default): a point estimate.  ``"iteration"``: a
        ``throughput_interval`` from the quantiles of the *single-iteration*
        time (see Notes) -- the spread of one step, not an error bar on the
        mean.
    level : float
        Central probability of that interval, in (0, 1) (0.9: the 5th and
        95th percentiles).

    Notes
    -----
    Per-network calibration (:func:`perfmodel.fit.network.calibrate_network`):
    UP is ``t_update ((1 - g) + g N)`` with g = ``cluster.update_growth``
    (0: the profile's update once per step); when ``sigma``, ``cv`` and
    ``distribution`` are all unset, eq. 7's sigma is ``cluster.compute_cv``
    times the compute time ``t_forward + t_backward`` (the model's own
    options win, so an explicit ``sigma=0.0`` with a calibrated cluster still
    straggles; set the cluster's ``compute_cv`` to 0 for a deterministic GST).
    ``meta["sigma_source"]`` says which was used.

    In :meth:`estimate` the bandwidth B is ``cluster.effective_bandwidth``;
    the profile's times are those of one worker machine (all its GPUs) and a
    step processes ``n_replicas * gpus_per_machine * batch_size`` samples.
    ``meta`` carries ``p50`` and ``p99`` of the step time (quantiles of the
    slowest worker, eq. 8), the worker-side mean, sigma, the unexposed
    communication and computation times and their ratio (Sec. V-C), the
    barrier links, and, with ``config.epoch_samples``, the ``iterations`` M of
    the eq. 9 epoch time (``epoch_time``: first GST without the previous BC/UP
    and with the whole IO exposed, eq. 1; then M - 1 steady steps).

    Interval (our decision).  The model has no uncertainty
    about its *mean*: ``step_time`` is ``E[GST]`` exactly (eq. 9), so the
    epoch-average throughput carries no error bar of its own.  What it does
    know is the distribution of one iteration's GST, ``F_max = F^N`` (eq. 8).
    ``interval="iteration"`` reports that spread as throughput:
    ``(S / t_hi, S / t_lo)`` with S the samples per step and ``t_lo``,
    ``t_hi`` the ``(1 - level)/2`` and ``(1 + level)/2`` quantiles of the
    iteration time (worker-side mean and AG plus :func:`max_normal_ppf` or
    :func:`max_ppf` of the straggler term): e.g. at level 0.9, 90% of single
    iterations run at a speed inside it.  It is *not* a confidence interval
    for the epoch average (the mean of M iterations is much tighter, about
    1/sqrt(M) of it, for independent iterations), and it is zero-width
    without straggling (sigma 0).  ``meta["interval_source"]`` is ``"GST
    iteration-time percentiles"``, ``meta["iteration_quantiles"]`` the two
    step times (s).

    References
    ----------
    Zhang et al. 2023, Definition 4, eqs. 1-18; Sec. V-C.

    Examples
    --------
    >>> from perfmodel.specs import Profile, Cluster, Config
    >>> prof = Profile(model_bytes=100e6, t_forward=0.1, t_backward=0.2, t_update=0.01,
    ...                batch_size=32)
    >>> est = GST(sigma=0.01, layer_pipeline=False).estimate(
    ...     prof, Cluster(machines=8, nic_bandwidth="10Gbps"), Config(n_replicas=4, n_ps=1))
    >>> # 0.1 + 0.2 + 2 * 4 * 0.08 (4 workers share the server's link) + 0.01,
    >>> # AG delay 0.000133 (eqs. 15-16 as printed), 0.01 e(4)
    >>> round(est.step_time, 6), est.bottleneck
    (0.96043, 'uplink')
    """

    sigma: float = 0.0
    cv: float = 0.0
    distribution: Any = None
    method: str = "quad"
    draws: int = 200_000
    seed: int = 0
    t_io: float = 0.0
    io_pipeline: bool = True
    layer_pipeline: bool = True
    layers: Any = 1
    packet_size: float = 1500.0
    alpha: float = 1.0
    base_delay: float | None = None
    switch_rate: float | None = None
    hops: int = 1
    arrival_rate: float | None = None
    agg_a: float = 0.0
    agg_b: float = 0.0
    granularity: float | None = None
    theta: float = 0.5
    units: str = "printed"
    compression_ratio: float = 0.0
    compression_time: float = 0.0
    compression_exponent: float = 2.0
    tail: bool = False
    server_link: str = "shared"
    interval: str | None = None
    level: float = 0.9
    #: The configuration's ``n_ps`` parameter servers are used (sweeps read this).
    modes: ClassVar[tuple[str, ...]] = ("sync",)
    uses_parameter_servers: ClassVar[bool] = True

    def __post_init__(self):
        def scalar(name, check):
            value = getattr(self, name)
            if value is None:
                return
            if isinstance(value, (bool, np.bool_)) or np.ndim(value) != 0:
                raise SpecError(name, f"expected a number, got {value!r}")
            object.__setattr__(self, name, float(check(name, value)))

        for name in ("t_io", "alpha", "agg_a", "agg_b", "compression_time",
                     "compression_exponent", "base_delay"):
            scalar(name, _v.checked)
        scalar("sigma", lambda n, v: _v.checked(n, v, maximum=PHYSICAL_RANGE["s"][1]))
        scalar("cv", lambda n, v: _v.checked(n, v, maximum=_v.MAX_CV))
        for name in ("packet_size", "switch_rate", "granularity"):
            scalar(name, lambda n, v: _v.checked(n, v, positive=True))
        scalar("arrival_rate", _v.checked)
        scalar("theta", _v.fraction)
        scalar("compression_ratio", lambda n, v: _v.fraction(n, v, closed=False))
        object.__setattr__(self, "hops", _v.integer("hops", self.hops, minimum=0))
        object.__setattr__(self, "draws", _v.integer("draws", self.draws, minimum=1))
        object.__setattr__(self, "seed", _v.integer("seed", self.seed, minimum=0))
        for name in ("io_pipeline", "layer_pipeline", "tail"):
            _v.boolean(name, getattr(self, name))
        _v.choice("units", self.units, UNITS)
        _v.choice("server_link", self.server_link, SERVER_LINKS)
        _v.choice("method", self.method, METHODS)
        if self.interval is not None:
            _v.choice("interval", self.interval, INTERVALS)
        if isinstance(self.level, (bool, np.bool_)) or not isinstance(self.level, numbers.Real) \
                or not 0 < self.level < 1:
            raise SpecError("level", f"must be a number in (0, 1), got {self.level!r}")
        if isinstance(self.layers, numbers.Integral) and not isinstance(self.layers, bool):
            object.__setattr__(self, "layers", _v.integer("layers", self.layers, minimum=1))
        else:
            object.__setattr__(self, "layers", _layer_weights("layers", self.layers))
        if self.distribution is not None:
            if self.sigma != 0 or self.cv != 0:
                raise SpecError("sigma", "sigma and cv must be 0 when a distribution gives the "
                                         f"per-worker spread (sigma={self.sigma}, cv={self.cv})")
            dist = checked_distribution("distribution", self.distribution)
            object.__setattr__(self, "distribution", dist)

    # -- pieces ------------------------------------------------------------

    def _weights(self) -> np.ndarray:
        if isinstance(self.layers, int):
            return np.full(self.layers, 1.0 / self.layers)
        return np.asarray(self.layers, dtype=float)

    def iteration(self, workload: Profile, cluster: Cluster, config: Config) -> dict:
        """Per-process times of one iteration, unexposed and exposed (no straggler term).

        Returns
        -------
        dict
            ``"times"``: total time of each process (s, dict over
            :data:`PROCESSES`); ``"exposed"``: exposed time of each process
            after the pipelines (s); ``"worker_mean"``: exposed time outside
            AG (s, the mean of eq. 7); ``"packets"``: packets per layer bucket.
        """
        check_inputs(workload, cluster, config, "GST", min_servers=1)
        n, k = config.n_replicas, config.n_ps
        bw = cluster.effective_bandwidth
        base = cluster.latency if self.base_delay is None else self.base_delay
        w = self._weights()
        r = self.compression_ratio
        pn = packet_count(workload.model_bytes * w * (1.0 - r), self.packet_size)
        bc, fc, ag = self._transfers(pn, n, k, bw, base, w)
        bp = w * workload.t_backward
        up = workload.t_update
        if cluster.update_growth != 0:  # the K gradients' update (Cluster.update_growth)
            up = up * ((1.0 - cluster.update_growth) + cluster.update_growth * n)
        times = {"io": self.t_io, "fp": workload.t_forward, "bp": workload.t_backward,
                 "fc": float(fc.sum()), "ag": float(ag.sum()), "bc": float(bc.sum()),
                 "up": up}
        if not all(math.isfinite(v) for v in times.values()):
            raise Infeasible("the barrier link's M/M/1 queue is unstable (arrival rate >= "
                             f"switch_rate {self.switch_rate}): communication never ends")
        if self.layer_pipeline and w.size > 1:  # one bucket has nothing to overlap
            ex = layer_pipeline(bp, fc, ag, bc)
        else:
            ex = {p: times[p] for p in ("bp", "fc", "ag", "bc")}
        rest = workload.t_forward + ex["bp"] + ex["fc"] + ex["ag"] + ex["bc"] + up
        e_io = max(0.0, self.t_io - rest) if self.io_pipeline else self.t_io
        exposed = {"io": e_io, "fp": workload.t_forward, "bp": ex["bp"], "fc": ex["fc"],
                   "ag": ex["ag"], "bc": ex["bc"], "up": up}
        worker = sum(v for p, v in exposed.items() if p != "ag")
        return {"times": times, "exposed": exposed, "worker_mean": worker,
                "packets": pn.tolist()}

    def spread_sigma(self, workload: Profile, cluster: Cluster) -> tuple[float, str]:
        """The base sigma of eq. 7 and where it comes from.

        The model's own spread (``sigma``, ``cv`` or ``distribution``) wins;
        when all are unset, ``cluster.compute_cv * (t_forward + t_backward)``
        (the network's calibrated spread of compute times).

        Returns
        -------
        (float, str)
            sigma in seconds and ``"model"`` or ``"cluster.compute_cv"``.
        """
        own = self.sigma != 0 or self.cv != 0 or self.distribution is not None
        if own or cluster.compute_cv == 0:
            return self.sigma, "model"
        return cluster.compute_cv * workload.t_compute, "cluster.compute_cv"

    def straggler(self, n_workers: int, worker_mean: float = 0.0, *,
                  sigma: float | None = None) -> dict:
        """Expected excess of the slowest of N workers over the mean, and its p50 / p99.

        Parameters
        ----------
        n_workers : int
            N.
        worker_mean : float, s
            The worker-side mean time (scales ``cv``).
        sigma : float or None, s
            Base sigma replacing the model's ``sigma`` (see :meth:`spread_sigma`).

        Returns
        -------
        dict
            ``{"mean", "p50", "p99", "sigma"}`` in seconds (sigma None for a
            distribution).
        """
        n = _v.integer("n_workers", n_workers, minimum=1)
        if self.distribution is not None:
            mean, p50, p99 = _distribution_max(self.distribution, n, self.method, self.draws,
                                               self.seed)
            return {"mean": mean, "p50": p50, "p99": p99, "sigma": None}
        s = (self.sigma if sigma is None else _v.checked("sigma", sigma)) + self.cv * worker_mean
        return {"mean": float(expected_max_normal(n, 0.0, s)),
                "p50": float(max_normal_ppf(0.5, n, 0.0, s)),
                "p99": float(max_normal_ppf(0.99, n, 0.0, s)), "sigma": s}

    def estimate(self, workload: Profile, cluster: Cluster, config: Config) -> Estimate:
        """Predict one synchronous step of N = ``config.n_replicas`` workers, K = ``config.n_ps``.

        Parameters
        ----------
        workload : Profile
            One worker's profile (model bytes, T_F, T_B, T_S as UP, batch size).
        cluster : Cluster
            Bandwidth (times link efficiency), latency (default base delay), GPUs.
        config : Config
            ``n_replicas`` workers (N), ``n_ps`` servers (K >= 1), epoch size.

        Returns
        -------
        Estimate
            Step time = expected GST; phases are the exposed processes under
            their :data:`PHASES` names (IO: ``input``, FP: ``forward``, BP:
            ``backward``, FC: ``uplink``, AG: ``aggregate``, BC: ``downlink``,
            UP: ``update``; ``meta["terms"]``) plus ``"straggler"``;
            ``meta["p50"]``, ``meta["p99"]``: step-time percentiles;
            ``epoch_time`` by eq. 9 when ``config.epoch_samples`` is set.

        Raises
        ------
        SpecError
            ``config.n_ps`` is 0, or an argument is not the expected spec.
        Infeasible
            Model parallelism, an async config, an unstable barrier queue or
            an infinite expected maximum (e.g. Pareto with shape <= 1).
        """
        it = self.iteration(workload, cluster, config)
        n = config.n_replicas
        base_sigma, sigma_source = self.spread_sigma(workload, cluster)
        strag = self.straggler(n, it["worker_mean"], sigma=base_sigma)
        if not all(math.isfinite(strag[q]) for q in ("mean", "p50", "p99")):
            raise Infeasible(f"the slowest of {n} workers has an infinite expected time "
                             f"under {self.distribution!r}")
        exposed = it["exposed"]
        phases = {PHASE_OF[p]: v for p, v in exposed.items()}
        phases["straggler"] = strag["mean"]
        fixed = it["worker_mean"] + exposed["ag"]
        samples = n * cluster.gpus_per_machine * workload.batch_size
        times = it["times"]
        comm = times["fc"] + times["ag"] + times["bc"]
        compute = times["fp"] + times["bp"] + times["up"]
        side, count = barrier_links(n, config.n_ps)
        meta = {"model": "GST", "equation": "Zhang et al. 2023 eqs. 1-18 (GST, eq. 17 split, eq. 9)",
                "terms": TERMS,
                "workers": n, "n_ps": config.n_ps, "units": self.units,
                "p50": fixed + strag["p50"], "p99": fixed + strag["p99"],
                "worker_mean": it["worker_mean"], "sigma": strag["sigma"],
                "distribution": None if self.distribution is None else repr(self.distribution),
                "comm_time": comm, "compute_time": compute,
                "comm_comp_ratio": comm / compute if compute > 0 else math.inf,
                "exposed_comm_time": exposed["fc"] + exposed["ag"] + exposed["bc"],
                "barrier_links": side, "n_barrier_links": count,
                "layer_pipeline": self.layer_pipeline, "io_pipeline": self.io_pipeline,
                "compression_ratio": self.compression_ratio,
                "sigma_source": sigma_source, "compute_cv": cluster.compute_cv,
                "update_growth": cluster.update_growth}
        est = Estimate.from_phases(phases, samples, meta=meta)
        if self.interval == "iteration":
            est = self._iteration_interval(est, n, fixed, strag["sigma"], samples)
        if config.epoch_samples is None:
            return est
        iters = max(1, math.ceil(config.epoch_samples / samples))
        first = est.step_time - exposed["bc"] - exposed["up"] - exposed["io"] + self.t_io
        epoch = first + (iters - 1) * est.step_time
        if self.tail:
            epoch += exposed["bc"] + exposed["up"]
        meta = dict(est.meta, iterations=iters, epoch_equation="Zhang et al. 2023 eq. 9" +
                    (" with eq. 2's tail term" if self.tail else ""))
        return dataclasses.replace(est, epoch_time=epoch, meta=meta)

    def _transfers(self, pn, n, k, bw, base, w):
        """(BC, FC, AG) seconds of ``pn`` packets per bucket with N workers and K servers
        (eqs. 10-15): the one computation :meth:`iteration` and :meth:`estimate_many` share,
        so that both give the same bits."""
        comm = dict(packet_size=self.packet_size, base_delay=base, alpha=self.alpha,
                    switch_rate=self.switch_rate, hops=self.hops, units=self.units,
                    arrival_rate=self.arrival_rate)
        t_c = (compression_time(self.compression_ratio, self.compression_time,
                                self.compression_exponent)
               if self.compression_time > 0 else 0.0)
        share = np.maximum(1.0, n / k) if self.server_link == "shared" else 1.0
        bc = np.asarray(communication_time(pn * share, bw, **comm), dtype=float)
        fc = bc + w * t_c
        ag = np.asarray(max_aggregation_time(pn, n, k, bw, self.agg_a, self.agg_b,
                                             theta=self.theta, granularity=self.granularity,
                                             units=self.units, packet_size=self.packet_size),
                        dtype=float)
        return bc, fc, ag

    def estimate_many(self, workload: Profile, cluster: Cluster,
                      batch: ConfigBatch) -> BatchEstimate | None:
        """:meth:`estimate`'s step time, throughput and epoch time of every configuration
        of ``batch``, the same arithmetic broadcast over N and K.

        None (price them one by one) unless every configuration is data-parallel,
        synchronous and has a server, the model has one layer bucket and a normal
        spread (no ``distribution``), no ``interval``, and the barrier queue is stable.
        """
        if not (isinstance(workload, Profile) and isinstance(cluster, Cluster)
                and isinstance(batch, ConfigBatch) and batch.mode in self.modes
                and np.all(batch.n_workers == 1) and np.all(batch.n_ps >= 1)
                and self.distribution is None and self.interval is None
                and self._weights().size == 1):
            return None
        n, k = batch.n_replicas, batch.n_ps
        bw = cluster.effective_bandwidth
        base = cluster.latency if self.base_delay is None else self.base_delay
        w = float(self._weights()[0])
        r = self.compression_ratio
        pn = float(packet_count(workload.model_bytes * np.array([w]) * (1.0 - r),
                                self.packet_size)[0])
        bc, fc, ag = self._transfers(pn, n, k, bw, base, w)
        bp = workload.t_backward   # one bucket: BP is exposed whole, as in iteration()
        up = workload.t_update
        if cluster.update_growth != 0:
            up = up * ((1.0 - cluster.update_growth) + cluster.update_growth * n)
        if not all(np.all(np.isfinite(v)) for v in (fc, ag, bc, up)):
            return None   # estimate names the unstable barrier queue
        rest = workload.t_forward + bp + fc + ag + bc + up
        e_io = np.maximum(0.0, self.t_io - rest) if self.io_pipeline else self.t_io
        exposed = {"io": e_io, "fp": workload.t_forward, "bp": bp, "fc": fc, "ag": ag,
                   "bc": bc, "up": up}
        worker = 0
        for name, value in exposed.items():
            if name != "ag":
                worker = worker + value
        base_sigma, _ = self.spread_sigma(workload, cluster)
        sigma = base_sigma + self.cv * worker
        phases = {PHASE_OF[p]: v for p, v in exposed.items()}
        phases["straggler"] = expected_max_normal(n, 0.0, sigma)
        samples = n * cluster.gpus_per_machine * workload.batch_size
        out = BatchEstimate.from_phases(phases, samples, None)
        if batch.epoch_samples is None:
            return out
        step = out.step_time
        iters = np.maximum(1, np.ceil(batch.epoch_samples / samples))
        first = step - exposed["bc"] - exposed["up"] - exposed["io"] + self.t_io
        epoch = first + (iters - 1) * step
        if self.tail:
            epoch = epoch + (exposed["bc"] + exposed["up"])
        return dataclasses.replace(out, epoch_time=np.broadcast_to(epoch, step.shape))

    def _iteration_interval(self, est: Estimate, n: int, fixed: float, sigma, samples: float):
        """``est`` with the single-iteration throughput interval (class notes, eq. 8)."""
        q = np.array([(1.0 - self.level) / 2, (1.0 + self.level) / 2])
        if self.distribution is None:
            excess = max_normal_ppf(q, n, 0.0, sigma)
        else:
            excess = max_quantile(self.distribution, q, float(n))
        t_lo, t_hi = (fixed + float(x) for x in excess)
        if not (math.isfinite(t_hi) and t_lo > 0):
            raise Infeasible(f"the iteration-time quantiles ({t_lo!r}, {t_hi!r}) s give no "
                             f"finite positive throughput interval")
        est = est.with_interval(samples / t_hi, samples / t_lo, level=self.level,
                                source="GST iteration-time percentiles")
        return dataclasses.replace(est, meta=dict(est.meta, iteration_quantiles=(t_lo, t_hi)))


def best_compression_ratio(model: GST, workload: Profile, cluster: Cluster, config: Config,
                           ratios=None, *, refine=True):
    """Compression ratio minimizing the GST step time (Sec. V-C, Fig. 6).

    Evaluates ``model`` with ``compression_ratio=r`` for every r of the grid,
    then (``refine``) polishes the best grid point with a bounded scalar
    minimization between its neighbours.

    Parameters
    ----------
    model : GST
        The model; its ``compression_time`` (t_0) and ``compression_exponent``
        set the cost of compressing.
    workload, cluster, config
        As in :meth:`GST.estimate`.
    ratios : array_like or None
        Grid of r_c in [0, 1); default ``0, 0.01, ..., 0.95``.
    refine : bool
        Polish the grid optimum (scipy.optimize.minimize_scalar, bounded).

    Returns
    -------
    dict
        ``{"best": r*, "step_time": T(r*), "ratios": grid, "step_times": T(grid)}``.

    References
    ----------
    Zhang et al. 2023, Sec. V-C ("Optimization"), Fig. 6.

    Examples
    --------
    Fig. 6's shape with assumed parameters: communication (FC + AG + BC) of
    0.36 s at r_c = 0 and t_0 = 0.032 x 0.36 s, so that
    ``0.36 (1 - r) + t_0 / (1 - r)^2`` is smallest at r = 0.6:

    >>> from perfmodel.specs import Profile, Cluster, Config
    >>> res = best_compression_ratio(
    ...     GST(units="sound", layer_pipeline=False, compression_time=0.01152,
    ...         server_link="dedicated"),
    ...     Profile(model_bytes=100e6, t_forward=0.1, t_backward=0.2),
    ...     Cluster(machines=8, nic_bandwidth="10Gbps"), Config(n_replicas=4, n_ps=1))
    >>> round(res["best"], 2), res["step_times"][[0, 60, 95]].round(3)   # r = 0, 0.6, 0.95
    (0.6, array([0.672, 0.516, 4.926]))
    """
    if not isinstance(model, GST):
        raise SpecError("model", f"expected a GST model, got {type(model).__name__}")
    grid = np.linspace(0.0, 0.95, 96) if ratios is None else np.asarray(
        _v.fraction("ratios", ratios, closed=False), dtype=float).ravel()
    if grid.size == 0:
        raise SpecError("ratios", "must hold at least one ratio")

    def step(r):
        return model_at(r).estimate(workload, cluster, config).step_time

    def model_at(r):
        return dataclasses.replace(model, compression_ratio=float(r))

    times = np.array([step(r) for r in grid])
    i = int(np.argmin(times))
    best, best_t = float(grid[i]), float(times[i])
    if _v.boolean("refine", refine) and grid.size > 1:
        lo = float(grid[max(i - 1, 0)])
        hi = float(grid[min(i + 1, grid.size - 1)])
        if hi > lo:
            res = optimize.minimize_scalar(step, bounds=(lo, hi), method="bounded",
                                           options={"xatol": 1e-6})
            if res.fun < best_t:
                best, best_t = float(res.x), float(res.fun)
    return {"best": best, "step_time": best_t, "ratios": grid, "step_times": times}


def bottleneck_evaluation(model: GST, workload: Profile, cluster: Cluster, config: Config, *,
                          bandwidths=None, compute_speedups=None) -> dict:
    """Speedup and communication/computation ratio against bandwidth and compute (Sec. V-C, Fig. 5).

    For every bandwidth B (bytes/s) and compute capability c (the profile's
    FP, BP and UP divided by c), the speedup of ``config.n_replicas`` workers
    over one (:func:`speedup_ratio`) and the ratio of communication time
    (FC + AG + BC, unexposed) to computation time (FP + BP + UP).

    Parameters
    ----------
    model : GST
        The model.
    workload, cluster, config
        As in :meth:`GST.estimate`.
    bandwidths : array_like or None, bytes/s
        NIC bandwidths (> 0); default the cluster's.
    compute_speedups : array_like or None
        Compute capability factors (> 0); default 1.

    Returns
    -------
    dict of str to ndarray
        ``"bandwidths"``, ``"compute_speedups"``, and arrays of shape
        (bandwidths, speedups): ``"speedup"``, ``"comm_comp_ratio"``,
        ``"step_time"`` (s), ``"bottleneck"`` (names).

    References
    ----------
    Zhang et al. 2023, Sec. V-C ("Evaluation"), Fig. 5.
    """
    if not isinstance(model, GST):
        raise SpecError("model", f"expected a GST model, got {type(model).__name__}")
    check_inputs(workload, cluster, config, "GST", min_servers=1)
    bws = np.atleast_1d(np.asarray(
        _v.checked("bandwidths", cluster.nic_bandwidth if bandwidths is None else bandwidths,
                    positive=True), dtype=float))
    cs = np.atleast_1d(np.asarray(
        _v.checked("compute_speedups", 1.0 if compute_speedups is None else compute_speedups,
                    positive=True), dtype=float))
    shape = (bws.size, cs.size)
    speed, ratio, step = np.empty(shape), np.empty(shape), np.empty(shape)
    neck = np.empty(shape, dtype=object)
    one = config.replace(n_replicas=1)
    for i, b in enumerate(bws):
        cl = cluster.replace(nic_bandwidth=float(b))
        for j, c in enumerate(cs):
            prof = workload.replace(t_forward=workload.t_forward / c,
                                    t_backward=workload.t_backward / c,
                                    t_update=workload.t_update / c)
            est = model.estimate(prof, cl, config)
            base = model.estimate(prof, cl, one)
            speed[i, j] = speedup_ratio(base.step_time, est.step_time, config.n_replicas)
            ratio[i, j] = est.meta["comm_comp_ratio"]
            step[i, j] = est.step_time
            neck[i, j] = est.bottleneck
    return {"bandwidths": bws, "compute_speedups": cs, "speedup": speed,
            "comm_comp_ratio": ratio, "step_time": step, "bottleneck": neck}
