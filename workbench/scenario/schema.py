"""The typed, frozen sections of a scenario. Defaults come from :mod:`workbench.defaults`.

Each dataclass is one section of the scenario file; its fields are the keys a user may write there.
Bounds and units live in each field's metadata and are enforced by :mod:`.build`; rules that tie
several fields together live in a ``check(path)`` method.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from workbench import defaults as D
from workbench.distributions import Deterministic, Distribution
from workbench.errors import InputError, ScenarioError
from workbench.pinot.cache.config import BrokerCacheConfig, ServerCacheConfig
from workbench.pinot.execution_config import BROKER_TIMEOUT_KEY, BrokerQueryConfig, ServerQueryConfig
from workbench.pinot.failure_detector import FailureDetectorConfig
from workbench.pinot.options import QueryOptions
from workbench.pinot.routing.adaptive import AdaptiveConfig, AdaptiveSelectorType
from workbench.pinot.sql.query import Function
from workbench.workload.spec import GenerateSpec

__all__ = [
    "DEFAULT_TENANT",
    "DELAY_KINDS",
    "ArrivalSpec",
    "BrokerSpec",
    "ChurnSpec",
    "ClusterSpec",
    "DelayByKind",
    "FailureSpec",
    "GCSpec",
    "GenerateSpec",
    "LimitsSpec",
    "NetworkSpec",
    "ProfileSpec",
    "SLOSpec",
    "ServerSpec",
    "ServiceSpec",
    "SimulationSpec",
    "SlowSpec",
    "SparkSpec",
    "SyntheticWorkload",
    "WedgedSpec",
    "WorkloadSpec",
]


def _f(default: Any, **meta: Any) -> Any:
    """A dataclass field with validation metadata (see :mod:`.build`)."""
    if callable(default):
        return field(default_factory=default, metadata=meta)
    return field(default=default, metadata=meta)


def _derived() -> Any:
    """A field computed from the section's other fields when it is built (not a key a user writes)."""
    return field(init=False, repr=False, compare=False)


def _properties(config: Mapping[str, Any]) -> dict[str, str]:
    """Pinot properties as the strings a ``.properties`` file would hold."""
    return {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in config.items()}


def _cache_config(kind: type[Any], config: Mapping[str, Any]) -> Any:
    """The RFC's cache settings from Pinot properties; a bad property is an error at ``config.<key>``."""
    try:
        return kind.from_properties(_properties(config))
    except ValueError as exc:
        key, _, problem = str(exc).partition(": ")
        raise ScenarioError(f"config.{key}", problem) from None


_MAX_THREADS_KEY = "pinot.server.query.executor.max.execution.threads"


@dataclass(frozen=True)
class ServerSpec:
    """One Pinot server: CPU cores, JVM heap, Pinot server properties, and how requests are executed.

    ``config`` holds the user's Pinot server properties: the scheduler and thread pools
    (``pinot.query.scheduler.*``), the executor (``pinot.server.query.executor.*``) and the query-cache
    RFC's ``pinot.server.segment.query.cache.*``. ``max_tasks_per_query`` is an older spelling of
    ``pinot.server.query.executor.max.execution.threads``.
    """

    cores: int = _f(D.SERVER_CORES, min=1, max=D.LIMIT_CORES)
    heap: float = _f(float(D.SERVER_HEAP_BYTES), kind="size", gt=0)
    max_tasks_per_query: int | None = _f(None, min=1)
    config: Mapping[str, Any] = _f(dict)
    execution: Literal["pinot", "fcfs_threads"] = D.SERVER_EXECUTION
    #: The per-segment result cache's settings, read from ``config`` once, when the section is built.
    segment_cache: ServerCacheConfig = _derived()
    #: Scheduler, thread pools, task counts and executor timeout, read from ``config`` the same way.
    query: ServerQueryConfig = _derived()

    def __post_init__(self) -> None:
        object.__setattr__(self, "segment_cache", _cache_config(ServerCacheConfig, self.config))
        props = dict(self.config)
        if self.max_tasks_per_query is not None:
            if _MAX_THREADS_KEY in props:
                raise ScenarioError("max_tasks_per_query", f"is the older spelling of config.{_MAX_THREADS_KEY}; "
                                                           "give one of them")
            props[_MAX_THREADS_KEY] = self.max_tasks_per_query
        try:
            query = ServerQueryConfig.from_properties(props, cores=self.cores)
        except InputError as exc:
            raise ScenarioError(f"config.{exc.where}", exc.problem) from None
        object.__setattr__(self, "query", query)


