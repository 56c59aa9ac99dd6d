"""Segments are cut as the table's flush thresholds say (Pinot's ``FlushThresholdUpdateManager`` at 1.5.1).

Hand computations:
- ``threshold.rows`` is a per-server budget: ``DefaultFlushThresholdUpdater`` gives each consuming segment
  ``rows / maxNumPartitionsPerInstance`` rows, and without replica groups that divisor is
  ``ceil(partitions x replicas / servers)`` (``PinotLLCRealtimeSegmentManager``): 1000 rows, 4 partitions,
  1 replica on 2 servers -> ceil(4/2) = 2 -> 500 rows per segment. With replica groups it is
  ``ceil(partitions / servers per group)``: 3 partitions, 2 groups of 2 -> 2 -> 1200 / 2 = 600, where the
  same 6 servers without groups give ceil(3 x 2 / 6) = 1 -> 1200.
- ``threshold.time`` 6h over a 24 h span seals each partition's segments at t0 + 6 h, 12 h, 18 h; the fourth
  is still consuming at "now" (t0 + 24 h).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from workbench.api import scenario_warnings
from workbench.errors import InputError
from workbench.pinot.flush import FlushConfig, max_partitions_per_instance
from workbench.pinot.table_config import TableConfig
from workbench.scenario import build_section, load_scenario
from workbench.scenario.schema import GenerateSpec
from workbench.workload.pure import generate_frames

ROOT = Path(__file__).resolve().parents[2]
HOUR_MS = 3_600_000


def _table(stream: dict[str, str], *, replicas: int = 1, groups: tuple[int, int] | None = None,
           legacy: bool = False) -> dict[str, Any]:
    table: dict[str, Any] = {
        "tableName": "events", "tableType": "REALTIME",
        "segmentsConfig": {"timeColumnName": "event_time_ms", "replicasPerPartition": str(replicas)},
        "tableIndexConfig": {}}
    stream = {"streamType": "kafka", "stream.kafka.topic.name": "events", **stream}
    if legacy:
        table["tableIndexConfig"]["streamConfigs"] = stream
    else:
        table["ingestionConfig"] = {"streamIngestionConfig": {"streamConfigMaps": [stream]}}
    if groups is not None:
        table["instanceAssignmentConfigMap"] = {"CONSUMING": {
            "tagPoolConfig": {"tag": "DefaultTenant_REALTIME"},
            "replicaGroupPartitionConfig": {"replicaGroupBased": True, "numReplicaGroups": groups[0],
                                            "numInstancesPerReplicaGroup": groups[1]}}}
    return table


def _scenario(table: dict[str, Any], generate: dict[str, Any], servers: int = 2) -> dict[str, Any]:
    return {"cluster": {"servers": servers, "server": {"cores": 2}}, "table": table,
            "workload": {"generate": {"keys": 500, "queries": {"duration_s": 10}, **generate}},
            "simulation": {"duration_s": 3, "warmup_s": 0.5, "replications": 1, "seed": 1}}


def test_rows_are_divided_by_the_partitions_a_server_consumes() -> None:
    sc = load_scenario(_scenario(_table({"realtime.segment.flush.threshold.rows": "1000"}),
                                 {"events": 8_000, "partitions": 4}))
    assert sc.workload.generate is not None
    assert sc.workload.generate.segment_rows == 1000 // 2
    w = generate_frames(sc.workload.generate, table_config=sc.table, seed=1)
    sealed = w.segments[w.segments["status"] == "DONE"]
    assert len(sealed) >= 4 and set(sealed["total_docs"]) == {500}
    consuming = w.segments[w.segments["status"] == "IN_PROGRESS"]
    assert len(consuming) == 4 and (consuming["total_docs"] < 500).all()
    assert {json.loads(z)["segment.flush.threshold.size"] for z in w.segments["zk_metadata"]} == {"500"}


def test_replica_groups_divide_by_the_partitions_of_one_group() -> None:
    stream = {"realtime.segment.flush.threshold.rows": "1200"}
    grouped = load_scenario(_scenario(_table(stream, replicas=2, groups=(2, 2)), {"partitions": 3}, servers=6))
    sprayed = load_scenario(_scenario(_table(stream, replicas=2), {"partitions": 3}, servers=6))
    assert grouped.workload.generate is not None and sprayed.workload.generate is not None
    assert (grouped.workload.generate.segment_rows, sprayed.workload.generate.segment_rows) == (600, 1200)


def test_segment_rows_is_taken_as_is() -> None:
    sc = load_scenario(_scenario(_table({"realtime.segment.flush.threshold.segment.rows": "700"}),
                                 {"partitions": 4}))
    assert sc.workload.generate is not None and sc.workload.generate.segment_rows == 700


def test_time_threshold_seals_every_six_hours() -> None:
    stream = {"realtime.segment.flush.threshold.segment.rows": "1000000", "realtime.segment.flush.threshold.time": "6h"}
    sc = load_scenario(_scenario(_table(stream, legacy=True), {"events": 4_000, "partitions": 2, "span_s": "1d"}))
    assert sc.workload.generate is not None and sc.workload.generate.segment_time_s == 6 * 3600
    w = generate_frames(sc.workload.generate, table_config=sc.table, seed=2)
    t0 = int(w.manifest["time"]["start_ms"])
    for _, segs in w.segments.groupby("partition"):
        segs = segs.sort_values("sequence")
        assert segs["seal_time_ms"].tolist() == [t0 + 6 * HOUR_MS, t0 + 12 * HOUR_MS, t0 + 18 * HOUR_MS, -1]
        assert segs["creation_time_ms"].tolist() == [t0, t0 + 6 * HOUR_MS, t0 + 12 * HOUR_MS, t0 + 18 * HOUR_MS]


def test_a_table_that_states_rows_only_gets_pinots_six_hour_time_threshold() -> None:
    sc = load_scenario(_scenario(_table({"realtime.segment.flush.threshold.rows": "1000"}), {"partitions": 4}))
    assert sc.workload.generate is not None and sc.workload.generate.segment_time_s == 6 * 3600


def test_a_written_generate_key_wins_and_validate_names_both() -> None:
    table = _table({"realtime.segment.flush.threshold.rows": "1000", "realtime.segment.flush.threshold.time": "2h"})
    sc = load_scenario(_scenario(table, {"partitions": 4, "segment_rows": 300, "segment_time_s": "1h"}))
    assert sc.workload.generate is not None
    assert (sc.workload.generate.segment_rows, sc.workload.generate.segment_time_s) == (300, 3600)
    warnings = scenario_warnings(sc)
    assert any("segment_rows 300 overrides" in w and "threshold.rows 1000 / 2 stream partitions per server" in w
               and "500 rows per segment" in w for w in warnings)
    assert any("segment_time_s 3600 s overrides" in w and "(7200 s)" in w for w in warnings)


def test_size_based_flushing_keeps_segment_rows_and_the_tables_time() -> None:
    stream = {"realtime.segment.flush.threshold.rows": "0", "realtime.segment.flush.threshold.time": "3h",
              "realtime.segment.flush.threshold.segment.size": "150M"}
    sc = load_scenario(_scenario(_table(stream), {"partitions": 4}))
    assert sc.workload.generate is not None
    assert (sc.workload.generate.segment_rows, sc.workload.generate.segment_time_s) == (20_000, 3 * 3600)
    assert FlushConfig.of(stream).segment_size_bytes == 150 * 1024 * 1024
    assert not [w for w in scenario_warnings(sc) if "overrides" in w]  # nothing written contradicts the table


def test_a_table_without_thresholds_keeps_the_generate_keys_unchanged() -> None:
    raw = {"events": 3_000, "keys": 500, "partitions": 4, "queries": {"duration_s": 10}}
    sc = load_scenario(_scenario(_table({}), raw))
    assert sc.workload.generate == build_section(GenerateSpec, raw, "workload.generate")


def test_pinots_example_table_reads_the_deprecated_keys() -> None:
    table = TableConfig.from_json((ROOT / "tests/fixtures/pinot_examples/airlineStats_realtime_table_config.json")
                                  .read_text())
    from workbench.pinot.flush import stream_config_map

    found = stream_config_map(table)
    assert found is not None
    cfg = FlushConfig.of(found[1])
    assert (cfg.rows, cfg.time_ms) == (50_000, HOUR_MS)  # threshold.size is the old name of rows; time in ms
    assert cfg.segment_rows(max_partitions_per_instance(4, 1, 3, replica_groups=False)) == 25_000


def test_a_threshold_pinot_rejects_is_one_error_naming_the_key() -> None:
    with pytest.raises(InputError, match=r"table\.ingestionConfig\.streamIngestionConfig\.streamConfigMaps\.0\."
                                         r"realtime\.segment\.flush\.threshold\.time.*'soon'"):
        load_scenario(_scenario(_table({"realtime.segment.flush.threshold.time": "soon"}), {}))
