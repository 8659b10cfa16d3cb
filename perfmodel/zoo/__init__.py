"""Built-in DNN specs, measured coarse profiles and clusters (JSON data beside this file).

>>> from perfmodel import zoo
>>> "resnet50" in zoo.names()
True
>>> zoo.load("resnet50").n_params
25557032
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from ..errors import SpecError
from ..io import load as _load_file
from ..pipedream import load_graph
from ..sim.trace import Trace
from ..specs import DNN, Cluster, Profile

__all__ = ["names", "load", "profile_names", "profile", "cluster_names", "cluster",
           "dataset_samples", "DATASET_SAMPLES", "pipedream_names", "pipedream_graph",
           "pipedream_trace"]

#: Training-set sizes (samples per epoch) of the data sets the zoo's DNNs are
#: trained on: MNIST 60,000 and ImageNet-22K "over 15 million" (Yan et al. 2015,
#: Sec. 6.1), ImageNet-1k 1,281,167 for the torchvision networks.
DATASET_SAMPLES = {"adam-mnist": 60_000, "adam-imagenet22k": 15_000_000,
                   **{n: 1_281_167 for n in ("alexnet", "vgg11", "vgg16", "resnet50", "resnet152",
                                             "inception_v3", "googlenet")}}

_HERE = Path(__file__).parent


def _names(folder: str) -> list[str]:
    return sorted(p.stem for p in (_HERE / folder).glob("*.json"))


@cache
def _get(folder: str, kind: str, name: str):
    path = _HERE / folder / f"{name}.json"
    if name not in _names(folder):  # a name, never a path ("zoo:/etc/x", "zoo:../y")
        known = ", ".join(_names(folder))
        raise SpecError(kind, f"no {kind} called {name!r} in the zoo (known: {known})")
    return _load_file(path, kind)


def dataset_samples(name: str) -> int | None:
    """Samples in one epoch of the data set the zoo DNN ``name`` trains on (None if unknown)."""
    return DATASET_SAMPLES.get(name)


def names() -> list[str]:
    """Names of the built-in DNNs, e.g. ``"resnet50"``, ``"adam-imagenet22k"``."""
    return _names("dnns")


def load(name: str) -> DNN:
    """The built-in DNN called ``name`` (see :func:`names`)."""
    return _get("dnns", "dnn", name)


def profile_names() -> list[str]:
    """Names of the built-in coarse profiles."""
    return _names("profiles")


def profile(name: str) -> Profile:
    """The built-in coarse profile called ``name`` (see :func:`profile_names`)."""
    return _get("profiles", "profile", name)


def cluster_names() -> list[str]:
    """Names of the built-in clusters."""
    return _names("clusters")


def cluster(name: str) -> Cluster:
    """The built-in cluster called ``name`` (see :func:`cluster_names`)."""
    return _get("clusters", "cluster", name)


def pipedream_names() -> list[str]:
    """Names of the copied PipeDream per-layer profiles (``perfmodel/zoo/pipedream/``)."""
    return sorted(p.stem for p in (_HERE / "pipedream").glob("*.txt"))


def pipedream_graph(name: str):
    """The measured per-layer PipeDream profile ``name`` (or ``name-pipedream``, the coarse
    profile's name) as a PipeDreamGraph."""
    name = name.removesuffix("-pipedream")
    if name not in pipedream_names():
        raise SpecError("trace", f"no PipeDream profile called {name!r} in the zoo "
                                 f"(known: {', '.join(pipedream_names())})")
    return load_graph(_HERE / "pipedream" / f"{name}.txt")


def pipedream_trace(name: str, t_update: float = 0.0, overlap: bool = True):
    """A layer-level simulator trace of the PipeDream profile ``name``, at its measured batch."""
    name = name.removesuffix("-pipedream")
    batch = profile(f"{name}-pipedream").batch_size
    return Trace.from_pipedream(pipedream_graph(name), t_update, overlap, batch_size=batch)
