"""The compiled engine gives the SimPy engine's records, for the same seed: the contract between them.

The SimPy engine is the reference; a difference is a bug in the compiled one. Latencies and other times
must agree to 1e-9 relative; flags, counts and error codes exactly. Fixed cases cover each feature the
compiled engine claims (every selector, with and without adaptive selection, every service model, GC
collectors, crashes, the broker's failure detector, deadlines and error codes, schedulers, both execution
models, several brokers, the segment cache with churn, replayed and pruned queries, slow and wedged
servers, a per-request delay); a Hypothesis test draws random scenarios inside its coverage (adaptive
selection and the failure detector among them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from parity import same

from workbench.scenario import load_scenario
from workbench.sim.fast.engine import coverage
from workbench.sim.records import Result
from workbench.sim.run import simulate

TABLE = {"tableName": "t", "tableType": "OFFLINE", "segmentsConfig": {"replication": 2}}


def both(scenario: dict[str, Any], data: Path | None = None) -> tuple[Result, Result]:
    sc = load_scenario(scenario)
    assert coverage(sc) is None
    return (simulate(sc.with_overrides({"simulation.engine": "simpy"}), data=data),
            simulate(sc.with_overrides({"simulation.engine": "fast"}), data=data))


def scenario(**sections: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "cluster": {"servers": 4, "server": {"cores": 2},
                    "network": {"latency_ms": {"dist": "exponential", "mean": 0.3}}},
        "table": TABLE,
        "workload": {"synthetic": {"segments_per_server": 4, "docs_per_segment": 200_000}, "arrival": {"qps": 60}},
        "service": {"model": "cost", "variability": 0.4},
        "simulation": {"duration_s": 20, "warmup_s": 2, "replications": 2, "seed": 7},
    }
    for key, value in sections.items():
        base[key] = {**base.get(key, {}), **value} if isinstance(value, dict) else value
    return base


#: Adaptive server selection (routed live by the compiled engine, :mod:`workbench.sim.fast.live`).
ADAPTIVE = {"pinot.broker.adaptive.server.selector.type": "HYBRID",
            "pinot.broker.adaptive.server.selector.enable.stats.collection": True}

CASES: dict[str, dict[str, Any]] = {
    "balanced, fixed GC, crashes, tight timeout": scenario(cluster={
        "servers": 4, "server": {"cores": 2}, "network": {"latency_ms": {"dist": "exponential", "mean": 0.3}},
        "gc": {"collector": "fixed", "interval_s": {"dist": "exponential", "mean": 2},
               "pause_ms": {"dist": "exponential", "mean": 60}},
        "failures": {"mtbf_s": 15, "mttr_s": 2}, "broker": {"timeout_ms": 80}}),
    "replica groups, G1, two brokers": scenario(
        cluster={"servers": 6, "brokers": 2, "server": {"cores": 4}, "network": {"latency_ms": 0.25},
                 "gc": {"collector": "g1", "allocation_rate": "400MB"}},
        table={**TABLE, "segmentsConfig": {"replication": 3}, "routing": {"instanceSelectorType": "replicaGroup"},
               "instanceAssignmentConfigMap": {"OFFLINE": {"tagPoolConfig": {"tag": "DefaultTenant_OFFLINE"},
                                                            "replicaGroupPartitionConfig": {
                                                                "replicaGroupBased": True, "numReplicaGroups": 3,
                                                                "numInstancesPerReplicaGroup": 2}}}}),
    "strict replica groups, lognormal service, zgc": scenario(
        cluster={"servers": 4, "server": {"cores": 2}, "gc": {"collector": "zgc"}},
        table={**TABLE, "routing": {"instanceSelectorType": "strictReplicaGroup"}},
        service={"model": "lognormal", "mean_ms": 4, "sigma": 0.8}),
    "bounded_fcfs rejects and expires": scenario(
        cluster={"servers": 2, "server": {"cores": 2, "config": {
            "pinot.query.scheduler.name": "bounded_fcfs", "pinot.query.scheduler.max_pending_per_group": 2,
            "pinot.query.scheduler.query_deadline_seconds": 1}}},
        workload={"synthetic": {"segments_per_server": 6, "docs_per_segment": 400_000}, "arrival": {"qps": 140}}),
    "binary_workload with secondary queries": scenario(
        cluster={"servers": 2, "server": {"cores": 4, "config": {"pinot.query.scheduler.name": "binary_workload"}}},
        workload={"synthetic": {"segments_per_server": 4, "docs_per_segment": 200_000}, "arrival": {"qps": 80},
                  "query_options": {"isSecondaryWorkload": True}}),
    "fcfs_threads, exponential service, 240s under overload": scenario(
        cluster={"servers": 2, "server": {"cores": 1, "execution": "fcfs_threads"}, "broker": {"timeout_ms": 200}},
        service={"model": "exponential", "mean_ms": 15}, workload={"arrival": {"qps": 90}}),
    "deterministic and empirical service, unavailable segments": scenario(
        cluster={"servers": 3, "server": {"cores": 1}, "failures": {"mtbf_s": 5, "mttr_s": 3}},
        table={**TABLE, "segmentsConfig": {"replication": 1}},
        service={"model": "empirical", "values_ms": [1.5, 2.5, 9.0]}),
    "a server down all run, replica groups, adaptive-free routing around it": scenario(
        cluster={"servers": 6, "server": {"cores": 2}, "failures": {"down": ["Server_2"]}},
        table={**TABLE, "segmentsConfig": {"replication": 2}, "routing": {"instanceSelectorType": "replicaGroup"},
               "instanceAssignmentConfigMap": {"OFFLINE": {"tagPoolConfig": {"tag": "DefaultTenant_OFFLINE"},
                                                            "replicaGroupPartitionConfig": {
                                                                "replicaGroupBased": True, "numReplicaGroups": 2}}}}),
    "requests a long G1 pause held, read at its end in delivery order, 40 ms timeout": scenario(
        cluster={"servers": 1, "server": {"cores": 3}, "gc": {"collector": "g1"}, "broker": {"timeout_ms": 40.0}},
        table={**TABLE, "segmentsConfig": {"replication": 1}},
        workload={"synthetic": {"segments_per_server": 2, "docs_per_segment": 300_000}, "arrival": {"qps": 80}},
        service={"model": "cost", "variability": 0.7},
        simulation={"duration_s": 6, "warmup_s": 1, "replications": 1, "seed": 1}),
    "a slow server (its JVM x4 in a window, its work x2 to the end), fixed GC, a request delay": scenario(cluster={
        "servers": 4, "server": {"cores": 2},
        "network": {"latency_ms": {"dist": "exponential", "mean": 0.3},
                    "request_delay_ms": {"dist": "exponential", "mean": 3}},
        "gc": {"collector": "fixed", "interval_s": {"dist": "exponential", "mean": 0.5},
               "pause_ms": {"dist": "exponential", "mean": 30}},
        "failures": {"slow": [{"server": "Server_1", "factor": 4, "from_s": 3, "until_s": 11},
                              {"server": "Server_1", "factor": 2, "from_s": 14, "scope": "work"}]}}),
    "a wedged server inside GC pauses, with crashes and a slow server": scenario(cluster={
        "servers": 4, "server": {"cores": 2}, "network": {"latency_ms": {"dist": "exponential", "mean": 0.3}},
        "gc": {"collector": "fixed", "interval_s": {"dist": "exponential", "mean": 2},
               "pause_ms": {"dist": "exponential", "mean": 60}},
        "failures": {"mtbf_s": 15, "mttr_s": 2, "wedged": [{"server": "Server_2", "from_s": 5, "until_s": 9},
                                                          {"server": "Server_2", "from_s": 15, "until_s": 15.1}],
                     "slow": [{"server": "Server_0", "factor": 3}]},
        "broker": {"timeout_ms": 300}}),
    "a request delay per server request (empirical), crashes, fixed GC, a timeout it makes responses miss": scenario(
        cluster={"servers": 4, "server": {"cores": 2},
                 "network": {"latency_ms": {"dist": "exponential", "mean": 0.3},
                             "request_delay_ms": {"dist": "empirical", "values": [0.5, 2.0, 6.0, 40.0]}},
                 "gc": {"collector": "fixed", "interval_s": {"dist": "exponential", "mean": 2},
                        "pause_ms": {"dist": "exponential", "mean": 30}},
                 "failures": {"mtbf_s": 15, "mttr_s": 2}, "broker": {"timeout_ms": 60}}),
    "adaptive HYBRID: crashes, fixed GC, a tight timeout": scenario(cluster={
        "servers": 4, "server": {"cores": 2}, "network": {"latency_ms": {"dist": "exponential", "mean": 0.3}},
        "gc": {"collector": "fixed", "interval_s": {"dist": "exponential", "mean": 2},
               "pause_ms": {"dist": "exponential", "mean": 60}},
        "failures": {"mtbf_s": 15, "mttr_s": 2}, "broker": {"timeout_ms": 80, "config": ADAPTIVE}},
        simulation={"duration_s": 15, "replications": 1}),
    "adaptive HYBRID with a queue-size floor: a slow JVM and a wedged server, two brokers, G1, a request delay":
    scenario(cluster={
        "servers": 6, "brokers": 2, "server": {"cores": 2},
        "network": {"latency_ms": 0.25, "request_delay_ms": {"dist": "empirical", "values": [0.5, 2.0, 9.0]}},
        "gc": {"collector": "g1"},
        "failures": {"slow": [{"server": "Server_1", "factor": 4, "from_s": 3, "until_s": 12}],
                     "wedged": [{"server": "Server_4", "from_s": 6, "until_s": 9}]},
        "broker": {"timeout_ms": 500, "config": {
            **ADAPTIVE, "pinot.broker.adaptive.server.selector.hybrid.score.queue.size.floor": 2}}},
        simulation={"duration_s": 12, "replications": 1}),
    "adaptive LATENCY with decay and warm-up, a server down all run": scenario(cluster={
        "servers": 4, "server": {"cores": 2}, "network": {"latency_ms": {"dist": "exponential", "mean": 0.3}},
        "failures": {"down": ["Server_2"]}, "broker": {"config": {
            **ADAPTIVE, "pinot.broker.adaptive.server.selector.type": "LATENCY",
            "pinot.broker.adaptive.server.selector.autodecay.window.ms": 50,
            "pinot.broker.adaptive.server.selector.warmup.duration": 200}}},
        simulation={"duration_s": 8, "replications": 1}),
    "adaptive HYBRID over replica groups (a ranking per query, ties shuffled), crashes, a slow server": scenario(
        cluster={"servers": 6, "server": {"cores": 2}, "network": {"latency_ms": 0.25},
                 "failures": {"slow": [{"server": "Server_1", "factor": 4}], "mtbf_s": 8, "mttr_s": 2},
                 "broker": {"timeout_ms": 300, "config": ADAPTIVE}},
        table={**TABLE, "segmentsConfig": {"replication": 3}, "routing": {"instanceSelectorType": "replicaGroup"},
               "instanceAssignmentConfigMap": {"OFFLINE": {"tagPoolConfig": {"tag": "DefaultTenant_OFFLINE"},
                                                            "replicaGroupPartitionConfig": {
                                                                "replicaGroupBased": True, "numReplicaGroups": 3,
                                                                "numInstancesPerReplicaGroup": 2}}}},
        simulation={"duration_s": 10, "replications": 1}),
    "adaptive LATENCY, one whole replica group per query (enable.strict.replica.group), crashes": scenario(
        cluster={"servers": 4, "server": {"cores": 2}, "failures": {"mtbf_s": 5, "mttr_s": 2}, "broker": {"config": {
            **ADAPTIVE, "pinot.broker.adaptive.server.selector.type": "LATENCY",
            "pinot.broker.adaptive.server.selector.enable.strict.replica.group": True}}},
        table={**TABLE, "routing": {"instanceSelectorType": "strictReplicaGroup"}},
        simulation={"duration_s": 10, "replications": 1}),
    "the failure detector (CONNECTION): crashed servers excluded until a retry connects, two brokers": scenario(
        cluster={"servers": 4, "brokers": 2, "server": {"cores": 2},
                 "network": {"latency_ms": {"dist": "exponential", "mean": 0.3}},
                 "failures": {"mtbf_s": 4, "mttr_s": 1.5}, "broker": {"timeout_ms": 200, "config": {
                     "pinot.broker.failure.detector.type": "CONNECTION",
                     "pinot.broker.failure.detector.retry.initial.delay.ms": 1000}}},
        simulation={"duration_s": 12, "replications": 1}),
    "the failure detector with adaptive HYBRID: live candidates per broker state, two brokers": scenario(
        cluster={"servers": 4, "brokers": 2, "server": {"cores": 2},
                 "network": {"latency_ms": {"dist": "exponential", "mean": 0.3}},
                 "failures": {"mtbf_s": 4, "mttr_s": 1.5}, "broker": {"timeout_ms": 200, "config": {
                     **ADAPTIVE, "pinot.broker.failure.detector.type": "CONNECTION",
                     "pinot.broker.failure.detector.retry.initial.delay.ms": 1000}}},
        simulation={"duration_s": 10, "replications": 1}),
    "multiStageReplicaGroup, the colocated userAttributes layout, crashes: partitions fail over": scenario(
        cluster={"servers": 4, "server": {"cores": 2}, "failures": {"mtbf_s": 6, "mttr_s": 2}},
        table={**TABLE, "routing": {"instanceSelectorType": "multiStageReplicaGroup"},
               "instanceAssignmentConfigMap": {"OFFLINE": {"tagPoolConfig": {"tag": "DefaultTenant_OFFLINE"},
                                                            "replicaGroupPartitionConfig": {
                                                                "replicaGroupBased": True, "numReplicaGroups": 2,
                                                                "numInstancesPerReplicaGroup": 2, "numPartitions": 2,
                                                                "numInstancesPerPartition": 1}}}},
        simulation={"duration_s": 10, "replications": 1}),
    "multiStageReplicaGroup with adaptive HYBRID on, which that selector never consults, crashes": scenario(
        cluster={"servers": 4, "server": {"cores": 2}, "failures": {"mtbf_s": 4, "mttr_s": 2},
                 "broker": {"config": ADAPTIVE}},
        table={**TABLE, "routing": {"instanceSelectorType": "multiStageReplicaGroup"}},
        simulation={"duration_s": 6, "replications": 1}),
    "segment cache with churn": scenario(
        cluster={"servers": 3, "server": {"cores": 2, "config": {"pinot.server.segment.query.cache.enabled": True}}},
        workload={"synthetic": {"segments_per_server": 4, "docs_per_segment": 200_000}, "arrival": {"qps": 40},
                  "churn": {"replace_per_hour": 3600, "reload_per_hour": 1800}}),
}


@pytest.mark.parametrize("name", list(CASES))
def test_fixed_cases_give_identical_records(name: str) -> None:
    same(*both(CASES[name]))


def test_replayed_pruned_queries_with_group_by_and_segment_cache(tmp_path: Path) -> None:
    """The generator's dashboards, lookups and ad-hoc queries (group-by among them), pruned by Pinot's
    broker pruners, with the segment cache on and a query-level timeout option."""
    from workbench.scenario import load_scenario as load
    from workbench.workload.pure import generate_frames

    root = Path(__file__).resolve().parents[2]
    base = load(root / "scenarios" / "default.yaml")
    gen = base.with_overrides({"workload.generate.events": 20_000, "workload.generate.segment_rows": 1000,
                               "workload.generate.queries.duration_s": 40}).workload.generate
    assert gen is not None
    frames = generate_frames(gen, table=base.table.table_name, table_config=base.table)
    data = tmp_path / "data"
    data.mkdir()
    frames.segments.to_parquet(data / "segments.parquet")
    frames.queries.to_parquet(data / "queries.parquet")
    assert frames.queries["sql"].str.contains("GROUP BY").any()
    raw = base.to_dict()
    raw["workload"] = {"arrival": {"process": "replay"}, "query_options": {"timeoutMs": 400}}
    raw["cluster"] = {**raw["cluster"], "servers": 4,
                      "server": {"cores": 4, "config": {"pinot.server.segment.query.cache.enabled": True}}}
    raw["simulation"] = {"duration_s": 40, "warmup_s": 2, "replications": 1, "seed": 3}
    a, b = both(raw, data)
    assert a.queries["segments_pruned"].sum() > 0
    same(a, b)


_dists = st.sampled_from([
    {"dist": "exponential", "mean": 0.3}, 0.25, {"dist": "lognormal", "mean": 0.4, "sigma": 0.5},
    {"dist": "uniform", "low": 0.1, "high": 0.6}])
_services = st.sampled_from([
    {"model": "cost", "variability": 0.0}, {"model": "cost", "variability": 0.7},
    {"model": "exponential", "mean_ms": 6}, {"model": "lognormal", "mean_ms": 5, "sigma": 1.0},
    {"model": "deterministic", "mean_ms": 3.3}])
_gcs = st.sampled_from([
    {"collector": "none"}, {"collector": "g1"}, {"collector": "zgc"},
    {"collector": "fixed", "interval_s": {"dist": "exponential", "mean": 1.5},
     "pause_ms": {"dist": "lognormal", "mean": 40, "sigma": 0.5}}])
_schedulers = st.sampled_from(["fcfs", "bounded_fcfs", "tokenbucket", "binary_workload", "workload"])


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    servers = draw(st.integers(1, 5))
    replication = draw(st.integers(1, servers))
    selector = draw(st.sampled_from(["balanced", "replicaGroup", "strictReplicaGroup"]))
    cores = draw(st.integers(1, 4))
    config: dict[str, Any] = {"pinot.query.scheduler.name": draw(_schedulers)}
    if draw(st.booleans()):
        config["pinot.server.segment.query.cache.enabled"] = True
    if draw(st.booleans()):
        config["pinot.query.scheduler.query_runner_threads"] = draw(st.integers(1, 3))
    cluster: dict[str, Any] = {
        "servers": servers, "brokers": draw(st.integers(1, 2)),
        "server": {"cores": cores, "config": config, "execution": draw(st.sampled_from(["pinot", "fcfs_threads"]))},
        "network": {"latency_ms": draw(_dists)}, "gc": draw(_gcs),
        "broker": {"timeout_ms": draw(st.sampled_from([40.0, 150.0, 10_000.0]))},
    }
    if draw(st.booleans()):
        cluster["failures"] = {"mtbf_s": draw(st.sampled_from([3.0, 8.0])), "mttr_s": 1.0}
    # routing: planned half the time; else live (adaptive selection, the failure detector, or both), which the
    # compiled engine runs without the segment cache
    live = draw(st.sampled_from(["planned", "planned", "planned", "adaptive", "detector", "both"]))
    if "pinot.server.segment.query.cache.enabled" not in config and live != "planned":
        broker_config: dict[str, Any] = {}
        if live in ("adaptive", "both"):
            broker_config |= {
                "pinot.broker.adaptive.server.selector.type": draw(st.sampled_from(["NUM_INFLIGHT_REQ", "LATENCY",
                                                                                     "HYBRID"])),
                "pinot.broker.adaptive.server.selector.enable.stats.collection": True,
                "pinot.broker.adaptive.server.selector.autodecay.window.ms": draw(st.sampled_from([0, 300, 10_000])),
                "pinot.broker.adaptive.server.selector.hybrid.score.queue.size.floor": draw(st.integers(0, 2)),
                "pinot.broker.adaptive.server.selector.enable.strict.replica.group": draw(st.booleans())}
        if live in ("detector", "both"):
            broker_config |= {
                "pinot.broker.failure.detector.type": "CONNECTION",
                "pinot.broker.failure.detector.retry.initial.delay.ms": draw(st.sampled_from([200, 1000, 5000])),
                "pinot.broker.failure.detector.max.retries": draw(st.sampled_from([1, 10]))}
        cluster["broker"]["config"] = broker_config
    return {
        "cluster": cluster,
        "table": {"tableName": "t", "tableType": "OFFLINE", "segmentsConfig": {"replication": replication},
                  "routing": {"instanceSelectorType": selector}},
        "workload": {"synthetic": {"segments_per_server": draw(st.integers(1, 6)),
                                   "docs_per_segment": draw(st.sampled_from([50_000, 300_000]))},
                     "arrival": {"qps": draw(st.sampled_from([20.0, 80.0, 200.0]))},
                     "churn": {"replace_per_hour": draw(st.sampled_from([0.0, 3000.0]))},
                     "query_options": {"isSecondaryWorkload": draw(st.booleans())}},
        "service": draw(_services),
        "simulation": {"duration_s": 6, "warmup_s": 1, "replications": 1, "seed": draw(st.integers(0, 10_000))},
    }


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_random_scenarios_give_identical_records(sc: dict[str, Any]) -> None:
    same(*both(sc))
