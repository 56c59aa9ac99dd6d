"""PDF reports: the sizing report of a sweep, and the report of a single run."""

from workbench.report.run_report import build_run_report
from workbench.report.sizing import build_sizing_report

__all__ = ["build_run_report", "build_sizing_report"]
