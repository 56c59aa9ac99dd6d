"""The judging SLO is decided once, from the scenario: a sweep point (``slo_verdicts``) and a what-if run
(``whatif_row``) of the same numbers get the same verdict, and it is the one the judging SLO gives: one table's
p99 interval against its ``slo.p99_ms``, or a tenant's run by its own verdict (each table against its own)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from workbench.io.summary import EXAMPLE, Summary
from workbench.report.data import SizingData
from workbench.report.judging import Judging, slo_verdicts
from workbench.report.summary import question_target
from workbench.report.tenant import table_lines, tables_section
from workbench.report.whatif import WhatIf, WhatIfRun, whatif_row
from workbench.scenario import load_scenario

WORKLOAD = {"synthetic": {"segments_per_server": 1, "docs_per_segment": 10}}


def _entry(name: str, slo_ms: float | None) -> dict[str, Any]:
    return {"table": {"tableName": name, "tableType": "OFFLINE"}, "workload": WORKLOAD,
            "slo": {} if slo_ms is None else {"p99_ms": slo_ms}}


def _p99(value: float, high: float) -> dict[str, float]:
    return {"value": value, "ci_low": value - 5.0, "ci_high": high}


def _summary(value: float, high: float, met: bool | None, tables: dict[str, tuple[float, bool]] | None = None
             ) -> Summary:
    """A run's summary with its p99 (value, interval's upper end) and its own verdict; ``tables``: a tenant's,
    each table's p99 upper end and its verdict against its own SLO."""
    data: dict[str, Any] = {**EXAMPLE, "latency_ms": {**EXAMPLE["latency_ms"], "p99": _p99(value, high)},
                            "slo": {"met": met, "checks": {}, "why": ""}}
    if tables is not None:
        data["tables"] = {name: {"tenant": "DefaultTenant", "queries": 500, "throughput_qps": 50.0,
                                 "partial_rate": 0.0, "query_error_share": 0.0, "servers_queried_mean": 2.0,
                                 "segments_queried_mean": 4.0, "utilisation": {"mean": 0.4, "max": 0.5},
                                 "latency_ms": {**EXAMPLE["latency_ms"], "p99": _p99(t_high - 5.0, t_high)},
                                 "slo": {"met": t_met, "checks": {}, "why": ""}}
                          for name, (t_high, t_met) in tables.items()}
    return Summary.from_json(data)


def test_the_judging_slo_is_read_from_the_scenario_once() -> None:
    one, none = load_scenario(_entry("orders", 100)), load_scenario(_entry("orders", None))  # the classic form
    tenant = load_scenario({"tables": [_entry("orders", 60), _entry("heavy", 400), _entry("clicks", None)]})
    single_entry = load_scenario({"tables": [_entry("orders", 60)]})
    assert Judging.of(one) == Judging(100.0) and Judging.of(none) == Judging()
    # a tenant's scenario ``slo`` is its first table's (60): the judging SLO is each table's, never that one
    assert tenant.slo.p99_ms == 60
    assert Judging.of(tenant) == Judging(None, {"orders": 60, "heavy": 400, "clicks": None})
    assert Judging.of(single_entry) == Judging(60.0)  # one table: its p99 is the table's
    assert (Judging.of(tenant).judged, Judging.of(none).judged) == (True, False)
    assert Judging.of(tenant).tightest_ms == 60
    with pytest.raises(ValueError):
        Judging(60.0, {"orders": 60.0})


# (p99 value, interval's upper end, run's verdict) and whether it meets, computed by hand:
#   one table, SLO 100 ms: meets when the upper end is <= 100 and the run's verdict is not False
SINGLE = [((80.0, 95.0, True), True),     # 95 <= 100
          ((90.0, 100.0, None), True),    # 100 <= 100, no verdict of its own
          ((90.0, 105.0, None), False),   # 105 > 100
          ((70.0, 90.0, False), False)]   # under the SLO, but the run broke its heap SLO
#   a tenant (orders 60 ms, heavy 400 ms): the tenant's p99 (170, over the tightest table's 60) is no verdict;
#   the run's verdict (every table against its own) is
TENANT = [((150.0, 170.0, True, {"orders": (50.0, True), "heavy": (170.0, True)}), True),
          ((150.0, 170.0, False, {"orders": (70.0, False), "heavy": (170.0, True)}), False)]


@pytest.mark.parametrize(("judging", "cases"), [(Judging(100.0), SINGLE),
                                                (Judging(tables={"orders": 60.0, "heavy": 400.0}), TENANT)],
                         ids=["single-table", "tenant"])
def test_a_point_and_a_what_if_of_the_same_run_get_the_judging_slos_verdict(
        judging: Judging, cases: list[tuple[tuple[Any, ...], bool]]) -> None:
    summaries = [_summary(*args) for args, _ in cases]
    expected = [meets for _, meets in cases]
    points = pd.DataFrame([s.columns() for s in summaries])  # as combined.parquet holds the sweep's points
    meets, robust = slo_verdicts(points, judging)
    assert meets.tolist() == expected and robust.tolist() == expected  # no model interval on these
    rows = [whatif_row(WhatIfRun(WhatIf("load-x1.5", "load x1.5"), s), judging) for s in summaries]
    assert [r["meets_slo"] for r in rows] == expected


def test_without_an_slo_only_the_runs_own_verdict_rules_a_point_out() -> None:
    summaries = [_summary(500.0, 900.0, None), _summary(10.0, 12.0, False)]
    meets, _ = slo_verdicts(pd.DataFrame([s.columns() for s in summaries]), Judging())
    assert meets.tolist() == [True, False]
    assert [whatif_row(WhatIfRun(WhatIf("w", "w"), s), Judging())["meets_slo"] for s in summaries] == [True, False]


def test_the_pages_say_what_the_judging_slo_judges_by() -> None:
    """The tenant's page and page 1's table lines follow the judging SLO, not the columns: a run of one
    ``tables:`` entry has ``tables.*`` columns but is one table, judged by its p99 SLO."""
    row = pd.Series(_summary(150.0, 170.0, True, {"orders": (50.0, True), "heavy": (170.0, True)}).columns())
    row["shape"] = "3 servers"
    tenant = SizingData(pd.DataFrame([row]), {}, Judging(tables={"orders": 60.0, "heavy": None}), "s", {})
    assert table_lines(tenant, row) == ["orders: p99 45 ms [40, 50] against 60 ms, meets",
                                        "heavy: p99 165 ms [160, 170] (no SLO)"]
    assert "each table's p99 under its own SLO (orders 60 ms, heavy none" in question_target(tenant)
    one = SizingData(pd.DataFrame([row]), {}, Judging(60.0), "s", {})
    assert table_lines(one, row) == [] and tables_section(one, row) == []
    assert "with p99 under 60 ms" in question_target(one)
