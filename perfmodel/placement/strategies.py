"""Job placement strategies of Jain, Kumar, Mao: colocated, random, strided, clustered.

A *job* is one parameter server (PS) and its W workers (Sec. 4.3);
J jobs run concurrently.  A :class:`Placement` maps every PS and worker of
every job to a distinct host of a :class:`~perfmodel.placement.topology.Topology`.

The four strategies, as Sec. 4.3 defines them (R racks of H hosts):

* ``colocated`` -- best case: each job runs in its own dedicated rack, so no
  traffic crosses the top switch.  When a job does not fit in one rack
  (W + 1 > H) it gets ``ceil((W + 1) / H)`` consecutive dedicated racks (our
  extension); job j's PS is the first host of its first rack.
* ``random`` -- the status quo: the J (W + 1) nodes are distinct hosts drawn
  uniformly at random (seeded); each job's first drawn host is its PS.
* ``strided`` -- every PS on a separate rack (PS j on rack j), and every worker
  on a rack other than its PS's: worker i of job j goes to rack ``(j + 1 + i)
  mod R``, skipping its PS's rack (and full racks).  All traffic crosses the
  top switch, but with R = J = W + 1 (the paper's 8 x 8) every rack holds one
  PS and one worker of each other job, so no rack sees more traffic than
  another.  With J > R the PSs go round-robin over the racks (our extension).
* ``clustered`` -- worst case: as strided, except that all PSs are in the same
  rack (rack 0, hosts 0 ... J-1) and no worker is in that rack; all traffic
  crosses the link between the top switch and rack 0.

Placements that do not fit the topology raise :class:`~perfmodel.errors.Infeasible`.
Placement by name, including our optimizer's ``"optimized"``, is
:func:`perfmodel.placement.place.place`: this module holds the strategies only,
so that the optimizer can import :class:`Placement` from it without a cycle.

Examples
--------
>>> from perfmodel.placement.topology import paper_racks
>>> topo = paper_racks()
>>> p = strided(topo, jobs=8, workers=7)
>>> p.ps[:3], [int(topo.rack_of[w]) for w in p.workers[0]]
((0, 8, 16), [1, 2, 3, 4, 5, 6, 7])
>>> [int(topo.rack_of[h]) for h in clustered(topo, 8, 7).ps]
[0, 0, 0, 0, 0, 0, 0, 0]

References
----------
Jain, Kumar, Mao, "Characterizing Distributed Deep Learning Training Performance
in Datacenters": Sec. 4.3 and Figs. 3-5 (colocated, strided, clustered);
Sec. 4.4 (8 jobs of 1 PS + 7 workers on 8 racks x 8 hosts).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import _validate as _v
from ..errors import Infeasible, SpecError
from .topology import Topology

__all__ = ["Placement", "STRATEGIES", "colocated", "random_placement", "strided", "clustered",
           "checked_sizes"]

#: The placement strategies of Jain, Kumar, Mao, best case first (Sec. 4.3).
STRATEGIES = ("colocated", "random", "strided", "clustered")


@dataclass(frozen=True)
class Placement:
    """Hosts of every job: one parameter server and its workers.

    Parameters
    ----------
    ps : tuple of int
        Host index of each job's parameter server.
    workers : tuple of tuple of int
        Host indices of each job's workers (at least one per job).
    strategy : str
        Name of the strategy that produced it (report label).

    Raises
    ------
    SpecError
        Lengths differ, a job without workers, a negative index, or a host
        used twice.
    """

    ps: tuple
    workers: tuple
    strategy: str = ""

    def __post_init__(self):
        ps = tuple(_v.integer(f"ps[{j}]", h) for j, h in enumerate(self.ps))
        if not ps:
            raise SpecError("ps", "a placement needs at least one job")
        if len(self.workers) != len(ps):
            raise SpecError("workers", f"needs one list per job ({len(ps)}), "
                                       f"got {len(self.workers)}")
        ws = []
        for j, group in enumerate(self.workers):
            g = tuple(_v.integer(f"workers[{j}][{i}]", h) for i, h in enumerate(group))
            if not g:
                raise SpecError(f"workers[{j}]", "a job needs at least one worker")
            ws.append(g)
        used = list(ps) + [h for g in ws for h in g]
        if len(set(used)) != len(used):
            dup = next(h for h in used if used.count(h) > 1)
            raise SpecError("workers", f"host {dup} is used twice")
        object.__setattr__(self, "ps", ps)
        object.__setattr__(self, "workers", tuple(ws))

    @property
    def n_jobs(self) -> int:
        """Number of jobs J."""
        return len(self.ps)

    def hosts(self) -> np.ndarray:
        """Every host used (PSs first, then workers job by job)."""
        return np.array(list(self.ps) + [h for g in self.workers for h in g], dtype=int)

    def flows(self) -> list[tuple[int, int, int, int]]:
        """Flows of one iteration: ``(job, worker_slot, src, dst)``, model pulls then gradient pushes.

        Slot ``i`` of job ``j`` pulls the model ``ps[j] -> workers[j][i]`` and
        pushes its gradients ``workers[j][i] -> ps[j]`` (Jain, Kumar, Mao,
        Sec. 4.2 steps 1 and 3).
        """
        down = [(j, i, self.ps[j], w) for j in range(self.n_jobs)
                for i, w in enumerate(self.workers[j])]
        up = [(j, i, w, self.ps[j]) for j in range(self.n_jobs)
              for i, w in enumerate(self.workers[j])]
        return down + up

    def check(self, topology: Topology) -> Placement:
        """Return self if every host index exists in ``topology``, else SpecError."""
        top = int(self.hosts().max())
        if top >= topology.n_hosts:
            raise SpecError("placement", f"host index {top} does not exist in "
                                         f"{topology.name!r} ({topology.n_hosts} hosts)")
        return self

    def layout(self, topology: Topology) -> str:
        """One line per rack: ``P{j}`` for job j's PS, ``w{j}`` for its workers, ``.`` free."""
        self.check(topology)
        label = {}
        for j, h in enumerate(self.ps):
            label[h] = f"P{j}"
        for j, g in enumerate(self.workers):
            for h in g:
                label[h] = f"w{j}"
        width = max(len(v) for v in label.values())
        lines = []
        for r in range(topology.n_racks):
            cells = [label.get(int(h), ".").rjust(width) for h in topology.rack_hosts(r)]
            lines.append(f"rack {r}: " + " ".join(cells))
        return "\n".join(lines)


