"""Pinot capacity-planning workbench.

``import workbench as wb`` defines names only: it starts no Spark session, configures no logging and
imports the heavy modules lazily, on first use of a name.

>>> import workbench as wb
>>> sc = wb.load_scenario({"cluster": {"servers": 2}, "workload": {"synthetic": {}},
...                        "simulation": {"duration_s": 5, "warmup_s": 1, "replications": 2}})
>>> sc.cluster.servers
2
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: The public API; ``tests/unit/test_import_and_api.py`` checks it against docs/api.md.
__all__ = [
    "InputError",
    "Result",
    "Scenario",
    "ScenarioError",
    "TableConfig",
    "TableConfigError",
    "agree",
    "build_run_report",
    "build_sizing_report",
    "generate",
    "get_spark",
    "load_scenario",
    "load_table_config",
    "measure",
    "run_scenario",
    "run_sweep",
    "scale_out",
    "simulate",
    "size",
    "summarise",
    "upsert_question",
    "write_run",
]

_LAZY = {
    "InputError": "workbench.errors",
    "ScenarioError": "workbench.errors",
    "TableConfigError": "workbench.errors",
    "Scenario": "workbench.scenario",
    "load_scenario": "workbench.scenario",
    "TableConfig": "workbench.pinot.table_config",
    "load_table_config": "workbench.pinot.table_config",
    "Result": "workbench.sim.records",
    "simulate": "workbench.sim.run",
    "summarise": "workbench.analysis.stats",
    "generate": "workbench.api",
    "write_run": "workbench.api",
    "run_scenario": "workbench.api",
    "scale_out": "workbench.studies.scale_out",
    "agree": "workbench.api",
    "measure": "workbench.api",
    "upsert_question": "workbench.api",
    "get_spark": "workbench.workload.spark",
    "run_sweep": "workbench.sweep",
    "size": "workbench.sizing",
    "build_run_report": "workbench.report",
    "build_sizing_report": "workbench.report",
}

if TYPE_CHECKING:
    from workbench.analysis.stats import summarise
    from workbench.api import agree, generate, measure, run_scenario, upsert_question, write_run
    from workbench.errors import InputError, ScenarioError, TableConfigError
    from workbench.pinot.table_config import TableConfig, load_table_config
    from workbench.report import build_run_report, build_sizing_report
    from workbench.scenario import Scenario, load_scenario
    from workbench.sim.records import Result
    from workbench.sim.run import simulate
    from workbench.sizing import size
    from workbench.studies.scale_out import scale_out
    from workbench.sweep import run_sweep
    from workbench.workload.spark import get_spark


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
