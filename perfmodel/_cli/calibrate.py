"""`perfmodel calibrate`: hardware micro-benchmarks of this machine, or a fit to measured runs."""

from __future__ import annotations

import sys

from .. import io
from ..errors import SpecError
from ..fit import microbench
from ..fit.grid import fit_tunables, parse_grid
from ..fit.network import CALIBRATION_PARAMS, WORSE_THAN_UNCALIBRATED, calibrate_network
from ..fit.selection import SHAPE_SPAN
from ..specs import Cluster
from .common import DEFAULTS, CliError, json_text, parse_int_range, resolve_spec
from .measured import workload_of

__all__ = ["run"]

_LEVEL_ONLY = (f"the runs' worker counts span less than a factor {SHAPE_SPAN}: they show how "
               "much slower the job runs than the model, not how that grows with the workers, "
               "and a fitted link efficiency puts the gap in every transfer; perfmodel predict "
               "--measurements fits one slowdown of every step instead")


def _calibrate_fit(args) -> str:
    """Per-network calibration (cluster fields, --save), or model tunables (--grid KEY=...)."""
    if not args.measurements:
        raise CliError("calibrate fit: --measurements FILE is required")
    grid = dict(parse_grid(g) for g in args.grid or ())
    cv = args.cv if args.cv in ("loo", "none") else parse_int_range(args.cv, "--cv")[0]
    cv = None if cv == "none" else cv
    profile = resolve_spec(args.profile, "profile")
    cluster = resolve_spec(args.cluster or DEFAULTS["cluster"], "cluster")
    measurements = io.load_measurements(args.measurements)
    options = set(grid) - set(Cluster.__dataclass_fields__)
    if options:  # model tunables (e.g. rho_threshold) live in no file: report only
        if args.save or args.params:
            raise CliError(f"--grid {sorted(options)[0]}: a model option, not a cluster field; "
                           "--save and --params take cluster fields only")
        fit = fit_tunables(args.model or "async", profile, cluster, measurements, grid, cv=cv,
                           objective=args.objective)
        return json_text(fit.to_dict()) if args.format == "json" else fit.text() + "\n"
    params = ([p.strip() for p in args.params.split(",")] if args.params
              else list(grid) or list(CALIBRATION_PARAMS))
    cal = _calibration(workload_of(args, profile), cluster, measurements, args, params, grid,
                       cv)
    workers = [m.workers for m in measurements]
    if max(workers) < SHAPE_SPAN * min(workers):   # said, not refused: the fit is as asked
        print(f"perfmodel: warning: {args.measurements}: {_LEVEL_ONLY}", file=sys.stderr)
    if args.save:
        try:
            cal.save(args.save)
        except SpecError as err:  # io.write_text names the path
            raise CliError(f"--save: {err}") from None
        if cal.worse_than_uncalibrated:   # saved as asked, but never silently
            print(f"perfmodel: warning: {args.save}: {WORSE_THAN_UNCALIBRATED}", file=sys.stderr)
    if args.format == "json":
        return json_text(cal.to_dict())
    tail = (f"wrote {args.save}\n" if args.save
            else "(use --save FILE to write the calibrated cluster file)\n")
    return cal.text() + "\n" + tail


def _calibration(profile, cluster, measurements, args, params, grid, cv):
    """calibrate_network with its params/grids errors named by flag."""
    try:
        return calibrate_network(profile, cluster, measurements, model=args.model,
                                 params=params, grids=grid, cv=cv, objective=args.objective,
                                 search=args.search,
                                 source=args.measurements)
    except SpecError as err:
        flag = {"params": "--params" if args.params else "--grid",
                "grids": "--grid"}.get(err.field.split(".")[0])
        if flag is None:
            raise
        raise CliError(f"{flag}: {err}") from None


def run(args) -> str:
    if args.action == "fit":
        return _calibrate_fit(args)
    base = resolve_spec(args.base, "cluster")
    result = microbench.calibrate(quick=args.quick, max_threads=args.threads, seed=args.seed)
    cluster = microbench.calibrated_cluster(base, result)
    cluster = cluster.replace(name=f"{base.name or 'cluster'}-calibrated")
    if args.out:
        io.save(cluster, args.out)
    if args.format == "json":
        return json_text({"calibration": result.to_dict(), "cluster": cluster.to_dict()})
    tail = f"wrote {args.out}\n" if args.out else "(use --out FILE to write the cluster file)\n"
    return result.summary() + "\n" + tail
