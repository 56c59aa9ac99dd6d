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
- Size-based flushing (``threshold.rows`` 0 or ``threshold.segment.size``): the successive thresholds of
  ``SizeBasedSegmentFlushThresholdComputer`` (its own tests are transcribed in ``test_flush_size_based.py``),
  computed by hand in each test below from the generator's row size.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from workbench.api import scenario_warnings
from workbench.errors import InputError
from workbench.pinot.flush import FlushConfig, max_partitions_per_instance
from workbench.pinot.flush_size import AutotuneState
from workbench.pinot.table_config import TableConfig
from workbench.scenario import build_section, load_scenario
from workbench.scenario.schema import GenerateSpec
from workbench.sim.segment_range import size_based_partition_rows
from workbench.workload.pure import generate_frames
from workbench.workload.segments import seal_partition

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


def test_a_size_based_table_sets_segment_size_and_initial_rows() -> None:
    stream = {"realtime.segment.flush.threshold.rows": "0", "realtime.segment.flush.threshold.time": "3h",
              "realtime.segment.flush.threshold.segment.size": "150M",
              "realtime.segment.flush.autotune.initialRows": "40000"}
    sc = load_scenario(_scenario(_table(stream), {"partitions": 4}))
    spec = sc.workload.generate
    assert spec is not None
    assert (spec.segment_size, spec.segment_initial_rows, spec.segment_time_s) == (150 * 2**20, 40_000, 3 * 3600)
    assert not [w for w in scenario_warnings(sc) if "overrides" in w]  # nothing written contradicts the table
    # the layout validate predicts: 200,000 events on 4 partitions over 6 h is 25,000 rows a partition in 3 h,
    # short of the 40,000 initial rows: the time threshold seals it, then the consuming one holds the rest
    assert size_based_partition_rows(sc) == [25_000, 25_000]
    # rows 0 alone is size-based too (Pinot's legacy rule), towards Pinot's 200 MiB from 100,000 rows
    sc = load_scenario(_scenario(_table({"realtime.segment.flush.threshold.rows": "0"}), {"partitions": 4}))
    assert sc.workload.generate is not None
    assert (sc.workload.generate.segment_size, sc.workload.generate.segment_initial_rows) == (200 * 2**20, 100_000)


def test_written_segment_rows_wins_over_size_based_flushing_and_validate_says_where_it_settles() -> None:
    """1,000,000 events on 2 partitions over 6 h (no time seal before "now"): 500,000 rows a partition. Rows
    of ~61 B (49 fixed, ``c`` + 2 digits, ``user_`` + mostly 4 digits): 100,000 rows first (6.1 MB, inside
    [5 MiB, 15 MiB]) -> 10 MiB / 61 B = about 172,000 rows from segment 2 on; 100,000 + 2 x 172,000 leave
    the fourth segment consuming."""
    stream = {"realtime.segment.flush.threshold.rows": "0", "realtime.segment.flush.threshold.segment.size": "10M"}
    sc = load_scenario(_scenario(_table(stream), {"events": 1_000_000, "keys": 5_000, "partitions": 2,
                                                  "segment_rows": 30_000}))
    assert sc.workload.generate is not None
    assert (sc.workload.generate.segment_rows, sc.workload.generate.segment_size) == (30_000, None)
    [warning] = [w for w in scenario_warnings(sc) if "overrides" in w]
    assert ("segment_rows 30000 overrides the table's flush threshold (size-based "
            "(realtime.segment.flush.threshold.segment.size 10485760 bytes)") in warning
    found = re.search(r"100,000 rows first, settling on ([\d,]+) rows per segment \(about ([\d.]+) MB at (\d+) B a "
                      r"row\) from segment 2 of 3 sealed per partition", warning)
    assert found, warning
    rows, mb, per_row = int(found[1].replace(",", "")), float(found[2]), int(found[3])
    assert per_row in (60, 61) and rows == pytest.approx(10 * 2**20 / per_row, rel=0.01)
    assert mb == pytest.approx(10 * 2**20 / 1e6, rel=0.01)