@dataclass(frozen=True)
class BrokerSpec:
    """The broker: its cores, the reduce cost model, the default query timeout and its Pinot properties.

    A query's broker work is ``overhead_ms + reduce_ms_per_server x servers that answered +
    reduce_ms_per_row x rows they returned`` (PE §5), run on one of ``cores`` cores (and one request thread
    of the bounded Jersey pool, when ``config`` enables it); ``off_path_ms`` more keeps that core busy after the
    reply (broker CPU no reply waits for). ``timeout_ms`` is the broker default timeout,
    ``pinot.broker.timeoutMs`` in ``config`` (give one of the two).
    """

    overhead_ms: float = _f(D.BROKER_OVERHEAD_MS, min=0, kind="duration_ms")
    off_path_ms: float = _f(D.BROKER_OFF_PATH_MS, min=0, kind="duration_ms")
    timeout_ms: float | None = _f(None, gt=0, kind="duration_ms")
    reduce_ms_per_server: float = _f(D.BROKER_REDUCE_MS_PER_SERVER, min=0, kind="duration_ms")
    reduce_ms_per_row: float = _f(D.BROKER_REDUCE_MS_PER_ROW, min=0, kind="duration_ms")
    cores: int = _f(D.BROKER_CORES, min=1, max=D.LIMIT_CORES)
    #: Pinot broker properties as in the user's broker config (``pinot.broker.*``); the model reads
    #: ``pinot.broker.timeoutMs``, the Jersey pool, ``pinot.broker.adaptive.server.selector.*`` and the
    #: RFC's ``pinot.broker.query.cache.*``.
    config: Mapping[str, Any] = _f(dict)
    #: Adaptive Server Selection settings (every ``pinot.broker.adaptive.server.selector.*`` key), read
    #: from ``config`` once, when the section is built; the model's selector and stats use exactly these.
    adaptive: AdaptiveConfig = _derived()
    #: The broker result cache's settings, read from ``config`` the same way.
    result_cache: BrokerCacheConfig = _derived()
    #: Timeout default, request threads and reduce threads, read from ``config`` the same way.
    query: BrokerQueryConfig = _derived()
    #: The failure detector (``pinot.broker.failure.detector.*``), read from ``config`` the same way.
    failure_detector: FailureDetectorConfig = _derived()

    def __post_init__(self) -> None:
        if self.timeout_ms is not None and BROKER_TIMEOUT_KEY in self.config:
            raise ScenarioError("timeout_ms", f"is also set as config.{BROKER_TIMEOUT_KEY}; give one of them")
        try:
            adaptive = AdaptiveConfig.from_broker_config(self.config)
            query = BrokerQueryConfig.from_properties(self.config, cores=self.cores,
                                                      default_timeout_ms=self.timeout_ms or D.BROKER_TIMEOUT_MS)
        except InputError as exc:
            raise ScenarioError(f"config.{exc.where}", exc.problem) from None
        object.__setattr__(self, "adaptive", adaptive)
        object.__setattr__(self, "query", query)
        object.__setattr__(self, "result_cache", _cache_config(BrokerCacheConfig, self.config))
        try:
            detector = FailureDetectorConfig.from_properties(self.config)
        except ValueError as exc:
            key, _, problem = str(exc).partition(": ")
            raise ScenarioError(f"config.{key}", problem) from None
        object.__setattr__(self, "failure_detector", detector)

    @property
    def adaptive_selection(self) -> bool:
        """Whether queries are routed by Adaptive Server Selection (a type other than ``NO_OP``)."""
        return self.adaptive.type is not AdaptiveSelectorType.NO_OP

    @property
    def routes_live(self) -> bool:
        """Whether routing depends on what happened earlier in the run, so each query is routed when it
        arrives: adaptive selection (live stats) or a failure detector (servers excluded after a failure)."""
        return self.adaptive_selection or self.failure_detector.enabled


@dataclass(frozen=True)
class DelayByKind:
    """A server request's own delay for the requests of one kind of query (``selection``, ``aggregation``,
    ``group_by``: :func:`workbench.sim.planner.delay_kind`); a kind left out draws ``request_delay_ms``.

    Why: against Apache Pinot 1.5.1 (``docs/validation.md``, "The millisecond clock") the delay's median on the
    nanosecond clock was 0.10 ms for selections, 0.32 for aggregations and 0.01 for group-bys: one distribution
    for all put the aggregations' on the selections."""

    selection: Distribution | None = _f(None, kind="distribution", unit="ms")
    aggregation: Distribution | None = _f(None, kind="distribution", unit="ms")
    group_by: Distribution | None = _f(None, kind="distribution", unit="ms")


