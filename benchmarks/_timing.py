"""Timing helper shared by the benchmark scripts (run as ``python benchmarks/bench_X.py``)."""

from __future__ import annotations

import time
from collections.abc import Callable


def best_of(run: Callable[[], object], repeats: int) -> float:
    """Best wall time of ``repeats`` calls, in seconds (the least disturbed by a busy machine)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best
