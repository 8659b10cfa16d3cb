"""The model `--measurements` selects: calibrated on the runs, chosen by regime and error."""

from __future__ import annotations

from .. import io, zoo
from ..errors import CliError, SpecError
from ..fit.selection import select_model
from ..sim.trace import Trace

__all__ = ["selection_of", "workload_of", "check_selection_flags"]

#: Flags that only shape what `--measurements` selects (flag, argparse dest).
SELECTION_FLAGS = (("--lossy", "lossy"), ("--simulate", "simulate"), ("--link", "link"),
                   ("--cpu-capacity", "cpu_capacity"), ("--trace", "trace"),
                   ("--calibration", "calibration"), ("--server-cpu", "server_cpu"),
                   ("--long-job", "long_job"))


def workload_of(args, profile):
    """The profile, or the ``--trace`` the job was profiled into (at the profile's update)."""
    source = getattr(args, "trace", None)
    if not source:
        return profile
    if source.startswith("zoo:"):
        return zoo.pipedream_trace(source[4:], t_update=profile.t_update)
    return Trace.load(source)


def check_selection_flags(args) -> None:
    """Refuse a selection flag without --measurements (it would silently do nothing)."""
    if getattr(args, "measurements", None):
        return
    for flag, dest in SELECTION_FLAGS:
        if getattr(args, dest, None) not in (None, False):
            raise CliError(f"{flag}: acts only with --measurements (it shapes the model chosen "
                           "on the measured runs); add the runs or drop the flag")


def selection_of(args, profile, cluster):
    """The selection on --measurements (perfmodel.fit.selection): ``.chosen`` is the model
    chosen and calibrated, ``.suggested_run`` the run that would settle what the runs leave
    open."""
    try:
        selection = select_model(workload_of(args, profile), cluster,
                                 io.load_measurements(args.measurements),
                                 overlap=bool(args.overlap),
                                 lossy=bool(getattr(args, "lossy", False)),
                                 simulate=bool(getattr(args, "simulate", False)),
                                 link_sharing=getattr(args, "link", None),
                                 cpu_capacity=getattr(args, "cpu_capacity", None),
                                 calibration=getattr(args, "calibration", None) or "auto",
                                 server_cpu=getattr(args, "server_cpu", None) or "fcfs",
                                 horizon="long" if getattr(args, "long_job", False)
                                 else "window")
    except SpecError as err:
        if err.field != "cpu_capacity":
            raise
        raise CliError(f"--cpu-capacity: {err.message}") from None
    return selection
