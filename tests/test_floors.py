"""Physical floors: no model answers a step faster than its links and its compute allow."""

import json

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from optimizer import search
from perfmodel import registry
from perfmodel.errors import Infeasible, SpecError
from perfmodel.floors import (
    below_floor,
    compute_floor,
    config_floor,
    link_floor,
    serial_floor,
    step_floor,
)
from perfmodel.gst.model import GST
from perfmodel.specs import Cluster, Config, Profile

#: Data-parallel models (a Profile workload); the layer-wise model takes a DNN.
PROFILE_MODELS = [name for name, e in registry.MODELS.items() if name != "layerwise"]
#: Published formulas kept as their authors wrote them; the search refuses what they promise
#: below the floor instead (test_search_refuses_estimates_below_the_floor).
BASELINES = {name for name, e in registry.MODELS.items() if e.baseline}


def _architecture(name: str) -> str:
    return "allreduce" if name.startswith("allreduce") else "ps"


profiles = st.builds(
    Profile,
    model_bytes=st.floats(1e5, 1e9),
    t_forward=st.floats(1e-4, 0.5),
    t_backward=st.floats(1e-4, 1.0),
    t_update=st.floats(0.0, 0.05),
    batch_size=st.integers(1, 256))
clusters = st.builds(
    Cluster,
    machines=st.just(64),
    nic_bandwidth=st.floats(1e8, 1e10),
    latency=st.floats(0.0, 1e-4),
    link_efficiency=st.floats(0.5, 1.0))


def test_floors_by_hand():
    p = Profile(model_bytes=100e6, t_forward=0.1, t_backward=0.2)
    c = Cluster(machines=32, nic_bandwidth=1.25e9)
    # 16 workers x 100 MB into 2 servers' links: 800 MB each at 1.25 GB/s.
    assert link_floor(p, c, Config(n_replicas=16, n_ps=2)) == pytest.approx(0.64)
    # More servers than workers: the worker's own link carries its 100 MB.
    assert link_floor(p, c, Config(n_replicas=2, n_ps=4)) == pytest.approx(0.08)
    # Ring all-reduce over 8 workers: 2 x 7/8 x 100 MB through each link.
    assert link_floor(p, c, Config(n_replicas=8, n_ps=0),
                      architecture="allreduce") == pytest.approx(0.14)
    assert link_floor(p, c, Config(n_replicas=1, n_ps=0), architecture="allreduce") == 0.0
    assert compute_floor(p) == pytest.approx(0.3)
    assert step_floor(p, c, Config(n_replicas=16, n_ps=2)) == pytest.approx(0.64)
    assert below_floor(0.5, 0.64) and not below_floor(0.64 * (1 - 1e-7), 0.64)
    # The architecture is read off the configuration: servers, or all-reduce without them.
    assert config_floor(p, c, Config(n_replicas=16, n_ps=2)) == pytest.approx(0.64)
    assert config_floor(p, c, Config(n_replicas=8, n_ps=0)) == pytest.approx(0.3)  # compute
    assert config_floor(p, c, Config(n_workers=2, n_replicas=8, n_ps=2)) == 0.0
    assert config_floor("a DNN", c, Config(n_replicas=8, n_ps=2)) == 0.0
    with pytest.raises(SpecError, match="architecture"):
        link_floor(p, c, Config(), architecture="ring")
    with pytest.raises(SpecError, match="n_ps"):
        link_floor(p, c, Config(n_replicas=2, n_ps=0))


@pytest.mark.parametrize("name, mode", [(n, m) for n in PROFILE_MODELS if n not in BASELINES
                                        for m in registry.MODELS[n].modes])
@settings(max_examples=25, deadline=None)
@given(profile=profiles, cluster=clusters, workers=st.integers(1, 24), servers=st.integers(1, 6))
def test_every_model_respects_the_link_and_compute_floors(name, mode, profile, cluster, workers,
                                                          servers):
    arch = _architecture(name)
    config = Config(n_replicas=workers, n_ps=0 if arch == "allreduce" else servers, mode=mode)
    # Without compute jitter (the floors bound the mean; a few jittered steps may average
    # below it by chance), and past the first steps, whose cold pipeline ends the
    # warm-up late and shortens the measured window.
    options = {"steps": 30, "warmup": 10, "jitter": 0.0} if name == "sim" else {}
    try:
        est = registry.make(name, **options).estimate(profile, cluster, config)
    except Infeasible:
        assume(False)
    floor_link = link_floor(profile, cluster, config, architecture=arch)
    assert not below_floor(est.step_time, floor_link), (est.step_time, floor_link)
    assert not below_floor(est.step_time, compute_floor(profile)), est.step_time


