"""Pinot's query path across processes: N server JVMs and one broker/load JVM, always stopped, records as a frame.

:func:`run_cluster` builds the table's segments with Pinot's segment creator, starts one
``workbench.cluster.PinotServer`` JVM per server (Pinot's Netty ``QueryServer``, ``InstanceRequestHandler``, the
scheduler from ``QuerySchedulerFactory``, ``ServerQueryExecutorV1Impl`` over an ``OfflineTableDataManager``), each
on its own loopback address, waits for each to print ``READY``, then runs ``workbench.cluster.LoadGenerator`` (Pinot's
``QueryRouter`` and ``BrokerReduceService``) at an open-loop Poisson rate. Unlike
:func:`~workbench.groundtruth.run_pinot` its latencies mean something: queries cross sockets, queue in the
servers' schedulers and run on their threads.

Every JVM runs in its own process group; every group started is killed when the call ends, whether it returns,
raises, or is interrupted (Ctrl-C), so no Pinot process outlives the call.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.groundtruth.build import GroundTruthError, PinotJars, PinotRefused, ensure_built
from workbench.groundtruth.harness import JVM_FLAGS, free_port
from workbench.groundtruth.throttle import CpuThrottle, cpu_cgroup_root, cpu_limit

__all__ = [
    "ClusterRun",
    "LoadSpec",
    "Processes",
    "allocate_servers",
    "build_segments_command",
    "host_port",
    "instance_name",
    "java_command",
    "log_tail",
    "round_robin_assignment",
    "run_cluster",
    "run_dirs",
    "run_segment_build",
    "run_to_end",
    "schedstat",
    "slow_down_after_warmup",
    "wait_ready",
    "write_queries",
]

#: How long a server may take from JVM start to ``READY`` (loading a few small segments takes ~3 s on 2 cores).
READY_TIMEOUT_S = 90.0
#: Segment building and the load JVM's start-up and warm-up, on top of the run's own length, s.
SLACK_S = 120.0


@dataclass(frozen=True)
class LoadSpec:
    """The open-loop load: Poisson arrivals at ``rate_per_s`` from ``Random(seed)``, ``num_queries`` of them (or
    fewer if ``duration_s`` ends first), the queries used in turn; ``timeout_ms`` is the broker's query timeout;
    ``warmup_queries`` run one at a time before the measured run and are not recorded (JIT and connections)."""

    rate_per_s: float
    num_queries: int
    seed: int = 0
    timeout_ms: int = 10_000
    duration_s: float | None = None
    warmup_queries: int = 0
    threads: int = 64
    #: The queries' own arrival times (s from the run's start, one per query in turn), replacing the Poisson draws.
    arrivals_s: tuple[float, ...] | None = None

    def open_loop(self, queries: Path, start_signal: Path | None = None) -> dict[str, Any]:
        """The keys both load generators' shared scheduler (``workbench.cluster.OpenLoop``) reads: this load, the SQL
        file (one query per line) and, when something must happen between warm-up and measured run, the file whose
        appearance starts it."""
        spec: dict[str, Any] = {"queries": str(queries), "ratePerSecond": self.rate_per_s, "seed": self.seed,
                                "numQueries": self.num_queries, "timeoutMs": self.timeout_ms, "threads": self.threads,
                                "warmupQueries": self.warmup_queries}
        if self.duration_s is not None:
            spec["durationS"] = self.duration_s
        if start_signal is not None:
            spec["startSignal"] = str(start_signal)
        if self.arrivals_s is not None:
            arrivals = queries.with_suffix(".arrivals")
            arrivals.write_text("".join(f"{a!r}\n" for a in self.arrivals_s))
            spec["arrivals"] = str(arrivals)
        return spec

    def run_timeout_s(self) -> float:
        """How long a load generator may run, warm-up and slack included, before it is declared stuck."""
        expected_s = min(self.duration_s or math.inf,
                         3.0 * self.num_queries / self.rate_per_s if self.arrivals_s is None else
                         max(self.arrivals_s, default=0.0) + 1.0)
        return expected_s + self.timeout_ms / 1000 + SLACK_S + 2 * self.warmup_queries


@dataclass(frozen=True)
class ClusterRun:
    """One run: a row per query (sorted by request id), each server's ``host:port``, every pid started, the
    load generator's closing line (``DONE sent=... maxDispatchLagMs=...``), each server's ``READY`` line (it names
    the scheduler Pinot's factory made and the segments loaded), the ideal state routed on (segment to
    ``{Server_host_port: ONLINE}``), the broker's ``ROUTING`` line (its pruners and instance selector), and each
    segment's ZK metadata as the controller's code wrote it."""

    records: pd.DataFrame
    servers: tuple[str, ...]
    pids: tuple[int, ...]
    summary: str
    ready: tuple[str, ...] = ()
    ideal_state: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    routing: str = ""
    zk_metadata: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    #: Per server ``host:port``: ``(cpu_ms, wait_ms)`` its JVM's threads ran and waited on a run queue (ready but
    #: not on a CPU: another process had it) from READY to the load generator's end, which spans the warm-up and the
    #: measured run (``/proc/<pid>/task/*/schedstat``; threads that ended in between are not counted).
    schedstat: Mapping[str, tuple[float, float]] = field(default_factory=dict)


def round_robin_assignment(segments: Sequence[str], servers: Sequence[str]) -> dict[str, str]:
    """Each segment (in sorted order) to the next server in turn: replication 1, every server a share.

    >>> round_robin_assignment(["b", "a", "c"], ["s1", "s2"])
    {'a': 's1', 'b': 's2', 'c': 's1'}
    """
    return {name: servers[i % len(servers)] for i, name in enumerate(sorted(segments))}


def instance_name(server: str) -> str:
    """Pinot's instance id of a server at ``host:port`` (``Server_127.0.0.2_40123``); the broker parses host and
    Netty port back out of it, as it does from a Helix instance config.

    >>> instance_name("127.0.0.2:40123")
    'Server_127.0.0.2_40123'
    """
    host, port = server.split(":")
    return f"Server_{host}_{port}"


def allocate_servers(count: int) -> tuple[str, ...]:
    """``count`` servers' ``host:port``: each its own loopback address (127.0.0.2, ...), each a free port."""
    if not 1 <= count <= 253:
        raise ValueError(f"between 1 and 253 servers fit the loopback addresses 127.0.0.2-254, got {count}")
    return tuple(f"127.0.0.{2 + i}:{free_port()}" for i in range(count))


