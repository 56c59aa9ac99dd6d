"""Sizing for the worst hour: a sweep point (and so a `workbench size` shape) of a profiled scenario runs at
the profile's peak.

The expectation is by construction, not from a run: factor F on a Poisson rate is the scenario at ``qps x F``
(the profile changes nothing else), so on one seed the profiled point and the unprofiled scenario at
``qps x F`` draw the same arrivals, work and delays and give the same queries and the same p99, to the bit.
A flat profile's peak is factor 1: the point is the scenario as written.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from workbench.api import profile_note
from workbench.cli import main
from workbench.io.run_dir import RunDir
from workbench.report.data import load_sizing_data
from workbench.report.findings import load_facts
from workbench.report.summary import load_rows
from workbench.runs import run_scenario
from workbench.scenario import load_scenario
from workbench.scenario.day_load import load_record, peak_phrase, worst_hours
from workbench.sizing import size
from workbench.sweep import run_sweep
from workbench.sweep.point import simulate_point

#: Two one-core servers, exponential 10 ms per request; short and cheap.
BASE: dict[str, Any] = {
    "cluster": {"servers": 2, "server": {"cores": 1}, "network": {"latency_ms": 0},
                "broker": {"overhead_ms": 0, "reduce_ms_per_server": 0, "reduce_ms_per_row": 0}},
    "table": {"tableName": "t", "tableType": "OFFLINE", "segmentsConfig": {"replication": 1}},
    "workload": {"synthetic": {"segments_per_server": 1, "docs_per_segment": 1000}, "arrival": {"qps": 10}},
    "service": {"model": "exponential", "mean_ms": 10},
    "slo": {"p99_ms": 100, "survive": "none"},
    "simulation": {"duration_s": 30, "warmup_s": 3, "replications": 1, "seed": 3, "engine": "fast"},
}
#: Night at 0.5, the peak x3 at 14:00.
PROFILE = [0.5] * 6 + [1, 1.5, 2, 2, 2.5, 2.5, 2.5, 2.5, 3, 2.5, 2, 1.5, 1, 1, 0.5, 0.5, 0.5, 0.5]


def _scenario(hourly: list[float] | None = None, qps: float = 10) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    data["workload"]["arrival"]["qps"] = qps
    if hourly is not None:
        data["workload"]["profile"] = {"hourly": hourly}
    return data


def test_a_profiled_sweep_point_is_the_scenario_at_its_peak_rate(tmp_path: Path) -> None:
    assert PROFILE.index(3) == 14 and max(PROFILE) == 3
    point = simulate_point(_scenario(PROFILE), {"cluster.servers": 2}, tmp_path / "point", seed=5)
    at_peak = run_scenario(_scenario(qps=30), None, seed=5).summary
    assert point.summary.queries == at_peak.queries
    assert point.summary.latency_ms.p99.value == at_peak.latency_ms.p99.value
    assert point.scenario["workload"]["arrival"]["qps"] == 30  # the load is in the recorded scenario
    assert point.overrides == {"cluster.servers": 2}  # the user's overrides only: a resumed sweep finds it
    as_written = run_scenario(_scenario(), None, seed=5).summary
    assert as_written.queries < point.summary.queries  # x1 is not what was sized


def test_a_flat_profile_sizes_the_scenario_as_written(tmp_path: Path) -> None:
    point = simulate_point(_scenario([1] * 24), {}, tmp_path / "point", seed=5)
    plain = run_scenario(_scenario(), None, seed=5).summary
    assert (point.summary.queries, point.summary.latency_ms.p99.value) == (plain.queries, plain.latency_ms.p99.value)


def test_the_sweep_records_the_hour_and_factor_it_sized_at(tmp_path: Path) -> None:
    sc = load_scenario(_scenario(PROFILE))
    record = load_record(sc)
    assert record is not None and (record["hour"], record["factor"], record["step"]) == (14.0, 3.0, 14)
    assert peak_phrase(sc) == "at the peak hour (hour 14, x3)"
    combined = run_sweep(_spec(tmp_path), tmp_path / "sweep", parallel=1)
    assert list(combined["status"]) == ["ok"]
    manifest = json.loads((tmp_path / "sweep" / "sweep.json").read_text())
    assert manifest["load"]["hour"] == 14 and manifest["load"]["factor"] == 3
    assert "hour 14, x3" in manifest["load"]["phrase"]
    queries = dict(load_rows(load_facts(load_sizing_data(tmp_path / "sweep"), None)))["Queries"]
    assert "queries/s at the brokers at the peak hour (hour 14, x3)" in queries  # the report's sizing page
    assert load_record(load_scenario(BASE)) is None and peak_phrase(load_scenario(BASE)) == ""


def _spec(tmp_path: Path) -> Any:
    from workbench.sweep import parse_sweep

    return parse_sweep({"base": _scenario(PROFILE), "points": [{"cluster.servers": 2}]}, base_dir=tmp_path)


def test_a_single_run_says_it_is_the_rate_as_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    note = profile_note(load_scenario(_scenario(PROFILE)))
    assert "peaks at x3 (hour 14)" in note and "rate as written" in note and "workbench day" in note
    assert profile_note(load_scenario(BASE)) == ""
    path = tmp_path / "profiled.yaml"
    path.write_text(yaml.safe_dump(_scenario(PROFILE)))
    assert main(["simulate", str(path), "--out", str(tmp_path / "run")]) == 0
    line = capsys.readouterr().out
    assert "NOTE: the day profile peaks at x3 (hour 14); this run is the rate as written" in line
    assert RunDir(tmp_path / "run").record().scenario["workload"]["arrival"]["qps"] == 10  # as written: not the peak


@pytest.mark.parametrize(("a", "b", "worst"), [
    # the two tables peak at different hours: both hours are worst (neither is at least the other everywhere)
    ([1] * 12 + [3] * 12, [3] * 12 + [1] * 12, [(3.0, 1.0), (1.0, 3.0)]),
    # they peak together: one worst hour
    ([1] * 12 + [3] * 12, [1] * 12 + [2] * 12, [(3.0, 2.0)]),
])
def test_a_tenants_worst_hours_are_those_no_other_hour_exceeds_for_every_table(
        a: list[float], b: list[float], worst: list[tuple[float, ...]]) -> None:
    sc = load_scenario(_tenant(a, b))
    assert sorted(h.factors for h in worst_hours(sc)) == sorted(worst)


def _tenant(a: list[float] | None, b: list[float] | None, qps: tuple[float, float] = (10, 10),
            slo: float = 100) -> dict[str, Any]:
    tables = []
    for name, hourly, rate in (("orders", a, qps[0]), ("clicks", b, qps[1])):
        workload: dict[str, Any] = {"synthetic": {"segments_per_server": 1, "docs_per_segment": 1000},
                                    "arrival": {"qps": rate}}
        if hourly is not None:
            workload["profile"] = {"hourly": hourly}
        tables.append({"table": {"tableName": name, "tableType": "OFFLINE", "segmentsConfig": {"replication": 1}},
                       "workload": workload, "service": {"model": "exponential", "mean_ms": 10},
                       "slo": {"p99_ms": slo}})
    return {"cluster": BASE["cluster"], "simulation": BASE["simulation"], "tables": tables}


def test_a_tenant_point_runs_each_worst_hour_and_keeps_the_worse(tmp_path: Path) -> None:
    # orders peaks in the afternoon (x3), clicks in the morning (x3): neither hour is at least the other for both
    data = _tenant([1] * 12 + [3] * 12, [3] * 12 + [1] * 12, qps=(10, 5), slo=400)  # met in both: both run
    point = simulate_point(data, {}, tmp_path / "point", seed=5)
    hours = []
    for orders, clicks in ((30, 5), (10, 15)):  # each worst hour run directly: the tables at qps x factor
        at = copy.deepcopy(data)
        at["tables"][0]["workload"]["arrival"]["qps"], at["tables"][1]["workload"]["arrival"]["qps"] = orders, clicks
        hours.append(run_scenario(at, None, seed=5).summary)

    def margin(s: Any) -> float:  # both tables' SLO is 400 ms: the worse hour has the higher p99 upper end
        return max(t.latency_ms.p99.bound() for t in s.tables.values())

    worse = max(hours, key=margin)
    assert (point.summary.queries, point.summary.latency_ms.p99.value) == (worse.queries, worse.latency_ms.p99.value)
    assert [p.name for p in tmp_path.iterdir()] == ["point"]  # the other hour's run is not left behind
    ran = json.loads((tmp_path / "point" / "worst_hours.json").read_text())
    assert [h["queries"] for h in ran["hours"]] == [s.queries for s in hours]
    assert ran["hours"][ran["kept"]]["queries"] == worse.queries


def test_a_tenant_point_stops_at_the_first_worst_hour_that_breaks_the_slo(tmp_path: Path) -> None:
    # a 1 ms SLO is broken in the heaviest hour (orders x3 + clicks x1: 35 queries/s): the shape fails there,
    # whatever the other hour gives, so the other hour is not run
    data = _tenant([1] * 12 + [3] * 12, [3] * 12 + [1] * 12, qps=(10, 5), slo=1)
    point = simulate_point(data, {}, tmp_path / "point", seed=5)
    ran = json.loads((tmp_path / "point" / "worst_hours.json").read_text())
    assert [h["factors"] for h in ran["hours"]] == [{"orders": 3.0, "clicks": 1.0}] and ran["hours"][0]["breaks_slo"]
    assert point.summary.slo.met is False


def test_size_records_the_hour_each_shape_was_sized_at(tmp_path: Path) -> None:
    data = _scenario(PROFILE)
    data["sizing"] = {"servers": {"min": 2, "max": 3}}
    data["slo"]["survive"] = "none"
    record = size(data, tmp_path / "size", exhaustive=True, parallel=1, studies=False, base_dir=tmp_path)
    assert record["load"]["hour"] == 14 and record["load"]["factor"] == 3
    assert [e["hour"] for e in record["evaluated"]] == ["hour 14, x3", "hour 14, x3"]
    assert record["runs"] >= 2
