"""Model objects by name, for the CLI and for sweeps: ``make("sync", sharing="ps")``.

Each entry names the model class's module and class so that importing the
registry stays cheap; later models (async, gst, layerwise, sim) add a line here.
"""

from __future__ import annotations

import dataclasses
from importlib import import_module

from .errors import SpecError

__all__ = ["MODELS", "model_names", "make"]

#: name -> (module, class, what it models)
MODELS: dict[str, tuple[str, str, str]] = {
    "sync": ("perfmodel.coarse", "SyncCoarse",
             "Sync-SGD with parameter servers, seed 003 eqs. 7-10"),
    "allreduce": ("perfmodel.coarse", "AllReduceCoarse",
                  "Sync-SGD with ring all-reduce, seed 003 eq. 11"),
    "async": ("perfmodel.queueing", "AsyncMVA",
              "Async-SGD with parameter servers, MVA of seed 003 eqs. 1-6"),
    "lin": ("perfmodel.baselines", "LinAsync",
            "baseline: Lin et al.'s queueing model without overlap (seed 000)"),
    "cynthia": ("perfmodel.baselines", "Cynthia", "baseline: Cynthia's formula (seed 000 Sec. 1)"),
    "gst": ("perfmodel.gst", "GST",
            "Sync-SGD with parameter servers and stragglers, seed 001 GST eqs. 1-18"),
    "sim": ("perfmodel.sim.model", "TraceSim",
            "fine-grained trace-driven simulation, seed 003 Algorithm 1 / seed 000 Algorithm 3.1"),
    "layerwise": ("perfmodel.layerwise", "LayerWise",
                  "model- and data-parallel training, seed 004 Sec. 4 (T_epoch)"),
}


def model_names() -> list[str]:
    """Names accepted by :func:`make`."""
    return list(MODELS)


def make(name: str, **options):
    """The model object called ``name`` built with ``options``.

    Options the model does not have are ignored only when their value is None,
    so a CLI can pass every flag it knows; any other unknown option is a
    SpecError naming it.
    """
    if name not in MODELS:
        raise SpecError("model", f"unknown model {name!r}; known: {', '.join(MODELS)}")
    module, cls_name, _ = MODELS[name]
    cls = getattr(import_module(module), cls_name)
    known = {f.name for f in dataclasses.fields(cls)}
    kwargs = {}
    for key, value in options.items():
        if key in known:
            if value is not None:
                kwargs[key] = value
        elif value is not None:
            raise SpecError(key, f"model {name!r} has no option {key!r}")
    return cls(**kwargs)
