"""Compiled loops that build a replication's plan: one pass each instead of many numpy temporaries.

A plan holds a few numbers per request (for a million queries fanned out to a dozen servers, twelve
million requests). Building it with whole-array numpy calls (``np.repeat``, ``np.unique``, fancy
indexing) allocated and filled a dozen temporaries of that length; these loops write each result once.
They only move and compare numbers: every floating-point value is computed by the same operation as
before, so the plan (and both engines' records) is the same bits.

Large results are allocated by numpy, outside the compiled loops: numpy asks the kernel for huge pages
for big arrays, and on this kind of machine first touching fresh 4 KiB pages costs more than filling
them (measured: 45 ms against 6-10 ms for 96 MB).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from workbench.sim.decisions import slow_scale
from workbench.sim.fast.jit import kernel

__all__ = ["by_plan", "clock_times", "delivered_loads", "delivery_order", "first_seen", "jvm_factors", "offsets",
           "segment_sums"]

#: Insertion sort gives up on a server's requests after this many moves per request (then merge sort).
_MOVES_PER_REQUEST = 16


def first_seen(epoch: np.ndarray, key: np.ndarray, n_keys: int) -> tuple[np.ndarray, np.ndarray]:
    """Number each distinct ``(epoch, key)`` pair in order of first appearance.

    ``epoch`` must be non-decreasing (the health epoch of queries in arrival order), so one array of
    ``n_keys`` entries remembers the epoch each key was last numbered in: a counting pass, no sort.
    Returns each row's number (int32) and the first row of each number (int64).
    """
    number = np.empty(len(key), dtype=np.int32)
    first = np.empty(len(key), dtype=np.int64)
    count = _first_seen(epoch, key, np.full(n_keys, -1, dtype=np.int64), np.zeros(n_keys, dtype=np.int64),
                        number, first)
    return number, first[:count].copy()


@kernel
def _first_seen(epoch: np.ndarray, key: np.ndarray, seen_epoch: np.ndarray, seen_id: np.ndarray,
                number: np.ndarray, first: np.ndarray) -> int:
    count = 0
    for i in range(len(key)):
        k = key[i]
        if seen_epoch[k] != epoch[i]:
            seen_epoch[k] = epoch[i]
            seen_id[k] = count
            first[count] = i
            count += 1
        number[i] = seen_id[k]
    return count


def by_plan(query_segments: np.ndarray, plan_index: np.ndarray, plan_offsets: np.ndarray,
            values: np.ndarray) -> np.ndarray:
    """Per kept segment of every query, the value its plan gives that position (``values`` CSR by plan)."""
    out = np.empty(int(query_segments[-1]), dtype=values.dtype)
    _by_plan(query_segments, plan_index, plan_offsets, values, out)
    return out


@kernel
def _by_plan(query_segments: np.ndarray, plan_index: np.ndarray, plan_offsets: np.ndarray, values: np.ndarray,
             out: np.ndarray) -> None:
    for q in range(len(plan_index)):
        base = plan_offsets[plan_index[q]]
        a, b = query_segments[q], query_segments[q + 1]
        for k in range(b - a):
            out[a + k] = values[base + k]


def offsets(counts: Sequence[int] | np.ndarray) -> np.ndarray:
    """CSR offsets of ``counts``: int64, one longer, starting at 0."""
    out = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=out[1:])
    return out


def segment_sums(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Each segment's sum, ``values[offsets[i]:offsets[i + 1]]`` added left to right (the order ``np.bincount``
    with weights adds them in; numpy's own sums are pairwise, so they can differ in the last bit)."""
    out = np.empty(len(offsets) - 1, dtype=float)
    _segment_sums(np.asarray(values, dtype=float), np.asarray(offsets, dtype=np.int64), out)
    return out


@kernel
def _segment_sums(values: np.ndarray, offsets: np.ndarray, out: np.ndarray) -> None:
    for i in range(len(out)):
        total = 0.0
        for k in range(offsets[i], offsets[i + 1]):
            total += values[k]
        out[i] = total


