"""Stable sorts for nearly sorted data: what a simulation's event times usually are.

Times derived from sorted arrivals plus short delays (deliveries, gather closes) are out of order by a
few places at most. An insertion sort is linear then and, unlike a general sort, needs no second
buffer; when the data turn out far from sorted it hands over to a merge sort. Both are stable, so the
result is exactly ``np.argsort(key, kind="stable")``.
"""

from __future__ import annotations

import numpy as np

from workbench.sim.fast.jit import kernel

__all__ = ["MOVES_PER_ITEM", "stable_order"]

#: The insertion sort gives up after this many moves per item on average (then a merge sort).
MOVES_PER_ITEM = 16


def stable_order(key: np.ndarray) -> np.ndarray:
    """The permutation that sorts ``key`` stably (as ``np.argsort(key, kind="stable")``)."""
    order = np.arange(len(key), dtype=np.int64)
    _insertion_order(key.copy(), order)
    return order


@kernel
def _insertion_order(key: np.ndarray, order: np.ndarray) -> None:
    budget = MOVES_PER_ITEM * len(key)
    for i in range(1, len(key)):
        k, o = key[i], order[i]
        j = i
        while j > 0 and key[j - 1] > k:
            key[j], order[j] = key[j - 1], order[j - 1]
            j -= 1
        key[j], order[j] = k, o
        budget -= i - j
        if budget < 0:  # far out of order: the prefix is sorted stably, the rest is in index order
            perm = np.argsort(key, kind="mergesort")
            order[:] = order[perm]
            return
