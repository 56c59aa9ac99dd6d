"""Write the malformed-input corpus: one file (or directory) per case, and ``corpus/manifest.yaml``.

Run ``python tests/badinput/make_corpus.py`` after adding a case here; commit what it writes. Each
case says how the CLI is run on it (``args``, with ``{case}`` the case's path, ``{out}`` a fresh output
path, ``{synthetic}`` the shipped synthetic scenario, ``{corpus}`` the corpus root), the exit status
and the texts the one error line must contain: the key, line or file it names, and what is wrong.
Scenario cases are also run through ``simulate`` and a one-point ``sweep`` (one validation path).
"""

from __future__ import annotations

import gzip
import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parent / "corpus"
CASES: list[dict[str, Any]] = []
Content = str | bytes | Callable[[Path], None]

BASE = {
    "cluster": {"servers": 4, "server": {"cores": 2}},
    "table": {"tableName": "t", "tableType": "OFFLINE"},
    "workload": {"synthetic": {"segments_per_server": 1, "docs_per_segment": 100}, "arrival": {"qps": 10}},
    "simulation": {"duration_s": 2, "warmup_s": 0.5, "replications": 1},
}
TABLE = {"tableName": "t", "tableType": "OFFLINE", "segmentsConfig": {"replication": 1}}
SCHEMA = {"schemaName": "t", "dimensionFieldSpecs": [{"name": "k", "dataType": "STRING"}],
          "dateTimeFieldSpecs": [{"name": "ts", "dataType": "LONG", "format": "1:MILLISECONDS:EPOCH",
                                  "granularity": "1:MILLISECONDS"}]}
QLOG = "2026/01/02 03:04:05.678 INFO [QueryLogger] [qr-1] "
GCLINE = "[2024-01-01T00:00:01.012+0000][0.912s][info][gc          ] GC(0) "
SEGMENT = {"segmentName": "t_0", "totalDocs": 10, "startTimeMillis": 0, "endTimeMillis": 10, "crc": 1,
           "creationTimeMillis": 5}


def case(kind: str, name: str, content: Content, args: list[str], expect: list[str], *, suffix: str = "",
         exit: int = 2, **extra: Any) -> None:
    """Register one case; ``content`` is the file's text or bytes, or a function that writes it."""
    CASES.append({"id": f"{kind}/{name}", "kind": kind, "path": f"{kind}/{name}{suffix}", "content": content,
                  "args": args, "exit": exit, "expect": expect, **extra})


def merged(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    out = json.loads(json.dumps(base))
    for dotted, value in changes.items():
        node = out
        *parents, leaf = dotted.split("/")
        for p in parents:
            node = node.setdefault(p, {})
        if value is ...:
            node.pop(leaf, None)
        else:
            node[leaf] = value
    return out


def scenario(name: str, text_or_changes: str | bytes | dict[str, Any], expect: list[str], **extra: Any) -> None:
    """A scenario case, checked by validate, simulate and a sweep over it (same checks, same error)."""
    text = text_or_changes if isinstance(text_or_changes, str | bytes) else yaml.safe_dump(
        merged(BASE, text_or_changes), sort_keys=False)
    case("scenario", name, text, ["validate", "{case}"], expect, suffix=extra.pop("suffix", ".yaml"),
         paths=["validate", "simulate", "sweep"], **extra)


def table(name: str, changes: dict[str, Any], expect: list[str]) -> None:
    """A table-config field case, embedded in a scenario (``table:``) as users write it."""
    scenario(f"table-{name}", {**{f"table/{k}": v for k, v in changes.items()}}, ["table.", *expect])


def importer(kind: str, name: str, content: Content, expect: list[str], *, suffix: str, lenient: bool = False,
             **extra: Any) -> None:
    args = ["import", kind, "{case}", "--out", "{out}", *(["--lenient"] if lenient else []), *extra.pop("more", [])]
    case(kind, name, content, args, expect, suffix=suffix, **extra)


# -- scenario files: syntax and reading ------------------------------------------------------------
BOMB = "\n".join(
    ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]) + "\n"
scenario("syntax-unclosed-flow", "cluster: {servers: 4\n", ["unclosed-flow.yaml:2", "not valid YAML"])
scenario("syntax-bad-indent", "cluster:\n  servers: 4\n   brokers: 1\n", ["bad-indent.yaml:3", "not valid YAML"])
scenario("syntax-tab-indent", "cluster:\n\tservers: 4\n", ["tab-indent.yaml:2", "not valid YAML"])
scenario("duplicate-key", "cluster:\n  servers: 2\n  servers: 3\n", ["duplicate-key.yaml:3", "duplicate key 'servers'"])
scenario("duplicate-section", "simulation: {seed: 1}\nsimulation: {seed: 2}\n",
         ["duplicate-section.yaml:2", "duplicate key 'simulation'"])
scenario("alias-bomb", BOMB, ["alias-bomb.yaml", "alias bomb"])
scenario("recursive-alias", "cluster: &c\n  self: *c\n", ["recursive-alias.yaml", "recursive alias"])
scenario("deep-nesting", "cluster: " + "[" * 500 + "]" * 500 + "\n", ["deep-nesting.yaml:1", "nests deeper than"])
scenario("binary", bytes(range(256)) * 4, ["binary.yaml", "binary file"])
scenario("latin1", "name: caf\xe9\n".encode("latin-1"), ["latin1.yaml:1", "not UTF-8"])
scenario("top-level-list", "- cluster\n- workload\n", ["top-level-list.yaml", "must be a mapping of sections"])
scenario("top-level-scalar", "just words\n", ["top-level-scalar.yaml", "must be a mapping of sections"])
scenario("json-trailing-comma", '{"cluster": {"servers": 4,}}', ["json-trailing-comma.json:1", "not valid JSON"],
         suffix=".json")
scenario("json-nan", '{"workload": {"arrival": {"qps": NaN}}}', ["json-nan.json:1", "NaN is not a JSON number"],
         suffix=".json")
scenario("json-duplicate", '{"cluster": {"servers": 4},\n "cluster": {"servers": 5}}',
         ["json-duplicate.json:2", "duplicate key 'cluster'"], suffix=".json")
scenario("json-deep", '{"a": ' + "[" * 300 + "]" * 300 + "}", ["json-deep.json:1", "nests deeper than"],
         suffix=".json")
# -- scenario keys, types and bounds --------------------------------------------------------------
scenario("unknown-section", {"clutser": {"servers": 2}}, ["clutser", "unknown section"])
# several tables on one tenant (tables:): two tables of one name, a table whose tenant has no servers
scenario("tables-same-name", "tables:\n  - table: {tableName: orders, tableType: OFFLINE}\n"
         "  - table: {tableName: orders, tableType: OFFLINE}\n", ["tables[1].table.tableName", "also tables[0]'s"])
scenario("tables-tenant-without-servers", "cluster: {servers: 2}\ntables:\n"
         "  - table: {tableName: orders, tableType: OFFLINE, tenants: {server: gold}}\n",
         ["tables[0].table.tenants.server", "tenant 'gold' has no servers"])
