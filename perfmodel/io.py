"""Reading and writing specs as JSON or YAML: the only module that opens files.

Errors name the file and the field inside it::

    cluster.yaml: nic_bandwidth: unknown unit 'furlongs' in '10 furlongs' ...
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import tempfile
import warnings
from importlib import import_module
from pathlib import Path
from typing import Any

import yaml

from . import units
from .errors import SpecError
from .measurements import Measurement, parse_measurements
from .specs import DNN, Cluster, Config, Layer, Profile, Spec

__all__ = ["SPEC_TYPES", "MAX_FILE_BYTES", "MAX_DEPTH", "read_data", "parse_data", "write_text",
           "load", "load_dnn", "load_profile", "load_cluster",
           "load_config", "dump", "save", "json_schemas", "write_schemas",
           "read_text", "write_json", "load_measurements"]

#: File formats by name: the spec class each one holds.
SPEC_TYPES: dict[str, type[Spec]] = {
    "dnn": DNN, "layer": Layer, "profile": Profile, "cluster": Cluster, "config": Config,
}


#: Largest file the loaders read (a per-layer trace of a large DNN is a few MB).
MAX_FILE_BYTES = 256 * 2 ** 20
#: Deepest nesting of a JSON or YAML file (a spec nests a handful of levels).
MAX_DEPTH = 64


def read_text(path: str | Path) -> str:
    """The text of ``path``; a missing, special, huge or unreadable file is a SpecError naming it.

    Only regular files are read: a FIFO or a device would block or never end.
    """
    path = Path(path)
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            what = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            raise SpecError("", f"cannot read file: {what}", source=str(path))
        if info.st_size > MAX_FILE_BYTES:
            raise SpecError("", f"file of {info.st_size:,} bytes is larger than the "
                                f"{MAX_FILE_BYTES:,} bytes read", source=str(path))
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise SpecError("", f"cannot read file: {err.strerror or err}", source=str(path)) from None
    except UnicodeDecodeError:
        raise SpecError("", "file is not UTF-8 text", source=str(path)) from None
    if "\x00" in text:
        raise SpecError("", "file holds a NUL byte (binary, not text)", source=str(path))
    return text


def _unique_keys(pairs):
    """A JSON object's dict, refusing a key given twice (json keeps the last silently)."""
    out = {}
    for key, value in pairs:
        if key in out:
            raise SpecError(str(key)[:60], "key given twice")
        out[key] = value
    return out


