"""Operational analysis: the ceiling that measured CPU usage puts on the job speed (ours).

The utilization law (Denning and Buzen, "The operational analysis of
queueing network models", ACM Computing Surveys 10(3), 1978): a resource
busy ``U`` of the time while the job completes ``X`` samples/s has a service
demand ``D = U / X`` seconds per sample, and no schedule completes more than
``capacity / D`` samples/s (the bottleneck bound).  The bound needs no model
of how the work is scheduled, only what the runs measured; it is the one
part of a parameter-server job's behaviour that the calibration runs'
CPU readings show directly.

* :func:`service_demand`, :func:`bottleneck_throughput` -- the two laws,
  vectorized;
* :func:`fit_utilization_ceiling` -- a :class:`UtilizationCeiling` from a
  few measured configurations of one job: how a worker's and the busiest
  server's CPU-seconds per synchronous step grow with the workers and
  shrink with the servers, so that the bound extrapolates to configurations
  that were not run.

Why it is needed (the DL2 measurements): fitted on 2 servers x 2 workers, the
Li et al. 2022 step-time models extrapolate poorly, much of it by predicting
speeds that one resource could not sustain: a worker's CPU at 1 worker and
many servers, a single saturated server at many workers.
:func:`perfmodel.fit.validation.dl2_cells` caps every model's prediction by
the ceiling fitted on the same 4 runs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import least_squares, nnls

from ._validate import checked
from .errors import SpecError

__all__ = ["service_demand", "bottleneck_throughput", "UtilizationCeiling",
           "fit_utilization_ceiling"]


def _array(name: str, value, *, positive: bool) -> np.ndarray:
    """``value`` as a float array, finite and > 0 (or >= 0), else a SpecError naming it."""
    return np.asarray(checked(name, value, positive=positive), dtype=float)


def service_demand(utilization, throughput):
    """Service demand ``D = U / X`` of a resource (the utilization law).

    Parameters
    ----------
    utilization : float or array_like
        Busy fraction of the resource, or busy cores of a multi-core one
        (then D is core-seconds per unit of work), >= 0.
    throughput : float or array_like
        Completed work per second (samples/s, steps/s), > 0.

    Returns
    -------
    float or ndarray
        Seconds (core-seconds) of the resource per unit of work.

    Raises
    ------
    SpecError
        Naming the argument.

    Examples
    --------
    >>> service_demand(1.5, 30.0)
    0.05
    """
    out = (_array("utilization", utilization, positive=False) /
           _array("throughput", throughput, positive=True))
    return float(out) if out.ndim == 0 else out


def bottleneck_throughput(capacity, demand):
    """The most work per second a resource of ``capacity`` sustains: ``capacity / D``.

    Parameters
    ----------
    capacity : float or array_like
        Cores (or 1 for a single server), > 0.
    demand : float or array_like
        Service demand per unit of work (:func:`service_demand`), >= 0; a
        zero demand bounds nothing (``inf``).

    Returns
    -------
    float or ndarray

    Raises
    ------
    SpecError
        Naming the argument.

    Examples
    --------
    >>> bottleneck_throughput(2.0, 0.05)
    40.0
    """
    cap = _array("capacity", capacity, positive=True)
    d = _array("demand", demand, positive=False)
    with np.errstate(divide="ignore"):
        out = np.where(d > 0, cap / np.where(d > 0, d, 1.0), np.inf)
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class UtilizationCeiling:
    """The bottleneck bound of a synchronous parameter-server job, by configuration.

    A step of ``G`` samples (the global batch, split over ``w`` workers)
    costs each worker ``worker[0] + worker[1] * G / w`` CPU-seconds (a fixed
    part, and a part per sample of its local batch) and the busiest of ``p``
    servers ``(server[0] + server[1] * w) * p**-server[2]`` (a fixed part and
    one per gradient received, spread over the servers with exponent ``g``:
    1 for an even split, less where one server holds the large keys).  No
    step is shorter than either over ``capacity`` cores, so the job speed is
    at most ``G * capacity / max(worker demand, server demand)``.

    Attributes
    ----------
    capacity : float, cores
        CPU a worker or a server may use (a container's limit).
    worker : tuple of 2 floats, s and s/sample
    server : tuple of 3 floats, s, s per worker, exponent in [0, 1]
    """

    capacity: float
    worker: tuple
    server: tuple

    def __post_init__(self):
        set_ = object.__setattr__
        set_(self, "capacity", float(_array("capacity", self.capacity, positive=True)))
        for name, size in (("worker", 2), ("server", 3)):
            values = _array(name, getattr(self, name), positive=False)
            if values.shape != (size,):
                raise SpecError(name, f"expected {size} numbers, got {getattr(self, name)!r}")
            set_(self, name, tuple(float(v) for v in values))
        if self.server[2] > 1:
            raise SpecError("server", f"the split exponent must be in [0, 1], got "
                                      f"{self.server[2]!r}")

    def worker_demand(self, n_workers, batch_size):
        """CPU-seconds of one worker per step (array_like arguments broadcast)."""
        a, b = self.worker
        return a + b * np.asarray(batch_size, float) / np.asarray(n_workers, float)

    def server_demand(self, n_ps, n_workers):
        """CPU-seconds of the busiest server per step."""
        a, b, g = self.server
        return (a + b * np.asarray(n_workers, float)) * np.asarray(n_ps, float) ** -g

    def speed(self, n_ps, n_workers, batch_size):
        """The ceiling on the job speed, samples/s (float or ndarray)."""
        step = np.maximum(self.worker_demand(n_workers, batch_size),
                          self.server_demand(n_ps, n_workers)) / self.capacity
        out = bottleneck_throughput(1.0, step) * np.asarray(batch_size, float)
        return float(out) if np.ndim(out) == 0 else out


def fit_utilization_ceiling(n_ps, n_workers, batch_size, speed, server_cpu, worker_cpu, *,
                            capacity: float | None = None) -> UtilizationCeiling:
    """Fit a :class:`UtilizationCeiling` to measured configurations of one job.

    Each configuration's demands per step come from the utilization law:
    ``server_cpu * G / speed`` (the busiest server) and ``worker_cpu * G /
    speed`` (a worker), since a step lasts ``G / speed``.  The worker's
    line ``a + b G / w`` is a non-negative least-squares fit in relative
    terms; the server's ``(a + b w) p**-g`` a bounded least-squares fit
    (``a, b > 0``, ``0 <= g <= 1``, relative residuals, fixed starts).  With
    one server count the split is unknown and ``g = 1`` (an even split: for
    more servers than were run, the highest ceiling the runs allow, so that
    it does not cut a model for lack of data).

    Parameters
    ----------
    n_ps, n_workers : array_like of int
        Servers (>= 1) and workers (>= 1) of each measured configuration;
        at least 3 configurations with 2 distinct worker counts.
    batch_size : array_like
        Global batch G of a step, samples, > 0.
    speed : array_like
        Measured job speed, samples/s, > 0.
    server_cpu : array_like
        CPU usage of the busiest server, cores, >= 0.
    worker_cpu : array_like
        Mean CPU usage of the workers, cores, >= 0.
    capacity : float, optional
        Cores a container may use.  Default: the largest reading given, which
        is right only when some run saturated a server or a worker; on a
        shared testbed take the largest reading over every job's runs (as
        the DL2 validation does), since the limit is the cluster's.

    Returns
    -------
    UtilizationCeiling

    Raises
    ------
    SpecError
        Naming the argument: a bad value, arrays of different lengths, too
        few configurations or worker counts.
    """
    p = _array("n_ps", n_ps, positive=True)
    w = _array("n_workers", n_workers, positive=True)
    g_ = _array("batch_size", batch_size, positive=True)
    x = _array("speed", speed, positive=True)
    us = _array("server_cpu", server_cpu, positive=False)
    uw = _array("worker_cpu", worker_cpu, positive=False)
    if len({a.shape for a in (p, w, x, us, uw)}) != 1 or p.ndim != 1 or g_.ndim > 1 or (
            g_.ndim == 1 and g_.shape != p.shape):
        raise SpecError("speed", "n_ps, n_workers, speed, server_cpu and worker_cpu must be "
                        "1-d arrays of one length (batch_size too, or one number)")
    g_ = np.broadcast_to(g_, p.shape)
    if len(p) < 3 or len(np.unique(w)) < 2:
        raise SpecError("n_workers", f"need at least 3 configurations with 2 distinct worker "
                        f"counts, got {len(p)} with workers {sorted(set(w.tolist()))}")
    cap = float(max(us.max(), uw.max())) if capacity is None else float(
        _array("capacity", capacity, positive=True))
    if cap <= 0:
        raise SpecError("capacity", "every CPU reading is 0; give the capacity")
    step = g_ / x
    worker = _fit_worker(uw * step, g_ / w)
    server = _fit_server(us * step, p, w)
    return UtilizationCeiling(cap, worker, server)


def _fit_worker(demand: np.ndarray, local: np.ndarray) -> tuple:
    """(a, b) >= 0 of ``a + b * local`` closest to ``demand`` in relative terms."""
    scale = np.where(demand > 0, demand, 1.0)
    design = np.column_stack([np.ones_like(local), local]) / scale[:, None]
    coef, _ = nnls(design, demand / scale)
    return float(coef[0]), float(coef[1])


def _fit_server(demand: np.ndarray, p: np.ndarray, w: np.ndarray) -> tuple:
    """(a, b, g) of ``(a + b w) p**-g`` closest to ``demand`` in relative terms."""
    if not (demand > 0).any():
        return 0.0, 0.0, 1.0
    d = np.where(demand > 0, demand, demand[demand > 0].min())
    free_g = len(np.unique(p)) > 1

    def model(th):
        g = th[2] if free_g else 1.0
        return (np.exp(th[0]) + np.exp(th[1]) * w) * p ** -g

    mean = float(np.log(d.mean()))
    fits = [least_squares(lambda th: model(th) / d - 1.0, [mean, mean + np.log(s), 0.7],
                          bounds=([-50.0, -50.0, 0.0], [50.0, 50.0, 1.0]))
            for s in (1e-3, 0.1)]
    th = min(fits, key=lambda f: f.cost).x
    return float(np.exp(th[0])), float(np.exp(th[1])), float(th[2]) if free_g else 1.0
