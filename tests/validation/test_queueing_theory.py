"""The model against queueing theory (anchors.md §2). Seeded; tolerances come from confidence intervals.

Each check runs independent replications, takes one estimate per replication, and requires the
theoretical value to lie inside the 99.9% Student-t interval of those estimates (so a correct model
fails a check about once in a thousand seeds). Each check also requires that interval to be narrow
(a few percent of the value), so a check cannot pass merely because the simulation was too short to
tell anything apart.

The long horizons run on the fast engine. The SimPy engine, the reference, is held to the same theory
in two ways: one check (fork-join on two servers, where Flatto-Hahn's result is exact) runs on it at full
length, and every check's scenario runs on it at a tenth of the horizon and must give the fast engine's
records exactly (:func:`test_the_reference_engine_gives_each_checks_records`). Identical records on the
same scenario mean identical estimates, so the reference passes every check the fast engine passes, for
a tenth of the minutes the full SimPy runs took.
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


# the long runs are the fast engine's; the reference engine is held to them record for record below
ENGINES = pytest.mark.parametrize("engine", ["fast"])


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

MMC_CORES, MMC_MEAN_MS = 4, 10.0
GC_SERVICE_MS, GC_PAUSE_MS, GC_INTERVAL_S, GC_QPS = 5.0, 300.0, 10.0, 5.0


def mmc_scenario(rho: float, engine: str) -> dict[str, Any]:
    """M/M/c: one server with ``MMC_CORES`` cores at load ``rho``."""
    lam = rho * MMC_CORES / MMC_MEAN_MS  # per ms
    return scenario(1, MMC_CORES, lam * 1000, {"model": "exponential", "mean_ms": MMC_MEAN_MS}, 300, 8, seed=11,
                    engine=engine)


def fork_join_scenario(k: int, rho: float, engine: str) -> dict[str, Any]:
    """Fork-join: ``k`` one-core servers, every query on all of them, each at load ``rho``."""
    return scenario(k, 1, rho / 10.0 * 1000, {"model": "exponential", "mean_ms": 10.0}, 300, 16, seed=5,
                    engine=engine)


def gc_scenario(n: int, engine: str) -> dict[str, Any]:
    """``n`` servers with fixed pauses at exponential intervals, deterministic service, every query on all."""
    gc = {"collector": "fixed", "interval_s": {"dist": "exponential", "mean": GC_INTERVAL_S},
          "pause_ms": {"dist": "deterministic", "value": GC_PAUSE_MS}}
    return scenario(n, 1, GC_QPS, {"model": "deterministic", "mean_ms": GC_SERVICE_MS}, 3000, 10, seed=17, gc=gc,
                    engine=engine)


def per_replication(result: Any, fn: Any) -> np.ndarray:
    return np.array([fn(g) for _, g in result.queries.groupby("replication")])


@ENGINES
@pytest.mark.parametrize("rho", [0.5, 0.8])
def test_mmc_matches_erlang_c(rho: float, engine: str) -> None:
    c, mean_ms = MMC_CORES, MMC_MEAN_MS
    mu = 1.0 / mean_ms
    lam = rho * c * mu  # per ms
    r = simulate(mmc_scenario(rho, engine))
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
    r = simulate(fork_join_scenario(k, rho, engine))
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
    service_ms, pause_ms, interval_s, d, qps = GC_SERVICE_MS, GC_PAUSE_MS, GC_INTERVAL_S, 100.0, GC_QPS
    r = simulate(gc_scenario(n, engine))
    share, lo, hi = mean_ci(per_replication(r, lambda g: (g["latency_ms"] - service_ms > d).mean()), CONF)
    p_lo, p_hi = theory.gc_single_server_delay_bounds(pause_ms, interval_s * 1000, service_ms, d, qps / 1000)
    band = (theory.fanout_delay_probability(p_lo, n), theory.fanout_delay_probability(p_hi, n))
    # the interval of the simulated share must meet the theoretical band [lower bound, upper bound]
    assert lo <= band[1] and hi >= band[0], (share, lo, hi, band)
    assert (hi - lo) / 2 < 0.15 * band[0]


@pytest.mark.slow
def test_the_reference_engine_meets_flatto_hahn_on_its_own() -> None:
    """The SimPy engine against theory directly, at full length: the check whose result is exact."""
    test_fork_join_within_five_percent_of_nelson_tantawi(2, 0.3, "simpy")


@pytest.mark.slow
@pytest.mark.parametrize("build", [
    pytest.param(lambda engine: mmc_scenario(0.8, engine), id="mmc-0.8"),
    pytest.param(lambda engine: mmc_scenario(0.5, engine), id="mmc-0.5"),
    pytest.param(lambda engine: fork_join_scenario(8, 0.7, engine), id="fork-join-8-0.7"),
    pytest.param(lambda engine: fork_join_scenario(2, 0.7, engine), id="fork-join-2-0.7"),
    pytest.param(lambda engine: gc_scenario(30, engine), id="gc-30"),
    pytest.param(lambda engine: gc_scenario(3, engine), id="gc-3"),
])
def test_the_reference_engine_gives_each_checks_records(build: Any) -> None:
    """Each check's scenario on a tenth of its horizon: the SimPy engine's records are the fast engine's."""
    same(simulate(shortened(build("simpy"), 0.1, 2)), simulate(shortened(build("fast"), 0.1, 2)))
