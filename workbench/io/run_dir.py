"""A run directory as a value: the one place that names its files (``summary.json``, ``NAME.parquet``).

``workbench simulate``, every sweep point and every study write a run the same way: one Parquet file per
run table (``docs/records.md``) beside ``summary.json``, which records the scenario, the seed, the
overrides and the :class:`~workbench.io.summary.Summary`. Readers (the report, a resumed sweep, the
studies) take a :class:`RunDir` instead of a path, so no other module spells those names and every
reader gets the summary typed and checked.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.errors import InputError
from workbench.io.atomic import atomic_dir, write_json_atomic
from workbench.io.redact import redact
from workbench.io.summary import Summary
from workbench.io.tables import read_json_file, read_parquet

__all__ = ["SUMMARY_FILE", "RunDir", "RunRecord"]

#: The run directory's headline file: scenario, seed, overrides and the summary statistics.
SUMMARY_FILE = "summary.json"


@dataclass(frozen=True)
class RunRecord:
    """What ``summary.json`` holds: the scenario as run (credentials redacted), its seed, the dotted-key
    overrides applied to it, and the run's summary."""

    scenario: dict[str, Any]
    seed: int | None
    overrides: dict[str, Any]
    summary: Summary

    def to_json(self) -> dict[str, Any]:
        """The record as ``summary.json`` holds it, keys sorted."""
        return {"overrides": self.overrides, "scenario": self.scenario, "seed": self.seed,
                "summary": self.summary.to_json()}

    @classmethod
    def from_json(cls, data: Any, source: str = SUMMARY_FILE) -> RunRecord:
        """The record of ``data``, checked; a missing or mistyped part is an InputError naming ``source``."""
        if not isinstance(data, Mapping) or not isinstance(data.get("summary"), Mapping):
            raise InputError(source, "has no `summary` mapping (write it with workbench's write_run)")
        scenario = data.get("scenario", {})
        if not isinstance(scenario, dict):
            raise InputError(source, "its `scenario` is not an object")
        overrides = data.get("overrides", {})
        if not isinstance(overrides, dict):
            raise InputError(source, "its `overrides` is not an object")
        return cls(scenario, data.get("seed"), overrides, Summary.from_json(data["summary"], source))

    def stored(self) -> RunRecord:
        """The record as it reads back from ``summary.json``: credentials redacted, tuples as lists, keys as
        strings (what a resumed sweep compares with)."""
        return RunRecord.from_json(json.loads(json.dumps(redact(self.to_json()), sort_keys=True, default=str)))


@dataclass(frozen=True)
class RunDir:
    """A run directory: ``summary.json`` and one ``NAME.parquet`` per run table."""

    path: Path

    @property
    def summary_path(self) -> Path:
        """Where the run's :class:`RunRecord` is stored."""
        return self.path / SUMMARY_FILE

    def is_run(self) -> bool:
        """Whether a run finished here (its ``summary.json`` is written last, so it marks a whole run)."""
        return self.summary_path.is_file()

    def table_path(self, table: str) -> Path:
        """The Parquet file of run table ``table`` (``queries``, ``servers`` ...)."""
        return self.path / f"{table}.parquet"

    def read_table(self, table: str, required: Sequence[str] = (), *, columns: Sequence[str] | None = None,
                   what: str | None = None) -> pd.DataFrame:
        """Run table ``table``, checked to hold ``required`` (an InputError naming the file otherwise)."""
        return read_parquet(self.table_path(table), required, columns=columns, what=what or f"{table} records")

    def record(self) -> RunRecord:
        """The run's ``summary.json``, checked; an InputError when this is not a run directory."""
        if not self.is_run():
            raise InputError(str(self.path), f"is not a run directory (no {SUMMARY_FILE}); run `workbench simulate` "
                                             "first")
        return RunRecord.from_json(read_json_file(self.summary_path, "run summary"), str(self.summary_path))

    def summary(self) -> Summary:
        """The run's summary statistics."""
        return self.record().summary

    def write(self, tables: Mapping[str, pd.DataFrame], record: RunRecord, *, overwrite: bool = False) -> RunRecord:
        """Write the run's tables and ``summary.json`` atomically; returns the record as it reads back."""
        stored = record.stored()
        with atomic_dir(self.path, overwrite=overwrite) as tmp:
            staged = RunDir(tmp)
            for name, table in tables.items():
                table.to_parquet(staged.table_path(name), index=False)
            write_json_atomic(staged.summary_path, stored.to_json())
        return stored

    def withdraw(self) -> None:
        """Remove the run's ``summary.json`` (a run whose later step failed is not counted as done)."""
        self.summary_path.unlink(missing_ok=True)
