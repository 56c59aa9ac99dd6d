"""PDF reports: the sizing report of a sweep, and the report of a single run.

Names load lazily, so reading a sweep's report options (:mod:`workbench.report.options`) does not
import matplotlib.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__all__ = ["build_day_report", "build_run_report", "build_sizing_report"]

_LAZY = {"build_day_report": "workbench.report.day", "build_run_report": "workbench.report.run_report",
         "build_sizing_report": "workbench.report.sizing"}

if TYPE_CHECKING:
    from workbench.report.day import build_day_report
    from workbench.report.run_report import build_run_report
    from workbench.report.sizing import build_sizing_report


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'workbench.report' has no attribute {name!r}")
