"""Closed millisecond intervals: the list algebra and the interval tree of the time pruner.

Pinot's time pruner turns a filter into a sorted list of disjoint closed intervals ``[lo, hi]`` and
looks each one up in an interval tree of segment time ranges. Both pieces are here, written from the
behaviour the reference describes: segments with equal ranges share a node; nodes are sorted by
``(lo, hi)`` and laid out breadth-first as a balanced tree by taking medians; every node keeps the
largest ``hi`` of its subtree so whole subtrees that end before the query are skipped.

>>> tree = IntervalTree({0: (10, 60), 1: (20, 30), 2: (50, 65)})
>>> sorted(tree.search_all([(40, 40)]).tolist()), sorted(tree.search_all([(0, 15), (61, 99)]).tolist())
([0], [0, 2])
>>> intersect([(0, 10), (20, 30)], [(5, 25)]), union([[(0, 5)], [(3, 8)], [(9, 9)]])
([(5, 10), (20, 25)], [(0, 8), (9, 9)])
>>> complement([(10, 20)])[0]
(0, 9)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import chain
from typing import TypeAlias

import numpy as np
import numpy.typing as npt

__all__ = ["MAX_TIME", "Interval", "IntervalTree", "complement", "intersect", "union"]

Interval: TypeAlias = tuple[int, int]
#: Java's Long.MAX_VALUE, the open end of "from t onwards" and of the default segment interval.
MAX_TIME = 2**63 - 1


def intersect(left: Sequence[Interval], right: Sequence[Interval]) -> list[Interval]:
    """Intersect two sorted lists of disjoint intervals (two-pointer merge)."""
    out: list[Interval] = []
    i = j = 0
    while i < len(left) and j < len(right):
        lo, hi = max(left[i][0], right[j][0]), min(left[i][1], right[j][1])
        if lo <= hi:
            out.append((lo, hi))
        if left[i][1] < right[j][1]:
            i += 1
        else:
            j += 1
    return out


def union(lists: Iterable[Sequence[Interval]]) -> list[Interval]:
    """Union several interval lists: sort, then merge intervals that *overlap*.

    Touching intervals such as ``[0, 5]`` and ``[6, 9]`` stay separate, as in Pinot; for pruning the
    two forms select the same segments.
    """
    out: list[Interval] = []
    for lo, hi in sorted(iv for ivs in lists for iv in ivs):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def complement(intervals: Sequence[Interval]) -> list[Interval]:
    """The parts of ``[0, MAX_TIME]`` not covered by the intervals (which need not be sorted)."""
    out: list[Interval] = []
    start = 0
    for lo, hi in union([intervals]):
        if lo > start:
            out.append((start, lo - 1))
        start = max(start, hi + 1)
    if start <= MAX_TIME:
        out.append((start, MAX_TIME))
    return out


IntArray: TypeAlias = npt.NDArray[np.int64]
#: Up to this many hit ranges, slicing and concatenating beats the vectorised gather.
_FEW_RANGES = 16


def _bfs_layout(count: int) -> tuple[IntArray, IntArray, IntArray, list[tuple[int, int]]]:
    """Lay sorted ranks 0..count-1 out as a median-split tree in breadth-first order.

    Every rank range ``[lo, hi]`` puts its median ``(lo + hi) // 2`` in the next free slot and queues
    its left then its right part, one tree level at a time (vectorised per level). Returns
    ``(rank_of_slot, left_slot, right_slot, levels)``: a missing child is ``-1`` and ``levels`` lists
    each level's slot range ``[start, stop)``.
    """
    rank = np.empty(count, dtype=np.int64)
    left = np.full(count, -1, dtype=np.int64)
    right = np.full(count, -1, dtype=np.int64)
    lo, hi = np.zeros(min(count, 1), dtype=np.int64), np.full(min(count, 1), count - 1, dtype=np.int64)
    parent, is_right = np.full(lo.size, -1, dtype=np.int64), np.zeros(lo.size, dtype=bool)
    levels: list[tuple[int, int]] = []
    while lo.size:
        start = levels[-1][1] if levels else 0
        slots = np.arange(start, start + lo.size, dtype=np.int64)
        levels.append((start, start + lo.size))
        mid = (lo + hi) // 2
        rank[slots] = mid
        left[parent[(parent >= 0) & ~is_right]] = slots[(parent >= 0) & ~is_right]
        right[parent[is_right]] = slots[is_right]
        child_lo = np.stack((lo, mid + 1), axis=1).ravel()
        child_hi = np.stack((mid - 1, hi), axis=1).ravel()
        keep = child_lo <= child_hi
        lo, hi = child_lo[keep], child_hi[keep]
        parent = np.repeat(slots, 2)[keep]
        is_right = np.tile(np.array([False, True]), slots.size)[keep]
    return rank, left, right, levels


def _subtree_summaries(
    rank: IntArray, left: IntArray, right: IntArray, node_hi: IntArray, levels: list[tuple[int, int]]
) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """Per slot: max ``hi``, min ``hi``, first rank and last rank of its subtree (deepest level first)."""
    max_hi, min_hi, first, last = node_hi.copy(), node_hi.copy(), rank.copy(), rank.copy()
    for start, stop in reversed(levels):
        level = slice(start, stop)
        for child in (left[level], right[level]):
            has = child >= 0
            safe = np.where(has, child, 0)
            max_hi[level] = np.where(has, np.maximum(max_hi[level], max_hi[safe]), max_hi[level])
            min_hi[level] = np.where(has, np.minimum(min_hi[level], min_hi[safe]), min_hi[level])
        first[level] = np.where(left[level] >= 0, first[np.maximum(left[level], 0)], first[level])
        last[level] = np.where(right[level] >= 0, last[np.maximum(right[level], 0)], last[level])
    return max_hi, min_hi, first, last


def _merge_adjacent(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Join sorted inclusive rank ranges that touch or overlap, so fewer slices are gathered."""
    merged: list[tuple[int, int]] = []
    for first, last in ranges:
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return merged


