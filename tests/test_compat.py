"""Old module paths keep working: each re-exports the same objects from their new homes."""

import importlib
import warnings

import pytest

#: old module -> {old name: "new.module:new name"}
MOVED = {
    "perfmodel.tuning": {
        "Measurement": "perfmodel.measurements:Measurement",
        "MEASUREMENT_COLUMNS": "perfmodel.measurements:MEASUREMENT_COLUMNS",
        "parse_measurements": "perfmodel.measurements:parse_measurements",
        "OBJECTIVES": "perfmodel.fit.grid:FIT_OBJECTIVES",
        "RHO_GRID": "perfmodel.fit.grid:RHO_GRID",
        "fit_tunables": "perfmodel.fit.grid:fit_tunables",
        "FitResult": "perfmodel.fit.grid:FitResult",
        "Calibration": "perfmodel.fit.network:NetworkCalibration",
        "calibrate_network": "perfmodel.fit.network:calibrate_network",
    },
    "perfmodel.select": {
        "Candidate": "perfmodel.fit.selection:ModelCandidate",
        "select_model": "perfmodel.fit.selection:select_model",
        "default_candidates": "perfmodel.fit.selection:default_candidates",
        "TIMEOUT_BAND": "perfmodel.fit.timeouts:TIMEOUT_BAND",
        "with_timeout_band": "perfmodel.fit.timeouts:with_timeout_band",
        "LockStep": "perfmodel.coarse:LockStep",
        "BlockTrace": "perfmodel.sim.model:BlockTrace",
    },
    "perfmodel.calibrate": {
        "Calibration": "perfmodel.fit.microbench:HardwareCalibration",
        "Plan": "perfmodel.fit.microbench:BenchmarkPlan",
        "CalibrationError": "perfmodel.errors:CalibrationError",
        "calibrate": "perfmodel.fit.microbench:calibrate",
    },
    "perfmodel.validation": {"validation_matrix": "perfmodel.fit.validation:validation_matrix"},
    "perfmodel.dl2": {"default_candidates": "perfmodel.fit.dl2:report_models",
                      "validate_dl2": "perfmodel.fit.dl2:validate_dl2"},
    "perfmodel.io": {"load_pipedream": "perfmodel.pipedream:load_graph"},
    "optimizer.space": {"ConstraintViolation": "perfmodel.errors:ConstraintViolation"},
    "optimizer.search": {"OBJECTIVES": "optimizer.search:SEARCH_OBJECTIVES",
                         "Candidate": "optimizer.results:Candidate"},
    "optimizer.dp": {"compose_plan": "optimizer.plans:compose_plan",
                     "DPResult": "optimizer.results:DPResult"},
}


def _get(path: str):
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize("old,name,new", [(m, n, t) for m, names in MOVED.items()
                                          for n, t in names.items()])
def test_old_name_is_the_new_object(old, name, new):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert getattr(importlib.import_module(old), name) is _get(new)


@pytest.mark.parametrize("old", ["perfmodel.tuning", "perfmodel.select", "perfmodel.calibrate",
                                 "perfmodel.validation", "perfmodel.dl2"])
def test_every_old_public_name_is_still_there(old):
    module = importlib.import_module(old)
    assert module.__all__ and all(hasattr(module, name) for name in module.__all__)


@pytest.mark.parametrize("package,name", [("optimizer", "search"), ("optimizer", "allocate"),
                                          ("perfmodel.placement", "place")])
def test_package_names_are_the_modules_and_call_their_function(package, name):
    import inspect
    import types

    parent = importlib.import_module(package)
    module = importlib.import_module(f"{package}.{name}")
    function = name
    assert getattr(parent, name) is module   # not a function hiding the module
    assert isinstance(module, types.ModuleType)
    assert inspect.signature(module) == inspect.signature(getattr(module, function))
    seen = []
    original = module.__main_function__
    try:
        module.__main_function__ = lambda *a, **k: seen.append((a, k)) or "called"
        assert getattr(parent, name)(1, key=2) == "called"
    finally:
        module.__main_function__ = original
    assert seen == [((1,), {"key": 2})]


def test_search_module_and_function_agree():
    import optimizer
    from optimizer.search import search
    from perfmodel.coarse import SyncCoarse
    from perfmodel.specs import Cluster, Profile

    profile = Profile(model_bytes=100e6, t_forward=0.1, t_backward=0.2)
    cluster = Cluster(machines=8, nic_bandwidth="1GB/s")
    via_module = optimizer.search(SyncCoarse(), profile, cluster, machines=8)
    assert via_module.best.config == search(SyncCoarse(), profile, cluster, machines=8).best.config
    assert optimizer.search.SEARCH_OBJECTIVES == ("throughput", "time", "cost")
