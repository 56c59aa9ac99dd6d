"""Broker segment pruners: the reference's SegmentPrunerTest scenarios, the factory rules, and
Hypothesis properties (a pruner never drops a segment holding a matching row; partition pruning
is exact when each segment holds one partition).

Expected values in the scenario tests are the ones the reference records from Pinot's own tests
(``shared/reference/pinot-behaviour.md`` section 2), not outputs of this code.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.errors import InputError
from workbench.pinot.pruning import (
    DEFAULT_INTERVAL,
    MAX_TIME,
    DateTimeFormat,
    EmptySegmentPruner,
    IntervalTree,
    MultiPartitionColumnsSegmentPruner,
    PartitionSegmentPruner,
    SegmentPruner,
    SinglePartitionColumnSegmentPruner,
    TimeSegmentPruner,
    build_segment_pruners,
    init_pruners,
    prune_segments,
    time_column_format,
)
from workbench.pinot.pruning.interval import _bfs_layout, complement, intersect, union
from workbench.pinot.segment import ColumnPartitionMetadata, SegmentMetadata
from workbench.pinot.sql import parse_query
from workbench.pinot.sql.query import (
    And,
    FilterNode,
    FilterOperator,
    Literal,
    Not,
    Or,
    Predicate,
    Query,
    SelectItem,
    Star,
)
from workbench.pinot.table_config import TableConfig, freeze_json

DAY_MS = 86_400_000


def q(where: str | None = None) -> Query:
    """``SELECT * FROM testTable [WHERE where]``."""
    return parse_query("SELECT * FROM testTable" + (f" WHERE {where}" if where else ""))


def zk_time(name: str, start: int, end: int, unit: str = "DAYS") -> SegmentMetadata:
    return SegmentMetadata.from_zk_metadata(
        name, {"segment.start.time": str(start), "segment.end.time": str(end), "segment.time.unit": unit}
    )


def zk_partition(name: str, columns: Mapping[str, Mapping[str, object]]) -> SegmentMetadata:
    return SegmentMetadata.from_zk_metadata(
        name, {"segment.partition.metadata": json.dumps({"columnPartitionMap": columns})}
    )


def names(*ss: str) -> set[str]:
    return set(ss)


# -- time pruner: SegmentPrunerTest.testTimeSegmentPruner ---------------------------------------

TIME_QUERIES = [
    "timeColumn = 40",
    "timeColumn BETWEEN 20 AND 30",
    "30 < timeColumn AND timeColumn <= 50",
    "timeColumn < 15 OR timeColumn > 45",
    "timeColumn < 15 OR (60 < timeColumn AND timeColumn < 70)",
    "timeColumn NOT BETWEEN 20 AND 30",
    "NOT timeColumn > 30",
    "timeColumn < 0 AND timeColumn > 0",
]
ALL3 = names("s0", "s1", "s2")
TIME_EXPECTED = [
    names("s0"),
    names("s0", "s1"),
    names("s0", "s2"),
    names("s0", "s2"),
    names("s0", "s2"),
    names("s0", "s2"),
    names("s0", "s1"),
    set(),
]
TIME_EXPECTED_AFTER_REFRESH = [names("s0"), ALL3, names("s0"), names("s0"), names("s0"), names("s0"), ALL3, set()]


@pytest.fixture
def time_pruner() -> TimeSegmentPruner:
    pruner = TimeSegmentPruner("timeColumn", "EPOCH|DAYS")
    store = {"s0": zk_time("s0", 10, 60), "s1": zk_time("s1", 20, 30), "s2": zk_time("s2", 50, 65)}
    pruner.init(store)
    return pruner


@pytest.mark.parametrize(("where", "expected"), list(zip(TIME_QUERIES, TIME_EXPECTED, strict=True)))
def test_time_pruner_reference_scenario(time_pruner: TimeSegmentPruner, where: str, expected: set[str]) -> None:
    assert set(time_pruner.prune(q(where), ("s0", "s1", "s2"))) == expected


def test_time_pruner_keeps_everything_without_a_filter(time_pruner: TimeSegmentPruner) -> None:
    assert time_pruner.prune(q(), ("s0", "s1", "s2")) == ("s0", "s1", "s2")


def test_time_pruner_sees_a_changed_range_only_after_refresh(time_pruner: TimeSegmentPruner) -> None:
    changed = {"s0": zk_time("s0", 10, 60), "s1": zk_time("s1", 20, 30), "s2": zk_time("s2", 20, 30)}
    time_pruner.on_assignment_change(changed)  # same online set: cached ranges stay
    assert [set(time_pruner.prune(q(w), ("s0", "s1", "s2"))) for w in TIME_QUERIES] == TIME_EXPECTED
    time_pruner.refresh_segment("s2", changed["s2"])
    assert [set(time_pruner.prune(q(w), ("s0", "s1", "s2"))) for w in TIME_QUERIES] == TIME_EXPECTED_AFTER_REFRESH


def test_segments_without_time_range_are_kept_except_by_the_impossible_query(time_pruner: TimeSegmentPruner) -> None:
    store = {
        "s0": zk_time("s0", 10, 60),
        "s1": zk_time("s1", 20, 30),
        "s2": zk_time("s2", 50, 65),
        "consuming": SegmentMetadata.from_zk_metadata("consuming", {"segment.total.docs": "-1"}),
        "inverted": zk_time("inverted", 30, 20),
    }
    time_pruner.on_assignment_change(store, [*store, "no_record"])
    extra = ("consuming", "inverted", "no_record")
    for where in TIME_QUERIES[:-1]:
        assert set(extra) <= set(time_pruner.prune(q(where), ("s0", "s1", "s2", *extra)))
    assert time_pruner.prune(q(TIME_QUERIES[-1]), ("s0", "s1", "s2", *extra)) == ()
    assert time_pruner.interval_of("no_record") == DEFAULT_INTERVAL == (0, MAX_TIME)


def test_time_pruner_drops_input_segments_it_never_registered(time_pruner: TimeSegmentPruner) -> None:
    """Reference 2.2: a segment missing from the pruner's map is dropped when it prunes."""
    assert time_pruner.prune(q("timeColumn = 40"), ("s0", "unknown")) == ("s0",)
    assert time_pruner.prune(q("other = 1"), ("s0", "unknown")) == ("s0", "unknown")


