"""Compare configurations side by side: tabulate run summaries, one row per configuration.

Running the variants is a study (:func:`workbench.studies.compare.compare`); this module only reads
their records or summaries. The table has the same columns as a sweep's ``combined.parquet``
(flattened summary keys such as ``latency_ms.p99.value``), so the same pure plots draw both.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from workbench.analysis.stats import summarise
from workbench.sim.records import Result

__all__ = ["HEADLINE", "flatten", "headline", "summaries_table", "summary_table"]


def flatten(value: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested mappings as one level of dotted keys: one column per number of a summary.

    Both this comparison table and a sweep's ``combined.parquet`` use it, so the same plots read both.

    >>> flatten({"latency_ms": {"p99": {"value": 3.0}}, "queries": 5})
    {'latency_ms.p99.value': 3.0, 'queries': 5}
    """
    out: dict[str, Any] = {}
    for key, item in value.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(item, Mapping):
            out.update(flatten(item, name))
        else:
            out[name] = item
    return out


def summary_table(results: Mapping[str, Result]) -> pd.DataFrame:
    """One row per labelled result: ``config`` plus the flattened :func:`~workbench.analysis.stats.summarise`."""
    return summaries_table({label: summarise(r) for label, r in results.items()})


def summaries_table(summaries: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """One row per labelled summary (a run's ``summary.json`` ``summary``): ``config`` plus its flattened keys.

    >>> summaries_table({"a": {"latency_ms": {"p99": {"value": 3.0}}}})
      config  latency_ms.p99.value
    0      a                   3.0
    """
    return pd.DataFrame([{"config": label, **flatten(s)} for label, s in summaries.items()])


#: The headline columns of a summary table and how :func:`headline` names them (units in the name).
HEADLINE: dict[str, str] = {
    "servers_queried_mean": "servers per query",
    "segments_queried_mean": "segments per query",
    "latency_ms.p50.value": "p50 (ms)",
    "latency_ms.p99.value": "p99 (ms)",
    "latency_ms.p99.ci_low": "p99 low (ms)",
    "latency_ms.p99.ci_high": "p99 high (ms)",
    "latency_ms.p99.9.value": "p99.9 (ms)",
    "gc_delayed_rate": "met a GC pause (%)",
    "utilisation.mean": "busy (%)",
    "partial_rate": "partial (%)",
}


def headline(table: pd.DataFrame, label: str = "config") -> pd.DataFrame:
    """The few columns a reader compares, named with their units, shares in percent, rounded.

    >>> headline(pd.DataFrame({"config": ["a"], "latency_ms.p99.value": [12.345], "gc_delayed_rate": [0.0312]}))
      config  p99 (ms)  met a GC pause (%)
    0      a      12.3                3.12
    """
    keep = [c for c in HEADLINE if c in table]
    out = table[[label, *keep]].rename(columns=HEADLINE).copy()
    for column, name in HEADLINE.items():
        if column in keep and name.endswith("(%)"):
            out[name] = 100 * out[name]
    return out.round(2 if len(out) else 0).round({n: 1 for n in out.columns if n.endswith("(ms)")})
