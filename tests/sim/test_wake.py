"""``service.wake_ms``: the runner work a request adds after the cluster was idle, in both engines alike.

One server of one core (one runner: one query at a time) holding one segment, the cost model with no work but
10 ms per segment, no network and a broker that costs nothing, a wake-up of 4 ms with a 10 ms time constant.
By hand (ms), queries at 0, 5 and 1000:

* q0 arrives first (no query before it: the whole 4 ms wake-up): 4 + 10 = 14 of work, latency 14;
* q1 arrives 5 ms after q0: its wake-up is 4 x (1 - exp(-x) x (1 + x)) with x = 5 / 10, 4 x (1 - 1.5 / e^0.5) =
  0.360816; it waits for the runner until 14 (queue wait 9), then works 0.360816 + 10: answered at 24.360816,
  latency 19.360816;
* q2 arrives 995 ms after q1: x = 99.5, and 4 x (1 - 100.5 / e^99.5) is 4 to the last bit: latency 14.

Without the wake-up (the default 0) the same queries take 10, 15 and 10, and the plan's runner work is
``per_request_ms`` itself: the closed-form checks keep their bits.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from one_core import one_core, run_at
from parity import same

from workbench.scenario import load_scenario
from workbench.sim.layout import build_layout
from workbench.sim.plan import build_plan
from workbench.sim.run import simulate
from workbench.sim.streams import Streams

WAKE_MS, TAU_MS, SEGMENT_MS = 4.0, 10.0, 10.0
AT_MS = (0.0, 5.0, 1000.0)


def raw(wake_ms: float = WAKE_MS, **service: Any) -> dict[str, Any]:
    return one_core(SEGMENT_MS, wake_ms=wake_ms, wake_tau_ms=TAU_MS, **service)


@pytest.mark.parametrize("engine", ["simpy", "fast"])
def test_a_query_after_an_idle_stretch_pays_the_wake_up_and_one_close_behind_pays_little(engine: str) -> None:
    q = run_at(engine, raw(WAKE_MS), AT_MS).queries.sort_values("arrival_s")
    wake_1 = WAKE_MS * (1.0 - 1.5 * math.exp(-0.5))
    assert wake_1 == pytest.approx(0.360816, abs=1e-6)
    np.testing.assert_allclose(q["latency_ms"], [14.0, 14.0 - 5.0 + wake_1 + SEGMENT_MS, 14.0], rtol=0, atol=1e-9)
    np.testing.assert_allclose(q["queue_wait_ms"], [0.0, 9.0, 0.0], rtol=0, atol=1e-9)


@pytest.mark.parametrize("engine", ["simpy", "fast"])
def test_without_a_wake_up_the_runner_work_is_per_request_ms_alone(engine: str) -> None:
    q = run_at(engine, raw(0.0), AT_MS).queries.sort_values("arrival_s")
    np.testing.assert_allclose(q["latency_ms"], [10.0, 15.0, 10.0], rtol=0, atol=1e-9)


def test_no_wake_up_leaves_the_plan_bit_for_bit() -> None:
    """The default draws nothing and adds nothing: every query's runner work is ``per_request_ms`` exactly."""
    sc = load_scenario(raw(0.0, per_request_ms=0.3))
    layout = build_layout(sc)
    plan = build_plan(sc, layout, Streams.spawn(np.random.SeedSequence(1), 1), horizon_ms=5000.0)
    assert plan.num_queries > 50
    assert (plan.prepare_ms == 0.3).all()


ADAPTIVE = {"pinot.broker.adaptive.server.selector.type": "HYBRID",
            "pinot.broker.adaptive.server.selector.enable.stats.collection": True}


@pytest.mark.parametrize("config", [{}, ADAPTIVE], ids=["routed", "adaptive"])
def test_both_engines_give_the_same_records_with_a_wake_up(config: dict[str, Any]) -> None:
    """Poisson arrivals at 20/s on one core with spread work: the wake-up varies query by query, and the two
    engines agree record for record, routed in advance or live (adaptive selection)."""
    sc = raw(WAKE_MS, variability=0.5, ns_per_doc=2000.0)
    sc["cluster"]["broker"]["config"] = config
    a = simulate(load_scenario(sc).with_overrides({"simulation.engine": "simpy"}))
    b = simulate(load_scenario(sc).with_overrides({"simulation.engine": "fast"}))
    same(a, b)
    q = a.queries.sort_values("arrival_s")
    gap = np.diff(q["arrival_s"].to_numpy() * 1000.0, prepend=-np.inf)
    x = np.minimum(gap / TAU_MS, 700.0)
    wake = WAKE_MS * (1.0 - np.exp(-x) * (1.0 + x))
    # at 20/s (gaps of mean 50 ms, r = 50 / 10): 1 - E[exp(-x)] - E[x exp(-x)] = 1 - 1/(1 + r) - r/(1 + r)^2 = 0.69
    assert 0.5 * WAKE_MS < wake.mean() < 0.85 * WAKE_MS
    assert a.servers.iloc[0]["busy_ms"] > wake.sum()
