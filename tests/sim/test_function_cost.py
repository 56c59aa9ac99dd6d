"""``service.function_ns_per_doc``: a heavier aggregation function's extra cost per document, in both engines alike.

One server of one core (one runner, one worker: one query at a time) holding one segment of 1,000 documents, the
cost model with 1 ms per segment and 1,000 ns per document (1 ms for the segment's documents), no runner work, no
network and a broker that costs nothing; ``PERCENTILETDIGEST`` costs 4,000 ns per document more. By hand (ms):

* q0 at 0, ``PERCENTILETDIGEST(v, 99)``: 1 + 1,000 x (1,000 + 4,000) ns = 6 of work, latency 6;
* q1 at 1, ``SUM(v)`` (a ``COUNT(*)`` would be read from the segment's metadata: no document):
  1 + 1 = 2 of work; it waits for the runner until 6 (queue wait 5), answered at 8: latency 7;
* q2 at 1000, two calls (``PERCENTILETDIGEST`` and ``percentile_tdigest``, Pinot's two spellings of one function):
  1 + 1,000 x (1,000 + 2 x 4,000) ns = 10.

Without the function's cost (the default: none) they take 2, 3 (waiting 1) and 2, and the plan's work is the
plain cost model's bit for bit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import one_segment
import pandas as pd
import pytest
from parity import same

from workbench.errors import ScenarioError
from workbench.scenario import load_scenario
from workbench.sim.layout import build_layout
from workbench.sim.plan import build_plan
from workbench.sim.run import simulate
from workbench.sim.streams import Streams

SQL = ("SELECT PERCENTILETDIGEST(v, 99) FROM t", "SELECT SUM(v) FROM t",
       "SELECT PERCENTILETDIGEST(v, 50), percentile_tdigest(v, 99) FROM t")
EXTRA_NS = 4000.0


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return one_segment.write(tmp_path_factory.mktemp("fn"), [0.0, 0.001, 1.0], SQL)


def raw(costs: dict[str, float], engine: str = "simpy", **service: Any) -> dict[str, Any]:
    return {
        "cluster": {"servers": 1, "server": {"cores": 1}, "network": {"latency_ms": 0},
                    "broker": {"overhead_ms": 0.0, "reduce_ms_per_server": 0.0, "reduce_ms_per_row": 0.0}},
        "table": {"tableName": "t", "tableType": "OFFLINE",
                  "segmentsConfig": {"timeColumnName": "ts", "replication": 1}},
        "workload": {"arrival": {"process": "replay"}},
        "service": {"model": "cost", "per_request_ms": 0.0, "per_segment_ms": 1.0, "ns_per_doc": 1000.0,
                    "merge_ms_per_segment": 0.0, "function_ns_per_doc": costs, **service},
        "simulation": {"duration_s": 2, "warmup_s": 0, "replications": 1, "seed": 1, "engine": engine},
    }


@pytest.mark.parametrize("engine", ["simpy", "fast"])
def test_a_percentiletdigest_query_takes_its_hand_computed_time_and_the_next_waits_behind_it(
        data: Path, engine: str) -> None:
    q = simulate(raw({"PERCENTILETDIGEST": EXTRA_NS}, engine), data=data).queries.sort_values("arrival_s")
    tdigest = 1.0 + 1000 * (1000.0 + EXTRA_NS) * 1e-6
    assert tdigest == 6.0
    np.testing.assert_allclose(q["latency_ms"], [6.0, 6.0 - 1.0 + 2.0, 1.0 + 1000 * (1000.0 + 2 * EXTRA_NS) * 1e-6],
                               rtol=0, atol=1e-9)
    np.testing.assert_allclose(q["queue_wait_ms"], [0.0, 5.0, 0.0], rtol=0, atol=1e-9)


@pytest.mark.parametrize("engine", ["simpy", "fast"])
def test_without_a_function_cost_every_query_costs_the_plain_model(data: Path, engine: str) -> None:
    q = simulate(raw({}, engine), data=data).queries.sort_values("arrival_s")
    np.testing.assert_allclose(q["latency_ms"], [2.0, 3.0, 2.0], rtol=0, atol=1e-9)


def test_both_engines_give_the_same_records_with_a_function_cost(data: Path) -> None:
    """The log replayed at 1,000 times its speed with spread work: queries queue behind the heavy ones, and the
    two engines agree record for record."""
    sc = raw({"PERCENTILETDIGEST": EXTRA_NS}, variability=0.5)
    sc["workload"]["arrival"]["speed"] = 1000.0
    a = simulate(load_scenario(sc).with_overrides({"simulation.engine": "simpy"}), data=data)
    b = simulate(load_scenario(sc).with_overrides({"simulation.engine": "fast"}), data=data)
    same(a, b)
    assert len(a.queries) > 100 and (a.queries["queue_wait_ms"] > 0).any()


def test_a_cost_for_a_function_no_query_calls_leaves_the_plan_and_the_records_bit_for_bit(data: Path) -> None:
    synthetic = {**raw({}, variability=0.3), "workload": {"synthetic": {"segments_per_server": 3,
                                                                        "docs_per_segment": 12345},
                                                          "arrival": {"qps": 50.0}}}
    plans = []
    for costs in ({}, {"DISTINCTCOUNTHLL": 50.0}):
        sc = load_scenario({**synthetic, "service": {**synthetic["service"], "function_ns_per_doc": costs}})
        plans.append(build_plan(sc, build_layout(sc), Streams.spawn(np.random.SeedSequence(2), 1), horizon_ms=2000.0))
    assert len(plans[0].work) > 100 and plans[0].work.tobytes() == plans[1].work.tobytes()
    a = simulate(raw({}, variability=0.3), data=data).queries
    b = simulate(raw({"DISTINCTCOUNTHLL": 50.0}, variability=0.3), data=data).queries
    pd.testing.assert_frame_equal(a, b)


def test_a_function_pinot_does_not_know_is_one_error_naming_the_key() -> None:
    with pytest.raises(ScenarioError, match=r"service\.function_ns_per_doc\.TDIGESTY"):
        load_scenario(raw({"TDIGESTY": 1.0}))
    with pytest.raises(ScenarioError, match=r"function_ns_per_doc\.PERCENTILETDIGEST.*at least 0"):
        load_scenario(raw({"PERCENTILETDIGEST": -1.0}))
