"""The order in which Pinot's broker hands a query's segments to the instance selector.

The selectors themselves keep the order they are given (Pinot's ``InstanceSelectorTest`` passes explicit
lists); :class:`workbench.sim.router.Router`, the model's routing manager, orders the list first.

The broker's routing manager keeps a query's segments in ``java.util.HashSet`` values (the segment
selector's set, then each pruner's result) and passes ``new ArrayList<>(set)`` to the instance
selector. The balanced selector gives the k-th segment of that list candidate ``(requestId + k) % n``,
so the list's order decides which replicas a query meets and how many servers it fans out to: walking
segments in name order instead (as the model once did) put consecutive segments, which the balanced
assignment places on neighbouring servers, on the same servers, and undercounted the fan-out of a
table with two replicas by a third (measured against Pinot 1.5.1: 2.37 servers per query against
3.50, ``tests/groundtruth``).

A ``HashSet`` iterates its table's buckets in index order, the index being the low bits of the spread
``String.hashCode``; a set filled by ``add`` has the smallest power-of-two table (at least 16) whose
three quarters hold it; the routing manager's set of all online segments is sized for them up front
(``HashUtil.getHashMapCapacity``) and filled in the ideal state's sorted order. Names that share a
bucket keep the order they had in the set they came from: the larger table of the set before, then the
name. (A time-pruned set is filled in the time pruner's interval-tree order instead, which the model
does not see: two colliding segments may then take each other's request ids.)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

from workbench.pinot.jvm import java_string_hash

__all__ = ["hash_set_order"]

_MIN_CAPACITY = 16  # java.util.HashMap's default table size
_LOAD_FACTOR = 0.75


@lru_cache(maxsize=1 << 16)
def _spread(name: str) -> int:
    """``HashMap.hash``: the name's hash with its high half folded into the low half (as unsigned bits)."""
    h = java_string_hash(name) & 0xFFFFFFFF
    return h ^ (h >> 16)


def _capacity_after_adds(size: int) -> int:
    capacity = _MIN_CAPACITY
    while size > capacity * _LOAD_FACTOR:
        capacity *= 2
    return capacity


def _capacity_for(expected: int) -> int:
    """The table of ``new HashSet<>(HashUtil.getHashMapCapacity(expected))``, the set the broker's routing
    manager collects a table's online segments in: Guava's ``ceil(expected / 0.75)`` (``expected + 1``
    below 3), rounded up to a power of two."""
    wanted = expected + 1 if expected < 3 else math.ceil(expected / _LOAD_FACTOR)
    capacity = 1
    while capacity < wanted:
        capacity *= 2
    return capacity


def hash_set_order(segments: Sequence[str], total: int) -> list[str]:
    """``segments`` in the order Pinot's broker lists them, ``total`` being the table's routable segments.

    A pruned list (fewer than ``total``) is the iteration order of the pruner's set, its ties broken by the
    segment selector's set of all ``total``; an unpruned list is the segment selector's set itself.
    """
    masks = [_capacity_for(total) - 1]
    if len(segments) < total:
        masks.insert(0, _capacity_after_adds(len(segments)) - 1)
    return sorted(segments, key=lambda s: (*(_spread(s) & m for m in masks), s))
