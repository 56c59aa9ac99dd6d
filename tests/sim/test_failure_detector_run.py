"""The broker's failure detector in a run (``pinot.broker.failure.detector.type: CONNECTION``), by hand.

Two servers, one segment on both (replication 2, balanced): Pinot's selector sends request id ``r`` to
candidate ``r % 2``, so query ``q`` (the only broker's ``q``-th) goes to Server_0 when ``q`` is even and to
Server_1 when odd, unless Server_1 is not routable. Deterministic 10 ms segments, 0.5 ms each way.

Server_1 crashes at 35 ms while it holds q1 (arrived at 30): the channel fails, the broker sees it at
35.5 ms and its detector marks Server_1 unhealthy then (Pinot 1.5.1's ``SingleConnectionBrokerRequestHandler``
reports the gather's failed server). Routing also loses Server_1 while it is down (Helix). With the
retries 20 ms apart at first (``retry.initial.delay.ms: 20``, factor 2): the first retry is at 55.5 ms;
if Server_1 is up then, it is routed again; if not, the next retry is 40 ms later, at 95.5 ms.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
import simpy

from workbench.errors import ScenarioError
from workbench.scenario import load_scenario
from workbench.sim.fast.engine import coverage
from workbench.sim.layout import build_layout
from workbench.sim.model import ClusterModel, Window
from workbench.sim.pauses import PauseSchedule
from workbench.sim.plan import build_plan
from workbench.sim.run import build_cluster, simulate
from workbench.sim.streams import Streams

CONNECTION = {"pinot.broker.failure.detector.type": "CONNECTION",
              "pinot.broker.failure.detector.retry.initial.delay.ms": 20}


def spec(config: dict[str, Any]) -> dict[str, Any]:
    return {
        "cluster": {"servers": 2, "server": {"cores": 1}, "network": {"latency_ms": 0.5},
                    "broker": {"overhead_ms": 1.0, "reduce_ms_per_server": 0.0, "reduce_ms_per_row": 0.0,
                               "config": config}},
        "table": {"tableName": "t", "tableType": "OFFLINE", "segmentsConfig": {"replication": 2}},
        "workload": {"synthetic": {"segments_per_server": 1, "docs_per_segment": 100}},
        "service": {"model": "deterministic", "mean_ms": 10.0},
    }


def server_1_requests(config: dict[str, Any], at_ms: tuple[float, ...], crash: tuple[float, float]) -> int:
    """Requests Server_1 received when it crashes over ``crash`` (ms) and queries arrive at ``at_ms``."""
    sc = load_scenario(spec(config))
    layout = build_layout(sc)
    assert layout.replicas == ((0, 1),)
    env = simpy.Environment()
    streams = Streams.spawn(np.random.SeedSequence(0), 2)
    plan = build_plan(sc, layout, streams, horizon_ms=200.0, at_ms=at_ms)
    plan = dataclasses.replace(plan, crashes=(PauseSchedule.empty(), PauseSchedule.from_intervals([crash])))
    model = ClusterModel(env, streams, build_cluster(sc, layout, env, streams, plan), plan, Window(0.0, 200.0))
    model.run()
    # q1 lost in the crash: a failed channel (425), and no data table from that server (427)
    assert model.records.error_codes[1] == "425,427"
    return int(model.server_rows(0)[1]["requests"])


def test_a_failed_server_is_excluded_until_the_first_retry_finds_it_up() -> None:
    # q0 0 -> S0; q1 30 -> S1 (fails at 35); q2 40 (S1 down) -> S0; q3 52 (S1 up at 50, but excluded until the
    # retry at 55.5) -> S0; q4 54 -> S0; q5 57 -> S1 again. Without the detector q3 goes to S1.
    at = (0.0, 30.0, 40.0, 52.0, 54.0, 57.0)
    assert server_1_requests(CONNECTION, at, (35.0, 50.0)) == 2
    assert server_1_requests({}, at, (35.0, 50.0)) == 3


def test_a_retry_that_cannot_connect_doubles_the_delay() -> None:
    # S1 down 35-70: the retry at 55.5 fails, the next is 40 ms later (95.5). q3 72 and q5 90 (odd, S1 up) stay
    # on S0; q7 100 reaches S1. Without the detector q3, q5 and q7 do.
    at = (0.0, 30.0, 40.0, 72.0, 80.0, 90.0, 94.0, 100.0)
    assert server_1_requests(CONNECTION, at, (35.0, 70.0)) == 2
    assert server_1_requests({}, at, (35.0, 70.0)) == 4


def test_a_wedged_server_is_never_detected() -> None:
    """A wedge keeps the connection open: its queries time out (427), which is not a connection failure, so
    the detector changes nothing: the records are those of a run without it (deterministic draws)."""
    base = spec({})
    base["cluster"]["failures"] = {"wedged": [{"server": "Server_1", "from_s": 0.5, "until_s": 1.5}]}
    base["cluster"]["broker"]["timeout_ms"] = 50
    base["simulation"] = {"duration_s": 2, "warmup_s": 0, "replications": 1}
    base["workload"]["arrival"] = {"qps": 40}
    off = simulate(load_scenario(base))
    base["cluster"]["broker"]["config"] = CONNECTION
    on = simulate(load_scenario(base))
    assert on.parameters["engine"] == off.parameters["engine"] == "fast"
    assert (off.queries["error_codes"] == "427").sum() > 5
    np.testing.assert_array_equal(off.queries["latency_ms"], on.queries["latency_ms"])
    assert list(off.queries["error_codes"]) == list(on.queries["error_codes"])


def test_the_compiled_engine_runs_it_alone_and_with_adaptive_selection() -> None:
    """Its records against the SimPy engine's: ``tests/validation/test_engines.py``."""
    assert coverage(load_scenario(spec(CONNECTION))) is None
    both = {**CONNECTION, "pinot.broker.adaptive.server.selector.type": "HYBRID",
            "pinot.broker.adaptive.server.selector.enable.stats.collection": True}
    assert coverage(load_scenario(spec(both))) is None


def test_a_detector_pinot_does_not_have_is_one_error_naming_the_key() -> None:
    with pytest.raises(ScenarioError, match=r"pinot\.broker\.failure\.detector\.type"):
        load_scenario(spec({"pinot.broker.failure.detector.type": "HEARTBEAT"}))
