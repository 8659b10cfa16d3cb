"""perfmodel: performance models of distributed deep-learning training.

Specs describe the workload, the cluster and the configuration; every model
object answers ``estimate(workload, cluster, config) -> Estimate``; formulas
are pure functions of floats or arrays that broadcast.  The names below are
the front door; each lives in a module of its own (in brackets) and is
imported on first use, so ``import perfmodel`` stays cheap.

Specs and results
-----------------
   Layer -- one layer of a DNN (shapes, weights, connections) [specs]
   DNN -- a layered network [specs]
   Profile -- one worker's coarse profile: model bytes, forward/backward/update times [specs]
   Cluster -- machines, network and hardware constants [specs]
   Config -- workers per replica, replicas, parameter servers, mode [specs]
   Estimate -- step time, throughput, phases, bottleneck of one configuration [result]
   PHASES -- the phase names every model's estimate uses, with their meanings [result]

Models
------
   SyncCoarse -- Sync-SGD with parameter servers, Li et al. 2022 eqs. 7-10 [coarse]
   AllReduceCoarse -- Sync-SGD with ring all-reduce, Li et al. 2022 eq. 11 [coarse]
   LockStep -- Async-SGD whose workers stay in lock-step [coarse]
   AsyncMVA -- Async-SGD queueing model, Li et al. 2022 eqs. 1-6 [queueing]
   GST -- Sync-SGD with stragglers, Zhang et al. 2023 [gst]
   LayerWise -- model- and data-parallel training, Yan et al. 2015 [layerwise]
   TraceSim -- the trace-driven simulator as a model [sim]
   LinAsync -- baseline: Lin et al.'s queueing model [baselines]
   Cynthia -- baseline: Cynthia's formula [baselines]
   Model -- the protocol every model follows [interface]
   make_model -- a registered model by name, with options [registry]
   model_names -- the registered models' names [registry]

Formulas
--------
   sync_step_time -- Sync-SGD step time with parameter servers (eqs. 7-10) [coarse]
   allreduce_step_time -- Sync-SGD step time with ring all-reduce (eq. 11) [coarse]
   async_throughput -- Async-SGD throughput by mean value analysis (eqs. 1-6) [queueing]
   expected_max_normal -- expected maximum of n iid normals (Zhang et al. 2023 eq. 7) [gst]

Simulation
----------
   Trace -- profiled SGD steps as graphs of operations [sim]
   simulate -- Algorithm 1 of Li et al. 2022 for K workers [sim]

Placement
---------
   Topology -- racks, fat trees and their links [placement]
   place -- machines for jobs by a named strategy [placement]
   compare -- iteration latencies of placement strategies [placement]
   optimize_placement -- a network-aware placement [placement]

Fitting
-------
   Measurement -- one measured run of a job [measurements]
   parse_measurements -- the measurement CSV [measurements]
   fit_tunables -- grid search of tunables with cross-validation [fit]
   calibrate_network -- a network's cluster fields from a few runs [fit]
   select_model -- the model that fits the runs, with intervals [fit]
   validation_matrix -- every model against DL2 and packet-level runs [fit]

Errors
------
   PerfModelError -- base of every error raised on purpose [errors]
   SpecError -- bad input, naming the field [errors]
   ConstraintViolation -- a configuration breaks a layer-wise constraint [errors]
   Infeasible -- a well-formed request that cannot be satisfied [errors]
   CalibrationError -- a hardware micro-benchmark failed [errors]

Modules
-------
   units -- unit strings at the edges: ``parse("10Gbps", "B/s")`` [units]
   zoo -- built-in DNNs, profiles and clusters [zoo]
   io -- reading and writing spec files [io]

>>> from perfmodel import zoo, Config, SyncCoarse
>>> est = SyncCoarse().estimate(zoo.profile("resnet50-pipedream"),
...                             zoo.cluster("aws-p3.2xlarge"), Config(n_replicas=4))
>>> est.bottleneck in est.phases
True
"""

from importlib import import_module

__version__ = "0.1.0"

# name -> (module, attribute in it; None: the module itself), the catalogue above
_WHERE = {
    "Layer": ("specs", None), "DNN": ("specs", None), "Profile": ("specs", None),
    "Cluster": ("specs", None), "Config": ("specs", None), "Estimate": ("result", None),
    "PHASES": ("result", None),
    "SyncCoarse": ("coarse", None), "AllReduceCoarse": ("coarse", None),
    "LockStep": ("coarse", None), "AsyncMVA": ("queueing", None), "GST": ("gst", None),
    "LayerWise": ("layerwise", None), "TraceSim": ("sim", None),
    "LinAsync": ("baselines", None), "Cynthia": ("baselines", None),
    "Model": ("interface", None), "make_model": ("registry", "make"),
    "model_names": ("registry", None),
    "sync_step_time": ("coarse", None), "allreduce_step_time": ("coarse", None),
    "async_throughput": ("queueing", None), "expected_max_normal": ("gst", None),
    "Trace": ("sim", None), "simulate": ("sim", None),
    "Topology": ("placement", None), "place": ("placement", None),
    "compare": ("placement", None), "optimize_placement": ("placement", None),
    "Measurement": ("measurements", None), "parse_measurements": ("measurements", None),
    "fit_tunables": ("fit", None), "calibrate_network": ("fit", None),
    "select_model": ("fit", None), "validation_matrix": ("fit", None),
    "PerfModelError": ("errors", None), "SpecError": ("errors", None),
    "ConstraintViolation": ("errors", None), "Infeasible": ("errors", None),
    "CalibrationError": ("errors", None),
    "units": ("units", ""), "zoo": ("zoo", ""), "io": ("io", ""),
}

__all__ = [*_WHERE, "__version__"]


def __getattr__(name: str):
    # The front door resolves a name on first use (PEP 562), so `import perfmodel`
    # loads no model, no scipy and no numpy until something is asked for.
    if name not in _WHERE:
        raise AttributeError(f"module 'perfmodel' has no attribute {name!r}")
    module, attribute = _WHERE[name]
    target = import_module(f"perfmodel.{module}")
    value = target if attribute == "" else getattr(target, attribute or name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
