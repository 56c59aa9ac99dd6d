"""The broker's failure detector as Pinot 1.5.1 has it (``org.apache.pinot.common.failuredetector``), on an
explicit clock.

Pinot's broker builds one from ``pinot.broker.failure.detector.type`` (``FailureDetectorFactory``):
``NO_OP`` (the default) detects nothing; ``CONNECTION`` (``ConnectionFailureDetector``, which adds nothing
to ``BaseExponentialBackoffRetryFailureDetector``) is told of a server by the request handler when a
query's gather ended with a *failed server*: a request that could not be sent or a channel that went
inactive (``SingleConnectionBrokerRequestHandler.processBrokerRequest`` calls ``markServerUnhealthy``).
A server that times out is not reported: a wedged server that keeps its connection is never detected
(Pinot issue #19452). ``CUSTOM`` loads a Java class, which a model cannot.

Marking a server unhealthy excludes it from routing (the notifier calls
``BrokerRoutingManager.excludeServerFromRouting``) and queues a retry ``retry.initial.delay.ms`` later.
A retry asks each registered retrier in turn (the broker's: is the server enabled in Helix and can a
connection be opened); the first ``UNHEALTHY`` answer stops the round, and the next retry comes after
the previous delay times ``retry.delay.factor``; when every retrier answers otherwise the server is
healthy again and routed to. A retry that finds ``max.retries`` retries already made marks the server
healthy without asking, "so that the listeners do not lose track of the server". With the defaults
(5 s, 2.0, 10) the retries come 5, 15, 35, 75 ... 5,115 s after the failure, and the server is let back
10,235 s after it if no retry succeeded.

Pinot's retry thread sleeps on a ``DelayQueue``; here :meth:`ExponentialBackoffRetryFailureDetector.run_retries`
runs every retry due by a time, in time order (ties in the order they were queued), so a discrete-event
model drives it at :attr:`~ExponentialBackoffRetryFailureDetector.next_retry_ms`.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Any

__all__ = [
    "CONFIG_OF_MAX_RETRIES",
    "CONFIG_OF_RETRY_DELAY_FACTOR",
    "CONFIG_OF_RETRY_INITIAL_DELAY_MS",
    "CONFIG_OF_TYPE",
    "ExponentialBackoffRetryFailureDetector",
    "FailureDetectorConfig",
    "FailureDetectorType",
    "ServerState",
]

#: ``CommonConstants.Broker.FailureDetector`` at release-1.5.1.
CONFIG_OF_TYPE = "pinot.broker.failure.detector.type"
CONFIG_OF_RETRY_INITIAL_DELAY_MS = "pinot.broker.failure.detector.retry.initial.delay.ms"
CONFIG_OF_RETRY_DELAY_FACTOR = "pinot.broker.failure.detector.retry.delay.factor"
CONFIG_OF_MAX_RETRIES = "pinot.broker.failure.detector.max.retries"
DEFAULT_RETRY_INITIAL_DELAY_MS = 5_000
DEFAULT_RETRY_DELAY_FACTOR = 2.0
DEFAULT_MAX_RETRIES = 10


class FailureDetectorType(StrEnum):
    """``FailureDetector.Type``."""

    NO_OP = "NO_OP"
    CONNECTION = "CONNECTION"
    CUSTOM = "CUSTOM"


class ServerState(Enum):
    """What a retrier says of a server (``FailureDetector.ServerState``)."""

    HEALTHY = "HEALTHY"
    UNHEALTHY = "UNHEALTHY"
    UNKNOWN = "UNKNOWN"


@dataclass(frozen=True)
class FailureDetectorConfig:
    """The broker's ``pinot.broker.failure.detector.*`` settings, with Pinot's defaults."""

    type: FailureDetectorType = FailureDetectorType.NO_OP
    retry_initial_delay_ms: int = DEFAULT_RETRY_INITIAL_DELAY_MS
    retry_delay_factor: float = DEFAULT_RETRY_DELAY_FACTOR
    max_retries: int = DEFAULT_MAX_RETRIES

    @property
    def enabled(self) -> bool:
        """Whether it detects anything (``NO_OP`` does not)."""
        return self.type is not FailureDetectorType.NO_OP

    @classmethod
    def from_properties(cls, config: Mapping[str, Any]) -> FailureDetectorConfig:
        """From broker properties; a bad value raises ``ValueError("<key>: <problem>")``. The type is read
        case-insensitively, as ``FailureDetectorFactory`` upper-cases it."""
        raw = str(config.get(CONFIG_OF_TYPE, FailureDetectorType.NO_OP.value))
        try:
            kind = FailureDetectorType(raw.upper())
        except ValueError:
            raise ValueError(f"{CONFIG_OF_TYPE}: Illegal failure detector type: {raw} (NO_OP or CONNECTION)") from None
        if kind is FailureDetectorType.CUSTOM:
            raise ValueError(f"{CONFIG_OF_TYPE}: CUSTOM loads a Java class (pinot.broker.failure.detector.class), "
                             "which the model cannot run; use NO_OP or CONNECTION")
        delay = _number(config, CONFIG_OF_RETRY_INITIAL_DELAY_MS, DEFAULT_RETRY_INITIAL_DELAY_MS, integer=True)
        factor = _number(config, CONFIG_OF_RETRY_DELAY_FACTOR, DEFAULT_RETRY_DELAY_FACTOR, integer=False)
        retries = _number(config, CONFIG_OF_MAX_RETRIES, DEFAULT_MAX_RETRIES, integer=True)
        if delay < 0:
            raise ValueError(f"{CONFIG_OF_RETRY_INITIAL_DELAY_MS}: must be >= 0, got {delay}")
        if factor <= 0:
            raise ValueError(f"{CONFIG_OF_RETRY_DELAY_FACTOR}: must be > 0, got {factor}")
        if retries < 0:
            raise ValueError(f"{CONFIG_OF_MAX_RETRIES}: must be >= 0, got {retries}")
        return cls(kind, int(delay), float(factor), int(retries))


def _number(config: Mapping[str, Any], key: str, default: float, *, integer: bool) -> float:
    value = config.get(key, default)
    try:
        number = int(str(value)) if integer else float(str(value))
    except ValueError:
        raise ValueError(f"{key}: must be {'an integer' if integer else 'a number'}, got {value!r}") from None
    if not math.isfinite(number):
        raise ValueError(f"{key}: must be finite, got {value!r}")
    return number


@dataclass
class _RetryInfo:
    instance: str
    retry_ms: float
    delay_ms: float
    retries: int = 0


class ExponentialBackoffRetryFailureDetector:
    """``BaseExponentialBackoffRetryFailureDetector`` (and so ``ConnectionFailureDetector``), driven by the
    caller's clock: ``on_healthy`` / ``on_unhealthy`` are Pinot's notifiers (routing's include and exclude)."""

    def __init__(self, config: FailureDetectorConfig, on_healthy: Callable[[str], None],
                 on_unhealthy: Callable[[str], None]) -> None:
        self.config = config
        self._on_healthy, self._on_unhealthy = on_healthy, on_unhealthy
        self._retriers: list[Callable[[str], ServerState]] = []
        self._unhealthy: dict[str, _RetryInfo] = {}
        self._queue: list[tuple[float, int, _RetryInfo]] = []
        self._seq = 0

    def register_unhealthy_server_retrier(self, retrier: Callable[[str], ServerState]) -> None:
        """A function asked at each retry whether the server is healthy again."""
        self._retriers.append(retrier)

    @property
    def unhealthy_servers(self) -> frozenset[str]:
        """``getUnhealthyServers``."""
        return frozenset(self._unhealthy)

    @property
    def next_retry_ms(self) -> float:
        """When the next queued retry is due (``inf`` when none is)."""
        return self._queue[0][0] if self._queue else math.inf

    def mark_server_unhealthy(self, instance: str, now: float) -> None:
        """A failed server (once: a server already unhealthy is left as it is, its retries unchanged)."""
        if instance in self._unhealthy:
            return
        info = _RetryInfo(instance, now + self.config.retry_initial_delay_ms, float(self.config.retry_initial_delay_ms))
        self._unhealthy[instance] = info
        self._on_unhealthy(instance)
        self._push(info)

    def mark_server_healthy(self, instance: str) -> None:
        """The server is routed to again (a no-op for a server not unhealthy); its queued retry is skipped."""
        if self._unhealthy.pop(instance, None) is not None:
            self._on_healthy(instance)

    def run_retries(self, until: float) -> None:
        """Every retry due at or before ``until``, in time order, each at its own time."""
        while self._queue and self._queue[0][0] <= until:
            at, _, info = heapq.heappop(self._queue)
            if self._unhealthy.get(info.instance) is not info:
                continue  # marked healthy meanwhile: Pinot skips the retry
            if info.retries == self.config.max_retries:
                self.mark_server_healthy(info.instance)
                continue
            recovered = all(retrier(info.instance) is not ServerState.UNHEALTHY for retrier in self._retriers)
            if recovered:
                self.mark_server_healthy(info.instance)
            else:
                info.delay_ms = info.delay_ms * self.config.retry_delay_factor
                info.retry_ms = at + info.delay_ms
                info.retries += 1
                self._push(info)

    def _push(self, info: _RetryInfo) -> None:
        heapq.heappush(self._queue, (info.retry_ms, self._seq, info))
        self._seq += 1
