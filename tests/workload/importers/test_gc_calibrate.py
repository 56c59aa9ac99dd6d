"""GC calibration turns the pauses of a log into the ``fixed`` collector's samples, per kind too.

Hand computation for ``gc_g1_jdk17.log`` (uptime is stamped at the *end* of a pause):

====  =========  =======  =========  ========
pause  kind       end (s)  dur (ms)   start (s)
====  =========  =======  =========  ========
0      young      0.912    12         0.900
1      young      2.920    8          2.912
2      remark     3.400    2.5        3.3975
3      cleanup    3.600    0.5        3.5995
4      young      4.940    10         4.930
5      mixed      6.950    20         6.930
6      full       9.150    250        8.900
====  =========  =======  =========  ========

Gaps (next start - this end): 2.0, 0.4775, 0.1995, 1.33, 1.99, 1.95. Span 9.15 - 0.9 = 8.25 s, of
which 303 ms paused.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest
from importer_fixtures import FIXTURES

from workbench.distributions import make_distribution
from workbench.errors import InputError
from workbench.scenario import load_scenario
from workbench.workload.importers import calibrate_gc, read_gc_log

M = 1 << 20


@pytest.fixture(scope="module")
def calibration() -> dict[str, Any]:
    return calibrate_gc(read_gc_log(FIXTURES / "gc_g1_jdk17.log").frame)


def test_the_fixed_collector_gets_every_gap_and_every_pause(calibration: dict[str, Any]) -> None:
    gc = calibration["fixed"]  # beside the g1 section this basic log of four young collections allows
    assert gc["collector"] == "fixed"
    assert gc["interval_s"]["dist"] == "empirical" and gc["pause_ms"]["dist"] == "empirical"
    assert gc["interval_s"]["values"] == pytest.approx([2.0, 0.4775, 0.1995, 1.33, 1.99, 1.95])
    assert gc["pause_ms"]["values"] == [12.0, 8.0, 2.5, 0.5, 10.0, 20.0, 250.0]


def test_overall_figures(calibration: dict[str, Any]) -> None:
    assert calibration["pauses"] == 7
    assert calibration["span_s"] == pytest.approx(8.25)
    assert calibration["gc_time_fraction"] == pytest.approx(0.303 / 8.25, abs=1e-6)


def test_kinds_come_in_g1_order(calibration: dict[str, Any]) -> None:
    assert list(calibration["kinds"]) == ["young", "mixed", "remark", "cleanup", "full"]


def test_young_pauses_have_their_own_intervals_and_heap_figures(calibration: dict[str, Any]) -> None:
    young = calibration["kinds"]["young"]
    assert (young["count"], young["share"]) == (3, pytest.approx(3 / 7, abs=1e-6))
    # young 1 starts 2.912 after young 0 ended 0.912; young 4 starts 4.930 after young 1 ended 2.920
    assert young["interval_s"]["values"] == pytest.approx([2.0, 2.01])
    assert young["mean_interval_s"] == pytest.approx(2.005)
    assert young["pause_ms"]["values"] == [12.0, 8.0, 10.0]
    # sorted 8, 10, 12: p90 at rank 1.8 -> 10 + 0.8 * 2; p99 at rank 1.98 -> 10 + 0.98 * 2
    assert young["pause_ms_summary"] == pytest.approx({"mean": 10.0, "p50": 10.0, "p90": 11.6, "p99": 11.96,
                                                       "max": 12.0})
    assert young["heap_before_bytes_mean"] == pytest.approx((24 + 120 + 150) / 3 * M)
    assert young["heap_after_bytes_mean"] == pytest.approx((4 + 100 + 90) / 3 * M)
    assert young["reclaimed_bytes_mean"] == pytest.approx((20 + 20 + 60) / 3 * M)
    assert young["heap_total_bytes_max"] == 256 * M


def test_a_kind_seen_once_has_no_interval(calibration: dict[str, Any]) -> None:
    full = calibration["kinds"]["full"]
    assert full["count"] == 1 and full["interval_s"] is None and full["mean_interval_s"] is None
    assert full["pause_ms"] == {"dist": "empirical", "values": [250.0]}
    assert full["reclaimed_bytes_mean"] == 150 * M


def test_kinds_without_heap_sizes_report_none() -> None:
    calibration = calibrate_gc(read_gc_log(FIXTURES / "gc_zgc.log").frame)
    assert list(calibration["kinds"]) == ["mark_end", "mark_start", "relocate_start"]
    assert calibration["kinds"]["mark_start"]["heap_before_bytes_mean"] is None
    # mark start ends 1.021; mark end starts 1.101 - 0.00002; relocate start starts 1.15 - 0.000009
    assert calibration["gc"]["interval_s"]["values"] == pytest.approx([0.07998, 0.048991])


@pytest.mark.parametrize("section", ["gc", "fixed"])
def test_the_calibration_is_a_valid_scenario_gc_section(calibration: dict[str, Any], section: str) -> None:
    scenario = load_scenario({"cluster": {"servers": 2, "gc": calibration[section]},
                              "table": {"tableName": "t", "tableType": "OFFLINE"},
                              "workload": {"synthetic": {"segments_per_server": 1, "docs_per_segment": 10}}})
    assert scenario.cluster.gc.collector == {"gc": "g1", "fixed": "fixed"}[section]
    if section == "fixed":
        assert make_distribution(calibration["fixed"]["pause_ms"]).mean == pytest.approx(303 / 7)


def test_overlapping_stamps_clip_gaps_at_zero() -> None:
    """Millisecond stamps can make the next pause appear to start before the last ended."""
    frame = pd.DataFrame({"uptime_s": [1.0, 1.0005], "kind": ["young", "young"], "duration_ms": [1.0, 1.0]})
    assert calibrate_gc(frame)["gc"]["interval_s"]["values"] == [0.0]


def test_one_pause_or_missing_columns_is_an_input_error() -> None:
    with pytest.raises(InputError, match="at least two pauses"):
        calibrate_gc(pd.DataFrame({"uptime_s": [1.0], "kind": ["young"], "duration_ms": [3.0]}))
    with pytest.raises(InputError, match="missing duration_ms"):
        calibrate_gc(pd.DataFrame({"uptime_s": [1.0, 2.0], "kind": ["young", "young"]}))
