"""Degraded servers (``failures.slow``, ``failures.wedged``): bad input, and behaviour computed by hand.

A slow server's work takes ``factor`` times longer for requests reaching it inside its window (and, with
``scope: jvm``, the default, its GC pauses that start in the window and each such request's own delay); a wedged
server accepts requests and answers none until the query's timeout, when Pinot's broker returns the
partial result with SERVER_NOT_RESPONDING (427; ``SingleConnectionBrokerRequestHandler`` at 1.5.1: a
timed-out gather lists the servers without a data table as not responded, and no connection failed, so
the failure detector is not told).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from workbench.errors import ScenarioError
from workbench.pinot.routing.hashorder import hash_set_order
from workbench.scenario import load_scenario
from workbench.sim.layout import build_layout
from workbench.sim.run import simulate

TABLE = {"tableName": "t", "tableType": "OFFLINE", "segmentsConfig": {"replication": 2}}


def scenario(failures: dict[str, Any], *, servers: int = 4, qps: float = 5.0, engine: str = "auto",
             segments_per_server: int = 1, timeout_ms: float = 100.0, duration_s: float = 120) -> dict[str, Any]:
    return {
        "cluster": {"servers": servers, "server": {"cores": 1}, "network": {"latency_ms": 0.1},
                    "broker": {"timeout_ms": timeout_ms}, "failures": failures},
        "table": TABLE,
        "workload": {"synthetic": {"segments_per_server": segments_per_server, "docs_per_segment": 1000},
                     "arrival": {"qps": qps}},
        "service": {"model": "deterministic", "mean_ms": 2},
        "simulation": {"duration_s": duration_s, "warmup_s": 0, "replications": 1, "seed": 3, "engine": engine},
    }


@pytest.mark.parametrize(("failures", "key"), [
    ({"slow": [{"server": "Server_1", "factor": 0}]}, "cluster.failures.slow[0].factor"),
    ({"slow": [{"server": "Server_1", "factor": -2}]}, "cluster.failures.slow[0].factor"),
    ({"slow": [{"server": "Server_9", "factor": 2}]}, "cluster.failures.slow[0].server"),
    ({"wedged": [{"server": "Broker_0"}]}, "cluster.failures.wedged[0].server"),
    ({"slow": [{"server": "Server_1", "factor": 2, "until_s": 60},
               {"server": "Server_1", "factor": 3, "from_s": 59}]}, "cluster.failures.slow[1]"),
    ({"wedged": [{"server": "Server_2", "from_s": 10}, {"server": "Server_2", "from_s": 100, "until_s": 200}]},
     "cluster.failures.wedged[1]"),
    ({"wedged": [{"server": "Server_2", "from_s": 10, "until_s": 5}]}, "cluster.failures.wedged[0].until_s"),
    ({"slow": [{"server": "Server_1", "factor": 2, "scope": "disk"}]}, "cluster.failures.slow[0].scope"),
])
def test_bad_degraded_input_is_one_error_naming_the_key(failures: dict[str, Any], key: str) -> None:
    with pytest.raises(ScenarioError) as err:
        load_scenario(scenario(failures))
    assert err.value.where == key
    assert "\n" not in str(err.value)


def test_windows_of_one_server_may_touch_and_other_servers_may_overlap() -> None:
    sc = load_scenario(scenario({"slow": [{"server": "Server_1", "factor": 2, "until_s": 60},
                                          {"server": "Server_1", "factor": 3, "from_s": 60},
                                          {"server": "Server_2", "factor": 3, "from_s": 30}]}))
    assert [w.factor for w in sc.cluster.failures.slow] == [2.0, 3.0, 3.0]


@pytest.mark.parametrize("engine", ["simpy", "fast"])
def test_a_slow_server_adds_factor_minus_one_times_its_work_inside_its_window(engine: str) -> None:
    """One server, one 2 ms segment per query, no queueing for isolated queries: inside the window a
    query's latency grows by exactly (4 - 1) x 2 ms against the same seed without the slow server, and
    outside it not at all (arrivals draw nothing from the failure keys, so both runs see the same queries)."""
    window = {"from_s": 30, "until_s": 90}
    base = scenario({}, servers=1, engine=engine)
    base["table"] = {**TABLE, "segmentsConfig": {"replication": 1}}
    slow = {**base, "cluster": {**base["cluster"], "failures": {"slow": [{"server": "Server_0", "factor": 4,
                                                                         **window}]}}}
    diff, isolated, inside = _shift(base, slow, window)
    np.testing.assert_allclose(diff[isolated & inside], 3 * 2.0, rtol=1e-9)
    np.testing.assert_allclose(diff[isolated & ~inside], 0.0, atol=1e-9)


def _shift(base: dict[str, Any], slow: dict[str, Any], window: dict[str, float]
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each query's latency with the slow server less without (same seed, same queries), which queries met no
    other within 50 ms (isolated: no queueing), and which arrived inside the window (delivered 0.1 ms later); at
    least 100 isolated queries on each side of the window's edges."""
    a, b = simulate(base).queries, simulate(slow).queries
    assert list(a.query_id) == list(b.query_id)
    t = a.arrival_s.to_numpy()
    gaps = np.diff(t)
    isolated = np.concatenate(([True], gaps > 0.05)) & np.concatenate((gaps > 0.05, [True]))
    inside = (t + 0.1e-3 >= window["from_s"]) & (t + 0.1e-3 < window["until_s"])
    assert (isolated & inside).sum() > 100 and (isolated & ~inside).sum() > 100
    return b.latency_ms.to_numpy() - a.latency_ms.to_numpy(), isolated, inside


