"""Which broker pruners a table gets, following Pinot's ``SegmentPrunerFactory`` rules.

* ``routing.segmentPrunerTypes`` is matched case-insensitively; ``empty``, ``time`` and
  ``partition`` are recognised and anything else is ignored (the workbench's own validation,
  :mod:`workbench.pinot.table_fields`, rejects any other name before a config gets here).
* The empty pruner is also added for Kinesis-fed tables, even without ``segmentPrunerTypes``.
* With ``segmentPrunerTypes`` absent, the legacy ``routingTableBuilderName`` ``PartitionAwareOffline``
  (OFFLINE) or ``PartitionAwareRealtime`` (REALTIME) asks for the partition pruner.
* The time pruner needs ``segmentsConfig.timeColumnName`` and the column's format from the schema;
  the partition pruner needs a non-empty ``columnPartitionMap``. Without them the pruner is skipped
  with a logged warning, as in Pinot.
* They always run in the order empty -> time -> partition.

>>> from workbench.pinot.table_config import TableConfig
>>> tc = TableConfig.from_json({"tableName": "t", "tableType": "OFFLINE",
...     "segmentsConfig": {"timeColumnName": "ts"},
...     "routing": {"segmentPrunerTypes": ["partition", "TIME", "empty"]},
...     "tableIndexConfig": {"segmentPartitionConfig": {"columnPartitionMap": {
...         "memberId": {"functionName": "Murmur", "numPartitions": 8}}}}})
>>> schema = {"dateTimeFieldSpecs": [{"name": "ts", "dataType": "LONG", "format": "1:MILLISECONDS:EPOCH"}]}
>>> [type(p).__name__ for p in build_segment_pruners(tc, schema)]
['EmptySegmentPruner', 'TimeSegmentPruner', 'SinglePartitionColumnSegmentPruner']
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from workbench.pinot.pruning.base import MetadataStore, SegmentPruner
from workbench.pinot.pruning.empty import EmptySegmentPruner
from workbench.pinot.pruning.partition_pruner import (
    MultiPartitionColumnsSegmentPruner,
    SinglePartitionColumnSegmentPruner,
)
from workbench.pinot.pruning.time_pruner import TimeSegmentPruner
from workbench.pinot.sql.query import Query
from workbench.pinot.table_config import TableConfig

__all__ = ["build_segment_pruners", "init_pruners", "prune_segments", "time_column_format", "time_column_type"]

_LOG = logging.getLogger(__name__)
_LEGACY_PARTITION_BUILDERS = {"OFFLINE": "PartitionAwareOffline", "REALTIME": "PartitionAwareRealtime"}
Schema = Mapping[str, Any]


def time_column_format(schema: Schema | None, column: str) -> str | None:
    """The format string of ``column`` in a Pinot schema JSON, or ``None`` when it has none.

    Reads ``dateTimeFieldSpecs``, and the legacy ``timeFieldSpec`` (outgoing spec if present, else
    incoming) as ``size:unit:timeFormat``, which is how Pinot converts it.

    >>> time_column_format({"timeFieldSpec": {"incomingGranularitySpec": {
    ...     "name": "days", "dataType": "INT", "timeType": "DAYS"}}}, "days")
    '1:DAYS:EPOCH'
    """
    for spec in (schema or {}).get("dateTimeFieldSpecs") or ():
        if spec.get("name") == column and spec.get("format"):
            return str(spec["format"])
    legacy = (schema or {}).get("timeFieldSpec") or {}
    granularity = legacy.get("outgoingGranularitySpec") or legacy.get("incomingGranularitySpec") or {}
    if granularity.get("name") == column and granularity.get("timeType"):
        size, unit = granularity.get("timeUnitSize", 1), granularity["timeType"]
        return f"{size}:{unit}:{granularity.get('timeFormat', 'EPOCH')}"
    return None


def time_column_type(schema: Schema | None, column: str) -> str | None:
    """The ``dataType`` of ``column`` in a Pinot schema JSON (``dateTimeFieldSpecs`` or the legacy
    ``timeFieldSpec``), upper-cased, or ``None``; a ``TIMESTAMP`` column is pruned as TIMESTAMP.

    >>> time_column_type({"dateTimeFieldSpecs": [{"name": "ts", "dataType": "timestamp"}]}, "ts")
    'TIMESTAMP'
    """
    for spec in (schema or {}).get("dateTimeFieldSpecs") or ():
        if spec.get("name") == column and spec.get("dataType"):
            return str(spec["dataType"]).upper()
    legacy = (schema or {}).get("timeFieldSpec") or {}
    granularity = legacy.get("outgoingGranularitySpec") or legacy.get("incomingGranularitySpec") or {}
    if granularity.get("name") == column and granularity.get("dataType"):
        return str(granularity["dataType"]).upper()
    return None


def _stream_types(config: TableConfig) -> Iterable[str]:
    yield str(config.section("tableIndexConfig", "streamConfigs").get("streamType", ""))
    for stream in config.section("ingestionConfig", "streamIngestionConfig").get("streamConfigMaps") or ():
        yield str(stream.get("streamType", ""))


def _requested(config: TableConfig) -> set[str]:
    routing = config.section("routing")
    names = set(config.segment_pruner_types)
    if any(t.lower() == "kinesis" for t in _stream_types(config)):
        names.add("empty")
    legacy = _LEGACY_PARTITION_BUILDERS.get(config.table_type)
    if routing.get("segmentPrunerTypes") is None and routing.get("routingTableBuilderName") == legacy:
        names.add("partition")
    return names


def _empty(config: TableConfig, schema: Schema | None) -> SegmentPruner | None:
    return EmptySegmentPruner()


def _time(config: TableConfig, schema: Schema | None) -> SegmentPruner | None:
    column = config.time_column_name
    time_format = None if column is None else time_column_format(schema, column)
    if column is None or time_format is None:
        _LOG.warning(
            "table %s: no time column or no schema format for it; time pruner not added", config.table_name_with_type
        )
        return None
    return TimeSegmentPruner(column, time_format, time_column_type(schema, column))


def _partition(config: TableConfig, schema: Schema | None) -> SegmentPruner | None:
    columns = list(config.column_partition_map)
    if not columns:
        _LOG.warning("table %s: no columnPartitionMap; partition pruner not added", config.table_name_with_type)
        return None
    if len(columns) == 1:
        return SinglePartitionColumnSegmentPruner(columns[0])
    return MultiPartitionColumnsSegmentPruner(columns)


#: Pruner name -> builder, in Pinot's fixed execution order.
PRUNER_BUILDERS: dict[str, Callable[[TableConfig, Schema | None], SegmentPruner | None]] = {
    "empty": _empty,
    "time": _time,
    "partition": _partition,
}


def build_segment_pruners(table_config: TableConfig, schema: Schema | None = None) -> list[SegmentPruner]:
    """Build the pruners Pinot's broker would run for this table, in execution order.

    Parameters
    ----------
    table_config
        The table config (``routing``, ``segmentsConfig``, ``tableIndexConfig`` are read).
    schema
        The table's Pinot schema JSON; needed only for the time pruner (the time column's format).

    Returns
    -------
    list[SegmentPruner]
        Uninitialised pruners; call :func:`init_pruners` (or each ``init``) with segment metadata.
    """
    requested = _requested(table_config)
    built = (builder(table_config, schema) for name, builder in PRUNER_BUILDERS.items() if name in requested)
    return [pruner for pruner in built if pruner is not None]


def init_pruners(
    pruners: Iterable[SegmentPruner], metadata: MetadataStore, online: Iterable[str] | None = None
) -> None:
    """Initialise every pruner with the same metadata store and online segment list."""
    names = None if online is None else list(online)
    for pruner in pruners:
        pruner.init(metadata, names)


def prune_segments(pruners: Iterable[SegmentPruner], query: Query, segments: Sequence[str]) -> tuple[str, ...]:
    """Run the pruners in order, each on the previous one's output, as the broker's routing does.

    ``len(segments) - len(result)`` is the ``numPrunedSegments`` a broker would report.
    """
    remaining = tuple(segments)
    for pruner in pruners:
        remaining = pruner.prune(query, remaining)
    return remaining
