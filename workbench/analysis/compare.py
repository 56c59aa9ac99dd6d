"""Compare configurations side by side: run variants of a scenario and tabulate their summaries.

The table has the same columns as a sweep's ``combined.parquet`` (flattened summary keys such as
``latency_ms.p99.value``), so the same pure plots draw both.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from workbench.scenario import Scenario
from workbench.sim.records import Result

__all__ = ["compare", "flatten", "summary_table"]


def flatten(prefix: str, value: Any, out: dict[str, Any]) -> dict[str, Any]:
    """Flatten nested mappings into dotted keys: ``{"a": {"b": 1}}`` -> ``{"a.b": 1}``.

    >>> flatten("", {"latency_ms": {"p99": {"value": 3.0}}, "queries": 5}, {})
    {'latency_ms.p99.value': 3.0, 'queries': 5}
    """
    if isinstance(value, Mapping):
        for k, v in value.items():
            flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    else:
        out[prefix] = value
    return out


def summary_table(results: Mapping[str, Result]) -> pd.DataFrame:
    """One row per labelled result: ``config`` plus the flattened ``summary()``."""
    return pd.DataFrame([{"config": label, **flatten("", r.summary(), {})} for label, r in results.items()])


def compare(base: Scenario, variants: Mapping[str, Mapping[str, Any]], seed: int | None = None,
            ) -> tuple[pd.DataFrame, dict[str, Result]]:
    """Simulate ``base`` with each variant's dotted-key overrides, on common random numbers (same seed).

    Returns the summary table and the results by label.
    """
    from workbench.sim.run import simulate

    results = {label: simulate(base.with_overrides(overrides), seed) for label, overrides in variants.items()}
    return summary_table(results), results
