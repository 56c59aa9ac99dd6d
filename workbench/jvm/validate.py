"""Compare a GC model with a real log: the figures a capacity planner reads, observed and predicted.

Used by the validation tests and ``scripts/gc_fit_report.py`` (the tables of ``docs/gc.md``): the
young-pause median, 95th percentile and rate of a log or of the model driven like it, and the live
heap a probe log shows after its explicit full GC.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from workbench.errors import InputError
from workbench.jvm.g1_params import G1Params
from workbench.jvm.live import LiveHeap
from workbench.jvm.moments import Drive, simulate_young

__all__ = ["YoungSummary", "drive_phase", "observed_young", "predicted_young", "system_gc"]

_SEEDS = tuple(range(100, 132))


@dataclass(frozen=True)
class YoungSummary:
    """Young pauses in figures.

    Attributes
    ----------
    median_ms, p95_ms
        Median and 95th percentile of young pause lengths, ms.
    rate
        Young collections per second.
    count
        Young pauses behind the figures.
    """

    median_ms: float
    p95_ms: float
    rate: float
    count: int

    @classmethod
    def of(cls, durations_ms: np.ndarray, seconds: float) -> YoungSummary:
        """The summary of ``durations_ms`` seen over ``seconds``."""
        if len(durations_ms) == 0 or seconds <= 0:
            raise InputError("young pauses", "needs at least one pause over a positive span")
        median, p95 = np.quantile(durations_ms, [0.5, 0.95])
        return cls(float(median), float(p95), len(durations_ms) / seconds, len(durations_ms))

    def errors(self, observed: YoungSummary) -> dict[str, float]:
        """Relative error of each figure against ``observed`` (0.1 = 10% high)."""
        return {"median": self.median_ms / observed.median_ms - 1, "p95": self.p95_ms / observed.p95_ms - 1,
                "rate": self.rate / observed.rate - 1}


def system_gc(frame: pd.DataFrame) -> pd.Series:
    """The first full GC caused by ``System.gc()`` (the probe calls it once the map is loaded)."""
    full = frame[(frame["kind"].astype(str) == "full") & frame["cause"].astype(str).str.contains("System.gc")]
    if full.empty:
        raise InputError("gc log", "has no Pause Full (System.gc()); is it a UpsertHeapProbe log?")
    return full.sort_values("uptime_s").iloc[0]


def drive_phase(frame: pd.DataFrame) -> pd.DataFrame:
    """The pauses from the probe's ``System.gc()`` on: the map is loaded, updates and queries run."""
    start = float(system_gc(frame)["uptime_s"])
    return frame[frame["uptime_s"] >= start].sort_values("uptime_s").reset_index(drop=True)


def _span_s(frame: pd.DataFrame) -> float:
    return float(frame["uptime_s"].max() - frame["uptime_s"].min())


def observed_young(frame: pd.DataFrame) -> YoungSummary:
    """Young pauses of a log (or part of one) as figures."""
    young = frame[frame["kind"].astype(str) == "young"]["duration_ms"].to_numpy(dtype=float)
    return YoungSummary.of(young, _span_s(frame))


def predicted_young(params: G1Params, heap_bytes: float, live: LiveHeap, allocation_rate: float,
                    update_rate: float, seconds: float, seeds: tuple[int, ...] = _SEEDS) -> YoungSummary:
    """Young pauses of the model driven at constant rates, pooled over ``seeds`` runs of ``seconds`` each."""
    durations, rate = simulate_young(params, Drive(heap_bytes, live, allocation_rate, update_rate, seconds * 1000.0),
                                     seeds)
    if len(durations) == 0:
        raise InputError("young pauses", "the model collected nothing: is the allocation rate too low?")
    median, p95 = np.quantile(durations, [0.5, 0.95])
    return YoungSummary(float(median), float(p95), rate, len(durations))
