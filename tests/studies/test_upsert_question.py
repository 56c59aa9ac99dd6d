"""The upsert question in one step: keys per server by hand from Pinot's assignment, STRING key bytes from maxLength."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from workbench.cli import main
from workbench.errors import InputError
from workbench.scenario import load_scenario
from workbench.studies.upsert_question import UpsertQuestion, answer_upsert_question, keys_per_server
from workbench.sweep.spec import parse_sweep


def scenario(hash_function: str = "NONE", max_length: int | None = 36, generate: bool = False) -> dict[str, Any]:
    key: dict[str, Any] = {"name": "id", "dataType": "STRING"}
    if max_length is not None:
        key["maxLength"] = max_length
    workload: dict[str, Any] = {"synthetic": {"segments_per_server": 1, "docs_per_segment": 1000},
                                "arrival": {"process": "poisson", "qps": 20}}
    data: dict[str, Any] = {
        "cluster": {"servers": 4, "server": {"heap": "31G", "cores": 2},
                    "gc": {"collector": "g1", "live_heap": "1G", "allocation_rate": "100MB"}},
        "table": {"tableName": "u", "tableType": "REALTIME",
                  "segmentsConfig": {"replication": 2, "timeColumnName": "ts"},
                  "routing": {"instanceSelectorType": "strictReplicaGroup"},
                  "upsertConfig": {"mode": "FULL", "hashFunction": hash_function}},
        "schema": {"schemaName": "u", "primaryKeyColumns": ["id"], "dimensionFieldSpecs": [key],
                   "dateTimeFieldSpecs": [{"name": "ts", "dataType": "LONG", "format": "1:MILLISECONDS:EPOCH",
                                           "granularity": "1:MILLISECONDS"}]},
        "workload": workload,
        "service": {"model": "exponential", "mean_ms": 2},
        "simulation": {"duration_s": 8, "warmup_s": 1, "replications": 1, "seed": 3},
        "slo": {"p99_ms": 100}}
    if generate:
        del workload["synthetic"]
        workload["generate"] = {"events": 30_000, "keys": 10_000, "partitions": 8, "span_s": "1h"}
    return data


def test_keys_per_server_follow_pinots_partition_assignment_by_hand() -> None:
    sc = load_scenario(scenario())
    # Pinot's consuming assignment without replica groups: partition p's replica r goes to instance
    # (p * replication + r) % servers of the (rotated) instance list. 8 partitions x 2 replicas:
    #   4 servers: p0 -> 0,1  p1 -> 2,3  p2 -> 0,1 ... every server 4 partitions -> 4 x 25M = 100M
    #   3 servers: p0 -> 0,1  p1 -> 2,0  p2 -> 1,2  p3 -> 0,1  p4 -> 2,0  p5 -> 1,2  p6 -> 0,1  p7 -> 2,0
    #              instance 0 hosts 6 partitions, 1 and 2 host 5 -> 150M, 125M, 125M
    per_partition = 200e6 / 8
    assert sorted(keys_per_server(sc, 4, 8, 200e6).values()) == [4 * per_partition] * 4
    assert sorted(keys_per_server(sc, 3, 8, 200e6).values()) == [5 * per_partition, 5 * per_partition,
                                                                 6 * per_partition]
    # 3 partitions x 2 replicas on 8 servers: 6 replicas, 2 servers hold nothing
    assert sorted(keys_per_server(sc, 8, 3, 3e6).values()) == [0, 0] + [1e6] * 6


@pytest.mark.parametrize(("hash_function", "key_bytes"), [
    # PrimaryKey 16 + Object[1] (16 + 4 -> 24) + String 24 + byte[36] (16 + 36 = 52 -> 56)
    ("NONE", 16 + 24 + 24 + 56),
    # ByteArray 16 + byte[16] (16 + 16 = 32): the 128-bit digest, whatever the key's length
    ("MD5", 16 + 32), ("MURMUR3", 16 + 32)])
def test_string_key_bytes_follow_max_length(hash_function: str, key_bytes: int) -> None:
    sc = load_scenario(scenario(hash_function))
    answer = answer_upsert_question(sc, UpsertQuestion(keys=200e6, ttl_s=0, update_rate=5800, partitions=8),
                                    servers=[4],
                                    run=False)
    # 25M keys per partition map: the table doubles past 0.75 x capacity, 0.75 x 2^25 = 25.17M > 25M
    table_slots = (16 + 4 * 2**25) / 25e6
    # node 32 + key + RecordLocation 24 + boxed Long comparison value 24
    assert answer.bytes_per_key == pytest.approx(32 + key_bytes + 24 + 24 + table_slots)
    row = answer.table.iloc[0]
    assert row["upsert_bytes"] == pytest.approx(100e6 * answer.bytes_per_key)
    assert row["update_rate_per_server"] == pytest.approx(5800 / 8 * 4)  # 4 of 8 partitions' updates
    # the smallest heap keeping the live heap (1G static + the map) under G1's IHOP of 45%
    assert row["heap_for_ihop_bytes"] == pytest.approx((2**30 + 100e6 * answer.bytes_per_key) / 0.45)


def test_unbounded_string_key_needs_a_length() -> None:
    sc = load_scenario(scenario(max_length=None))
    with pytest.raises(InputError, match="key-length"):
        answer_upsert_question(sc, UpsertQuestion(keys=1e6, update_rate=1, partitions=8), servers=[4], run=False)
    stated = answer_upsert_question(sc, UpsertQuestion(keys=1e6, update_rate=1, partitions=8, key_length=36),
                                    servers=[4], run=False)
    assert stated.bytes_per_key == pytest.approx(32 + 120 + 48 + (16 + 4 * 2**18) / 125e3)


def test_update_rate_from_the_sample_is_scaled_and_flagged() -> None:
    sc = load_scenario(scenario(generate=True))
    answer = answer_upsert_question(sc, UpsertQuestion(keys=200e6), servers=[4], run=False)
    # the sample: 20,000 updates of 10,000 keys in an hour -> 2 updates per key per hour
    assert answer.update_rate == pytest.approx(2 / 3600 * 200e6)
    assert any("SCALED FROM THE SAMPLE" in n for n in answer.notes)


def test_ttl_bounds_the_map_by_the_closed_form() -> None:
    sc = load_scenario(scenario())
    q = UpsertQuestion(keys=200e6, ttl_s=86_400, update_rate=0, new_keys_per_day=50e6, key_lifetime_s=7200,
                       partitions=8)
    answer = answer_upsert_question(sc, q, servers=[4], run=False)
    assert answer.map_keys == pytest.approx(50e6 / 86_400 * (7200 + 86_400 + 3600))  # lifetime + TTL + a segment


def test_cli_answers_the_question_in_one_step(tmp_path: Path) -> None:
    path = tmp_path / "upsert.yaml"
    path.write_text(yaml.safe_dump(scenario()))
    out = tmp_path / "answer"
    assert main(["upsert", str(path), "--keys", "200M", "--ttl", "1d", "--update-rate", "5800", "--partitions", "8",
                 "--servers", "3,4", "--heaps", "16G,31G", "--qps", "20", "--p99-ms", "100", "--out", str(out)]) == 0
    answer = json.loads((out / "upsert.json").read_text())
    by_shape = {(c["servers"], c["heap"]): c for c in answer["candidates"]}
    assert by_shape[(4, "31G")]["max_keys_per_server"] == 100e6
    assert by_shape[(3, "31G")]["max_keys_per_server"] == 150e6
    # 150M keys x ~205 B + 1G does not fit 16G: out of memory, never run, never an answer
    assert by_shape[(3, "16G")]["meets_slo"] is False and by_shape[(3, "16G")]["p99_ms"] is None
    assert answer["servers"] in (3, 4) and by_shape[(answer["servers"], answer["heap"])]["meets_slo"] is True
    # the same candidates as a sweep (`workbench sweep OUT/sweep.json`): the busiest server's heap, by hand
    sweep = parse_sweep(json.loads((out / "sweep.json").read_text()), where="sweep.json")
    point = next(p.overrides for p in sweep.points if p.overrides["cluster.servers"] == 4)
    per_key = 32 + (16 + 24 + 24 + 56) + 24 + 24 + (16 + 4 * 2**25) / 25e6  # 25M keys a partition map
    assert point["cluster.gc.live_heap"] == pytest.approx(2**30 + 100e6 * per_key, abs=1)
    assert point["cluster.gc.update_rate"] == pytest.approx(5800 / 2)  # 4 of 8 partitions
    assert len(sweep.points) == 2  # 16G fits neither 150M nor 100M keys: not a point


def test_restart_work_by_hand() -> None:
    import numpy as np

    from workbench.pinot.upsert.replay import StreamSegment
    from workbench.studies.upsert import recovery_work

    # three segments of four docs; key 1 is updated in every segment, key 2 once
    keys = [[1, 2, 3, 4], [1, 2, 5, 6], [1, 7, 8, 9]]
    stream = [StreamSegment(f"t__0__{i}__20240101T0000Z", np.array(k), np.arange(4) + 10 * i)
              for i, k in enumerate(keys)]
    work = recovery_work(stream).set_index("mode")
    # valid docs: segment 0 keeps keys 3, 4; segment 1 keeps 2, 5, 6; segment 2 keeps all four -> 9 keys
    assert work.loc["rebuild", ["snapshots_read", "docs_read", "key_comparisons", "keys"]].tolist() == [0, 12, 12, 9]
    assert work.loc["preload", ["snapshots_read", "docs_read", "key_comparisons", "keys"]].tolist() == [3, 9, 0, 9]


def test_duplicates_only_with_a_ttl_shorter_than_a_keys_life() -> None:
    from workbench.studies.upsert import duplicates_by_ttl, heap_by_ttl

    dup = duplicates_by_ttl(heap_by_ttl([0, 1800], segments=5, records_per_segment=1500, active_window_s=7200))
    assert dup.set_index("ttl_s").loc[0.0, "max_duplicates"] == 0  # no TTL: the map sees every update
    assert dup.set_index("ttl_s").loc[1800.0, "max_duplicates"] > 0  # keys live 2 h, the TTL forgets them at 30 min


@pytest.mark.parametrize(("hash_function", "entry"), [("NONE", 32 + 120 + 48), ("MD5", 32 + 48 + 48),
                                                      ("MURMUR3", 32 + 48 + 48)])
def test_notebook_heap_timeline_takes_a_string_key_with_every_hash(hash_function: str, entry: int) -> None:
    """Notebook 04's first part crashed on a STRING key (and on MD5, through Pinot's estimate)."""
    from workbench.analysis.upsert_day import UpsertLoad, heap_timeline

    load = UpsertLoad(50e6, 7200, partitions=16, servers=8, replication=2, primary_key_types=("STRING",),
                      hash_function=hash_function, key_length=36)
    end = heap_timeline(load, 0, 24).iloc[-1]
    # 50M keys a day over 16 partitions: 3.125M keys a map, under 0.75 x 2^22 = 3.146M -> 2^22 slots
    assert end["bytes_per_key"] == pytest.approx(entry + (16 + 4 * 2**22) / 3.125e6)
    # Pinot's estimator takes primaryKeySize (36) as the key's bytes, plus 60 per value
    assert end["pinot_estimate_bytes"] == pytest.approx((36 + 60) * end["keys_per_server"])


def test_bytes_key_follows_max_length() -> None:
    data = scenario()
    data["schema"]["dimensionFieldSpecs"][0].update(dataType="BYTES", maxLength=16)
    answer = answer_upsert_question(load_scenario(data), UpsertQuestion(keys=8e6, update_rate=0, partitions=8),
                                    servers=[4], run=False)
    # PrimaryKey 16 + Object[1] 24 + ByteArray 16 + byte[16] (16 + 16 = 32), 1M keys a map -> 2^21 slots
    assert answer.bytes_per_key == pytest.approx(32 + (16 + 24 + 16 + 32) + 48 + (16 + 4 * 2**21) / 1e6)


def test_table_ttl_is_read_in_the_comparison_columns_unit() -> None:
    data = scenario()
    data["table"]["upsertConfig"]["metadataTTL"] = 86_400_000  # a day of a millisecond time column
    ms = answer_upsert_question(load_scenario(data), UpsertQuestion(keys=1e9, update_rate=0, partitions=8,
                                                                    new_keys_per_day=1e6), servers=[4], run=False)
    assert ms.map_keys == pytest.approx(1e6 / 86_400 * (86_400 + 3600))  # lifetime 0 + TTL + a segment
    data["table"]["upsertConfig"]["metadataTTL"] = 24  # the same day in an hours column
    data["schema"]["dateTimeFieldSpecs"][0].update(format="1:HOURS:EPOCH", granularity="1:HOURS")
    hours = answer_upsert_question(load_scenario(data), UpsertQuestion(keys=1e9, update_rate=0, partitions=8,
                                                                       new_keys_per_day=1e6), servers=[4], run=False)
    assert hours.map_keys == pytest.approx(ms.map_keys)


def test_a_rate_for_a_replayed_log_is_refused_as_the_sizing_sweep_refuses_it() -> None:
    """A replayed log's load is its own: --qps would be silently ignored, so it is one error naming qps."""
    data = scenario()
    data["workload"]["arrival"] = {"process": "replay"}
    sc = load_scenario(data)
    with pytest.raises(InputError, match=r"qps: the scenario replays a query log.*workload\.arrival\.speed"):
        answer_upsert_question(sc, UpsertQuestion(keys=1e6, update_rate=1, partitions=8), servers=[4], qps=500,
                               run=False)
