"""What adding a table to a tenant does to the tables already on it: each one's p99 without and with it.

The operator's question for a new table is "does it fit on our tenant?": which means "how far does it move
the p99 of every table already there, against each one's SLO?". Both runs go through the one run verb
(:func:`workbench.runs.run_checked`) on the same seed, with the new table listed last: every other table
keeps its position, so it draws exactly the same arrivals, work and delays in both runs (its own streams,
:func:`workbench.sim.tenant.table_streams`), as do the servers' GC and crashes; the difference is the new
table's load on the shared servers, not noise.

**At the worst hours.** When the tables have day profiles (``workload.profile.hourly``), the pair is run at
each of the day's worst hours of the tenant *with* the new table (:func:`workbench.scenario.day_load.worst_hours`:
the hours no other hour exceeds for every table), each table at that hour's factor in both runs (the same
:func:`workbench.studies.day.load_at` a sweep sizes with), and each table's row is its worst hour: the one
where its p99 with the new table is highest. The ``hour`` column names it (empty without profiles).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.errors import ScenarioError
from workbench.io.summary import Summary
from workbench.runs import run_checked
from workbench.scenario import Scenario, load_scenario
from workbench.scenario.day_load import table_names, worst_hours
from workbench.scenario.schema import SLOSpec
from workbench.studies.day import load_at

__all__ = ["TABLE_ADDED_COLUMNS", "table_added"]

#: The columns of :func:`table_added`'s table, one row per table already on the tenant.
TABLE_ADDED_COLUMNS = ("table", "tenant", "p99_without_ms", "p99_with_ms", "p99_with_ci_high_ms", "p99_slo_ms",
                       "slo_met_without", "slo_met_with", "utilisation_without", "utilisation_with", "hour")


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


def _row(name: str, without: Summary, with_: Summary, slo: SLOSpec, hour: str) -> dict[str, Any]:
    assert without.tables is not None and with_.tables is not None
    a, b = without.tables[name], with_.tables[name]
    return {"table": name, "tenant": b.tenant, "p99_without_ms": a.latency_ms.p99.value,
            "p99_with_ms": b.latency_ms.p99.value, "p99_with_ci_high_ms": b.latency_ms.p99.ci_high,
            "p99_slo_ms": slo.p99_ms, "slo_met_without": a.slo.met, "slo_met_with": b.slo.met,
            "utilisation_without": a.utilisation.mean, "utilisation_with": b.utilisation.mean, "hour": hour}


def _hours(without: Scenario, with_: Scenario, scratch: Path, seed: int) -> list[tuple[str, Scenario, Scenario]]:
    """The pair at each worst hour of the tenant with the table (module text): its label, and both scenarios
    with each table at that hour's factor; the pair as written when no table has a profile."""
    hours = worst_hours(with_)
    if not hours:
        return [("", without, with_)]
    names = table_names(with_)
    out = []
    for h in hours:
        kept = h.factors[:-1]  # the new table is listed last in the scenario with it
        at = scratch / f"hour-{h.index}"
        out.append((h.label(names), load_at(without, kept, at / "without", seed),
                    load_at(with_, h.factors, at / "with", seed)))
    return out


def table_added(scenario: Scenario, table: str, *, seed: int | None = None) -> pd.DataFrame:
    """Every other table of ``scenario`` (a ``tables:`` scenario) without and with ``table`` on the cluster:
    its p99 (and the top of its interval with the table, what its ``p99_ms`` SLO is held to), its SLO verdict
    and its tenant's mean utilisation, on common random numbers (columns :data:`TABLE_ADDED_COLUMNS`); with
    day profiles, at each table's worst hour of the tenant's worst hours (``hour``)."""
    without, with_ = _pair(scenario, table)
    rows: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="table-added-") as scratch:  # a replayed log's steady replays
        for hour, a, b in _hours(without, with_, Path(scratch), with_.simulation.seed if seed is None else seed):
            before, after = (run_checked(s, None, seed=seed).summary for s in (a, b))
            for t in without.tables:
                row = _row(t.table.table_name, before, after, t.slo, hour)
                kept = rows.get(row["table"])
                if kept is None or row["p99_with_ms"] > kept["p99_with_ms"]:
                    rows[row["table"]] = row
    return pd.DataFrame(list(rows.values()), columns=list(TABLE_ADDED_COLUMNS))


