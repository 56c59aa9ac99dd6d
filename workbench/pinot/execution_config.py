"""Pinot's query-execution settings on servers and brokers, read from their own properties with Pinot's defaults.

Server keys (``pinot-execution.md``, "PE", §1-§2, §4): the scheduler is chosen by
``pinot.query.scheduler.name`` and configured by the other ``pinot.query.scheduler.*`` keys; thread pools
default to ``c`` runner and ``2c`` worker threads, where ``c`` is the server's cores; the per-query task
count comes from ``pinot.server.query.executor.max.execution.threads`` (and the HEAD-only
``...default.execution.threads``); ``pinot.server.query.executor.timeout`` is used only when a request
carries no ``timeoutMs``.

Broker keys (PE §4-§5): ``pinot.broker.timeoutMs`` (10 s), the bounded Jersey request pool
(``pinot.broker.enable.bounded.jersey.threadpool.executor``, off by default: request threads are unbounded)
and ``pinot.broker.max.reduce.threads.per.query``.

Unlike Pinot, which logs and falls back to FCFS on an unknown scheduler name, a bad value here is an
error naming the key: a sizing run on a silently different scheduler would answer the wrong question.

>>> cfg = ServerQueryConfig.from_properties({"pinot.query.scheduler.name": "bounded_fcfs"}, cores=8)
>>> cfg.scheduler, cfg.runner_threads, cfg.worker_threads, cfg.soft_limit, cfg.hard_limit, cfg.max_threads_per_query
('bounded_fcfs', 8, 16, 4, 7, 3)
>>> cfg.tasks(segments=12, group_by=False), cfg.tasks(segments=12, group_by=True), cfg.tasks(segments=1, group_by=True)
(4, 12, 1)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from workbench.errors import InputError

if TYPE_CHECKING:
    from workbench.pinot.options import QueryOptions

__all__ = [
    "BROKER_TIMEOUT_KEY",
    "SCHEDULERS",
    "SCHEDULER_PREFIX",
    "BrokerQueryConfig",
    "ServerQueryConfig",
    "query_timeout_ms",
    "task_count",
]

SCHEDULER_PREFIX: Final = "pinot.query.scheduler."
EXECUTOR_PREFIX: Final = "pinot.server.query.executor."
BROKER_TIMEOUT_KEY: Final = "pinot.broker.timeoutMs"
#: ``pinot.query.scheduler.name`` values Pinot ships (``workload`` from 1.5.1 on), PE §1.1.
SCHEDULERS: Final = ("fcfs", "bounded_fcfs", "tokenbucket", "binary_workload", "workload")
#: PE §2.1: a query's default task cap is max(1, min(10, c/2)).
MAX_NUM_THREADS_PER_QUERY_CAP: Final = 10
#: PE §4.1: defaults of the broker and server timeouts, ms.
DEFAULT_BROKER_TIMEOUT_MS: Final = 10_000.0
DEFAULT_SERVER_TIMEOUT_MS: Final = 15_000.0


def _number(kind: Callable[[str], Any], props: Mapping[str, Any], key: str, default: Any) -> Any:
    raw = props.get(key)
    if raw is None:
        return default
    if isinstance(raw, bool):
        raise InputError(key, f"must be a number, got {raw!r}")
    try:
        return kind(str(raw).strip())
    except ValueError:
        raise InputError(key, f"must be {'an integer' if kind is int else 'a number'}, got {raw!r}") from None


def _positive_int(props: Mapping[str, Any], key: str, default: int) -> int:
    value: int = _number(int, props, key, default)
    if value < 1:
        raise InputError(key, f"must be at least 1, got {value}")
    return value


def _pct(props: Mapping[str, Any], key: str, default: int) -> int:
    """A ResourceLimitPolicy percentage; Pinot logs and uses the default outside 1-100 (PE §1.3)."""
    value: int = _number(int, props, key, default)
    return value if 1 <= value <= 100 else default


def _java_bool(props: Mapping[str, Any], key: str) -> bool:
    raw = props.get(key, False)
    return raw if isinstance(raw, bool) else str(raw).strip().lower() == "true"


@dataclass(frozen=True)
class ServerQueryConfig:
    """A server's scheduler, thread pools, task counts and executor timeout (PE §1-§2, §4.1).

    Parameters
    ----------
    scheduler
        ``pinot.query.scheduler.name``: one of :data:`SCHEDULERS`.
    cores
        ``c``, the JVM's available processors, which every default is derived from.
    runner_threads, worker_threads
        ``query_runner_threads`` (default ``c``) and ``query_worker_threads`` (default ``2c``).
    max_pending_per_group, query_deadline_s, soft_limit_pct, hard_limit_pct, threads_per_query_pct
        The bounded schedulers' queue and per-table thread limits.
    secondary_runner_threads, secondary_max_pending, secondary_timeout_s
        ``binarywlm.*``: the secondary workload's concurrency, queue bound and queue timeout.
    timeout_ms
        ``pinot.server.query.executor.timeout``: used only for requests without ``timeoutMs``.
    max_execution_threads, default_execution_threads
        ``pinot.server.query.executor.max.execution.threads`` and ``...default.execution.threads``
        (-1 = unset).
    """

    scheduler: str
    cores: int
    runner_threads: int
    worker_threads: int
    max_pending_per_group: int = 10
    query_deadline_s: float = 30.0
    soft_limit_pct: int = 30
    hard_limit_pct: int = 45
    threads_per_query_pct: int = 20
    secondary_runner_threads: int = 5
    secondary_max_pending: int = 20
    secondary_timeout_s: float = 40.0
    timeout_ms: float = DEFAULT_SERVER_TIMEOUT_MS
    max_execution_threads: int = -1
    default_execution_threads: int = -1

    @classmethod
    def from_properties(cls, props: Mapping[str, Any], *, cores: int) -> ServerQueryConfig:
        """Read the server's Pinot properties; every value is checked and named on error."""
        s, e = SCHEDULER_PREFIX, EXECUTOR_PREFIX
        name = str(props.get(f"{s}name", "fcfs")).strip().lower()
        if name not in SCHEDULERS:
            raise InputError(f"{s}name", f"unknown scheduler {name!r}; Pinot's schedulers are {', '.join(SCHEDULERS)}")
        timeout = float(_number(float, props, f"{e}timeout", DEFAULT_SERVER_TIMEOUT_MS))
        if timeout <= 0:
            raise InputError(f"{e}timeout", f"must be a positive number of ms, got {timeout:g}")
        return cls(
            scheduler=name, cores=cores,
            runner_threads=_positive_int(props, f"{s}query_runner_threads", cores),
            worker_threads=_positive_int(props, f"{s}query_worker_threads", 2 * cores),
            max_pending_per_group=_positive_int(props, f"{s}max_pending_per_group", 10),
            query_deadline_s=float(_positive_int(props, f"{s}query_deadline_seconds", 30)),
            soft_limit_pct=_pct(props, f"{s}table_threads_soft_limit_pct", 30),
            hard_limit_pct=_pct(props, f"{s}table_threads_hard_limit_pct", 45),
            threads_per_query_pct=_pct(props, f"{s}threads_per_query_pct", 20),
            secondary_runner_threads=_positive_int(props, f"{s}binarywlm.maxSecondaryRunnerThreads", 5),
            secondary_max_pending=_positive_int(props, f"{s}binarywlm.maxPendingSecondaryQueries", 20),
            secondary_timeout_s=float(_positive_int(props, f"{s}binarywlm.secondaryQueueQueryTimeout", 40)),
            timeout_ms=timeout,
            max_execution_threads=int(_number(int, props, f"{e}max.execution.threads", -1)),
            default_execution_threads=int(_number(int, props, f"{e}default.execution.threads", -1)),
        )

    # -- ResourceLimitPolicy (PE §1.3), all in worker threads W -------------------------------------
    @property
    def soft_limit(self) -> int:
        w = self.worker_threads
        return min(w, max(1, w * self.soft_limit_pct // 100))

    @property
    def hard_limit(self) -> int:
        w = self.worker_threads
        return min(w, max(self.soft_limit, w * self.hard_limit_pct // 100))

    @property
    def max_threads_per_query(self) -> int:
        w = self.worker_threads
        return min(self.hard_limit, min(self.cores, max(1, w * self.threads_per_query_pct // 100)))

    # -- per-query parallelism (PE §2.1) ------------------------------------------------------------
    def execution_threads(self, option: int | None = None) -> int:
        """The effective ``maxExecutionThreads``: query option (capped by the server max), else the
        server default, else the server max; <= 0 means "use the built-in rule"."""
        if option is not None and option > 0:
            return min(option, self.max_execution_threads) if self.max_execution_threads > 0 else option
        if self.default_execution_threads > 0:
            return self.default_execution_threads
        return self.max_execution_threads

    def tasks(self, segments: int, group_by: bool, option: int | None = None) -> int:
        """Worker tasks a query's ``segments`` are spread over on this server (:func:`task_count`, no
        bounded-scheduler cap): the rule the simulator's server kernel compiles, so calibration and the
        model cannot drift apart.

        One segment (or none) is still one task; group-by combines without a set
        ``maxExecutionThreads`` use min(segments, 2c), the others max(1, min(10, c/2)).
        """
        return task_count(segments, group_by, option or 0, self.max_execution_threads,
                          self.default_execution_threads, self.cores, 0)


def task_count(segments: int, group_by: bool, option: int, max_exec: int, default_exec: int, cores: int,
               reserved: int) -> int:
    """Worker tasks a request's ``segments`` are spread over (PE §2.1), stated once.

    ``option`` is the query's ``maxExecutionThreads`` (<= 0: none), capped by the server's ``max_exec``
    when that is set; else the server's ``default_exec``, else ``max_exec``; <= 0 means the built-in rule:
    ``2c`` for a group-by, ``max(1, min(10, c/2))`` otherwise. One segment (or none) is one task. A
    bounded scheduler's ``reserved`` permits (> 0) cap the count.

    Plain integer arithmetic on purpose: :mod:`workbench.sim.decisions` compiles this very function
    with numba for the server kernel (``pinot`` may not import ``sim``, so the rule lives here).

    >>> task_count(12, False, 0, -1, -1, 8, 0), task_count(12, True, 0, -1, -1, 8, 0)
    (4, 12)
    """
    if segments <= 1:
        tasks = 1
    else:
        if option > 0:
            threads = min(option, max_exec) if max_exec > 0 else option
        elif default_exec > 0:
            threads = default_exec
        else:
            threads = max_exec
        if threads <= 0:
            threads = 2 * cores if group_by else max(1, min(MAX_NUM_THREADS_PER_QUERY_CAP, cores // 2))
        tasks = min(segments, threads)
    if reserved > 0:
        tasks = min(tasks, reserved)
    return tasks


@dataclass(frozen=True)
class BrokerQueryConfig:
    """A broker's timeout default and request-thread pool (PE §4.1, §5).

    ``request_threads`` is ``None`` for Pinot's default unbounded Jersey pool; with
    ``pinot.broker.enable.bounded.jersey.threadpool.executor`` it is the pool's max size (default 2c).
    """

    timeout_ms: float = DEFAULT_BROKER_TIMEOUT_MS
    request_threads: int | None = None
    max_reduce_threads_per_query: int = 1

    @classmethod
    def from_properties(cls, props: Mapping[str, Any], *, cores: int,
                        default_timeout_ms: float = DEFAULT_BROKER_TIMEOUT_MS) -> BrokerQueryConfig:
        """Read ``pinot.broker.*`` keys; ``default_timeout_ms`` applies when ``pinot.broker.timeoutMs`` is absent."""
        timeout = float(_number(float, props, BROKER_TIMEOUT_KEY, default_timeout_ms))
        if timeout <= 0:
            raise InputError(BROKER_TIMEOUT_KEY, f"must be a positive number of ms, got {timeout:g}")
        threads = None
        if _java_bool(props, "pinot.broker.enable.bounded.jersey.threadpool.executor"):
            threads = _positive_int(props, "pinot.broker.jersey.threadpool.executor.max.pool.size", 2 * cores)
        reduce = _positive_int(props, "pinot.broker.max.reduce.threads.per.query",
                               max(1, min(MAX_NUM_THREADS_PER_QUERY_CAP, cores // 2)))
        return cls(timeout, threads, reduce)


def query_timeout_ms(options: QueryOptions, table_timeout_ms: float | None, broker: BrokerQueryConfig) -> float:
    """The broker's timeout for one query (PE §4.1): query option ``timeoutMs``, else the table's
    ``queryConfig.timeoutMs``, else the broker default."""
    if options.timeout_ms is not None and options.timeout_ms > 0:
        return options.timeout_ms
    if table_timeout_ms is not None and table_timeout_ms > 0:
        return table_timeout_ms
    return broker.timeout_ms
