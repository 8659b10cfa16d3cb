"""Baselines from the literature, behind perfmodel's estimate interface.

So that users can compare Li et al. 2022's models with what came before them:

* :class:`LinAsync` -- Lin et al.'s queueing model of Async-SGD (MASCOTS'18,
  Li et al. 2020 ref. [10], Li et al. 2022 ref. [21]): the closed network of
  Li et al. 2022, Fig. 5 solved by MVA with the phase durations of a
  one-worker profile, and *no* overlap correction (eq. 6 came later, in
  Li et al. 2022);
* :func:`cynthia_throughput` and :class:`Cynthia` -- the formula of Cynthia
  (ICPP'19) quoted in Li et al. 2020, Sec. 1:
  ``W K / (T_P max(1, W U_1) + 2 T_C)``;
* :func:`optimus_speed`, :func:`fit_optimus` and :class:`Optimus` -- the
  black-box speed functions of Optimus (EuroSys'18, Li et al. 2022 ref. [26]),
  fitted with scipy from measurements:
  sync ``1 / (a M/w + b + c w/p + d w + e p)``, async
  ``w / (a + b w/p + c w + d p)``.

Every model object is frozen, holds only its options (and, for Optimus, its
fitted coefficients) and answers ``estimate(workload, cluster, config) ->
Estimate``, with K (``w``) = ``config.n_replicas`` and ``p`` = ``config.n_ps``.

References
----------
Li, Yan, Paolieri, Golubchik. Throughput Prediction of Asynchronous SGD in
TensorFlow. ICPE, 2020.  Sec. 1 (Lin et al. [10], Cynthia [24] and its
formula), Sec. 4.4 (the comparison and the halved-T_C variant of Cynthia).

Li, Paolieri, Golubchik, Lin, Yan. Predicting Throughput of Distributed SGD.
IEEE TPDS, 2022.  Sec. 2.1, 2.1.2 ([21]'s profiling), Sec. 5 (Optimus [26],
Cynthia [37]).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from . import _validate as _v
from . import queueing as _q
from .errors import SpecError
from .interface import BatchEstimate, ConfigBatch, check_inputs
from .result import Estimate
from .specs import Cluster, Config, Profile

__all__ = [
    "LinAsync",
    "cynthia_throughput", "Cynthia",
    "OPTIMUS_MODES", "optimus_speed", "fit_optimus", "Optimus",
]


# --------------------------------------------------------------------------
# Lin et al. (MASCOTS'18)
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class LinAsync:
    """Lin et al.'s queueing model of Async-SGD, without overlap.

    The network of Li et al. 2022, Fig. 5 (downlink, compute, uplink, update as a
    strict sequence) solved by exact MVA, with the durations of a one-worker
    profile as service times.  Lin et al. measured the link durations directly
    (tcpdump) and took compute and update as the gaps between transmissions
    (Li et al. 2022, Sec. 2.1.2); give those as ``t_downlink``/``t_uplink``
    (seconds for the whole model with one server), otherwise ``M / B`` is used.

    Parameters
    ----------
    discipline : {"hybrid", "ps", "fcfs"}
        Link discipline.  Neither paper of Li et al. says which one [21] used; the
        default is Li et al. 2022's hybrid (eq. 5).
    rho_threshold : float or None
        rho_T of eq. 5; None (default): the cluster's ``rho_threshold``, else 0.6
        (as :class:`perfmodel.queueing.AsyncMVA`).
    t_downlink, t_uplink : float or None, s
        Measured one-worker pull and push durations.
    residual : {"deterministic", "exponential"} or float
        FCFS residual (see :func:`perfmodel.queueing.mva`).

    Notes
    -----
    Same conventions as :class:`perfmodel.queueing.AsyncMVA` (K =
    ``config.n_replicas`` identical workers, ``n_ps`` servers splitting the
    model, throughput in samples/s, bottleneck = most utilized station); the
    only differences are the measured link durations and the absence of eq. 6.

    References
    ----------
    S.-H. Lin, M. Paolieri, C.-F. Chou, L. Golubchik, "A model-based approach
    to streamlining distributed training for asynchronous SGD", MASCOTS 2018
    (Li et al. 2020 [10], Li et al. 2022 [21]); Li et al. 2022, Sec. 2.1 eqs. 1-5.

    Examples
    --------
    >>> from perfmodel.specs import Profile, Cluster, Config
    >>> p = Profile(model_bytes=100e6, t_forward=0.1, t_backward=0.2, t_update=0.01,
    ...             batch_size=32)
    >>> c = Cluster(machines=8, nic_bandwidth="10Gbps")
    >>> est = LinAsync().estimate(p, c, Config(n_replicas=1))
    >>> round(est.step_time, 6), round(est.throughput, 3)    # 0.08+0.1+0.2+0.08+0.01
    (0.47, 68.085)
    """

    discipline: str = "hybrid"
    rho_threshold: float | None = None
    t_downlink: float | None = None
    t_uplink: float | None = None
    residual: str | float = "deterministic"
    #: The configuration's ``n_ps`` parameter servers are used (sweeps read this).
    modes: ClassVar[tuple[str, ...]] = ("async",)
    uses_parameter_servers: ClassVar[bool] = True

    def __post_init__(self):
        _q.checked_options(self.discipline, self.rho_threshold, False, "exact")
        _q.residual_fraction(self.residual)
        for name in ("t_downlink", "t_uplink"):
            value = getattr(self, name)
            if value is not None:
                _v.scalar(name, value)

    def estimate(self, workload: Profile, cluster: Cluster, config: Config) -> Estimate:
        """Predict Async-SGD with ``config.n_replicas`` workers (see the class notes).

        Raises
        ------
        SpecError
            ``config.n_ps`` is 0, or an argument is not the expected spec.
        Infeasible
            Model parallelism or several GPUs per machine.
        """
        check_inputs(workload, cluster, config, type(self).__name__, modes=None,
                     min_servers=1, one_gpu=True)
        rho_t, source = _q.resolved_threshold(self.rho_threshold, cluster)
        sol = _q.async_solve(workload.model_bytes, _q.link_rate(cluster), workload.t_forward,
                             workload.t_backward, workload.t_update, config.n_replicas,
                             self.discipline, rho_t, False, n_ps=config.n_ps,
                             residual=self.residual, t_uplink=self.t_uplink,
                             t_downlink=self.t_downlink)
        meta = {"model": "LinAsync", "discipline": self.discipline,
                "selected": sol.discipline, "rho_fcfs": sol.rho_fcfs,
                "rho_threshold": rho_t, "rho_threshold_source": source,
                "workers": config.n_replicas,
                "n_ps": config.n_ps, "steps_per_second": sol.throughput,
                "utilization": dict(sol.utilization),
                "t_downlink": self.t_downlink, "t_uplink": self.t_uplink,
                "equation": "Lin et al. 2018 = Li et al. 2022 eqs. 1-5 without eq. 6"}
        return _q.estimate_from_solution(sol, workload, config, meta)

    def estimate_many(self, workload: Profile, cluster: Cluster,
                      batch: ConfigBatch) -> BatchEstimate | None:
        """:meth:`estimate`'s step time, throughput and epoch time of every configuration
        of ``batch``, one exact single-class recursion per server count, all at once.

        None (price them one by one) for model parallelism, several GPUs per
        machine, or more workers than the exact bound.
        """
        if not _q.async_batchable(workload, cluster, batch):
            return None
        rho_t = _q.resolved_threshold(self.rho_threshold, cluster)[0]
        return _q.async_solve_many(batch, workload, _q.link_rate(cluster), self.discipline,
                                     rho_t, _q.residual_fraction(self.residual),
                                     t_uplink=self.t_uplink, t_downlink=self.t_downlink)


# --------------------------------------------------------------------------
# Cynthia (ICPP'19), as quoted by Li et al. 2020
# --------------------------------------------------------------------------

def _cynthia_terms(t_process, t_comm, workers, utilization, split_links, n_ps):
    tp = _v.checked("t_process", t_process)
    tc = _v.checked("t_comm", t_comm)
    w = _v.checked("workers", workers, minimum=1, integer=True)
    p = _v.checked("n_ps", n_ps, minimum=1, integer=True)
    if not isinstance(split_links, (bool, np.bool_)):
        raise SpecError("split_links", f"expected True or False, got {split_links!r}")
    if split_links:
        tc = tc / 2.0
    if utilization is None:
        cycle = tp + 2.0 * tc
        if not np.all(np.asarray(cycle) > 0):
            raise SpecError("t_process", "t_process + 2 t_comm must be > 0")
        u1 = 2.0 * tc / cycle
    else:
        u1 = _v.checked("utilization", utilization, maximum=1.0)
    stretch = np.maximum(1.0, w * u1 / p)
    return tp, tc, w, stretch


def cynthia_throughput(t_process, t_comm, workers, batch_size=1, utilization=None,
                       split_links=False, n_ps=1):
    """Cynthia's Async-SGD throughput, ``W K / (T_P max(1, W U_1) + 2 T_C)``.

    Parameters
    ----------
    t_process : float or array_like, s
        T_P, time for a worker to process one batch (forward and backward).
    t_comm : float or array_like, s
        T_C, time to transmit the model (or its update) once, ``M / B``.
    workers : int or array_like
        W >= 1.
    batch_size : float or array_like, samples
        K, samples per batch (1: the result is in steps/s).
    utilization : float or array_like or None
        U_1, the network utilization measured with a single worker, in [0, 1].
        Default (our reading, Li et al. 2020 do not define it further): the fraction
        of a one-worker step spent transmitting, ``2 T_C / (T_P + 2 T_C)``.
    split_links : bool
        Li et al. 2020's modification: halve T_C (separate uplink and downlink),
        which also lowers the default U_1.
    n_ps : int or array_like
        Servers sharing the load: ``W U_1`` becomes ``W U_1 / n_ps`` (our
        extension; 1 is the formula as quoted).

    Returns
    -------
    float or ndarray, samples/s
        Throughput of the whole job (steps/s when ``batch_size`` is 1).

    Raises
    ------
    SpecError
        Naming the argument, for negative, NaN or out-of-range values.

    References
    ----------
    Li et al. 2020, Sec. 1 (formula), Sec. 4.4 (halved T_C); H. Zheng et al.,
    "Cynthia: cost-efficient cloud resource provisioning for predictable
    distributed DNN training", ICPP 2019.

    Examples
    --------
    >>> round(cynthia_throughput(0.3, 0.08, 1, 32), 3)     # 32 / (0.3 + 0.16)
    69.565
    >>> cynthia_throughput(0.3, 0.08, [1, 2, 4, 8]).round(3)   # U_1 = 0.16 / 0.46
    array([2.174, 4.348, 6.928, 8.042])
    """
    tp, tc, w, stretch = _cynthia_terms(t_process, t_comm, workers, utilization, split_links,
                                        n_ps)
    k = _v.checked("batch_size", batch_size, positive=True)
    out = w * k / (tp * stretch + 2.0 * tc)
    return _v.broadcast_result(out, tp, tc, w, k, stretch)


@dataclass(frozen=True)
class Cynthia:
    """Cynthia's formula for Async-SGD behind the estimate interface.

    Parameters
    ----------
    utilization : float or None
        Measured one-worker network utilization U_1 (default: computed, see
        :func:`cynthia_throughput`).
    split_links : bool
        Li et al. 2020's variant with T_C halved.

    Notes
    -----
    T_P = ``t_forward + t_backward`` (the formula has no server update term;
    ``t_update`` is ignored), T_C = ``M / B`` with B the cluster's goodput.
    One worker's step is ``T_P max(1, W U_1 / n_ps) + 2 T_C``; its phases are
    ``downlink`` and ``uplink`` (T_C each) and ``forward`` and ``backward``
    stretched by ``max(1, W U_1 / n_ps)``.  The bottleneck is ``"network"``
    when ``W U_1 / n_ps > 1`` (the formula does not tell the link's directions
    apart), else ``"compute"``.

    Examples
    --------
    >>> from perfmodel.specs import Profile, Cluster, Config
    >>> p = Profile(model_bytes=100e6, t_forward=0.1, t_backward=0.2, batch_size=32)
    >>> est = Cynthia().estimate(p, Cluster(machines=8, nic_bandwidth="10Gbps"),
    ...                          Config(n_replicas=8))
    >>> round(est.throughput, 2), est.bottleneck
    (257.34, 'network')
    """

    utilization: float | None = None
    split_links: bool = False
    modes: ClassVar[tuple[str, ...]] = ("async",)
    uses_parameter_servers: ClassVar[bool] = True

    def __post_init__(self):
        if self.utilization is not None:
            _v.scalar("utilization", self.utilization, maximum=1.0)
        if not isinstance(self.split_links, (bool, np.bool_)):
            raise SpecError("split_links", f"expected True or False, got {self.split_links!r}")

    def estimate(self, workload: Profile, cluster: Cluster, config: Config) -> Estimate:
        """Predict Async-SGD with ``config.n_replicas`` workers (see the class notes)."""
        check_inputs(workload, cluster, config, type(self).__name__, modes=None,
                     min_servers=1, one_gpu=True)
        t_comm = workload.model_bytes / _q.link_rate(cluster)
        tp = workload.t_forward + workload.t_backward
        _, tc, _, stretch = _cynthia_terms(tp, t_comm, config.n_replicas, self.utilization,
                                           self.split_links, config.n_ps)
        stretch = float(stretch)
        phases = {"downlink": float(tc), "forward": workload.t_forward * stretch,
                  "backward": workload.t_backward * stretch, "uplink": float(tc)}
        meta = {"model": "Cynthia", "utilization": self.utilization,
                "split_links": self.split_links, "stretch": stretch,
                "workers": config.n_replicas, "n_ps": config.n_ps,
                "equation": "Li et al. 2020 Sec. 1: W K / (T_P max(1, W U_1) + 2 T_C)"}
        est = Estimate.from_phases(phases, config.n_replicas * workload.batch_size,
                                   epoch_samples=config.epoch_samples, meta=meta)
        return dataclasses.replace(est, bottleneck="network" if stretch > 1 else "compute")


# --------------------------------------------------------------------------
# Optimus (EuroSys'18)
# --------------------------------------------------------------------------

#: Optimus speed functions: synchronous (5 coefficients) and asynchronous (4).
OPTIMUS_MODES = ("sync", "async")
_N_COEF = {"sync": 5, "async": 4}
_TERMS = {"sync": ("compute", "fixed", "communication", "worker_overhead", "server_overhead"),
          "async": ("compute", "communication", "worker_overhead", "server_overhead")}
#: The phase (:data:`perfmodel.result.PHASES`) of each Optimus term.
_PHASE_OF = {"compute": "compute", "communication": "network", "fixed": "overhead",
             "worker_overhead": "overhead", "server_overhead": "overhead"}


def _optimus_features(workers, n_ps, mode, global_batch):
    """Terms of the step time, each to be multiplied by one coefficient."""
    w = np.asarray(workers, dtype=float)
    p = np.asarray(n_ps, dtype=float)
    if mode == "sync":
        m = 1.0 if global_batch is None else float(global_batch)
        return [m / w, np.ones_like(w * p), w / p, w + 0 * p, p + 0 * w]
    return [np.ones_like(w * p), w / p, w + 0 * p, p + 0 * w]


def _check_coefficients(coefficients, mode):
    c = _v.as_array("coefficients", coefficients)
    if c.shape != (_N_COEF[mode],):
        raise SpecError("coefficients", f"mode {mode!r} needs {_N_COEF[mode]} coefficients, "
                                        f"got shape {c.shape}")
    if not (np.isfinite(c).all() and (c >= 0).all()):
        raise SpecError("coefficients", f"must be finite and >= 0, got {c.tolist()!r}")
    return c


def _check_batch(global_batch):
    if global_batch is None:
        return None
    if isinstance(global_batch, bool) or not isinstance(global_batch, numbers.Real) or \
            not (global_batch > 0 and math.isfinite(global_batch)):
        raise SpecError("global_batch", f"expected a number > 0 or None, got {global_batch!r}")
    return float(global_batch)


def optimus_speed(coefficients, workers, n_ps, mode="sync", global_batch=None):
    """Optimus's training speed for w workers and p parameter servers.

    ``sync``: ``1 / (a M/w + b + c w/p + d w + e p)`` (steps of the global
    batch M per second); ``async``: ``w / (a + b w/p + c w + d p)`` (steps per
    second summed over the workers).

    Parameters
    ----------
    coefficients : sequence of float
        (a, b, c, d, e) for sync, (a, b, c, d) for async, all >= 0, in the
        units that make the result the unit of the fitted measurements.
    workers, n_ps : int or array_like
        w >= 1 workers and p >= 1 servers; broadcast.
    mode : {"sync", "async"}
        Which speed function.
    global_batch : float or None
        M in the sync function; None stands for 1 (a per-worker batch that does
        not change with w, so ``a`` is the compute time of a step).

    Returns
    -------
    float or ndarray, steps/s (or the unit of the fit)

    Raises
    ------
    SpecError
        Naming the argument.

    References
    ----------
    Y. Peng et al., "Optimus: an efficient dynamic resource scheduler for deep
    learning clusters", EuroSys 2018, Sec. 3.2 (Li et al. 2022 ref. [26]).

    Examples
    --------
    >>> optimus_speed([0.01, 0.1, 0.05, 0.0, 0.0], 2, 1, "sync", global_batch=32)   # 1/0.36
    2.7777777777777777
    """
    _v.choice("mode", mode, OPTIMUS_MODES)
    c = _check_coefficients(coefficients, mode)
    w = _v.checked("workers", workers, minimum=1, integer=True)
    p = _v.checked("n_ps", n_ps, minimum=1, integer=True)
    m = _check_batch(global_batch)
    step = sum(ci * f for ci, f in zip(c, _optimus_features(w, p, mode, m)))
    with np.errstate(divide="ignore"):
        out = (1.0 if mode == "sync" else np.asarray(w, dtype=float)) / step
    return _v.broadcast_result(out, w, p)


def fit_optimus(workers, n_ps, speed, mode="sync", global_batch=None) -> Optimus:
    """Fit Optimus's speed function to measurements (scipy, coefficients >= 0).

    The step time is linear in the coefficients, so non-negative least squares
    on the relative error of the step time (``scipy.optimize.nnls``) gives the
    start; ``scipy.optimize.least_squares`` (bounded, ``trf``) then minimizes
    the relative error of the speed itself, as Optimus fits its model (NNLS
    in the paper).  With fewer measurements than coefficients the fit is not
    unique and the NNLS solution's sparsity decides; the result is
    deterministic.

    Parameters
    ----------
    workers, n_ps : sequence of int
        Configuration of each measurement (w >= 1, p >= 1).
    speed : sequence of float
        Measured speed of each (> 0): steps/s, or any unit consistent across
        the measurements (the fitted model predicts in that unit).
    mode : {"sync", "async"}
        Which speed function.
    global_batch : float or None
        M of the sync function (see :func:`optimus_speed`).

    Returns
    -------
    Optimus
        The fitted model; ``train_error`` holds the RMS relative error of the
        speed on the measurements.

    Raises
    ------
    SpecError
        Naming the argument: lengths differ, no measurement, bad values.

    References
    ----------
    Optimus (EuroSys 2018) Sec. 3.2.

    Examples
    --------
    >>> w = [1, 2, 4, 8, 1, 2, 4, 8]; p = [1, 1, 1, 1, 2, 2, 2, 2]
    >>> truth = [0.002, 0.05, 0.02, 0.001, 0.003]
    >>> x = optimus_speed(truth, w, p, "sync", global_batch=64)
    >>> fit = fit_optimus(w, p, x, "sync", global_batch=64)
    >>> bool(np.allclose(fit.speed(w, p), x, rtol=1e-6))
    True
    """
    from scipy.optimize import least_squares, nnls

    _v.choice("mode", mode, OPTIMUS_MODES)
    w = _v.as_array("workers", workers).ravel()
    p = _v.as_array("n_ps", n_ps).ravel()
    y = _v.as_array("speed", speed).ravel()
    if not (len(w) == len(p) == len(y)):
        raise SpecError("speed", f"workers, n_ps and speed must have one value per "
                                 f"measurement; got {len(w)}, {len(p)}, {len(y)}")
    if len(y) == 0:
        raise SpecError("speed", "needs at least one measurement")
    _v.checked("workers", w, minimum=1, integer=True)
    _v.checked("n_ps", p, minimum=1, integer=True)
    _v.checked("speed", y, positive=True)
    m = _check_batch(global_batch)
    feats = np.column_stack([np.broadcast_to(f, w.shape)
                             for f in _optimus_features(w, p, mode, m)])
    target_step = (1.0 if mode == "sync" else w) / y          # measured step time
    a = feats / target_step[:, None]                          # relative error rows
    start, _ = nnls(a, np.ones(len(y)))

    def residual(theta):
        step = feats @ theta
        return (1.0 if mode == "sync" else w) / (step * y) - 1.0

    theta = start
    if np.any(start > 0):
        scale = np.where(start > 0, start, np.max(start) * 1e-3)
        sol = least_squares(residual, np.maximum(start, 1e-12 * np.max(start)),
                            bounds=(0.0, np.inf), method="trf", x_scale=scale,
                            xtol=1e-14, ftol=1e-14, gtol=1e-14, max_nfev=2000)
        if np.sum(sol.fun ** 2) <= np.sum(residual(start) ** 2):
            theta = sol.x
    err = float(np.sqrt(np.mean(residual(theta) ** 2)))
    return Optimus(coefficients=tuple(float(v) for v in theta), mode=mode, global_batch=m,
                   train_error=err)


@dataclass(frozen=True)
class Optimus:
    """Optimus's fitted speed function behind the estimate interface.

    Parameters
    ----------
    coefficients : tuple of float
        Fitted coefficients (see :func:`optimus_speed`), seconds.
    mode : {"sync", "async"}
        Which speed function.
    global_batch : float or None
        M of the sync function.  In :meth:`estimate`, None means the global
        batch grows with the workers (``n_replicas * batch_size``).
    train_error : float or None
        RMS relative error on the measurements it was fitted to.

    Notes
    -----
    The coefficients must be in seconds (fit to speeds in steps/s) for
    :meth:`estimate` to be meaningful.  The terms (``meta["terms"]``, s):
    sync ``compute`` (a M/w), ``fixed`` (b), ``communication`` (c w/p),
    ``worker_overhead`` (d w), ``server_overhead`` (e p), summing to the step
    time; async the same without ``fixed``, summing to one worker's step
    time.  Phases: ``compute``, ``network`` (communication) and ``overhead``
    (the rest).

    Examples
    --------
    >>> from perfmodel.specs import Profile, Cluster, Config
    >>> m = Optimus((0.01, 0.1, 0.05, 0.0, 0.0), "sync", global_batch=32)
    >>> p = Profile(model_bytes=1e6, t_forward=0.1, t_backward=0.1, batch_size=16)
    >>> est = m.estimate(p, Cluster(machines=4, nic_bandwidth="1Gbps"), Config(n_replicas=2))
    >>> round(est.step_time, 6), round(est.throughput, 3), est.bottleneck
    (0.36, 88.889, 'compute')
    """

    coefficients: tuple
    mode: str = "sync"
    global_batch: float | None = None
    train_error: float | None = None
    uses_parameter_servers: ClassVar[bool] = True

    @property
    def modes(self) -> tuple[str, ...]:
        """The one mode its coefficients were fitted for."""
        return (self.mode,)

    def __post_init__(self):
        _v.choice("mode", self.mode, OPTIMUS_MODES)
        c = _check_coefficients(self.coefficients, self.mode)
        object.__setattr__(self, "coefficients", tuple(float(v) for v in c))
        object.__setattr__(self, "global_batch", _check_batch(self.global_batch))

    @classmethod
    def fit(cls, workers, n_ps, speed, mode="sync", global_batch=None) -> Optimus:
        """Same as :func:`fit_optimus`."""
        return fit_optimus(workers, n_ps, speed, mode, global_batch)

    def speed(self, workers, n_ps):
        """:func:`optimus_speed` with these coefficients."""
        return optimus_speed(self.coefficients, workers, n_ps, self.mode, self.global_batch)

    def estimate(self, workload: Profile, cluster: Cluster, config: Config) -> Estimate:
        """Step time, throughput (samples/s) and phases for (w, p) = (n_replicas, n_ps).

        Raises
        ------
        SpecError
            ``config.n_ps`` is 0, or an argument is not the expected spec.
        Infeasible
            Model parallelism or several GPUs per machine.
        """
        check_inputs(workload, cluster, config, type(self).__name__, modes=None,
                     min_servers=1, one_gpu=True)
        w, p = config.n_replicas, config.n_ps
        m = self.global_batch
        if self.mode == "sync" and m is None:
            m = float(w * workload.batch_size)
        terms = [float(ci * f) for ci, f in zip(self.coefficients,
                                                _optimus_features(w, p, self.mode, m))]
        own = dict(zip(_TERMS[self.mode], terms))
        phases: dict = {}
        for term, seconds in own.items():
            phases[_PHASE_OF[term]] = phases.get(_PHASE_OF[term], 0.0) + seconds
        samples = m if self.mode == "sync" else w * workload.batch_size
        meta = {"model": "Optimus", "mode": self.mode, "coefficients": self.coefficients,
                "terms": own,
                "global_batch": m, "train_error": self.train_error, "workers": w, "n_ps": p}
        return Estimate.from_phases(phases, samples, epoch_samples=config.epoch_samples,
                                    meta=meta)