scenario("unknown-key-typo", {"cluster/servrs": 2}, ["cluster.servrs", "did you mean 'servers'"])
scenario("servers-negative", {"cluster/servers": -3}, ["cluster.servers", "must be a positive integer"])
scenario("servers-string", {"cluster/servers": "four"}, ["cluster.servers", "must be a positive integer"])
scenario("servers-bool", {"cluster/servers": True}, ["cluster.servers", "must be a positive integer"])
scenario("servers-float", {"cluster/servers": 2.5}, ["cluster.servers", "must be a positive integer"])
scenario("cores-huge", {"cluster/server/cores": 10**9}, ["cluster.server.cores", "at most 4096"])
scenario("heap-words", {"cluster/server/heap": "lots"}, ["cluster.server.heap", "must be a size"])
scenario("heap-negative", {"cluster/server/heap": "-5G"}, ["cluster.server.heap", "must be a size"])
scenario("heap-unit", {"cluster/server/heap": "5Q"}, ["cluster.server.heap", "unknown size unit"])
scenario("qps-nan", "workload:\n  synthetic: {}\n  arrival: {qps: .nan}\n", ["workload.arrival.qps", "finite"])
scenario("qps-inf", "workload:\n  synthetic: {}\n  arrival: {qps: .inf}\n", ["workload.arrival.qps", "finite"])
scenario("qps-zero", {"workload/arrival/qps": 0}, ["workload.arrival.qps", "must be a positive number"])
scenario("qps-over-limit", {"workload/arrival/qps": 1e9}, ["workload.arrival.qps", "limits.qps"])
scenario("duration-over-limit", {"simulation/duration_s": "30d"}, ["simulation.duration_s", "limits.duration_s"])
scenario("duration-nan", "simulation: {duration_s: .nan}\n", ["simulation.duration_s", "finite"])
scenario("duration-words", {"simulation/duration_s": "forever"}, ["simulation.duration_s", "must be a duration"])
scenario("duration-unit", {"simulation/duration_s": "5y"}, ["simulation.duration_s", "unknown duration unit"])
scenario("warmup-after-duration", {"simulation/warmup_s": 5}, ["simulation.warmup_s", "shorter than duration_s"])
scenario("replications-over-limit", {"simulation/replications": 100000},
         ["simulation.replications", "limits.replications"])
scenario("queries-over-limit", {"workload/arrival/qps": 90000, "simulation/duration_s": "1d"},
         ["workload.arrival.qps", "limits.simulated_queries"])
scenario("servers-over-limit", {"cluster/servers": 10**6}, ["cluster.servers", "limits.servers"])
scenario("segments-over-limit", {"workload/synthetic/segments_per_server": 10**6},
         ["workload.synthetic.segments_per_server", "limits.segments"])
scenario("docs-over-int", {"workload/synthetic/docs_per_segment": 2**40},
         ["workload.synthetic.docs_per_segment", "at most 2147483647"])
scenario("seed-negative", {"simulation/seed": -1}, ["simulation.seed", "non-negative integer"])
scenario("gc-zero-interval", {"cluster/gc": {"collector": "fixed", "interval_s": 0, "pause_ms": 0}},
         ["cluster", "limits.simulated_events"])
scenario("gc-tiny-interval", {"cluster/gc": {"collector": "fixed", "interval_s": 1e-9, "pause_ms": 0}},
         ["cluster", "limits.simulated_events"])
scenario("gc-fixed-missing", {"cluster/gc": {"collector": "fixed"}}, ["cluster.gc.interval_s", "is required"])
scenario("gc-collector-unknown", {"cluster/gc": {"collector": "shenandoah"}}, ["cluster.gc.collector", "must be one of"])
scenario("gc-live-over-heap", {"cluster/gc": {"collector": "g1", "live_heap": "100G"}},
         ["cluster.gc.live_heap", "does not fit"])
scenario("gc-alloc-nan", "cluster:\n  gc: {collector: g1, allocation_rate: .nan}\n",
         ["cluster.gc.allocation_rate", "finite"])
scenario("failures-half", {"cluster/failures": {"mtbf_s": 60}}, ["cluster.failures.mttr_s", "given together"])
scenario("failures-tiny", {"cluster/failures": {"mtbf_s": "1us", "mttr_s": "1us"}, "simulation/duration_s": 60},
         ["cluster", "limits.simulated_events"])
scenario("churn-huge", {"workload/churn": {"replace_per_hour": 1e15}}, ["cluster", "limits.simulated_events"])
scenario("latency-negative", {"cluster/network/latency_ms": -1}, ["cluster.network.latency_ms", "negative"])
scenario("latency-dist-unknown", {"cluster/network/latency_ms": {"dist": "weird"}},
         ["cluster.network.latency_ms.dist", "must be one of"])
scenario("latency-dist-param", {"cluster/network/latency_ms": {"dist": "exponential", "mean": "fast"}},
         ["cluster.network.latency_ms", "must be a number"])
scenario("service-model-unknown", {"service": {"model": "magic"}}, ["service.model", "must be one of"])
scenario("service-empirical-empty", {"service": {"model": "empirical", "values_ms": []}},
         ["service.values_ms", "is required"])
scenario("service-empirical-negative", {"service": {"model": "empirical", "values_ms": [1, -2]}},
         ["service.values_ms[1]", "non-negative"])
scenario("service-variability-huge", {"service": {"variability": 50}}, ["service.variability", "between 0 and 3"])
scenario("query-options-list", {"workload/query_options": ["numReplicaGroupsToQuery"]},
         ["workload.query_options", "must be a mapping"])
scenario("query-option-groups", {"workload/query_options": {"numReplicaGroupsToQuery": "two"}},
         ["workload.query_options.numReplicaGroupsToQuery", "positive integer"])
scenario("query-option-timeout", {"workload/query_options": {"timeoutMs": "soon"}},
         ["workload.query_options.timeoutMs", "positive number"])
scenario("query-option-bool", {"workload/query_options": {"useFixedReplica": "yes"}},
         ["workload.query_options.useFixedReplica", "true or false"])
scenario("query-option-nested", {"workload/query_options": {"timeoutMs": {"ms": 5}}},
         ["workload.query_options.timeoutMs", "one string, number or boolean"])
scenario("server-config-list", {"cluster/server/config": ["a", "b"]}, ["cluster.server.config", "must be a mapping"])
scenario("server-scheduler", {"cluster/server/config": {"pinot.query.scheduler.name": "bogus"}},
         ["cluster.server.config.pinot.query.scheduler.name", "unknown scheduler"])
scenario("broker-timeout-text", {"cluster/broker/config": {"pinot.broker.timeoutMs": "x"}},
         ["cluster.broker.config.pinot.broker.timeoutMs", "must be a number"])
scenario("broker-adaptive-type", {"cluster/broker/config": {"pinot.broker.adaptive.server.selector.type": "X"}},
         ["cluster.broker.config.pinot.broker.adaptive.server.selector.type", "Illegal adaptive server selector"])
scenario("synthetic-and-data", {"workload/data": "somewhere"}, ["workload.synthetic", "cannot also name"])
scenario("replay-without-data", {"workload/arrival/process": "replay"},
         ["workload.arrival.process", "replay needs a workload directory"])
