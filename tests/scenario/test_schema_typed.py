"""The scenario's schema is a typed Pinot :class:`~workbench.pinot.schema.Schema`, parsed once at load.

Readers use its fields (named as Pinot names them); the user's JSON is kept only so ``to_dict`` gives it
back unchanged. Expected values are read by hand off the JSON in each test.
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from workbench.errors import ScenarioError
from workbench.pinot.schema import FieldSpec, Schema
from workbench.scenario import load_scenario
from workbench.sim.memory import _key_columns

EXAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "pinot_examples"
TABLE = {"tableName": "t", "tableType": "OFFLINE"}


def test_pinot_example_schema_is_typed_field_by_field() -> None:
    """Pinot's upsertMeetupRsvp example: 1 metric, 11 dimensions, 1 date-time column, key event_id."""
    raw = json.loads((EXAMPLES / "upsertMeetupRsvp_schema.json").read_text())
    schema = Schema.from_json(raw)
    assert schema.schema_name == "upsertMeetupRsvp"
    assert schema.primary_key_columns == ("event_id",)
    assert len(schema.fields) == 13
    assert schema.field("rsvp_count") == FieldSpec("rsvp_count", "METRIC", "INT")
    assert schema.field("location") == FieldSpec(
        "location", "DIMENSION", "BYTES", transform_function="toSphericalGeography(stPoint(group_lon,group_lat))")
    assert schema.field("mtime") == FieldSpec("mtime", "DATE_TIME", "TIMESTAMP", format="1:MILLISECONDS:TIMESTAMP",
                                              granularity="1:MILLISECONDS")
    assert schema.field("nope") is None
    assert schema.places["group_id"] == "dimensionFieldSpecs[6].name"
    assert schema.to_json() == raw  # keys Pinot has and we do not model (enableColumnBasedNullHandling) kept


def test_stated_max_length_and_default_are_kept_apart_from_pinot_defaults() -> None:
    schema = Schema.from_json({"schemaName": "s", "dimensionFieldSpecs": [
        {"name": "a", "dataType": "string", "maxLength": 40, "defaultNullValue": "none", "singleValueField": False},
        {"name": "b", "dataType": "STRING"}]})
    a, b = schema.fields
    assert (a.data_type, a.max_length, a.default_null_value, a.single_value_field) == ("STRING", 40, "none", False)
    assert (b.max_length, b.default_null_value, b.single_value_field) == (None, None, True)


def _scenario(schema: Any) -> dict[str, Any]:
    return {"cluster": {"servers": 2}, "table": TABLE,
            "workload": {"synthetic": {"segments_per_server": 1, "docs_per_segment": 10}}, "schema": schema}


def test_scenario_schema_is_typed_and_round_trips_unchanged() -> None:
    user = {"schemaName": "t", "dimensionFieldSpecs": [{"name": "k", "dataType": "string", "maxLength": 8}],
            "primaryKeyColumns": ["k"], "somethingPinotAdds": {"x": 1}}
    sc = load_scenario(_scenario(user))
    assert isinstance(sc.schema, Schema) and not isinstance(sc.schema, Mapping)
    assert sc.schema.data_types == {"k": "STRING"}
    assert sc.to_dict()["schema"] == user  # lower-case dataType and the unknown key as written
    again = pickle.loads(pickle.dumps(sc))
    assert again.schema == sc.schema and again.schema is not None and again.schema.to_json() == user


def test_schema_error_names_the_key_and_value() -> None:
    specs = [{"name": "a", "dataType": "STRING"}, {"name": "b", "dataType": "LONG"},
             {"name": "c", "dataType": "VARCHAR"}]
    with pytest.raises(ScenarioError) as caught:
        load_scenario(_scenario({"schemaName": "t", "dimensionFieldSpecs": specs}))
    assert caught.value.where == "schema.dimensionFieldSpecs[2].dataType"
    assert "got 'VARCHAR'" in caught.value.problem and "LONG" in caught.value.problem


def test_upsert_memory_reads_key_columns_off_the_typed_schema() -> None:
    """Key columns in ``primaryKeyColumns`` order, their types, and the stated maxLength (None if unstated)."""
    user = {"schemaName": "t", "dimensionFieldSpecs": [{"name": "id", "dataType": "STRING", "maxLength": 12},
                                                       {"name": "n", "dataType": "INT"}],
            "primaryKeyColumns": ["n", "id"]}
    sc = load_scenario(_scenario(user))
    columns, types, lengths = _key_columns(sc, from_data=False)
    assert columns == ["n", "id"] and types == {"n": "INT", "id": "STRING"}
    assert lengths == {"id": 12, "n": None}
