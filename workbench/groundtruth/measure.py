"""``workbench measure``: a scenario's own table served by Pinot's query path across processes, at open-loop rates.

A user with no cluster yet has no broker log to calibrate from. This runs one, one fresh cluster per rate so one rate's
queues and heap do not carry into the next (:data:`CLUSTERS`): by default a whole Helix cluster
(:func:`~workbench.groundtruth.helix_cluster.helix_cluster`: Pinot's controller, broker and servers, each its own JVM)
given the scenario's table config and schema and its workload's queries. An OFFLINE table gets its completed segments
built and uploaded; a REALTIME table gets its events streamed through Kafka, Pinot cutting and committing its own
segments (:mod:`workbench.groundtruth.streamed`: only the stream's connection keys rewritten), and the model is compared
against the segments Pinot made. With ``--cluster processes`` (servers and an in-process broker on the ideal state the
model assigns, :func:`~workbench.groundtruth.cluster.run_cluster`) a REALTIME table is served as its OFFLINE twin, as
``workbench agree`` does, and ``measure.json`` says why. Each rate leaves what a real cluster would: the broker's
``querylog.log`` (which ``workbench calibrate`` reads), each server's query log (``schedulerWaitMs``, ``totalExecMs``)
and GC log, each segment's ZK metadata (as ``GET /segments/{table}/zkmetadata`` returns it), the per-query records and a
summary.

Where processes run matters to what the latencies mean. With at least one core per server plus one, each server is
pinned to a core of its own and the broker/load generator to the rest (``taskset``; other programs on the machine are
not excluded, the summary says so). Otherwise servers and broker share every core: those latencies include their
contention with each other, and the summary says they are for routing and counts, not a validation of latency.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from workbench.errors import InputError
from workbench.groundtruth.agreement import MEASURED_RULE, measured_agreement
from workbench.groundtruth.build import PinotRefused, ensure_built
from workbench.groundtruth.cluster import (
    JIT_GROUPS,
    ClusterRun,
    LoadSpec,
    allocate_servers,
    host_port,
    instance_name,
    run_cluster,
)
from workbench.groundtruth.helix_cluster import HelixTable, StreamTable, helix_cluster
from workbench.groundtruth.helix_load import run_helix_load
from workbench.groundtruth.scenario import ScenarioTable, scenario_table
from workbench.groundtruth.streamed import StreamedTable, pinot_segments, streamed_table
from workbench.groundtruth.throttle import cpu_cgroup_root, cpu_limit
from workbench.io import atomic_dir, check_output, write_json_atomic
from workbench.pinot.routing.adaptive import CONFIG_PREFIX as ADAPTIVE_PREFIX
from workbench.pinot.segment import SegmentMetadata
from workbench.scenario import Scenario
from workbench.workload.importers.gc_log import read_gc_log
from workbench.workload.importers.query_log import read_query_log

__all__ = ["CALIBRATE_TABLE_CONFIG", "CLUSTERS", "CLUSTER_PARTS", "DEFAULT_QUERIES", "DEFAULT_WARMUP",
           "MAX_SHARED_SERVERS", "PERCENTILES", "STREAMED", "STREAMS", "TWIN_WHY", "MeasuredFiles", "Placement",
           "broker_config", "measure", "measured_files", "placement", "rate_dir_name"]

#: The table config ``calibrate --measured`` reads (the scenario's own, of the type its segments' names say).
CALIBRATE_TABLE_CONFIG = "scenario_table_config.json"
#: Queries sent per rate by default (each rate's run lasts about this many over the rate, in seconds).
DEFAULT_QUERIES = 1000
#: Queries run one at a time before each rate's measured run (JIT, connections); neither recorded nor logged.
DEFAULT_WARMUP = 200
#: A server whose JIT compilers ran more than this share of its JVM's CPU in the measured run gets a ``jit_warning``
#: (Apache Pinot 1.5.1 on one core: 40% after 2,000 warm-up queries, 8-11% once the compilers had gone quiet).
JIT_NOTED_SHARE = 0.15
#: Server JVMs started when they must share cores (256 MB of heap each; more only adds contention).
MAX_SHARED_SERVERS = 4
#: The percentiles every summary reports, as labels and as numpy percents.
PERCENTILES = {"p50": 50.0, "p90": 90.0, "p99": 99.0, "p99.9": 99.9}
#: Pinot server settings of every measured server: Pinot's defaults, plus per-thread CPU time in each response
#: (as ``BaseServerStarter`` sets it from this key), so a slow query can be told from a descheduled one.
SERVER_CONFIG = {"pinot.server.instance.enableThreadCpuTimeMeasurement": "true"}
_SCHEDULER_WAIT = re.compile(r"requestId=(\d+),.*?schedulerWaitMs=(-?\d+),reqDeserMs=(-?\d+),totalExecMs=(-?\d+),"
                             r"resSerMs=(-?\d+),totalTimeMs=(-?\d+)")


@dataclass(frozen=True)
class Placement:
    """Where the JVMs run: ``servers`` started (of ``requested``), CPUs per server index (empty: unpinned),
    the broker's CPUs, whether each server has a core of its own, and the sentence the summaries carry."""

    requested: int
    servers: int
    server_cpus: tuple[tuple[int, ...], ...]
    broker_cpus: tuple[int, ...]
    dedicated: bool
    shares: str
    #: What an unpinned server JVM is told it has (``-XX:ActiveProcessorCount``): the scenario server's cores.
    server_processors: int | None = None


