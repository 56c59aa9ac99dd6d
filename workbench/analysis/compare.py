"""Compare configurations side by side: tabulate run summaries, one row per configuration.

Running the variants is a study (:func:`workbench.studies.compare.compare`); this module only reads
their records or summaries. The table has the same columns as a sweep's ``combined.parquet``
(:meth:`~workbench.io.summary.Summary.columns`, such as ``latency_ms.p99.value``), so the same pure
plots draw both.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from workbench.analysis.stats import summarise
from workbench.io import summary as S
from workbench.io.summary import Summary
from workbench.sim.records import Result

__all__ = ["HEADLINE", "headline", "summaries_table", "summary_table"]


def summary_table(results: Mapping[str, Result]) -> pd.DataFrame:
    """One row per labelled result: ``config`` plus the columns of its :func:`~workbench.analysis.stats.summarise`."""
    return summaries_table({label: summarise(r) for label, r in results.items()})


def summaries_table(summaries: Mapping[str, Summary]) -> pd.DataFrame:
    """One row per labelled summary: ``config`` plus its columns (:meth:`~workbench.io.summary.Summary.columns`,
    the columns of a sweep's ``combined.parquet``).

    >>> table = summaries_table({"a": Summary.from_json(S.EXAMPLE)})
    >>> table[["config", S.P99]]
      config  latency_ms.p99.value
    0      a                  30.0
    """
    return pd.DataFrame([{"config": label, **s.columns()} for label, s in summaries.items()])


#: The headline columns of a summary table and how :func:`headline` names them (units in the name).
HEADLINE: dict[str, str] = {
    S.column("servers_queried_mean"): "servers per query",
    S.column("segments_queried_mean"): "segments per query",
    S.latency_column("p50"): "p50 (ms)",
    S.P99: "p99 (ms)",
    S.P99_LOW: "p99 low (ms)",
    S.P99_HIGH: "p99 high (ms)",
    S.latency_column("p99.9"): "p99.9 (ms)",
    S.GC_DELAYED_RATE: "met a GC pause (%)",
    S.UTILISATION_MEAN: "busy (%)",
    S.PARTIAL_RATE: "partial (%)",
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