@dataclass(frozen=True)
class NetworkSpec:
    """One-way latency of each message between broker and server, ms; and a delay per server request.

    ``request_delay_ms`` is time on a request's round trip that takes no server core (Netty on both sides,
    threads waiting for a core the model does not see): drawn once per server request and added to its way
    back, after the server's work. Calibration fits it to the part of the broker's ``timeMs`` the servers'
    measured work does not explain (``docs/calibrate.md``); none by default. ``request_delay_by_kind_ms`` gives
    a kind of query its own (calibration writes it when the log has enough of each kind).
    """

    latency_ms: Distribution = _f(lambda: Deterministic(D.NETWORK_LATENCY_MS), kind="distribution", unit="ms")
    request_delay_ms: Distribution = _f(lambda: Deterministic(D.NETWORK_REQUEST_DELAY_MS), kind="distribution",
                                        unit="ms")
    request_delay_by_kind_ms: DelayByKind = _f(DelayByKind)

    @property
    def _given_kinds(self) -> tuple[tuple[str, Distribution], ...]:
        """The kinds given their own delay, with it, in :data:`DELAY_KINDS` order."""
        kinds = self.request_delay_by_kind_ms
        return tuple((k, d) for k in DELAY_KINDS if (d := getattr(kinds, k)) is not None)

    @property
    def request_delays(self) -> tuple[Distribution, ...]:
        """The request delays drawn side by side, one value of each per request: ``request_delay_ms``, then each
        kind's own, in :data:`DELAY_KINDS` order (those given)."""
        return (self.request_delay_ms, *(d for _, d in self._given_kinds))

    def delay_column(self, kind: str | None) -> int:
        """Which of :attr:`request_delays` a request of ``kind`` takes (0: ``request_delay_ms``)."""
        given = [k for k, _ in self._given_kinds]
        return 1 + given.index(kind) if kind in given else 0


#: The kinds of query ``cluster.network.request_delay_by_kind_ms`` may give a delay of its own, in draw order.
DELAY_KINDS: Final = ("selection", "aggregation", "group_by")


