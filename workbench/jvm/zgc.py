"""Generational ZGC: sub-millisecond pauses, allocation stalls on a tight heap, and the CPU it takes.

ZGC does its work concurrently, so its pauses (mark start, mark end, relocate start) stay around
0.01-0.05 ms whatever the heap (``tests/fixtures/gc/`` shows 0.003-0.05 ms at 2M and 20M upsert keys).
What it costs a Pinot server is elsewhere:

* **CPU**: its concurrent threads (``threads_share`` of the cores, at least one) run a collection
  cycle of ``cycle_base_ms + collected / (sweep_rate x threads)``, where ``collected`` is what was
  allocated since the last cycle. The heap ZGC can allocate into is ``free = heap x (1 - 0.05 -
  retained_share) - live`` (it collects at 95% use, and old garbage and young survivors it does not
  collect at once hold ``retained_share`` of the heap); a cycle starts when ``trigger_share`` of that
  is used. The share of CPU taken is ``threads x cycle / period / cores``, which the engine can take
  off the query threads;
* **allocation stalls**: when allocation outruns collection (``free`` runs out before a cycle
  finishes), the allocating threads wait for the cycle: a ``stall`` of ``cycle - free / rate`` per
  cycle. A live heap that leaves almost nothing free turns ZGC into back to
  back cycles and long stalls, as the 20M-key run on a 4 GB heap shows while the map is loaded;
* **out of memory** when the live heap does not fit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np

from workbench import defaults as D
from workbench.errors import InputError
from workbench.jvm.live import LiveHeap
from workbench.jvm.pauses import Pause

__all__ = ["ZGCCycle", "ZGCParams", "zgc_cycle", "zgc_pauses_at_constant_rate"]

#: When in a cycle its three pauses fall (share of the cycle): mark start, mark end, relocate start.
_PAUSE_POINTS = (0.0, 0.8, 0.85)
#: ZGC collects at once when the heap is 95% used ("High Usage"), so that last 5% is not allocated into.
_HIGH_USAGE = 0.05


@dataclass(frozen=True)
class ZGCParams:
    """Generational ZGC parameters.

    Attributes
    ----------
    pause_ms
        Median pause, ms.
    pause_sigma
        Lognormal sigma of the pauses.
    cycle_base_ms
        Fixed length of a collection cycle, ms.
    sweep_rate
        Bytes of allocated heap one concurrent thread gets through per second.
    trigger_share
        Share of the free heap allocated before a cycle starts.
    threads_share
        ``ConcGCThreads`` as a share of the cores (at least one thread).
    retained_share
        Share of the heap held by what a young cycle does not free (old garbage, young survivors).
    """

    pause_ms: float = D.ZGC_PAUSE_MS
    pause_sigma: float = D.ZGC_PAUSE_SIGMA
    cycle_base_ms: float = D.ZGC_CYCLE_BASE_MS
    sweep_rate: float = D.ZGC_SWEEP_RATE
    trigger_share: float = D.ZGC_TRIGGER_SHARE
    threads_share: float = D.ZGC_THREADS_SHARE
    retained_share: float = D.ZGC_RETAINED_SHARE

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, int | float) or math.isnan(value) or value < 0:
                raise InputError(f"gc.{f.name}", f"must be a number >= 0, got {value!r}")
        if self.sweep_rate <= 0:
            raise InputError("gc.sweep_rate", f"must be > 0 bytes/s, got {self.sweep_rate}")
        if self.retained_share >= 1 - _HIGH_USAGE:
            raise InputError("gc.retained_share", f"must be < {1 - _HIGH_USAGE}, got {self.retained_share}")
        for name in ("trigger_share", "threads_share"):
            if not 0 < getattr(self, name) <= 1:
                raise InputError(f"gc.{name}", f"is a share and must be in (0, 1], got {getattr(self, name)}")

    def threads(self, cores: int) -> int:
        """Concurrent GC threads on a machine with ``cores`` cores."""
        return max(1, round(cores * self.threads_share))


@dataclass(frozen=True)
class ZGCCycle:
    """The steady cycle of ZGC at a constant allocation rate.

    Attributes
    ----------
    cycle_ms
        Length of one collection cycle, ms.
    period_ms
        Time from one cycle's start to the next, ms.
    stall_ms
        How long allocating threads wait in each cycle, ms (0 when collection keeps up).
    cpu_share
        Share of all cores the concurrent threads take, in [0, 1].
    oom
        The live heap does not fit in the heap.
    """

    cycle_ms: float
    period_ms: float
    stall_ms: float
    cpu_share: float
    oom: bool


def zgc_cycle(params: ZGCParams, heap_bytes: float, live: LiveHeap, allocation_rate: float, cores: int) -> ZGCCycle:
    """The steady ZGC cycle for a heap, live heap, allocation rate (bytes/s) and core count.

    >>> p = ZGCParams(cycle_base_ms=10.0, sweep_rate=1e9, trigger_share=0.5, threads_share=0.5, retained_share=0.2)
    >>> c = zgc_cycle(p, 4e9, LiveHeap(1e9), 1e8, 4)      # free = 4e9 x 0.75 - 1e9 = 2e9
    >>> round(c.cycle_ms, 1), round(c.period_ms, 1), c.stall_ms, round(c.cpu_share, 4)
    (510.0, 10000.0, 0.0, 0.0255)
    """
    if allocation_rate <= 0:
        raise InputError("allocation_rate", f"must be > 0 bytes/s, got {allocation_rate}")
    if cores < 1:
        raise InputError("cores", f"must be >= 1, got {cores}")
    if live.total >= heap_bytes:
        return ZGCCycle(math.inf, math.inf, math.inf, 1.0, True)
    free = max(heap_bytes * (1.0 - _HIGH_USAGE - params.retained_share) - live.total, 1.0)
    threads = params.threads(cores)
    collected = params.trigger_share * free
    cycle_ms = params.cycle_base_ms + collected / (params.sweep_rate * threads) * 1000.0
    runway_ms = free / allocation_rate * 1000.0  # time until the free heap is gone
    period_ms = max(cycle_ms, collected / allocation_rate * 1000.0)
    stall_ms = max(cycle_ms - runway_ms, 0.0)
    cpu_share = min(threads * cycle_ms / period_ms / cores, 1.0)
    return ZGCCycle(cycle_ms, period_ms, stall_ms, cpu_share, False)


def zgc_pauses_at_constant_rate(params: ZGCParams, heap_bytes: float, live: LiveHeap, allocation_rate: float,
                                horizon_ms: float, rng: np.random.Generator, *, cores: int) -> tuple[list[Pause],
                                                                                                    ZGCCycle]:
    """ZGC pauses (kind ``zgc``) and allocation stalls (kind ``stall``) over ``[0, horizon_ms)``.

    Returns the pauses in time order and the steady cycle (its ``cpu_share`` is what the concurrent
    threads take from the queries). An out-of-memory heap gives no pauses and ``cycle.oom``.
    """
    cycle = zgc_cycle(params, heap_bytes, live, allocation_rate, cores)
    if cycle.oom:
        return [], cycle
    pauses: list[Pause] = []
    t = float(rng.uniform(0.0, cycle.period_ms))
    while t < horizon_ms:
        for point in _PAUSE_POINTS:
            noise = math.exp(params.pause_sigma * float(rng.standard_normal()))
            pauses.append(Pause(t + point * cycle.cycle_ms, params.pause_ms * noise, "zgc"))
        if cycle.stall_ms > 0:
            pauses.append(Pause(t + cycle.cycle_ms - cycle.stall_ms, cycle.stall_ms, "stall"))
        t += cycle.period_ms + cycle.stall_ms
    return sorted((p for p in pauses if p.start_ms < horizon_ms), key=lambda p: p.start_ms), cycle