class IntervalTree:
    """Segments' closed time ranges, searchable for every range that intersects a query interval.

    Parameters
    ----------
    intervals
        Segment id -> ``(lo, hi)`` in millis, both inclusive.

    Notes
    -----
    The tree is Pinot's (median-split, breadth-first array, subtree maximum of ``hi``). Each node
    also knows the rank range its subtree covers in ``(lo, hi)`` order and the subtree's minimum
    ``hi``; when a whole subtree lies inside the query the search reports that rank range at once
    instead of walking it. The hits are the same; a wide query costs O(log^2 n) node visits instead
    of O(k), and the segment ids of a rank range are one contiguous NumPy slice.
    """

    def __init__(self, intervals: Mapping[int, Interval]) -> None:
        sids = np.fromiter(intervals.keys(), dtype=np.int64, count=len(intervals))
        flat = chain.from_iterable(intervals.values())
        bounds = np.fromiter(flat, dtype=np.int64, count=2 * len(intervals)).reshape(-1, 2)
        order = np.lexsort((bounds[:, 1], bounds[:, 0]))
        bounds, self._ids = bounds[order], sids[order]
        distinct = np.ones(len(bounds), dtype=bool)
        distinct[1:] = (bounds[1:] != bounds[:-1]).any(axis=1)
        key_start = np.flatnonzero(distinct)
        self._offsets: IntArray = np.append(key_start, len(bounds)).astype(np.int64)
        keys = bounds[key_start]
        rank, left, right, levels = _bfs_layout(len(keys))
        node_lo, node_hi = keys[rank, 0], keys[rank, 1]
        summaries = _subtree_summaries(rank, left, right, node_hi, levels)
        self._rank, self._left, self._right = rank.tolist(), left.tolist(), right.tolist()
        self._lo, self._hi, self._lo_by_rank = node_lo.tolist(), node_hi.tolist(), keys[:, 0].tolist()
        self._max_hi, self._min_hi, self._first, self._last = (a.tolist() for a in summaries)

    def __len__(self) -> int:
        """Number of distinct intervals (tree nodes)."""
        return len(self._lo)

    def search_ranges(self, lo: int, hi: int) -> list[tuple[int, int]]:
        """Inclusive rank ranges of the nodes whose interval intersects ``[lo, hi]``."""
        lo_by_rank, first, last, rank = self._lo_by_rank, self._first, self._last, self._rank
        node_lo, node_hi, max_hi, min_hi = self._lo, self._hi, self._max_hi, self._min_hi
        left, right = self._left, self._right
        hits: list[tuple[int, int]] = []
        stack = [0] if node_lo else []
        while stack:
            slot = stack.pop()
            if max_hi[slot] < lo or lo_by_rank[first[slot]] > hi:
                continue
            if min_hi[slot] >= lo and lo_by_rank[last[slot]] <= hi:
                hits.append((first[slot], last[slot]))
                continue
            if left[slot] >= 0:
                stack.append(left[slot])
            if node_lo[slot] <= hi:
                if node_hi[slot] >= lo:
                    hits.append((rank[slot], rank[slot]))
                if right[slot] >= 0:
                    stack.append(right[slot])
        return hits

    def search_all(self, intervals: Iterable[Interval]) -> npt.NDArray[np.int64]:
        """Segment ids whose range intersects any of the intervals (unordered, without repeats)."""
        ranges = _merge_adjacent(sorted(r for lo, hi in intervals for r in self.search_ranges(lo, hi)))
        if len(ranges) <= _FEW_RANGES:
            offsets = self._offsets
            slices = [self._ids[offsets[first] : offsets[last + 1]] for first, last in ranges]
            return np.concatenate(slices) if slices else self._ids[:0]
        bounds = np.asarray(ranges, dtype=np.int64).reshape(-1, 2)
        starts = self._offsets[bounds[:, 0]]
        counts = self._offsets[bounds[:, 1] + 1] - starts
        shifts = np.repeat(starts - (np.cumsum(counts) - counts), counts)
        picked: npt.NDArray[np.int64] = self._ids[np.arange(int(counts.sum()), dtype=np.int64) + shifts]
        return picked
