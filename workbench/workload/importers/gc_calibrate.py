"""Turn imported GC pauses into the parameters of the model's GC process.

Two calibrations come out of a log:

* ``g1``: the G1 model of :mod:`workbench.jvm` fitted to the log (:func:`workbench.jvm.fit_g1`), whose
  pauses follow the live heap, so a scenario can change the upsert key count and predict another log.
  It needs G1's heap sizes on at least four young collections: a detailed log (``-Xlog:gc*``) gives
  each collection's regions (and, with ``gc+phases=debug``, its copied bytes and phase times); a basic
  one (``-Xlog:gc``, JDK 8 ``-verbose:gc``) only the pause and the heap before, after and committed,
  from which eden and the allocation rate are estimated and the rest held (``g1_fit.parameters`` says
  which, ``docs/gc.md`` lists them). The live heap the log shows is split into the upsert map
  (``upsert_keys`` at the heap model's bytes per key for the given key types and hash function) and
  the rest (``live_heap``);
* ``fixed``: the *run* and *pause* samples resampled as they are (the time from the end of one pause to
  the start of the next, ``interval_s``, and the pause length, ``pause_ms``), which any collector's log
  gives but which cannot follow a different heap.

``gc`` is the g1 section when the log allows it, else the fixed one with the reason under
``skipped``; since only g1 follows upsert keys, asking for them from a log that cannot calibrate g1
is an error. Per-kind samples and heap figures are kept alongside.

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
from workbench.jvm import G1Fit, LiveHeap, fit_g1, observed_live_bytes
from workbench.jvm.fit import DERIVED, FITTED
from workbench.pinot.heap import upsert_bytes_per_key

__all__ = ["G1_SECTION_KEYS", "calibrate_gc"]

#: Keys of the fitted ``collector: g1`` section besides the :class:`~workbench.jvm.G1Params` fields.
G1_SECTION_KEYS = ("collector", "live_heap", "upsert_keys", "update_rate", "allocation_rate")
#: Pause kinds of ZGC logs (G1 cannot be fitted from them).
_ZGC_KINDS = frozenset({"mark_start", "mark_end", "relocate_start", "stall"})

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


def _live(frame: pd.DataFrame, upsert_keys: int, hash_function: str,
          primary_key_types: Sequence[str]) -> tuple[LiveHeap, dict[str, Any]]:
    """The log's live heap split into the upsert map and the rest."""
    observed = observed_live_bytes(frame)
    per_key = upsert_bytes_per_key(list(primary_key_types), hash_function, num_keys=upsert_keys) if upsert_keys else 0.0
    map_bytes = upsert_keys * per_key
    if map_bytes > observed:
        raise InputError("upsert_keys", f"{upsert_keys:,} keys of {list(primary_key_types)} with hashFunction "
                                        f"{hash_function} take {map_bytes / 2**20:,.0f} MiB, more than the "
                                        f"{observed / 2**20:,.0f} MiB live heap the log shows; check the key count")
    upsert = {"keys": upsert_keys, "hash_function": hash_function, "primary_key_types": list(primary_key_types),
              "bytes_per_key": round(per_key, 3), "observed_live_bytes": observed}
    return LiveHeap(observed - map_bytes, upsert_keys, per_key), upsert


def _g1_section(fit: G1Fit, live: LiveHeap) -> dict[str, Any]:
    params = {name: (round(float(v), 6) if isinstance(v, float) else v) for name, v in vars(fit.params).items()}
    return {"collector": "g1", "live_heap": round(live.static_bytes), "upsert_keys": live.upsert_keys,
            "update_rate": round(fit.update_rate, 3), "allocation_rate": round(fit.allocation_rate), **params}


def _parameters(fit: G1Fit) -> dict[str, dict[str, str]]:
    """How each key of the g1 section was found: ``fitted``, ``derived``, ``held`` or ``given``, and from what."""
    rate = (("given", "as given (update_rate)") if fit.update_rate_given else
            (FITTED, "the rate that explains how the pauses grow with the time between collections"))
    allocation = "eden consumed" if fit.log_form == "detailed" else "the heap's growth between pauses"
    extra = {"live_heap": (DERIVED, "heap after the last full GC (else the lowest after a collection), less the "
                                    "upsert map"),
             "upsert_keys": ("given", "as given (upsert_keys)"), "update_rate": rate,
             "allocation_rate": (DERIVED, f"{allocation} over the time between collections")}
    return {name: {"status": state, "how": how} for name, (state, how) in {**extra, **fit.record}.items()}


def _why_not_g1(ordered: pd.DataFrame) -> str | None:
    """Why this log cannot calibrate g1 (None when it may)."""
    kinds = set(ordered["kind"].astype(str))
    if kinds & _ZGC_KINDS and "young" not in kinds:
        return f"the log is not G1's (pause kinds {', '.join(sorted(kinds))})"
    if "heap_after_bytes" not in ordered or ordered["heap_after_bytes"].isna().all():
        return "the log has no heap sizes (<before>-><after>(<total>) on its pause lines)"
    return None