@dataclass(frozen=True)
class GCSpec:
    """Stop-the-world pauses per server (``docs/gc.md``; :mod:`workbench.sim.gc` runs them).

    ``fixed``: the time from the end of one pause to the start of the next is drawn from ``interval_s``
    (seconds), then the pause lasts ``pause_ms`` (milliseconds).
    ``g1``: JDK 17 G1 as fitted to real logs (:class:`~workbench.jvm.G1Heap`): young collections when eden
    fills, pauses that grow with what survives and with the upsert map the remembered sets scan,
    concurrent cycles (remark, cleanup) above ``ihop``, mixed collections, full GCs on evacuation
    failure, and out-of-memory reported. ``zgc``: generational ZGC (sub-millisecond pauses, allocation
    stalls on a tight heap, and the cores its concurrent threads take).

    Allocation: ``allocation_rate`` (bytes/s) when given; otherwise each request a server receives
    allocates ``bytes_per_request`` plus ``bytes_per_doc`` per document it scans. Live heap:
    ``live_heap`` plus the upsert metadata the server holds. For an upsert table with data, that comes
    from replaying the data through Pinot's upsert manager under the table's TTLs
    (:mod:`workbench.sim.memory`), at the moment ``heap_at`` of the data's span (``peak``: where the
    largest server's heap peaks); ``upsert_keys`` (keys per server) and ``update_rate`` (updates of
    existing keys per second per server, the remembered-set work in G1's pauses) override it, as a
    GC-log calibration does. The other keys are the fitted G1 and ZGC parameters (``workbench import
    gc-log`` writes them for a user's own log).
    """

    collector: Literal["none", "fixed", "g1", "zgc"] = D.GC_COLLECTOR
    interval_s: Distribution | None = _f(None, kind="distribution", unit="s")
    pause_ms: Distribution | None = _f(None, kind="distribution", unit="ms")
    allocation_rate: float | None = _f(D.GC_ALLOCATION_RATE, kind="size", gt=0)
    bytes_per_doc: float = _f(D.GC_BYTES_PER_DOC, min=0)
    bytes_per_request: float = _f(float(D.GC_BYTES_PER_REQUEST), kind="size", min=0)
    live_heap: float = _f(float(D.GC_LIVE_HEAP), kind="size", min=0)
    upsert_keys: int | None = _f(None, min=0)
    update_rate: float | None = _f(None, min=0)
    heap_at: float | Literal["peak"] = _f("peak", kind="duration", min=0)
    # -- G1 (workbench.jvm.G1Params) --
    young_base_ms: float = _f(D.G1_YOUNG_BASE_MS, min=0, kind="duration_ms")
    copy_rate: float = _f(D.G1_COPY_RATE, kind="size", gt=0)
    rs_scan_ms_per_gb: float = _f(D.G1_RS_SCAN_MS_PER_GB, min=0)
    rs_map_exponent: float = _f(D.G1_RS_MAP_EXPONENT, min=0)
    rs_coarsen_updates: float = _f(D.G1_RS_COARSEN_UPDATES, gt=0)
    pause_sigma: float | None = _f(None, min=0)
    survivor_s: float = _f(D.G1_SURVIVOR_S, min=0, kind="duration")
    survivor_bytes: float = _f(D.G1_SURVIVOR_BYTES, kind="size", min=0)
    promotion_fraction: float = _f(D.G1_PROMOTION_FRACTION, min=0, max=1)
    mixed_live_ratio: float = _f(D.G1_MIXED_LIVE_RATIO, min=0)
    full_base_ms: float = _f(D.G1_FULL_BASE_MS, min=0, kind="duration_ms")
    full_ms_per_gb: float = _f(D.G1_FULL_MS_PER_GB, min=0)
    full_sigma: float = _f(D.G1_FULL_SIGMA, min=0)
    remark_ms: float = _f(D.G1_REMARK_MS, min=0, kind="duration_ms")
    cleanup_ms: float = _f(D.G1_CLEANUP_MS, min=0, kind="duration_ms")
    concurrent_sigma: float = _f(D.G1_CONCURRENT_SIGMA, min=0)
    mark_rate: float = _f(D.G1_MARK_RATE, kind="size", gt=0)
    rebuild_rate: float = _f(D.G1_REBUILD_RATE, kind="size", gt=0)
    ihop: float = _f(D.GC_IHOP, gt=0, max=1)
    reserve: float = _f(D.GC_RESERVE, min=0, max=0.5)
    new_size_min: float = _f(D.G1_NEW_SIZE_MIN, gt=0, max=1)
    new_size_max: float = _f(D.G1_NEW_SIZE_MAX, gt=0, max=1)
    pause_goal_ms: float = _f(D.G1_PAUSE_GOAL_MS, gt=0, kind="duration_ms")
    goal_share: float = _f(D.G1_GOAL_SHARE, gt=0, max=1)
    young_growth: float = _f(D.G1_YOUNG_GROWTH, min=0)
    mixed_count: int = _f(D.GC_MIXED_COUNT, min=1)
    heap_waste: float = _f(D.G1_HEAP_WASTE, min=0, max=1)
    # -- ZGC (workbench.jvm.ZGCParams; pause_ms is its median pause, pause_sigma its spread) --
    cycle_base_ms: float = _f(D.ZGC_CYCLE_BASE_MS, min=0, kind="duration_ms")
    sweep_rate: float = _f(D.ZGC_SWEEP_RATE, kind="size", gt=0)
    trigger_share: float = _f(D.ZGC_TRIGGER_SHARE, gt=0, max=1)
    threads_share: float = _f(D.ZGC_THREADS_SHARE, gt=0, max=1)
    retained_share: float = _f(D.ZGC_RETAINED_SHARE, min=0, max=0.9)

    def check(self, path: str) -> None:
        if self.collector == "fixed":
            for name in ("interval_s", "pause_ms"):
                if getattr(self, name) is None:
                    raise ScenarioError(f"{path}.{name}", "is required when collector is fixed")
            if self.upsert_keys:
                raise ScenarioError(f"{path}.upsert_keys", "the fixed collector replays logged pauses and cannot "
                                                           "follow a key count; use collector: g1 (workbench import "
                                                           "gc-log fits one to your log)")
        elif self.interval_s is not None:
            raise ScenarioError(f"{path}.collector", "interval_s needs collector: fixed")
        elif self.pause_ms is not None and self.collector != "zgc":
            raise ScenarioError(f"{path}.collector", "pause_ms needs collector: fixed or zgc")
        if self.new_size_min > self.new_size_max:
            raise ScenarioError(f"{path}.new_size_min", f"must not exceed new_size_max ({self.new_size_max:g})")


@dataclass(frozen=True)
class SlowSpec:
    """One degraded server: while ``[from_s, until_s)`` lasts (the whole run without them), the work of
    every request reaching it takes ``factor`` times longer. ``scope``: ``jvm`` (the default: a throttled CPU,
    a noisy neighbour, a slow host) slows everything its JVM does, so its GC pauses that start in the window
    and each request's own delay (``cluster.network.request_delay_ms``) take ``factor`` times longer too;
    ``work`` slows the query's work alone (a failing disk). ``server`` is a name the layout gives
    (``Server_0`` ..)."""

    server: str = ""
    factor: float | None = _f(None, gt=0)
    scope: Literal["jvm", "work"] = D.SLOW_SCOPE
    from_s: float = _f(0.0, kind="duration", min=0)
    until_s: float | None = _f(None, kind="duration", gt=0)

    def check(self, path: str) -> None:
        if not self.server:
            raise ScenarioError(f"{path}.server", "is required: the server's name (Server_0 .. Server_<n-1>)")
        if self.factor is None:
            raise ScenarioError(f"{path}.factor", "is required: how many times longer the server's work takes")
        _check_window(self.from_s, self.until_s, path)


