"""The hot loops of upsert metadata: consume records, add a segment's docs, remove keys.

These are the only places that touch the key map one record at a time, so they are written for speed
(locals bound before the loop, tuples for map values, flag bytes instead of bitmap calls) and each
follows one Pinot method (reference §5.3):

- :func:`consume` is ``doAddRecord`` plus the mutable segment's out-of-order handling (a lean loop
  for the common configuration, a general one for dropped records, the scenario-3 rule and two maps;
  the differential test drives both);
- :func:`add_docs` is ``doAddOrReplaceSegment``;
- :func:`remove_keys` is ``removeSegment(segment, validDocIds)``.

They are module-level functions of the partition's
:class:`~workbench.pinot.upsert.state.UpsertState`, so the manager, segment loading and the vectorised
bootstrap all call the same loops on the same state.

Map values are ``(segment, doc, value)`` tuples. With the two-map rotation strategy a key may sit in
the previous map; a lookup that misses the current map takes it from there, and puts it back if the
record does not win (so a lost comparison does not refresh the key's life).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from itertools import repeat
from typing import Any, NamedTuple

import numpy as np

from workbench.pinot.upsert.segments import SegmentState, replaces_on_tie
from workbench.pinot.upsert.state import UpsertState

__all__ = ["IngestCounts", "add_docs", "consume", "put_without_upsert", "remove_keys"]

_DELETE_TO_FLAG = bytes.maketrans(b"\x00\x01", b"\x03\x01")  # is_delete byte -> initial doc flag


def _take(column: Sequence[Any] | np.ndarray, docs: np.ndarray) -> list[Any]:
    """``column[docs]`` as a list, without turning a whole array column into Python objects."""
    if isinstance(column, np.ndarray):
        picked: list[Any] = column[docs].tolist()
        return picked
    return [column[d] for d in docs.tolist()]


class IngestCounts(NamedTuple):
    """What happened to a batch of consumed records.

    Attributes
    ----------
    new_keys
        Records whose key was not in the map.
    replaced
        Records that took over their key's location (comparison value >= current).
    out_of_order
        Records older than their key's current location (Pinot's UPSERT_OUT_OF_ORDER meter).
    dropped
        Out-of-order records not indexed because ``dropOutOfOrderRecord`` is on.
    """

    new_keys: int = 0
    replaced: int = 0
    out_of_order: int = 0
    dropped: int = 0


# -- consuming ------------------------------------------------------------------------------------
def consume(state: UpsertState, seg: SegmentState, keys: Sequence[Hashable], values: Sequence[Any],
            deletes: bytes | None) -> IngestCounts:
    """Add consumed records to the mutable segment ``seg``, in order; returns the counts.

    ``keys`` are map keys (already encoded), ``deletes`` one byte per record or None.
    """
    s = state.settings
    if state.old_map or s.expired_key_is_new or s.drop_out_of_order_record:
        return _consume_general(state, seg, keys, values, deletes)
    return _consume_fast(state, seg, keys, values, deletes)


def _consume_fast(state: UpsertState, seg: SegmentState, keys: Sequence[Hashable], values: Sequence[Any],
                  deletes: bytes | None) -> IngestCounts:
    """The common case: no previous map, no scenario-3 rule, every record indexed.

    Every record then gets the next doc id, so the batch's flags are laid down up front (valid,
    queryable unless a delete) and only late records are cleared; no per-record watermark either,
    as nothing reads it before the batch ends.
    """
    m = state.key_map
    get, flags = m.get, seg.flags
    start, n, before = len(flags), len(keys), len(m)
    flags.extend(b"\x03" * n if deletes is None else deletes.translate(_DELETE_TO_FLAG))
    late: list[int] = []
    for doc, k, v in zip(range(start, start + n), keys, values, strict=True):
        cur = get(k)
        if cur is not None:
            if v < cur[2]:
                flags[doc] = 0
                late.append(doc)
                continue
            cs = cur[0]
            cs.flags[cur[1]] = 0
            cs.dirty = True
        m[k] = (seg, doc, v)
    if n and state.settings.ttl_enabled:
        state.watermark = max(state.watermark, float(max(values)))
    if seg.out_of_order is not None:
        marks = bytearray(n)
        for doc in late:
            marks[doc - start] = 1
        seg.out_of_order.extend(marks)
    _store_consumed(state, seg, keys, values, deletes, [])
    new = len(m) - before
    return IngestCounts(new, n - new - len(late), len(late), 0)


def _consume_general(state: UpsertState, seg: SegmentState, keys: Sequence[Hashable], values: Sequence[Any],
                     deletes: bytes | None) -> IngestCounts:
    """Every option: two-map lookups, the scenario-3 rule, dropped records, per-record watermark."""
    s = state.settings
    m, old = state.key_map, state.old_map
    get, flags, late_col = m.get, seg.flags, seg.out_of_order
    append = flags.append
    ttl_on, wm = s.ttl_enabled, state.watermark
    rule_ttl = s.metadata_ttl if s.expired_key_is_new else None
    drop = s.drop_out_of_order_record
    doc = len(flags)
    new = replaced = late = 0
    dropped: list[int] = []
    for i, (k, v, d) in enumerate(zip(keys, values, repeat(0) if deletes is None else deletes, strict=False)):
        if ttl_on and v > wm:
            wm = float(v)
        cur = get(k)
        from_old = False
        if cur is None and old:
            cur = old.pop(k, None)
            from_old = cur is not None
        if cur is not None and rule_ttl is not None and float(cur[2]) < wm - rule_ttl:
            cur = None  # design-doc rule: an expired key is a new key; its old doc stays valid
        if cur is None:
            new += 1
        elif v >= cur[2]:
            cs = cur[0]
            cs.flags[cur[1]] = 0
            cs.dirty = True
            replaced += 1
        else:
            if from_old:
                old[k] = cur
            late += 1
            if drop:
                dropped.append(i)
                continue
            append(0)
            if late_col is not None:
                late_col.append(1)
            doc += 1
            continue
        m[k] = (seg, doc, v)
        append(1 if d else 3)
        if late_col is not None:
            late_col.append(0)
        doc += 1
    state.watermark = wm
    _store_consumed(state, seg, keys, values, deletes, dropped)
    return IngestCounts(new, replaced, late, len(dropped))


def _store_consumed(state: UpsertState, seg: SegmentState, keys: Sequence[Hashable], values: Sequence[Any],
                    deletes: bytes | None, dropped: list[int]) -> None:
    """Append the indexed records' keys, values and delete flags to the segment (dropped ones left out)."""
    dels = bytes(len(keys)) if deletes is None else deletes
    if dropped:
        gone = set(dropped)
        keep = [i for i in range(len(keys)) if i not in gone]
        keys, values = [keys[i] for i in keep], [values[i] for i in keep]
        dels = bytes(dels[i] for i in keep)
    seg.keys.extend(keys)
    seg.values.extend(values)
    seg.deletes.extend(dels)
    state.note_peak()


