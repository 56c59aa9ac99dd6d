"""Service models: the cost model's per-segment variability keeps the mean and has the asked spread."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.scenario.schema import ServiceSpec
from workbench.sim.run import simulate
from workbench.sim.service import make_service_model


def test_variability_is_a_mean_one_lognormal_factor_with_the_given_sigma() -> None:
    model = make_service_model(ServiceSpec(model="cost", variability=0.5))
    times = np.array(model.vary(np.random.default_rng(3), [2.0] * 200_000))
    # the mean of 200k factors has a standard error of ~sqrt(e^0.25 - 1)/sqrt(2e5) = 0.0012 (x 2 ms)
    assert times.mean() == pytest.approx(2.0, abs=4 * 0.0012 * 2.0)
    assert np.log(times).std() == pytest.approx(0.5, abs=0.005)


def test_no_variability_draws_nothing_and_changes_nothing() -> None:
    rng = np.random.default_rng(3)
    state = rng.bit_generator.state
    assert make_service_model(ServiceSpec(model="cost")).vary(rng, [1.0, 2.0]) == [1.0, 2.0]
    assert rng.bit_generator.state == state


def test_variability_widens_the_tail_at_the_same_mean_load() -> None:
    def p99(sigma: float) -> float:
        r = simulate({"cluster": {"servers": 2, "server": {"cores": 2}},
                      "workload": {"synthetic": {"segments_per_server": 4, "docs_per_segment": 500_000},
                                   "arrival": {"qps": 40}},
                      "service": {"model": "cost", "variability": sigma},
                      "simulation": {"duration_s": 60, "warmup_s": 5, "replications": 2, "seed": 3}})
        return float(np.percentile(r.queries["latency_ms"], 99))
    assert p99(0.8) > 1.1 * p99(0.0)
