"""Deadlines against theory: scheduling timeouts (240) in M/M/1, and a server at twice its capacity.

A Pinot server with one core has one runner thread; with one segment per query and an exponential
segment time it is an M/M/1 queue whose arrivals are turned away (240, no work) when their wait reaches
the query's timeout: :func:`~workbench.analysis.theory.mm1_deadline_rejection` gives the share turned
away. Each check takes one estimate per replication and requires the theoretical value inside the 99.9%
Student-t interval, which must also be narrow (so a check cannot pass for want of data).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from parity import same, shortened

from workbench.analysis import theory
from workbench.analysis.stats import mean_ci
from workbench.sim.run import simulate

CONF = 0.999
MEAN_MS = 10.0


# the long runs are the fast engine's; the reference engine gives their records exactly on a tenth of the
# horizon (the last test here), so it passes each check the fast engine passes (test_queueing_theory.py)
ENGINES = pytest.mark.parametrize("engine", ["fast"])


def scenario(qps: float, timeout_ms: float, duration: float, replications: int, seed: int,
             engine: str = "auto") -> dict[str, Any]:
    return {
        "cluster": {"servers": 1, "server": {"cores": 1}, "network": {"latency_ms": 0},
                    "broker": {"overhead_ms": 0, "reduce_ms_per_server": 0, "reduce_ms_per_row": 0,
                               "timeout_ms": timeout_ms}},
        "table": {"tableName": "t", "tableType": "OFFLINE", "segmentsConfig": {"replication": 1}},
        "workload": {"synthetic": {"segments_per_server": 1, "docs_per_segment": 1000},
                     "arrival": {"process": "poisson", "qps": qps}},
        "service": {"model": "exponential", "mean_ms": MEAN_MS},
        "simulation": {"duration_s": duration, "warmup_s": duration / 10, "replications": replications,
                       "seed": seed, "engine": engine},
    }


@ENGINES
@pytest.mark.parametrize(("qps", "timeout_ms"), [(80.0, 20.0), (150.0, 50.0)])
def test_share_of_240s_matches_mm1_with_deterministic_timeout(qps: float, timeout_ms: float, engine: str) -> None:
    """At rho 0.8 (a tight 20 ms timeout) and overloaded at rho 1.5 (50 ms)."""
    result = simulate(scenario(qps, timeout_ms, duration=300, replications=10, seed=11, engine=engine))
    per_rep = (result.servers["scheduling_timeouts"] / result.servers["requests"]).to_numpy()
    mean, low, high = mean_ci(per_rep, CONF)
    expected = theory.mm1_deadline_rejection(qps / 1000.0, 1.0 / MEAN_MS, timeout_ms)
    assert low <= expected <= high, (expected, mean, low, high)
    assert high - low < 0.1 * expected  # narrow enough to tell a wrong model apart


@ENGINES
def test_overload_is_shed_with_240_and_latency_stays_bounded_by_the_timeout(engine: str) -> None:
    """Twice capacity with a 10 s timeout: the backlog stops growing at ~10 s of work, the excess half of
    the load is answered 240, and the server keeps completing queries at its capacity.

    The servers' counters cover every request received in the run. Two stretches shed nothing: the ~10 s
    in which the empty queue fills (work arrives at 2 s per s and drains at 1 s per s, so the wait reaches
    the timeout after timeout / (rho - 1) = 10 s), and the last 10 s, whose requests are still queued at
    the horizon (a request is answered 240 when it reaches the runner, 10 s after it arrived). So the
    expected share is 0.5 x (300 - 10 - 10) / 300. The fill time varies by a few seconds between runs (a
    random walk of 30k arrivals), 0.005 of share per 3 s; with the binomial noise of ~85k shed queries
    (0.002) the tolerance is 0.01.
    """
    timeout, duration, reps = 10_000.0, 300.0, 3
    result = simulate(scenario(200.0, timeout, duration=duration, replications=reps, seed=5, engine=engine))
    q, servers = result.queries, result.servers
    assert q["latency_ms"].max() <= timeout + 1e-6  # every reply by the deadline (late servers: 427)
    assert theory.mm1_deadline_rejection(0.2, 0.1, timeout) == pytest.approx(0.5, abs=1e-12)
    fill_s = queued_at_end_s = timeout / 1000.0 / (2.0 - 1.0)
    shed = (servers["scheduling_timeouts"] / servers["requests"]).to_numpy()
    assert np.all(np.abs(shed - 0.5 * (duration - fill_s - queued_at_end_s) / duration) < 0.01), shed
    # executed = received - shed - still queued at the horizon (~10 s of arrivals at 200/s)
    executed = (servers["requests"] - servers["scheduling_timeouts"]).to_numpy() - 200.0 * queued_at_end_s
    rate = executed / duration
    capacity = 1000.0 / MEAN_MS
    assert np.all(np.abs(rate / capacity - 1.0) < 0.03), rate  # near capacity: the server never idles
    assert np.all(servers["utilisation"].to_numpy() > 0.99)


@pytest.mark.slow
@pytest.mark.parametrize(("qps", "timeout_ms", "duration", "replications", "seed"),
                         [(80.0, 20.0, 300, 10, 11), (150.0, 50.0, 300, 10, 11), (200.0, 10_000.0, 300.0, 3, 5)])
def test_the_reference_engine_gives_each_checks_records(qps: float, timeout_ms: float, duration: float,
                                                        replications: int, seed: int) -> None:
    """Each check's scenario on a tenth of its horizon: the SimPy engine's records are the fast engine's."""
    def run(engine: str) -> Any:
        return simulate(shortened(scenario(qps, timeout_ms, duration, replications, seed, engine=engine), 0.1, 2))
    same(run("simpy"), run("fast"))