def test_time_pruner_forgets_segments_that_go_offline(time_pruner: TimeSegmentPruner) -> None:
    time_pruner.on_assignment_change({"s1": zk_time("s1", 20, 30)})
    assert time_pruner.segment_names == ("s1",)
    assert time_pruner.prune(q("timeColumn = 25"), ("s0", "s1")) == ("s1",)


def test_time_predicates_it_does_not_understand_keep_everything(time_pruner: TimeSegmentPruner) -> None:
    for where in (
        "timeColumn <> 40",
        "timeColumn NOT IN (40)",
        "other = 40",
        "abs(timeColumn) = 40",
        "timeColumn = 4.0",
        "timeColumn = 'abc'",
        "timeColumn = 40 OR other = 1",
    ):
        assert time_pruner.prune(q(where), ("s0", "s1", "s2")) == ("s0", "s1", "s2"), where


def test_time_and_ignores_children_it_cannot_use(time_pruner: TimeSegmentPruner) -> None:
    assert time_pruner.prune(q("timeColumn = 40 AND other = 1"), ("s0", "s1", "s2")) == ("s0",)


def test_not_over_an_and_with_a_non_time_child_keeps_matching_segments(time_pruner: TimeSegmentPruner) -> None:
    """Pinot's rule complements [45d+1ms, MAX] to [0, 45d] and drops s2 although rows with
    timeColumn > 45 and other <> 1 match; the workbench keeps it (the one deliberate departure)."""
    assert time_pruner.prune(q("NOT (timeColumn > 45 AND other = 1)"), ("s0", "s1", "s2")) == ("s0", "s1", "s2")
    # Where Pinot's list is exact the answers agree: NOT NOT x prunes like x.
    assert time_pruner.prune(q("NOT NOT (timeColumn > 45 AND other = 1)"), ("s0", "s1", "s2")) == ("s0", "s2")


def test_time_pruner_output_follows_input_order(time_pruner: TimeSegmentPruner) -> None:
    segments = ("s2", "s1", "s0")
    assert time_pruner.prune(q("timeColumn > 25"), segments) == ("s2", "s1", "s0")
    assert time_pruner.prune(q("timeColumn > 25"), segments) == ("s2", "s1", "s0")  # cached view


# -- time pruner: SegmentPrunerTest.testTimeSegmentPrunerSimpleDateFormat ------------------------


def _ms(day: str) -> int:
    return int(datetime.strptime(day, "%Y%m%d").replace(tzinfo=UTC).timestamp()) * 1000


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ("t = 20200131", names("s0")),
        ("t BETWEEN 20200101 AND 20200331", names("s0", "s1")),
        ("20200430 < t AND t < 20200630", names("s1")),
        ("t <= 20200101 OR t IN (20200201, 20200401)", ALL3),
        ("t IN (20200101, 20200102) AND t >= 20200530", set()),
    ],
)
def test_time_pruner_simple_date_format_scenario(where: str, expected: set[str]) -> None:
    pruner = TimeSegmentPruner("t", "SIMPLE_DATE_FORMAT|yyyyMMdd")
    spans = {"s0": ("20200101", "20200228"), "s1": ("20200201", "20200530"), "s2": ("20200401", "20200430")}
    pruner.init({n: SegmentMetadata(n, _ms(a), _ms(b)) for n, (a, b) in spans.items()})
    assert set(pruner.prune(q(where), ("s0", "s1", "s2"))) == expected


def test_filter_intervals_rules() -> None:
    pruner = TimeSegmentPruner("ts", "EPOCH|MILLISECONDS")

    def intervals(where: str) -> list[tuple[int, int]] | None:
        node = q(where).filter
        assert node is not None
        return pruner.filter_intervals(node)

    assert intervals("ts > 5") == [(6, MAX_TIME)]
    assert intervals("ts >= 5") == [(5, MAX_TIME)]
    assert intervals("ts < 5") == [(0, 4)]
    assert intervals("ts <= 5") == [(0, 5)]
    assert intervals("ts BETWEEN 9 AND 3") == []
    assert intervals("ts = 1 OR ts BETWEEN 2 AND 3") == [(1, 1), (2, 3)]  # adjacent intervals stay apart
    assert intervals("ts BETWEEN 1 AND 5 OR ts BETWEEN 3 AND 9") == [(1, 9)]
    assert intervals("NOT ts BETWEEN 10 AND 20") == [(0, 9), (21, MAX_TIME)]
    assert intervals("ts IN (7, 3, 7)") == [(3, 3), (7, 7)]
    assert intervals("ts <> 3") is None
    assert intervals("NOT ts <> 3") is None
    assert intervals("ts = 3 OR x = 1") is None
    assert intervals("x = 1 AND y = 2") is None


