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
three quarters hold it, a copy of a collection the power of two at or above ``size / 0.75 + 1``. Names
that share a bucket keep the order they had in the set they came from: the larger table of the set
before, then the name (the insertion order the model cannot see; it decides no server count, only which
of two colliding segments takes the earlier request id).
"""

from __future__ import annotations

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


def _capacity_of_copy(size: int) -> int:
    wanted = max(int(size / _LOAD_FACTOR) + 1, _MIN_CAPACITY)
    capacity = 1
    while capacity < wanted:
        capacity *= 2
    return capacity


def hash_set_order(segments: Sequence[str], total: int) -> list[str]:
    """``segments`` in the order Pinot's broker lists them, ``total`` being the table's routable segments.

    A pruned list (fewer than ``total``) is the iteration order of the pruner's set, its ties broken by the
    segment selector's set of all ``total``; an unpruned list is the segment selector's set itself.
    """
    masks = [_capacity_of_copy(total) - 1]
    if len(segments) < total:
        masks.insert(0, _capacity_after_adds(len(segments)) - 1)
    return sorted(segments, key=lambda s: (*(_spread(s) & m for m in masks), s))