@dataclass(frozen=True)
class WedgedSpec:
    """One wedged server: while ``[from_s, until_s)`` lasts (the whole run without them) it keeps its
    connections and accepts requests but makes no progress and answers nothing (stuck threads, a
    hung disk), so brokers wait for it until each query's timeout (427). Pinot's failure detector does
    not see it: no connection fails."""

    server: str = ""
    from_s: float = _f(0.0, kind="duration", min=0)
    until_s: float | None = _f(None, kind="duration", gt=0)

    def check(self, path: str) -> None:
        if not self.server:
            raise ScenarioError(f"{path}.server", "is required: the server's name (Server_0 .. Server_<n-1>)")
        _check_window(self.from_s, self.until_s, path)


def _check_window(from_s: float, until_s: float | None, path: str) -> None:
    if until_s is not None and until_s <= from_s:
        raise ScenarioError(f"{path}.until_s", f"must be after from_s ({from_s:g} s), got {until_s:g}")


def _check_degraded(windows: Sequence[SlowSpec | WedgedSpec], key: str, path: str,
                    servers: int) -> None:
    """Each window names a server of the cluster, and one server's windows do not overlap."""
    names = [f"Server_{i}" for i in range(servers)]
    for i, w in enumerate(windows):
        if w.server not in names:
            raise ScenarioError(f"{path}.{key}[{i}].server", f"{w.server!r} is not a server of this cluster; "
                                                            f"use Server_0 .. Server_{servers - 1}")
        for j, other in enumerate(windows[:i]):
            if other.server == w.server and w.from_s < (other.until_s if other.until_s is not None else math.inf) \
                    and other.from_s < (w.until_s if w.until_s is not None else math.inf):
                raise ScenarioError(f"{path}.{key}[{i}]", f"overlaps {key}[{j}] of {w.server}; give one server "
                                                          "disjoint windows")


@dataclass(frozen=True)
class FailureSpec:
    """Server failures: crashes at random (mean time between failures and to recover, exponential),
    servers down for the whole run, and degraded servers: slow ones (``slow``) and wedged ones
    (``wedged``), each for a window of the run.

    ``down`` names servers (``Server_0`` .. ``Server_<n-1>``, the names the layout gives) that are down
    from the start: the what-if of losing a machine before anyone rebalances. Brokers route around
    them from the first query, as Pinot's do once the external view drops them; segments with no
    other replica are unavailable (partial results).
    """

    mtbf_s: float | None = _f(None, kind="duration", gt=0)
    mttr_s: float | None = _f(None, kind="duration", gt=0)
    down: tuple[str, ...] = ()
    slow: tuple[SlowSpec, ...] = ()
    wedged: tuple[WedgedSpec, ...] = ()

    def check(self, path: str) -> None:
        if (self.mtbf_s is None) != (self.mttr_s is None):
            raise ScenarioError(f"{path}.mttr_s" if self.mttr_s is None else f"{path}.mtbf_s",
                                "mtbf_s and mttr_s must be given together")


#: The server tenant of a table config without ``tenants.server``, and of every server no tenant claims.
DEFAULT_TENANT = "DefaultTenant"


def _check_tenants(tenants: Mapping[str, Any], path: str, servers: int) -> None:
    """Each tenant names a positive server count, and together they fit the cluster."""
    for name, count in tenants.items():
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ScenarioError(f"{path}.{name}", f"must be a positive integer (servers tagged for the tenant), "
                                                  f"got {count!r}")
    total = sum(int(c) for c in tenants.values())
    if total > servers:
        raise ScenarioError(path, f"tags {total} servers, but cluster.servers is {servers}; raise cluster.servers "
                                  "or give the tenants fewer servers")


