"""Model-agnostic search over (workers per replica, replicas, parameter servers).

The layer-wise dynamic program of Yan et al. 2015 (Sec. 5) is
:mod:`optimizer.dp`; this module is the outer loop every model shares:
enumerate the configurations that fit the machine budget, estimate each with
the model, rank them by an objective (:data:`SEARCH_OBJECTIVES`).

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

import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from perfmodel.errors import Infeasible, SpecError
from perfmodel.floors import below_floor, config_floor
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
    if machines < 1:
        raise SpecError("machines", f"must be >= 1, got {machines!r}")
    for n_workers in range(1, max_workers_per_replica + 1):
        for n_replicas in range(1, machines // n_workers + 1):
            used = n_workers * n_replicas
            if servers == "none":
                yield Config(n_workers=n_workers, n_replicas=n_replicas, n_ps=0,
                             mode=mode, epoch_samples=epoch_samples)
                continue
            cap = min(n_replicas, machines - used) if servers_capped_by_workers else machines - used
            for n_ps in range(1, cap + 1):
                yield Config(n_workers=n_workers, n_replicas=n_replicas, n_ps=n_ps,
                             mode=mode, epoch_samples=epoch_samples)


def search(model: Any, workload: Any, cluster: Cluster, *, machines: int | None = None,
           objective: str = "throughput", configs: Iterable[Config] | None = None,
           top: int = 5, servers: str | None = None, epoch_samples: int | None = None,
           min_efficiency: float | None = None,
           progress: Callable[[int], None] | None = None) -> SearchResult:
    """Evaluate every candidate configuration with ``model`` and rank them.

    Parameters
    ----------
    model : object with ``estimate(workload, cluster, config) -> Estimate``
    workload : Profile or DNN
    cluster : Cluster
    machines : int, optional
        Machine budget (default: ``cluster.machines``).
    objective : {"throughput", "time", "cost"}
    configs : iterable of Config, optional
        Candidates to evaluate instead of :func:`candidate_configs`.
    top : int
        How many ranked candidates to keep.
    servers : {"ps", "none"}, optional
        Whether configurations have parameter servers; by default read from the
        model's ``uses_parameter_servers`` attribute (True if absent).
    min_efficiency : float in (0, 1], optional
        Keep only configurations whose scaling efficiency -- throughput over
        (workers x the throughput of one worker with one server) -- reaches it:
        a scheduler's "do not waste more than 1 - e of the machines".
    progress : callable, optional
        Called with the number of configurations evaluated so far.

    Returns
    -------
    SearchResult
        ``meta["worst"]`` is the worst feasible candidate, so the spread of the
        space is known; ``meta["below_floor"]`` lists the candidates refused
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
        configs = candidate_configs(machines, servers=servers, epoch_samples=epoch_samples,
                                    servers_capped_by_workers=capped)
    start = time.perf_counter()
    floor = _efficiency_floor(model, workload, cluster, servers, min_efficiency)
    scored, n, reasons, refused = [], 0, [], []
    for config in configs:
        n += 1
        if progress is not None:
            progress(n)
        try:
            est = model.estimate(workload, cluster, config)
        except Infeasible as err:
            reasons.append(str(err))
            continue
        workers = config.n_workers * config.n_replicas
        if est.throughput < floor * workers:
            reasons.append(f"scaling efficiency below {min_efficiency}")
            continue
        physical = config_floor(workload, cluster, config)
        if below_floor(est.step_time, physical):
            refused.append(_refusal(config, est, physical))
            reasons.append(refused[-1]["why"])
            continue
        scored.append(Candidate(config, est, objective_value(objective, est, config)[0]))
    seconds = time.perf_counter() - start
    if not scored:
        why = f": {reasons[0]}" if reasons else ""
        raise Infeasible(f"no configuration fits {machines} machines{why}")
    scored.sort(key=lambda c: objective_value(objective, c.estimate, c.config))
    return SearchResult(best=scored[0], ranked=tuple(scored[:top]), n_evaluated=n,
                        seconds=seconds, objective=objective,
                        meta={"worst": scored[-1], "below_floor": refused})


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
