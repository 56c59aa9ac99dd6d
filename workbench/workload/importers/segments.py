"""Import segment metadata as Pinot's controller returns it, into the segments table generated data uses.

Accepted inputs (JSON, or JSON Lines with one record per line for ``*.jsonl``/``*.ndjson``):

* ``GET /segments/{table}/metadata``: an object of segment name -> the server's segment metadata
  (``segmentName``, ``crc``, ``creationTimeMillis``, ``startTimeMillis``, ``endTimeMillis``,
  ``totalDocs``, ``columns`` with each column's ``partitionFunction`` and ``partitions``);
* ZooKeeper-style records: ``GET /segments/{table}/{segment}/metadata`` (a flat map of ``segment.*``
  simple fields, named by ``segment.name`` or else by the file name), ``GET /segments/{table}/zkmetadata``
  (segment name -> simple fields), or ZNRecord dumps (``{"id": ..., "simpleFields": {...}}``), alone or
  in a list.

The table has the shared ``segments.parquet`` columns (:data:`workbench.workload.schema.SEGMENTS_SCHEMA`)
with the generator's meanings. Unknown numbers are ``-1``, as Pinot's ZK metadata writes them (a
controller record has no size or offsets; no input has the seal time). ``partition`` is Pinot's
partition id of the segment: the LLC name's stream partition, else the single id of the single
partition column. Partition metadata is normalised to the ZK form (``{"columnPartitionMap": {col:
{functionName, numPartitions, partitions, functionConfig}}}``) and ``zk_metadata`` holds the simple
fields (as given, or as a controller record implies them), so
:meth:`workbench.pinot.segment.SegmentMetadata.from_zk_metadata` reads either back.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.errors import InputError
from workbench.pinot.segment import check_segment_name
from workbench.workload.importers.common import ImportResult, Malformed, Tally, line_count, numbered_lines, read_text
from workbench.workload.importers.conform import conform
from workbench.workload.importers.jsonpos import entries, load_json
from workbench.workload.schema import SEGMENTS_SCHEMA

__all__ = ["SEGMENT_COLUMNS", "read_segments", "time_to_millis"]

#: Columns of the segments table: the shared ``segments.parquet`` schema, then what only an import has.
#: What the row builders produce; a shared column they do not know is filled by :func:`conform`.
_ROW_COLUMNS = (
    "segment_name", "table_type", "partition", "sequence", "status", "start_time_ms", "end_time_ms", "total_docs",
    "size_bytes", "crc", "creation_time_ms", "seal_time_ms", "start_offset", "end_offset", "partition_metadata",
    "zk_metadata", "num_partitions",
)
_EXTRAS = tuple(c for c in ("num_partitions",) if c not in SEGMENTS_SCHEMA.names)
SEGMENT_COLUMNS = (*SEGMENTS_SCHEMA.names, *_EXTRAS)
#: millis per unit for java.util.concurrent.TimeUnit names coarser than or equal to a millisecond.
_MILLIS_PER_UNIT = {"MILLISECONDS": 1, "SECONDS": 1_000, "MINUTES": 60_000, "HOURS": 3_600_000, "DAYS": 86_400_000}
#: units per milli for the finer ones (TimeUnit.toMillis truncates these toward zero).
_UNITS_PER_MILLI = {"NANOSECONDS": 1_000_000, "MICROSECONDS": 1_000}
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
#: ``<table>__<partition>__<sequence>__<yyyyMMdd'T'HHmm'Z'>``, Pinot's LLC segment name.
_LLC_NAME = re.compile(r"^.+__(\d+)__(\d+)__\d{8}T\d{4}Z$")
_RANGE = re.compile(r"\[\s*(-?\d+)\s+(-?\d+)\s*\]")
_SHAPES = ("the controller's GET /segments/{table}/metadata output (segmentName, totalDocs, ...), "
           "ZK segment metadata (segment.* simple fields) or a ZNRecord ({\"id\", \"simpleFields\"})")


def time_to_millis(value: int, unit: str) -> int:
    """Convert ``value`` in a Java ``TimeUnit`` to millis the way ``TimeUnit.toMillis`` does.

    >>> time_to_millis(2, "DAYS"), time_to_millis(1999, "microseconds")
    (172800000, 1)

    Raises
    ------
    Malformed
        When ``unit`` names no ``TimeUnit``.
    """
    name = unit.upper()
    if name in _UNITS_PER_MILLI:
        quotient = abs(value) // _UNITS_PER_MILLI[name]
        return quotient if value >= 0 else -quotient
    if name not in _MILLIS_PER_UNIT:
        allowed = ", ".join([*_UNITS_PER_MILLI, *_MILLIS_PER_UNIT])
        raise Malformed(f"segment.time.unit {unit!r} is not a Java TimeUnit ({allowed})")
    return max(_LONG_MIN, min(_LONG_MAX, value * _MILLIS_PER_UNIT[name]))


def _long(value: Any, key: str) -> int:
    """A Pinot long that may arrive as a JSON number or a string (ZK stores strings); absent is -1."""
    if value is None or value == "null":
        return -1
    try:
        if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
            raise ValueError
        return int(str(value).strip()) if isinstance(value, str) else int(value)
    except (TypeError, ValueError):
        raise Malformed(f"{key} must be an integer, got {value!r}") from None


def _partition_ids(entry: Mapping[str, Any], where: str) -> list[int]:
    """``partitions`` (a list) or the legacy ``partitionRanges`` string ``"[0 1],[5 5]"`` (inclusive)."""
    if entry.get("partitions") is not None:
        raw = entry["partitions"]
        if not isinstance(raw, list):
            raise Malformed(f"{where}.partitions must be a list of partition ids, got {raw!r}")
        return sorted({_long(p, f"{where}.partitions") for p in raw})
    ranges = str(entry.get("partitionRanges", ""))
    return sorted({p for low, high in _RANGE.findall(ranges) for p in range(int(low), int(high) + 1)})


def _partition_entry(entry: Any, where: str) -> dict[str, Any]:
    """One column's partition metadata in the ZK form, checked."""
    if not isinstance(entry, Mapping) or not entry.get("functionName"):
        raise Malformed(f"{where} must be an object with functionName, numPartitions and partitions")
    count = _long(entry.get("numPartitions"), f"{where}.numPartitions")
    if count < 1:
        raise Malformed(f"{where}.numPartitions must be at least 1, got {entry.get('numPartitions')!r}")
    config = entry.get("functionConfig")
    return {"functionName": str(entry["functionName"]), "numPartitions": count,
            "partitions": _partition_ids(entry, where),
            "functionConfig": None if config is None else {str(k): str(v) for k, v in config.items()}}


