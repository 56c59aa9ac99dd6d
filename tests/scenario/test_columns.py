"""Column names: the table config against its schema, and both against the columns the generator writes.

Each case used to pass ``workbench validate`` and fail later (after Spark had started) or never; now
each is one error at load, naming the key, the file and both names. Pinot's own example configs still
validate unchanged.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from workbench.api import check_scenario
from workbench.cli import main
from workbench.errors import ScenarioError
from workbench.scenario import load_scenario

EXAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "pinot_examples"
TIME = {"name": "event_time_ms", "dataType": "LONG", "format": "1:MILLISECONDS:EPOCH", "granularity": "1:MILLISECONDS"}
#: Every column the generated query templates name: a schema with these can replay generated queries.
GENERATED = [{"name": n, "dataType": t} for n, t in (("key", "STRING"), ("category", "STRING"),
                                                     ("is_delete", "BOOLEAN"))]
METRICS = [{"name": "value", "dataType": "DOUBLE"}, {"name": "ingest_time_ms", "dataType": "LONG"}]


def scenario(dimensions: list[dict[str, Any]], *, metrics: list[dict[str, Any]] | None = None,
             partition: str | None = None, process: str = "replay", schema: bool = True) -> dict[str, Any]:
    table: dict[str, Any] = {"tableName": "t", "tableType": "REALTIME",
                             "segmentsConfig": {"timeColumnName": "event_time_ms", "replicasPerPartition": "1"}}
    if partition:
        table["tableIndexConfig"] = {"segmentPartitionConfig": {"columnPartitionMap": {
            partition: {"functionName": "Murmur", "numPartitions": 4}}}}
    out = {"cluster": {"servers": 4}, "table": table,
           "workload": {"generate": {"events": 1000, "partitions": 4}, "arrival": {"process": process}}}
    if schema:
        out["schema"] = {"schemaName": "t", "dimensionFieldSpecs": dimensions,
                         "metricFieldSpecs": METRICS if metrics is None else metrics, "dateTimeFieldSpecs": [TIME]}
    return out


def test_a_schema_with_every_generated_column_validates() -> None:
    check_scenario(scenario(GENERATED))


@pytest.mark.parametrize("column", ["event_id", "segment_name", "doc_id", "partition", "offset"])
def test_a_schema_column_named_like_generator_bookkeeping_is_refused(column: str) -> None:
    """The user's column and the generator's, the field list it sits in, and the fix: rename."""
    with pytest.raises(ScenarioError) as caught:
        check_scenario(scenario([*GENERATED, {"name": column, "dataType": "STRING"}]))
    assert caught.value.where == "schema.dimensionFieldSpecs[3].name"
    problem = caught.value.problem
    assert f"your column {column!r} (in dimensionFieldSpecs)" in problem
    assert f"the generator's own column {column!r}" in problem and "rename your column" in problem


def test_the_clash_is_checked_only_when_the_data_is_generated() -> None:
    """A synthetic workload writes no rows: a real schema with an ``event_id`` column is fine there."""
    data = scenario([*GENERATED, {"name": "event_id", "dataType": "LONG"}])
    data["workload"] = {"synthetic": {"segments_per_server": 1, "docs_per_segment": 10}}
    check_scenario(data)


def test_an_upsert_comparison_column_named_offset_is_the_generators_offset() -> None:
    data = scenario([*GENERATED, {"name": "offset", "dataType": "LONG"}])
    data["table"] |= {"routing": {"instanceSelectorType": "strictReplicaGroup"},
                      "upsertConfig": {"mode": "FULL", "comparisonColumns": ["offset"]}}
    data["schema"]["primaryKeyColumns"] = ["key"]
    check_scenario(data)


def test_workbench_validate_names_the_clash_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: 'ok', then ``generate`` failed after Spark had started with "cannot partition by 'event_id'"."""
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(scenario([*GENERATED, {"name": "event_id", "dataType": "LONG"}],
                                            partition="event_id")))
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "schema.dimensionFieldSpecs[3].name" in err and "'event_id'" in err and "rename" in err


def test_a_partition_column_the_generator_cannot_hash_fails_at_validate_without_a_schema() -> None:
    with pytest.raises(ScenarioError) as caught:
        check_scenario(scenario([], partition="segment_name", schema=False))
    assert caught.value.where == "table.tableIndexConfig.segmentPartitionConfig.columnPartitionMap.segment_name"
    assert "the generator cannot partition by 'segment_name'" in caught.value.problem


def test_a_replayed_template_naming_a_column_the_schema_lacks_is_named() -> None:
    """The schema lacks ``value``: dashboard template 2 (``SUM(value)``) is the first to name it."""
    with pytest.raises(ScenarioError) as caught:
        check_scenario(scenario(GENERATED, metrics=[{"name": "ingest_time_ms", "dataType": "LONG"}]))
    assert caught.value.where == "schema"
    problem = caught.value.problem
    assert problem.startswith("has no column 'value', which generated dashboard query template 2 names "
                              "(SELECT SUM(value)")
    assert "workload.arrival.process: poisson" in problem


def test_templates_of_a_kind_not_generated_are_not_checked() -> None:
    """Without ``is_delete`` only lookup template 14 fails; with no lookups generated, nothing does."""
    no_delete = [c for c in GENERATED if c["name"] != "is_delete"]
    with pytest.raises(ScenarioError, match="lookup query template 14"):
        check_scenario(scenario(no_delete))
    data = scenario(no_delete)
    data["workload"]["generate"]["queries"] = {"lookup_qps": 0}
    check_scenario(data)


