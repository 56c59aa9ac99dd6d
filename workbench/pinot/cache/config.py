"""Configuration of the broker and server result caches, named after the RFC's properties (§6).

Nothing here exists in Pinot yet (the RFC, apache/pinot#16584, is unmerged), so the defaults are the
RFC's proposed ones. Both caches are **disabled by default**, as the RFC proposes; a scenario turns
them on. Each config can be read from the RFC's property names with ``from_properties``:

>>> cfg = ServerCacheConfig.from_properties({
...     "pinot.server.segment.query.cache.enabled": "true",
...     "pinot.server.segment.query.cache.max.bytes": "64MB",
...     "pinot.server.segment.query.cache.enable.realtime.consuming": "true"})
>>> cfg.enabled, cfg.max_bytes, cfg.enable_realtime_consuming, cfg.disable_for_upsert
(True, 67108864, True, True)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, TypeVar

from workbench.frozen import FrozenMap
from workbench.pinot.cache.sizing import Compression
from workbench.units import parse_size

__all__ = ["BrokerCacheConfig", "ResultCacheConfig", "ServerCacheConfig", "TableCacheOverride"]

_C = TypeVar("_C", bound="ResultCacheConfig")
_MIB = 1024 * 1024


@dataclass(frozen=True)
class TableCacheOverride:
    """Per-table overrides (RFC §6 ``tableConfig.ingestionConfig.queryCache.*``); ``None`` keeps the
    cache-wide value. ``max_bytes`` is a per-table limit inside the shared cache."""

    enabled: bool | None = None
    max_bytes: int | None = None
    ttl_ms: float | None = None


def _frozen_overrides() -> Mapping[str, TableCacheOverride]:
    return FrozenMap({})


@dataclass(frozen=True)
class ResultCacheConfig:
    """Settings both caches share.

    Parameters
    ----------
    enabled
        ``...cache.enabled``; off by default, as the RFC proposes.
    max_bytes
        ``...cache.max.bytes``: capacity, charged by serialised (compressed) size.
    ttl_ms
        ``...cache.ttl.ms``: TTL after write; ``None`` for none.
    compression
        ``...cache.compress``: codec and ratio applied to payloads (:class:`~.sizing.Compression`).
    singleflight
        ``...cache.singleflight.enabled``: compute concurrent misses of one key once.
    stale_while_revalidate_ms
        ``...stale_while_revalidate.ms``: serve expired entries this long while one refresh runs.
    purge_on_schema_change
        Bulk-remove a table's entries on schema or table-config change (the RFC's "optionally
        bulk-invalidate by table"); keys carry the epochs either way, so old entries can never hit.
    table_overrides
        Per-table overrides, keyed by table name (raw for the broker, with type for servers).
    """

    enabled: bool = False
    max_bytes: int = 512 * _MIB
    ttl_ms: float | None = 300_000.0
    compression: Compression = field(default_factory=lambda: Compression("lz4"))
    singleflight: bool = True
    stale_while_revalidate_ms: float = 0.0
    purge_on_schema_change: bool = True
    table_overrides: Mapping[str, TableCacheOverride] = field(default_factory=_frozen_overrides)

    #: RFC property prefix, set by each subclass.
    PREFIX = ""

    def __post_init__(self) -> None:
        if self.max_bytes < 0:
            raise ValueError(f"max_bytes must not be negative, got {self.max_bytes}")
        if self.stale_while_revalidate_ms < 0:
            raise ValueError(f"stale_while_revalidate_ms must not be negative, got {self.stale_while_revalidate_ms}")
        object.__setattr__(self, "table_overrides", FrozenMap(dict(self.table_overrides)))

    @property
    def safety_gates_open(self) -> bool:
        """True when a switch lets mutable data in, so hits must be checked for outdated answers."""
        return False

    def table_limits(self) -> dict[str, int]:
        """Per-table byte limits from the overrides."""
        return {t: o.max_bytes for t, o in self.table_overrides.items() if o.max_bytes is not None}

    def enabled_for(self, table: str) -> bool:
        """Whether caching is on for ``table`` (its override, else the cache-wide switch)."""
        override = self.table_overrides.get(table)
        return self.enabled if override is None or override.enabled is None else override.enabled

    def ttl_for(self, table: str) -> float | None:
        """The TTL of ``table``'s entries (its override, else the cache-wide TTL)."""
        override = self.table_overrides.get(table)
        return self.ttl_ms if override is None or override.ttl_ms is None else override.ttl_ms

    @classmethod
    def from_properties(cls: type[_C], properties: Mapping[str, str]) -> _C:
        """Read the RFC's property names under :attr:`PREFIX`; unknown keys there are an error."""
        values: dict[str, Any] = {}
        for key, raw in properties.items():
            if not key.startswith(cls.PREFIX):
                continue
            suffix = key[len(cls.PREFIX):]
            if suffix not in _PROPERTIES or _PROPERTIES[suffix][0] not in {f.name for f in fields(cls)}:
                raise ValueError(f"{key}: unknown cache property; known: {', '.join(sorted(_PROPERTIES))}")
            name, parse = _PROPERTIES[suffix]
            values[name] = parse(raw)
        return replace(cls(), **values)


