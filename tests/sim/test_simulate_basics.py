"""Simulation basics: same seed same records, seeds matter, warm-up removal, records' schema."""

from __future__ import annotations

import pandas as pd

from workbench.scenario import load_scenario
from workbench.sim.records import QUERY_COLUMNS
from workbench.sim.run import simulate

BASE = {
    "cluster": {"servers": 4, "server": {"cores": 1}, "network": {"latency_ms": {"dist": "exponential", "mean": 0.5}},
                "gc": {"collector": "fixed", "interval_s": {"dist": "exponential", "mean": 2},
                       "pause_ms": {"dist": "deterministic", "value": 50}}},
    "workload": {"synthetic": {"segments_per_server": 2, "docs_per_segment": 1000}, "arrival": {"qps": 50}},
    "service": {"model": "exponential", "mean_ms": 5},
    "simulation": {"duration_s": 20, "warmup_s": 5, "replications": 2, "seed": 3},
}


def test_same_seed_same_records() -> None:
    a, b = simulate(BASE), simulate(BASE)
    pd.testing.assert_frame_equal(a.queries, b.queries)
    pd.testing.assert_frame_equal(a.gc_pauses, b.gc_pauses)


def test_different_seed_different_records() -> None:
    a, b = simulate(BASE), simulate(BASE, seed=4)
    assert not a.queries["latency_ms"].equals(b.queries["latency_ms"])


def test_records_have_the_documented_columns_and_respect_warmup() -> None:
    r = simulate(BASE)
    assert tuple(r.queries.columns) == QUERY_COLUMNS
    assert r.queries["arrival_s"].min() >= 5.0
    assert set(r.queries["replication"]) == {0, 1}
    assert (r.queries["servers_queried"] == 4).all() and (r.queries["segments_queried"] == 8).all()


def test_gc_pauses_delay_some_queries_but_not_all() -> None:
    r = simulate(load_scenario(BASE))
    rate = r.queries["gc_delayed"].mean()
    # 4 servers paused 50 ms every ~2 s: a query (~10 ms) meets a pause with probability ~ 4 * 0.03
    assert 0.02 < rate < 0.4
    assert len(r.gc_pauses) > 0 and (r.gc_pauses["duration_ms"] == 50).all()


def test_brokers_split_the_queries_and_keep_their_own_request_counters() -> None:
    """Two brokers: each routes every other query with its own counter, as a load balancer in front
    of Pinot brokers would; balanced routing over 2 replicas still uses both replicas."""
    sc = {**BASE, "cluster": {**BASE["cluster"], "brokers": 2, "gc": {"collector": "none"}},
          "table": {"tableName": "t", "tableType": "OFFLINE", "segmentsConfig": {"replication": 2}}}
    one = simulate({**sc, "cluster": {**sc["cluster"], "brokers": 1}})
    two = simulate(sc)
    # same arrivals (common random numbers); only queries in flight at the horizon may differ
    n = min(len(one.queries), len(two.queries)) - 5
    assert sorted(one.queries["arrival_s"])[:n] == sorted(two.queries["arrival_s"])[:n]
    assert (two.servers["requests"] > 0).all()


def test_a_heap_slo_written_as_a_size_is_checked_after_the_run() -> None:
    """``slo.max_heap: 8G``, the form docs/scenario.md shows, validated and then crashed in the summary
    (``could not convert string to float: '8G'``); it is read as 8 GiB."""
    from workbench.analysis.stats import summarise

    sc = load_scenario({**BASE, "slo": {"max_heap": "8G"}})
    verdict = summarise(simulate(sc)).slo.checks.max_heap
    assert verdict is not None and verdict.limit == 8 * 2**30