def delivery_order(arrival: np.ndarray, template: np.ndarray, query_requests: np.ndarray,
                   template_requests: np.ndarray, server: np.ndarray, delays: np.ndarray, n_servers: int
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every server's requests in the order they reach it: by delivery time, ties in request order.

    Request ``r`` of query ``q`` is delivered at ``arrival[q] + delays[2 r]`` to
    ``server[template_requests[template[q]] + r - query_requests[q]]``. Returns the CSR offsets by
    server and, in delivery order, each request's id, its query and its delivery time. Arrivals are
    sorted and delays short, so each server's list is nearly sorted already: an insertion sort (stable,
    linear when nothing moves) does it, and a merge sort takes over when requests are far out of order.
    """
    offsets = np.zeros(n_servers + 1, dtype=np.int64)
    _count_by_server(template, template_requests, server, offsets)
    np.cumsum(offsets, out=offsets)
    n = int(offsets[-1])
    request, query, delivered = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int32), np.empty(n)
    _fill_by_server(arrival, template, query_requests, template_requests, server, delays, offsets[:-1].copy(),
                    request, query, delivered)
    for s in range(n_servers):
        _sort_segment(delivered, request, query, offsets[s], offsets[s + 1])
    return offsets, request, query, delivered


@kernel
def _count_by_server(template: np.ndarray, template_requests: np.ndarray, server: np.ndarray,
                     counts: np.ndarray) -> None:
    """``counts[s + 1]``: the requests server ``s`` receives."""
    for q in range(len(template)):
        t = template[q]
        for j in range(template_requests[t], template_requests[t + 1]):
            counts[server[j] + 1] += 1


@kernel
def _fill_by_server(arrival: np.ndarray, template: np.ndarray, query_requests: np.ndarray,
                    template_requests: np.ndarray, server: np.ndarray, delays: np.ndarray, fill: np.ndarray,
                    request: np.ndarray, query: np.ndarray, delivered: np.ndarray) -> None:
    """Requests grouped by server, in request order (``fill[s]``: server ``s``'s next free entry)."""
    for q in range(len(arrival)):
        t = template[q]
        r = query_requests[q]
        for j in range(template_requests[t], template_requests[t + 1]):
            s = server[j]
            i = fill[s]
            request[i], query[i], delivered[i] = r, q, arrival[q] + delays[2 * r]
            fill[s] = i + 1
            r += 1


@kernel
def _sort_segment(key: np.ndarray, request: np.ndarray, query: np.ndarray, lo: int, hi: int) -> None:
    """Stable sort of ``[lo, hi)`` by ``key`` (entries start in request order, so ties stay in it)."""
    budget = _MOVES_PER_REQUEST * (hi - lo)
    for i in range(lo + 1, hi):
        k, r, q = key[i], request[i], query[i]
        j = i
        while j > lo and key[j - 1] > k:
            key[j], request[j], query[j] = key[j - 1], request[j - 1], query[j - 1]
            j -= 1
        key[j], request[j], query[j] = k, r, q
        budget -= i - j
        if budget < 0:  # far out of order: a merge sort (stable; equal keys are still in request order)
            order = np.argsort(key[lo:hi], kind="mergesort")
            key[lo:hi] = key[lo:hi][order]
            request[lo:hi] = request[lo:hi][order]
            query[lo:hi] = query[lo:hi][order]
            return


def delivered_loads(request: np.ndarray, query: np.ndarray, template: np.ndarray, query_requests: np.ndarray,
                    template_requests: np.ndarray, docs: np.ndarray, per_request: float, per_doc: float
                    ) -> np.ndarray:
    """For requests in delivery order, the bytes each allocates on its server:
    ``per_request + per_doc x documents it scans``."""
    allocated = np.empty(len(request))
    _loads(request, query, template, query_requests, template_requests, docs, per_request, per_doc, allocated)
    return allocated


@kernel
def _loads(request: np.ndarray, query: np.ndarray, template: np.ndarray, query_requests: np.ndarray,
           template_requests: np.ndarray, docs: np.ndarray, per_request: float, per_doc: float,
           allocated: np.ndarray) -> None:
    for i in range(len(request)):
        r, q = request[i], query[i]
        allocated[i] = per_request + per_doc * docs[template_requests[template[q]] + r - query_requests[q]]


@kernel
def clock_times(at: np.ndarray, scale: float, horizon: float) -> np.ndarray:
    """A log's times (``at x scale``) as the engines' clock reaches them, ``t = t + max(0, at - t)``,
    up to the first at or after ``horizon``."""
    out = np.empty(len(at))
    t = 0.0
    n = 0
    for i in range(len(at)):
        a = at[i] * scale
        if a >= horizon:
            break
        t = t + max(0.0, a - t)
        out[n] = t
        n += 1
    return out[:n]


def jvm_factors(delivered: np.ndarray, server: np.ndarray, window_offsets: np.ndarray, start: np.ndarray,
                end: np.ndarray, jvm: np.ndarray) -> np.ndarray:
    """Per request, what its own delay is multiplied by: the ``jvm`` factor of its server's slow window that
    its delivery falls in (:func:`~workbench.sim.decisions.slow_scale` from 1), else 1."""
    out = np.empty(len(delivered))
    _jvm_factors(delivered, server, window_offsets, start, end, jvm, out)
    return out


@kernel
def _jvm_factors(delivered: np.ndarray, server: np.ndarray, window_offsets: np.ndarray, start: np.ndarray,
                 end: np.ndarray, jvm: np.ndarray, out: np.ndarray) -> None:
    for r in range(len(delivered)):
        a, b = window_offsets[server[r]], window_offsets[server[r] + 1]
        out[r] = slow_scale(1.0, delivered[r], start[a:b], end[a:b], jvm[a:b])
