"""G1 as a per-server heap state the simulation engine drives with allocations.

The engine tells a :class:`G1Heap` how many bytes a server allocated and when; the heap answers with
the pauses that allocation triggered. What happens is G1's cycle in the terms of
:mod:`workbench.jvm.g1_params`:

1. **Young collection** when eden is full. Its pause prices the bytes that survive and the share of the
   upsert map the remembered sets make it scan. A share of the survivors is promoted to the old
   generation, where it turns into garbage.
2. **Eden sizing** after each collection, as G1's ergonomics do: between ``new_size_min`` and
   ``new_size_max`` of the heap, no larger than the predicted young pause allows under
   ``pause_goal_ms``, no faster than ``young_growth`` per collection, and never more than the free heap
   (heap less the old generation and the ``reserve``). While a concurrent cycle and its mixed
   collections run, eden stays at its minimum (the probe's 20M-key runs, whose old generation stays
   above the IHOP, never leave it).
3. **Concurrent cycle** when the old generation passes ``ihop`` of the heap: marking runs in the
   background (live old bytes / ``mark_rate``), then a **remark** pause, the remembered-set rebuild, a
   **cleanup** pause, one young collection and up to
   ``mixed_count`` **mixed** collections that reclaim the old garbage above ``heap_waste``.
4. **Evacuation failure**: when the survivors do not fit in the free heap, the young pause is followed
   by a **full** GC; so is an eden that no longer fits at all. A full GC compacts the heap to the live
   bytes.
5. **Out of memory**: when the live heap leaves no room for the smallest young generation, the JVM
   would throw ``OutOfMemoryError``. The heap records when (:attr:`G1Heap.oom_at_ms`) and emits no more
   pauses: the engine decides what a dead server means (it is not turned into endless full GCs).

Concurrent pauses fall due in time, not on allocation: :meth:`G1Heap.next_event_ms` says when the next
one is due and :meth:`G1Heap.advance` emits it (``allocate`` also emits those due by its time).
"""

from __future__ import annotations

import math

import numpy as np

from workbench.errors import InputError
from workbench.jvm.g1_params import G1Params, region_bytes, rs_scan_ms, young_copied_bytes, young_form_ms
from workbench.jvm.live import LiveHeap
from workbench.jvm.pauses import Pause

__all__ = ["G1Heap", "g1_pauses_at_constant_rate"]