def placement(requested: int, cpus: Sequence[int]) -> Placement:
    """One core per server and the rest for the broker when ``cpus`` allows (``len(cpus) >= requested + 1``);
    else at most :data:`MAX_SHARED_SERVERS` servers, unpinned, sharing every core with the broker.

    >>> placement(1, [0, 1]).shares.split(";")[0]
    'each server on a core of its own (server 0: cpu 1)'
    >>> placement(6, [0, 1]).servers
    4
    """
    cores = sorted(cpus)
    if requested + 1 <= len(cores):
        mine = tuple((c,) for c in cores[len(cores) - requested:])
        broker = tuple(cores[:len(cores) - requested])
        where = ", ".join(f"server {i}: cpu {c[0]}" for i, c in enumerate(mine))
        return Placement(requested, requested, mine, broker, True,
                         f"each server on a core of its own ({where}); the broker and load generator on cpus "
                         f"{','.join(map(str, broker))}; other programs on this machine are not excluded")
    count = min(requested, MAX_SHARED_SERVERS)
    capped = (f"; {count} of the scenario's {requested} servers started (at most {MAX_SHARED_SERVERS} when cores are "
              "shared)") if count < requested else ""
    return Placement(requested, count, tuple(() for _ in range(count)), (), False,
                     f"{count} server(s), the broker and the load generator share all {len(cores)} cores: latencies "
                     "include their contention with each other; use them for routing and counts, not as a "
                     f"validation of latency{capped}")


def rate_dir_name(rate: float) -> str:
    """The directory of one rate's files: ``rate-20`` for 20 queries/s, ``rate-2.5`` for 2.5."""
    return f"rate-{rate:g}"


def _percentiles(values: pd.Series) -> dict[str, float | None]:
    v = pd.to_numeric(values, errors="coerce").dropna().to_numpy(dtype=float)
    return {k: (round(float(np.percentile(v, q)), 3) if len(v) else None) for k, q in PERCENTILES.items()}


def _flat(records: pd.DataFrame) -> pd.DataFrame:
    """The records as flat columns (Parquet-friendly): per-server details as JSON text, exceptions joined."""
    frame = records.copy()
    servers = frame.get("servers", pd.Series([[]] * len(frame), index=frame.index))
    frame["maxServerThreadCpuTimeNs"] = servers.map(lambda ss: max((s.get("threadCpuTimeNs", -1) for s in ss),
                                                                   default=-1))
    frame["servers"] = servers.map(lambda ss: json.dumps(list(ss), default=str))
    frame["exceptions"] = frame["exceptions"].map(lambda e: "; ".join(e))
    if "rows" in frame:
        frame["rows"] = frame["rows"].map(lambda r: json.dumps(r, default=str) if isinstance(r, list) else None)
    return frame


def _server_log(path: Path, measured: set[int]) -> pd.DataFrame:
    """``requestId, schedulerWaitMs, reqDeserMs, totalExecMs, resSerMs, totalTimeMs`` of each measured query in a
    server's query log (``ServerQueryLogger``'s ``Processed requestId=...`` lines)."""
    rows = [tuple(int(g) for g in m.groups()) for line in path.read_text(errors="replace").splitlines()
            if (m := _SCHEDULER_WAIT.search(line)) is not None and int(m.group(1)) in measured]
    return pd.DataFrame(rows, columns=["requestId", "schedulerWaitMs", "reqDeserMs", "totalExecMs", "resSerMs",
                                       "totalTimeMs"])


def _gc(path: Path, span_ms: tuple[float, float] | None) -> dict[str, Any]:
    """A JVM's GC pauses: their count, total and longest, over the measured run (``span_ms``: its start and end on
    the epoch clock) where the log's lines carry wall-clock times, else over the whole log (the JVM's start-up and
    the warm-up included), saying which."""
    pauses = read_gc_log(path).frame
    span = "whole log"
    if span_ms is not None and "wallclock_s" in pauses:
        wall = pd.to_numeric(pauses["wallclock_s"], errors="coerce") * 1000.0
        if wall.notna().all():
            pauses, span = pauses[(wall >= span_ms[0]) & (wall <= span_ms[1])], "measured run"
    duration = pd.to_numeric(pauses["duration_ms"], errors="coerce").fillna(0.0)
    return {"pauses": len(pauses), "total_ms": round(float(duration.sum()), 3),
            "max_ms": round(float(duration.max()), 3) if len(pauses) else 0.0, "span": span}


def _jit_share(run: ClusterRun, server: str) -> float | None:
    """The share of a server JVM's CPU in the measured run that its JIT compilers ran (``None``: it ran none)."""
    cpu = run.schedstat[server][0]
    return sum(run.threads.get(server, {}).get(g, 0.0) for g in JIT_GROUPS) / cpu if cpu > 0 else None


def _routed(records: pd.DataFrame) -> dict[str, dict[str, float]]:
    """Per server instance: the measured queries the broker sent a request to it, and their share of all."""
    counts: dict[str, int] = {}
    lists: list[list[dict[str, Any]]] = list(records["servers"]) if "servers" in records else []
    for servers in lists:
        for name in {s["instance"] for s in servers}:
            counts[name] = counts.get(name, 0) + 1
    return {k: {"queries": v, "share": round(v / max(len(records), 1), 4)} for k, v in sorted(counts.items())}