def _one_server(failures: dict[str, Any], **cluster: Any) -> dict[str, Any]:
    sc = scenario(failures, servers=1)
    sc["cluster"].update(cluster)
    sc["table"] = {**TABLE, "segmentsConfig": {"replication": 1}}
    return sc


@pytest.mark.parametrize(("scope", "slowed"), [("jvm", 4 * 50.0), ("work", 50.0)])
def test_a_slow_jvm_stretches_the_gc_pauses_that_start_in_its_window(scope: str, slowed: float) -> None:
    """Fixed GC, every 10 s of run a 50 ms pause: pause ``k`` starts at 10,000 + 10,050 k ms (10.0, 20.05,
    30.1, 40.15, 50.2, 60.25 s ...). The window [30.12 s, 50.3 s) holds the starts of 40.15 s and 50.2 s: with
    ``scope: jvm`` they last 4 x 50 ms (the second runs past the window's end, decided by its start); the pause
    of 30.1 s started before the window and keeps its 50 ms though it runs into it. Starts do not move (each
    stretched pause ends long before the next). ``scope: work`` leaves every pause as the collector drew it."""
    gc = {"collector": "fixed", "interval_s": 10, "pause_ms": 50}
    slow = {"slow": [{"server": "Server_0", "factor": 4, "from_s": 30.12, "until_s": 50.3, "scope": scope}]}
    pauses = simulate(_one_server(slow, gc=gc)).gc_pauses
    starts = [10.0 + 10.05 * k for k in range(11)]  # up to 110.5 s, before the 120 s horizon
    np.testing.assert_allclose(pauses.start_s, starts, rtol=1e-12)
    assert sum(30.12 <= t < 50.3 for t in starts) == 2
    expected = [slowed if 30.12 <= t < 50.3 else 50.0 for t in starts]
    np.testing.assert_allclose(pauses.duration_ms, expected, rtol=1e-12)