scenario("data-missing-dir", {"workload/synthetic": ..., "workload/data": "no-such-dir"},
         ["no-such-dir", "has no segments.parquet"])
scenario("name-list", {"name": ["a"]}, ["name", "must be a string"])
scenario("limits-negative", {"limits": {"qps": -1}}, ["limits.qps", "must be a positive number"])
scenario("limits-unknown", {"limits": {"gpus": 4}}, ["limits.gpus", "unknown key"])
# -- run-time-only failures, now found by every path -----------------------------------------------
scenario("replication-over-servers", {"table/segmentsConfig": {"replication": 8}},
         ["table.segmentsConfig.replication", "8 replicas on 4 servers"])
RG = {"tagPoolConfig": {"tag": "DefaultTenant_OFFLINE"},
      "replicaGroupPartitionConfig": {"replicaGroupBased": True, "numReplicaGroups": 2,
                                      "numInstancesPerReplicaGroup": 3}}
scenario("replica-groups-over-servers", {"table/segmentsConfig": {"replication": 2},
                                          "table/instanceAssignmentConfigMap": {"OFFLINE": RG}},
         ["table.instanceAssignmentConfigMap.OFFLINE.replicaGroupPartitionConfig", "asked for 6"])
scenario("replica-group-tag", {"table/instanceAssignmentConfigMap": {"OFFLINE": {**RG, "tagPoolConfig": {
    "tag": "Nope_OFFLINE"}}}}, ["table.instanceAssignmentConfigMap.OFFLINE.tagPoolConfig.tag", "Nope_OFFLINE"])
scenario("replica-groups-zero", {"table/instanceAssignmentConfigMap": {"OFFLINE": {
    **RG, "replicaGroupPartitionConfig": {"replicaGroupBased": True, "numReplicaGroups": 0}}}},
         ["table.instanceAssignmentConfigMap.OFFLINE.replicaGroupPartitionConfig.numReplicaGroups", "positive"])
scenario("assignment-map-kind", {"table/instanceAssignmentConfigMap": {"HOT": RG}},
         ["table.instanceAssignmentConfigMap.HOT", "must be one of"])
scenario("legacy-rg-missing", {"table/segmentsConfig": {"segmentAssignmentStrategy": "replicaGroup"}},
         ["table.segmentsConfig.replicaGroupStrategyConfig", "Failed to find"])
# -- table-config fields the workbench reads (embedded) --------------------------------------------
table("name-missing", {"tableName": ...}, ["tableName", "is required"])
table("name-slash", {"tableName": "../etc"}, ["tableName", "must not contain"])
table("type-unknown", {"tableType": "HYBRID"}, ["tableType", "OFFLINE or REALTIME"])
table("replication-text", {"segmentsConfig": {"replication": "three"}}, ["segmentsConfig.replication", "integer"])
table("replication-zero", {"segmentsConfig": {"replication": 0}}, ["segmentsConfig.replication", "at least 1"])
table("time-column-number", {"segmentsConfig": {"timeColumnName": 5}}, ["segmentsConfig.timeColumnName", "string"])
table("retention-unit", {"segmentsConfig": {"retentionTimeUnit": "WEEKS"}},
      ["segmentsConfig.retentionTimeUnit", "must be one of"])
table("retention-value", {"segmentsConfig": {"retentionTimeValue": "-7"}},
      ["segmentsConfig.retentionTimeValue", "at least 0"])
table("segments-config-list", {"segmentsConfig": [1]}, ["segmentsConfig", "JSON object"])
table("pruners-string", {"routing": {"segmentPrunerTypes": "time"}}, ["routing.segmentPrunerTypes", "must be a list"])
table("pruners-unknown", {"routing": {"segmentPrunerTypes": ["time", "bloom"]}},
      ["routing.segmentPrunerTypes[1]", "must be one of partition, time, empty"])
table("pruners-number", {"routing": {"segmentPrunerTypes": [1]}}, ["routing.segmentPrunerTypes[0]", "must be one of"])
table("selector-unknown", {"routing": {"instanceSelectorType": "random"}},
      ["routing.instanceSelectorType", "plugin class"])
table("selector-case", {"routing": {"instanceSelectorType": "replicagroup"}},
      ["routing.instanceSelectorType", "did you mean 'replicaGroup'"])
table("fixed-replica-text", {"routing": {"useFixedReplica": "yes"}}, ["routing.useFixedReplica", "true or false"])
table("routing-list", {"routing": ["balanced"]}, ["routing", "JSON object"])
PART = "tableIndexConfig/segmentPartitionConfig/columnPartitionMap"
table("partition-function-unknown", {"tableIndexConfig": {"segmentPartitionConfig": {"columnPartitionMap": {
    "k": {"functionName": "Crc32", "numPartitions": 4}}}}},
      ["columnPartitionMap.k.functionName", "must be a Pinot partition function"])
table("partition-count-zero", {"tableIndexConfig": {"segmentPartitionConfig": {"columnPartitionMap": {
    "k": {"functionName": "Murmur", "numPartitions": 0}}}}}, ["columnPartitionMap.k.numPartitions", "at least 1"])
table("partition-config-list", {"tableIndexConfig": {"segmentPartitionConfig": {"columnPartitionMap": {
    "k": {"functionName": "Murmur", "numPartitions": 4, "functionConfig": ["seed"]}}}}},
      ["columnPartitionMap.k.functionConfig", "JSON object"])
table("partition-murmur3-variant", {"tableIndexConfig": {"segmentPartitionConfig": {"columnPartitionMap": {
    "k": {"functionName": "Murmur3", "numPartitions": 4, "functionConfig": {"variant": "x99"}}}}}},
      ["columnPartitionMap.k", "variant"])
table("partition-map-list", {"tableIndexConfig": {"segmentPartitionConfig": {"columnPartitionMap": [1]}}},
      ["columnPartitionMap", "JSON object"])
table("timeout-negative", {"queryConfig": {"timeoutMs": -5}}, ["queryConfig.timeoutMs", "greater than 0"])
table("timeout-infinite", {"queryConfig": {"timeoutMs": "Infinity"}}, ["queryConfig.timeoutMs", "finite"])
table("timeout-text", {"queryConfig": {"timeoutMs": "soon"}}, ["queryConfig.timeoutMs", "must be a number"])
UPSERT = {"tableType": "REALTIME", "routing": {"instanceSelectorType": "strictReplicaGroup"}}
table("upsert-mode", {**UPSERT, "upsertConfig": {"mode": "SOMETIMES"}}, ["upsertConfig.mode", "FULL, PARTIAL, NONE"])
table("upsert-hash", {**UPSERT, "upsertConfig": {"hashFunction": "SHA1"}}, ["upsertConfig.hashFunction", "must be one of"])
table("upsert-ttl-negative", {**UPSERT, "upsertConfig": {"metadataTTL": -5}}, ["upsertConfig.metadataTTL", "at least 0"])
table("upsert-ttl-text", {**UPSERT, "upsertConfig": {"deletedKeysTTL": "a day"}},
      ["upsertConfig.deletedKeysTTL", "must be a number"])
