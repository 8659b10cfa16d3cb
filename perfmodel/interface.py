"""The model contract: what the optimizer, the selection and the CLI ask of a model.

A model is a small frozen object that holds only its options and answers
``estimate(workload, cluster, config) -> Estimate``.  Two class attributes say
where it applies, so that callers can ask instead of trying:

``modes``
    the synchronisation modes (``Config.mode``) it models: ``("sync",)``,
    ``("async",)`` or both;
``uses_parameter_servers``
    whether a configuration needs ``n_ps >= 1`` (all-reduce models: False), so
    a search over configurations knows which server counts to try.

A model may also answer ``estimate_many(workload, cluster, batch) ->
BatchEstimate | None`` (optional, not part of :class:`Model`): the step
times, throughputs and epoch times of a whole :class:`ConfigBatch` of
configurations in one vectorized call, each equal bit for bit to what
``estimate`` gives the configuration alone (the same arithmetic on arrays).
It returns None when it cannot price that batch (e.g. model parallelism, or
options it only prices one by one), and NaN for an entry it cannot price
exactly; the caller then asks ``estimate`` for those, which also reports
every error exactly as before.  :func:`optimizer.search.search` uses it to
screen large grids and then asks ``estimate`` only for the few it keeps.

:func:`check_inputs` is the one input check the data-parallel models share:
spec types first (a :class:`~perfmodel.errors.SpecError` naming the argument),
then what the model does not cover (:class:`~perfmodel.errors.Infeasible`,
which a search skips).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np

from .errors import Infeasible, SpecError
from .result import Estimate
from .specs import Cluster, Config, Profile

__all__ = ["Model", "MODES", "check_inputs", "ConfigBatch", "BatchEstimate"]

#: Synchronisation modes of :attr:`perfmodel.specs.Config.mode`.
MODES = ("sync", "async")


@runtime_checkable
class Model(Protocol):
    """A performance model (structural type: any class with these members is one).

    Attributes
    ----------
    modes : tuple of str
        Synchronisation modes it models (a subset of :data:`MODES`).
    uses_parameter_servers : bool
        Whether its configurations need parameter servers.
    """

    modes: ClassVar[tuple[str, ...]]
    uses_parameter_servers: ClassVar[bool]

    def estimate(self, workload, cluster: Cluster, config: Config) -> Estimate:
        """Step time, throughput and phases of ``config`` for ``workload`` on ``cluster``."""


@dataclass(frozen=True, eq=False)
class ConfigBatch:
    """Many configurations as arrays, for a model's ``estimate_many``.

    Attributes
    ----------
    n_workers, n_replicas, n_ps : ndarray of int64, shape (n,)
        The fields of :class:`~perfmodel.specs.Config`, one entry per configuration.
    mode : str
        ``Config.mode``, shared by the whole batch.
    epoch_samples : int or None
        ``Config.epoch_samples``, shared by the whole batch.
    """

    n_workers: np.ndarray
    n_replicas: np.ndarray
    n_ps: np.ndarray
    mode: str = "sync"
    epoch_samples: int | None = None

    def __post_init__(self):
        arrays = [np.asarray(getattr(self, name), dtype=np.int64)
                  for name in ("n_workers", "n_replicas", "n_ps")]
        if any(a.ndim != 1 or a.shape != arrays[0].shape for a in arrays):
            raise SpecError("batch", "n_workers, n_replicas and n_ps must be 1-d arrays of "
                                     f"one length, got shapes {[a.shape for a in arrays]}")
        for name, a in zip(("n_workers", "n_replicas", "n_ps"), arrays):
            object.__setattr__(self, name, a)

    def __len__(self) -> int:
        return int(self.n_replicas.shape[0])

    @property
    def machines(self) -> np.ndarray:
        """Machines of each configuration (``Config.machines``)."""
        return self.n_workers * self.n_replicas + self.n_ps

    def config(self, i: int) -> Config:
        """Configuration ``i`` as a :class:`~perfmodel.specs.Config`."""
        return Config(n_workers=int(self.n_workers[i]), n_replicas=int(self.n_replicas[i]),
                      n_ps=int(self.n_ps[i]), mode=self.mode, epoch_samples=self.epoch_samples)


@dataclass(frozen=True, eq=False)
class BatchEstimate:
    """What ``estimate_many`` returns: the headline numbers of each configuration.

    Attributes
    ----------
    step_time : ndarray, s
        :attr:`Estimate.step_time <perfmodel.result.Estimate.step_time>` of each;
        NaN where the model leaves a configuration to ``estimate``.
    throughput : ndarray, samples/s
        Its throughput.
    epoch_time : ndarray or None, s
        Its epoch time (None when the batch's ``epoch_samples`` is None).
    """

    step_time: np.ndarray
    throughput: np.ndarray
    epoch_time: np.ndarray | None = None

    @classmethod
    def from_phases(cls, phases, samples_per_step, epoch_samples: int | None) -> BatchEstimate:
        """:meth:`from_step` of the phases summed in their order, as ``Estimate.from_phases``
        sums them (so each step time is the one ``estimate`` gives, bit for bit)."""
        total = 0.0
        for value in phases.values():
            total = total + value
        return cls.from_step(total, samples_per_step, epoch_samples)

    @classmethod
    def from_step(cls, step_time, samples_per_step, epoch_samples: int | None) -> BatchEstimate:
        """Throughput and epoch time from step times, as :meth:`Estimate.from_phases` does."""
        step = np.asarray(step_time, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            throughput = np.where(step > 0, samples_per_step / step, np.inf)
            epoch = None
            if epoch_samples is not None:
                epoch = np.where(throughput > 0, epoch_samples / throughput, np.nan)
        return cls(step, throughput, epoch)


def check_inputs(workload, cluster, config, model: str, *, workload_type: type = Profile,
                 modes: tuple[str, ...] | None = ("sync",), min_servers: int = 0,
                 one_gpu: bool = False) -> None:
    """Check the specs a data-parallel model is given, or raise naming what is wrong.

    Parameters
    ----------
    workload, cluster, config
        The arguments of ``estimate``.
    model : str
        The model's name, for messages.
    workload_type : type
        The workload class expected (:class:`~perfmodel.specs.Profile`).
    modes : tuple of str or None
        Modes the model answers; None: it does not read ``config.mode``.
    min_servers : int
        Fewest parameter servers the model needs (``config.n_ps``).
    one_gpu : bool
        The model prices one accelerator per worker (no intra-machine costs).

    Raises
    ------
    SpecError
        A spec of the wrong type, or too few servers.
    Infeasible
        Model parallelism (``config.n_workers > 1``), a mode the model does not
        answer, or several GPUs per machine for a one-GPU model.
    """
    for name, value, kind in (("workload", workload, workload_type),
                              ("cluster", cluster, Cluster), ("config", config, Config)):
        if not isinstance(value, kind):
            raise SpecError(name, f"expected a {kind.__name__}, got {type(value).__name__}")
    if config.n_workers > 1:
        raise Infeasible(f"{model}: data-parallel only: config.n_workers="
                         f"{config.n_workers} workers per replica needs model parallelism "
                         "(use a layer-wise model)")
    if modes is not None and config.mode not in modes:
        raise Infeasible(f"{model}: needs config.mode in {modes}, got {config.mode!r}")
    if config.n_ps < min_servers:
        raise SpecError("config.n_ps", f"{model} needs at least {min_servers} parameter "
                                       f"server{'s' if min_servers > 1 else ''}, "
                                       f"got {config.n_ps}")
    if one_gpu and cluster.gpus_per_machine > 1:
        raise Infeasible(f"{model} models one accelerator per worker; cluster "
                         f"{cluster.name or ''} has gpus_per_machine="
                         f"{cluster.gpus_per_machine} (intra-machine costs not modelled)")
