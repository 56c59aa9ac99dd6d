"""Serialised sizes of cached results: the weights the byte-bounded caches charge.

The RFC weighs every entry by its serialised size after compression (§5.4), in the encoding of §5.3:
a 9-byte header (magic 2 B, version 1 B, type 1 B, flags 1 B, size 4 B) and a payload that depends on
the value form (§4.2):

* **aggregation** (no GROUP BY): one intermediate value per function, little-endian primitives;
* **group-by**: a key dictionary with varint lengths, then one columnar array per function;
* **selection** (no ORDER BY): the rows, fixed-width columns as primitives, variable-width ones as a
  varint length plus bytes;
* the **broker** entry is a serialised ``BrokerResponseNative``: the JSON result table plus the
  response's statistics fields.

Intermediate aggregation values differ a lot in size: ``COUNT`` is one long, ``AVG`` a (sum, count)
pair, ``DISTINCTCOUNT`` the whole set of distinct values and ``DISTINCTCOUNTHLL`` a fixed register
array. :data:`AGGREGATION_SIZERS` is the registry of those sizes, each a small function of the
:class:`ValueShape` it summarises. They model Pinot's ``ObjectSerDeUtils`` formats at their default
parameters; they are size *models*, accurate to the order of magnitude and shape, not byte-exact.

>>> agg = AggregationPart((FunctionShape("count"), FunctionShape("distinctcounthll"), FunctionShape("avg")))
>>> agg.payload_bytes(), agg.serialized_size_bytes()
(208, 217)
>>> groups = GroupByPart(num_groups=1_000, key_bytes=12, functions=(FunctionShape("sum"),))
>>> groups.serialized_size_bytes(), groups.serialized_size_bytes(Compression("lz4", 2.0))
(21019, 10514)
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from workbench.pinot.cache.columns import DataType
from workbench.pinot.sql.query import canonical_function_name

__all__ = [
    "AGGREGATION_SIZERS",
    "COMPRESSION_RATIOS",
    "HEADER_BYTES",
    "AggregationPart",
    "BrokerResult",
    "ColumnShape",
    "Compression",
    "FunctionShape",
    "GroupByPart",
    "ResultValue",
    "SelectionPart",
    "ValueShape",
    "aggregation_bytes",
    "varint_bytes",
]

#: The §5.3 header: magic (2) + version (1) + type (1) + flags (1) + payload size (4).
HEADER_BYTES = 9

#: Default compression ratios (uncompressed / compressed) per codec. These are assumptions for
#: columnar numeric payloads, not measurements; pass a measured :class:`Compression` to override.
COMPRESSION_RATIOS: dict[str, float] = {"none": 1.0, "lz4": 2.0, "zstd": 3.0}


@dataclass(frozen=True)
class Compression:
    """A payload codec and its ratio (uncompressed bytes per compressed byte; >= 1)."""

    codec: str = "none"
    ratio: float | None = None

    def __post_init__(self) -> None:
        if self.ratio is None and self.codec not in COMPRESSION_RATIOS:
            known = ", ".join(COMPRESSION_RATIOS)
            raise ValueError(f"unknown codec {self.codec!r}; use one of {known} or give a ratio")
        if self.ratio is not None and self.ratio < 1.0:
            raise ValueError(f"a compression ratio must be at least 1, got {self.ratio}")

    @property
    def effective_ratio(self) -> float:
        """The ratio given, else the codec's default."""
        return self.ratio if self.ratio is not None else COMPRESSION_RATIOS[self.codec]

    def compressed(self, payload_bytes: int) -> int:
        """Bytes the payload takes after compression (at least 1 for a non-empty payload)."""
        return math.ceil(payload_bytes / self.effective_ratio)


NO_COMPRESSION = Compression()


def varint_bytes(value: int) -> int:
    """Bytes of an unsigned LEB128 varint (the §5.3 length prefixes).

    >>> [varint_bytes(v) for v in (0, 127, 128, 16_383, 16_384)]
    [1, 1, 2, 2, 3]
    """
    return max(1, math.ceil(max(value, 1).bit_length() / 7))


