"""A Pinot schema imports as one row per column; what Pinot would refuse is reported at its line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from importer_fixtures import FIXTURES, line_of, write

from workbench.errors import InputError
from workbench.workload.importers import SCHEMA_COLUMNS, read_schema


def test_every_field_spec_becomes_a_row_in_section_order() -> None:
    result = read_schema(FIXTURES / "schema_events.json")
    frame = result.frame.set_index("column_name")
    assert frame.index.tolist() == ["user_id", "country", "tags", "clicks", "hll_users", "ts"]
    assert frame["field_type"].tolist() == ["DIMENSION"] * 3 + ["METRIC"] * 2 + ["DATE_TIME"]
    assert frame["data_type"].tolist() == ["STRING", "STRING", "STRING", "LONG", "BYTES", "LONG"]
    assert frame["single_value"].tolist() == [True, True, False, True, True, True]
    assert frame["is_primary_key"].tolist() == [True, False, False, False, False, False]
    assert (frame.loc["ts", "format"], frame.loc["ts", "granularity"]) == ("1:MILLISECONDS:EPOCH", "1:MILLISECONDS")
    assert (frame.loc["country", "default_null_value"], frame.loc["country", "max_length"]) == ('"unknown"', 64)
    assert (frame.loc["clicks", "default_null_value"], frame.loc["clicks", "max_length"]) == ("0", -1)
    assert set(frame["schema_name"]) == {"events"}
    assert tuple(result.frame.columns) == SCHEMA_COLUMNS
    assert result.documents["schema.json"]["primaryKeyColumns"] == ["user_id"]


def test_the_legacy_time_field_spec_is_a_time_column() -> None:
    row = read_schema(FIXTURES / "schema_legacy_time.json").frame.iloc[-1]
    assert (row["column_name"], row["field_type"], row["data_type"], row["granularity"]) == (
        "daysSinceEpoch", "TIME", "INT", "DAYS")


def test_a_table_configs_response_yields_its_schema(tmp_path: Path) -> None:
    schema = json.loads((FIXTURES / "schema_events.json").read_text())
    path = write(tmp_path, "tc.json", json.dumps({"tableName": "events", "schema": schema}))
    assert len(read_schema(path).frame) == 6


def _schema_file(tmp_path: Path, **overrides: object) -> Path:
    """A schema with one field spec per line, so a reported line can be checked by its content."""
    schema: dict[str, object] = {
        "schemaName": "s", "dimensionFieldSpecs": [{"name": "a", "dataType": "STRING"}],
        "metricFieldSpecs": [{"name": "m", "dataType": "LONG"}],
        "dateTimeFieldSpecs": [{"name": "ts", "dataType": "LONG", "format": "1:MILLISECONDS:EPOCH",
                                "granularity": "1:MILLISECONDS"}]}
    schema.update(overrides)
    members = []
    for key, value in schema.items():
        if isinstance(value, list) and key != "primaryKeyColumns":
            members.append(f'"{key}": [\n' + ",\n".join(json.dumps(item) for item in value) + "\n]")
        else:
            members.append(f'"{key}": {json.dumps(value)}')
    return write(tmp_path, "schema.json", "{", ",\n".join(members), "}")


@pytest.mark.parametrize(("overrides", "where", "problem", "on_line"), [
    ({"schemaName": ""}, "schemaName", "is required", '"schemaName"'),
    ({"metricFieldSpecs": [{"name": "m", "dataType": "STRING"}]}, "metricFieldSpecs[0].dataType",
     "a metric must be numeric", '"m"'),
    ({"dimensionFieldSpecs": [{"name": "a", "dataType": "VARCHAR"}]}, "dimensionFieldSpecs[0].dataType",
     "must be one of", "VARCHAR"),
    ({"dateTimeFieldSpecs": [{"name": "ts", "dataType": "LONG", "format": "1:MILLISECONDS:EPOCH"}]},
     "dateTimeFieldSpecs[0].granularity", "is required for a dateTime field", '"ts"'),
    ({"dimensionFieldSpecs": [{"name": "a", "dataType": "STRING"}, {"name": "m", "dataType": "INT"}]},
     "metricFieldSpecs[0].name", "defined twice", '"LONG"'),
    ({"primaryKeyColumns": ["a", "zz"]}, "primaryKeyColumns[1]", "not a column of the schema", '"zz"'),
    ({"dimensionFieldSpecs": [{"dataType": "STRING"}]}, "dimensionFieldSpecs[0].name", "non-empty column name",
     '{"dataType": "STRING"}'),
    ({"dimensionFieldSpecs": [{"name": "a", "dataType": "STRING", "singleValueField": "no"}]},
     "dimensionFieldSpecs[0].singleValueField", "true or false", '"no"'),
    ({"dimensionFieldSpecs": "a"}, "dimensionFieldSpecs", "must be a list", '"dimensionFieldSpecs"'),
])
def test_invalid_field_specs_are_reported_with_key_path_and_line(
        tmp_path: Path, overrides: dict[str, object], where: str, problem: str, on_line: str) -> None:
    path = _schema_file(tmp_path, **overrides)
    with pytest.raises(InputError) as err:
        read_schema(path)
    assert err.value.problem.startswith(f"{where}: ") and problem in err.value.problem
    assert err.value.where == f"{path}:{line_of(path, on_line)}"


def test_a_schema_must_be_an_object(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="must be a JSON object") as err:
        read_schema(write(tmp_path, "schema.json", "[1, 2]"))
    assert err.value.where.endswith(":1")
