"""Pinot's upsert rules, one behaviour per test (reference §5.3-§5.6).

Where the reference quotes a Pinot unit test ([PINOT-TEST]) the test here replays the same inputs and
asserts the same outcome; the other expectations are worked out by hand from the stated rule.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from workbench.errors import InputError
from workbench.pinot.upsert import PartitionUpsertMetadataManager, RecordOutcome

LLC0 = "t__0__0__20240101T0000Z"
LLC1 = "t__0__1__20240101T0100Z"
LLC2 = "t__0__2__20240101T0200Z"


def valid(m: PartitionUpsertMetadataManager, name: str) -> list[int]:
    return sorted(m.valid_doc_ids(name))


def queryable(m: PartitionUpsertMetadataManager, name: str) -> list[int]:
    return sorted(m.queryable_doc_ids(name))


# -- comparison ties ------------------------------------------------------------------------------------
def test_tie_inside_a_segment_goes_to_the_later_doc() -> None:
    m = PartitionUpsertMetadataManager.of()
    m.add_segment(LLC0, [7, 7, 7], [5, 5, 4])
    assert valid(m, LLC0) == [1]


def test_tie_across_llc_segments_goes_to_the_higher_sequence_whatever_the_load_order() -> None:
    m = PartitionUpsertMetadataManager.of()
    m.add_segment(LLC2, [7], [5])
    m.add_segment(LLC1, [7], [5])
    assert (valid(m, LLC2), valid(m, LLC1)) == ([0], [])


def test_tie_across_non_llc_segments_goes_to_the_newer_creation_time() -> None:
    m = PartitionUpsertMetadataManager.of()
    m.add_segment("a", [7], [5], creation_time_ms=200)
    m.add_segment("b", [7], [5], creation_time_ms=100)
    assert (valid(m, "a"), valid(m, "b")) == ([0], [])


def test_tie_at_equal_time_prefers_an_uploaded_name_else_keeps_the_current() -> None:
    m = PartitionUpsertMetadataManager.of()
    m.add_segment("plain_a", [7], [5])
    m.add_segment("uploaded__t__0__3__20240101T0000Z", [7], [5])
    m.add_segment("plain_b", [7], [5])
    assert [valid(m, n) for n in m.segment_names()] == [[], [0], []]


def test_consumed_record_wins_ties_against_any_segment() -> None:
    m = PartitionUpsertMetadataManager.of()
    m.add_segment(LLC1, [7], [5])
    m.start_new_consuming_segment(LLC0)  # a *lower* sequence: the consuming path uses >= regardless
    assert m.add_record(LLC0, 0, 7, 5) is RecordOutcome.REPLACED
    assert (valid(m, LLC1), valid(m, LLC0)) == ([], [0])


# -- out-of-order records ---------------------------------------------------------------------------------
def test_out_of_order_record_is_indexed_but_not_valid() -> None:
    m = PartitionUpsertMetadataManager.of()
    m.start_new_consuming_segment(LLC0)
    assert m.add_record(LLC0, 0, 1, 10) is RecordOutcome.NEW_KEY
    assert m.add_record(LLC0, 1, 1, 9) is RecordOutcome.OUT_OF_ORDER
    assert m.segment(LLC0).num_docs == 2 and valid(m, LLC0) == [0]


def test_drop_out_of_order_record_reuses_the_doc_id() -> None:
    m = PartitionUpsertMetadataManager.of(drop_out_of_order_record=True)
    m.start_new_consuming_segment(LLC0)
    counts = m.add_records(LLC0, [1, 1, 2], [10, 9, 3])
    assert counts == (2, 0, 1, 1)
    assert m.segment(LLC0).keys == [1, 2] and valid(m, LLC0) == [0, 1]
    assert m.add_record(LLC0, 2, 1, 8) is RecordOutcome.DROPPED and m.segment(LLC0).num_docs == 2


def test_out_of_order_record_column_marks_the_late_rows() -> None:
    m = PartitionUpsertMetadataManager.of(out_of_order_record_column="late")
    m.start_new_consuming_segment(LLC0)
    m.add_records(LLC0, [1, 1, 1, 2], [10, 9, 11, 1])
    assert sorted(m.out_of_order_doc_ids(LLC0)) == [1] and valid(m, LLC0) == [2, 3]


def test_drop_and_out_of_order_column_cannot_be_combined() -> None:
    with pytest.raises(InputError, match="outOfOrderRecordColumn"):
        PartitionUpsertMetadataManager.of(drop_out_of_order_record=True, out_of_order_record_column="late")


# -- deletes ------------------------------------------------------------------------------------------------
def test_delete_record_is_valid_but_not_queryable_and_blocks_older_records() -> None:
    m = PartitionUpsertMetadataManager.of(delete_record_column="deleted")
    m.start_new_consuming_segment(LLC0)
    m.add_records(LLC0, [1, 2, 1, 1], [10, 10, 12, 11], is_delete=[False, False, True, False])
    assert valid(m, LLC0) == [1, 2] and queryable(m, LLC0) == [1]


def test_queryable_follows_replacement_within_a_segment() -> None:
    m = PartitionUpsertMetadataManager.of(delete_record_column="deleted")
    m.add_segment(LLC0, [1, 1, 1], [1, 2, 3], is_delete=[False, True, False])
    assert (valid(m, LLC0), queryable(m, LLC0)) == ([2], [2])


def test_without_delete_column_queryable_is_valid_and_deletes_are_refused() -> None:
    m = PartitionUpsertMetadataManager.of()
    m.add_segment(LLC0, [1, 1], [1, 2])
    assert queryable(m, LLC0) == valid(m, LLC0) == [1]
    with pytest.raises(InputError, match="deleteRecordColumn"):
        m.add_segment(LLC1, [1], [3], is_delete=[True])


# -- commit, replace, remove --------------------------------------------------------------------------------
def test_commit_moves_every_location_to_the_immutable_copy() -> None:
    m = PartitionUpsertMetadataManager.of()
    m.add_segment(LLC0, [1, 2], [1, 1])
    m.start_new_consuming_segment(LLC1)
    m.add_records(LLC1, [1, 3, 3], [2, 1, 0])
    before = {k: (loc.segment_name, loc.doc_id) for k, loc in m.primary_key_locations().items()}
    m.seal_consuming_segment(LLC1)
    assert not m.segment(LLC1).mutable and m.inconsistent_rows == 0
    assert {k: (loc.segment_name, loc.doc_id) for k, loc in m.primary_key_locations().items()} == before
    assert (valid(m, LLC0), valid(m, LLC1)) == ([1], [0, 1])


def test_replacing_with_a_copy_missing_a_key_removes_that_key() -> None:
    m = PartitionUpsertMetadataManager.of()
    m.add_segment(LLC0, [1, 2, 3], [1, 1, 1])
    m.replace_segment(LLC0, [3, 1], [1, 1])  # reordered, and key 2 is gone
    assert m.inconsistent_rows == 1 and m.record_location(2) is None
    assert m.record_location(3) == (LLC0, 0, 1) and valid(m, LLC0) == [0, 1]


def test_remove_segment_drops_only_keys_still_located_there() -> None:
    m = PartitionUpsertMetadataManager.of()
    m.add_segment(LLC0, [1, 2], [1, 1])
    m.add_segment(LLC1, [2], [5])
    m.remove_segment(LLC0)
    assert m.num_primary_keys() == 1 and m.record_location(2) == (LLC1, 0, 5)


def test_add_record_checks_the_doc_id_and_the_segment_kind() -> None:
    m = PartitionUpsertMetadataManager.of()
    m.add_segment(LLC0, [1], [1])
    m.start_new_consuming_segment(LLC1)
    with pytest.raises(InputError, match="next doc"):
        m.add_record(LLC1, 3, 1, 1)
    with pytest.raises(InputError, match="not a consuming segment"):
        m.add_record(LLC0, 1, 1, 1)


# -- TTL and the watermark ([PINOT-TEST] ConcurrentMapPartitionUpsertMetadataManagerTest) -----------------
@pytest.mark.parametrize("kind", [int, float])
def test_remove_expired_primary_keys_pinot_vector(tmp_path: Path, kind: type) -> None:
    """testRemoveExpiredPrimaryKeys: TTL 30, threshold 90 removes pk 3 only; validDocIds stay {0,1,2,3}."""
    m = PartitionUpsertMetadataManager.of(metadata_ttl=30, enable_snapshot=True, snapshot_dir=tmp_path)
    m.start_new_consuming_segment(LLC1)
    m.add_record(LLC1, 0, 10, kind(80))
    assert m.watermark == 80
    m.add_segment(LLC0, [0, 1, 2, 3], [kind(v) for v in (100, 100, 120, 80)], max_comparison_value=80)
    assert m.watermark == 80  # segment metadata max, not the docs' values
    m.add_record(LLC1, 1, 10, kind(120))
    assert m.watermark == 120
    m.remove_expired_primary_keys()
    assert sorted(m.primary_key_locations()) == [0, 1, 2, 10]
    assert valid(m, LLC0) == [0, 1, 2, 3]


def test_ttl_with_negative_comparison_values_skips_an_old_segment(tmp_path: Path,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    """testTTLWithNegativeComparisonValues: watermark -80, TTL 30, a segment with max -200 is out of TTL."""
    m = PartitionUpsertMetadataManager.of(metadata_ttl=30, enable_snapshot=True, snapshot_dir=tmp_path)
    m.start_new_consuming_segment(LLC1)
    m.add_record(LLC1, 0, 10, -80)
    with caplog.at_level(logging.WARNING):
        m.add_segment(LLC0, [1, 2], [-200, -210])
    assert m.num_primary_keys() == 1 and not m.segment(LLC0).in_map
    assert valid(m, LLC0) == [0, 1] and "treating all docs as valid" in caplog.text


def test_remove_expired_deleted_keys_pinot_vector() -> None:
    """testRemoveExpiredDeletedKeys: threshold 130 removes pk 2 (deleted at 120) and its valid doc."""
    m = PartitionUpsertMetadataManager.of(deleted_keys_ttl=20, delete_record_column="deleted")
    m.start_new_consuming_segment(LLC0)
    m.add_records(LLC0, [2, 2, 3], [100, 120, 150], is_delete=[False, True, True])
    m.remove_expired_primary_keys()
    assert sorted(m.primary_key_locations()) == [3]
    assert (valid(m, LLC0), queryable(m, LLC0)) == ([2], [])


def test_sweep_threshold_is_strict() -> None:
    m = PartitionUpsertMetadataManager.of(deleted_keys_ttl=20, delete_record_column="deleted")
    m.start_new_consuming_segment(LLC0)
    m.add_records(LLC0, [1, 2], [130, 150], is_delete=[True, False])
    m.remove_expired_primary_keys()  # threshold 130: a value of exactly 130 is kept
    assert sorted(m.primary_key_locations()) == [1, 2]


def test_ingest_has_no_per_record_ttl_check(tmp_path: Path) -> None:
    """A record older than watermark - TTL is still consumed; a swept key comes back as a new key."""
    m = PartitionUpsertMetadataManager.of(metadata_ttl=10, enable_snapshot=True, snapshot_dir=tmp_path)
    m.start_new_consuming_segment(LLC0)
    m.add_records(LLC0, [1, 2], [0, 100])
    m.seal_consuming_segment(LLC0)
    m.start_new_consuming_segment(LLC1)  # sweep at watermark 100 removes key 1
    assert m.add_record(LLC1, 0, 1, 5) is RecordOutcome.NEW_KEY
    assert valid(m, LLC0) == [0, 1] and valid(m, LLC1) == [0]


def test_remove_segment_out_of_ttl_leaves_its_keys_for_the_sweep(tmp_path: Path) -> None:
    m = PartitionUpsertMetadataManager.of(metadata_ttl=10, enable_snapshot=True, snapshot_dir=tmp_path)
    m.add_segment(LLC0, [1], [0])
    m.start_new_consuming_segment(LLC1)
    m.add_record(LLC1, 0, 2, 100)
    m.remove_segment(LLC0)  # out of TTL by now: its key stays until the sweep
    assert m.num_primary_keys() == 2
    m.remove_expired_primary_keys()
    assert m.num_primary_keys() == 1


def test_ttl_settings_follow_pinots_preconditions(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="snapshot enabled"):
        PartitionUpsertMetadataManager.of(metadata_ttl=10)
    with pytest.raises(InputError, match="deleteRecordColumn"):
        PartitionUpsertMetadataManager.of(deleted_keys_ttl=10)
    with pytest.raises(InputError, match="snapshot_dir"):
        PartitionUpsertMetadataManager.of(metadata_ttl=10, enable_snapshot=True)
