"""A whole Pinot cluster with Helix, each role its own JVM: ZooKeeper and a real controller, a real broker, servers.

:func:`helix_cluster` builds the table's segments with Pinot's segment creator, then starts

- ``workbench.cluster.HelixControllerMain``: ZooKeeper and Pinot's ``ControllerStarter`` (Helix controller, REST API);
- one ``workbench.cluster.HelixServerMain`` per server, each on its own loopback address: Pinot's single-stage query
  path (as :mod:`workbench.groundtruth.cluster`'s servers) joined to Helix as a participant, with the instance config
  Pinot's server writes and a ``SegmentOnlineOfflineStateModel`` whose OFFLINE->ONLINE transition is the table data
  manager's own ``addOnlineSegment`` (table config and schema from ZooKeeper, the segment downloaded from the
  controller);
- ``workbench.cluster.HelixBrokerMain``: Pinot's ``HelixBrokerStarter`` with the multi-stage engine off (its modules
  are not on Maven Central as served here),

then creates the schema and table and uploads each segment through the controller's REST API (``POST /schemas``,
``POST /tables``, ``POST /v2/segments`` multipart: the controller assigns the segments, Helix tells the servers), and
waits until the external view has every segment ONLINE where the ideal state puts it. Queries go to the broker's
``POST /query/sql``; its query log is ``broker-querylog.log`` in the logs directory.

REALTIME tables (:class:`StreamTable`) stream through a Kafka broker the cluster starts first
(``workbench.kafka.KafkaMain``: Apache Kafka in KRaft mode, its own JVM and class path, one topic per table named
after it). Once the table is created (the controller asks Kafka for the topic's partitions and makes one CONSUMING
segment per partition, ``table__partition__0__time``), its events are produced (``workbench.kafka.ProduceMain``, one
message per row keyed by the table's key column) and the servers consume them (pinot-core's RealtimeTableDataManager
and RealtimeSegmentDataManager); at the flush threshold each segment is committed through the segment completion
protocol with the controller (the controller's LLC handlers, the segment uploaded to it) and served ONLINE, and the
controller opens the partition's next CONSUMING segment. The cluster is handed over once every event is queryable and
every segment due to complete has (the external view equal to the ideal state).

What is not Pinot's (pinot-server, pinot-query-runtime and pinot-query-planner are not served here): the servers'
InstanceDataManager is a small stand-in that hands the query executor its table data managers, and the broker's
multi-stage operator factory is an empty stand-in (``HelixBrokerMain``); for REALTIME tables, the Kafka consumer and
JSON decoder the stream config names (``workbench.stream``: pinot-kafka-3.0 and pinot-json are not served at 1.5.1).
Every JVM runs in its own process group and all are killed when the ``with`` block ends, whether it returns, raises or
is interrupted.
"""

from __future__ import annotations

import json
import subprocess
import tarfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.groundtruth.build import GroundTruthError, PinotJars, PinotRefused, ensure_built, ensure_kafka_built
from workbench.groundtruth.cluster import (
    SLACK_S,
    Processes,
    allocate_servers,
    build_segments_command,
    java_command,
    log_tail,
    run_dirs,
    run_segment_build,
    run_to_end,
    wait_ready,
)
from workbench.groundtruth.harness import free_port
from workbench.pinot.rest import pinot_message

__all__ = ["CONNECTION_KEYS", "HelixCluster", "HelixTable", "StreamTable", "connection", "helix_cluster",
           "stream_config"]

#: The Helix cluster's name.
CLUSTER = "workbench"
#: How long the external view may take to show every uploaded segment ONLINE, s.
EXTERNAL_VIEW_TIMEOUT_S = 60.0
#: One REST call's timeout, s (the broker's first query compiles its whole path: about 1 s here).
HTTP_TIMEOUT_S = 60.0
#: How long a REALTIME table may take from its events' production to every event queryable and every segment due to
#: complete ONLINE, s (a few thousand events and a handful of commits take a few seconds on 2 cores).
CONSUME_TIMEOUT_S = 90.0
#: The stream consumer and decoder REALTIME tables name (the workbench's own: see ``probes/pinot/.../stream``).
CONSUMER_FACTORY = "workbench.stream.KafkaConsumerFactory"
DECODER = "workbench.stream.JsonMessageDecoder"


