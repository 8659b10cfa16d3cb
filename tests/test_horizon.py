"""The speed a selection answers: a short window after a common start, or a long job.

``horizon="long"`` is ``convoys="reading"`` with the servers met at once up to P on
any link (``fork_join_to_p=True``) where those are not given; the window keeps the
pooled convoys and the fork-join on links said FIFO.  Checked against the options it
stands for, against the contention-free bound, and through the CLI.
"""

import json

import pytest

from perfmodel._cli import validate
from perfmodel.cli import main
from perfmodel.errors import SpecError
from perfmodel.fit.selection import (
    CONVOY_CANDIDATE,
    HORIZONS,
    MVA_CANDIDATE,
    TO_P_CANDIDATE,
    select_model,
)
from perfmodel.measurements import Measurement
from perfmodel.queueing import AsyncMVA
from perfmodel.specs import Cluster, Config, Profile

# M / B = 0.1 s a transfer, compute 0.3 s: alone a cycle is 0.5 s, 64 samples/s
PROFILE = Profile(model_bytes=100e6, t_forward=0.1, t_backward=0.2, t_update=0.0,
                  batch_size=32)
CLUSTER = Cluster(machines=40, nic_bandwidth="1GB/s")
NET = CLUSTER.replace(link_efficiency=0.9)
LONG_WHY = ("; it answers a long job's speed, after the convoys of the workers' common start "
            "dissolved (horizon='long')")


def _config(k, p, mode="async"):
    return Config(n_replicas=k, n_ps=p, mode=mode)


def _runs(p, workers=(1, 2)):
    return [Measurement(k, p, CLUSTER.nic_bandwidth, AsyncMVA().estimate(
        PROFILE, NET, _config(k, p)).throughput, mode="async") for k in workers]


def _x(selection, k, p):
    return selection.chosen.estimate(PROFILE, CLUSTER, _config(k, p)).throughput


@pytest.mark.parametrize("servers", [1, 2, 4])
def test_a_long_job_is_the_options_it_stands_for(servers):
    runs = _runs(servers)
    long = select_model(PROFILE, CLUSTER, runs, horizon="long")
    spelled = select_model(PROFILE, CLUSTER, runs, convoys="reading", fork_join_to_p=True)
    window = select_model(PROFILE, CLUSTER, runs)
    assert long.chosen.why == spelled.chosen.why + LONG_WHY
    assert [_x(long, k, servers) for k in (3, 8, 16)] == [
        _x(spelled, k, servers) for k in (3, 8, 16)]
    # the window is the default, and pools the convoys' model with the MVA
    assert window.chosen.why == select_model(PROFILE, CLUSTER, runs, horizon="window",
                                             convoys="pooled",
                                             fork_join_to_p="fifo").chosen.why
    assert [p.name for p in window.chosen.pooled] == [CONVOY_CANDIDATE]
    assert not long.chosen.pooled


def _readings(selection, k, p):
    """The MVA's and the convoys' model's throughput, each as calibrated."""
    fitted = {c.name: c for c in selection.calibrated if c is not None}
    return tuple(fitted[n].estimate(PROFILE, CLUSTER, _config(k, p)).throughput
                 for n in (MVA_CANDIDATE, CONVOY_CANDIDATE))


def test_a_long_job_answers_one_reading_unpooled_within_the_bound():
    # the window's answer lies between the MVA's and the convoys' readings (their
    # geometric mean); a long job's is the one the runs fit better, alone
    for servers in (1, 2, 4):
        runs = _runs(servers)
        long, window = (select_model(PROFILE, CLUSTER, runs, horizon=h)
                        for h in ("long", "window"))
        assert long.chosen.name in (MVA_CANDIDATE, CONVOY_CANDIDATE)
        loo = {s.name: s.loo_error for s in long.scores}
        assert loo[long.chosen.name] == min(loo[MVA_CANDIDATE], loo[CONVOY_CANDIDATE])
        for k in (4, 8, 16):
            w_mva, w_convoy = _readings(window, k, servers)
            assert min(w_mva, w_convoy) * (1 - 1e-9) <= _x(window, k, servers) \
                <= max(w_mva, w_convoy) * (1 + 1e-9)
            mva, convoy = _readings(long, k, servers)
            assert _x(long, k, servers) == pytest.approx(
                mva if long.chosen.name == MVA_CANDIDATE else convoy, rel=1e-9)
            # never beyond K workers each as fast as one alone
            assert _x(long, k, servers) <= k * _x(long, 1, servers) * (1 + 1e-9)


