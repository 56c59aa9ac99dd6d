"""The report of a day of load (``workbench day``): p99 and utilisation per step, with the SLO line.

Input is a day directory (:mod:`workbench.studies.day`: ``day.json`` and one run per rate simulated);
output a PDF whose page draws the simulated steps' p99 (with its interval) and the servers' mean
utilisation through the day, the SLO as a line, and says which step the sizing binds on. A tenant's day
(``tables:``) draws each table's p99 too, with the tightest table SLO as the line.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.backends.backend_pdf import PdfPages
from matplotlib.figure import Figure

from workbench.analysis.figure import InlineFigure
from workbench.io import atomic_file
from workbench.report.day_record import RULE, Day, read_day
from workbench.report.layout import plot_page

__all__ = ["build_day_report", "day_figure", "day_frame"]


def day_frame(day: Day) -> pd.DataFrame:
    """One row per step: ``hour``, ``factor``, ``p99_ms``, ``p99_high_ms``, ``utilisation``, ``busiest``,
    ``meets``, ``simulated`` (NaN where the step was inferred); a tenant's day adds ``p99_ms.TABLE`` per table."""
    frame = pd.DataFrame([{k: v for k, v in s.to_json().items() if k not in ("factors", "tables")}
                          for s in day.steps])
    frame["simulated"] = frame["run"].notna()
    for t in day.tables:  # a tenant's day: each table's p99 per step (NaN where inferred)
        by_step = {s.index: x.p99_ms for s in day.steps for x in s.tables if x.table == t.table}
        frame[f"p99_ms.{t.table}"] = [by_step.get(s.index, np.nan) for s in day.steps]
    return frame.astype({c: float for c in ("p99_ms", "p99_high_ms", "utilisation", "busiest", "qps")})


def day_figure(frame: pd.DataFrame, slo_p99_ms: float | None, step_hours: float,
               title: str = "A day of load: p99 and utilisation per step") -> Figure:
    """p99 per simulated step (bars to the interval's upper end), the SLO line, utilisation on the right axis,
    and the profile's factor as a shaded step line."""
    fig = InlineFigure(figsize=(11, 6))
    ax = fig.add_subplot()
    hours = frame["hour"].to_numpy(dtype=float) + step_hours / 2
    run = frame["simulated"].to_numpy(dtype=bool)
    p99 = frame["p99_ms"].to_numpy(dtype=float)
    high = frame["p99_high_ms"].to_numpy(dtype=float)
    ax.errorbar(hours[run], p99[run], yerr=np.clip(high[run] - p99[run], 0, None).reshape(1, -1) * [[0], [1]],
                fmt="o-", color="#4C72B0", capsize=3, label="p99 (ms), to its interval's upper end")
    for k, column in enumerate(c for c in frame.columns if str(c).startswith("p99_ms.")):
        ax.plot(hours[run], frame[column].to_numpy(dtype=float)[run], ".--", color=f"C{k + 1}", alpha=0.8,
                label=f"{str(column).removeprefix('p99_ms.')} p99 (ms)")
    if slo_p99_ms is not None:
        ax.axhline(slo_p99_ms, color="#b71c1c", linestyle="--", label=f"SLO p99 {slo_p99_ms:g} ms")
    ax.set_xlabel("hour of the day")
    ax.set_ylabel("p99 latency (ms)")
    ax.set_xlim(0, 24)
    ax.set_xticks(range(0, 25, 3))
    ax.grid(True, alpha=0.3)
    util = ax.twinx()
    util.plot(hours[run], frame["utilisation"].to_numpy(dtype=float)[run], "s:", color="#55A868",
              label="mean utilisation")
    load = frame["factor"].to_numpy(dtype=float) / max(1e-12, float(frame["factor"].max()))
    util.step(np.append(frame["hour"].to_numpy(dtype=float), 24.0), np.append(load, load[-1]), where="post",
              color="#999999", alpha=0.6, label="load (share of the peak)")
    util.set_ylim(0, 1.05)
    util.set_ylabel("share")
    lines = ax.get_legend_handles_labels()
    more = util.get_legend_handles_labels()
    ax.legend(lines[0] + more[0], lines[1] + more[1], loc="upper left", fontsize=8)
    ax.set_title(title)
    return fig


def build_day_report(day_dir: str | Path, out_pdf: str | Path) -> Path:
    """Write the PDF of a day directory; returns its path (written atomically)."""
    day = read_day(day_dir)
    fig = day_figure(day_frame(day), day.slo_p99_ms, day.step_s / 3600,
                     f"{day.scenario or 'scenario'}: p99 and utilisation through the day")
    reading = f"{day.sentence()}. Rule: {RULE}; margin {day.margin:.0%}. Size for the worst step."
    out = Path(out_pdf)
    with atomic_file(out) as tmp, PdfPages(tmp, metadata={"Title": f"A day of load: {out.stem}"}) as pdf:
        pdf.savefig(plot_page(fig, reading))
    return out
