"""Broker segment pruners: empty, time and partition, as Pinot's broker runs them.

Each pruner caches per-segment info from :class:`~workbench.pinot.segment.SegmentMetadata` when
segments come online or are refreshed, and answers ``prune(query, segments)`` per query with the
surviving segments in input order. :func:`build_segment_pruners` picks them from a table config the way
Pinot's factory does, and :func:`prune_segments` chains them.

>>> from workbench.pinot.sql import parse_query
>>> from workbench.pinot.segment import SegmentMetadata
>>> pruners = [EmptySegmentPruner(), TimeSegmentPruner("ts", "EPOCH|MILLISECONDS")]
>>> store = {"a": SegmentMetadata("a", 0, 99, total_docs=5), "b": SegmentMetadata("b", 100, 199, total_docs=0),
...          "c": SegmentMetadata("c", 100, 199, total_docs=7)}
>>> init_pruners(pruners, store)
>>> from workbench.pinot.sql import parse_query
>>> prune_segments(pruners, parse_query("SELECT COUNT(*) FROM t WHERE ts >= 150"), ("a", "b", "c"))
('c',)
"""

from workbench.pinot.pruning.base import MetadataStore, SegmentPruner
from workbench.pinot.pruning.empty import EmptySegmentPruner
from workbench.pinot.pruning.factory import (
    PRUNER_BUILDERS,
    build_segment_pruners,
    init_pruners,
    prune_segments,
    time_column_format,
    time_column_type,
)
from workbench.pinot.pruning.interval import MAX_TIME, IntervalTree
from workbench.pinot.pruning.partition_pruner import (
    MultiPartitionColumnsSegmentPruner,
    PartitionSegmentPruner,
    SinglePartitionColumnSegmentPruner,
)
from workbench.pinot.pruning.time_pruner import DEFAULT_INTERVAL, TimeSegmentPruner
from workbench.pinot.pruning.timeformat import DateTimeFormat

__all__ = [
    "DEFAULT_INTERVAL",
    "MAX_TIME",
    "PRUNER_BUILDERS",
    "DateTimeFormat",
    "EmptySegmentPruner",
    "IntervalTree",
    "MetadataStore",
    "MultiPartitionColumnsSegmentPruner",
    "PartitionSegmentPruner",
    "SegmentPruner",
    "SinglePartitionColumnSegmentPruner",
    "TimeSegmentPruner",
    "build_segment_pruners",
    "init_pruners",
    "prune_segments",
    "time_column_format",
    "time_column_type",
]
