"""Physical floors on a step: the bytes the busiest link must carry, and the compute.

Whatever a model assumes about overlap, queues or stragglers, one step of
data-parallel SGD cannot take less than

* the compute of one worker, ``t_forward + t_backward`` of the profile;
* the bytes the busiest link carries in one direction over its line rate.

With a parameter-server architecture (sync or async), each of the N workers
sends its gradient (``model_bytes`` M) and receives the model, split evenly
over K servers at best, so a worker's link carries M each way and a server's
link N M / K each way (full duplex; an uneven split only loads one server
more).  The floor is ``M max(1, N / K) / B``.  With all-reduce, any algorithm
moves at least ``2 (N - 1) M / N`` through each worker's link (Patarasuk and
Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
workstations", JPDC 2009), the ring's cost without latency.

B is the faster of the line rate and the cluster's goodput
(``effective_bandwidth``): the floor must hold whatever efficiency a model
calibrates.  Per-flow caps, latency, header overhead and the server's update
only add time, so they are left out: a floor is a bound, not an estimate.
In async SGD the same floors hold per gradient: a worker's cycle carries M
each way over its link, and the servers' links carry N M / K per round of
N gradients.

These bounds are what ``optimizer.search`` checks every candidate against
(an estimate below them is refused) and what ``tests/test_floors.py``
checks every registered model against.  A job that does not overlap
communication with computation has a higher floor, :func:`serial_floor`:
its transfers start only when its compute ends.
"""

from __future__ import annotations

import numpy as np

from .errors import SpecError
from .specs import Cluster, Config, Profile

__all__ = ["ARCHITECTURES", "link_floor", "compute_floor", "step_floor", "serial_floor",
           "config_floor", "config_floors", "below_floor"]

#: How gradients are exchanged: through parameter servers or by all-reduce.
ARCHITECTURES = ("ps", "allreduce")

#: Relative slack of a comparison: rounding, and a simulator's measured window, which may
#: start while the next step's first transfers are already under way.
_SLACK = 1e-5


def _line_rate(cluster: Cluster) -> float:
    return max(cluster.nic_bandwidth, cluster.effective_bandwidth)


def link_floor(workload: Profile, cluster: Cluster, config: Config, *,
               architecture: str = "ps", model_bytes: float | None = None) -> float:
    """Seconds a step needs at least to move its bytes over the busiest link.

    Parameters
    ----------
    workload : Profile
        ``model_bytes`` M (gradient and model) of one worker machine.
    cluster : Cluster
        ``nic_bandwidth`` (and ``effective_bandwidth``) B of every machine.
    config : Config
        N = ``n_replicas`` workers, K = ``n_ps`` servers.
    architecture : {"ps", "allreduce"}
        Parameter servers (floor ``M max(1, N / K) / B``) or all-reduce
        (``2 (N - 1) M / (N B)``).
    model_bytes : float, optional
        Bytes exchanged per worker, when a model sends fewer than M (e.g.
        compressed gradients).

    Examples
    --------
    >>> from perfmodel.specs import Profile, Cluster, Config
    >>> p = Profile(model_bytes=100e6, t_forward=0.1, t_backward=0.2)
    >>> c = Cluster(machines=32, nic_bandwidth="10Gbps")
    >>> link_floor(p, c, Config(n_replicas=16, n_ps=1))   # 16 x 100 MB into one 1.25 GB/s link
    1.28
    >>> link_floor(p, c, Config(n_replicas=4, n_ps=0), architecture="allreduce")
    0.12
    """
    if architecture not in ARCHITECTURES:
        raise SpecError("architecture", f"must be one of {', '.join(ARCHITECTURES)}, "
                                        f"got {architecture!r}")
    m = workload.model_bytes if model_bytes is None else float(model_bytes)
    n, b = config.n_replicas, _line_rate(cluster)
    if architecture == "allreduce":
        return 2.0 * (n - 1) * m / (n * b)
    if config.n_ps < 1:
        raise SpecError("config.n_ps", "a parameter-server floor needs n_ps >= 1")
    return m * max(1.0, n / config.n_ps) / b


