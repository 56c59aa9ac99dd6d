"""Garbage-collector pause processes, one schedule per server.

Each collector is a function ``(spec, rng, horizon_ms) -> PauseSchedule`` in :data:`COLLECTORS`, so
the G1-like and ZGC-like models of later work slot in by name. Pause schedules are drawn up front
from the server's own random stream: the same seed gives the same pauses whatever else changes
(common random numbers across compared configurations).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from workbench.scenario.schema import GCSpec
from workbench.sim.pauses import PauseSchedule

__all__ = ["COLLECTORS", "pause_schedule"]

_BATCH = 256


def _none(spec: GCSpec, rng: np.random.Generator, horizon_ms: float) -> PauseSchedule:
    return PauseSchedule.empty()


def _fixed(spec: GCSpec, rng: np.random.Generator, horizon_ms: float) -> PauseSchedule:
    """Alternating run and pause: draw the gap (s) from the end of the last pause, then the pause (ms)."""
    assert spec.interval_s is not None and spec.pause_ms is not None
    intervals: list[tuple[float, float]] = []
    t = 0.0
    while t < horizon_ms:
        gaps = spec.interval_s.sample(rng, _BATCH) * 1000.0
        pauses = spec.pause_ms.sample(rng, _BATCH)
        for gap, pause in zip(gaps, pauses, strict=True):
            start = t + gap
            if start >= horizon_ms:
                return PauseSchedule.from_intervals(intervals)
            intervals.append((start, start + pause))
            t = start + pause
    return PauseSchedule.from_intervals(intervals)


COLLECTORS: Mapping[str, Callable[[GCSpec, np.random.Generator, float], PauseSchedule]] = {
    "none": _none,
    "fixed": _fixed,
}


def pause_schedule(spec: GCSpec, rng: np.random.Generator, horizon_ms: float) -> PauseSchedule:
    """The pauses of one server over ``[0, horizon_ms)`` for the configured collector."""
    return COLLECTORS[spec.collector](spec, rng, horizon_ms)
