"""``cluster.broker.off_path_ms``: broker CPU no reply waits for, which keeps the reducing core busy after the reply.

One server of one core holding one segment, deterministic work of 10 ms per query, no network latency, a broker
of one core with a 1 ms overhead and 15 ms off its path. By hand, per query in arrival order: its server starts it
at ``max(arrival, the previous one's server end)`` and ends 10 ms later (the gather closes then); the broker starts
its reduce at ``max(close, the previous reply + 15)`` and replies 1 ms later. So a query alone is answered in 11 ms,
and one that closes within 15 ms of the previous reply waits for the broker's off-path CPU. The test's own
recursion is that hand computation, run over the run's arrivals; both engines must give it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from workbench.scenario import load_scenario
from workbench.sim.run import simulate

QPS, WORK_MS, OVERHEAD_MS, OFF_PATH_MS = 20.0, 10.0, 1.0, 15.0


def scenario(off_path_ms: float) -> dict[str, Any]:
    return {
        "cluster": {"servers": 1, "server": {"cores": 1}, "network": {"latency_ms": 0},
                    "broker": {"overhead_ms": OVERHEAD_MS, "off_path_ms": off_path_ms, "reduce_ms_per_server": 0.0,
                               "reduce_ms_per_row": 0.0, "cores": 1}},
        "table": {"tableName": "t", "tableType": "OFFLINE", "segmentsConfig": {"replication": 1}},
        "workload": {"synthetic": {"segments_per_server": 1, "docs_per_segment": 100}, "arrival": {"qps": QPS}},
        "service": {"model": "deterministic", "mean_ms": WORK_MS},
        "simulation": {"duration_s": 60, "warmup_s": 0, "replications": 1, "seed": 5},
    }


def by_hand(arrival_ms: np.ndarray, off_path_ms: float) -> np.ndarray:
    """Each query's latency by the recursion in the module's text."""
    out = np.empty(len(arrival_ms))
    server_free = slot_free = -np.inf
    for i, a in enumerate(arrival_ms):
        close = max(a, server_free) + WORK_MS
        server_free = close
        reply = max(close, slot_free) + OVERHEAD_MS
        slot_free = reply + off_path_ms
        out[i] = reply - a
    return out


@pytest.mark.parametrize("engine", ["simpy", "fast"])
def test_the_broker_core_stays_busy_after_the_reply_and_only_later_queries_wait(engine: str) -> None:
    sc = load_scenario(scenario(OFF_PATH_MS)).with_overrides({"simulation.engine": engine})
    q = simulate(sc).queries.sort_values("arrival_s", kind="stable")
    q = q[np.isfinite(q["latency_ms"])]
    expected = by_hand(q["arrival_s"].to_numpy() * 1000.0, OFF_PATH_MS)
    np.testing.assert_allclose(q["latency_ms"].to_numpy(), expected, rtol=0, atol=1e-6)
    # at 20/s some queries close within 15 ms of the previous reply and wait for it; a query alone takes 11 ms
    assert (expected > WORK_MS + OVERHEAD_MS + 1e-9).any() and np.isclose(q["latency_ms"].min(), 11.0)


def test_without_it_no_query_waits_for_the_broker() -> None:
    """The same run at 0 ms off the path: the broker's one core is free whenever a gather closes (each reduce is 1 ms
    and gathers close at least 10 ms apart), so every query's latency is its server wait + 10 + 1."""
    q = simulate(load_scenario(scenario(0.0))).queries.sort_values("arrival_s", kind="stable")
    q = q[np.isfinite(q["latency_ms"])]
    np.testing.assert_allclose(q["latency_ms"].to_numpy(), by_hand(q["arrival_s"].to_numpy() * 1000.0, 0.0),
                               rtol=0, atol=1e-6)
