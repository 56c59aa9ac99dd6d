"""G1's per-collection details and ZGC's allocation stalls in the pause table (hand-written log lines)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from importer_fixtures import write

from workbench.workload.importers import GC_LOG_COLUMNS, read_gc_log

M = 1 << 20
G1_LINES = (
    "[0.019s][info][gc,init] Heap Region Size: 2M",
    "[0.296s][info][gc,start] GC(0) Pause Young (Normal) (G1 Evacuation Pause)",
    "[0.296s][debug][gc,heap] GC(0)   region size 2048K, 102 young (208896K), 0 survivors (0K)",
    "[0.430s][debug][gc,phases] GC(0)       Scanned Cards:    Min: 10000, Avg: 11537.5, Max: 13075, Diff: 3075, "
    "Sum: 23075, Workers: 2",
    "[0.430s][debug][gc,phases] GC(0)     Scan Heap Roots (ms):  Min:  7.0, Avg:  8.0, Max:  8.9, Diff:  1.9, "
    "Sum: 16.0, Workers: 2",
    "[0.430s][debug][gc,phases] GC(0)     Object Copy (ms):      Min: 120.1, Avg: 122.7, Max: 125.3, Diff: 5.2, "
    "Sum: 245.4, Workers: 2",
    "[0.431s][debug][gc,phases] GC(0)         Copied Bytes    Min: 78955716, Avg: 78955716.0, Max: 78955716, Diff: 0, "
    "Sum: 157911432, Workers: 2",
    "[0.431s][info][gc,heap] GC(0) Eden regions: 102->0(89)",
    "[0.431s][info][gc,heap] GC(0) Survivor regions: 0->13(13)",
    "[0.431s][info][gc,heap] GC(0) Old regions: 0->63",
    "[0.431s][info][gc,heap] GC(0) Archive regions: 2->2",
    "[0.431s][info][gc,heap] GC(0) Humongous regions: 11->11",
    "[0.432s][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 227M->175M(4096M) 136.690ms",
    "[0.900s][info][gc] GC(1) Pause Young (Normal) (G1 Evacuation Pause) 300M->200M(4096M) 10.000ms",
)


@pytest.fixture(scope="module")
def g1(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    return read_gc_log(write(tmp_path_factory.mktemp("g1"), "gc.log", *G1_LINES)).frame


def test_region_counts_become_bytes_at_the_logged_region_size(g1: pd.DataFrame) -> None:
    row = g1.iloc[0]
    assert row["eden_before_bytes"] == 102 * 2 * M and row["eden_target_bytes"] == 89 * 2 * M
    assert (row["survivor_before_bytes"], row["survivor_after_bytes"]) == (0, 13 * 2 * M)
    assert (row["old_before_bytes"], row["old_after_bytes"]) == (0, 63 * 2 * M)
    assert row["humongous_after_bytes"] == 11 * 2 * M


def test_copied_bytes_scanned_cards_and_phase_times_come_from_the_debug_lines(g1: pd.DataFrame) -> None:
    row = g1.iloc[0]
    assert (row["copied_bytes"], row["scanned_cards"]) == (157_911_432, 23_075)
    assert (row["object_copy_ms"], row["scan_roots_ms"]) == (125.3, 8.9)  # the slowest worker's


def test_a_collection_without_details_has_nulls_and_the_columns_are_the_documented_ones(g1: pd.DataFrame) -> None:
    assert tuple(g1.columns) == GC_LOG_COLUMNS
    assert g1.iloc[1][["eden_before_bytes", "copied_bytes", "object_copy_ms"]].isna().all()


def test_without_the_region_size_region_counts_are_left_out(tmp_path: Path) -> None:
    frame = read_gc_log(write(tmp_path, "gc.log", *[line for line in G1_LINES if "egion" not in line.split("]")[-1]
                                                    or "regions:" in line])).frame
    assert frame["eden_before_bytes"].isna().all() and frame["copied_bytes"].iloc[0] == 157_911_432


def test_zgc_allocation_stalls_are_rows_of_kind_stall_waiting_on_the_last_named_cycle(tmp_path: Path) -> None:
    frame = read_gc_log(write(tmp_path, "zgc.log",
                              "[1.021s][info][gc,phases] GC(4) y: Pause Mark Start 0.012ms",
                              "[1.030s][info][gc] Allocation Stall (main) 20.217ms",
                              "[1.040s][info][gc,alloc] GC(4) y: Allocation Stalls: 0 1 1 1",
                              "[1.101s][info][gc,phases] GC(4) Y: Pause Mark End 0.020ms")).frame
    assert list(frame["kind"]) == ["mark_start", "stall", "mark_end"]
    stall = frame.iloc[1]
    assert (stall["gc_id"], stall["cause"], stall["duration_ms"]) == (4, "main", 20.217)
    assert stall["start_s"] == pytest.approx(1.030 - 0.020217)
    assert frame.iloc[0]["phase"] == "y: Mark Start"  # generational ZGC's lower-case young prefix
