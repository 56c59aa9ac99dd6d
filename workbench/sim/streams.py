"""Random streams for the model: one numpy Generator per purpose, drawn in blocks.

Drawing one number at a time from numpy costs about a microsecond of call overhead; the model needs
several per query. A :class:`Buffered` stream draws a block at once and hands the values out one by
one, which is ~20x cheaper and yields exactly the same sequence for a given seed and block size.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["Buffered", "Streams", "buffered"]

_BLOCK = 16_384


class Buffered:
    """Values of ``draw(n)`` handed out one at a time, refilled a block at a time."""

    __slots__ = ("_block", "_draw", "_i", "_values")

    def __init__(self, draw: Callable[[int], np.ndarray], block: int = _BLOCK) -> None:
        self._draw, self._block = draw, block
        self._values: list[float] = []
        self._i = 0

    def next(self) -> float:
        """The next value."""
        if self._i >= len(self._values):
            self._values = self._draw(self._block).tolist()
            self._i = 0
        value = self._values[self._i]
        self._i += 1
        return value

    def take(self, n: int) -> list[float]:
        """The next ``n`` values."""
        return [self.next() for _ in range(n)]


def buffered(draw: Callable[[int], np.ndarray], n: int, block: int = _BLOCK) -> np.ndarray:
    """The first ``n`` values a :class:`Buffered` of ``draw`` hands out (whole blocks drawn, as it draws them):
    the compiled engine's live router takes the SimPy engine's network delays this way, all at once."""
    blocks = [np.asarray(draw(block), dtype=float) for _ in range(-(-n // block))]
    return np.concatenate(blocks) if blocks else np.empty(0)


@dataclass(frozen=True)
class Streams:
    """Independent random streams of one replication, one per purpose (and per server for GC).

    Keeping purposes apart gives common random numbers: two configurations run with the same seed
    see the same arrivals and the same service draws even when one of them draws more of another.
    """

    arrivals: np.random.Generator
    service: np.random.Generator
    network: np.random.Generator
    #: Adaptive selection's random picks (servers without stats).
    routing: np.random.Generator
    gc: tuple[np.random.Generator, ...]
    failures: tuple[np.random.Generator, ...]
    #: Segment churn: when segments are replaced or reloaded, and which.
    churn: np.random.Generator
    #: The delay of each server request that takes no core (``cluster.network.request_delay_ms``): a stream of
    #: its own, so setting it leaves every other draw, and a scenario without it, as they were.
    request_delay: np.random.Generator

    @classmethod
    def spawn(cls, seed_seq: np.random.SeedSequence, servers: int) -> Streams:
        """Children of ``seed_seq``: arrivals, service, network, routing, per server GC and failures, churn,
        request delay.

        A purpose added later is spawned after the others, so the existing streams keep their numbers
        (``SeedSequence.spawn(n)``'s first children are those of a smaller ``n``).
        """
        a, s, n, r, g, f, c, d = seed_seq.spawn(8)
        rng = np.random.default_rng
        return cls(rng(a), rng(s), rng(n), rng(r), tuple(rng(x) for x in g.spawn(servers)),
                   tuple(rng(x) for x in f.spawn(servers)), rng(c), rng(d))
