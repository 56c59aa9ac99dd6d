"""Fit the G1 model's parameters to a GC log's pauses.

Input is the pause table of :func:`workbench.workload.importers.read_gc_log` (with G1's per-collection
details: eden, survivor and old bytes, copied bytes), the live heap split into its static part and the
upsert map, and the rate of upsert updates. Each parameter comes from the collections that show it
(``docs/gc.md`` lists the forms):

* young/mixed pause form (``young_base_ms``, ``copy_rate``, ``rs_scan_ms_per_gb``,
  ``rs_updates_per_key``): nonlinear least squares on log pause length over the young and mixed
  collections, with a weak pull towards the defaults so that a parameter the log cannot separate (the
  dirtying scale when the log has no concurrent cycle, for instance) stays at its default instead of
  running off; ``pause_sigma`` is the residuals' standard deviation;
* ``survivor_s``: copied bytes over the allocation rate (eden consumed over the time since the last
  collection); ``promotion_fraction``: old-generation growth over copied bytes; ``young_growth``: the
  geometric step by which G1 grew eden, from logs whose pauses stay well under the goal (elsewhere the
  goal, not the growth, sets eden);
* full GCs: ``full_ms_per_gb`` from their length over the live heap; remark and cleanup: medians;
  ``mark_rate`` and ``rebuild_rate`` from the time between the concurrent-start pause, remark and
  cleanup; ``ihop`` from the old-generation occupancy at concurrent start.

Anything the log does not show keeps its default and is listed in :attr:`G1Fit.defaulted`;
:attr:`G1Fit.record` names every parameter once as fitted, derived or held, and how.

A **basic** log (``-Xlog:gc``, JDK 8 ``-verbose:gc``: pause, heap before/after/total, no regions) goes
through the same steps: :func:`with_heap_estimates` gives its eden, old occupancy and promotion from
the heap sizes, its copied bytes are the model's own estimate at the held ``survivor_s``
(:func:`~workbench.jvm.g1_params.young_copied_bytes`), and the pause form is fitted to whole pauses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from scipy.optimize import least_squares

from workbench.errors import InputError
from workbench.jvm.g1_params import GIB, G1Params, rs_scan_ms, young_copied_bytes, young_form_ms
from workbench.jvm.live import LiveHeap
from workbench.jvm.moments import Drive, match_young_moments

__all__ = ["DERIVED", "FITTED", "HELD", "SURVIVAL_RATE_SPREAD", "G1Fit", "fit_g1", "is_basic", "observed_live_bytes",
           "region_copied", "started_warm", "survival", "with_heap_estimates", "young_features"]

_EVACUATIONS = ("young", "mixed")
_PRIOR_WEIGHT = 0.1  # pull (in log units) towards a default, per parameter
_FORM = ("young_base_ms", "copy_rate", "rs_scan_ms_per_gb", "rs_coarsen_updates")
#: How the young pause that starts a concurrent cycle is named: JDK 12+ ``Young (Concurrent Start)``,
#: JDK 9-11 ``Initial Mark``, JDK 8 ``(initial-mark)`` (read as ``Young (Initial Mark)``).
_CONCURRENT_START = ("Concurrent Start", "Initial Mark")


#: How a parameter was found: adjusted until the model matches the log's pauses ...
FITTED = "fitted"
#: ... computed from figures the log states ...
DERIVED = "derived"
#: ... or left at the default (or the ``base`` given) because the log cannot show it.
HELD = "held"
#: Where each derivable parameter comes from (a basic log's own words where it differs: ``_BASIC_SOURCE``).
_SOURCE = {
    "survivor_s": "copied bytes over the allocation rate (where the rates between collections spread, the slope "
                  "of copied bytes on the rate)",
    "survivor_bytes": "copied bytes that do not follow the allocation rate (the rates between collections spread, "
                      "the copied bytes did not)",
    "promotion_fraction": "old-generation growth over copied bytes",
    "young_growth": "the eden trend of collections far under the pause goal",
    "remark_ms": "median Pause Remark",
    "cleanup_ms": "median Pause Cleanup",
    "concurrent_sigma": "log spread of the remark and cleanup pauses",
    "mark_rate": "live heap over the time from the concurrent-start pause to remark",
    "rebuild_rate": "live heap over the time from remark to cleanup",
    "ihop": "old-generation occupancy at the concurrent-start pauses",
    "full_ms_per_gb": "full GC length over the heap after it, at full_base_ms",
    "full_sigma": "log spread of the full GCs",
}
_BASIC_SOURCE = {
    "promotion_fraction": "growth of the heap after each young collection over the copied bytes the held "
                          "survivor_s implies",
    "young_growth": "the trend of eden, estimated as the heap's growth between pauses",
    "ihop": "heap after the pause before each concurrent start over the heap (an upper bound: it counts "
            "the survivors)",
}
#: Why a basic log leaves a parameter held that a detailed one gives.
_BASIC_HELD = {
    "survivor_s": "a basic log has no copied bytes or survivor regions (-Xlog:gc* shows them)",
    "survivor_bytes": "a basic log has no copied bytes or survivor regions (-Xlog:gc* shows them)",
}
#: JVM flags and form constants: held unless the base says otherwise.
_SETTINGS = frozenset({"reserve", "new_size_min", "new_size_max", "pause_goal_ms", "mixed_count", "heap_waste"})
_FORM_BY = {
    "phases": "G1's Object Copy and Scan Heap Roots phase times (-Xlog:gc+phases=debug)",
    "pauses": "whole young/mixed pause lengths against copied bytes and the time between collections",
    "basic": "whole young/mixed pause lengths against the time between collections, with the copied bytes "
             "the held survivor_s implies (a basic log has no copied bytes or phase times)",
}
_MATCHED = ("matched by simulated moments to the log's young median, p95 and rate (the pause-form terms by one "
            "common scale)")


def _held_why(name: str, basic: bool) -> str:
    if basic and name in _BASIC_HELD:
        return _BASIC_HELD[name]
    return "a JVM flag: the JDK 17 default unless given" if name in _SETTINGS else "not shown by this log: the default"


def _fitted_how(name: str, first: str | None, moved: bool, form_by: str) -> str:
    """How a fitted parameter was found: by the pause-form fit, from a derived start, then matched or not."""
    if name == "pause_sigma":
        how = "residual log spread of the pause form"
    elif first == FITTED:
        how = _FORM_BY[form_by]
    elif first == DERIVED:
        how = _SOURCE.get(name, "from the log")
    else:
        return _MATCHED
    return f"{how}, then {_MATCHED}" if moved else how


def _record(status: dict[str, str], moved: set[str], form_by: str) -> dict[str, tuple[str, str]]:
    """Each :class:`G1Params` field's status (:data:`FITTED`, :data:`DERIVED` or :data:`HELD`) and how.

    ``status`` is what the derivations and the pause-form fit set, ``moved`` what the moments step
    changed (fitted, whatever came before), ``form_by`` which pause-form fit ran (a key of ``_FORM_BY``).
    """
    basic = form_by == "basic"
    record: dict[str, tuple[str, str]] = {}
    for name in (f.name for f in fields(G1Params)):
        first = status.get(name)
        if name in moved or first == FITTED:
            record[name] = (FITTED, _fitted_how(name, first, name in moved, form_by))
        elif first == DERIVED:
            source = _BASIC_SOURCE.get(name) if basic else None
            record[name] = (DERIVED, source or _SOURCE.get(name, "from the log"))
        else:
            record[name] = (HELD, _held_why(name, basic))
    return record


@dataclass(frozen=True)
class G1Fit:
    """Fitted parameters and what the fit says about them.

    Attributes
    ----------
    params
        The fitted :class:`G1Params`.
    young_residual_sd
        Standard deviation of log(observed / form) over the young and mixed pauses.
    young_count
        Young and mixed pauses used for the pause form.
    allocation_rate
        Mean allocation rate the log shows (eden consumed over time), bytes/s.
    update_rate
        Upsert updates per second: the one given, or the one fitted when none was.
    defaulted
        Parameters the log could not show, left at their defaults (status :data:`HELD`).
    log_form
        ``detailed`` (``-Xlog:gc*``: G1's region counts, maybe phase times) or ``basic`` (``-Xlog:gc``,
        JDK 8 ``-verbose:gc``: pause, heap before/after/total).
    record
        For every :class:`G1Params` field, ``(status, how)``: exactly one of :data:`FITTED`,
        :data:`DERIVED`, :data:`HELD`, and what it was found from (or why it is held).
    update_rate_given
        Whether the update rate was given (else :attr:`update_rate` was fitted).
    """

    params: G1Params
    young_residual_sd: float
    young_count: int
    allocation_rate: float
    update_rate: float
    defaulted: tuple[str, ...]
    log_form: str = "detailed"
    record: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    update_rate_given: bool = True


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values("uptime_s", kind="mergesort").reset_index(drop=True)


def _column(frame: pd.DataFrame, name: str) -> np.ndarray:
    if name not in frame.columns:
        return np.full(len(frame), np.nan)
    return frame[name].astype("float64").to_numpy(dtype=float, na_value=np.nan)


def observed_live_bytes(frame: pd.DataFrame) -> float:
    """The live heap a log shows: heap after its last full GC, else the lowest heap after a collection.

    Raises
    ------
    InputError
        When the log has no heap sizes.
    """
    after = _column(frame, "heap_after_bytes")
    if np.isnan(after).all():
        raise InputError("gc log", "has no heap sizes (<before>-><after>(<total>) on its pause lines), so the "
                                   "live heap and G1's occupancy cannot be measured; log G1 with -Xlog:gc*")
    kinds = frame["kind"].astype(str).to_numpy()
    full = after[(kinds == "full") & ~np.isnan(after)]
    if len(full):
        return float(full[-1])
    survivors = np.nan_to_num(_column(frame, "survivor_after_bytes"))
    return float(np.nanmin(after - survivors))


def is_basic(frame: pd.DataFrame) -> bool:
    """Whether a G1 log is the basic form (``-Xlog:gc``, ``-verbose:gc``): pause lines without region details."""
    return bool(np.isnan(_column(frame, "eden_before_bytes")).all())


def with_heap_estimates(frame: pd.DataFrame) -> pd.DataFrame:
    """A basic log's pause table with eden and old occupancy estimated from its heap sizes.

    A young collection empties eden, so what the heap grew by between one pause's *after* and the next
    one's *before* is what the application allocated in eden (plus humongous objects); summed since the
    previous evacuation it is the eden that collection found. The heap after the previous pause is
    the old generation, humongous regions and survivors at the next one: an upper bound of the old
    occupancy (survivors are a few regions), and so is the heap after a collection for the old
    generation it leaves; the difference of the two is what the collection promoted (the survivors'
    change averages out over collections). A detailed log's own columns are returned unchanged.
    """
    ordered = _sorted(frame)
    if not is_basic(ordered):
        return ordered
    kinds = ordered["kind"].astype(str).to_numpy()
    before, after = _column(ordered, "heap_before_bytes"), _column(ordered, "heap_after_bytes")
    eden, old = np.full(len(ordered), np.nan), np.full(len(ordered), np.nan)
    allocated, last_after = 0.0, np.nan
    for i, kind in enumerate(kinds):
        if np.isfinite(before[i]) and np.isfinite(last_after):
            allocated += max(before[i] - last_after, 0.0)
            old[i] = last_after
        if kind in _EVACUATIONS:
            eden[i] = allocated if np.isfinite(last_after) else np.nan
        if kind in (*_EVACUATIONS, "full"):
            allocated = 0.0
        last_after = after[i] if np.isfinite(after[i]) else last_after
    old_after = np.where(np.isin(kinds, _EVACUATIONS), after, np.nan)
    return ordered.assign(eden_before_bytes=eden, old_before_bytes=old, old_after_bytes=old_after)


def region_copied(survivor_after: np.ndarray, promoted: np.ndarray) -> np.ndarray:
    """What a collection copied, from a detailed log's regions when it does not log the bytes: the survivor
    regions it left plus what it promoted (NaN where the survivors are not logged).

    Why: JDK 17's ``-Xlog:gc*`` logs ``Copied Bytes`` only at debug level (``gc+phases=debug``), but its info lines
    carry ``Survivor regions: a->b`` and ``Old regions: c->d``. Apache Pinot 1.5.1's servers' logs under query load
    (``docs/validation.md``) left 1 MB of survivors per collection at 70-120 MB/s of allocation: 0.01 s of it, where
    the held default ``survivor_s`` (0.12 s) copied ten times that (and, in the 70 MB heap the servers ran in, filled
    the model's old generation). A region count rounds up to whole regions, so this is an upper bound of the bytes
    copied.

    >>> region_copied(np.array([2.0, np.nan]) * 2**20, np.array([1.0, 0.0]) * 2**20) / 2**20
    array([ 3., nan])
    """
    out: np.ndarray = survivor_after + np.maximum(np.nan_to_num(promoted), 0.0)
    return out


def young_features(frame: pd.DataFrame, update_rate: float) -> pd.DataFrame:
    """Per young/mixed pause: copied bytes, allocation rate, updates since the previous collection.

    ``interval_s`` runs from the end of the previous collection (the time the JVM ran), ``cycle_s``
    from its start (wall clock: what arrived during the pause is allocated after it). A basic log's
    eden is estimated from its heap sizes (:func:`with_heap_estimates`); its copied bytes are unknown.
    """
    ordered = with_heap_estimates(frame)
    kinds = ordered["kind"].astype(str).to_numpy()
    ends = ordered["uptime_s"].to_numpy(dtype=float)
    starts = ends - ordered["duration_ms"].to_numpy(dtype=float) / 1000.0
    rows: list[dict[str, float]] = []
    last_end: float | None = None
    last_start: float | None = None
    copied, eden = _column(ordered, "copied_bytes"), _column(ordered, "eden_before_bytes")
    copy_ms, scan_ms = _column(ordered, "object_copy_ms"), _column(ordered, "scan_roots_ms")
    old_before, old_after = _column(ordered, "old_before_bytes"), _column(ordered, "old_after_bytes")
    copied = np.where(np.isfinite(copied), copied, region_copied(_column(ordered, "survivor_after_bytes"),
                                                                 old_after - old_before))
    for i, kind in enumerate(kinds):
        if kind in _EVACUATIONS and last_end is not None:
            interval = max(starts[i] - last_end, 1e-3)
            rows.append({"index": float(i), "duration_ms": float(ordered["duration_ms"].iloc[i]),
                         "mixed": float(kind == "mixed"), "copied_bytes": copied[i], "interval_s": interval,
                         "cycle_s": max(starts[i] - (last_start if last_start is not None else starts[i]), 1e-3),
                         "allocation_rate": eden[i] / max(starts[i] - (last_start or 0.0), 1e-3),
                         "promoted_bytes": old_after[i] - old_before[i],
                         "updates": update_rate * interval, "eden_bytes": eden[i],
                         "copy_ms": copy_ms[i], "scan_ms": scan_ms[i]})
        if kind in (*_EVACUATIONS, "full"):
            last_end, last_start = ends[i], starts[i]
    return pd.DataFrame(rows)


def _phase_fit(features: pd.DataFrame, live: LiveHeap, base: G1Params,
               update_rate: float | None) -> tuple[G1Params, float, tuple[str, ...]] | None:
    """The pause form from G1's own phase times, when the log has them (``-Xlog:gc+phases=debug``).

    ``copy_rate`` is copied bytes over the Object Copy time; the remembered-set form is fitted to the
    Scan Heap Roots time against the updates since the previous collection; ``young_base_ms`` is what
    the pauses take beyond the two. Returns ``None`` without phase times, or with the update rate
    unknown and a map to scan (then :func:`_form_fit` infers it from the whole pauses).
    """
    usable = features.dropna(subset=["copied_bytes", "copy_ms", "scan_ms"])
    usable = usable[usable["copy_ms"] > 0]
    if len(usable) < 3 or (update_rate is None and live.map_bytes > 0):
        return None
    rate = update_rate or 0.0
    copy_rate = float(np.median(usable["copied_bytes"] / usable["copy_ms"])) * 1000.0
    params = replace(base, copy_rate=copy_rate)
    names: tuple[str, ...] = ("copy_rate", "young_base_ms")
    if live.map_bytes > 0 and rate > 0:
        names += ("rs_scan_ms_per_gb", "rs_coarsen_updates")
        updates = rate * usable["interval_s"].to_numpy(dtype=float)
        scans = usable["scan_ms"].to_numpy(dtype=float)
        start = np.log([base.rs_scan_ms_per_gb, base.rs_coarsen_updates])

        def residuals(theta: np.ndarray) -> np.ndarray:
            p = replace(params, rs_scan_ms_per_gb=float(np.exp(theta[0])), rs_coarsen_updates=float(np.exp(theta[1])))
            model = np.array([rs_scan_ms(p, live.map_bytes, u) for u in updates])
            misfit = np.log(np.maximum(model, 0.1)) - np.log(np.maximum(scans, 0.1))
            return np.concatenate([misfit, _PRIOR_WEIGHT * np.sqrt(len(scans)) * (theta - start)])

        theta = least_squares(residuals, start, method="trf").x
        params = replace(params, rs_scan_ms_per_gb=float(np.exp(theta[0])), rs_coarsen_updates=float(np.exp(theta[1])))
    modelled = np.array([young_form_ms(params, c, rs_scan_ms(params, live.map_bytes, rate * i))
                         for c, i in zip(usable["copied_bytes"], usable["interval_s"], strict=True)])
    observed = usable["duration_ms"].to_numpy(dtype=float)
    params = replace(params, young_base_ms=max(float(np.median(observed - modelled + params.young_base_ms)), 0.5))
    modelled += params.young_base_ms - base.young_base_ms
    return params, float(np.std(np.log(observed / np.maximum(modelled, 0.1)), ddof=1)), names


def _form_fit(features: pd.DataFrame, live: LiveHeap, base: G1Params,
              update_rate: float | None) -> tuple[G1Params, float, float, tuple[str, ...]]:
    """Least squares on log pause length: the params, the residual sd (log units), the update rate, the names fitted.

    With ``update_rate`` unknown the log's own dirtying speed is fitted in its place (the updates per
    second that, at the default ``rs_coarsen_updates``, explain how the pauses grow with the interval).
    """
    usable = features.dropna(subset=["copied_bytes"])
    if usable.empty:
        return base, base.pause_sigma, update_rate or 0.0, ()
    observed = np.log(usable["duration_ms"].to_numpy(dtype=float))
    copied = usable["copied_bytes"].to_numpy(dtype=float)
    intervals = usable["interval_s"].to_numpy(dtype=float)
    known = update_rate is not None
    names = _FORM if known else (*_FORM[:3], "update_rate")
    guess = update_rate if known else base.rs_coarsen_updates / float(np.median(intervals))
    start = np.log([*(getattr(base, n) for n in _FORM[:3]), base.rs_coarsen_updates if known else guess])

    def unpack(theta: np.ndarray) -> tuple[G1Params, float]:
        values: dict[str, Any] = {name: float(v) for name, v in zip(names, np.exp(theta), strict=True)}
        rate = update_rate if update_rate is not None else values.pop("update_rate")
        return replace(base, **values), rate

    def form(theta: np.ndarray) -> np.ndarray:
        p, rate = unpack(theta)
        scans = np.array([rs_scan_ms(p, live.map_bytes, rate * i) for i in intervals])
        logged: np.ndarray = np.log(np.maximum(p.young_base_ms + copied / p.copy_rate * 1000.0 + scans, 1e-6))
        return logged

    def residuals(theta: np.ndarray) -> np.ndarray:
        prior = _PRIOR_WEIGHT * np.sqrt(len(observed)) * (theta - start)
        return np.concatenate([form(theta) - observed, prior])

    solution = least_squares(residuals, start, method="trf")
    fitted, rate = unpack(solution.x)
    sd = float(np.std(form(solution.x) - observed, ddof=1)) if len(observed) > 1 else base.pause_sigma
    if live.map_bytes <= 0:  # no map to scan: the remembered-set terms and the dirtying rate shape no pause
        return replace(fitted, rs_scan_ms_per_gb=base.rs_scan_ms_per_gb, rs_coarsen_updates=base.rs_coarsen_updates), \
            sd, update_rate or 0.0, tuple(n for n in names if n in ("young_base_ms", "copy_rate"))
    return fitted, sd, rate, tuple(n for n in names if n != "update_rate")


def _median(values: np.ndarray) -> float | None:
    finite = values[np.isfinite(values)]
    return float(np.median(finite)) if len(finite) else None


def _log_sd(values: np.ndarray) -> float | None:
    finite = values[np.isfinite(values) & (values > 0)]
    return float(np.std(np.log(finite), ddof=1)) if len(finite) > 2 else None


def _cycle_figures(frame: pd.DataFrame, live_bytes: float) -> dict[str, float]:
    """Remark, cleanup, marking and rebuild rates, IHOP, from the concurrent cycles in the log."""
    ordered = with_heap_estimates(frame)
    kinds = ordered["kind"].astype(str).to_numpy()
    phases = ordered["phase"].astype(str).to_numpy() if "phase" in ordered else np.array([""] * len(kinds))
    ends = ordered["uptime_s"].to_numpy(dtype=float)
    durations = ordered["duration_ms"].to_numpy(dtype=float)
    starts = ends - durations / 1000.0
    out: dict[str, float] = {}
    for kind in ("remark", "cleanup"):
        if (median := _median(durations[kinds == kind])) is not None:
            out[f"{kind}_ms"] = median
    if (sd := _log_sd(np.concatenate([durations[kinds == "remark"], durations[kinds == "cleanup"]]))) is not None:
        out["concurrent_sigma"] = sd
    mark, rebuild, occupancy = [], [], []
    concurrent_start: float | None = None
    remark_end: float | None = None
    total = _column(ordered, "heap_total_bytes")
    old = _column(ordered, "old_before_bytes") + np.nan_to_num(_column(ordered, "humongous_after_bytes"))
    for i, kind in enumerate(kinds):
        if any(name in phases[i] for name in _CONCURRENT_START):
            concurrent_start = ends[i]
            occupancy.append(old[i] / total[i])
        elif kind == "remark" and concurrent_start is not None:
            mark.append(live_bytes / max(starts[i] - concurrent_start, 1e-3))
            concurrent_start, remark_end = None, ends[i]
        elif kind == "cleanup" and remark_end is not None:
            rebuild.append(live_bytes / max(starts[i] - remark_end, 1e-3))
            remark_end = None
    for name, values in (("mark_rate", mark), ("rebuild_rate", rebuild), ("ihop", occupancy)):
        if (median := _median(np.array(values, dtype=float))) is not None:
            out[name] = median
    return out


def _full_figures(frame: pd.DataFrame, base: G1Params) -> dict[str, float]:
    full = frame[frame["kind"].astype(str) == "full"]
    after = _column(full, "heap_after_bytes")
    durations = full["duration_ms"].to_numpy(dtype=float)
    keep = np.isfinite(after) & (after > 0)
    if not keep.any():
        return {}
    per_gb = (durations[keep] - base.full_base_ms) / (after[keep] / GIB)
    out = {"full_ms_per_gb": max(float(np.median(per_gb)), 1.0)}
    if (sd := _log_sd(durations[keep])) is not None and keep.sum() > 2:
        out["full_sigma"] = sd
    return out


#: The allocation rates between a log's collections must spread this much (upper over lower quartile) for the log to
#: tell survivors that follow the rate from survivors that do not.
SURVIVAL_RATE_SPREAD = 1.3
#: At most this many collections enter the survival line (Theil-Sen is quadratic in them): evenly spaced.
_SURVIVAL_POINTS = 2000


def survival(copied: np.ndarray, rate: np.ndarray) -> dict[str, float]:
    """``survivor_s`` and ``survivor_bytes`` from each collection's copied bytes and the allocation rate before it.

    Where the rates hardly vary (the probe's constant drive: 1.00-1.02 between quartiles) the two cannot be told
    apart and all survival is taken as following the rate: ``survivor_s`` is the median copied over rate. Where they
    spread (:data:`SURVIVAL_RATE_SPREAD`), copied bytes are a line in the rate (Theil-Sen): its slope is
    ``survivor_s`` and the median of what it leaves is ``survivor_bytes``; a slope whose 95% interval reaches 0 is
    no slope (``survivor_s`` 0, ``survivor_bytes`` the median copied).

    Why: Apache Pinot 1.5.1's server copied 1 MB at every collection while the rate between them ranged over 85-221
    MB/s (quartiles), and at every query rate from 65 to 522/s. Read as ``survivor_s`` (0.0135 s at 195.6/s), the
    model's pauses grew with the load, 1.2 to 1.9 ms, where Pinot's stayed at 1.2-1.4 (``docs/validation.md``).

    >>> rate = np.linspace(50e6, 250e6, 40)
    >>> survival(np.full(40, 1e6), rate)
    {'survivor_s': 0.0, 'survivor_bytes': 1000000.0}
    >>> {k: round(v, 6) for k, v in survival(2e6 + 0.01 * rate, rate).items()}
    {'survivor_s': 0.01, 'survivor_bytes': 2000000.0}
    >>> survival(np.full(40, 3e6), np.full(40, 300e6))
    {'survivor_s': 0.01}
    """
    keep = np.isfinite(copied) & np.isfinite(rate) & (rate > 0)
    copied, rate = copied[keep], rate[keep]
    if len(copied) == 0:
        return {}
    if len(copied) > _SURVIVAL_POINTS:
        pick = np.linspace(0, len(copied) - 1, _SURVIVAL_POINTS).round().astype(int)
        copied, rate = copied[pick], rate[pick]
    q1, q3 = np.quantile(rate, [0.25, 0.75])
    if len(copied) < 8 or q3 < SURVIVAL_RATE_SPREAD * q1:
        return {"survivor_s": float(np.median(copied / rate))}
    line = stats.theilslopes(copied, rate, alpha=0.95)
    if line.low_slope <= 0 or line.slope <= 0:
        return {"survivor_s": 0.0, "survivor_bytes": float(np.median(copied))}
    slope = float(line.slope)
    return {"survivor_s": slope, "survivor_bytes": max(float(np.median(copied - slope * rate)), 0.0)}


def _workload_figures(features: pd.DataFrame, base: G1Params, basic: bool) -> dict[str, float]:
    """Survival, promotion and eden growth; a basic log's copied bytes are the held ``survivor_s``'s estimate,
    so its promotion is the post-collection heap's growth over them and ``survivor_s`` is not derived."""
    young = features[features["mixed"] == 0] if len(features) else features
    out: dict[str, float] = {}
    if young.empty:
        return out
    if not basic:
        out.update(survival(young["copied_bytes"].to_numpy(dtype=float),
                            young["allocation_rate"].to_numpy(dtype=float)))
    promoted = (young["promoted_bytes"].clip(lower=0) / young["copied_bytes"]).to_numpy(dtype=float)
    if (share := _median(promoted)) is not None:
        out["promotion_fraction"] = min(share, 0.9)
    eden = young["eden_bytes"].to_numpy(dtype=float)
    eden = eden[np.isfinite(eden)]
    free_running = np.median(young["duration_ms"]) < base.goal_share * base.pause_goal_ms / 2
    if len(eden) >= 6 and free_running:  # eden grew at G1's own pace, not held by the pause goal
        # (a start the moments step refines: the rate it gives)
        first, last = np.median(eden[:3]), np.median(eden[-3:])
        out["young_growth"] = float(np.clip((last / first) ** (1.0 / (len(eden) - 3)) - 1.0, 0.01, 1.0))
    return out


def _eden_regime(features: pd.DataFrame, params: G1Params, heap_bytes: float) -> str | None:
    """What set eden in this log: ``goal_share`` (the pause goal), ``young_growth`` (G1 growing it freely
    while pauses stay far under the goal) or ``None`` (it sat at its minimum)."""
    young = features[features["mixed"] == 0]
    eden = young["eden_bytes"].to_numpy(dtype=float)
    at_min = np.mean(eden <= 1.15 * params.new_size_min * heap_bytes) if len(eden) else 1.0
    if at_min >= 0.7:
        return None
    free_running = np.median(young["duration_ms"]) < params.goal_share * params.pause_goal_ms / 2
    return "young_growth" if free_running else "goal_share"


def started_warm(eden_bytes: np.ndarray, heap_bytes: float, new_size_min: float) -> bool:
    """Whether a log (or the part of it given) starts in a JVM whose G1 had already grown eden: its first three
    young collections found more than twice the smallest eden (``new_size_min`` of the heap), as a server's log cut
    to its serving does. One that starts at the JVM's start, or after a full GC, finds eden near its minimum (the
    probe's drive phases: 89-102 regions of the 4 GB heap's 102).

    >>> started_warm(np.array([31e6, 32e6, 31e6, 30e6]), 70e6, 0.05)
    True
    >>> started_warm(np.array([3.6e6, 5e6, 9e6]), 70e6, 0.05)
    False
    """
    first = eden_bytes[np.isfinite(eden_bytes)][:3]
    return bool(len(first) and np.median(first) > 2.0 * new_size_min * heap_bytes)


def fit_g1(frame: pd.DataFrame, live: LiveHeap, update_rate: float | None = None, base: G1Params | None = None,
           *, match_moments: bool = True) -> G1Fit:
    """Fit :class:`G1Params` to a G1 log's pause table.

    Parameters
    ----------
    frame
        ``read_gc_log(...).frame`` (or the part of it to calibrate from).
    live
        The live heap the log ran with (static part and upsert map).
    update_rate
        Upsert updates per second of existing keys while the log was written; ``None`` when unknown:
        then the rate that explains the log (at the default ``rs_coarsen_updates``) is fitted and
        returned in :attr:`G1Fit.update_rate`.
    base
        Defaults for what the log cannot show (:class:`G1Params` defaults when ``None``).
    match_moments
        Finish with :func:`workbench.jvm.moments.match_young_moments` (the model driven like the log
        then gives the log's young-pause median and 95th percentile).

    Returns
    -------
    G1Fit
        With :attr:`G1Fit.status` naming how each parameter was found: from a detailed log (``-Xlog:gc*``)
        or a basic one (``-Xlog:gc``, JDK 8 ``-verbose:gc``), whose eden is estimated from the heap sizes
        (:func:`with_heap_estimates`) and whose copied bytes are the model's own estimate from the held
        ``survivor_s`` (:func:`~workbench.jvm.g1_params.young_copied_bytes`); the rest of the fit is the same.

    Raises
    ------
    InputError
        When the log has fewer than three young collections (after a first one) with heap sizes.
    """
    base = base or G1Params()
    basic = is_basic(frame)
    features = young_features(frame, update_rate or 0.0)
    if len(features) < 3 or features["eden_bytes"].isna().all():
        raise InputError("gc log", f"needs at least 3 G1 young collections after a first one, with heap sizes "
                                   f"(<before>-><after>(<total>) on their pause lines), found {len(features)}; "
                                   f"give a longer log (-Xlog:gc, -Xlog:gc* or JDK 8 -verbose:gc with "
                                   f"-XX:+PrintGCTimeStamps)")
    if basic:  # what survived is not logged: the model's own estimate from the held survivor_s
        features = features.assign(copied_bytes=[young_copied_bytes(base, e, r) for e, r in
                                                 zip(features["eden_bytes"], features["allocation_rate"], strict=True)])
    heap = float(np.nanmax(_column(frame, "heap_total_bytes")))
    warm = started_warm(features["eden_bytes"].to_numpy(dtype=float), heap, base.new_size_min)
    figures: dict[str, Any] = {**_workload_figures(features, base, basic), **_cycle_figures(frame, live.total),
                               **_full_figures(frame, base)}
    if warm:  # eden was grown before the log began: how fast G1 grows it is not shown
        figures.pop("young_growth", None)
    start = replace(base, **figures)
    given = update_rate is not None
    phased = _phase_fit(features, live, start, update_rate)
    if phased is not None:
        params, residual_sd, form = phased
        update_rate = update_rate or 0.0
    else:
        params, residual_sd, update_rate, form = _form_fit(features, live, start, update_rate)
    params = replace(params, pause_sigma=residual_sd)
    status = {**dict.fromkeys(figures, DERIVED), **dict.fromkeys((*form, "pause_sigma") if form else (), FITTED)}
    rate = float(features["eden_bytes"].sum() / features["cycle_s"].sum())  # per second of wall clock
    if match_moments:
        ordered = _sorted(frame)
        span_ms = float(ordered["uptime_s"].iloc[-1] - ordered["uptime_s"].iloc[0]) * 1000.0
        drive = Drive(heap, live, rate, update_rate, span_ms, warm=warm)
        young = frame[frame["kind"].astype(str) == "young"]["duration_ms"].to_numpy(dtype=float)
        knob = _eden_regime(features, params, drive.heap_bytes)
        matched = match_young_moments(params, young, len(young) / max(span_ms / 1000.0, 1e-3), drive,
                                      rate_knob=None if warm and knob == "young_growth" else knob)
        moved = {f.name for f in fields(G1Params) if getattr(matched, f.name) != getattr(params, f.name)}
        params = matched
    record = _record(status, moved if match_moments else set(), "phases" if phased else "basic" if basic else "pauses")
    return G1Fit(params, residual_sd, len(features), rate, update_rate,
                 tuple(name for name, (state, _) in record.items() if state == HELD),
                 "basic" if basic else "detailed", record, given)