# -- aggregation intermediate values ------------------------------------------------------------


@dataclass(frozen=True)
class ValueShape:
    """What one aggregation summarises, as much as its intermediate size depends on.

    Parameters
    ----------
    rows
        Values aggregated (rows of the segment, or of the group).
    distinct
        Distinct values among them; defaults to ``rows``.
    value_bytes
        Bytes of one raw value (8 for LONG/DOUBLE, the average length for strings).
    """

    rows: int = 1
    distinct: int | None = None
    value_bytes: int = 8

    @property
    def cardinality(self) -> int:
        """Distinct values (``rows`` when not given)."""
        return self.rows if self.distinct is None else self.distinct


def _fixed(size: int) -> Callable[[ValueShape], int]:
    return lambda _shape: size


def _value_set(shape: ValueShape) -> int:
    """A serialised hash set: a 4-byte count, then each distinct value."""
    return 4 + shape.cardinality * shape.value_bytes


def _value_list(shape: ValueShape) -> int:
    """A serialised list of every value (exact percentiles, ARRAYAGG): a count, then the values."""
    return 4 + shape.rows * shape.value_bytes


def _capped(per_item: int, cap_items: int, overhead: int) -> Callable[[ValueShape], int]:
    """Sketches that grow with the data up to a fixed number of retained items."""
    return lambda shape: overhead + per_item * min(shape.cardinality, cap_items)


def _bitmap(shape: ValueShape) -> int:
    """A RoaringBitmap of value ids: about 2 bytes per value plus container headers."""
    return 8 + 2 * shape.cardinality + 8 * math.ceil(shape.cardinality / 65_536)


#: clearspring HyperLogLog, log2m = 8: 256 five-bit registers packed 6 per int (43 ints) + 8 B header.
_HLL_BYTES = 8 + 4 * math.ceil(256 / 6)

#: Canonical function name -> intermediate size in bytes, from the shape of what it summarises.
AGGREGATION_SIZERS: dict[str, Callable[[ValueShape], int]] = {
    **dict.fromkeys(("count", "countmv"), _fixed(8)),
    **dict.fromkeys(("sum", "min", "max", "summv", "minmv", "maxmv", "booland", "boolor", "anyvalue"), _fixed(8)),
    **dict.fromkeys(("avg", "avgmv", "minmaxrange", "minmaxrangemv", "firstwithtime", "lastwithtime"), _fixed(16)),
    **dict.fromkeys(("varpop", "varsamp", "stddevpop", "stddevsamp", "covarpop", "covarsamp"), _fixed(24)),
    **dict.fromkeys(("skewness", "kurtosis"), _fixed(40)),
    "sumprecision": _fixed(24),
    **dict.fromkeys(("distinctcount", "distinctcountmv", "distinctsum", "distinctavg",
                     "segmentpartitioneddistinctcount"), _value_set),
    **dict.fromkeys(("distinctcountbitmap", "idset"), _bitmap),
    **dict.fromkeys(("distinctcounthll", "distinctcounthllmv", "distinctcountrawhll"), _fixed(_HLL_BYTES)),
    # HLL++ p=14 (dense 6-bit registers), Theta k=16384 (8-byte hashes), CPC lgK=12, ULL p=12.
    "distinctcounthllplus": _capped(4, 3_072, 20),
    **dict.fromkeys(("distinctcountthetasketch", "distinctcountrawthetasketch"), _capped(8, 16_384, 24)),
    "distinctcountcpcsketch": _capped(2, 1_300, 40),
    "distinctcountull": _capped(1, 4_096, 12),
    "distinctcountsmarthll": _capped(8, 32, _HLL_BYTES),
    **dict.fromkeys(("percentile", "percentilemv", "arrayagg", "listagg", "histogram"), _value_list),
    **dict.fromkeys(("percentileest", "percentileestmv"), _capped(24, 1_000, 32)),
    **dict.fromkeys(("percentiletdigest", "percentiletdigestmv", "percentilesmarttdigest"), _capped(16, 200, 32)),
    "percentilekll": _capped(8, 600, 20),
    "mode": lambda shape: 4 + shape.cardinality * (shape.value_bytes + 8),
}
_DEFAULT_SIZER = _fixed(8)
_PERCENTILE_FORM = re.compile(r"^(percentile(?:est|tdigest|kll|smarttdigest)?(?:mv)?)\d+(?:\.\d+)?$")


