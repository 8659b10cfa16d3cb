"""The held-out protocol on the ns-3 corpus: the user's path, train and test apart."""

import argparse
import concurrent.futures as cf
import csv
import json

import pytest

from perfmodel.cli import build_parser, main
from perfmodel.fit.corpus import (
    SPLITS,
    TRAIN_WORKERS,
    CorpusReport,
    _measurements,
    evaluate_corpus,
    evaluate_regime,
)
from perfmodel.placement.ns3_corpus import (
    COMMITTED_SETS,
    CORPUS_COLUMNS,
    CORPUS_PATH,
    DESIGNS,
    PROTOCOL_SETS,
    read_rows,
)
from perfmodel.sweep import process_pool

ROWS = read_rows(CORPUS_PATH)
BY_REGIME: dict = {}
for _row in ROWS:
    BY_REGIME.setdefault(_row["regime"], []).append(_row)


def _first(split: str, mode: str) -> list:
    return next(rs for rs in BY_REGIME.values() if rs[0]["split"] == split
                and rs[0]["mode"] == mode and len(rs) == 8)


def test_measurements_carry_the_runs():
    rows = _first("train", "sync")
    ms = _measurements(rows)
    for m, r in zip(ms, rows):
        assert (m.workers, m.n_ps, m.throughput) == (int(r["workers"]), int(r["n_ps"]),
                                                     float(r["throughput"]))
        assert m.mode == "sync" and m.step_time_median == float(r["step_time_median"])


@pytest.mark.parametrize("split, mode", [("train", "sync"), ("train", "async"),
                                         ("test", "sync")])
def test_a_regime_is_judged_on_the_runs_it_did_not_see(split, mode):
    rows = _first(split, mode)
    result = evaluate_regime(rows, simulate=False, convoys="reading")
    assert result.split == split and result.mode == mode
    assert result.chosen in result.candidates
    # the chosen model's errors are its own calibrated errors on the held-out runs
    assert (result.mean_error, result.max_error) == pytest.approx(result.candidates[result.chosen])
    assert 0 <= result.coverage <= 1 and result.halfwidth > 0
    assert result.mean_error <= result.max_error
    pooled = evaluate_regime(rows, simulate=False)   # async: the MVA and the convoys pooled
    if "geometric mean of its own and async-convoy's" in pooled.why:
        # every pooled prediction lies between the two, so its error is within theirs
        worst = max(pooled.candidates[n][1] for n in (pooled.chosen, "async-convoy"))
        assert pooled.max_error <= worst + 1e-12
        assert pooled.mean_error != pytest.approx(result.mean_error, rel=1e-9)
    else:
        assert (pooled.mean_error, pooled.max_error) == pytest.approx(
            (result.mean_error, result.max_error))


def test_splits_are_kept_apart_and_summarized_side_by_side():
    train = [r for r in ROWS if r["regime"] == _first("train", "sync")[0]["regime"]]
    test = [r for r in ROWS if r["regime"] == _first("test", "sync")[0]["regime"]]
    report = evaluate_corpus(rows=train + test, splits=("train",), simulate=False)
    assert {r.split for r in report.results} == {"train"}
    both = evaluate_corpus(rows=train + test, simulate=False)
    assert sorted(r.split for r in both.results) == ["test", "train"]
    summary = both.summary()
    assert sum(s["regimes"] for s in summary) == 2
    assert "| train |" in both.markdown() and "| test |" in both.markdown()


def test_a_regime_without_enough_runs_is_a_note():
    rows = [r for r in _first("train", "sync") if int(r["workers"]) in TRAIN_WORKERS]
    report = evaluate_corpus(rows=rows, simulate=False)
    assert report.results == () and "cannot train" in report.notes[0]
    assert isinstance(report, CorpusReport)


