"""One server of one core holding one segment, costed by hand: the scenario the engine tests that compute
latencies by hand share (``tests/sim/test_wake.py``, ``tests/sim/test_off_path.py``).

The cost model with no work but ``segment_ms`` per segment, no network and a broker that costs nothing: with one
runner thread, one query at a time, a query's latency is its own work plus its wait behind the others.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from workbench.scenario import load_scenario
from workbench.sim.engines import ENGINES, Replication
from workbench.sim.layout import build_layout
from workbench.sim.model import Window
from workbench.sim.plan import build_plan
from workbench.sim.records import ReplicationRecords
from workbench.sim.streams import Streams


def one_core(segment_ms: float, **service: Any) -> dict[str, Any]:
    """The raw scenario: 20 queries/s for 30 s (when not run at given times), ``service`` overriding the costs."""
    return {
        "cluster": {"servers": 1, "server": {"cores": 1}, "network": {"latency_ms": 0},
                    "broker": {"overhead_ms": 0.0, "reduce_ms_per_server": 0.0, "reduce_ms_per_row": 0.0}},
        "table": {"tableName": "t", "tableType": "OFFLINE", "segmentsConfig": {"replication": 1}},
        "workload": {"synthetic": {"segments_per_server": 1, "docs_per_segment": 100}, "arrival": {"qps": 20.0}},
        "service": {"model": "cost", "per_request_ms": 0.0, "per_segment_ms": segment_ms, "ns_per_doc": 0.0,
                    "merge_ms_per_segment": 0.0, "variability": 0.0, **service},
        "simulation": {"duration_s": 30, "warmup_s": 0, "replications": 1, "seed": 5},
    }


def run_at(engine: str, raw: dict[str, Any], at_ms: Sequence[float], horizon_ms: float = 2000.0) -> ReplicationRecords:
    """Queries arriving at ``at_ms`` on ``engine``: the replication's records."""
    sc = load_scenario(raw)
    layout = build_layout(sc)
    streams = Streams.spawn(np.random.SeedSequence(0), 1)
    plan = build_plan(sc, layout, streams, horizon_ms=horizon_ms, at_ms=at_ms)
    return ENGINES[engine].run(Replication(sc, layout, plan, streams, Window(0.0, horizon_ms), 0))