def _summary(run: ClusterRun, rate: float, sent_wanted: int, directory: Path, where: Placement,
             cpus: Mapping[str, Sequence[int]], slow: Mapping[str, tuple[str, float]]) -> dict[str, Any]:
    records = run.records
    failed = records["exceptions"].map(len) > 0
    timed_out = records.get("timedOut", pd.Series(False, index=records.index)).map(lambda v: v is True)
    done = dict(kv.split("=", 1) for kv in run.summary.split()[1:] if "=" in kv)
    errors = {"queries_with_exceptions": int(failed.sum()), "timed_out": int(timed_out.sum()),
              "examples": sorted({e for es in records.loc[failed, "exceptions"] for e in es})[:5]}
    log = read_query_log(directory / "broker-querylog.log").frame
    measured = set(int(r) for r in records["requestId"])
    per_server = {p.name.removeprefix("server-").removesuffix("-querylog.log"): _server_log(p, measured)
                  for p in sorted(directory.glob("server-*-querylog.log"))}
    server_logs = pd.concat(list(per_server.values()), ignore_index=True)
    arrivals = records["arrivalS"].to_numpy(dtype=float)
    doc: dict[str, Any] = {}
    span = ((float(done["startEpochMs"]), float(done["startEpochMs"]) + float(done["wallMs"]))
            if "startEpochMs" in done and "wallMs" in done else None)
    jit_share = {s: _jit_share(run, s) for s in run.schedstat}
    jit = max(((share, s) for s, share in jit_share.items() if share is not None), default=(0.0, ""))
    if jit[0] > JIT_NOTED_SHARE:
        doc["jit_warning"] = (f"{instance_name(jit[1])}'s JIT compilers ran {jit[0]:.0%} of its JVM's CPU in the "
                              "measured run: these are a warming server's latencies; measure with --jit-settle 120 "
                              "(the warm-up goes on until the compilers are quiet) for a running server's")
    if failed.any() or timed_out.any():
        doc["warning"] = (f"{int(failed.sum())} of {len(records)} queries failed ({int(timed_out.sum())} timed out): "
                          "the percentiles below include them")
    doc.update({
        "rate_per_s": rate, "queries_wanted": sent_wanted, "queries_sent": int(done.get("sent", len(records))),
        "queries_recorded": len(records), "errors": errors,
        "achieved_rate_per_s": round(len(arrivals) / float(arrivals.max()), 3) if len(arrivals) > 1 else None,
        "client_latency_ms": _percentiles(records["sinceArrivalMs"]),
        "broker_time_ms": _percentiles(log["time_ms"]),
        "broker_log_lines": len(log),
        "slowest_server_time_used_ms": _percentiles(records["maxServerTimeUsedMs"].where(
            records["maxServerTimeUsedMs"] >= 0)),
        "server_query_log": {
            "lines": len(server_logs),
            "scheduler_wait_ms": _percentiles(server_logs["schedulerWaitMs"]),
            "total_exec_ms": _percentiles(server_logs["totalExecMs"]),
            "total_time_ms": _percentiles(server_logs["totalTimeMs"]),
            "per_server": {name: {"lines": len(f), "scheduler_wait_ms": _percentiles(f["schedulerWaitMs"]),
                                  "total_exec_ms": _percentiles(f["totalExecMs"])} for name, f in per_server.items()},
        },
        "routed": _routed(records),
        # The scenario's slow servers as run here: the instance, its factor and the CPU limit of its cgroup.
        "slow": {instance_name(hp): {"scenario_server": name, **cpu_limit(factor).to_json()}
                 for hp, (name, factor) in slow.items()},
        "gc": {p.name: _gc(p, span) for p in sorted(directory.glob("gc-*.log"))},
        # Over the measured run (the warm-up and its JIT left out): what each server's JVM ran on a CPU per query,
        # how long its threads were ready but waiting for one (another process on its core, or its own threads),
        # and per group of its threads (pqr/pqw: the query's; nioEventLoopGroup: Netty; GC, JIT...) their CPU.
        "server_cpu": {instance_name(s): {"cpu_ms_per_query": round(cpu / len(records), 4),
                                          "run_queue_wait_ms_per_query": round(wait / len(records), 4),
                                          "jit_share": (round(share, 4) if (share := jit_share[s]) is not None
                                                        else None),
                                          "threads_ms_per_query": {g: round(ms / len(records), 4)
                                                                   for g, ms in run.threads.get(s, {}).items()}}
                       for s, (cpu, wait) in run.schedstat.items()},
        "warmup": run.warmup.to_json(),
        # each CPU's time over the measured run by state (/proc/stat): what ran on a server's core besides its JVM
        # (the network's softirq; a VM's steal), and how busy the load generator's core was
        "cpu_use": dict(run.cpu_use),
        "load_generator": {"max_dispatch_lag_ms": float(done["maxDispatchLagMs"]) if "maxDispatchLagMs" in done
                           else None,
                           "max_wait_for_worker_ms": round(float((records["startLagMs"]
                                                                  - records["dispatchLagMs"]).max()), 3),
                           # its JVM's CPU over the measured run (with --cluster processes the broker's routing,
                           # reduce and query log run in it too), and how many cores' worth that was
                           **({"cpu_ms_per_query": round(float(done["cpuMs"]) / len(records), 4),
                               "cores_busy": round(float(done["cpuMs"]) / float(done["wallMs"]), 3)}
                              if float(done.get("cpuMs", -1)) >= 0 and float(done.get("wallMs", 0)) > 0 else {})},
        "routing": run.routing.removeprefix("ROUTING "),
        "servers": [instance_name(s) for s in run.servers],
        "placement": where.shares, "cpus": {k: list(v) for k, v in cpus.items()},
        "latency_is_validation": where.dedicated,
    })
    return doc


