"""The ns-3 corpus: its design, its held-out split, and the committed rows."""

import math
import os
import subprocess
import sys
import time
from collections import Counter

import pytest
from processes import any_alive_after

from perfmodel import zoo
from perfmodel.errors import SimulationStalled, SpecError
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


@pytest.mark.parametrize("spec, earlier", [(nc.PROBE, [nc.CORPUS]),
                                           (nc.PROBE2, [nc.CORPUS, nc.PROBE])],
                         ids=["probe", "probe2"])
def test_a_probe_shares_no_tcp_and_no_dnn_with_the_sets_before_it(spec, earlier):
    d = nc.design(spec=spec)
    assert d == nc.design(spec=spec) and len(d) == spec.regimes
    assert {r["split"] for r in d} == {spec.split}
    assert all(r["regime"].startswith(spec.prefix) for r in d)
    for name, levels in spec.factors.items():
        counts = Counter(r[name] for r in d)
        assert set(counts) == set(levels)
        assert max(counts.values()) - min(counts.values()) <= 1, name
    for name in ("tcp", "dnn"):
        for other in earlier:
            assert not set(spec.factors[name]) & set(other.factors[name]), (name, other.name)
    assert set(spec.factors["tcp"]) <= set(ns3_job.TCP_VARIANTS)
    assert {r["buffer"] for r in d} == {"deep"} and {r["queue"] for r in d} == {"fair"}
    assert_designs_sharing_a_prefix_draw_the_same_regimes()


def assert_designs_sharing_a_prefix_draw_the_same_regimes():
    # a prefix names one draw: only a re-measurement of a design (the corpus at 8x) shares it
    by_prefix: dict = {}
    for spec in nc.DESIGNS.values():
        by_prefix.setdefault(spec.prefix, []).append(spec)
    for specs in by_prefix.values():
        assert all(nc.design(spec=s) == nc.design(spec=specs[0]) for s in specs[1:]), specs
    assert [len(v) for v in by_prefix.values()].count(1) == len(by_prefix) - 1


def test_the_third_probe_runs_new_tcps_fifo_hosts_and_up_to_four_servers():
    d = nc.design(spec=nc.PROBE3)
    assert d == nc.design(spec=nc.PROBE3) and len(d) == 24
    assert {r["split"] for r in d} == {"probe3"} and {r["buffer"] for r in d} == {"deep"}
    for name, levels in nc.PROBE3.factors.items():   # balanced over the listed levels
        counts = Counter(r[name] for r in d)
        listed = Counter(levels)
        per_listing = {lvl: counts[lvl] / listed[lvl] for lvl in listed}
        assert max(per_listing.values()) - min(per_listing.values()) <= 1, name
    assert Counter(r["mode"] for r in d) == {"async": 16, "sync": 8}
    assert {r["queue"] for r in d} == {"fifo", "fair"}
    assert {r["n_ps"] for r in d} == {1, 2, 3, 4}
    for other in (nc.CORPUS, nc.PROBE, nc.PROBE2):
        assert not set(nc.PROBE3.factors["tcp"]) & set(other.factors["tcp"]), other.name
    assert not set(nc.PROBE3.factors["dnn"]) & set(nc.FACTORS["dnn"])   # no rule's DNN
    assert set(nc.PROBE3.factors["tcp"]) <= set(ns3_job.TCP_VARIANTS)


def test_the_fourth_probe_is_the_probes_network_on_up_to_four_servers():
    d = nc.design(spec=nc.PROBE4)
    assert d == nc.design(spec=nc.PROBE4) and len(d) == 24
    assert {r["split"] for r in d} == {"probe4"}
    assert {r["queue"] for r in d} == {"fair"} and {r["buffer"] for r in d} == {"deep"}
    assert Counter(r["n_ps"] for r in d) == {1: 6, 2: 6, 3: 6, 4: 6}
    assert Counter(r["mode"] for r in d) == {"async": 16, "sync": 8}
    probes = set().union(*(set(p.factors["tcp"]) for p in (nc.PROBE, nc.PROBE2, nc.PROBE3)))
    assert set(nc.PROBE4.factors["tcp"]) <= probes
    assert not set(nc.PROBE4.factors["tcp"]) & set(nc.FACTORS["tcp"])
    assert not set(nc.PROBE4.factors["dnn"]) & set(nc.FACTORS["dnn"])


def test_the_fifth_probe_is_the_probes_network_on_one_or_two_servers():
    d = nc.design(spec=nc.PROBE5)
    assert d == nc.design(spec=nc.PROBE5) and len(d) == 24
    assert {r["split"] for r in d} == {"probe5"}
    assert {r["queue"] for r in d} == {"fair"} and {r["buffer"] for r in d} == {"deep"}
    assert Counter(r["n_ps"] for r in d) == {1: 12, 2: 12}
    assert Counter(r["mode"] for r in d) == {"async": 16, "sync": 8}
    assert Counter(r["tcp"] for r in d) == {t: 2 for t in nc.PROBE4.factors["tcp"]}
    assert not set(nc.PROBE5.factors["dnn"]) & set(nc.FACTORS["dnn"])
    assert [r["tcp"] for r in d] != [r["tcp"] for r in nc.design(spec=nc.PROBE4)]   # a new draw