def test_serial_floor_by_hand():
    p = Profile(model_bytes=100e6, t_forward=0.1, t_backward=0.2)
    c = Cluster(machines=32, nic_bandwidth=1.25e9)
    # sync: compute, then 16 x 100 MB into 2 servers' links
    assert serial_floor(p, c, Config(n_replicas=16, n_ps=2)) == pytest.approx(0.3 + 0.64)
    # async: a worker's own 100 MB after its compute, or the servers' links per round
    assert serial_floor(p, c, Config(n_replicas=2, n_ps=2, mode="async")) == pytest.approx(0.38)
    assert serial_floor(p, c, Config(n_replicas=64, n_ps=2, mode="async")) == pytest.approx(2.56)
    assert serial_floor(p, c, Config(n_replicas=8, n_ps=0),
                        architecture="allreduce") == pytest.approx(0.3 + 0.14)


@pytest.mark.parametrize("name, mode", [(n, m) for n in PROFILE_MODELS if n not in BASELINES
                                        for m in registry.MODELS[n].modes])
@settings(max_examples=25, deadline=None)
@given(profile=profiles, cluster=clusters, workers=st.integers(1, 24), servers=st.integers(1, 6))
def test_every_model_without_overlap_respects_the_serial_floor(name, mode, profile, cluster,
                                                                workers, servers):
    arch = _architecture(name)
    config = Config(n_replicas=workers, n_ps=0 if arch == "allreduce" else servers, mode=mode)
    options = {"steps": 30, "warmup": 10, "jitter": 0.0} if name == "sim" else {}
    model = registry.make(name, **options)
    assume(not getattr(model, "overlap", False))
    try:
        est = model.estimate(profile, cluster, config)
    except Infeasible:
        assume(False)
    floor = serial_floor(profile, cluster, config, architecture=arch)
    assert not below_floor(est.step_time, floor), (est.step_time, floor)


def test_gst_as_printed_breaks_the_floor_and_the_shared_link_does_not():
    """Zhang et al. 2023 eq. 10 at line rate for every message: 16 ResNet-50-sized
    gradients through one 10 Gbps server link "in" 0.16 s."""
    p = Profile(model_bytes=102e6, t_forward=0.18, t_backward=0.26, batch_size=128)
    c = Cluster(machines=32, nic_bandwidth="10Gbps")
    config = Config(n_replicas=16, n_ps=1)
    floor = link_floor(p, c, config)
    assert floor == pytest.approx(16 * 102e6 / 1.25e9)
    printed = GST(server_link="dedicated").estimate(p, c, config)
    shared = GST().estimate(p, c, config)
    assert below_floor(printed.step_time, floor)
    assert not below_floor(shared.step_time, floor)
    # FC and BC each move the server's 16 shares: 2 x 1.31 s, plus the compute.
    assert shared.step_time >= 2 * floor + compute_floor(p)


def test_search_refuses_estimates_below_the_floor():
    p = Profile(model_bytes=553e6, t_forward=0.1, t_backward=0.2, batch_size=32)
    c = Cluster(machines=32, nic_bandwidth="10Gbps")
    printed = search(GST(server_link="dedicated"), p, c, top=3)
    assert printed.meta["below_floor"], "the printed GST promises impossible steps"
    for cand in printed.ranked:
        assert not below_floor(cand.estimate.step_time, step_floor(p, c, cand.config))
    refused = printed.meta["below_floor"][0]
    assert refused["step_time"] < refused["floor"] and "physical floor" in refused["why"]
    shared = search(GST(), p, c, top=3)
    assert shared.meta["below_floor"] == []
    # The baselines are searched through the same gate.
    for name in BASELINES:
        model = registry.make(name)
        cfgs = [Config(n_replicas=n, n_ps=1, mode="async") for n in (1, 8, 24)]
        got = search(model, p, c, configs=cfgs, top=3)
        for cand in got.ranked:
            assert not below_floor(cand.estimate.step_time, step_floor(p, c, cand.config))


def test_predict_flags_rows_below_the_floor(capsys):
    from perfmodel.cli import main

    assert main(["predict", "--model", "gst", "--server-link", "dedicated", "--workers", "1,16",
                 "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["below_floor"] for r in rows] == [False, True]
    assert main(["predict", "--model", "gst", "--server-link", "dedicated",
                 "--workers", "16"]) == 0
    assert "below the physical floor" in capsys.readouterr().out
    assert main(["predict", "--model", "gst", "--workers", "16"]) == 0
    assert "below the physical floor" not in capsys.readouterr().out
