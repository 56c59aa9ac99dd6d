"""Turn imported GC pauses into the parameters of the model's GC process.

The ``fixed`` collector (:mod:`workbench.sim.gc`) alternates *run* and *pause*: it draws the time from
the end of one pause to the start of the next (``interval_s``) and then the pause length
(``pause_ms``). An observed log gives exactly those two samples, so the calibration is the observed
values as ``empirical`` distributions, ready to paste into a scenario's ``cluster.gc``. Per-kind
samples and heap figures are kept alongside for a G1-like model that treats young, mixed, remark,
cleanup and full pauses separately and scales them with heap occupancy.

Times in a unified log are stamped when a pause ends, so a pause started ``duration_ms`` earlier; the
gap to the next pause is ``next start - this end``, clipped at 0 because the decoration has only
millisecond resolution.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from workbench.errors import InputError

__all__ = ["calibrate_gc"]

_REQUIRED = ("uptime_s", "kind", "duration_ms")
_HEAP = ("heap_before_bytes", "heap_after_bytes", "heap_total_bytes")
#: Kinds first in this order (the G1 vocabulary), then any other kind alphabetically.
_ORDER = ("young", "mixed", "remark", "cleanup", "full")


def _empirical(values: Sequence[float] | np.ndarray) -> dict[str, Any]:
    """A scenario distribution spec resampling ``values`` (rounded to the microsecond)."""
    return {"dist": "empirical", "values": [round(float(v), 6) for v in values]}


def _summary(values: np.ndarray) -> dict[str, float]:
    """Mean and tail percentiles (linear interpolation), the figures a capacity planner compares."""
    p50, p90, p99 = np.percentile(values, [50, 90, 99])
    return {"mean": round(float(values.mean()), 6), "p50": round(float(p50), 6), "p90": round(float(p90), 6),
            "p99": round(float(p99), 6), "max": round(float(values.max()), 6)}


def _gaps_s(pauses: pd.DataFrame) -> np.ndarray:
    """Seconds from the end of each pause to the start of the next (pauses in time order)."""
    ends = pauses["uptime_s"].to_numpy(dtype=float)
    starts = ends - pauses["duration_ms"].to_numpy(dtype=float) / 1000.0
    gaps: np.ndarray = np.maximum(starts[1:] - ends[:-1], 0.0)
    return gaps


def _heap_figures(pauses: pd.DataFrame) -> dict[str, float | None]:
    """Mean heap before/after and mean reclaimed bytes, where the collector logs sizes."""
    if not set(_HEAP) <= set(pauses.columns):
        return {"heap_before_bytes_mean": None, "heap_after_bytes_mean": None, "reclaimed_bytes_mean": None,
                "heap_total_bytes_max": None}
    sized = pauses.dropna(subset=list(_HEAP))
    if sized.empty:
        return _heap_figures(pauses.drop(columns=list(_HEAP)))
    before, after = (sized[c].astype("float64") for c in _HEAP[:2])
    return {"heap_before_bytes_mean": float(before.mean()), "heap_after_bytes_mean": float(after.mean()),
            "reclaimed_bytes_mean": float((before - after).mean()),
            "heap_total_bytes_max": float(sized["heap_total_bytes"].astype("float64").max())}


def _kind_figures(pauses: pd.DataFrame, total: int) -> dict[str, Any]:
    """Count, share, interval and pause samples and heap figures for the pauses of one kind."""
    durations = pauses["duration_ms"].to_numpy(dtype=float)
    gaps = _gaps_s(pauses)
    return {
        "count": len(pauses),
        "share": round(len(pauses) / total, 6),
        "mean_interval_s": round(float(gaps.mean()), 6) if len(gaps) else None,
        "interval_s": _empirical(gaps) if len(gaps) else None,
        "pause_ms": _empirical(durations),
        "pause_ms_summary": _summary(durations),
        **_heap_figures(pauses),
    }


def _ordered_kinds(kinds: pd.Series) -> list[str]:
    present = set(kinds.astype(str))
    return [k for k in _ORDER if k in present] + sorted(present - set(_ORDER))


def _checked(pauses: pd.DataFrame) -> pd.DataFrame:
    missing = [c for c in _REQUIRED if c not in pauses.columns]
    if missing:
        raise InputError("pauses", f"needs the columns {', '.join(_REQUIRED)} (read_gc_log's table); "
                                   f"missing {', '.join(missing)}")
    if len(pauses) < 2:
        raise InputError("pauses", f"needs at least two pauses to measure the time between them, got {len(pauses)}")
    return pauses.sort_values("uptime_s", kind="mergesort").reset_index(drop=True)


def calibrate_gc(pauses: pd.DataFrame) -> dict[str, Any]:
    """Calibrate the model's GC process from imported pauses.

    Parameters
    ----------
    pauses
        The table :func:`workbench.workload.importers.read_gc_log` returns (at least ``uptime_s``,
        ``kind`` and ``duration_ms``; heap columns are used when present).

    Returns
    -------
    dict
        ``gc``: ``{"collector": "fixed", "interval_s": <empirical, s>, "pause_ms": <empirical, ms>}``,
        a drop-in ``cluster.gc`` section built from every pause in time order; ``kinds``: per kind
        (young, mixed, remark, cleanup, full, then others) the count, share of pauses, mean interval
        and interval samples between pauses *of that kind* (s), pause samples and their summary (ms),
        and mean heap before/after/reclaimed (bytes); plus the observed ``span_s``, ``pauses`` and
        ``gc_time_fraction`` (share of the span spent paused).

    Raises
    ------
    InputError
        When a required column is missing or there are fewer than two pauses.
    """
    ordered = _checked(pauses)
    ends = ordered["uptime_s"].to_numpy(dtype=float)
    durations = ordered["duration_ms"].to_numpy(dtype=float)
    span_s = float(ends[-1] - (ends[0] - durations[0] / 1000.0))
    kinds = {kind: _kind_figures(ordered[ordered["kind"].astype(str) == kind], len(ordered))
             for kind in _ordered_kinds(ordered["kind"])}
    return {
        "pauses": len(ordered),
        "span_s": round(span_s, 6),
        "gc_time_fraction": round(float(durations.sum() / 1000.0 / span_s), 6) if span_s > 0 else None,
        "gc": {"collector": "fixed", "interval_s": _empirical(_gaps_s(ordered)), "pause_ms": _empirical(durations)},
        "kinds": kinds,
    }
