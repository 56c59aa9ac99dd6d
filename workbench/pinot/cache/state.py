"""What a broker or server knows about tables and segments, with the epochs cache keys are built from.

The RFC keeps results correct by *versioned keys* (§3.2, §5.7): a key carries each segment's
CRC/epoch and the table's schema epoch, so any change yields a new key and old entries can never be
hit. A :class:`ClusterView` is that bookkeeping. It also keeps a *data version* per segment, which
changes when the rows a query would see change **without** a new epoch (rows ingested into a consuming
segment, an upsert invalidating documents in a sealed one). Keys never contain it; the caches use it
only to count the outdated answers that switching the RFC's safety gates off lets through.

>>> view = ClusterView()
>>> _ = view.add_table("events_OFFLINE")
>>> first = view.put_segment("events_OFFLINE", "events_0")
>>> view.bump_segment("events_OFFLINE", "events_0").epoch > first.epoch   # a reload: new epoch
True
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from enum import Enum

from workbench.pinot.cache.columns import Schema

__all__ = ["ClusterView", "SegmentKind", "SegmentState", "TableState", "raw_table_name"]

_TYPE_SUFFIXES = ("_OFFLINE", "_REALTIME")


def raw_table_name(table: str) -> str:
    """``events_OFFLINE`` -> ``events``; a raw name is returned unchanged.

    >>> raw_table_name("events_REALTIME"), raw_table_name("events")
    ('events', 'events')
    """
    for suffix in _TYPE_SUFFIXES:
        if table.endswith(suffix):
            return table[: -len(suffix)]
    return table


class SegmentKind(Enum):
    """The three kinds of segment the RFC's safety rules tell apart (§3.2)."""

    OFFLINE = "offline"
    SEALED = "realtime-sealed"
    CONSUMING = "realtime-consuming"


@dataclass(frozen=True)
class SegmentState:
    """One segment as a cache sees it.

    Parameters
    ----------
    table, name
        Table name with type, and segment name.
    kind
        Offline, sealed realtime or consuming realtime.
    epoch
        The CRC/epoch that goes into keys; a new value on add, replace, reload and seal.
    data_version
        Bumped when the visible rows change without a new epoch (ingestion, upsert invalidation).
    time_range
        ``(start, end)`` of the time column, inclusive, *in the time column's own unit*, or ``None``
        when unknown (consuming segments); the server uses it to clip time constraints.
    partition_id, end_offset
        Stream partition and current end offset of a consuming segment (the RFC keys consuming
        segments on them).
    """

    table: str
    name: str
    kind: SegmentKind
    epoch: int
    data_version: int = 0
    time_range: tuple[int, int] | None = None
    partition_id: int | None = None
    end_offset: int | None = None


@dataclass(frozen=True)
class TableState:
    """One table (name with type) as a cache sees it.

    ``schema`` types the columns for key canonicalisation; ``time_column`` names the column whose
    constraints servers clip to a segment's time range; the epochs count schema and config changes.
    """

    name: str
    upsert: bool = False
    schema: Schema | None = None
    time_column: str | None = None
    schema_epoch: int = 0
    config_epoch: int = 0


class ClusterView:
    """Tables and segments with their epochs; every change returns the new state."""

    def __init__(self) -> None:
        self.tables: dict[str, TableState] = {}
        self.segments: dict[tuple[str, str], SegmentState] = {}
        self._epochs = itertools.count(1)

    # -- tables -----------------------------------------------------------------------------------
    def add_table(self, name: str, *, upsert: bool = False, schema: Schema | None = None,
                  time_column: str | None = None) -> TableState:
        """Register a table; re-registering one bumps both its epochs, as its settings may differ."""
        old = self.tables.get(name)
        bump = 0 if old is None else 1
        state = TableState(name, upsert, schema, time_column,
                           schema_epoch=old.schema_epoch + bump if old else 0,
                           config_epoch=old.config_epoch + bump if old else 0)
        self.tables[name] = state
        return state

    def table(self, name: str) -> TableState | None:
        """The table's state, or ``None`` when it was never registered."""
        return self.tables.get(name)

    def bump_schema(self, name: str, schema: Schema | None = None) -> TableState:
        """A schema change: a new schema epoch (and new column specs when given)."""
        state = self._require_table(name)
        new = replace(state, schema_epoch=state.schema_epoch + 1, schema=schema or state.schema)
        self.tables[name] = new
        return new

    def bump_config(self, name: str, *, upsert: bool | None = None, time_column: str | None = None) -> TableState:
        """A table-config change: a new config epoch (and new upsert/time-column settings when given)."""
        state = self._require_table(name)
        new = replace(state, config_epoch=state.config_epoch + 1,
                      upsert=state.upsert if upsert is None else upsert,
                      time_column=time_column or state.time_column)
        self.tables[name] = new
        return new

    def _require_table(self, name: str) -> TableState:
        state = self.tables.get(name)
        if state is None:
            raise KeyError(f"table {name!r} is not registered; call add_table first")
        return state

    # -- segments ---------------------------------------------------------------------------------
    def put_segment(self, table: str, name: str, *, kind: SegmentKind = SegmentKind.OFFLINE,
                    time_range: tuple[int, int] | None = None, partition_id: int | None = None,
                    end_offset: int | None = None) -> SegmentState:
        """Add a segment, or replace one of the same name, under a fresh epoch."""
        self._require_table(table)
        state = SegmentState(table, name, kind, next(self._epochs), 0, time_range, partition_id, end_offset)
        self.segments[(table, name)] = state
        return state

    def segment(self, table: str, name: str) -> SegmentState | None:
        """The segment's state, or ``None`` when unknown."""
        return self.segments.get((table, name))

    def bump_segment(self, table: str, name: str, *, kind: SegmentKind | None = None,
                     time_range: tuple[int, int] | None = None) -> SegmentState:
        """Give a known segment a fresh epoch (reload, seal), optionally changing its kind and range."""
        state = self._require_segment(table, name)
        new = replace(state, epoch=next(self._epochs), kind=kind or state.kind,
                      time_range=time_range or state.time_range)
        self.segments[(table, name)] = new
        return new

    def bump_data(self, table: str, name: str, end_offset: int | None = None) -> SegmentState:
        """The segment's visible rows changed under the same epoch."""
        state = self._require_segment(table, name)
        new = replace(state, data_version=state.data_version + 1,
                      end_offset=state.end_offset if end_offset is None else end_offset)
        self.segments[(table, name)] = new
        return new

    def remove_segment(self, table: str, name: str) -> SegmentState | None:
        """Forget a deleted segment; returns its last state."""
        return self.segments.pop((table, name), None)

    def _require_segment(self, table: str, name: str) -> SegmentState:
        state = self.segments.get((table, name))
        if state is None:
            raise KeyError(f"segment {name!r} of {table!r} is not registered")
        return state
