"""Throughput of WeightedLRUCache (weights + TTL + stats) against a bare OrderedDict LRU, same trace.

Both caches replay the same Zipf trace the same way (``get``; on a miss ``put``), through method
calls, in the same process and run. They run in lockstep: the trace is cut into chunks and each chunk
is replayed by one cache and then the other, timing the process's CPU time (``time.process_time``),
so a burst of load elsewhere on a shared machine hits both sides alike. The best of several full
replays is reported for each. Goal: the workbench cache runs at least half as fast as the bare LRU.

The TTL is the RFC's broker default (300 s) at one request per millisecond, and the cache holds a
tenth of the trace's distinct bytes, so evictions, expirations and hits all happen.

Run: ``.venv/bin/python benchmarks/bench_cache.py [--requests N] [--repeats R]``
"""

from __future__ import annotations

import argparse
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence

import numpy as np

from workbench.pinot.cache.lru import WeightedLRUCache
from workbench.pinot.cache.trace import zipf_trace

GOAL = 0.5
RFC_BROKER_TTL_MS = 300_000.0
Chunk = tuple[Sequence[int], Sequence[int], Sequence[float]]


class BareLRU:
    """The baseline: an OrderedDict evicting by bytes, with no TTL, tables or statistics."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.entries: OrderedDict[Hashable, tuple[object, int]] = OrderedDict()
        self.bytes = 0

    def get(self, key: Hashable) -> object | None:
        entry = self.entries.get(key)
        if entry is None:
            return None
        self.entries.move_to_end(key)
        return entry[0]

    def put(self, key: Hashable, value: object, weight: int) -> None:
        old = self.entries.pop(key, None)
        if old is not None:
            self.bytes -= old[1]
        if weight > self.max_bytes:
            return
        self.entries[key] = (value, weight)
        self.bytes += weight
        while self.bytes > self.max_bytes:
            _, (_, evicted) = self.entries.popitem(last=False)
            self.bytes -= evicted


def bare_replayer(max_bytes: int) -> tuple[Callable[[Chunk], None], Callable[[], int]]:
    """A chunk replayer over a fresh bare LRU, and a function returning its hits so far."""
    cache, hits = BareLRU(max_bytes), [0]
    get, put = cache.get, cache.put

    def replay(chunk: Chunk) -> None:
        found = 0
        for key, size in zip(chunk[0], chunk[1], strict=True):
            if get(key) is None:
                put(key, True, size)
            else:
                found += 1
        hits[0] += found

    return replay, lambda: hits[0]


def workbench_replayer(max_bytes: int, ttl_ms: float) -> tuple[Callable[[Chunk], None], Callable[[], int]]:
    """A chunk replayer over a fresh WeightedLRUCache, and a function returning its hits so far."""
    cache: WeightedLRUCache[int, bool] = WeightedLRUCache(max_bytes, ttl_ms=ttl_ms)
    get, put = cache.get, cache.put

    def replay(chunk: Chunk) -> None:
        for key, size, now in zip(chunk[0], chunk[1], chunk[2], strict=True):
            if get(key, now) is None:
                put(key, True, size, now)

    return replay, lambda: cache.stats.hits


def lockstep(chunks: list[Chunk], max_bytes: int, ttl_ms: float) -> list[tuple[float, int]]:
    """Replay every chunk through both caches in turn: (CPU seconds, hits) for bare, then workbench."""
    sides = [bare_replayer(max_bytes), workbench_replayer(max_bytes, ttl_ms)]
    spent = [0.0] * len(sides)
    for chunk in chunks:
        for i, (replay, _) in enumerate(sides):
            began = time.process_time()
            replay(chunk)
            spent[i] += time.process_time() - began
    return [(seconds, hits()) for seconds, (_, hits) in zip(spent, sides, strict=True)]


def main() -> None:
    parser = argparse.ArgumentParser(description="WeightedLRUCache vs a bare OrderedDict LRU")
    parser.add_argument("--requests", type=int, default=1_000_000)
    parser.add_argument("--objects", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--chunk", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()

    trace = zipf_trace(np.random.default_rng(args.seed), args.requests, args.objects, alpha=0.9,
                       mean_size_bytes=8_192, size_sigma=1.0, interval_ms=1.0)
    keys, sizes, times = trace["key"].tolist(), trace["size_bytes"].tolist(), trace["time_ms"].tolist()
    max_bytes = int(trace.groupby("key")["size_bytes"].first().sum() * 0.1)
    chunks = [(keys[i:i + args.chunk], sizes[i:i + args.chunk], times[i:i + args.chunk])
              for i in range(0, len(keys), args.chunk)]

    runs = [lockstep(chunks, max_bytes, RFC_BROKER_TTL_MS) for _ in range(args.repeats)]
    (bare_s, bare_hits), (work_s, work_hits) = (min(r[i] for r in runs) for i in range(2))
    bare_ops, work_ops = args.requests / bare_s, args.requests / work_s
    ratio = work_ops / bare_ops
    print(f"trace: {args.requests:,} requests over {args.objects:,} keys (Zipf 0.9, log-normal sizes), "
          f"cache {max_bytes:,} B, TTL {RFC_BROKER_TTL_MS:,.0f} ms, best of {args.repeats}")
    print(f"bare OrderedDict LRU        : {bare_ops:12,.0f} ops/s  hit rate {bare_hits / args.requests:.4f} (no TTL)")
    print(f"WeightedLRUCache (w + TTL)  : {work_ops:12,.0f} ops/s  hit rate {work_hits / args.requests:.4f}")
    print(f"ratio: {ratio:.2f}x (goal >= {GOAL}x) -> {'PASS' if ratio >= GOAL else 'FAIL'}")


if __name__ == "__main__":
    main()
