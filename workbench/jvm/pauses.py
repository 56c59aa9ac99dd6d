"""A stop-the-world pause (or allocation stall) as the JVM models emit it.

Every collector model returns its pauses as :class:`Pause` records, in time order, so the simulation
engine can stop a server for ``[start_ms, start_ms + duration_ms)`` and the records can carry the
kind through to ``Result.gc_pauses``.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["PAUSE_KINDS", "Pause"]

#: The kinds a model may emit: G1's evacuation (young, mixed), full and concurrent-cycle pauses (remark,
#: cleanup), ZGC's pauses (zgc) and ZGC allocation stalls (stall: the allocating threads wait).
PAUSE_KINDS = ("young", "mixed", "full", "remark", "cleanup", "zgc", "stall")


class Pause(NamedTuple):
    """One pause.

    Attributes
    ----------
    start_ms
        When it began, ms on the caller's clock.
    duration_ms
        How long the server (or, for ``stall``, its allocating threads) made no progress, ms.
    kind
        One of :data:`PAUSE_KINDS`.
    """

    start_ms: float
    duration_ms: float
    kind: str

    @property
    def end_ms(self) -> float:
        """When the pause ends, ms."""
        return self.start_ms + self.duration_ms
