"""When a replication's queries arrive and which plan each is; when segments churn.

Arrivals are a Poisson process (``workload.arrival.qps``), a replayed log (``queries.parquet``: its
arrival times and SQL, each distinct text planned once by the :class:`~workbench.sim.planner.Planner`)
or fixed times (tests). Times are accumulated as the SimPy engine's clock reaches them, so both engines
see the same bits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from workbench.sim.fast.plan_kernels import clock_times
from workbench.sim.planner import FULL_SCAN, Planner, QueryPlan

__all__ = ["Queries", "churn_events", "draw_queries"]

_BLOCK = 16_384


@dataclass
class Queries:
    """Arrival times (ms, sorted), each query's plan (an index into ``plans``) and the distinct plans."""

    arrival_ms: np.ndarray
    plan_index: np.ndarray
    plans: list[QueryPlan]


def _poisson_times(rng: np.random.Generator, qps: float, horizon_ms: float) -> np.ndarray:
    """Arrival times of a Poisson process, accumulated gap by gap as the SimPy engine's clock would."""
    mean_gap = 1000.0 / qps
    chunks: list[np.ndarray] = []
    last = 0.0
    while True:
        times = np.cumsum(np.concatenate(([last], rng.exponential(mean_gap, _BLOCK))))[1:]
        keep = times[times < horizon_ms]
        chunks.append(keep)
        if len(keep) < _BLOCK:
            return np.concatenate(chunks)
        last = float(times[-1])


def _trace_times(times_ms: Sequence[float], horizon_ms: float) -> np.ndarray:
    out: list[float] = []
    t = 0.0
    for at in times_ms:
        if at >= horizon_ms:
            break
        t = t + max(0.0, at - t)
        out.append(t)
    return np.asarray(out, dtype=float)


def draw_queries(rng: np.random.Generator, qps: float, horizon_ms: float, replay: pd.DataFrame | None,
                 planner: Planner | None, at_ms: Sequence[float] | None) -> Queries:
    """The queries of ``[0, horizon_ms)``: replayed (``replay`` with ``planner``), at ``at_ms``, or Poisson
    at ``qps`` per second drawn from ``rng`` (the arrivals stream)."""
    plans: list[QueryPlan] = [FULL_SCAN]
    if replay is not None:
        assert planner is not None
        times = clock_times(np.ascontiguousarray(replay["arrival_s"].to_numpy(), dtype=float), 1000.0, horizon_ms)
        codes, texts = pd.factorize(replay["sql"].iloc[:len(times)].astype(str), sort=False)
        index: dict[int, int] = {}
        of_text = np.empty(len(texts), dtype=np.int32)
        for k, sql in enumerate(texts):
            p = planner.plan(str(sql))
            if p.key not in index:
                index[p.key] = len(plans)
                plans.append(p)
            of_text[k] = index[p.key]
        return Queries(times, of_text[codes].astype(np.int32), plans)
    times = _trace_times(at_ms, horizon_ms) if at_ms is not None else _poisson_times(rng, qps, horizon_ms)
    return Queries(times, np.zeros(len(times), dtype=np.int32), plans)


def _churn(rng: np.random.Generator, per_hour: float, segments: int, horizon_ms: float) -> list[tuple[float, int]]:
    """Events of one Poisson churn process: a gap, then the segment, drawn alternately."""
    if per_hour <= 0:
        return []
    events: list[tuple[float, int]] = []
    t, mean_gap = 0.0, 3_600_000.0 / per_hour
    while True:
        t = t + float(rng.exponential(mean_gap))
        if t >= horizon_ms:
            return events
        events.append((t, int(rng.integers(segments))))


def churn_events(rng: np.random.Generator, replace_per_hour: float, reload_per_hour: float, segments: int,
                 horizon_ms: float) -> list[tuple[float, int, str]]:
    """Segment replacements, then reloads, drawn from ``rng`` (the churn stream), merged in time order."""
    return sorted([(t, s, "replaced") for t, s in _churn(rng, replace_per_hour, segments, horizon_ms)]
                  + [(t, s, "reloaded") for t, s in _churn(rng, reload_per_hour, segments, horizon_ms)])