# -- date-time formats -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "value", "millis"),
    [
        ("EPOCH|MILLISECONDS", "1234", 1234),
        ("EPOCH|SECONDS|5", "2", 10_000),
        ("1:HOURS:EPOCH", "1", 3_600_000),
        ("EPOCH|MICROSECONDS", "1999", 1),
        ("SIMPLE_DATE_FORMAT|yyyy-MM-dd'T'HH:mm:ss.SSS", "1970-01-02T00:00:01.250", DAY_MS + 1250),
        ("1:DAYS:SIMPLE_DATE_FORMAT:yyyyMMdd tz(Asia/Kolkata)", "19700102", DAY_MS - 19_800_000),
        ("SIMPLE_DATE_FORMAT|dd MMM yy hh a", "02 Jan 70 01 PM", DAY_MS + 13 * 3_600_000),
        ("SIMPLE_DATE_FORMAT|yyyy-M-d", "1970-1-2", DAY_MS),
        ("TIMESTAMP", "1970-01-01 00:00:01.5", 1500),
        ("1:MILLISECONDS:TIMESTAMP", "42", 42),
    ],
)
def test_date_time_formats(spec: str, value: str, millis: int) -> None:
    assert DateTimeFormat.parse(spec).to_millis(value) == millis


@pytest.mark.parametrize(
    "spec", ["EPOCH|FORTNIGHTS", "SIMPLE_DATE_FORMAT|yyyyQQ", "1:DAYS", "SIMPLE_DATE_FORMAT|y|Mars/Base"]
)
def test_bad_date_time_formats_are_input_errors(spec: str) -> None:
    with pytest.raises(InputError):
        DateTimeFormat.parse(spec)


def test_values_that_do_not_fit_the_format_raise_value_error() -> None:
    with pytest.raises(ValueError):
        DateTimeFormat.parse("EPOCH|DAYS").to_millis("4.0")
    with pytest.raises(ValueError):
        DateTimeFormat.parse("SIMPLE_DATE_FORMAT|yyyyMMdd").to_millis("2020-01-01")


# -- partition pruners: SegmentPrunerTest.testPartitionAwareSegmentPruner -----------------------

Q2, Q3, Q4 = q("memberId = 0"), q("memberId IN (1, 2)"), q("memberId = 0 AND memberName = 'xyz'")


def _member(function: str, n: int, partitions: list[int], config: Mapping[str, str] | None = None) -> dict[str, object]:
    entry: dict[str, object] = {"functionName": function, "numPartitions": n, "partitions": partitions}
    if config is not None:
        entry["functionConfig"] = dict(config)
    return entry


@pytest.fixture
def partition_store() -> dict[str, SegmentMetadata]:
    return {
        "s0": zk_partition("s0", {"memberId": _member("Modulo", 5, [0])}),
        "s1": zk_partition("s1", {"memberId": _member("Murmur", 4, [0])}),
    }


def test_single_column_partition_pruner_reference_scenario(partition_store: dict[str, SegmentMetadata]) -> None:
    pruner = SinglePartitionColumnSegmentPruner("memberId")
    pruner.init(partition_store)
    both = ("s0", "s1")
    assert set(pruner.prune(q(), both)) == names("s0", "s1")
    assert set(pruner.prune(Q2, both)) == names("s0", "s1")
    assert set(pruner.prune(Q3, both)) == names("s1")

    pruner.refresh_segment("s0", zk_partition("s0", {"memberId": _member("Modulo", 4, [1])}))
    assert set(pruner.prune(Q2, both)) == names("s1")
    assert set(pruner.prune(Q3, both)) == names("s0", "s1")
    assert set(pruner.prune(Q4, both)) == names("s1")


def test_multi_column_partition_pruner_reference_scenario() -> None:
    bounded = {"columnValues": "xyz|abc", "columnValuesDelimiter": "|"}
    store = {
        "s0": zk_partition("s0", {"memberId": _member("Modulo", 4, [1])}),
        "s1": zk_partition("s1", {"memberId": _member("Murmur", 4, [0])}),
        "s2": zk_partition(
            "s2", {"memberId": _member("Modulo", 4, [0]), "memberName": _member("BoundedColumnValue", 3, [1], bounded)}
        ),
    }
    pruner = MultiPartitionColumnsSegmentPruner(["memberId", "memberName"])
    pruner.init(store)
    all3 = ("s0", "s1", "s2")
    assert set(pruner.prune(Q2, all3)) == names("s1", "s2")
    assert set(pruner.prune(Q3, all3)) == names("s0", "s1")
    assert set(pruner.prune(Q4, all3)) == names("s1", "s2")