def _boolean(text: str) -> bool:
    return text.strip().lower() == "true"


def _ttl(text: str) -> float | None:
    value = float(text)
    return None if value <= 0 else value


def _compression(text: str) -> Compression:
    return Compression(text.strip().lower())


#: RFC property suffix -> (config field, parser).
_PROPERTIES: dict[str, tuple[str, Callable[[str], Any]]] = {
    "enabled": ("enabled", _boolean),
    "max.bytes": ("max_bytes", parse_size),
    "ttl.ms": ("ttl_ms", _ttl),
    "compress": ("compression", _compression),
    "singleflight.enabled": ("singleflight", _boolean),
    "stale_while_revalidate.ms": ("stale_while_revalidate_ms", float),
    "enable.offline": ("enable_offline", _boolean),
    "enable.realtime.sealed": ("enable_realtime_sealed", _boolean),
    "enable.realtime.consuming": ("enable_realtime_consuming", _boolean),
    "disable.for.upsert": ("disable_for_upsert", _boolean),
    # The workbench's experiment switches (not RFC properties): cache what the safety gates forbid,
    # so the model can count the outdated answers that would follow.
    "cache.consuming": ("cache_consuming", _boolean),
    "cache.upsert": ("cache_upsert", _boolean),
}


@dataclass(frozen=True)
class BrokerCacheConfig(ResultCacheConfig):
    """The broker result cache (RFC §6.1), plus the two experiment switches.

    Parameters
    ----------
    cache_consuming
        Cache results that read consuming segments. The RFC forbids it; with it on, the model counts
        the answers that were outdated when served.
    cache_upsert
        Cache results of upsert tables (same caveat).
    """

    cache_consuming: bool = False
    cache_upsert: bool = False

    PREFIX = "pinot.broker.query.cache."

    @property
    def safety_gates_open(self) -> bool:
        """True when an answer can be outdated (so hits must be checked against data versions)."""
        return self.cache_consuming or self.cache_upsert


@dataclass(frozen=True)
class ServerCacheConfig(ResultCacheConfig):
    """The server segment result cache (RFC §6.2).

    Parameters
    ----------
    enable_offline, enable_realtime_sealed
        Cache partial results of offline / sealed realtime segments (both on).
    enable_realtime_consuming
        Cache consuming segments (off, as the RFC proposes; an experiment switch).
    disable_for_upsert
        Keep upsert tables out (on, as the RFC proposes; turning it off is an experiment).
    consuming_key_includes_offset
        Put a consuming segment's end offset in its key (the RFC's design): every ingested row then
        changes the key, so answers are never outdated, only rarely hit. Off, entries are reused
        until their TTL and outdated answers are counted.
    cache_order_by
        Cache ORDER BY (top-k) partial results, a non-goal of the RFC's phase 1 (off).
    """

    max_bytes: int = 256 * _MIB
    ttl_ms: float | None = 120_000.0
    enable_offline: bool = True
    enable_realtime_sealed: bool = True
    enable_realtime_consuming: bool = False
    disable_for_upsert: bool = True
    consuming_key_includes_offset: bool = True
    cache_order_by: bool = False

    PREFIX = "pinot.server.segment.query.cache."

    @property
    def safety_gates_open(self) -> bool:
        """True when an answer can be outdated (so hits must be checked against data versions)."""
        return self.enable_realtime_consuming or not self.disable_for_upsert
