"""``import_file`` writes a complete output directory or nothing, and never overwrites by accident."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from importer_fixtures import FIXTURES

import workbench.workload.importers as importers
from workbench.errors import InputError
from workbench.workload.importers import IMPORTERS, describe, get_importer, import_file
from workbench.workload.schema import QUERIES_SCHEMA, SEGMENTS_SCHEMA

CASES = [
    ("table-config", "table_config_upsert.json", {"table_config.parquet", "table_config.json"}),
    ("schema", "schema_events.json", {"schema.parquet", "schema.json"}),
    ("segments", "segments_zk.json", {"segments.parquet"}),
    ("query-log", "querylog_versions.log", {"queries.parquet"}),
    ("gc-log", "gc_g1_jdk17.log", {"gc_pauses.parquet", "gc_calibration.json"}),
]


def _leftovers(parent: Path) -> list[str]:
    """Temporary siblings atomic output might leave behind."""
    return sorted(p.name for p in parent.iterdir() if p.name.startswith("."))


@pytest.mark.parametrize(("kind", "fixture", "files"), CASES)
def test_each_kind_writes_its_table_documents_and_manifest(tmp_path: Path, kind: str, fixture: str,
                                                           files: set[str]) -> None:
    out = tmp_path / "out"
    result = import_file(kind, FIXTURES / fixture, out)
    assert {p.name for p in out.iterdir()} == files | {"manifest.json"}
    table = pd.read_parquet(out / IMPORTERS[kind].table)
    pd.testing.assert_frame_equal(table, result.frame)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["kind"] == kind and manifest["outputs"][IMPORTERS[kind].table] == len(result.frame)
    assert manifest["source_sha256"] == hashlib.sha256((FIXTURES / fixture).read_bytes()).hexdigest()
    assert manifest["counts"] == dict(result.counts)


@pytest.mark.parametrize(("kind", "fixture", "shared"), [
    ("segments", "events__2__5__20260101T0300Z.json", SEGMENTS_SCHEMA),  # partition_metadata all null
    ("query-log", "querylog_old.log", QUERIES_SCHEMA),
])
def test_shared_tables_are_written_with_the_shared_arrow_types(tmp_path: Path, kind: str, fixture: str,
                                                               shared: pa.Schema) -> None:
    import_file(kind, FIXTURES / fixture, tmp_path / "out")
    written = pq.read_schema(tmp_path / "out" / IMPORTERS[kind].table)
    assert written.names[: len(shared)] == shared.names
    assert [written.field(f.name).type for f in shared] == list(shared.types)


def test_lenient_import_records_skipped_lines_in_the_manifest(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = import_file("gc-log", FIXTURES / "gc_malformed.log", out, lenient=True)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["lenient"] is True
    assert [line for line, _ in manifest["skipped"]] == [line for line, _ in result.skipped]
    assert manifest["counts"]["skipped"] == 10


def test_the_gc_calibration_file_is_what_calibrate_gc_returns(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = import_file("gc-log", FIXTURES / "gc_g1_jdk17.log", out)
    written = json.loads((out / "gc_calibration.json").read_text())
    assert written == json.loads(json.dumps(importers.calibrate_gc(result.frame)))


def test_a_single_pause_log_imports_without_a_calibration(tmp_path: Path) -> None:
    log = tmp_path / "gc.log"
    log.write_text("[1.000s][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 2M->1M(8M) 1.000ms\n")
    import_file("gc-log", log, tmp_path / "out")
    assert not (tmp_path / "out" / "gc_calibration.json").exists()


def test_strict_failure_leaves_no_output_directory(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with pytest.raises(InputError) as err:
        import_file("query-log", FIXTURES / "querylog_malformed.log", out)
    assert err.value.where.endswith("querylog_malformed.log:1")
    assert not out.exists() and _leftovers(tmp_path) == []


def test_a_failure_midway_through_writing_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Parquet table is already written when the manifest fails: the whole directory must vanish."""
    def broken(path: Path, data: Any) -> None:
        if path.name == "manifest.json":
            raise OSError("disk full")
        path.write_text(json.dumps(data))

    monkeypatch.setattr(importers, "write_json_atomic", broken)
    out = tmp_path / "out"
    with pytest.raises(OSError, match="disk full"):
        import_file("gc-log", FIXTURES / "gc_g1_jdk17.log", out)
    assert not out.exists() and _leftovers(tmp_path) == []


def test_an_existing_output_is_refused_and_left_untouched(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    with pytest.raises(InputError, match="already exists"):
        import_file("segments", FIXTURES / "segments_zk.json", out)
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


def test_overwrite_replaces_only_after_success(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    with pytest.raises(InputError):
        import_file("segments", FIXTURES / "segments_malformed.json", out, overwrite=True)
    assert [p.name for p in out.iterdir()] == ["keep.txt"]
    import_file("segments", FIXTURES / "segments_zk.json", out, overwrite=True)
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "segments.parquet"]
    assert _leftovers(tmp_path) == []


def test_unknown_kind_lists_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="use one of table-config, schema, segments, query-log, gc-log"):
        get_importer("access-log")
    with pytest.raises(InputError):
        import_file("access-log", FIXTURES / "gc_zgc.log", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_missing_input_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        import_file("gc-log", tmp_path / "nope.log", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_describe_summarises_counts_and_the_first_skipped_lines() -> None:
    result = importers.read_query_log(FIXTURES / "querylog_malformed.log", lenient=True)
    text = describe(result, max_lines=2)
    assert text.startswith("query-log: 2 records from ")
    assert "(13 lines; 1 ignored; 10 malformed skipped: line 1:" in text
    assert text.endswith("; and 8 more)")
