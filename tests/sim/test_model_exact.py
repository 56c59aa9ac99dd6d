"""The engine in isolation: two servers, three queries and a known pause, every latency by hand.

The model is handed its environment, streams and parts, so nothing here is random: deterministic
10 ms segments, 0.5 ms each way on the network, a 1 ms broker overhead (no per-server reduce cost),
one core per server (so one runner thread: one query at a time), one segment per server
(replication 1), and server S0 paused from 12 ms to 20 ms.

By hand (all in ms):

* q0 arrives at 0; both requests reach their servers at 0.5, run 0.5-10.5, answers are back at 11.0;
  reply at 11.0 + 1 = 12.0: latency 12.0.
* q1 arrives at 5; requests reach the servers at 5.5 and wait for the runner thread (free at 10.5):
  queue wait 5.0. On S1 it runs 10.5-20.5, back at 21.0. On S0 it runs 10.5-12, is frozen by the pause until 20,
  runs the last 8.5 ms until 28.5 and is back at 29.0 (GC-delayed); reply at 30.0: latency 25.0.
* q2 arrives at 30; both servers are free; runs 30.5-40.5, back at 41.0, reply at 42.0: latency 12.0.

With a crash of S1 from 35 to 50 ms, q2's request on S1 is lost at 35 (its answer would have come at
40.5). The broker sees the channel go inactive at 35.5 and stops waiting at once, as Pinot's broker
does: it replies at 36.5 (latency 6.5) with 425 for the failed channel and 427 for S0, which had not
answered yet.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import simpy

from workbench.scenario import load_scenario
from workbench.sim.gc import ServerHeap
from workbench.sim.layout import build_layout
from workbench.sim.model import ClusterModel, Window
from workbench.sim.pauses import PauseSchedule
from workbench.sim.plan import build_plan
from workbench.sim.run import build_cluster
from workbench.sim.streams import Streams

SCENARIO = load_scenario({
    "cluster": {"servers": 2, "server": {"cores": 1}, "network": {"latency_ms": 0.5},
                "broker": {"overhead_ms": 1.0, "reduce_ms_per_server": 0.0, "reduce_ms_per_row": 0.0}},
    "table": {"tableName": "t", "tableType": "OFFLINE", "segmentsConfig": {"replication": 1}},
    "workload": {"synthetic": {"segments_per_server": 1, "docs_per_segment": 100}},
    "service": {"model": "deterministic", "mean_ms": 10.0},
})


def run(crashes: PauseSchedule | None = None) -> ClusterModel:
    env = simpy.Environment()
    layout = build_layout(SCENARIO)
    assert [len(r) for r in layout.replicas] == [1, 1] and {r[0] for r in layout.replicas} == {0, 1}
    streams = Streams.spawn(np.random.SeedSequence(0), 2)
    plan = build_plan(SCENARIO, layout, streams, horizon_ms=100.0, at_ms=(0.0, 5.0, 30.0))
    heaps = (ServerHeap(PauseSchedule.from_intervals([(12.0, 20.0)]), 0.0, 0.0),
             ServerHeap(PauseSchedule.empty(), 0.0, 0.0))
    plan = dataclasses.replace(plan, heaps=heaps,
                               crashes=(PauseSchedule.empty(), crashes or PauseSchedule.empty()))
    model = ClusterModel(env, streams, build_cluster(SCENARIO, layout, env, streams, plan), plan, Window(0.0, 100.0))
    model.run()
    return model


def test_every_latency_wait_and_pause_flag_by_hand() -> None:
    r = run().records
    assert r.arrival_ms == [0.0, 5.0, 30.0]
    assert r.latency_ms == pytest.approx([12.0, 25.0, 12.0], abs=1e-12)
    assert r.queue_wait_ms == pytest.approx([0.0, 5.0, 0.0], abs=1e-12)
    assert r.gc_delayed == [False, True, False]
    assert r.partial == [False, False, False] and r.error_codes == ["", "", ""]
    assert r.servers_queried == [2, 2, 2] and r.segments_queried == [2, 2, 2]


def test_server_rows_by_hand() -> None:
    rows = {row["server"]: row for row in run().server_rows(0)}
    assert rows["Server_0"]["requests"] == rows["Server_1"]["requests"] == 3
    assert rows["Server_0"]["busy_ms"] == pytest.approx(30.0) and rows["Server_1"]["busy_ms"] == pytest.approx(30.0)
    assert rows["Server_0"]["paused_ms"] == pytest.approx(8.0) and rows["Server_1"]["paused_ms"] == 0.0
    assert rows["Server_0"]["utilisation"] == pytest.approx(30.0 / 100.0)


def test_a_crash_fails_the_channel_and_the_broker_replies_at_once() -> None:
    model = run(PauseSchedule.from_intervals([(35.0, 50.0)]))
    r = model.records
    assert r.latency_ms == pytest.approx([12.0, 25.0, 6.5], abs=1e-12)
    assert r.partial == [False, False, True] and r.error_codes == ["", "", "425,427"]
    failed = {row["server"]: row["failed_requests"] for row in model.server_rows(0)}
    assert failed == {"Server_0": 0, "Server_1": 1}
    assert model.failure_rows(0) == [{"replication": 0, "server": "Server_1", "down_s": 0.035, "up_s": 0.05}]