def test_a_process_pool_gives_the_same_report_in_the_same_order():
    # regimes share nothing and seed their own randomness: where they run changes nothing
    names = [rs[0]["regime"] for rs in BY_REGIME.values() if len(rs) == 8][:3]
    rows = [r for r in ROWS if r["regime"] in names]
    rows += [r for r in _first("test", "sync") if int(r["workers"]) in TRAIN_WORKERS]
    ticks = []
    here = evaluate_corpus(rows=rows, simulate=False)
    with process_pool(2) as pool:
        there = evaluate_corpus(rows=rows, simulate=False, executor=pool,
                                progress=lambda done, total: ticks.append((done, total)))
    assert [r.regime for r in there.results] == names
    assert there == here and len(there.notes) == 1
    assert sorted(ticks) == [(1, 4), (2, 4), (3, 4), (4, 4)]


def test_a_regime_that_fails_in_a_pool_is_a_note():
    # the error comes back as the regime's note, not as an exception to unpickle
    rows = [dict(r, dnn="no-such-dnn") for r in _first("train", "sync")]
    with cf.ThreadPoolExecutor(1) as pool:
        report = evaluate_corpus(rows=rows, simulate=False, executor=pool)
    here = evaluate_corpus(rows=rows, simulate=False)
    assert report.results == () and report.notes == here.notes
    assert len(report.notes) == 1 and "no-such-dnn" in report.notes[0]


