"""The caching and upsert studies the notebooks use."""

from __future__ import annotations

import pandas as pd

from workbench.analysis import plots
from workbench.analysis.cache_trace import broker_trace
from workbench.pinot.cache.estimate import result_size_estimate
from workbench.pinot.sql import parse_query
from workbench.studies.upsert import heap_by_ttl


def test_spellings_of_one_panel_share_a_trace_key() -> None:
    log = pd.DataFrame({"arrival_s": [0.0, 1.0, 2.0], "sql": [
        "SELECT COUNT(*) FROM t WHERE a = 1 AND b IN (3, 2)",
        "select count(*) from t where b in (2, 3, 3) and a = 1",
        "SELECT COUNT(*) FROM t WHERE a = 2 AND b IN (3, 2)"]})
    trace = broker_trace(log)
    assert trace["key"].iloc[0] == trace["key"].iloc[1] != trace["key"].iloc[2]
    assert trace["time_ms"].tolist() == [0.0, 1000.0, 2000.0]


def test_result_size_grows_with_shape() -> None:
    agg = result_size_estimate(parse_query("SELECT COUNT(*), SUM(x) FROM t"))
    group = result_size_estimate(parse_query("SELECT a, COUNT(*) FROM t GROUP BY a LIMIT 100"))
    rows = result_size_estimate(parse_query("SELECT a, b FROM t LIMIT 1000"))
    assert agg == 64 + 2 * 16 and group == 64 + 100 * 16 * 2 and rows == 64 + 1000 * 8 * 2


def test_ttl_bounds_the_key_map_and_lets_duplicates_through() -> None:
    heap = heap_by_ttl([0, 3600], segments=10, records_per_segment=3000)
    last = heap.groupby("ttl_s").tail(1).set_index("ttl_s")
    assert last.loc[3600, "num_primary_keys"] < last.loc[0, "num_primary_keys"] / 2
    assert last.loc[3600, "heap_bytes"] < last.loc[0, "heap_bytes"]
    assert last.loc[0, "duplicate_keys"] == 0 and last.loc[3600, "duplicate_keys"] > 0
    fig = plots.heap_over_time(heap, pinot_bytes=1e6)
    assert len(fig.axes[0].get_lines()) == 3  # two TTL steps and Pinot's line


def test_pruning_study_keeps_about_one_partition_for_lookups() -> None:
    from pathlib import Path

    from workbench.scenario import load_scenario
    from workbench.studies.pruning import pruning_study

    base = load_scenario(Path(__file__).resolve().parents[2] / "scenarios" / "default.yaml")
    small = {"workload.generate.events": 10_000, "workload.generate.segment_rows": 500,
             "workload.generate.queries.duration_s": 30}
    study = pruning_study(base, {"v": small})
    lookups = study[study["kind"] == "lookup"]
    partitions = base.workload.generate.partitions if base.workload.generate else 1
    # Modulo partitioning on key_id: an EQ lookup keeps its partition's sealed segments and every
    # consuming segment (one per stream partition, no metadata yet), so about 1/partitions of all
    assert lookups["kept_share"].mean() < 1.5 / partitions
    assert (study["kept"] <= study["segments"]).all()
