"""Both engines call the same decision functions: change one, and both engines' records change alike.

:mod:`workbench.sim.decisions` holds what a server decides (admission, dispatch, deadlines, the
processor-sharing arithmetic) once; the SimPy server calls each function's Python body and the compiled
kernel calls it compiled. The test replaces the body of one function object, ``start_code`` (240 when
a request reaches a runner having waited its whole timeout), by a rule with a fixed 15 ms limit, and
runs both engines. If either engine had kept its own copy of the rule, its records would not change.

The body is swapped in a child process with numba's JIT disabled (``NUMBA_DISABLE_JIT=1``): there the
kernels run as the Python functions they are compiled from and call the swapped body, and nothing is
compiled, so no kernel cached on disk can carry the mutant.

The scenario is a single-server FIFO queue one can work out by hand: one server with one core (one
runner thread), one segment per query of deterministic 10 ms work, no network, broker or GC time, a
10 s timeout. Requests are served in arrival order; with the server free again at ``free``, query ``i``
(arriving at ``a``) starts at ``s = max(a, free)`` and waits ``s - a``. Under Pinot's rule nothing waits
10 s, so every query runs (``free = s + 10``) and its latency is ``s - a + 10``. Under the mutant a
query that waited 15 ms or more is answered 240 at ``s`` without running (``free`` stays), with latency
``s - a``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVICE_MS, LIMIT_MS, TIMEOUT_MS = 10.0, 15.0, 10_000.0

SCENARIO: dict[str, Any] = {
    "cluster": {"servers": 1, "server": {"cores": 1}, "network": {"latency_ms": 0}, "gc": {"collector": "none"},
                "broker": {"overhead_ms": 0, "reduce_ms_per_server": 0, "reduce_ms_per_row": 0,
                           "timeout_ms": TIMEOUT_MS}},
    "table": {"tableName": "t", "tableType": "OFFLINE", "segmentsConfig": {"replication": 1}},
    "workload": {"synthetic": {"segments_per_server": 1, "docs_per_segment": 1000},
                 "arrival": {"process": "poisson", "qps": 80}},
    "service": {"model": "deterministic", "mean_ms": SERVICE_MS},
    "simulation": {"duration_s": 10, "warmup_s": 0, "replications": 1, "seed": 3},
}

#: Run in the child: both engines, with ``start_code``'s body replaced when asked; their records as JSON.
PROBE = """
import json, sys
from workbench.sim import decisions
from workbench.sim.run import simulate

def with_a_fixed_limit(now, arrival, timeout):
    if now - arrival >= LIMIT_MS:
        return SCHEDULING_TIMEOUT
    return 0

scenario, limit, mutate = json.loads(sys.argv[1]), float(sys.argv[2]), sys.argv[3] == "mutate"
assert not hasattr(decisions.start_code, "py_func"), "numba's JIT is on: the kernel would not see the change"
if mutate:
    decisions.LIMIT_MS = limit  # a global of the function's module, where its body looks names up
    decisions.start_code.__code__ = with_a_fixed_limit.__code__
out = {}
for engine in ("simpy", "fast"):
    scenario["simulation"]["engine"] = engine
    result = simulate(scenario)
    q = result.queries
    out[engine] = {"engine": result.parameters["engine"], "query_id": q["query_id"].tolist(),
                   "arrival_s": q["arrival_s"].tolist(), "latency_ms": q["latency_ms"].tolist(),
                   "error_codes": q["error_codes"].astype(str).tolist(),
                   "scheduling_timeouts": int(result.servers["scheduling_timeouts"].sum()),
                   "requests": int(result.servers["requests"].sum())}
print(json.dumps(out))
"""


def run_both(mutate: bool) -> dict[str, dict[str, Any]]:
    """Both engines' records of :data:`SCENARIO` in a child process without JIT, ``start_code`` mutated or not."""
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(SCENARIO), str(LIMIT_MS),
                           "mutate" if mutate else "keep"], cwd=ROOT, env=env, capture_output=True, text=True,
                          check=False, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    out: dict[str, dict[str, Any]] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def fifo_by_hand(arrival_ms: np.ndarray, limit_ms: float) -> tuple[np.ndarray, np.ndarray]:
    """The single-server FIFO queue of the module docstring: each query's latency and whether it is
    answered 240 (it waited ``limit_ms`` or more when the server came free)."""
    free = 0.0
    latency, turned_away = np.empty(len(arrival_ms)), np.zeros(len(arrival_ms), dtype=bool)
    for i, a in enumerate(arrival_ms):
        start = max(a, free)
        if start - a >= limit_ms:
            turned_away[i], latency[i] = True, start - a
        else:
            free = start + SERVICE_MS
            latency[i] = start - a + SERVICE_MS
    return latency, turned_away


@pytest.fixture(scope="module")
def kept() -> dict[str, dict[str, Any]]:
    return run_both(mutate=False)


@pytest.fixture(scope="module")
def mutated() -> dict[str, dict[str, Any]]:
    return run_both(mutate=True)


