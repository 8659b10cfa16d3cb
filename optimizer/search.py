"""Model-agnostic search over (workers per replica, replicas, parameter servers).

The layer-wise dynamic program of Yan et al. 2015 (Sec. 5) is
:mod:`optimizer.dp`; this module is the outer loop every model shares:
enumerate the configurations that fit the machine budget, estimate each with
the model, rank them by an objective (:data:`SEARCH_OBJECTIVES`).

Batch pricing
-------------
A model with ``estimate_many`` (:mod:`perfmodel.interface`) prices the
candidates in blocks of arrays: one vectorized call per block instead of one
``estimate`` per configuration.  The search keeps only the candidates that may
still rank in the top ``top`` (and the ones that may be the worst), so its
memory does not grow with the space, and asks ``estimate`` for those alone,
so their phases, bottleneck and meta are the model's own.  The batch numbers
are ``estimate``'s own, bit for bit (the same arithmetic on arrays; the
models' tests check it), and the search applies the same scaling-efficiency
bound, physical floors and objective order, ties to the earlier candidate,
so the answer is the one of the one-by-one loop, which models without
``estimate_many`` (or a batch it declines) still take.  An entry the model
could not price (NaN) goes through ``estimate``.

Objectives
----------
``throughput``
    Maximize samples/s of the job.
``time``
    Minimize the time to train a fixed amount of data (epoch time, or time per
    sample when the epoch size is unknown).  For a fixed workload this ranks
    like ``throughput``; ties go to the configuration using fewer machines.
``cost``
    Minimize machine-seconds per sample: machines used / throughput.  A
    scheduler sizing a job on a shared cluster wants this one.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from perfmodel._callable import make_callable
from perfmodel.errors import Infeasible, SpecError
from perfmodel.floors import below_floor, config_floor, config_floors
from perfmodel.interface import BatchEstimate, ConfigBatch
from perfmodel.result import Estimate
from perfmodel.specs import Cluster, Config

from .results import Candidate, SearchResult

__all__ = ["SEARCH_OBJECTIVES", "OBJECTIVES", "Candidate", "SearchResult", "candidate_configs",
           "search", "objective_value"]

#: Objectives of :func:`search` (module docstring).
SEARCH_OBJECTIVES = ("throughput", "time", "cost")
#: Backward-compatible alias of :data:`SEARCH_OBJECTIVES` (also ``optimizer.OBJECTIVES``).
OBJECTIVES = SEARCH_OBJECTIVES


def objective_value(objective: str, estimate: Estimate, config: Config) -> tuple:
    """Sort key of an estimate under ``objective``: smaller is better."""
    if estimate.throughput <= 0:
        return (float("inf"), config.machines)
    if objective == "throughput":
        return (-estimate.throughput, config.machines)
    if objective == "time":
        per_sample = 1.0 / estimate.throughput
        return (estimate.epoch_time if estimate.epoch_time is not None else per_sample,
                config.machines)
    if objective == "cost":
        return (config.machines / estimate.throughput, -estimate.throughput)
    raise SpecError("objective", f"must be one of {', '.join(SEARCH_OBJECTIVES)}; got {objective!r}")


def candidate_configs(machines: int, *, servers: str = "ps", max_workers_per_replica: int = 1,
                      servers_capped_by_workers: bool = False, epoch_samples: int | None = None,
                      mode: str = "sync") -> Iterator[Config]:
    """Configurations that fit ``machines``.

    With ``servers="ps"`` every (replicas K, servers S) with
    ``n_workers * K + S <= machines``.  ``servers_capped_by_workers=True`` also
    requires S <= K: a model sets it when more servers than workers provably
    never help it (in the coarse PS models each worker's NIC still carries the
    whole model, so the downlink is at least M/B whatever S is).  With
    ``servers="none"`` (all-reduce) S = 0.
    """
    for batch, _ in _candidate_blocks(machines, servers=servers, epoch_samples=epoch_samples,
                                      servers_capped_by_workers=servers_capped_by_workers,
                                      max_workers_per_replica=max_workers_per_replica,
                                      mode=mode):
        for i in range(len(batch)):
            yield batch.config(i)


def search(model: Any, workload: Any, cluster: Cluster, *, machines: int | None = None,
           objective: str = "throughput", configs: Iterable[Config] | None = None,
           top: int = 5, servers: str | None = None, epoch_samples: int | None = None,
           min_efficiency: float | None = None, per_machines: bool = False,
           progress: Callable[[int], None] | None = None, _batch: bool = True) -> SearchResult:
    """Evaluate every candidate configuration with ``model`` and rank them.

    Parameters
    ----------
    model : object with ``estimate(workload, cluster, config) -> Estimate``
        When it also has ``estimate_many`` (:mod:`perfmodel.interface`), blocks
        of candidates are priced in one call each (module notes); the answer
        is the same.
    workload : Profile or DNN
    cluster : Cluster
    machines : int, optional
        Machine budget (default: ``cluster.machines``).
    objective : {"throughput", "time", "cost"}
    configs : iterable of Config, optional
        Candidates to evaluate instead of :func:`candidate_configs`.
    top : int
        How many ranked candidates to keep (only these, and the worst, are
        held in memory with their estimates).
    servers : {"ps", "none"}, optional
        Whether configurations have parameter servers; by default read from the
        model's ``uses_parameter_servers`` attribute (True if absent).
    min_efficiency : float in (0, 1], optional
        Keep only configurations whose scaling efficiency -- throughput over
        (workers x the throughput of one worker with one server) -- reaches it:
        a scheduler's "do not waste more than 1 - e of the machines".
    per_machines : bool
        Rank the best candidate of each machine count instead of the ``top``
        overall (``top`` is then not used): what a cluster scheduler sharing
        machines among jobs needs (:func:`optimizer.allocate.throughput_curve`),
        holding one candidate per count rather than all of them.
    progress : callable, optional
        Called with the number of configurations evaluated so far.

    Returns
    -------
    SearchResult
        ``n_evaluated`` counts every candidate; ``meta["worst"]`` is the worst
        feasible candidate, so the spread of the space is known;
        ``meta["below_floor"]`` lists the candidates refused
        because the model's step time was below the physical floor of
        :mod:`perfmodel.floors` (bytes over the busiest link, or the compute):
        a model that promises what the hardware cannot carry is not answered.

    Raises
    ------
    Infeasible
        When no candidate fits the budget or the model rejects every one.
    """
    objective_value(objective, Estimate(1.0, 1.0), Config())  # validates the name early
    if top < 1:
        raise SpecError("top", f"must be >= 1, got {top!r}")
    machines = cluster.machines if machines is None else machines
    if machines > cluster.machines:
        raise SpecError("machines", f"{machines} exceeds the cluster's {cluster.machines} machines")
    if servers is None:
        servers = "ps" if getattr(model, "uses_parameter_servers", True) else "none"
    if configs is None:
        capped = bool(getattr(model, "servers_capped_by_workers", False))
        blocks = _candidate_blocks(machines, servers=servers, epoch_samples=epoch_samples,
                                   servers_capped_by_workers=capped)
    else:
        blocks = _given_blocks(configs)
    start = time.perf_counter()
    floor = _efficiency_floor(model, workload, cluster, servers, min_efficiency)
    many = getattr(model, "estimate_many", None) if _batch else None
    state = _State(model, workload, cluster, objective, int(top), floor, min_efficiency,
                   bool(per_machines))
    n = 0
    for batch, given in blocks:
        priced = many(workload, cluster, batch) if many is not None and batch is not None \
            else None
        if priced is None:
            for i in range(len(given) if given is not None else len(batch)):
                state.one(n + i, given[i] if given is not None else batch.config(i))
                if progress is not None:
                    progress(n + i + 1)
        else:
            state.block(n, batch, given, priced)
            if progress is not None:
                progress(n + len(batch))
        n += len(given) if given is not None else len(batch)
    return state.result(n, machines, time.perf_counter() - start)


#: Candidates per block priced by one ``estimate_many`` call (bounds the arrays in memory).
_BLOCK = 1 << 15
#: Candidates evaluated one by one between two trims of the kept set.
_FLUSH = 1024


def _candidate_blocks(machines: int, *, servers: str, epoch_samples: int | None,
                      servers_capped_by_workers: bool, max_workers_per_replica: int = 1,
                      mode: str = "sync") -> Iterator[tuple[ConfigBatch, None]]:
    """The configurations of :func:`candidate_configs`, in its order, as ConfigBatch
    blocks of about ``_BLOCK``."""
    if machines < 1:
        raise SpecError("machines", f"must be >= 1, got {machines!r}")
    groups: list = []   # (n_workers, n_replicas, servers from 1 (or 0), count)
    size = 0

    def flush():
        w = np.concatenate([np.full(g[3], g[0], dtype=np.int64) for g in groups])
        k = np.concatenate([np.full(g[3], g[1], dtype=np.int64) for g in groups])
        s = np.concatenate([np.arange(g[2], g[2] + g[3], dtype=np.int64) for g in groups])
        return ConfigBatch(w, k, s, mode=mode, epoch_samples=epoch_samples), None

    for n_workers in range(1, max_workers_per_replica + 1):
        for n_replicas in range(1, machines // n_workers + 1):
            used = n_workers * n_replicas
            if servers == "none":
                group = (n_workers, n_replicas, 0, 1)
            else:
                cap = (min(n_replicas, machines - used) if servers_capped_by_workers
                       else machines - used)
                if cap < 1:
                    continue
                group = (n_workers, n_replicas, 1, cap)
            groups.append(group)
            size += group[3]
            if size >= _BLOCK:
                yield flush()
                groups, size = [], 0
    if groups:
        yield flush()


def _given_blocks(configs: Iterable[Config]) -> Iterator[tuple[ConfigBatch | None, list]]:
    """The caller's configurations in blocks; a ConfigBatch when a block shares mode and
    epoch size (else None: they go one by one)."""
    it = iter(configs)
    while True:
        block = list(itertools.islice(it, _BLOCK))
        if not block:
            return
        batch = None
        if all(isinstance(c, Config) for c in block) and \
                len({(c.mode, c.epoch_samples) for c in block}) == 1:
            batch = ConfigBatch(np.array([c.n_workers for c in block], dtype=np.int64),
                                np.array([c.n_replicas for c in block], dtype=np.int64),
                                np.array([c.n_ps for c in block], dtype=np.int64),
                                mode=block[0].mode, epoch_samples=block[0].epoch_samples)
        yield batch, block


def _keys(objective: str, priced: BatchEstimate, batch: ConfigBatch) -> tuple:
    """:func:`objective_value` of every configuration of a batch: (primary, secondary)."""
    thr, machines = priced.throughput, batch.machines.astype(float)
    good = thr > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        if objective == "throughput":
            primary, secondary = -thr, machines
        elif objective == "time":
            primary = priced.epoch_time if priced.epoch_time is not None else 1.0 / thr
            secondary = machines
        else:
            primary, secondary = machines / thr, -thr
    return (np.where(good, primary, np.inf).astype(float),
            np.where(good, secondary, machines).astype(float))


def _kept_best(p: np.ndarray, s: np.ndarray, idx: np.ndarray, k: int) -> np.ndarray:
    """Mask of the first k candidates in the order of the sort: (primary, secondary, index)."""
    if len(p) <= k:
        return np.ones(len(p), dtype=bool)
    rough = np.partition(p, k - 1)[k - 1]
    pool = np.flatnonzero(p <= rough)
    keep = np.zeros(len(p), dtype=bool)
    keep[pool[np.lexsort((idx[pool], s[pool], p[pool]))[:k]]] = True
    return keep


def _kept_per_group(p: np.ndarray, s: np.ndarray, idx: np.ndarray,
                    group: np.ndarray) -> np.ndarray:
    """Mask of the first candidate of each group in the order of the sort."""
    keep = np.zeros(len(p), dtype=bool)
    if len(p):
        order = np.lexsort((idx, s, p, group))
        first = np.ones(len(order), dtype=bool)
        first[1:] = group[order][1:] != group[order][:-1]
        keep[order[first]] = True
    return keep


def _kept_worst(p: np.ndarray, s: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Mask of the last candidate in the order of the sort (the worst)."""
    keep = np.zeros(len(p), dtype=bool)
    if len(p):
        keep[np.lexsort((idx, s, p))[-1]] = True
    return keep


