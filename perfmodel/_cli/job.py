"""Job files: one YAML or JSON file holding what the flags of a command would.

A job has three sections, Calculon's split of a run into what is trained,
what it runs on and how::

    workload:                 # what is trained
      profile: zoo:resnet50-pipedream   # coarse models: zoo:NAME, a file, or the fields inline
      dnn: zoo:adam-imagenet22k         # layer-wise model (optimize, predict --model layerwise)
      trace: zoo:resnet50               # simulate: a per-layer trace
    cluster: zoo:aws-p3.2xlarge         # what it runs on: zoo:NAME, a file, or the fields inline
    execution:                # how: any flag of the command, by its name
      model: sync
      workers: 1-16
      bandwidth: 10Gbps
      sharing: ps

Inline ``profile``, ``dnn`` and ``cluster`` sections are the spec files'
formats (``perfmodel zoo schema`` exports their JSON Schemas) and are validated
as those files are; a file path is relative to the job file.  A flag given on
the command line wins over the job's value, so one job file serves a family
of runs (``perfmodel predict --job job.yaml --workers 1-64``).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path

from .. import io
from ..errors import SpecError
from ..specs import DNN, Cluster, Profile
from .flags import CliError

__all__ = ["SECTIONS", "apply_job", "explicit_dests"]

#: The sections of a job file and what each may hold.
SECTIONS = {"workload": ("profile", "dnn", "trace"), "cluster": (), "execution": ()}
_SPECS = {"profile": Profile, "dnn": DNN, "cluster": Cluster}


def explicit_dests(parser: argparse.ArgumentParser, argv: list[str]) -> set[str]:
    """The destinations of the flags written on the command line (they beat the job)."""
    actions = parser._option_string_actions  # argparse's own table of flags
    return {actions[token.split("=", 1)[0]].dest for token in argv
            if token.startswith("-") and token.split("=", 1)[0] in actions}


def _spec(value, kind: str, base: Path, where: str):
    """A spec section: ``zoo:NAME`` (kept for the command to resolve), a path, or fields."""
    if isinstance(value, Mapping):
        try:
            return _SPECS[kind].from_dict(dict(value), require_units=True)
        except SpecError as err:
            raise err.within(where) from None
    if not isinstance(value, str) or not value.strip():
        raise SpecError(where, "expected zoo:NAME, a file path or the fields inline")
    if value.startswith("zoo:") or kind == "trace" and not (base / value).exists():
        return value
    return str(base / value)


def _flag_value(action: argparse.Action, value, where: str):
    """A job value as the flag's parsed value (the flag's own type and choices)."""
    if isinstance(action, (argparse._StoreTrueAction, argparse.BooleanOptionalAction)):
        if not isinstance(value, bool):
            raise SpecError(where, f"expected true or false, got {type(value).__name__}")
        return value
    if isinstance(value, (list, tuple)):
        value = ",".join(str(v) for v in value)
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise SpecError(where, f"expected a value, got {type(value).__name__}")
    text = str(value)
    try:
        parsed = action.type(text) if action.type is not None else text
    except (TypeError, ValueError):
        raise SpecError(where, f"cannot read {text[:40]!r}") from None
    if action.choices is not None and parsed not in action.choices:
        raise SpecError(where, f"{text[:40]!r} is not one of {', '.join(map(str, action.choices))}")
    return [parsed] if isinstance(action, argparse._AppendAction) else parsed


def _settings(data, path: Path) -> tuple[dict, dict]:
    """The job's specs (by attribute: profile, dnn, trace, cluster; resolved, paths made
    absolute) and its execution values (by flag destination)."""
    if not isinstance(data, Mapping) or not data:
        raise SpecError("", f"expected the sections {', '.join(SECTIONS)}")
    unknown = set(data) - set(SECTIONS)
    if unknown:
        raise SpecError(sorted(map(str, unknown))[0], f"unknown section (known: {', '.join(SECTIONS)})")
    base, specs = path.parent, {}
    workload = data.get("workload") or {}
    if not isinstance(workload, Mapping):
        raise SpecError("workload", "expected a mapping with profile, dnn or trace")
    for key, value in workload.items():
        if key not in SECTIONS["workload"]:
            raise SpecError(f"workload.{key}", "unknown (known: profile, dnn, trace)")
        specs[key] = _spec(value, key, base, f"workload.{key}")
    if data.get("cluster") is not None:
        specs["cluster"] = _spec(data["cluster"], "cluster", base, "cluster")
    execution = data.get("execution") or {}
    if not isinstance(execution, Mapping):
        raise SpecError("execution", "expected a mapping of flag names to values")
    return specs, {str(key).replace("-", "_"): value for key, value in execution.items()}


def apply_job(args: argparse.Namespace, parser: argparse.ArgumentParser,
              explicit: set[str]) -> None:
    """Fill ``args`` from the job file ``args.job``; flags in ``explicit`` keep their values."""
    path = Path(args.job)
    try:
        specs, flags = _settings(io.read_data(path), path)
        for key, value in specs.items():
            if not hasattr(args, key):
                raise SpecError(f"workload.{key}", f"not used by `perfmodel {args.command}`")
            if key not in explicit:
                setattr(args, key, value)
        by_dest = {a.dest: a for a in parser._actions if a.option_strings}
        for dest, value in flags.items():
            action = by_dest.get(dest)
            if action is None or dest in ("job", "help"):
                raise SpecError(f"execution.{dest}", f"not a flag of `perfmodel {args.command}`")
            if dest not in explicit:
                setattr(args, dest, _flag_value(action, value, f"execution.{dest}"))
    except SpecError as err:
        raise CliError(f"--job: {err.within(source=str(path))}") from None
