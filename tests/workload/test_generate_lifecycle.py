"""Key lifecycles (the trip example of the upsert TTL design): updated for a while, then never again."""

from __future__ import annotations

import json

import numpy as np
import pytest
from workload_fixtures import records, spec_of, table

from workbench.pinot.partition import get_partition_function
from workbench.workload.pure import Workload, generate_frames


def test_event_count_is_close_to_the_target(trip_workload: Workload) -> None:
    assert len(trip_workload.events) == pytest.approx(30_000, rel=0.03)
    assert trip_workload.manifest["row_counts"]["events"] == len(trip_workload.events)
    assert trip_workload.manifest["mode"] == "lifecycle"


def test_each_key_is_created_updated_then_silent(trip_workload: Workload) -> None:
    ev = trip_workload.events
    end_ms = trip_workload.manifest["time"]["end_ms"]
    by_key = ev.sort_values(["key_id", "update_seq"]).groupby("key_id")
    seqs = by_key["update_seq"].apply(list)
    assert all(s == list(range(len(s))) for s in seqs)  # 0, 1, 2, ... with no gap
    times = by_key["event_time_ms"].apply(lambda t: bool(np.all(np.diff(t.to_numpy()) >= 0)))
    assert times.all()  # update numbers follow event time
    span_s = (by_key["event_time_ms"].max() - by_key["event_time_ms"].min()) / 1000
    assert span_s.max() <= 7200  # max_lifetime_s
    # keys whose lifecycle was not cut by the end of the span have exactly 4 events
    complete = by_key["event_time_ms"].min() < end_ms - 2 * 3600 * 1000
    assert (by_key.size()[complete] == 4).all()
    # lifetimes are exponential with mean 30 min (first to last event), capped at 2 h
    assert span_s[complete].mean() == pytest.approx(1800 * (1 - np.exp(-4)), rel=0.08)


def test_deletes_end_a_share_of_lifecycles(trip_workload: Workload) -> None:
    ev = trip_workload.events
    deletes = ev[ev["is_delete"]]
    last_seq = ev.groupby("key_id")["update_seq"].max()
    assert (deletes["update_seq"].to_numpy() == last_seq[deletes["key_id"]].to_numpy()).all()
    complete = ev.groupby("key_id").size() == 4
    share = ev[ev["key_id"].isin(complete[complete].index)].groupby("key_id")["is_delete"].any().mean()
    assert share == pytest.approx(0.3, abs=0.02)


def test_keys_are_born_in_id_order_and_route_by_the_tables_function(trip_workload: Workload) -> None:
    ev = trip_workload.events
    births = ev[ev["update_seq"] == 0].sort_values("key_id")["event_time_ms"]
    assert births.is_monotonic_increasing
    murmur = get_partition_function("Murmur", 4)
    sample = ev.sample(500, random_state=1)
    assert sample["partition"].tolist() == [murmur.get_partition(k) for k in sample["trip_id"]]
    assert (ev["trip_id"] == ev["key"]).all() and ev["key"].str.startswith("trip_").all()


def test_late_updates_arrive_out_of_order_for_their_key(trip_workload: Workload) -> None:
    ev = trip_workload.events.sort_values("event_id")  # arrival order
    arrived = ev.groupby("key_id")["update_seq"].apply(lambda s: bool(np.all(np.diff(s.to_numpy()) > 0)))
    assert 0 < (~arrived).mean() < 0.2  # some keys see an older version after a newer one, as upserts do


def test_segments_are_sealed_by_rows_or_the_hour_and_single_partition(trip_workload: Workload) -> None:
    seg = trip_workload.segments
    done = seg[seg["status"] == "DONE"]
    by_time = (done["seal_time_ms"] - done["creation_time_ms"]) == 3_600_000
    assert ((done["total_docs"] == 1_200) | by_time).all()
    assert (done["total_docs"] <= 1_200).all() and by_time.any() and (~by_time).any()
    for s in records(done):
        assert json.loads(s["partition_metadata"])["columnPartitionMap"]["trip_id"]["partitions"] == [s["partition"]]
    assert all(name.startswith("trips__") for name in seg["segment_name"])


def test_lifecycle_on_an_offline_table() -> None:
    w = generate_frames(spec_of(events=5_000, span_s="2d", lifecycle={}, offline={"batch_s": "12h"}),
                        table_config=table(kind="OFFLINE", column="key", function="Murmur"), seed=3)
    assert set(w.segments["status"]) == {"DONE"} and w.segments["total_docs"].sum() == len(w.events)
    assert w.events.groupby("segment_name")["doc_id"].apply(lambda d: sorted(d) == list(range(len(d)))).all()
