"""The report's warnings: each fires exactly when its condition holds."""

from __future__ import annotations

import pandas as pd

from workbench.report.fragility import (
    Context,
    backtest_fit,
    busy,
    idle_servers,
    partial_results,
    slo_overlap,
    straddling,
)


def _row(**values: float) -> pd.Series:
    base = {"utilisation.mean": 0.3, "partial_rate": 0.0, "latency_ms.p99.value": 100.0,
            "latency_ms.p99.ci_low": 95.0, "latency_ms.p99.ci_high": 105.0}
    return pd.Series({**base, **values})


def test_busy_servers_warn_above_the_threshold() -> None:
    ctx = Context(200.0, utilisation_warning=0.7)
    assert busy(_row(**{"utilisation.mean": 0.69}), ctx) is None
    assert "71% busy" in (busy(_row(**{"utilisation.mean": 0.71}), ctx) or "")


def test_any_partial_result_warns() -> None:
    assert partial_results(_row(), Context(200.0)) is None
    assert "0.01%" in (partial_results(_row(partial_rate=0.0001), Context(200.0)) or "")


def test_servers_no_query_reached_warn() -> None:
    assert idle_servers(_row(servers_idle=0, servers=6), Context(200.0)) is None
    assert "2 of 6 servers received no query" in (idle_servers(_row(servers_idle=2, servers=6), Context(200.0)) or "")


def test_a_p99_interval_near_or_across_the_slo_warns() -> None:
    assert slo_overlap(_row(), Context(200.0)) is None  # 105 ms, far under 200
    assert "contains" in (slo_overlap(_row(), Context(100.0)) or "")  # [95, 105] contains 100
    assert "closer to" in (slo_overlap(_row(), Context(108.0)) or "")  # 3 ms left, interval 10 ms wide
    model = _row(**{"latency_ms.p99.model_high": 230.0})
    assert "parameter uncertainty" in (slo_overlap(model, Context(200.0)) or "")


def test_configurations_straddling_the_slo_are_named() -> None:
    table = pd.DataFrame({"shape": ["a", "b", "c"], "latency_ms.p99.ci_low": [90.0, 150.0, 210.0],
                          "latency_ms.p99.ci_high": [110.0, 205.0, 230.0]})
    text = straddling(_row(), Context(200.0, combined=table)) or ""
    assert text.startswith("1 configuration(s)") and "(b)" in text
    assert straddling(_row(), Context(300.0, combined=table)) is None


def test_a_poor_back_test_warns_and_a_good_one_does_not() -> None:
    good = {"overall": {"p50": {"difference_pct": 4.0}, "p99": {"difference_pct": -8.0}}}
    poor = {"overall": {"p50": {"difference_pct": 4.0}, "p99": {"difference_pct": -23.0}}}
    assert backtest_fit(_row(), Context(200.0, backtest=good)) is None
    assert "p99 -23%" in (backtest_fit(_row(), Context(200.0, backtest=poor)) or "")
    assert backtest_fit(_row(), Context(200.0)) is None  # not calibrated: nothing to warn about


def test_a_held_out_back_test_is_judged_on_the_held_out_part_and_says_so() -> None:
    held = {"overall": {"p50": {"difference_pct": 2.0}, "p99": {"difference_pct": 18.0}},
            "fitted_part": {"overall": {"p50": {"difference_pct": 1.0}, "p99": {"difference_pct": 3.0}}},
            "holdout": {"share": 0.3}}
    text = backtest_fit(_row(), Context(200.0, backtest=held)) or ""
    assert "p99 +18%" in text and "held-out last 30%" in text