def test_the_twelfth_probe_is_the_fifth_probes_network_mostly_sync():
    d = nc.design(spec=nc.PROBE12)
    assert d == nc.design(spec=nc.PROBE12) and len(d) == 24
    assert {r["split"] for r in d} == {"probe12"} and {r["regime"][0] for r in d} == {"a"}
    assert {r["queue"] for r in d} == {"fair"} and {r["buffer"] for r in d} == {"deep"}
    assert Counter(r["n_ps"] for r in d) == {1: 12, 2: 12}
    assert Counter(r["mode"] for r in d) == {"sync": 16, "async": 8}
    assert not set(nc.PROBE12.factors["dnn"]) & set(nc.FACTORS["dnn"])
    assert [r["tcp"] for r in d] != [r["tcp"] for r in nc.design(spec=nc.PROBE5)]   # a new draw


def test_the_thirteenth_probe_is_the_seventh_probes_network_on_up_to_four_servers():
    d = nc.design(spec=nc.PROBE13)
    assert d == nc.design(spec=nc.PROBE13) and len(d) == 24
    assert {r["split"] for r in d} == {"probe13"} and {r["regime"][0] for r in d} == {"b"}
    assert Counter(r["n_ps"] for r in d) == {1: 6, 2: 6, 3: 6, 4: 6}
    assert Counter(r["mode"] for r in d) == {"sync": 12, "async": 12}
    assert {r["queue"] for r in d} == {"fair", "fifo"} and {r["buffer"] for r in d} == {"deep"}
    assert not set(nc.PROBE13.factors["dnn"]) & set(nc.FACTORS["dnn"])
    assert nc.PROBE13_PATH.name == "ns3_probe13.csv"


def test_the_fourteenth_probe_adds_heavy_tailed_compute_to_the_thirteenths_factors():
    d = nc.design(spec=nc.PROBE14)
    assert d == nc.design(spec=nc.PROBE14) and len(d) == 24
    assert {r["split"] for r in d} == {"probe14"} and {r["regime"][0] for r in d} == {"d"}
    assert Counter(r["jitter"] for r in d) == {"none": 8, "lognormal": 8, "pareto": 8}
    assert Counter(r["mode"] for r in d) == {"sync": 12, "async": 12}
    assert {r["n_ps"] for r in d} == {1, 2, 3, 4}
    assert [r["tcp"] for r in d] != [r["tcp"] for r in nc.design(spec=nc.PROBE13)]  # a new draw
    assert nc.PROBE14_PATH.name == "ns3_probe14.csv"


def test_the_fifteenth_probe_is_the_fourteenths_factors_all_sync():
    d = nc.design(spec=nc.PROBE15)
    assert d == nc.design(spec=nc.PROBE15) and len(d) == 24
    assert {r["split"] for r in d} == {"probe15"} and {r["regime"][0] for r in d} == {"e"}
    assert {r["mode"] for r in d} == {"sync"}
    assert Counter(r["jitter"] for r in d) == {"none": 8, "lognormal": 8, "pareto": 8}
    assert [r["tcp"] for r in d] != [r["tcp"] for r in nc.design(spec=nc.PROBE14)]  # a new draw
    assert nc.PROBE15_PATH.name == "ns3_probe15.csv"


def test_the_sixteenth_probe_is_the_fourteenths_factors_all_async_with_slower_updates():
    d = nc.design(spec=nc.PROBE16)
    assert d == nc.design(spec=nc.PROBE16) and len(d) == 24
    assert {r["split"] for r in d} == {"probe16"} and {r["regime"][0] for r in d} == {"f"}
    assert {r["mode"] for r in d} == {"async"}
    assert Counter(r["update_rate"] for r in d) == {0.5e9: 6, 1e9: 6, 1.5e9: 6, 2.5e9: 6}
    assert Counter(r["jitter"] for r in d) == {"none": 8, "lognormal": 8, "pareto": 8}
    assert [r["tcp"] for r in d] != [r["tcp"] for r in nc.design(spec=nc.PROBE14)]  # a new draw
    assert nc.PROBE16_PATH.name == "ns3_probe16.csv"


