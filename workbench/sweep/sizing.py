"""A sizing sweep from a scenario and the shapes to consider: servers, layouts, heaps, cores.

The load is the scenario's (or a given query rate); the SLO is given; the sweep varies only what the
reader can buy or configure. Layouts are written in Pinot's terms (:mod:`workbench.scenario.variants`):
``0`` is balanced routing, ``g`` is ``g`` replica groups of ``servers / g`` servers each with the
``replicaGroup`` instance selector.

>>> spec = sizing_sweep({"workload": {"synthetic": {}}, "simulation": {"seed": 1}}, servers=[2, 4],
...                     replica_groups=[0, 2], slo_p99_ms=50)
>>> [p.overrides["cluster.servers"] for p in spec.points], spec.points[1].overrides["table"]["routing"]
([2, 2, 4, 4], {'instanceSelectorType': 'replicaGroup'})
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from workbench.errors import InputError
from workbench.scenario import Scenario, load_scenario
from workbench.scenario.variants import balanced_layout, question_overrides, replica_group_layout
from workbench.sweep.spec import SweepSpec, parse_sweep
from workbench.workload.directory import WorkloadDir

__all__ = ["ensure_workload", "sizing_points", "sizing_sweep"]


def _layout(base: Scenario, servers: int, groups: int) -> dict[str, Any] | None:
    """The overrides that give ``base`` the layout (0: balanced, g: g replica groups) on ``servers`` servers;
    ``None`` when g does not divide them. A tenant's tables each get it (``tables.K.table``): a shape is
    the cluster's, and every table on it is assigned by its own config, as Pinot assigns each table."""
    if base.tables:
        out: dict[str, Any] = {}
        for k, view in enumerate(base.tables):
            one = _layout(view, servers, groups)
            if one is None:
                return None
            if "table" in one:
                out[f"tables.{k}.table"] = one["table"]
        return out
    if groups == 0:
        if base.table.instance_selector_type == "balanced" and not base.table.instance_assignment_config_map:
            return {}
        return balanced_layout(base, servers, base.table.replication)
    if servers % groups:
        return None
    return replica_group_layout(base, groups, servers // groups)


def sizing_points(base: Scenario, *, servers: Sequence[int], replica_groups: Sequence[int] = (0,),
                  heaps: Sequence[str] = (), cores: Sequence[int] = (),
                  fixed: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """One override mapping per shape: servers x layout x heap x cores (layouts that do not divide the
    server count are left out); ``fixed`` overrides go into every point."""
    points = []
    heap_choices: list[str | None] = list(heaps) or [None]
    core_choices: list[int | None] = list(cores) or [None]
    for n, g, heap, c in itertools.product(servers, replica_groups, heap_choices, core_choices):
        layout = _layout(base, int(n), int(g))
        if layout is None:
            continue
        point: dict[str, Any] = {"cluster.servers": int(n), **layout, **dict(fixed or {})}
        if heap is not None:
            point["cluster.server.heap"] = heap
        if c is not None:
            point["cluster.server.cores"] = int(c)
        points.append(point)
    return points


def sizing_sweep(scenario: str | Path | Mapping[str, Any], *, servers: Sequence[int],
                 replica_groups: Sequence[int] = (0,), heaps: Sequence[str] = (), cores: Sequence[int] = (),
                 slo_p99_ms: float | None = None, qps: float | None = None, replications: int | None = None,
                 duration_s: float | None = None, prices: str | None = None, name: str = "sizing",
                 base_dir: Path | None = None) -> SweepSpec:
    """The sweep that sizes ``scenario`` for an SLO: its load fixed, its shape varied.

    Parameters
    ----------
    scenario
        The user's scenario file (or mapping): their table config, workload and model parameters.
    servers, replica_groups, heaps, cores
        The shapes to consider (``replica_groups`` 0 = balanced routing).
    slo_p99_ms
        The p99 target, ms (``None`` keeps the scenario's ``slo.p99_ms``).
    qps
        The load to size for, queries/s, for a Poisson workload (``None`` keeps the scenario's). A replayed
        query log keeps the log's load.
    replications, duration_s
        Simulation effort per point (``None`` keeps the scenario's).
    prices
        An instance price table file for the report (``None``: the shipped default).
    """
    if isinstance(scenario, str | Path):
        base = load_scenario(scenario)
        base_ref: Any = str(Path(scenario).resolve())
        root = Path(scenario).resolve().parent
    else:
        base = load_scenario(scenario, base_dir=base_dir)
        base_ref, root = dict(scenario), base_dir or Path.cwd()
    fixed = question_overrides(base, qps=qps, slo_p99_ms=slo_p99_ms, duration_s=duration_s, replications=replications)
    points = sizing_points(base, servers=servers, replica_groups=replica_groups, heaps=heaps, cores=cores, fixed=fixed)
    if not points:
        raise InputError("servers", "no shape to simulate: every replica-group count must divide a server count")
    data: dict[str, Any] = {"name": name, "base": base_ref, "points": points}
    if prices:
        data["report"] = {"prices": str(prices)}
    return parse_sweep(data, where=name, base_dir=root, default_name=name)


def ensure_workload(scenario: str | Path, *, master: str | None = None) -> Path | None:
    """The scenario's workload directory, generated with Spark first when the scenario says how and it
    is missing; ``None`` for a scenario without one (synthetic layouts)."""
    sc = load_scenario(scenario)
    if sc.workload.data is None:
        return None
    data = sc.base_dir / sc.workload.data
    if not WorkloadDir(data).has_segments():
        if sc.workload.generate is None:
            raise InputError("workload.data", f"{data} has no segments.parquet and the scenario has no "
                                              "workload.generate to make one: import or generate the workload first")
        from workbench.api import generate

        generate(sc, data, master=master, overwrite=True)
    return data
