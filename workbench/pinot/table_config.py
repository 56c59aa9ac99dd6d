"""Pinot table configs, read as Pinot's own JSON.

A :class:`TableConfig` wraps the user's JSON exactly as they would ``POST /tables`` it. Every field is
kept (real configs carry dozens the workbench does not model), and the parts the workbench *does*
model are exposed as typed, read-only accessors named after Pinot's keys. Validation here mirrors
Pinot's own ``TableConfigUtils`` where the workbench depends on the rule (for example an upsert table
must route with ``strictReplicaGroup``); anything else Pinot would accept is accepted.

>>> tc = TableConfig.from_json({"tableName": "events", "tableType": "OFFLINE",
...                             "segmentsConfig": {"replication": "3", "timeColumnName": "ts"}})
>>> tc.table_name_with_type, tc.replication, tc.time_column_name, tc.instance_selector_type
('events_OFFLINE', 3, 'ts', 'balanced')
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.errors import InputError, TableConfigError
from workbench.frozen import FrozenMap, freeze_json, thaw_json
from workbench.io.reading import load_json, read_text
from workbench.pinot.table_fields import check_fields
from workbench.pinot.upsert.config import UpsertConfig

__all__ = ["ColumnPartitionConfig", "TableConfig", "freeze_json", "load_table_config", "thaw_json"]

TABLE_TYPES = ("OFFLINE", "REALTIME")


@dataclass(frozen=True)
class ColumnPartitionConfig:
    """One entry of ``tableIndexConfig.segmentPartitionConfig.columnPartitionMap``."""

    function_name: str
    num_partitions: int
    function_config: Mapping[str, str] | None = None


def _int_field(raw: Any, where: str, minimum: int | None = None) -> int:
    """Read a Pinot integer field; Pinot's Jackson accepts numeric strings such as ``"3"``."""
    try:
        if isinstance(raw, bool):
            raise ValueError
        value = int(raw)
        if isinstance(raw, float) and raw != value:
            raise ValueError
    except (TypeError, ValueError):
        raise TableConfigError(where, f"must be an integer, got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise TableConfigError(where, f"must be at least {minimum}, got {value}")
    return value


@dataclass(frozen=True)
class TableConfig:
    """A Pinot table config: the user's JSON, kept whole, with typed accessors for what we model.

    Build one with :meth:`from_json` (a mapping or JSON text) or :func:`load_table_config` (a file).
    """

    raw: Mapping[str, Any] = field(repr=False)
    source: str = "<table config>"

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | str, source: str = "<table config>") -> TableConfig:
        """Parse and validate a table config given as a mapping or as JSON text."""
        if isinstance(data, str):
            data = load_json(data, source, TableConfigError)
        if not isinstance(data, Mapping):
            raise TableConfigError(source, f"a table config must be a JSON object, got {type(data).__name__}")
        config = cls(raw=freeze_json(data), source=source)
        config.validate()
        return config

    # -- identity ---------------------------------------------------------------------------------
    @property
    def table_name(self) -> str:
        """The raw table name (``tableName`` with any ``_OFFLINE``/``_REALTIME`` suffix removed)."""
        name = str(self.raw["tableName"])
        for suffix in ("_OFFLINE", "_REALTIME"):
            if name.endswith(suffix):
                return name[: -len(suffix)]
        return name

    @property
    def table_type(self) -> str:
        """``OFFLINE`` or ``REALTIME``."""
        return str(self.raw["tableType"]).upper()

    @property
    def table_name_with_type(self) -> str:
        """``<raw>_<TYPE>``, the name Pinot hashes for instance-assignment rotation."""
        return f"{self.table_name}_{self.table_type}"

    def section(self, *path: str) -> Mapping[str, Any]:
        """Return the nested object at ``path`` or an empty mapping when any level is absent."""
        node: Any = self.raw
        for key in path:
            node = node.get(key) if isinstance(node, Mapping) else None
            if node is None:
                return FrozenMap({})
        return node if isinstance(node, Mapping) else FrozenMap({})

    # -- segmentsConfig ---------------------------------------------------------------------------
    @property
    def replication(self) -> int:
        """``segmentsConfig.replication`` (Pinot default 1); realtime tables may use ``replicasPerPartition``."""
        seg = self.section("segmentsConfig")
        raw = seg.get("replication")
        if raw is None and self.table_type == "REALTIME":
            raw = seg.get("replicasPerPartition")
        return 1 if raw is None else _int_field(raw, "segmentsConfig.replication", minimum=1)

    @property
    def time_column_name(self) -> str | None:
        """``segmentsConfig.timeColumnName``, the column the time pruner and TTLs use."""
        value = self.section("segmentsConfig").get("timeColumnName")
        return None if value in (None, "") else str(value)

    # -- routing ----------------------------------------------------------------------------------
    @property
    def instance_selector_type(self) -> str:
        """``routing.instanceSelectorType`` (``balanced`` when unset), honouring the legacy builder name."""
        routing = self.section("routing")
        value = routing.get("instanceSelectorType")
        if value:
            return str(value)
        if routing.get("routingTableBuilderName") in ("PartitionAwareOffline", "PartitionAwareRealtime"):
            return "replicaGroup"
        return "balanced"

    @property
    def segment_pruner_types(self) -> tuple[str, ...]:
        """``routing.segmentPrunerTypes`` lower-cased, as Pinot matches them case-insensitively."""
        values = self.section("routing").get("segmentPrunerTypes") or ()
        return tuple(str(v).lower() for v in values)

    @property
    def use_fixed_replica(self) -> bool:
        """``routing.useFixedReplica`` (table level; default false)."""
        return bool(self.section("routing").get("useFixedReplica", False))

    # -- encoding ---------------------------------------------------------------------------------
    @property
    def no_dictionary_columns(self) -> frozenset[str]:
        """The columns stored raw, without a dictionary: ``tableIndexConfig.noDictionaryColumns`` and the
        ``fieldConfigList`` entries with ``encodingType`` ``RAW``. Every other column has one (Pinot's default)."""
        listed = self.section("tableIndexConfig").get("noDictionaryColumns") or ()
        if isinstance(listed, str) or not all(isinstance(c, str) for c in listed):
            raise TableConfigError("tableIndexConfig.noDictionaryColumns", f"must be a list of column names, got "
                                                                           f"{thaw_json(listed)!r}")
        fields = self.raw.get("fieldConfigList") or ()
        raw = {str(f.get("name")) for f in fields
               if isinstance(f, Mapping) and str(f.get("encodingType", "")).upper() == "RAW"}
        return frozenset(listed) | frozenset(raw)

    @property
    def filter_index_columns(self) -> frozenset[str]:
        """The columns whose predicates an index answers without reading each row: ``tableIndexConfig``'s
        ``invertedIndexColumns``, ``sortedColumn`` and ``rangeIndexColumns``, and ``fieldConfigList`` entries
        whose ``indexTypes`` or ``indexes`` name an inverted, sorted or range index."""
        index = self.section("tableIndexConfig")
        out: set[str] = set()
        for key in ("invertedIndexColumns", "sortedColumn", "rangeIndexColumns"):
            listed = index.get(key) or ()
            out.update([listed] if isinstance(listed, str) else (str(c) for c in listed))
        for f in self.raw.get("fieldConfigList") or ():
            if not isinstance(f, Mapping):
                continue
            kinds = {str(t).lower() for t in (f.get("indexTypes") or ())} | {
                str(t).lower() for t in (f.get("indexes") or {})}
            if kinds & {"inverted", "sorted", "range"}:
                out.add(str(f.get("name")))
        return frozenset(out)

    # -- partitioning -----------------------------------------------------------------------------
    @property
    def column_partition_map(self) -> Mapping[str, ColumnPartitionConfig]:
        """``tableIndexConfig.segmentPartitionConfig.columnPartitionMap`` as typed entries."""
        cmap = self.section("tableIndexConfig", "segmentPartitionConfig", "columnPartitionMap")
        out: dict[str, ColumnPartitionConfig] = {}
        for column, entry in cmap.items():
            where = f"tableIndexConfig.segmentPartitionConfig.columnPartitionMap.{column}"
            if not isinstance(entry, Mapping) or "functionName" not in entry:
                raise TableConfigError(where, "must be an object with functionName and numPartitions")
            n = _int_field(entry.get("numPartitions"), f"{where}.numPartitions", minimum=1)
            fc = entry.get("functionConfig")
            out[column] = ColumnPartitionConfig(str(entry["functionName"]), n, fc)
        return FrozenMap(out)

    # -- upsert / dedup ---------------------------------------------------------------------------
    @property
    def query_timeout_ms(self) -> float | None:
        """``queryConfig.timeoutMs``: the table's query timeout (ms), which beats the broker default."""
        raw = self.section("queryConfig").get("timeoutMs")
        if raw is None:
            return None
        try:
            value = float(raw)
        except (TypeError, ValueError):
            raise TableConfigError("queryConfig.timeoutMs", f"must be a number of ms, got {raw!r}") from None
        if value <= 0:
            raise TableConfigError("queryConfig.timeoutMs", f"must be positive, got {raw!r}")
        return value

    @functools.cached_property
    def upsert(self) -> UpsertConfig | None:
        """``upsertConfig`` typed, with Pinot's defaults, when present and its mode is not ``NONE``.

        Read once (validation reads it when the config is loaded, so a bad value fails then).
        """
        cfg = self.raw.get("upsertConfig")
        if not isinstance(cfg, Mapping):
            return None
        typed = UpsertConfig.from_json(cfg)
        return None if typed.mode == "NONE" else typed

    @property
    def is_upsert(self) -> bool:
        """True when the table is an upsert table (``upsertConfig.mode`` FULL or PARTIAL)."""
        return self.upsert is not None

    @property
    def is_dedup(self) -> bool:
        """True when ``dedupConfig.dedupEnabled`` is set."""
        cfg = self.raw.get("dedupConfig")
        return isinstance(cfg, Mapping) and bool(cfg.get("dedupEnabled", False))

    @property
    def instance_assignment_config_map(self) -> Mapping[str, Any]:
        """``instanceAssignmentConfigMap`` keyed by OFFLINE / CONSUMING / COMPLETED (or a tier)."""
        return self.section("instanceAssignmentConfigMap")

    # -- validation -------------------------------------------------------------------------------
    def validate(self) -> None:
        """Check the type and value of every field we read (:mod:`.table_fields`), then the rules
        Pinot's ``TableConfigUtils`` applies to the parts we model."""
        if "tableName" not in self.raw or not str(self.raw["tableName"]).strip():
            raise TableConfigError("tableName", "is required (the raw table name, e.g. \"events\")")
        if str(self.raw.get("tableType", "")).upper() not in TABLE_TYPES:
            raise TableConfigError("tableType", f"must be OFFLINE or REALTIME, got {self.raw.get('tableType')!r}")
        check_fields(self.raw)
        _ = self.replication, self.column_partition_map, self.query_timeout_ms, self.upsert
        if self.is_upsert or self.is_dedup:
            kind = "upsert" if self.is_upsert else "dedup"
            if self.table_type != "REALTIME":
                raise TableConfigError("tableType", f"{kind} is only supported for REALTIME tables")
            if self.is_upsert and self.instance_selector_type not in ("strictReplicaGroup", "multiStageReplicaGroup"):
                raise TableConfigError(
                    "routing.instanceSelectorType",
                    "an upsert table must route with strictReplicaGroup or multiStageReplicaGroup "
                    f"(Pinot's TableConfigUtils rule), got {self.instance_selector_type!r}",
                )

    def to_json(self) -> dict[str, Any]:
        """The config as plain JSON-ready data, unknown Pinot fields included."""
        return dict(thaw_json(self.raw))


def load_table_config(path: str | Path) -> TableConfig:
    """Read a Pinot table config JSON file (the file you would ``POST /tables``)."""
    p = Path(path)
    try:
        text = read_text(p, what="table config", limit_name="document_bytes")
    except InputError as exc:
        raise TableConfigError(exc.where, exc.problem) from None
    return TableConfig.from_json(text, source=str(p))