def test_cli_reports_the_protocol(tmp_path, capsys):
    path = tmp_path / "corpus.csv"
    rows = _first("train", "sync") + _first("test", "async")
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=CORPUS_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    assert main(["validate", "matrix", "--only", "corpus", "--corpus", str(path),
                 "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {r["split"] for r in data["results"]} == {"train", "test"}
    assert main(["validate", "matrix", "--only", "corpus", "--corpus", str(path),
                 "--split", "test"]) == 0
    rows = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith(("sync", "async"))]
    assert rows and all(ln[18:25].strip() == "test" for ln in rows)
    assert main(["validate", "matrix", "--only", "corpus", "--corpus", str(path),
                 "--suggested-run", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert all(r["extra_run"] not in [p["workers"] for p in r["points"]]
               for r in data["results"])
    assert any(r["extra_run"] is not None for r in data["results"])
    assert main(["validate", "matrix", "--only", "corpus", "--corpus", str(path),
                 "--suggested-run", "--format", "json", "--jobs", "2"]) == 0
    assert json.loads(capsys.readouterr().out) == data


def test_points_hold_the_interval_that_coverage_counts():
    result = evaluate_regime(_first("train", "sync"), simulate=False)
    assert [p["workers"] for p in result.points] == [3, 4, 6, 8, 12, 16]
    inside = [p["low"] <= p["measured"] <= p["high"] for p in result.points]
    assert result.coverage == pytest.approx(sum(inside) / len(inside))
    for p in result.points:
        assert p["low"] < p["predicted"] < p["high"]


def test_a_per_layer_profile_without_overlap_answers_as_the_coarse_one():
    # without overlap a layer-level trace is the coarse profile's phases in order: the same
    # choice and the same errors (the simulator runs the trace, the others its coarse profile)
    rows = next(rs for rs in BY_REGIME.values() if rs[0]["overlap"] == "0"
                and rs[0]["mode"] == "sync" and rs[0]["buffer"] == "deep" and len(rs) == 8)
    coarse = evaluate_regime(rows)
    layered = evaluate_regime(rows, layers=True)
    assert layered.chosen == coarse.chosen
    assert layered.mean_error == pytest.approx(coarse.mean_error, rel=0.02)


@pytest.mark.parametrize("buffer, lossy", [("shallow", True), ("deep", False)])
def test_the_user_says_whether_the_switches_may_drop_packets(buffer, lossy):
    """Shallow-buffer regimes are given lossy=True (a sync interval then reaches one
    timeout a step beyond the runs); deep ones the loss-free default."""
    rows = next(rs for rs in BY_REGIME.values() if rs[0]["buffer"] == buffer
                and rs[0]["mode"] == "sync" and len(rs) == 8)
    result = evaluate_regime(rows, simulate=False)
    assert ("retransmission timeout a step" in result.why) == lossy
    told = evaluate_regime(rows, simulate=False, lossy=not lossy)   # an explicit option wins
    assert ("retransmission timeout a step" in told.why) == (not lossy)


def _loss_free(mode: str, jitter: str) -> list:
    return next(rs for rs in BY_REGIME.values() if rs[0]["mode"] == mode
                and rs[0]["jitter"] == jitter and rs[0]["buffer"] == "deep")


def test_a_user_who_does_not_say_how_much_the_compute_varies_gets_the_steady_interval():
    # sync closed forms ignore the compute CV, so the points stay; beyond the runs the
    # interval then grows 0.03 per e-fold of workers instead of hypot(0.03, 0.05)
    rows = _loss_free("sync", "lognormal")
    told = evaluate_regime(rows, simulate=False)
    untold = evaluate_regime(rows, simulate=False, cv_given=False)
    assert told.chosen == untold.chosen
    for a, b in zip(told.points, untold.points):
        assert a["predicted"] == pytest.approx(b["predicted"], rel=1e-12)
        assert b["high"] / b["low"] < a["high"] / a["low"]
    # steady compute: nothing to say, nothing changes
    rows = _loss_free("sync", "none")
    assert evaluate_regime(rows, simulate=False).points == \
        evaluate_regime(rows, simulate=False, cv_given=False).points


def test_a_user_who_says_the_link_gives_the_selection_its_sharing():
    # c066: Cubic on FIFO hosts, 3 servers: the link is FIFO, and the servers met at
    # once up to P (asked for where the link is FIFO) change its predictions; the same
    # as saying link_sharing="fifo" and asking for the rule outright
    rows = BY_REGIME["c066"]
    said = evaluate_regime(rows, simulate=False, link_known=True, fork_join_to_p="fifo")
    outright = evaluate_regime(rows, simulate=False, link_sharing="fifo", fork_join_to_p=True)
    assert said.points == outright.points
    assert said.points != evaluate_regime(rows, simulate=False, fork_join_to_p="fifo").points
    # a fair-queued regime is said fair: the rule leaves it as it was
    fair = next(rs for rs in BY_REGIME.values() if rs[0]["mode"] == "async"
                and rs[0]["queue"] == "fair" and int(rs[0]["n_ps"]) >= 3
                and rs[0]["buffer"] == "deep")
    assert evaluate_regime(fair, simulate=False, link_known=True,
                           fork_join_to_p="fifo").points == \
        evaluate_regime(fair, simulate=False, link_sharing="fair").points


def test_the_suggested_run_becomes_a_calibration_run():
    rows = _first("train", "async")
    plain = evaluate_regime(rows, simulate=False)
    assert plain.extra_run is None
    result = evaluate_regime(rows, simulate=False, suggested=True)
    k = result.extra_run
    # the models the 1-2 worker runs cannot tell apart part somewhere in the corpus's range
    assert k is not None and k in {int(r["workers"]) for r in rows}
    assert k not in TRAIN_WORKERS
    predicted = [p["workers"] for p in result.points]
    assert k not in predicted
    assert sorted(predicted + [k]) == [p["workers"] for p in plain.points]
    report = CorpusReport((plain, result))
    assert [s["extra_runs"] for s in report.summary()] == [1]
    assert "suggested run measured in 1 of 2 regimes (async, loss-free, train)" in report.text()


@pytest.mark.parametrize("argv, flag", [
    (["validate", "matrix", "--only", "dl2", "--layers"], "--layers"),
    (["validate", "matrix", "--only", "ns3", "--suggested-run"], "--suggested-run"),
    (["validate", "dl2", "--split", "test"], "--split"),
    (["validate", "dl2", "--only", "ns3"], "--only"),
    (["validate", "matrix", "--only", "corpus", "--dl2-extra", "most-servers"], "--dl2-extra"),
    (["validate", "matrix", "--only", "ns3", "--cv-unknown"], "--cv-unknown"),
    (["validate", "matrix", "--only", "dl2", "--link-known"], "--link-known"),
    (["validate", "dl2", "--jobs", "2"], "--jobs"),
])
def test_a_flag_whose_part_does_not_run_is_refused(argv, flag, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"perfmodel: error: {flag}: acts only on")


@pytest.mark.parametrize("name", ["probe", "probe2", "probe3", "probe4", "probe5", "probe6",
                                  "probe7", "probe8", "probe9", "probe10",
                                  "probe11", "probe12", "probe13", "probe14", "probe15",
                                  "probe16", "probe17", "probe18", "probe19", "probe20",
                                  "probe21", "probe22", "probe23", "probe24",
                                  "probe25", "probe26", "probe27"])
def test_cli_runs_a_probe_by_name(name, capsys):
    # a probe holds every regime out, so the protocol reports its own split only, for
    # every mode it ran, with every run at 3-16 workers predicted from the 1- and 2-worker
    # runs
    assert main(["validate", "matrix", "--only", "corpus", "--corpus", name,
                 "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    probe = read_rows(COMMITTED_SETS[name])
    assert {r["split"] for r in data["results"]} == {name}
    assert {r["mode"] for r in data["results"]} == {r["mode"] for r in probe}
    assert len(data["results"]) == len({r["regime"] for r in probe})
    predicted = sum(len(r["points"]) for r in data["results"])
    assert predicted == sum(int(r["workers"]) > 2 for r in probe)
    assert {s["split"] for s in data["summary"]} == {name}
    assert main(["validate", "matrix", "--only", "corpus", "--corpus", "nowhere"]) == 2
    assert "--corpus: nowhere" in capsys.readouterr().err


def test_cli_runs_the_corpus_at_8x_by_name_with_its_halves_and_worker_counts(capsys):
    # the corpus's draw re-measured: train and test halves, predicted at 4, 8 and 16 workers
    assert main(["validate", "matrix", "--only", "corpus", "--corpus", "corpus-8x",
                 "--split", "test", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    rows = [r for r in read_rows(COMMITTED_SETS["corpus-8x"]) if r["split"] == "test"]
    assert {r["split"] for r in data["results"]} == {"test"}
    assert {r["regime"] for r in data["results"]} == {r["regime"] for r in rows}
    assert {r["mode"] for r in data["results"]} == {"sync", "async"}
    assert {p["workers"] for r in data["results"] for p in r["points"]} == {4, 8, 16}
    assert not any(r["lossy"] for r in data["results"])


def test_the_report_puts_the_probes_beside_both_halves():
    firsts = []
    for path in PROTOCOL_SETS[1:]:
        probe = read_rows(path)
        firsts += [r for r in probe if r["regime"] == probe[0]["regime"]]
    rows = _first("train", "sync") + _first("test", "sync") + firsts
    report = evaluate_corpus(rows=rows, simulate=False)
    # every split but a probe measured only as long jobs (not one of these sets)
    short = {"train", "test"} | {d.split for d in DESIGNS.values() if not d.long_jobs_only}
    short_splits = [s for s in SPLITS if s in short]
    assert [r.split for r in report.results] == short_splits
    for cls in {s["class"] for s in report.summary()}:
        splits = [s["split"] for s in report.summary() if s["class"] == cls]
        assert splits == sorted(splits, key=SPLITS.index)
    assert set(short_splits) <= {s["split"] for s in report.summary()}
    assert all(f"| {name} |" in report.markdown() for name in short_splits)
    alone = evaluate_corpus(rows=rows, simulate=False, splits=("probe",))
    assert [r.split for r in alone.results] == ["probe"]


def test_the_cli_offers_every_split_and_names_every_committed_set():
    # the parser keeps its choices literal (``perfmodel --help`` imports no corpus code):
    # they must follow the protocol's splits and the committed sets
    commands = next(a for a in build_parser()._actions
                    if isinstance(a, argparse._SubParsersAction))
    flags = {a.dest: a for a in commands.choices["validate"]._actions}
    assert tuple(flags["split"].choices) == SPLITS
    assert all(name in flags["corpus"].help for name in COMMITTED_SETS)
