"""Fitting models to measurements: tunables, network calibration, model selection, validation.

The fitting layer sits above the models: it reads measured runs of a job
(:mod:`perfmodel.measurements`) and chooses what the papers leave to the user.

Grid search (:mod:`perfmodel.fit.grid`)
    fit_tunables, predict_measurements, FitResult, grid_range, parse_grid
Per-network calibration (:mod:`perfmodel.fit.network`)
    calibrate_network, NetworkCalibration
Timeout stalls of lossy links (:mod:`perfmodel.fit.timeouts`)
    timeouts_from_step_times, with_timeout_band
Model selection with intervals (:mod:`perfmodel.fit.selection`)
    select_model, Selection, Calibrated, ModelCandidate, default_candidates
Hardware micro-benchmarks (:mod:`perfmodel.fit.microbench`)
    calibrate, calibrated_cluster, HardwareCalibration
Validation on real and packet-level data (:mod:`perfmodel.fit.validation`, :mod:`perfmodel.fit.dl2`)
    validation_matrix, validate_dl2
"""

from .dl2 import validate_dl2
from .grid import FitResult, fit_tunables, grid_range, parse_grid, predict_measurements
from .microbench import HardwareCalibration, calibrate, calibrated_cluster
from .network import NetworkCalibration, calibrate_network
from .selection import Calibrated, ModelCandidate, Selection, default_candidates, select_model
from .timeouts import timeouts_from_step_times, with_timeout_band
from .validation import validation_matrix

__all__ = ["fit_tunables", "predict_measurements", "FitResult", "grid_range", "parse_grid",
           "calibrate_network", "NetworkCalibration", "timeouts_from_step_times",
           "with_timeout_band", "select_model", "Selection", "Calibrated", "ModelCandidate",
           "default_candidates", "calibrate", "calibrated_cluster", "HardwareCalibration",
           "validation_matrix", "validate_dl2"]
