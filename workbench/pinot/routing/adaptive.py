"""Adaptive Server Selection (ASS): Pinot's per-server routing stats and the selectors that use them.

The broker keeps, per server, the number of in-flight requests, an exponential moving average (EMA)
of that number and an EMA of response latency (``shared/reference/pinot-behaviour.md`` §3.6). An
adaptive selector scores every candidate server from those stats and sends each segment to the best
one, which steers load away from a server that is slow, for example in a GC pause.

Everything here runs on **simulated time in milliseconds passed in by the caller**; nothing reads the
wall clock, and randomness (the random pick for a server without stats, tie shuffling) comes from a
``numpy.random.Generator`` the caller supplies. Pinot applies stats updates on a thread pool; here
they apply synchronously, in call order.

Pinot's ``ServerRoutingStatsManagerTest`` hybrid vector (alpha 1, initial value 0, exponent 3):

>>> stats = ServerRoutingStatsManager(AdaptiveConfig(
...     AdaptiveSelectorType.HYBRID, ewma_alpha=1.0, autodecay_window_ms=0, avg_initialization_val=0.0))
>>> stats.record_submission("server1", now_ms=0.0); stats.record_submission("server1", now_ms=0.0)
>>> stats.record_response("server1", latency_ms=2.0, now_ms=2.0)
>>> stats.hybrid_score("server1")
54.0
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType
from typing import Any

import numpy as np

from workbench.errors import InputError

__all__ = [
    "ADAPTIVE_SCORERS", "AdaptiveConfig", "AdaptiveSelectorType", "AdaptiveServerSelector",
    "ExponentialMovingAverage", "ServerRoutingStats", "ServerRoutingStatsManager", "adaptive_server_selector",
    "ema_decay", "ema_feed", "hybrid_score", "rank_in_pools", "select_in_pools",
]

#: Prefix of the broker config keys (``CommonConstants.Broker.AdaptiveServerSelector``).
CONFIG_PREFIX = "pinot.broker.adaptive.server.selector"


class AdaptiveSelectorType(Enum):
    """``pinot.broker.adaptive.server.selector.type``: what the score of a server is."""

    NO_OP = "NO_OP"
    NUM_INFLIGHT_REQ = "NUM_INFLIGHT_REQ"
    LATENCY = "LATENCY"
    HYBRID = "HYBRID"


@dataclass(frozen=True)
class AdaptiveConfig:
    """Broker settings of Adaptive Server Selection, with Pinot's defaults.

    Parameters
    ----------
    type
        Which score to rank servers by; ``NO_OP`` turns adaptive selection off.
    enable_stats_collection
        Collect per-server stats (required by every type but ``NO_OP``); defaults to on when ``type``
        needs it, so notebooks need not repeat it.
    ewma_alpha
        Weight of a new value in both EMAs, in [0, 1].
    autodecay_window_ms
        Feed 0.0 into an EMA not updated for longer than this (ms); <= 0 disables decay.
    warmup_duration_ms
        Updates within this long (ms) of an EMA's creation are ignored.
    avg_initialization_val
        Starting value of every EMA (>= 0).
    hybrid_score_exponent, hybrid_score_queue_size_floor
        N and F in the hybrid score ``(F + inflight + inflightEMA)**N * latencyEMA``.
    enable_strict_replica_group
        ``.enable.strict.replica.group``: strictReplicaGroup tables pick one whole replica group per
        query, the one whose worst server ranks best (Pinot #18947); off, they route per segment like
        replicaGroup, which may mix replica groups within a query.
    """

    type: AdaptiveSelectorType = AdaptiveSelectorType.NO_OP
    enable_stats_collection: bool | None = None
    ewma_alpha: float = 0.666
    autodecay_window_ms: float = 10_000.0
    warmup_duration_ms: float = 0.0
    avg_initialization_val: float = 1.0
    hybrid_score_exponent: int = 3
    hybrid_score_queue_size_floor: int = 0
    enable_strict_replica_group: bool = False

    def __post_init__(self) -> None:
        if self.enable_stats_collection is None:
            object.__setattr__(self, "enable_stats_collection", self.type is not AdaptiveSelectorType.NO_OP)
        checks = (
            ("type", self.type is AdaptiveSelectorType.NO_OP or bool(self.enable_stats_collection),
             "adaptive server selection needs .enable.stats.collection=true"),
            ("ewma.alpha", 0.0 <= self.ewma_alpha <= 1.0, "Alpha should be between 0 and 1"),
            ("warmup.duration", self.warmup_duration_ms >= 0, "warmUpDurationMs is negative."),
            ("avg.initialization.val", self.avg_initialization_val >= 0, "avgInitializationVal is negative."),
            ("hybrid.score.queue.size.floor", self.hybrid_score_queue_size_floor >= 0, "must be >= 0"),
        )
        for key, ok, problem in checks:
            if not ok:
                raise InputError(f"{CONFIG_PREFIX}.{key}", problem)

    @classmethod
    def from_broker_config(cls, config: Mapping[str, Any]) -> AdaptiveConfig:
        """Read the ``pinot.broker.adaptive.server.selector.*`` keys of a broker config mapping.

        >>> AdaptiveConfig.from_broker_config({"pinot.broker.adaptive.server.selector.type": "hybrid",
        ...     "pinot.broker.adaptive.server.selector.enable.stats.collection": "true"}).type.name
        'HYBRID'
        """
        def get(key: str, default: Any, kind: Callable[[Any], Any]) -> Any:
            raw = config.get(f"{CONFIG_PREFIX}.{key}", default)
            try:
                return kind(raw)
            except (TypeError, ValueError):
                raise InputError(f"{CONFIG_PREFIX}.{key}", f"cannot parse {raw!r}") from None

        type_name = str(config.get(f"{CONFIG_PREFIX}.type", "NO_OP")).upper()
        if type_name not in AdaptiveSelectorType.__members__:
            raise InputError(f"{CONFIG_PREFIX}.type", f"Illegal adaptive server selector type: {type_name}; "
                                                      f"known: {list(AdaptiveSelectorType.__members__)}")
        return cls(AdaptiveSelectorType[type_name], get("enable.stats.collection", "false", _java_bool),
                   get("ewma.alpha", 0.666, float), get("autodecay.window.ms", 10_000, float),
                   get("warmup.duration", 0, float), get("avg.initialization.val", 1.0, float),
                   get("hybrid.score.exponent", 3, int), get("hybrid.score.queue.size.floor", 0, int),
                   get("enable.strict.replica.group", "false", _java_bool))


def _java_bool(raw: Any) -> bool:
    """Java's ``Boolean.parseBoolean``: true only for "true" in any case."""
    return raw if isinstance(raw, bool) else str(raw).strip().lower() == "true"


# -- the arithmetic, stated once: plain float and integer operations, so that the compiled engine compiles these
# very functions (:mod:`workbench.sim.decisions`) for its live router, and both engines' stats agree to the bit
def ema_decay(average: float, last_update: float, next_tick: int, created: float, window: float, warmup: float,
              alpha: float, now: float) -> tuple[float, float, int]:
    """Pinot's ``ExponentialMovingAverage`` auto-decay, applied lazily up to ``now``: ``(average, last update,
    next tick)`` after it.

    Pinot's timer ticks at ``created + k x window``; a tick feeds 0.0 when the last update (a decay counts)
    is more than ``window`` old, so after a decay the next one is exactly one window later (every other
    tick fires). Ticks inside the warm-up only move the last update. ``last_update`` is NaN before the
    first update (nothing decays then); ``window <= 0`` disables decay. Applying the due ticks whenever the
    average is read gives the timer's values, so an idle server costs nothing.
    """
    if window <= 0 or last_update != last_update:
        return average, last_update, next_tick
    k_now = math.floor((now - created) / window)
    first_due = math.floor((last_update + window - created) / window) + 1
    first = max(next_tick, first_due)
    next_tick = max(next_tick, k_now + 1)
    if k_now < first:
        return average, last_update, next_tick
    fired = (k_now - first) // 2 + 1  # ticks first, first + 2, ... up to k_now
    last_update = created + (first + 2 * (fired - 1)) * window
    stop = min(k_now + 1, math.ceil(warmup / window))
    times = fired - (0 if stop <= first else (stop - first + 1) // 2)
    for _ in range(min(times, 64)):  # stepwise while it matters for rounding, then in closed form
        average = 0.0 * alpha + average * (1 - alpha)
    if times > 64:
        average = average * (1 - alpha) ** (times - 64)
    return average, last_update, next_tick


def ema_feed(average: float, created: float, warmup: float, alpha: float, value: float, now: float) -> float:
    """The average after ``value`` is fed at ``now`` (decay applied first, :func:`ema_decay`): ``alpha x value
    + (1 - alpha) x average``, unchanged during the warm-up (Pinot only moves the last update then)."""
    if created + warmup <= now:
        return value * alpha + average * (1 - alpha)
    return average


def hybrid_score(floor: int, in_flight: int, in_flight_ema: float, latency_ema: float, exponent: int) -> float:
    """HYBRID score ``(floor + inFlight + EMA(inFlight))^exponent x EMA(latency)`` (lower is better); the
    floor is Pinot 1.5's ``hybrid.score.queue.size.floor`` (#18288), 0 by default."""
    queue = float(floor + in_flight)
    queue += in_flight_ema
    return math.pow(queue, exponent) * latency_ema


class ExponentialMovingAverage:
    """Pinot's ``ExponentialMovingAverage`` on simulated time (ms).

    ``avg = alpha * value + (1 - alpha) * avg``. Updates within ``warmup_ms`` of creation only touch
    the last-update time. Auto-decay runs as Pinot's timer does: ticks at ``created + k * window``;
    a tick feeds 0.0 when the last update (a decay counts) is more than ``window`` old. The ticks are
    applied lazily, whenever the average is read or updated at a later time, so idle servers cost
    nothing.

    >>> ema = ExponentialMovingAverage(0.5, autodecay_window_ms=0, initial=0.0)
    >>> [ema.compute(v, now_ms=0.0) for v in (0.1, 0.5, 1.25)]
    [0.05, 0.275, 0.7625]
    >>> decaying = ExponentialMovingAverage(0.5, autodecay_window_ms=100, initial=0.0)
    >>> decaying.compute(8.0, now_ms=0.0), decaying.average(now_ms=150), decaying.average(now_ms=250)
    (4.0, 4.0, 2.0)
    >>> decaying.average(now_ms=350), decaying.average(now_ms=450)  # a decay restarts the window
    (2.0, 1.0)
    """

    __slots__ = ("_average", "_last_update_ms", "_next_tick", "alpha", "autodecay_window_ms", "created_ms",
                 "warmup_ms")

    def __init__(self, alpha: float, autodecay_window_ms: float = 10_000.0, warmup_ms: float = 0.0,
                 initial: float = 1.0, created_ms: float = 0.0) -> None:
        self.alpha = alpha
        self.autodecay_window_ms = autodecay_window_ms
        self.warmup_ms = warmup_ms
        self.created_ms = created_ms
        self._average = initial
        self._last_update_ms = math.nan  # no update yet
        self._next_tick = 0

    def average(self, now_ms: float | None = None) -> float:
        """The average, after applying any auto-decay due by ``now_ms`` (if given)."""
        if now_ms is not None:
            self._decay_until(now_ms)
        return self._average

    def compute(self, value: float, now_ms: float) -> float:
        """Feed ``value`` at ``now_ms`` (ignored during warm-up) and return the new average."""
        self._decay_until(now_ms)
        self._last_update_ms = now_ms
        self._average = ema_feed(self._average, self.created_ms, self.warmup_ms, self.alpha, value, now_ms)
        return self._average

    def _decay_until(self, now_ms: float) -> None:
        self._average, self._last_update_ms, self._next_tick = ema_decay(
            self._average, self._last_update_ms, self._next_tick, self.created_ms, self.autodecay_window_ms,
            self.warmup_ms, self.alpha, now_ms)


@dataclass(slots=True)
class ServerRoutingStats:
    """``ServerRoutingStatsEntry``: in-flight count and the two EMAs of one server."""

    num_in_flight: int
    in_flight_ema: ExponentialMovingAverage
    latency_ema: ExponentialMovingAverage


class ServerRoutingStatsManager:
    """Per-server routing stats, updated by the hooks a broker model calls.

    Call :meth:`record_submission` when a request is sent to a server, :meth:`record_response` when
    its response (or timeout) comes back, and :meth:`advance` as simulated time passes. Times are in
    milliseconds and must not go backwards. Entries are created on first use and never removed.
    """

    def __init__(self, config: AdaptiveConfig) -> None:
        self.config = config
        self.now_ms = 0.0
        self._entries: dict[str, ServerRoutingStats] = {}

    @property
    def enabled(self) -> bool:
        """Whether stats are collected (hooks are no-ops otherwise, as in Pinot)."""
        return bool(self.config.enable_stats_collection)

    def advance(self, now_ms: float) -> None:
        """Move the manager's clock to ``now_ms``; scores read afterwards include due auto-decay."""
        if now_ms < self.now_ms:
            raise ValueError(f"time went backwards: {now_ms} ms < {self.now_ms} ms")
        self.now_ms = now_ms

    def record_submission(self, server: str, now_ms: float) -> None:
        """A request was sent: in-flight + 1, then the in-flight EMA takes the new count."""
        if self.enabled:
            self.advance(now_ms)
            entry = self._entry(server)
            entry.num_in_flight += 1
            entry.in_flight_ema.compute(entry.num_in_flight, now_ms)

    def record_response(self, server: str, latency_ms: float, now_ms: float) -> None:
        """A response arrived (pass the query timeout as ``latency_ms`` for a timeout or server error;
        a negative latency, as the multi-stage engine records, only lowers the in-flight count)."""
        if self.enabled:
            self.advance(now_ms)
            entry = self._entry(server)
            entry.num_in_flight -= 1
            if latency_ms >= 0:
                entry.latency_ema.compute(latency_ms, now_ms)

    def stats(self, server: str) -> ServerRoutingStats | None:
        """The server's entry, or ``None`` if no request has been recorded for it."""
        return self._entries.get(server)

    def _entry(self, server: str) -> ServerRoutingStats:
        entry = self._entries.get(server)
        if entry is None:
            entry = ServerRoutingStats(0, self._new_ema(), self._new_ema())
            self._entries[server] = entry
        return entry

    def _new_ema(self) -> ExponentialMovingAverage:
        c = self.config
        return ExponentialMovingAverage(c.ewma_alpha, c.autodecay_window_ms, c.warmup_duration_ms,
                                        c.avg_initialization_val, self.now_ms)

    def num_in_flight(self, server: str) -> float | None:
        """NUM_INFLIGHT_REQ score: the in-flight count (``None`` without stats)."""
        entry = self._entries.get(server)
        return None if entry is None else float(entry.num_in_flight)

    def latency_score(self, server: str) -> float | None:
        """LATENCY score: the latency EMA in ms (``None`` without stats)."""
        entry = self._entries.get(server)
        return None if entry is None else entry.latency_ema.average(self.now_ms)

    def hybrid_score(self, server: str) -> float | None:
        """HYBRID score ``(F + inflight + inflightEMA)**N * latencyEMA`` (``None`` without stats)."""
        entry = self._entries.get(server)
        if entry is None:
            return None
        c = self.config
        in_flight_ema = entry.in_flight_ema.average(self.now_ms)
        return float(hybrid_score(c.hybrid_score_queue_size_floor, entry.num_in_flight, in_flight_ema,
                                   entry.latency_ema.average(self.now_ms), c.hybrid_score_exponent))


Scorer = Callable[[ServerRoutingStatsManager, str], float | None]

#: Score of a server per selector type; lower is better, ``None`` means "no stats yet".
ADAPTIVE_SCORERS: Mapping[AdaptiveSelectorType, Scorer] = MappingProxyType({
    AdaptiveSelectorType.NUM_INFLIGHT_REQ: ServerRoutingStatsManager.num_in_flight,
    AdaptiveSelectorType.LATENCY: ServerRoutingStatsManager.latency_score,
    AdaptiveSelectorType.HYBRID: ServerRoutingStatsManager.hybrid_score,
})


class AdaptiveServerSelector:
    """Picks or ranks servers by score, as Pinot's NumInFlightReq/Latency/Hybrid selectors do.

    Parameters
    ----------
    stats
        The stats the broker model keeps up to date through the hooks.
    kind
        Which score to use (any type but ``NO_OP``).
    rng
        Source of the random pick (a server without stats) and of the tie-breaking shuffle.
    strict_replica_group
        Route strictReplicaGroup tables to one whole replica group (``AdaptiveConfig.enable_strict_replica_group``).
    """

    def __init__(self, stats: ServerRoutingStatsManager, kind: AdaptiveSelectorType,
                 rng: np.random.Generator, strict_replica_group: bool = False) -> None:
        if kind not in ADAPTIVE_SCORERS:
            raise InputError(f"{CONFIG_PREFIX}.type", f"{kind.name} does not select servers")
        self.stats = stats
        self.kind = kind
        self.rng = rng
        self.strict_replica_group = strict_replica_group
        self._scorer = ADAPTIVE_SCORERS[kind]

    def score(self, server: str) -> float | None:
        """The server's current score (lower is better), ``None`` without stats."""
        return self._scorer(self.stats, server)

    def select(self, servers: Sequence[str], cache: dict[str, float | None] | None = None) -> int:
        """Index of the server to use: the first strict minimum, or a uniformly random index as soon
        as a server without stats is met (so a new server gets traffic and stats).

        ``cache`` (server -> score) may be shared across the segments of one query: stats only change
        through the hooks, so scores are fixed while a query is routed and need computing once.
        """
        best, best_score = 0, math.inf
        for i, server in enumerate(servers):
            if cache is None:
                score = self._scorer(self.stats, server)
            elif server in cache:
                score = cache[server]
            else:
                score = cache[server] = self._scorer(self.stats, server)
            if score is None:
                return int(self.rng.integers(len(servers)))
            if score < best_score:
                best, best_score = i, score
        return best

    def rank(self, servers: Sequence[str]) -> list[tuple[str, float]]:
        """Servers with scores, best first; no stats scores -1 (ranks first); ties in random order."""
        scored = [(s, -1.0 if (v := self._scorer(self.stats, s)) is None else v) for s in servers]
        shuffled = [scored[i] for i in self.rng.permutation(len(scored))]
        return sorted(shuffled, key=lambda pair: pair[1])


def adaptive_server_selector(config: AdaptiveConfig, stats: ServerRoutingStatsManager,
                             rng: np.random.Generator) -> AdaptiveServerSelector | None:
    """The selector a broker with ``config`` uses, or ``None`` for ``NO_OP`` (round-robin routing)."""
    if config.type is AdaptiveSelectorType.NO_OP:
        return None
    return AdaptiveServerSelector(stats, config.type, rng, config.enable_strict_replica_group)


def _pool_rank(pool: int, preferred: Sequence[int]) -> int:
    return preferred.index(pool) if pool in preferred else len(preferred)


def select_in_pools(selector: AdaptiveServerSelector, servers: Sequence[str], pools: Sequence[int],
                    preferred: Sequence[int] = (), cache: dict[str, float | None] | None = None) -> int:
    """``PriorityPoolInstanceSelector.select``: choose adaptively within the first preferred pool that
    has candidates (pools not listed come last, together). Returns an index into ``servers``."""
    if not preferred:
        return selector.select(servers, cache)
    best = min(_pool_rank(p, preferred) for p in pools)
    indexes = [i for i, p in enumerate(pools) if _pool_rank(p, preferred) == best]
    return indexes[selector.select([servers[i] for i in indexes], cache)]


def rank_in_pools(selector: AdaptiveServerSelector, servers: Sequence[str], pools: Sequence[int],
                  preferred: Sequence[int] = ()) -> list[str]:
    """``PriorityPoolInstanceSelector.rank``: the adaptive ranking, regrouped by preferred pool order
    (order kept within each group)."""
    ranked = [server for server, _score in selector.rank(servers)]
    if not preferred:
        return ranked
    pool_of = dict(zip(servers, pools, strict=True))
    return sorted(ranked, key=lambda s: _pool_rank(pool_of[s], preferred))
