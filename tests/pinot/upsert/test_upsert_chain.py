"""The upsert chain without hand steps: keys per server come from the table's data and TTL, not a number.

Expectations are computed here from the generated events themselves (distinct keys, last event times,
watermarks), independently of the replay that the workbench runs through Pinot's upsert manager.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd
import pytest

from workbench.analysis.stats import summarise
from workbench.errors import ScenarioError
from workbench.pinot.heap import entry_layout
from workbench.scenario import load_scenario
from workbench.sim.layout import build_layout
from workbench.sim.memory import server_memory
from workbench.sim.run import simulate

HOUR_MS = 3_600_000


@pytest.fixture(scope="module")
def events(upsert_trips: Any) -> pd.DataFrame:
    frame = pd.read_parquet(upsert_trips.data / "events", columns=["key", "key_id", "event_time_ms", "partition",
                                                                  "segment_name", "doc_id"])
    segs = pd.read_parquet(upsert_trips.data / "segments.parquet")
    start = json.loads((upsert_trips.data / "manifest.json").read_text())["time"]["start_ms"]
    end = json.loads((upsert_trips.data / "manifest.json").read_text())["time"]["end_ms"]
    sealed = segs["seal_time_ms"].where(segs["seal_time_ms"] > 0, end)
    commit = dict(zip(segs["segment_name"], (sealed - start) / 1000.0, strict=True))
    frame["commit_s"] = frame["segment_name"].map(commit)
    return frame


def _hosted(sc: dict[str, Any], data: Any) -> dict[str, set[int]]:
    """Which stream partitions each server serves, read from the layout (assignment is tested elsewhere)."""
    scenario = load_scenario(sc)
    layout = build_layout(scenario, data)
    out: dict[str, set[int]] = {s: set() for s in layout.servers}
    assert layout.partitions is not None
    for seg, replicas in enumerate(layout.replicas):
        for r in replicas:
            out[layout.servers[r]].add(int(layout.partitions[seg]))
    return out


def _keys_at(events: pd.DataFrame, partition: int, t_s: float, ttl_ms: float) -> int:
    """Keys in one partition's map just after the last commit at or before ``t_s`` and the TTL sweep that
    starts the next segment: the keys consumed so far whose newest value is not older than the watermark
    (the newest value consumed) minus metadataTTL."""
    done = events[(events["partition"] == partition) & (events["commit_s"] <= t_s)]
    newest = done.groupby("key_id")["event_time_ms"].max()
    if ttl_ms <= 0:
        return len(newest)
    return int((newest >= done["event_time_ms"].max() - ttl_ms).sum())


@pytest.mark.parametrize("ttl_h", [0, 1])
def test_each_server_holds_the_keys_of_the_partitions_it_serves(upsert_trips: Any, events: pd.DataFrame,
                                                                ttl_h: float) -> None:
    """At a mid-span moment, every server's key count is the sum over its partitions of the keys left
    after the last commit's TTL sweep, computed here from the events."""
    at_s = 6 * 3600.0
    sc = upsert_trips.scenario(ttl_h * HOUR_MS, gc={"collector": "none", "heap_at": at_s})
    memory = server_memory(load_scenario(sc), build_layout(load_scenario(sc), upsert_trips.data),
                           upsert_trips.data)
    hosted = _hosted(sc, upsert_trips.data)
    expected = [sum(_keys_at(events, p, at_s, ttl_h * HOUR_MS) for p in hosted[s]) for s in sorted(hosted)]
    assert [m.live.upsert_keys for m in memory.servers] == expected
    assert memory.at_s == at_s and memory.source == "replay"


def test_a_sweep_over_servers_keeps_the_dataset_fixed(upsert_trips: Any, events: pd.DataFrame) -> None:
    """2, 4 or 8 servers hold the same keys between them: each partition's keys once per replica."""
    end_s = float(events["commit_s"].max())
    total = events.groupby("partition")["key_id"].nunique().sum()
    for servers in (2, 4, 8):
        sc = upsert_trips.scenario(0, servers=servers, gc={"collector": "none", "heap_at": end_s})
        scenario = load_scenario(sc)
        memory = server_memory(scenario, build_layout(scenario, upsert_trips.data), upsert_trips.data)
        assert sum(m.live.upsert_keys for m in memory.servers) == 2 * total, servers