def test_the_seventeenth_probe_is_the_sixteenths_factors_at_10_and_25_gbps():
    d = nc.design(spec=nc.PROBE17)
    assert d == nc.design(spec=nc.PROBE17) and len(d) == 24
    assert {r["split"] for r in d} == {"probe17"} and {r["regime"][0] for r in d} == {"g"}
    assert {r["mode"] for r in d} == {"async"}
    assert Counter(r["bandwidth_gbps"] for r in d) == {10: 12, 25: 12}
    assert Counter(r["update_rate"] for r in d) == {1e9: 8, 2e9: 8, 4e9: 8}
    assert nc.PROBE17_PATH.name == "ns3_probe17.csv"


def test_the_eighteenth_probe_is_the_sixteenths_factors_on_three_or_four_servers():
    d = nc.design(spec=nc.PROBE18)
    assert d == nc.design(spec=nc.PROBE18) and len(d) == 24
    assert {r["split"] for r in d} == {"probe18"} and {r["regime"][0] for r in d} == {"h"}
    assert {r["mode"] for r in d} == {"async"}
    assert Counter(r["n_ps"] for r in d) == {3: 12, 4: 12}
    assert Counter(r["update_rate"] for r in d) == {5e9: 12, 25e9: 12}
    assert Counter(r["bandwidth_gbps"] for r in d) == {1: 8, 10: 8, 25: 8}
    assert nc.PROBE18_PATH.name == "ns3_probe18.csv"


def test_the_nineteenth_probe_is_the_fifteenths_factors_with_varying_compute():
    d = nc.design(spec=nc.PROBE19)
    assert d == nc.design(spec=nc.PROBE19) and len(d) == 24
    assert {r["split"] for r in d} == {"probe19"} and {r["regime"][0] for r in d} == {"i"}
    assert {r["mode"] for r in d} == {"sync"}
    assert Counter(r["jitter"] for r in d) == {"lognormal": 12, "pareto": 12}
    assert Counter(r["n_ps"] for r in d) == {1: 6, 2: 6, 3: 6, 4: 6}
    assert nc.PROBE19_PATH.name == "ns3_probe19.csv"


def test_the_twentieth_probe_is_async_on_one_or_two_servers_with_short_updates():
    d = nc.design(spec=nc.PROBE20)
    assert d == nc.design(spec=nc.PROBE20) and len(d) == 24
    assert {r["split"] for r in d} == {"probe20"} and {r["regime"][0] for r in d} == {"j"}
    assert {r["mode"] for r in d} == {"async"}
    assert Counter(r["n_ps"] for r in d) == {1: 12, 2: 12}
    assert Counter(r["bandwidth_gbps"] for r in d) == {1: 12, 10: 12}
    assert Counter(r["update_rate"] for r in d) == {5e9: 6, 12.5e9: 6, 25e9: 6, 50e9: 6}
    assert nc.PROBE20_PATH.name == "ns3_probe20.csv"


def test_the_twenty_first_probe_is_async_on_fifo_hosts_with_loss_based_tcp():
    d = nc.design(spec=nc.PROBE21)
    assert d == nc.design(spec=nc.PROBE21) and len(d) == 24
    assert {r["split"] for r in d} == {"probe21"} and {r["regime"][0] for r in d} == {"k"}
    assert {r["mode"] for r in d} == {"async"} and {r["queue"] for r in d} == {"fifo"}
    assert {r["tcp"] for r in d} <= ns3_job.LOSS_BASED_TCP - {"newreno", "cubic"}
    assert {ns3_job.link_sharing_of(r["queue"], r["tcp"]) for r in d} == {"fifo"}
    assert Counter(r["n_ps"] for r in d) == {3: 12, 4: 12}
    assert Counter(r["update_rate"] for r in d) == {1e9: 8, 5e9: 8, 25e9: 8}
    assert nc.PROBE21_PATH.name == "ns3_probe21.csv"


def test_the_twenty_second_probe_is_the_twenty_firsts_with_other_update_rates():
    d = nc.design(spec=nc.PROBE22)
    assert d == nc.design(spec=nc.PROBE22) and len(d) == 24
    assert {r["split"] for r in d} == {"probe22"} and {r["regime"][0] for r in d} == {"l"}
    assert {ns3_job.link_sharing_of(r["queue"], r["tcp"]) for r in d} == {"fifo"}
    assert {r["mode"] for r in d} == {"async"}
    assert Counter(r["update_rate"] for r in d) == {2.5e9: 8, 10e9: 8, 50e9: 8}
    assert nc.PROBE22_PATH.name == "ns3_probe22.csv"


def test_the_twenty_third_probe_is_sync_on_fifo_hosts_with_loss_based_tcp():
    d = nc.design(spec=nc.PROBE23)
    assert d == nc.design(spec=nc.PROBE23) and len(d) == 24
    assert {r["split"] for r in d} == {"probe23"} and {r["regime"][0] for r in d} == {"m"}
    assert {r["mode"] for r in d} == {"sync"} and {r["queue"] for r in d} == {"fifo"}
    assert {ns3_job.link_sharing_of(r["queue"], r["tcp"]) for r in d} == {"fifo"}
    assert {r["n_ps"] for r in d} == {1, 2, 3, 4}
    assert nc.PROBE23_PATH.name == "ns3_probe23.csv"