table("upsert-snapshot", {**UPSERT, "upsertConfig": {"snapshot": "ON"}}, ["upsertConfig.snapshot", "ENABLE, DISABLE"])
table("upsert-comparison", {**UPSERT, "upsertConfig": {"comparisonColumns": 5}},
      ["upsertConfig.comparisonColumns", "must be a list"])
table("upsert-partial-strategy", {**UPSERT, "upsertConfig": {"mode": "PARTIAL",
                                                              "partialUpsertStrategies": {"x": "SUM"}}},
      ["upsertConfig.partialUpsertStrategies.x", "must be one of"])
table("upsert-offline", {"upsertConfig": {"mode": "FULL"}}, ["tableType", "only supported for REALTIME"])
table("upsert-routing", {"tableType": "REALTIME", "upsertConfig": {"mode": "FULL"}},
      ["routing.instanceSelectorType", "strictReplicaGroup"])
table("dedup-enabled-text", {"dedupConfig": {"dedupEnabled": "true"}}, ["dedupConfig.dedupEnabled", "true or false"])
table("assignment-selector", {"instanceAssignmentConfigMap": {"OFFLINE": {**RG, "partitionSelector": "BEST"}}},
      ["instanceAssignmentConfigMap.OFFLINE.partitionSelector", "must be one of"])
table("assignment-pools", {"instanceAssignmentConfigMap": {"OFFLINE": {**RG, "tagPoolConfig": {
    "tag": "DefaultTenant_OFFLINE", "pools": "0,1"}}}}, ["tagPoolConfig.pools", "must be a list"])
table("assignment-groups-negative", {"instanceAssignmentConfigMap": {"OFFLINE": {**RG, "replicaGroupPartitionConfig": {
    "replicaGroupBased": True, "numReplicaGroups": -1}}}}, ["numReplicaGroups", "at least 0"])
table("assignment-based-text", {"instanceAssignmentConfigMap": {"OFFLINE": {**RG, "replicaGroupPartitionConfig": {
    "replicaGroupBased": "false", "numReplicaGroups": 1}}}}, ["replicaGroupBased", "true or false"])
table("tenants-list", {"tenants": ["DefaultTenant"]}, ["tenants", "JSON object"])
table("tier-configs-object", {"tierConfigs": {"name": "cold"}}, ["tierConfigs", "must be a list"])
table("dim-table-text", {"isDimTable": "no"}, ["isDimTable", "true or false"])
scenario("table-file-missing", {"table": "no-such-table.json"}, ["table", "table config file not found"])
scenario("table-file-bad-json", {"table": "../table-config/trailing-comma.json"},
         ["trailing-comma.json:4", "not valid JSON", "trailing comma (line 3)"])
scenario("table-not-object", {"table": 42}, ["table", "must be a Pinot table config object"])
# -- embedded schemas (never validated before) -----------------------------------------------------
scenario("schema-name-missing", {"schema": {"dimensionFieldSpecs": []}}, ["schema.schemaName", "is required"])
scenario("schema-data-type", {"schema": merged(SCHEMA, {"dimensionFieldSpecs": [{"name": "k", "dataType": "TEXT"}]})},
         ["schema.dimensionFieldSpecs[0].dataType", "must be one of"])
scenario("schema-specs-string", {"schema": {"schemaName": "t", "dimensionFieldSpecs": "k"}},
         ["schema.dimensionFieldSpecs", "must be a list"])
scenario("schema-datetime-format", {"schema": merged(SCHEMA, {"dateTimeFieldSpecs": [
    {"name": "ts", "dataType": "LONG", "format": "1:FORTNIGHTS:EPOCH", "granularity": "1:MILLISECONDS"}]})},
         ["schema.dateTimeFieldSpecs[0].format", "FORTNIGHTS"])
scenario("schema-datetime-granularity", {"schema": merged(SCHEMA, {"dateTimeFieldSpecs": [
    {"name": "ts", "dataType": "LONG", "format": "1:MILLISECONDS:EPOCH"}]})},
         ["schema.dateTimeFieldSpecs[0].granularity", "is required"])
scenario("schema-metric-string", {"schema": merged(SCHEMA, {"metricFieldSpecs": [{"name": "m", "dataType": "STRING"}]})},
         ["schema.metricFieldSpecs[0].dataType", "numeric"])
scenario("schema-duplicate-column", {"schema": merged(SCHEMA, {"metricFieldSpecs": [{"name": "k", "dataType": "LONG"}]})},
         ["schema.metricFieldSpecs[0].name", "defined twice"])
scenario("schema-primary-key", {"schema": merged(SCHEMA, {"primaryKeyColumns": ["nope"]})},
         ["schema.primaryKeyColumns[0]", "not a column"])
scenario("schema-time-column", {"schema": SCHEMA, "table/segmentsConfig": {"timeColumnName": "when"}},
         ["table.segmentsConfig.timeColumnName", "not a column of the schema"])
scenario("schema-upsert-no-key", {"schema": SCHEMA, "table/tableType": "REALTIME",
                                  "table/routing": {"instanceSelectorType": "strictReplicaGroup"},
                                  "table/upsertConfig": {"mode": "FULL"}},
         ["schema.primaryKeyColumns", "needs primary key columns"])
scenario("schema-single-value", {"schema": merged(SCHEMA, {"dimensionFieldSpecs": [
    {"name": "k", "dataType": "STRING", "singleValueField": "no"}]})},
         ["schema.dimensionFieldSpecs[0].singleValueField", "true or false"])
scenario("schema-file-missing", {"schema": "no-such-schema.json"}, ["schema", "schema file not found"])
GEN = {"workload": {"generate": {"events": 1000, "partitions": 4}, "arrival": {"process": "replay"}},
       "table/tableType": "REALTIME", "table/segmentsConfig": {"timeColumnName": "event_time_ms"}}
GEN_SCHEMA = {"schemaName": "t", "dimensionFieldSpecs": [{"name": n, "dataType": "STRING"} for n in ("key", "category")],
              "metricFieldSpecs": [{"name": "value", "dataType": "DOUBLE"}, {"name": "ingest_time_ms", "dataType": "LONG"},
                                   {"name": "is_delete", "dataType": "INT"}],
              "dateTimeFieldSpecs": [{"name": "event_time_ms", "dataType": "LONG", "format": "1:MILLISECONDS:EPOCH",
                                      "granularity": "1:MILLISECONDS"}]}
scenario("schema-generator-column", {**GEN, "schema": merged(GEN_SCHEMA, {"dimensionFieldSpecs": [
    {"name": "key", "dataType": "STRING"}, {"name": "segment_name", "dataType": "STRING"}]})},
         ["schema.dimensionFieldSpecs[1].name", "your column 'segment_name'", "generator's own column", "rename"])
scenario("table-partition-generator-column", {**GEN, f"table/{PART.split('/')[0]}": {"segmentPartitionConfig": {
    "columnPartitionMap": {"event_id": {"functionName": "Murmur", "numPartitions": 4}}}}},
         ["table.tableIndexConfig.segmentPartitionConfig.columnPartitionMap.event_id", "cannot partition by 'event_id'"])
scenario("schema-template-column", {**GEN, "schema": merged(GEN_SCHEMA, {"metricFieldSpecs": [
    {"name": "ingest_time_ms", "dataType": "LONG"}, {"name": "is_delete", "dataType": "INT"}]})},
         ["schema: has no column 'value'", "query template 2"])
