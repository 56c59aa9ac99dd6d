"""The one path from a scenario to a run: validate, simulate, summarise, write the run directory.

Every caller that runs the model goes through :func:`run_scenario`: ``workbench simulate``, each sweep
point (API or notebook) and every study (:mod:`workbench.studies`: what-ifs, scale-out, comparisons,
uncertainty, back-tests). Composing simulate-then-summarise in one place keeps the records, the summary
and the files a run leaves identical whoever asked for it; :mod:`workbench.api` re-exports it. It sits
below the API so that studies can call it while the API calls the studies.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from workbench.errors import InputError
from workbench.io import check_output
from workbench.io.run_dir import SUMMARY_FILE, RunDir, RunRecord
from workbench.io.summary import Summary
from workbench.scenario import Scenario, load_scenario
from workbench.sim.records import Result

__all__ = ["SUMMARY_FILE", "check_seed", "resolve", "run_checked", "run_scenario", "write_run"]


def write_run(result: Result, out: str | Path, *, overwrite: bool = False, summary: Summary | None = None) -> RunRecord:
    """Write a run's Parquet tables and ``summary.json`` into ``out`` atomically; returns its record as the
    file holds it (tuples as lists, keys as strings, credentials redacted), as a resumed sweep reads it.

    ``summary`` is the run's summary statistics when the caller has them already (else they are
    computed here, once).
    """
    from workbench.analysis.stats import summarise

    stats = summary if summary is not None else summarise(result)
    return RunDir(Path(out)).write(result.tables(), _record(result, stats), overwrite=overwrite)


def _record(result: Result, summary: Summary) -> RunRecord:
    return RunRecord(scenario=result.parameters.get("scenario", {}), seed=result.parameters.get("seed"),
                     overrides=result.parameters.get("overrides", {}), summary=summary)


def run_scenario(
    scenario: Scenario | str | Path | Mapping[str, Any], out: str | Path | None, *,
    overrides: Mapping[str, Any] | None = None, seed: int | None = None, data: str | Path | None = None,
    base_dir: str | Path | None = None, overwrite: bool = False, progress: Callable[[int, int], None] | None = None,
    ideal_state: Mapping[str, Mapping[str, str]] | None = None,
) -> RunRecord:
    """Simulate a scenario, summarise it and write the run directory ``out``; returns its ``summary.json``
    record.

    Parameters
    ----------
    scenario
        A scenario, its file, or its data; validated once, with ``overrides`` applied first.
    out
        The run directory (Parquet records and ``summary.json``), written atomically. ``None`` writes
        nothing, for studies that only read the summary of many runs (a parameter-uncertainty draw);
        the record is then returned as computed, not as JSON would hold it.
    overrides
        Dotted-key overrides (``{"cluster.servers": 12}``), recorded in the summary.
    seed
        Simulation seed; ``None`` keeps ``simulation.seed``.
    data
        Workload directory (``workbench generate`` or an import); default ``workload.data``.
    base_dir
        Where relative paths of a mapping scenario point (a file's own directory otherwise).
    overwrite
        Replace an existing run directory.
    progress
        Called with (replications done, replications) after each replication.
    ideal_state
        Where the segments live instead of a fresh assignment (a rebalance's result), segment ->
        server -> state.
    """
    check_seed(seed)
    sc = resolve(scenario, overrides, base_dir)
    return run_checked(sc, out, overrides=overrides, seed=seed, data=data, overwrite=overwrite, progress=progress,
                       ideal_state=ideal_state)


def run_checked(sc: Scenario, out: str | Path | None, *, overrides: Mapping[str, Any] | None = None,
                seed: int | None = None, data: str | Path | None = None, overwrite: bool = False,
                progress: Callable[[int, int], None] | None = None,
                ideal_state: Mapping[str, Mapping[str, str]] | None = None) -> RunRecord:
    """:func:`run_scenario` of a scenario already validated with its ``overrides`` applied (a sweep
    point's): ``overrides`` are only recorded, so the point is not validated a second time."""
    from workbench.analysis.stats import summarise
    from workbench.sim.run import simulate

    check_seed(seed)
    if out is not None:
        check_output(out, overwrite=overwrite)
    result = simulate(sc, seed, data=Path(data) if data is not None else None, progress=progress,
                      ideal_state=ideal_state)
    result.parameters["overrides"] = dict(overrides or {})
    summary = summarise(result, slo=sc.slo)
    if out is None:
        return _record(result, summary)
    return write_run(result, out, overwrite=overwrite, summary=summary)


def check_seed(seed: int | None) -> None:
    """Reject a seed numpy's ``SeedSequence`` would not take, naming it (before any work starts)."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise InputError("seed", f"must be a non-negative integer (it seeds numpy's SeedSequence), got {seed!r}")


def resolve(scenario: Scenario | str | Path | Mapping[str, Any], overrides: Mapping[str, Any] | None,
            base_dir: str | Path | None) -> Scenario:
    """The validated scenario of a run: loaded (with ``overrides``) exactly once."""
    root = Path(base_dir) if base_dir is not None else None
    if isinstance(scenario, Scenario):
        return scenario.with_overrides(overrides) if overrides else scenario
    return load_scenario(scenario, base_dir=root, overrides=overrides)