def broker_config(config: Mapping[str, Any]) -> dict[str, str]:
    """The scenario's broker properties (``broker.config``) the measured broker takes: Adaptive Server Selection's
    (``pinot.broker.adaptive.server.selector.*``, the keys of Pinot 1.5.1's ``CommonConstants.Broker.
    AdaptiveServerSelector``; the broker builds its stats manager and selector from them as ``BaseBrokerStarter``
    does).

    >>> broker_config({"pinot.broker.timeoutMs": 500, "pinot.broker.adaptive.server.selector.type": "HYBRID",
    ...                "pinot.broker.adaptive.server.selector.enable.stats.collection": True})
    {'pinot.broker.adaptive.server.selector.type': 'HYBRID', \
'pinot.broker.adaptive.server.selector.enable.stats.collection': 'true'}
    """
    return {str(k): (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in config.items()
            if str(k).startswith(ADAPTIVE_PREFIX + ".")}


@dataclass(frozen=True)
class _Served:
    """One rate's run as served by either kind of cluster: the run (with the ideal state routed on and each segment's
    ZK metadata), the CPUs each JVM was pinned to, the slow servers (``host:port`` -> scenario name and factor), and
    the table config and schema Pinot served. A streamed table's run also carries Pinot's segments with their rows
    and the model's metadata of the CONSUMING ones (:func:`~workbench.groundtruth.streamed.pinot_segments`), which the
    model is compared against instead of the workload's, and the events Kafka took per partition."""

    run: ClusterRun
    cpus: dict[str, Sequence[int]]
    slowed: dict[str, tuple[str, float]]
    table_config: dict[str, Any]
    schema: dict[str, Any]
    segments: Mapping[str, pd.DataFrame] | None = None
    consuming: Mapping[str, SegmentMetadata] | None = None
    produced: Mapping[int, int] | None = None


def _processes_rate(st: ScenarioTable, where: Placement, load: LoadSpec, directory: Path, slow: Mapping[str, float],
                    broker: Mapping[str, str], stream: StreamedTable | None = None) -> _Served:
    """The rate on Pinot's query path across processes: servers and an in-process broker, the ideal state the model
    assigns (:meth:`~workbench.groundtruth.scenario.ScenarioTable.ideal_state`). Never streamed (``stream`` is
    ``None``): no controller commits segments here."""
    servers = allocate_servers(where.servers)
    # The scenario's Server_i is the i-th server started (the ideal state is assigned over them in that order).
    slowed = {servers[int(name.removeprefix("Server_"))]: (name, factor) for name, factor in slow.items()}
    ideal = st.ideal_state(tuple(instance_name(s) for s in servers))
    cpus: dict[str, Sequence[int]] = {s: c for s, c in zip(servers, where.server_cpus, strict=True) if c}
    if where.broker_cpus:
        cpus["broker"] = where.broker_cpus
    run = run_cluster(st.config, st.schema, st.segments, st.sql, load, ideal_state=ideal,
                      scheduler_config=SERVER_CONFIG, logs_dir=directory, gc_logs=True, cpus=cpus,
                      slow={hp: factor for hp, (_, factor) in slowed.items()}, broker_config=broker)
    return _Served(run, cpus, slowed, dict(st.config), dict(st.schema))


def _helix_rate(st: ScenarioTable, where: Placement, load: LoadSpec, directory: Path, slow: Mapping[str, float],
                broker: Mapping[str, str], stream: StreamedTable | None = None) -> _Served:
    """The rate on a whole Helix cluster (:func:`~workbench.groundtruth.helix_cluster.helix_cluster`): the table
    created and its segments uploaded through the real controller, which assigns them, or with ``stream`` the
    REALTIME table created and its events streamed through Kafka, Pinot cutting and committing its own segments;
    queries through the real broker's HTTP API (:func:`~workbench.groundtruth.helix_load.run_helix_load`). The ideal
    state, each segment's ZK metadata, the table config and the schema are what the controller's REST API returns."""
    table: HelixTable | StreamTable = HelixTable(st.config, st.schema, st.segments) if stream is None else stream.stream
    kind = "OFFLINE" if stream is None else "REALTIME"
    raw = table.raw
    config = {**broker, "pinot.broker.timeoutMs": str(load.timeout_ms)}
    with tempfile.TemporaryDirectory(prefix="workbench-measure-") as tmp, \
            helix_cluster(table, num_servers=where.servers, logs_dir=directory,
                          work_dir=tmp, server_config=SERVER_CONFIG, broker_config=config,
                          server_cpus=where.server_cpus, broker_cpus=where.broker_cpus,
                          server_processors=where.server_processors) as cluster:
        by_index = dict(enumerate(cluster.servers))
        run = run_helix_load(cluster, st.sql, load, Path(tmp), cpus=where.broker_cpus,
                             slow={by_index[int(n.removeprefix("Server_"))]: f for n, f in slow.items()})
        ideal = cluster.ideal_state(raw, kind)
        zk = {name: {str(k): str(v) for k, v in fields.items()}
              for name, fields in cluster.get(f"/segments/{raw}/zkmetadata?type={kind}").items()}
        served = cluster.get(f"/tables/{raw}?type={kind}")[kind]
        schema = cluster.get(f"/schemas/{st.schema['schemaName']}")
        produced = dict(cluster.produced.get(raw, {}))
    write_json_atomic(directory / "ideal_state.json", ideal)
    write_json_atomic(directory / "zk_metadata.json", zk)
    hosts = {name: host_port(name) for name in cluster.servers}
    cpus: dict[str, Sequence[int]] = {hosts[n]: c for n, c in zip(cluster.servers, where.server_cpus, strict=True)
                                      if c}
    if where.broker_cpus:
        cpus["broker"] = where.broker_cpus
    slowed = {hosts[by_index[int(n.removeprefix("Server_"))]]: (n, f) for n, f in slow.items()}
    run = dataclasses.replace(run, ideal_state=ideal, zk_metadata=zk)
    if stream is None:
        return _Served(run, cpus, slowed, served, schema)
    segments, consuming = pinot_segments(stream, zk)
    return _Served(run, cpus, slowed, served, schema, segments, consuming, produced)


#: How ``measure`` runs Pinot (``--cluster``): ``helix``, a whole cluster (ZooKeeper, Pinot's controller and broker,
#: servers joined through Helix; queries over the broker's HTTP API); ``processes``, Pinot's query path across
#: server JVMs with the broker's scatter-gather in the load generator's JVM (no controller, no HTTP front end).
CLUSTERS: dict[str, Callable[[ScenarioTable, Placement, LoadSpec, Path, Mapping[str, float], Mapping[str, str],
                              StreamedTable | None], _Served]] = {"helix": _helix_rate, "processes": _processes_rate}
#: Which kinds of cluster stream a REALTIME table through Kafka (the others serve its OFFLINE twin).
STREAMS = {"helix": True, "processes": False}
#: ``checked_as`` of a streamed REALTIME table, and why a REALTIME table was served as its twin instead.
STREAMED = ("REALTIME, streamed: the workload's events through Kafka (KRaft) into Pinot's servers, which built the "
            "consuming and completed segments by the table's own flush thresholds")
TWIN_WHY = ("--cluster processes has no controller to commit segments and no stream consumer; --cluster helix streams "
            "a REALTIME table")
#: How each streamed rate's ``agreement.json`` says what the model was compared against.
STREAMED_RULE = ("the model on Pinot's own segments (each LLC segment's rows: its partition's events from its ZK "
                 "startOffset to its endOffset, to the end while CONSUMING), not the workload's, which Pinot may cut "
                 "differently; ")
#: What each kind of cluster runs of Pinot, said in ``measure.json``.
CLUSTER_PARTS = {
    "helix": "ZooKeeper, Pinot's ControllerStarter and HelixBrokerStarter (multi-stage engine off), servers with "
             "Pinot's single-stage query path joined to Helix as participants (pinot-server is not served by Maven "
             "Central as reached here); queries over the broker's POST /query/sql",
    "processes": "servers with Pinot's single-stage query path; the broker's routing, QueryRouter, reduce and query "
                 "log in the load generator's JVM, on the ideal state the model assigns; no controller, no HTTP",
}


def _one_rate(st: ScenarioTable, where: Placement, rate: float, queries: int, warmup: int, seed: int,
              timeout_ms: int, directory: Path, pinot_version: str, slow: Mapping[str, float],
              broker: Mapping[str, str], cluster: str, stream: StreamedTable | None,
              arrivals: tuple[float, ...] | None = None, duration_s: float | None = None, jit_settle_s: float = 0.0
              ) -> tuple[dict[str, Any], _Served]:
    directory.mkdir(parents=True)
    load = LoadSpec(rate_per_s=rate, num_queries=queries, seed=seed, timeout_ms=timeout_ms, warmup_queries=warmup,
                    arrivals_s=arrivals, duration_s=duration_s, settle_s=jit_settle_s)
    served = CLUSTERS[cluster](st, where, load, directory, slow, broker, stream)
    run = served.run
    flat = _flat(run.records)
    flat.to_parquet(directory / "records.parquet", index=False)
    summary = _summary(run, rate, queries, directory, where, served.cpus, served.slowed)
    if stream is None or served.segments is None:
        agreed = measured_agreement(st.config, st.schema, st.segments, run.ideal_state, run.zk_metadata, flat,
                                    pinot_version)
        compared, checked_as = MEASURED_RULE, st.checked_as
    else:
        agreed = measured_agreement(stream.stream.config, st.schema, served.segments, run.ideal_state,
                                    run.zk_metadata, flat, pinot_version, served.consuming)
        compared, checked_as = STREAMED_RULE + MEASURED_RULE, STREAMED
        summary["produced"] = {str(p): n for p, n in sorted((served.produced or {}).items())}
    write_json_atomic(directory / "agreement.json", {**agreed.to_json(), "compared": compared,
                                                     "checked_as": checked_as})
    summary["agreement"] = {"queries": agreed.queries, "agreed": agreed.agreed, "file": "agreement.json"}
    write_json_atomic(directory / "summary.json", summary)
    return summary, served


def measure(sc: Scenario, out: str | Path, *, data: Path, rates: Sequence[float], queries: int = DEFAULT_QUERIES,
            warmup: int = DEFAULT_WARMUP, seed: int = 0, timeout_ms: int | None = None, overwrite: bool = False,
            progress: Callable[[float, Mapping[str, Any]], None] | None = None,
            slow: Mapping[str, float] | None = None, cluster: str = "helix", replay: bool = False,
            duration_s: float | None = None, jit_settle_s: float = 0.0) -> dict[str, Any]:
    """Measure the scenario's table on Pinot at each open-loop ``rate`` (queries/s); write ``out``; return
    ``measure.json``'s document.

    Before each rate, ``warmup`` queries run one at a time; with ``jit_settle_s`` the warm-up goes on at the rate
    itself, open-loop, up to that many seconds more, until the servers' JIT compilers are quiet
    (:func:`~workbench.groundtruth.cluster.after_warmup`), so the measured run is a running server's and not a
    warming one's (queries in flight together run code that one at a time never does). Each rate's summary says
    how the warm-up ended (``warmup``) and what each server's threads ran per query in the measured run
    (``server_cpu.threads_ms_per_query``: the query's own ``pqr``/``pqw``, Netty, GC, the JIT's compilers).

    ``replay`` sends the workload's first ``queries`` queries at their own arrival times (relative to the first)
    instead of Poisson arrivals at ``rates``; its directory is named by the replay's mean rate. ``duration_s`` ends a
    run's arrivals after that many seconds.

    ``cluster`` is how Pinot runs (:data:`CLUSTERS`): ``helix`` (the default), a whole cluster with Pinot's controller
    and broker, whose assignment, routing and query log are Pinot's own; ``processes``, the servers with the broker's
    scatter-gather in the load generator's JVM (a second opinion without the HTTP front end and controller).

    A REALTIME table on ``helix`` is streamed (:data:`STREAMS`): the user's config with only its stream connection
    keys pointed at a local Kafka (KRaft) broker, the workload's events produced in arrival order to their workload
    partitions, Pinot's servers consuming them and committing segments by the table's own flush thresholds; the load
    starts once every event is queryable and no segment is due to commit. ``measure.json`` says ``checked_as``
    :data:`STREAMED` and what was streamed (``streamed``: topic, partitions, key, events, the keys rewritten); each
    rate's ``agreement.json`` compares the model on Pinot's own segments (rows by their ZK offsets) and its
    ``summary.json`` has the events Kafka took per partition (``produced``). On ``processes`` a REALTIME table is its
    OFFLINE twin (``not_streamed_because``).

    ``slow`` makes scenario servers (``Server_1``: the second started) that many times slower, as the model's
    ``cluster.failures.slow`` does: from the end of the warm-up, each one's JVM runs limited to ``1/factor`` of one core
    (:mod:`workbench.groundtruth.throttle`: root and the cgroup v1 cpu controller, refused before anything runs
    where missing); ``measure.json`` records the factors and each rate's ``summary.json`` the instance slowed and its
    CPU limit, beside the share of queries routed to each server (``routed``).

    ``out`` gets ``measure.json`` (the placement, Pinot's version, the scenario's table type, one summary per rate),
    ``table_config.json`` (what Pinot served), ``scenario_table_config.json`` (the scenario's own, which
    ``workbench calibrate --measured`` reads), ``schema.json`` and ``segments.json`` (each segment's ZK metadata, of
    the last rate, for ``workbench calibrate --segments``), and per rate ``rate-<qps>/``: ``broker-querylog.log``,
    ``server-<host>-<port>-querylog.log``, ``gc-*.log``, ``records.parquet``, ``summary.json``, ``agreement.json``
    (the model against the recorded queries, :func:`~workbench.groundtruth.agreement.measured_agreement`),
    ``ideal_state.json``, ``zk_metadata.json`` and each JVM's console log (Kafka's and the producer's too).
    Written whole or not at all; every JVM is stopped on return, error or Ctrl-C.
    """
    if replay and rates:
        raise InputError("--replay", "replays the workload's own arrival times: give it without --rate")
    if not rates and not replay:
        raise InputError("--rate", "give at least one open-loop rate in queries per second, e.g. --rate 20, or "
                                   "--replay for the workload's own arrival times")
    if duration_s is not None and not (math.isfinite(duration_s) and duration_s > 0):
        raise InputError("--duration", f"a run's length is a positive number of seconds, got {duration_s!r}")
    for rate in rates:
        if not (isinstance(rate, int | float) and math.isfinite(rate) and rate > 0):
            raise InputError("--rate", f"a rate is a positive number of queries per second, got {rate!r}")
    if len({rate_dir_name(r) for r in rates}) != len(rates):
        raise InputError("--rate", f"each rate once, got {list(rates)}")
    if queries < 1:
        raise InputError("--queries", f"must be at least 1, got {queries}")
    if warmup < 0:
        raise InputError("--warmup", f"must be 0 or more, got {warmup}")
    if not (math.isfinite(jit_settle_s) and jit_settle_s >= 0):
        raise InputError("--jit-settle", f"the most seconds of warm-up for the JIT is 0 or more, got {jit_settle_s!r}")
    if cluster not in CLUSTERS:
        raise InputError("--cluster", f"{cluster!r} is not a kind of cluster measure runs: {', '.join(CLUSTERS)}")
    check_output(out, overwrite=overwrite)
    st = scenario_table(sc, data, max(queries, 1))
    realtime = sc.table.table_type == "REALTIME"
    stream = streamed_table(sc, data, st.schema) if realtime and STREAMS[cluster] else None
    if stream is None and not st.segments:
        raise InputError(str(data), "holds no completed segment with rows to serve: generate the workload "
                                    "(`workbench generate`) or import one with its rows")
    if not st.sql:
        raise InputError(str(data), "holds no queries to send (queries.parquet is empty)")
    where = dataclasses.replace(placement(sc.cluster.servers, sorted(os.sched_getaffinity(0))),
                                server_processors=sc.cluster.server.cores)
    if st.table.replication > where.servers:
        raise InputError("table.segmentsConfig.replication",
                         f"{st.table.replication} replicas need as many servers, and at most {where.servers} can be "
                         f"started here ({where.shares})")
    slow = _check_slow(slow or {}, where)
    arrivals = st.arrival_s if replay else None
    if arrivals is not None:
        span = max(arrivals, default=0.0)
        if len(arrivals) < 2 or span <= 0:
            raise InputError(str(data), "its queries all arrive at once: a replay needs at least two arrival times")
        rates = [round((len(arrivals) - 1) / span, 1) or 0.1]
    jars = ensure_built()
    timeout = int(timeout_ms if timeout_ms is not None else st.table.query_timeout_ms or 10_000)
    with atomic_dir(Path(out), overwrite=overwrite) as tmp:
        summaries: dict[str, Any] = {}
        zk: dict[str, Any] = {}
        for rate in rates:
            directory = tmp / rate_dir_name(rate)
            try:
                summary, served = _one_rate(st, where, float(rate), queries, warmup, seed, timeout, directory,
                                            jars.version, slow, broker_config(sc.cluster.broker.config), cluster,
                                            stream, arrivals, duration_s, jit_settle_s)
            except PinotRefused as exc:
                raise InputError("table", f"{exc.what} (Apache Pinot {jars.version}): {exc.pinot_message}; fix the "
                                          "scenario's table config or schema (the file its `table:` names) and "
                                          "measure again") from None
            summaries[rate_dir_name(rate)] = summary
            zk = dict(served.run.zk_metadata)
            if progress is not None:
                progress(float(rate), summary)
        document = {"pinot_version": jars.version, "cluster": cluster, "pinot_parts": CLUSTER_PARTS[cluster],
                    "table": st.config["tableName"] if stream is None else stream.stream.config["tableName"],
                    "checked_as": st.checked_as if stream is None else STREAMED,
                    **({"streamed": stream.to_json()} if stream is not None else {}),
                    **({"not_streamed_because": TWIN_WHY} if realtime and stream is None else {}),
                    "table_type": sc.table.table_type, "calibrate_table_config": CALIBRATE_TABLE_CONFIG,
                    "segments": len(zk), "queries_in_rotation": len(st.sql),
                    "servers_requested": where.requested, "servers_started": where.servers,
                    "placement": where.shares, "latency_is_validation": where.dedicated,
                    "server_processors": (where.server_processors if cluster == "helix" and not where.dedicated
                                          else None),
                    "arrivals": ("the workload's own arrival times (replayed; the rate in the directory's name is "
                                 "the replay's mean)" if replay else "Poisson at each rate, from the seed"),
                    "duration_s": duration_s,
                    "warmup_queries": warmup, "jit_settle_s": jit_settle_s, "seed": seed, "timeout_ms": timeout,
                    "slow": {name: cpu_limit(factor).to_json() for name, factor in slow.items()},
                    "broker_config": broker_config(sc.cluster.broker.config), "rates": summaries}
        write_json_atomic(tmp / "measure.json", document)
        write_json_atomic(tmp / "table_config.json", served.table_config)
        # The scenario's own config: a REALTIME table's segments keep their LLC names, which the segment importer
        # reads as REALTIME, so calibrating them needs the REALTIME config (the OFFLINE twin is what Pinot served).
        write_json_atomic(tmp / CALIBRATE_TABLE_CONFIG, sc.table.to_json())
        write_json_atomic(tmp / "schema.json", served.schema)
        write_json_atomic(tmp / "segments.json", zk)
    return document


def _check_slow(slow: Mapping[str, float], where: Placement) -> dict[str, float]:
    """``slow`` as ``{Server_i: factor}`` after checking each name is a started server and each factor a CPU limit
    can make, and that this machine can limit CPU (:func:`~workbench.groundtruth.throttle.cpu_cgroup_root`)."""
    names = [f"Server_{i}" for i in range(where.servers)]
    for name, factor in slow.items():
        if name not in names:
            raise InputError("--slow", f"{name!r} is not a server measured here: {', '.join(names)} are "
                                       f"({where.shares})")
        cpu_limit(factor)
    if slow:
        cpu_cgroup_root()
    return {k: float(v) for k, v in slow.items()}


@dataclass(frozen=True)
class MeasuredFiles:
    """What ``workbench calibrate --measured DIR`` reads of a ``measure`` directory: one rate's broker log and
    server GC logs, and the table's files (the table config of the type the segments' names say)."""

    directory: Path
    rate: str
    table_config: Path
    schema: Path
    segments: Path
    query_log: Path
    gc_logs: tuple[Path, ...]
    #: The measured table's name (``measure.json``'s ``table``; ``None`` from an older workbench's directory).
    table: str | None = None
    #: The Pinot release measured (``pinot_version``).
    pinot_version: str | None = None
    #: Each server JVM's cores in the calibrated rate's run, and how that is known (``None``: not known): the CPUs
    #: it was pinned to, or, unpinned, the processor count it was told (``server_processors``).
    server_cores: int | None = None
    server_cores_from: str | None = None


def _server_cores(document: Mapping[str, Any], rate: str) -> tuple[int | None, str | None]:
    """Each server's cores in ``rate``'s run of a ``measure.json`` ``document``, and where that was read.

    >>> _server_cores({"rates": {"rate-5": {"cpus": {"127.0.0.2:1": [1], "broker": [0]}}}}, "rate-5")
    (1, 'measure.json: each server JVM pinned to 1 cpu')
    >>> _server_cores({"server_processors": 4, "rates": {"rate-5": {"cpus": {"127.0.0.2:1": [], "broker": []}}}},
    ...               "rate-5")
    (4, 'measure.json: each server JVM unpinned and told it has 4 processors (server_processors)')
    >>> _server_cores({"rates": {"rate-5": {"cpus": {"127.0.0.2:1": [], "broker": []}}}}, "rate-5")
    (None, None)
    """
    cpus = document.get("rates", {}).get(rate, {}).get("cpus", {})
    pinned = [len(v) for k, v in cpus.items() if k != "broker" and v]
    if pinned and len(pinned) == len([k for k in cpus if k != "broker"]):
        cores = min(pinned)
        return cores, f"measure.json: each server JVM pinned to {cores} cpu{'s' if cores > 1 else ''}"
    told = document.get("server_processors")
    if isinstance(told, int) and told > 0:
        return told, f"measure.json: each server JVM unpinned and told it has {told} processors (server_processors)"
    return None, None


def _rates(directory: Path, document: Mapping[str, Any]) -> dict[str, float]:
    names = [str(k) for k in document.get("rates", {})] or [p.name for p in directory.glob("rate-*") if p.is_dir()]
    out = {}
    for name in names:
        try:
            out[name] = float(name.removeprefix("rate-"))
        except ValueError:
            continue
    return dict(sorted(out.items(), key=lambda kv: kv[1]))


def measured_files(directory: str | Path, rate: float | None = None) -> MeasuredFiles:
    """The files of ``directory`` (``workbench measure``'s output) that calibrate one rate (the lowest by default).

    Raises
    ------
    InputError
        Naming the directory and the missing file when it is not a ``measure`` directory, or the rates it holds
        when ``rate`` is none of them.
    """
    root = Path(directory)
    what = "is not a `workbench measure` directory: it has no {}; give --measured the --out of `workbench measure`"
    if not (root / "measure.json").is_file():
        raise InputError(f"--measured {root}", what.format("measure.json"))
    try:
        document = json.loads((root / "measure.json").read_text())
    except (OSError, ValueError) as e:
        raise InputError(f"--measured {root}", f"its measure.json cannot be read ({e}): measure again") from None
    rates = _rates(root, document)
    if not rates:
        raise InputError(f"--measured {root}", what.format("rate-<qps>/ directory"))
    if rate is None:
        chosen = next(iter(rates))
    else:
        chosen = rate_dir_name(rate)
        if chosen not in rates:
            raise InputError("--rate", f"{rate:g} is not a rate measured in {root}: it has "
                                       f"{', '.join(f'{v:g}' for v in rates.values())}")
    config_name = str(document.get("calibrate_table_config", ""))
    if not config_name:
        if str(document.get("checked_as", "OFFLINE")) != "OFFLINE":
            raise InputError(f"--measured {root}", f"was measured as the OFFLINE twin of a {document.get('checked_as')}"
                                                   " by an older workbench and has no scenario table config: its "
                                                   "segments' LLC names need the REALTIME config; give it with "
                                                   "--table-config, or measure again")
        config_name = "table_config.json"
    rate_dir = root / chosen
    files = {"table config": root / config_name, "schema": root / "schema.json", "segments": root / "segments.json",
             "broker query log": rate_dir / "broker-querylog.log"}
    for label, path in files.items():
        if not path.is_file():
            raise InputError(f"--measured {root}", f"{what.format(path.relative_to(root))} (the {label})")
    cores, cores_from = _server_cores(document, chosen)
    return MeasuredFiles(root, chosen, files["table config"], files["schema"], files["segments"],
                         files["broker query log"], tuple(sorted(rate_dir.glob("gc-server-*.log"))),
                         str(document["table"]) if document.get("table") else None,
                         str(document["pinot_version"]) if document.get("pinot_version") else None,
                         cores, cores_from)
