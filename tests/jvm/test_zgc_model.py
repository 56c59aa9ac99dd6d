"""Generational ZGC model: tiny pauses, stalls only when allocation outruns collection, CPU share."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.errors import InputError
from workbench.jvm import LiveHeap, ZGCParams, zgc_cycle, zgc_pauses_at_constant_rate

GIB = 1 << 30
MIB = 1 << 20
P = ZGCParams(pause_ms=0.02, pause_sigma=0.0, cycle_base_ms=100.0, sweep_rate=1e9, trigger_share=0.5,
              threads_share=0.25, retained_share=0.15)


def test_cycle_by_hand_on_a_roomy_heap() -> None:
    """8 GiB heap, 2 GiB live, 4 cores: allocatable 8 x 0.8 - 2 = 4.4 GiB; a cycle collects half of it.

    One thread (25% of 4 cores) sweeps 2.2 GiB at 1e9 B/s: 2362.2 ms + 100 ms; it starts every
    2.2 GiB / 100 MiB/s = 22.528 s; no stall; CPU = 1 x 2462.2 / 22528 / 4.
    """
    cycle = zgc_cycle(P, 8 * GIB, LiveHeap(2 * GIB), 100 * MIB, 4)
    collected = 0.5 * (8 * GIB * 0.8 - 2 * GIB)
    assert cycle.cycle_ms == pytest.approx(100.0 + collected / 1e9 * 1000.0)
    assert cycle.period_ms == pytest.approx(collected / (100 * MIB) * 1000.0)
    assert cycle.stall_ms == 0.0 and not cycle.oom
    assert cycle.cpu_share == pytest.approx(cycle.cycle_ms / cycle.period_ms / 4)


def test_allocation_that_outruns_the_cycle_stalls_and_takes_the_gc_threads_full_time() -> None:
    live = LiveHeap(2.9 * GIB)  # 4 GiB heap: 0.38 GiB allocatable
    calm = zgc_cycle(P, 4 * GIB, live, 100 * MIB, 2)
    rush = zgc_cycle(P, 4 * GIB, live, 4 * GIB, 2)
    assert calm.stall_ms == 0.0
    free = 4 * GIB * 0.8 - 2.9 * GIB
    assert rush.stall_ms == pytest.approx(rush.cycle_ms - free / (4 * GIB) * 1000.0)
    assert rush.period_ms == pytest.approx(rush.cycle_ms)
    assert rush.cpu_share == pytest.approx(0.5)  # its one thread of two cores, all the time


def test_stalls_and_cpu_rise_with_the_allocation_rate() -> None:
    rates = [100 * MIB, 1 * GIB, 4 * GIB, 16 * GIB]
    cycles = [zgc_cycle(P, 4 * GIB, LiveHeap(2.5 * GIB), r, 8) for r in rates]
    stalls = [c.stall_ms for c in cycles]
    shares = [c.cpu_share for c in cycles]
    assert stalls == sorted(stalls) and stalls[0] == 0.0 and stalls[-1] > 0.0
    assert shares == sorted(shares) and shares[-1] <= 1.0


def test_pauses_are_sub_millisecond_zgc_and_stalls_are_kind_stall() -> None:
    pauses, cycle = zgc_pauses_at_constant_rate(P, 4 * GIB, LiveHeap(2.9 * GIB), 4 * GIB, 10_000.0,
                                                np.random.default_rng(3), cores=2)
    kinds = {p.kind for p in pauses}
    assert kinds == {"zgc", "stall"}
    assert all(p.duration_ms < 1.0 for p in pauses if p.kind == "zgc")
    stalls = [p for p in pauses if p.kind == "stall"]
    assert all(p.duration_ms == pytest.approx(cycle.stall_ms) for p in stalls)
    assert [p.start_ms for p in pauses] == sorted(p.start_ms for p in pauses)


def test_a_live_heap_larger_than_the_heap_is_out_of_memory() -> None:
    pauses, cycle = zgc_pauses_at_constant_rate(P, 4 * GIB, LiveHeap(5 * GIB), 100 * MIB, 10_000.0,
                                                np.random.default_rng(3), cores=2)
    assert pauses == [] and cycle.oom


def test_bad_parameters_are_input_errors() -> None:
    with pytest.raises(InputError, match=r"gc\.trigger_share"):
        ZGCParams(trigger_share=0.0)
    with pytest.raises(InputError, match=r"gc\.retained_share"):
        ZGCParams(retained_share=0.96)
    with pytest.raises(InputError, match="cores"):
        zgc_cycle(P, GIB, LiveHeap(0.1 * GIB), 1e8, 0)