def aggregation_bytes(function: str, shape: ValueShape | None = None) -> int:
    """Serialised intermediate size of one aggregation (unknown functions count as one 8-byte value).

    ``PERCENTILE95`` and friends are sized as their base function.

    >>> aggregation_bytes("COUNT"), aggregation_bytes("DISTINCT_COUNT", ValueShape(rows=100, distinct=10))
    (8, 84)
    """
    name = canonical_function_name(function)
    match = _PERCENTILE_FORM.match(name)
    sizer = AGGREGATION_SIZERS.get(match.group(1) if match else name, _DEFAULT_SIZER)
    return sizer(shape or ValueShape())


@dataclass(frozen=True)
class FunctionShape:
    """One aggregation of a result and the shape of what it summarised (per group for group-by)."""

    function: str
    shape: ValueShape = field(default_factory=ValueShape)

    @property
    def bytes(self) -> int:
        """The function's intermediate size."""
        return aggregation_bytes(self.function, self.shape)


# -- the value forms ----------------------------------------------------------------------------

#: Fixed widths of stored types; variable-width types use :attr:`ColumnShape.avg_bytes`.
_FIXED_WIDTH: dict[DataType, int] = {
    DataType.INT: 4, DataType.LONG: 8, DataType.FLOAT: 4, DataType.DOUBLE: 8,
    DataType.BOOLEAN: 4, DataType.TIMESTAMP: 8,
}
#: Typical characters of a JSON-printed value of each fixed-width type (broker responses).
_JSON_WIDTH: dict[DataType, int] = {
    DataType.INT: 6, DataType.LONG: 11, DataType.FLOAT: 10, DataType.DOUBLE: 18,
    DataType.BOOLEAN: 5, DataType.TIMESTAMP: 21,
}


@dataclass(frozen=True)
class ColumnShape:
    """One result column: its type and, for variable-width types, the average value length in bytes."""

    data_type: DataType = DataType.LONG
    avg_bytes: int = 16

    @property
    def binary_bytes(self) -> int:
        """Bytes per value in the binary row block."""
        width = _FIXED_WIDTH.get(self.data_type)
        return width if width is not None else varint_bytes(self.avg_bytes) + self.avg_bytes

    @property
    def json_bytes(self) -> int:
        """Characters per value in the broker's JSON (strings quoted, plus a separating comma)."""
        width = _JSON_WIDTH.get(self.data_type)
        return 1 + (width if width is not None else self.avg_bytes + 2)


class ResultValue:
    """A cacheable value: it knows its uncompressed payload size (the RFC's ``SegmentCacheValue``)."""

    def payload_bytes(self) -> int:
        """Uncompressed payload bytes, without the header."""
        raise NotImplementedError

    def serialized_size_bytes(self, compression: Compression = NO_COMPRESSION) -> int:
        """The weight the cache charges: header plus the compressed payload (RFC §5.4)."""
        return HEADER_BYTES + compression.compressed(self.payload_bytes())


@dataclass(frozen=True)
class AggregationPart(ResultValue):
    """Aggregations without GROUP BY: one intermediate value per function."""

    functions: tuple[FunctionShape, ...]

    def payload_bytes(self) -> int:
        """Each function's value with a varint length prefix."""
        return sum(varint_bytes(f.bytes) + f.bytes for f in self.functions)


