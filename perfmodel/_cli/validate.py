"""`perfmodel validate`: every model against the DL2 measurements, and the validation matrix."""

from __future__ import annotations

from pathlib import Path

from ..fit.corpus import SPLITS, evaluate_corpus
from ..fit.dl2 import validate_dl2
from ..fit.validation import DL2_MAX_TRAIN_SIZE, load_ns3, validation_matrix
from ..placement.ns3_corpus import (
    COMMITTED_SETS,
    DESIGNS,
    PROTOCOL_SETS,
    read_rows,
)
from ..sweep import process_pool
from .common import CliError, json_text, parse_int_range, progress_bar

__all__ = ["run"]

#: The committed packet-level sets ``--corpus`` takes by name.
CORPORA = COMMITTED_SETS
#: What ``--only corpus`` reads without ``--corpus``.
DEFAULT_SETS = PROTOCOL_SETS


def _corpus_path(value) -> Path | None:
    """``--corpus``: a committed set's name (:data:`CORPORA`) or a CSV file; None when
    not given (:data:`DEFAULT_SETS`)."""
    if value is None:
        return None
    if value in CORPORA:
        return CORPORA[value]
    if not Path(value).is_file():
        raise CliError(f"--corpus: {value} is neither a file nor one of {', '.join(CORPORA)}")
    return Path(value)


def _corpus(args, train, path: Path | None) -> tuple:
    """The held-out protocol on ``path`` (None: :data:`DEFAULT_SETS`): (report, its
    json, its text)."""
    rows = ([r for p in DEFAULT_SETS for r in read_rows(p)] if path is None
            else read_rows(path))
    splits = tuple(args.split or SPLITS)
    total = len({r["regime"] for r in rows if r["split"] in splits})
    with process_pool(args.jobs or 1) as pool, progress_bar(total, "regimes") as tick:
        report = evaluate_corpus(rows=rows, train_workers=train, splits=splits,
                                 layers=args.layers, suggested=args.suggested_run,
                                 cv_given=not args.cv_unknown,
                                 link_known=args.link_known, executor=pool,
                                 horizon="long" if args.long_job else "window",
                                 progress=lambda done, _total: tick(done))
    probe = "TCP controls and DNNs the corpus never ran"
    design = DESIGNS.get({p: name for name, p in CORPORA.items()}.get(path))
    if design is not None and design.summary:   # a probe: what it holds out
        what = design.summary
    else:
        what = ("the ns-3 corpus (train and test side by side; the test half holds out "
                "whole factor levels" + (f"; the probes hold out {probe})" if path is None
                                         else ")"))
    text = f"\nheld-out protocol on {what}:\n\n"
    body = report.markdown() if args.format == "markdown" else report.text()
    return report, report.to_dict(), text + body + "\n"


def _scoped_flags(args) -> list:
    """(flag, attribute, what it acts on, whether that runs)."""
    only = args.only or ("dl2", "ns3")
    matrix = args.dataset == "matrix"
    corpus = ("the ns-3 corpus (`perfmodel validate matrix --only corpus`)",
              matrix and "corpus" in only)
    return [("--layers", "layers", *corpus), ("--split", "split", *corpus),
            ("--suggested-run", "suggested_run", *corpus), ("--corpus", "corpus", *corpus),
            ("--cv-unknown", "cv_unknown", *corpus), ("--link-known", "link_known", *corpus),
            ("--long-job", "long_job", *corpus), ("--jobs", "jobs", *corpus),
            ("--ns3", "ns3", "the matrix's ns-3 runs (`perfmodel validate matrix`)",
             matrix and "ns3" in only),
            ("--dl2-extra", "dl2_extra", "the matrix's DL2 part (`perfmodel validate matrix`)",
             matrix and "dl2" in only),
            ("--only", "only", "`perfmodel validate matrix`", matrix)]


def check_flags(args) -> None:
    """Refuse a flag whose part of `validate` does not run (it would silently do nothing)."""
    for flag, dest, part, runs in _scoped_flags(args):
        if not runs and getattr(args, dest, None) not in (None, False, []):
            raise CliError(f"{flag}: acts only on {part}; drop the flag or run that part")


def _validate_matrix(args) -> str:
    only = args.only or ("dl2", "ns3")
    train = tuple(parse_int_range(args.train_workers, "--train-workers"))
    if len(train) > 2:
        raise CliError(f"--train-workers: at most 2 configurations per network, got {len(train)}")
    if not 1 <= args.train_size <= DL2_MAX_TRAIN_SIZE:
        raise CliError(f"--train-size: between 1 and {DL2_MAX_TRAIN_SIZE}, got {args.train_size}")
    if min(train) < 1:
        raise CliError(f"--train-workers: worker counts are >= 1, got {min(train)}")
    corpus_path = _corpus_path(args.corpus)
    if args.ns3 is not None and not Path(args.ns3).is_file():
        raise CliError(f"--ns3: {args.ns3} is not a file")
    corpus = _corpus(args, train, corpus_path) if "corpus" in only else None
    if corpus is not None and set(only) == {"corpus"}:
        return json_text(corpus[1]) if args.format == "json" else corpus[2]
    ns3_data = None
    if "ns3" in only:  # before the minutes of DL2: the calibration runs must exist
        ns3_data = load_ns3(args.ns3)
        counts = {run.workers for run in ns3_data[1]}
        if not set(train) <= counts:
            raise CliError(f"--train-workers: the ns-3 runs have {min(counts)} to {max(counts)} "
                           f"workers, not {', '.join(map(str, sorted(set(train) - counts)))}")
    with progress_bar(None, "groups") as tick:
        matrix = validation_matrix(dl2="dl2" in only, ns3="ns3" in only, ns3_path=args.ns3,
                                   dnns=args.dnn or None, ns3_train_workers=train,
                                   dl2_extra_runs=tuple(args.dl2_extra or ()),
                                   dl2_train_size=args.train_size, progress=tick,
                                   ns3_data=ns3_data)
    if args.format == "json":
        data = matrix.to_dict()
        if corpus is not None:
            data["corpus"] = corpus[1]
        return json_text(data)
    tail = corpus[2] if corpus is not None else ""
    if args.format == "markdown":
        groups = "".join(f"\n\nselected model per {ds} group:\n\n{matrix.groups_markdown(ds)}"
                         for ds in ("dl2", "ns3") if any(c.dataset == ds for c in matrix.cells))
        classes = ("\n\nselected model on ns-3 by regime class:\n\n" + matrix.classes_markdown()
                   if any(c.dataset == "ns3" for c in matrix.cells) else "")
        return matrix.text(markdown=True) + classes + groups + "\n" + tail
    return (matrix.text() + "\n\nselected model per group:\n" + matrix.groups_text() + "\n"
            + tail)


def run(args) -> str:
    check_flags(args)
    if args.dataset == "matrix":
        return _validate_matrix(args)
    if args.format == "markdown":
        raise CliError("--format markdown: only for `perfmodel validate matrix`")
    report = validate_dl2(dnns=args.dnn or None, train_size=args.train_size)
    if args.format == "json":
        return json_text(report.to_dict())
    return report.text() + "\n"
