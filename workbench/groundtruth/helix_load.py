"""The open-loop load against a running Helix cluster's real broker, as one run's records.

:func:`run_helix_load` starts ``workbench.cluster.HttpLoad`` (the same Poisson schedule and query rotation as the
in-process broker's ``LoadGenerator``: ``workbench.cluster.OpenLoop``), which sends each query to the broker's
``POST /query/sql`` and records the broker's JSON response. What the response does not carry, which servers a query
went to, is read from the broker's own query log: its ``serverStats`` names each server queried by host (Pinot's
``ServerRoutingInstance.getShortName``: the host without the port, hence one loopback address per server) with
``SubmitDelayMs,ResponseDelayMs,ResponseSize,DeserializationTimeMs,RequestSentDelayMs``.

The result is a :class:`~workbench.groundtruth.cluster.ClusterRun` with the columns ``measure``'s in-process runs have
where Pinot's broker says them (per-server ``timeUsedMs`` and thread CPU are not in a broker response: those stay
unknown), so the summary, the records file and the agreement are computed the same way for both.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.groundtruth.build import ensure_built
from workbench.groundtruth.cluster import (
    ClusterRun,
    LoadSpec,
    Processes,
    after_warmup,
    host_port,
    java_command,
    measured_use,
    run_to_end,
    write_queries,
)
from workbench.groundtruth.helix_cluster import HelixCluster

__all__ = ["HELIX_ROUTING", "QUERY_LOG", "broker_server_stats", "keep_measured_lines", "run_helix_load",
           "sequential_records"]

#: The broker's query log file in the logs directory (``java_command``'s ``<log name>-querylog.log``).
QUERY_LOG = "broker-querylog.log"
#: Where routing was decided, said in each run's summary (the in-process broker prints its pruners and selector).
HELIX_ROUTING = "Pinot's HelixBrokerStarter: BrokerRoutingManager on the controller's ideal state and external view"
#: The order of a server's numbers in the broker log's ``serverStats`` (Pinot's ``ServerResponse.toString``).
SERVER_STAT_FIELDS = ("submitDelayMs", "responseDelayMs", "responseSize", "deserializationTimeMs",
                      "requestSentDelayMs")
_REQUEST_ID = re.compile(r"requestId=(\d+),")
_SERVER_STATS = re.compile(r"serverStats=\(Server=[^)]*\)((?:;[^;=,]+=-?\d+(?:,-?\d+)*)*)")


def broker_server_stats(line: str, instances: Mapping[str, str]) -> list[dict[str, Any]]:
    """The servers one broker query-log line says were queried, each as ``{"instance", "responded", ...}`` with
    :data:`SERVER_STAT_FIELDS`; ``instances`` maps a server's host to its instance id. A negative response delay
    is Pinot's mark of a server that did not respond.

    >>> line = ("requestId=7,table=t_OFFLINE,timeMs=3,serverStats=(Server=SubmitDelayMs,ResponseDelayMs,"
    ...         "ResponseSize,DeserializationTimeMs,RequestSentDelayMs);127.0.0.2_O=0,2,91,0,0;127.0.0.3_O=0,-1,0,0,0,"
    ...         "offlineThreadCpuTimeNs(total/thread/sysActivity/resSer):0/0/0/0,query=SELECT 1")
    >>> [(s["instance"], s["responded"], s["responseDelayMs"]) for s in broker_server_stats(
    ...     line, {"127.0.0.2": "Server_127.0.0.2_9001", "127.0.0.3": "Server_127.0.0.3_9002"})]
    [('Server_127.0.0.2_9001', True, 2), ('Server_127.0.0.3_9002', False, -1)]
    """
    found = _SERVER_STATS.search(line)
    if found is None:
        return []
    out = []
    for entry in found.group(1).strip(";").split(";"):
        name, _, numbers = entry.partition("=")
        host = name[:-2] if name.endswith(("_O", "_R")) else name
        values = dict(zip(SERVER_STAT_FIELDS, (int(v) for v in numbers.split(",")), strict=False))
        out.append({"instance": instances.get(host, host), "responded": values.get("responseDelayMs", -1) >= 0,
                    **values})
    return out


def keep_measured_lines(log: Path, request_ids: set[int], keep_all_as: Path) -> dict[int, str]:
    """Keep in ``log`` only the lines of ``request_ids`` (the measured queries; the broker also logged the warm-up),
    each unchanged; the whole log is moved to ``keep_all_as`` first. The kept lines by request id."""
    text = log.read_text(errors="replace") if log.is_file() else ""
    if log.is_file():
        log.replace(keep_all_as)
    kept: dict[int, str] = {}
    for line in text.splitlines():
        found = _REQUEST_ID.search(line)
        if found is not None and int(found.group(1)) in request_ids:
            kept[int(found.group(1))] = line
    log.write_text("".join(line + "\n" for line in kept.values()))
    return kept


def _records(path: Path, lines: Mapping[int, str], instances: Mapping[str, str]) -> pd.DataFrame:
    rows = []
    for text in path.read_text().splitlines():
        record = json.loads(text)
        servers = broker_server_stats(lines.get(int(record.get("requestId", -1)), ""), instances)
        record["servers"] = servers
        record["maxServerTimeUsedMs"] = -1  # not in a broker's response
        record["exceptions"] = tuple(record.get("exceptions", ()))
        record["timeMs"] = record.get("timeUsedMs", -1)
        rows.append(record)
    frame = pd.DataFrame(rows)
    return frame.sort_values("requestId").reset_index(drop=True) if not frame.empty else frame


def run_helix_load(cluster: HelixCluster, queries: Sequence[str], load: LoadSpec, work: Path, *,
                   cpus: Sequence[int] = (), slow: Mapping[str, float] | None = None, heap: str = "256m"
                   ) -> ClusterRun:
    """Send ``queries`` (used in turn) to ``cluster``'s broker at ``load``'s open-loop rate; the run's records.

    ``slow`` (instance id -> factor) puts those servers' JVMs under a CPU limit once the warm-up is over, as
    :func:`~workbench.groundtruth.cluster.run_cluster` does. The broker's query log in ``cluster.logs`` is left with
    the measured queries' lines only (the whole log, warm-up included, beside it as ``broker-querylog.all.log``). The
    load generator's JVM and any CPU limit are gone when this returns, raises or is interrupted.
    """
    jars = ensure_built()
    logs = cluster.logs
    address = {name: host_port(name) for name in cluster.servers}
    spec = {"brokerUrl": cluster.broker_url,
            **load.open_loop(write_queries(work / "http-queries.sql", queries), work / "http-start")}
    (work / "http-load.json").write_text(json.dumps(spec))
    out, log = work / "http-records.jsonl", logs / "load.log"
    processes = Processes()
    try:
        proc = processes.start([*java_command(jars, heap, "workbench.cluster.HttpLoad", "load", logs),
                                str(work / "http-load.json"), str(out)], log, tuple(cpus) or None)
        pids = {address[n]: pid for n, pid in cluster.server_pids.items()}
        warm, warmup = after_warmup(processes, pids, {address[n]: factor for n, factor in (slow or {}).items()},
                                    proc, log, work / "http-start", load.settle_s)
        summary = run_to_end(proc, log, "the HTTP load generator", load.run_timeout_s())
        used, threads, cores = measured_use(warm, pids)
    finally:
        processes.stop_all()
    summary = next((line for line in log.read_text(errors="replace").splitlines() if line.startswith("DONE ")),
                   summary)
    measured = {int(json.loads(t).get("requestId", -1)) for t in out.read_text().splitlines()}
    lines = keep_measured_lines(logs / QUERY_LOG, measured, logs / "broker-querylog.all.log")
    records = _records(out, lines, _by_host(cluster.servers))
    return ClusterRun(records, tuple(address[n] for n in cluster.servers), cluster.pids, summary,
                      routing=HELIX_ROUTING, schedstat=used, threads=threads, warmup=warmup, cpu_use=cores)


def _by_host(servers: Sequence[str]) -> dict[str, str]:
    """Each server's instance id by its host, as the broker log's ``serverStats`` names servers."""
    return {host_port(name).rsplit(":", 1)[0]: name for name in servers}


#: The broker response's fields a record keeps (Pinot's names), beside ``requestId``, ``sql`` and ``exceptions``.
RESPONSE_FIELDS = ("timeUsedMs", "numServersQueried", "numServersResponded", "numSegmentsQueried",
                   "numSegmentsProcessed", "numSegmentsMatched", "numSegmentsPrunedByBroker",
                   "numSegmentsPrunedByServer", "numDocsScanned", "numEntriesScannedInFilter", "totalDocs",
                   "partialResult")


def sequential_records(cluster: HelixCluster, queries: Sequence[str]) -> pd.DataFrame:
    """Send ``queries`` to the broker one after another; one record per query in the columns
    :func:`~workbench.groundtruth.agreement.measured_agreement` reads: the response's :data:`RESPONSE_FIELDS`, its
    ``requestId`` and exceptions, and the servers queried from the broker's query log (``serverStats``), as JSON."""
    rows: list[dict[str, Any]] = []
    for sql in queries:
        answer = cluster.query(sql)
        exceptions = "; ".join(f"{e.get('errorCode')}: {e.get('message')}" for e in answer.get("exceptions", []))
        rows.append({"sql": sql, "requestId": int(answer.get("requestId", -1)), "exceptions": exceptions,
                     **{k: answer.get(k) for k in RESPONSE_FIELDS}})
    instances = _by_host(cluster.servers)
    lines: dict[int, str] = {}
    for line in (cluster.logs / QUERY_LOG).read_text(errors="replace").splitlines():
        found = _REQUEST_ID.search(line)
        if found is not None:
            lines[int(found.group(1))] = line
    for row in rows:
        row["servers"] = json.dumps(broker_server_stats(lines.get(int(row["requestId"]), ""), instances))
    return pd.DataFrame(rows)
