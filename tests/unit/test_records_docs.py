"""``docs/records.md`` lists exactly the columns each run table has, and a run produces exactly those."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

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
    return re.findall(r"^\| `([a-z_0-9]+)` \|", body, flags=re.M)


@pytest.mark.parametrize("table", list(RUN_TABLES))
def test_docs_list_exactly_the_columns_of_each_table(table: str) -> None:
    assert _documented(table) == list(RUN_TABLES[table])


def test_a_run_directory_holds_every_table_with_the_documented_columns(tmp_path: Path, upsert_trips: Any) -> None:
    """Every table has its documented columns, and one of the two runs fills each (``heap`` needs an upsert
    table whose keys come from its data)."""
    run_scenario(SCENARIO, tmp_path / "run")
    run_scenario(upsert_trips.scenario(), tmp_path / "upsert")
    for table, columns in RUN_TABLES.items():
        frames = [pd.read_parquet(tmp_path / run / f"{table}.parquet") for run in ("run", "upsert")]
        for frame in frames:
            assert list(frame.columns) == list(columns), table
        assert max(len(f) for f in frames) > 0, f"{table} is empty: the scenarios should exercise it"
