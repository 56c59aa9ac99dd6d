"""``docs/records.md`` lists exactly the columns each run table has, and a run produces exactly those; and
exactly the fields of the typed summary, which reads back from ``summary.json`` unchanged."""

from __future__ import annotations

import dataclasses
import json
import re
import typing
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from workbench.api import run_scenario
from workbench.errors import InputError
from workbench.io.run_dir import RunDir
from workbench.io.summary import EXAMPLE, Summary, schema_columns
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


# --- the summary ----------------------------------------------------------------------------------------
def _documented_summary(doc: str) -> dict[str, str]:
    """The ``summary`` table of ``doc``: column -> type, in order."""
    body = doc.split("## `summary`", 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"^\| `([A-Za-z_0-9.]+)` \| ([a-z ]+) \|", body, flags=re.M))


def _summary_mismatch(documented: dict[str, str], schema: dict[str, str]) -> list[str]:
    """What the docs and the type disagree on: a column one lacks, a type that differs, or the order."""
    out = [f"{c}: not documented" for c in schema if c not in documented]
    out += [f"{c}: documented, not in Summary" for c in documented if c not in schema]
    out += [f"{c}: documented as {documented[c]}, is {t}" for c, t in schema.items() if documented.get(c, t) != t]
    if not out and list(documented) != list(schema):
        out.append("the columns are listed in another order than combined.parquet has them")
    return out


def test_docs_list_exactly_the_summary_fields_with_their_types() -> None:
    assert _summary_mismatch(_documented_summary(DOC), schema_columns(Summary)) == []


def test_a_field_renamed_in_one_place_fails_the_docs_check() -> None:
    """Rename ``throughput_qps`` in the docs only, then in the type only: both are caught, by name."""
    in_docs = _documented_summary(DOC.replace("| `throughput_qps` |", "| `qps` |"))
    assert _summary_mismatch(in_docs, schema_columns(Summary)) == ["throughput_qps: not documented",
                                                                  "qps: documented, not in Summary"]
    hints = typing.get_type_hints(Summary)
    renamed = dataclasses.make_dataclass("Renamed", [
        ("qps" if f.name == "throughput_qps" else f.name, hints[f.name], dataclasses.field(default=f.default))
        for f in dataclasses.fields(Summary)], frozen=True)
    assert _summary_mismatch(_documented_summary(DOC), schema_columns(renamed)) == [
        "qps: not documented", "throughput_qps: documented, not in Summary"]


def test_summary_json_reads_back_to_the_same_summary(tmp_path: Path) -> None:
    """A run's summary, written to ``summary.json`` and read back, is equal field for field; and a summary
    with the model's intervals and an SLO verdict survives JSON text (finite values: NaN is never equal)."""
    record = run_scenario({**SCENARIO, "slo": {"p99_ms": 1000, "max_heap": "64G"}}, tmp_path / "run")
    assert RunDir(tmp_path / "run").record() == record
    assert record.summary.slo.checks.max_heap is not None and record.summary.slo.met is True
    rich = Summary.from_json({**EXAMPLE, "model_uncertainty": {"draws": 3, "confidence": 0.9, "method": "m"},
                              "latency_ms": {**EXAMPLE["latency_ms"], "p99": {"value": 30.0, "ci_low": 28.0,
                                             "ci_high": 32.0, "model_low": 25.0, "model_high": 40.0}},
                              "slo": {"met": False, "why": "p99", "checks": {"p99_ms": {
                                  "limit": 31.0, "value": 30.0, "bound": 32.0, "met": False, "why": "p99"}}}})
    assert Summary.from_json(json.loads(json.dumps(rich.to_json()))) == rich
    assert rich.columns()["latency_ms.p99.model_high"] == 40.0 and rich.columns()["slo.checks.p99_ms.bound"] == 32.0


def test_a_summary_missing_a_field_names_it() -> None:
    partial = {k: v for k, v in EXAMPLE.items() if k != "heap"}
    with pytest.raises(InputError, match=r"has no 'summary\.heap\.live_max'"):
        Summary.from_json(partial, "x/summary.json")