def _zk_partitions(text: Any) -> dict[str, dict[str, Any]]:
    """The ``segment.partition.metadata`` simple field (a JSON string) as column -> entry."""
    if text in (None, "", "null"):
        return {}
    try:
        cmap = json.loads(text)["columnPartitionMap"] if isinstance(text, str) else text["columnPartitionMap"]
    except (ValueError, KeyError, TypeError):
        raise Malformed('segment.partition.metadata must be JSON {"columnPartitionMap": {column: {...}}}, '
                        f"got {str(text)[:80]!r}") from None
    if not isinstance(cmap, Mapping):
        raise Malformed("segment.partition.metadata.columnPartitionMap must be an object of column -> entry")
    return {str(c): _partition_entry(e, f"columnPartitionMap.{c}") for c, e in cmap.items()}


def _server_partitions(columns: Any) -> dict[str, dict[str, Any]]:
    """Partition metadata from the server form's ``columns`` list (those with a partition function)."""
    if columns is None:
        return {}
    if not isinstance(columns, list):
        raise Malformed(f"columns must be a list of column metadata objects, got {type(columns).__name__}")
    out: dict[str, dict[str, Any]] = {}
    for column in columns:
        function = column.get("partitionFunction") if isinstance(column, Mapping) else None
        if function is None:
            continue
        spec = dict(function) if isinstance(function, Mapping) else {"name": function}
        entry = {"functionName": spec.get("name", spec.get("functionName")),
                 "numPartitions": spec.get("numPartitions", column.get("numPartitions")),
                 "functionConfig": spec.get("functionConfig"), "partitions": column.get("partitions")}
        name = str(column.get("columnName"))
        out[name] = _partition_entry(entry, f"columns.{name}.partitionFunction")
    return out


