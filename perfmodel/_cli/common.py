"""What every ``perfmodel`` command shares: defaults, flag parsing, specs from flags, output.

No math lives here, nor in the commands: they parse flags, call the library
and format its results.
"""

from __future__ import annotations

import contextlib
import csv
import io as _stdio
import json
import sys
from pathlib import Path

from .. import io, registry, units, zoo
from ..errors import SpecError
from ..specs import Cluster, Config, Profile, Spec
from .flags import (
    DEFAULTS,
    MAX_GRID_POINTS,
    PROFILE_FLAGS,
    CliError,
    check_sim_size,
    package_version,
    parse_int_range,
)

__all__ = ["DEFAULTS", "MAX_GRID_POINTS", "stamped_records", "RECORD_UNITS", "check_sim_size", "CliError",
           "MODEL_FLAGS",
           "PROFILE_FLAGS", "parse_int_range",
           "parse_configs", "quantities", "resolve_spec", "epoch_samples_for",
           "profile_from_args", "cluster_from_args", "model_from_args", "table_text",
           "csv_text", "json_text", "human_units", "progress_bar"]


def quantities(text: str, unit: str, flag: str) -> list[float]:
    """Comma-separated unit strings of ``flag`` in SI units; a bare number (0 aside) is refused."""
    try:
        return [units.parse(part, unit, require_unit=True) for part in text.split(",")]
    except SpecError as err:
        raise CliError(f"{flag}: {err.message}") from None


_ZOO = {"profile": (zoo.profile_names, zoo.profile), "cluster": (zoo.cluster_names, zoo.cluster),
        "dnn": (zoo.names, zoo.load)}


def resolve_spec(source, kind: str):
    """``zoo:NAME``, a zoo name, or a file path -> spec; a spec (a job's inline one) as is."""
    if isinstance(source, Spec):
        return source
    name = source[4:] if source.startswith("zoo:") else source
    names, get = _ZOO[kind]
    if source.startswith("zoo:") or (not Path(source).exists() and name in names()):
        return get(name)
    return io.load(source, kind)


def epoch_samples_for(args, dnn_name: str = "") -> int:
    """The --epoch-samples flag, else the dataset size of a zoo DNN, else ImageNet-1k."""
    if args.epoch_samples is not None:
        return args.epoch_samples
    return zoo.dataset_samples(dnn_name) or DEFAULTS["epoch_samples"]


def parse_configs(text: str, flag: str = "--config") -> list[Config]:
    """``"4/4/4"`` or ``"4/4/4,2/9/2"`` (workers/replicas/servers) -> Configs."""
    out = []
    for part in text.split(","):
        bits = part.strip().split("/")
        try:
            w, r, s = (int(b) for b in bits)
        except ValueError:
            raise CliError(f"{flag}: cannot read {part!r} (use W/R/PS, e.g. 4/4/4)") from None
        try:
            out.append(Config(n_workers=w, n_replicas=r, n_ps=s))
        except SpecError as err:
            raise CliError(f"{flag}: {part}: {err}") from None
    return out


def profile_from_args(args) -> Profile:
    """The ``--profile`` with the profile flags (model bytes, times, batch) applied."""
    profile = resolve_spec(args.profile, "profile")
    changes = {}
    for name, unit in PROFILE_FLAGS.items():
        value = getattr(args, name)
        if value is not None:
            changes[name] = quantities(value, unit, "--" + name.replace("_", "-"))[0]
    if args.batch_size is not None:
        changes["batch_size"] = args.batch_size
    try:
        return profile.replace(**changes) if changes else profile
    except SpecError as err:  # a flag's value broke a profile rule: name the flag
        raise CliError(f"--{err.field.replace('_', '-')}: {err.message}") from None


