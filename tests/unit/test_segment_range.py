"""Segments far outside Pinot's comfortable range are named at ``validate``, in the run summary and the report.

Hand computation: a synthetic segment of ``docs_per_segment`` documents is sized at ``SEGMENT_BYTES_PER_DOC``
(100) bytes per document. 1,000 documents are 100,000 B = 0.1 MB, under a tenth of Pinot's 100 MB lower
bound, and 1,000x the rows would reach 100 MB; 2,000,000 documents are 200 MB, inside 100-500 MB;
60,000,000 documents are 6 GB, over ten times the 500 MB upper bound (12x it). A realtime table whose flush
threshold gives 1,000-row segments is sized the same way before ``workbench generate`` has run.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from workbench import defaults as D
from workbench.api import scenario_warnings
from workbench.cli import main
from workbench.report.run_report import table_warnings
from workbench.runs import run_scenario, segments_out_of_range
from workbench.scenario import load_scenario

BASE: dict[str, Any] = {
    "cluster": {"servers": 2, "server": {"cores": 2}},
    "table": {"tableName": "t", "tableType": "OFFLINE", "segmentsConfig": {"replication": 1}},
    "workload": {"synthetic": {"segments_per_server": 1, "docs_per_segment": 1000}, "arrival": {"qps": 20}},
    "simulation": {"duration_s": 2, "warmup_s": 0.5, "replications": 1, "seed": 1},
}


def _with(docs: int, per_server: int = 1) -> dict[str, Any]:
    sc = copy.deepcopy(BASE)
    sc["workload"]["synthetic"] = {"segments_per_server": per_server, "docs_per_segment": docs}
    return sc


def test_the_figures_are_pinots() -> None:
    assert D.SEGMENT_SIZE_RANGE == (100_000_000, 500_000_000) and D.SEGMENT_BYTES_PER_DOC == 100


def test_tiny_segments_are_named_with_their_size_and_the_knob() -> None:
    warnings = scenario_warnings(load_scenario(_with(1000)))
    assert len(warnings) == 1
    assert warnings[0].startswith("segments far below Pinot's recommended size: the median sealed segment holds "
                                  "0.1 MB (1,000 rows), against the 100-500 MB Pinot's docs recommend")
    assert "about 1,000x the rows per segment would reach 100 MB: raise workload.synthetic.docs_per_segment" in \
        warnings[0]


def test_segments_in_range_have_no_warning() -> None:
    assert scenario_warnings(load_scenario(_with(2_000_000))) == []


def test_huge_segments_are_named_too() -> None:
    text = segments_out_of_range(load_scenario(_with(60_000_000)))
    assert text.startswith("segments far above Pinot's recommended size: the median sealed segment holds 6 GB")
    assert "about 1/12 of the rows per segment would reach 500 MB: lower workload.synthetic.docs_per_segment" in text


def test_thousands_of_segments_on_a_server_are_named() -> None:
    text = segments_out_of_range(load_scenario(_with(2_000_000, per_server=D.SEGMENTS_PER_SERVER_WARN)))
    assert text.startswith("Server_") and f"holds {D.SEGMENTS_PER_SERVER_WARN:,} segments (replicas counted)" in text


def test_a_realtime_flush_threshold_that_cuts_tiny_segments_is_named_before_generation() -> None:
    table = {"tableName": "events", "tableType": "REALTIME",
             "segmentsConfig": {"timeColumnName": "event_time_ms", "replicasPerPartition": "1"},
             "tableIndexConfig": {"streamConfigs": {"streamType": "kafka",
                                                    "realtime.segment.flush.threshold.segment.rows": "1000"}}}
    sc = load_scenario({**BASE, "table": table, "workload": {"generate": {"events": 8_000, "partitions": 2}}})
    text = segments_out_of_range(sc)
    assert "0.1 MB (1,000 rows)" in text and "raise the table's realtime.segment.flush.threshold.rows" in text


def test_segments_sealed_by_time_name_the_time_threshold() -> None:
    """4,000 rows per partition over 6 h, sealed hourly before 1,000,000 rows: 6 segments of 667 rows."""
    table = {"tableName": "events", "tableType": "REALTIME",
             "segmentsConfig": {"timeColumnName": "event_time_ms", "replicasPerPartition": "1"},
             "tableIndexConfig": {"streamConfigs": {"streamType": "kafka",
                                                    "realtime.segment.flush.threshold.segment.rows": "1000000",
                                                    "realtime.segment.flush.threshold.time": "1h"}}}
    sc = load_scenario({**BASE, "table": table, "workload": {"generate": {"events": 8_000, "partitions": 2}}})
    text = segments_out_of_range(sc)
    assert "(667 rows)" in text
    assert text.endswith("raise the table's realtime.segment.flush.threshold.time (generated data: "
                         "workload.generate.segment_time_s, now 3600 s), which seals them before the "
                         "1,000,000-row threshold")


def test_the_run_summary_and_the_report_carry_it() -> None:
    summary = run_scenario(_with(1000), None).summary
    assert summary.table_fit.segments is not None
    assert summary.table_fit.segments.startswith("segments far below Pinot's recommended size")
    assert "0.1 MB (1,000 rows)" in summary.table_fit.segments
    assert summary.to_json()["table_fit"]["segments"] == summary.table_fit.segments
    assert table_warnings(summary) == [f"S{summary.table_fit.segments[1:]}."]


def test_simulate_says_it_on_the_runs_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "tiny.json"
    scenario.write_text(json.dumps(_with(1000)))
    assert main(["simulate", str(scenario), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    line = capsys.readouterr().out.strip()
    assert len(line.splitlines()) == 1 and "; WARNING: segments far below Pinot's recommended size" in line
    saved = json.loads((tmp_path / "run" / "summary.json").read_text())["summary"]["table_fit"]["segments"]
    assert "0.1 MB (1,000 rows)" in saved
