"""The sizing report of a sweep: what to buy, what it costs, how sure we are, what if things change.

Input is a sweep directory (``combined.parquet``, ``sweep.json`` and one run directory per point);
output is a multi-page PDF written atomically. Page 1 is for an engineering lead
(:mod:`workbench.report.summary`); the pages after it show the evidence, each plot with one sentence
that reads it, computed from the same data. The findings (recommendation, what-ifs, headroom,
warnings) are computed once (:mod:`workbench.report.findings`); sections are functions in
:data:`SECTIONS` (name -> builder) and return no pages when their data is absent.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from matplotlib.backends.backend_pdf import PdfPages
from matplotlib.figure import Figure

from workbench.io import atomic_file
from workbench.report import appendix, sections, tenant
from workbench.report.data import SizingData, load_sizing_data, recommend
from workbench.report.findings import Findings, find
from workbench.report.options import ReportOptions
from workbench.report.summary import summary_pages

__all__ = ["SECTIONS", "SizingData", "build_sizing_report", "load_sizing_data", "recommend", "report_pages"]

Section = Callable[[SizingData, Findings], list[Figure]]


def _summary(d: SizingData, f: Findings) -> list[Figure]:
    return summary_pages(d, f)


#: Report sections in order; each returns its pages (none when its data is absent).
SECTIONS: dict[str, Section] = {
    "summary": _summary,
    "tables": lambda d, f: tenant.tables_section(d, f.best),
    "configurations": sections.configurations,
    "cost": sections.cost,
    "whatif": sections.whatifs,
    "layouts": sections.layouts,
    "fanout": sections.fanout,
    "gc": sections.gc_heap,
    "movement": appendix.movement,
    "cache": appendix.cache,
    "provisioning": appendix.provisioning,
    "method": appendix.method,
}


def report_pages(data: SizingData) -> list[Figure]:
    """Every page of the report, in order, from the sweep's files and its studies' runs (nothing is simulated)."""
    findings = find(data)
    return [page for section in SECTIONS.values() for page in section(data, findings)]


def build_sizing_report(sweep_dir: str | Path, out_pdf: str | Path, options: ReportOptions | None = None) -> Path:
    """Write the sizing report of a sweep directory; returns the PDF path (it appears only when complete).

    ``options`` replaces the report options the sweep recorded (its file's ``report:`` section).
    """
    data = load_sizing_data(sweep_dir, options)
    out = Path(out_pdf)
    title = f"Pinot sizing report: {data.scenario_name}"
    pages = report_pages(data)
    with atomic_file(out) as tmp, PdfPages(tmp, metadata={"Title": title}) as pdf:
        for fig in pages:
            pdf.savefig(fig)
    return out
