"""One phase vocabulary: every model names its phases and bottleneck from ``PHASES``.

Each model keeps its paper's own terms (Yan et al.'s U_f..M_w, Zhang et al.'s
IO..UP, Optimus's fitted terms) in ``meta["terms"]``; what a user compares
across models, the phases and the bottleneck, uses one set of names.
"""

import pytest

from perfmodel import PHASES, gst, layerwise, registry, zoo
from perfmodel.baselines import Cynthia, Optimus
from perfmodel.errors import Infeasible
from perfmodel.placement import flowsim
from perfmodel.plot import RESOURCE_COLORS
from perfmodel.result import Estimate
from perfmodel.sim import PHASES as SIM_PHASES
from perfmodel.sim import Trace, simulate
from perfmodel.specs import Cluster, Config

PROFILE = zoo.profile("resnet50-pipedream")
CLUSTER = Cluster(machines=40, nic_bandwidth="10Gbps")


def _in_vocabulary(est: Estimate) -> None:
    unknown = sorted(set(est.phases) - set(PHASES))
    assert not unknown, f"{est.meta.get('model')}: phases {unknown} are not in PHASES"
    assert est.bottleneck in PHASES, f"{est.meta.get('model')}: bottleneck {est.bottleneck!r}"


def _profile_models():
    for name in registry.model_names():
        entry = registry.entry(name)
        if name == "layerwise":
            continue
        for mode in entry.modes:
            yield pytest.param(name, mode, id=f"{name}-{mode}")


#: A plain cluster, a lossy one (timeout stalls) and one of 4-GPU machines.
CLUSTERS = {"plain": CLUSTER,
            "lossy": CLUSTER.replace(timeout_probability=0.05, retransmit_timeout=0.2),
            "multi-gpu": CLUSTER.replace(gpus_per_machine=4, intra_bandwidth="100Gbps")}


@pytest.mark.parametrize("name, mode", list(_profile_models()))
@pytest.mark.parametrize("workers", [1, 4, 16])
def test_every_registered_model_speaks_the_vocabulary(name, mode, workers):
    model = registry.make(name)
    servers = 1 if getattr(model, "uses_parameter_servers", True) else 0
    config = Config(n_replicas=workers, n_ps=servers, mode=mode)
    _in_vocabulary(model.estimate(PROFILE, CLUSTER, config))
    for cluster in ("lossy", "multi-gpu"):   # where the model answers them
        try:
            est = model.estimate(PROFILE, CLUSTERS[cluster], config)
        except Infeasible:
            continue
        _in_vocabulary(est)


def test_layerwise_phases_are_the_vocabulary_and_its_terms_are_in_meta():
    dnn, cluster = zoo.load("adam-mnist"), zoo.cluster("yan2015")
    est = layerwise.LayerWise().estimate(dnn, cluster, Config(n_workers=2, n_replicas=2,
                                                              n_ps=1))
    _in_vocabulary(est)
    assert set(est.phases) == set(layerwise.PHASE_OF.values())
    assert sorted(est.meta["terms"].values()) == sorted(layerwise.COMPONENTS)
    # The phase is the component it names: U_f is the forward pass.
    forward = sum(row["U_f"] / row["parallelism"] for row in est.meta["layers"])
    assert est.phases["forward"] == pytest.approx(forward, rel=1e-12)


def test_gst_phases_map_the_papers_processes_one_to_one():
    assert set(gst.PHASES) <= set(PHASES)
    assert len(set(gst.PHASE_OF.values())) == len(gst.PROCESSES)
    est = gst.GST(sigma=0.0).estimate(PROFILE, CLUSTER, Config(n_replicas=4, n_ps=1))
    times = gst.GST(sigma=0.0).iteration(PROFILE, CLUSTER, Config(n_replicas=4, n_ps=1))
    for process, phase in gst.PHASE_OF.items():
        assert est.phases[phase] == times["exposed"][process]
        assert est.meta["terms"][phase] == process.upper()


def test_cynthia_names_a_saturated_link_network_and_an_idle_one_compute():
    assert Cynthia().estimate(PROFILE, CLUSTER, Config(n_replicas=64)).bottleneck == "network"
    assert Cynthia().estimate(PROFILE, CLUSTER, Config(n_replicas=1)).bottleneck == "compute"


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_optimus_sums_its_terms_into_phases(mode):
    coefs = (0.01, 0.1, 0.05, 0.002, 0.003) if mode == "sync" else (0.01, 0.05, 0.002, 0.003)
    est = Optimus(coefs, mode, global_batch=None).estimate(PROFILE, CLUSTER,
                                                           Config(n_replicas=4, n_ps=2))
    _in_vocabulary(est)
    assert est.phases["overhead"] == pytest.approx(
        sum(v for k, v in est.meta["terms"].items() if k not in ("compute", "communication")))
    assert est.phases["network"] == est.meta["terms"]["communication"]


def test_simulator_and_flow_simulator_phases_are_in_the_vocabulary():
    assert set(SIM_PHASES.values()) <= set(PHASES)
    assert set(flowsim.PHASES) <= set(PHASES)
    trace = Trace.from_layers([PROFILE.model_bytes], [PROFILE.t_forward],
                              [PROFILE.t_backward], overlap=False)
    for bandwidth in (1e6, 1e12):   # network-bound, then compute-bound
        result = simulate(trace, 2, bandwidth, steps=4, warmup=1)
        assert result.bottleneck in PHASES
    assert result.bottleneck == "compute"


def test_every_phase_has_a_meaning_and_a_colour():
    assert all(isinstance(v, str) and v for v in PHASES.values())
    assert set(PHASES) <= set(RESOURCE_COLORS)


def test_the_lossy_and_multi_gpu_phases_are_reached():
    """The clusters above exercise the phases only they produce."""
    config = Config(n_replicas=4, n_ps=1)
    lossy = registry.make("sync").estimate(PROFILE, CLUSTERS["lossy"], config)
    gpus = registry.make("sync").estimate(PROFILE, CLUSTERS["multi-gpu"], config)
    assert lossy.phases["timeouts"] > 0
    assert gpus.phases["intra_reduce"] > 0 and gpus.phases["intra_broadcast"] > 0
