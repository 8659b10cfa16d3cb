"""`perfmodel validate`: every model against the DL2 measurements, and the validation matrix."""

from __future__ import annotations

from ..fit.dl2 import validate_dl2
from ..fit.validation import validation_matrix
from .common import CliError, json_text, parse_int_range

__all__ = ["run"]


def _validate_matrix(args) -> str:
    only = args.only or ("dl2", "ns3")
    train = tuple(parse_int_range(args.train_workers, "--train-workers"))
    if len(train) > 2:
        raise CliError(f"--train-workers: at most 2 configurations per network, got {len(train)}")
    matrix = validation_matrix(dl2="dl2" in only, ns3="ns3" in only, ns3_path=args.ns3,
                               dnns=args.dnn or None, ns3_train_workers=train)
    if args.format == "json":
        return json_text(matrix.to_dict())
    if args.format == "markdown":
        groups = "".join(f"\n\nselected model per {ds} group:\n\n{matrix.groups_markdown(ds)}"
                         for ds in ("dl2", "ns3") if any(c.dataset == ds for c in matrix.cells))
        classes = ("\n\nselected model on ns-3 by regime class:\n\n" + matrix.classes_markdown()
                   if any(c.dataset == "ns3" for c in matrix.cells) else "")
        return matrix.text(markdown=True) + classes + groups + "\n"
    return matrix.text() + "\n\nselected model per group:\n" + matrix.groups_text() + "\n"


def run(args) -> str:
    if args.dataset == "matrix":
        return _validate_matrix(args)
    if args.format == "markdown":
        raise CliError("--format markdown: only for `perfmodel validate matrix`")
    report = validate_dl2(dnns=args.dnn or None, train_size=args.train_size)
    if args.format == "json":
        return json_text(report.to_dict())
    return report.text() + "\n"
