"""Former home of the validation matrix; kept so old imports work.

The validation matrix is :mod:`perfmodel.fit.validation`; new code imports from there.
"""

from .fit.validation import (
                             DL2_GROWTH,
                             NS3_COLUMNS,
                             NS3_PATH,
                             NS3_TRAIN_WORKERS,
                             Cell,
                             Matrix,
                             NS3Run,
                             dl2_cells,
                             load_ns3,
                             ns3_cells,
                             parse_ns3,
                             validation_matrix,
)

__all__ = ["NS3_PATH", "NS3_COLUMNS", "NS3_TRAIN_WORKERS", "DL2_GROWTH", "Cell", "Matrix",
           "NS3Run", "parse_ns3", "load_ns3", "dl2_cells", "ns3_cells", "validation_matrix"]