def test_on_four_servers_a_long_job_meets_them_at_once_up_to_p():
    long = select_model(PROFILE, CLUSTER, _runs(4), horizon="long")
    mva = long.calibrated[[s.name for s in long.scores].index(TO_P_CANDIDATE)]
    window = select_model(PROFILE, CLUSTER, _runs(4))
    in_turn = window.calibrated[[s.name for s in window.scores].index(TO_P_CANDIDATE)]
    # up to P nothing queues: K workers as fast as the calibrated one alone
    one = mva.estimate(PROFILE, CLUSTER, _config(1, 4)).throughput
    assert mva.estimate(PROFILE, CLUSTER, _config(4, 4)).throughput == pytest.approx(
        4 * one, rel=1e-9)
    assert in_turn.estimate(PROFILE, CLUSTER, _config(4, 4)).throughput < 0.99 * 4 * one


def test_given_options_win_over_the_horizon():
    runs = _runs(2)
    pooled_long = select_model(PROFILE, CLUSTER, runs, horizon="long", convoys="pooled")
    assert [p.name for p in pooled_long.chosen.pooled] == [CONVOY_CANDIDATE]
    turn = select_model(PROFILE, CLUSTER, _runs(4), horizon="long", fork_join_to_p=False)
    assert turn.chosen.why == select_model(PROFILE, CLUSTER, _runs(4), convoys="reading",
                                           fork_join_to_p=False).chosen.why + LONG_WHY


def test_a_sync_job_answers_the_same_at_either_horizon():
    runs = [Measurement(k, 2, CLUSTER.nic_bandwidth, 60.0 * k ** 0.8, mode="sync")
            for k in (1, 2)]
    long, window = (select_model(PROFILE, CLUSTER, runs, horizon=h) for h in ("long", "window"))
    assert long.chosen.why == window.chosen.why
    for k in (4, 16):
        cfg = _config(k, 2, "sync")
        assert (long.chosen.estimate(PROFILE, CLUSTER, cfg).throughput
                == window.chosen.estimate(PROFILE, CLUSTER, cfg).throughput)


def test_bad_horizon_names_the_field():
    assert set(HORIZONS) == {"window", "long"}
    with pytest.raises(SpecError, match="horizon"):
        select_model(PROFILE, CLUSTER, _runs(1), horizon="forever")


def test_the_cli_answers_a_long_job_and_refuses_the_flag_alone(tmp_path, capsys):
    runs = tmp_path / "runs.json"
    runs = tmp_path / "runs.csv"
    runs.write_text("workers,n_ps,bandwidth,throughput,mode\n"
                    "1,1,10Gbps,283.4,async\n2,1,10Gbps,551.0,async\n")
    common = ["predict", "--workers", "16", "--format", "json"]
    assert main([*common, "--measurements", str(runs), "--long-job"]) == 0
    long = json.loads(capsys.readouterr().out)
    assert main([*common, "--measurements", str(runs)]) == 0
    window = json.loads(capsys.readouterr().out)
    assert "geometric mean" in json.dumps(window) and "geometric mean" not in json.dumps(long)
    assert main([*common, "--long-job"]) == 2
    assert "--long-job" in capsys.readouterr().err


def test_validate_passes_the_horizon_to_the_protocol_and_scopes_the_flag(monkeypatch, capsys):
    assert main(["validate", "matrix", "--long-job"]) == 2
    assert "--long-job: acts only on the ns-3 corpus" in capsys.readouterr().err
    seen = {}

    def protocol(**kwargs):
        seen.update(kwargs)
        raise SystemExit(0)

    monkeypatch.setattr(validate, "evaluate_corpus", protocol)
    for flags, horizon in (([], "window"), (["--long-job"], "long")):
        with pytest.raises(SystemExit):
            main(["validate", "matrix", "--only", "corpus", "--corpus", "probe27", *flags])
        assert seen.pop("horizon") == horizon