def test_partition_metadata_change_needs_a_refresh(partition_store: dict[str, SegmentMetadata]) -> None:
    pruner = SinglePartitionColumnSegmentPruner("memberId")
    pruner.init(partition_store)
    changed = dict(partition_store, s0=zk_partition("s0", {"memberId": _member("Modulo", 4, [1])}))
    pruner.on_assignment_change(changed)
    assert set(pruner.prune(Q3, ("s0", "s1"))) == names("s1")  # still the old s0 info


def test_missing_record_is_kept_and_retried_on_the_next_assignment_change() -> None:
    pruner = SinglePartitionColumnSegmentPruner("memberId")
    pruner.init({}, ["s0"])
    assert pruner.prune(Q2, ("s0",)) == ("s0",)
    pruner.on_assignment_change({"s0": zk_partition("s0", {"memberId": _member("Modulo", 4, [1])})})
    assert pruner.prune(Q2, ("s0",)) == ()


@pytest.mark.parametrize(
    "record",
    [
        SegmentMetadata("s9"),
        SegmentMetadata.from_zk_metadata("s9", {"segment.partition.metadata": "{not json"}),
        zk_partition("s9", {"otherColumn": _member("Modulo", 4, [1])}),
    ],
    ids=["no partition metadata", "unparsable JSON", "no entry for the column"],
)
def test_invalid_partition_info_is_never_pruned(record: SegmentMetadata) -> None:
    for pruner in (
        SinglePartitionColumnSegmentPruner("memberId"),
        MultiPartitionColumnsSegmentPruner(["memberId", "memberName"]),
    ):
        pruner.init({"s9": record})
        for query in (Q2, Q3, Q4, q("memberName = 'abc'")):
            assert pruner.prune(query, ("s9",)) == ("s9",)


def test_unregistered_input_segments_are_kept_by_the_partition_pruner(
    partition_store: dict[str, SegmentMetadata],
) -> None:
    pruner = SinglePartitionColumnSegmentPruner("memberId")
    pruner.init(partition_store)
    assert pruner.prune(Q3, ("new", "s0", "s1")) == ("new", "s1")


@pytest.mark.parametrize(
    "where",
    [
        "NOT memberId = 1",
        "memberId <> 1",
        "memberId NOT IN (1)",
        "memberId > 1",
        "memberId BETWEEN 1 AND 2",
        "memberId = 1 OR other = 1",
        "abs(memberId) = 1",
        "memberId = abs(1)",
        "other = 1",
    ],
)
def test_partition_pruner_never_prunes_other_shapes(partition_store: dict[str, SegmentMetadata], where: str) -> None:
    pruner = SinglePartitionColumnSegmentPruner("memberId")
    pruner.init(partition_store)
    assert pruner.prune(q(where), ("s0", "s1")) == ("s0", "s1")


def test_partition_pruner_and_or_combine_children(partition_store: dict[str, SegmentMetadata]) -> None:
    pruner = SinglePartitionColumnSegmentPruner("memberId")
    pruner.init(
        {
            "a": SegmentMetadata("a", partitions={"memberId": ColumnPartitionMetadata("Modulo", 4, {1})}),
            "b": SegmentMetadata("b", partitions={"memberId": ColumnPartitionMetadata("Modulo", 4, {2})}),
        }
    )
    assert pruner.prune(q("memberId = 1 OR memberId = 2"), ("a", "b")) == ("a", "b")
    assert pruner.prune(q("memberId = 1 AND memberId = 2"), ("a", "b")) == ()
    assert pruner.prune(q("memberId = 5 AND x > 3"), ("a", "b")) == ("a",)


def test_unusable_functions_and_literals_keep_segments(caplog: pytest.LogCaptureFixture) -> None:
    """Workbench choices where the reference is silent: a function that cannot be built marks the
    segment invalid (never pruned); a literal the function cannot read keeps that function's segments."""
    pruner = SinglePartitionColumnSegmentPruner("memberId")
    with caplog.at_level(logging.WARNING):
        pruner.init(
            {
                "bad": zk_partition("bad", {"memberId": _member("NoSuchHash", 4, [1])}),
                "mod": zk_partition("mod", {"memberId": _member("Modulo", 4, [1])}),
            }
        )
    assert "NoSuchHash" in caplog.text.replace("nosuchhash", "NoSuchHash")
    assert pruner.prune(q("memberId = 2"), ("bad", "mod")) == ("bad",)
    assert pruner.prune(q("memberId = 'abc'"), ("bad", "mod")) == ("bad", "mod")


def test_partition_pruner_needs_a_column() -> None:
    with pytest.raises(ValueError, match="at least one"):
        PartitionSegmentPruner([])


# -- empty pruner: SegmentPrunerTest.testEmptySegmentPruner -------------------------------------


def test_empty_pruner_reference_scenario() -> None:
    store = {
        n: SegmentMetadata.from_zk_metadata(n, {"segment.total.docs": d})
        for n, d in (("s0", "10"), ("s1", "0"), ("s2", "-1"))
    }
    pruner = EmptySegmentPruner()
    pruner.init(store)
    assert set(pruner.prune(q(), ("s0", "s1", "s2"))) == names("s0", "s2")


