"""Small workload builders shared by the workload tests (imported by name: tests are not a package)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from workbench.pinot.table_config import TableConfig
from workbench.scenario.build import build_section
from workbench.workload.spec import GenerateSpec

__all__ = ["records", "spec_of", "table"]


def spec_of(**data: Any) -> GenerateSpec:
    """A spec built the way a scenario's ``workload.generate`` section is (validated)."""
    return build_section(GenerateSpec, data, "workload.generate")


def table(name: str = "events", *, kind: str = "REALTIME", column: str | None = "key_id", function: str = "Modulo",
          partitions: int = 4, upsert: bool = False) -> TableConfig:
    """A minimal Pinot table config with one partition column (or none)."""
    raw: dict[str, Any] = {"tableName": name, "tableType": kind, "segmentsConfig": {"timeColumnName": "event_time_ms"}}
    if column is not None:
        cmap = {column: {"functionName": function, "numPartitions": partitions}}
        raw["tableIndexConfig"] = {"segmentPartitionConfig": {"columnPartitionMap": cmap}}
    if upsert:
        raw["upsertConfig"] = {"mode": "FULL", "deleteRecordColumn": "is_delete"}
        raw["routing"] = {"instanceSelectorType": "strictReplicaGroup"}
    return TableConfig.from_json(raw)


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows of ``frame`` as plain dicts (what a reader of one segment or query sees)."""
    return [{str(k): v for k, v in row.items()} for row in frame.to_dict("records")]
