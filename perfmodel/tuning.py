"""Former home of tunable fitting and network calibration; kept so old imports work.

The measurement CSV is :mod:`perfmodel.measurements`; grid search with
cross-validation is :mod:`perfmodel.fit.grid`; per-network calibration is
:mod:`perfmodel.fit.network` (its result is now called
:class:`~perfmodel.fit.network.NetworkCalibration`).  New code imports from
there.
"""

from .fit.grid import FIT_OBJECTIVES as OBJECTIVES
from .fit.grid import (
                          RHO_GRID,
                          FitResult,
                          fit_tunables,
                          grid_range,
                          parse_grid,
                          predict_measurements,
)
from .fit.network import (
                          CALIBRATION_GRIDS,
                          CALIBRATION_MODELS,
                          CALIBRATION_PARAMS,
                          COORDINATE_SWEEPS,
                          NEAR_OPTIMAL,
                          SEARCHES,
                          SIM_GRIDS,
                          calibrate_network,
)
from .fit.network import NetworkCalibration as Calibration
from .measurements import MEASUREMENT_COLUMNS, Measurement, parse_measurements

__all__ = ["Measurement", "MEASUREMENT_COLUMNS", "OBJECTIVES", "RHO_GRID", "parse_measurements",
           "grid_range", "parse_grid", "predict_measurements", "FitResult", "fit_tunables",
           "CALIBRATION_GRIDS", "CALIBRATION_PARAMS", "CALIBRATION_MODELS", "NEAR_OPTIMAL",
           "SIM_GRIDS", "SEARCHES", "COORDINATE_SWEEPS", "Calibration", "calibrate_network"]