def test_empty_pruner_memoises_per_input_tuple_and_follows_refreshes() -> None:
    pruner = EmptySegmentPruner()
    pruner.init({"a": SegmentMetadata("a", total_docs=0), "b": SegmentMetadata("b", total_docs=3)}, ["a", "b", "c"])
    segments = ("a", "b", "c")
    first = pruner.prune(q(), segments)
    assert first == ("b", "c") and pruner.prune(q("x = 1"), segments) is first
    pruner.refresh_segment("a", SegmentMetadata("a", total_docs=4))
    assert pruner.prune(q(), segments) == segments
    assert pruner.empty_segments == frozenset()


# -- segment metadata --------------------------------------------------------------------------


def test_zk_metadata_defaults_and_legacy_ranges() -> None:
    seg = SegmentMetadata.from_zk_metadata(
        "s",
        {
            "segment.start.time": "2",
            "segment.end.time": "nonsense",
            "segment.partition.metadata": json.dumps(
                {
                    "columnPartitionMap": {
                        "c": {"functionName": "Murmur", "numPartitions": 8, "partitionRanges": "[0 1],[5 5]"}
                    }
                }
            ),
        },
    )
    assert seg.start_time_ms == 2 * DAY_MS  # unit defaults to DAYS
    assert seg.end_time_ms is None and seg.time_range is None
    assert seg.total_docs == -1
    assert seg.partitions["c"].partitions == frozenset({0, 1, 5})


def test_zk_metadata_round_trip() -> None:
    seg = SegmentMetadata("s", 5, 9, 100, {"c": ColumnPartitionMetadata("Murmur3", 4, {3}, {"seed": "7"})})
    assert SegmentMetadata.from_zk_metadata("s", seg.to_zk_metadata()) == seg


def test_unknown_time_unit_is_an_input_error() -> None:
    with pytest.raises(InputError, match="FORTNIGHTS"):
        zk_time("s", 1, 2, unit="FORTNIGHTS")


# -- factory -----------------------------------------------------------------------------------

SCHEMA = {
    "dateTimeFieldSpecs": [
        {"name": "ts", "dataType": "LONG", "format": "1:MILLISECONDS:EPOCH", "granularity": "1:MILLISECONDS"}
    ]
}


def _config(**extra: object) -> TableConfig:
    raw: dict[str, object] = {"tableName": "t", "tableType": "OFFLINE", "segmentsConfig": {"timeColumnName": "ts"}}
    raw.update(extra)
    return TableConfig.from_json(raw)


def _partition_map(*columns: str) -> dict[str, object]:
    cmap = {c: {"functionName": "Murmur", "numPartitions": 4} for c in columns}
    return {"segmentPartitionConfig": {"columnPartitionMap": cmap}}


def kinds(pruners: Sequence[SegmentPruner]) -> list[str]:
    return [type(p).__name__ for p in pruners]


def test_factory_order_is_fixed_and_names_are_case_insensitive() -> None:
    # Pinot's factory ignores unknown names; the workbench's validation rejects them up front (issue 18),
    # so the factory is handed this config unvalidated to show its own rule
    tc = TableConfig(raw=freeze_json({
        "tableName": "t", "tableType": "OFFLINE", "segmentsConfig": {"timeColumnName": "ts"},
        "routing": {"segmentPrunerTypes": ["Partition", "bogus", "TIME", "empty"]},
        "tableIndexConfig": _partition_map("memberId"),
    }))
    assert kinds(build_segment_pruners(tc, SCHEMA)) == [
        "EmptySegmentPruner",
        "TimeSegmentPruner",
        "SinglePartitionColumnSegmentPruner",
    ]


def test_factory_picks_the_multi_column_pruner_for_several_columns() -> None:
    tc = _config(routing={"segmentPrunerTypes": ["partition"]}, tableIndexConfig=_partition_map("a", "b"))
    (pruner,) = build_segment_pruners(tc)
    assert isinstance(pruner, MultiPartitionColumnsSegmentPruner) and pruner.columns == ("a", "b")


def test_factory_skips_pruners_missing_their_inputs(caplog: pytest.LogCaptureFixture) -> None:
    tc = _config(routing={"segmentPrunerTypes": ["partition", "time"]})
    with caplog.at_level(logging.WARNING):
        assert build_segment_pruners(tc, schema=None) == []
    assert "time pruner not added" in caplog.text and "partition pruner not added" in caplog.text


def test_factory_adds_the_empty_pruner_for_kinesis_streams() -> None:
    streams = {"streamIngestionConfig": {"streamConfigMaps": [{"streamType": "kinesis"}]}}
    tc = TableConfig.from_json({"tableName": "t", "tableType": "REALTIME", "ingestionConfig": streams})
    assert kinds(build_segment_pruners(tc)) == ["EmptySegmentPruner"]


def test_factory_honours_the_legacy_partition_aware_builder() -> None:
    legacy = _config(routing={"routingTableBuilderName": "PartitionAwareOffline"}, tableIndexConfig=_partition_map("m"))
    assert kinds(build_segment_pruners(legacy)) == ["SinglePartitionColumnSegmentPruner"]
    explicit_empty = _config(
        routing={"routingTableBuilderName": "PartitionAwareOffline", "segmentPrunerTypes": []},
        tableIndexConfig=_partition_map("m"),
    )
    assert build_segment_pruners(explicit_empty) == []