class G1Heap:
    """One JVM's G1 heap over time.

    Parameters
    ----------
    params
        Collector parameters.
    heap_bytes
        ``-Xmx``, bytes.
    live
        The live heap (static part and upsert map).
    rng
        Random stream for pause noise (the server's own, for common random numbers).
    update_rate
        Upsert updates of existing keys per second on this JVM (remembered-set work).
    start_ms
        Clock at which the heap starts, right after a full GC (no garbage, eden empty), ms.

    Eden starts at its minimum, as in a JVM just started; :meth:`settle` starts it where a JVM that has been
    serving keeps it.
    """

    def __init__(self, params: G1Params, heap_bytes: float, live: LiveHeap, rng: np.random.Generator, *,
                 update_rate: float = 0.0, start_ms: float = 0.0) -> None:
        if heap_bytes <= 0:
            raise InputError("heap", f"must be > 0 bytes, got {heap_bytes}")
        if update_rate < 0:
            raise InputError("update_rate", f"must be >= 0 updates/s, got {update_rate}")
        self.params, self.heap, self.live, self.rng = params, float(heap_bytes), live, rng
        self.update_rate = float(update_rate)
        self.region = float(region_bytes(heap_bytes))
        self.old = live.total
        self.eden_used = 0.0
        self.survivors = 0.0
        self.eden_target = params.new_size_min * self.heap
        self.last_gc_start_ms = self.last_gc_end_ms = start_ms
        self.remark_at_ms: float | None = None
        self.cleanup_at_ms: float | None = None
        self.prepare_mixed = False
        self.mixed_left = 0
        self.mixed_reclaim = 0.0
        self.peak_bytes = live.total
        self.oom_at_ms: float | None = None
        self._check_oom(start_ms)

    # -- what the engine reads ------------------------------------------------------------------------
    @property
    def oom(self) -> bool:
        """The live heap no longer fits: the JVM would have thrown ``OutOfMemoryError``."""
        return self.oom_at_ms is not None

    @property
    def live_bytes(self) -> float:
        """Live bytes (static part and upsert map), bytes."""
        return self.live.total

    @property
    def used_bytes(self) -> float:
        """Heap in use now (old generation with its garbage, survivors, eden), bytes."""
        return self.old + self.survivors + self.eden_used

    @property
    def eden_free_bytes(self) -> float:
        """Bytes that can still be allocated before the next young collection."""
        return max(self.eden_target - self.eden_used, 0.0)

    @property
    def in_cycle(self) -> bool:
        """A concurrent cycle or its mixed collections are under way."""
        return (self.remark_at_ms is not None or self.cleanup_at_ms is not None or self.prepare_mixed
                or self.mixed_left > 0)

    def next_event_ms(self) -> float | None:
        """When the next concurrent-cycle pause (remark or cleanup) is due, ms; ``None`` if none is."""
        if self.oom:
            return None
        return self.remark_at_ms if self.remark_at_ms is not None else self.cleanup_at_ms

    # -- what the engine calls ------------------------------------------------------------------------
    def advance(self, now_ms: float) -> list[Pause]:
        """Emit the concurrent-cycle pauses due by ``now_ms`` (remark, then cleanup)."""
        pauses: list[Pause] = []
        while (due := self.next_event_ms()) is not None and due <= now_ms:
            pauses.append(self._remark(due) if self.remark_at_ms is not None else self._cleanup(due))
        return pauses

    def allocate(self, now_ms: float, nbytes: float) -> list[Pause]:
        """Allocate ``nbytes`` at ``now_ms``; returns the pauses this triggers, in time order.

        Concurrent pauses due by ``now_ms`` come first. A young collection starts at ``now_ms`` when
        eden fills; an allocation larger than eden triggers several, back to back. After an
        out-of-memory nothing is emitted.
        """
        if nbytes < 0:
            raise InputError("nbytes", f"must be >= 0, got {nbytes}")
        pauses = self.advance(now_ms)
        t = max(now_ms, pauses[-1].end_ms if pauses else now_ms)
        self.eden_used += nbytes
        while not self.oom and self.eden_used >= self.eden_target:
            carry = self.eden_used - self.eden_target
            self.eden_used = self.eden_target
            collected = self._collect(t)
            pauses.extend(collected)
            t = collected[-1].end_ms
            self.eden_used = carry if not self.oom else 0.0
        return pauses

    # -- the cycle --------------------------------------------------------------------------------------
    def _noise(self, sigma: float) -> float:
        return math.exp(sigma * float(self.rng.standard_normal())) if sigma > 0 else 1.0

    def _scan_ms(self, t_ms: float) -> float:
        """Remembered-set scan for the updates since the last collection ended."""
        updates = self.update_rate * max(t_ms - self.last_gc_end_ms, 0.0) / 1000.0
        return rs_scan_ms(self.params, self.live.map_bytes, updates)

    def _collect(self, t: float) -> list[Pause]:
        """A young or mixed collection at ``t`` with eden full, and a full GC if it fails."""
        p = self.params
        self.peak_bytes = max(self.peak_bytes, self.used_bytes)
        rate = self.eden_used / max((t - self.last_gc_start_ms) / 1000.0, 1e-3)  # wall clock, pause included
        copied = young_copied_bytes(p, self.eden_used, rate)
        kind, old_copied = "young", 0.0
        if self.mixed_left > 0:
            kind, old_copied = "mixed", self.mixed_reclaim * p.mixed_live_ratio
            self.old -= self.mixed_reclaim
            self.mixed_left -= 1
        elif self.prepare_mixed:
            self.prepare_mixed = False
            self._plan_mixed()
        form_ms = young_form_ms(p, copied + old_copied, self._scan_ms(t))
        duration = form_ms * self._noise(p.pause_sigma)
        free = self.heap - self.old - self.eden_used - self.survivors
        promoted = p.promotion_fraction * copied
        pauses = [Pause(t, duration, kind)]
        end = t + duration
        self.eden_used = 0.0
        if copied > free:  # to-space exhausted: survivors stay where they are, then a full GC
            return [*pauses, *self._full(end)]
        self.old += promoted
        self.survivors = copied - promoted
        self.last_gc_start_ms, self.last_gc_end_ms = t, end
        self._maybe_start_marking(end)
        if not self._size_eden(end, duration):
            return [*pauses, *self._full(end)]
        return pauses

    def settle(self, allocation_rate: float) -> None:
        """Eden at the size G1 settles at in a JVM serving at ``allocation_rate`` (bytes/s): the largest the heap's
        bounds allow whose predicted young pause stays at the pause goal's target (``goal_share`` of
        ``pause_goal_ms``), found by bisection on the pause form.

        Why: Apache Pinot 1.5.1's server kept 31 MB of eden in its 70 MB heap while serving, and each simulated
        server started from the 5% minimum took most of a 30 s replay to grow there (18 young collections per 1,000
        queries at 65/s against Pinot's 11.6). A log whose first collections found eden grown is matched settled
        too (:func:`workbench.jvm.fit.started_warm`); the probe's, whose drive phases start after a full GC, not.
        """
        if self.oom or self.in_cycle:
            return
        p = self.params
        low, high, room = self._eden_bounds()
        if room < self.region:  # not even one region: left as it is, as _size_eden leaves it
            return
        top = min(high, room)
        if top <= low or allocation_rate <= 0:
            self.eden_target = top
            return
        target = p.goal_share * p.pause_goal_ms

        def pause(eden: float) -> float:
            scan = rs_scan_ms(p, self.live.map_bytes, self.update_rate * eden / allocation_rate)
            return young_form_ms(p, young_copied_bytes(p, eden, allocation_rate), scan)

        if pause(top) <= target:
            self.eden_target = top
            return
        lo, hi = low, top
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if pause(mid) <= target else (lo, mid)
        self.eden_target = lo

    def prefill(self, eden_bytes: float, allocation_rate: float) -> None:
        """Start with ``eden_bytes`` already allocated at ``allocation_rate`` (bytes/s; 0: all at the start, as a JVM's
        start-up allocates), so servers started together are not synchronised. The previous collection is dated
        back to when that allocation began, so the first collection reads the rate it was allocated at: dated at
        the start, a settled eden's prefill read as allocated since, up to 60 times the rate, and its first
        collection copied as much more (in an 8 GiB heap at 100 and 200 queries/s, young pauses of 47 and 53 ms
        on average where 11 and 16 were due).
        """
        self.eden_used = float(eden_bytes)
        if allocation_rate > 0:
            self.last_gc_start_ms = self.last_gc_end_ms = self.last_gc_start_ms - eden_bytes / allocation_rate * 1000.0

    def _eden_bounds(self) -> tuple[float, float, float]:
        """Eden's bounds now: ``new_size_min`` and ``new_size_max`` of the heap less the survivors (at least one
        region), and the room the free heap leaves (heap less ``reserve``, old generation and survivors), bytes."""
        p = self.params
        low = max(p.new_size_min * self.heap - self.survivors, self.region)
        high = max(p.new_size_max * self.heap - self.survivors, low)
        return low, high, (1.0 - p.reserve) * self.heap - self.old - self.survivors

    def _size_eden(self, now_ms: float, last_pause_ms: float | None = None) -> bool:
        """Eden for the next cycle (G1's young sizing); False when not even one region fits.

        G1 expects a young pause to grow in proportion to eden (more time between collections, more
        cards and survivors), so it scales eden by how far the last pause (``last_pause_ms``) was from
        its target (``goal_share`` of ``pause_goal_ms``), growing by at most ``young_growth``. A long
        pause shrinks the next eden at once, so eden swings as G1's does in the logs.
        """
        p = self.params
        low, high, room = self._eden_bounds()
        if room < self.region:
            return False
        if self.in_cycle:  # marking or mixed collections: G1 keeps the young generation at its minimum
            self.eden_target = min(low, room)
            return True
        ratio = 1.0 + p.young_growth
        if last_pause_ms is not None and last_pause_ms > p.young_base_ms:
            ratio = min(ratio, (p.goal_share * p.pause_goal_ms - p.young_base_ms) / (last_pause_ms - p.young_base_ms))
        self.eden_target = min(max(min(self.eden_target * ratio, high), low), room)
        return True

    def _maybe_start_marking(self, now_ms: float) -> None:
        p = self.params
        if self.in_cycle or self.old < p.ihop * self.heap:
            return
        self.remark_at_ms = now_ms + self.live.total / p.mark_rate * 1000.0

    def _remark(self, t: float) -> Pause:
        p = self.params
        pause = Pause(t, p.remark_ms * self._noise(p.concurrent_sigma), "remark")
        self.remark_at_ms = None
        self.cleanup_at_ms = pause.end_ms + self.live.total / p.rebuild_rate * 1000.0
        return pause

    def _cleanup(self, t: float) -> Pause:
        p = self.params
        pause = Pause(t, p.cleanup_ms * self._noise(p.concurrent_sigma), "cleanup")
        self.cleanup_at_ms = None
        self.prepare_mixed = True
        return pause

    def _plan_mixed(self) -> None:
        """After the prepare-mixed young collection: spread the reclaimable garbage over the mixed GCs."""
        p = self.params
        reclaimable = self.old - self.live.total - p.heap_waste * self.heap
        if reclaimable > 0:
            self.mixed_left = p.mixed_count
            self.mixed_reclaim = reclaimable / p.mixed_count

    def _full(self, t: float) -> list[Pause]:
        p = self.params
        self.peak_bytes = max(self.peak_bytes, self.used_bytes)
        duration = (p.full_base_ms + self.live.total / (1 << 30) * p.full_ms_per_gb) * self._noise(p.full_sigma)
        end = t + duration
        self.old, self.survivors, self.eden_used = self.live.total, 0.0, 0.0
        self.remark_at_ms = self.cleanup_at_ms = None
        self.prepare_mixed, self.mixed_left = False, 0
        self.last_gc_start_ms, self.last_gc_end_ms = t, end
        self.eden_target = p.new_size_min * self.heap
        if not self._check_oom(end):
            self._size_eden(end)
        return [Pause(t, duration, "full")]

    def _check_oom(self, t: float) -> bool:
        """Mark the JVM out of memory when the live heap leaves no room for the smallest young generation."""
        if self.live.total + max(self.params.new_size_min * self.heap, self.region) > self.heap:
            self.oom_at_ms = t
        return self.oom


