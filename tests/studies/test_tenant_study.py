"""Adding a table to a tenant: the tables already there, without and with it, on common random numbers."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from workbench.errors import ScenarioError
from workbench.runs import run_checked
from workbench.scenario import load_scenario
from workbench.studies.tenant import table_added


def _table(name: str, qps: float, mean_ms: float, slo: dict[str, Any] | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"table": {"tableName": name, "tableType": "OFFLINE"},
                             "workload": {"synthetic": {"segments_per_server": 1, "docs_per_segment": 100},
                                          "arrival": {"qps": qps}},
                             "service": {"model": "exponential", "mean_ms": mean_ms}}
    return {**entry, "slo": slo} if slo else entry


SCENARIO = {
    "cluster": {"servers": 2, "server": {"cores": 2}, "network": {"latency_ms": 0},
                "broker": {"overhead_ms": 0, "reduce_ms_per_server": 0, "reduce_ms_per_row": 0}},
    # the new table is listed first: the study moves it last, so the others keep their draws
    "tables": [_table("heavy", 100, 10), _table("orders", 40, 5, {"p99_ms": 100}), _table("clicks", 20, 5)],
    "simulation": {"duration_s": 20, "warmup_s": 2, "replications": 1, "seed": 9, "engine": "fast"},
}


def test_adding_a_table_shows_each_other_tables_p99_and_its_tenants_load() -> None:
    sc = load_scenario(SCENARIO)
    rows = table_added(sc, "heavy").set_index("table")
    assert list(rows.index) == ["orders", "clicks"]
    # heavy adds 100 qps x 10 ms on each server's 2 cores: utilisation + 0.5 (measured over the whole run)
    added = rows["utilisation_with"] - rows["utilisation_without"]
    assert added.between(0.45, 0.55).all(), added
    assert (rows["p99_with_ms"] > rows["p99_without_ms"]).all()
    assert rows.loc["orders", "p99_slo_ms"] == 100 and rows.loc["clicks", "slo_met_with"] is None
    # the run without the table is the tenant of the two others, draw for draw
    alone = load_scenario({**SCENARIO, "tables": SCENARIO["tables"][1:]})
    tables = run_checked(alone, None).summary.tables
    assert tables is not None and tables["orders"].latency_ms.p99.value == rows.loc["orders", "p99_without_ms"]


def test_a_table_the_scenario_does_not_list_is_an_error_naming_tables() -> None:
    with pytest.raises(ScenarioError, match="has no table 'audit'"):
        table_added(load_scenario(SCENARIO), "audit")


def test_the_cli_prints_one_line_per_table(tmp_path: Any, capsys: Any) -> None:
    import yaml

    from workbench.cli import main

    path = tmp_path / "tenant.yaml"
    path.write_text(yaml.safe_dump(SCENARIO))
    assert main(["table-added", str(path), "heavy"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[0] == "orders" and "SLO 100 ms" in lines[0] and lines[1].split()[0] == "clicks"
    assert lines[-1] == "adding heavy moves the p99 of 2 tables above"


def test_with_day_profiles_the_tables_are_compared_at_the_tenants_worst_hour() -> None:
    """orders peaks x3 at hour 2 of a 4-step day, heavy is flat: hour 2's load (3, 1) is at least every other
    hour's for both tables, so it is the one worst hour, and both runs are at orders x3 (120 queries/s)."""
    profiled = copy.deepcopy(SCENARIO)
    profiled["tables"] = [copy.deepcopy(SCENARIO["tables"][0]), copy.deepcopy(SCENARIO["tables"][1])]
    profiled["tables"][1]["workload"]["profile"] = {"hourly": [1, 1, 3, 1]}
    profiled["tables"][0]["workload"]["profile"] = {"hourly": [1, 1, 1, 1]}
    rows = table_added(load_scenario(profiled), "heavy").set_index("table")
    assert rows.loc["orders", "hour"] == "hour 12: orders x3, heavy x1"
    # the run without heavy at that hour is the orders table alone at 3 x 40 queries/s, draw for draw
    alone = copy.deepcopy(SCENARIO["tables"][1])
    alone["workload"]["arrival"]["qps"] = 120
    tables = run_checked(load_scenario({**SCENARIO, "tables": [alone]}), None).summary.tables
    assert tables is not None and tables["orders"].latency_ms.p99.value == rows.loc["orders", "p99_without_ms"]
