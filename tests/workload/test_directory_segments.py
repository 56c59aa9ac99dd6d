"""Reading a workload directory's segments: a consuming segment whose size ZK does not record yet."""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd
import pytest

from workbench.workload.directory import read_segments


def _write(tmp_path: Path, rows: list[tuple[str, int, str, int]]) -> Path:
    frame = pd.DataFrame(rows, columns=["segment_name", "partition", "status", "total_docs"])
    frame["start_time_ms"], frame["end_time_ms"] = 0, 1
    frame.to_parquet(tmp_path / "segments.parquet", index=False)
    return tmp_path


def test_an_unknown_consuming_size_is_half_its_partitions_median_sealed_segment(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Partition 0 sealed 100, 300 and 1000 docs (median 300): its consuming segment counts 150. Partition 1
    has sealed nothing yet: half the median of every sealed segment (300 / 2)."""
    data = _write(tmp_path, [("t__0__0", 0, "DONE", 100), ("t__0__1", 0, "DONE", 300), ("t__0__2", 0, "DONE", 1000),
                             ("t__0__3", 0, "IN_PROGRESS", -1), ("t__1__0", 1, "IN_PROGRESS", -1)])
    with caplog.at_level(logging.WARNING):
        docs = read_segments(data).set_index("segment_name")["total_docs"]
    assert docs["t__0__3"] == 150 and docs["t__1__0"] == 150
    assert "half of its partition's median sealed segment" in caplog.text


def test_a_sealed_segment_without_a_size_is_still_an_error(tmp_path: Path) -> None:
    from workbench.errors import InputError

    data = _write(tmp_path, [("t__0__0", 0, "DONE", -1)])
    with pytest.raises(InputError, match="total_docs"):
        read_segments(data)
