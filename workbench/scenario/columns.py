"""Column names checked when a scenario loads: the table config against the schema, and both against
the columns the generator writes.

Each of these used to pass ``workbench validate`` and fail later, or never:

- a table config naming a column its schema lacks (the time column, a partition column): Pinot
  refuses the pair (``TableConfigUtils``: "Failed to find partition column: ... in schema");
- a schema column named like one of the generator's bookkeeping columns (``event_id``, ``segment_name``,
  ... :data:`~workbench.workload.schema.BOOKKEEPING_COLUMNS`): generation failed after Spark had started
  ("cannot partition by 'event_id'"), or the user's column silently held the generator's values;
- a generated query template naming a column the user's schema lacks: Pinot would refuse the query
  the model was replaying.

With ``workload.generate.from_schema`` the rows and queries are the schema's own columns
(:mod:`workbench.workload.user_schema`): the generator's bookkeeping moves to ``$`` names, so only the
layout's ``segment_name`` and ``doc_id`` may not be schema columns, and every column must be one the
generator can produce (its type, its date-time format), named by its place in the schema.

Each check raises one :class:`~workbench.errors.ScenarioError` naming the key, the file when the
config or schema came from one, both columns where two collide, and the fix.
"""

from __future__ import annotations

from collections.abc import Mapping

from workbench.errors import InputError, ScenarioError
from workbench.pinot.schema import Schema
from workbench.pinot.table_config import TableConfig
from workbench.scenario.schema import GenerateSpec, WorkloadSpec
from workbench.workload.context import check_partitioning
from workbench.workload.queries import TEMPLATES, kinds_generated, template_columns
from workbench.workload.schema import BOOKKEEPING_COLUMNS
from workbench.workload.user_schema import CONTRACT_COLUMNS, build_user_schema

__all__ = ["check_columns", "table_key"]

_PARTITION_MAP = "tableIndexConfig.segmentPartitionConfig.columnPartitionMap"


def table_key(table: TableConfig) -> str:
    """How errors name the table config: ``table``, or ``table (PATH)`` when it was read from a file."""
    return "table" if table.source == "<table config>" else f"table ({table.source})"


def check_columns(table: TableConfig, schema: Schema | None, workload: WorkloadSpec,
                  schema_key: str = "schema") -> None:
    """Every column-name check of the module docstring; ``schema_key`` names the schema (and its file).

    Raises
    ------
    ScenarioError
        The first problem, at its key.
    """
    places = schema.places if schema is not None else None
    if schema is not None and places is not None:
        _table_against_schema(table, schema, set(places), schema_key)
    spec = workload.generate
    if spec is None:
        return
    if spec.from_schema:
        _from_schema(table, schema, spec, schema_key)
        return
    if places is not None:
        _bookkeeping_clash(table, places, schema_key)
    _partitioning(table, spec, None)
    if places is not None and workload.arrival.process == "replay":
        _templates_against_schema(workload, set(places), schema_key)


def _partitioning(table: TableConfig, spec: GenerateSpec, schema: Schema | None) -> None:
    try:
        check_partitioning(spec, table, schema)
    except InputError as exc:
        where = f"{table_key(table)}.{exc.where}" if exc.where.startswith("tableIndexConfig") else exc.where
        raise ScenarioError(where, exc.problem) from None


def _from_schema(table: TableConfig, schema: Schema | None, spec: GenerateSpec, schema_key: str) -> None:
    """Schema-driven generation: the schema exists, the generator can produce every column, no column is
    named like the layout's ``segment_name``/``doc_id``; the queries are written over the schema's own
    columns, so no template check is needed."""
    if schema is None:
        raise ScenarioError("workload.generate.from_schema", "generates the scenario schema's columns, but the "
                                                             "scenario has no schema; add schema: (your Pinot schema)")
    places = schema.places
    for column in CONTRACT_COLUMNS:
        if column in places:
            raise ScenarioError(
                f"{schema_key}.{places[column]}",
                f"your column {column!r} has the name of the workload layout's own column {column!r} (docs/data.md), "
                f"which events/ keeps beside your columns; rename your column (e.g. 'my_{column}') in the schema and "
                "wherever the table config names it")
    try:
        build_user_schema(schema, table, spec, schema_key)
    except InputError as exc:
        raise ScenarioError(exc.where, exc.problem) from None
    _partitioning(table, spec, schema)


def _in_schema(schema_key: str) -> str:
    return "the schema" + (schema_key.removeprefix("schema") if schema_key != "schema" else "")


def _table_against_schema(table: TableConfig, schema: Schema, columns: set[str], schema_key: str) -> None:
    """The rules Pinot's ``TableConfigUtils`` applies to a table config and its schema together."""
    tkey, in_schema = table_key(table), _in_schema(schema_key)
    time_column = table.time_column_name
    if time_column is not None and time_column not in columns:
        raise ScenarioError(f"{tkey}.segmentsConfig.timeColumnName",
                            f"names {time_column!r}, which is not a column of the schema ({in_schema}); add it to "
                            "the schema's dateTimeFieldSpecs, or name one of the schema's date-time columns")
    for column in table.column_partition_map:
        if column not in columns:
            raise ScenarioError(f"{tkey}.{_PARTITION_MAP}.{column}",
                                f"partitions by {column!r}, which is not a column of the schema ({in_schema}); "
                                "add it to the schema or partition by one of its columns (Pinot refuses the table: "
                                f"'Failed to find partition column: {column} in schema')")
    if table.is_upsert and not schema.primary_key_columns:
        raise ScenarioError(f"{schema_key}.primaryKeyColumns", "an upsert table needs primary key columns "
                                                               "(Pinot rejects the table without them)")


def _bookkeeping_clash(table: TableConfig, places: Mapping[str, str], schema_key: str) -> None:
    """A schema column named like a generator bookkeeping column, which the generator would overwrite.

    An upsert comparison column is exempt: the generator supplies ``offset`` for a table that compares
    by it (:func:`workbench.workload.context.build_context`), which is what such a table means.
    """
    compared = set(table.upsert.comparison_columns) if table.upsert is not None else set()
    for column, place in places.items():
        if column in BOOKKEEPING_COLUMNS and column not in compared:
            field_list = place.split("[")[0].split(".")[0]
            raise ScenarioError(
                f"{schema_key}.{place}",
                f"your column {column!r} (in {field_list}) has the name of the generator's own column {column!r} "
                f"({BOOKKEEPING_COLUMNS[column]}; docs/data.md), which workload.generate writes into every row; "
                f"rename your column (e.g. 'my_{column}') in the schema and wherever the table config names it")


def _templates_against_schema(workload: WorkloadSpec, columns: set[str], schema_key: str) -> None:
    """A replayed generated query naming a column the user's table lacks, which Pinot would refuse."""
    spec = workload.generate
    assert spec is not None
    kinds = kinds_generated(spec.queries)
    for template in TEMPLATES:
        if template.kind not in kinds:
            continue
        for column in template_columns(template):
            if column not in columns:
                raise ScenarioError(
                    schema_key,
                    f"has no column {column!r}, which generated {template.kind} query template {template.id} "
                    f"names ({template.sql}); add {column!r} to the schema (docs/data.md lists the columns the "
                    f"generator writes), set workload.generate.queries.{_rate_key(template.kind)} to 0, "
                    "replay no generated queries (workload.arrival.process: poisson), or generate your schema's "
                    "own columns and queries (workload.generate.from_schema: true)")


def _rate_key(kind: str) -> str:
    return {"dashboard": "dashboards", "adhoc": "adhoc_qps", "lookup": "lookup_qps",
            "timerange": "timerange_qps"}[kind]
