"""The model `--measurements` selects: calibrated on the runs, chosen by regime and error."""

from __future__ import annotations

from .. import io
from ..fit.selection import select_model

__all__ = ["selected_model"]


def selected_model(args, profile, cluster):
    """The model chosen and calibrated on --measurements (perfmodel.fit.selection)."""
    selection = select_model(profile, cluster, io.load_measurements(args.measurements),
                             overlap=bool(args.overlap), lossy=bool(getattr(args, "lossy", False)),
                             simulate=bool(getattr(args, "simulate", False)),
                             link_sharing=getattr(args, "link", None),
                             cpu_capacity=getattr(args, "cpu_capacity", None))
    return selection.chosen
