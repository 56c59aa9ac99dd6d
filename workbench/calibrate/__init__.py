"""Calibration: the model fitted to a cluster's own files, checked against its own log, with uncertainty.

``calibrate(table_config, schema, segments, query_log, out)`` (also ``workbench calibrate`` and
``workbench.api.calibrate``) writes a calibrated scenario, a replayable workload and a back-test;
:mod:`workbench.calibrate.uncertainty` describes the fit's parameter uncertainty, which
:mod:`workbench.studies.uncertainty` carries into any answer (``docs/calibrate.md``). This package fits
and never simulates: the back-test it writes is a study, handed in by :func:`workbench.api.calibrate`.
"""

from __future__ import annotations

from workbench.calibrate.describe import describe_calibration
from workbench.calibrate.fit import Parameter, ServiceFit, fit_service
from workbench.calibrate.pipeline import CalibrateOptions, CalibrationResult, calibrate
from workbench.calibrate.uncertainty import (
    ParameterDistribution,
    RobustAnswer,
    robust_answer,
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
    "robust_answer",
]
