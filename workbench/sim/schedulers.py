"""Pinot's server query schedulers: which waiting request a free runner thread takes next (PE §1).

Each scheduler is a small class in :data:`SCHEDULERS`, keyed by ``pinot.query.scheduler.name``. The
model holds one table, so every query is in one scheduler group (Pinot groups by table name with type):

- ``fcfs`` (Pinot's default): requests go straight to the runner pool's unbounded FIFO queue; nothing is
  ever rejected.
- ``bounded_fcfs`` and ``tokenbucket``: a dispatcher starts the oldest pending request while fewer than
  ``query_runner_threads`` run and the group's reserved worker threads are below the hard limit. A
  started request reserves ``min(maxThreadsPerQuery, segments)`` worker threads (at least 1, at most
  what the hard limit leaves), which also caps how many of its tasks run at once. A new request is
  rejected with 211 (SERVER_OUT_OF_CAPACITY) when ``max_pending_per_group`` are pending *and* the
  reservation is at the hard limit. Pending requests older than ``query_deadline_seconds`` are dropped
  with no response. With a single group, the token bucket's priority between groups never applies, so
  ``tokenbucket`` orders requests exactly as ``bounded_fcfs`` does.
- ``binary_workload``: primary requests as ``fcfs``; secondary ones (query option
  ``isSecondaryWorkload=true``) through one bounded group with at most ``binarywlm.maxSecondaryRunnerThreads``
  running, 211 when ``binarywlm.maxPendingSecondaryQueries`` are pending and its reservation is at the
  hard limit, and a ``binarywlm.secondaryQueueQueryTimeout`` queue expiry.
- ``workload``: admission by a per-workload CPU/memory budget whose enforcement is off by default in
  Pinot; admitted requests run as ``fcfs``. Budgets are not modelled, so every request is admitted.

The bounded group's decisions (reject, expire, start, reserve) are functions of
:mod:`workbench.sim.decisions`, shared with the compiled engine; the classes here hold the queues.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from typing import Protocol

from workbench.pinot.execution_config import ServerQueryConfig
from workbench.sim import decisions
from workbench.sim.fast.jit import python

__all__ = ["SCHEDULERS", "QueuedRequest", "Scheduler", "make_scheduler"]

#: Pinot's QueryErrorCode SERVER_OUT_OF_CAPACITY.
OUT_OF_CAPACITY = decisions.OUT_OF_CAPACITY
# The group's decisions, shared with the compiled engine (workbench.sim.decisions), as plain Python calls.
_admission_code = python(decisions.admission_code)
_queue_expired = python(decisions.queue_expired)
_group_can_start = python(decisions.group_can_start)
_reservation = python(decisions.reservation)


class QueuedRequest(Protocol):
    """What a scheduler reads of a request."""

    rid: int
    arrival: float
    secondary: bool
    reserved: int

    @property
    def num_segments(self) -> int: ...


class Scheduler(Protocol):
    """Admission and dispatch of one server's requests."""

    def admit(self, request: QueuedRequest, now: float) -> int | None:
        """Queue ``request`` (``None``) or reject it at once with a QueryErrorCode."""

    def next(self, now: float) -> QueuedRequest | None:
        """The request a free runner thread starts now, or ``None`` (nothing eligible)."""

    def finished(self, request: QueuedRequest) -> None:
        """``request`` left its runner thread (or was turned away at its start): release what it held."""

    def clear(self) -> None:
        """Forget every pending request and reservation (the server crashed)."""

    def drain_expired(self) -> list[QueuedRequest]:
        """Pending requests dropped, unanswered, because they outlived the queue deadline (since last asked)."""


class FCFSScheduler:
    """One unbounded FIFO queue in front of the runner threads."""

    def __init__(self, config: ServerQueryConfig) -> None:
        self._queue: deque[QueuedRequest] = deque()

    def admit(self, request: QueuedRequest, now: float) -> int | None:
        self._queue.append(request)
        return None

    def next(self, now: float) -> QueuedRequest | None:
        return self._queue.popleft() if self._queue else None

    def finished(self, request: QueuedRequest) -> None:
        return None

    def clear(self) -> None:
        self._queue.clear()

    def drain_expired(self) -> list[QueuedRequest]:
        return []