def compute_floor(workload: Profile) -> float:
    """Seconds a step needs at least to compute: ``t_forward + t_backward`` of one worker."""
    return workload.t_forward + workload.t_backward


def step_floor(workload: Profile, cluster: Cluster, config: Config, *,
               architecture: str = "ps", model_bytes: float | None = None) -> float:
    """The larger of :func:`link_floor` and :func:`compute_floor`, seconds per step."""
    return max(link_floor(workload, cluster, config, architecture=architecture,
                          model_bytes=model_bytes), compute_floor(workload))


def serial_floor(workload: Profile, cluster: Cluster, config: Config, *,
                 architecture: str = "ps", model_bytes: float | None = None) -> float:
    """Seconds a step needs at least when it sends only after computing (no overlap).

    A sync step computes, then moves every gradient through the busiest link:
    ``compute_floor + link_floor``.  An async worker's cycle computes, then
    sends its own gradient over its link (``M / B``, the parameter server's
    case), and the servers' links still carry every worker's gradient per
    round: ``max(compute_floor + M / B, link_floor)``.  Models that overlap
    communication with computation (Li et al. 2022, eqs. 6 and 10) may go
    below it; :func:`step_floor` bounds them.

    Examples
    --------
    >>> from perfmodel.specs import Profile, Cluster, Config
    >>> p = Profile(model_bytes=100e6, t_forward=0.1, t_backward=0.2)
    >>> c = Cluster(machines=32, nic_bandwidth="10Gbps")
    >>> serial_floor(p, c, Config(n_replicas=16, n_ps=4))        # 0.3 s + 400 MB at 1.25 GB/s
    0.62
    >>> round(serial_floor(p, c, Config(n_replicas=2, n_ps=4, mode="async")), 6)   # 0.3 + 0.08
    0.38
    """
    links = link_floor(workload, cluster, config, architecture=architecture,
                       model_bytes=model_bytes)
    if config.mode != "async" or architecture == "allreduce":
        return compute_floor(workload) + links
    own = (workload.model_bytes if model_bytes is None else float(model_bytes)) / _line_rate(
        cluster)
    return max(compute_floor(workload) + own, links)


def config_floor(workload, cluster: Cluster, config: Config) -> float:
    """:func:`step_floor` of a data-parallel configuration, its architecture read off it.

    Parameter servers when ``config.n_ps >= 1``, all-reduce otherwise; 0 (no
    floor known) for a workload that is not a :class:`Profile` or a
    model-parallel configuration (``n_workers > 1``), whose traffic these
    bounds do not describe.
    """
    if not isinstance(workload, Profile) or config.n_workers > 1:
        return 0.0
    return step_floor(workload, cluster, config,
                      architecture="ps" if config.n_ps >= 1 else "allreduce")


def config_floors(workload, cluster: Cluster, n_workers, n_replicas, n_ps) -> np.ndarray:
    """:func:`config_floor` of many configurations at once (arrays that broadcast).

    The same arithmetic, element by element, as :func:`config_floor` of each
    ``Config(n_workers, n_replicas, n_ps)``: parameter servers where
    ``n_ps >= 1``, all-reduce elsewhere, 0 where ``n_workers > 1`` or for a
    workload that is not a :class:`Profile`.
    """
    w, n, k = (np.asarray(a, dtype=np.int64) for a in (n_workers, n_replicas, n_ps))
    shape = np.broadcast_shapes(w.shape, n.shape, k.shape)
    if not isinstance(workload, Profile):
        return np.zeros(shape)
    m, b = workload.model_bytes, _line_rate(cluster)
    with np.errstate(divide="ignore", invalid="ignore"):
        ps = m * np.maximum(1.0, n / k) / b
        allreduce = 2.0 * (n - 1) * m / (n * b)
    link = np.where(k >= 1, ps, allreduce)
    return np.broadcast_to(np.where(w > 1, 0.0, np.maximum(link, compute_floor(workload))),
                           shape)


def below_floor(step_time, floor):
    """True when a step time is below a floor by more than rounding (arrays broadcast)."""
    return step_time < floor * (1.0 - _SLACK)