def checked_sizes(topology: Topology, jobs, workers) -> tuple[int, int]:
    """``(jobs, workers)`` as ints once they fit ``topology``: the check every placer shares.

    Raises
    ------
    SpecError
        ``topology`` is not a Topology, or ``jobs`` or ``workers`` is not an int >= 1.
    Infeasible
        The ``jobs (workers + 1)`` nodes need more hosts than the topology has.
    """
    if not isinstance(topology, Topology):
        raise SpecError("topology", f"expected a Topology, got {type(topology).__name__}")
    jobs = _v.integer("jobs", jobs, minimum=1)
    workers = _v.integer("workers", workers, minimum=1)
    need = jobs * (workers + 1)
    if need > topology.n_hosts:
        raise Infeasible(f"{jobs} jobs x (1 PS + {workers} workers) need {need} hosts; "
                         f"{topology.name!r} has {topology.n_hosts}")
    return jobs, workers


def colocated(topology: Topology, jobs: int, workers: int) -> Placement:
    """Each job in its own dedicated rack(s): the best case of Jain, Kumar, Mao (Fig. 3).

    Parameters
    ----------
    topology : Topology
    jobs : int
        J jobs (>= 1).
    workers : int
        W workers per job (>= 1); each job also has one PS.

    Returns
    -------
    Placement
        Job j on the first ``W + 1`` hosts of rack j (of racks ``j n ... j n +
        n - 1`` when a job needs ``n > 1`` racks); its PS on the first one.

    Raises
    ------
    Infeasible
        Fewer racks than jobs need.

    References
    ----------
    Jain, Kumar, Mao, Sec. 4.3 (1) and Fig. 3.
    """
    jobs, workers = checked_sizes(topology, jobs, workers)
    racks = [topology.rack_hosts(r) for r in range(topology.n_racks)]
    ps, ws = [], []
    start = 0
    for _ in range(jobs):
        # consecutive dedicated racks until the job fits
        hosts: list[int] = []
        r = start
        while len(hosts) < workers + 1:
            if r >= len(racks):
                raise Infeasible(f"colocated: {jobs} jobs of {workers + 1} nodes need "
                                 f"dedicated racks; {topology.name!r} has {len(racks)} racks "
                                 f"of sizes {sorted({len(x) for x in racks})}")
            hosts += [int(h) for h in racks[r]]
            r += 1
        start = r
        ps.append(hosts[0])
        ws.append(tuple(hosts[1:workers + 1]))
    return Placement(tuple(ps), tuple(ws), "colocated")