def check(records: dict[str, Any], limit_ms: float) -> int:
    """One engine's records against the hand computation; returns how many queries were answered 240."""
    arrival = np.asarray(records["arrival_s"]) * 1000.0
    assert records["query_id"] == list(range(len(arrival)))  # every query answered, none lost at the horizon
    assert len(arrival) > 500  # 10 s at 80 q/s
    latency, turned_away = fifo_by_hand(arrival, limit_ms)
    np.testing.assert_allclose(records["latency_ms"], latency, rtol=0, atol=1e-6)
    assert records["error_codes"] == ["240" if t else "" for t in turned_away]
    assert records["scheduling_timeouts"] == int(turned_away.sum())
    return int(turned_away.sum())


def test_unchanged_rule_both_engines_run_every_query(kept: dict[str, dict[str, Any]]) -> None:
    """Pinot's rule with a 10 s timeout: no query waits that long, none is turned away."""
    for engine in ("simpy", "fast"):
        assert kept[engine]["engine"] == engine
        assert check(kept[engine], TIMEOUT_MS) == 0


def test_mutating_the_shared_start_rule_changes_both_engines(kept: dict[str, dict[str, Any]],
                                                             mutated: dict[str, dict[str, Any]]) -> None:
    """The mutant turns away exactly the queries that waited 15 ms or more, in both engines' records."""
    counts = {}
    for engine in ("simpy", "fast"):
        assert mutated[engine]["engine"] == engine
        assert mutated[engine]["arrival_s"] == kept[engine]["arrival_s"]  # the same queries, timed alike
        counts[engine] = check(mutated[engine], LIMIT_MS)
    # at rho = 0.8 an M/D/1 queue's mean wait is rho S / (2 (1 - rho)) = 20 ms: many waits pass 15 ms, not all
    n = len(mutated["simpy"]["arrival_s"])
    assert 0.05 * n < counts["simpy"] == counts["fast"] < 0.95 * n


#: Adaptive selection's score, mutated the same way: one segment on two servers, Server_1 four times slower.
#: Pinot's HYBRID score is lowest for the server answering faster with less in flight; the mutant negates
#: it, so the broker prefers the worse server. Both engines must move their traffic alike.
ADAPTIVE_SCENARIO: dict[str, Any] = {
    "cluster": {"servers": 2, "server": {"cores": 1}, "network": {"latency_ms": 0.2}, "gc": {"collector": "none"},
                "failures": {"slow": [{"server": "Server_1", "factor": 4}]},
                "broker": {"config": {"pinot.broker.adaptive.server.selector.type": "HYBRID",
                                      "pinot.broker.adaptive.server.selector.enable.stats.collection": True}}},
    "table": {"tableName": "t", "tableType": "OFFLINE", "segmentsConfig": {"replication": 2}},
    "workload": {"synthetic": {"segments_per_server": 1, "docs_per_segment": 1000}, "arrival": {"qps": 40}},
    "service": {"model": "exponential", "mean_ms": 5.0},
    "simulation": {"duration_s": 3, "warmup_s": 0, "replications": 1, "seed": 5},
}

ADAPTIVE_PROBE = """
import json, sys
from workbench.sim import decisions
from workbench.sim.run import simulate

def negated(floor, in_flight, in_flight_ema, latency_ema, exponent):
    queue = float(floor + in_flight)
    queue += in_flight_ema
    return -(queue ** exponent * latency_ema)

scenario = json.loads(sys.argv[1])
assert not hasattr(decisions.hybrid_score, "py_func"), "numba's JIT is on: the kernel would not see the change"
out = {}
for mode in ("keep", "mutate"):
    if mode == "mutate":
        decisions.hybrid_score.__code__ = negated.__code__
    for engine in ("simpy", "fast"):
        scenario["simulation"]["engine"] = engine
        result = simulate(scenario)
        out.setdefault(mode, {})[engine] = {"engine": result.parameters["engine"],
                                            "latency_ms": result.queries["latency_ms"].tolist(),
                                            "requests": result.servers["requests"].tolist()}
print(json.dumps(out))
"""


def test_mutating_the_shared_adaptive_score_moves_both_engines_traffic_alike() -> None:
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    done = subprocess.run([sys.executable, "-c", ADAPTIVE_PROBE, json.dumps(ADAPTIVE_SCENARIO)], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=False, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    runs = json.loads(done.stdout.strip().splitlines()[-1])
    for mode, out in runs.items():
        assert out["simpy"]["engine"] == "simpy" and out["fast"]["engine"] == "fast"
        assert out["simpy"]["requests"] == out["fast"]["requests"], mode
        np.testing.assert_allclose(out["fast"]["latency_ms"], out["simpy"]["latency_ms"], rtol=1e-9, atol=1e-9)
    fast_server, slow_server = runs["keep"]["simpy"]["requests"]
    assert fast_server > 2 * slow_server  # Pinot's score steers away from the slow server ...
    fast_server, slow_server = runs["mutate"]["simpy"]["requests"]
    assert slow_server > 2 * fast_server  # ... the negated one towards it, in both engines
