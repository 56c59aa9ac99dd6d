"""Pinot's ``ConnectionFailureDetectorTest`` (pinot-common, release-1.5.1), translated to the explicit clock.

Pinot's tests wait on wall time (``TestUtils.waitForCondition``, 5 s) for a retry thread; here the clock
is advanced instead, which lets each assertion hold at an exact time. The set-up is Pinot's: type
CONNECTION, initial delay 100 ms, delay factor 1, the default 10 retries.
"""

from __future__ import annotations

import pytest

from workbench.pinot.failure_detector import (
    CONFIG_OF_MAX_RETRIES,
    CONFIG_OF_RETRY_DELAY_FACTOR,
    CONFIG_OF_RETRY_INITIAL_DELAY_MS,
    CONFIG_OF_TYPE,
    DEFAULT_MAX_RETRIES,
    ExponentialBackoffRetryFailureDetector,
    FailureDetectorConfig,
    FailureDetectorType,
    ServerState,
)

INSTANCE_ID = "Server_localhost_1234"


class _Retrier:
    """``UnhealthyServerRetrier``: UNHEALTHY for the first ``failures`` calls, HEALTHY after."""

    def __init__(self, failures: int) -> None:
        self.failures, self.called = failures, 0

    def __call__(self, instance: str) -> ServerState:
        assert instance == INSTANCE_ID
        self.called += 1
        return ServerState.HEALTHY if self.called > self.failures else ServerState.UNHEALTHY


class _Setup:
    def __init__(self) -> None:
        config = FailureDetectorConfig.from_properties({CONFIG_OF_TYPE: "CONNECTION",
                                                        CONFIG_OF_RETRY_INITIAL_DELAY_MS: 100,
                                                        CONFIG_OF_RETRY_DELAY_FACTOR: 1})
        assert config.type is FailureDetectorType.CONNECTION
        self.healthy_calls = self.unhealthy_calls = 0
        self.detector = ExponentialBackoffRetryFailureDetector(config, self._healthy, self._unhealthy)

    def _healthy(self, instance: str) -> None:
        assert instance == INSTANCE_ID
        self.healthy_calls += 1

    def _unhealthy(self, instance: str) -> None:
        assert instance == INSTANCE_ID
        self.unhealthy_calls += 1

    def verify(self, unhealthy: set[str], unhealthy_calls: int, healthy_calls: int) -> None:
        assert self.detector.unhealthy_servers == unhealthy
        assert (self.unhealthy_calls, self.healthy_calls) == (unhealthy_calls, healthy_calls)


def test_connection_failure() -> None:
    s = _Setup()
    s.verify(set(), 0, 0)
    s.detector.mark_server_unhealthy(INSTANCE_ID, 0.0)
    s.verify({INSTANCE_ID}, 1, 0)
    s.detector.mark_server_unhealthy(INSTANCE_ID, 0.0)  # again: no effect
    s.verify({INSTANCE_ID}, 1, 0)
    s.detector.mark_server_healthy(INSTANCE_ID)
    s.verify(set(), 1, 1)


def test_retry_without_recovery() -> None:
    """10 retries (one every 100 ms), then the server is let back without an 11th."""
    s = _Setup()
    retrier = _Retrier(10)
    s.detector.register_unhealthy_server_retrier(retrier)
    s.detector.mark_server_unhealthy(INSTANCE_ID, 0.0)
    s.verify({INSTANCE_ID}, 1, 0)
    for k in range(1, DEFAULT_MAX_RETRIES + 1):
        s.detector.run_retries(100.0 * k)
        assert retrier.called == k
        s.verify({INSTANCE_ID}, 1, 0)
    s.detector.run_retries(100.0 * (DEFAULT_MAX_RETRIES + 1))
    assert retrier.called == DEFAULT_MAX_RETRIES
    s.verify(set(), 1, 1)


def test_retry_with_recovery() -> None:
    s = _Setup()
    retrier = _Retrier(6)
    s.detector.register_unhealthy_server_retrier(retrier)
    s.detector.mark_server_unhealthy(INSTANCE_ID, 0.0)
    s.detector.run_retries(650.0)
    assert retrier.called == 6
    s.verify({INSTANCE_ID}, 1, 0)
    s.detector.run_retries(700.0)
    assert retrier.called == 7
    s.verify(set(), 1, 1)
    s.detector.run_retries(10_000.0)  # no further retries
    assert retrier.called == 7


