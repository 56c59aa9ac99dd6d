"""The sizing report's warnings carry the recommended shape's table fit as its run recorded it.

The shared sweep's synthetic segments hold 1,000 documents, sized at 100 bytes each: 0.1 MB, far under the
100 MB Pinot's docs recommend (``workbench.sim.segment_range``), so every point's summary names them.
"""

from __future__ import annotations

from pathlib import Path

from workbench.report.findings import find
from workbench.report.sizing import load_sizing_data


def test_the_recommendations_segment_warning_is_among_the_reports(layout_sweep: Path) -> None:
    d = load_sizing_data(layout_sweep)
    f = find(d)
    assert f.best is not None
    recorded = str(f.best["table_fit.segments"])
    assert recorded.startswith("segments far below Pinot's recommended size") and "0.1 MB (1,000 rows)" in recorded
    assert f"S{recorded[1:]}." in f.warnings
