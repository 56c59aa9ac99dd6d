"""Whether a run meets its scenario's SLO (``slo:``), check by check, with the reason when it does not.

A latency check passes only when the whole confidence interval of the percentile lies under the limit:
a capacity plan should not rest on a point estimate that the next replication could move over it.
The heap check passes when no server's peak heap exceeds ``slo.max_heap`` and no server ran out of
memory (an out-of-memory JVM fails whatever the limit).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from workbench.units import parse_size

__all__ = ["CHECKS", "LIMITS", "check_slo"]


def _p99(summary: Mapping[str, Any], limit: float) -> dict[str, Any]:
    p99 = summary["latency_ms"]["p99"]
    high = p99.get("ci_high", p99["value"])
    high = p99["value"] if high != high else high  # NaN interval (one replication, few batches)
    met = bool(high <= limit)
    why = "" if met else f"p99 {p99['value']:.1f} ms (interval up to {high:.1f} ms) is over {limit:g} ms"
    return {"limit": limit, "value": p99["value"], "bound": high, "met": met, "why": why}


def _max_heap(summary: Mapping[str, Any], limit: float) -> dict[str, Any]:
    heap = summary["heap"]
    peak, oom = heap["peak_max"], heap["oom_servers"]
    met = bool(peak <= limit and oom == 0)
    if oom:
        why = f"{oom} server run(s) ran out of memory (live heap {heap['live_max'] / 2**30:.2f} GiB)"
    elif not met:
        why = f"peak heap {peak / 2**30:.2f} GiB is over {limit / 2**30:.2f} GiB"
    else:
        why = ""
    return {"limit": limit, "value": peak, "bound": peak, "met": met, "why": why}


#: ``slo`` key -> the check it names (a key left unset is not checked).
CHECKS: Mapping[str, Callable[[Mapping[str, Any], float], dict[str, Any]]] = {"p99_ms": _p99, "max_heap": _max_heap}
#: ``slo`` key -> how its limit is read: a size such as ``8G`` as the scenario documents it, or a number.
LIMITS: Mapping[str, Callable[[Any], float]] = {"p99_ms": float, "max_heap": lambda v: float(parse_size(v))}


def check_slo(summary: Mapping[str, Any], slo: Mapping[str, Any]) -> dict[str, Any]:
    """Each SLO check a run's ``summary`` is held to, and the verdict: ``met`` is None when no SLO is set.

    >>> s = {"latency_ms": {"p99": {"value": 90.0, "ci_low": 80.0, "ci_high": 110.0}},
    ...      "heap": {"peak_max": 3e9, "live_max": 2e9, "oom_servers": 0}}
    >>> check_slo(s, {"p99_ms": 100, "max_heap": 4e9})["met"]
    False
    >>> check_slo(s, {"p99_ms": 120})["checks"]["p99_ms"]["met"], check_slo(s, {})["met"]
    (True, None)
    >>> check_slo(s, {"max_heap": "2G"})["why"]
    'peak heap 2.79 GiB is over 2.00 GiB'
    """
    checks = {key: check(summary, LIMITS[key](slo[key])) for key, check in CHECKS.items()
              if slo.get(key) is not None}
    met = all(c["met"] for c in checks.values()) if checks else None
    return {"met": met, "checks": checks, "why": "; ".join(c["why"] for c in checks.values() if c["why"])}
