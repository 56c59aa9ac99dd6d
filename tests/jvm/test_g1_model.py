"""The G1 heap model: what each part of G1's cycle does, checked against hand computation and invariants.

These tests fix parameters by hand (no fitted values) so that each behaviour is checked on its own:
the pause form, eden sizing, the concurrent cycle and its remark/cleanup/mixed pauses, evacuation
failure, full GC and out-of-memory.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import pairwise

import numpy as np
import pytest

from workbench.errors import InputError
from workbench.jvm import PAUSE_KINDS, G1Heap, G1Params, LiveHeap, Pause, g1_pauses_at_constant_rate, region_bytes

GIB = 1 << 30
MIB = 1 << 20
#: No noise, so pause lengths are the form itself.
QUIET = G1Params(young_base_ms=5.0, copy_rate=1e9, rs_scan_ms_per_gb=100.0, rs_map_exponent=1.0,
                 rs_coarsen_updates=100_000.0, pause_sigma=0.0, survivor_s=0.1, promotion_fraction=0.0,
                 full_base_ms=100.0, full_ms_per_gb=1000.0, full_sigma=0.0, remark_ms=10.0, cleanup_ms=1.0,
                 concurrent_sigma=0.0, mark_rate=1e9, rebuild_rate=2e9, young_growth=0.0)


def rng(seed: int = 1) -> np.random.Generator:
    return np.random.default_rng(seed)


def test_first_young_pause_is_base_plus_copy_plus_scan_by_hand() -> None:
    """10 GiB heap: eden starts at 5% = 512 MiB; allocated over 1 s, 10% (0.1 s worth) survives.

    copied = 51.2 MiB -> 53.687 ms at 1e9 B/s; 50 000 updates of a 1 GiB map scan
    100 ms x (1 - exp(-0.5)) = 39.347 ms; plus 5 ms base.
    """
    live = LiveHeap(0.0, 1, float(GIB))  # a 1 GiB map (one "key" of 1 GiB keeps the arithmetic simple)
    heap = G1Heap(QUIET, 10 * GIB, live, rng(), update_rate=50_000.0)
    eden = heap.eden_target
    assert eden == pytest.approx(0.05 * 10 * GIB)
    pauses = heap.allocate(1000.0, eden)
    assert len(pauses) == 1 and pauses[0].kind == "young" and pauses[0].start_ms == 1000.0
    expected = 5.0 + 0.1 * eden / 1e9 * 1000.0 + 100.0 * (1 - np.exp(-0.5))
    assert pauses[0].duration_ms == pytest.approx(expected)


def test_an_allocation_smaller_than_eden_collects_nothing_and_a_huge_one_collects_back_to_back() -> None:
    heap = G1Heap(QUIET, 4 * GIB, LiveHeap(GIB), rng())
    assert heap.allocate(10.0, heap.eden_target / 2) == []
    pauses = heap.allocate(20.0, 5 * heap.eden_target)
    assert len(pauses) >= 3
    assert all(b.start_ms == pytest.approx(a.end_ms) for a, b in pairwise(pauses))


def test_young_pauses_grow_with_the_upsert_map_at_the_same_rates() -> None:
    """Same heap, allocation and update rates: a 20M-key map gives longer young pauses than a 2M one."""
    params = replace(QUIET, rs_map_exponent=0.5, pause_sigma=0.2)
    medians = []
    for keys in (2_000_000, 20_000_000):
        live = LiveHeap.for_upsert(64 * MIB, keys)
        pauses, _ = g1_pauses_at_constant_rate(params, 16 * GIB, live, 300 * MIB, 120_000.0, rng(),
                                               update_rate=50_000.0)
        medians.append(np.median([p.duration_ms for p in pauses if p.kind == "young"]))
    assert medians[1] > 1.5 * medians[0]


def test_eden_stays_between_the_new_size_bounds_while_there_is_room() -> None:
    pauses, heap = g1_pauses_at_constant_rate(replace(QUIET, young_growth=0.2), 8 * GIB, LiveHeap(GIB),
                                              500 * MIB, 60_000.0, rng())
    assert pauses
    assert QUIET.new_size_min * 8 * GIB - heap.survivors - 1 <= heap.eden_target <= QUIET.new_size_max * 8 * GIB
    assert heap.eden_target > QUIET.new_size_min * 8 * GIB  # it grew: pauses are far under the goal


def test_eden_shrinks_when_pauses_pass_the_goal() -> None:
    slow = replace(QUIET, young_base_ms=400.0, young_growth=0.5)
    _, heap = g1_pauses_at_constant_rate(slow, 8 * GIB, LiveHeap(GIB), 500 * MIB, 60_000.0, rng())
    assert heap.eden_target == pytest.approx(max(slow.new_size_min * 8 * GIB - heap.survivors, region_bytes(8 * GIB)))


def test_old_generation_past_ihop_runs_a_concurrent_cycle_remark_cleanup_then_mixed() -> None:
    params = replace(QUIET, promotion_fraction=0.5, ihop=0.3)
    pauses, _ = g1_pauses_at_constant_rate(params, 4 * GIB, LiveHeap(GIB), 400 * MIB, 120_000.0, rng())
    kinds = [p.kind for p in pauses]
    assert "remark" in kinds and "cleanup" in kinds and "mixed" in kinds
    first_remark = kinds.index("remark")
    assert kinds[first_remark + 1:].index("cleanup") >= 0
    assert kinds.index("mixed") > kinds.index("cleanup")
    assert "full" not in kinds


def test_no_cycle_below_ihop_and_no_promotion() -> None:
    pauses, _ = g1_pauses_at_constant_rate(QUIET, 8 * GIB, LiveHeap(GIB), 400 * MIB, 60_000.0, rng())
    assert {p.kind for p in pauses} == {"young"}


def test_concurrent_pauses_fall_due_in_time_and_advance_emits_them() -> None:
    params = replace(QUIET, ihop=0.2)
    heap = G1Heap(params, 4 * GIB, LiveHeap(GIB), rng())  # old = 1 GiB = 25% > 20%: next GC starts marking
    assert heap.next_event_ms() is None
    young = heap.allocate(1000.0, heap.eden_target)
    due = heap.next_event_ms()
    assert due == pytest.approx(young[-1].end_ms + GIB / params.mark_rate * 1000.0)
    assert heap.advance(due - 1.0) == []
    remark = heap.advance(due)
    assert [p.kind for p in remark] == ["remark"] and remark[0].duration_ms == pytest.approx(10.0)
    cleanup_due = heap.next_event_ms()
    assert cleanup_due == pytest.approx(remark[0].end_ms + GIB / params.rebuild_rate * 1000.0)
    assert [p.kind for p in heap.advance(cleanup_due + 5.0)] == ["cleanup"]
    assert heap.next_event_ms() is None


def test_survivors_that_do_not_fit_fail_evacuation_and_a_full_gc_compacts_to_the_live_heap() -> None:
    """Live heap 3.5 of 4 GiB: after a few young GCs of promoted garbage there is no room to copy."""
    params = replace(QUIET, promotion_fraction=0.9, survivor_s=0.5, ihop=0.99)
    live = LiveHeap(3.5 * GIB)
    pauses, heap = g1_pauses_at_constant_rate(params, 4 * GIB, live, 400 * MIB, 60_000.0, rng())
    fulls = [p for p in pauses if p.kind == "full"]
    assert fulls
    assert fulls[0].duration_ms == pytest.approx(100.0 + 3.5 * 1000.0)  # base + live GiB x ms per GiB
    assert not heap.oom
    assert heap.peak_bytes > live.total


def test_a_live_heap_with_no_room_for_eden_is_out_of_memory_not_endless_full_gcs() -> None:
    live = LiveHeap(3.9 * GIB)  # 4 GiB heap: the smallest young generation (5%) does not fit
    heap = G1Heap(QUIET, 4 * GIB, live, rng())
    assert heap.oom and heap.oom_at_ms == 0.0
    assert heap.allocate(10.0, 10 * GIB) == []
    pauses, end = g1_pauses_at_constant_rate(QUIET, 4 * GIB, live, 400 * MIB, 60_000.0, rng())
    assert pauses == [] and end.oom


def test_pauses_are_ordered_do_not_overlap_and_have_known_kinds() -> None:
    params = replace(QUIET, promotion_fraction=0.3, ihop=0.35, pause_sigma=0.3)
    pauses, _ = g1_pauses_at_constant_rate(params, 4 * GIB, LiveHeap.for_upsert(GIB, 5_000_000), 400 * MIB,
                                           120_000.0, rng(), update_rate=20_000.0)
    assert all(isinstance(p, Pause) and p.kind in PAUSE_KINDS and p.duration_ms > 0 for p in pauses)
    assert all(b.start_ms >= a.end_ms - 1e-9 for a, b in pairwise(pauses))
    assert pauses[-1].start_ms < 120_000.0


def test_the_same_seed_gives_the_same_pauses_and_another_seed_others() -> None:
    params = replace(QUIET, pause_sigma=0.3)
    run = [g1_pauses_at_constant_rate(params, 4 * GIB, LiveHeap(GIB), 400 * MIB, 30_000.0, rng(seed))[0]
           for seed in (7, 7, 8)]
    assert run[0] == run[1] and run[0] != run[2]


def test_bad_inputs_name_what_to_fix() -> None:
    with pytest.raises(InputError, match="heap"):
        G1Heap(QUIET, 0, LiveHeap(1.0), rng())
    with pytest.raises(InputError, match="update_rate"):
        G1Heap(QUIET, GIB, LiveHeap(1.0), rng(), update_rate=-1)
    with pytest.raises(InputError, match="allocation_rate"):
        g1_pauses_at_constant_rate(QUIET, GIB, LiveHeap(1.0), 0.0, 1000.0, rng())
    with pytest.raises(InputError, match=r"gc\.new_size_min"):
        G1Params(new_size_min=0.7, new_size_max=0.6)
    with pytest.raises(InputError, match=r"gc\.copy_rate"):
        G1Params(copy_rate=0.0)
    with pytest.raises(InputError, match=r"gc\.ihop"):
        G1Params(ihop=1.2)


def test_a_settled_eden_is_the_largest_the_bounds_allow_or_where_the_pause_reaches_its_target() -> None:
    """A JVM that has been serving keeps eden where G1's sizing settles (``G1Heap.settle``), by hand:

    * 10 GiB heap, 1 GiB live, 100 MB/s: 0.1 s of allocation (10 MB) survives, a 15 ms pause against the goal's
      target 160 ms (0.8 x 200): eden is as large as the bounds allow, 60% of the heap (the free heap, 90% less the
      live 1 GiB, is 8 GiB);
    * a 1 GiB heap at 10 GB/s with all of the last 10 s surviving: copied = eden, so the pause is 5 ms + eden /
      1 GB/s, which reaches 160 ms at eden = 155 MB (between the minimum, 51 MiB, and 60%, 614 MiB);
    * a heap whose live part leaves less room than 60% of it: the room, 90% of 4 GiB less 3 GiB."""
    heap = G1Heap(QUIET, 10 * GIB, LiveHeap(float(GIB)), rng())
    heap.settle(100e6)
    assert heap.eden_target == pytest.approx(0.6 * 10 * GIB)
    bound = G1Heap(replace(QUIET, survivor_s=10.0), GIB, LiveHeap(0.1 * GIB), rng())
    bound.settle(10e9)
    assert bound.eden_target == pytest.approx((160.0 - 5.0) / 1000.0 * 1e9, rel=1e-6)
    tight = G1Heap(QUIET, 4 * GIB, LiveHeap(3.0 * GIB), rng())
    tight.settle(100e6)
    assert tight.eden_target == pytest.approx(0.9 * 4 * GIB - 3 * GIB)
    cold = G1Heap(QUIET, 10 * GIB, LiveHeap(float(GIB)), rng())
    assert cold.eden_target == pytest.approx(0.05 * 10 * GIB)  # not settled: G1's minimum, a JVM just started
