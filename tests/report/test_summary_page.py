"""Page 1: what to buy, what it costs, how sure we are, what if load grows or a server dies; the
calibration hook; and the sentences page 1 is made of."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from workbench.report.findings import find
from workbench.report.sizing import build_sizing_report, load_sizing_data
from workbench.report.summary import headroom_sentence, money, shape_sentence
from workbench.report.whatif import Headroom


def _page_text(pdf: Path, page: int = 0) -> str:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(pdf))
    text: str = doc[page].get_textpage().get_text_range()
    return " ".join(text.split())


def test_page_one_answers_the_leads_questions(layout_sweep: Path, tmp_path: Path) -> None:
    pdf = build_sizing_report(layout_sweep, tmp_path / "r.pdf")
    text = _page_text(pdf)
    d = load_sizing_data(layout_sweep)
    best = find(d).best
    assert best is not None
    assert f"Buy {best['servers']} x {best['instance']}" in text  # what to buy
    assert f"{best['monthly_cost']:,.0f} USD" in text  # what it costs, in money
    assert "queries/s" in text and "p99" in text  # the load and the answer
    assert "load x1.5" in text and "one server down" in text and "Headroom" in text  # what if
    assert "not calibrated" in text and "replication(s)" in text  # how sure
    # the seed's question, asked at one server count: on page 1, or on its continuation when page 1 is full
    # (the answer, what-ifs, assumptions, how sure and the warnings keep page 1; the routing question moves)
    following = _page_text(pdf, 1)
    moved = following.startswith("Executive summary, continued")
    assert "Balanced routing or replica groups?" in (following if moved else text)
    assert "{" not in text  # no raw JSON on page 1


def test_a_calibrated_sweep_shows_the_model_interval_and_a_poor_back_test(layout_sweep: Path, tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    shutil.copytree(layout_sweep, out)
    calibrated = tmp_path / "calibrated"
    calibrated.mkdir()
    manifest = json.loads((out / "sweep.json").read_text())
    shutil.copy(manifest["base"], calibrated / "scenario.yaml")
    manifest["base"] = str(calibrated / "scenario.yaml")
    (out / "sweep.json").write_text(json.dumps(manifest))
    (calibrated / "backtest.json").write_text(json.dumps({
        "overall": {"p50": {"difference_pct": 3.0}, "p99": {"difference_pct": 31.0}},
        "verdict": "do not trust the model here without reading why"}))
    combined = pd.read_parquet(out / "combined.parquet")
    value = combined["latency_ms.p99.value"]
    combined["latency_ms.p99.model_low"] = 0.9 * value
    combined["latency_ms.p99.model_high"] = 1.1 * value
    combined["model_uncertainty.draws"] = 16
    combined.to_parquet(out / "combined.parquet")
    d = load_sizing_data(out)
    f = find(d)
    assert f.calibration.calibrated and f.calibration.has_model_interval
    assert (d.combined["robust"] == (d.combined["meets_slo"] & (1.1 * value <= d.judging.p99_ms))).all()
    if f.best is not None:
        assert bool(f.best["robust"])  # only configurations robust to the model interval are recommended
    assert any("misses the logged latencies" in w and "p99 +31%" in w for w in f.warnings)
    text = _page_text(build_sizing_report(out, tmp_path / "r.pdf"))
    assert "16 draws" in text and "Back-test against the log" in text


def test_money_and_shape_sentences() -> None:
    assert money(12345.6, "EUR") == "12,346 EUR"
    row = pd.Series({"servers": 8, "cores": 4, "heap_bytes": 16 * 1024**3, "replica_groups": 2,
                     "selector": "replicaGroup", "replication": 2, "instance": None})
    text = shape_sentence(row, None)
    assert text.startswith("8 servers with 4 cores") and "a 16G JVM heap each" in text
    assert "2 replica groups of 4 servers (numReplicaGroups 2, numInstancesPerReplicaGroup 4)" in text
    balanced = shape_sentence(pd.Series({**row, "replica_groups": 0, "selector": "balanced"}), None)
    assert "no replica groups" in balanced and "replication 2" in balanced


@pytest.mark.parametrize(("holds", "breaks", "estimate", "expected"), [
    (2.0, 3.0, 2.4, "holds up to 2x today's load (200 queries/s) and breaks by 3x (300 queries/s); interpolating, "
                    "at about 2.4x (240 queries/s)"),
    (3.0, None, None, "still holds at 3x today's load (300 queries/s)"),
    (0.0, 1.25, None, "none"),
])
def test_the_headroom_sentence(holds: float, breaks: float | None, estimate: float | None, expected: str) -> None:
    from workbench.report.findings import Calibration, Findings, LoadFacts

    room = Headroom(pd.DataFrame(), holds, breaks, estimate, 100.0)
    f = Findings(None, None, None, None, room, [], LoadFacts(100.0, "poisson"), Calibration(None, None, False))
    assert expected in headroom_sentence(f)


def test_a_failed_back_test_with_nothing_meeting_the_slo_still_warns_and_says_how_sure(layout_sweep: Path,
                                                                                       tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    shutil.copytree(layout_sweep, out)
    calibrated = tmp_path / "calibrated"
    calibrated.mkdir()
    manifest = json.loads((out / "sweep.json").read_text())
    shutil.copy(manifest["base"], calibrated / "scenario.yaml")
    manifest["base"] = str(calibrated / "scenario.yaml")
    (out / "sweep.json").write_text(json.dumps(manifest))
    (calibrated / "backtest.json").write_text(json.dumps({
        "overall": {"p50": {"difference_pct": 3.0}, "p99": {"difference_pct": 31.0}}, "verdict": "poor"}))
    combined = pd.read_parquet(out / "combined.parquet")
    combined["latency_ms.p99.ci_high"] = 10 * combined["latency_ms.p99.value"] + 1000  # nothing meets the SLO
    combined.to_parquet(out / "combined.parquet")
    text = _page_text(build_sizing_report(out, tmp_path / "r.pdf"))
    assert "No configuration in this sweep meets the SLO" in text
    assert "None: the recommendation meets the SLO" not in text  # there is no recommendation
    assert "misses the logged latencies" in text and "p99 +31%" in text  # the back-test warning stays
    assert "How sure we are" in text and "Back-test against the log: poor" in text


def test_the_data_line_of_an_offline_table_has_no_stream_partitions_and_no_zero_size() -> None:
    from workbench.report.findings import LoadFacts
    from workbench.report.summary import load_rows

    offline = dict(load_rows(LoadFacts(10.0, "replay", segments=3, rows=300, data_bytes=0, partitions=1,
                                       table_type="OFFLINE")))
    assert offline["Data"] == "300 rows in 3 segments"
    realtime = dict(load_rows(LoadFacts(10.0, "replay", segments=3, rows=300, data_bytes=2 * 1024**2, partitions=4,
                                        table_type="REALTIME")))
    assert realtime["Data"] == "300 rows in 3 segments, 2MiB of column values, 4 stream partitions"
