"""Offline optima for a request trace: how many hits any cache of a given size could possibly get.

Three computations, each labelled with what it proves:

* :func:`belady_hits` — **exact** for unit-size objects. Bélády's MIN: on a miss with the cache full,
  evict the object whose next request is farthest away. With ``admit_always=False`` (the default) the
  newcomer itself may be the one "evicted" (not cached) when it is needed last; that is the optimum
  over all policies, including ones with admission control. ``admit_always=True`` is the textbook
  demand-paging variant, where every missed object must be loaded.
* :func:`opt_upper_bound` — an **upper bound** for objects of different sizes, where the optimum is
  NP-hard. It is the linear-programming relaxation of the optimal cache (Berger, Beckmann and
  Harchol-Balter's FOO, SIGMETRICS 2018): each *reuse interval* (an object's request to its next
  request) is cached for a fraction in [0, 1], and at every point the cached fractions' bytes fit the
  cache. No real cache can beat it. For unit sizes the constraint matrix is an interval matrix, so the
  LP optimum is integral and equals :func:`belady_hits` (the tests check this).
* :func:`belady_size_hits` — a **feasible heuristic** for variable sizes: Bélády's farthest-next-use
  rule, evicting as many objects as the newcomer needs bytes, and not caching a newcomer needed later
  than its victims. It is a real (clairvoyant) policy, so its hits are a *lower* bound on the optimum;
  together with :func:`opt_upper_bound` it brackets OPT.

All three ignore TTLs: a TTL can only remove hits, so the bounds stay bounds for a cache with one.

>>> textbook = [7, 0, 1, 2, 0, 3, 0, 4, 2, 3, 0, 3, 2, 1, 2, 0, 1, 7, 0, 1]
>>> len(textbook) - belady_hits(textbook, capacity=3, admit_always=True)  # page faults, 3 frames
9
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable, Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

__all__ = ["belady_hits", "belady_size_hits", "next_use", "opt_upper_bound"]


def next_use(keys: Sequence[Hashable]) -> list[int]:
    """For each request, the index of the next request for the same key (``len(keys)`` if none).

    >>> next_use(["a", "b", "a", "c", "b"])
    [2, 4, 5, 5, 5]
    """
    n = len(keys)
    following: dict[Hashable, int] = {}
    out = [n] * n
    for i in range(n - 1, -1, -1):
        out[i] = following.get(keys[i], n)
        following[keys[i]] = i
    return out


class _FarthestFirst:
    """The cached keys ordered by next use, farthest first (a heap with lazy deletion)."""

    def __init__(self) -> None:
        self.next_of: dict[Hashable, int] = {}
        self._heap: list[tuple[int, int, Hashable]] = []
        self._seq = 0

    def __contains__(self, key: Hashable) -> bool:
        return key in self.next_of

    def __len__(self) -> int:
        return len(self.next_of)

    def set(self, key: Hashable, next_index: int) -> None:
        self.next_of[key] = next_index
        self._seq += 1
        heapq.heappush(self._heap, (-next_index, self._seq, key))

    def pop_farthest(self) -> tuple[Hashable, int]:
        while True:
            negated, _, key = heapq.heappop(self._heap)
            if self.next_of.get(key) == -negated:
                del self.next_of[key]
                return key, -negated


def belady_hits(keys: Sequence[Hashable], capacity: int, *, admit_always: bool = False) -> int:
    """Hits of Bélády's MIN with room for ``capacity`` unit-size objects (exact optimum).

    Parameters
    ----------
    keys
        The requested keys, in order.
    capacity
        How many objects fit.
    admit_always
        Load every missed object (demand paging) instead of allowing the optimum to skip caching it.
    """
    nexts = next_use(keys)
    cache = _FarthestFirst()
    hits = 0
    for key, following in zip(keys, nexts, strict=True):
        if key in cache:
            hits += 1
            cache.set(key, following)
        elif capacity > 0:
            _admit_unit(cache, key, following, capacity, admit_always)
    return hits


def _admit_unit(cache: _FarthestFirst, key: Hashable, following: int, capacity: int, admit_always: bool) -> None:
    if len(cache) < capacity:
        cache.set(key, following)
        return
    victim, victim_next = cache.pop_farthest()
    if admit_always or victim_next > following:
        cache.set(key, following)
    else:
        cache.set(victim, victim_next)


def belady_size_hits(keys: Sequence[Hashable], sizes: Sequence[int], max_bytes: int) -> tuple[int, int]:
    """Hits and bytes hit of the size-aware farthest-next-use heuristic (a feasible policy).

    On a miss, cached objects are evicted farthest-next-use first until the newcomer fits; if any of
    those victims is needed no later than the newcomer, nothing is evicted and the newcomer is not
    cached. Returns ``(hits, bytes_hit)``.
    """
    cache = _SizedFarthestFirst(max_bytes)
    hits = bytes_hit = 0
    for key, size, following in zip(keys, sizes, next_use(keys), strict=True):
        if key in cache.order:
            hits, bytes_hit = hits + 1, bytes_hit + size
            cache.order.set(key, following)
        elif size <= max_bytes:
            cache.admit(key, size, following)
    return hits, bytes_hit


class _SizedFarthestFirst:
    """Farthest-first order plus the bytes each cached object holds."""

    def __init__(self, max_bytes: int) -> None:
        self.order = _FarthestFirst()
        self.held: dict[Hashable, int] = {}
        self.free = max_bytes

    def admit(self, key: Hashable, size: int, following: int) -> None:
        victims: list[tuple[Hashable, int]] = []
        free = self.free
        while free < size:
            victim, victim_next = self.order.pop_farthest()
            victims.append((victim, victim_next))
            free += self.held[victim]
        if any(victim_next <= following for _, victim_next in victims):
            for victim, victim_next in victims:
                self.order.set(victim, victim_next)
            return
        for victim, _ in victims:
            del self.held[victim]
        self.held[key] = size
        self.free = free - size
        self.order.set(key, following)


def opt_upper_bound(keys: Sequence[Hashable], sizes: Sequence[int], max_bytes: int, *,
                    objective: Literal["objects", "bytes"] = "objects") -> tuple[float, float]:
    """Upper bound on the hits of any cache of ``max_bytes``: the optimal cache's LP relaxation.

    Returns ``(hits, bytes_hit)`` of the LP solution that maximises the ``objective`` (object hits by
    default, else bytes hit); the other number is that same solution's value, not its own maximum.

    Notes
    -----
    Variables are ``x_k`` in [0, 1] for each reuse interval ``k`` (request ``i`` to the same key's
    next request ``j``, size ``s_k`` = the size at ``i``) and the occupancy ``y_t`` in [0, max_bytes]
    of each gap between requests. Rows say ``y_t - y_{t-1}`` is the bytes of intervals starting at
    ``t`` minus those ending at ``t``, so the matrix has about four non-zeros per request. Solved
    with HiGHS's dual simplex through :func:`scipy.optimize.linprog`: seconds for 20k requests,
    minutes for 100k (the time grows faster than linearly).
    """
    starts, ends, weights = _reuse_intervals(keys, sizes, max_bytes)
    if not starts:
        return 0.0, 0.0
    x = _solve_interval_lp(len(keys), starts, ends, weights, max_bytes, objective)
    return float(x.sum()), float(x @ np.asarray(weights, dtype=float))


def _reuse_intervals(keys: Sequence[Hashable], sizes: Sequence[int], max_bytes: int
                     ) -> tuple[list[int], list[int], list[int]]:
    """Reuse intervals an object could be cached across (objects larger than the cache never are)."""
    starts: list[int] = []
    ends: list[int] = []
    weights: list[int] = []
    for i, following in enumerate(next_use(keys)):
        if following < len(keys) and sizes[i] <= max_bytes:
            starts.append(i)
            ends.append(following)
            weights.append(sizes[i])
    return starts, ends, weights


def _solve_interval_lp(n: int, starts: list[int], ends: list[int], weights: list[int], max_bytes: int,
                       objective: str) -> npt.NDArray[np.float64]:
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix

    gaps, count = n - 1, len(starts)
    w = np.asarray(weights, dtype=float)
    gap_ids = np.arange(gaps)
    x_ids = gaps + np.arange(count)
    ending = np.asarray(ends) < gaps
    rows = np.concatenate([gap_ids, gap_ids[1:], np.asarray(starts), np.asarray(ends)[ending]])
    cols = np.concatenate([gap_ids, gap_ids[:-1], x_ids, x_ids[ending]])
    vals = np.concatenate([np.ones(gaps), -np.ones(gaps - 1), -w, w[ending]])
    matrix = coo_matrix((vals, (rows, cols)), shape=(gaps, gaps + count)).tocsr()
    gain = np.ones(count) if objective == "objects" else w
    cost = np.concatenate([np.zeros(gaps), -gain])
    bounds = [(0.0, float(max_bytes))] * gaps + [(0.0, 1.0)] * count
    result = linprog(cost, A_eq=matrix, b_eq=np.zeros(gaps), bounds=bounds, method="highs-ds")
    if result.status != 0:
        raise RuntimeError(f"the cache LP did not solve: {result.message}")
    solution: npt.NDArray[np.float64] = np.clip(result.x[gaps:], 0.0, 1.0)
    return solution