def test_the_twenty_fourth_probe_is_async_at_eight_times_the_segments():
    d = nc.design(spec=nc.PROBE24)
    assert d == nc.design(spec=nc.PROBE24) and len(d) == 16
    assert {r["split"] for r in d} == {"probe24"} and {r["regime"][0] for r in d} == {"n"}
    assert {r["mode"] for r in d} == {"async"} and {r["buffer"] for r in d} == {"deep"}
    assert Counter(r["queue"] for r in d) == {"fair": 11, "fifo": 5}
    assert Counter(r["n_ps"] for r in d) == {1: 4, 2: 4, 3: 4, 4: 4}
    assert nc.PROBE24.workers == (1, 2, 4, 8, 16) and nc.PROBE24.segments_factor == 8
    assert nc.PROBE24_PATH.name == "ns3_probe24.csv"


def test_the_twenty_fifth_probe_is_async_on_one_or_two_servers_at_eight_times_the_segments():
    d = nc.design(spec=nc.PROBE25)
    assert d == nc.design(spec=nc.PROBE25) and len(d) == 12
    assert {r["split"] for r in d} == {"probe25"} and {r["regime"][0] for r in d} == {"o"}
    assert {r["mode"] for r in d} == {"async"} and {r["n_ps"] for r in d} == {1, 2}
    assert {r["bandwidth_gbps"] for r in d} == {1, 10}
    assert min(r["update_rate"] for r in d) >= 5e9
    assert [r["tcp"] for r in d] != [r["tcp"] for r in nc.design(spec=nc.PROBE20)][:12]
    assert nc.PROBE25.workers == (1, 2, 4, 8, 16) and nc.PROBE25.segments_factor == 8
    assert nc.PROBE25_PATH.name == "ns3_probe25.csv"


def test_the_twenty_sixth_probe_is_async_on_two_to_four_servers_at_eight_times_the_segments():
    d = nc.design(spec=nc.PROBE26)
    assert d == nc.design(spec=nc.PROBE26) and len(d) == 12
    assert {r["split"] for r in d} == {"probe26"} and {r["regime"][0] for r in d} == {"A"}
    assert {r["mode"] for r in d} == {"async"} and {r["n_ps"] for r in d} == {2, 3, 4}
    assert nc.PROBE26.workers == (1, 2, 4, 8, 16) and nc.PROBE26.segments_factor == 8
    assert nc.PROBE26_PATH.name == "ns3_probe26.csv"
    # every design names its regimes apart, but a re-measurement of another
    assert_designs_sharing_a_prefix_draw_the_same_regimes()


