"""Calibration recovers a known cost model from its own query log, and the model then reproduces the log.

The log comes from the test's own model of a cluster (``synthetic_cluster.py``: 3 servers, 96 hourly
segments of 0.2M-2M documents, aggregations, group-bys and selections over 1-24 hour windows, a
per-segment lognormal spread of log-sigma 0.3, Pinot's millisecond clock), written as a 1.5 broker writes
``querylog.log``. Parameters must lie within three of their stated standard errors of the truth (each
alone, 99.7% if the errors are right) and jointly inside the 99.9% chi-square ellipse of their stated
covariance; the back-test must match the log's p50 and p99 within 10%.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import synthetic_cluster as cluster
import yaml
from scipy import stats

from workbench.calibrate import CalibrateOptions, CalibrationResult, calibrate
from workbench.scenario import load_scenario
from workbench.studies.backtest import backtest

QUERIES = 8000


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory: pytest.TempPathFactory) -> CalibrationResult:
    root = tmp_path_factory.mktemp("calibrate")
    paths = cluster.write_cluster(root / "in", cluster.queries(QUERIES, qps=4.0, seed=11))
    options = CalibrateOptions(backtest_queries=QUERIES, replications=3, bootstrap=400, seed=5)  # 8 cores: default
    return calibrate(paths["table_config"], paths["schema"], paths["segments"], paths["query_log"], root / "out",
                     options=options, backtest=backtest)


def test_every_parameter_is_fitted_and_within_three_standard_errors(calibrated: CalibrationResult) -> None:
    for key, true in cluster.TRUE.items():
        p = calibrated.fit.parameter(key)
        assert p.fitted and p.se is not None and p.se > 0, (key, p)
        assert abs(p.value - true) <= 3 * p.se, (key, p.value, true, p.se)


def test_the_parameters_are_jointly_inside_their_stated_uncertainty(calibrated: CalibrationResult) -> None:
    fit = calibrated.fit
    keys = list(fit.fitted_keys)
    assert keys[-1] == "service.variability"
    true = {**cluster.TRUE, "service.variability": cluster.SIGMA}
    error = np.array([fit.value(k) - true[k] for k in keys[:-1]] + [fit.variability.sigma - cluster.SIGMA])
    distance = float(error @ np.linalg.solve(fit.covariance, error))
    assert distance <= stats.chi2.ppf(0.999, len(keys)), distance


def test_the_variability_is_recovered_from_the_residuals(calibrated: CalibrationResult) -> None:
    v = calibrated.fit.variability
    assert v.se is not None and abs(v.sigma - cluster.SIGMA) <= 3 * v.se, v


def test_the_back_test_matches_the_log_within_ten_percent_at_p50_and_p99(calibrated: CalibrationResult) -> None:
    assert calibrated.backtest is not None
    overall = calibrated.backtest["overall"]
    for label in ("p50", "p99"):
        assert abs(overall[label]["difference_pct"]) <= 10.0, (label, overall[label])
    assert set(calibrated.backtest["by_kind"]) == {"aggregation", "group-by", "selection"}
    assert calibrated.backtest["verdict"].startswith("trust the model")


def test_the_model_routes_each_query_to_the_segments_and_servers_the_log_shows(calibrated: CalibrationResult) -> None:
    assert calibrated.backtest is not None
    fan = calibrated.backtest["fan_out"]
    for what in ("segments_per_query", "servers_per_query"):
        assert fan[what]["model"] == pytest.approx(fan[what]["log"], rel=1e-9)


def test_the_scenario_says_where_each_value_came_from_and_loads(calibrated: CalibrationResult) -> None:
    text = calibrated.scenario_path.read_text(encoding="utf-8")
    lines = {line.split(":")[0].strip(): line for line in text.splitlines() if not line.lstrip().startswith("#")}
    assert "DEFAULT" in lines["cores"] and "fitted" in lines["ns_per_doc"] and "serverStats" in lines["servers"]
    assert "DEFAULT" in text.split("latency_ms:")[0].rsplit("\n", 2)[-2]   # the comment above the network delay
    sc = load_scenario(calibrated.scenario_path)
    assert sc.cluster.servers == cluster.SERVERS
    assert sc.service.ns_per_doc == pytest.approx(calibrated.fit.value("service.ns_per_doc"), rel=1e-5)
    assert sc.workload.arrival.process == "replay" and sc.table.table_name_with_type == "events_OFFLINE"


def test_one_workload_directory_holds_the_segments_and_the_replayed_queries(calibrated: CalibrationResult) -> None:
    import pandas as pd

    work = calibrated.out / "workload"
    assert len(pd.read_parquet(work / "segments.parquet")) == cluster.SEGMENTS
    queries = pd.read_parquet(work / "queries.parquet")
    assert len(queries) == QUERIES and queries["arrival_s"].is_monotonic_increasing
    manifest = json.loads((work / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["row_counts"]["queries"] == QUERIES
    saved = json.loads((calibrated.out / "backtest.json").read_text(encoding="utf-8"))
    assert saved["overall"]["p99"]["observed"] == calibrated.backtest["overall"]["p99"]["observed"]  # type: ignore[index]
    fit = yaml.safe_load((calibrated.out / "calibration.json").read_text(encoding="utf-8"))["fit"]
    # the servers' costs and the variability are fitted jointly; the broker's to its own share of each query
    # (serverStats), each with its own standard error
    assert set(fit["covariance"]["keys"]) == {*(k for k in cluster.TRUE if k.startswith("service.")),
                                              "service.variability"}
    assert all(fit["parameters"][k]["se"] > 0 for k in cluster.TRUE if k.startswith("cluster.broker."))


def test_logs_of_different_pinot_versions_calibrate_alike(tmp_path: Path) -> None:
    logged = cluster.queries(1500, qps=4.0, seed=3)
    fits = {}
    for version in ("1.5", "1.3", "0.x"):
        paths = cluster.write_cluster(tmp_path / version, logged, version)
        result = calibrate(paths["table_config"], paths["schema"], paths["segments"], paths["query_log"],
                           tmp_path / f"out-{version}",
                           options=CalibrateOptions(server_cores=8, backtest_queries=0, bootstrap=50, seed=1))
        fits[version] = {p.key: p.value for p in result.fit.parameters} | {"sigma": result.fit.variability.sigma}
    assert fits["1.3"] == pytest.approx(fits["1.5"], rel=1e-9)
    assert fits["0.x"] == pytest.approx(fits["1.5"], rel=1e-9)
