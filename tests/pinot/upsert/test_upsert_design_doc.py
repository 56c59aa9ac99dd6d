"""Golden tests: the design doc's three TTL scenarios and its T0-T3 tables.

The doc (shared/seeds/upsert-pk-ttl-design.txt) gives, per time step, the segments in which each
primary key has a valid record. Its timestamps are not given, so each test picks times that put the
keys in the scenario the doc describes; the expected locations are the doc's table cells.

Segments are consuming segments committed in turn, so the TTL sweep runs where Pinot runs it: at the
start of each new consuming segment.
"""

from __future__ import annotations

import pytest

from workbench.pinot.upsert import PartitionUpsertMetadataManager

TTL = 15.0
SEGMENTS = [("s0", ["pk1", "pk2", "pk3"]), ("s1", ["pk2", "pk4"]), ("s2", ["pk5"]), ("s3", ["pk4"])]

# The doc's table, row by row: key -> segments holding a valid record of it.
T0 = {"pk1": {"s0"}, "pk2": {"s0"}, "pk3": {"s0"}}
T1 = {"pk1": {"s0"}, "pk2": {"s1"}, "pk3": {"s0"}, "pk4": {"s1"}}
T2 = {**T1, "pk5": {"s2"}}
T3_TWO_RECORDS = {**T2, "pk4": {"s1", "s3"}}
T3_ONE_RECORD = {**T2, "pk4": {"s3"}}  # scenario 3 without the doc's extra check


def valid_locations(manager: PartitionUpsertMetadataManager) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for name in manager.segment_names():
        seg = manager.segment(name)
        for doc in manager.queryable_doc_ids(name):
            out.setdefault(str(seg.keys[doc]), set()).add(name)
    return out


def run(times: list[float], *, expired_key_is_new: bool = False) -> list[dict[str, set[str]]]:
    """Consume each segment at its time step, commit, and record the table after each commit."""
    manager = PartitionUpsertMetadataManager.of(metadata_ttl=TTL, enable_snapshot=True, snapshot_dir=_tmp(),
                                             primary_key_types=["STRING"], expired_key_is_new=expired_key_is_new)
    rows = []
    for (name, keys), t in zip(SEGMENTS, times, strict=True):
        manager.start_new_consuming_segment(name)
        manager.add_records(name, keys, [t] * len(keys))
        manager.seal_consuming_segment(name)
        rows.append(valid_locations(manager))
    return rows


def _tmp() -> str:
    import tempfile

    return tempfile.mkdtemp(prefix="upsert-doc-")


# Scenario 1 and 2 times: pk2's update at T1 is within TTL of T0 (scenario 2); by the time S3 starts
# the watermark is 30, so pk4@10 (and pk1-pk3) have been swept before pk4 comes back (scenario 1).
SCENARIO_1_2_TIMES = [0.0, 10.0, 30.0, 40.0]
# Scenario 3 times: at the start of S3 the watermark is 20, so pk4@10 survives the sweep; pk4@40 then
# raises the watermark to 40 and finds pk4 in the map although 10 < 40 - 15.
SCENARIO_3_TIMES = [0.0, 10.0, 20.0, 40.0]


@pytest.mark.parametrize("expired_key_is_new", [False, True])
def test_scenarios_1_and_2_give_the_docs_table(expired_key_is_new: bool) -> None:
    """Swept key comes back as a new key: two valid records for pk4 (the doc's first table)."""
    assert run(SCENARIO_1_2_TIMES, expired_key_is_new=expired_key_is_new) == [T0, T1, T2, T3_TWO_RECORDS]


def test_scenario_3_pinot_shipped_behaviour_invalidates_the_old_record() -> None:
    """Pinot's upsert has no per-record TTL check: the unswept key competes, one record for pk4."""
    assert run(SCENARIO_3_TIMES) == [T0, T1, T2, T3_ONE_RECORD]


def test_scenario_3_design_doc_rule_keeps_both_records() -> None:
    """The doc's extra check treats the out-of-TTL key as new, making scenario 3 look like scenario 1."""
    assert run(SCENARIO_3_TIMES, expired_key_is_new=True) == [T0, T1, T2, T3_TWO_RECORDS]


def test_scenario_1_removal_leaves_valid_doc_ids_alone() -> None:
    """Removing an expired key from the map does not touch validDocIds (the stable segments keep it)."""
    manager = PartitionUpsertMetadataManager.of(metadata_ttl=TTL, enable_snapshot=True, snapshot_dir=_tmp(),
                                             primary_key_types=["STRING"])
    for (name, keys), t in zip(SEGMENTS[:3], SCENARIO_1_2_TIMES, strict=False):
        manager.start_new_consuming_segment(name)
        manager.add_records(name, keys, [t] * len(keys))
        manager.seal_consuming_segment(name)
    manager.start_new_consuming_segment("s3")  # sweep at watermark 30, threshold 15
    assert manager.num_primary_keys() == 1 and manager.record_location("pk5") is not None
    assert [sorted(manager.valid_doc_ids(n)) for n in ("s0", "s1", "s2")] == [[0, 2], [0, 1], [0]]
