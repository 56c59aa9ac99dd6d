"""The model's uncertainty: parameter draws, intervals beside the simulation's, and the robustness answer."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from workbench.analysis.stats import model_interval, with_model_intervals
from workbench.calibrate.uncertainty import ParameterDistribution, configurations, robust_answer
from workbench.io.summary import EXAMPLE, Summary
from workbench.studies.uncertainty import propagate, robustness_table


def _calibration(se_ns: float, se_sigma: float, se_segment: float = 0.1) -> dict[str, Any]:
    cross = 0.5 * se_ns * se_segment
    return {"fit": {
        "parameters": {"service.ns_per_doc": {"value": 8.0, "se": se_ns},
                       "service.per_segment_ms": {"value": 0.01, "se": se_segment},
                       "cluster.broker.overhead_ms": {"value": 1.0, "se": None}},
        "covariance": {"keys": ["service.ns_per_doc", "service.per_segment_ms"],
                       "matrix": [[se_ns**2, cross], [cross, se_segment**2]]},
        "variability": {"value": 0.3, "se": se_sigma}}}


def test_draws_follow_the_fitted_distribution_and_stay_non_negative() -> None:
    params = ParameterDistribution.from_calibration(_calibration(0.5, 0.02))
    assert params.fixed == {"cluster.broker.overhead_ms": 1.0}
    drawn = params.draw(20_000, np.random.default_rng(1))
    ns = np.array([d["service.ns_per_doc"] for d in drawn])
    sigma = np.array([d["service.variability"] for d in drawn])
    n = len(ns)
    assert abs(ns.mean() - 8.0) < 4 * 0.5 / np.sqrt(n) and ns.std() == pytest.approx(0.5, rel=0.05)
    assert abs(sigma.mean() - 0.3) < 4 * 0.02 / np.sqrt(n)
    assert min(d["service.per_segment_ms"] for d in drawn) == 0.0   # mean 0.01, se 0.1: clipped, never negative
    assert all(d["cluster.broker.overhead_ms"] == 1.0 for d in drawn)


def test_a_cost_error_scales_every_cost_but_not_the_variability() -> None:
    params = ParameterDistribution.from_calibration(_calibration(0.5, 0.02))
    scaled = params.scaled(1.2)
    assert scaled["service.ns_per_doc"] == pytest.approx(9.6) and scaled["cluster.broker.overhead_ms"] == 1.2
    assert scaled["service.variability"] == 0.3


def test_model_intervals_sit_beside_the_simulations() -> None:
    def with_p99(p99: dict[str, float]) -> Summary:
        return Summary.from_json({**EXAMPLE, "latency_ms": {**EXAMPLE["latency_ms"], "p99": p99}})

    summary = with_p99({"value": 30.0, "ci_low": 28.0, "ci_high": 32.0})
    draws = [with_p99({"value": v, "ci_low": v, "ci_high": v}) for v in (10.0, 20.0, 30.0, 40.0, 50.0)]
    out = with_model_intervals(summary, draws, confidence=0.5)
    assert out.to_json()["latency_ms"]["p99"] == {"value": 30.0, "ci_low": 28.0, "ci_high": 32.0, "model_low": 20.0,
                                                  "model_high": 40.0}
    assert out.model_uncertainty is not None and out.model_uncertainty.draws == 5
    assert "model_low" not in summary.to_json()["latency_ms"]["p99"]
    assert model_interval(np.array([np.nan, 1.0, 3.0]), 1.0) == (1.0, 3.0)


SCENARIO = {"cluster": {"servers": 2, "server": {"cores": 2}, "network": {"latency_ms": 0}},
            "table": {"tableName": "t", "tableType": "OFFLINE", "segmentsConfig": {"replication": 1}},
            "workload": {"synthetic": {"segments_per_server": 2, "docs_per_segment": 100_000},
                         "arrival": {"qps": 40}},
            "service": {"model": "cost", "ns_per_doc": 8.0, "variability": 0.3},
            "simulation": {"duration_s": 20, "warmup_s": 2, "replications": 2, "seed": 9}}


def test_without_parameter_uncertainty_common_random_numbers_give_no_model_spread() -> None:
    params = ParameterDistribution.from_calibration(_calibration(0.0, 0.0, 0.0))
    p99 = propagate(SCENARIO, params, draws=3).latency_ms.p99
    assert p99.model_low == p99.value == p99.model_high


def test_a_more_uncertain_cost_gives_a_wider_model_interval() -> None:
    narrow = propagate(SCENARIO, ParameterDistribution.from_calibration(_calibration(0.1, 0.0, 0.0)), draws=6)
    wide = propagate(SCENARIO, ParameterDistribution.from_calibration(_calibration(2.0, 0.0, 0.0)), draws=6)

    def width(s: Summary) -> float:
        p99 = s.latency_ms.p99
        assert p99.model_high is not None and p99.model_low is not None
        return float(p99.model_high - p99.model_low)

    assert width(wide) > 5 * width(narrow) > 0


def test_the_robustness_table_has_a_row_per_configuration_and_cost_scale() -> None:
    params = ParameterDistribution.from_calibration(_calibration(0.5, 0.0, 0.0))
    table = robustness_table(SCENARIO, configurations("cluster.servers", [1, 2]), params, draws=2)
    assert table[["config", "cost", "cost_scale"]].values.tolist() == [
        ["1 servers", 2, 1.0], ["1 servers", 2, 0.8], ["1 servers", 2, 1.2],
        ["2 servers", 4, 1.0], ["2 servers", 4, 0.8], ["2 servers", 4, 1.2]]
    nominal = table[table["cost_scale"] == 1.0]
    assert nominal["latency_ms.p99.model_high"].notna().all()
    lower, higher = (table[table["cost_scale"] == s]["latency_ms.p99.value"].to_numpy() for s in (0.8, 1.2))
    assert (lower < higher).all()   # the same arrivals and spreads, cheaper segments: faster


def _table() -> pd.DataFrame:
    rows = []
    # config, cost, p99 at fitted cost, its simulation high, its model high, p99 high at 0.8x and 1.2x
    for config, cost, value, ci_high, model_high, low, high in (
            ("4 servers", 32, 190.0, 195.0, 230.0, 160.0, 240.0),
            ("6 servers", 48, 150.0, 155.0, 185.0, 120.0, 210.0),
            ("8 servers", 64, 120.0, 125.0, 140.0, 100.0, 160.0)):
        rows.append({"config": config, "cost": cost, "cost_scale": 1.0, "latency_ms.p99.value": value,
                     "latency_ms.p99.ci_high": ci_high, "latency_ms.p99.model_high": model_high})
        rows += [{"config": config, "cost": cost, "cost_scale": s, "latency_ms.p99.value": v - 3,
                  "latency_ms.p99.ci_high": v} for s, v in ((0.8, low), (1.2, high))]
    return pd.DataFrame(rows)


def test_the_robust_answer_reads_nominal_uncertain_and_twenty_percent_off() -> None:
    answer = robust_answer(_table(), slo_p99_ms=200.0, cost_error=0.2)
    assert answer.nominal == "4 servers"          # 195 <= 200
    assert answer.robust == "6 servers"           # 4 servers' model high 230 > 200; 6 servers' 185
    assert answer.if_cost_higher == "8 servers"   # at 1.2x: 240, 210, 160
    assert answer.if_cost_lower == "4 servers"    # at 0.8x: 160
    assert answer.changes
    assert "6 servers" in answer.sentence() and "8 servers" in answer.sentence()
    assert answer.to_dict()["table"][0]["meets_slo"]


def test_a_sweep_table_without_model_intervals_reads_the_simulation_interval() -> None:
    table = _table()
    table = table[table["cost_scale"] == 1.0].drop(columns=["cost_scale", "latency_ms.p99.model_high"])
    answer = robust_answer(table, slo_p99_ms=160.0)
    assert answer.nominal == answer.robust == "6 servers"
    assert answer.if_cost_higher is None and "not run" in answer.sentence()
