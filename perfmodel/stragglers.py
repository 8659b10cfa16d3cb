"""Ring all-reduce with stragglers: the all-reduce step waits for the slowest worker.

Li et al. 2022 (eq. 11) price a decentralized Sync-SGD step as
``T = (T_F + T_B) + 2 (K - 1) M / (K B)``: every worker computes for exactly
``T_F + T_B``, then the ring all-reduce starts.  With compute times that vary
between workers the all-reduce starts only when the slowest of the K workers
has finished, so the compute term becomes the expected maximum of K compute
times.  Taking each worker's compute time as an independent normal with mean
``T_F + T_B`` and standard deviation sigma, as Zhang et al. 2023 do for their
global synchronization time (eqs. 7-9), the step is::

    T(K) = E[max of K normals(T_F + T_B, sigma)] + 2 (K - 1) M / (K B_eff)

with ``B_eff`` the link's goodput (``Cluster.effective_bandwidth``).  sigma is
given directly, or as a coefficient of variation of the compute time (the
model's ``cv``, else the cluster's ``compute_cv``).  With sigma = 0 it is
eq. 11 exactly.

The ring itself is synchronous and deterministic here: the straggler delay is
the only random part (the ring's transfers are not slowed by the stragglers,
since every worker starts its sends when the last one is ready).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from . import _validate as _v
from .coarse import allreduce_phases
from .gst.maxima import expected_max_normal
from .interface import check_inputs
from .result import Estimate
from .specs import Cluster, Config, Profile

__all__ = ["AllReduceStragglers", "straggler_allreduce_step_time"]


def straggler_allreduce_step_time(model_bytes, bandwidth, t_forward, t_backward, workers,
                                  sigma=0.0):
    """Step time of ring all-reduce Sync-SGD when the K workers' compute times vary (s).

    ``E[max_k (T_F + T_B)_k] + 2 (K - 1) M / (K B)`` with iid normal compute
    times of mean ``T_F + T_B`` and standard deviation ``sigma``.

    Parameters
    ----------
    model_bytes : float or array_like, bytes
        Model size M (>= 0).
    bandwidth : float or array_like, bytes/s
        Link rate B (> 0).
    t_forward, t_backward : float or array_like, s
        Mean forward and backward time of one worker's step (>= 0).
    workers : int or array_like, workers
        K participants (whole, >= 1).
    sigma : float or array_like, s
        Standard deviation of one worker's compute time (>= 0).

    Returns
    -------
    float or ndarray, s

    References
    ----------
    Li et al. 2022, eq. 11 (the ring step); Zhang et al. 2023, eqs. 7-9 (the
    expected maximum of the workers' normal times).

    Examples
    --------
    >>> straggler_allreduce_step_time(100e6, 1.25e9, 0.1, 0.2, 4)          # eq. 11
    0.42
    >>> round(straggler_allreduce_step_time(100e6, 1.25e9, 0.1, 0.2, 2, sigma=0.03), 6)
    0.396926
    """
    s = _v.checked("sigma", sigma)
    phases = allreduce_phases(model_bytes, bandwidth, t_forward, t_backward, workers)
    compute = phases["forward"] + phases["backward"]
    delay = expected_max_normal(workers, compute, s) - compute
    return _v.broadcast_result(compute + delay + phases["allreduce"], model_bytes, bandwidth,
                               t_forward, t_backward, workers, sigma)


@dataclass(frozen=True)
class AllReduceStragglers:
    """Ring all-reduce Sync-SGD whose step waits for the slowest of K workers.

    Parameters
    ----------
    sigma : float or None, s
        Standard deviation of one worker's compute time; None: ``cv`` times
        the mean compute time.
    cv : float or None
        Coefficient of variation of the compute time when ``sigma`` is None;
        None: the cluster's ``compute_cv``.

    Examples
    --------
    >>> from perfmodel import zoo
    >>> job, net = zoo.profile("resnet50-pipedream"), zoo.cluster("aws-p3.2xlarge")
    >>> calm = AllReduceStragglers(cv=0.0).estimate(job, net, Config(n_replicas=8, n_ps=0))
    >>> noisy = AllReduceStragglers(cv=0.1).estimate(job, net, Config(n_replicas=8, n_ps=0))
    >>> noisy.step_time > calm.step_time, noisy.bottleneck in noisy.phases
    (True, True)
    """

    sigma: float | None = None
    cv: float | None = None
    modes: ClassVar[tuple[str, ...]] = ("sync",)
    uses_parameter_servers: ClassVar[bool] = False

    def __post_init__(self):
        for name in ("sigma", "cv"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, _v.scalar(name, getattr(self, name)))

    def sigma_for(self, workload: Profile, cluster: Cluster) -> float:
        """The standard deviation of one worker's compute time (s) this model uses."""
        if self.sigma is not None:
            return self.sigma
        cv = self.cv if self.cv is not None else cluster.compute_cv
        return cv * (workload.t_forward + workload.t_backward)

    def estimate(self, workload: Profile, cluster: Cluster, config: Config) -> Estimate:
        """Step time with the straggler delay as a phase of its own.

        Phases: ``forward``, ``backward`` (the mean compute), ``straggler``
        (the expected maximum's excess over the mean) and ``allreduce``.
        """
        check_inputs(workload, cluster, config, type(self).__name__)
        k, sigma = config.n_replicas, self.sigma_for(workload, cluster)
        phases = allreduce_phases(workload.model_bytes, cluster.nic_bandwidth,
                                  workload.t_forward, workload.t_backward, k,
                                  link_efficiency=cluster.link_efficiency)
        compute = phases["forward"] + phases["backward"]
        phases = {"forward": phases["forward"], "backward": phases["backward"],
                  "straggler": float(expected_max_normal(k, compute, sigma)) - compute,
                  "allreduce": phases["allreduce"]}
        meta = {"model": type(self).__name__, "workers": k, "sigma": sigma,
                "equation": "Li et al. 2022 eq. 11 with Zhang et al. 2023 eqs. 7-9"}
        return Estimate.from_phases(phases, k * workload.batch_size,
                                    epoch_samples=config.epoch_samples, meta=meta)
