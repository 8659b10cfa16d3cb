"""`perfmodel sweep`: a grid of configurations evaluated into a resumable table."""

from __future__ import annotations

from ..errors import Infeasible, SpecError
from ..sweep import Grid, sweep, table_format
from .common import (
    DEFAULTS,
    MODEL_FLAGS,
    CliError,
    cluster_from_args,
    epoch_samples_for,
    model_from_args,
    parse_int_range,
    profile_from_args,
    quantities,
    resolve_spec,
)

__all__ = ["run"]


def run(args) -> str:
    try:
        fmt = table_format(args.out, args.format)
        result = _sweep(args, fmt)
    except SpecError as err:  # name the flag (or the file), not the library's field
        raise _sweep_error(err) from None
    n = len(result.records)
    if n and result.errors == n:
        raise Infeasible(f"all {n} points failed, e.g. {result.records[0]['error']} "
                         f"(rows written to {args.out})")
    return (f"sweep: {n} points ({result.computed} computed, {result.skipped} already in "
            f"{args.out}), {result.errors} with errors, {result.seconds:.2f} s -> {args.out} "
            f"({fmt})\n")


def _sweep(args, fmt: str):
    model_from_args(args)  # every model flag given must be an option of --model
    options = {f: (True if getattr(args, f) else None) if f == "overlap" else getattr(args, f, None)
               for f in MODEL_FLAGS[args.model]}
    if args.model == "layerwise":
        workload = resolve_spec(args.dnn or DEFAULTS["dnn"], "dnn")
        samples = epoch_samples_for(args, workload.name)
    else:
        workload = profile_from_args(args)
        samples = epoch_samples_for(args, workload.dnn)
    grid = Grid(model=args.model, workload=workload, cluster=cluster_from_args(args),
                workers=parse_int_range(args.workers, "--workers"),
                n_ps=parse_int_range(args.ps, "--ps") if args.ps else None,
                bandwidth=quantities(args.bandwidth, "B/s", "--bandwidth") if args.bandwidth else None,
                batch_size=parse_int_range(args.batch, "--batch") if args.batch else None,
                epoch_samples=samples, options={k: v for k, v in options.items() if v is not None})
    return sweep(grid, out=args.out, format=fmt, scheduler=args.scheduler, jobs=args.jobs,
                 chunk_size=args.chunk_size, progress=None)


_SWEEP_FLAGS = {"grid.n_ps": "--ps", "grid.batch_size": "--batch"}


def _sweep_error(err: SpecError) -> CliError:
    if err.source:  # a file (profile, cluster, an --out that is not a sweep table)
        return CliError(str(err))
    name = err.field.removeprefix("grid.")
    return CliError(f"{_SWEEP_FLAGS.get(err.field, '--' + name.replace('_', '-'))}: {err.message}")
