"""What adding a table to a tenant does to the tables already on it: each one's p99 without and with it.

The operator's question for a new table is "does it fit on our tenant?": which means "how far does it move
the p99 of every table already there, against each one's SLO?". Both runs go through the one run verb
(:func:`workbench.runs.run_checked`) on the same seed, with the new table listed last: every other table
keeps its position, so it draws exactly the same arrivals, work and delays in both runs (its own streams,
:func:`workbench.sim.tenant.table_streams`), as do the servers' GC and crashes; the difference is the new
table's load on the shared servers, not noise.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from workbench.errors import ScenarioError
from workbench.io.summary import Summary
from workbench.runs import run_checked
from workbench.scenario import Scenario, load_scenario
from workbench.scenario.schema import SLOSpec

__all__ = ["TABLE_ADDED_COLUMNS", "table_added"]

#: The columns of :func:`table_added`'s table, one row per table already on the tenant.
TABLE_ADDED_COLUMNS = ("table", "tenant", "p99_without_ms", "p99_with_ms", "p99_with_ci_high_ms", "p99_slo_ms",
                       "slo_met_without", "slo_met_with", "utilisation_without", "utilisation_with")


def _with_tables(sc: Scenario, entries: list[dict[str, Any]]) -> Scenario:
    data = sc.to_dict()
    data["tables"] = entries
    return load_scenario(data, base_dir=sc.base_dir)


def _pair(sc: Scenario, name: str) -> tuple[Scenario, Scenario]:
    """The scenario without table ``name`` and with it, listed last (every other table keeps its position)."""
    entries: list[dict[str, Any]] = sc.to_dict()["tables"]
    names = [t.table.table_name for t in sc.tables]
    if name not in names:
        raise ScenarioError("tables", f"has no table {name!r}; its tables are {', '.join(names) or 'none'}")
    if len(names) < 2:
        raise ScenarioError("tables", f"lists only {name!r}: add the tables already on its tenant beside it")
    added = entries.pop(names.index(name))
    return _with_tables(sc, entries), _with_tables(sc, [*entries, added])


def _row(name: str, without: Summary, with_: Summary, slo: SLOSpec) -> dict[str, Any]:
    assert without.tables is not None and with_.tables is not None
    a, b = without.tables[name], with_.tables[name]
    return {"table": name, "tenant": b.tenant, "p99_without_ms": a.latency_ms.p99.value,
            "p99_with_ms": b.latency_ms.p99.value, "p99_with_ci_high_ms": b.latency_ms.p99.ci_high,
            "p99_slo_ms": slo.p99_ms, "slo_met_without": a.slo.met, "slo_met_with": b.slo.met,
            "utilisation_without": a.utilisation.mean, "utilisation_with": b.utilisation.mean}


def table_added(scenario: Scenario, table: str, *, seed: int | None = None) -> pd.DataFrame:
    """Every other table of ``scenario`` (a ``tables:`` scenario) without and with ``table`` on the cluster:
    its p99 (and the top of its interval with the table, what its ``p99_ms`` SLO is held to), its SLO verdict
    and its tenant's mean utilisation, on common random numbers (columns :data:`TABLE_ADDED_COLUMNS`)."""
    without, with_ = _pair(scenario, table)
    before, after = (run_checked(s, None, seed=seed).summary for s in (without, with_))
    rows = [_row(t.table.table_name, before, after, t.slo) for t in without.tables]
    return pd.DataFrame(rows, columns=list(TABLE_ADDED_COLUMNS))