def g1_pauses_at_constant_rate(params: G1Params, heap_bytes: float, live: LiveHeap, allocation_rate: float,
                               horizon_ms: float, rng: np.random.Generator, *,
                               update_rate: float = 0.0, warm: bool = False) -> tuple[list[Pause], G1Heap]:
    """G1 pauses over ``[0, horizon_ms)`` for a constant allocation rate, and the heap at the end.

    The rate is per second of wall-clock time: work that arrives while the JVM is paused allocates
    right after the pause (as queries that waited do), so a pause can be followed at once by another.
    The first young collection comes after a random part of the first eden, so servers started
    together are not synchronised.

    Parameters
    ----------
    params, heap_bytes, live, rng, update_rate
        As for :class:`G1Heap`.
    warm
        Start eden where a JVM serving at this rate keeps it (:meth:`G1Heap.settle`), not at its minimum.
    allocation_rate
        Bytes allocated per second.
    horizon_ms
        End of the schedule, ms.
    """
    if allocation_rate <= 0:
        raise InputError("allocation_rate", f"must be > 0 bytes/s, got {allocation_rate}")
    heap = G1Heap(params, heap_bytes, live, rng, update_rate=update_rate)
    if warm:
        heap.settle(allocation_rate)
    # a warm JVM's part-filled eden was allocated at the serving rate; a cold one's is its start-up's, at its start
    heap.prefill(float(rng.uniform(0.0, heap.eden_target)), allocation_rate if warm else 0.0)
    pauses: list[Pause] = []
    t = 0.0
    while t < horizon_ms and not heap.oom:
        fill_at = t + heap.eden_free_bytes / allocation_rate * 1000.0
        due = heap.next_event_ms()
        if due is not None and due < fill_at:
            heap.eden_used += (due - t) / 1000.0 * allocation_rate
            step, t = heap.advance(due), due
        else:
            step, t = heap.allocate(fill_at, heap.eden_free_bytes), fill_at
        if step:
            heap.eden_used += (step[-1].end_ms - t) / 1000.0 * allocation_rate  # backlog of the pause
            t = step[-1].end_ms
        pauses.extend(step)
    return [q for q in pauses if q.start_ms < horizon_ms], heap
