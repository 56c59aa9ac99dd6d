"""The sizing sweep: the load fixed, the shapes varied in Pinot's terms."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.errors import InputError
from workbench.scenario import load_scenario
from workbench.sweep.sizing import sizing_points, sizing_sweep

ROOT = Path(__file__).resolve().parents[2]


def test_shapes_are_servers_by_layout_by_heap_by_cores() -> None:
    base = load_scenario(ROOT / "scenarios" / "synthetic.yaml")
    points = sizing_points(base, servers=[4, 6], replica_groups=[0, 2, 4], heaps=["8G"], cores=[4, 8],
                           fixed={"slo.p99_ms": 100})
    shapes = {(p["cluster.servers"], p.get("table", {}).get("segmentsConfig", {}).get("replication", 0),
               p["cluster.server.cores"]) for p in points}
    assert len(points) == 10  # 4 groups do not divide 6 servers: (2 + 3) layouts x 2 core counts
    assert (6, 4, 4) not in shapes and (4, 4, 8) in shapes
    assert all(p["slo.p99_ms"] == 100 and p["cluster.server.heap"] == "8G" for p in points)
    for p in points:
        sc = base.with_overrides(p)
        groups = sc.table.replication if "table" in p else 0
        assert sc.cluster.servers == p["cluster.servers"] and (groups == 0 or sc.cluster.servers % groups == 0)


def test_the_load_is_given_not_swept() -> None:
    spec = sizing_sweep(ROOT / "scenarios" / "synthetic.yaml", servers=[2, 4], slo_p99_ms=50, qps=75.0)
    assert {p.overrides["workload.arrival.qps"] for p in spec.points} == {75.0}
    with pytest.raises(InputError, match="replays a query log"):
        sizing_sweep(ROOT / "scenarios" / "default.yaml", servers=[2], qps=75.0)