def test_time_column_format_reads_both_schema_styles() -> None:
    assert time_column_format(SCHEMA, "ts") == "1:MILLISECONDS:EPOCH"
    assert time_column_format(SCHEMA, "other") is None
    legacy = {
        "timeFieldSpec": {
            "incomingGranularitySpec": {"name": "d", "timeType": "DAYS"},
            "outgoingGranularitySpec": {"name": "d", "timeType": "HOURS", "timeUnitSize": 2},
        }
    }
    assert time_column_format(legacy, "d") == "2:HOURS:EPOCH"


def test_prune_segments_chains_pruners_in_order() -> None:
    store = {
        "a": SegmentMetadata("a", 0, 10, total_docs=0),
        "b": SegmentMetadata("b", 0, 10, total_docs=5),
        "c": SegmentMetadata("c", 20, 30, total_docs=5),
    }
    pruners: list[SegmentPruner] = [EmptySegmentPruner(), TimeSegmentPruner("ts", "EPOCH|MILLISECONDS")]
    init_pruners(pruners, store)
    assert prune_segments(pruners, q("ts < 15"), ("a", "b", "c")) == ("b",)


# -- interval algebra and tree -----------------------------------------------------------------


def test_interval_list_algebra() -> None:
    assert intersect([(0, 10), (20, 30)], [(5, 25)]) == [(5, 10), (20, 25)]
    assert intersect([(0, 10)], []) == []
    assert union([[(0, 5), (6, 9)], [(3, 4)]]) == [(0, 5), (6, 9)]
    assert complement([]) == [(0, MAX_TIME)]
    assert complement([(0, MAX_TIME)]) == []
    assert complement([(7, 7), (3, 3)]) == [(0, 2), (4, 6), (8, MAX_TIME)]


def test_interval_tree_is_a_breadth_first_median_split_array() -> None:
    """Reference 2.2: nodes sorted by (min, max), stored breadth-first by taking the median of each range."""
    rank, left, right, _ = _bfs_layout(7)
    assert rank.tolist() == [3, 1, 5, 0, 2, 4, 6]
    assert left.tolist()[:3] == [1, 3, 5] and right.tolist()[:3] == [2, 4, 6]


def test_equal_intervals_share_a_node() -> None:
    tree = IntervalTree({0: (5, 9), 1: (5, 9), 2: (1, 2)})
    assert len(tree) == 2
    assert sorted(tree.search_all([(6, 6)]).tolist()) == [0, 1]


_SPANS = st.tuples(st.integers(0, 60), st.integers(0, 60)).map(lambda t: (min(t), max(t)))


@settings(max_examples=200, deadline=None)
@given(spans=st.lists(_SPANS, max_size=40), queries=st.lists(_SPANS, min_size=1, max_size=3))
def test_interval_tree_finds_exactly_the_intersecting_ranges(
    spans: list[tuple[int, int]], queries: list[tuple[int, int]]
) -> None:
    tree = IntervalTree(dict(enumerate(spans)))
    expected = {i for i, (lo, hi) in enumerate(spans) for a, b in queries if hi >= a and b >= lo}
    assert set(tree.search_all(queries).tolist()) == expected


# -- Hypothesis: soundness on random segments holding random rows -------------------------------

COLORS = ("red", "green", "blue")
BOUNDED = {"columnValues": "red|green", "columnValuesDelimiter": "|"}


@dataclass(frozen=True)
class Row:
    ts: int
    member: int
    color: str


def modulo_partition(value: int, n: int) -> int:
    """Pinot's Modulo with its default POSITIVE_MODULO normaliser (reference 1.4/1.5), written here."""
    return value % n  # Python's % is already non-negative for n > 0


def bounded_partition(value: str) -> int:
    """BoundedColumnValue over "red|green": 1-based index, case-insensitive, 0 when not listed."""
    listed = [v.lower() for v in BOUNDED["columnValues"].split("|")]
    return listed.index(value.lower()) + 1 if value.lower() in listed else 0


_CHECKS: dict[FilterOperator, Callable[[object, list[object]], bool]] = {
    FilterOperator.EQ: lambda x, v: x == v[0],
    FilterOperator.NEQ: lambda x, v: x != v[0],
    FilterOperator.IN: lambda x, v: x in v,
    FilterOperator.NOT_IN: lambda x, v: x not in v,
    FilterOperator.GT: lambda x, v: x > v[0],  # type: ignore[operator]
    FilterOperator.GTE: lambda x, v: x >= v[0],  # type: ignore[operator]
    FilterOperator.LT: lambda x, v: x < v[0],  # type: ignore[operator]
    FilterOperator.LTE: lambda x, v: x <= v[0],  # type: ignore[operator]
    FilterOperator.BETWEEN: lambda x, v: v[0] <= x <= v[1],  # type: ignore[operator]
}


def holds(node: FilterNode, row: Row) -> bool:
    """A tiny, independent evaluator of filter trees over one row (no NULLs, two-valued logic)."""
    if isinstance(node, And):
        return all(holds(c, row) for c in node.children)
    if isinstance(node, Or):
        return any(holds(c, row) for c in node.children)
    if isinstance(node, Not):
        return not holds(node.child, row)
    value = getattr(row, {"ts": "ts", "memberId": "member", "color": "color"}[node.column or ""])
    return _CHECKS[node.operator](value, [v.value for v in node.values if isinstance(v, Literal)])