# -- immutable segments ---------------------------------------------------------------------------
def add_docs(state: UpsertState, seg: SegmentState, docs: Iterable[int], old_seg: SegmentState | None = None,
             old_flags: bytearray | None = None) -> None:
    """Compare ``seg``'s docs, in doc order, against the map (``doAddOrReplaceSegment``).

    ``old_seg`` is the segment of the same name being replaced and ``old_flags`` a copy of its
    flags: a location there is taken over on ties and struck off the copy, so whatever stays
    valid in the copy afterwards had no successor.
    """
    m, old = state.key_map, state.old_map
    get, keys, values, dels, flags = m.get, seg.keys, seg.values, seg.deletes, seg.flags
    rule_ttl = state.settings.metadata_ttl if state.settings.expired_key_is_new else None
    wm = state.watermark
    for doc in docs:
        k, v = keys[doc], values[doc]
        cur = get(k)
        from_old = False
        if cur is None and old:
            cur = old.pop(k, None)
            from_old = cur is not None
        if cur is not None and rule_ttl is not None and cur[0] is not old_seg and float(cur[2]) < wm - rule_ttl:
            cur = None  # design-doc rule, except against the copy being replaced (the same record)
        if cur is not None:
            cs, cd, cv = cur
            if cs is seg or cs is old_seg:
                if v < cv:
                    if from_old:
                        old[k] = cur
                    continue
                if cs is seg:
                    flags[cd] = 0
                elif old_flags is not None:
                    old_flags[cd] = 0
            elif v > cv or (v == cv and replaces_on_tie(seg, cs)):
                cs.flags[cd] = 0
                cs.dirty = True
            else:
                if from_old:
                    old[k] = cur
                continue
        m[k] = (seg, doc, v)
        flags[doc] = 1 if dels[doc] else 3
    state.note_peak()


def remove_keys(state: UpsertState, seg: SegmentState, docs: Iterable[int]) -> None:
    """Remove the map entries of ``docs`` that still point at ``seg``."""
    keys = seg.keys
    for doc in docs:
        k = keys[doc]
        for entries in (state.key_map, state.old_map):
            cur = entries.get(k)
            if cur is not None and cur[0] is seg:
                del entries[k]


def put_without_upsert(state: UpsertState, seg: SegmentState, docs: np.ndarray) -> None:
    """Preload: plain puts of snapshot-valid docs, no comparison (snapshots on disk are disjoint)."""
    keys, values = _take(seg.key_column(), docs), _take(seg.value_column(), docs)
    locations = zip(repeat(seg), docs.tolist(), values, strict=False)
    state.key_map.update(zip(keys, locations, strict=True))
    state.note_peak()
