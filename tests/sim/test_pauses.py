"""Pause arithmetic: work frozen by stop-the-world pauses, checked against hand-computed cases."""

from __future__ import annotations

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from workbench.sim.pauses import PauseSchedule

S = PauseSchedule.from_intervals([(10.0, 15.0), (20.0, 21.0), (30.0, 40.0)])


def test_work_finishing_before_a_pause_is_untouched() -> None:
    assert S.finish(0.0, 10.0) == 10.0  # ends exactly when the pause starts


def test_work_spanning_pauses_adds_their_length() -> None:
    assert S.finish(9.0, 2.0) == 16.0  # 1 before, 5 paused, 1 after
    assert S.finish(0.0, 26.0) == 42.0  # all three pauses: 26 + 5 + 1 + 10


def test_work_started_inside_a_pause_waits_for_its_end() -> None:
    assert S.finish(12.0, 1.0) == 16.0
    assert S.finish(10.0, 0.0) == 15.0  # a pause covers its own first instant


def test_work_started_after_a_pause_is_not_pulled_back_into_it() -> None:
    assert S.finish(15.0, 0.0) == 15.0
    assert S.finish(16.0, 2.0) == 18.0


def test_release_holds_a_response_until_the_pause_ends() -> None:
    assert (S.release(9.9), S.release(10.0), S.release(14.9), S.release(15.0)) == (9.9, 15.0, 15.0, 15.0)


def test_intersects_is_exact_at_boundaries() -> None:
    assert not S.intersects(0.0, 10.0)
    assert S.intersects(14.99, 16.0)
    assert not S.intersects(15.0, 20.0)


@given(st.lists(st.tuples(st.floats(0.1, 50), st.floats(0.0, 20)), max_size=20),
       st.floats(0, 500), st.one_of(st.just(0.0), st.floats(1e-6, 100)))  # sub-ns work is below float resolution
@example(gaps=[(1.0, 0.0), (3.00001, 1.0)], start=1.0, work=3.00001)  # work ending exactly as a pause starts
def test_finish_matches_a_step_by_step_reference(gaps: list[tuple[float, float]], start: float, work: float) -> None:
    intervals, t = [], 0.0
    for gap, length in gaps:
        intervals.append((t + gap, t + gap + length))
        t += gap + length
    sched = PauseSchedule.from_intervals(intervals)
    # reference: walk the timeline, pausing where an interval covers the clock
    clock, left = start, work
    for a, b in intervals:
        if b <= clock:
            continue
        if a > clock:
            step = min(left, a - clock)
            clock, left = clock + step, left - step
            if left <= 1e-12 * max(1.0, clock):  # work that ends as a pause starts ends there (a - clock rounds)
                break
        clock = max(clock, b)
    clock += left
    assert np.isclose(sched.finish(start, work), clock, rtol=1e-9, atol=1e-9)
