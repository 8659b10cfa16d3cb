"""The ns-3 corpus: its design, its held-out split, and the committed rows."""

import math
from collections import Counter

import pytest

from perfmodel import zoo
from perfmodel.placement import ns3_corpus as nc
from perfmodel.placement import ns3_job

needs_ns3 = pytest.mark.skipif(not ns3_job.available(),
                               reason="ns-3 not installed: pip install 'perfmodel[ns3]'")


def test_design_is_balanced_deterministic_and_unique():
    d = nc.design()
    assert d == nc.design() and len(d) == nc.CORPUS_REGIMES
    for name, levels in nc.FACTORS.items():
        counts = Counter(r[name] for r in d)
        assert set(counts) == set(levels)
        assert max(counts.values()) - min(counts.values()) <= 1, name
    # a random design may repeat a combination; a repeat runs with its own seed (a replicate)
    combos = Counter(tuple(r[f] for f in nc.FACTORS) for r in d)
    assert sum(v - 1 for v in combos.values()) <= 0.05 * len(d)
    assert nc.design(40, seed=1) != nc.design(40, seed=2)


def test_held_out_levels_decide_the_split():
    d = nc.design()
    for r in d:
        held = r["tcp"] == "cubic" or r["dnn"] == "resnext50"
        assert r["split"] == ("test" if held else "train")
    counts = Counter(r["split"] for r in d)
    assert 0.3 < counts["test"] / len(d) < 0.6     # both halves are large enough to report


@pytest.mark.parametrize("dnn", nc.FACTORS["dnn"])
def test_blocks_keep_the_profile_totals(dnn):
    blocks = nc.pipedream_blocks(dnn)
    assert 1 <= len(blocks) <= nc.CORPUS_BLOCKS
    for col in range(3):
        assert math.fsum(b[col] for b in blocks) == pytest.approx(1.0, abs=1e-12)
    # cut at about equal bytes: no block holds more than the largest layer plus a share
    profile = zoo.profile(f"{dnn}-pipedream")
    assert profile.model_bytes > 0 and all(b[0] > 0 for b in blocks)


@needs_ns3
def test_a_regime_runs_and_its_rows_carry_the_design():
    regime = next(r for r in nc.design() if r["dnn"] == "resnet18" and r["mode"] == "sync")
    rows = nc.regime_rows(regime, workers=(1, 2), steps=2, warmup=1, batches=1)
    assert [r["workers"] for r in rows] == [1, 2]
    for row in rows:
        assert set(row) == set(nc.CORPUS_COLUMNS)
        assert row["split"] == regime["split"] and row["dnn"] == "resnet18"
        assert row["throughput"] > 0 and row["queue_drops"] >= 0


def test_cli_refuses_bad_counts(tmp_path, capsys):
    assert nc.main(["--out", str(tmp_path / "c.csv"), "--jobs", "0"]) == 2
    assert "--jobs" in capsys.readouterr().err