@dataclass(frozen=True)
class HelixCluster:
    """A running cluster: the controller's and the broker's base URLs, the servers' Helix instance ids, every pid
    started, and the directory with each JVM's console log and the broker's ``broker-querylog.log``."""

    controller_url: str
    broker_url: str
    servers: tuple[str, ...]
    pids: tuple[int, ...]
    logs: Path
    #: Each server's pid by its Helix instance id (``Server_<host>_<port>``), for its CPU accounting and throttling.
    server_pids: Mapping[str, int] = field(default_factory=dict)
    #: The Kafka broker's ``host:port`` when the cluster streams REALTIME tables, else empty.
    kafka: str = ""
    #: Per REALTIME table (raw name): the events Kafka acknowledged, per topic partition.
    produced: Mapping[str, Mapping[int, int]] = field(default_factory=dict)

    def query(self, sql: str) -> dict[str, Any]:
        """The broker's JSON response to ``sql`` (``POST /query/sql``), Pinot's field names unchanged."""
        response: dict[str, Any] = json.loads(_call("POST", f"{self.broker_url}/query/sql", {"sql": sql}))
        return response

    def get(self, path: str) -> Any:
        """The controller's JSON answer to ``GET path`` (e.g. ``/tables/clicks``), unchanged."""
        return json.loads(_call("GET", f"{self.controller_url}{path}"))

    def external_view(self, table: str, table_type: str = "OFFLINE") -> dict[str, dict[str, str]]:
        """The external view of raw table ``table`` of ``table_type`` (``OFFLINE`` or ``REALTIME``) as the controller
        reports it: segment -> {server: state} (``ONLINE``, ``CONSUMING``, ``ERROR``, ...)."""
        return self._view(table, "externalview", table_type)

    def ideal_state(self, table: str, table_type: str = "OFFLINE") -> dict[str, dict[str, str]]:
        """The ideal state of raw table ``table`` of ``table_type`` (where the controller assigned each segment)."""
        return self._view(table, "idealstate", table_type)

    def _view(self, table: str, kind: str, table_type: str) -> dict[str, dict[str, str]]:
        view = self.get(f"/tables/{table}/{kind}")
        return {s: dict(m) for s, m in (view.get(table_type) or {}).items()}


def _call(method: str, url: str, body: Any = None, *, data: bytes | None = None,
          content_type: str = "application/json") -> str:
    """One REST call's body, or a :class:`GroundTruthError` naming the call and Pinot's answer."""
    payload = data if data is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(url, data=payload, method=method, headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT_S) as response:
            return str(response.read().decode())
    except urllib.error.HTTPError as exc:
        body = exc.read().decode(errors="replace")
        if method == "POST" and 400 <= exc.code < 500:
            raise PinotRefused(f"Pinot's controller refused it ({method} {url.split('?')[0]}: HTTP {exc.code})",
                               pinot_message(body)) from None
        raise GroundTruthError(f"{method} {url}: HTTP {exc.code}: {body}") from exc
    except OSError as exc:
        raise GroundTruthError(f"{method} {url}: {exc}") from exc


