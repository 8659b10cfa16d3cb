"""Reading and writing specs as JSON or YAML: the only module that opens files.

Errors name the file and the field inside it::

    cluster.yaml: nic_bandwidth: unknown unit 'furlongs' in '10 furlongs' ...
"""

from __future__ import annotations

import json
import warnings
from importlib import import_module
from pathlib import Path
from typing import Any

import yaml

from .errors import SpecError
from .measurements import Measurement, parse_measurements
from .specs import DNN, Cluster, Config, Layer, Profile, Spec

__all__ = ["SPEC_TYPES", "read_data", "load", "load_dnn", "load_profile", "load_cluster",
           "load_config", "dump", "save", "json_schemas", "write_schemas",
           "read_text", "write_json", "load_measurements"]

#: File formats by name: the spec class each one holds.
SPEC_TYPES: dict[str, type[Spec]] = {
    "dnn": DNN, "layer": Layer, "profile": Profile, "cluster": Cluster, "config": Config,
}


def read_text(path: str | Path) -> str:
    """The text of ``path``; a missing or unreadable file is a SpecError naming it."""
    path = Path(path)
    try:
        return path.read_text(encoding="utf-8")
    except OSError as err:
        raise SpecError("", f"cannot read file: {err.strerror or err}", source=str(path)) from None
    except UnicodeDecodeError:
        raise SpecError("", "file is not UTF-8 text", source=str(path)) from None


def read_data(path: str | Path) -> Any:
    """Parse a JSON (``.json``) or YAML (anything else) file into Python data."""
    path = Path(path)
    text = read_text(path)
    try:
        if path.suffix.lower() == ".json":
            return json.loads(text)
        return yaml.safe_load(text)
    except json.JSONDecodeError as err:
        raise SpecError("", f"invalid JSON at line {err.lineno} column {err.colno}: {err.msg}",
                        source=str(path)) from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise SpecError("", f"invalid YAML{where}: {getattr(err, 'problem', err)}",
                        source=str(path)) from None


def load(path: str | Path, kind: str) -> Spec:
    """Load a spec of format ``kind`` (``"dnn"``, ``"profile"``, ``"cluster"``, ...) from a file."""
    cls = SPEC_TYPES[kind]
    data = read_data(path)
    try:
        return cls.from_dict(data)
    except SpecError as err:
        raise err.within(source=str(path)) from None


def load_dnn(path: str | Path) -> DNN:
    """Load a DNN file (JSON or YAML)."""
    return load(path, "dnn")


def load_profile(path: str | Path) -> Profile:
    """Load a coarse profile file (JSON or YAML)."""
    return load(path, "profile")


def load_cluster(path: str | Path) -> Cluster:
    """Load a cluster file (JSON or YAML)."""
    return load(path, "cluster")


def load_config(path: str | Path) -> Config:
    """Load a configuration file (JSON or YAML)."""
    return load(path, "config")


def dump(spec: Spec, fmt: str = "json") -> str:
    """Serialize a spec to JSON or YAML text (SI units)."""
    data = spec.to_dict()
    if fmt == "json":
        return json.dumps(data, indent=2) + "\n"
    if fmt == "yaml":
        return yaml.safe_dump(data, sort_keys=False)
    raise SpecError("format", f"unknown format {fmt!r}; expected 'json' or 'yaml'")


def save(spec: Spec, path: str | Path) -> None:
    """Write a spec to ``path``; the suffix picks JSON or YAML."""
    path = Path(path)
    fmt = "json" if path.suffix.lower() == ".json" else "yaml"
    path.write_text(dump(spec, fmt), encoding="utf-8")


def json_schemas() -> dict[str, dict]:
    """The JSON Schema of every file format, made from the spec definitions."""
    return {name: cls.json_schema() for name, cls in SPEC_TYPES.items()}


def write_schemas(directory: str | Path) -> list[Path]:
    """Write ``<format>.schema.json`` for every file format into ``directory``."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, schema in json_schemas().items():
        path = directory / f"{name}.schema.json"
        path.write_text(json.dumps(schema, indent=2) + "\n", encoding="utf-8")
        written.append(path)
    return written


def write_json(data, path: str | Path) -> None:
    """Write JSON-ready ``data`` to ``path`` (e.g. a Chrome trace of simulated steps)."""
    try:
        Path(path).write_text(json.dumps(data) + "\n", encoding="utf-8")
    except OSError as err:
        raise SpecError("", f"cannot write file: {err.strerror or err}", source=str(path)) from None


def load_measurements(path: str | Path) -> tuple[Measurement, ...]:
    """Load a throughput-measurement CSV as a tuple of :class:`~perfmodel.measurements.Measurement`.

    The format is documented in :mod:`perfmodel.measurements`; errors name
    the file, the line and the column (``<path>: line 3, column bandwidth: ...``).
    """
    return parse_measurements(read_text(path), source=str(path))


def __getattr__(name: str):
    # load_pipedream moved to perfmodel.pipedream.load_graph (a format of the models layer);
    # the old name keeps working for code written against it.
    if name == "load_pipedream":
        warnings.warn("perfmodel.io.load_pipedream is perfmodel.pipedream.load_graph",
                      DeprecationWarning, stacklevel=2)
        return import_module("perfmodel.pipedream").load_graph
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
