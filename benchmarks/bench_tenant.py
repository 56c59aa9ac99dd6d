"""Benchmark: a tenant of several tables against one table carrying the same load, on the compiled engine.

A scenario of several tables (``tables:``) plans each table from its own streams and merges the plans
(:mod:`workbench.sim.tenant`); the engine then runs one plan, as for one table. This measures what the
merge costs: ``--tables`` tables of ``--qps`` each on one tenant of ``--servers`` servers (cost model, G1),
against one table at ``--tables x --qps`` on the same servers, both over ``--duration`` seconds, best of
``--repeats``, in this process at the same moment (the ratio is what means something on a shared machine).

Run: ``python benchmarks/bench_tenant.py`` (about a minute on the 2-core machine); ``--tables``, ``--qps``,
``--servers``, ``--duration``, ``--repeats``.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from _timing import best_of

from workbench.scenario import load_scenario
from workbench.sim.run import simulate


def _table(name: str, qps: float) -> dict[str, Any]:
    return {"table": {"tableName": name, "tableType": "OFFLINE", "segmentsConfig": {"replication": 2}},
            "workload": {"synthetic": {"segments_per_server": 4, "docs_per_segment": 200_000},
                         "arrival": {"qps": qps}}}


def _shared(args: argparse.Namespace) -> dict[str, Any]:
    return {"cluster": {"servers": args.servers, "server": {"cores": 8}, "gc": {"collector": "g1"}},
            "simulation": {"duration_s": args.duration, "warmup_s": args.duration / 10, "replications": 1,
                           "seed": 1, "engine": "fast", "records": "latency"}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=5)
    parser.add_argument("--qps", type=float, default=200.0)
    parser.add_argument("--servers", type=int, default=12)
    parser.add_argument("--duration", type=float, default=600.0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    tenant = load_scenario({**_shared(args), "tables": [_table(f"t{k}", args.qps) for k in range(args.tables)]})
    single = load_scenario({**_shared(args), **_table("all", args.qps * args.tables)})
    simulate(tenant)  # compile the kernels before timing
    queries = len(simulate(tenant).queries)
    t_tenant = best_of(lambda: simulate(tenant), args.repeats)
    t_single = best_of(lambda: simulate(single), args.repeats)
    print(f"load average {os.getloadavg()[0]:.2f}; {queries:,} queries measured per run")
    print(f"{args.tables} tables x {args.qps:g} qps on {args.servers} servers: {t_tenant:.2f} s")
    print(f"1 table x {args.qps * args.tables:g} qps on the same servers: {t_single:.2f} s")
    print(f"ratio tenant / single table: {t_tenant / t_single:.2f}")


if __name__ == "__main__":
    main()