@dataclass(frozen=True)
class GroupByPart(ResultValue):
    """GROUP BY: a key dictionary, then one columnar array per function (RFC §5.3).

    ``key_bytes`` is the encoded size of one group key (all GROUP BY columns together); ``functions``
    carry the per-group shape. Eight bytes of trim metadata follow (groups kept, threshold).
    """

    num_groups: int
    key_bytes: int
    functions: tuple[FunctionShape, ...]

    def payload_bytes(self) -> int:
        """Count + keys (varint length + bytes each) + per-function arrays + trim metadata."""
        keys = self.num_groups * (varint_bytes(self.key_bytes) + self.key_bytes)
        values = self.num_groups * sum(f.bytes for f in self.functions)
        return varint_bytes(self.num_groups) + keys + values + 8


@dataclass(frozen=True)
class SelectionPart(ResultValue):
    """Selection without ORDER BY: up to the per-segment limit of rows, in a row block."""

    num_rows: int
    columns: tuple[ColumnShape, ...]

    def payload_bytes(self) -> int:
        """Row count, a column-type list, then rows of encoded values."""
        row = sum(c.binary_bytes for c in self.columns)
        return varint_bytes(self.num_rows) + len(self.columns) + self.num_rows * row


#: Statistics fields of a ``BrokerResponseNative`` JSON, with a typical printed width of each value.
_BROKER_FIELDS: dict[str, int] = {
    **dict.fromkeys(("numServersQueried", "numServersResponded", "numSegmentsQueried", "numSegmentsProcessed",
                     "numSegmentsMatched", "numConsumingSegmentsQueried", "numConsumingSegmentsProcessed",
                     "numConsumingSegmentsMatched", "numSegmentsPrunedByBroker", "numSegmentsPrunedByServer",
                     "numSegmentsPrunedInvalid", "numSegmentsPrunedByLimit", "numSegmentsPrunedByValue",
                     "explainPlanNumEmptyFilterSegments", "explainPlanNumMatchAllFilterSegments",
                     "numRowsResultSet", "brokerReduceTimeMs", "timeUsedMs"), 4),
    **dict.fromkeys(("numDocsScanned", "numEntriesScannedInFilter", "numEntriesScannedPostFilter", "totalDocs",
                     "offlineThreadCpuTimeNs", "realtimeThreadCpuTimeNs", "offlineSystemActivitiesCpuTimeNs",
                     "realtimeSystemActivitiesCpuTimeNs", "offlineResponseSerializationCpuTimeNs",
                     "realtimeResponseSerializationCpuTimeNs", "offlineTotalCpuTimeNs", "realtimeTotalCpuTimeNs",
                     "minConsumingFreshnessTimeMs"), 10),
    **dict.fromkeys(("numGroupsLimitReached", "maxRowsInJoinReached", "partialResult"), 5),
    **dict.fromkeys(("exceptions", "segmentStatistics", "traceInfo", "tablesQueried"), 2),
    **dict.fromkeys(("requestId", "brokerId"), 40),
}
#: ``{"resultTable":{"dataSchema":{"columnNames":[],"columnDataTypes":[]},"rows":[]}}`` and braces.
_BROKER_SKELETON = 80


@dataclass(frozen=True)
class BrokerResult(ResultValue):
    """A final broker response: the result table as JSON plus the statistics fields.

    ``column_name_bytes`` is the average length of a result column's name (``count(*)``, ``city``).
    """

    num_rows: int
    columns: tuple[ColumnShape, ...]
    column_name_bytes: int = 12

    def payload_bytes(self) -> int:
        """JSON size: skeleton + stats fields + schema (name and type per column) + rows."""
        stats = sum(len(name) + 4 + width for name, width in _BROKER_FIELDS.items())
        schema = len(self.columns) * (self.column_name_bytes + 3 + 12)
        rows = self.num_rows * (2 + sum(c.json_bytes for c in self.columns))
        return _BROKER_SKELETON + stats + schema + rows