_TS = st.integers(0, 400)  # Pinot's time pruner assumes non-negative epoch times (default [0, MAX])
_MEMBER = st.integers(-30, 30)
_OPS = [op for op in _CHECKS if op is not FilterOperator.BETWEEN]


_EQ, _IN = FilterOperator.EQ, FilterOperator.IN
#: Operators per column, weighted toward EQ/IN where the partition pruner can act on them.
_COLUMN_OPS = {
    "ts": [*_OPS, FilterOperator.BETWEEN],
    "memberId": [_EQ, _EQ, _IN, _IN, *_OPS, FilterOperator.BETWEEN],
    "color": [_EQ, _IN, FilterOperator.NEQ, FilterOperator.NOT_IN],
}


@st.composite
def predicates(draw: st.DrawFn) -> Predicate:
    columns: list[tuple[str, st.SearchStrategy[int | str]]] = [
        ("ts", _TS),
        ("memberId", _MEMBER),
        ("color", st.sampled_from(COLORS)),
    ]
    column, values = draw(st.sampled_from(columns))
    op = draw(st.sampled_from(_COLUMN_OPS[column]))
    count = 2 if op is FilterOperator.BETWEEN else draw(st.integers(1, 3)) if op.arity is None else 1
    return Predicate.of(column, op, *(draw(values) for _ in range(count)))


filters: st.SearchStrategy[FilterNode] = st.recursive(
    predicates(),
    lambda inner: st.one_of(
        st.lists(inner, min_size=2, max_size=3).map(lambda cs: And(tuple(cs))),
        st.lists(inner, min_size=2, max_size=3).map(lambda cs: Or(tuple(cs))),
        inner.map(Not),
    ),
    max_leaves=6,
)


@dataclass(frozen=True)
class Segment:
    name: str
    rows: tuple[Row, ...]
    num_partitions: int
    kind: str  # full | no_time | no_partition | missing

    def metadata(self) -> SegmentMetadata:
        ts = [r.ts for r in self.rows]
        has_time = bool(ts) and self.kind != "no_time"
        parts: dict[str, ColumnPartitionMetadata] = {}
        if self.kind != "no_partition":
            parts["memberId"] = ColumnPartitionMetadata(
                "Modulo", self.num_partitions, {modulo_partition(r.member, self.num_partitions) for r in self.rows}
            )
            parts["color"] = ColumnPartitionMetadata(
                "BoundedColumnValue", 3, {bounded_partition(r.color) for r in self.rows}, BOUNDED
            )
        return SegmentMetadata(
            self.name, min(ts) if has_time else None, max(ts) if has_time else None, len(self.rows), parts
        )


@st.composite
def segment_sets(draw: st.DrawFn) -> list[Segment]:
    """1-8 segments; each draws its rows from its own time window and a pool of 1-2 member ids, so
    that segments differ enough for pruning to happen, as in real tables."""
    segments = []
    for i in range(draw(st.integers(1, 8))):
        start = draw(_TS)
        ts = st.integers(start, start + 40)
        members = st.sampled_from(draw(st.lists(_MEMBER, min_size=1, max_size=2)))
        rows = draw(st.lists(st.builds(Row, ts, members, st.sampled_from(COLORS)), max_size=6))
        kind = draw(st.sampled_from(["full", "full", "full", "no_time", "no_partition", "missing"]))
        segments.append(Segment(f"seg{i}", tuple(rows), draw(st.integers(1, 6)), kind))
    return segments


def _pruners() -> list[SegmentPruner]:
    return [
        EmptySegmentPruner(),
        TimeSegmentPruner("ts", "EPOCH|MILLISECONDS"),
        SinglePartitionColumnSegmentPruner("memberId"),
        MultiPartitionColumnsSegmentPruner(["memberId", "color"]),
    ]


@settings(max_examples=200, deadline=None)
@given(segments=segment_sets(), node=filters, order=st.randoms(use_true_random=False))
def test_no_pruner_drops_a_segment_holding_a_matching_row(
    segments: list[Segment], node: FilterNode, order: object
) -> None:
    store = {s.name: s.metadata() for s in segments if s.kind != "missing"}
    online = [s.name for s in segments]
    order.shuffle(online)  # type: ignore[attr-defined]
    query = Query("t", (SelectItem(Star()),), filter=node)
    needed = {s.name for s in segments if any(holds(node, r) for r in s.rows)}
    pruners = _pruners()
    init_pruners(pruners, store, online)
    for pruner in pruners:
        kept = pruner.prune(query, tuple(online))
        assert needed <= set(kept), type(pruner).__name__
        assert list(kept) == [s for s in online if s in kept]  # input order, no duplicates
    assert needed <= set(prune_segments(pruners, query, tuple(online)))


