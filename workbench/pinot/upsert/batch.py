"""Vectorised bootstrap: add many immutable segments without a Python step per record.

Adding segments one doc at a time (Pinot's ``doAddOrReplaceSegment``) ends, for every key, at the doc
with the largest (comparison value, segment rank, doc id), *provided* the tie rule between segments is
a total order: for all-LLC segments the rank is the sequence number, for all non-LLC segments it is
(creation time, uploaded name, earlier-added first); a mix of the two is not transitive, so that case,
the scenario-3 rule (which depends on the evolving watermark) and a non-empty previous map of the
two-map strategy fall back to the one-at-a-time path. With the order total, the winners come from
three array passes:

1. concatenate all segments' docs in rank order and factorise the keys (hash-based, O(n));
2. per key, the maximum comparison value (``np.maximum.at``);
3. per key, the last position holding that maximum -- later in rank order wins ties.

Keys already in the map (from preload, or a consuming segment) then meet their key's winner through
the same pairwise rule the one-at-a-time path uses, which is exact because the order is total. The
test suite checks this path against
:meth:`~workbench.pinot.upsert.manager.PartitionUpsertMetadataManager.add_segment` on random segment sets.

It works on the partition's :class:`~workbench.pinot.upsert.state.UpsertState` through the same
functions as the one-at-a-time path (TTL decisions, registration, the fallback loop), so the two
cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from operator import itemgetter
from typing import Any

import numpy as np
import pandas as pd

from workbench.errors import InputError
from workbench.gcpause import cycle_collection_paused
from workbench.pinot.upsert.core import add_docs
from workbench.pinot.upsert.inputs import segment_from_input
from workbench.pinot.upsert.lifecycle import add_built, discard_stale_snapshots, load_out_of_ttl, register
from workbench.pinot.upsert.segments import VALID, VALID_QUERYABLE, SegmentInput, SegmentState, replaces_on_tie
from workbench.pinot.upsert.state import UpsertState

__all__ = ["add_segments_batch", "winners"]


def _rank_kind(segments: Sequence[SegmentState]) -> str | None:
    """``"llc"`` or ``"time"`` when the tie rule is a total order over these segments, else None."""
    llc = {s.llc_seq is not None for s in segments}
    if len(llc) > 1:
        return None
    return "llc" if llc == {True} else "time"


def _vectorisable(state: UpsertState, built: Sequence[SegmentState]) -> bool:
    if state.settings.expired_key_is_new or state.old_map:
        return False
    in_map = [s for s in state.segments.values() if s.in_map]
    return _rank_kind([*built, *in_map]) is not None


def _check_names(state: UpsertState, specs: Sequence[SegmentInput]) -> None:
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise InputError("segments", "segment names must be unique")
    for name in names:
        state.check_new(name)


def add_segments_batch(state: UpsertState, specs: Sequence[SegmentInput]) -> None:
    """Add ``specs`` to the partition as one-by-one adds would, vectorised when the tie order allows.

    One-by-one means :func:`~workbench.pinot.upsert.lifecycle.add_built` per segment in the given
    order, which is also the fallback when the vectorised merge would not be exact.
    """
    _check_names(state, specs)
    built = [segment_from_input(state, spec) for spec in specs]
    if not _vectorisable(state, built):
        for seg in built:
            add_built(state, seg)
        return
    in_ttl = []
    for seg in built:  # TTL decisions need the running watermark, exactly as one-by-one adds see it
        if state.out_of_ttl(seg.max_value):
            load_out_of_ttl(state, seg)
        else:
            in_ttl.append(seg)
            discard_stale_snapshots(state, seg)
        state.raise_watermark(seg.max_value)
    _merge(state, in_ttl)
    for seg in built:
        register(state, seg)


def _rank(seg: SegmentState, index: int, kind: str) -> tuple[int, ...]:
    if kind == "llc":
        return (seg.llc_seq or 0, -index)
    return (seg.creation_time_ms, int(seg.uploaded), -index)


def _object_array(items: list[Any]) -> np.ndarray:
    return np.fromiter(items, dtype=object, count=len(items))


def _key_array(segments: list[SegmentState]) -> np.ndarray:
    """All keys in order: int64 when every segment holds an integer column (fast factorise), else objects."""
    columns = [s.key_column() for s in segments]
    if all(isinstance(c, np.ndarray) and c.dtype.kind in "iu" for c in columns):
        return np.concatenate([np.asarray(c, dtype=np.int64) for c in columns])
    return np.concatenate([c.astype(object) if isinstance(c, np.ndarray) else _object_array(c) for c in columns])


def _value_array(segments: list[SegmentState]) -> np.ndarray:
    return np.concatenate([np.asarray(s.value_column()) for s in segments])


def winners(keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per distinct key (in first-seen order), the position of its winning record.

    The winner has the largest value; among equal values the last position wins, as a later doc or a
    higher-ranked segment does in Pinot.

    >>> winners(np.array([7, 8, 7, 7]), np.array([5, 1, 9, 9])).tolist()
    [3, 1]
    """
    codes, uniques = pd.factorize(keys)
    low = -np.inf if values.dtype.kind == "f" else np.iinfo(np.int64).min
    best = np.full(len(uniques), low, dtype=values.dtype)
    np.maximum.at(best, codes, values)
    at_max = values == best[codes]
    last = np.full(len(uniques), -1, dtype=np.int64)
    np.maximum.at(last, codes[at_max], np.flatnonzero(at_max))
    return last