def random_placement(topology: Topology, jobs: int, workers: int, seed=0) -> Placement:
    """Distinct hosts drawn uniformly at random: the status quo (Jain, Kumar, Mao, Sec. 4.3).

    Parameters
    ----------
    topology : Topology
    jobs, workers : int
        J jobs of one PS and W workers.
    seed : int or numpy.random.Generator
        Randomness (explicit; same seed, same placement).

    Returns
    -------
    Placement
        A uniformly random injective map of the ``J (W + 1)`` nodes to hosts;
        the first host drawn for each job is its PS.

    References
    ----------
    Jain, Kumar, Mao, Sec. 4.3 (2).
    """
    jobs, workers = checked_sizes(topology, jobs, workers)
    rng = _v.generator(seed)
    hosts = rng.permutation(topology.n_hosts)[: jobs * (workers + 1)]
    chunks = hosts.reshape(jobs, workers + 1)
    return Placement(tuple(int(c[0]) for c in chunks),
                     tuple(tuple(int(h) for h in c[1:]) for c in chunks), "random")


def _fill(topology: Topology, ps: list[int], workers: int, start_rack, forbidden,
          strategy: str) -> Placement:
    n_racks = topology.n_racks
    used = set(ps)
    free = {r: [int(h) for h in topology.rack_hosts(r) if int(h) not in used]
            for r in range(n_racks)}
    ws = []
    for j in range(len(ps)):
        group = []
        r = start_rack(j)
        for i in range(workers):
            for step in range(n_racks):
                rack = (r + step) % n_racks
                if rack not in forbidden(j) and free[rack]:
                    break
            else:
                raise Infeasible(f"{strategy}: no free host left for worker {i} of job {j} "
                                 f"outside the forbidden racks on {topology.name!r}")
            group.append(free[rack].pop(0))
            r = rack + 1
        ws.append(tuple(group))
    return Placement(tuple(ps), tuple(ws), strategy)


def strided(topology: Topology, jobs: int, workers: int) -> Placement:
    """PSs on separate racks, each worker off its PS's rack (Jain, Kumar, Mao, Fig. 4).

    PS j is the first free host of rack ``j mod R``; worker i of job j takes
    the first free host of rack ``(j + 1 + i) mod R``, skipping job j's PS rack
    and racks already full (then continuing the stride from there).

    Raises
    ------
    Infeasible
        The topology has one rack, or no free host is left outside a PS's rack.

    References
    ----------
    Jain, Kumar, Mao, Sec. 4.3 (3) and Fig. 4.
    """
    jobs, workers = checked_sizes(topology, jobs, workers)
    n_racks = topology.n_racks
    if n_racks < 2:
        raise Infeasible(f"strided: needs at least two racks, {topology.name!r} has one")
    slots = {r: [int(h) for h in topology.rack_hosts(r)] for r in range(n_racks)}
    ps = []
    for j in range(jobs):
        r = j % n_racks
        if not slots[r]:
            raise Infeasible(f"strided: rack {r} has no free host for the PS of job {j}")
        ps.append(slots[r].pop(0))
    ps_rack = [int(topology.rack_of[h]) for h in ps]
    return _fill(topology, ps, workers, lambda j: ps_rack[j] + 1,
                 lambda j: {ps_rack[j]}, "strided")


def clustered(topology: Topology, jobs: int, workers: int) -> Placement:
    """All PSs in one rack, workers elsewhere: the worst case of Jain, Kumar, Mao (Fig. 5).

    PS j is host j of rack 0; worker i of job j takes the first free host of
    the racks ``1 ... R-1`` in stride order starting at rack ``1 + (j + i) mod
    (R - 1)`` (as in :func:`strided`, with rack 0 excluded).

    Raises
    ------
    Infeasible
        One rack only, rack 0 smaller than J, or no free host left outside rack 0.

    References
    ----------
    Jain, Kumar, Mao, Sec. 4.3 (4) and Fig. 5.
    """
    jobs, workers = checked_sizes(topology, jobs, workers)
    n_racks = topology.n_racks
    if n_racks < 2:
        raise Infeasible(f"clustered: needs at least two racks, {topology.name!r} has one")
    rack0 = topology.rack_hosts(0)
    if len(rack0) < jobs:
        raise Infeasible(f"clustered: rack 0 has {len(rack0)} hosts for {jobs} parameter servers")
    ps = [int(h) for h in rack0[:jobs]]
    return _fill(topology, ps, workers, lambda j: 1 + j % (n_racks - 1), lambda j: {0},
                 "clustered")

