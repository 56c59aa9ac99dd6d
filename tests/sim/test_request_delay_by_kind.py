"""``cluster.network.request_delay_by_kind_ms``: a kind of query's requests draw a delay of their own.

One server of one core holding one segment, the cost model at 1 ms per segment and nothing else (no documents, no
runner work, no merge), no network latency and a broker that costs nothing. Queries a second apart (each finds the
server idle), in turn a selection, an aggregation and a group-by. ``request_delay_ms`` is 3 ms; selections are
given 1 ms and group-bys 5 ms of their own; aggregations are given none and draw the 3 ms. By hand each query's
latency is its 1 ms of work plus its kind's delay: 2, 4 and 6 ms. Routed in advance (the plan) and routed live
(adaptive selection), in both engines.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import one_segment
import pytest
from parity import same

from workbench.errors import ScenarioError
from workbench.scenario import load_scenario
from workbench.sim.run import simulate

SQL = ("SELECT * FROM t LIMIT 5", "SELECT SUM(v) FROM t", "SELECT k, COUNT(*) FROM t GROUP BY k")
QUERIES = 30
ADAPTIVE = {"pinot.broker.adaptive.server.selector.type": "HYBRID",
            "pinot.broker.adaptive.server.selector.enable.stats.collection": True}


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return one_segment.write(tmp_path_factory.mktemp("kinds"), np.arange(QUERIES, dtype=float).tolist(),
                             [SQL[i % 3] for i in range(QUERIES)])


def raw(engine: str, pooled: Any = 3.0, by_kind: dict[str, Any] | None = None, live: bool = False) -> dict[str, Any]:
    network: dict[str, Any] = {"latency_ms": 0, "request_delay_ms": pooled}
    if by_kind is not None:
        network["request_delay_by_kind_ms"] = by_kind
    return {
        "cluster": {"servers": 1, "server": {"cores": 1}, "network": network,
                    "broker": {"overhead_ms": 0.0, "reduce_ms_per_server": 0.0, "reduce_ms_per_row": 0.0,
                               **({"config": ADAPTIVE} if live else {})}},
        "table": {"tableName": "t", "tableType": "OFFLINE",
                  "segmentsConfig": {"timeColumnName": "ts", "replication": 1}},
        "workload": {"arrival": {"process": "replay"}},
        "service": {"model": "cost", "per_request_ms": 0.0, "per_segment_ms": 1.0, "ns_per_doc": 0.0,
                    "merge_ms_per_segment": 0.0},
        "simulation": {"duration_s": QUERIES + 1, "warmup_s": 0, "replications": 1, "seed": 3, "engine": engine},
    }


def latencies(scenario: dict[str, Any], data: Path) -> np.ndarray:
    q = simulate(scenario, data=data).queries.sort_values("arrival_s")
    assert len(q) == QUERIES
    return q["latency_ms"].to_numpy()


@pytest.mark.parametrize("live", [False, True], ids=["planned", "live"])
@pytest.mark.parametrize("engine", ["simpy", "fast"])
def test_each_kind_waits_its_own_delay_and_a_kind_without_one_the_pooled(data: Path, engine: str,
                                                                          live: bool) -> None:
    got = latencies(raw(engine, by_kind={"selection": 1.0, "group_by": 5.0}, live=live), data)
    np.testing.assert_allclose(got, np.tile([1.0 + 1.0, 1.0 + 3.0, 1.0 + 5.0], QUERIES // 3), rtol=0, atol=1e-9)


@pytest.mark.parametrize("live", [False, True], ids=["planned", "live"])
def test_drawn_delays_by_kind_are_the_same_in_both_engines(data: Path, live: bool) -> None:
    """Exponential delays per kind (means 1, 2 and 4 ms; 3 ms for the rest): the two engines draw the same rows of
    delays from the same stream and give every query the same latency, to the bit."""
    kinds = {"selection": {"dist": "exponential", "mean": 1}, "aggregation": {"dist": "exponential", "mean": 2},
             "group_by": {"dist": "exponential", "mean": 4}}
    pooled = {"dist": "exponential", "mean": 3}
    a, b = (simulate(raw(e, pooled, kinds, live), data=data) for e in ("simpy", "fast"))
    same(a, b)
    delay = a.queries.sort_values("arrival_s")["latency_ms"].to_numpy() - 1.0
    assert (delay > 0).all() and len(np.unique(delay.round(9))) == QUERIES  # one draw per request


@pytest.mark.parametrize("engine", ["simpy", "fast"])
def test_without_kinds_the_delays_are_the_pooled_ones_as_before(data: Path, engine: str) -> None:
    """No kind given (the default): every request draws ``request_delay_ms`` alone, the stream read as before."""
    pooled = {"dist": "exponential", "mean": 3}
    a = latencies(raw(engine, pooled), data)
    b = latencies(raw(engine, pooled, {}), data)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(latencies(raw(engine), data), np.full(QUERIES, 4.0), rtol=0, atol=1e-9)


def test_an_unknown_kind_is_refused_naming_its_key() -> None:
    with pytest.raises(ScenarioError, match=r"cluster\.network\.request_delay_by_kind_ms\.lookup"):
        load_scenario({"cluster": {"network": {"request_delay_by_kind_ms": {"lookup": 1.0}}}})
    with pytest.raises(ScenarioError, match=r"cluster\.network\.request_delay_by_kind_ms\.group_by"):
        load_scenario({"cluster": {"network": {"request_delay_by_kind_ms": {"group_by": -1.0}}}})