scenario("schema-partition-column", {"schema": SCHEMA, f"table/{PART.split('/')[0]}": {"segmentPartitionConfig": {
    "columnPartitionMap": {"trip_id": {"functionName": "Murmur", "numPartitions": 4}}}}},
         ["columnPartitionMap.trip_id", "not a column of the schema"])
scenario("schema-file-trailing-comma", {"schema": "../schema/trailing-comma.json"},
         ["trailing-comma.json:4", "trailing comma (line 3)"])

# -- table-config files, imported -------------------------------------------------------------------
def tc_file(name: str, text: str, expect: list[str]) -> None:
    importer("table-config", name, text, expect, suffix=".json")


def tc_json(changes: dict[str, Any]) -> str:
    return json.dumps(merged(TABLE, changes), indent=2)


tc_file("trailing-comma", '{\n  "tableName": "t",\n  "tableType": "OFFLINE",\n}\n',
        ["trailing-comma.json:4", "not valid JSON", "trailing comma (line 3)"])
tc_file("duplicate-key", '{\n  "tableName": "t",\n  "tableType": "OFFLINE",\n  "tableName": "u"\n}\n',
        ["duplicate-key.json:4", "duplicate key 'tableName'"])
tc_file("nan-ttl", '{"tableName": "t", "tableType": "REALTIME", "upsertConfig": {"metadataTTL": NaN}}',
        ["nan-ttl.json:1", "NaN is not a JSON number"])
tc_file("empty", "", ["empty.json:1", "not valid JSON"])
tc_file("top-level-list", "[1, 2]", ["top-level-list.json:1", "expected"])
tc_file("deep", "{\"a\": " + "[" * 200 + "]" * 200 + "}", ["deep.json:1", "nests deeper than"])
tc_file("pruners-string", tc_json({"routing": {"segmentPrunerTypes": "partition"}}),
        ["pruners-string.json:", "routing.segmentPrunerTypes", "must be a list"])
tc_file("partition-function", tc_json({PART: {"k": {"functionName": "Nope", "numPartitions": 4}}}),
        ["partition-function.json:", "functionName", "partition function"])
tc_file("upsert-mode", tc_json({"tableType": "REALTIME", "routing": {"instanceSelectorType": "strictReplicaGroup"},
                                "upsertConfig": {"mode": "sometimes"}}),
        ["upsert-mode.json:", "upsertConfig.mode"])
tc_file("negative-ttl", tc_json({"tableType": "REALTIME", "routing": {"instanceSelectorType": "strictReplicaGroup"},
                                 "upsertConfig": {"metadataTTL": -1}}),
        ["negative-ttl.json:", "upsertConfig.metadataTTL", "at least 0"])
tc_file("replication-float", tc_json({"segmentsConfig": {"replication": 1.5}}),
        ["replication-float.json:", "segmentsConfig.replication", "integer"])
tc_file("no-table-name", json.dumps({"tableType": "OFFLINE"}), ["no-table-name.json:1", "expected"])
importer("table-config", "binary", b"\x00\x01\x02binary\xff\xfe", ["binary.json", "binary file"], suffix=".json")
importer("table-config", "missing", None, ["missing.json", "no such file"], suffix=".json")

# -- schemas, imported -------------------------------------------------------------------------------
def schema_file(name: str, schema: Any, expect: list[str]) -> None:
    text = schema if isinstance(schema, str) else json.dumps(schema, indent=2)
    importer("schema", name, text, expect, suffix=".json")


schema_file("no-name", {"dimensionFieldSpecs": []}, ["no-name.json:", "schemaName", "is required"])
schema_file("bad-type", merged(SCHEMA, {"dimensionFieldSpecs": [{"name": "k", "dataType": "VARCHAR"}]}),
            ["bad-type.json:", "dimensionFieldSpecs[0].dataType"])
schema_file("bad-format", merged(SCHEMA, {"dateTimeFieldSpecs": [
    {"name": "ts", "dataType": "LONG", "format": "EPOCH|EONS", "granularity": "1:MILLISECONDS"}]}),
            ["bad-format.json:", "dateTimeFieldSpecs[0].format"])
schema_file("max-length-text", merged(SCHEMA, {"dimensionFieldSpecs": [{"name": "k", "dataType": "STRING",
                                                                         "maxLength": "long"}]}),
            ["max-length-text.json:", "dimensionFieldSpecs[0].maxLength", "integer"])
schema_file("pk-not-list", merged(SCHEMA, {"primaryKeyColumns": "k"}), ["pk-not-list.json:", "primaryKeyColumns"])
schema_file("spec-not-object", merged(SCHEMA, {"metricFieldSpecs": ["clicks"]}),
            ["spec-not-object.json:", "metricFieldSpecs[0]", "must be an object"])
schema_file("duplicate-key", '{"schemaName": "t",\n "schemaName": "u"}', ["duplicate-key.json:2", "duplicate key"])
schema_file("truncated", '{"schemaName": "t", "dimensionFieldSpecs": [', ["truncated.json:1", "not valid JSON"])
schema_file("time-spec-empty", merged(SCHEMA, {"timeFieldSpec": {}}), ["time-spec-empty.json:", "timeFieldSpec"])
schema_file("list", "[]", ["list.json:1", "a schema must be a JSON object"])
schema_file("trailing-comma", '{\n  "schemaName": "t",\n  "dimensionFieldSpecs": [],\n}\n',
            ["trailing-comma.json:4", "trailing comma (line 3)"])

# -- segment metadata, imported ----------------------------------------------------------------------
def seg_file(name: str, records: Any, expect: list[str], lenient: bool = False) -> None:
    text = records if isinstance(records, str) else json.dumps(records, indent=2)
    importer("segments", name, text, expect, suffix=".json", lenient=lenient)


seg_file("docs-missing", {"t_0": merged(SEGMENT, {"totalDocs": ...})}, ["docs-missing.json:2", "totalDocs is missing"])
seg_file("docs-negative", {"t_0": merged(SEGMENT, {"totalDocs": -5})}, ["docs-negative.json:2", "totalDocs is -5"])
seg_file("docs-text", {"t_0": merged(SEGMENT, {"totalDocs": "many"})}, ["docs-text.json:2", "totalDocs must be an integer"])
seg_file("zk-docs-missing", {"t_0": {"segment.start.time": "1", "segment.end.time": "2"}},
         ["zk-docs-missing.json:2", "segment.total.docs is missing"])
seg_file("name-traversal", [merged(SEGMENT, {"segmentName": "../../etc/passwd"})],
         ["name-traversal.json:2", "cannot name a segment directory"])
seg_file("name-duplicate", [SEGMENT, SEGMENT], ["name-duplicate.json:", "already appeared"])
seg_file("time-backwards", {"t_0": merged(SEGMENT, {"startTimeMillis": 100, "endTimeMillis": 10})},
         ["time-backwards.json:2", "ends before it starts"])
seg_file("not-a-record", {"t_0": 5}, ["not-a-record.json:2", "not a segment metadata record"])
seg_file("record-duplicate-key", '{"t_0": {"segmentName": "t_0", "totalDocs": 1,\n  "totalDocs": 2}}',
         ["record-duplicate-key.json:2", "duplicate key 'totalDocs'"])
