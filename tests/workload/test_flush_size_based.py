"""Size-based flushing follows Pinot 1.5.1's ``SizeBasedSegmentFlushThresholdComputer``.

The expected values are Pinot's own: each test below names the Pinot test method
(``SizeBasedSegmentFlushThresholdComputerTest`` or ``FlushThresholdUpdaterTest``, pinot-controller,
``helix/core/realtime/segment``, tag release-1.5.1) whose inputs and assertions it transcribes. Then hand
computations of the sequence a partition goes through.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from workbench.pinot.flush_size import (
    ROWS_MULTIPLIER_WHEN_TIME_THRESHOLD_HIT,
    AutotuneState,
    Committed,
    settled_rows,
    size_based_sequence,
)

HOUR_MS = 3_600_000
MIB = 1024 * 1024


def _after(commit: Committed, *, desired: int = 0, time_ms: int = 0, initial: int = 100_000) -> AutotuneState:
    return AutotuneState(desired, initial, time_ms).commit(commit)


def test_first_segment_gets_initial_rows() -> None:  # testUseAutoTuneInitialRowsIfFirstSegmentInPartition
    assert AutotuneState(0, 1_000, 0).threshold() == 1_000


def test_a_known_ratio_and_last_size() -> None:
    # testUseLastSegmentSizeTimesRatioIfFirstSegmentInPartitionAndNewPartitionGroup(...MinimumSize10000Rows)
    assert AutotuneState(20_000, 100_000, 0, ratio=1.5, last_size=20_000).threshold() == 30_000
    assert AutotuneState(2_000, 100_000, 0, ratio=1.5, last_size=2_000).threshold() == 10_000


def test_without_a_ratio_the_last_threshold_carries_over() -> None:
    # testUseLastSegmentsThresholdIfSegmentSizeMissing,
    # testUseLastSegmentsThresholdIfSegmentIsCommittingDueToForceCommit
    assert _after(Committed(rows=0, size_bytes=0, threshold=5_000), time_ms=123).threshold() == 5_000
    forced = _after(Committed(rows=0, size_bytes=500_000, threshold=25_000, force_commit=True))
    assert forced.threshold() == 25_000
    # testForceCommitSkipsRatioUpdateWithCommitTimeCompaction
    forced = _after(Committed(20_000, 500_000, 80_000, pre_commit_rows=100_000, force_commit=True), initial=25_000)
    assert (forced.ratio, forced.threshold()) == (0.0, 80_000)
    # testNoRows
    assert _after(Committed(0, 2_500_000, 0), desired=3_000_000, initial=1_000).threshold() == 1_000


def test_a_segment_sealed_by_time_gets_more_rows_next() -> None:
    # testApplyMultiplierToTotalDocsWhenTimeThresholdNotReached: 10,000 x 1.1
    state = _after(Committed(10_000, 2_000_000, 20_000, time_consumed_ms=HOUR_MS), desired=3_000_000,
                   time_ms=6 * HOUR_MS)
    assert state.threshold() == 11_000
    # testApplyMultiplierToAdjustedTotalDocsWhenTimeThresholdIsReached: (30,000 x 1h / 2h) x 1.1
    state = _after(Committed(30_000, 2_000_000, 60_000, time_consumed_ms=2 * HOUR_MS), desired=3_000_000,
                   time_ms=HOUR_MS)
    assert state.threshold() == 16_500


@pytest.mark.parametrize(("desired", "size", "expected"), [
    (3_000_000, 5_000_000, 15_000),   # testSegmentSizeTooSmall (too big, in fact): rows / 2
    (5_000_000, 2_000_000, 45_000),   # testSegmentSizeTooBig (too small, in fact): rows x 1.5
    (3_000_000, 2_500_000, 36_000),   # testSegmentSizeJustRight: desired x rows / size
])
def test_the_last_size_against_the_desired_one(desired: int, size: int, expected: int) -> None:
    assert _after(Committed(30_000, size, 20_000), desired=desired).threshold() == expected


def test_the_ratio_is_smoothed() -> None:  # testAdjustRowsToSizeRatio
    state = _after(Committed(30_000, 200_000, 60_000), desired=3_000_000)
    assert state.ratio == 0.15
    assert state.commit(Committed(50_000, 200_000, 60_000)).ratio == 0.16  # 0.1 x 0.25 + 0.9 x 0.15


@pytest.mark.parametrize(("desired", "size", "pre", "post", "threshold", "expected", "ratio"), [
    (300_000, 200_000, -1, 30_000, 20_000, 45_000, 0.15),  # testTraditionalBehaviorWithoutCommitTimeCompaction
    (300_000, 200_000, 0, 25_000, 20_000, 37_500, 0.125),  # testEdgeCaseZeroPreCommitRowsWithCompaction
    (300_000, 200_000, 100_000, 20_000, 80_000, 50_000, 0.1),  # testCommitTimeCompactionWithHighCompactionRatio
    (400_000, 250_000, 60_000, 40_000, 50_000, 64_000, 0.16),  # testCommitTimeCompactionWithMediumCompactionRatio
    (350_000, 180_000, 45_000, 42_000, 40_000, 81_666, 45_000 / 192_857),  # ...WithLowCompactionRatio
    (300_000, 500_000, 120_000, 24_000, 100_000, 60_000, None),  # testSegmentSizeAdjustmentWithCommitTimeCompaction
])
def test_commit_time_compaction(desired: int, size: int, pre: int, post: int, threshold: int, expected: int,
                                ratio: float | None) -> None:
    state = _after(Committed(post, size, threshold, pre_commit_rows=pre), desired=desired)
    assert state.threshold() == expected
    if ratio is not None:
        assert state.ratio == pytest.approx(ratio, abs=1e-6)


def test_compaction_with_the_time_threshold_and_mixed_commits() -> None:
    # testCommitTimeCompactionWithTimeThresholdHit: 80,000 pre-commit rows < 100,000, but ~1.07 MB is past the
    # desired size, so not the time rule: half of 80,000
    state = _after(Committed(15_000, 200_000, 100_000, time_consumed_ms=HOUR_MS, pre_commit_rows=80_000),
                   desired=300_000, time_ms=6 * HOUR_MS)
    assert state.threshold() == 40_000
    # testMixedScenariosWithAndWithoutCompaction: ratio 0.1, then 0.1 x 0.15 + 0.9 x 0.1 = 0.105 -> 31,500 rows
    state = _after(Committed(20_000, 200_000, 60_000, HOUR_MS, pre_commit_rows=80_000), desired=300_000,
                   time_ms=6 * HOUR_MS)
    assert state.ratio == pytest.approx(0.1)
    state = state.commit(Committed(30_000, 200_000, 25_000, HOUR_MS))
    assert state.ratio == pytest.approx(0.105, abs=1e-3) and state.threshold() == 31_500


def test_updater_time_threshold_and_minimum() -> None:
    """``FlushThresholdUpdaterTest.testTimeThreshold`` and ``testMinThreshold`` (Pinot's defaults: 200 MiB,
    6 h, 100,000 initial rows; the segments commit at once, ~0 ms consumed)."""
    state = AutotuneState(200 * MIB, 100_000, 6 * HOUR_MS)
    first = state.threshold()
    assert first == 100_000
    state = state.commit(Committed(15_000, 128_000, first))
    second = state.threshold()
    assert second == int(15_000 * ROWS_MULTIPLIER_WHEN_TIME_THRESHOLD_HIT) == 16_500
    state = state.commit(Committed(second, 128_000, second))
    assert state.threshold() != 18_150
    assert state.threshold() == 24_750  # by hand: 128,000 B is under half of 200 MiB, so 16,500 x 1.5

    state = AutotuneState(200 * MIB, 100_000, 6 * HOUR_MS).commit(Committed(15, 128, 100_000))
    assert state.threshold() == 10_000
    assert state.commit(Committed(20, 128, 10_000)).threshold() == 10_000


# FlushThresholdUpdaterTest: segment sizes in MB for each 100,000 rows consumed
EXPONENTIAL = [50, 60, 70, 83, 98, 120, 160, 200, 250, 310, 400, 500, 600, 700, 800, 950, 1130, 1400, 1700, 2000]
LOGARITHMIC = [70, 180, 290, 400, 500, 605, 690, 770, 820, 865, 895, 920, 940, 955, 970, 980, 1000, 1012, 1020, 1030]
STEPS = [100, 100, 200, 200, 300, 300, 400, 400, 500, 500, 600, 600, 700, 700, 800, 800, 900, 900, 1000, 1000]


def _pinot_size(sizes_mb: list[int]) -> Callable[[int], int]:
    """``FlushThresholdUpdaterTest.getSegmentSizeBytes``: the size of a segment of ``rows`` rows."""
    def size(rows: int) -> int:
        if rows < 100_000:
            mb = sizes_mb[0] / 100_000 * rows
        else:
            i = min(rows // 100_000, 19)
            mb = sizes_mb[i] + (sizes_mb[i] - sizes_mb[i - 1]) / 100_000 * (rows - i * 100_000)
        return int(mb * MIB)
    return size


@pytest.mark.parametrize("sizes_mb", [EXPONENTIAL, LOGARITHMIC, STEPS], ids=["exponential", "logarithmic", "steps"])
def test_segment_sizes_settle_on_the_desired_size(sizes_mb: list[int]) -> None:
    """``FlushThresholdUpdaterTest.testSegmentSizeBasedFlushThreshold``: 500 segments always sealed by rows;
    after the 400th each one's size is within 1% of 200 MiB."""
    size = _pinot_size(sizes_mb)
    steps = size_based_sequence(desired_bytes=200 * MIB, initial_rows=100_000, bytes_per_row=size,
                                rows_per_s=1e12, time_ms=6 * HOUR_MS, segments=501)
    assert steps[0].threshold == 100_000
    for step in steps[402:]:
        assert 0.99 * 200 * MIB < size(step.rows) < 1.01 * 200 * MIB


