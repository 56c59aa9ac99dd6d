"""The server's decisions (:mod:`workbench.sim.decisions`) at their boundaries, values worked out by hand.

Each function is checked compiled (as the kernel calls it) and as Python (as the SimPy server calls it):
the two must agree, since they are one implementation run two ways.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from workbench.pinot.execution_config import ServerQueryConfig
from workbench.sim import decisions as d
from workbench.sim.fast.jit import python


def both(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` compiled and in Python; they must agree."""
    compiled, plain = fn(*args), python(fn)(*args)
    assert compiled == plain, (fn.__name__, args, compiled, plain)
    return compiled


def test_admission_rejects_only_when_pending_is_full_and_the_reservation_at_the_hard_limit() -> None:
    assert both(d.admission_code, 2, 2, 7, 7) == 211
    assert both(d.admission_code, 1, 2, 7, 7) == 0  # room in the queue
    assert both(d.admission_code, 5, 2, 6, 7) == 0  # threads left under the hard limit


def test_queue_expiry_is_strict() -> None:
    assert both(d.queue_expired, 1000.0, 0.0, 1000.0) is False  # exactly the deadline old: kept
    assert both(d.queue_expired, 1000.5, 0.0, 1000.0) is True


def test_a_group_starts_a_request_below_both_limits() -> None:
    assert both(d.group_can_start, 3, 4, 6, 7) is True
    assert both(d.group_can_start, 4, 4, 0, 7) is False
    assert both(d.group_can_start, 0, 4, 7, 7) is False


def test_reservation() -> None:
    assert both(d.reservation, 3, 12, 7, 0) == 3  # min(maxThreadsPerQuery 3, 12 segments)
    assert both(d.reservation, 3, 2, 7, 0) == 2  # two segments want two threads
    assert both(d.reservation, 3, 0, 7, 0) == 1  # at least one
    assert both(d.reservation, 3, 12, 7, 6) == 1  # one thread left under the hard limit
    assert both(d.reservation, 3, 12, 7, 7) == 1  # none left: still one


@pytest.mark.parametrize(("segments", "group_by", "option", "max_exec", "default_exec", "reserved", "tasks"), [
    (12, False, 0, -1, -1, 0, 4),  # 8 cores: max(1, min(10, 8 // 2)) = 4
    (12, True, 0, -1, -1, 0, 12),  # group-by: min(12, 2 x 8 = 16)
    (1, True, 0, -1, -1, 0, 1),  # one segment is one task
    (0, False, 0, -1, -1, 0, 1),  # so is none
    (12, False, 6, -1, -1, 0, 6),  # the query's maxExecutionThreads
    (12, False, 6, 3, -1, 0, 3),  # ... capped by the server's max
    (12, False, 0, 3, 5, 0, 5),  # the server's default before its max
    (12, False, 0, 3, -1, 0, 3),  # else its max
    (12, True, 0, -1, -1, 2, 2),  # the bounded executor's permits cap the count
])
def test_task_count(segments: int, group_by: bool, option: int, max_exec: int, default_exec: int, reserved: int,
                    tasks: int) -> None:
    assert both(d.task_count, segments, group_by, option, max_exec, default_exec, 8, reserved) == tasks


@pytest.mark.parametrize("props", [{}, {"pinot.server.query.executor.max.execution.threads": 3},
                                   {"pinot.server.query.executor.default.execution.threads": 5}])
def test_task_count_is_the_pinot_configs_rule(props: dict[str, Any]) -> None:
    """``ServerQueryConfig.tasks`` (used by calibration) states the same rule for the same settings."""
    cfg = ServerQueryConfig.from_properties(props, cores=8)
    for segments in (0, 1, 2, 5, 12, 40):
        for group_by in (False, True):
            for option in (None, 2, 20):
                assert d.task_count(segments, group_by, option or 0, cfg.max_execution_threads,
                                    cfg.default_execution_threads, 8, 0) == cfg.tasks(segments, group_by, option)


def test_a_request_that_waited_its_whole_timeout_is_answered_240() -> None:
    assert both(d.start_code, 110.0, 10.0, 100.0) == 240  # waited exactly the timeout
    assert both(d.start_code, 109.5, 10.0, 100.0) == 0


def test_a_task_checks_the_deadline_before_each_segment() -> None:
    assert both(d.step, 50.0, 40.0, 0) == d.STEP_DONE  # nothing left: done, whatever the time
    assert both(d.step, 40.0, 40.0, 3) == d.STEP_TIMED_OUT  # at the deadline: stop
    assert both(d.step, 39.0, 40.0, 3) == d.STEP_TAKE


def test_the_last_task_ending_past_the_deadline_is_250() -> None:
    assert both(d.tasks_done_code, True, 10.0, 40.0) == 250  # a task stopped at the deadline earlier
    assert both(d.tasks_done_code, False, 40.0, 40.0) == 250
    assert both(d.tasks_done_code, False, 39.0, 40.0) == 0


def test_processor_sharing_arithmetic() -> None:
    assert both(d.share, 2, 4) == 1.0
    assert both(d.share, 6, 4) == pytest.approx(4 / 6)
    # 3 ms of run time, 6 threads on 4 cores and one timer: each thread gets 2 ms of work; 4 + 1 cores busy
    assert both(d.checkpoint, 10.0, 100.0, 3.0, 6, 1, 4) == (12.0, 115.0)
    # idle: virtual time stays, a timer alone counts one core
    assert both(d.checkpoint, 10.0, 100.0, 3.0, 0, 1, 4) == (10.0, 103.0)
    assert both(d.is_due, 1.0 + 1e-12, 1.0, 1.0) is True  # within the rounding allowance
    assert both(d.is_due, 1.0 + 1e-9, 1.0, 1.0) is False


def test_work_below_the_wall_clocks_resolution_is_due_at_that_clock() -> None:
    """After a long idle stretch the wall clock (here 300 s) is far larger than the virtual time. 1e-11 ms of
    work then ends within the clock's resolution (an ulp of 3e5 is about 6e-11), so its finish time is the
    clock itself: it must be due there, or the server asks again at the same time for ever (a sparse
    Poisson run of 400 s hung both engines so)."""
    from workbench.sim.cpu import SharedCPU
    from workbench.sim.pauses import PauseSchedule

    now = 3e5
    assert now + 1e-11 == now
    cpu = SharedCPU(1, PauseSchedule.from_intervals([]))
    cpu.start(now, 1e-11, "a")
    assert cpu.next_time() == now
    assert cpu.pop(now) == ["a"]
    assert both(d.is_due, 1e-11, 0.0, now) is True
    assert both(d.is_due, 1e-9, 0.0, 1.0) is False  # far above the resolution of a small clock: not yet
