"""The command line's constants and plain parsers: what building the parser needs.

Imports nothing heavy, so that ``perfmodel --help`` starts fast.
"""

from __future__ import annotations

from importlib import metadata

from ..errors import CliError

__all__ = ["DEFAULTS", "PROFILE_FLAGS", "package_version", "INT_LIMITS", "MAX_SIM_WORKERS", "MAX_SIM_STEPS",
           "MAX_GRID_POINTS",
           "check_int_limits", "check_sim_size", "CliError", "parse_int_range", "MAX_RANGE_VALUES",
           "MAX_RANGE_INT"]


#: The embedded defaults: ``perfmodel optimize`` answers Yan et al. 2015's question
#: (its ImageNet-22K DNN on its 20-machine cluster); the coarse models default
#: to a measured ResNet-50 profile on AWS p3.2xlarge machines (Li et al. 2022's GPU
#: testbed).
DEFAULTS = {"profile": "zoo:resnet50-pipedream", "cluster": "zoo:aws-p3.2xlarge",
            "dnn": "zoo:adam-imagenet22k", "layerwise_cluster": "zoo:yan2015",
            "epoch_samples": 1_281_167}  # ImageNet-1k training set


PROFILE_FLAGS = {"model_bytes": "B", "t_forward": "s", "t_backward": "s", "t_update": "s"}

#: Bounds of the integer flags, checked before any work: beyond them a command
#: would run for hours or allocate more memory than a machine has (the DP is
#: exact to 4,096 machines; a simulation keeps every step of every worker).
INT_LIMITS = {"machines": (1, 4096), "top": (1, 100_000), "steps": (1, 1_000_000),
              "warmup": (0, 1_000_000), "iterations": (1, 1_000_000), "jobs": (1, 4096),
              "replications": (1, 1000), "threads": (1, 4096), "servers": (1, 4096),
              "batch_size": (1, 10 ** 7), "epoch_samples": (1, 10 ** 13),
              "max_workers_per_replica": (1, 4096), "train_size": (1, 64),
              "chunk_size": (1, 10 ** 6), "seed": (0, 2 ** 32 - 1)}
#: Most configurations `predict` prints (a sweep writes larger grids to a table).
MAX_GRID_POINTS = 100_000
#: Most simulated workers (events grow with workers x steps).
MAX_SIM_WORKERS = 4096
#: Most worker-steps one simulation keeps (steps x workers).
MAX_SIM_STEPS = 10 ** 7


# ---------------------------------------------------------------- parsing helpers
#: Most values one range flag may list (a grid of more is a mistake, not a job).
MAX_RANGE_VALUES = 100_000
#: Largest integer a range flag accepts (workers, servers, batch sizes).
MAX_RANGE_INT = 10 ** 9


def _count(text: str, flag: str) -> int:
    if len(text) > 20:
        raise CliError(f"{flag}: {text[:20]}... is not a count")
    value = int(text)
    if abs(value) > MAX_RANGE_INT:
        raise CliError(f"{flag}: {value} is beyond {MAX_RANGE_INT:,}")
    return value


def parse_int_range(text: str, flag: str) -> list[int]:
    """``"1-16"``, ``"1-16:2"``, ``"1,2,4,8"`` or ``"8"`` -> list of ints.

    At most :data:`MAX_RANGE_VALUES` values, each within +-:data:`MAX_RANGE_INT`;
    a step must be positive.  The caller checks the values' own bounds.
    """
    out: list[int] = []
    shown = text if len(text) <= 40 else text[:37] + "..."
    for part in text.split(","):
        part = part.strip()
        try:
            if "-" in part[1:]:
                span, _, step = part.partition(":")
                lo, hi = (_count(x, flag) for x in span.split("-", 1))
                by = _count(step, flag) if step else 1
                if by < 1:
                    raise CliError(f"{flag}: the step of {part!r} must be >= 1")
                values = range(lo, hi + 1, by)
                if len(out) + len(values) > MAX_RANGE_VALUES:
                    raise CliError(f"{flag}: {shown!r} lists more than {MAX_RANGE_VALUES:,} "
                                   "values")
                out.extend(values)
            else:
                out.append(_count(part, flag))
        except ValueError:
            raise CliError(f"{flag}: cannot read {shown!r} (use e.g. 1-16, 1-16:2 or 1,2,4)") from None
    if not out:
        raise CliError(f"{flag}: {shown!r} is an empty range")
    return out


def check_int_limits(args) -> None:
    """Refuse an integer flag outside :data:`INT_LIMITS`, naming the flag."""
    for name, (low, high) in INT_LIMITS.items():
        value = getattr(args, name, None)
        if isinstance(value, int) and not low <= value <= high:
            raise CliError(f"--{name.replace('_', '-')}: must be between {low:,} and {high:,}, "
                           f"got {value if abs(value) < 10 ** 15 else 'a huge number'}")


def check_sim_size(workers: list[int], steps: int) -> None:
    """Refuse a simulation beyond :data:`MAX_SIM_WORKERS` or :data:`MAX_SIM_STEPS`."""
    if max(workers) > MAX_SIM_WORKERS:
        raise CliError(f"--workers: the simulator runs at most {MAX_SIM_WORKERS:,} workers, "
                       f"got {max(workers):,}")
    if min(workers) < 1:
        raise CliError(f"--workers: must be >= 1, got {min(workers)}")
    if max(workers) * steps > MAX_SIM_STEPS:
        raise CliError(f"--steps: {steps:,} steps x {max(workers):,} workers is more than the "
                       f"{MAX_SIM_STEPS:,} worker-steps one simulation keeps")


def package_version() -> str:
    """The installed distribution's version (``unknown`` when run from a bare source tree)."""
    try:
        return metadata.version("perfmodel")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"
