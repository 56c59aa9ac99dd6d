"""``CalibrateOptions.network_ms``: a measured broker-server delay moves time from the servers' work to the wire.

In the fitted model a query reaching servers costs ``per_request_ms + 2 x network`` (``docs/calibrate.md``): both
terms sit on the same column (servers reached), so a fit with the one-way delay ``n`` instead of the default
0.25 ms must find ``per_request_ms`` lower by exactly ``2 x (n - 0.25)`` and every other cost unchanged, as long as
no cost is at its bound. The synthetic cluster's true ``per_request_ms`` is 0.6 ms; ``n`` = 0.35 keeps it off 0.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import synthetic_cluster as cluster
import yaml

from workbench.calibrate import CalibrateOptions, calibrate


def _fitted(paths: dict[str, Path], out: Path, network_ms: float | None) -> dict[str, float]:
    result = calibrate(paths["table_config"], paths["schema"], paths["segments"], paths["query_log"], out,
                       options=CalibrateOptions(server_cores=8, backtest_queries=0, bootstrap=20, seed=3,
                                                network_ms=network_ms))
    return {p.key: p.value for p in result.fit.parameters}


def test_a_measured_network_delay_comes_out_of_per_request_ms_and_nothing_else(tmp_path: Path) -> None:
    paths = cluster.write_cluster(tmp_path / "in", cluster.queries(300, qps=4.0, seed=8))
    default = _fitted(paths, tmp_path / "default", None)
    measured = _fitted(paths, tmp_path / "measured", 0.35)
    # Equal to the fit's convergence (its rounds of costs and variability stop within a tolerance), not to the bit.
    assert measured["service.per_request_ms"] == pytest.approx(default["service.per_request_ms"] - 0.2, abs=1e-4)
    for key, value in default.items():
        if key != "service.per_request_ms":
            assert measured[key] == pytest.approx(value, rel=1e-4, abs=1e-6), key
    scenario = yaml.safe_load((tmp_path / "measured" / "scenario.yaml").read_text())
    assert scenario["cluster"]["network"]["latency_ms"] == 0.35
    assert "given (network_ms" in (tmp_path / "measured" / "scenario.yaml").read_text()
