"""Upsert metadata joins the live heap of the G1 model: a bigger PK map, more and longer GC."""

from __future__ import annotations

from typing import Any

from workbench.pinot.heap import upsert_bytes_per_key
from workbench.scenario import load_scenario
from workbench.sim.layout import build_layout
from workbench.sim.memory import server_memory
from workbench.sim.run import simulate


def scenario(keys: int) -> dict[str, Any]:
    return {"cluster": {"servers": 2, "server": {"heap": "8G"},
                        "gc": {"collector": "g1", "live_heap": "1G", "allocation_rate": "400MB", "upsert_keys": keys}},
            "workload": {"synthetic": {"segments_per_server": 1, "docs_per_segment": 1000}, "arrival": {"qps": 5}},
            "service": {"model": "deterministic", "mean_ms": 1},
            "simulation": {"duration_s": 600, "warmup_s": 1, "replications": 1, "seed": 4}}


def test_live_heap_adds_the_pk_map() -> None:
    sc = load_scenario(scenario(10_000_000))
    expected = 1024**3 + 10_000_000 * upsert_bytes_per_key(("LONG",), "NONE", num_keys=10_000_000)
    memory = server_memory(sc, build_layout(sc), None)
    assert [m.live.total for m in memory.servers] == [expected, expected]
    assert memory.source == "upsert_keys" and memory.timeline.empty
    none = load_scenario(scenario(0))
    assert server_memory(none, build_layout(none), None).servers[0].live.total == 1024**3


def test_bigger_pk_map_means_more_gc_time() -> None:
    small = simulate(scenario(1_000_000)).gc_pauses["duration_ms"]
    big = simulate(scenario(45_000_000)).gc_pauses["duration_ms"]
    # 45M keys x ~150 B = ~6.8 GB + 1 GB live on an 8 GB heap: above (1 - reserve) x heap = 7.2 GB,
    # so evacuation has no room and collections become full GCs of the whole live heap (G1 thrashes)
    assert big.sum() > 3 * small.sum()
    assert big.max() > 1000  # a full GC of several GB at 1 GB/s takes seconds
