"""Garbage-collector pause processes, one schedule per server.

Each collector is a function ``(gc spec, server spec, rng, horizon_ms) -> PauseSchedule`` in
:data:`COLLECTORS`. Pause schedules are drawn up front from the server's own random stream, so the
same seed gives the same pauses whatever else changes (common random numbers across configurations).

The G1-like model follows the engineering relations of ``anchors.md`` §7:

* young collections every ``eden / allocation_rate`` seconds (eden = ``eden_fraction`` x heap), each a
  pause drawn from ``young_pause_ms``; ``survival_fraction`` of eden is promoted to the old generation;
* when old occupancy passes ``ihop`` x heap a concurrent mark runs and the next ``mixed_count`` young
  pauses are mixed (``mixed_factor`` times longer), bringing the old generation back to live data;
* when the live heap leaves no room to collect into (old occupancy above ``(1 - reserve)`` x heap),
  evacuation fails and a full GC stops the server for ``live / full_gc_rate``.

So a larger live heap (for instance a bigger upsert primary-key map) gives more frequent mixed cycles,
then full GCs: the effect the upsert sizing question is about.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from workbench import defaults as D
from workbench.pinot.table_config import TableConfig
from workbench.scenario.schema import GCSpec, ServerSpec
from workbench.sim.pauses import PauseSchedule

__all__ = ["COLLECTORS", "effective_gc", "g1_pauses", "pause_schedule"]

_BATCH = 256
Collector = Callable[[GCSpec, ServerSpec, np.random.Generator, float], PauseSchedule]


def _none(spec: GCSpec, server: ServerSpec, rng: np.random.Generator, horizon_ms: float) -> PauseSchedule:
    return PauseSchedule.empty()


def _fixed(spec: GCSpec, server: ServerSpec, rng: np.random.Generator, horizon_ms: float) -> PauseSchedule:
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


def g1_pauses(spec: GCSpec, heap: float, rng: np.random.Generator,
              horizon_ms: float) -> list[tuple[float, float, str]]:
    """G1-like pauses ``(start_ms, end_ms, kind)`` with kind young, mixed or full (see module doc)."""
    eden = spec.eden_fraction * heap
    young_gap_ms = eden / spec.allocation_rate * 1000.0
    live = spec.live_heap
    old = live
    mixed_left = 0
    out: list[tuple[float, float, str]] = []
    # start at a random phase of the first young cycle so servers are not synchronised
    t = float(rng.uniform(0.0, young_gap_ms))
    while t < horizon_ms:
        old += spec.survival_fraction * eden
        if old > (1.0 - spec.reserve) * heap:
            pause, kind = max(live, old) / spec.full_gc_rate * 1000.0, "full"
            old, mixed_left = live, 0
        elif mixed_left > 0:
            pause, kind = float(spec.young_pause_ms.sample(rng, 1)[0]) * spec.mixed_factor, "mixed"
            old -= (old - live) / mixed_left
            mixed_left -= 1
        else:
            pause, kind = float(spec.young_pause_ms.sample(rng, 1)[0]), "young"
            if old > spec.ihop * heap:
                mixed_left = spec.mixed_count
        out.append((t, t + pause, kind))
        t += pause + young_gap_ms * float(rng.lognormal(0.0, 0.1))
    return out


def _g1(spec: GCSpec, server: ServerSpec, rng: np.random.Generator, horizon_ms: float) -> PauseSchedule:
    return PauseSchedule.from_intervals((s, e) for s, e, _ in g1_pauses(spec, server.heap, rng, horizon_ms))


def _zgc(spec: GCSpec, server: ServerSpec, rng: np.random.Generator, horizon_ms: float) -> PauseSchedule:
    """ZGC-like: a collection cycle when the free heap has been allocated, with three tiny pauses."""
    pause = spec.pause_ms or D.GC_ZGC_PAUSE_MS
    free = max(server.heap - spec.live_heap, 0.1 * server.heap)
    cycle_ms = 0.5 * free / spec.allocation_rate * 1000.0
    intervals: list[tuple[float, float]] = []
    t = float(rng.uniform(0.0, cycle_ms))
    while t < horizon_ms:
        for offset in (0.0, 0.3, 0.6):  # mark start, mark end, relocate start spread over the cycle
            start = t + offset * cycle_ms
            if intervals and start < intervals[-1][1]:
                start = intervals[-1][1]
            intervals.append((start, start + float(pause.sample(rng, 1)[0])))
        t += cycle_ms
    return PauseSchedule.from_intervals(i for i in intervals if i[0] < horizon_ms)


COLLECTORS: Mapping[str, Collector] = {"none": _none, "fixed": _fixed, "g1": _g1, "zgc": _zgc}


def pause_schedule(spec: GCSpec, server: ServerSpec, rng: np.random.Generator, horizon_ms: float) -> PauseSchedule:
    """The pauses of one server over ``[0, horizon_ms)`` for the configured collector."""
    return COLLECTORS[spec.collector](spec, server, rng, horizon_ms)


def effective_gc(gc: GCSpec, table: TableConfig, schema: Mapping[str, Any] | None) -> GCSpec:
    """The GC spec with the upsert metadata's heap added to the live heap.

    Bytes per key come from the JVM object-layout model of :mod:`workbench.pinot.heap`, for the
    schema's primary-key types (``LONG`` when no schema is given), the table's
    ``upsertConfig.hashFunction`` and a LONG comparison column.
    """
    if gc.upsert_keys == 0:
        return gc
    from workbench.pinot.heap import upsert_bytes_per_key

    schema = schema or {}
    types = {f.get("name"): f.get("dataType", "LONG") for key in ("dimensionFieldSpecs", "metricFieldSpecs",
             "dateTimeFieldSpecs") for f in schema.get(key) or ()}
    pk_types = tuple(str(types.get(c, "LONG")) for c in schema.get("primaryKeyColumns") or ()) or ("LONG",)
    hash_function = str((table.upsert_config or {}).get("hashFunction", "NONE"))
    per_key = upsert_bytes_per_key(pk_types, hash_function, num_keys=gc.upsert_keys)
    return replace(gc, live_heap=gc.live_heap + per_key * gc.upsert_keys)
