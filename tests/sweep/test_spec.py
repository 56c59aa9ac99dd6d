"""A sweep file is checked completely before any point runs, with one error naming the key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from sweep_fixtures import FIXTURES, TINY

from workbench.errors import ScenarioError
from workbench.sweep import SweepError, expand_points, load_sweep, parse_sweep


def _write(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_grid_expands_first_key_slowest_with_one_common_seed(tmp_path: Path) -> None:
    spec = load_sweep(_write(tmp_path, {"base": str(TINY), "grid": {"cluster.servers": [2, 3],
                                                                     "workload.arrival.qps": [10, 20]}}))
    assert [p.overrides for p in spec.points] == [
        {"cluster.servers": 2, "workload.arrival.qps": 10}, {"cluster.servers": 2, "workload.arrival.qps": 20},
        {"cluster.servers": 3, "workload.arrival.qps": 10}, {"cluster.servers": 3, "workload.arrival.qps": 20},
    ]
    assert [p.point_id for p in spec.points] == ["point-000", "point-001", "point-002", "point-003"]
    assert {p.seed for p in spec.points} == {3}  # the base scenario's seed: common random numbers
    assert spec.name == "sweep" and spec.notebook is None and spec.spark_master is None


def test_points_list_seed_and_options(tmp_path: Path) -> None:
    spec = load_sweep(_write(tmp_path, {
        "name": "two", "base": str(TINY), "seed": 11, "parallel": 2, "spark": {"master": "local[2]"},
        "points": [{"cluster.servers": 2}, {"cluster.servers": 4, "simulation.seed": 5}],
    }))
    assert [p.overrides for p in spec.points] == [{"cluster.servers": 2}, {"cluster.servers": 4, "simulation.seed": 5}]
    assert [p.seed for p in spec.points] == [11, 11]  # the sweep's seed wins for every point
    assert (spec.name, spec.parallel, spec.spark_master) == ("two", 2, "local[2]")


def test_base_is_relative_to_the_sweep_file(tmp_path: Path) -> None:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "s.yaml").write_text(TINY.read_text())
    (tmp_path / "sweeps").mkdir()
    sweep = tmp_path / "sweeps" / "s.yaml"
    sweep.write_text("base: ../scenarios/s.yaml\ngrid: {cluster.servers: [2]}\n")
    assert load_sweep(sweep).base_path == (tmp_path / "scenarios" / "s.yaml").resolve()


@pytest.mark.parametrize(("data", "message"), [
    ({"grid": {"cluster.servers": [2]}}, "base: is required"),
    ({"base": "x", "grid": {"cluster.servers": [2]}, "gird": 1}, "gird: unknown key; allowed: name,"),
    ({"base": "T", "grid": {}}, "grid: must map at least one dotted key to a list of values"),
    ({"base": "T", "grid": {"cluster.servers": []}}, "grid.cluster.servers: must be a non-empty list of values"),
    ({"base": "T", "grid": {"cluster.servers": 4}}, "grid.cluster.servers: must be a non-empty list of values, got 4"),
    ({"base": "T", "points": []}, "points: must be a non-empty list of override mappings"),
    ({"base": "T", "points": [{"cluster.servers": 2}, 5]}, "points[1]: must be a mapping of dotted keys"),
    ({"base": "T"}, "give exactly one of `grid:`"),
    ({"base": "T", "grid": {"a": [1]}, "points": [{"a": 1}]}, "give exactly one of `grid:`"),
    ({"base": "T", "grid": {"cluster..servers": [1]}}, "grid: override keys are dotted scenario paths"),
    ({"base": "T", "grid": {"cluster.servers": [2]}, "parallel": 0}, "parallel: must be a positive integer, got 0"),
    ({"base": "T", "grid": {"cluster.servers": [2]}, "seed": -1}, "seed: must be an integer >= 0, got -1"),
    ({"base": "T", "grid": {"cluster.servers": [2]}, "spark": {"mastr": "x"}}, "spark: must be a mapping with one key"),
    ({"base": "T", "grid": {"cluster.servers": [2]}, "notebook": "n.py"}, "notebook: must be the path of a .ipynb"),
    ({"base": "T", "grid": {"cluster.servers": [2]}, "notebook": "nope.ipynb"}, "notebook: not found:"),
    ({"base": "nope.yaml", "grid": {"cluster.servers": [2]}}, "base: scenario file not found:"),
])
def test_bad_sweep_files_name_the_key(tmp_path: Path, data: dict[str, Any], message: str) -> None:
    if data.get("base") == "T":
        data["base"] = str(TINY)
    path = _write(tmp_path, data)
    with pytest.raises(SweepError) as info:
        load_sweep(path)
    assert str(info.value).startswith(f"{path}: ")
    assert message in str(info.value)


@pytest.mark.parametrize(("grid", "message"), [
    ({"cluster.servrs": [2]}, "grid.cluster.servrs: unknown key (did you mean 'servers'?)"),
    ({"cluster.servers": [2, -1]}, "grid.cluster.servers: must be a positive integer, got -1"),
    ({"clustr.servers": [2]}, "grid.clustr: unknown section"),
])
def test_bad_override_is_the_scenario_loaders_error_naming_the_key(
    tmp_path: Path, grid: dict[str, Any], message: str,
) -> None:
    path = _write(tmp_path, {"base": str(TINY), "grid": grid})
    with pytest.raises(ScenarioError) as info:
        load_sweep(path)
    assert str(info.value).startswith(f"{path}: {message}")


def test_bad_override_in_a_points_list_names_the_entry() -> None:
    with pytest.raises(ScenarioError, match=r"^sweep: points\[1\]\.simulation\.replications: must be a positive"):
        parse_sweep({"base": {"workload": {"synthetic": {}}},
                     "points": [{"cluster.servers": 2}, {"simulation.replications": 0}]})


def test_notebook_must_declare_the_sweep_parameters(tmp_path: Path) -> None:
    path = _write(tmp_path, {"base": str(TINY), "grid": {"cluster.servers": [2]},
                             "notebook": str(FIXTURES / "no_parameters.ipynb")})
    with pytest.raises(SweepError, match="needs a cell tagged `parameters` defining scenario, overrides, seed, "
                                         "out_dir; missing: scenario, overrides, seed, out_dir"):
        load_sweep(path)
    ok = _write(tmp_path, {"base": str(TINY), "grid": {"cluster.servers": [2]},
                           "notebook": str(FIXTURES / "point.ipynb")})
    assert load_sweep(ok).notebook == FIXTURES / "point.ipynb"


def test_unreadable_sweep_file_is_one_error(tmp_path: Path) -> None:
    with pytest.raises(SweepError, match="cannot read the sweep file"):
        load_sweep(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("grid: [\n")
    with pytest.raises(SweepError, match="not valid YAML"):
        load_sweep(bad)


def test_expand_points_keeps_list_order() -> None:
    assert expand_points({"points": [{"b": 2}, {"a": 1}]}) == [{"b": 2}, {"a": 1}]
