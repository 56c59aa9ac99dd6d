"""The sweep file: a base scenario and a grid (or list) of dotted-key overrides, validated once.

A sweep file is read and checked completely before any point runs, so a typo in the last grid value
fails in a second with one message naming the key, not an hour into the sweep. Every point's
scenario is built here (``Scenario.with_overrides``), which reuses the scenario loader's own errors.

>>> spec = parse_sweep({"base": {"workload": {"synthetic": {}}, "simulation": {"seed": 1}},
...                     "grid": {"cluster.servers": [2, 4]}})
>>> [(p.point_id, p.overrides, p.seed) for p in spec.points]
[('point-000', {'cluster.servers': 2}, 1), ('point-001', {'cluster.servers': 4}, 1)]
>>> parse_sweep({"base": {}, "grid": {"cluster.servrs": [2]}})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
workbench.errors.ScenarioError: sweep: grid.cluster.servrs: unknown key (did you mean 'servers'?); ...
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from workbench import defaults as D
from workbench.errors import InputError, ScenarioError
from workbench.io import read_document
from workbench.report.options import ReportOptions, parse_report_options
from workbench.scenario import Scenario, load_scenario
from workbench.sim.run import check_run
from workbench.sweep.notebook import PARAMETERS, missing_parameters

__all__ = ["TOP_LEVEL_KEYS", "Point", "SweepError", "SweepSpec", "expand_points", "load_sweep", "parse_sweep"]

#: Every key a sweep file may have; anything else is a typo and is rejected.
TOP_LEVEL_KEYS = ("name", "description", "base", "grid", "points", "seed", "parallel", "notebook", "spark", "limits",
                  "report")


class SweepError(InputError):
    """A sweep file is invalid: the message names the file, the key and what is allowed."""


@dataclass(frozen=True)
class Point:
    """One point of a sweep: its directory name, its overrides and the seed it runs with.

    Every point of a sweep gets the same seed unless the grid overrides ``simulation.seed``, so
    configurations are compared under common random numbers (their differences are not noise).
    ``scenario`` is the point's scenario as validated here; its run uses it as it is.
    """

    index: int
    point_id: str
    overrides: dict[str, Any]
    seed: int
    scenario: Scenario = field(repr=False, compare=False)


@dataclass(frozen=True)
class SweepSpec:
    """A validated sweep.

    Attributes
    ----------
    name
        The sweep's name (the file's stem unless ``name:`` is given).
    base
        The base scenario every point overrides.
    base_path
        The base scenario file (absolute), or ``None`` when the base was given inline.
    points
        The points in file order; ``point-NNN`` numbering follows this order.
    parallel
        Local worker processes (``None``: one per core).
    notebook
        Notebook run by papermill for each point (absolute), or ``None`` to call the API directly.
    spark_master
        Run the points as tasks on this Spark master, or ``None`` to run them locally.
    """

    name: str
    base: Scenario
    base_path: Path | None
    points: tuple[Point, ...]
    parallel: int | None = None
    notebook: Path | None = None
    spark_master: str | None = None
    report: ReportOptions = field(default_factory=ReportOptions)


def expand_points(sweep: Mapping[str, Any], where: str = "sweep", max_points: int = D.LIMIT_SWEEP_POINTS,
                  ) -> list[dict[str, Any]]:
    """The override mappings of a sweep: the grid's cartesian product, or the explicit list.

    The first grid key varies slowest, so points read like nested loops in the order written. More
    than ``max_points`` points is an error, found before any is built (a grid's size is the product
    of its list lengths).

    >>> expand_points({"grid": {"a": [1, 2], "b": ["x"]}})
    [{'a': 1, 'b': 'x'}, {'a': 2, 'b': 'x'}]
    >>> expand_points({"points": [{"a": 1}, {"a": 3, "b": "y"}]})
    [{'a': 1}, {'a': 3, 'b': 'y'}]
    """
    has_grid, has_points = "grid" in sweep, "points" in sweep
    if has_grid == has_points:
        raise SweepError(where, "give exactly one of `grid:` (key -> list of values) or `points:` "
                                "(a list of override mappings)")
    if has_grid:
        return _grid_points(sweep["grid"], where, max_points)
    return _list_points(sweep["points"], where, max_points)


def _too_many(count: int, max_points: int, where: str) -> None:
    if count > max_points:
        raise SweepError(where, f"has {count:,} points, above the limit of {max_points:,} (each point is a full run); "
                                "narrow it, or raise it with `limits: {points: N}` in the sweep file")


def _grid_points(grid: Any, where: str, max_points: int) -> list[dict[str, Any]]:
    if not isinstance(grid, Mapping) or not grid:
        raise SweepError(f"{where}: grid", "must map at least one dotted key to a list of values, "
                                           "e.g. `cluster.servers: [6, 12]`")
    for key, values in grid.items():
        _check_key(key, f"{where}: grid")
        if not isinstance(values, list) or not values:
            raise SweepError(f"{where}: grid.{key}", f"must be a non-empty list of values, got {values!r}")
    _too_many(math.prod(len(v) for v in grid.values()), max_points, f"{where}: grid")
    keys = list(grid)
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*grid.values())]


def _list_points(points: Any, where: str, max_points: int) -> list[dict[str, Any]]:
    if not isinstance(points, list) or not points:
        raise SweepError(f"{where}: points", "must be a non-empty list of override mappings")
    _too_many(len(points), max_points, f"{where}: points")
    for i, point in enumerate(points):
        if not isinstance(point, Mapping):
            raise SweepError(f"{where}: points[{i}]", f"must be a mapping of dotted keys to values, got {point!r}")
        for key in point:
            _check_key(key, f"{where}: points[{i}]")
    return [dict(p) for p in points]


def _check_key(key: Any, where: str) -> None:
    if not isinstance(key, str) or not key or any(not part for part in key.split(".")):
        raise SweepError(where, f"override keys are dotted scenario paths like `cluster.servers`, got {key!r}")


def load_sweep(path: str | Path) -> SweepSpec:
    """Read and validate a sweep file (YAML); relative paths in it are relative to the file.

    Raises
    ------
    SweepError
        For a problem in the sweep file itself (unknown key, empty grid, bad ``parallel``...).
    ScenarioError
        When the base scenario or one point's overridden scenario is invalid, naming the key.
    """
    file = Path(path)
    data = read_document(file, "sweep", SweepError)
    return parse_sweep(data, where=str(file), base_dir=file.resolve().parent, default_name=file.stem)


def parse_sweep(
    data: Any, *, where: str = "sweep", base_dir: Path | None = None, default_name: str = "sweep",
) -> SweepSpec:
    """Validate a parsed sweep mapping; ``where`` prefixes every error (normally the file name).

    ``base`` may be a scenario file (relative to ``base_dir``) or an inline scenario mapping.
    """
    root = base_dir or Path.cwd()
    if not isinstance(data, Mapping):
        raise SweepError(where, "a sweep must be a mapping with `base:` and `grid:` or `points:`")
    _check_top_level(data, where)
    overrides = expand_points(data, where, _max_points(data.get("limits"), where))
    base, base_path = _load_base(data.get("base"), root, where)
    seed = _optional_int(data, "seed", where, minimum=0)
    points = _build_points(base, overrides, seed, where, "grid" if "grid" in data else "points")
    return SweepSpec(
        name=str(data.get("name", default_name)),
        base=base,
        base_path=base_path,
        points=points,
        parallel=_optional_int(data, "parallel", where, minimum=1),
        notebook=_notebook(data.get("notebook"), root, where),
        spark_master=_spark_master(data.get("spark"), where),
        report=_report(data.get("report"), root, where),
    )


def _max_points(value: Any, where: str) -> int:
    """``limits: {points: N}``: how many points this sweep may have (default ``LIMIT_SWEEP_POINTS``)."""
    if value is None:
        return D.LIMIT_SWEEP_POINTS
    if not isinstance(value, Mapping) or set(value) - {"points"}:
        raise SweepError(f"{where}: limits", "must be a mapping with one key, `points` "
                                             "(e.g. `limits: {points: 20000}`)")
    points = value.get("points", D.LIMIT_SWEEP_POINTS)
    if isinstance(points, bool) or not isinstance(points, int) or points < 1:
        raise SweepError(f"{where}: limits.points", f"must be a positive integer, got {points!r}")
    return points


def _check_top_level(data: Mapping[str, Any], where: str) -> None:
    for key in data:
        if key not in TOP_LEVEL_KEYS:
            raise SweepError(f"{where}: {key}", f"unknown key; allowed: {', '.join(TOP_LEVEL_KEYS)}")
    if "base" not in data:
        raise SweepError(f"{where}: base", "is required: the scenario file every point overrides")


def _load_base(value: Any, root: Path, where: str) -> tuple[Scenario, Path | None]:
    if isinstance(value, Mapping):
        return _prefixed(partial(load_scenario, value, base_dir=root), f"{where}: base"), None
    if not isinstance(value, str):
        raise SweepError(f"{where}: base", f"must be a scenario file path or mapping, got {value!r}")
    path = Path(value) if Path(value).is_absolute() else root / value
    if not path.is_file():
        raise SweepError(f"{where}: base", f"scenario file not found: {path} (paths are relative to the sweep file)")
    return load_scenario(path), path.resolve()


def _build_points(
    base: Scenario, overrides: list[dict[str, Any]], seed: int | None, where: str, source: str,
) -> tuple[Point, ...]:
    points = []
    for i, ov in enumerate(overrides):
        label = f"{where}: {source}" if source == "grid" else f"{where}: points[{i}]"
        scenario = _prefixed(partial(_checked_point, base, ov), label)
        points.append(Point(i, point_id(i), ov, scenario.simulation.seed if seed is None else seed, scenario))
    return tuple(points)


def _checked_point(base: Scenario, overrides: Mapping[str, Any]) -> Scenario:
    """A point's scenario with every check its run will apply (so a bad point fails the sweep up front)."""
    scenario = base.with_overrides(overrides)
    try:
        check_run(scenario)
    except ScenarioError:
        raise
    except InputError as exc:  # the same errors a run would raise, located at the point's key
        raise ScenarioError(exc.where, exc.problem) from None
    return scenario