def _merge(state: UpsertState, segments: list[SegmentState]) -> None:
    """Put the winners of ``segments`` into the map and set every segment's flags."""
    if not segments:
        return
    kind = _rank_kind(segments) or "time"
    ordered = [s for _, s in sorted(((_rank(s, i, kind), s) for i, s in enumerate(segments)), key=itemgetter(0))]
    values = _value_array(ordered)
    if values.dtype.kind not in "iuf" or values.ndim != 1:
        for seg in segments:  # exotic comparison values: compare them one at a time
            add_docs(state, seg, range(seg.num_docs))
        return
    keys = _key_array(ordered)
    pos = winners(keys, values)
    seg_of = np.repeat(np.arange(len(ordered)), [s.num_docs for s in ordered])
    doc_of = np.concatenate([np.arange(s.num_docs) for s in ordered])
    won_keys, won_values = keys[pos].tolist(), values[pos].tolist()
    with cycle_collection_paused():
        if state.key_map:
            keep = _beat_current(state, ordered, seg_of[pos], won_keys, won_values)
            pos = pos[keep]
            won_keys, won_values = [won_keys[i] for i in keep], [won_values[i] for i in keep]
        _set_flags(ordered, seg_of[pos], doc_of[pos])
        seg_objs = np.empty(len(ordered), dtype=object)
        seg_objs[:] = ordered
        locations = zip(seg_objs[seg_of[pos]].tolist(), doc_of[pos].tolist(), won_values, strict=True)
        state.key_map.update(zip(won_keys, locations, strict=True))
    state.note_peak()


def _beat_current(state: UpsertState, ordered: list[SegmentState], seg_idx: np.ndarray,
                  keys: list[Hashable], values: list[Any]) -> list[int]:
    """Which winners beat their key's current location (if any); the beaten locations are invalidated."""
    current = state.key_map
    keep = []
    for i, (key, value, seg) in enumerate(zip(keys, values, seg_idx.tolist(), strict=True)):
        cur = current.get(key)
        if cur is not None:
            cs, cd, cv = cur
            if not (value > cv or (value == cv and replaces_on_tie(ordered[seg], cs))):
                continue
            cs.flags[cd] = 0
            cs.dirty = True
        keep.append(i)
    return keep


def _set_flags(ordered: list[SegmentState], seg_idx: np.ndarray, docs: np.ndarray) -> None:
    """Flag each segment's winning docs valid (and queryable unless a delete marker)."""
    by_segment = docs[np.argsort(seg_idx, kind="stable")]
    ends = np.cumsum(np.bincount(seg_idx, minlength=len(ordered)))
    starts = ends - np.bincount(seg_idx, minlength=len(ordered))
    for seg, lo, hi in zip(ordered, starts.tolist(), ends.tolist(), strict=True):
        mine = by_segment[lo:hi]
        flags = np.zeros(seg.num_docs, dtype=np.uint8)
        deletes = np.frombuffer(seg.deletes, dtype=np.uint8) if seg.deletes else flags
        flags[mine] = np.where(deletes[mine] != 0, VALID, VALID_QUERYABLE)
        seg.flags = bytearray(flags.tobytes())
