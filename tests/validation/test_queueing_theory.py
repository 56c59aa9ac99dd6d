"""The model against queueing theory (anchors.md §2). Seeded; tolerances come from confidence intervals.

Each check runs independent replications, takes one estimate per replication, and requires the
theoretical value to lie inside the 99.9% Student-t interval of those estimates (so a correct model
fails a check about once in a thousand seeds). Each check also requires that interval to be narrow
(a few percent of the value), so a check cannot pass merely because the simulation was too short to
tell anything apart.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from workbench.analysis import theory
from workbench.analysis.stats import mean_ci
from workbench.sim.run import simulate

CONF = 0.999


# the reference engine needs minutes for the long runs these checks take; the fast engine gives the same
# records (tests/validation/test_engines.py), so `make test-fast` keeps the check through it
ENGINES = pytest.mark.parametrize("engine", [pytest.param("simpy", marks=pytest.mark.slow), "fast"])


def scenario(servers: int, cores: int, qps: float, service: dict[str, Any], duration: float,
             replications: int, seed: int, gc: dict[str, Any] | None = None, engine: str = "auto") -> dict[str, Any]:
    """The documented validation shape (docs/scenario.md) with the knobs a check varies, on ``engine``."""
    return {
        "cluster": {"servers": servers, "server": {"cores": cores}, "network": {"latency_ms": 0},
                    "broker": {"overhead_ms": 0, "reduce_ms_per_server": 0, "reduce_ms_per_row": 0},
                    "gc": gc or {"collector": "none"}},
        "table": {"tableName": "t", "tableType": "OFFLINE", "routing": {"instanceSelectorType": "balanced"},
                  "segmentsConfig": {"replication": 1}},
        "workload": {"synthetic": {"segments_per_server": 1, "docs_per_segment": 1000},
                     "arrival": {"process": "poisson", "qps": qps}},
        "service": service,
        "simulation": {"duration_s": duration, "warmup_s": duration / 10, "replications": replications,
                       "seed": seed, "engine": engine},
    }


def per_replication(result: Any, fn: Any) -> np.ndarray:
    return np.array([fn(g) for _, g in result.queries.groupby("replication")])


@ENGINES
@pytest.mark.parametrize("rho", [0.5, 0.8])
def test_mmc_matches_erlang_c(rho: float, engine: str) -> None:
    c, mean_ms = 4, 10.0
    mu = 1.0 / mean_ms
    lam = rho * c * mu  # per ms
    r = simulate(scenario(1, c, lam * 1000, {"model": "exponential", "mean_ms": mean_ms}, 300, 8, seed=11,
                          engine=engine))
    mean_t, lo, hi = mean_ci(per_replication(r, lambda g: g["latency_ms"].mean()), CONF)
    expected_t = theory.mmc_mean_response(lam, mu, c)
    assert lo <= expected_t <= hi, (mean_t, lo, hi, expected_t)
    assert (hi - lo) / 2 < 0.06 * expected_t
    p_wait, lo, hi = mean_ci(per_replication(r, lambda g: (g["queue_wait_ms"] > 0).mean()), CONF)
    expected_p = theory.erlang_c(c, lam / mu)
    assert lo <= expected_p <= hi, (p_wait, lo, hi, expected_p)
    assert (hi - lo) / 2 < 0.03


@ENGINES
@pytest.mark.parametrize(("k", "rho"), [(2, 0.3), (2, 0.7), (8, 0.3), (8, 0.7)])
def test_fork_join_within_five_percent_of_nelson_tantawi(k: int, rho: float, engine: str) -> None:
    mean_ms = 10.0
    mu = 1.0 / mean_ms
    lam = rho * mu
    r = simulate(scenario(k, 1, lam * 1000, {"model": "exponential", "mean_ms": mean_ms}, 300, 16, seed=5,
                          engine=engine))
    means = per_replication(r, lambda g: g["latency_ms"].mean())
    estimate, lo, hi = mean_ci(means, CONF)
    nt = theory.nelson_tantawi_response(k, lam, mu)
    assert abs(estimate - nt) / nt < 0.05, (estimate, nt)
    # power: the 99% interval is at most half the 5% tolerance, so a 5% error could not hide in noise
    _, lo99, hi99 = mean_ci(means, 0.99)
    assert (hi99 - lo99) / 2 < 0.025 * nt
    if k == 2:  # exact (Flatto-Hahn): must sit inside the interval itself
        assert lo <= theory.flatto_hahn_response(lam, mu) <= hi


@ENGINES
@pytest.mark.parametrize("n", [1, 3, 30])
def test_gc_fanout_rule(n: int, engine: str) -> None:
    """Share of queries delayed by more than d agrees with 1 - (1 - p)^n (bounds from theory)."""
    service_ms, pause_ms, interval_s, d, qps = 5.0, 300.0, 10.0, 100.0, 5.0
    gc = {"collector": "fixed", "interval_s": {"dist": "exponential", "mean": interval_s},
          "pause_ms": {"dist": "deterministic", "value": pause_ms}}
    r = simulate(scenario(n, 1, qps, {"model": "deterministic", "mean_ms": service_ms}, 3000, 10, seed=17, gc=gc,
                          engine=engine))
    share, lo, hi = mean_ci(per_replication(r, lambda g: (g["latency_ms"] - service_ms > d).mean()), CONF)
    p_lo, p_hi = theory.gc_single_server_delay_bounds(pause_ms, interval_s * 1000, service_ms, d, qps / 1000)
    band = (theory.fanout_delay_probability(p_lo, n), theory.fanout_delay_probability(p_hi, n))
    # the interval of the simulated share must meet the theoretical band [lower bound, upper bound]
    assert lo <= band[1] and hi >= band[0], (share, lo, hi, band)
    assert (hi - lo) / 2 < 0.15 * band[0]
