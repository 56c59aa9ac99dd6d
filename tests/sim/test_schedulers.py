"""Pinot's schedulers and server settings, on small servers whose behaviour follows from PE §1 by hand."""

from __future__ import annotations

from typing import Any

import pytest

from workbench.errors import ScenarioError
from workbench.pinot.execution_config import ServerQueryConfig
from workbench.scenario import load_scenario
from workbench.sim.pauses import PauseSchedule
from workbench.sim.server import PinotServer, Request, Response

S = "pinot.query.scheduler."


def server(props: dict[str, Any], cores: int = 8) -> PinotServer:
    config = ServerQueryConfig.from_properties(props, cores=cores)
    return PinotServer("S", config, PauseSchedule.empty(), PauseSchedule.empty(), trace=[])


def submit_all(s: PinotServer, requests: list[Request]) -> list[Response]:
    out: list[Response] = []
    for r in requests:
        s.advance(r.arrival, out)
        s.submit(r, out)
    return out


def started(s: PinotServer) -> list[int]:
    return [rid for _, event, rid in s.trace or [] if event == "runner_start"]


def test_bounded_fcfs_reserves_worker_threads_up_to_the_hard_limit_then_rejects_with_211() -> None:
    """c = 8: 16 workers, soft 4, hard 7, 3 threads per query. Queries of 12 segments reserve 3, 3, then
    the 1 thread the hard limit leaves; with 7 reserved nothing else starts although runners are free,
    10 wait, and the next is rejected with 211 (pending >= 10 and reserved >= hard)."""
    s = server({f"{S}name": "bounded_fcfs"})
    out = submit_all(s, [Request(i, 0.0, 10_000.0, 0.0, 0.0, [5.0] * 12) for i in range(14)])
    assert started(s) == [0, 1, 2]
    assert [(r.rid, r.code) for r in out] == [(13, 211)]
    tasks = [sum(1 for _, e, rid in s.trace or [] if e.startswith("segment_start") and rid == q) for q in (0, 1, 2)]
    assert tasks == [3, 3, 1]  # each query's tasks are capped by its reservation


def test_fcfs_never_rejects_and_runs_as_many_queries_as_runner_threads() -> None:
    s = server({})
    out = submit_all(s, [Request(i, 0.0, 10_000.0, 0.0, 0.0, [5.0] * 12) for i in range(14)])
    assert out == [] and started(s) == list(range(8))


def test_bounded_queue_drops_requests_older_than_the_queue_deadline_without_an_answer() -> None:
    """One runner busy for 3 s; a request pending longer than query_deadline_seconds (1 s) is trimmed when
    the dispatcher next looks (at 3 s): it gets no response at all."""
    s = server({f"{S}name": "bounded_fcfs", f"{S}query_runner_threads": 1, f"{S}query_deadline_seconds": 1}, cores=2)
    out = submit_all(s, [Request(0, 0.0, 10_000.0, 0.0, 0.0, [3000.0]), Request(1, 10.0, 10_000.0, 0.0, 0.0, [1.0]),
                         Request(2, 2500.0, 10_000.0, 0.0, 0.0, [1.0])])
    s.advance(float("inf"), out)
    assert [r.rid for r in out] == [0, 2]
    assert ("expired", 1) in [(e, rid) for _, e, rid in s.trace or []]


def test_binary_workload_runs_at_most_five_secondary_queries_at_once() -> None:
    s = server({f"{S}name": "binary_workload"})
    secondary = [Request(i, 0.0, 10_000.0, 0.0, 0.0, [5.0], secondary=True) for i in range(7)]
    primary = [Request(10 + i, 0.0, 10_000.0, 0.0, 0.0, [5.0]) for i in range(3)]
    submit_all(s, secondary + primary)
    assert started(s) == [0, 1, 2, 3, 4, 10, 11, 12]  # 8 runners: 5 secondary, then the primaries


@pytest.mark.parametrize(("config", "where"), [
    ({f"{S}name": "fifo"}, f"config.{S}name: unknown scheduler 'fifo'"),
    ({f"{S}query_runner_threads": 0}, f"config.{S}query_runner_threads: must be at least 1"),
    ({f"{S}query_worker_threads": "many"}, f"config.{S}query_worker_threads: must be an integer"),
    ({"pinot.server.query.executor.timeout": "soon"}, "config.pinot.server.query.executor.timeout: must be a number"),
    ({"pinot.server.query.executor.max.execution.threads": 2.5},
     "config.pinot.server.query.executor.max.execution.threads: must be an integer"),
])
def test_bad_server_settings_are_one_error_naming_the_key(config: dict[str, Any], where: str) -> None:
    with pytest.raises(ScenarioError) as err:
        load_scenario({"cluster": {"server": {"config": config}}})
    assert str(err.value).startswith(f"cluster.server.{where}")


def test_the_old_task_cap_spelling_and_the_pinot_key_cannot_both_be_given() -> None:
    with pytest.raises(ScenarioError, match=r"^cluster\.server\.max_tasks_per_query: is the older spelling"):
        load_scenario({"cluster": {"server": {"max_tasks_per_query": 2, "config": {
            "pinot.server.query.executor.max.execution.threads": 4}}}})
    assert load_scenario({"cluster": {"server": {"max_tasks_per_query": 2}}}).cluster.server.query.tasks(9, False) == 2


def test_broker_timeout_precedence_and_conflicts() -> None:
    from workbench.pinot.execution_config import query_timeout_ms
    from workbench.pinot.options import QueryOptions

    broker = load_scenario({"cluster": {"broker": {"config": {"pinot.broker.timeoutMs": 3000}}}}).cluster.broker
    assert broker.query.timeout_ms == 3000.0
    assert query_timeout_ms(QueryOptions(), None, broker.query) == 3000.0
    assert query_timeout_ms(QueryOptions(), 800.0, broker.query) == 800.0  # the table's queryConfig.timeoutMs
    assert query_timeout_ms(QueryOptions.read({"timeoutMs": "250"}), 800.0, broker.query) == 250.0  # option wins
    with pytest.raises(ScenarioError, match=r"^cluster\.broker\.timeout_ms: is also set"):
        load_scenario({"cluster": {"broker": {"timeout_ms": 5, "config": {"pinot.broker.timeoutMs": 3000}}}})
    with pytest.raises(ScenarioError, match=r"^table\.queryConfig\.timeoutMs: must be a number"):
        load_scenario({"table": {"tableName": "t", "tableType": "OFFLINE", "queryConfig": {"timeoutMs": "x"}}})
