"""``calibrate`` fits a group-by's own cost per document and the filter's cost per entry from the servers' work.

The log is written by hand with its own cost structure (not the workbench's cost model): one server, hourly
segments of 200,000 to 2,000,000 documents (four tiers), and three kinds of query over 1 to 6 of a tier's segments,
each logging the documents and filter entries Pinot would (``docs=``, ``entries=``):

* a ``SUM`` over whole hours: every row scanned, no filter entry (the time range holds each segment whole);
* the same grouped by ``category``: the same rows;
* a ``SUM`` with ``category = 'c1'`` as well: its filter reads each row's category (one entry per row), and a tenth
  of the rows match and are scanned.

Each query's measured work (``offlineThreadCpuTimeNs``) is ``0.3 ms + 0.2 ms per segment + 5 ns per document
scanned + 20 ns more per document of a group-by + 4 ns per filter entry``, times a spread of a few per cent. So by
construction ``service.group_by_ns_per_doc`` is 20 and ``service.ns_per_filter_entry`` 4.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pinot_files
import synthetic_cluster as cluster
import yaml

from workbench.calibrate import CalibrateOptions, calibrate

HOUR = cluster.HOUR_MS
T0 = cluster.T0_MS
PER_REQUEST, PER_SEGMENT, NS_PER_DOC, GROUP_BY_NS, FILTER_NS = 0.3, 0.2, 5.0, 20.0, 4.0
KINDS = ("sum", "group", "filtered")


def _sql(kind: str, start: int, end: int) -> str:
    where = f"ts >= {start} AND ts < {end}"
    return {"sum": f"SELECT SUM(value) FROM events WHERE {where}",
            "group": f"SELECT category, SUM(value) FROM events WHERE {where} GROUP BY category",
            "filtered": f"SELECT SUM(value) FROM events WHERE {where} AND category = 'c1'"}[kind]


def _line(rid: int, sql: str, segments: int, docs: int, total: int, entries: int, arrival_ms: int,
          cpu_ns: int) -> str:
    response_ms = cpu_ns // 1_000_000 + 2
    stamp = pinot_files.stamp(arrival_ms + response_ms + 1)
    return (f"{stamp} INFO [QueryLogger] [jersey-server-managed-async-executor-1] requestId={rid},table=events_OFFLINE,"
            f"queryHash=,timeMs={response_ms + 1},docs={docs}/{total},entries={entries}/{docs},segments(queried/"
            f"processed/matched/consumingQueried/consumingProcessed/consumingMatched/unavailable):{segments}/"
            f"{segments}/{segments}/0/0/0/0,consumingFreshnessTimeMs=0,servers=1/1,groupsTrimmed=false,"
            "groupLimitReached=false,groupWarningLimitReached=false,brokerReduceTimeMs=0,exceptions=0,serverStats="
            f"(Server=SubmitDelayMs,ResponseDelayMs,ResponseSize,DeserializationTimeMs,RequestSentDelayMs);"
            f"pinot-server-0_O=0,{response_ms},385,0,0,offlineThreadCpuTimeNs(total/thread/sysActivity/resSer):"
            f"{cpu_ns}/{cpu_ns // 2}/{cpu_ns - cpu_ns // 2}/0,realtimeThreadCpuTimeNs(total/thread/sysActivity/"
            "resSer):0/0/0/0,clientIp=unknown,queryEngine=singleStage,offlineMemAllocatedBytes(total/thread/resSer):"
            f"0/0/0,realtimeMemAllocatedBytes(total/thread/resSer):0/0/0,pools=[],rlsFiltersApplied=false,query={sql}")


def _files(root: Path) -> dict[str, Path]:
    rng = np.random.default_rng(5)
    lines = []
    for i in range(300):
        kind = KINDS[i % 3]
        segments, first = 1 + (i // 3) % 6, cluster.TIER_SEGMENTS * ((i // 18) % len(cluster.TIERS)) + i % 11
        rows = sum(cluster.docs(first + s) for s in range(segments))
        docs, entries = (rows // 10, rows) if kind == "filtered" else (rows, 0)
        ms = (PER_REQUEST + PER_SEGMENT * segments + NS_PER_DOC * 1e-6 * docs
              + (GROUP_BY_NS * 1e-6 * docs if kind == "group" else 0.0) + FILTER_NS * 1e-6 * entries)
        start = T0 + first * HOUR
        lines.append(_line(i + 1, _sql(kind, start, start + segments * HOUR), segments, docs, rows, entries,
                           T0 + (cluster.SEGMENTS + 1) * HOUR + 200 * i, round(ms * rng.lognormal(0.0, 0.05) * 1e6)))
    return cluster.write_inputs(root, lines)


def test_a_group_bys_cost_per_document_and_the_filters_per_entry_are_recovered(tmp_path: Path) -> None:
    paths = _files(tmp_path / "in")
    out = tmp_path / "out"
    calibrate(paths["table_config"], paths["schema"], paths["segments"], paths["query_log"], out,
              options=CalibrateOptions(servers=1, server_cores=1, backtest_queries=0, bootstrap=50, seed=1))
    params = json.loads((out / "calibration.json").read_text())["fit"]["parameters"]
    for key, true in (("service.group_by_ns_per_doc", GROUP_BY_NS), ("service.ns_per_filter_entry", FILTER_NS),
                      ("service.ns_per_doc", NS_PER_DOC)):
        p = params[key]
        assert p["source"].startswith("fitted") and p["se"] is not None, (key, p)
        assert abs(p["value"] - true) < 3 * p["se"] and p["se"] < 0.15 * true, (key, p)
    service = yaml.safe_load((out / "scenario.yaml").read_text())["service"]
    assert abs(service["group_by_ns_per_doc"] - params["service.group_by_ns_per_doc"]["value"]) < 1e-3
    assert abs(service["ns_per_filter_entry"] - params["service.ns_per_filter_entry"]["value"]) < 1e-3


def test_a_log_without_group_bys_or_filter_entries_holds_both_at_zero_and_says_why(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    lines = []
    for i in range(60):
        segments, first = 1 + i % 6, cluster.TIER_SEGMENTS * ((i // 6) % len(cluster.TIERS))
        rows = sum(cluster.docs(first + s) for s in range(segments))
        ms = PER_REQUEST + PER_SEGMENT * segments + NS_PER_DOC * 1e-6 * rows
        start = T0 + first * HOUR
        lines.append(_line(i + 1, _sql("sum", start, start + segments * HOUR), segments, rows, rows, 0,
                           T0 + (cluster.SEGMENTS + 1) * HOUR + 200 * i, round(ms * rng.lognormal(0.0, 0.05) * 1e6)))
    paths = cluster.write_inputs(tmp_path / "in", lines)
    out = tmp_path / "out"
    calibrate(paths["table_config"], paths["schema"], paths["segments"], paths["query_log"], out,
              options=CalibrateOptions(servers=1, server_cores=1, backtest_queries=0, bootstrap=20, seed=1))
    params = json.loads((out / "calibration.json").read_text())["fit"]["parameters"]
    for key in ("service.group_by_ns_per_doc", "service.ns_per_filter_entry"):
        assert params[key]["value"] == 0.0 and params[key]["se"] is None
        assert "0 of the log's queries have it" in params[key]["source"]