def test_a_slow_partition_is_sealed_by_time_then_given_1_1_times_its_rows() -> None:
    """Pinot's time rule through the cutter: 50 rows/s, 1 h time threshold, 60 B a row, 200 MiB: 100,000 rows
    (2,000 s), 150,000 (3,000 s), then 225,000 which the hour seals at 180,000 -> 198,000, sealed again at
    180,000 by the hour, and so on (the same hand computation as test_flush_size_based's slow partition)."""
    state = AutotuneState(200 * 2**20, 100_000, HOUR_MS)
    cuts = seal_partition(np.full(6 * 3600, 50), rows=state, time_ms=HOUR_MS, bin_ms=1000, t0_ms=0,
                          span_ms=6 * HOUR_MS, bytes_per_row=60.0)
    assert [(c.threshold, c.end - c.start) for c in cuts[:5]] == [(100_000, 100_000), (150_000, 150_000),
                                                                  (225_000, 180_000), (198_000, 180_000),
                                                                  (198_000, 180_000)]
    assert [c.seal_ms for c in cuts[:3]] == [2_000_000, 5_000_000, 5_000_000 + HOUR_MS]


def test_a_size_based_table_generates_segments_of_pinots_successive_thresholds() -> None:
    """End to end (the in-process generator): 1 MiB segments from 2,000 initial rows, 80,000 events on 2
    partitions. By hand, with rows of ~60 B: 2,000 rows (120 KB, under half of 1 MiB: x 1.5 = 3,000, raised to
    Pinot's 10,000-row floor) -> 10,000 (600 KB: inside [512 KiB, 1.5 MiB]) -> 1 MiB x rows/bytes, about
    17,500, and again; what is left of a partition's 40,000 rows is the consuming segment."""
    stream = {"realtime.segment.flush.threshold.segment.size": "1M",
              "realtime.segment.flush.autotune.initialRows": "2000"}
    sc = load_scenario(_scenario(_table(stream), {"events": 80_000, "partitions": 2, "span_s": "1h"}))
    assert sc.workload.generate is not None
    w = generate_frames(sc.workload.generate, table_config=sc.table, seed=3)
    sealed = w.segments[w.segments["status"] == "DONE"]
    per_row = float(sealed["size_bytes"].sum() / sealed["total_docs"].sum())  # the data's own bytes per row
    assert 58 < per_row < 61 and int(w.segments["total_docs"].sum()) == 80_000
    for _, segs in w.segments.groupby("partition"):
        segs = segs.sort_values("sequence")
        thresholds = [int(json.loads(z)["segment.flush.threshold.size"]) for z in segs["zk_metadata"]]
        docs = segs["total_docs"].tolist()
        assert thresholds[:2] == [2_000, 10_000]
        assert thresholds[2] == pytest.approx(2**20 / per_row, rel=0.01)
        assert docs[:-1] == thresholds[:-1]  # sealed by rows: each got its threshold
        assert segs["status"].tolist()[-1] == "IN_PROGRESS"
        assert 0 < docs[-1] < thresholds[-1] and len(docs) == 4  # ~40,000 rows: 2,000 + 10,000 + 17,500 + the rest
        tuned = segs[segs["sequence"] == 2]
        assert int(tuned["size_bytes"].iloc[0]) == pytest.approx(2**20, rel=0.02)  # the size asked, by the data


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


def test_the_row_size_tuned_on_is_the_one_the_data_reports() -> None:
    """Pinot's example airlineStats schema (schema-driven rows, 2 MiB asked, 1,000 initial rows): the bytes per
    row the thresholds are tuned with (estimated before any row exists) are within 1% of the sizes the sealed
    segments report, and the second segment gets Pinot's 10,000-row floor (1,000 x ~570 B = 0.57 MB is under
    half of 2 MiB: x 1.5 = 1,500, raised to 10,000)."""
    from workbench.pinot.schema import Schema
    from workbench.workload.row_size import spec_row_bytes

    fixtures = ROOT / "tests/fixtures/pinot_examples"
    table = TableConfig.from_json((fixtures / "airlineStats_realtime_table_config.json").read_text())
    schema = Schema.from_json(json.loads((fixtures / "airlineStats_schema.json").read_text()))
    spec = GenerateSpec(events=30_000, partitions=2, from_schema=True, segment_size=2 * 2**20,
                        segment_initial_rows=1_000, span_s=3600)
    w = generate_frames(spec, table_config=table, schema=schema, seed=1)
    sealed = w.segments[w.segments["status"] == "DONE"]
    assert spec_row_bytes(spec, table, schema) == pytest.approx(sealed["size_bytes"].sum()
                                                                / sealed["total_docs"].sum(), rel=0.01)
    for _, segs in sealed.groupby("partition"):
        assert segs.sort_values("sequence")["total_docs"].tolist()[:2] == [1_000, 10_000]