class _SpecYamlLoader(yaml.SafeLoader):
    """YAML without aliases (a 'billion laughs' file expands exponentially) or repeated keys."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise SpecError("", f"YAML aliases (*{event.anchor}) are not accepted, at line "
                                f"{event.start_mark.line + 1}; write the value out")
        return super().compose_node(parent, index)

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, str):
                raise SpecError("", f"keys must be names, got {units.shown(key)} at line "
                                    f"{key_node.start_mark.line + 1}")
            if key in seen:
                raise SpecError(key[:60], f"key given twice (line {key_node.start_mark.line + 1})")
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _yaml_12_core(loader) -> None:
    """Resolve plain scalars as YAML 1.2's core schema does, not YAML 1.1's.

    PyYAML follows YAML 1.1, where ``1:30`` is 90 (base 60), ``010`` is 8,
    ``on``/``no`` are booleans and ``2024-01-01`` a date; in a spec each is
    a silent surprise.  Here ints are decimal (or ``0o``/``0x``), floats
    take any exponent (``1e9``), booleans are ``true``/``false`` only, and
    everything else stays a string for the field's own check to judge.
    """
    tags = {"tag:yaml.org,2002:" + t for t in ("bool", "int", "float", "timestamp")}
    loader.yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers if tag not in tags]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
    loader.add_implicit_resolver("tag:yaml.org,2002:bool",
                                 re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
                                 list("tTfF"))
    loader.add_implicit_resolver("tag:yaml.org,2002:int",
                                 re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"),
                                 list("-+0123456789"))
    loader.add_implicit_resolver(
        "tag:yaml.org,2002:float",
        re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
                   r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"),
        list("-+0123456789."))
    loader.add_constructor("tag:yaml.org,2002:int", _yaml_int)


def _yaml_int(loader, node) -> int:
    text = loader.construct_scalar(node)
    if text.startswith(("0o", "0x")):
        return int(text[2:], 8 if text[1] == "o" else 16)
    return int(text, 10)


_yaml_12_core(_SpecYamlLoader)


def _depth(data, limit: int = MAX_DEPTH) -> None:
    """Refuse data nested deeper than ``limit`` (before anything recurses into it)."""
    stack = [(data, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            raise SpecError("", f"nested more than {limit} levels deep")
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)


def parse_data(text: str, fmt: str) -> Any:
    """Parse JSON or YAML text (``fmt`` ``"json"`` or ``"yaml"``) with the loaders' limits."""
    try:
        if fmt == "json":
            data = json.loads(text, object_pairs_hook=_unique_keys)
        else:
            data = yaml.load(text, Loader=_SpecYamlLoader)  # noqa: S506 (a SafeLoader)
    except RecursionError:
        raise SpecError("", f"nested more than the parser can follow (limit {MAX_DEPTH})") from None
    except json.JSONDecodeError as err:
        raise SpecError("", f"invalid JSON at line {err.lineno} column {err.colno}: "
                            f"{err.msg}") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise SpecError("", f"invalid YAML{where}: {getattr(err, 'problem', err)}") from None
    except SpecError:
        raise
    except ValueError:  # an integer of more than 4,300 digits (Python's limit)
        raise SpecError("", "a number too long to read") from None
    _depth(data)
    return data


def read_data(path: str | Path) -> Any:
    """Parse a JSON (``.json``) or YAML (anything else) file into Python data.

    Duplicate keys, YAML aliases and nesting deeper than :data:`MAX_DEPTH` are
    refused with a SpecError naming the file.
    """
    path = Path(path)
    text = read_text(path)
    try:
        return parse_data(text, "json" if path.suffix.lower() == ".json" else "yaml")
    except SpecError as err:
        raise err.within(source=str(path)) from None


def load(path: str | Path, kind: str) -> Spec:
    """Load a spec of format ``kind`` (``"dnn"``, ``"profile"``, ``"cluster"``, ...) from a file."""
    cls = SPEC_TYPES[kind]
    data = read_data(path)
    try:
        return cls.from_dict(data, require_units=True)
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
    """Serialize a spec to JSON or YAML text, quantities as exact unit strings."""
    data = spec.to_file_dict()
    if fmt == "json":
        return json.dumps(data, indent=2) + "\n"
    if fmt == "yaml":
        return yaml.safe_dump(data, sort_keys=False)
    raise SpecError("format", f"unknown format {fmt!r}; expected 'json' or 'yaml'")


def write_text(text: str, path: str | Path) -> None:
    """Write ``text`` to ``path`` atomically: a temporary file beside it, then a rename.

    A full disk or a kill mid-write never leaves a half-written file; errors
    are a SpecError naming the path.  A device or pipe (``/dev/stdout``) is
    written into, never replaced.
    """
    path = Path(path)
    tmp = None
    try:
        if path.is_dir():
            raise SpecError("", "cannot write file: is a directory", source=str(path))
        if path.exists() and not path.is_file():  # a device or pipe (/dev/stdout): write into it
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
            return
        fd, tmp = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".",
                                   prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
        tmp = None
    except OSError as err:
        raise SpecError("", f"cannot write file: {err.strerror or err}", source=str(path)) from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def save(spec: Spec, path: str | Path) -> None:
    """Write a spec to ``path`` (atomically); the suffix picks JSON or YAML."""
    path = Path(path)
    fmt = "json" if path.suffix.lower() == ".json" else "yaml"
    write_text(dump(spec, fmt), path)


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
    write_text(json.dumps(data) + "\n", path)


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
