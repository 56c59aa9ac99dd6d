"""The unified GC log importer reads pauses of G1, Parallel and ZGC under any decoration set.

Sizes are binary (1M = 1,048,576 bytes), as HotSpot prints them; expected values are computed from
the fixture lines by hand.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from importer_fixtures import FIXTURES, write

from workbench.errors import InputError
from workbench.workload.importers import GC_LOG_COLUMNS, read_gc_log

M = 1 << 20


@pytest.fixture(scope="module")
def g1() -> pd.DataFrame:
    return read_gc_log(FIXTURES / "gc_g1_jdk17.log").frame


def test_g1_pause_results_become_rows_and_announcements_are_ignored(g1: pd.DataFrame) -> None:
    assert g1["gc_id"].tolist() == [0, 1, 2, 2, 3, 4, 5]
    assert g1["kind"].tolist() == ["young", "young", "remark", "cleanup", "young", "mixed", "full"]
    assert g1["phase"].tolist() == ["Young (Normal)", "Young (Concurrent Start)", "Remark", "Cleanup",
                                    "Young (Prepare Mixed)", "Young (Mixed)", "Full"]
    assert g1["cause"].tolist() == ["G1 Evacuation Pause", "G1 Humongous Allocation", "", "",
                                    "G1 Evacuation Pause", "G1 Evacuation Pause", "System.gc()"]
    assert g1["source_line"].tolist() == [5, 7, 9, 10, 12, 13, 15]


def test_g1_sizes_durations_and_clocks(g1: pd.DataFrame) -> None:
    assert g1["heap_before_bytes"].tolist() == [24 * M, 120 * M, 110 * M, 108 * M, 150 * M, 140 * M, 200 * M]
    assert g1["heap_after_bytes"].tolist() == [4 * M, 100 * M, 108 * M, 108 * M, 90 * M, 60 * M, 50 * M]
    assert set(g1["heap_total_bytes"]) == {256 * M}
    assert g1["duration_ms"].tolist() == [12.0, 8.0, 2.5, 0.5, 10.0, 20.0, 250.0]
    assert g1["uptime_s"].tolist() == [0.912, 2.92, 3.4, 3.6, 4.94, 6.95, 9.15]
    assert g1["start_s"].tolist() == pytest.approx([0.9, 2.912, 3.3975, 3.5995, 4.93, 6.93, 8.9])  # uptime - duration
    # [2024-01-01T00:00:01.012+0000] is 1704067200 + 1.012
    assert g1.loc[0, "wallclock_s"] == pytest.approx(1704067201.012)


def test_g1_counts() -> None:
    counts = read_gc_log(FIXTURES / "gc_g1_jdk17.log").counts
    assert dict(counts) == {"lines": 15, "records": 7, "skipped": 0, "ignored": 8}


def test_jdk9_names_and_a_comma_decimal_locale() -> None:
    frame = read_gc_log(FIXTURES / "gc_jdk9_uptime.log").frame
    assert frame["kind"].tolist() == ["young", "young", "mixed"]  # Initial Mark piggybacks on a young pause
    assert frame["phase"].tolist() == ["Young", "Initial Mark", "Mixed"]
    assert frame["cause"].tolist() == ["G1 Evacuation Pause", "G1 Humongous Allocation", "G1 Evacuation Pause"]
    assert frame["uptime_s"].tolist() == [0.512, 1.25, 2.0]
    assert frame["duration_ms"].tolist() == [3.613, 3.45, 5.0]
    assert frame["heap_before_bytes"].tolist() == [24 * M, 35 * M, 80 * M]
    assert frame["wallclock_s"].isna().all()


def test_zgc_pauses_with_pid_and_tid_decorations_have_no_heap() -> None:
    result = read_gc_log(FIXTURES / "gc_zgc.log")
    frame = result.frame
    assert frame["kind"].tolist() == ["mark_start", "mark_end", "relocate_start"]
    assert frame["duration_ms"].tolist() == [0.012, 0.02, 0.009]
    assert frame["uptime_s"].tolist() == [1.021, 1.101, 1.15]
    assert frame["heap_before_bytes"].isna().all()
    assert result.counts["ignored"] == 4


def test_generational_zgc_with_uptime_millis_and_a_hostname() -> None:
    frame = read_gc_log(FIXTURES / "gc_genzgc_millis.log").frame
    assert frame["phase"].tolist() == ["Y: Mark Start", "Y: Mark End", "O: Mark Start (Major)"]
    assert frame["kind"].tolist() == ["mark_start", "mark_end", "mark_start"]
    assert frame["gc_id"].tolist() == [4, 4, 5]
    assert frame["uptime_s"].tolist() == [1.5, 1.53, 1.531]


def test_wall_time_only_gives_uptime_from_the_first_pause() -> None:
    """Parallel GC with ``-Xlog:gc:file=gc.log:time`` (no level, no tags); the untagged start line is ignored."""
    result = read_gc_log(FIXTURES / "gc_time_only.log")
    frame = result.frame
    assert frame["uptime_s"].tolist() == [0.0, 2.5]
    assert frame["kind"].tolist() == ["young", "full"]
    assert frame["cause"].tolist() == ["Allocation Failure", "Ergonomics"]
    assert frame["heap_total_bytes"].tolist() == [245 * M, 245 * M]
    assert result.counts["ignored"] == 1


def test_decorations_in_other_forms(tmp_path: Path) -> None:
    path = write(tmp_path, "gc.log",
                 "[1704067210000ms][7][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 1G->512M(2G) 1.0ms",
                 "[1704067212000ms][7][info][gc] GC(1) Pause Young (Normal) (G1 Evacuation Pause) 2048K->1K(4T) 500us")
    frame = read_gc_log(path).frame
    assert frame["wallclock_s"].tolist() == [1704067210.0, 1704067212.0]  # timemillis, not uptime
    assert frame["uptime_s"].tolist() == [0.0, 2.0]
    assert frame["heap_before_bytes"].tolist() == [1 << 30, 2048 << 10]
    assert frame["heap_after_bytes"].tolist() == [512 * M, 1 << 10]
    assert frame["heap_total_bytes"].tolist() == [2 << 30, 4 << 40]
    assert frame["duration_ms"].tolist() == [1.0, 0.5]


def test_columns_are_the_documented_ones(g1: pd.DataFrame) -> None:
    assert tuple(g1.columns) == GC_LOG_COLUMNS
    assert str(g1["heap_before_bytes"].dtype) == "Int64" and str(g1["duration_ms"].dtype) == "float64"


MALFORMED = [
    (2, "heap sizes '512X->128M(1024M)' are not of the form"),
    (3, "no pause duration after the heap sizes"),
    (4, "unexpected '512M->128M(1024M) 12.3' after the pause name"),
    (5, "a pause result needs its duration"),
    (6, "decoration [12.3.4s] is not a time"),
    (7, "unterminated '[' decoration"),
    (8, "JDK 8 GC log line"),
    (9, "decoration [2024-02-30T00:00:00.000+0000] is not a valid date and time"),
    (10, "no time or uptime decoration"),
    (11, "cannot read the pause name"),
]


@pytest.mark.parametrize(("line_no", "problem"), MALFORMED)
def test_strict_mode_reports_each_kind_of_bad_line_with_its_number(tmp_path: Path, line_no: int, problem: str) -> None:
    lines = (FIXTURES / "gc_malformed.log").read_text(encoding="utf-8").splitlines()
    path = write(tmp_path, "gc.log", *lines[:1], *lines[line_no - 1:])  # the bad line becomes line 2
    with pytest.raises(InputError) as err:
        read_gc_log(path)
    assert err.value.where == f"{path}:2"
    assert problem in err.value.problem


def test_lenient_mode_skips_bad_lines_and_counts_them() -> None:
    result = read_gc_log(FIXTURES / "gc_malformed.log", lenient=True)
    assert [line for line, _ in result.skipped] == [line for line, _ in MALFORMED]
    assert result.frame["gc_id"].tolist() == [0, 10]
    assert (result.counts["skipped"], result.counts["records"], result.counts["lines"]) == (10, 2, 12)


def test_a_log_without_pauses_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "gc.log", "[0.010s][info][gc,init] Version: 21.0.2+13-LTS (release)")
    with pytest.raises(InputError, match="holds no GC pause lines"):
        read_gc_log(path)


def test_jdk8_verbose_gc_lines_become_the_same_rows() -> None:
    """JDK 8 -verbose:gc with -XX:+PrintGCDateStamps/-XX:+PrintGCTimeStamps: the pauses of gc_g1_jdk17.log.

    JDK 8 stamps a pause when it starts, so its end (``uptime_s``) is the stamp plus the duration.
    """
    result = read_gc_log(FIXTURES / "gc_jdk8_basic.log")
    frame = result.frame
    assert frame["kind"].tolist() == ["young", "young", "remark", "cleanup", "young", "mixed", "full"]
    assert frame["phase"].tolist() == ["Young", "Young (Initial Mark)", "Remark", "Cleanup", "Young", "Mixed", "Full"]
    assert frame["cause"].tolist() == ["G1 Evacuation Pause", "G1 Humongous Allocation", "", "",
                                       "G1 Evacuation Pause", "G1 Evacuation Pause", "System.gc()"]
    assert frame["gc_id"].tolist() == list(range(7))  # JDK 8 numbers no collections
    assert frame["duration_ms"].tolist() == pytest.approx([12.0, 8.0, 2.5, 0.5, 10.0, 20.0, 250.0])
    assert frame["uptime_s"].tolist() == pytest.approx([0.512, 2.908, 3.3995, 3.5995, 4.94, 6.95, 9.15])
    assert frame["start_s"].tolist() == pytest.approx([0.5, 2.9, 3.397, 3.599, 4.93, 6.93, 8.9])
    assert frame.loc[0, "wallclock_s"] == pytest.approx(1704067200.512)
    assert frame["heap_before_bytes"].tolist()[:2] == [24 * M, 120 * M]
    assert frame["heap_after_bytes"].tolist()[0] == 4096 << 10
    assert pd.isna(frame.loc[2, "heap_after_bytes"])  # JDK 8's remark prints no sizes
    assert frame["heap_total_bytes"].tolist()[-1] == 256 * M
    assert result.counts["ignored"] == 3 + 6  # the header and the concurrent phases


def test_jdk8_parallel_and_uptime_only_lines(tmp_path: Path) -> None:
    path = write(tmp_path, "gc.log", "3.000: [GC (Allocation Failure)  65536K->1234K(251392K), 0.0051230 secs]",
                 "5.000: [Full GC (Ergonomics)  200M->100M(245M), 0.1500000 secs]")
    frame = read_gc_log(path).frame
    assert frame["kind"].tolist() == ["young", "full"]
    assert frame["cause"].tolist() == ["Allocation Failure", "Ergonomics"]
    assert frame["uptime_s"].tolist() == pytest.approx([3.005123, 5.15])
    assert frame["heap_before_bytes"].tolist() == [65536 << 10, 200 * M] and frame["wallclock_s"].isna().all()


@pytest.mark.parametrize(("line", "problem"), [
    ("7.000: [GC pause (G1 Evacuation Pause) (young), 0.0123 secs]", "-XX:+PrintGCDetails"),
    ("[GC pause (G1 Evacuation Pause) (young) 24M->4M(256M), 0.0036130 secs]", "has no time stamp"),
])
def test_jdk8_lines_the_importer_cannot_use_say_which_flags_to_log_with(tmp_path: Path, line: str,
                                                                        problem: str) -> None:
    with pytest.raises(InputError) as err:
        read_gc_log(write(tmp_path, "gc.log", line))
    assert err.value.where.endswith("gc.log:1")
    assert problem in err.value.problem and "-XX:+PrintGCTimeStamps" in err.value.problem
