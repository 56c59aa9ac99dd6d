"""A table that is not ours, generated in its own schema, against Pinot: Pinot's airlineStats example.

`scenarios/airline.yaml` takes Pinot 1.5.1's airlineStats realtime table config and schema unchanged and
generates rows in the schema's own columns and types (`workload.generate.from_schema`: a day time column,
multi-value columns, four stream partitions, hourly flushes). `workbench agree` builds those rows into
segments with Pinot's own segment creator and runs the generated queries, which filter on the user's own
columns, through Pinot's broker and servers: Pinot's answers (segments pruned and scanned, servers
queried) are the expected values.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.api import load_generate_spec
from workbench.cli import main
from workbench.scenario import load_scenario
from workbench.workload.pure import generate_local

ROOT = Path(__file__).resolve().parents[2]
QUERIES = 60


@pytest.fixture(scope="module")
def agreed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(workload directory, agree output) of one ``workbench agree`` run on a small airline workload."""
    root = tmp_path_factory.mktemp("agree-airline")
    sc = load_scenario(ROOT / "scenarios" / "airline.yaml").with_overrides({
        "workload.generate.events": 6000, "workload.generate.span_s": "1d",
        "workload.generate.queries.duration_s": 60})
    data = sc.to_dict()
    data["table"] = str(ROOT / "scenarios" / "tables" / "airlineStats_realtime_table_config.json")
    data["schema"] = str(ROOT / "scenarios" / "tables" / "airlineStats_schema.json")
    data["workload"]["data"] = str(root / "workload")
    scenario = root / "scenario.json"
    scenario.write_text(json.dumps(data))
    loaded = load_scenario(scenario)
    spec, table, _, config = load_generate_spec(loaded)
    generate_local(spec, root / "workload", table=table, table_config=config, progress=False, schema=loaded.schema)
    out = root / "agreed"
    assert main(["agree", str(scenario), "--out", str(out), "--queries", str(QUERIES)]) == 0
    return root / "workload", out


def test_pinot_builds_the_schemas_rows_and_agrees_on_every_query(agreed: tuple[Path, Path]) -> None:
    _, out = agreed
    agreement = json.loads((out / "agreement.json").read_text())
    assert agreement["pinot_version"] == "1.5.1" and agreement["queries"] == QUERIES
    assert agreement["agreed"] == QUERIES, agreement["disagreements"][:3]
    schema = json.loads((out / "schema.json").read_text())
    ours = json.loads((ROOT / "scenarios" / "tables" / "airlineStats_schema.json").read_text())
    assert schema["schemaName"] == ours["schemaName"]  # Pinot was given the user's schema, not one we derived


def test_the_queries_use_the_users_columns_and_prune_by_day(agreed: tuple[Path, Path]) -> None:
    import pandas as pd

    workload, _ = agreed
    sqls = pd.read_parquet(workload / "queries.parquet")["sql"]
    assert not sqls.str.contains("event_time_ms|key_id").any()  # none of the generator's own columns
    assert sqls.str.contains("DaysSinceEpoch").any()
    segments = pd.read_parquet(workload / "segments.parquet")
    assert len(segments) > 4  # hourly flushes over a day on 4 partitions: many segments to prune among
