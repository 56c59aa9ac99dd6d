"""The workload directory: schemas as documented, manifest last, atomic, deterministic, never overwritten."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pytest
from workload_fixtures import spec_of, table

from workbench.errors import InputError
from workbench.scenario.build import build_section
from workbench.workload.engine import read_segment_rows, run_generation
from workbench.workload.pure import LocalExecutor, generate_local
from workbench.workload.schema import EVENTS_SCHEMA, QUERIES_SCHEMA, SCHEMA_VERSION, SEGMENTS_SCHEMA
from workbench.workload.spec import GenerateSpec

ROOT = Path(__file__).resolve().parents[2]
SMALL = {"events": 4_000, "keys": 200, "segment_rows": 400, "queries": {"duration_s": 60}}


def _documented(section: str) -> list[str]:
    text = (ROOT / "docs" / "data.md").read_text()
    body = text.split(f"## `{section}`", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([a-z_]+)` \|", body, flags=re.M)


@pytest.mark.parametrize(("section", "schema"), [("events/", EVENTS_SCHEMA), ("segments.parquet", SEGMENTS_SCHEMA),
                                                 ("queries.parquet", QUERIES_SCHEMA)])
def test_docs_list_exactly_the_schema_columns(section: str, schema: Any) -> None:
    assert _documented(section) == schema.names


def test_files_have_the_schemas_and_counts_of_the_manifest(tmp_path: Path) -> None:
    manifest = generate_local(spec_of(**SMALL), tmp_path / "w", table_config=table(), seed=1)
    events = pq.read_table(tmp_path / "w" / "events")
    segments = pq.read_table(tmp_path / "w" / "segments.parquet")
    queries = pq.read_table(tmp_path / "w" / "queries.parquet")
    assert events.schema.equals(EVENTS_SCHEMA) and segments.schema.equals(SEGMENTS_SCHEMA)
    assert queries.schema.equals(QUERIES_SCHEMA)
    assert manifest["row_counts"] == {"events": events.num_rows, "segments": segments.num_rows,
                                      "queries": queries.num_rows}
    assert manifest["schema_version"] == SCHEMA_VERSION and manifest["seed"] == 1
    on_disk = json.loads((tmp_path / "w" / "manifest.json").read_text())
    assert on_disk["checksums"] == manifest["checksums"]
    for name, digest in manifest["checksums"].items():
        assert hashlib.sha256((tmp_path / "w" / name).read_bytes()).hexdigest() == digest
    assert sorted(manifest["checksums"]) == ["events/part-00000.parquet", "queries.parquet", "segments.parquet"]
    assert build_section(GenerateSpec, manifest["parameters"], "g") == spec_of(**SMALL)


def test_pandas_reads_plain_types(tmp_path: Path) -> None:
    generate_local(spec_of(**SMALL), tmp_path / "w", seed=1)
    events = pd.read_parquet(tmp_path / "w" / "events")
    assert events["key"].dtype == object and events["segment_name"].dtype == object  # not categoricals
    assert str(events["event_time_ms"].dtype) == "int64" and str(events["is_delete"].dtype) == "bool"


def test_same_seed_same_bytes_other_seed_other_data(tmp_path: Path) -> None:
    spec = spec_of(**SMALL)
    a = generate_local(spec, tmp_path / "a", seed=3)["checksums"]
    b = generate_local(spec, tmp_path / "b", seed=3)["checksums"]
    c = generate_local(spec, tmp_path / "c", seed=4)["checksums"]
    assert a == b and all(a[k] != c[k] for k in a)


def test_spec_seed_is_used_unless_a_seed_is_given(tmp_path: Path) -> None:
    spec = spec_of(**SMALL, seed=8)
    assert generate_local(spec, tmp_path / "a")["seed"] == 8
    assert generate_local(spec, tmp_path / "b", seed=2)["seed"] == 2


def test_existing_output_is_kept_without_overwrite_and_replaced_with_it(tmp_path: Path) -> None:
    out = tmp_path / "w"
    out.mkdir()
    (out / "mine.txt").write_text("keep")
    with pytest.raises(InputError, match="already exists"):
        generate_local(spec_of(**SMALL), out)
    assert (out / "mine.txt").read_text() == "keep"
    generate_local(spec_of(**SMALL), out, overwrite=True)
    assert not (out / "mine.txt").exists() and (out / "manifest.json").exists()


class _FailingExecutor(LocalExecutor):
    def map(self, fn: Any, count: int, label: str) -> list[Any]:
        if label == "segments":
            fn(0)  # some output is written ...
            raise RuntimeError("executor lost")  # ... then the job dies
        return super().map(fn, count, label)


def test_a_failed_generation_leaves_nothing_behind(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="executor lost"):
        run_generation(_FailingExecutor(), spec_of(**SMALL), tmp_path / "w", table="events", table_config=None,
                       seed=1, overwrite=False)
    assert list(tmp_path.iterdir()) == []


def test_many_blocks_and_windows_keep_offsets_and_ids_continuous(tmp_path: Path) -> None:
    spec = spec_of(events=9_000, keys=300, segment_rows=700, disorder={"late_fraction": 0.3})
    manifest = run_generation(LocalExecutor(), spec, tmp_path / "w", table="events", table_config=table(), seed=1,
                              overwrite=False, blocks=(1_000, 100))
    assert len(list((tmp_path / "w" / "events").glob("*.parquet"))) == 9
    ev = pd.read_parquet(tmp_path / "w" / "events").sort_values("event_id", ignore_index=True)
    assert ev["event_id"].tolist() == list(range(9_000)) and ev["ingest_time_ms"].is_monotonic_increasing
    for _, rows in ev.groupby("partition"):
        assert rows["offset"].tolist() == list(range(len(rows)))
    for _, rows in ev.groupby("segment_name"):
        assert rows["doc_id"].tolist() == list(range(len(rows)))
    assert manifest["row_counts"]["events"] == 9_000


def test_lifecycle_rows_do_not_depend_on_the_windowing(tmp_path: Path) -> None:
    spec = spec_of(events=6_000, span_s="3h", segment_rows=500, lifecycle={"updates_per_key": 3},
                   disorder={"late_fraction": 0.2, "lateness_s": 120})
    frames = []
    for i, blocks in enumerate([(100_000, 400), (700, 400)]):  # one window, then about nine
        run_generation(LocalExecutor(), spec, tmp_path / str(i), table="events", table_config=None, seed=1,
                       overwrite=False, blocks=blocks)
        frames.append(pd.read_parquet(tmp_path / str(i) / "events").sort_values("event_id", ignore_index=True))
    assert len(list((tmp_path / "1" / "events").glob("*.parquet"))) > 5
    pd.testing.assert_frame_equal(frames[0], frames[1])


def test_read_segment_rows_returns_one_segment_in_doc_order(tmp_path: Path) -> None:
    generate_local(spec_of(**SMALL), tmp_path / "w", seed=1)
    segments = pd.read_parquet(tmp_path / "w" / "segments.parquet")
    name = str(segments.loc[segments["total_docs"].idxmax(), "segment_name"])
    rows = read_segment_rows(tmp_path / "w", [name], columns=["key"]).to_pandas()
    assert set(rows["segment_name"]) == {name} and rows["doc_id"].tolist() == list(range(len(rows)))
    assert len(rows) == segments["total_docs"].max()
