"""What-ifs of the recommendation: how each is built, that it changes what it says, and the headroom search."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from workbench.report.findings import find
from workbench.report.sizing import load_sizing_data
from workbench.report.whatif import headroom, load_variant, whatif_table, whatif_variants
from workbench.scenario import load_scenario
from workbench.scenario.variants import replica_group_layout
from workbench.sim.layout import build_layout
from workbench.studies.whatif import run_whatif
from workbench.workload.replay import scale_query_log

ROOT = Path(__file__).resolve().parents[2]


def test_a_faster_replay_keeps_the_queries_and_multiplies_the_rate() -> None:
    rng = np.random.default_rng(3)
    log = pd.DataFrame({"arrival_s": np.sort(rng.uniform(0, 100, 1000)), "sql": [f"q{i % 7}" for i in range(1000)]})
    fast = scale_query_log(log, 2.0, min_span_s=50.0)
    assert fast["arrival_s"].is_monotonic_increasing
    assert len(fast) == 1000 and fast["arrival_s"].max() <= 50.0 + 1e-9
    assert fast["sql"].tolist() == log["sql"].tolist()  # same queries, in the same order
    longer = scale_query_log(log, 2.0, min_span_s=120.0)  # the faster log no longer covers 120 s: repeated
    assert longer["arrival_s"].max() <= 120.0 and len(longer) == pytest.approx(2.4 * 1000, rel=0.02)


def test_balanced_what_ifs_lose_one_server(tmp_path: Path) -> None:
    sc = load_scenario(ROOT / "scenarios" / "synthetic.yaml").with_overrides({"table.segmentsConfig.replication": 2})
    names = {w.name: w for w in whatif_variants(sc, tmp_path)}
    assert set(names) == {"load-x1.5", "server-slow", "server-wedged", "server-down"}  # no replica group to lose
    down = sc.with_overrides(names["server-down"].overrides)
    assert down.cluster.failures.down == ("Server_0",)
    assert down.cluster.servers == sc.cluster.servers  # the same layout, one machine missing
    assert names["load-x1.5"].overrides == {"workload.arrival.qps": 1.5 * sc.workload.arrival.qps}
    alone = sc.with_overrides({"table.segmentsConfig.replication": 1})
    # nothing to route around to: no server down, but a slow or wedged server still shows
    assert [w.name for w in whatif_variants(alone, tmp_path)] == ["load-x1.5", "server-slow", "server-wedged"]
    slow = sc.with_overrides(names["server-slow"].overrides).cluster.failures.slow
    wedged = sc.with_overrides(names["server-wedged"].overrides).cluster.failures.wedged
    assert [(w.server, w.factor, w.from_s, w.until_s) for w in slow] == [("Server_0", 5.0, 0.0, None)]
    assert [(w.server, w.from_s, w.until_s) for w in wedged] == [("Server_0", 0.0, None)]


def test_more_load_on_a_tables_scenario_of_one_table_is_that_entrys() -> None:
    """A ``tables:`` scenario's workload keys are inside its entries, even with one entry: the load what-if
    (and the headroom's) changes ``tables.0.workload``, which the scenario accepts."""
    sc = load_scenario({"tables": [{"table": {"tableName": "orders", "tableType": "OFFLINE"},
                                    "workload": {"synthetic": {"segments_per_server": 1, "docs_per_segment": 10},
                                                 "arrival": {"qps": 40}}}]})
    more = load_variant(sc, 1.5, Path("."))
    assert more.overrides == {"tables.0.workload.arrival.qps": 60.0}
    assert sc.with_overrides(more.overrides).tables[0].workload.arrival.qps == 60.0


def test_replica_group_what_ifs_lose_a_whole_group_or_one_of_its_servers(tmp_path: Path) -> None:
    base = load_scenario(ROOT / "scenarios" / "synthetic.yaml")
    sc = base.with_overrides(replica_group_layout(base, 3, 4))
    names = {w.name: w for w in whatif_variants(sc, tmp_path)}
    group = sc.with_overrides(names["group-down"].overrides).cluster.failures.down
    one = sc.with_overrides(names["server-down"].overrides).cluster.failures.down
    assert len(group) == 4 and len(set(group)) == 4 and one[0] in group
    # a replica group holds one replica of every segment: downing it leaves exactly two of each
    layout = build_layout(sc)
    for replicas in layout.replicas:
        assert sum(layout.servers[s] in group for s in replicas) == 1


def test_what_ifs_change_what_they_say(layout_sweep: Path) -> None:
    d = load_sizing_data(layout_sweep)
    best = d.combined.sort_values("latency_ms.p99.value").iloc[0]
    table = whatif_table(d, best, fetch=run_whatif).set_index("name")  # the lowest p99 may not be the recommendation
    today = table.loc["today"]
    # +50% load: the same queries 1.5 times as often, so 1.5 times the throughput and the busy time
    assert table.loc["load-x1.5", "throughput_qps"] == pytest.approx(1.5 * today["throughput_qps"], rel=0.05)
    assert table.loc["load-x1.5", "utilisation.mean"] == pytest.approx(1.5 * today["utilisation.mean"], rel=0.1)
    # a server wedged all run: every query routed to it waits its timeout and lists it under 427, so some
    # queries are partial, and none is answered faster than today's fastest
    assert table.loc["server-wedged", "partial_rate"] > today["partial_rate"]
    # a server five times slower: no query gets faster on average, and it stays in routing
    assert table.loc["server-slow", "latency_ms.mean.value"] >= today["latency_ms.mean.value"]
    # a what-if is kept on disk and reused
    stored = json.loads((layout_sweep / "whatif" / str(best["point"]) / "load-x1.5" / "summary.json").read_text())
    assert stored["summary"]["throughput_qps"] == pytest.approx(table.loc["load-x1.5", "throughput_qps"])


def test_headroom_brackets_the_load_where_the_slo_breaks(layout_sweep: Path) -> None:
    d = load_sizing_data(layout_sweep)
    best = find(d).best
    assert best is not None
    room = headroom(d, best, multipliers=[1.5, 3.0, 6.0], fetch=run_whatif)
    assert room is not None
    runs = room.runs.set_index("load")
    assert runs.loc[1.0, "meets_slo"]
    if room.breaks_at is not None:  # every multiplier below the break met the SLO, the break did not
        assert not runs.loc[room.breaks_at, "meets_slo"] and runs.loc[room.breaks_at, "p99_high"] > d.judging.p99_ms
        assert all(runs.loc[m, "meets_slo"] for m in runs.index if m < room.breaks_at)
        assert room.estimate is not None and room.holds_to <= room.estimate <= room.breaks_at
    assert runs["throughput_qps"].is_monotonic_increasing
