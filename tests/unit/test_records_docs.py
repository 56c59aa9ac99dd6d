"""``docs/records.md`` lists exactly the columns each run table has, and a run produces exactly those."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from workbench.api import run_scenario
from workbench.sim.records import RUN_TABLES

DOC = (Path(__file__).resolve().parents[2] / "docs" / "records.md").read_text(encoding="utf-8")
SCENARIO = {
    "cluster": {"servers": 2, "server": {"cores": 1}, "failures": {"mtbf_s": 2, "mttr_s": 0.5},
                "gc": {"collector": "fixed", "interval_s": 1, "pause_ms": 20}},
    "workload": {"synthetic": {"segments_per_server": 1, "docs_per_segment": 100}, "arrival": {"qps": 20}},
    "service": {"model": "exponential", "mean_ms": 5},
    "simulation": {"duration_s": 6, "warmup_s": 1, "replications": 2, "seed": 1},
}


def _documented(table: str) -> list[str]:
    body = DOC.split(f"## `{table}`", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([a-z_]+)` \|", body, flags=re.M)


@pytest.mark.parametrize("table", list(RUN_TABLES))
def test_docs_list_exactly_the_columns_of_each_table(table: str) -> None:
    assert _documented(table) == list(RUN_TABLES[table])


def test_a_run_directory_holds_every_table_with_the_documented_columns(tmp_path: Path) -> None:
    run_scenario(SCENARIO, tmp_path / "run")
    for table, columns in RUN_TABLES.items():
        frame = pd.read_parquet(tmp_path / "run" / f"{table}.parquet")
        assert list(frame.columns) == list(columns), table
        assert len(frame) > 0, f"{table} is empty: the scenario should exercise it"
