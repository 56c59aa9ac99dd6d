"""A Pinot server's execution traced by hand: runner and worker threads, shared cores, a pause.

One server with 2 cores, 2 runner threads, 4 worker threads and ``maxExecutionThreads`` 2, a pause
from 8 to 10 ms, and three requests (work in ms):

====  =======  =======  ==========  =====
req   arrives  prepare  segments    merge
====  =======  =======  ==========  =====
A     0        1        4, 4, 2     1
B     1        1        3           0
C     2        0        2, 2        0
====  =======  =======  ==========  =====

By hand, with processor sharing (n runnable threads on 2 cores each run at min(1, 2/n)):

- 0: A starts on runner 1 and prepares (alone: rate 1) until 1.
- 1: A fans out to 2 tasks, which take segments 0 and 1 (4 ms each); B starts on runner 2 and prepares.
  Three runnable threads on two cores: each at 2/3.
- 2: C arrives; both runners are busy, so it waits in the FCFS queue.
- 2.5: B's 1 ms of preparing is done (1.5 ms at 2/3); its one task takes segment 0 (3 ms). A's segments
  have received 1 ms of their 4, B's segment 0 of 3: all three need 3 more ms at 2/3, so they finish
  together at 2.5 + 4.5 = 7.
- 7: A's first task takes segment 2 (2 ms), its second task finds none left; B's task ends, B has no
  merge work and answers; C starts on the freed runner (no preparing) and fans out to 2 tasks (2 ms each).
  Three threads at 2/3 again: 2 ms of work take 3 ms of run time: 7-8, the pause 8-10, then 10-12.
- 12: A's task ends and A merges (1 ms, alone: rate 1) until 13; C's tasks end and C answers.
"""

from __future__ import annotations

import pytest
import simpy

from workbench.pinot.execution_config import ServerQueryConfig
from workbench.sim.driver import ServerDriver
from workbench.sim.pauses import PauseSchedule
from workbench.sim.server import ExecutionModel, PinotServer, Request, Response

A, B, C = 0, 1, 2


def server(execution: ExecutionModel = ExecutionModel.PINOT) -> PinotServer:
    config = ServerQueryConfig.from_properties({"pinot.query.scheduler.query_runner_threads": 2,
                                                "pinot.query.scheduler.query_worker_threads": 4,
                                                "pinot.server.query.executor.max.execution.threads": 2}, cores=2)
    return PinotServer("S", config, PauseSchedule.from_intervals([(8.0, 10.0)]), PauseSchedule.empty(),
                       execution=execution, trace=[])


def drive(s: PinotServer, requests: list[Request]) -> list[Response]:
    out: list[Response] = []
    for r in requests:
        s.advance(r.arrival, out)
        s.submit(r, out)
    s.advance(float("inf"), out)
    return out


def requests() -> list[Request]:
    return [Request(A, 0.0, 10_000.0, 1.0, 1.0, [4.0, 4.0, 2.0]), Request(B, 1.0, 10_000.0, 1.0, 0.0, [3.0]),
            Request(C, 2.0, 10_000.0, 0.0, 0.0, [2.0, 2.0])]


def same_trace(actual: list[tuple[float, str, int]] | None, expected: list[tuple[float, str, int]]) -> bool:
    """Events and requests exactly, times to 1e-9 ms."""
    assert actual is not None
    return [(e, r) for _, e, r in actual] == [(e, r) for _, e, r in expected] and all(
        abs(a[0] - b[0]) < 1e-9 for a, b in zip(actual, expected, strict=True))


def test_every_start_and_finish_by_hand() -> None:
    s = server()
    out = drive(s, requests())
    assert same_trace(s.trace, [
        (0.0, "runner_start", A),
        (1.0, "fan_out", A), (1.0, "segment_start 0", A), (1.0, "segment_start 1", A),
        (1.0, "runner_start", B),
        (2.5, "fan_out", B), (2.5, "segment_start 0", B),
        (7.0, "segment_done 0", A), (7.0, "segment_start 2", A),
        (7.0, "segment_done 1", A),
        (7.0, "segment_done 0", B), (7.0, "tasks_done", B), (7.0, "respond", B),
        (7.0, "runner_start", C), (7.0, "fan_out", C), (7.0, "segment_start 0", C), (7.0, "segment_start 1", C),
        (12.0, "segment_done 2", A), (12.0, "tasks_done", A),
        (12.0, "segment_done 0", C), (12.0, "segment_done 1", C), (12.0, "tasks_done", C), (12.0, "respond", C),
        (13.0, "respond", A),
    ])
    assert [(r.rid, r.code, r.paused) for r in out] == [(B, 0, False), (C, 0, True), (A, 0, True)]
    assert [r.at for r in out] == pytest.approx([7.0, 12.0, 13.0])
    assert [r.queue_wait for r in out] == pytest.approx([0.0, 5.0, 0.0])
    # 2 cores x (1 + 1.5 + 4.5 + 1 + 2) ms busy: both cores from 1 to 7 and from 7 to 12 (minus the pause)
    assert s.busy_ms == pytest.approx(1.0 + 2 * 6.0 + 2 * 3.0 + 1.0)


