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

:func:`check_inputs` is the one input check the data-parallel models share:
spec types first (a :class:`~perfmodel.errors.SpecError` naming the argument),
then what the model does not cover (:class:`~perfmodel.errors.Infeasible`,
which a search skips).
"""

from __future__ import annotations

from typing import ClassVar, Protocol, runtime_checkable

from .errors import Infeasible, SpecError
from .result import Estimate
from .specs import Cluster, Config, Profile

__all__ = ["Model", "MODES", "check_inputs"]

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