seg_file("empty-object", {}, ["empty-object.json", "holds no segment records"])
seg_file("lenient-all-bad", {"t_0": merged(SEGMENT, {"totalDocs": -1}), "t_1": merged(SEGMENT, {"totalDocs": "x"})},
         ["lenient-all-bad.json", "none of its 2 records could be read"], lenient=True)
seg_file("partitions-not-list", {"t_0": {**SEGMENT, "columns": [{"columnName": "k", "partitionFunction": "Murmur",
                                                                "numPartitions": 4, "partitions": 3}]}},
         ["partitions-not-list.json:2", "partitions must be a list"])
importer("segments", "jsonl-bad-line", json.dumps(SEGMENT) + "\n{not json\n", ["jsonl-bad-line.jsonl:2", "not valid JSON"],
         suffix=".jsonl")
importer("segments", "gzip-truncated", gzip.compress(json.dumps([SEGMENT] * 50).encode())[:60],
         ["gzip-truncated.json.gz", "truncated gzip"], suffix=".json.gz")

# -- broker query logs -------------------------------------------------------------------------------
def qlog(name: str, text: str | bytes, expect: list[str], lenient: bool = False, **extra: Any) -> None:
    importer("query-log", name, text, expect, suffix=extra.pop("suffix", ".log"), lenient=lenient, **extra)


GOOD_Q = QLOG + "requestId=1,table=t,timeMs=5,docs=1/10,servers=2/2,query=SELECT 1\n"
qlog("no-time", QLOG + "requestId=1,table=t,query=SELECT 1\n", ["no-time.log:1", "no timeMs= entry"])
qlog("negative-time", QLOG + "requestId=1,table=t,timeMs=-5,query=SELECT 1\n", ["negative-time.log:1", "negative"])
qlog("servers-impossible", QLOG + "requestId=1,table=t,timeMs=5,servers=3/2,query=SELECT 1\n",
     ["servers-impossible.log:1", "more servers responded"])
qlog("docs-text", QLOG + "requestId=1,table=t,timeMs=5,docs=a/b,query=SELECT 1\n", ["docs-text.log:1", "docs="])
qlog("empty-table", QLOG + "requestId=1,table=,timeMs=5,query=SELECT 1\n", ["empty-table.log:1", "table= is empty"])
qlog("bad-date", "2026/13/45 03:04:05.678 INFO [QueryLogger] [q] requestId=1,table=t,timeMs=5,query=SELECT 1\n",
     ["bad-date.log:1", "not a valid date"])
qlog("no-query", QLOG + "requestId=1,table=t,timeMs=5\n", ["no-query.log:1", "no ',query=<sql>'"])
qlog("twice", QLOG + "requestId=1,table=t,timeMs=5,timeMs=6,query=SELECT 1\n", ["twice.log:1", "appears twice"])
qlog("empty", "", ["empty.log", "holds no broker query-log lines"])
qlog("binary", bytes(range(256)), ["binary.log:1", "not a log line"])
qlog("lenient-all-bad", QLOG + "requestId=1,table=t,query=x\n" + QLOG + "requestId=2,table=t,timeMs=-1,query=y\n",
     ["lenient-all-bad.log", "none of its 2 records could be read"], lenient=True)
qlog("gzip-corrupt", b"\x1f\x8b\x08\x00garbage that is not deflate", ["gzip-corrupt.log.gz", "not a valid gzip"],
     suffix=".log.gz")
qlog("gzip-truncated", gzip.compress(GOOD_Q.encode() * 200)[:40], ["gzip-truncated.log.gz", "truncated gzip"],
     suffix=".log.gz")
qlog("gzip-bomb", gzip.compress(b"\n" * (8 * 1024**2), 9), ["gzip-bomb.log.gz", "decompresses to more than 1 MiB"],
     suffix=".log.gz", more=["--max-input-size", "1M"])
qlog("gzip-as-log", gzip.compress(b"hello\n"), ["gzip-as-log.log:1", "not a log line"])
qlog("over-size", GOOD_Q * 20, ["over-size.log", "is larger than 1 KiB"], more=["--max-input-size", "1K"])

# -- GC logs -----------------------------------------------------------------------------------------
def gclog(name: str, text: str | bytes, expect: list[str], lenient: bool = False, **extra: Any) -> None:
    importer("gc-log", name, text, expect, suffix=extra.pop("suffix", ".log"), lenient=lenient, **extra)


gclog("bad-heap", GCLINE + "Pause Young (Normal) (G1 Evacuation Pause) 24Q->4M(256M) 12.000ms\n", ["bad-heap.log:1"])
gclog("no-duration", GCLINE + "Pause Young (Normal) (G1 Evacuation Pause) 24M->4M(256M)\n", ["no-duration.log:1"])
gclog("jdk8", "2024-01-01T00:00:01.000+0000: 0.900: [GC pause (G1 Evacuation Pause) (young), 0.0120000 secs]\n",
      ["jdk8.log:1", "-XX:+PrintGCDetails"])  # the detailed form; the basic -verbose:gc form is read
gclog("jdk8-no-stamp", "[GC pause (G1 Evacuation Pause) (young) 24M->4M(256M), 0.0120000 secs]\n",
      ["jdk8-no-stamp.log:1", "no time stamp"])
gclog("unterminated", "[2024-01-01T00:00:01.012+0000][0.912s GC(0) Pause Young 1M->1M(2M) 1.0ms\n",
      ["unterminated.log:1", "unterminated"])
gclog("bad-clock", "[2024-13-01T00:00:01.012+0000][0.912s][info][gc] GC(0) Pause Young (Normal) (x) "
      "24M->4M(256M) 12.000ms\n", ["bad-clock.log:1", "not a valid date"])
gclog("empty", "", ["empty.log", "holds no GC pause lines"])
gclog("only-other-lines", "[0.010s][info][gc,init] Version: 17\n", ["only-other-lines.log", "holds no GC pause lines"])
gclog("lenient-all-bad", GCLINE + "Pause Young (Normal) (x) 24Q->4M(256M) 12.000ms\n",
      ["lenient-all-bad.log", "none of its 1 records could be read"], lenient=True)
gclog("gzip-corrupt", b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03garbage", ["gzip-corrupt.log.gz", "gzip"],
      suffix=".log.gz")

# -- workload generate specs (bare) ------------------------------------------------------------------
def gen(name: str, text: str | bytes, expect: list[str]) -> None:
    case("generate", name, text, ["generate", "{case}", "--out", "{out}"], expect, suffix=".yaml")