@dataclass(frozen=True)
class ClusterSpec:
    """Servers, brokers and what happens to them."""

    servers: int = _f(D.SERVERS, min=1)
    brokers: int = _f(D.BROKERS, min=1)
    server: ServerSpec = _f(ServerSpec)
    broker: BrokerSpec = _f(BrokerSpec)
    network: NetworkSpec = _f(NetworkSpec)
    gc: GCSpec = _f(GCSpec)
    failures: FailureSpec = _f(FailureSpec)
    #: Server tenants, as Pinot's ``cluster.tenant.isolation.enable=true`` tags servers: tenant name -> how many
    #: servers carry its tags, taken in order (``Server_0`` on); servers no tenant claims serve ``DefaultTenant``.
    tenants: Mapping[str, int] = _f(dict)

    def servers_of(self, tenant: str) -> tuple[int, ...]:
        """The servers tagged for ``tenant`` (indices, ``Server_i``): each tenant of ``tenants`` takes the next
        servers in its order; ``DefaultTenant`` also holds every server no tenant claims (Pinot tags a new
        server ``DefaultTenant`` when tenant isolation is on)."""
        start, out = 0, {}
        for name, count in self.tenants.items():
            out[name] = tuple(range(start, start + int(count)))
            start += int(count)
        rest = tuple(range(start, self.servers))
        if tenant == DEFAULT_TENANT:
            return out.get(DEFAULT_TENANT, ()) + rest
        return out.get(tenant, ())

    def check(self, path: str) -> None:
        _check_tenants(self.tenants, f"{path}.tenants", self.servers)
        names = [f"Server_{i}" for i in range(self.servers)]
        for i, name in enumerate(self.failures.down):
            if name not in names:
                raise ScenarioError(f"{path}.failures.down[{i}]", f"{name!r} is not a server of this cluster; "
                                                                  f"use Server_0 .. Server_{self.servers - 1}")
            if name in self.failures.down[:i]:
                raise ScenarioError(f"{path}.failures.down[{i}]", f"{name!r} is listed twice")
        if len(self.failures.down) >= self.servers:
            raise ScenarioError(f"{path}.failures.down", "leaves no server up; keep at least one server out of it")
        _check_degraded(self.failures.slow, "slow", f"{path}.failures", self.servers)
        _check_degraded(self.failures.wedged, "wedged", f"{path}.failures", self.servers)
        live, heap = self.gc.live_heap / 1024**3, self.server.heap / 1024**3
        if self.gc.collector != "none" and live >= heap:
            raise ScenarioError(f"{path}.gc.live_heap", f"{live:.3g} GiB of live data does not fit the {heap:.3g} GiB "
                                                        "heap (cluster.server.heap): the JVM would fail with "
                                                        "OutOfMemoryError")


@dataclass(frozen=True)
class SyntheticWorkload:
    """A table made up on the fly, without Spark: every server holds the same number of segments."""

    segments_per_server: int = _f(D.SEGMENTS_PER_SERVER, min=1)
    docs_per_segment: int = _f(D.DOCS_PER_SEGMENT, min=1, max=D.LIMIT_DOCS_PER_SEGMENT)


@dataclass(frozen=True)
class ArrivalSpec:
    """How queries arrive at the brokers."""

    #: ``poisson``: queries without a filter at ``qps``; ``replay``: the generated (or imported) query
    #: log's arrival times and SQL, pruned and routed as Pinot would.
    process: Literal["poisson", "replay"] = D.ARRIVAL_PROCESS
    qps: float = _f(D.QPS, gt=0)
    #: Load as a knob: the workload ``speed`` times faster. A replayed log's arrival times are divided by it
    #: (and the log repeated until it fills the run, :func:`workbench.workload.replay.scale_query_log`), so
    #: its mix and its bursts are kept at a higher rate; Poisson arrivals come at ``qps x speed``.
    speed: float = _f(D.ARRIVAL_SPEED, gt=0)

    @property
    def rate(self) -> float:
        """The Poisson rate a run draws, queries/s: ``qps x speed``."""
        return self.qps * self.speed


@dataclass(frozen=True)
class ChurnSpec:
    """Segment churn during a run: refresh uploads (replace) and reloads, each a Poisson process.

    Each event picks a segment at random and tells every broker and server cache, which invalidate
    as the query-cache RFC specifies (the segment's epoch changes, its entries are purged).
    """

    replace_per_hour: float = _f(0.0, min=0)
    reload_per_hour: float = _f(0.0, min=0)


@dataclass(frozen=True)
class ProfileSpec:
    """A day of load: factors that multiply the scenario's query rate, step by step through 24 hours.

    ``hourly`` holds n factors for n equal steps of the day (24: hourly; 48: half-hourly; any n that
    divides a day's 86,400 seconds). Factor 1 is the rate the scenario runs as written (``arrival.qps``,
    or a replayed log at its own speed). ``workbench day`` runs the steps that decide the verdict
    (:mod:`workbench.studies.day`); a single run (``simulate``) is unchanged.
    """

    hourly: tuple[float, ...] | None = _f(None, min=0)

    def check(self, path: str) -> None:
        if self.hourly is None:
            raise ScenarioError(f"{path}.hourly", "is required: a list of factors for the day's steps, "
                                                 "e.g. [0.5, 1, 3, 1] (24 for hourly)")
        steps = len(self.hourly)
        if steps == 0 or D.DAY_SECONDS % steps:
            raise ScenarioError(f"{path}.hourly", f"has {steps} factors, which does not divide the day into equal "
                                                 "steps (missing hours?): give 24 for hourly, or any count that "
                                                 "divides 86,400 s (48, 96, 1440, ...)")
        if max(self.hourly) <= 0:
            raise ScenarioError(f"{path}.hourly", "has no step with load (every factor is 0): give the day's "
                                                 "relative rates, e.g. 1 for the rate the scenario runs as written")

    @property
    def step_s(self) -> float:
        """Seconds per step (3600 for 24 factors)."""
        return D.DAY_SECONDS / len(self.hourly or (1.0,))

    def peak(self) -> int:
        """The index of the step of highest load (the first, at a tie)."""
        factors = self.hourly or (1.0,)
        return max(range(len(factors)), key=lambda i: (factors[i], -i))


