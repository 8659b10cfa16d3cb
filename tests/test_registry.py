"""The registry is the one list of models, and what it says of each model holds."""

import dataclasses

import pytest

from perfmodel import Config, registry, zoo
from perfmodel.errors import SpecError
from perfmodel.fit import selection
from perfmodel.fit.dl2 import report_models
from perfmodel.fit.validation import BASELINES, dl2_models
from perfmodel.interface import MODES, Model

NAMES = list(registry.MODELS)


@pytest.mark.parametrize("name", NAMES)
def test_entry_matches_its_class(name):
    entry = registry.entry(name)
    cls = registry.model_class(name)
    fields = {f.name for f in dataclasses.fields(cls)}
    assert set(entry.options) <= fields, f"{name}: CLI options that are not options of {cls}"
    model = cls()
    assert isinstance(model, Model)
    assert tuple(model.modes) == entry.modes and set(entry.modes) <= set(MODES)
    assert registry.name_of(model) == name
    assert entry.family in registry.FAMILIES


@pytest.mark.parametrize("name,variant", [(e.name, v) for e in registry.MODELS.values()
                                          for v in e.variants])
def test_every_variant_builds_a_model_and_names_known_tunables(name, variant):
    model = registry.make(name, **variant.options)
    assert registry.name_of(model) == name
    grids = {**selection.TUNABLE_GRIDS, **selection.SIM_TUNABLE_GRIDS}
    assert set(variant.tunables) <= set(grids)
    cluster_or_model = {f.name for f in dataclasses.fields(type(model))} | {
        f.name for f in dataclasses.fields(type(zoo.cluster("aws-p3.2xlarge")))}
    assert set(variant.tunables) <= cluster_or_model


def test_variant_names_are_unique():
    names = [v.name for e in registry.MODELS.values() for v in e.variants]
    assert len(names) == len(set(names))


def test_candidate_sets_read_the_registry():
    # the selection's defaults: the "selection" variants, in registry order, by mode
    sync = [c.name for c in selection.default_candidates("sync", simulate=True)]
    async_ = [c.name for c in selection.default_candidates("async", simulate=True)]
    assert sync == ["sync-ps", "sync-fcfs", "sync-hybrid", "sim-ps", "sim-fcfs"]
    assert async_ == ["async-lockstep", "async-mva", "async-fcfs", "async-convoy", "sim-ps",
                      "sim-fcfs"]
    assert [c.name for c in selection.default_candidates("sync")] == sync[:3]
    # the matrix adds GST and, without overlap, the async baselines
    matrix_sync = [c.name for c in selection.matrix_candidates("sync")]
    matrix_async = [c.name for c in selection.matrix_candidates("async")]
    assert matrix_sync == sync + ["gst"]
    assert matrix_async == async_ + ["lin", "cynthia"]
    assert "lin" not in [c.name for c in selection.matrix_candidates("async", overlap=True)]
    assert BASELINES == ("lin", "cynthia")
    assert list(report_models()) == ["sync-ps", "sync-fcfs", "sync-hybrid",
                                     "sync-hybrid-overlap", "async-mva", "optimus"]
    assert list(dl2_models()) == ["sync-ps", "sync-fcfs", "sync-hybrid", "sync-hybrid-overlap"]


def test_a_candidate_carries_what_its_variant_says():
    cands = {c.name: c for c in selection.default_candidates("async", overlap=True, lossy=True)}
    lock, mva = cands["async-lockstep"], cands["async-mva"]
    assert lock.lockstep is True and lock.links == ("fair",) and lock.model.overlap
    assert mva.lockstep is False and mva.model.overlap and mva.family == "queueing"
    # a lossy link fits the timeout probability first
    assert list(mva.grid) == ["timeout_probability", "link_efficiency", "rho_threshold"]


def test_registry_answers_estimates_of_every_data_parallel_model():
    profile, cluster = zoo.profile("resnet50-pipedream"), zoo.cluster("aws-p3.2xlarge")
    for name, entry in registry.MODELS.items():
        if name == "layerwise":
            continue
        model = registry.make(name)
        config = Config(n_replicas=4, n_ps=1 if model.uses_parameter_servers else 0,
                        mode=entry.modes[0])
        est = model.estimate(profile, cluster, config)
        assert est.step_time > 0 and est.throughput > 0


def test_unknown_names_and_sets_are_spec_errors():
    with pytest.raises(SpecError, match="unknown model 'nope'"):
        registry.make("nope")
    with pytest.raises(SpecError, match="has no option"):
        registry.make("sync", colour="blue")
    with pytest.raises(SpecError, match="candidate_set"):
        registry.variants("everything")
    assert registry.make("sync", overlap=None) == registry.make("sync")
    assert "lockstep" in registry.model_names() and "lockstep" not in registry.model_names(cli=True)