@pytest.mark.parametrize("engine", ["simpy", "fast"])
@pytest.mark.parametrize(("scope", "extra_ms"), [("jvm", (4 - 1) * (2.0 + 5.0)), ("work", (4 - 1) * 2.0)])
def test_a_slow_jvm_also_slows_each_requests_own_delay(engine: str, scope: str, extra_ms: float) -> None:
    """One server, 2 ms of work and a 5 ms request delay (``cluster.network.request_delay_ms``: Netty,
    (de)serialisation; no core) per query: inside a x4 window an isolated query takes (4 - 1) x (2 + 5) ms
    longer than with the same seed and no slow server when the whole JVM is slow, (4 - 1) x 2 ms when only the
    work is (the behaviour before ``scope``), and outside the window no longer at all."""
    window = {"from_s": 30, "until_s": 90}
    cluster = {"network": {"latency_ms": 0.1, "request_delay_ms": 5.0}}
    base = _one_server({}, **cluster)
    base["simulation"]["engine"] = engine
    slow = _one_server({"slow": [{"server": "Server_0", "factor": 4, "scope": scope, **window}]}, **cluster)
    slow["simulation"]["engine"] = engine
    diff, isolated, inside = _shift(base, slow, window)
    np.testing.assert_allclose(diff[isolated & inside], extra_ms, rtol=1e-9)
    np.testing.assert_allclose(diff[isolated & ~inside], 0.0, atol=1e-9)


def _routes_through(sc: Any, server: str, queries: int) -> np.ndarray:
    """Per query (one broker: its request id is its index): does Pinot's instance selector, over the
    scenario's ideal state, send it to ``server``? The routing alone, no simulation."""
    from workbench.pinot.routing.selectors import instance_selector_for
    from workbench.pinot.routing.state import routing_state_from_assignment

    layout = build_layout(sc)
    selector = instance_selector_for(sc.table, routing_state_from_assignment(layout.ideal_state))
    listed = hash_set_order(layout.segments, len(layout.segments))
    return np.array([server in selector.select(listed, q, {}).segment_to_server.values() for q in range(queries)])


@pytest.mark.parametrize("engine", ["simpy", "fast"])
def test_a_wedged_server_times_out_exactly_the_queries_routed_to_it(engine: str) -> None:
    """Balanced routing, replication 2, the failure detector off (NO_OP, Pinot's default): a server
    wedged all run answers nothing, so every query whose route includes it waits its whole timeout and is
    partial with 427 alone, and every other query is whole. The share is the routing's, computed above
    without the model; with one segment per server pair it is one query in two."""
    sc = load_scenario(scenario({"wedged": [{"server": "Server_1"}]}, engine=engine, qps=5.0))
    r = simulate(sc)
    q = r.queries
    routed = _routes_through(sc, "Server_1", int(q.query_id.max()) + 1)[q.query_id.to_numpy()]
    assert 0.3 < routed.mean() < 0.7  # the layout gives the case some queries each way
    assert list(q.partial) == list(routed)
    assert set(q.error_codes[routed]) == {"427"}
    assert set(q.error_codes[~routed]) == {""}
    # the broker gave up at the timeout: latency is 100 ms plus the reduce, never less
    assert (q.latency_ms[routed] >= 100.0).all() and (q.latency_ms[routed] < 102.0).all()
    assert (q.latency_ms[~routed] < 10.0).all()


def test_a_wedge_ends_and_the_server_answers_again() -> None:
    """Wedged from 40 s to 80 s only: queries routed to it time out only while the wedge lasts (and
    those its backlog held past their timeout right after it); the rest of the run is whole."""
    sc = load_scenario(scenario({"wedged": [{"server": "Server_1", "from_s": 40, "until_s": 80}]}))
    q = simulate(sc).queries
    t = q.arrival_s.to_numpy()
    routed = _routes_through(sc, "Server_1", int(q.query_id.max()) + 1)[q.query_id.to_numpy()]
    during = (t >= 40.0) & (t + 0.1e-3 < 80.0)
    assert list(q.partial[routed & during]) == [True] * int((routed & during).sum())
    assert not q.partial[(t < 40.0) | (t > 80.2)].any()