def test_hand_computed_sequence_of_a_fast_partition() -> None:
    """200 MiB at 60 B a row, never sealed by time: 100,000 rows (6 MB, under half of 200 MiB = 104,857,600 B)
    -> x 1.5 while the last segment is under half: 150,000, 225,000, 337,500, 506,250, 759,375,
    1,139,062 (x 1.5 = 1,139,062.5, truncated), 1,708,593 (102,515,580 B: still under half) -> 2,562,889
    (153,773,340 B: inside [half, 1.5x]) -> desired x ratio = 209,715,200 / 60 = 3,495,253 (truncated), and
    there it stays."""
    steps = size_based_sequence(desired_bytes=200 * MIB, initial_rows=100_000, bytes_per_row=60.0,
                                rows_per_s=1e9, time_ms=6 * HOUR_MS, segments=12)
    assert [s.threshold for s in steps] == [100_000, 150_000, 225_000, 337_500, 506_250, 759_375, 1_139_062,
                                            1_708_593, 2_562_889, 3_495_253, 3_495_253, 3_495_253]
    assert all(s.rows == s.threshold for s in steps)
    assert settled_rows(steps) == (3_495_253, 10)


def test_hand_computed_sequence_of_a_slow_partition() -> None:
    """50 rows/s with a 1 h time threshold: 180,000 rows per hour. The first segment (100,000) fills in 2,000 s;
    its 6 MB (at 60 B) is under half the size, so 150,000, also full; then 225,000, which the hour seals at
    180,000 rows: time rule, 180,000 x 1.1 = 198,000, which the hour seals again at 180,000: 198,000 for good."""
    steps = size_based_sequence(desired_bytes=200 * MIB, initial_rows=100_000, bytes_per_row=60.0,
                                rows_per_s=50.0, time_ms=HOUR_MS, segments=6)
    assert [(s.threshold, s.rows) for s in steps] == [(100_000, 100_000), (150_000, 150_000), (225_000, 180_000),
                                                      (198_000, 180_000), (198_000, 180_000), (198_000, 180_000)]
    assert settled_rows(steps) == (180_000, 3)
