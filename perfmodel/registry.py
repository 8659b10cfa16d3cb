"""The one list of models: name, class, options, modes, and the variants fitting compares.

Every part of the toolkit that offers a choice of models reads this list: the
CLI's ``--model`` choices and flags, sweeps, the model selection's candidates,
the validation matrix and the DL2 report.  Adding a model means: its module,
one :class:`ModelEntry` here, its tests and a row of "Which model when" (README
and docs/models.md).

An entry names its class by ``"module:Class"`` and the class is imported only
when asked for (:func:`model_class`, :func:`make`), so reading the list costs
nothing and this core module imports no model (the models import the core).

A :class:`Variant` is a named configuration of a model (``sync-ps`` is
``SyncCoarse(sharing="ps")``) that calibration may fit and the selection may
choose.  The variant states what it represents (which link queues, whether
async workers stay in lock-step), which tunables it fits, and in which
candidate sets it takes part:

``"selection"``
    the default candidates of :func:`perfmodel.fit.selection.select_model`;
``"matrix"``
    also compared in the validation matrix's packet-level (ns-3) regimes;
``"dl2"``
    compared on the real MXNet measurements (DL2).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import import_module
from types import MappingProxyType
from typing import Any

from .errors import SpecError

__all__ = ["FAMILIES", "CANDIDATE_SETS", "Variant", "ModelEntry", "MODELS", "model_names",
           "entry", "model_class", "make", "name_of", "variants"]

#: Model families, simplest first (the selection's tie-break order).
FAMILIES = ("closed form", "queueing", "simulation")

#: The candidate sets a variant may take part in (see the module docstring).
CANDIDATE_SETS = ("selection", "matrix", "dl2")


@dataclass(frozen=True)
class Variant:
    """A named configuration of a registered model, as a candidate of fitting.

    Attributes
    ----------
    name : str
        Short name shown in reports (``"sync-ps"``).
    options : mapping
        Options of the model class fixed by the variant.
    tunables : tuple of str
        Cluster fields or model options it may fit, preferred first (a fit on
        n points frees the first n).  ``timeout_probability`` is added by the
        fit on a lossy link, not listed here.
    links : tuple of str
        Link queues whose sharing it represents (``"fair"``, ``"fifo"``);
        empty: it does not share the server's link between workers at all.
    exact_links : tuple of str
        Link queues it replays exactly rather than approximates.
    lockstep : bool or None
        Async workers: True, valid only in lock-step; False, only when they
        drift apart; None: either.
    overlap : tuple of bool
        The overlap settings it can represent.
    sets : tuple of str
        Candidate sets it takes part in (:data:`CANDIDATE_SETS`).
    reading_of : str
        The variant it reads another way (the same network under an assumption
        only larger runs can show): never the prior's choice, and where the runs
        cannot rule it out its prediction widens that variant's interval
        (:func:`perfmodel.fit.selection.select_model`).  Empty: none.
    """

    name: str
    options: Mapping = field(default_factory=dict)
    tunables: tuple = ("link_efficiency",)
    links: tuple = ("fair", "fifo")
    exact_links: tuple = ()
    lockstep: bool | None = None
    overlap: tuple = (False, True)
    sets: tuple = ("selection", "matrix")
    reading_of: str = ""

    def __post_init__(self):
        object.__setattr__(self, "options", MappingProxyType(dict(self.options)))
        for s in self.sets:
            if s not in CANDIDATE_SETS:
                raise SpecError("sets", f"expected one of {', '.join(CANDIDATE_SETS)}, got {s!r}")


@dataclass(frozen=True)
class ModelEntry:
    """One registered model.

    Attributes
    ----------
    name : str
        The name users type (``--model sync``).
    target : str
        ``"module:Class"`` of the model class.
    summary : str
        What it models, citing its paper and equations.
    options : tuple of str
        The options the CLI offers as flags (fields of the class).
    modes : tuple of str
        Synchronisation modes it models.
    family : str
        One of :data:`FAMILIES`.
    baseline : bool
        Another group's model: reported for comparison, never recommended.
    cli : bool
        Offered by ``perfmodel predict --model``.
    variants : tuple of Variant
        Its configurations that fitting compares.
    """

    name: str
    target: str
    summary: str
    options: tuple = ()
    modes: tuple = ("sync",)
    family: str = "closed form"
    baseline: bool = False
    cli: bool = True
    variants: tuple = ()

    def __post_init__(self):
        if self.family not in FAMILIES:
            raise SpecError("family", f"expected one of {', '.join(FAMILIES)}, "
                                      f"got {self.family!r}")


def _entries(*entries: ModelEntry) -> Mapping[str, ModelEntry]:
    return MappingProxyType({e.name: e for e in entries})


_TRANSFER = ("link_efficiency", "update_growth")

#: Every model, by name, in the order the CLI lists them and fitting compares them.
MODELS: Mapping[str, ModelEntry] = _entries(
    ModelEntry("sync", "perfmodel.coarse:SyncCoarse",
               "Sync-SGD with parameter servers (Li et al. 2022, eqs. 7-10)",
               ("sharing", "overlap"), ("sync",), "closed form",
               variants=(
                   Variant("sync-ps", {"sharing": "ps"}, _TRANSFER,
                           sets=("selection", "matrix", "dl2")),
                   Variant("sync-fcfs", {"sharing": "fcfs"}, _TRANSFER, links=("fifo",),
                           sets=("selection", "matrix", "dl2")),
                   Variant("sync-hybrid", {"sharing": "hybrid"},
                           ("link_efficiency", "sharing_weight"), links=("fifo",),
                           sets=("selection", "matrix", "dl2")),
                   Variant("sync-hybrid-overlap", {"sharing": "hybrid", "overlap": True},
                           ("link_efficiency", "sharing_weight"), links=("fifo",),
                           sets=("dl2",)))),
    ModelEntry("allreduce", "perfmodel.coarse:AllReduceCoarse",
               "Sync-SGD with ring all-reduce (Li et al. 2022, eq. 11)",
               ("algorithm", "overlap")),
    ModelEntry("allreduce-stragglers", "perfmodel.stragglers:AllReduceStragglers",
               "Sync-SGD with ring all-reduce waiting for the slowest worker (Li et al. 2022 "
               "eq. 11 with the expected maximum of Zhang et al. 2023 eqs. 7-9)",
               ("sigma", "cv")),
    ModelEntry("lockstep", "perfmodel.coarse:LockStep",
               "Async-SGD whose workers stay in lock-step: the synchronous step of "
               "Li et al. 2022 eq. 7 per worker step",
               (), ("async",), "closed form", cli=False,
               variants=(Variant("async-lockstep", lockstep=True, links=("fair",)),)),
    ModelEntry("async", "perfmodel.queueing:AsyncMVA",
               "Async-SGD with parameter servers, MVA of Li et al. 2022 eqs. 1-6",
               ("discipline", "rho_threshold", "overlap", "residual", "convoys",
                "serialized_bound", "servers"), ("async",),
               "queueing",
               variants=(Variant("async-mva", tunables=("link_efficiency", "rho_threshold"),
                                 lockstep=False, sets=("selection", "matrix", "dl2")),
                         Variant("async-fcfs", {"discipline": "fcfs"},
                                 tunables=("link_efficiency",), lockstep=False,
                                 sets=("selection",), reading_of="async-mva"),
                         Variant("async-convoy", {"convoys": True},
                                 tunables=("link_efficiency", "rho_threshold"),
                                 lockstep=False, links=("fair",), sets=("selection",)))),
    ModelEntry("lin", "perfmodel.baselines:LinAsync",
               "baseline: Lin et al.'s queueing model without overlap (as in Li et al. 2020)",
               ("discipline", "rho_threshold", "residual"), ("async",), "queueing",
               baseline=True,
               variants=(Variant("lin", lockstep=False, overlap=(False,), sets=("matrix",)),)),
    ModelEntry("cynthia", "perfmodel.baselines:Cynthia",
               "baseline: Cynthia's formula (as quoted by Li et al. 2020, Sec. 1)",
               (), ("async",), "closed form", baseline=True,
               variants=(Variant("cynthia", overlap=(False,), sets=("matrix",)),)),
    ModelEntry("gst", "perfmodel.gst.model:GST",
               "Sync-SGD with parameter servers and stragglers, the GST model of "
               "Zhang et al. 2023, eqs. 1-18",
               ("sigma", "cv", "units", "server_link", "interval", "level"), ("sync",),
               "closed form",
               variants=(Variant("gst", links=(), sets=("matrix",)),)),
    ModelEntry("sim", "perfmodel.sim.model:TraceSim",
               "fine-grained trace-driven simulation (Li et al. 2022, Algorithm 1; "
               "Li et al. 2020, Algorithm 3.1)",
               ("sharing", "overlap", "jitter", "replications", "level"), ("sync", "async"),
               "simulation",
               variants=(
                   Variant("sim-ps", {"sharing": "ps", "timeout_position": "uniform"},
                           exact_links=("fair",)),
                   Variant("sim-fcfs", {"sharing": "fcfs", "timeout_position": "uniform"},
                           links=("fifo",)))),
    ModelEntry("layerwise", "perfmodel.layerwise:LayerWise",
               "model- and data-parallel training (Yan et al. 2015, Sec. 4, T_epoch)",
               ("mw_position", "read_bandwidth", "cache_model", "threads", "working_set"),
               ("sync", "async")),
)


def model_names(*, cli: bool = False) -> list[str]:
    """Names accepted by :func:`make` (``cli=True``: those ``perfmodel predict`` offers)."""
    return [name for name, e in MODELS.items() if e.cli or not cli]


def entry(name: str) -> ModelEntry:
    """The registry entry called ``name``; SpecError naming the known ones otherwise."""
    if name not in MODELS:
        raise SpecError("model", f"unknown model {name!r}; known: {', '.join(MODELS)}")
    return MODELS[name]


def model_class(name: str) -> type:
    """The class of the model called ``name`` (its module is imported now)."""
    module, _, cls_name = entry(name).target.partition(":")
    return getattr(import_module(module), cls_name)


def make(name: str, **options):
    """The model object called ``name`` built with ``options``.

    Options the model does not have are ignored only when their value is None,
    so a CLI can pass every flag it knows; any other unknown option is a
    SpecError naming it.
    """
    cls = model_class(name)
    known = {f.name for f in dataclasses.fields(cls)}
    kwargs = {}
    for key, value in options.items():
        if key in known:
            if value is not None:
                kwargs[key] = value
        elif value is not None:
            raise SpecError(key, f"model {name!r} has no option {key!r}")
    return cls(**kwargs)


def name_of(model: Any) -> str | None:
    """The registry name of a model object's class, or None when it is not registered."""
    target = f"{type(model).__module__}:{type(model).__qualname__}"
    for name, e in MODELS.items():
        if e.target == target:
            return name
    return None


def variants(candidate_set: str) -> list[tuple[ModelEntry, Variant]]:
    """Every (entry, variant) taking part in ``candidate_set``, in registry order."""
    if candidate_set not in CANDIDATE_SETS:
        raise SpecError("candidate_set", f"expected one of {', '.join(CANDIDATE_SETS)}, "
                                         f"got {candidate_set!r}")
    return [(e, v) for e in MODELS.values() for v in e.variants if candidate_set in v.sets]