def cluster_from_args(args) -> Cluster:
    """The ``--cluster`` (or the model's default) with the cluster flags applied."""
    default = DEFAULTS["layerwise_cluster" if args.model == "layerwise" else "cluster"]
    cluster = resolve_spec(args.cluster or default, "cluster")
    changes = {}
    if getattr(args, "machines", None) is not None and args.machines > cluster.machines:
        changes["machines"] = args.machines
    for flag, field in (("link_efficiency", "link_efficiency"), ("sharing_weight", "sharing_weight")):
        if getattr(args, flag, None) is not None:
            changes[field] = getattr(args, flag)
    if getattr(args, "per_flow_cap", None) is not None:
        changes["per_flow_cap"] = quantities(args.per_flow_cap, "B/s", "--per-flow-cap")[0]
    try:
        return cluster.replace(**changes) if changes else cluster
    except SpecError as err:  # a flag's value broke a cluster rule: name the flag
        raise CliError(f"--{err.field.replace('_', '-')}: {err.message}") from None


#: The options each model offers as flags (the registry's, for the models the CLI offers).
MODEL_FLAGS = {name: e.options for name, e in registry.MODELS.items() if e.cli}


def model_from_args(args):
    """The ``--model`` object with the flags it has; a flag it lacks is an error naming it."""
    options = {}
    for flag in MODEL_FLAGS[args.model]:
        value = getattr(args, flag, None)
        options[flag] = (True if value else None) if flag == "overlap" else value
    for flag in {f for flags in MODEL_FLAGS.values() for f in flags} - set(options):
        if getattr(args, flag, None) not in (None, False):
            raise CliError(f"--{flag.replace('_', '-')}: not an option of --model {args.model}")
    return registry.make(args.model, **options)


# ---------------------------------------------------------------- output
#: Units of the numbers in a JSON record (SI, as the library's).
RECORD_UNITS = {"step_time": "s", "throughput": "samples/s", "throughput_interval": "samples/s",
                "epoch_time": "s", "bandwidth": "B/s", "phases": "s"}


def stamped_records(command: str, model: str, records: list) -> list:
    """A JSON answer: the list of records (the public contract), each also saying what
    produced it (version, command, model: a record's own ``model``, e.g. the candidate
    a selection chose, is kept) and the units of its numbers."""
    stamp = {"perfmodel": package_version(), "command": command, "units": RECORD_UNITS}
    return [{**r, "model": r.get("model", model), **stamp} for r in records]


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def table_text(rows: list[dict], columns: list[str]) -> str:
    """``rows`` as a right-aligned plain-text table of ``columns``."""
    cells = [[_fmt(r.get(c, "")) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) if cells else len(c)
              for i, c in enumerate(columns)]
    lines = ["  ".join(c.rjust(w) for c, w in zip(columns, widths))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(row, widths)) for row in cells]
    return "\n".join(lines) + "\n"


def csv_text(rows: list[dict]) -> str:
    """``rows`` as CSV, each phase in a ``phase_<name>`` column."""
    flat = []
    for r in rows:
        row = {k: v for k, v in r.items() if k != "phases"}
        row.update({f"phase_{k}": v for k, v in r.get("phases", {}).items()})
        flat.append(row)
    columns = list(dict.fromkeys(k for row in flat for k in row))
    buf = _stdio.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(flat)
    return buf.getvalue()


def json_text(data) -> str:
    """``data`` as indented JSON (NaN is an error, never printed)."""
    return json.dumps(data, indent=2, allow_nan=False) + "\n"


def human_units(record: dict) -> dict:
    """Rows for tables: people's units."""
    out = dict(record)
    if "bandwidth" in out:
        out["bandwidth_Gbps"] = out.pop("bandwidth") * 8 / 1e9
    out["step_ms"] = out.pop("step_time") * 1e3
    if out.get("epoch_time") is not None:
        out["epoch_min"] = out.pop("epoch_time") / 60.0
    return out


@contextlib.contextmanager
def progress_bar(total: int | None, unit: str):
    """A progress bar on stderr that appears only when a search passes one second
    (tqdm's ``delay``) and only on a terminal (``disable=None``); yields a callback
    ``tick(done, total=None)``."""
    from tqdm import tqdm  # third-party, imported only by commands that search

    with tqdm(total=total, unit=f" {unit}", delay=1.0, disable=None, file=sys.stderr,
              leave=False) as bar:
        def tick(done: int, new_total: int | None = None) -> None:
            if new_total is not None and new_total != bar.total:   # totals known as work goes
                bar.total = new_total
                bar.refresh()
            bar.update(done - bar.n)
        yield tick
