"""Benchmark: a 5-table tenant over a 24-hour profile, sized over 20 shapes with the compiled engine.

The issue's benchmark for a tenant's day: five tables share one tenant, each with its own made-up but
plausible day (``workload.profile.hourly``): dashboards peaking mid-day, a nightly batch, an API with a
morning and an afternoon hump, a reports table hit at the start of the working day, and near-flat alerts
busier in the evening. ``workbench size`` searches a ``sizing:`` space of 20 shapes (2 to 11 servers x 2 or
4 cores); every shape it evaluates runs at the day's worst hours (the hours no other hour exceeds for every
table, :func:`workbench.scenario.day_load.worst_hours`) and meets only if it meets in each. The report's
studies are left out (``studies=False``): they are the report's, not the decision's. Printed: the worst
hours, the wall time (goal: under 2 minutes on the 2-core machine), the runs and simulated queries, and the
answer. Figures: ``docs/sizing.md``.

Run: ``python benchmarks/bench_tenant_day.py [--workers N] [--exhaustive] [--survive server|none] [--out DIR]``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from workbench.scenario import load_scenario
from workbench.scenario.day_load import worst_hours
from workbench.sizing import size
from workbench.workload.pure import generate_local

#: The issue's goal, seconds of wall time.
GOAL_S = 120.0

#: Five days of load, factor per hour from midnight (factor 1 is each table's ``arrival.qps``).
PROFILES: dict[str, list[float]] = {
    # people at dashboards: quiet at night, up from 08:00, peak over lunch and early afternoon
    "dashboards": [0.2, 0.15, 0.1, 0.1, 0.1, 0.15, 0.3, 0.6, 1.2, 1.8, 2.2, 2.6,
                   3.0, 2.8, 2.6, 2.2, 1.8, 1.2, 0.8, 0.6, 0.5, 0.4, 0.3, 0.25],
    # a nightly batch of backfills and exports, 01:00-05:00
    "batch": [1.5, 3.0, 3.0, 3.0, 2.5, 1.5, 0.5, 0.2, 0.2, 0.2, 0.2, 0.2,
              0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.3, 0.5, 1.0],
    # a customer-facing API: a morning and an afternoon hump
    "api": [0.4, 0.3, 0.3, 0.3, 0.4, 0.6, 0.9, 1.4, 1.9, 2.0, 1.7, 1.4,
            1.3, 1.5, 1.9, 2.1, 1.8, 1.4, 1.1, 0.9, 0.8, 0.7, 0.6, 0.5],
    # scheduled reports at the start of the working day
    "reports": [0.1, 0.1, 0.1, 0.1, 0.1, 0.2, 0.5, 2.5, 4.0, 1.5, 0.6, 0.4,
                0.4, 0.4, 0.4, 0.4, 0.4, 0.3, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1],
    # alerting rules: near-flat, busier in the evening
    "alerts": [0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
               1.0, 1.0, 1.0, 1.0, 1.1, 1.2, 1.3, 1.4, 1.3, 1.1, 1.0, 0.9],
}
#: Each table's rate at factor 1 (queries/s), mean work per segment (ms) and p99 SLO (ms); the failure every
#: table must survive is ``--survive`` (default one server lost: the tenant rebalanced table by table).
TABLES: dict[str, tuple[float, float, float]] = {
    "dashboards": (400, 0.3, 60), "batch": (100, 1.0, 300), "api": (300, 0.2, 30), "reports": (50, 1.0, 400),
    "alerts": (200, 0.1, 25),
}
#: Each table's data: 24 segments of a small generated workload (two replicas), so more servers share the work.
GENERATE: dict[str, Any] = {"events": 2000, "keys": 100, "partitions": 24, "span_s": "1h", "segment_rows": 100,
                            "seed": 3, "queries": {"duration_s": 10}}


def _table(name: str, survive: str = "server") -> dict[str, Any]:
    qps, mean_ms, slo = TABLES[name]
    return {"table": {"tableName": name, "tableType": "OFFLINE", "segmentsConfig": {"replication": 2}},
            "workload": {"generate": dict(GENERATE), "data": f"data/{name}", "arrival": {"qps": qps},
                         "profile": {"hourly": PROFILES[name]}},
            "service": {"model": "exponential", "mean_ms": mean_ms}, "slo": {"p99_ms": slo, "survive": survive}}


def scenario(survive: str = "server") -> dict[str, Any]:
    """The tenant, its 20-shape sizing space and the simulation effort per run."""
    return {"name": "bench-tenant-day",
            "cluster": {"servers": 4, "server": {"cores": 2}, "network": {"latency_ms": 0.2},
                        "gc": {"collector": "none"}},
            "tables": [_table(name, survive) for name in PROFILES],
            # full records: a tenant's per-table summary of a `records: latency` run has NaN fields that
            # summary.json cannot hold
            "simulation": {"duration_s": 20, "warmup_s": 2, "replications": 3, "seed": 1, "engine": "fast"},
            "sizing": {"servers": {"min": 2, "max": 11}, "vary": {"cluster.server.cores": [2, 4]}}}


def generate(root: Path) -> Any:
    """Each table's workload under ``root/data`` (the pure-Python generator, no Spark); the scenario."""
    sc = load_scenario(scenario(), base_dir=root)
    for view in sc.tables:
        assert view.workload.generate is not None
        generate_local(view.workload.generate, root / "data" / view.table.table_name, table=view.table.table_name,
                       table_config=view.table, progress=False, overwrite=True)
    return sc


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="pool size (default: cores)")
    p.add_argument("--exhaustive", action="store_true", help="simulate every shape instead of searching")
    p.add_argument("--out", type=Path, help="keep the data and output here (default: a temporary directory)")
    p.add_argument("--survive", choices=("server", "none"), default="server",
                   help="the failure every table must survive (default: one server lost)")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.out or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        sc = generate(root)
        names = [t.table.table_name for t in sc.tables]
        hours = worst_hours(sc)
        start = time.perf_counter()
        path = root / "scenario.yaml"
        path.write_text(yaml.safe_dump(scenario(args.survive)))
        record = size(path, root / "size", exhaustive=args.exhaustive, parallel=args.workers, studies=False,
                      progress=True)
        wall = time.perf_counter() - start
    print(f"load average {os.getloadavg()[0]:.2f}; {len(sc.tables)} tables, {args.workers} workers, "
          f"{'exhaustive' if args.exhaustive else 'search'}, survive {args.survive}")
    print(f"worst hours ({len(hours)}): " + "; ".join(h.label(names) for h in hours))
    print(f"space: {record['space']['shapes']} shapes, {record['space']['evaluated']} evaluated; replication "
          f"stages {record['replication_stages']}")
    print(f"wall {wall:.1f} s (goal under {GOAL_S:.0f} s); {record['runs']} runs, "
          f"{record['simulated_queries']:,} simulated queries -> {record['recommended_point']} "
          f"{record['recommendation']}")


if __name__ == "__main__":
    main()
