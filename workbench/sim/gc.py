"""Each server's garbage collection over a replication: its pauses, and what its heap did.

The collectors are the models of :mod:`workbench.jvm` (``docs/gc.md``), chosen by ``cluster.gc.collector``
in :data:`COLLECTORS`:

* ``none``: no pauses; ``fixed``: alternate a drawn run time and a drawn pause (validation, log replay);
* ``g1``: G1 fitted to real JDK 17 logs, driven by the server's allocation. By default a request
  allocates ``bytes_per_request`` plus ``bytes_per_doc`` per document it scans, charged when it is
  delivered (or when a pause in progress ends: a stopped JVM allocates nothing), so GC follows the load
  each server receives; ``allocation_rate`` makes it a constant rate instead;
* ``zgc``: generational ZGC at the server's average allocation rate; its concurrent threads take a
  share of the cores, which the engines charge by stretching the server's work.

Allocation is charged when requests arrive, not while they run: over a young-collection interval
(seconds) the difference is a few milliseconds of work, and it keeps every server's pauses a function of
the timing-free plan, which both engines share. Draws come from the server's own GC stream, so the same
seed gives the same pauses for the same load.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from workbench.jvm import G1Heap, G1Params, Pause, ZGCParams, g1_pauses_at_constant_rate
from workbench.jvm import zgc_pauses_at_constant_rate as zgc_schedule
from workbench.scenario.schema import GCSpec
from workbench.sim.memory import ServerMemory
from workbench.sim.pauses import PauseSchedule

__all__ = ["COLLECTORS", "Allocation", "ServerHeap", "server_gc"]

_BATCH = 256


@dataclass(frozen=True)
class Allocation:
    """What one server allocates over the run: per delivered request, its time (ms) and bytes."""

    times_ms: np.ndarray
    bytes: np.ndarray

    @property
    def total_bytes(self) -> float:
        """Everything the server allocates over the run, bytes."""
        return float(self.bytes.sum())


@dataclass(frozen=True)
class ServerHeap:
    """One server's GC over a replication: pauses (with kinds), live and peak heap, out-of-memory, CPU share."""

    pauses: PauseSchedule
    live_bytes: float
    peak_bytes: float
    oom_at_ms: float | None = None
    cpu_share: float = 0.0


def g1_params(gc: GCSpec) -> G1Params:
    """The G1 parameters a ``cluster.gc`` section sets (its keys are :class:`G1Params`' fields)."""
    values = {f.name: getattr(gc, f.name) for f in fields(G1Params) if f.name != "pause_sigma"}
    if gc.pause_sigma is not None:
        values["pause_sigma"] = gc.pause_sigma
    return G1Params(**values)


def zgc_params(gc: GCSpec) -> ZGCParams:
    """The ZGC parameters a ``cluster.gc`` section sets (``pause_ms``' mean is the median pause)."""
    values: dict[str, Any] = {f.name: getattr(gc, f.name) for f in fields(ZGCParams)
                              if f.name not in ("pause_ms", "pause_sigma")}
    if gc.pause_ms is not None:
        values["pause_ms"] = gc.pause_ms.mean
    if gc.pause_sigma is not None:
        values["pause_sigma"] = gc.pause_sigma
    return ZGCParams(**values)


def _schedule(pauses: list[Pause], horizon_ms: float) -> PauseSchedule:
    """Pauses as a schedule: sorted; back-to-back pauses stay apart (a start a rounding error before the last
    end moves to it); a pause that really overlaps another (a ZGC pause inside a stall) merges into it, named
    by the longer of the two."""
    merged: list[list[Any]] = []
    for p in sorted((p for p in pauses if p.start_ms < horizon_ms and p.duration_ms > 0), key=lambda p: p.start_ms):
        start, end = p.start_ms, p.end_ms
        if merged and start < merged[-1][1]:
            last = merged[-1]
            if start >= last[1] - 1e-9 * max(1.0, abs(last[1])):
                start = last[1]
            else:
                if p.duration_ms > last[3]:
                    last[2], last[3] = p.kind, p.duration_ms
                last[1] = max(last[1], end)
                continue
        merged.append([start, max(start, end), p.kind, p.duration_ms])
    return PauseSchedule.from_intervals([(m[0], m[1]) for m in merged], [m[2] for m in merged])


def _none(gc: GCSpec, heap_bytes: float, mem: ServerMemory, rng: np.random.Generator, horizon_ms: float,
          load: Allocation | None, cores: int) -> ServerHeap:
    return ServerHeap(PauseSchedule.empty(), mem.live.total, mem.live.total)