@dataclass(frozen=True)
class WorkloadSpec:
    """The data and the queries: ``synthetic`` (no Spark) or ``generate`` (Spark)."""

    synthetic: SyntheticWorkload | None = None
    generate: GenerateSpec | None = None
    #: A workload directory (``workbench generate`` or an import), relative to the scenario file;
    #: ``simulate`` reads its segments (and, for ``replay``, its queries) unless given another.
    data: str | None = None
    arrival: ArrivalSpec = _f(ArrivalSpec)
    churn: ChurnSpec = _f(ChurnSpec)
    #: A day of load (``profile.hourly``): the rate's factor per step of the day; ``None``: one steady rate.
    profile: ProfileSpec | None = None
    #: Pinot query options sent with every query (``numReplicaGroupsToQuery``, ``useFixedReplica``, ...).
    query_options: Mapping[str, Any] = _f(dict)
    #: ``query_options`` read once, when the section is built: the strings Pinot passes on and the
    #: values the model reads (``timeoutMs``, ``isSecondaryWorkload``, ``maxExecutionThreads``, routing).
    options: QueryOptions = _derived()

    def __post_init__(self) -> None:
        try:
            options = QueryOptions.parse(self.query_options)
        except InputError as exc:
            raise ScenarioError(f"query_options.{exc.where}", exc.problem) from None
        object.__setattr__(self, "options", options)

    def check(self, path: str) -> None:
        if self.synthetic is not None and (self.generate is not None or self.data is not None):
            raise ScenarioError(f"{path}.synthetic", "a synthetic workload cannot also name generated data")

    @property
    def source(self) -> str:
        """``"generate"`` when Spark builds the data, otherwise ``"synthetic"``."""
        return "generate" if self.generate is not None else "synthetic"


@dataclass(frozen=True)
class ServiceSpec:
    """The work a request makes on a server, ms.

    ``cost`` derives a segment's worker time from the documents it scans (``ns_per_doc``) plus
    ``per_segment_ms``, and adds runner-thread work: ``per_request_ms`` before the fan-out and
    ``merge_ms_per_segment`` per result block after it (PE §0, T1 and T4). The others draw a segment's
    time from a distribution with mean ``mean_ms``, with no runner work (used for validation against
    queueing theory).
    """

    model: Literal["cost", "deterministic", "exponential", "lognormal", "empirical"] = D.SERVICE_MODEL
    mean_ms: float = _f(D.SERVICE_MEAN_MS, gt=0, kind="duration_ms")
    sigma: float = _f(1.0, gt=0)
    values_ms: tuple[float, ...] | None = _f(None, min=0, kind="duration_ms")
    ns_per_doc: float = _f(D.COST_NS_PER_DOC, min=0)
    #: ``cost``: extra ns per document a group-by's segment scans (the group key and the per-group update Pinot's
    #: group-by operator does for each row; 0: none).
    group_by_ns_per_doc: float = _f(D.COST_GROUP_BY_NS_PER_DOC, min=0)
    #: ``cost``: ns per entry a segment's filter reads row by row (Pinot's ``numEntriesScannedInFilter``: a predicate
    #: on a column without an index reads each row's value; 0: none).
    ns_per_filter_entry: float = _f(D.COST_NS_PER_FILTER_ENTRY, min=0)
    per_segment_ms: float = _f(D.COST_PER_SEGMENT_MS, min=0, kind="duration_ms")
    per_request_ms: float = _f(D.COST_PER_REQUEST_MS, min=0, kind="duration_ms")
    merge_ms_per_segment: float = _f(D.COST_MERGE_MS_PER_SEGMENT, min=0, kind="duration_ms")
    #: ``cost``: spread of a segment's time around the cost model's mean, each time it runs: the time is
    #: multiplied by a lognormal factor of mean 1 and this log-space sigma (0: deterministic).
    variability: float = _f(D.COST_VARIABILITY, min=0, max=3)
    #: ``cost``: runner work a request adds after the cluster was idle (a wake-up: Pinot's threads parked, its
    #: caches cold), ``wake_ms x (1 - exp(-x) x (1 + x))``, ``x = gap / wake_tau_ms``, ``gap`` the time since the
    #: table's previous query arrived (0: none; :func:`workbench.sim.decisions.wake_work`).
    wake_ms: float = _f(D.COST_WAKE_MS, min=0, kind="duration_ms")
    wake_tau_ms: float = _f(D.COST_WAKE_TAU_MS, gt=0, kind="duration_ms")
    #: ``cost``: CPU per server request the server spends off the query's path (Netty's and the query log's threads,
    #: GC, JIT), ms: it runs on the server's cores after the response is sent, so it delays the requests behind it
    #: and not its own (0: none).
    off_path_ms: float = _f(D.COST_OFF_PATH_MS, min=0, kind="duration_ms")
    #: ``cost``: extra ns per document scanned for each call of these aggregation functions in a query (Pinot's
    #: names, e.g. ``PERCENTILETDIGEST: 80``): their per-row work is heavier than ``ns_per_doc``'s plain
    #: aggregations (none by default).
    function_ns_per_doc: Mapping[str, float] = _f(lambda: dict(D.COST_FUNCTION_NS_PER_DOC))

    def check(self, path: str) -> None:
        if self.model == "empirical" and not self.values_ms:
            raise ScenarioError(f"{path}.values_ms", "is required (a list of ms) when model is empirical")
        for name, ns in self.function_ns_per_doc.items():
            if not Function(str(name)).is_aggregation:
                raise ScenarioError(f"{path}.function_ns_per_doc.{name}",
                                    "is not an aggregation function Pinot knows (e.g. PERCENTILETDIGEST, "
                                    "DISTINCTCOUNTHLL)")
            if not isinstance(ns, (int, float)) or isinstance(ns, bool) or not math.isfinite(ns) or ns < 0:
                raise ScenarioError(f"{path}.function_ns_per_doc.{name}",
                                    f"must be a number of ns per document, at least 0, got {ns!r}")


