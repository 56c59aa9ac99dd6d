"""The day profile of a broker log: each hour's query rate as a factor on the log's mean rate.

A log that covers a whole day holds its own load profile: the dashboard peak and the quiet night. The
calibrated scenario replays the whole log at its own times, whose mean rate is the log's; the profile
says how far each hour of the day is above or below that mean, so ``workbench day`` (and the verdict)
can run the peak hour at its own rate (:mod:`workbench.studies.day`). Hours are read on the log's clock
(its timestamps, UTC when they carry no zone).

Each hour's rate is its queries over the seconds of the log that fall in that hour of the day (a log of
36 hours sees some hours twice); the factor divides it by the log's mean rate (queries over its span).
A log shorter than a day has hours it never saw, so no profile is written for it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workbench import defaults as D

__all__ = ["DayProfile", "day_profile"]

_HOUR_MS = 3_600_000


@dataclass(frozen=True)
class DayProfile:
    """``hourly``: 24 factors on the mean rate (``None`` when the log is shorter than a day); ``why`` says
    how it was read, or why there is none."""

    hourly: tuple[float, ...] | None
    why: str

    def to_json(self) -> dict[str, object]:
        return {"hourly": list(self.hourly) if self.hourly is not None else None, "why": self.why}


def _exposure_s(start_ms: int, end_ms: int) -> np.ndarray:
    """Seconds of ``[start_ms, end_ms)`` in each hour of the day (the log's clock)."""
    seconds = np.zeros(24)
    first = start_ms // _HOUR_MS
    for hour in range(first, end_ms // _HOUR_MS + 1):
        lo, hi = max(start_ms, hour * _HOUR_MS), min(end_ms, (hour + 1) * _HOUR_MS)
        seconds[hour % 24] += max(0, hi - lo) / 1000.0
    return seconds


def day_profile(now_ms: np.ndarray) -> DayProfile:
    """The hourly factors of arrivals at wall-clock times ``now_ms`` (epoch ms).

    >>> hour = 3_600_000
    >>> night, peak = np.arange(0, 24 * hour + 1, 60_000), np.arange(8 * hour, 9 * hour, 30_000)
    >>> p = day_profile(np.concatenate([night, peak]))
    >>> round(p.hourly[8] / p.hourly[1], 3), round(sum(p.hourly) / 24, 2)
    (3.0, 1.0)
    >>> day_profile(np.arange(0, 2 * hour, 1000)).hourly is None
    True
    """
    times = np.sort(np.asarray(now_ms, dtype=np.int64))
    span_ms = int(times[-1] - times[0]) if len(times) else 0
    if span_ms < D.DAY_SECONDS * 1000:
        return DayProfile(None, f"the log spans {span_ms / _HOUR_MS:.1f} h, less than a day: no hourly profile "
                                "(give a day's log, or write workload.profile yourself)")
    exposure = _exposure_s(int(times[0]), int(times[-1]) + 1)
    counts = np.bincount((times // _HOUR_MS) % 24, minlength=24)
    mean = len(times) / ((span_ms + 1) / 1000.0)
    factors = tuple(round(float(c / e / mean), 4) for c, e in zip(counts, exposure, strict=True))
    return DayProfile(factors, f"the log's {len(times):,} arrivals over {span_ms / _HOUR_MS:.1f} h, per hour of "
                               "the day (the log's clock), over its mean rate")