@settings(max_examples=200, deadline=None)
@given(
    layout=st.lists(st.tuples(st.integers(1, 8), st.integers(0, 7)), min_size=1, max_size=10),
    values=st.lists(_MEMBER, min_size=1, max_size=3),
)
def test_partition_pruning_is_exact_with_one_partition_per_segment(
    layout: list[tuple[int, int]], values: list[int]
) -> None:
    """Each segment holds one partition (under its own count): EQ/IN keep exactly the segments whose
    partition some value hashes to."""
    layout = [(n, p % n) for n, p in layout]
    store = {
        f"s{i}": SegmentMetadata(f"s{i}", partitions={"memberId": ColumnPartitionMetadata("Modulo", n, {p})})
        for i, (n, p) in enumerate(layout)
    }
    pruner = SinglePartitionColumnSegmentPruner("memberId")
    pruner.init(store)
    op = "=" if len(values) == 1 else "IN"
    query = Query("t", (SelectItem(Star()),), filter=Predicate.of("memberId", op, *values))
    expected = {f"s{i}" for i, (n, p) in enumerate(layout) if any(modulo_partition(v, n) == p for v in values)}
    assert set(pruner.prune(query, tuple(store))) == expected


@st.composite
def partition_predicates(draw: st.DrawFn) -> Predicate:
    columns: list[tuple[str, st.SearchStrategy[int | str]]] = [
        ("memberId", _MEMBER),
        ("color", st.sampled_from(COLORS)),
    ]
    column, values = draw(st.sampled_from(columns))
    op = draw(st.sampled_from([_EQ, _IN]))
    count = 1 if op is _EQ else draw(st.integers(1, 3))
    return Predicate.of(column, op, *(draw(values) for _ in range(count)))


partition_filters: st.SearchStrategy[FilterNode] = st.recursive(
    partition_predicates(),
    lambda inner: st.one_of(
        st.lists(inner, min_size=2, max_size=3).map(lambda cs: And(tuple(cs))),
        st.lists(inner, min_size=2, max_size=3).map(lambda cs: Or(tuple(cs))),
    ),
    max_leaves=4,
)


@settings(max_examples=200, deadline=None)
@given(segments=segment_sets(), node=partition_filters)
def test_partition_pruners_are_sound_on_filters_they_can_prune(segments: list[Segment], node: FilterNode) -> None:
    """Same property, with AND/OR trees of EQ/IN on partition columns only, where pruning is frequent."""
    store = {s.name: s.metadata() for s in segments if s.kind != "missing"}
    online = tuple(s.name for s in segments)
    query = Query("t", (SelectItem(Star()),), filter=node)
    needed = {s.name for s in segments if any(holds(node, r) for r in s.rows)}
    for pruner in (
        SinglePartitionColumnSegmentPruner("memberId"),
        MultiPartitionColumnsSegmentPruner(["memberId", "color"]),
    ):
        pruner.init(store, online)
        assert needed <= set(pruner.prune(query, online))


# -- TIMESTAMP columns: Pinot's SegmentPrunerTest.testTimeSegmentPrunerTimestampFormat ------------------
def _ts(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp() * 1000)


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ("ts = '2020-01-31 00:00:00'", {"s0"}),
        (f"ts = {_ts('2020-01-31 00:00:00')}", {"s0"}),
        ("ts BETWEEN '2020-01-01 00:00:00' AND '2020-03-31 00:00:00'", {"s0", "s1"}),
        (f"ts BETWEEN {_ts('2020-01-01 00:00:00')} AND {_ts('2020-03-31 00:00:00')}", {"s0", "s1"}),
        ("ts <= '2020-01-01 00:00:00' OR ts IN ('2020-02-01 00:00:00', '2020-04-01 00:00:00')", {"s0", "s1", "s2"}),
        (f"ts <= {_ts('2020-01-01 00:00:00')} OR ts IN ({_ts('2020-02-01 00:00:00')}, {_ts('2020-04-01 00:00:00')})",
         {"s0", "s1", "s2"}),
    ],
)
def test_timestamp_column_is_pruned_as_timestamp_whatever_its_format(where: str, expected: set[str]) -> None:
    """The Pinot test declares ``EPOCH|MILLISECONDS`` on a TIMESTAMP column ("which Pinot should handle")
    and queries it with timestamp strings and millis; the JVM zone is UTC."""
    schema = {"dateTimeFieldSpecs": [{"name": "ts", "dataType": "TIMESTAMP", "format": "EPOCH|MILLISECONDS",
                                      "granularity": "1:DAYS"}]}
    table = _config(segmentsConfig={"timeColumnName": "ts"}, routing={"segmentPrunerTypes": ["time"]})
    (pruner,) = build_segment_pruners(table, schema)
    spans = {"s0": ("2020-01-01", "2020-02-28"), "s1": ("2020-02-01", "2020-05-30"), "s2": ("2020-04-01", "2020-04-30")}
    pruner.init({n: SegmentMetadata(n, _ts(a + " 00:00:00"), _ts(b + " 00:00:00")) for n, (a, b) in spans.items()})
    assert set(pruner.prune(q(where), ("s0", "s1", "s2"))) == expected


def test_declared_format_still_rules_other_types() -> None:
    """A LONG column declared EPOCH|MILLISECONDS does not read timestamp strings: nothing is pruned."""
    pruner = TimeSegmentPruner("ts", "EPOCH|MILLISECONDS", data_type="LONG")
    pruner.init({"s0": SegmentMetadata("s0", 0, 10)})
    assert pruner.prune(q("ts = '2020-01-31 00:00:00'"), ("s0",)) == ("s0",)
    assert TimeSegmentPruner("ts", DateTimeFormat.parse("EPOCH|DAYS"), "TIMESTAMP").time_format.kind == "TIMESTAMP"
