"""`workbench report` validates no scenario: the sweep validated each point before running it.

The report reads each point's scenario off its ``summary.json`` (and the base off ``sweep.json``) typed,
through :func:`~workbench.scenario.recorded_scenario`; loading them again ran every load check once
per point (and could refuse to report a sweep whose scenario no longer loads). Each check is wrapped in a
counting pass-through, so the test fails on any route back to validation, not only the one it replaced.
"""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import workbench.scenario as scenario_module
from workbench.cli import main
from workbench.pinot.table_config import TableConfig

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def two_point_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The synthetic scenario at 2 and 4 servers, one short replication each; no studies."""
    from workbench.sweep import run_sweep
    from workbench.sweep.sizing import sizing_sweep

    tmp = tmp_path_factory.mktemp("two-points")
    shutil.copy(ROOT / "scenarios" / "synthetic.yaml", tmp / "scenario.yaml")
    spec = sizing_sweep(tmp / "scenario.yaml", servers=[2, 4], slo_p99_ms=130.0, qps=40.0, replications=1,
                        duration_s=10, name="two")
    run_sweep(spec, tmp / "out", parallel=1)
    return tmp / "out"


@pytest.fixture
def validations(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Calls of ``load_scenario``, its two scenario-wide checks, and the table config's Pinot rules."""
    calls: Counter[str] = Counter()

    def counting(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return real(*args, **kwargs)
        return wrapper

    for name in ("load_scenario", "check_columns", "check_limits"):
        monkeypatch.setattr(scenario_module, name, counting(name, getattr(scenario_module, name)))
    monkeypatch.setattr(TableConfig, "validate", counting("TableConfig.validate", TableConfig.validate))
    return calls


def test_the_counter_sees_a_load(validations: Counter[str]) -> None:
    """The wrappers are on the path a load takes: one scenario loaded is one of each check."""
    scenario_module.load_scenario({"cluster": {"servers": 1}, "workload": {"synthetic": {}}}).with_overrides({})
    assert validations == {"load_scenario": 2, "check_columns": 2, "check_limits": 2, "TableConfig.validate": 2}


def test_report_of_a_two_point_sweep_validates_no_scenario(two_point_sweep: Path, tmp_path: Path,
                                                           validations: Counter[str]) -> None:
    pdf = tmp_path / "report.pdf"
    assert main(["report", str(two_point_sweep), "--out", str(pdf)]) == 0
    assert pdf.stat().st_size > 0
    assert validations == Counter()


def test_report_with_studies_validates_no_scenario(layout_sweep: Path, tmp_path: Path,
                                                   validations: Counter[str]) -> None:
    """The what-if pages read the studies' runs, and validate nothing either."""
    assert main(["report", str(layout_sweep), "--out", str(tmp_path / "report.pdf")]) == 0
    assert validations == Counter()