def java_command(jars: PinotJars, heap: str, main: str, log_name: str, logs: Path, gc_log: bool = False,
                 processors: int | None = None) -> list[str]:
    """A JVM command: its query log is ``logs/<log_name>-querylog.log``; with ``gc_log``, Pinot's recommended
    ``-Xlog:gc*`` into ``logs/gc-<log_name>.log`` (wall time and uptime decorations, as the Helm chart's servers);
    with ``processors``, ``-XX:ActiveProcessorCount`` (what ``availableProcessors()`` says, which Pinot sizes its
    query worker and runner pools by, and G1 its GC threads)."""
    gc = [f"-Xlog:gc*:file={logs / ('gc-' + log_name + '.log')}:time,uptime,level,tags"] if gc_log else []
    cpus = [f"-XX:ActiveProcessorCount={processors}"] if processors is not None else []
    return ["java", f"-Xmx{heap}", "-XX:+UseG1GC", *cpus, *gc, *JVM_FLAGS,
            f"-Dlog4j2.configurationFile={jars.classes / 'workbench-log4j2.xml'}",
            f"-Dworkbench.querylog={logs / (log_name + '-querylog.log')}", "-cp", jars.classpath, main]


class Processes:
    """The JVMs of one run, each in its own process group, all killed by :meth:`stop_all`, and the CPU-limit
    cgroups some of them run in, all removed after."""

    def __init__(self) -> None:
        self.started: list[subprocess.Popen[bytes]] = []
        self.throttles: list[CpuThrottle] = []

    def start(self, command: list[str], log: Path, cpus: Sequence[int] | None = None) -> subprocess.Popen[bytes]:
        """Start ``command`` in a new session; with ``cpus``, pinned to them from before ``exec`` (``taskset``),
        so every thread the JVM makes (GC, JIT, Netty, Pinot's runners) inherits the mask and
        ``availableProcessors()``, which Pinot sizes its thread pools by, counts those cores only."""
        if cpus is not None:
            command = ["taskset", "-c", ",".join(str(c) for c in sorted(cpus)), *command]
        with log.open("wb") as out:
            proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True)
        self.started.append(proc)
        return proc

    def stop_all(self) -> None:
        try:
            for proc in self.started:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
            for proc in self.started:
                proc.wait()
        finally:
            for throttle in self.throttles:
                throttle.close()


