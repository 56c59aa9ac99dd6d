"""Schema-driven generation (``workload.generate.from_schema``): the rows have the user's own columns.

The generator's stream (which key, when it happened, when it arrived, which partition, which
segment) is drawn exactly as without a schema; this module turns it into the columns of the user's
Pinot schema, each in its declared type, single- or multi-valued:

- the **primary key** (``primaryKeyColumns``): the first column holds the key (``key_prefix`` + key id
  for text, the key id for numbers); further columns a fixed value per key;
- the **time column** (``segmentsConfig.timeColumnName``, else the first date-time field) and every other
  date-time field: the event time, floored to the field's ``granularity`` and written in its ``format``
  (``1:DAYS:EPOCH`` days, ``SIMPLE_DATE_FORMAT`` text in its zone, ``TIMESTAMP`` millis); a ``TIMESTAMP``
  dimension holds the event time too;
- **partition columns** of the table config (and the producer's): the key when it is the key, else a
  fixed value per key, hashed by the real partition function, so segments carry the partitions Pinot
  would record;
- the upsert **comparison column** holds the event time in its type; the **delete column**
  (``deleteRecordColumn``) the delete flag;
- other **dimensions**: ``cardinality`` values drawn uniform or Zipf, per row or per key; **metrics**: a
  distribution (lognormal, median 10, by default); multi-value columns 1 to ``max_values`` values.

Columns Pinot derives at ingestion (a schema's ``transformFunction``, a table's ``transformConfigs``) are
left to Pinot, and the manifest says so (``columns.left_to_pinot``); the time, key and partition
columns are always generated. The generator's bookkeeping columns move out of the user's way under
``$`` names (``$event_id``, ``$key_id``, ...; Pinot reserves ``$`` for its virtual columns), except
``segment_name`` and ``doc_id``, the layout's contract (``docs/data.md``).

Every value is a pure function of the row's event id or key id (or of its window's random stream), so
the output stays byte-identical whatever runs the tasks.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from workbench import defaults as D
from workbench.errors import InputError
from workbench.pinot.pruning.timeformat import DateTimeFormat, granularity_millis
from workbench.pinot.schema import FieldSpec, Schema, dotted
from workbench.pinot.table_config import TableConfig
from workbench.workload.draws import per_key, zipf_ranks
from workbench.workload.spec import ColumnSpec, GenerateSpec
from workbench.workload.timeline import rng_for, unit_floats

__all__ = ["ARROW_TYPES", "BOOKKEEPING", "CONTRACT_COLUMNS", "NUMERIC_TYPES", "UserColumn", "UserSchema",
           "build_user_schema"]

I64 = npt.NDArray[np.int64]
#: Pinot data type -> the Arrow type its generated values are written in.
ARROW_TYPES: dict[str, pa.DataType] = {
    "INT": pa.int32(), "LONG": pa.int64(), "FLOAT": pa.float32(), "DOUBLE": pa.float64(), "BOOLEAN": pa.bool_(),
    "TIMESTAMP": pa.timestamp("ms"), "STRING": pa.string(), "JSON": pa.string(), "BYTES": pa.binary(),
    "BIG_DECIMAL": pa.decimal128(38, 4),
}
#: Columns of the layout's contract that stay under their names beside the user's (a schema column named
#: like one is an error at ``validate``).
CONTRACT_COLUMNS = ("segment_name", "doc_id")
#: The generator's other bookkeeping columns and their names in schema-driven output.
BOOKKEEPING: dict[str, str] = {c: f"${c}" for c in ("event_id", "key_id", "event_time_ms", "ingest_time_ms",
                                                    "partition", "offset", "is_delete", "update_seq")}
NUMERIC_TYPES = ("INT", "LONG", "FLOAT", "DOUBLE", "BIG_DECIMAL")
_KEY_TYPES = ("STRING", "JSON", "BYTES", "INT", "LONG")
_SALT = 1_000
#: Roles whose values follow the stream, not a column's settings (``columns.NAME`` may not set them).
_FIXED_ROLES = {"key": "primary key column", "time": "date-time column", "comparison": "upsert comparison column",
                "delete": "upsert delete column"}
_METRIC_MEDIAN = 10.0
#: The random stream of metric values (after :mod:`~workbench.workload.context`'s streams 1-5).
STREAM_COLUMNS = 6


@dataclass(frozen=True)
class UserColumn:
    """One generated column: its Pinot name and type, its role and how its values are drawn.

    ``role`` is ``key`` (``key_index`` within the primary key), ``time`` (a date-time value of the event
    time), ``comparison``, ``delete``, ``per_key`` (a fixed value per key: partition columns, further
    key columns, ``per_key`` dimensions), ``dimension`` or ``metric``.
    """

    name: str
    data_type: str
    single_value: bool
    role: str
    salt: int
    settings: ColumnSpec
    cardinality: int
    key_index: int = 0
    time_format: DateTimeFormat | None = None
    granularity_ms: int = 1

    @property
    def arrow_type(self) -> pa.DataType:
        inner = ARROW_TYPES[self.data_type]
        return inner if self.single_value else pa.list_(inner)

    def literal(self, value: Any) -> str:
        """``value`` as a SQL literal of this column (quoted text, bare numbers)."""
        if isinstance(value, bytes):
            return f"'{value.hex()}'"
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, str):
            return "'" + value.replace("'", "''") + "'"
        return str(value)


@dataclass(frozen=True)
class UserSchema:
    """The user's schema resolved for generation (built once on the driver, shipped to every task)."""

    columns: tuple[UserColumn, ...]
    time_column: str
    primary_key: tuple[str, ...]
    key_prefix: str
    lookup_column: str | None
    comparison: str
    left_to_pinot: tuple[str, ...]
    _by_name: dict[str, UserColumn] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", {c.name: c for c in self.columns})

    def column(self, name: str) -> UserColumn | None:
        return self._by_name.get(name)

    @property
    def time(self) -> UserColumn:
        """The time column's generation settings."""
        return self._by_name[self.time_column]

    # -- values ----------------------------------------------------------------------------------
    def per_key_values(self, name: str, key_id: I64) -> npt.NDArray[Any]:
        """The values of a per-key column (a key column, a partition column) for these key ids."""
        column = self._by_name[name]
        if column.role == "key" and column.key_index == 0:
            if column.data_type in ("INT", "LONG"):
                return key_id.astype(np.int32 if column.data_type == "INT" else np.int64)
            if column.data_type == "BYTES":
                return np.asarray([int(k).to_bytes(8, "big") for k in key_id.tolist()], dtype=object)
            return np.char.add(self.key_prefix, key_id.astype(str))
        return _python_values(column, _indices(column, unit_floats(key_id, column.salt)))

    def key_literal(self, name: str, key_id: int) -> str:
        """The SQL literal of key ``key_id`` in column ``name`` (a lookup's point)."""
        value = self.per_key_values(name, np.array([key_id], dtype=np.int64))[0]
        return self._by_name[name].literal(value.item() if isinstance(value, np.generic) else value)

    def dimension_literals(self, name: str, u: npt.NDArray[np.float64]) -> list[str]:
        """SQL literals of column ``name``'s values drawn by its own distribution from uniforms ``u``."""
        column = self._by_name[name]
        values = _python_values(column, _indices(column, u))
        return [column.literal(v.item() if isinstance(v, np.generic) else v) for v in values]

    def time_literal(self, millis: int, *, ceil: bool = False) -> str:
        """Epoch millis as a literal of the time column: floored to its grid, or rounded up (``ceil``)."""
        column = self.time
        assert column.time_format is not None
        step = max(column.granularity_ms, column.time_format.granule_ms)
        moment = millis + step - 1 if ceil else millis
        floored = (moment // column.granularity_ms) * column.granularity_ms
        value = column.time_format.format_millis(np.array([floored], dtype=np.int64))[0]
        return column.literal(value.item() if isinstance(value, np.generic) else value)

    def time_text(self, millis: I64) -> list[str]:
        """The time column's values for event times ``millis``, as text (offline segment names hold them)."""
        column = self.time
        assert column.time_format is not None
        floored = np.floor_divide(millis, column.granularity_ms) * column.granularity_ms
        return [str(v) for v in column.time_format.format_millis(floored).tolist()]

    def floor_time(self, millis: I64) -> I64:
        """Epoch millis of the time column's values for event times ``millis`` (segment time ranges)."""
        column = self.time
        assert column.time_format is not None
        return column.time_format.floor_millis(millis, column.granularity_ms)

    def events_schema(self) -> pa.Schema:
        """The ``events/`` schema of schema-driven output: the user's columns, the contract's
        ``segment_name`` and ``doc_id``, then the generator's bookkeeping under ``$`` names."""
        from workbench.workload.schema import EVENTS_SCHEMA

        fields = [pa.field(c.name, c.arrow_type) for c in self.columns]
        fields += [EVENTS_SCHEMA.field(c) for c in CONTRACT_COLUMNS]
        fields += [pa.field(name, EVENTS_SCHEMA.field(c).type) for c, name in BOOKKEEPING.items()]
        return pa.schema(fields)

    def row_bytes(self, table: pa.Table) -> I64:
        """Bytes of each row's values of the user's columns (fixed widths plus text lengths): a size proxy."""
        total = np.zeros(table.num_rows, dtype=np.int64)
        for column in self.columns:
            array = table[column.name].combine_chunks()
            if not column.single_value:
                array, counts = pc.list_flatten(array), pc.list_value_length(array).to_numpy(zero_copy_only=False)
                owner = np.repeat(np.arange(table.num_rows), counts)
            else:
                owner = None
            if pa.types.is_string(array.type) or pa.types.is_binary(array.type):
                sizes = pc.binary_length(array).to_numpy(zero_copy_only=False).astype(np.int64)
            else:
                sizes = np.full(len(array), max(1, array.type.bit_width // 8), dtype=np.int64)
            total += sizes if owner is None else np.bincount(owner, weights=sizes, minlength=table.num_rows).astype(
                np.int64)
        return total

    def arrays(self, rows: Mapping[str, npt.NDArray[Any]], seed: int, window: int) -> dict[str, pa.Array]:
        """Every generated column for rows with these generator columns (``event_id``, ``key_id``,
        ``event_time_ms``, ``is_delete``), in schema order; metrics draw from the window's own stream."""
        out: dict[str, pa.Array] = {}
        for column in self.columns:
            rng = rng_for(seed, STREAM_COLUMNS, window * 4096 + column.salt % 4096)
            out[column.name] = _ROLES[column.role](self, column, rows, rng)
        return out


# -- building it ------------------------------------------------------------------------------------
def _problem(schema_key: str, spec: FieldSpec, problem: str) -> InputError:
    return InputError(f"{schema_key}.{dotted(spec.where)}" if spec.where else schema_key, problem)


def _transformed(schema: Schema, table: TableConfig | None) -> set[str]:
    """Columns Pinot computes at ingestion: a schema ``transformFunction`` or a table ``transformConfigs``."""
    out = {f.name for f in schema.fields if f.transform_function}
    if table is not None:
        configs = table.section("ingestionConfig").get("transformConfigs") or []
        out |= {str(c.get("columnName")) for c in configs if isinstance(c, Mapping)}
    return out


def _time_column(schema: Schema, table: TableConfig | None, schema_key: str) -> str:
    name = table.time_column_name if table is not None else None
    if name is None:
        name = next((f.name for f in schema.fields if f.field_type in ("DATE_TIME", "TIME")), None)
    if name is None or schema.field(name) is None:
        raise InputError(schema_key, "schema-driven generation needs a time column: the table's "
                                     "segmentsConfig.timeColumnName or a dateTimeFieldSpecs entry in the schema")
    return name


def _role(spec: FieldSpec, name_roles: Mapping[str, str], settings: ColumnSpec) -> str:
    if spec.name in name_roles:
        return name_roles[spec.name]
    if spec.field_type in ("DATE_TIME", "TIME") or spec.data_type == "TIMESTAMP":
        return "time"
    if settings.per_key:
        return "per_key"
    return "metric" if spec.field_type == "METRIC" else "dimension"


def _time_format(spec: FieldSpec, schema_key: str) -> tuple[DateTimeFormat, int]:
    if spec.data_type == "TIMESTAMP" or spec.field_type not in ("DATE_TIME", "TIME"):
        return DateTimeFormat("TIMESTAMP"), 1
    try:
        if spec.field_type == "TIME":  # the legacy timeFieldSpec: timeType is the unit, timeFormat EPOCH
            return DateTimeFormat("EPOCH", unit=spec.granularity or "MILLISECONDS"), 1
        return DateTimeFormat.for_field(spec.format, spec.data_type), granularity_millis(spec.granularity)
    except (InputError, ValueError) as exc:
        raise _problem(schema_key, spec, f"column {spec.name!r}: the generator cannot produce its format "
                                         f"({getattr(exc, 'problem', exc)})") from None


def build_user_schema(schema: Schema, table: TableConfig | None, spec: GenerateSpec,
                      schema_key: str = "schema") -> UserSchema:
    """Resolve ``schema`` against the table config and ``spec.columns``; one error names a column the
    generator cannot honour (its type, its format, a setting that names no column).

    Raises
    ------
    InputError
        At ``schema.<field path>`` (or ``workload.generate.columns.NAME``).
    """
    for name in spec.columns:
        if schema.field(name) is None:
            raise InputError(f"workload.generate.columns.{name}",
                             f"names {name!r}, which is not a column of the schema; its columns: "
                             f"{', '.join(schema.data_types)}")
    time_column = _time_column(schema, table, schema_key)
    upsert = table.upsert if table is not None else None
    roles: dict[str, str] = {}
    if upsert is not None:
        roles.update({c: "comparison" for c in upsert.comparison_columns if c != time_column})
        if upsert.delete_record_column:
            roles[upsert.delete_record_column] = "delete"
    partitions = list(table.column_partition_map) if table is not None else []
    if spec.partitioning.column:
        partitions.append(spec.partitioning.column)
    keys = schema.primary_key_columns
    roles.update({c: "per_key" for c in partitions if c not in keys[:1]})
    roles.update({k: "key" for k in keys})
    roles[time_column] = "time"
    needed = {time_column, *keys, *partitions, *roles}
    left = _transformed(schema, table) - needed
    columns = []
    for index, fs in enumerate(schema.fields):
        if fs.name in left:
            continue
        if fs.field_type == "COMPLEX" or fs.data_type not in ARROW_TYPES:
            raise _problem(schema_key, fs, f"column {fs.name!r}: the generator cannot produce {fs.data_type} "
                                           f"({fs.field_type}) values; drop it from the schema, or generate the "
                                           "generator's own columns (from_schema: false)")
        if fs.name.startswith("$"):
            raise _problem(schema_key, fs, f"column {fs.name!r}: names starting with '$' are Pinot's virtual columns")
        settings = spec.column(fs.name)
        role = _role(fs, roles, settings)
        if fs.name in spec.columns and role in _FIXED_ROLES:
            raise InputError(f"workload.generate.columns.{fs.name}",
                             f"sets how {fs.name!r} is drawn, but it is the table's {_FIXED_ROLES[role]}, which "
                             "follows the generated stream (docs/data.md); remove this entry")
        if role == "key" and fs.data_type not in _KEY_TYPES and keys.index(fs.name) == 0:
            raise _problem(schema_key, fs, f"primary key column {fs.name!r}: the generator writes keys as "
                                           f"{', '.join(_KEY_TYPES)}, not {fs.data_type}")
        if role in ("time", "comparison") and fs.name in partitions:
            raise _problem(schema_key, fs, f"column {fs.name!r}: the table config (or workload.generate.partitioning"
                                           ") partitions by this time column, which the generator cannot: its "
                                           "values follow the event time, not the key")
        fmt, grain = _time_format(fs, schema_key) if role == "time" else (None, 1)
        default = 2 if fs.data_type == "BOOLEAN" else D.GENERATE_COLUMN_CARDINALITY
        columns.append(UserColumn(fs.name, fs.data_type, fs.single_value_field or role in ("key", "time"), role,
                                  _SALT + index, settings, settings.cardinality or default,
                                  keys.index(fs.name) if role == "key" else 0, fmt, grain))
    by_name = {c.name: c for c in columns}
    lookup = keys[0] if keys else next((p for p in partitions if p in by_name), None)
    compared = (upsert.comparison_columns[0] if upsert is not None and upsert.comparison_columns else time_column)
    if compared not in by_name:
        raise InputError(schema_key, f"has no column {compared!r}, which the table's upsertConfig.comparisonColumns "
                                     "names; add it to the schema or compare by the time column")
    comparison = compared if pa.types.is_integer(by_name[compared].arrow_type) or pa.types.is_floating(
        by_name[compared].arrow_type) or pa.types.is_timestamp(by_name[compared].arrow_type) else BOOKKEEPING[
        "event_time_ms"]
    return UserSchema(tuple(columns), time_column, tuple(keys), spec.key_prefix, lookup, comparison,
                      tuple(sorted(left)))


# -- values ---------------------------------------------------------------------------------------------
def _indices(column: UserColumn, u: npt.NDArray[np.float64]) -> I64:
    n = column.cardinality
    if column.settings.distribution == "zipf":
        return zipf_ranks(u, n, column.settings.zipf_s)
    return np.minimum(np.floor(u * n).astype(np.int64), n - 1)


def _python_values(column: UserColumn, index: I64) -> npt.NDArray[Any]:
    """Value number ``index`` of a dimension, in the column's type (as numpy values)."""
    kind = column.data_type
    if kind in ("STRING",):
        return np.char.add(f"{column.name}_", index.astype(str))
    if kind == "JSON":
        return np.asarray([json.dumps({column.name: int(i)}) for i in index.tolist()], dtype=object)
    if kind == "BYTES":
        return np.asarray([int(i).to_bytes(8, "big") for i in index.tolist()], dtype=object)
    if kind == "BOOLEAN":
        flags: npt.NDArray[np.bool_] = (index % 2) == 1
        return flags
    if kind in ("FLOAT", "DOUBLE", "BIG_DECIMAL"):
        return index.astype(np.float64)
    return index.astype(np.int32 if kind == "INT" else np.int64)


def _typed(column: UserColumn, values: npt.NDArray[Any]) -> pa.Array:
    target = ARROW_TYPES[column.data_type]
    if column.data_type == "BIG_DECIMAL":
        return pc.cast(pa.array(np.round(values.astype(np.float64), 4)), target, safe=False)
    if column.data_type == "TIMESTAMP":
        return pa.array(values.astype(np.int64), pa.int64()).cast(target)
    return pa.array(values, target)


_TEXT = ("STRING", "JSON", "BYTES")


def _arrow_values(column: UserColumn, index: I64) -> pa.Array:
    """Value number ``index`` of a dimension as Arrow: text taken from the column's vocabulary (built
    once per call, ``cardinality`` strings) rather than formatted per row."""
    if column.data_type in _TEXT:
        vocab = _typed(column, _python_values(column, np.arange(column.cardinality, dtype=np.int64)))
        return vocab.take(pa.array(index))
    return _typed(column, _python_values(column, index))


def _row_uniforms(rows: Mapping[str, npt.NDArray[Any]], column: UserColumn) -> npt.NDArray[np.float64]:
    per_key = column.settings.per_key
    return unit_floats(rows["key_id"] if per_key else rows["event_id"], column.salt)


def _multi(column: UserColumn, rows: Mapping[str, npt.NDArray[Any]],
           make: Callable[[npt.NDArray[np.float64]], pa.Array]) -> pa.Array:
    """A multi-value column: 1 to ``max_values`` values per row, each drawn like a single value."""
    ids = rows["key_id"] if column.settings.per_key else rows["event_id"]
    most = column.settings.max_values
    counts = 1 + np.minimum(np.floor(unit_floats(ids, column.salt + 7) * most).astype(np.int64), most - 1)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    owner = np.repeat(np.arange(len(ids)), counts)
    position = np.arange(int(offsets[-1])) - offsets[:-1][owner]
    values = make(unit_floats(ids[owner] * 64 + position, column.salt))
    return pa.ListArray.from_arrays(pa.array(offsets), values)


def _key(us: UserSchema, column: UserColumn, rows: Mapping[str, Any], rng: np.random.Generator) -> pa.Array:
    if column.key_index == 0 and column.data_type in ("STRING", "JSON"):  # what per_key_values gives, in Arrow
        return per_key(rows["key_id"], lambda keys: pc.binary_join_element_wise(
            us.key_prefix, pc.cast(pa.array(keys), pa.string()), ""))
    return per_key(rows["key_id"], lambda keys: _typed(column, us.per_key_values(column.name, keys)))


def _time(us: UserSchema, column: UserColumn, rows: Mapping[str, Any], rng: np.random.Generator) -> pa.Array:
    assert column.time_format is not None
    millis = np.floor_divide(rows["event_time_ms"], column.granularity_ms) * column.granularity_ms
    values = column.time_format.format_millis(millis)
    if column.data_type in ("STRING", "JSON"):
        values = values.astype(str)
    return _typed(column, values)


def _comparison(us: UserSchema, column: UserColumn, rows: Mapping[str, Any], rng: np.random.Generator) -> pa.Array:
    values = rows["event_time_ms"]
    return _typed(column, values.astype(str) if column.data_type in ("STRING", "JSON") else values)


def _delete(us: UserSchema, column: UserColumn, rows: Mapping[str, Any], rng: np.random.Generator) -> pa.Array:
    flags = rows["is_delete"].astype(bool)
    if column.data_type in ("STRING", "JSON"):
        return pa.array(np.where(flags, "true", "false"), pa.string())
    if column.data_type == "BOOLEAN":
        return pa.array(flags, pa.bool_())
    return _typed(column, flags.astype(np.int64))


def _per_key(us: UserSchema, column: UserColumn, rows: Mapping[str, Any], rng: np.random.Generator) -> pa.Array:
    if not column.single_value:
        return _multi(column, rows, lambda u: _arrow_values(column, _indices(column, u)))
    return per_key(rows["key_id"], lambda keys: _arrow_values(column, _indices(column, unit_floats(keys, column.salt))))


def _dimension(us: UserSchema, column: UserColumn, rows: Mapping[str, Any], rng: np.random.Generator) -> pa.Array:
    if not column.single_value:
        return _multi(column, rows, lambda u: _arrow_values(column, _indices(column, u)))
    return _arrow_values(column, _indices(column, _row_uniforms(rows, column)))


def _metric(us: UserSchema, column: UserColumn, rows: Mapping[str, Any], rng: np.random.Generator) -> pa.Array:
    if column.settings.cardinality is not None or column.data_type not in NUMERIC_TYPES:
        return _dimension(us, column, rows, rng)
    if not column.single_value:
        return _multi(column, rows, lambda u: _typed(column, _metric_values(column, len(u), rng)))
    return _typed(column, _metric_values(column, len(rows["event_id"]), rng))


def _metric_values(column: UserColumn, count: int, rng: np.random.Generator) -> npt.NDArray[Any]:
    """``count`` draws of the column's ``values`` distribution (lognormal, median 10, by default)."""
    dist = column.settings.values
    values = dist.sample(rng, count) if dist is not None else rng.lognormal(math.log(_METRIC_MEDIAN), 1.0, count)
    return _rounded(column, np.asarray(values, dtype=np.float64))


def _rounded(column: UserColumn, values: npt.NDArray[np.float64]) -> npt.NDArray[Any]:
    if column.data_type in ("INT", "LONG"):
        return np.rint(values).astype(np.int32 if column.data_type == "INT" else np.int64)
    return values


_ROLES: dict[str, Callable[[UserSchema, UserColumn, Mapping[str, Any], np.random.Generator], pa.Array]] = {
    "key": _key, "time": _time, "comparison": _comparison, "delete": _delete, "per_key": _per_key,
    "dimension": _dimension, "metric": _metric,
}
