"""Whether a run meets its scenario's SLO (``slo:``), check by check, with the reason when it does not.

A latency check passes only when the whole confidence interval of the percentile lies under the limit:
a capacity plan should not rest on a point estimate that the next replication could move over it.
The heap check passes when no server's peak heap exceeds ``slo.max_heap`` and no server ran out of
memory (an out-of-memory JVM fails whatever the limit).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from workbench.io.summary import Heap, SLOCheck, SLOChecks, SLOVerdict, Statistic
from workbench.scenario.build import build_section
from workbench.scenario.schema import SLOSpec

__all__ = ["CHECKS", "check_slo", "recorded_slo"]


def _p99(p99: Statistic, heap: Heap, limit: float) -> SLOCheck:
    high = p99.bound()
    met = bool(high <= limit)
    why = "" if met else f"p99 {p99.value:.1f} ms (interval up to {high:.1f} ms) is over {limit:g} ms"
    return SLOCheck(limit=limit, value=p99.value, bound=high, met=met, why=why)


def _max_heap(p99: Statistic, heap: Heap, limit: float) -> SLOCheck:
    peak, oom = heap.peak_max, heap.oom_servers
    met = bool(peak <= limit and oom == 0)
    if oom:
        why = f"{oom} server run(s) ran out of memory (live heap {heap.live_max / 2**30:.2f} GiB)"
    elif not met:
        why = f"peak heap {peak / 2**30:.2f} GiB is over {limit / 2**30:.2f} GiB"
    else:
        why = ""
    return SLOCheck(limit=limit, value=peak, bound=peak, met=met, why=why)


#: ``slo`` key -> the check it names (a key left unset is not checked); the keys are
#: :class:`~workbench.io.summary.SLOChecks`' fields, where the verdicts are kept.
CHECKS: Mapping[str, Callable[[Statistic, Heap, float], SLOCheck]] = {"p99_ms": _p99, "max_heap": _max_heap}


def check_slo(p99: Statistic, heap: Heap, slo: SLOSpec) -> SLOVerdict:
    """Each SLO check a run's p99 latency and heap are held to, and the verdict: ``met`` is None when no
    SLO is set.

    ``slo`` is the scenario's typed ``slo:`` section, its limits already read (``8G`` is bytes by then).

    >>> p99 = Statistic(value=90.0, ci_low=80.0, ci_high=110.0)
    >>> heap = Heap(live_max=2e9, peak_max=3e9, oom_servers=0, upsert_keys_max=0, upsert_keys_from="none", at_s=None)
    >>> check_slo(p99, heap, SLOSpec(p99_ms=100, max_heap=4e9)).met
    False
    >>> check_slo(p99, heap, SLOSpec(p99_ms=120)).checks.p99_ms.met, check_slo(p99, heap, SLOSpec()).met
    (True, None)
    >>> check_slo(p99, heap, SLOSpec(max_heap=2 * 2**30)).why
    'peak heap 2.79 GiB is over 2.00 GiB'
    """
    limits = {key: getattr(slo, key) for key in CHECKS}
    checks = {key: check(p99, heap, float(limits[key])) for key, check in CHECKS.items() if limits[key] is not None}
    met = all(c.met for c in checks.values()) if checks else None
    return SLOVerdict(met=met, checks=SLOChecks(**checks), why="; ".join(c.why for c in checks.values() if c.why))


def recorded_slo(parameters: Mapping[str, Any]) -> SLOSpec:
    """The SLO of a run read back from its record (``parameters["scenario"]["slo"]``, as the user wrote it),
    read by the scenario loader's own rules, for a result that no longer has its :class:`SLOSpec` at hand.

    >>> recorded_slo({"scenario": {"slo": {"max_heap": "8G"}}}).max_heap == 8 * 2**30
    True
    """
    return build_section(SLOSpec, (parameters.get("scenario") or {}).get("slo"), "slo")
