"""``cluster.network.request_delay_ms``: a delay per server request that takes no server core.

One server of one core holding one segment, deterministic work of 10 ms per query, no network latency and
a broker whose only cost is a 1 ms overhead. By hand: a query that finds the server idle is answered at
10 ms (its work) + 3 ms (its request's delay) + 1 ms (the broker) = 14 ms; the server is busy 10 ms per
query, so its utilisation is 10 ms x the arrival rate (0.02 at 2/s), not 13 ms x the rate (0.026) as it
would be if the delay held the core. Both engines must give this; the SimPy engine's live routing
(adaptive server selection) draws the delay itself and must give it too.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from workbench.scenario import load_scenario
from workbench.sim.records import Result
from workbench.sim.run import simulate

QPS, WORK_MS, DELAY_MS, BROKER_MS = 2.0, 10.0, 3.0, 1.0
#: Arrivals at least this long after the one before find the server idle (three works: a run of close
#: arrivals clears in one work each; at 2/s a run of four within 30 ms is vanishingly rare).
ISOLATED_GAP_MS = 30.0


def raw(delay: Any = DELAY_MS, **broker: Any) -> dict[str, Any]:
    return {
        "cluster": {"servers": 1, "server": {"cores": 1}, "network": {"latency_ms": 0, "request_delay_ms": delay},
                    "broker": {"overhead_ms": BROKER_MS, "reduce_ms_per_server": 0.0, "reduce_ms_per_row": 0.0,
                               **broker}},
        "table": {"tableName": "t", "tableType": "OFFLINE", "segmentsConfig": {"replication": 1}},
        "workload": {"synthetic": {"segments_per_server": 1, "docs_per_segment": 100}, "arrival": {"qps": QPS}},
        "service": {"model": "deterministic", "mean_ms": WORK_MS},
        "simulation": {"duration_s": 600, "warmup_s": 0, "replications": 1, "seed": 11},
    }


def run(scenario: dict[str, Any], engine: str) -> Result:
    return simulate(load_scenario(scenario).with_overrides({"simulation.engine": engine}))


def isolated(queries: pd.DataFrame) -> pd.DataFrame:
    gap = queries["arrival_s"].diff().fillna(np.inf) * 1000.0
    return queries[gap >= ISOLATED_GAP_MS]


ADAPTIVE = {"config": {"pinot.broker.adaptive.server.selector.type": "HYBRID",
                      "pinot.broker.adaptive.server.selector.enable.stats.collection": True}}


@pytest.mark.parametrize(("engine", "broker"), [("simpy", {}), ("fast", {}), ("simpy", ADAPTIVE), ("fast", ADAPTIVE)],
                         ids=["simpy", "fast", "simpy-adaptive", "fast-adaptive"])
def test_an_isolated_query_waits_the_delay_but_the_core_does_not(engine: str, broker: dict[str, Any]) -> None:
    result = run(raw(**broker), engine)
    q = result.queries.sort_values("arrival_s").set_index("query_id")
    alone = isolated(q)
    assert len(alone) > 0.9 * len(q) > 1000
    np.testing.assert_allclose(alone["latency_ms"], WORK_MS + DELAY_MS + BROKER_MS, rtol=0, atol=1e-9)
    assert (q["latency_ms"] >= WORK_MS + DELAY_MS + BROKER_MS - 1e-9).all()
    assert not q["partial"].any()
    server = result.servers.iloc[0]
    # the core ran each request's 10 ms and nothing else (a request straddling the horizon counts in part)
    assert server["busy_ms"] == pytest.approx(WORK_MS * server["requests"], abs=WORK_MS)
    assert server["requests"] == len(q) or server["requests"] == len(q) + 1
    # 10 ms x 2/s = 0.02 within Poisson noise (1200 +- 35 arrivals: 3%); the delay on the core would be 0.026
    assert server["utilisation"] == pytest.approx(WORK_MS * QPS / 1000.0, rel=0.1)


@pytest.mark.parametrize("engine", ["simpy", "fast"])
def test_a_response_the_delay_makes_late_is_not_waited_for(engine: str) -> None:
    """With a 12 ms timeout the server's answer (10 ms) is in time but reaches the broker at 13 ms: the broker
    stops waiting at 12 ms (427, partial) and replies after its 1 ms overhead, at 13 ms."""
    q = run(raw(timeout_ms=12.0), engine).queries.sort_values("arrival_s").set_index("query_id")
    alone = isolated(q)
    np.testing.assert_allclose(alone["latency_ms"], 12.0 + BROKER_MS, rtol=0, atol=1e-9)
    assert alone["partial"].all() and alone["error_codes"].str.contains("427").all()


@pytest.mark.parametrize("engine", ["simpy", "fast"])
def test_a_drawn_delay_comes_from_its_own_stream(engine: str) -> None:
    """An exponential delay of mean 2 ms leaves the arrivals and the server's work as without it (its draws
    are on a stream of their own) and adds one draw per request: each isolated query is later by its draw,
    and the draws' mean is 2 ms within five standard errors (2 / sqrt(n))."""
    base = run(raw(0), engine)
    drawn = run(raw({"dist": "exponential", "mean": 2}), engine)
    a, b = (r.queries.sort_values("arrival_s").set_index("query_id") for r in (base, drawn))
    np.testing.assert_array_equal(a["arrival_s"].to_numpy(), b["arrival_s"].to_numpy())
    assert base.servers.iloc[0]["busy_ms"] == drawn.servers.iloc[0]["busy_ms"]
    alone = isolated(a).index.intersection(isolated(b).index)
    np.testing.assert_allclose(a.loc[alone, "latency_ms"], WORK_MS + BROKER_MS, rtol=0, atol=1e-9)
    extra = (b.loc[alone, "latency_ms"] - a.loc[alone, "latency_ms"]).to_numpy()
    assert (extra > 0).all()
    assert extra.mean() == pytest.approx(2.0, abs=5 * 2.0 / np.sqrt(len(extra)))
    assert len(np.unique(extra.round(9))) > 0.99 * len(extra)  # one draw per request, not one for all


def test_the_key_takes_every_distribution_form_and_refuses_a_negative_delay() -> None:
    from workbench.distributions import Deterministic, Empirical, Exponential
    from workbench.errors import ScenarioError

    def read(value: Any) -> Any:
        return load_scenario({"cluster": {"network": {"request_delay_ms": value}}}).cluster.network.request_delay_ms

    assert read("250ms") == Deterministic(250.0) and read("1s") == Deterministic(1000.0)
    assert read({"dist": "exponential", "mean": "2ms"}) == Exponential(2.0)
    assert read({"dist": "empirical", "values": [1, 2]}) == Empirical((1.0, 2.0))
    assert load_scenario({}).cluster.network.request_delay_ms == Deterministic(0.0)  # none by default
    with pytest.raises(ScenarioError, match=r"cluster\.network\.request_delay_ms"):
        read(-1)
