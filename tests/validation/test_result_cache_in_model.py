"""The RFC's broker result cache in the model: hits answer after broker overhead, gates hold, answers match."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from workbench.analysis.stats import summarise
from workbench.sim.run import simulate

PANELS = [f"SELECT COUNT(*) FROM t WHERE key_id = {k}" for k in range(5)]
CACHE_ON = {"pinot.broker.query.cache.enabled": "true", "pinot.broker.query.cache.ttl.ms": "60000"}


def workload(tmp: Path, consuming: bool = False) -> Path:
    rows = [{"segment_name": f"t__0__{i}__20260101T0000Z", "start_time_ms": i * 100, "end_time_ms": i * 100 + 99,
             "total_docs": 100_000, "status": "IN_PROGRESS" if consuming and i == 5 else "DONE", "partition": 0}
            for i in range(6)]
    pd.DataFrame(rows).to_parquet(tmp / "segments.parquet")
    n = 4000  # 5 panels refreshed by many viewers: each panel ~800 times in 40 s
    pd.DataFrame({"arrival_s": np.arange(n) * 0.01, "sql": [PANELS[i % 5] for i in range(n)]}).to_parquet(
        tmp / "queries.parquet")
    return tmp


def scenario(table_type: str, broker_config: dict[str, str]) -> dict[str, Any]:
    return {"cluster": {"servers": 3, "broker": {"overhead_ms": 1.0, "config": broker_config}},
            "table": {"tableName": "t", "tableType": table_type, "segmentsConfig": {"replication": 1}},
            "workload": {"arrival": {"process": "replay"}},
            "service": {"model": "cost", "ns_per_doc": 100},
            "simulation": {"duration_s": 40, "warmup_s": 1, "replications": 1, "seed": 2}}


def test_hits_answer_after_broker_overhead_only(tmp_path: Path) -> None:
    data = workload(tmp_path)
    on = simulate(scenario("OFFLINE", CACHE_ON), data=data).queries
    off = simulate(scenario("OFFLINE", {}), data=data).queries
    assert (off["cache_hit"] == "").all()
    hits = on[on["cache_hit"] == "broker"]
    # each panel misses once per 60 s TTL (5 misses in 40 s); every other request hits
    assert len(on) - len(hits) <= 5 + int((on["cache_hit"] == "singleflight").sum())
    assert np.allclose(hits["latency_ms"], 1.0)
    assert (hits["servers_queried"] == 0).all()
    assert on["latency_ms"].quantile(0.99) < off["latency_ms"].quantile(0.5)


def test_a_hit_pays_the_brokers_off_path_part_too(tmp_path: Path) -> None:
    """A calibrated broker runs part of its overhead off the query's path (``off_path_ms``) because each query's
    delay carries it; a hit sends no request, so no delay carries it: by hand, a hit answers after 0.25 + 0.75 =
    1.0 ms, as with the whole overhead on the path (hits arrive 10 ms apart, so the broker's core is free)."""
    data = workload(tmp_path)
    sc = scenario("OFFLINE", CACHE_ON)
    sc["cluster"]["broker"] |= {"overhead_ms": 0.25, "off_path_ms": 0.75}
    hits = simulate(sc, data=data).queries
    hits = hits[hits["cache_hit"] == "broker"]
    assert len(hits) > 1000 and np.allclose(hits["latency_ms"], 1.0)


def test_consuming_segments_are_not_cached_by_default(tmp_path: Path) -> None:
    data = workload(tmp_path, consuming=True)
    gated = simulate(scenario("REALTIME", CACHE_ON), data=data).queries
    assert (gated["cache_hit"] == "").all()  # the RFC's safety gate: results reading consuming data
    unsafe = {**CACHE_ON, "pinot.broker.query.cache.cache.consuming": "true"}
    opened = simulate(scenario("REALTIME", unsafe), data=data).queries
    assert (opened["cache_hit"] == "broker").mean() > 0.9


def test_summary_reports_the_hit_rate(tmp_path: Path) -> None:
    r = simulate(scenario("OFFLINE", CACHE_ON), data=workload(tmp_path))
    s = summarise(r)
    assert s.cache_hit_rate == float((r.queries["cache_hit"] != "").mean()) > 0.9
    json.dumps(s.to_json())


def server_scenario(table_type: str, server_config: dict[str, str]) -> dict[str, Any]:
    sc = scenario(table_type, {})
    sc["cluster"]["server"] = {"config": server_config}
    return sc


SEGMENT_CACHE_ON = {"pinot.server.segment.query.cache.enabled": "true", "pinot.server.segment.query.cache.ttl.ms": "0"}


def test_segment_cache_hits_skip_segment_work(tmp_path: Path) -> None:
    data = workload(tmp_path)
    on = simulate(server_scenario("OFFLINE", SEGMENT_CACHE_ON), data=data)
    off = simulate(server_scenario("OFFLINE", {}), data=data)
    segments_served = int(off.queries["segments_queried"].sum())
    hits = int(on.servers["segment_cache_hits"].sum())
    # every (panel, segment) pair misses once, then hits: 5 panels x 6 segments misses in all
    assert hits >= segments_served - 5 * 6 - 100  # the last queries may be in flight at the horizon
    assert on.servers["busy_ms"].sum() < 0.2 * off.servers["busy_ms"].sum()
    assert on.queries["latency_ms"].median() < off.queries["latency_ms"].median()


def test_consuming_segment_is_not_cached_by_the_servers(tmp_path: Path) -> None:
    data = workload(tmp_path, consuming=True)
    arrivals = 4000  # the workload's queries inside the 40 s horizon, warm-up included
    gated = simulate(server_scenario("REALTIME", SEGMENT_CACHE_ON), data=data)
    # each query reads 5 sealed segments and the consuming one; only the sealed ones can hit
    assert 0 < int(gated.servers["segment_cache_hits"].sum()) <= 5 * arrivals
    opened = {**SEGMENT_CACHE_ON, "pinot.server.segment.query.cache.enable.realtime.consuming": "true"}
    unsafe = simulate(server_scenario("REALTIME", opened), data=data)
    assert int(unsafe.servers["segment_cache_hits"].sum()) > 5 * arrivals


def test_segment_churn_invalidates_and_lowers_the_hit_rate(tmp_path: Path) -> None:
    data = workload(tmp_path)
    calm = summarise(simulate(scenario("OFFLINE", CACHE_ON), data=data)).cache_hit_rate
    churned = scenario("OFFLINE", CACHE_ON)
    churned["workload"]["churn"] = {"replace_per_hour": 3600 * 2}  # two refresh uploads a second
    busy = summarise(simulate(churned, data=data)).cache_hit_rate
    # every replace bumps the epoch of a segment all 5 panels read, so each panel's next request misses:
    # panels are requested 100/5 = 20 times a second and replaced twice a second, so ~1 - 2/20 hit
    assert calm > 0.99
    assert 0.85 < busy < 0.95
