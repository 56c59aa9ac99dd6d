"""The workbench's jobs, one function each; the CLI, sweep points and notebooks all call these.

- :func:`generate`: a workload directory from a scenario's (or a bare) generate spec, with Spark;
- :func:`run_scenario`: a scenario (plus overrides) simulated into a run directory, returning its summary;
- :func:`report`: the PDF of a run directory or a sweep directory;
- :func:`import_input`: a real Pinot input (table config, schema, segments, query log, GC log) imported;
- :func:`calibrate`: a calibrated scenario, fitted service cost and back-test from a cluster's own files.

Each validates its input once and writes its output atomically.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from workbench.errors import InputError, ScenarioError
from workbench.io import atomic_dir, write_json_atomic
from workbench.pinot.table_config import TableConfig
from workbench.scenario import Scenario, build_section, load_scenario
from workbench.scenario.schema import GenerateSpec
from workbench.sim.records import Result

if TYPE_CHECKING:
    from workbench.calibrate import CalibrationResult

__all__ = ["SUMMARY_FILE", "calibrate", "generate", "import_input", "load_generate_spec", "report", "run_scenario",
           "write_run"]

#: The run directory's headline file: scenario, seed, overrides and the summary statistics.
SUMMARY_FILE = "summary.json"


def load_generate_spec(source: str | Path | Scenario) -> tuple[GenerateSpec, str, str | None, TableConfig | None]:
    """Read a workload spec: a scenario (its ``workload.generate``) or a bare generate-spec YAML.

    Returns ``(spec, table name, spark master from the scenario or None, the scenario's table config
    or None for a bare spec)``; the table config's partitioning routes events to stream partitions.
    """
    if isinstance(source, Scenario):
        sc = source
    else:
        path = Path(source)
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise InputError(str(path), f"cannot read the workload spec: {exc.strerror}") from None
        if not isinstance(data, dict) or "workload" not in data:
            return build_section(GenerateSpec, data, ""), "events", None, None
        sc = load_scenario(data, base_dir=path.parent)
    if sc.workload.generate is None:
        raise ScenarioError("workload.generate", "is required to generate data (the scenario is synthetic)")
    return sc.workload.generate, sc.table.table_name, sc.spark.master, sc.table


def generate(
    source: str | Path | Scenario, out: str | Path, *, master: str | None = None,
    seed: int | None = None, overwrite: bool = False, progress: bool | None = None,
) -> dict[str, Any]:
    """Generate a workload with Spark into ``out``; returns the manifest.

    The table config's partition function routes events to stream partitions and fills each
    segment's partition metadata; ``progress`` ``None`` shows a bar on terminals for large runs.
    """
    from workbench.workload.generate import generate_events
    from workbench.workload.spark import get_spark

    spec, table, scenario_master, table_config = load_generate_spec(source)
    if not overwrite and Path(out).exists():
        raise InputError(str(out), "already exists; pass --overwrite to replace it")
    spark = get_spark(master, app_name="workbench-generate", scenario_master=scenario_master)
    chosen_seed = seed if seed is not None else (spec.seed if spec.seed is not None else 0)
    return generate_events(spark, spec, Path(out), table=table, seed=chosen_seed, overwrite=overwrite,
                           table_config=table_config, progress=progress)


def write_run(result: Result, out: str | Path, *, overwrite: bool = False,
              summary: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Write a run's Parquet tables and ``summary.json`` into ``out`` atomically; returns that document.

    ``summary`` is the run's summary statistics when the caller has them already (else they are
    computed here, once).
    """
    from workbench.analysis.stats import summarise

    stats = dict(summary) if summary is not None else summarise(result)
    raw = {"scenario": result.parameters.get("scenario", {}), "seed": result.parameters.get("seed"),
           "overrides": result.parameters.get("overrides", {}), "summary": stats}
    # return exactly what the file holds (tuples as lists, keys as strings), as a resumed sweep reads it
    document: dict[str, Any] = json.loads(json.dumps(raw, sort_keys=True, default=str))
    with atomic_dir(Path(out), overwrite=overwrite) as tmp:
        for name, table in result.tables().items():
            table.to_parquet(tmp / f"{name}.parquet", index=False)
        write_json_atomic(tmp / SUMMARY_FILE, document)
    return document


