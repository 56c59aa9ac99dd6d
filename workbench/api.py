"""The workbench's verbs as functions; the CLI and notebooks are thin layers over these."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from workbench.errors import InputError, ScenarioError
from workbench.io import atomic_dir, write_json_atomic
from workbench.pinot.table_config import TableConfig
from workbench.scenario import Scenario, load_scenario
from workbench.scenario._build import build_section
from workbench.scenario.schema import GenerateSpec
from workbench.sim.records import Result

__all__ = ["generate", "load_generate_spec", "write_run"]


def load_generate_spec(source: str | Path | Scenario) -> tuple[GenerateSpec, str, str | None]:
    """Read a workload spec: a scenario (its ``workload.generate``) or a bare generate-spec YAML.

    Returns ``(spec, table name, spark master from the scenario or None)``.
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
            return build_section(GenerateSpec, data, ""), "events", None
        sc = load_scenario(path)
    if sc.workload.generate is None:
        raise ScenarioError("workload.generate", "is required to generate data (the scenario is synthetic)")
    return sc.workload.generate, sc.table.table_name, sc.spark.master


def _table_config_of(source: str | Path | Scenario) -> TableConfig | None:
    """The scenario's table config (its partitioning routes events); None for a bare generate spec."""
    if isinstance(source, Scenario):
        return source.table
    data = yaml.safe_load(Path(source).read_text(encoding="utf-8"))
    return load_scenario(Path(source)).table if isinstance(data, dict) and "workload" in data else None


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

    spec, table, scenario_master = load_generate_spec(source)
    if not overwrite and Path(out).exists():
        raise InputError(str(out), "already exists; pass --overwrite to replace it")
    spark = get_spark(master, app_name="workbench-generate", scenario_master=scenario_master)
    chosen_seed = seed if seed is not None else (spec.seed if spec.seed is not None else 0)
    return generate_events(spark, spec, Path(out), table=table, seed=chosen_seed, overwrite=overwrite,
                           table_config=_table_config_of(source), progress=progress)


def write_run(result: Result, out: str | Path, *, overwrite: bool = False) -> Path:
    """Write a run's Parquet tables and ``summary.json`` into ``out`` atomically."""
    target = Path(out)
    with atomic_dir(target, overwrite=overwrite) as tmp:
        result.queries.to_parquet(tmp / "queries.parquet", index=False)
        result.servers.to_parquet(tmp / "servers.parquet", index=False)
        result.gc_pauses.to_parquet(tmp / "gc_pauses.parquet", index=False)
        result.windows.to_parquet(tmp / "windows.parquet", index=False)
        result.failures.to_parquet(tmp / "failures.parquet", index=False)
        scenario = result.parameters.get("scenario", {})
        write_json_atomic(tmp / "summary.json", {
            "scenario": scenario, "seed": result.parameters.get("seed"),
            "overrides": result.parameters.get("overrides", {}), "summary": result.summary(),
        })
    return target