def test_the_twenty_seventh_probe_draws_the_twenty_fourth_probes_factors_again():
    d = nc.design(spec=nc.PROBE27)
    assert d == nc.design(spec=nc.PROBE27) and len(d) == 12
    assert {r["split"] for r in d} == {"probe27"} and {r["regime"][0] for r in d} == {"B"}
    assert nc.PROBE27.factors == nc.PROBE24.factors and {r["mode"] for r in d} == {"async"}
    for name in ("n_ps", "jitter", "bandwidth_gbps"):   # balanced over every level
        assert set(Counter(r[name] for r in d).values()) == {12 // len(nc.PROBE24.factors[name])}
    first = [(r["tcp"], r["dnn"]) for r in nc.design(spec=nc.PROBE24)][:12]
    assert [(r["tcp"], r["dnn"]) for r in d] != first    # a new draw
    assert nc.PROBE27.workers == (1, 2, 4, 8, 16) and nc.PROBE27.segments_factor == 8
    assert nc.PROBE27_PATH.name == "ns3_probe27.csv"


def test_the_twenty_eighth_probe_is_half_dctcp_and_measured_only_as_long_jobs(tmp_path, capsys):
    d = nc.design(spec=nc.PROBE28)
    assert d == nc.design(spec=nc.PROBE28) and len(d) == 12
    assert {r["split"] for r in d} == {"probe28"} and {r["regime"][0] for r in d} == {"C"}
    assert {r["mode"] for r in d} == {"async"}
    assert Counter(r["tcp"] == "dctcp" for r in d) == {True: 6, False: 6}
    assert {r["tcp"] for r in d} - {"dctcp"} <= set(nc.PROBE27.factors["tcp"])
    assert {k: v for k, v in nc.PROBE28.factors.items() if k != "tcp"} == \
        {k: v for k, v in nc.PROBE27.factors.items() if k != "tcp"}
    # no short-window file: not one of the protocol's sets
    assert "probe28" not in nc.PROBE_PATHS and "probe27" in nc.PROBE_PATHS
    if ns3_job.available():
        assert nc.main(["--design", "probe28", "--out", str(tmp_path / "x.csv")]) == 2
        assert "--async-warmup" in capsys.readouterr().err
        assert not (tmp_path / "x.csv").exists()


def test_the_corpus_at_8x_is_the_corpus_draw_at_more_segments_and_fewer_worker_counts():
    assert nc.design(spec=nc.CORPUS_8X) == nc.design(spec=nc.CORPUS)
    assert nc.CORPUS_8X.segments_factor == 8 and nc.CORPUS_8X.workers == (1, 2, 4, 8, 16)
    assert nc.COMMITTED_SETS["corpus-8x"] == nc.CORPUS_8X_PATH
    assert nc.CORPUS_8X_PATH.name == "ns3_corpus_8x.csv"
    assert nc.CORPUS_8X_PATH not in nc.PROTOCOL_SETS and nc.CORPUS_8X.split is None


def test_cli_buffer_runs_only_the_regimes_with_that_buffer(tmp_path, monkeypatch):
    asked = {}
    monkeypatch.setattr(ns3_job, "available", lambda: True)
    monkeypatch.setattr(nc, "generate", lambda out, **kw: asked.update(kw))
    out = str(tmp_path / "c.csv")
    assert nc.main(["--out", out, "--design", "corpus-8x", "--buffer", "deep"]) == 0
    deep = [r["regime"] for r in nc.design() if r["buffer"] == "deep"]
    assert asked["only"] == deep and len(deep) == 48 and asked["spec"] is nc.CORPUS_8X
    assert nc.main(["--out", out, "--buffer", "shallow", "--only", f"c000,c001,{deep[0]}"]) == 0
    assert deep[0] not in asked["only"] and set(asked["only"]) <= {"c000", "c001"}
    assert all(r["buffer"] == "shallow" for r in nc.design() if r["regime"] in asked["only"])


def test_a_design_runs_at_its_own_segments_factor_unless_told(tmp_path):
    # nothing to run (only=()): the header alone says what the runs would keep
    for factor, says in ((None, "at most 8000 per model transfer"),
                         (1.0, "at most 1000 segments per model transfer")):
        out = tmp_path / f"p{factor}.csv"
        nc.generate(out, only=(), spec=nc.PROBE24, segments_factor=factor)
        assert says in out.read_text()


def test_the_sixth_probe_adds_fifo_hosts_to_the_fifth_probes_network():
    d = nc.design(spec=nc.PROBE6)
    assert d == nc.design(spec=nc.PROBE6) and len(d) == 24
    assert {r["split"] for r in d} == {"probe6"} and {r["regime"][0] for r in d} == {"u"}
    assert Counter(r["queue"] for r in d) == {"fair": 16, "fifo": 8}
    assert {r["buffer"] for r in d} == {"deep"}
    assert Counter(r["n_ps"] for r in d) == {1: 12, 2: 12}
    assert Counter(r["mode"] for r in d) == {"async": 16, "sync": 8}
    assert not set(nc.PROBE6.factors["dnn"]) & set(nc.FACTORS["dnn"])
    assert [r["tcp"] for r in d] != [r["tcp"] for r in nc.design(spec=nc.PROBE5)]   # a new draw


@pytest.mark.parametrize("spec, previous, prefix, counts", [
    (nc.PROBE7, nc.PROBE6, "v", {"queue": {"fair": 16, "fifo": 8}, "n_ps": {1: 12, 2: 12},
                                 "mode": {"async": 18, "sync": 6},
                                 "update_rate": {1e9: 8, 5e9: 8, 25e9: 8}}),
    (nc.PROBE8, nc.PROBE7, "w", {"queue": {"fair": 16, "fifo": 8},
                                 ("mode", "n_ps"): {("sync", 1): 6, ("sync", 2): 6,
                                                ("async", 1): 6, ("async", 2): 6},
                                 "update_rate": {1e9: 8, 5e9: 8, 25e9: 8}}),
    (nc.PROBE9, nc.PROBE7, "x", {"mode": {"async": 18, "sync": 6},
                                 "update_rate": {1e9: 8, 2.5e9: 8, 5e9: 8}}),
    (nc.PROBE10, nc.PROBE9, "y", {"mode": {"async": 18, "sync": 6},
                                  "update_rate": {1e9: 8, 2.5e9: 8, 5e9: 8}}),
    (nc.PROBE11, nc.PROBE10, "z", {"mode": {"async": 18, "sync": 6}, "overlap": {True: 24},
                                   "update_rate": {1e9: 8, 2.5e9: 8, 5e9: 8}}),
], ids=["probe7", "probe8", "probe9", "probe10", "probe11"])
def test_the_update_rate_probes_draw_their_own_balanced_designs(spec, previous, prefix, counts):
    # the seventh probe: the sixth's network mostly async with the update rate a factor; the
    # eighth: the seventh's half sync; the ninth: the seventh's with slower updates; the
    # tenth: the ninth's drawn again; the eleventh: the ninth's, every regime overlapping
    d = nc.design(spec=spec)
    assert d == nc.design(spec=spec) and len(d) == 24
    assert {r["split"] for r in d} == {spec.name} and {r["regime"][0] for r in d} == {prefix}
    for names, expected in counts.items():   # one factor, or a tuple of them
        values = [tuple(r[n] for n in names) if isinstance(names, tuple) else r[names]
                  for r in d]
        assert Counter(values) == expected, names
    assert [r["tcp"] for r in d] != [r["tcp"] for r in nc.design(spec=previous)]   # a new draw


@pytest.mark.parametrize("rate, expected", [(None, nc.UPDATE_RATE), (1e9, 1e9)])
def test_a_regime_updates_at_its_own_rate_when_the_design_sets_one(rate, expected):
    regime = dict(nc.design(spec=nc.PROBE6)[0])
    if rate is not None:
        regime["update_rate"] = rate
    profile, t_update = nc._job(regime)
    assert t_update == pytest.approx(profile.model_bytes / expected)


@pytest.mark.parametrize("dnn", nc.FACTORS["dnn"] + nc.PROBE.factors["dnn"]
                         + nc.PROBE2.factors["dnn"])
def test_blocks_keep_the_profile_totals(dnn):
    blocks = nc.pipedream_blocks(dnn)
    assert 0 < len(blocks) <= nc.CORPUS_BLOCKS
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


@needs_ns3
def test_a_stalled_run_is_listed_not_written(tmp_path):
    regime = next(r for r in nc.design() if r["dnn"] == "resnet18" and r["mode"] == "sync")
    with pytest.raises(SimulationStalled):
        nc.regime_rows(regime, workers=(1,), steps=2, warmup=1, batches=1, stop_time=1e-4)
    stalled = []
    rows = nc.regime_rows(regime, workers=(1,), steps=2, warmup=1, batches=1, stop_time=1e-4,
                          stalled=stalled)
    assert rows == [] and stalled == [f"{regime['regime']}@1"]
    path = tmp_path / "c.csv"
    nc._write(path, [], nc._header(nc.CORPUS, 96, 2026, 0, 96, "cmd", stalled))
    assert nc.read_stalled(path) == stalled and nc.read_rows(path) == []


def test_stop_time_covers_the_slowest_plausible_window():
    profile = zoo.profile("vgg16-pipedream")
    regime = {"jitter": "pareto", "bandwidth_gbps": 1.0}
    window = 10 * (2 * 16 * profile.model_bytes / 1.25e8)   # every transfer in series
    assert nc.stop_time_for(profile, regime, 16, 10) > 20 * window
    assert nc.stop_time_for(profile, regime, 16, 10) > nc.stop_time_for(profile, regime, 2, 10)


def test_cli_refuses_bad_counts(tmp_path, capsys):
    assert nc.main(["--out", str(tmp_path / "c.csv"), "--jobs", "0"]) == 2
    assert "--jobs" in capsys.readouterr().err
    for flag, value in (("--segments-factor", "0"), ("--workers", "1,x"), ("--workers", "0")):
        assert nc.main(["--out", str(tmp_path / "c.csv"), flag, value]) == 2
        assert flag in capsys.readouterr().err


@pytest.mark.parametrize("dnn, segments", [("squeezenet1_0", 34.5), ("resnet50", 706),
                                           ("gnmt", 1000)])
def test_the_scale_leaves_at_most_the_corpus_segments_and_the_factor_multiplies_them(
        dnn, segments):
    # squeezenet's 5.0 MB at the smallest scale of 100 is 34.5 segments of 1448 bytes;
    # gnmt's 775 MB is scaled to 1000 of them
    model = zoo.profile(f"{dnn}-pipedream").model_bytes
    assert model / nc.scale_for(model) / 1448 == pytest.approx(segments, rel=2e-3)
    assert nc.scale_for(model, 8) == pytest.approx(nc.scale_for(model) / 8)
    with pytest.raises(SpecError, match="segments_factor"):
        nc.scale_for(model, 0)


def test_a_segments_factor_reaches_every_run_and_the_header(monkeypatch):
    seen = []

    def run(regime, workers, **kw):
        seen.append((workers, kw["scale"]))
        raise SimulationStalled("stop")

    monkeypatch.setattr(nc, "regime_run", run)
    regime = next(r for r in nc.design() if r["dnn"] == "resnet50")
    stalled = []
    nc._regime_job(regime, (1, 4), 1, nc.CORPUS_WARMUP, 8.0)
    nc.regime_rows(regime, workers=(2,), stalled=stalled, segments_factor=4.0)
    assert seen == [(1, 12.5), (4, 12.5), (2, 25.0)]     # the smallest scale 100, / 8 and / 4
    header = nc._header(nc.CORPUS, 96, 2026, 96, 96, "cmd", segments_factor=8)[2]
    assert "8 times the segments per transfer of the corpus's: >= 12.5, at most 8000" in header
    assert "at most 1000 segments per model transfer" in nc._header(
        nc.CORPUS, 96, 2026, 96, 96, "cmd")[2]


def test_heavy_tail_steps_lengthen_only_the_pareto_regimes(monkeypatch):
    seen = {}

    def rows(regime, **kw):
        seen[regime["jitter"]] = (kw["steps"], kw["async_steps"])
        return []

    monkeypatch.setattr(nc, "regime_rows", rows)
    for jitter in nc.JITTER_CV:
        nc._regime_job({"jitter": jitter, "mode": "sync", "regime": "c000"},
                       nc.CORPUS_WORKERS, nc.LONG_TAIL_STEPS)
    assert seen == {"none": (8, 16), "lognormal": (8, 16), "pareto": (32, 64)}
    header = nc._header(nc.CORPUS, 96, 2026, 96, 96, "cmd", heavy_tail_steps=4)
    assert "4 times as many in the Pareto-jitter regimes" in header[3]
    assert "times as many" not in nc._header(nc.CORPUS, 96, 2026, 96, 96, "cmd")[3]


def test_a_longer_async_warmup_reaches_the_async_regimes_alone(monkeypatch):
    # a long job's speed: async runs let their workers split up before the window opens
    seen = {}

    def rows(regime, **kw):
        seen[regime["mode"]] = kw["warmup"]
        return []

    monkeypatch.setattr(nc, "regime_rows", rows)
    for mode in ("sync", "async"):
        nc._regime_job({"jitter": "none", "mode": mode, "regime": "c000"},
                       nc.CORPUS_WORKERS, 1, 32)
    assert seen == {"sync": nc.CORPUS_WARMUP, "async": 32}
    header = nc._header(nc.CORPUS, 96, 2026, 96, 96, "cmd", async_warmup=32)[3]
    assert f"sync 8 steps after {nc.CORPUS_WARMUP}, async 16 gradients per worker after 32" \
        in header


ROWS = nc.read_rows(nc.CORPUS_PATH)
LONG_ROWS = nc.read_rows(nc.LONG_CORPUS_PATH)
# every committed set: its path, rows and design (the long-tail copy has the corpus's)
SHIPPED_IDS = list(nc.COMMITTED_SETS)
SHIPPED = [(path, ROWS if name == "corpus" else LONG_ROWS if name == "long-tail"
            else nc.read_rows(path), nc.DESIGNS.get(name, nc.CORPUS))
           for name, path in nc.COMMITTED_SETS.items()]
PROBE_IDS = list(nc.PROBE_PATHS)
PROBE_SETS = [rows for name, (_, rows, _) in zip(SHIPPED_IDS, SHIPPED) if name in PROBE_IDS]


@pytest.mark.parametrize("path, shipped, spec", SHIPPED, ids=SHIPPED_IDS)
def test_shipped_corpus_rows_carry_the_design_and_every_worker_count(path, shipped, spec):
    assert shipped, path   # committed
    header = path.read_text().splitlines()[0]
    design = {r["regime"]: r for r in nc.design(spec=spec)}
    stalled = set(nc.read_stalled(path))
    by_regime: dict = {}
    for row in shipped:
        by_regime.setdefault(row["regime"], []).append(row)
    assert set(by_regime) <= set(design)
    state = "complete" if len(by_regime) == len(design) else \
        f"PARTIAL: {len(by_regime)} of {len(design)} regimes"
    assert header.endswith(state)
    for name, rows in by_regime.items():
        missing = {int(k) for k in spec.workers} - {int(r["workers"]) for r in rows}
        assert {f"{name}@{k}" for k in missing} <= stalled, name   # a missing run stalled
        assert len(rows) == len({r["workers"] for r in rows})
        regime = design[name]
        for row in rows:   # the rows say what the design drew
            assert row["split"] == regime["split"] and row["dnn"] == regime["dnn"]
            assert row["tcp"] == regime["tcp"] and int(row["n_ps"]) == regime["n_ps"]
            assert row["queue"] == regime["queue"] and row["jitter"] == regime["jitter"]
            assert int(row["overlap"]) == regime["overlap"] and row["mode"] == regime["mode"]
            assert float(row["t_update"]) == pytest.approx(nc._job(regime)[1], abs=1e-9)


@pytest.mark.parametrize("shipped", [rows for _, rows, _ in SHIPPED], ids=SHIPPED_IDS)
def test_shipped_corpus_respects_the_compute_and_nic_floors(shipped):
    # a worker never steps faster than its compute (mean factor 1) nor moves its model
    # over its NIC faster than the line rate: throughput <= K b / max(T_C, M / B)
    for row in shipped:
        profile = zoo.profile(f"{row['dnn']}-pipedream")
        k, b = int(row["workers"]), int(row["batch_size"])
        floor = max(profile.t_forward + profile.t_backward,
                    profile.model_bytes / float(row["bandwidth"]))
        bound = k * b / floor
        assert float(row["throughput"]) <= bound * 1.10, row["regime"]   # jitter: 10%


@needs_ns3
def test_a_committed_run_is_reproduced_exactly():
    # the fastest committed run, run again from the design: the same row but the wall time
    row = min((r for r in ROWS if r["workers"] == "1"), key=lambda r: float(r["wall_seconds"]))
    regime = next(r for r in nc.design() if r["regime"] == row["regime"])
    again = nc.regime_rows(regime, workers=(1,))[0]
    fresh = {k: str(v) for k, v in again.items() if k != "wall_seconds"}
    assert fresh == {k: v for k, v in row.items() if k != "wall_seconds"}


def test_the_long_tail_corpus_differs_only_in_its_pareto_runs():
    short = {(r["regime"], r["workers"]): r for r in ROWS}
    long = {(r["regime"], r["workers"]): r for r in LONG_ROWS}
    assert set(long) == set(short)
    for key, row in long.items():
        other = short[key]
        if row["jitter"] != "pareto":   # the same runs, reproduced exactly
            assert ({k: v for k, v in row.items() if k != "wall_seconds"}
                    == {k: v for k, v in other.items() if k != "wall_seconds"}), key
        else:                           # the same design, measured 4 times as long
            assert int(row["steps"]) == nc.LONG_TAIL_STEPS * int(other["steps"]), key
            assert row["seed"] == other["seed"] and row["split"] == other["split"]


def test_the_corpus_at_8x_holds_its_deep_buffer_regimes_every_one_loss_free():
    rows = nc.read_rows(nc.CORPUS_8X_PATH)
    deep = {r["regime"] for r in nc.design() if r["buffer"] == "deep"}
    assert {r["regime"] for r in rows} == deep
    assert all(int(r["queue_drops"]) == 0 for r in rows)
    # the same jobs as the corpus's, moved 8 times the segments per transfer
    scale = {r["regime"]: float(r["scale"]) for r in ROWS}
    assert all(float(r["scale"]) == pytest.approx(scale[r["regime"]] / 8, rel=1e-3)
               for r in rows)


@pytest.mark.parametrize("shipped", PROBE_SETS, ids=PROBE_IDS)
def test_the_probes_are_loss_free_as_designed(shipped):
    # deep buffers (fair-queued hosts, FIFO ones too in the third and from the sixth): no run
    # dropped a packet
    assert shipped and all(int(r["queue_drops"]) == 0 for r in shipped)


@pytest.mark.parametrize("queue, tcp, sharing", [
    ("fifo", "cubic", "fifo"), ("fifo", "newreno", "fifo"), ("fifo", "hybla", "fifo"),
    ("fifo", "vegas", "fair"),    # delay-based: keeps the queue short
    ("fifo", "bbr", "fair"),      # paces at the rate it measures
    ("fifo", "dctcp", "fair"),    # backs off at the switch's marks
    ("fair", "cubic", "fair"), ("fair", "vegas", "fair"),
])
def test_link_sharing_of_a_run(queue, tcp, sharing):
    assert ns3_job.link_sharing_of(queue, tcp) == sharing


@pytest.mark.parametrize("queue, tcp, field", [("red", "cubic", "queue"),
                                               ("fifo", "reno", "tcp")])
def test_link_sharing_of_refuses_unknown_levels(queue, tcp, field):
    with pytest.raises(SpecError, match=field):
        ns3_job.link_sharing_of(queue, tcp)


@needs_ns3
@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs Linux /proc")
def test_a_killed_corpus_run_leaves_no_worker_behind(tmp_path):
    # its workers run ns-3 for minutes; killed by PID, the parent must take them along
    proc = subprocess.Popen([sys.executable, "-m", "perfmodel.placement.ns3_corpus",
                             "--design", "probe26", "--only", "A000,A001", "--jobs", "2",
                             "--out", str(tmp_path / "c.csv")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    kids = f"/proc/{proc.pid}/task/{proc.pid}/children"
    deadline = time.monotonic() + 60
    # the resource tracker and the two workers
    while len(open(kids).read().split()) < 3 and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(2)   # the workers past their start-up, into ns-3
    workers = [int(p) for p in open(kids).read().split()]
    proc.kill()
    proc.wait()
    assert len(workers) >= 3
    assert not any_alive_after(workers, 20)