def run_scenario(
    scenario: Scenario | str | Path | Mapping[str, Any], out: str | Path, *,
    overrides: Mapping[str, Any] | None = None, seed: int | None = None, data: str | Path | None = None,
    base_dir: str | Path | None = None, overwrite: bool = False, progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Simulate a scenario into the run directory ``out`` and return what its ``summary.json`` holds.

    The one path from a scenario to a run directory: ``workbench simulate``, every sweep point (API or
    notebook) and notebooks call it, so they give the same records for the same inputs.

    Parameters
    ----------
    scenario
        A scenario, its file, or its data; validated once, with ``overrides`` applied first.
    out
        The run directory (Parquet records and ``summary.json``), written atomically.
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
    """
    from workbench.analysis.stats import summarise
    from workbench.sim.run import simulate

    sc = _resolve(scenario, overrides, base_dir)
    result = simulate(sc, seed, data=Path(data) if data is not None else None, progress=progress)
    result.parameters["overrides"] = dict(overrides or {})
    return write_run(result, out, overwrite=overwrite, summary=summarise(result))


def _resolve(scenario: Scenario | str | Path | Mapping[str, Any], overrides: Mapping[str, Any] | None,
             base_dir: str | Path | None) -> Scenario:
    """The validated scenario of a run: loaded (with ``overrides``) exactly once."""
    root = Path(base_dir) if base_dir is not None else None
    if isinstance(scenario, Scenario):
        return scenario.with_overrides(overrides) if overrides else scenario
    return load_scenario(scenario, base_dir=root, overrides=overrides)


def report(directory: str | Path, out: str | Path) -> Path:
    """Write the PDF of a sweep directory (the sizing report) or of one run directory; returns its path."""
    from workbench.report import build_run_report, build_sizing_report

    is_sweep = (Path(directory) / "combined.parquet").is_file()
    return (build_sizing_report if is_sweep else build_run_report)(directory, out)


def import_input(kind: str, path: str | Path, out: str | Path, *, lenient: bool = False,
                 overwrite: bool = False) -> tuple[Any, str]:
    """Import a real Pinot input of ``kind`` into ``out``; returns the import and one line describing it.

    ``kind`` is ``table-config``, ``schema``, ``segments``, ``query-log`` or ``gc-log``
    (``docs/importers.md``); ``lenient`` skips malformed lines and counts them.
    """
    from workbench.workload.importers import describe, import_file

    result = import_file(kind, path, out, lenient=lenient, overwrite=overwrite)
    return result, describe(result)


def calibrate(
    table_config: str | Path, schema: str | Path, segments: str | Path, query_log: str | Path, out: str | Path, *,
    gc_logs: Sequence[str | Path] = (), servers: int | None = None, server_cores: int | None = None,
    backtest_queries: int = 20_000, replications: int | None = None, seed: int | None = None,
    lenient: bool = False, overwrite: bool = False,
) -> CalibrationResult:
    """Calibrate a scenario from a cluster's own files into ``out`` (``docs/calibrate.md``).

    Imports the table config, schema, segment metadata (controller JSON), broker query log and GC logs;
    fits the service cost to the log (with standard errors and ``service.variability``); writes one
    replayable workload directory, ``scenario.yaml`` (every value commented with where it came from),
    ``calibration.json`` and, unless ``backtest_queries`` is 0, ``backtest.json`` (the log's first
    ``backtest_queries`` queries replayed through the calibrated model, percentiles compared).

    Parameters
    ----------
    servers
        Server count, when the log's ``serverStats`` should not decide it.
    server_cores
        Cores per server (default ``workbench/defaults.py``); no input carries it.
    replications, seed
        Back-test replications and the seed of every random stream (defaults from ``workbench/defaults.py``).
    lenient
        Skip malformed log lines (counted in ``calibration.json``) instead of stopping at the first.
    """
    from workbench.calibrate import CalibrateOptions
    from workbench.calibrate import calibrate as run
    from workbench.defaults import REPLICATIONS, SEED

    options = CalibrateOptions(servers=servers, server_cores=server_cores, lenient=lenient,
                               backtest_queries=backtest_queries, replications=replications or REPLICATIONS,
                               seed=SEED if seed is None else seed)
    return run(table_config, schema, segments, query_log, out, gc_logs=gc_logs, options=options, overwrite=overwrite)