def _multipart(name: str, content: bytes) -> tuple[bytes, str]:
    """A ``multipart/form-data`` body with one file part, as Pinot's upload client sends a segment tarball."""
    boundary = "workbench-segment-upload"
    head = (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n").encode()
    return head + content + f"\r\n--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def _tarball(segment_dir: Path, out: Path) -> Path:
    """The segment as Pinot uploads it: a gzipped tar whose one top directory is the segment's name."""
    with tarfile.open(out, "w:gz") as tar:
        tar.add(segment_dir, arcname=segment_dir.name)
    return out


def _short(command: list[str]) -> list[str]:
    """``command`` with the client compiler only, as :func:`~workbench.groundtruth.pinot_assignment` runs the real
    controller: the controller and the segment builder serve no timed queries, and start-up is mostly JIT work."""
    return [command[0], "-XX:TieredStopAtLevel=1", *command[1:]]


@dataclass(frozen=True)
class HelixTable:
    """One OFFLINE table a cluster serves: the user's table config and schema as Pinot's REST API takes them, and the
    rows per segment name (each built by Pinot's creator and uploaded to the controller)."""

    config: Mapping[str, Any]
    schema: Mapping[str, Any]
    segments: Mapping[str, pd.DataFrame]

    @property
    def raw(self) -> str:
        """The raw table name (``tableName`` without ``_OFFLINE``)."""
        return str(self.config["tableName"]).removesuffix("_OFFLINE")


@dataclass(frozen=True)
class StreamTable:
    """One REALTIME table a cluster streams: the user's table config and schema as Pinot's REST API takes them, and
    the events produced once the table exists, in order, each a Kafka message (a JSON object) keyed by its ``key``
    column on a topic of ``partitions``. Without ``partition_column`` Kafka's partitioner places each event by its key
    (so every event of one key lands in one partition, as upsert requires); with it, each event goes to the partition
    that column names (the column is not part of the message), as a workload planned its stream.

    The config's stream config keeps its own keys (flush thresholds, offsets) where the user put it; the workbench
    sets where the stream is and how it is read (:func:`stream_config`, :data:`CONNECTION_KEYS`)."""

    config: Mapping[str, Any]
    schema: Mapping[str, Any]
    events: pd.DataFrame
    key: str
    partitions: int = 2
    partition_column: str | None = None

    @property
    def raw(self) -> str:
        """The raw table name (``tableName`` without ``_REALTIME``), also the Kafka topic's."""
        return str(self.config["tableName"]).removesuffix("_REALTIME")


def _stream_maps(config: Mapping[str, Any]) -> tuple[str, Mapping[str, str]]:
    """Where ``config`` keeps its (first) stream config, ``ingestion`` (``ingestionConfig.streamIngestionConfig.
    streamConfigMaps[0]``) or ``indexing`` (the older ``tableIndexConfig.streamConfigs``), and that map."""
    maps = ((config.get("ingestionConfig") or {}).get("streamIngestionConfig") or {}).get("streamConfigMaps")
    if maps:
        return "ingestion", dict(maps[0])
    legacy = (config.get("tableIndexConfig") or {}).get("streamConfigs")
    return ("indexing", dict(legacy)) if legacy else ("ingestion", {})


def connection(topic: str, kafka: str) -> dict[str, str]:
    """The stream keys the workbench sets so that a table reads ``topic`` of the local broker ``kafka``: Kafka,
    partition-level ("lowlevel") consumption from the smallest offset, the workbench's consumer factory and JSON
    decoder (:data:`CONNECTION_KEYS` lists them)."""
    return {"streamType": "kafka", "stream.kafka.topic.name": topic, "stream.kafka.broker.list": kafka,
            "stream.kafka.consumer.type": "lowlevel", "stream.kafka.consumer.factory.class.name": CONSUMER_FACTORY,
            "stream.kafka.decoder.class.name": DECODER, "stream.kafka.consumer.prop.auto.offset.reset": "smallest"}


#: The stream config keys :func:`stream_config` rewrites; every other key of the user's config is kept.
CONNECTION_KEYS = tuple(connection("", ""))


def stream_config(table: StreamTable, kafka: str) -> dict[str, Any]:
    """``table``'s config with its stream config, where the config keeps it (``ingestionConfig.streamIngestionConfig.
    streamConfigMaps[0]``, or ``tableIndexConfig.streamConfigs``), pointed at the topic ``table.raw`` of the broker
    ``kafka`` (:func:`connection`); the config's other keys, the stream's included, are kept.

    >>> t = StreamTable({"tableName": "ev_REALTIME", "ingestionConfig": {"streamIngestionConfig": {
    ...     "streamConfigMaps": [{"realtime.segment.flush.threshold.segment.rows": "300"}]}}}, {}, pd.DataFrame(), "k")
    >>> m = stream_config(t, "127.0.0.1:9092")["ingestionConfig"]["streamIngestionConfig"]["streamConfigMaps"][0]
    >>> m["stream.kafka.topic.name"], m["stream.kafka.broker.list"], m["realtime.segment.flush.threshold.segment.rows"]
    ('ev', '127.0.0.1:9092', '300')
    >>> legacy = StreamTable({"tableName": "ev", "tableIndexConfig": {"loadMode": "MMAP", "streamConfigs": {
    ...     "stream.kafka.topic.name": "prod-events", "realtime.segment.flush.threshold.rows": "5000"}}}, {},
    ...     pd.DataFrame(), "k")
    >>> c = stream_config(legacy, "127.0.0.1:9092")
    >>> "ingestionConfig" in c, c["tableIndexConfig"]["streamConfigs"]["stream.kafka.topic.name"]
    (False, 'ev')
    """
    where, stream = _stream_maps(table.config)
    stream = {**stream, **connection(table.raw, kafka)}
    if where == "indexing":
        return {**table.config, "tableIndexConfig": {**table.config["tableIndexConfig"], "streamConfigs": stream}}
    ingestion = dict(table.config.get("ingestionConfig") or {})
    ingestion["streamIngestionConfig"] = {**(ingestion.get("streamIngestionConfig") or {}),
                                          "streamConfigMaps": [stream]}
    return {**table.config, "ingestionConfig": ingestion}


@contextmanager
def helix_cluster(*tables: HelixTable | StreamTable, num_servers: int = 1, heap: str = "256m",
                  logs_dir: str | Path | None = None, work_dir: str | Path | None = None, ready_timeout_s: float = 90.0,
                  server_config: Mapping[str, str] | None = None, broker_config: Mapping[str, str] | None = None,
                  server_cpus: Sequence[Sequence[int]] = (), broker_cpus: Sequence[int] = (),
                  server_processors: int | None = None) -> Iterator[HelixCluster]:
    """A running cluster serving ``tables``; every JVM stopped when the block ends.

    Parameters
    ----------
    tables
        The OFFLINE tables (:class:`HelixTable`), each created and its segments uploaded in turn, and REALTIME tables
        (:class:`StreamTable`), each created and its events streamed through Kafka (distinct table names).
    num_servers
        Server JVMs, each on its own loopback address (127.0.0.2, ...).
    logs_dir
        Where each JVM's console log and query log go (default: the temporary work directory, removed after).
    server_config, broker_config
        Pinot server and broker properties (``KEY=VALUE``, as in Pinot's own config files) on top of the cluster's.
    server_cpus, broker_cpus
        The CPUs each server (by index) and the controller and broker run on (``taskset``); empty: unpinned.
    server_processors
        The processors an unpinned server's JVM is told it has (``-XX:ActiveProcessorCount``): the modelled server's
        cores, so Pinot sizes its thread pools as on that server. A pinned server counts its own CPUs.
    """
    if num_servers < 1 or not tables or not all(t.segments if isinstance(t, HelixTable) else len(t.events)
                                                    for t in tables):
        raise ValueError("need at least one server and one table, each with at least one segment or event")
    if len({t.raw for t in tables}) != len(tables):
        raise ValueError(f"each table once: {[t.raw for t in tables]}")
    for t in tables:
        if isinstance(t, StreamTable) and (t.key not in t.events.columns or t.partitions < 1):
            raise ValueError(f"{t.raw}: the key column {t.key!r} must be one of the events' columns "
                             f"{list(t.events.columns)}, and the topic needs at least one partition (got "
                             f"{t.partitions})")
    jars = ensure_built()
    kafka_jars = ensure_kafka_built() if any(isinstance(t, StreamTable) for t in tables) else None
    roles = _Roles(num_servers, heap, ready_timeout_s, dict(server_config or {}), dict(broker_config or {}),
                   tuple(tuple(c) for c in server_cpus), tuple(broker_cpus), server_processors)
    with run_dirs("workbench-helix-", work_dir, logs_dir) as (work, logs, processes):
        yield _start(jars, kafka_jars, work, logs, processes, tables, roles)


@dataclass(frozen=True)
class _Roles:
    """How the cluster's JVMs are started: servers, heap, readiness timeout, extra Pinot config, CPUs."""

    num_servers: int
    heap: str
    ready_timeout_s: float
    server_config: dict[str, str]
    broker_config: dict[str, str]
    server_cpus: tuple[tuple[int, ...], ...]
    broker_cpus: tuple[int, ...]
    server_processors: int | None = None

    def cpus(self, server: int | None = None) -> tuple[int, ...] | None:
        """The CPUs of server ``server`` (``None``: the controller and broker); ``None`` when unpinned."""
        if server is None:
            return self.broker_cpus or None
        return (self.server_cpus[server] if server < len(self.server_cpus) else ()) or None


def _start(jars: PinotJars, kafka_jars: PinotJars | None, work: Path, logs: Path, processes: Processes,
           tables: Sequence[HelixTable | StreamTable], roles: _Roles) -> HelixCluster:
    heap, ready_timeout_s = roles.heap, roles.ready_timeout_s
    streams = [t for t in tables if isinstance(t, StreamTable)]
    kafka = _start_kafka(kafka_jars, work, logs, processes, streams, roles) if kafka_jars is not None else None
    zk_port, controller_port, broker_port = free_port(), free_port(), free_port()
    controller_log = logs / "controller.log"
    main = "workbench.cluster.HelixControllerMain"
    controller = processes.start([*_short(java_command(jars, "384m", main, "controller", logs)), str(work),
                                  str(zk_port), str(controller_port), CLUSTER], controller_log, roles.cpus())
    built: list[Path | None] = []
    for i, table in enumerate(tables):  # while the controller starts
        if isinstance(table, StreamTable):
            built.append(None)
            continue
        (work / f"table-{i}").mkdir()
        build_command, out = build_segments_command(jars, heap, work / f"table-{i}", table.config, table.schema,
                                                    table.segments)
        build_log = logs / ("build.log" if i == 0 else f"build-{i}.log")
        run_segment_build(processes.start(_short(build_command), build_log, roles.cpus()), build_log)
        built.append(out)
    wait_ready(controller, controller_log, "controller", ready_timeout_s)
    bootstrap = wait_ready(*kafka, "Kafka", ready_timeout_s).split("bootstrap=")[1].strip() if kafka else ""
    zk = f"127.0.0.1:{zk_port}"
    started = []
    for i, server in enumerate(allocate_servers(roles.num_servers)):
        host, port = server.split(":")
        log = logs / f"server-{host}-{port}.log"
        name = f"server-{host}-{port}"
        processors = roles.server_processors if roles.cpus(i) is None else None
        command = [*java_command(jars, heap, "workbench.cluster.HelixServerMain", name, logs, gc_log=True,
                                 processors=processors), zk,
                   CLUSTER, host, port, str(work / name), *_key_values(roles.server_config)]
        started.append((server, processes.start(command, log, roles.cpus(i)), log))
    broker_log = logs / "broker.log"
    broker = processes.start([*java_command(jars, heap, "workbench.cluster.HelixBrokerMain", "broker", logs,
                                            gc_log=True), zk,
                              CLUSTER, "127.0.0.1", str(broker_port), *_key_values(roles.broker_config)], broker_log,
                             roles.cpus())
    servers = tuple(wait_ready(proc, log, server, ready_timeout_s).split("instance=")[1].strip()
                    for server, proc, log in started)
    wait_ready(broker, broker_log, "broker", ready_timeout_s)
    cluster = HelixCluster(f"http://127.0.0.1:{controller_port}", f"http://127.0.0.1:{broker_port}", servers,
                           tuple(p.pid for p in processes.started), logs,
                           {name: proc.pid for name, (_, proc, _) in zip(servers, started, strict=True)}, bootstrap)
    produced: dict[str, dict[int, int]] = {}
    for table, built_dir in zip(tables, built, strict=True):
        _call("POST", f"{cluster.controller_url}/schemas", table.schema)
        if isinstance(table, StreamTable):
            _call("POST", f"{cluster.controller_url}/tables", stream_config(table, bootstrap))
            assert kafka_jars is not None
            produced[table.raw] = _produce(kafka_jars, work, logs, processes, table, bootstrap, roles)
            continue
        assert built_dir is not None
        _call("POST", f"{cluster.controller_url}/tables", table.config)
        for name in table.segments:
            tarball = _tarball(built_dir / name, built_dir.parent / f"{name}.tar.gz")
            body, content_type = _multipart(f"{name}.tar.gz", tarball.read_bytes())
            _call("POST", f"{cluster.controller_url}/v2/segments?tableName={table.raw}&tableType=OFFLINE", data=body,
                  content_type=content_type)
    server_logs = [log for _, _, log in started]
    for table in tables:
        if isinstance(table, StreamTable):
            _wait_consumed(cluster, table, produced[table.raw], server_logs)
        else:
            _wait_online(cluster, table.raw, list(table.segments), server_logs)
    return HelixCluster(**{**cluster.__dict__, "produced": produced})


def _start_kafka(jars: PinotJars, work: Path, logs: Path, processes: Processes, streams: Sequence[StreamTable],
                 roles: _Roles) -> tuple[subprocess.Popen[bytes], Path]:
    """Start the Kafka broker (KRaft, on loopback) with one topic per REALTIME table; its process and log."""
    log = logs / "kafka.log"
    command = ["java", "-Xmx256m", "-XX:+UseG1GC", "-XX:TieredStopAtLevel=1", "-cp", jars.classpath,
               "workbench.kafka.KafkaMain", str(work / "kafka"), str(free_port()), str(free_port()),
               *(f"{t.raw}={t.partitions}" for t in streams)]
    return processes.start(command, log, roles.cpus()), log


def _produce(jars: PinotJars, work: Path, logs: Path, processes: Processes, table: StreamTable, bootstrap: str,
             roles: _Roles) -> dict[int, int]:
    """Stream ``table``'s events into its topic; the events Kafka acknowledged per partition."""
    rows = work / f"{table.raw}-events.jsonl"
    table.events.to_json(rows, orient="records", lines=True)
    log = logs / f"produce-{table.raw}.log"
    command = ["java", "-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp", jars.classpath, "workbench.kafka.ProduceMain",
               bootstrap, table.raw, table.key, str(rows), *filter(None, [table.partition_column])]
    last = run_to_end(processes.start(command, log, roles.cpus()), log, f"Kafka producer of {table.raw}", SLACK_S)
    counts = last.removeprefix("PRODUCED ").split(" ", 1)
    per_partition = {int(p): int(n) for p, n in (kv.split("=") for kv in counts[1].split(",") if kv)} \
        if len(counts) == 2 else {}
    if sum(per_partition.values()) != len(table.events):
        raise GroundTruthError(f"Kafka acknowledged {sum(per_partition.values())} of {len(table.events)} events of "
                               f"{table.raw}: {last}")
    return per_partition


def _key_values(config: Mapping[str, str]) -> list[str]:
    return [f"{k}={v}" for k, v in config.items()]


def _wait_online(cluster: HelixCluster, raw: str, segments: Sequence[str], server_logs: Sequence[Path]) -> None:
    """Until the external view equals the ideal state (every replica ONLINE where assigned) for all ``segments``."""
    deadline = time.monotonic() + EXTERNAL_VIEW_TIMEOUT_S
    while True:
        ideal, view = cluster.ideal_state(raw), cluster.external_view(raw)
        errors = sorted(s for s, states in view.items() if "ERROR" in states.values())
        if errors:
            raise GroundTruthError(f"segments {errors} went to ERROR on their servers; last lines of their logs:\n"
                                   + "\n".join(log_tail(log) for log in server_logs))
        if set(segments) <= set(ideal) and view == ideal:
            return
        if time.monotonic() > deadline:
            raise GroundTruthError(f"external view of {raw} not the ideal state after {EXTERNAL_VIEW_TIMEOUT_S:.0f} s: "
                                   f"{view} against {ideal}")
        time.sleep(0.2)


def _wait_consumed(cluster: HelixCluster, table: StreamTable, produced: Mapping[int, int],
                   server_logs: Sequence[Path]) -> None:
    """Until every produced event of ``table`` is queryable (``COUNT(*)`` with upsert skipped), no partition's
    CONSUMING segment holds its flush threshold (the ``segment.flush.threshold.size`` the controller wrote in its ZK
    record, whichever flush setting made it: a segment holding that many rows is about to be committed), and the
    external view equals the ideal state (no commit under way)."""
    raw = table.raw
    total = sum(produced.values())
    deadline = time.monotonic() + CONSUME_TIMEOUT_S
    count, due = -1, {}
    while True:
        ideal, view = cluster.ideal_state(raw, "REALTIME"), cluster.external_view(raw, "REALTIME")
        errors = sorted(s for s, states in view.items() if "ERROR" in states.values())
        if errors:
            raise GroundTruthError(f"segments {errors} of {raw} went to ERROR on their servers; last lines of their "
                                   "logs:\n" + "\n".join(log_tail(log) for log in server_logs))
        if view == ideal:
            due = _due(cluster.get(f"/segments/{raw}/zkmetadata?type=REALTIME"), produced)
        if view == ideal and not due:
            response = cluster.query(f"SET skipUpsert = true; SELECT COUNT(*) FROM {raw}")
            count = int(response["resultTable"]["rows"][0][0]) if response.get("resultTable") else -1
            if count == total:
                return
        if time.monotonic() > deadline:
            raise GroundTruthError(f"{raw}: {count} of {total} events queryable, partitions {sorted(due)} with a "
                                   f"segment due to complete after {CONSUME_TIMEOUT_S:.0f} s; external view {view}")
        time.sleep(0.2)


def _due(zk: Mapping[str, Mapping[str, Any]], produced: Mapping[int, int]) -> dict[int, str]:
    """The partitions whose CONSUMING segment holds at least its flush threshold of the produced events (or that have
    none yet): segment name by partition.

    >>> zk = {"t__0__1__20250101T0000Z": {"segment.realtime.status": "IN_PROGRESS",
    ...                                   "segment.realtime.startOffset": "300", "segment.flush.threshold.size": "300"},
    ...       "t__1__0__20250101T0000Z": {"segment.realtime.status": "IN_PROGRESS",
    ...                                   "segment.realtime.startOffset": "0", "segment.flush.threshold.size": "300"}}
    >>> _due(zk, {0: 599, 1: 300})
    {1: 't__1__0__20250101T0000Z'}
    """
    consuming = {int(name.split("__")[1]): (name, fields) for name, fields in zk.items()
                 if fields.get("segment.realtime.status") == "IN_PROGRESS" and len(name.split("__")) == 4}
    out = {}
    for partition, n in produced.items():
        name, fields = consuming.get(partition, ("", {}))
        threshold = int(fields.get("segment.flush.threshold.size", 0) or 0)
        if not fields or (threshold > 0 and n - int(fields.get("segment.realtime.startOffset", 0)) >= threshold):
            out[partition] = name
    return out


def _completed_per_partition(view: Mapping[str, Mapping[str, str]]) -> dict[int, int]:
    """ONLINE segments per stream partition, from LLC segment names (``table__partition__sequence__time``).

    >>> _completed_per_partition({"t__0__0__20250101T0000Z": {"s": "ONLINE"},
    ...                           "t__0__1__20250101T0001Z": {"s": "CONSUMING"},
    ...                           "t__1__0__20250101T0000Z": {"s": "ONLINE"}})
    {0: 1, 1: 1}
    """
    out: dict[int, int] = {}
    for name, states in view.items():
        parts = name.split("__")
        if len(parts) == 4 and "ONLINE" in states.values():
            out[int(parts[1])] = out.get(int(parts[1]), 0) + 1
    return out