def test_string_keys_cost_their_measured_length(upsert_trips: Any, events: pd.DataFrame) -> None:
    """hashFunction NONE keeps the STRING key: a key's bytes follow the data's mean key length (no hidden
    avg_string_length); each partition's map adds its table, a power of two at least keys / 0.75 of
    4-byte (compressed) references: under 2 / 0.75 slots, 10.7 bytes, per key."""
    sc = upsert_trips.scenario(0, gc={"collector": "none"})
    scenario = load_scenario(sc)
    memory = server_memory(scenario, build_layout(scenario, upsert_trips.data), upsert_trips.data)
    distinct = events.drop_duplicates("key_id")["key"]
    entry = entry_layout(["STRING"], "NONE", "LONG", float(distinct.str.len().mean())).total
    for m in memory.servers:
        per_key = m.live.bytes_per_key
        assert entry <= per_key <= entry + 4 * 2 / 0.75 + 64 / m.live.upsert_keys  # + two array headers
    hashed = upsert_trips.scenario(0, gc={"collector": "none"})
    hashed["table"]["upsertConfig"]["hashFunction"] = "MD5"
    scenario = load_scenario(hashed)
    md5 = server_memory(scenario, build_layout(scenario, upsert_trips.data), upsert_trips.data)
    assert md5.servers[0].live.upsert_keys == memory.servers[0].live.upsert_keys
    assert md5.servers[0].live.bytes_per_key != memory.servers[0].live.bytes_per_key


def test_ttl_bounds_the_heap_over_the_day(upsert_trips: Any) -> None:
    """Without TTL the map only grows; with metadataTTL the heap timeline stays below it at every moment,
    the peak falls with the TTL, and the update rate is measured from the data."""
    peaks = []
    for ttl_h in (0, 4, 1):
        result = simulate(upsert_trips.scenario(ttl_h * HOUR_MS, gc={"collector": "none"}))
        heap = result.heap
        assert set(heap["server"]) == set(result.servers["server"])
        peaks.append(float(heap["live_heap"].max()))
        if ttl_h == 0:
            growth = heap.groupby("server")["upsert_keys"].apply(lambda k: bool((np.diff(k.to_numpy()) >= 0).all()))
            assert growth.all()
            base = heap.set_index(["server", "time_s"])["upsert_keys"]
        else:
            assert (heap.set_index(["server", "time_s"])["upsert_keys"] <= base.reindex(
                heap.set_index(["server", "time_s"]).index)).all()
        assert (heap["update_rate"] > 0).any()
        summary = summarise(result)
        assert summary.heap.upsert_keys_from == "replay" and summary.heap.upsert_keys_max > 0
    assert peaks[0] > peaks[1] > peaks[2]


def test_a_given_key_count_or_update_rate_overrides_the_data(upsert_trips: Any) -> None:
    sc = upsert_trips.scenario(0, gc={"collector": "none", "upsert_keys": 1234, "update_rate": 7.5})
    scenario = load_scenario(sc)
    memory = server_memory(scenario, build_layout(scenario, upsert_trips.data), upsert_trips.data)
    assert {m.live.upsert_keys for m in memory.servers} == {1234}
    assert {m.update_rate for m in memory.servers} == {7.5}
    assert memory.source == "upsert_keys" and memory.timeline.empty


def test_an_upsert_table_without_data_or_keys_says_what_to_give(upsert_trips: Any) -> None:
    sc = upsert_trips.scenario(0)
    sc["workload"] = {"synthetic": {"segments_per_server": 1}}
    with pytest.raises(ScenarioError, match=r"cluster\.gc\.upsert_keys.*workload\.data"):
        simulate(sc)


def test_a_moment_outside_the_data_is_refused(upsert_trips: Any) -> None:
    with pytest.raises(ScenarioError, match=r"cluster\.gc\.heap_at.*span"):
        simulate(upsert_trips.scenario(0, gc={"collector": "none", "heap_at": "48h"}))


def test_max_heap_fails_the_slo_and_says_why(upsert_trips: Any) -> None:
    """The same run against a limit above and below its peak heap; then other live data that, with the
    upsert map from the data, no longer fits a 1 GiB heap (alone it would: the scenario loads)."""
    result = simulate(upsert_trips.scenario(0))
    peak = float(result.servers["peak_heap"].max())
    assert peak > float(result.servers["live_heap"].max())
    roomy = summarise(simulate(upsert_trips.scenario(0, slo={"max_heap": peak * 1.01})))
    tight = summarise(simulate(upsert_trips.scenario(0, slo={"max_heap": peak * 0.99})))
    assert roomy.slo.met is True
    assert tight.slo.met is False and "peak heap" in tight.slo.why
    oom = summarise(simulate(upsert_trips.scenario(0, gc={"collector": "g1", "live_heap": "1000MB"},
                                                   slo={"max_heap": 64 * 2**30})))
    assert oom.heap.oom_servers > 0 and oom.slo.met is False and "out of memory" in oom.slo.why