def _fixed(gc: GCSpec, heap_bytes: float, mem: ServerMemory, rng: np.random.Generator, horizon_ms: float,
           load: Allocation | None, cores: int) -> ServerHeap:
    """Alternating run and pause: draw the gap (s) from the end of the last pause, then the pause (ms)."""
    assert gc.interval_s is not None and gc.pause_ms is not None
    pauses: list[Pause] = []
    t = 0.0
    while t < horizon_ms:
        gaps = gc.interval_s.sample(rng, _BATCH) * 1000.0
        lengths = gc.pause_ms.sample(rng, _BATCH)
        for gap, length in zip(gaps, lengths, strict=True):
            start = t + gap
            if start >= horizon_ms:
                return ServerHeap(_schedule(pauses, horizon_ms), mem.live.total, mem.live.total)
            pauses.append(Pause(start, float(length), "young"))
            t = start + length
    return ServerHeap(_schedule(pauses, horizon_ms), mem.live.total, mem.live.total)


def _g1_driven(heap: G1Heap, load: Allocation, horizon_ms: float) -> list[Pause]:
    """G1 driven by the server's deliveries: allocation charged in delivery order (after a pause in
    progress), one call per collection (between collections only the eden fill matters)."""
    rate = load.total_bytes / (horizon_ms / 1000.0) if horizon_ms > 0 else 0.0
    heap.settle(rate)  # the servers have been serving: eden where G1 keeps it at the run's mean allocation rate
    heap.prefill(float(heap.rng.uniform(0.0, heap.eden_target)), rate)  # servers are not synchronised
    cum = np.cumsum(load.bytes)
    times, n = load.times_ms, len(load.bytes)
    pauses: list[Pause] = []
    base, last_end = 0.0, 0.0
    while not heap.oom:
        j = int(np.searchsorted(cum, base + heap.eden_free_bytes, side="left"))
        fill_at = max(float(times[j]), last_end) if j < n else np.inf
        due = heap.next_event_ms()
        if due is not None and due < fill_at and due < horizon_ms:
            step = heap.advance(due)
        elif j < n and fill_at < horizon_ms:
            step = heap.allocate(fill_at, float(cum[j]) - base)
            base = float(cum[j])
        else:
            break
        if step:
            pauses.extend(step)
            last_end = max(last_end, step[-1].end_ms)
    return pauses


def _g1(gc: GCSpec, heap_bytes: float, mem: ServerMemory, rng: np.random.Generator, horizon_ms: float,
        load: Allocation | None, cores: int) -> ServerHeap:
    params = g1_params(gc)
    if gc.allocation_rate is not None or load is None:
        rate = gc.allocation_rate if gc.allocation_rate is not None else 0.0
        if rate <= 0:
            return ServerHeap(PauseSchedule.empty(), mem.live.total, mem.live.total)
        pauses, heap = g1_pauses_at_constant_rate(params, heap_bytes, mem.live, rate, horizon_ms, rng,
                                                  update_rate=mem.update_rate, warm=True)
    else:
        heap = G1Heap(params, heap_bytes, mem.live, rng, update_rate=mem.update_rate)
        pauses = _g1_driven(heap, load, horizon_ms)
    return ServerHeap(_schedule(pauses, horizon_ms), heap.live_bytes, heap.peak_bytes, heap.oom_at_ms)


def _zgc(gc: GCSpec, heap_bytes: float, mem: ServerMemory, rng: np.random.Generator, horizon_ms: float,
         load: Allocation | None, cores: int) -> ServerHeap:
    rate = gc.allocation_rate if gc.allocation_rate is not None else (
        load.total_bytes / (horizon_ms / 1000.0) if load is not None and horizon_ms > 0 else 0.0)
    if rate <= 0:
        return ServerHeap(PauseSchedule.empty(), mem.live.total, mem.live.total)
    pauses, cycle = zgc_schedule(zgc_params(gc), heap_bytes, mem.live, rate, horizon_ms, rng, cores=cores)
    oom_at = 0.0 if cycle.oom else None
    peak = mem.live.total if cycle.oom else min(heap_bytes, mem.live.total + rate * cycle.period_ms / 1000.0)
    share = 0.0 if cycle.oom else cycle.cpu_share
    return ServerHeap(_schedule(pauses, horizon_ms), mem.live.total, peak, oom_at, share)


Collector = Callable[[GCSpec, float, ServerMemory, np.random.Generator, float, "Allocation | None", int], ServerHeap]
#: ``cluster.gc.collector`` -> the model that draws a server's pauses.
COLLECTORS: Mapping[str, Collector] = {"none": _none, "fixed": _fixed, "g1": _g1, "zgc": _zgc}


def server_gc(gc: GCSpec, heap_bytes: float, mem: ServerMemory, rng: np.random.Generator, horizon_ms: float,
              load: Allocation | None, cores: int) -> ServerHeap:
    """One server's GC over ``[0, horizon_ms)``: ``load`` is what it allocates (``None``: not known, as with
    adaptive routing; then only a constant ``allocation_rate`` drives it)."""
    return COLLECTORS[gc.collector](gc, heap_bytes, mem, rng, horizon_ms, load, cores)
