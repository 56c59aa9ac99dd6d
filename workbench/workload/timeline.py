"""Time in a generated workload: the rate profile, and the seeded random streams.

Arrival times come from inverting the cumulative rate: the ``i``-th of ``N`` events arrives when the
normalised cumulative rate reaches ``(i + u_i) / N`` (``u_i`` uniform on [0, 1)), so arrivals follow
the profile's shape, are strictly ordered by ``i``, and the total is exactly ``N``. The cumulative
rate is computed in closed form (diurnal) or exactly piecewise (bursts) on a grid that contains every
burst edge, so interpolating it loses nothing but sub-grid detail of the cosine.

Every random draw of the generator comes from :func:`rng_for` with a *stream* (what the numbers are
for) and an *index* (which block of events or keys), never from a shared generator: a block's
numbers are then the same whichever process, core or Spark task computes it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from workbench.workload.spec import RateSpec

__all__ = ["RateProfile", "mix64", "rng_for", "unit_floats"]

F64 = npt.NDArray[np.float64]

#: Most grid points of a profile (the grid is shipped to every task).
MAX_GRID = 1 << 16


def rng_for(seed: int, stream: int, index: int = 0) -> np.random.Generator:
    """The generator for one ``(seed, stream, index)``: independent of every other triple.

    >>> float(rng_for(1, 2, 3).random()) == float(rng_for(1, 2, 3).random())
    True
    """
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, stream, index])))


_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def mix64(values: npt.NDArray[Any], salt: int = 0) -> npt.NDArray[np.uint64]:
    """A 64-bit avalanche mix of integers (SplitMix64's finaliser), element-wise and wrap-around.

    Used where a value must be a pure function of one integer (a key's category, a row's checksum
    term) rather than of a block's random stream.
    """
    with np.errstate(over="ignore"):
        z = values.astype(np.uint64) + np.uint64(salt & 0xFFFFFFFFFFFFFFFF) * _GOLDEN + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
        return z ^ (z >> np.uint64(31))


def unit_floats(values: npt.NDArray[Any], salt: int) -> F64:
    """Uniform floats on [0, 1) that are a pure function of each integer and ``salt``.

    >>> u = unit_floats(np.array([7, 7, 8]), salt=3)
    >>> bool(u[0] == u[1] != u[2]), bool(((u >= 0) & (u < 1)).all())
    (True, True)
    """
    return (mix64(values, salt) >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


def _burst_intervals(spec: RateSpec, span_s: float, seed: int) -> F64:
    """Burst start times on [-burst_length, span): a Poisson process, merged where bursts overlap."""
    rng = rng_for(seed, 901)
    expected = (span_s + spec.burst_length_s) / spec.burst_every_s
    gaps = rng.exponential(spec.burst_every_s, int(expected * 2 + 20))
    while gaps.sum() < span_s + spec.burst_length_s:  # pragma: no cover - astronomically unlikely
        gaps = np.concatenate([gaps, rng.exponential(spec.burst_every_s, len(gaps))])
    starts = np.cumsum(gaps) - spec.burst_length_s
    starts = starts[starts < span_s]
    edges: list[list[float]] = []
    for s in starts.tolist():
        if edges and s <= edges[-1][1]:
            edges[-1][1] = s + spec.burst_length_s
        else:
            edges.append([s, s + spec.burst_length_s])
    return np.asarray(edges, dtype=np.float64).reshape(-1, 2)


def _burst_time(t: F64, intervals: F64) -> F64:
    """Total burst time in [0, t] for each ``t`` (intervals sorted and disjoint)."""
    if not len(intervals):
        return np.zeros_like(t)
    a = np.clip(intervals[:, 0], 0.0, None)
    b = np.clip(intervals[:, 1], 0.0, None)
    before = np.concatenate([[0.0], np.cumsum(b - a)])
    j = np.searchsorted(a, t, side="right")  # intervals starting at or before t
    last = np.maximum(j - 1, 0)
    inside = np.where(j > 0, np.clip(t - a[last], 0.0, b[last] - a[last]), 0.0)
    return before[np.maximum(j - 1, 0)] * (j > 0) + inside


@dataclass(frozen=True)
class RateProfile:
    """The normalised cumulative event rate on ``[0, span_s]`` seconds after the span's start.

    Attributes
    ----------
    times
        Grid times in seconds (increasing, first 0, last ``span_s``).
    cumulative
        The share of all events that arrive by each grid time (0 to 1, non-decreasing).
    bursts
        Burst intervals ``(start, end)`` in seconds (empty unless the profile is ``bursts``).
    """

    times: F64
    cumulative: F64
    bursts: F64

    @classmethod
    def build(cls, spec: RateSpec, span_s: float, start_epoch_s: float, seed: int) -> RateProfile:
        """The profile of ``spec`` over a span starting at ``start_epoch_s`` (UTC seconds).

        >>> p = RateProfile.build(RateSpec(), 100.0, 0.0, seed=1)
        >>> p.arrival_seconds(np.array([0.0, 0.25, 1.0])).tolist()
        [0.0, 25.0, 100.0]
        """
        bursts = np.zeros((0, 2))
        if spec.profile == "constant":
            grid = np.array([0.0, span_s])
            raw = grid.copy()
        elif spec.profile == "diurnal":
            points = int(min(MAX_GRID, max(4096, math.ceil(span_s / spec.period_s * 2048))))
            grid = np.linspace(0.0, span_s, points + 1)
            raw = cls._diurnal_integral(spec, grid, start_epoch_s)
        else:
            bursts = _burst_intervals(spec, span_s, seed)
            inner = np.clip(bursts.ravel(), 0.0, span_s)
            grid = np.unique(np.concatenate([np.linspace(0.0, span_s, 1025), inner]))
            raw = grid + (spec.burst_factor - 1.0) * _burst_time(grid, bursts)
        return cls(grid, raw / raw[-1], bursts)

    @staticmethod
    def _diurnal_integral(spec: RateSpec, t: F64, start_epoch_s: float) -> F64:
        """∫₀ᵗ 1 + a·cos(2π(start + x − peak)/P) dx, in closed form."""
        w = 2.0 * math.pi / spec.period_s
        phase = (start_epoch_s - spec.peak_s) % spec.period_s
        return t + spec.amplitude / w * (np.sin(w * (t + phase)) - math.sin(w * phase))

    @property
    def span_s(self) -> float:
        """Length of the span in seconds."""
        return float(self.times[-1])

    def arrival_seconds(self, shares: F64) -> F64:
        """Seconds after the start by which each share (0-1) of the events has arrived."""
        return np.interp(shares, self.cumulative, self.times)

    def share_by(self, seconds: F64) -> F64:
        """Share of the events that has arrived by each time (seconds after the start)."""
        return np.interp(seconds, self.times, self.cumulative)

    def rate(self, seconds: F64) -> F64:
        """Relative rate (1 = the span's mean) at each time, from the cumulative's slope."""
        slope = np.diff(self.cumulative) / np.diff(self.times)
        cell = np.clip(np.searchsorted(self.times, seconds, side="right") - 1, 0, len(slope) - 1)
        return slope[cell] * self.span_s
