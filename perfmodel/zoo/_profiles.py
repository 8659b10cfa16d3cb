"""Builder of the measured coarse profiles ``zoo/profiles/<model>-pipedream.json``.

Each profile is made from one PipeDream ``graph.txt`` copied unchanged into
``zoo/pipedream/`` (see ``zoo/pipedream/PROVENANCE.md``), by
:func:`perfmodel.pipedream.to_profile`, with the minibatch size inferred from
the activation sizes by :func:`perfmodel.pipedream.infer_batch_size`.

Usage::

    python -m perfmodel.zoo._profiles           # rewrite the JSON files
    python -m perfmodel.zoo._profiles --check   # exit 1 if a file is stale or missing

Files are read and written through :mod:`perfmodel.io` only.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from .. import io
from ..errors import SpecError
from ..pipedream import infer_batch_size, load_graph, to_profile
from ..specs import Profile

__all__ = ["GRAPH_DIR", "PROFILE_DIR", "DNN_NAMES", "CAVEATS", "upstream_path", "profile_name",
           "build", "build_all", "expected_files", "write", "stale", "main"]

_ZOO = Path(__file__).parent
#: The copied PipeDream graphs.
GRAPH_DIR = _ZOO / "pipedream"
#: Where the profiles go.
PROFILE_DIR = _ZOO / "profiles"

#: Graph file stem -> zoo DNN name, for the DNNs the zoo has.
DNN_NAMES = {"alexnet": "alexnet", "vgg16": "vgg16", "resnet50": "resnet50",
             "inception_v3": "inception_v3"}

#: Caveats per graph file stem, appended to the profile's source.
CAVEATS = {
    "alexnet": "Caveat: PipeDream's profiler wraps alexnet's `features` in "
               "torch.nn.DataParallel, so on a multi-GPU host the conv layers may have run "
               "split over several GPUs; the file does not say how many were visible.",
    "vgg16": "Caveat: PipeDream's profiler wraps vgg's `features` in torch.nn.DataParallel, "
             "so on a multi-GPU host the conv layers may have run split over several GPUs; "
             "the file does not say how many were visible.",
    "nasnetalarge": "Note: profiled at 224x224 input, not NASNet-A Large's native 331x331.",
    "inception_v3": "Note: parameters include the AuxLogits branch (torchvision "
                    "aux_logits=True).",
}


def upstream_path(stem: str) -> str:
    """Path of the graph file ``<stem>.txt`` in the PipeDream repository."""
    app = "translation" if stem.startswith("gnmt") else "image_classification"
    return f"profiler/{app}/profiles/{stem}/graph.txt"


def profile_name(stem: str) -> str:
    """Zoo name of the profile built from ``<stem>.txt``, e.g. ``"resnet50-pipedream"``."""
    return f"{stem}-pipedream"


def _batch_note(stem: str, graph) -> tuple[int, str]:
    found = infer_batch_size(graph)
    if found is None:
        raise SpecError("batch_size", f"cannot infer the batch size of {stem}.txt from its "
                                      "activation sizes", source=str(GRAPH_DIR / f"{stem}.txt"))
    return found.batch_size, (f"batch_size {found.batch_size} inferred from activation "
                              f"sizes: {found.explanation}.")


def build(stem: str) -> Profile:
    """The profile built from ``zoo/pipedream/<stem>.txt``."""
    graph = load_graph(GRAPH_DIR / f"{stem}.txt")
    graph = dataclasses.replace(graph, source=f"perfmodel/zoo/pipedream/{stem}.txt "
                                              f"(upstream {upstream_path(stem)})")
    batch, note = _batch_note(stem, graph)
    if stem in CAVEATS:
        note = f"{note} {CAVEATS[stem]}"
    return to_profile(graph, batch_size=batch, name=profile_name(stem),
                      dnn=DNN_NAMES.get(stem, ""), note=note)


def build_all() -> dict[str, Profile]:
    """Every profile, by zoo name, one per graph file in :data:`GRAPH_DIR`."""
    stems = sorted(p.stem for p in GRAPH_DIR.glob("*.txt"))
    return {profile_name(stem): build(stem) for stem in stems}


def expected_files() -> dict[Path, str]:
    """The JSON text each profile file must hold."""
    return {PROFILE_DIR / f"{name}.json": io.dump(profile)
            for name, profile in build_all().items()}


def write() -> list[Path]:
    """Rewrite every profile file; return the paths written."""
    written = []
    for path, profile in ((PROFILE_DIR / f"{n}.json", p) for n, p in build_all().items()):
        io.save(profile, path)
        written.append(path)
    return written


def stale() -> list[Path]:
    """Profile files that are missing or differ from what :func:`build_all` makes."""
    out = []
    for path, text in expected_files().items():
        if not path.is_file() or io.read_text(path) != text:
            out.append(path)
    return out


def main(argv: list[str] | None = None) -> int:
    """Command line: rewrite the profiles, or ``--check`` them (exit 1 when stale)."""
    parser = argparse.ArgumentParser(prog="python -m perfmodel.zoo._profiles",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="do not write; exit 1 if a profile file is stale or missing")
    args = parser.parse_args(argv)
    if args.check:
        bad = stale()
        for path in bad:
            print(f"stale: {path}", file=sys.stderr)
        return 1 if bad else 0
    for path in write():
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
