"""Calibration: the model fitted to a cluster's own files, checked against its own log, with uncertainty.

``calibrate(table_config, schema, segments, query_log, out)`` (also ``workbench calibrate`` and
``workbench.api.calibrate``) writes a calibrated scenario, a replayable workload and a back-test;
:mod:`workbench.calibrate.uncertainty` carries the fit's parameter uncertainty into any answer
(``docs/calibrate.md``).
"""

from __future__ import annotations

from workbench.calibrate.describe import describe_calibration
from workbench.calibrate.fit import Parameter, ServiceFit, fit_service
from workbench.calibrate.pipeline import CalibrateOptions, CalibrationResult, calibrate
from workbench.calibrate.uncertainty import (
    ParameterDistribution,
    RobustAnswer,
    propagate,
    robust_answer,
    robustness_table,
)

__all__ = [
    "CalibrateOptions",
    "CalibrationResult",
    "Parameter",
    "ParameterDistribution",
    "RobustAnswer",
    "ServiceFit",
    "calibrate",
    "describe_calibration",
    "fit_service",
    "propagate",
    "robust_answer",
    "robustness_table",
]