def _partition_fields(name_partition: int, cmap: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Pinot's partition id of a segment and the normalised partition metadata.

    The id is the LLC name's stream partition, else the one id of the one partition column, as
    ``SegmentUtils.getRealtimeSegmentPartitionId`` resolves it (and as partition-aware assignment of
    offline segments reads it); ``-1`` when neither says.
    """
    only = next(iter(cmap.values())) if len(cmap) == 1 else None
    from_metadata = only["partitions"][0] if only and len(only["partitions"]) == 1 else -1
    return {
        "partition": name_partition if name_partition >= 0 else from_metadata,
        "num_partitions": only["numPartitions"] if only else -1,
        "partition_metadata": json.dumps({"columnPartitionMap": cmap}, sort_keys=True) if cmap else None,
    }


def _llc_parts(name: str) -> tuple[int, int]:
    """``(stream partition, sequence)`` of an LLC segment name, ``(-1, -1)`` for any other name."""
    match = _LLC_NAME.match(name)
    return (int(match[1]), int(match[2])) if match else (-1, -1)


def _offset(value: Any) -> int:
    """A stream offset; Kafka's are longs, other streams' (Kinesis shard maps) are unknown here (-1)."""
    text = str(value).strip() if value is not None else ""
    return int(text) if text.lstrip("-").isdigit() else -1


def _table_type(name: str, declared: Any, realtime_hint: bool) -> str:
    """``segment.type`` when recorded, else REALTIME for LLC names or stream metadata, else OFFLINE."""
    if str(declared).upper() in ("OFFLINE", "REALTIME"):
        return str(declared).upper()
    return "REALTIME" if realtime_hint or _LLC_NAME.match(name) else "OFFLINE"


def _zk_text(value: Any) -> str:
    """A simple field as ZooKeeper stores it: a string (JSON null becomes Pinot's ``"null"``)."""
    return value if isinstance(value, str) else json.dumps(value)


def _zk_times(fields: Mapping[str, Any]) -> tuple[int, int]:
    unit = str(fields.get("segment.time.unit") or "DAYS")
    start, end = (_long(fields.get(f"segment.{k}.time"), f"segment.{k}.time") for k in ("start", "end"))
    if unit == "null":
        return -1, -1
    return (time_to_millis(start, unit) if start >= 0 else -1, time_to_millis(end, unit) if end >= 0 else -1)


def _from_zk(name: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    llc_partition, sequence = _llc_parts(name)
    start, end = _zk_times(fields)
    realtime = any(str(k).startswith("segment.realtime.") for k in fields)
    return {
        "segment_name": name, "table_type": _table_type(name, fields.get("segment.type"), realtime),
        "sequence": sequence, "status": str(fields.get("segment.realtime.status") or "DONE"),
        "start_time_ms": start, "end_time_ms": end,
        "total_docs": _long(fields.get("segment.total.docs"), "segment.total.docs"),
        "size_bytes": _long(fields.get("segment.size.in.bytes"), "segment.size.in.bytes"),
        "crc": _long(fields.get("segment.crc"), "segment.crc"),
        "creation_time_ms": _long(fields.get("segment.creation.time"), "segment.creation.time"),
        "seal_time_ms": -1,
        "start_offset": _offset(fields.get("segment.realtime.startOffset")),
        "end_offset": _offset(fields.get("segment.realtime.endOffset")),
        **_partition_fields(llc_partition, _zk_partitions(fields.get("segment.partition.metadata"))),
        "zk_metadata": json.dumps({"segment.name": name, **{str(k): _zk_text(v) for k, v in fields.items()}},
                                  sort_keys=True),
    }


def _zk_equivalent(row: Mapping[str, Any]) -> str:
    """The ZK simple fields a server-form record implies (times in millis, -1 where unknown)."""
    fields = {"segment.name": row["segment_name"], "segment.type": row["table_type"],
              "segment.start.time": str(row["start_time_ms"]), "segment.end.time": str(row["end_time_ms"]),
              "segment.time.unit": "MILLISECONDS", "segment.total.docs": str(row["total_docs"]),
              "segment.crc": str(row["crc"]), "segment.creation.time": str(row["creation_time_ms"])}
    if row["partition_metadata"] is not None:
        fields["segment.partition.metadata"] = row["partition_metadata"]
    return json.dumps(fields, sort_keys=True)


def _from_server(name: str, record: Mapping[str, Any]) -> dict[str, Any]:
    llc_partition, sequence = _llc_parts(name)
    creation = _long(record.get("creationTimeMillis"), "creationTimeMillis")
    row = {
        "segment_name": name, "table_type": _table_type(name, None, record.get("startOffset") is not None),
        "sequence": sequence, "status": "DONE",
        "start_time_ms": _long(record.get("startTimeMillis"), "startTimeMillis"),
        "end_time_ms": _long(record.get("endTimeMillis"), "endTimeMillis"),
        "total_docs": _long(record.get("totalDocs"), "totalDocs"),
        "size_bytes": -1,
        "crc": _long(record.get("crc"), "crc"),
        "creation_time_ms": -1 if creation == _LONG_MIN else creation,
        "seal_time_ms": -1,
        "start_offset": _offset(record.get("startOffset")), "end_offset": _offset(record.get("endOffset")),
        **_partition_fields(llc_partition, _server_partitions(record.get("columns"))),
    }
    return {**row, "zk_metadata": _zk_equivalent(row)}


def _is_zk(record: Mapping[str, Any]) -> bool:
    return any(str(key).startswith("segment.") for key in record)


def _is_record(value: Any) -> bool:
    return isinstance(value, Mapping) and ("simpleFields" in value or "segmentName" in value or _is_zk(value))


def _required_name(*candidates: Any) -> str:
    name = next((str(c) for c in candidates if c not in (None, "")), None)
    if name is None:
        raise Malformed("no segment name: give segment.name, segmentName or the ZNRecord id, "
                        "or key the record by its segment name")
    return name


def segment_row(key: str | None, value: Any) -> dict[str, Any]:
    """One segment's row from any accepted record shape; ``key`` is the name it is filed under.

    Raises
    ------
    Malformed
        When the record has no recognisable shape, no name, or a field of the wrong type.
    """
    if not isinstance(value, Mapping) or (not _is_record(value) and "totalDocs" not in value):
        raise Malformed(f"not a segment metadata record; expected {_SHAPES}")
    if "simpleFields" in value:
        fields = value["simpleFields"]
        if not isinstance(fields, Mapping):
            raise Malformed("simpleFields must be an object of segment.* fields")
        return _checked(_from_zk(_required_name(value.get("id"), fields.get("segment.name"), key), fields), True)
    if _is_zk(value):
        return _checked(_from_zk(_required_name(value.get("segment.name"), key), value), True)
    return _checked(_from_server(_required_name(value.get("segmentName"), key), value), False)


def _checked(row: dict[str, Any], zk: bool) -> dict[str, Any]:
    """Refuse what no segment can have: a path-unsafe name, an unknown or negative doc count, time
    running backwards."""
    try:
        check_segment_name(row["segment_name"])
    except InputError as exc:
        raise Malformed(exc.problem) from None
    unknown_while_consuming = row["total_docs"] == -1 and row["status"] == "IN_PROGRESS"
    if row["total_docs"] < 0 and not unknown_while_consuming:  # ZK records no count while a segment consumes
        key = "segment.total.docs" if zk else "totalDocs"
        raise Malformed(f"{key} is {'missing' if row['total_docs'] == -1 else row['total_docs']}: every segment "
                        "needs its number of documents (0 or more)")
    start, end = row["start_time_ms"], row["end_time_ms"]
    if start >= 0 and end >= 0 and start > end:
        raise Malformed(f"its time range ends before it starts ({start} > {end} ms)")
    return row


def _stem(path: Path) -> str:
    name = path.name.removesuffix(".gz")
    return name.rsplit(".", 1)[0] if "." in name else name


def _document_records(text: str, source: Path) -> Iterator[tuple[int, str | None, Any]]:
    data = load_json(text, str(source), top_level_duplicates=True)  # a segment listed twice: reported per record
    if _is_record(data):
        yield 1, _stem(source), data
    elif isinstance(data, Mapping | list):
        for key, line, value in entries(text):
            yield line, key if isinstance(key, str) else None, value
    else:
        raise InputError(f"{source}:1", f"expected a JSON object or list of segment records: {_SHAPES}")


def _json_line(line: str) -> tuple[str | None, Any]:
    """One JSON Lines record: a bare record, or ``{segment name: record}``; bad JSON is a :class:`Malformed`."""
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        return None, Malformed(f"not valid JSON: {exc.msg} (column {exc.colno})")
    if isinstance(value, Mapping) and len(value) == 1 and not _is_record(value):
        key, inner = next(iter(value.items()))
        return str(key), inner
    return None, value


def _json_lines(text: str) -> Iterator[tuple[int, str | None, Any]]:
    for line_no, line in numbered_lines(text):
        if line.strip():
            yield (line_no, *_json_line(line))


def _records(text: str, source: Path) -> Iterator[tuple[int, str | None, Any]]:
    if source.name.removesuffix(".gz").endswith((".jsonl", ".ndjson")):
        return _json_lines(text)
    return _document_records(text, source)


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=list(_ROW_COLUMNS)).astype({"num_partitions": "int32"})
    return conform(frame, SEGMENTS_SCHEMA, _EXTRAS)


def _rows(records: Iterator[tuple[int, str | None, Any]], tally: Tally) -> list[dict[str, Any]]:
    """Rows of the well-formed records; each malformed one goes to ``tally`` with its line."""
    rows: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for line_no, key, value in records:
        try:
            if isinstance(value, Malformed):
                raise value
            row = segment_row(key, value)
            if row["segment_name"] in seen:
                raise Malformed(f"segment {row['segment_name']!r} already appeared at line {seen[row['segment_name']]}")
        except Malformed as exc:
            tally.malformed(line_no, f"{key}: {exc}" if key else str(exc))
            continue
        seen[row["segment_name"]] = line_no
        rows.append(row)
    return rows


def read_segments(path: str | Path, lenient: bool = False, *, max_bytes: int | None = None) -> ImportResult:
    """Read segment metadata (controller or ZK form) into one row per segment.

    Parameters
    ----------
    path
        A JSON file (``*.json``) or JSON Lines file (``*.jsonl``/``*.ndjson``), optionally gzipped.
    lenient
        Skip malformed segment records (counted, with their line) instead of raising.
    max_bytes
        Largest input read (after decompression); ``None`` for the default limit.

    Returns
    -------
    ImportResult
        ``frame`` has :data:`SEGMENT_COLUMNS` (the shared schema, then ``num_partitions``: the single
        partition column's partition count, -1 without exactly one column), in file order.

    Raises
    ------
    InputError
        At ``file:line`` for invalid JSON (a whole document cannot be partly read), a malformed record
        in strict mode, a segment named twice, or a file without any segment.
    """
    source = Path(path)
    tally = Tally(source, lenient)
    text = read_text(source, strict_utf8=True, max_bytes=max_bytes)
    rows = _rows(_records(text, source), tally)
    tally.require_rows(len(rows), f"holds no segment records; expected {_SHAPES}")
    tally.count("lines", line_count(text))
    return tally.result("segments", _frame(rows))