def _g1(ordered: pd.DataFrame, upsert_keys: int, hash_function: str, primary_key_types: Sequence[str],
        update_rate: float | None) -> tuple[dict[str, Any], str | None]:
    """The g1 calibration (section, heap, upsert split, fit figures) or the reason there is none."""
    if (reason := _why_not_g1(ordered)) is not None:
        return {}, reason
    try:
        live, upsert = _live(ordered, upsert_keys, hash_function, primary_key_types)
        fit = fit_g1(ordered, live, update_rate)
    except InputError as exc:
        if exc.where == "upsert_keys":
            raise
        return {}, exc.problem
    figures = {"log_form": fit.log_form, "young_residual_sd": round(fit.young_residual_sd, 6),
               "young_count": fit.young_count, "update_rate_fitted": not fit.update_rate_given,
               "defaulted": list(fit.defaulted), "parameters": _parameters(fit)}
    return {"gc": _g1_section(fit, live), "heap": float(ordered["heap_total_bytes"].max()), "upsert": upsert,
            "g1_fit": figures}, None


def _zgc(ordered: pd.DataFrame) -> dict[str, Any] | None:
    """ZGC pause and stall figures, when the log is ZGC's."""
    kinds = ordered["kind"].astype(str)
    if not set(kinds) & _ZGC_KINDS:
        return None
    pauses = ordered[kinds.isin(["mark_start", "mark_end", "relocate_start"])]["duration_ms"].to_numpy(dtype=float)
    stalls = ordered[kinds == "stall"]["duration_ms"].to_numpy(dtype=float)
    positive = pauses[pauses > 0]
    return {"collector": "zgc", "pause_ms": round(float(np.median(positive)), 6) if len(positive) else None,
            "pause_sigma": round(float(np.std(np.log(positive), ddof=1)), 6) if len(positive) > 2 else None,
            "stalls": len(stalls), "stall_ms_total": round(float(stalls.sum()), 3)}


def calibrate_gc(pauses: pd.DataFrame, *, upsert_keys: int = 0, hash_function: str = "NONE",
                 primary_key_types: Sequence[str] = ("LONG",), update_rate: float | None = None) -> dict[str, Any]:
    """Calibrate the model's GC process from imported pauses.

    Parameters
    ----------
    pauses
        The table :func:`workbench.workload.importers.read_gc_log` returns (at least ``uptime_s``,
        ``kind`` and ``duration_ms``; heap columns and G1's region details are used when present).
    upsert_keys
        Upsert primary keys the logged JVM held (all its partitions and tables).
    hash_function
        ``upsertConfig.hashFunction`` of those keys.
    primary_key_types
        Pinot types of the primary-key columns.
    update_rate
        Upsert updates of existing keys per second while the log was written; ``None`` when unknown
        (the g1 fit then infers it from how the pauses grow, ``g1_fit.update_rate_fitted``).

    Returns
    -------
    dict
        ``gc``: a drop-in ``cluster.gc`` section: ``collector: g1`` fitted to the log when it can be
        (its keys are the :class:`~workbench.jvm.G1Params` fields and :data:`G1_SECTION_KEYS`:
        ``live_heap`` is the live heap less the ``upsert_keys`` map, bytes), else the ``fixed`` section;
        ``fixed``: ``{"collector": "fixed", "interval_s": <empirical, s>, "pause_ms": <empirical, ms>}``
        from every pause in time order; with g1 also ``heap`` (the logged maximum heap, bytes, for
        ``cluster.server.heap``), ``upsert`` (the split of the live heap) and ``g1_fit`` (residual sd,
        pauses used, parameters left at defaults); ``skipped``: what could not be calibrated and why;
        ``zgc``: pause and stall figures of a ZGC log; ``kinds``: per kind (young, mixed, remark,
        cleanup, full, then others) the count, share of pauses, mean interval and interval samples
        between pauses *of that kind* (s), pause samples and their summary (ms), and mean heap
        before/after/reclaimed (bytes); plus the observed ``span_s``, ``pauses`` and
        ``gc_time_fraction`` (share of the span spent paused).

    Raises
    ------
    InputError
        When a required column is missing, there are fewer than two pauses, or upsert keys are given
        for a log that cannot calibrate g1 (the only collector that follows them) or that they overflow.
    """
    if upsert_keys < 0:
        raise InputError("upsert_keys", f"must be >= 0, got {upsert_keys}")
    ordered = _checked(pauses)
    ends = ordered["uptime_s"].to_numpy(dtype=float)
    durations = ordered["duration_ms"].to_numpy(dtype=float)
    span_s = float(ends[-1] - (ends[0] - durations[0] / 1000.0))
    kinds = {kind: _kind_figures(ordered[ordered["kind"].astype(str) == kind], len(ordered))
             for kind in _ordered_kinds(ordered["kind"])}
    fixed = {"collector": "fixed", "interval_s": _empirical(_gaps_s(ordered)), "pause_ms": _empirical(durations)}
    g1, reason = _g1(ordered, upsert_keys, hash_function, primary_key_types, update_rate)
    if reason is not None and upsert_keys > 0:
        raise InputError("upsert_keys", f"only the g1 collector follows upsert keys, and g1 cannot be calibrated "
                                        f"from this log: {reason}; log G1 with -Xlog:gc* (or drop --upsert-keys "
                                        f"for the fixed collector, which resamples the log's pauses as they are)")
    out: dict[str, Any] = {
        "pauses": len(ordered),
        "span_s": round(span_s, 6),
        "gc_time_fraction": round(float(durations.sum() / 1000.0 / span_s), 6) if span_s > 0 else None,
        "gc": fixed,
        "fixed": fixed,
        **g1,
        "skipped": {} if reason is None else {"g1": reason},
        "kinds": kinds,
    }
    if (zgc := _zgc(ordered)) is not None:
        out["zgc"] = zgc
    return out
