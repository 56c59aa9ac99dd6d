"""Server failures, all decided up front: crashes and recoveries (down intervals drawn from each
server's own stream), and degraded servers (``failures.slow`` and ``failures.wedged``: windows the
scenario names, no draws).

A *wedged* server keeps its connections and accepts requests but makes no progress: to both engines it
is stopped, exactly as in a stop-the-world pause (work in progress is frozen, a request that arrives is
read when the wedge ends), so :func:`stops` joins its wedges to its GC pauses; the GC pauses alone stay
what the records call pauses. A *slow* server's work takes longer by a factor while its window lasts
(:class:`SlowWindows`, read through :func:`workbench.sim.decisions.slow_scale`); with ``scope: jvm`` (the
default) so does everything else its JVM does: its GC pauses (:func:`slowed_pauses`) and each request's own
delay (``cluster.network.request_delay_ms``: Netty, (de)serialisation, waiting for a core), since a CPU limit or
a noisy neighbour slows the whole process, not only the query's threads (``docs/validation.md``, one slow
server: on Pinot 1.5.1 a JVM limited to a quarter of a core had GC pauses up to 111 ms against 43 ms, and the
broker's ``responseDelayMs`` p99 went from 40 to 175 ms while its queries' own execution p99 was 52 ms).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from workbench.sim import decisions
from workbench.sim.fast.jit import python
from workbench.sim.pauses import PauseSchedule

__all__ = ["SlowWindows", "crash_schedule", "slowed_pauses", "stops", "wedge_schedule"]

_slow_scale = python(decisions.slow_scale)

#: The kind a wedge carries among a server's stops (GC pauses carry their collection's kind).
WEDGED = "wedged"


def crash_schedule(mtbf_ms: float | None, mttr_ms: float | None, rng: np.random.Generator,
                   horizon_ms: float) -> PauseSchedule:
    """Down intervals of one server: up for Exp(MTBF), down for Exp(MTTR), alternating (ms).

    No crashes when either mean is ``None``.
    """
    if mtbf_ms is None or mttr_ms is None:
        return PauseSchedule.empty()
    intervals: list[tuple[float, float]] = []
    t = 0.0
    while True:
        start = t + float(rng.exponential(mtbf_ms))
        if start >= horizon_ms:
            return PauseSchedule.from_intervals(intervals)
        end = start + float(rng.exponential(mttr_ms))
        intervals.append((start, end))
        t = end


def _window_ms(from_s: float, until_s: float | None, horizon_ms: float) -> tuple[float, float]:
    """A window of the scenario (s; ``until_s`` ``None``: to the end of the run) in ms."""
    return from_s * 1000.0, (horizon_ms if until_s is None else until_s * 1000.0)


def wedge_schedule(windows: Sequence[tuple[float, float | None]], horizon_ms: float) -> PauseSchedule:
    """One server's wedges (``(from_s, until_s)`` pairs, disjoint: the scenario checks) as stop intervals (ms).

    A wedge that starts at or after the horizon stops nothing the run sees and is left out: a window open
    to the end of the run would otherwise end (at the horizon) before it starts. A wedge that starts
    before the horizon keeps its own end, so queries sent just before the horizon still wait for it."""
    intervals = sorted(w for w in (_window_ms(a, b, horizon_ms) for a, b in windows) if w[0] < horizon_ms)
    return PauseSchedule.from_intervals(intervals, [WEDGED] * len(intervals))


def stops(pauses: PauseSchedule, wedges: PauseSchedule) -> PauseSchedule:
    """Every interval in which a server makes no progress: its GC pauses joined with its wedges
    (overlapping ones merged). Without wedges, the pauses themselves (the same object: the same bits)."""
    if not wedges:
        return pauses
    merged: list[list[float]] = []
    kinds: list[str] = []
    for start, end, kind in sorted(zip([*pauses.starts.tolist(), *wedges.starts.tolist()],
                                       [*pauses.ends.tolist(), *wedges.ends.tolist()],
                                       [*pauses.kinds, *wedges.kinds], strict=True)):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
            if kind == WEDGED:
                kinds[-1] = WEDGED
        else:
            merged.append([start, end])
            kinds.append(kind)
    return PauseSchedule.from_intervals([(a, b) for a, b in merged], kinds)


@dataclass(frozen=True)
class SlowWindows:
    """Every server's slow windows, server ``s``'s at ``offsets[s]:offsets[s + 1]``: from ``start`` to
    ``end`` (ms) its work is multiplied by ``factor``, and the rest of what its JVM does (GC pauses, a request's
    own delay) by ``jvm``: ``factor`` for a window of ``scope: jvm``, 1 for ``scope: work`` (a slow disk slows
    the query's work alone). Flat arrays, so the compiled engine reads them too."""

    offsets: np.ndarray
    start: np.ndarray
    end: np.ndarray
    factor: np.ndarray
    jvm: np.ndarray

    @classmethod
    def of(cls, per_server: Sequence[Sequence[tuple[float, float | None, float, bool]]],
           horizon_ms: float) -> SlowWindows:
        """From each server's ``(from_s, until_s, factor, whole_jvm)`` windows (disjoint: the scenario checks)."""
        rows = [sorted((*_window_ms(a, b, horizon_ms), f, f if whole else 1.0) for a, b, f, whole in windows)
                for windows in per_server]
        flat = [w for r in rows for w in r]
        offsets = np.concatenate(([0], np.cumsum([len(r) for r in rows]))).astype(np.int64)
        return cls(offsets, *(np.array([w[i] for w in flat], dtype=float) for i in range(4)))

    def __bool__(self) -> bool:
        return len(self.start) > 0

    @property
    def whole_jvm(self) -> bool:
        """Whether any window slows more than the work (some ``jvm`` factor is not 1)."""
        return bool(np.any(self.jvm != 1.0))

    def server(self, s: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Server ``s``'s windows: starts, ends and factors."""
        a, b = int(self.offsets[s]), int(self.offsets[s + 1])
        return self.start[a:b], self.end[a:b], self.factor[a:b]

    def server_jvm(self, s: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Server ``s``'s windows with the factors its JVM's own time takes: starts, ends and ``jvm``."""
        a, b = int(self.offsets[s]), int(self.offsets[s + 1])
        return self.start[a:b], self.end[a:b], self.jvm[a:b]


def slowed_pauses(pauses: PauseSchedule, starts: np.ndarray, ends: np.ndarray, factors: np.ndarray) -> PauseSchedule:
    """A server's GC pauses with those that **start** inside a slow window ``[start, end)`` lasting ``factor``
    times longer (:func:`~workbench.sim.decisions.slow_scale`, the rule a request's work follows by its delivery).

    Why by the start: a pause is one collection, run at the pace its JVM has when it begins; a window is seconds
    to minutes long and a pause milliseconds, so deciding once per pause misplaces at most the one pause that
    straddles each window edge. So a pause that starts just before the window's end is stretched in full (it
    may run past the end), and one that started before the window and runs into it keeps its length.
    A stretched pause that would run into the next one delays it: the next pause starts when it ends and
    keeps its own length (a collection cannot begin while the last one still stops the world; the count of
    pauses, and their kinds, stay those of the collector). Without any factor other than 1 the schedule itself is
    returned (the same bits).

    >>> p = PauseSchedule.from_intervals([(0.0, 10.0), (100.0, 110.0), (115.0, 120.0), (300.0, 310.0)])
    >>> slowed_pauses(p, np.array([50.0]), np.array([200.0]), np.array([4.0])).intervals()
    [(0.0, 10.0), (100.0, 140.0), (140.0, 160.0), (300.0, 310.0)]
    """
    if not len(pauses) or not np.any(factors != 1.0):
        return pauses
    intervals: list[tuple[float, float]] = []
    for start, end in pauses.intervals():
        factor = _slow_scale(1.0, start, starts, ends, factors)
        begin = max(start, intervals[-1][1]) if intervals else start
        # a pause neither stretched nor delayed keeps its own bits
        intervals.append((start, end) if factor == 1.0 and begin == start
                         else (begin, begin + (end - start) * factor))
    return PauseSchedule.from_intervals(intervals, pauses.kinds)