gen("syntax", "events: [1\n", ["syntax.yaml:2", "not valid YAML"])
gen("duplicate-key", "events: 5\nevents: 6\n", ["duplicate-key.yaml:2", "duplicate key 'events'"])
gen("unknown-key", "evnets: 5\n", ["evnets", "did you mean 'events'"])
gen("negative", "events: -5\n", ["events", "must be a positive integer"])
gen("over-limit", "events: 5000000000\n", ["workload.generate.events", "limits.generate_events"])
gen("list", "- 1\n", ["list.yaml", "must be a mapping of generate keys"])
gen("binary", b"\x00\xff" * 40, ["binary.yaml", "binary file"])
gen("rate-amplitude", "rate: {profile: diurnal, amplitude: 1.5}\n", ["rate.amplitude", "between 0 and 0.95"])
gen("partition-function", "partitioning: {function: Crc32}\n", ["partitioning.function", "must be one of"])
gen("queries-flood", "queries: {lookup_qps: 1.0e+9, duration_s: 1d}\n", ["workload.generate.queries", "limits.simulated_queries"])
gen("scenario-synthetic", yaml.safe_dump(BASE), ["workload.generate", "is required to generate data"])
gen("nan-span", "span_s: .nan\n", ["span_s", "finite"])

# -- sweep files -------------------------------------------------------------------------------------
def sweep(name: str, text: str | bytes, expect: list[str], **extra: Any) -> None:
    case("sweep", name, text, ["sweep", "{case}", "--out", "{out}"], expect, suffix=".yaml", **extra)


SYN = "base: ../../../../scenarios/synthetic.yaml\n"
sweep("duplicate-key", SYN + "grid:\n  cluster.servers: [2]\n  cluster.servers: [3]\n",
      ["duplicate-key.yaml:4", "duplicate key 'cluster.servers'"])
sweep("grid-too-big", SYN + "grid:\n" + "".join(f"  cluster.server.config.k{i}: [1,2,3,4,5,6,7,8,9,10]\n"
                                                for i in range(5)), ["grid", "100,000 points", "limits: {points"])
sweep("grid-empty", SYN + "grid: {}\n", ["grid", "at least one dotted key"])
sweep("grid-scalar", SYN + "grid:\n  cluster.servers: 4\n", ["grid.cluster.servers", "non-empty list"])
sweep("grid-and-points", SYN + "grid: {cluster.servers: [2]}\npoints: [{cluster.servers: 3}]\n",
      ["exactly one of `grid:`"])
sweep("unknown-key", SYN + "grid: {cluster.servers: [2]}\nworkers: 2\n", ["workers", "unknown key"])
sweep("base-missing", "grid: {cluster.servers: [2]}\n", ["base", "is required"])
sweep("base-not-found", "base: nowhere.yaml\ngrid: {cluster.servers: [2]}\n", ["base", "scenario file not found"])
sweep("point-typo", SYN + "grid: {cluster.servrs: [2]}\n", ["grid.cluster.servrs", "did you mean 'servers'"])
sweep("point-bad-value", SYN + "points: [{cluster.servers: 2}, {cluster.servers: -1}]\n",
      ["points[1].cluster.servers", "must be a positive integer"])
sweep("point-runtime", SYN + "grid: {table.segmentsConfig.replication: [20]}\n",
      ["grid.table.segmentsConfig.replication", "20 replicas on 12 servers"])
sweep("parallel-zero", SYN + "grid: {cluster.servers: [2]}\nparallel: 0\n", ["parallel", "positive integer"])
sweep("seed-negative", SYN + "grid: {cluster.servers: [2]}\nseed: -3\n", ["seed", "integer >= 0"])
sweep("limits-bad", SYN + "grid: {cluster.servers: [2]}\nlimits: {points: many}\n", ["limits.points", "positive integer"])
sweep("notebook-missing", SYN + "grid: {cluster.servers: [2]}\nnotebook: nope.ipynb\n", ["notebook", "not found"])
sweep("alias-bomb", SYN + BOMB, ["alias-bomb.yaml", "alias bomb"])
sweep("binary", b"\x00base\xff", ["binary.yaml", "binary file"])
case("sweep", "valid", SYN + "grid: {cluster.servers: [2]}\n", [], [], suffix=".yaml", helper=True)

# -- report inputs (directories) ----------------------------------------------------------------------
def report_dir(name: str, write: Callable[[Path], None], expect: list[str]) -> None:
    case("report", name, write, ["report", "{case}", "--out", "{out}.pdf"], expect)


def _files(files: dict[str, bytes | str | pd.DataFrame]) -> Callable[[Path], None]:
    def write(directory: Path) -> None:
        directory.mkdir(parents=True)
        for name, data in files.items():
            target = directory / name
            if isinstance(data, pd.DataFrame):
                data.to_parquet(target, index=False)
            else:
                target.write_bytes(data if isinstance(data, bytes) else data.encode())
    return write


report_dir("summary-corrupt", _files({"summary.json": "{not json", "queries.parquet": b"x"}),
           ["summary-corrupt/summary.json:1", "not valid JSON"])
report_dir("summary-incomplete", _files({"summary.json": '{"summary": {"queries": 3}}'}),
           ["summary-incomplete/summary.json", "has no 'summary.latency_ms.mean.value'"])
report_dir("summary-binary", _files({"summary.json": b"\x00\x01\x02"}), ["summary.json", "binary file"])
FULL_SUMMARY = {"scenario": {}, "summary": {
    "failures": {"failed": False, "why": ""}, "table_fit": {"servers_without_data": 0, "why": ""},
    "latency_ms": {p: {"value": 1.0, "ci_low": 1.0, "ci_high": 1.0} for p in ("mean", "p50", "p95", "p99", "p99.9")},
    "throughput_qps": 1, "queries": 1, "replications": 1, "utilisation": {"mean": 0.1, "max": 0.1},
    "partial_rate": 0, "gc_delayed_rate": 0, "servers_queried_mean": 1, "segments_queried_mean": 1,
    "littles_law": {"L_measured": 1, "lambda_W": 1, "relative_difference": 0}, "confidence": 0.95,
    "servers_idle": 0, "gc_pauses": 0, "cache_hit_rate": 0,
    "errors": {"scheduling_timeout_share": 0, "execution_timeout_share": 0, "query_error_share": 0, "by_code": {}},
    "engine": {"name": "simpy", "why": ""},
    "heap": {"live_max": 0, "peak_max": 0, "oom_servers": 0, "upsert_keys_max": 0, "upsert_keys_from": "none",
             "at_s": None},
    "slo": {"met": None, "checks": {}, "why": ""}}}
report_dir("queries-corrupt", _files({"summary.json": json.dumps(FULL_SUMMARY), "queries.parquet": b"PAR1junk"}),
           ["queries-corrupt/queries.parquet", "not a readable Parquet file"])
report_dir("queries-foreign", _files({"summary.json": json.dumps(FULL_SUMMARY),
                                      "queries.parquet": pd.DataFrame({"x": [1]})}),
           ["queries-foreign/queries.parquet", "has no column 'latency_ms'"])
report_dir("sweep-corrupt", _files({"combined.parquet": b"not parquet"}),
           ["sweep-corrupt/combined.parquet", "not a readable Parquet file"])
report_dir("sweep-all-failed", _files({"combined.parquet": pd.DataFrame({"point": ["point-000"],
                                                                          "status": ["failed"]})}),
           ["sweep-all-failed/combined.parquet", "no successful points"])
report_dir("sweep-point-missing", _files({"combined.parquet": pd.DataFrame(
    {"point": ["point-000"], "status": ["ok"], "latency_ms.p99.value": [1.0]})}),
           ["point-000", "is not a run directory"])
