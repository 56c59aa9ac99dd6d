"""PDF sizing reports assembled from run directories (``summary.json`` plus Parquet records)."""

from workbench.report.run_report import build_run_report

__all__ = ["build_run_report"]
