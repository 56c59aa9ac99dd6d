"""Page 1 opens with the verdict on today's cluster when the sweep holds ``verdict.json`` (``workbench verdict``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from workbench.report.findings import find
from workbench.report.sizing import load_sizing_data
from workbench.report.summary import summary_page

VERDICT = {"source": "calibrated/events", "slo_p99_ms": 120.0, "survive": "server", "growth": 0.5,
           "peak": "the day's peak, 08:00-09:00 (x3 the rate)", "currency": "USD",
           "answers": [{"label": "today's peak", "verdict": "OVER", "today": {"servers": 6, "instance": "m6i.xlarge"},
                        "change": {"servers": 4, "instance": "m6i.xlarge", "cores": 4}, "segments_moved": 24,
                        "bytes_moved": 3 * 2**30, "monthly_delta": -280.32,
                        "why": "the next smaller shape, 3 x m6i.xlarge, breaks p99_ms"},
                       {"label": "+50% growth", "verdict": "RIGHT", "today": {"servers": 6, "instance": "m6i.xlarge"},
                        "change": None, "why": "the next smaller shape breaks p99_ms"}]}


def test_page_one_opens_with_the_verdict_on_todays_cluster(layout_sweep: Path, tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    shutil.copytree(layout_sweep, out)
    (out / "verdict.json").write_text(json.dumps(VERDICT))
    d = load_sizing_data(out)
    page = summary_page(d, find(d))
    text = " ".join(" ".join(t.get_text() for t in page.texts).split())
    assert "Today's cluster" in text and "08:00-09:00" in text
    assert "today's peak: OVER" in text and "6 x m6i.xlarge -> 4 x m6i.xlarge" in text and "saves 280 USD/month" in text
    assert "+50% growth: RIGHT" in text and "cheapest that meets the SLO" in text
    assert text.index("Today's cluster") < text.index("Buy ")  # the first section, before the recommendation