def test_a_request_that_waited_its_timeout_is_answered_240_without_running() -> None:
    s = server()
    late = [Request(A, 0.0, 10_000.0, 0.0, 0.0, [20.0]), Request(B, 0.0, 10_000.0, 0.0, 0.0, [20.0]),
            Request(C, 0.0, 5.0, 0.0, 0.0, [1.0])]
    out = {r.rid: r for r in drive(s, late)}
    assert out[C].code == 240 and out[C].at == pytest.approx(20.0 + 2.0)  # A and B run 0-22 (pause 8-10)
    assert s.meters.scheduling_timeouts == 1 and ("segment_start 0", C) not in [(e, r) for _, e, r in s.trace or []]


def test_execution_stops_between_segments_after_the_deadline_with_250() -> None:
    s = server()
    # one task (maxExecutionThreads 1 via the option), 3 segments of 3 ms, deadline at 5 ms:
    # segments 0 (0-3) and 1 (3-6) run; before segment 2 the deadline has passed
    out = drive(s, [Request(A, 0.0, 5.0, 0.0, 0.0, [3.0, 3.0, 3.0], execution_threads=1)])
    assert [(r.code, r.at) for r in out] == [(250, pytest.approx(6.0))]
    assert s.meters.execution_timeouts == 1


def test_the_fcfs_threads_simplification_deals_segments_up_front() -> None:
    """One worker thread per core, no sharing: A's tasks get segments (0, 2) and (1,); everything else
    queues FCFS for the two threads; per-request work runs off the cores."""
    s = server(ExecutionModel.FCFS_THREADS)
    out = {r.rid: r.at for r in drive(s, requests())}
    # A: prepare 0-1; task 1: seg 0 1-5, seg 2 5-7; task 2: seg 1 1-5; merge 7-8 (before the pause)
    # B: prepare 1-2; its task waits for a thread (free at 5): 5-8, then the pause: done at 8; merge 0
    # C: tasks wait for threads: free at 8 (B's) and 7 (A's task 1): 7-8, pause, 10-11 and 8-10?, ...
    assert out[A] == pytest.approx(8.0)
    assert out[B] == pytest.approx(8.0)
    # C's two tasks start at 7 (A's thread) and 8 (B's thread): 7-8 + pause + 10-11; 8 is a pause start:
    # 10-12. C answers at 12.
    assert out[C] == pytest.approx(12.0)


def test_requests_a_pause_held_are_read_at_its_end_in_delivery_order() -> None:
    """Through SimPy (:class:`ServerDriver`): A and B reach a paused server at 121.3 and 164.2 ms and both
    are read when the pause ends. SimPy fires a callback due at ``t`` at ``now + (t - now)``, which for
    A's ``now`` is an ulp past the pause's end: that rounding must not let B be read (and run) first."""
    end = 746.5246474801692
    a_at, b_at = 121.27879309502231, 164.1829482675413
    assert a_at + (end - a_at) > end and b_at + (end - b_at) == end  # A's callback fires an ulp late
    config = ServerQueryConfig.from_properties({"pinot.query.scheduler.query_runner_threads": 1}, cores=1)
    s = PinotServer("S", config, PauseSchedule.from_intervals([(100.0, end)]), PauseSchedule.empty(), trace=[])
    env = simpy.Environment()
    out: list[Response] = []
    driver = ServerDriver(env, 0, s, lambda _, response: out.append(response))
    for rid, at in ((A, a_at), (B, b_at)):
        request = Request(rid, at, 10_000.0, 1.0, 0.0, [2.0])
        env.timeout(at).callbacks.append(lambda _, request=request, at=at: driver.deliver(request, at))
    env.run()
    assert [(e, r) for _, e, r in s.trace or [] if e == "runner_start"] == [("runner_start", A), ("runner_start", B)]
    assert [(r.rid, r.code) for r in out] == [(A, 0), (B, 0)]
    assert [r.at for r in out] == pytest.approx([end + 3.0, end + 6.0])
