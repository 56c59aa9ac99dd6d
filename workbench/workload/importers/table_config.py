"""Import a Pinot table config as the controller serves it, validated by :mod:`workbench.pinot.table_config`.

Three shapes are accepted, because users copy whichever the controller gave them:

* a bare config, the JSON one ``POST /tables``;
* ``GET /tables/{name}``: ``{"OFFLINE": {...}, "REALTIME": {...}}`` (either or both);
* ``GET /tableConfigs/{name}``: ``{"tableName": ..., "offline": {...}, "realtime": {...}, "schema": {...}}``.

Validation is :meth:`TableConfig.from_json`, the one the scenario loader uses, so a config that imports
also loads. Its key-path errors are re-reported at the line of the offending key.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.errors import TableConfigError
from workbench.pinot.table_config import TableConfig
from workbench.workload.importers.common import ImportResult, Tally, line_count, read_text
from workbench.workload.importers.jsonpos import load_json, nearest_line

__all__ = ["TABLE_CONFIG_COLUMNS", "read_table_config"]

#: Columns of the one-row-per-config summary table.
TABLE_CONFIG_COLUMNS = (
    "table_name", "table_type", "table_name_with_type", "replication", "time_column",
    "instance_selector_type", "segment_pruner_types", "partition_column", "partition_function",
    "num_partitions", "partition_columns", "is_upsert", "upsert_mode", "upsert_hash_function",
    "comparison_columns", "metadata_ttl", "deleted_keys_ttl", "upsert_snapshot", "upsert_preload", "is_dedup",
)
_SHAPES = (
    "a table config (an object with tableName), the controller's GET /tables/{name} response "
    '({"OFFLINE": {...}, "REALTIME": {...}}) or its GET /tableConfigs/{name} response '
    '({"offline": {...}, "realtime": {...}})'
)

Located = tuple[tuple[str, ...], Mapping[str, Any]]


def _unwrap(data: Any) -> list[Located]:
    """The configs inside the document, each with the key path it sits under."""
    if not isinstance(data, Mapping):
        return []
    if "tableName" in data and ("tableType" in data or not {"offline", "realtime"} & set(data)):
        return [((), data)]
    typed: list[Located] = []
    for key in ("OFFLINE", "REALTIME", "offline", "realtime"):
        if isinstance(value := data.get(key), Mapping):
            typed.append(((key,), value))
    return typed


def _parse(text: str, source: str, where: tuple[str, ...], raw: Mapping[str, Any]) -> TableConfig:
    """Validate one config, moving a key-path error to the line it points at."""
    try:
        return TableConfig.from_json(raw, source=source)
    except TableConfigError as exc:
        keys: Sequence[str] = (*where, *exc.where.split("."))
        line = nearest_line(text, keys)
        raise TableConfigError(f"{source}:{line}", f"{'.'.join(keys)}: {exc.problem}") from None


def _upsert_fields(tc: TableConfig) -> dict[str, Any]:
    """The typed ``upsertConfig`` (:attr:`TableConfig.upsert`, Pinot's defaults filled in) as columns."""
    cfg = tc.upsert
    if cfg is None:
        return {"is_upsert": False, "upsert_mode": "NONE", "upsert_hash_function": "", "comparison_columns": "[]",
                "metadata_ttl": 0.0, "deleted_keys_ttl": 0.0, "upsert_snapshot": "", "upsert_preload": ""}
    return {
        "is_upsert": True,
        "upsert_mode": cfg.mode,
        "upsert_hash_function": cfg.hash_function.value,
        "comparison_columns": json.dumps(list(cfg.comparison_columns_or(tc.time_column_name))),
        "metadata_ttl": cfg.metadata_ttl,
        "deleted_keys_ttl": cfg.deleted_keys_ttl,
        "upsert_snapshot": cfg.snapshot,
        "upsert_preload": cfg.preload,
    }


def _partition_fields(tc: TableConfig) -> dict[str, Any]:
    cmap = tc.column_partition_map
    single = next(iter(cmap.items())) if len(cmap) == 1 else None
    return {
        "partition_column": single[0] if single else "",
        "partition_function": single[1].function_name if single else "",
        "num_partitions": single[1].num_partitions if single else -1,
        "partition_columns": json.dumps(
            {col: {"functionName": c.function_name, "numPartitions": c.num_partitions} for col, c in cmap.items()},
            sort_keys=True),
    }


def summarise(tc: TableConfig) -> dict[str, Any]:
    """One summary row: the fields of the config the model uses, with Pinot's defaults filled in."""
    return {
        "table_name": tc.table_name,
        "table_type": tc.table_type,
        "table_name_with_type": tc.table_name_with_type,
        "replication": tc.replication,
        "time_column": tc.time_column_name or "",
        "instance_selector_type": tc.instance_selector_type,
        "segment_pruner_types": ",".join(tc.segment_pruner_types),
        **_partition_fields(tc),
        **_upsert_fields(tc),
        "is_dedup": tc.is_dedup,
    }


def _summary_row(text: str, source: str, where: tuple[str, ...], tc: TableConfig) -> dict[str, Any]:
    try:
        return summarise(tc)
    except TableConfigError as exc:
        line = nearest_line(text, exc.where.split("."))
        raise TableConfigError(f"{source}:{line}", f"{exc.where}: {exc.problem}") from None


def _documents(configs: list[TableConfig]) -> dict[str, Any]:
    if len(configs) == 1:
        return {"table_config.json": configs[0].to_json()}
    return {f"table_config_{tc.table_type}.json": tc.to_json() for tc in configs}


def read_table_config(path: str | Path, lenient: bool = False, *, max_bytes: int | None = None) -> ImportResult:
    """Read and validate a Pinot table config file (any of the three controller shapes).

    Parameters
    ----------
    path
        The JSON file.
    max_bytes
        Largest input read (after decompression); ``None`` for the default limit.
    lenient
        Accepted for a uniform importer signature; a config is one document, so there is nothing
        to skip and every problem raises.

    Returns
    -------
    ImportResult
        ``frame`` has one row per config (:data:`TABLE_CONFIG_COLUMNS`); ``documents`` holds the
        validated config(s) as ``table_config.json`` (or one file per table type).

    Raises
    ------
    TableConfigError
        At ``file:line`` for invalid JSON, an unknown shape or a config Pinot would reject.
    """
    source = Path(path)
    text = read_text(source, strict_utf8=True, max_bytes=max_bytes)
    located = _unwrap(load_json(text, str(source), TableConfigError))
    if not located:
        raise TableConfigError(f"{source}:1", f"expected {_SHAPES}")
    configs = [(where, _parse(text, str(source), where, raw)) for where, raw in located]
    rows = [_summary_row(text, str(source), where, tc) for where, tc in configs]
    tally = Tally(source, lenient)
    tally.count("lines", line_count(text))
    frame = pd.DataFrame(rows, columns=list(TABLE_CONFIG_COLUMNS))
    return tally.result("table-config", frame, _documents([tc for _, tc in configs]))
