"""Size-based flushing: the row threshold Pinot gives each new consuming segment of a realtime table whose
stream config says ``realtime.segment.flush.threshold.rows: 0`` or sets
``realtime.segment.flush.threshold.segment.size`` (:attr:`workbench.pinot.flush.FlushConfig.size_based`).

Follows Pinot 1.5.1's ``SizeBasedSegmentFlushThresholdComputer`` (pinot-controller,
``helix/core/realtime/segment``), which ``SegmentSizeBasedFlushThresholdUpdater`` drives: the controller
keeps one per (table, topic), feeds it each committing segment (``onSegmentCommit``) and asks it the
threshold of the partition's next consuming segment (``computeThreshold``) right after.

- **The first segments** get ``realtime.segment.flush.autotune.initialRows`` (100,000): no ratio yet.
- **The rows-to-size ratio** of the table: a committed segment's rows / its bytes, smoothed as
  ``0.1 x this segment's + 0.9 x the ratio so far`` (the first commit sets it). One ratio for all the
  table's partitions, fed by every partition's commits (release 0.10's computer read only the lowest
  partition id's; 1.5.1 has no such filter).
- **A segment sealed by time** (fewer rows than its threshold) smaller than the desired size: the next
  gets ``1.1 x`` the rows it consumed, scaled down first by ``threshold.time / time consumed`` when it
  consumed for longer than the time threshold (the threshold was lowered).
- **Otherwise**, judged on the last segment's size against the desired one: under half, ``1.5 x`` its
  rows; over 1.5 times, half its rows; else ``desired size x ratio``.
- **Clamps**: at least 10,000 rows (``MINIMUM_NUM_ROWS_THRESHOLD``), at most ``Integer.MAX_VALUE``.
- A commit with no rows or no size, or a force commit, leaves the ratio alone; while there is no ratio
  the next segment keeps the committing one's threshold.
- Commit-time compaction (upsert tables): the pre-commit row count, when larger, is what is judged, with
  the size scaled up by pre / post rows; the ratio stays post-commit rows over post-commit size.

Not modelled: ``realtime.segment.flush.threshold.variance.percentage`` (a random factor, 0 by default) and
pauseless consumption's late commit notice.

The ratio is shared by the partitions, but the last segment judged is the one just committed, the same
partition's previous segment. So with segment sizes proportional to rows (one bytes-per-row figure, as
the workbench estimates them), the ratio is ``1 / bytes per row`` from the first commit on, whatever the
order of commits across partitions, and each partition's sequence stands alone
(:func:`size_based_sequence`).

>>> [s.threshold for s in size_based_sequence(desired_bytes=200 * 2**20, initial_rows=100_000,
...                                           bytes_per_row=60.0, rows_per_s=1e9, time_ms=6 * 3_600_000,
...                                           segments=4)]
[100000, 150000, 225000, 337500]
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

from workbench.pinot.flush import DEFAULT_FLUSH_THRESHOLD_SEGMENT_SIZE_BYTES

__all__ = ["CURRENT_SEGMENT_RATIO_WEIGHT", "MINIMUM_NUM_ROWS_THRESHOLD", "PREVIOUS_SEGMENT_RATIO_WEIGHT",
           "ROWS_MULTIPLIER_WHEN_TIME_THRESHOLD_HIT", "AutotuneState", "Committed", "SegmentStep",
           "settled_rows", "size_based_sequence"]

#: ``SizeBasedSegmentFlushThresholdComputer`` constants at Pinot 1.5.1.
MINIMUM_NUM_ROWS_THRESHOLD = 10_000
CURRENT_SEGMENT_RATIO_WEIGHT = 0.1
PREVIOUS_SEGMENT_RATIO_WEIGHT = 0.9
ROWS_MULTIPLIER_WHEN_TIME_THRESHOLD_HIT = 1.1
_INT_MAX = 2**31 - 1


@dataclass(frozen=True)
class Committed:
    """What the controller reads of a committing segment: its rows (``totalDocs``), size in bytes, the row
    threshold it was given, how long it consumed (commit time - creation time), and, for commit-time
    compaction, its rows before compaction (``-1``: not given) and whether it was force-committed."""

    rows: int
    size_bytes: int
    threshold: int
    time_consumed_ms: int = 0
    pre_commit_rows: int = -1
    force_commit: bool = False


def _threshold(target_rows: int) -> int:
    """``getThreshold``: at least 10,000 rows, at most ``Integer.MAX_VALUE``."""
    return _INT_MAX if target_rows > _INT_MAX else max(int(target_rows), MINIMUM_NUM_ROWS_THRESHOLD)


@dataclass(frozen=True)
class AutotuneState:
    """The computer's state for one table: the smoothed rows-to-size ratio (0: none yet) and the last
    committed segment's rows, size, threshold and consuming time. Immutable: :meth:`commit` returns the
    next state, :meth:`threshold` the next consuming segment's rows.

    ``time_ms`` is the stream config's ``threshold.time`` and ``desired_bytes`` its ``segment.size`` (0 or
    less: Pinot's 200 MiB).
    """

    desired_bytes: int
    initial_rows: int
    time_ms: int
    ratio: float = 0.0
    last_rows: int = 0
    last_size: int = 0
    last_threshold: int = 0
    last_time_ms: int = 0

    def commit(self, seg: Committed) -> AutotuneState:
        """``onSegmentCommit``: the state after ``seg`` commits."""
        compacted = seg.pre_commit_rows > 0 and seg.pre_commit_rows > seg.rows
        rows = seg.pre_commit_rows if compacted else seg.rows
        size = seg.size_bytes
        if compacted and seg.rows > 0:
            size = math.floor(seg.size_bytes * seg.pre_commit_rows / seg.rows + 0.5)  # Java's Math.round
        if rows <= 0 or size <= 0 or seg.force_commit:
            return dataclasses.replace(self, last_threshold=seg.threshold) if self.ratio == 0 else self
        # the ratio of Pinot 1.5.1's code: rows and size used for the calculation (pre-commit when compacted)
        current = rows / size
        ratio = current if self.ratio <= 0 else (CURRENT_SEGMENT_RATIO_WEIGHT * current
                                                 + PREVIOUS_SEGMENT_RATIO_WEIGHT * self.ratio)
        return dataclasses.replace(self, ratio=ratio, last_rows=rows, last_size=size, last_threshold=seg.threshold,
                                   last_time_ms=seg.time_consumed_ms)

    def threshold(self) -> int:
        """``computeThreshold``: the row threshold of the next consuming segment."""
        if self.ratio == 0:
            return self.last_threshold if self.last_threshold > 0 else self.initial_rows
        desired = self.desired_bytes if self.desired_bytes > 0 else DEFAULT_FLUSH_THRESHOLD_SEGMENT_SIZE_BYTES
        if self.last_rows < self.last_threshold and self.last_size < desired:  # sealed by time
            consumed = self.last_rows
            if self.time_ms < self.last_time_ms:
                consumed = self.time_ms * consumed // self.last_time_ms
            return _threshold(int(consumed * ROWS_MULTIPLIER_WHEN_TIME_THRESHOLD_HIT))
        if self.last_size < desired // 2:
            target = int(self.last_rows * 1.5)
        elif self.last_size > desired * 1.5:
            target = self.last_rows // 2
        else:
            target = int(desired * self.ratio)
        return _threshold(target)


@dataclass(frozen=True)
class SegmentStep:
    """One consuming segment of a partition: the row threshold Pinot gave it and the rows it got."""

    threshold: int
    rows: int


def size_based_sequence(*, desired_bytes: int, initial_rows: int, bytes_per_row: float | Callable[[int], int],
                        rows_per_s: float, time_ms: int, segments: int,
                        until_rows: int | None = None) -> list[SegmentStep]:
    """The first ``segments`` consuming segments of one partition under size-based flushing: each one's row
    threshold, and the rows it gets, ``min(threshold, rows consumed within threshold.time)`` at a steady
    ``rows_per_s``. A segment's size is ``bytes_per_row x rows`` (truncated to bytes), or
    ``bytes_per_row(rows)`` when a function (a size growing other than linearly, as Pinot's tests use).
    With ``until_rows``, the sequence stops at the segment that reaches that many rows in all, which gets
    the remainder (the consuming segment of a partition that has received ``until_rows`` rows).

    >>> [(s.threshold, s.rows) for s in size_based_sequence(desired_bytes=10**9, initial_rows=100_000,
    ...     bytes_per_row=100.0, rows_per_s=2.0, time_ms=3_600_000, segments=3)]
    [(100000, 7200), (10000, 7200), (10000, 7200)]
    """
    size_of = bytes_per_row if callable(bytes_per_row) else (lambda rows: int(rows * bytes_per_row))
    in_time = int(rows_per_s * time_ms / 1000)
    state = AutotuneState(desired_bytes, initial_rows, time_ms)
    out: list[SegmentStep] = []
    total = 0
    for _ in range(segments):
        threshold = state.threshold()
        rows = min(threshold, max(1, in_time))
        if until_rows is not None and total + rows >= until_rows:
            out.append(SegmentStep(threshold, until_rows - total))
            return out
        total += rows
        consumed_ms = time_ms if rows < threshold else min(time_ms, round(rows / rows_per_s * 1000))
        out.append(SegmentStep(threshold, rows))
        state = state.commit(Committed(rows, size_of(rows), threshold, consumed_ms))
    return out


def settled_rows(steps: list[SegmentStep]) -> tuple[int, int]:
    """Where a sequence settles: the rows of its last segment, and the first segment (1-based) from which
    every segment gets those rows within 1%."""
    final = steps[-1].rows
    first = len(steps)
    while first > 1 and abs(steps[first - 2].rows - final) <= 0.01 * final:
        first -= 1
    return final, first