@contextlib.contextmanager
def run_dirs(prefix: str, work_dir: str | Path | None, logs_dir: str | Path | None
             ) -> Iterator[tuple[Path, Path, Processes]]:
    """A run's work directory (temporary, under ``work_dir``), its logs directory (``logs_dir``, else the work
    directory) and its :class:`Processes`, every one of which is stopped when the block ends, however it ends."""
    processes = Processes()
    with tempfile.TemporaryDirectory(prefix=prefix, dir=work_dir) as tmp:
        work = Path(tmp)
        logs = Path(logs_dir) if logs_dir is not None else work
        logs.mkdir(parents=True, exist_ok=True)
        try:
            yield work, logs, processes
        finally:
            processes.stop_all()


def build_segments_command(jars: PinotJars, heap: str, work: Path, table_config: Mapping[str, Any],
                           schema: Mapping[str, Any], segments: Mapping[str, pd.DataFrame]) -> tuple[list[str], Path]:
    """The JVM command that builds ``segments`` (rows per segment name) with Pinot's segment creator, and the directory
    it builds them into (``work/built``); its inputs (``table.json``, ``schema.json``, one JSON-lines file of rows
    per segment) are written under ``work`` first. Every cluster here builds its segments so."""
    (work / "table.json").write_text(json.dumps(table_config))
    (work / "schema.json").write_text(json.dumps(schema))
    rows_args = []
    for name, rows in segments.items():
        path = work / f"{name}.jsonl"
        rows.to_json(path, orient="records", lines=True)
        rows_args.append(f"{name}={path}")
    built = work / "built"
    command = [*java_command(jars, heap, "workbench.cluster.BuildSegments", "build", work), str(work / "table.json"),
               str(work / "schema.json"), str(built), *rows_args]
    return command, built


