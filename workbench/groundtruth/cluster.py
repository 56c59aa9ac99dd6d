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
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.groundtruth.build import GroundTruthError, PinotJars, PinotRefused, ensure_built
from workbench.groundtruth.harness import JVM_FLAGS, free_port
from workbench.groundtruth.throttle import CpuThrottle, cpu_cgroup_root, cpu_limit

__all__ = [
    "JIT_GROUPS",
    "ClusterRun",
    "LoadSpec",
    "Processes",
    "Snapshot",
    "Warmup",
    "after_warmup",
    "allocate_servers",
    "build_segments_command",
    "compile_share",
    "cpu_states",
    "cpu_use",
    "host_port",
    "instance_name",
    "java_command",
    "log_tail",
    "measured_use",
    "round_robin_assignment",
    "run_cluster",
    "run_dirs",
    "run_segment_build",
    "run_to_end",
    "settle_signal",
    "thread_group",
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
    #: The most seconds the warm-up goes on past ``warmup_queries`` for the servers' JIT compilers to go quiet
    #: (:func:`after_warmup`); 0: it stops at ``warmup_queries``.
    settle_s: float = 0.0

    def open_loop(self, queries: Path, start_signal: Path | None = None) -> dict[str, Any]:
        """The keys both load generators' shared scheduler (``workbench.cluster.OpenLoop``) reads: this load, the SQL
        file (one query per line) and, when something must happen between warm-up and measured run, the file whose
        appearance starts it (and, with ``settle_s``, the one that ends the warm-up: :func:`settle_signal`)."""
        spec: dict[str, Any] = {"queries": str(queries), "ratePerSecond": self.rate_per_s, "seed": self.seed,
                                "numQueries": self.num_queries, "timeoutMs": self.timeout_ms, "threads": self.threads,
                                "warmupQueries": self.warmup_queries}
        if self.duration_s is not None:
            spec["durationS"] = self.duration_s
        if start_signal is not None:
            spec["startSignal"] = str(start_signal)
            if self.settle_s > 0:
                spec["settleSignal"] = str(settle_signal(start_signal))
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
        return expected_s + self.timeout_ms / 1000 + SLACK_S + 2 * self.warmup_queries + self.settle_s


def settle_signal(start_signal: Path) -> Path:
    """The file whose appearance ends a warm-up that waits for the JIT (beside the start signal)."""
    return start_signal.with_name(start_signal.name + ".settled")


#: HotSpot's JIT compiler threads (:func:`thread_group` names).
JIT_GROUPS = ("C1 CompilerThre", "C2 CompilerThre")
#: The servers' JIT compilers are quiet when each server's ran less than :data:`SETTLE_SHARE` of a core over the last
#: :data:`SETTLE_WINDOW_S`. Why wait for it: Apache Pinot 1.5.1 on one core, after 2,000 warm-up queries, still spent
#: 1.0 ms of C2 compilation per query in the measured run at every rate from 24 to 194 queries/s (40% of its JVM's
#: CPU), falling from 16% of the core to 1% over 40 s: bursts of a few ms to 50 ms that a running server no longer
#: has, and that a calibration would read as per-query CPU. Why 10 s: on a slower machine (2026-11-27, AMD EPYC,
#: 3.1 ms of server CPU per query where the first machine took 1.1) the compilers ran in bursts with lulls of 2-3 s
#: between them (sampled each second: 13, 2, 5 ms, then 277, 20, 126 ms); a 2 s window ended the warm-up in such a
#: lull, 40 s before the compilers went quiet, and they then ran 15-27% of the server's CPU through every measured
#: run (0.46-1.0 ms per query) and stretched each query's wall time as the load rose. Over 10 s a lull no longer
#: passes for quiet.
SETTLE_SHARE = 0.02
SETTLE_WINDOW_S = 10.0


@dataclass(frozen=True)
class Warmup:
    """How a run's warm-up ended: the queries it ran (``None``: not said), and with a JIT settle (``settle_s`` > 0)
    how long it went on past its minimum, whether the compilers went quiet by then, and the largest share of a core
    any server's compilers used over the last window."""

    queries: int | None
    settle_s: float = 0.0
    waited_s: float = 0.0
    quiet: bool = False
    compile_share: float | None = None

    def to_json(self) -> dict[str, Any]:
        if self.settle_s <= 0:
            return {"queries": self.queries}
        said = (f"the servers' JIT compilers went quiet after {self.waited_s:.1f} s more (under "
                f"{SETTLE_SHARE:.0%} of a core over {SETTLE_WINDOW_S:g} s)" if self.quiet else
                f"the servers' JIT compilers were still busy after {self.waited_s:.1f} s more (the most allowed)")
        return {"queries": self.queries, "jit": said, "jit_share_of_core_at_end": self.compile_share}


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
    #: not on a CPU: another process had it) over the measured run, from the end of the load generator's warm-up to
    #: its end (``/proc/<pid>/task/*/schedstat``; threads that ended in between are not counted). The warm-up is
    #: left out: the JIT compiles most of the query path then, seconds of CPU that are no query's.
    schedstat: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    #: Per server ``host:port``: the CPU ms over the measured run of each group of its JVM's threads (the thread's
    #: name less its number: ``pqr``, ``pqw``, ``nioEventLoopGroup``, ``C2 CompilerThre``, ``G1 Conc``...), to say
    #: where the CPU outside the query's own threads goes (:func:`thread_group`).
    threads: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    #: How the warm-up ended (:func:`after_warmup`).
    warmup: Warmup = Warmup(None)
    #: Per CPU of this machine (``"1"``), the share of the measured run's time in each state (:func:`cpu_use`).
    cpu_use: Mapping[str, Mapping[str, float]] = field(default_factory=dict)


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


#: A thread name's trailing number (``-3``, ``#12``, ``-2-1``), left out to group a pool's threads.
_THREAD_NUMBER = re.compile(r"[-#_ ]?[0-9][-#0-9]*$")


def thread_group(name: str) -> str:
    """A thread's group: its name (Linux's 15-character ``comm``) less its number, so a pool's threads add up.

    >>> [thread_group(n) for n in ("pqw-12", "GC Thread#1", "nioEventLoopGro", "C2 CompilerThre", "7")]
    ['pqw', 'GC Thread', 'nioEventLoopGro', 'C2 CompilerThre', '?']
    """
    return _THREAD_NUMBER.sub("", name) or "?"


def _by_group(times: Mapping[str, tuple[float, float]]) -> dict[str, float]:
    """CPU ms per thread group (:func:`thread_group`) of per-thread ``tid/name -> (cpu_ms, wait_ms)`` times."""
    groups: dict[str, float] = {}
    for thread, (ran, _) in times.items():
        group = thread_group(thread.split("/", 1)[1])
        groups[group] = groups.get(group, 0.0) + ran
    return groups


def _threads(pid: int) -> dict[str, tuple[float, float]]:
    """Per live thread (``tid/name``) its ``(cpu_ms, run_queue_wait_ms)``; threads Linux does not say are left out."""
    out: dict[str, tuple[float, float]] = {}
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = (task / "schedstat").read_text().split()
            name = (task / "comm").read_text().strip()
            out[f"{task.name}/{name}"] = (int(fields[0]) / 1e6, int(fields[1]) / 1e6)
    return out


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


#: Per server, per thread (``tid/name``): ``(cpu_ms, run_queue_wait_ms)`` at one moment.
ThreadTimes = dict[str, dict[str, tuple[float, float]]]
#: ``/proc/stat``'s time columns of each CPU, in its order (jiffies).
CPU_STATES = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


@dataclass(frozen=True)
class Snapshot:
    """What the servers' threads and this machine's CPUs had run at one moment (:func:`after_warmup`)."""

    threads: ThreadTimes
    cpus: dict[int, tuple[int, ...]]


def cpu_states() -> dict[int, tuple[int, ...]]:
    """Each CPU's :data:`CPU_STATES` times so far (``/proc/stat``; empty where Linux does not say)."""
    out: dict[int, tuple[int, ...]] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/stat").read_text().splitlines():
            name, *fields = line.split()
            if name.startswith("cpu") and name[3:].isdigit() and len(fields) >= len(CPU_STATES):
                out[int(name[3:])] = tuple(int(v) for v in fields[:len(CPU_STATES)])
    return out


def cpu_use(before: Mapping[int, tuple[int, ...]], after: Mapping[int, tuple[int, ...]]) -> dict[str, dict[str, float]]:
    """Per CPU, the share of the time between two :func:`cpu_states` in each state but idle, and ``busy`` (all but
    ``idle`` and ``iowait``): what ran on the server's core besides its JVM (the network's ``softirq``, a VM's
    ``steal``).

    >>> use = cpu_use({1: (100, 0, 10, 100, 0, 0, 0, 0)}, {1: (160, 0, 20, 120, 0, 0, 10, 0)})["1"]  # 100 jiffies
    >>> use["user"], use["system"], use["softirq"], use["busy"]
    (0.6, 0.1, 0.1, 0.8)
    """
    out: dict[str, dict[str, float]] = {}
    for cpu, end in after.items():
        start = before.get(cpu)
        if start is None:
            continue
        grown = [b - a for a, b in zip(start, end, strict=True)]
        total = sum(grown)
        if total <= 0:
            continue
        shares = {k: round(v / total, 4) for k, v in zip(CPU_STATES, grown, strict=True) if k != "idle"}
        shares["busy"] = round(1.0 - (grown[CPU_STATES.index("idle")] + grown[CPU_STATES.index("iowait")]) / total, 4)
        out[str(cpu)] = shares
    return out


def compile_share(samples: Sequence[tuple[float, Mapping[str, float]]], window_s: float) -> float | None:
    """The largest share of a core any server's JIT compilers used over the last ``window_s`` of ``samples``
    (``(time_s, {server: compiler CPU ms})``, oldest first); ``None`` until the samples span the window.

    >>> compile_share([(0.0, {"a": 100.0, "b": 0.0}), (1.0, {"a": 130.0, "b": 5.0}), (2.0, {"a": 140.0, "b": 9.0})],
    ...               2.0)  # a ran 40 ms in 2 s: 2% of a core; b 0.45%
    0.02
    >>> compile_share([(0.0, {"a": 0.0}), (1.0, {"a": 1.0})], 2.0) is None
    True
    """
    if not samples or samples[-1][0] - samples[0][0] < window_s:
        return None
    now, last = samples[-1]
    start, first = next((t, v) for t, v in reversed(samples) if now - t >= window_s)
    return max(((last[s] - first.get(s, 0.0)) / ((now - start) * 1000.0) for s in last), default=0.0)


def after_warmup(processes: Processes, pids: Mapping[str, int], factors: Mapping[str, float],
                 broker: subprocess.Popen[bytes], log: Path, signal_file: Path, settle_s: float = 0.0
                 ) -> tuple[Snapshot, Warmup]:
    """Once the load generator's warm-up is over (its ``WARM`` line): each server's threads' CPU so far (per thread,
    so the measured run's CPU leaves the warm-up out), each slow server's JVM (``factors``) in a CPU-limit cgroup of
    its own; then the measured run starts (``signal_file``). Slowed only now, the server was warmed like the others:
    a JVM throttled from its start answers its first queries (class loading, interpreted code) at a quarter of a
    core, hundreds of ms each, and adaptive selection's latency average would shun it for that alone.

    With ``settle_s`` (the load's :attr:`LoadSpec.settle_s`), once the generator's first warm-up queries have run
    (its ``WARMED`` line) the warm-up goes on, at the measured run's own rate, until every server's JIT compilers
    are quiet (:data:`SETTLE_SHARE`) or ``settle_s`` have passed, then ends (:func:`settle_signal`). Returns no
    thread times when the load generator ended before its warm-up did (it failed: :func:`run_to_end` reports it
    with its log)."""
    deadline = time.monotonic() + READY_TIMEOUT_S + SLACK_S + settle_s
    samples: deque[tuple[float, dict[str, float]]] = deque()
    warmed: float | None = None
    ended: Warmup | None = None
    while True:
        lines = log.read_text(errors="replace").splitlines() if log.is_file() else []
        if "WARM" in lines:
            break
        if broker.poll() is not None:
            return Snapshot({}, {}), Warmup(None)
        now = time.monotonic()
        if now > deadline:
            raise GroundTruthError("the load generator did not finish its warm-up; last lines of "
                                   f"{log}:\n{log_tail(log)}")
        if settle_s > 0 and ended is None:
            warmed = warmed if warmed is not None or not any(x.startswith("WARMED ") for x in lines) else now
            if warmed is not None:
                samples.append((now, {server: _compiler_ms(pid) for server, pid in pids.items()}))
                while len(samples) > 2 and now - samples[1][0] >= SETTLE_WINDOW_S:
                    samples.popleft()
                share = compile_share(samples, SETTLE_WINDOW_S)
                quiet = share is not None and share < SETTLE_SHARE
                if quiet or now - warmed >= settle_s:
                    ended = Warmup(None, settle_s, now - warmed, quiet, share)
                    settle_signal(signal_file).touch()
        time.sleep(0.1)
    warm = Snapshot({server: _threads(pid) for server, pid in pids.items()}, cpu_states())
    said = next((int(x.split()[1]) for x in lines if x.startswith("WARMUP ")), None)
    warmup = replace(ended, queries=said) if ended is not None else Warmup(said)
    for server, pid in pids.items():
        if server not in factors:
            continue
        host, port = server.split(":")
        throttle = CpuThrottle(f"workbench-{os.getpid()}-{host}-{port}", cpu_limit(factors[server]))
        processes.throttles.append(throttle)
        throttle.add(pid)
    signal_file.touch()
    return warm, warmup


def _compiler_ms(pid: int) -> float:
    """The CPU ms a JVM's JIT compiler threads have run (:data:`JIT_GROUPS`)."""
    return sum(ms for group, ms in _by_group(_threads(pid)).items() if group in JIT_GROUPS)


def measured_use(warm: Snapshot, pids: Mapping[str, int]
                 ) -> tuple[dict[str, tuple[float, float]], dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    """From the end of the warm-up (``warm``, :func:`after_warmup`) to now: per server ``(cpu_ms, wait_ms)`` of its
    JVM's threads and the CPU ms of each group of them (:func:`thread_group`), most first; and per CPU of this
    machine the share of the time in each state (:func:`cpu_use`)."""
    used: dict[str, tuple[float, float]] = {}
    groups: dict[str, dict[str, float]] = {}
    cores = cpu_use(warm.cpus, cpu_states())
    for server, pid in pids.items():
        before, after = warm.threads.get(server, {}), _threads(pid)
        grown = {t: (ran - before.get(t, (0.0, 0.0))[0], waited - before.get(t, (0.0, 0.0))[1])
                 for t, (ran, waited) in after.items()}
        used[server] = (sum(v[0] for v in grown.values()), sum(v[1] for v in grown.values()))
        groups[server] = dict(sorted(((g, ms) for g, ms in _by_group(grown).items() if ms > 0), key=lambda kv: -kv[1]))
    return used, groups, cores


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

    write_queries(work / "queries.sql", queries)
    (logs / "ideal_state.json").write_text(json.dumps(ideal, indent=1, sort_keys=True))
    spec: dict[str, Any] = {"tableName": table_config["tableName"], "schema": str(work / "schema.json"),
                            "tableConfig": str(work / "table.json"), "segmentsDir": str(built),
                            "segments": list(segments), "servers": [instance_name(s) for s in servers],
                            "idealState": ideal, "zkDir": str(work / "zk"), "zkPort": free_port(),
                            "zkMetadataOut": str(logs / "zk_metadata.json"), "brokerConfig": options.broker_config,
                            **load.open_loop(work / "queries.sql", work / "start")}
    (work / "load.json").write_text(json.dumps(spec))
    out = work / "records.jsonl"
    log = logs / "broker.log"
    proc = processes.start([*java_command(jars, options.broker_heap, "workbench.cluster.LoadGenerator", "broker", logs,
                                   options.gc_logs), str(work / "load.json"), str(out)], log,
                           options.cpus.get("broker"))
    pids = {server: p.pid for server, p, _ in started}
    warm, warmup = after_warmup(processes, pids, options.slow, proc, log, work / "start", load.settle_s)
    summary = run_to_end(proc, log, "the load generator", load.run_timeout_s())
    used, threads, cores = measured_use(warm, pids)
    lines = log.read_text(errors="replace").splitlines()
    # Netty's "channel inactive" lines may follow DONE as the router shuts down: the summary is the DONE line.
    summary = next((line for line in lines if line.startswith("DONE ")), summary)
    routing = next((line for line in lines if line.startswith("ROUTING ")), "")
    zk_path = logs / "zk_metadata.json"
    zk_metadata = json.loads(zk_path.read_text()) if zk_path.is_file() else {}
    return ClusterRun(_records(out), tuple(servers), tuple(p.pid for p in processes.started), summary, ready,
                      ideal, routing, zk_metadata, used, threads, warmup, cores)


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
