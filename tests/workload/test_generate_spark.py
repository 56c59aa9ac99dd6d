"""Spark runs the same tasks as the in-process engine: byte-identical output whatever the task layout."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from workload_fixtures import spec_of, table

from workbench.workload.engine import run_generation
from workbench.workload.generate import SparkExecutor, generate_events
from workbench.workload.pure import LocalExecutor

pytestmark = pytest.mark.spark

POPULARITY = {"events": 12_000, "keys": 400, "key_distribution": "zipf", "segment_rows": 900,
              "disorder": {"late_fraction": 0.1}, "queries": {"duration_s": 60}}
LIFECYCLE = {"events": 8_000, "span_s": "3h", "segment_rows": 600, "segment_time_s": "30m",
             "lifecycle": {"delete_fraction": 0.2}, "disorder": {"late_fraction": 0.1},
             "queries": {"duration_s": 60}}
#: size-based flushing: each segment's threshold from the partition's previous one (Pinot's sequence)
SIZE_BASED = {"events": 12_000, "keys": 400, "segment_size": "200K", "segment_initial_rows": 1_000,
              "queries": {"duration_s": 60}}


@pytest.mark.parametrize("spec", [POPULARITY, LIFECYCLE, SIZE_BASED], ids=["popularity", "lifecycle", "size-based"])
def test_spark_output_equals_the_in_process_engine_for_any_task_count(spark: Any, tmp_path: Path,
                                                                      spec: dict[str, Any]) -> None:
    kwargs: dict[str, Any] = {"table": "events", "table_config": table(column="key", function="Murmur"), "seed": 4,
                              "overwrite": False, "blocks": (1_500, 300)}  # about 8 blocks and windows
    local = run_generation(LocalExecutor(), spec_of(**spec), tmp_path / "local", **kwargs)
    one = run_generation(SparkExecutor(spark, tasks=1), spec_of(**spec), tmp_path / "one", **kwargs)
    many = run_generation(SparkExecutor(spark, tasks=5), spec_of(**spec), tmp_path / "many", **kwargs)
    assert len(local["checksums"]) > 5
    assert one["checksums"] == local["checksums"] == many["checksums"]
    assert many["executor"]["engine"] == "spark" and many["executor"]["spark_master"] == "local[2]"


def test_generate_events_shows_progress_and_uses_the_table_config(spark: Any, tmp_path: Path,
                                                                  capfd: pytest.CaptureFixture[str]) -> None:
    manifest = generate_events(spark, spec_of(**POPULARITY), tmp_path / "w", table="ignored",
                               table_config=table("clicks"), progress=True)
    err = capfd.readouterr().err
    assert "events" in err and "segments" in err and "100%" in err
    assert manifest["table"] == "clicks" and manifest["row_counts"]["events"] == 12_000
    assert manifest["columns"]["stream_partition"]["functionName"] == "Modulo"