class BoundedGroup:
    """One scheduler group with worker-thread reservations, a pending bound and a queue deadline."""

    def __init__(self, config: ServerQueryConfig, max_running: int, max_pending: int, deadline_s: float) -> None:
        self.config = config
        self.max_running = max_running
        self.max_pending = max_pending
        self.deadline_ms = deadline_s * 1000.0
        self.queue: deque[QueuedRequest] = deque()
        self.reserved = 0
        self.running = 0
        self.expired: list[QueuedRequest] = []

    def admit(self, request: QueuedRequest) -> int | None:
        code = _admission_code(len(self.queue), self.max_pending, self.reserved, self.config.hard_limit)
        if code:
            return code
        self.queue.append(request)
        return None

    def next(self, now: float) -> QueuedRequest | None:
        while self.queue and _queue_expired(now, self.queue[0].arrival, self.deadline_ms):
            self.expired.append(self.queue.popleft())  # trimmed: its result is never completed, no response
        hard = self.config.hard_limit
        if not self.queue or not _group_can_start(self.running, self.max_running, self.reserved, hard):
            return None
        request = self.queue.popleft()
        request.reserved = _reservation(self.config.max_threads_per_query, request.num_segments, hard, self.reserved)
        self.reserved += request.reserved
        self.running += 1
        return request

    def finished(self, request: QueuedRequest) -> None:
        self.reserved -= request.reserved
        self.running -= 1

    def clear(self) -> None:
        self.queue.clear()
        self.expired.clear()
        self.reserved = self.running = 0

    def drain_expired(self) -> list[QueuedRequest]:
        dropped, self.expired = self.expired, []
        return dropped


class BoundedFCFSScheduler:
    """``bounded_fcfs`` (and ``tokenbucket`` with one group): see the module docstring."""

    def __init__(self, config: ServerQueryConfig) -> None:
        self._group = BoundedGroup(config, config.runner_threads, config.max_pending_per_group,
                                   config.query_deadline_s)

    def admit(self, request: QueuedRequest, now: float) -> int | None:
        return self._group.admit(request)

    def next(self, now: float) -> QueuedRequest | None:
        return self._group.next(now)

    def finished(self, request: QueuedRequest) -> None:
        self._group.finished(request)

    def clear(self) -> None:
        self._group.clear()

    def drain_expired(self) -> list[QueuedRequest]:
        return self._group.drain_expired()


class BinaryWorkloadScheduler:
    """``binary_workload``: primary requests FCFS; secondary ones pass a bounded group first.

    A secondary request holds one of ``maxSecondaryRunnerThreads`` permits from the moment its group's
    dispatcher hands it to the runner pool's FIFO queue (shared with primary requests) until it finishes.
    """

    def __init__(self, config: ServerQueryConfig) -> None:
        self._fifo: deque[QueuedRequest] = deque()
        self._secondary = BoundedGroup(config, config.secondary_runner_threads, config.secondary_max_pending,
                                       config.secondary_timeout_s)

    def _dispatch_secondary(self, now: float) -> None:
        while (request := self._secondary.next(now)) is not None:
            self._fifo.append(request)

    def admit(self, request: QueuedRequest, now: float) -> int | None:
        if not request.secondary:
            self._fifo.append(request)
            return None
        code = self._secondary.admit(request)
        self._dispatch_secondary(now)
        return code

    def next(self, now: float) -> QueuedRequest | None:
        self._dispatch_secondary(now)
        return self._fifo.popleft() if self._fifo else None

    def finished(self, request: QueuedRequest) -> None:
        if request.secondary:
            self._secondary.finished(request)

    def clear(self) -> None:
        self._fifo.clear()
        self._secondary.clear()

    def drain_expired(self) -> list[QueuedRequest]:
        return self._secondary.drain_expired()


#: ``pinot.query.scheduler.name`` -> the scheduler class.
SCHEDULERS: Mapping[str, Callable[[ServerQueryConfig], Scheduler]] = {
    "fcfs": FCFSScheduler,
    "bounded_fcfs": BoundedFCFSScheduler,
    "tokenbucket": BoundedFCFSScheduler,
    "binary_workload": BinaryWorkloadScheduler,
    "workload": FCFSScheduler,
}


def make_scheduler(config: ServerQueryConfig) -> Scheduler:
    """The scheduler ``config.scheduler`` names."""
    return SCHEDULERS[config.scheduler](config)