@dataclass(frozen=True)
class SimulationSpec:
    """Horizon, warm-up, replications and the seed every random stream derives from."""

    duration_s: float = _f(D.DURATION_S, kind="duration", gt=0)
    warmup_s: float = _f(D.WARMUP_S, kind="duration", min=0)
    replications: int = _f(D.REPLICATIONS, min=1)
    seed: int = _f(D.SEED, min=0)
    #: ``simpy`` (the reference semantics), ``fast`` (the compiled engine: identical records, error where it
    #: cannot be exact) or ``auto`` (fast wherever it is exact, SimPy otherwise).
    engine: Literal["auto", "simpy", "fast"] = D.ENGINE
    #: ``all``: every per-query column; ``latency``: only each query's latency (the rest is summed per
    #: replication into ``windows``), for runs of millions of queries.
    records: Literal["all", "latency"] = D.RECORDS

    def check(self, path: str) -> None:
        if self.warmup_s >= self.duration_s:
            raise ScenarioError(
                f"{path}.warmup_s",
                f"must be shorter than duration_s ({self.duration_s:g} s), got {self.warmup_s:g} s",
            )


@dataclass(frozen=True)
class SparkSpec:
    """Where Spark runs; ``None`` means ``WORKBENCH_SPARK_MASTER`` or ``local[*]``."""

    master: str | None = None


@dataclass(frozen=True)
class SLOSpec:
    """What the sizing report checks configurations against."""

    p99_ms: float | None = _f(None, gt=0, kind="duration_ms")
    max_heap: float | None = _f(None, kind="size", gt=0)
    #: The failure the SLO must also hold through (the sizing report runs it for every configuration
    #: that meets the SLO): ``none``, one ``server`` lost, or a whole ``replica_group`` lost.
    survive: Literal["none", "server", "replica_group"] = D.SLO_SURVIVE


@dataclass(frozen=True)
class LimitsSpec:
    """How much work a scenario may ask for; checked before anything runs (``docs/scenario.md``, "Limits").

    The defaults (:mod:`workbench.defaults`, ``LIMIT_*``, each with its reason) stop typos such as
    ``qps: 1e9`` or ``duration_s: 1y`` in a second; raise one here when a run really needs more.
    """

    qps: float = _f(D.LIMIT_QPS, gt=0)
    duration_s: float = _f(D.LIMIT_DURATION_S, kind="duration", gt=0)
    replications: int = _f(D.LIMIT_REPLICATIONS, min=1)
    servers: int = _f(D.LIMIT_SERVERS, min=1)
    brokers: int = _f(D.LIMIT_BROKERS, min=1)
    segments: int = _f(D.LIMIT_SEGMENTS, min=1)
    simulated_queries: int = _f(D.LIMIT_SIMULATED_QUERIES, min=1)
    simulated_events: int = _f(D.LIMIT_SIMULATED_EVENTS, min=1)
    generate_events: int = _f(D.LIMIT_GENERATE_EVENTS, min=1)
