"""``calibrate`` fits a heavier aggregation function's own cost per document (``service.function_ns_per_doc``).

The log is written by hand with its own cost structure (not the workbench's cost model): one server, hourly
segments of 200,000 to 2,000,000 documents (four tiers), queries over 1 to 6 of a tier's, and each query's
measured work (``offlineThreadCpuTimeNs``) is ``0.3 ms + 0.2 ms per segment + 5 ns per document``, plus 60 ns
per document for each ``PERCENTILETDIGEST`` call, times a spread of a few per cent. ``DISTINCTCOUNTHLL``
queries, 12 ns per document heavier, are too few to identify (5 of them, fewer than ``MIN_FUNCTION_QUERIES``):
held at none, and said.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pinot_files
import pytest
import synthetic_cluster as cluster
import yaml

from workbench import defaults as D
from workbench.calibrate import CalibrateOptions, calibrate

HOUR = cluster.HOUR_MS
T0 = cluster.T0_MS
PER_REQUEST, PER_SEGMENT, NS_PER_DOC, TDIGEST_NS, HLL_NS = 0.3, 0.2, 5.0, 60.0, 12.0
SELECT = {"sum": "SUM(value)", "tdigest": "PERCENTILETDIGEST(value, 99)", "hll": "DISTINCTCOUNTHLL(category)"}
HLL_QUERIES = 5


def _line(rid: int, select: str, first: int, segments: int, arrival_ms: int, cpu_ns: int) -> str:
    docs = sum(cluster.docs(first + s) for s in range(segments))
    response_ms = cpu_ns // 1_000_000 + 2
    stamp = pinot_files.stamp(arrival_ms + response_ms + 1)
    start = T0 + first * HOUR
    sql = f"SELECT {select} FROM events WHERE ts >= {start} AND ts < {start + segments * HOUR}"
    return (f"{stamp} INFO [QueryLogger] [jersey-server-managed-async-executor-1] requestId={rid},table=events_OFFLINE,"
            f"queryHash=,timeMs={response_ms + 1},docs={docs}/{docs},entries=0/{docs},segments(queried/processed/"
            f"matched/consumingQueried/consumingProcessed/consumingMatched/unavailable):{segments}/{segments}/"
            f"{segments}/0/0/0/0,consumingFreshnessTimeMs=0,servers=1/1,groupsTrimmed=false,groupLimitReached=false,"
            f"groupWarningLimitReached=false,brokerReduceTimeMs=0,exceptions=0,serverStats=(Server=SubmitDelayMs,"
            f"ResponseDelayMs,ResponseSize,DeserializationTimeMs,RequestSentDelayMs);pinot-server-0_O=0,{response_ms},"
            f"385,0,0,offlineThreadCpuTimeNs(total/thread/sysActivity/resSer):{cpu_ns}/{cpu_ns // 2}/"
            f"{cpu_ns - cpu_ns // 2}/0,realtimeThreadCpuTimeNs(total/thread/sysActivity/resSer):0/0/0/0,"
            f"clientIp=unknown,queryEngine=singleStage,offlineMemAllocatedBytes(total/thread/resSer):0/0/0,"
            f"realtimeMemAllocatedBytes(total/thread/resSer):0/0/0,pools=[],rlsFiltersApplied=false,query={sql}")


def _files(root: Path) -> dict[str, Path]:
    rng = np.random.default_rng(11)
    lines = []
    kinds = ["hll" if i % 40 == 7 and i // 40 < HLL_QUERIES else ("tdigest" if i % 4 == 1 else "sum")
             for i in range(240)]
    for i, kind in enumerate(kinds):
        segments, first = 1 + i % 6, cluster.TIER_SEGMENTS * ((i // 6) % len(cluster.TIERS)) + i % 11
        docs = sum(cluster.docs(first + s) for s in range(segments))
        extra = {"tdigest": TDIGEST_NS, "hll": HLL_NS}.get(kind, 0.0)
        ms = PER_REQUEST + PER_SEGMENT * segments + (NS_PER_DOC + extra) * 1e-6 * docs
        lines.append(_line(i + 1, SELECT[kind], first, segments, T0 + (cluster.SEGMENTS + 1) * HOUR + 200 * i,
                           round(ms * rng.lognormal(0.0, 0.05) * 1e6)))
    return cluster.write_inputs(root, lines)


def test_a_heavier_function_s_cost_per_document_is_recovered_and_one_with_too_few_queries_is_held(
        tmp_path: Path) -> None:
    paths = _files(tmp_path / "in")
    out = tmp_path / "out"
    calibrate(paths["table_config"], paths["schema"], paths["segments"], paths["query_log"], out,
              options=CalibrateOptions(servers=1, server_cores=1, backtest_queries=0, bootstrap=50, seed=1))
    doc = json.loads((out / "calibration.json").read_text())
    params = doc["fit"]["parameters"]
    tdigest = params["service.function_ns_per_doc.PERCENTILETDIGEST"]
    assert tdigest["source"].startswith("fitted") and tdigest["se"] is not None
    assert abs(tdigest["value"] - TDIGEST_NS) < 3 * tdigest["se"] and tdigest["se"] < 0.1 * TDIGEST_NS
    base = params["service.ns_per_doc"]   # the plain cost per document, fitted beside it
    assert abs(base["value"] - NS_PER_DOC) < 3 * base["se"] and base["se"] < 0.3 * NS_PER_DOC
    assert "service.function_ns_per_doc.PERCENTILETDIGEST" in doc["fit"]["covariance"]["keys"]
    hll = params["service.function_ns_per_doc.DISTINCTCOUNTHLL"]
    assert hll["value"] == 0.0 and hll["se"] is None   # held, never "fitted" beside it
    assert hll["source"].startswith("held at none") and f"{HLL_QUERIES} of the log's queries" in hll["source"]
    assert str(D.MIN_FUNCTION_QUERIES) in hll["source"]
    assert "service.function_ns_per_doc.SUM" not in params   # a plain aggregation: ns_per_doc prices it
    scenario = yaml.safe_load((out / "scenario.yaml").read_text())
    assert scenario["service"]["function_ns_per_doc"]["PERCENTILETDIGEST"] == pytest.approx(tdigest["value"], abs=1e-5)
    assert scenario["service"]["function_ns_per_doc"]["DISTINCTCOUNTHLL"] == 0.0


def test_from_time_ms_alone_the_function_costs_are_not_fitted_and_the_notes_say_so(tmp_path: Path) -> None:
    paths = _files(tmp_path / "in")
    out = tmp_path / "out"
    calibrate(paths["table_config"], paths["schema"], paths["segments"], paths["query_log"], out,
              options=CalibrateOptions(servers=1, server_cores=1, backtest_queries=0, bootstrap=20, seed=1,
                                       server_work=False))
    doc = json.loads((out / "calibration.json").read_text())
    assert not any(k.startswith("service.function_ns_per_doc") for k in doc["fit"]["parameters"])
    assert any("service.function_ns_per_doc: not fitted (DISTINCTCOUNTHLL, PERCENTILETDIGEST in the log)" in n
               and "assumed to cost what service.ns_per_doc charges" in n for n in doc["notes"])