# (a note file keeps the directory in git, which does not track empty ones; it is still no run)
report_dir("empty-dir", _files({"NOTE.txt": "a directory with no run in it\n"}), ["empty-dir", "is not a run directory"])

# -- workload directories handed to simulate --data ----------------------------------------------------
def data_dir(name: str, write: Callable[[Path], None], expect: list[str], scenario_file: str = "{synthetic}") -> None:
    case("data", name, write, ["simulate", scenario_file, "--data", "{case}", "--out", "{out}", "--quiet"], expect)


SEGS = pd.DataFrame({"segment_name": ["t_0", "t_1"], "total_docs": [10, 20], "start_time_ms": [0, 10],
                     "end_time_ms": [9, 19], "status": ["DONE", "DONE"]})
data_dir("segments-corrupt", _files({"segments.parquet": b"garbage"}),
         ["segments-corrupt/segments.parquet", "not a readable Parquet file"])
data_dir("segments-foreign", _files({"segments.parquet": pd.DataFrame({"a": [1]})}),
         ["segments-foreign/segments.parquet", "has no column 'segment_name'"])
data_dir("docs-negative", _files({"segments.parquet": SEGS.assign(total_docs=[10, -4])}),
         ["docs-negative/segments.parquet", "total_docs of segment 't_1' (row 1) is -4"])
data_dir("docs-missing", _files({"segments.parquet": SEGS.assign(total_docs=[10.0, float("nan")])}),
         ["docs-missing/segments.parquet", "total_docs of segment 't_1'"])
data_dir("name-traversal", _files({"segments.parquet": SEGS.assign(segment_name=["t_0", "../x"])}),
         ["name-traversal/segments.parquet", "segment_name (row 1)", "cannot name a segment directory"])
data_dir("name-duplicate", _files({"segments.parquet": SEGS.assign(segment_name=["t_0", "t_0"])}),
         ["name-duplicate/segments.parquet", "listed twice"])
data_dir("zk-corrupt", _files({"segments.parquet": SEGS.assign(zk_metadata=["{}", "{oops"])}),
         ["zk-corrupt/segments.parquet", "zk_metadata of row 1"])
data_dir("no-segments", _files({"segments.parquet": SEGS.iloc[0:0]}), ["no-segments/segments.parquet", "holds no segments"])
data_dir("queries-nan", _files({"segments.parquet": SEGS, "queries.parquet": pd.DataFrame(
    {"arrival_s": [0.0, float("nan")], "sql": ["SELECT 1", "SELECT 2"]})}),
         ["queries-nan/queries.parquet", "arrival_s"], scenario_file="{corpus}/data/replay.yaml")
data_dir("queries-no-sql", _files({"segments.parquet": SEGS, "queries.parquet": pd.DataFrame(
    {"arrival_s": [0.0, 1.0], "sql": ["SELECT 1", None]})}),
         ["queries-no-sql/queries.parquet", "sql"], scenario_file="{corpus}/data/replay.yaml")
case("data", "replay", yaml.safe_dump(merged(BASE, {"workload/synthetic": ..., "workload/arrival": {
    "process": "replay"}})), [], [], suffix=".yaml", helper=True)

# -- command-line options and outputs ------------------------------------------------------------------
def cli(name: str, args: list[str], expect: list[str], **extra: Any) -> None:
    case("cli", name, None, args, expect, **extra)


cli("seed-negative", ["simulate", "{synthetic}", "--out", "{out}", "--seed", "-5"], ["--seed", "non-negative"])
cli("seed-text", ["simulate", "{synthetic}", "--out", "{out}", "--seed", "x"], ["--seed", "integer"])
cli("generate-seed-negative", ["generate", "{synthetic}", "--out", "{out}", "--seed", "-1"], ["--seed", "non-negative"])
cli("parallel-zero", ["sweep", "{corpus}/sweep/duplicate-key.yaml", "--out", "{out}", "--parallel", "0"],
    ["--parallel", "positive integer"])
cli("retries-negative", ["sweep", "{corpus}/sweep/duplicate-key.yaml", "--out", "{out}", "--retries", "-1"],
    ["--retries", "non-negative"])
cli("max-input-zero", ["import", "gc-log", "{corpus}/gc-log/empty.log", "--out", "{out}", "--max-input-size", "0"],
    ["--max-input-size", "positive"])
cli("import-kind", ["import", "gc-logs", "{corpus}/gc-log/empty.log", "--out", "{out}"], ["kind", "unknown import kind"])
cli("scenario-missing", ["simulate", "{corpus}/no-such.yaml", "--out", "{out}"], ["no-such.yaml", "no such file"])
cli("scenario-is-dir", ["validate", "{corpus}/scenario"], ["scenario", "is a directory"])
cli("out-is-file", ["simulate", "{synthetic}", "--out", "{out}", "--quiet"], ["is a file, not the directory"],
    setup="out-file")
cli("out-under-file", ["simulate", "{synthetic}", "--out", "{out}/run", "--quiet"], ["is a file, not a directory"],
    setup="out-file")
cli("out-exists", ["simulate", "{synthetic}", "--out", "{out}", "--quiet"], ["already exists; pass --overwrite"],
    setup="out-dir")
cli("out-read-only", ["simulate", "{synthetic}", "--out", "/proc/workbench-run", "--quiet"],
    ["/proc/workbench-run", "not writable"])
cli("import-out-read-only", ["import", "gc-log", "{corpus}/gc-log/empty.log", "--out", "/sys/workbench-import"],
    ["/sys/workbench-import", "not writable"])
cli("report-out-is-dir", ["report", "{corpus}/report/empty-dir", "--out", "{out}"], ["is a directory, not the file"],
    setup="out-dir")
cli("sweep-out-is-file", ["sweep", "{corpus}/sweep/valid.yaml", "--out", "{out}"], ["is a file"],
    setup="out-file")
cli("report-missing", ["report", "{corpus}/no-such-run", "--out", "{out}.pdf"], ["no-such-run", "is missing"])
cli("validate-data-corrupt", ["validate", "{synthetic}", "--data", "{corpus}/data/segments-corrupt"],
    ["segments-corrupt/segments.parquet", "not a readable Parquet file"])


def write_case(spec: dict[str, Any]) -> None:
    content = spec.pop("content")
    if content is None:
        return
    target = ROOT / spec["path"]
    target.parent.mkdir(parents=True, exist_ok=True)
    if callable(content):
        content(target)
    else:
        target.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))


def main() -> None:
    shutil.rmtree(ROOT, ignore_errors=True)
    ROOT.mkdir(parents=True)
    manifest = []
    for spec in CASES:
        if spec["content"] is None and spec["kind"] not in ("cli",):
            spec.pop("content")  # a case about a file that does not exist
        else:
            write_case(spec)
        if not spec.pop("helper", False):
            manifest.append(spec)
    header = "# Generated by tests/badinput/make_corpus.py: one entry per case (see that file to add one).\n"
    (ROOT / "manifest.yaml").write_text(header + yaml.safe_dump(manifest, sort_keys=False, width=120))
    sys.stdout.write(f"{len(manifest)} cases in {ROOT}\n")


if __name__ == "__main__":
    main()