def point_id(index: int) -> str:
    """The directory name of point ``index``: ``point-000``, ``point-001``...

    Ids depend on the position only, so a resumed sweep finds its points again; the runner checks
    that a done point's recorded overrides match before it skips one.
    """
    return f"point-{index:03d}"


def _prefixed(build: Callable[[], Scenario], label: str) -> Scenario:
    """Run ``build``; re-raise a ScenarioError with the sweep location in front of its key path."""
    try:
        scenario: Scenario = build()
    except ScenarioError as exc:
        raise ScenarioError(f"{label}.{exc.where}" if exc.where else label, exc.problem) from None
    return scenario


def _optional_int(data: Mapping[str, Any], key: str, where: str, *, minimum: int) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        noun = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
        raise SweepError(f"{where}: {key}", f"must be {noun}, got {value!r}")
    return value


def _notebook(value: Any, root: Path, where: str) -> Path | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.endswith(".ipynb"):
        raise SweepError(f"{where}: notebook", f"must be the path of a .ipynb file, got {value!r}")
    path = Path(value) if Path(value).is_absolute() else root / value
    if not path.is_file():
        raise SweepError(f"{where}: notebook", f"not found: {path} (paths are relative to the sweep file)")
    missing = missing_parameters(path)
    if missing:
        raise SweepError(f"{where}: notebook", f"{path.name} needs a cell tagged `parameters` defining "
                                               f"{', '.join(PARAMETERS)}; missing: {', '.join(missing)}")
    return path.resolve()


def _report(value: Any, root: Path, where: str) -> ReportOptions:
    """The ``report:`` section; its errors are sweep errors (exit status 2, the file named)."""
    try:
        return parse_report_options(value, where, root)
    except InputError as exc:
        raise SweepError(exc.where, exc.problem) from None


def _spark_master(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, Mapping) or set(value) - {"master"}:
        raise SweepError(f"{where}: spark", "must be a mapping with one key, `master` (e.g. spark://host:7077)")
    master = value.get("master")
    if master is not None and (not isinstance(master, str) or not master):
        raise SweepError(f"{where}: spark.master", f"must be a Spark master URL, got {master!r}")
    return master