def schedstat(pid: int) -> tuple[float, float]:
    """``(cpu_ms, run_queue_wait_ms)`` summed over a process's live threads; zeros where Linux does not say."""
    cpu = wait = 0
    for path in Path(f"/proc/{pid}/task").glob("*/schedstat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = path.read_text().split()
            cpu, wait = cpu + int(fields[0]), wait + int(fields[1])
    return cpu / 1e6, wait / 1e6


def log_tail(log: Path, n: int = 15) -> str:
    lines = log.read_text(errors="replace").splitlines() if log.is_file() else []
    return "\n".join(lines[-n:]) if lines else "(empty log)"


def wait_ready(proc: subprocess.Popen[bytes], log: Path, name: str, timeout_s: float) -> str:
    """The server's ``READY`` line, or a :class:`GroundTruthError` naming it with the end of its log."""
    deadline = time.monotonic() + timeout_s
    while True:
        text = log.read_text(errors="replace") if log.is_file() else ""
        for line in text.splitlines():
            if line.startswith("READY "):
                return line
            if line.startswith("FAILED "):
                raise GroundTruthError(f"Pinot server {name} failed to start: {line.removeprefix('FAILED ')}; "
                                       f"last lines of {log}:\n{log_tail(log)}")
        if proc.poll() is not None:
            raise GroundTruthError(f"Pinot server {name} exited with status {proc.returncode} before serving; "
                                   f"last lines of {log}:\n{log_tail(log)}")
        if time.monotonic() > deadline:
            raise GroundTruthError(f"Pinot server {name} not ready after {timeout_s:.0f} s; "
                                   f"last lines of {log}:\n{log_tail(log)}")
        time.sleep(0.1)


def slow_down_after_warmup(processes: Processes, pids: Mapping[str, int], factors: Mapping[str, float],
               broker: subprocess.Popen[bytes], log: Path, signal_file: Path) -> None:
    """Once the load generator's warm-up is over (its ``WARM`` line), put each slow server's JVM in a CPU-limit cgroup
    of its own, then let the measured run start (``signal_file``). Slowed only now, the server was warmed like the
    others: a JVM throttled from its start answers its first queries (class loading, interpreted code) at a quarter
    of a core, hundreds of ms each, and adaptive selection's latency average would shun it for that alone."""
    deadline = time.monotonic() + READY_TIMEOUT_S + SLACK_S
    while not any(line == "WARM" for line in (log.read_text(errors="replace").splitlines() if log.is_file() else [])):
        if broker.poll() is not None:
            return  # it failed: run_to_end reports it with its log
        if time.monotonic() > deadline:
            raise GroundTruthError("the load generator did not finish its warm-up; last lines of "
                                   f"{log}:\n{log_tail(log)}")
        time.sleep(0.05)
    for server, pid in pids.items():
        host, port = server.split(":")
        throttle = CpuThrottle(f"workbench-{os.getpid()}-{host}-{port}", cpu_limit(factors[server]))
        processes.throttles.append(throttle)
        throttle.add(pid)
    signal_file.touch()


def run_to_end(proc: subprocess.Popen[bytes], log: Path, what: str, timeout_s: float) -> str:
    """Wait for a JVM that ends by itself; its last line, or a :class:`GroundTruthError` with the end of its log."""
    try:
        status = proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired as exc:
        raise GroundTruthError(f"{what} still running after {timeout_s:.0f} s; last lines of {log}:\n"
                               f"{log_tail(log)}") from exc
    lines = log.read_text(errors="replace").splitlines()
    if status != 0:
        failed = next((line for line in lines if line.startswith(("FAILED ", "BuildSegments failed: "))),
                      f"exit status {status}")
        raise GroundTruthError(f"{what} failed: {failed}; last lines of {log}:\n{log_tail(log)}")
    return lines[-1] if lines else ""


def run_segment_build(proc: subprocess.Popen[bytes], log: Path) -> None:
    """Wait for Pinot's segment creator (``build_segments_command``); when it refuses the table config, schema or rows
    (its ``BuildSegments failed: <exception>`` line), a :class:`PinotRefused` with Pinot's own message."""
    try:
        run_to_end(proc, log, "Pinot's segment creator", SLACK_S)
    except GroundTruthError:
        lines = log.read_text(errors="replace").splitlines() if log.is_file() else []
        failed = next((line for line in lines if line.startswith("BuildSegments failed: ")), None)
        if failed is None:
            raise
        message = failed.removeprefix("BuildSegments failed: ")
        raise PinotRefused("Pinot's segment creator refused it",
                           re.sub(r"^[\w.$]+(Exception|Error): ", "", message)) from None


def run_cluster(table_config: Mapping[str, Any], schema: Mapping[str, Any], segments: Mapping[str, pd.DataFrame],
                queries: Sequence[str], load: LoadSpec, *, num_servers: int = 2,
                assignment: Mapping[str, str] | None = None,
                ideal_state: Mapping[str, Mapping[str, str]] | None = None,
                scheduler_config: Mapping[str, str] | None = None, broker_config: Mapping[str, str] | None = None,
                server_heap: str = "256m", broker_heap: str = "256m", logs_dir: str | Path | None = None,
                gc_logs: bool = False, cpus: Mapping[str, Sequence[int]] | None = None,
                slow: Mapping[str, float] | None = None, work_dir: str | Path | None = None) -> ClusterRun:
    """Run ``queries`` against Pinot server processes at the open-loop rate of ``load``.

    Parameters
    ----------
    table_config, schema
        The user's OFFLINE table config and schema, as Pinot takes them.
    segments
        Rows per segment name; each becomes one segment built by Pinot's creator.
    queries
        SQL, used in turn by the load generator (query ``i`` is ``queries[i % len(queries)]``).
    ideal_state
        Segment to ``{"Server_host_port": "ONLINE", ...}`` (see :func:`allocate_servers`, :func:`instance_name`): the
        servers started are the instances it names, each loading the segments it holds, and the broker routes with
        the table's own pruners and instance selector on it (replicas, replica groups, balanced selection).
    assignment
        Instead of ``ideal_state``: segment to ``host:port`` (one replica each). With neither,
        :func:`round_robin_assignment` over ``num_servers`` servers on :func:`allocate_servers`.
    scheduler_config, broker_config
        Pinot server config passed to every server (``pinot.query.scheduler.*``, ``pinot.server.query.executor.*``)
        and broker config (``pinot.broker.*``: the instance selector's and query log's settings).
    logs_dir
        Where the JVMs write what a Pinot cluster would leave behind: ``broker-querylog.log`` (the broker's
        ``QueryLogger``), ``server-<host>-<port>-querylog.log`` (each server's ``ServerQueryLogger``), with
        ``gc_logs`` ``gc-broker.log`` and ``gc-server-<host>-<port>.log`` (``-Xlog:gc*``), each JVM's console log,
        ``zk_metadata.json`` and ``ideal_state.json``. Default: the temporary work directory, removed after.
    cpus
        CPU numbers per process, keyed ``"broker"`` or a server's ``host:port`` (others unpinned): each JVM starts
        pinned to them (``taskset``).
    slow
        Slow factor per server ``host:port``: from the end of the warm-up (before the first measured query), that
        server's JVM runs in a cgroup of its own limited to ``1/factor`` of one core
        (:mod:`workbench.groundtruth.throttle`; needs root and the cgroup v1 cpu controller, checked before anything
        starts), removed when the call ends.
    """
    if num_servers < 1 or not segments or not queries:
        raise ValueError("need at least one server, one segment and one query")
    jars = ensure_built()
    if ideal_state is None:
        if assignment is None:
            assignment = round_robin_assignment(list(segments), allocate_servers(num_servers))
        ideal_state = {seg: {instance_name(server): "ONLINE"} for seg, server in assignment.items()}
    ideal = {seg: dict(states) for seg, states in ideal_state.items()}
    if set(ideal) != set(segments):
        raise ValueError(f"the ideal state names {sorted(ideal)}, the table has segments {sorted(segments)}")
    servers = sorted({host_port(i) for states in ideal.values() for i in states})
    unknown = sorted(set(slow or {}) - set(servers))
    if unknown:
        raise ValueError(f"slow servers {unknown} are not among the servers {servers}")
    if slow:
        cpu_cgroup_root()
        for factor in slow.values():
            cpu_limit(factor)
    with run_dirs("workbench-cluster-", work_dir, logs_dir) as (work, logs, processes):
        return _run(jars, work, logs, processes, table_config, schema, segments, queries, load, servers, ideal,
                    _Options(dict(scheduler_config or {}), dict(broker_config or {}), server_heap, broker_heap,
                             gc_logs, dict(cpus or {}), dict(slow or {})))


def host_port(instance: str) -> str:
    """``host:port`` of a ``Server_host_port`` instance id (the inverse of :func:`instance_name`).

    >>> host_port("Server_127.0.0.2_8098")
    '127.0.0.2:8098'
    """
    parts = instance.split("_")
    if len(parts) < 3 or parts[0] != "Server" or not parts[-1].isdigit():
        raise ValueError(f"instance {instance!r} is not Pinot's Server_<host>_<port>")
    return f"{'_'.join(parts[1:-1])}:{parts[-1]}"


@dataclass(frozen=True)
class _Options:
    scheduler_config: dict[str, str]
    broker_config: dict[str, str]
    server_heap: str
    broker_heap: str
    gc_logs: bool
    cpus: dict[str, Sequence[int]]
    slow: dict[str, float] = field(default_factory=dict)


def _run(jars: PinotJars, work: Path, logs: Path, processes: Processes, table_config: Mapping[str, Any],
         schema: Mapping[str, Any], segments: Mapping[str, pd.DataFrame], queries: Sequence[str], load: LoadSpec,
         servers: list[str], ideal: dict[str, dict[str, str]], options: _Options) -> ClusterRun:
    command, built = build_segments_command(jars, options.server_heap, work, table_config, schema, segments)
    log = logs / "build.log"
    run_segment_build(processes.start(command, log), log)

    started: list[tuple[str, subprocess.Popen[bytes], Path]] = []
    for server in servers:
        host, port = server.split(":")
        own = work / f"segments-{host}-{port}"
        own.mkdir()
        for name, states in ideal.items():
            if instance_name(server) in states:
                shutil.copytree(built / name, own / name)
        extra = [f"{k}={v}" for k, v in options.scheduler_config.items()]
        log = logs / f"server-{host}-{port}.log"
        label = f"server-{host}-{port}"
        command = [*java_command(jars, options.server_heap, "workbench.cluster.PinotServer", label, logs,
                                 options.gc_logs),
                   str(work / "table.json"), str(work / "schema.json"), str(own), host, port, *extra]
        started.append((server, processes.start(command, log, options.cpus.get(server)), log))
    ready = tuple(wait_ready(proc, log, server, READY_TIMEOUT_S) for server, proc, log in started)
    at_ready = {server: schedstat(proc.pid) for server, proc, _ in started}

    write_queries(work / "queries.sql", queries)
    (logs / "ideal_state.json").write_text(json.dumps(ideal, indent=1, sort_keys=True))
    spec: dict[str, Any] = {"tableName": table_config["tableName"], "schema": str(work / "schema.json"),
                            "tableConfig": str(work / "table.json"), "segmentsDir": str(built),
                            "segments": list(segments), "servers": [instance_name(s) for s in servers],
                            "idealState": ideal, "zkDir": str(work / "zk"), "zkPort": free_port(),
                            "zkMetadataOut": str(logs / "zk_metadata.json"), "brokerConfig": options.broker_config,
                            **load.open_loop(work / "queries.sql", work / "start" if options.slow else None)}
    (work / "load.json").write_text(json.dumps(spec))
    out = work / "records.jsonl"
    log = logs / "broker.log"
    proc = processes.start([*java_command(jars, options.broker_heap, "workbench.cluster.LoadGenerator", "broker", logs,
                                   options.gc_logs), str(work / "load.json"), str(out)], log,
                           options.cpus.get("broker"))
    if options.slow:
        slow_down_after_warmup(processes, {server: p.pid for server, p, _ in started if server in options.slow},
                               options.slow, proc, log, work / "start")
    summary = run_to_end(proc, log, "the load generator", load.run_timeout_s())
    used = {server: tuple(b - a for a, b in zip(at_ready[server], schedstat(p.pid), strict=True))
            for server, p, _ in started}
    lines = log.read_text(errors="replace").splitlines()
    # Netty's "channel inactive" lines may follow DONE as the router shuts down: the summary is the DONE line.
    summary = next((line for line in lines if line.startswith("DONE ")), summary)
    routing = next((line for line in lines if line.startswith("ROUTING ")), "")
    zk_path = logs / "zk_metadata.json"
    zk_metadata = json.loads(zk_path.read_text()) if zk_path.is_file() else {}
    return ClusterRun(_records(out), tuple(servers), tuple(p.pid for p in processes.started), summary, ready,
                      ideal, routing, zk_metadata, {k: (v[0], v[1]) for k, v in used.items()})


def write_queries(path: Path, queries: Sequence[str]) -> Path:
    """The load generators' SQL file: one query per line (a query's own line breaks become spaces)."""
    path.write_text("".join(q.replace("\n", " ").strip() + "\n" for q in queries))
    return path


def _records(path: Path) -> pd.DataFrame:
    """One row per query; per-server details kept as a list of dicts, plus the slowest server's ``timeUsedMs``."""
    rows = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        servers = [{"instance": s["instance"], "responded": s["responded"], "responseDelayMs": s["responseDelayMs"],
                    "submitDelayMs": s["submitDelayMs"],
                    **{k: int(v) for k, v in s.get("metadata", {}).items() if v.lstrip("-").isdigit()},
                    "exceptions": tuple(s.get("exceptions", ()))} for s in record.get("servers", [])]
        record["servers"] = servers
        record["maxServerTimeUsedMs"] = max((s.get("timeUsedMs", -1) for s in servers), default=-1)
        record["exceptions"] = tuple(record.get("exceptions", ()))
        rows.append(record)
    frame = pd.DataFrame(rows)
    return frame.sort_values("requestId").reset_index(drop=True) if not frame.empty else frame
