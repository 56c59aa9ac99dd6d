"""A day of load over a tenant: each table's own profile, an hour's load the vector of their factors.

Expectations from the rule and from queueing, not from a run: a flat profile is the scenario as written, so
its day is that run to the bit (the tenant's p99 and each table's); with one table's 3x peak the shared
servers' utilisation follows the total rate (rate x work per query / capacity), every table's p99 rises and
falls with it, and the verdict binds on the peak; when two tables peak at different hours neither peak hour
is at least the other for every table, so both run, and an hour is inferred only under a simulated hour that
meets with the margin and is at least as loaded for every table.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from workbench.api import day, report
from workbench.errors import ScenarioError
from workbench.report.day import day_frame
from workbench.report.day_record import read_day
from workbench.runs import run_scenario
from workbench.scenario import load_scenario
from workbench.scenario.day_load import dominates

#: Two one-core servers shared by both tables; exponential 10 ms per request, every query reaches both
#: servers: each server's utilisation is (orders qps + clicks qps) x 10 ms.
CLUSTER: dict[str, Any] = {"servers": 2, "server": {"cores": 1}, "network": {"latency_ms": 0},
                           "broker": {"overhead_ms": 0, "reduce_ms_per_server": 0, "reduce_ms_per_row": 0}}
SIMULATION: dict[str, Any] = {"duration_s": 120, "warmup_s": 10, "replications": 2, "seed": 2, "engine": "fast"}
#: Night at 1, a morning and an afternoon peak at 3 (08:00 and 15:00).
THREE_X = [1, 1, 1, 1, 1, 1, 1.5, 2, 3, 2.5, 2, 1.5, 1.5, 2, 2.5, 3, 2, 1.5, 1, 1, 1, 1, 1, 1]


def _table(name: str, qps: float, hourly: list[float] | None, slo: float) -> dict[str, Any]:
    workload: dict[str, Any] = {"synthetic": {"segments_per_server": 1, "docs_per_segment": 1000},
                                "arrival": {"qps": qps}}
    if hourly is not None:
        workload["profile"] = {"hourly": hourly}
    return {"table": {"tableName": name, "tableType": "OFFLINE", "segmentsConfig": {"replication": 1}},
            "workload": workload, "service": {"model": "exponential", "mean_ms": 10}, "slo": {"p99_ms": slo}}


def _tenant(orders: list[float] | None, clicks: list[float] | None, slo: float = 100) -> dict[str, Any]:
    return {"cluster": copy.deepcopy(CLUSTER), "simulation": dict(SIMULATION),
            "tables": [_table("orders", 12, orders, slo), _table("clicks", 6, clicks, slo)]}


def test_a_flat_tenant_day_is_the_single_rate_run_exactly(tmp_path: Path) -> None:
    plain = run_scenario(_tenant(None, None), None).summary
    result = day(_tenant([1] * 24, None), tmp_path / "day")  # clicks has no profile: flat
    assert {s.run for s in result.steps} == {"load-x1-x1"}
    assert result.peak.p99_ms == plain.latency_ms.p99.value
    assert result.peak.utilisation == plain.utilisation.mean
    assert plain.tables is not None
    assert {t.table: t.p99_ms for t in result.peak.tables} == {
        name: t.latency_ms.p99.value for name, t in plain.tables.items()}
    assert result.peak.factors == (1.0, 1.0) and result.peak.factor == 1.0


def test_a_tenants_3x_peak_rises_and_falls_and_binds_at_the_peak(tmp_path: Path) -> None:
    full = day(_tenant(THREE_X, None), tmp_path / "full", every_step=True)
    by_factor = {s.factors[0]: s for s in full.steps}
    ordered = [by_factor[f] for f in (1, 1.5, 2, 2.5, 3)]
    for s in ordered:  # (12 x f + 6) queries/s x 10 ms on each one-core server
        assert s.utilisation == pytest.approx((12 * s.factors[0] + 6) * 0.010, rel=0.1)
        assert s.factor == pytest.approx((12 * s.factors[0] + 6) / 18)  # the tenant's total over factor 1's
    def p99(s: Any, table: str) -> float:
        return float(next(t.p99_ms for t in s.tables if t.table == table))

    assert [s.p99_ms for s in ordered] == sorted(s.p99_ms for s in ordered)  # the tenant's p99
    assert [p99(s, "orders") for s in ordered] == sorted(p99(s, "orders") for s in ordered)
    # clicks is flat, but shares the servers orders loads: its p99 too is higher at the peak than at night (its
    # ~1,300 queries put a dozen in its tail, too few to order the steps in between)
    assert p99(ordered[-1], "clicks") > p99(ordered[0], "clicks")
    hours = [s.p99_ms for s in full.steps]
    assert hours[8] == max(hours) and hours[8] > hours[5] and hours[8] > hours[11]
    assert full.binding == 8 and full.peak.factors == (3.0, 1.0)
    frame = day_frame(read_day(tmp_path / "full"))
    assert frame["p99_ms.orders"].iloc[8] == max(frame["p99_ms.orders"])  # the report's per-table p99 per hour

    ruled = day(_tenant(THREE_X, None), tmp_path / "full")  # the rule, reusing the full curve's runs
    assert ruled.binding == 8 and [s.meets for s in ruled.steps] == [s.meets for s in full.steps]
    page = report(tmp_path / "full", tmp_path / "day.pdf")
    assert page.is_file() and page.stat().st_size > 0


def test_tables_peaking_at_different_hours_run_both_peaks_and_infer_only_under_a_dominating_hour(
        tmp_path: Path) -> None:
    dashboards = [0.5] * 8 + [2] * 10 + [0.5] * 6  # the day: 08:00-18:00
    batch = [2] * 6 + [0.5] * 16 + [1] * 2  # the night
    result = day(_tenant(dashboards, batch, slo=400), tmp_path / "day")
    simulated = {s.factors for s in result.simulated()}
    assert {(2.0, 0.5), (0.5, 2.0)} <= simulated  # neither peak is at least the other for every table
    clear = [s.factors for s in result.simulated() if all(t.p99_high_ms <= 0.8 * 400 for t in s.tables)]
    for s in result.steps:
        if s.run is None:
            assert s.meets is True and any(dominates(c, s.factors) for c in clear)
    peaks = [s for s in result.simulated() if s.factors in {(2.0, 0.5), (0.5, 2.0)}]
    worst = max(peaks, key=lambda s: max(t.p99_high_ms for t in s.tables))
    assert result.peak.factors == worst.factors  # the verdict binds on the worse of the two peaks


@pytest.mark.parametrize(("change", "key", "says"), [
    (lambda sc: sc["tables"][1]["workload"].update(profile={"hourly": [1, -1] + [1] * 22}),
     "tables[1].workload.profile.hourly[1]", ""),
    (lambda sc: sc["tables"][1]["workload"].update(profile={"hourly": [1, None] + [1] * 22}),
     "tables[1].workload.profile.hourly[1]", ""),
    (lambda sc: sc["tables"][1]["workload"].update(profile={"hourly": [1] * 23}),
     "tables[1].workload.profile.hourly", "has 23 factors"),
    (lambda sc: sc["tables"][1]["table"].update(tableName="orders"), "tables[1].table.tableName",
     "also tables[0]'s"),
    (lambda sc: sc["tables"][1]["table"].update(tenants={"server": "gold"}), "tables[1].table.tenants.server",
     "tenant 'gold' has no servers"),
])
def test_a_bad_tenant_day_is_one_line_naming_the_key(change: Any, key: str, says: str) -> None:
    sc = _tenant(THREE_X, None)
    change(sc)
    with pytest.raises(ScenarioError) as err:
        load_scenario(sc)
    assert err.value.where == key and says in err.value.problem and "\n" not in str(err.value)
