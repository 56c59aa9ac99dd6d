"""What the compiled server kernel knows of a server's configuration: one typed record, read by name.

The kernel (:func:`~workbench.sim.fast.server_kernel.simulate_server`) used to take its configuration as
twelve positional integers and two floats, with the meaning of each position named in another place;
a field added in the wrong slot read silently as another setting. :class:`ServerSettings` is a
:class:`~typing.NamedTuple`, which numba passes to compiled code as a struct: the kernel reads
``settings.hard_limit`` as it would read an array slot, and the field's name is its only index.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from workbench.pinot.execution_config import ServerQueryConfig

__all__ = ["SCHEDULER_KINDS", "SCHED_BINARY", "SCHED_BOUNDED", "SCHED_FCFS", "ServerSettings"]

#: How the kernel queues requests: one FIFO, one bounded group, or a FIFO fed by a bounded secondary group.
SCHED_FCFS, SCHED_BOUNDED, SCHED_BINARY = 0, 1, 2
#: ``pinot.query.scheduler.name`` -> the kernel's queueing (the SimPy engine's ``schedulers.SCHEDULERS``:
#: ``tokenbucket`` with one group orders requests as ``bounded_fcfs``; ``workload`` admits all, as ``fcfs``).
SCHEDULER_KINDS: Mapping[str, int] = {"fcfs": SCHED_FCFS, "workload": SCHED_FCFS, "bounded_fcfs": SCHED_BOUNDED,
                                      "tokenbucket": SCHED_BOUNDED, "binary_workload": SCHED_BINARY}


class ServerSettings(NamedTuple):
    """A server's scheduler, pools and task counts, as :class:`~workbench.sim.server.PinotServer` uses them."""

    cores: int
    runner_threads: int
    worker_threads: int
    #: The ``fcfs_threads`` simplification (``ExecutionModel.FCFS_THREADS``): static segments, off-core runners.
    static: bool
    #: :data:`SCHED_FCFS`, :data:`SCHED_BOUNDED` or :data:`SCHED_BINARY`.
    scheduler: int
    max_pending_per_group: int
    hard_limit: int
    max_threads_per_query: int
    secondary_runner_threads: int
    secondary_max_pending: int
    max_execution_threads: int
    default_execution_threads: int
    #: The bounded group's queue deadline, ms.
    query_deadline_ms: float
    #: The secondary group's queue deadline, ms.
    secondary_timeout_ms: float
    #: Some request leaves CPU off the query's path (``service.off_path_ms``): the CPU's heap has room for it.
    off_path: bool

    @classmethod
    def of(cls, q: ServerQueryConfig, static: bool, off_path: bool) -> ServerSettings:
        """The settings of a server configured by ``q`` (``static``: the ``fcfs_threads`` execution model;
        ``off_path``: some request leaves CPU off the query's path)."""
        return cls(int(q.cores), int(q.runner_threads), int(q.worker_threads), bool(static),
                   SCHEDULER_KINDS[q.scheduler], int(q.max_pending_per_group), int(q.hard_limit),
                   int(q.max_threads_per_query), int(q.secondary_runner_threads), int(q.secondary_max_pending),
                   int(q.max_execution_threads), int(q.default_execution_threads),
                   float(q.query_deadline_s * 1000.0), float(q.secondary_timeout_s * 1000.0), bool(off_path))
