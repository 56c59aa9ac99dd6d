"""``service.off_path_ms``: CPU a request leaves on its server's cores after its response, in both engines alike.

One server of one core (one runner: one query at a time) holding one segment, the cost model with no work but
10 ms per segment, no network and a broker that costs nothing, 6 ms of CPU off the query's path per request.
By hand (ms), queries at 0, 5 and 1000:

* q0 runs alone: its segment from 0 to 10, latency 10 (its own off-path CPU comes after its response);
* at 10 q0's off-path CPU (6) and q1's segment (10) start together on the one core, each at half speed: the
  off-path work is done at 10 + 2 x 6 = 22, q1's segment then has 10 - 6 = 4 left alone: answered at 26,
  latency 21 (5 of it waiting for the runner); its own off-path CPU runs 26-32;
* q2 at 1000 finds the core idle again: latency 10.

The core did 3 x 10 + 3 x 6 = 48 ms of work. Without the term (the default 0) the same queries take 10, 15 and
10, and the core does 30.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from one_core import one_core, run_at
from parity import same

from workbench.scenario import load_scenario
from workbench.sim.run import simulate

OFF_PATH_MS, SEGMENT_MS = 6.0, 10.0
AT_MS = (0.0, 5.0, 1000.0)


def raw(off_path_ms: float = OFF_PATH_MS, **service: Any) -> dict[str, Any]:
    return one_core(SEGMENT_MS, off_path_ms=off_path_ms, **service)


@pytest.mark.parametrize("engine", ["simpy", "fast"])
def test_the_cpu_off_the_path_delays_the_query_behind_not_its_own(engine: str) -> None:
    records = run_at(engine, raw(OFF_PATH_MS), AT_MS)
    q = records.queries.sort_values("arrival_s")
    np.testing.assert_allclose(q["latency_ms"], [10.0, 21.0, 10.0], rtol=0, atol=1e-9)
    np.testing.assert_allclose(q["queue_wait_ms"], [0.0, 5.0, 0.0], rtol=0, atol=1e-9)
    assert float(records.servers[0]["busy_ms"]) == pytest.approx(48.0, abs=1e-9)


@pytest.mark.parametrize("engine", ["simpy", "fast"])
def test_without_it_nothing_runs_after_the_response(engine: str) -> None:
    records = run_at(engine, raw(0.0), AT_MS)
    np.testing.assert_allclose(records.queries.sort_values("arrival_s")["latency_ms"], [10.0, 15.0, 10.0],
                               rtol=0, atol=1e-9)
    assert float(records.servers[0]["busy_ms"]) == pytest.approx(30.0, abs=1e-9)


ADAPTIVE = {"pinot.broker.adaptive.server.selector.type": "HYBRID",
            "pinot.broker.adaptive.server.selector.enable.stats.collection": True}


@pytest.mark.parametrize("config", [{}, ADAPTIVE], ids=["routed", "adaptive"])
def test_both_engines_give_the_same_records_with_cpu_off_the_path(config: dict[str, Any]) -> None:
    """Poisson arrivals at 20/s on one core with spread work and a wake-up: the two engines agree record for
    record, routed in advance or live (adaptive selection)."""
    sc = raw(OFF_PATH_MS, variability=0.5, ns_per_doc=2000.0, wake_ms=2.0)
    sc["cluster"]["broker"]["config"] = config
    a = simulate(load_scenario(sc).with_overrides({"simulation.engine": "simpy"}))
    b = simulate(load_scenario(sc).with_overrides({"simulation.engine": "fast"}))
    same(a, b)


def test_the_core_carries_every_request_s_off_path_cpu() -> None:
    """Deterministic work, Poisson at 20/s for 30 s: the core's busy time is each answered query's 10 ms segment
    and 6 ms off its path (the last one's off-path CPU may run past the horizon), and the utilisation is
    20/s x 16 ms = 0.32 give or take the draw."""
    result = simulate(load_scenario(raw(OFF_PATH_MS)).with_overrides({"simulation.engine": "fast"}))
    answered = len(result.queries)
    busy = float(result.servers.iloc[0]["busy_ms"])
    assert (SEGMENT_MS + OFF_PATH_MS) * (answered - 1) <= busy <= (SEGMENT_MS + OFF_PATH_MS) * answered + 1e-6
    assert 0.25 < busy / 30_000.0 < 0.40