def test_poisson_arrivals_replay_no_generated_query() -> None:
    check_scenario(scenario([{"name": "key", "dataType": "STRING"}], metrics=[], process="poisson"))


def _write(tmp_path: Path, table: dict[str, Any], schema: dict[str, Any]) -> Path:
    (tmp_path / "table.json").write_text(json.dumps(table))
    (tmp_path / "schema.json").write_text(json.dumps(schema))
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({"table": "table.json", "schema": "schema.json", "cluster": {"servers": 2},
                                    "workload": {"synthetic": {"segments_per_server": 1, "docs_per_segment": 10}}}))
    return path


@pytest.mark.parametrize(("change", "key", "column"), [
    ({"segmentsConfig": {"timeColumnName": "when", "replication": "1"}}, "segmentsConfig.timeColumnName", "when"),
    ({"tableIndexConfig": {"segmentPartitionConfig": {"columnPartitionMap": {
        "trip_id": {"functionName": "Murmur", "numPartitions": 4}}}}},
     "tableIndexConfig.segmentPartitionConfig.columnPartitionMap.trip_id", "trip_id"),
])
def test_a_table_and_schema_that_disagree_name_both_files(tmp_path: Path, change: dict[str, Any], key: str,
                                                          column: str) -> None:
    path = _write(tmp_path, {"tableName": "t", "tableType": "OFFLINE", **change},
                  {"schemaName": "t", "dimensionFieldSpecs": [{"name": "k", "dataType": "STRING"}]})
    with pytest.raises(ScenarioError) as caught:
        check_scenario(path)
    assert caught.value.where == f"table ({tmp_path / 'table.json'}).{key}"
    assert f"{column!r}, which is not a column of the schema (the schema ({tmp_path / 'schema.json'}))" \
        in caught.value.problem


def test_a_schema_file_with_a_trailing_comma_names_it(tmp_path: Path) -> None:
    (tmp_path / "schema.json").write_text('{\n  "schemaName": "t",\n  "dimensionFieldSpecs": [],\n}\n')
    (tmp_path / "s.yaml").write_text("schema: schema.json\n")
    with pytest.raises(ScenarioError) as caught:
        check_scenario(tmp_path / "s.yaml")
    assert caught.value.where == f"{tmp_path / 'schema.json'}:4"
    assert caught.value.problem.startswith("not valid JSON: a trailing comma (line 3) before '}'")


@pytest.mark.parametrize("name", ["airlineStats_offline", "airlineStats_realtime", "upsertMeetupRsvp_realtime"])
def test_pinot_example_tables_and_schemas_validate_unchanged(tmp_path: Path, name: str) -> None:
    """Pinot 1.5.1's own examples (pinot-tools/src/main/resources/examples, copied verbatim). The upsert
    one partitions by its own ``event_id``, which only generating data over it would clash with; it is
    loaded (every check of this module) rather than run-checked, because the heap model needs its
    unhashed STRING key's length, which neither the example nor a synthetic workload gives."""
    table = EXAMPLES / f"{name}_table_config.json"
    schema = EXAMPLES / f"{name.rsplit('_', 1)[0]}_schema.json"
    shutil.copy(table, tmp_path / "table.json")
    shutil.copy(schema, tmp_path / "schema.json")
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({"table": "table.json", "schema": "schema.json", "cluster": {"servers": 2},
                                    "workload": {"synthetic": {"segments_per_server": 1, "docs_per_segment": 10}}}))
    sc = load_scenario(path) if "upsert" in name else check_scenario(path)
    assert sc.table.table_name == json.loads(table.read_text())["tableName"]


def _from_schema(dimensions: list[dict[str, Any]]) -> dict[str, Any]:
    sc = scenario(dimensions, metrics=[], partition="event_id")
    sc["workload"]["generate"]["from_schema"] = True
    sc["schema"]["primaryKeyColumns"] = ["event_id"]
    return sc


def test_from_schema_takes_the_users_event_id_and_needs_no_generator_column() -> None:
    """The issue's upsert table keyed and partitioned on its own ``event_id``, with none of the generator's
    columns: its rows and queries are the schema's own (the bookkeeping moves to ``$`` names)."""
    check_scenario(_from_schema([{"name": "event_id", "dataType": "STRING"}]))


@pytest.mark.parametrize(("extra", "where", "words"), [
    ({"name": "doc_id", "dataType": "INT"}, "schema.dimensionFieldSpecs[1].name", "workload layout's own column"),
    ({"name": "attributes", "dataType": "MAP"}, "schema.dimensionFieldSpecs[1]", "cannot produce MAP"),
])
def test_from_schema_refuses_a_layout_column_or_one_it_cannot_produce(extra: dict[str, Any], where: str,
                                                                       words: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        check_scenario(_from_schema([{"name": "event_id", "dataType": "STRING"}, extra]))
    assert caught.value.where == where and words in caught.value.problem and repr(extra["name"]) in \
        caught.value.problem


def test_from_schema_settings_may_not_redraw_the_key() -> None:
    sc = _from_schema([{"name": "event_id", "dataType": "STRING"}])
    sc["workload"]["generate"]["columns"] = {"event_id": {"cardinality": 3}}
    with pytest.raises(ScenarioError) as caught:
        check_scenario(sc)
    assert caught.value.where == "workload.generate.columns.event_id"
    assert "primary key column" in caught.value.problem