def test_retry_with_multiple_unhealthy_server_retriers() -> None:
    """The second retrier is asked only once the first says HEALTHY: 5 + 2 failures, 8 retries; a
    retrier that does not know the server (UNKNOWN) does not hold it back."""
    s = _Setup()
    first, second = _Retrier(5), _Retrier(2)
    s.detector.register_unhealthy_server_retrier(first)
    s.detector.register_unhealthy_server_retrier(second)
    s.detector.register_unhealthy_server_retrier(lambda instance: ServerState.UNKNOWN)
    s.detector.mark_server_unhealthy(INSTANCE_ID, 0.0)
    s.detector.run_retries(750.0)
    assert (first.called, second.called) == (7, 2)
    s.verify({INSTANCE_ID}, 1, 0)
    s.detector.run_retries(10_000.0)
    assert (first.called, second.called) == (8, 3)
    s.verify(set(), 1, 1)


def test_default_back_off_doubles_from_five_seconds() -> None:
    """Pinot's defaults (5 s, x2, 10 retries): retries 5, 15, 35 ... 5,115 s after the failure (5 s x
    (2^(k+1) - 1)), and the server let back at 10,235 s without an 11th retry."""
    times: list[float] = []
    clock = [0.0]

    def never(instance: str) -> ServerState:
        times.append(clock[0])
        return ServerState.UNHEALTHY

    detector = ExponentialBackoffRetryFailureDetector(FailureDetectorConfig.from_properties(
        {CONFIG_OF_TYPE: "connection"}), lambda i: None, lambda i: None)
    detector.register_unhealthy_server_retrier(never)
    detector.mark_server_unhealthy("Server_0", 1_000.0)
    while detector.next_retry_ms < float("inf"):
        clock[0] = detector.next_retry_ms
        detector.run_retries(clock[0])
    assert times == [1_000.0 + 5_000.0 * (2 ** (k + 1) - 1) for k in range(10)]
    assert clock[0] == 1_000.0 + 5_000.0 * (2 ** 11 - 1)
    assert detector.unhealthy_servers == frozenset()


def test_config_defaults_and_bad_values_name_the_key() -> None:
    config = FailureDetectorConfig.from_properties({})
    assert (config.type, config.retry_initial_delay_ms, config.retry_delay_factor, config.max_retries) == \
        (FailureDetectorType.NO_OP, 5000, 2.0, 10)
    assert not config.enabled
    for props, key in [({CONFIG_OF_TYPE: "HEARTBEAT"}, CONFIG_OF_TYPE), ({CONFIG_OF_TYPE: "CUSTOM"}, CONFIG_OF_TYPE),
                       ({CONFIG_OF_MAX_RETRIES: "x"}, CONFIG_OF_MAX_RETRIES),
                       ({CONFIG_OF_RETRY_DELAY_FACTOR: 0}, CONFIG_OF_RETRY_DELAY_FACTOR)]:
        with pytest.raises(ValueError, match=f"^{key}: "):
            FailureDetectorConfig.from_properties(props)


def test_the_scenario_reads_the_detector_with_pinots_names_and_refuses_what_it_cannot_run() -> None:
    """NO_OP (Pinot's default) and CONNECTION load with Pinot's keys and defaults; CUSTOM (a Java class) and a
    type Pinot does not have are refused with one error naming the key, not ignored."""
    from workbench.errors import ScenarioError
    from workbench.scenario import load_scenario

    sc = load_scenario({"cluster": {"broker": {"config": {CONFIG_OF_TYPE: "no_op"}}}})
    assert sc.cluster.broker.failure_detector == FailureDetectorConfig()
    sc = load_scenario({"cluster": {"broker": {"config": {CONFIG_OF_TYPE: "connection"}}}})
    assert sc.cluster.broker.failure_detector == FailureDetectorConfig(FailureDetectorType.CONNECTION, 5000, 2.0, 10)
    for props in ({CONFIG_OF_TYPE: "CUSTOM"}, {CONFIG_OF_TYPE: "bogus"}):
        with pytest.raises(ScenarioError) as err:
            load_scenario({"cluster": {"broker": {"config": props}}})
        assert err.value.where == f"cluster.broker.config.{CONFIG_OF_TYPE}"