class _State:
    """What a search keeps: the candidates that may still rank (or be the worst), with
    their configurations and the estimates already made, the refusals, the first reason."""

    def __init__(self, model, workload, cluster, objective, top, floor, min_efficiency,
                 per_machines=False):
        self.model, self.workload, self.cluster = model, workload, cluster
        self.objective, self.top, self.per_machines = objective, top, per_machines
        self.floor, self.min_efficiency = floor, min_efficiency
        empty = np.empty(0)
        self.best = (np.empty(0, dtype=np.int64), empty, empty, np.empty(0, dtype=np.int64))
        self.worst = (np.empty(0, dtype=np.int64), empty, empty, np.empty(0, dtype=np.int64))
        self.configs: dict = {}     # index -> Config of a kept candidate
        self.estimates: dict = {}   # index -> Estimate already made
        self.pending: list = []     # (index, primary, secondary, machines) of one-by-one ones
        self.refused: list = []     # (index, refusal)
        self.reason: tuple | None = None   # (index, text) of the first rejection
        self.scored = 0

    def _reject(self, index: int, text: str) -> None:
        if self.reason is None or index < self.reason[0]:
            self.reason = (index, text)

    def one(self, index: int, config: Config) -> None:
        """Price one configuration through ``estimate`` (the reference path)."""
        try:
            est = self.model.estimate(self.workload, self.cluster, config)
        except Infeasible as err:
            self._reject(index, str(err))
            return
        workers = config.n_workers * config.n_replicas
        if est.throughput < self.floor * workers:
            self._reject(index, f"scaling efficiency below {self.min_efficiency}")
            return
        physical = config_floor(self.workload, self.cluster, config)
        if below_floor(est.step_time, physical):
            refusal = _refusal(config, est, physical)
            self.refused.append((index, refusal))
            self._reject(index, refusal["why"])
            return
        key = objective_value(self.objective, est, config)
        self.configs[index], self.estimates[index] = config, est
        self.pending.append((index, key[0], key[1], config.machines))
        self.scored += 1
        if len(self.pending) >= max(_FLUSH, 4 * min(self.top, 1 << 20)):
            self._merge(None, None)

    def block(self, offset: int, batch: ConfigBatch, given: list | None,
              priced: BatchEstimate) -> None:
        """Rank a batch priced by ``estimate_many``; entries it could not price (NaN or
        infinite), ``estimate`` prices one by one."""
        step, thr = (np.asarray(a, dtype=float) for a in (priced.step_time, priced.throughput))
        with np.errstate(invalid="ignore", over="ignore"):
            unsure = ~(np.isfinite(step) & (step >= 0) & np.isfinite(thr) & (thr >= 0))
            if priced.epoch_time is not None:
                unsure |= ~(np.isfinite(priced.epoch_time) | (thr <= 0))
            efficient = np.ones(len(batch), dtype=bool)
            if self.floor > 0:
                efficient = ~(thr < self.floor * (batch.n_workers * batch.n_replicas))
            physical = config_floors(self.workload, self.cluster, batch.n_workers,
                                     batch.n_replicas, batch.n_ps)
            low = below_floor(step, physical)
        for i in np.flatnonzero(unsure):
            self.one(offset + int(i), given[i] if given is not None else batch.config(int(i)))
        sure = ~unsure
        wasteful = np.flatnonzero(sure & ~efficient)
        if len(wasteful):
            self._reject(offset + int(wasteful[0]),
                         f"scaling efficiency below {self.min_efficiency}")
        for i in np.flatnonzero(sure & efficient & low):
            config = given[i] if given is not None else batch.config(int(i))
            refusal = _refusal(config, Estimate(float(step[i]), float(thr[i])),
                               float(physical[i]))
            self.refused.append((offset + int(i), refusal))
            self._reject(offset + int(i), refusal["why"])
        ok = np.flatnonzero(sure & efficient & ~low)
        if len(ok) == 0:
            return
        self.scored += len(ok)
        primary, secondary = _keys(self.objective, priced, batch)
        new = (ok + offset, primary[ok], secondary[ok], batch.machines[ok])
        self._merge(new, lambda j: given[j - offset] if given is not None
                    else batch.config(j - offset))

    def _merge(self, new, config_of) -> None:
        """Fold new keys (and the pending one-by-one keys) into the kept sets."""
        parts = [new] if new is not None else []
        if self.pending:
            idx, p, s, g = zip(*self.pending)
            parts.append((np.array(idx, dtype=np.int64), np.array(p, dtype=float),
                          np.array(s, dtype=float), np.array(g, dtype=np.int64)))
            self.pending = []
        if not parts:
            return
        idx, p, s, g = (np.concatenate([self.best[j], *(q[j] for q in parts)])
                        for j in range(4))
        keep = (_kept_per_group(p, s, idx, g) if self.per_machines
                else _kept_best(p, s, idx, self.top))
        self.best = (idx[keep], p[keep], s[keep], g[keep])
        idx, p, s, g = (np.concatenate([self.worst[j], *(q[j] for q in parts)])
                        for j in range(4))
        keep = _kept_worst(p, s, idx)
        self.worst = (idx[keep], p[keep], s[keep], g[keep])
        alive = set(self.best[0].tolist()) | set(self.worst[0].tolist())
        for j in alive - self.configs.keys():
            self.configs[j] = config_of(j)
        self.configs = {j: c for j, c in self.configs.items() if j in alive}
        self.estimates = {j: e for j, e in self.estimates.items() if j in alive}

    def _candidates(self, indices) -> list:
        """Candidates of the kept indices, with exact keys, in (key, index) order."""
        out = []
        for j in sorted(int(i) for i in indices):
            config = self.configs[j]
            est = self.estimates.get(j)
            if est is None:
                est = self.estimates[j] = self.model.estimate(self.workload, self.cluster,
                                                              config)
            key = objective_value(self.objective, est, config)
            out.append((key, j, Candidate(config, est, key[0])))
        out.sort(key=lambda t: (t[0], t[1]))
        return out

    def result(self, n: int, machines: int, seconds: float) -> SearchResult:
        self._merge(None, None)
        if not self.scored:
            why = f": {self.reason[1]}" if self.reason else ""
            raise Infeasible(f"no configuration fits {machines} machines{why}")
        ranked = [c for _, _, c in self._candidates(self.best[0])]
        if not self.per_machines:
            ranked = ranked[:self.top]
        worst = self._candidates(self.worst[0])[-1][2]
        self.refused.sort(key=lambda t: t[0])
        return SearchResult(best=ranked[0], ranked=tuple(ranked), n_evaluated=n,
                            seconds=seconds, objective=self.objective,
                            meta={"worst": worst, "below_floor": [r for _, r in self.refused]})


def _refusal(config: Config, est: Estimate, floor: float) -> dict:
    """Why a candidate is refused: its step time is below what the hardware allows."""
    return {"n_replicas": config.n_replicas, "n_ps": config.n_ps, "step_time": est.step_time,
            "floor": floor,
            "why": f"{config.n_replicas} workers x {config.n_ps} servers: the model's step of "
                   f"{est.step_time:.4g} s is below the physical floor of {floor:.4g} s "
                   f"(bytes over the busiest link, or the compute)"}


def _efficiency_floor(model, workload, cluster: Cluster, servers: str,
                      min_efficiency: float | None) -> float:
    """Throughput per worker a configuration must reach (0 without a constraint)."""
    if min_efficiency is None:
        return 0.0
    if not (isinstance(min_efficiency, (int, float)) and 0 < min_efficiency <= 1):
        raise SpecError("min_efficiency", f"must be in (0, 1], got {min_efficiency!r}")
    single = Config(n_replicas=1, n_ps=1 if servers == "ps" else 0)
    return min_efficiency * model.estimate(workload, cluster, single).throughput


make_callable(__name__, search)   # optimizer.search(...) is search(...): see perfmodel._callable
