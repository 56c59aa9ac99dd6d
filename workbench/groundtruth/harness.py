"""Run Pinot's own parts on a table: one JVM per call, always stopped, answers as typed records.

:func:`run_pinot` writes the table's rows and a request file, starts the driver
(``probes/pinot/src/.../PinotParts.java``) on the pinned Pinot jars, and reads what Pinot answered: the
ZooKeeper metadata its controller code writes for each segment, and per query the broker's routing and
the reduced response's metadata, under Pinot's own field names. The JVM runs in its own process group
and is killed on any error or Ctrl-C, so no Pinot process outlives the call.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.groundtruth.build import GroundTruthError, ensure_built

__all__ = ["JVM_FLAGS", "PinotAnswer", "PinotRun", "PinotTable", "free_port", "run_jvm", "run_pinot"]

#: JDK 17's module openings and Netty's reflective access, as Pinot 1.5.1's root pom starts the JVMs of its own
#: cluster tests (surefire ``argLine``): without ``tryReflectionSetAccessible`` Netty cannot reach direct buffers'
#: cleaner and falls back to heap buffers, which Pinot's servers and brokers do not run with.
JVM_FLAGS = (*(f"--add-opens=java.base/{p}=ALL-UNNAMED"
               for p in ("java.nio", "sun.nio.ch", "java.lang", "java.util", "java.lang.reflect", "jdk.internal.misc")),
             "-Dio.netty.tryReflectionSetAccessible=true",
             "-Dio.grpc.netty.shaded.io.netty.tryReflectionSetAccessible=true")
#: How long one driver run may take before it is stopped, s (segment building dominates: about 1 s per
#: hundred small segments on 2 cores, plus a few seconds of JVM and ZooKeeper start-up).
TIMEOUT_S = 600.0


@dataclass(frozen=True)
class PinotTable:
    """One OFFLINE table as Pinot gets it: the user's JSON unchanged, rows per segment, and where they live.

    ``ideal_state`` maps each segment to its servers (``{"seg": {"Server_127.0.0.2_8098": "ONLINE"}}``);
    ``broker_config`` holds broker settings (``pinot.broker.*``) the instance selector reads.
    """

    table_config: Mapping[str, Any]
    schema: Mapping[str, Any]
    segments: Mapping[str, pd.DataFrame]
    servers: tuple[str, ...]
    ideal_state: Mapping[str, Mapping[str, str]]
    broker_config: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PinotAnswer:
    """What Pinot's broker and servers made of one query (field names as in Pinot's broker response)."""

    sql: str
    request_id: int
    segments_after_broker_pruning: tuple[str, ...]
    segment_to_server: Mapping[str, str]
    metadata: Mapping[str, int]
    exceptions: tuple[str, ...]

    def __getitem__(self, key: str) -> int:
        return self.metadata[key]


@dataclass(frozen=True)
class PinotRun:
    """One driver run: the release that answered, each segment's ZK metadata, and the answers in order."""

    pinot_version: str
    zk_metadata: Mapping[str, Mapping[str, str]]
    pruner_types: tuple[str, ...]
    instance_selector_type: str
    answers: tuple[PinotAnswer, ...]
    #: The broker's ``querylog.log`` as its ``QueryLogger`` wrote it (Pinot's broker log4j2 set-up).
    query_log: str = ""


def free_port() -> int:
    """A port free on every address: Pinot's ``QueryServer`` binds its port on all of them, not on one host."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("", 0))
        return int(sock.getsockname()[1])


def _request(table: PinotTable, queries: Sequence[tuple[str, int]], work: Path) -> dict[str, Any]:
    segments = []
    for name, rows in table.segments.items():
        path = work / f"{name}.jsonl"
        rows.to_json(path, orient="records", lines=True)
        segments.append({"name": name, "rows": str(path)})
    return {"tableConfig": table.table_config, "schema": table.schema, "segments": segments,
            "workDir": str(work / "pinot"), "zkPort": free_port(), "servers": list(table.servers),
            "idealState": table.ideal_state, "brokerConfig": dict(table.broker_config),
            "queries": [{"sql": sql, "requestId": rid} for sql, rid in queries]}


def run_pinot(table: PinotTable, queries: Sequence[tuple[str, int]], *, heap: str = "768m",
              work_dir: str | Path | None = None) -> PinotRun:
    """Pinot's answers to ``queries`` (SQL, broker request id) on ``table``.

    Parameters
    ----------
    table
        The table, its rows cut into segments, and the ideal state to route on.
    queries
        Each query's SQL and the request id the broker routes it with (balanced routing rotates on it).
    heap
        The driver JVM's ``-Xmx``.
    work_dir
        Where segments and ZooKeeper's files go (default: a temporary directory, removed after).
    """
    jars = ensure_built()
    with tempfile.TemporaryDirectory(prefix="workbench-pinot-", dir=work_dir) as tmp:
        work = Path(tmp)
        (work / "request.json").write_text(json.dumps(_request(table, queries, work)))
        response = work / "response.json"
        query_log = work / "querylog.log"
        command = ["java", f"-Xmx{heap}", "-XX:+UseG1GC", *JVM_FLAGS,
                   f"-Dlog4j2.configurationFile={jars.classes / 'workbench-log4j2.xml'}",
                   f"-Dworkbench.querylog={query_log}", "-cp", jars.classpath,
                   "workbench.groundtruth.PinotParts", str(work / "request.json"), str(response)]
        run_jvm(command, work / "driver.log")
        log = query_log.read_text() if query_log.is_file() else ""
        return _parse(json.loads(response.read_text()), log)


def run_jvm(command: list[str], log: Path, driver: str = "PinotParts") -> None:
    """Run the driver (its class's simple name: ``driver``) in its own process group; kill the group on timeout,
    error or Ctrl-C; a failure raises with the driver's one-line reason."""
    with log.open("w") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            status = proc.wait(timeout=TIMEOUT_S)
        except BaseException:
            _kill_group(proc)
            raise
    if status != 0:
        text = log.read_text(errors="replace").splitlines()
        prefix = f"{driver} failed: "
        line = next((t for t in text if t.startswith(prefix)), text[-1] if text else "no output")
        raise GroundTruthError(f"Pinot refused the request: {line.removeprefix(prefix)}")


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


_METADATA = ("numSegmentsPrunedByBroker", "numServersQueried", "numServersResponded", "numDocsScanned",
             "numEntriesScannedInFilter", "numEntriesScannedPostFilter", "totalDocs", "numSegmentsQueried",
             "numSegmentsProcessed", "numSegmentsMatched", "numSegmentsPrunedByServer", "numRowsResultSet")


def _parse(data: Mapping[str, Any], query_log: str) -> PinotRun:
    answers = tuple(
        PinotAnswer(q["sql"], int(q["requestId"]), tuple(q.get("segmentsAfterBrokerPruning", ())),
                    dict(q.get("segmentToServer", {})), {k: int(q[k]) for k in _METADATA if k in q},
                    tuple(q.get("exceptions", ())))
        for q in data["queries"])
    return PinotRun(str(data["pinotVersion"]).split("-")[0],
                    {s["segmentName"]: dict(s["zkMetadata"]) for s in data["segments"]},
                    tuple(data["prunerTypes"]), str(data["instanceSelectorType"]), answers, query_log)
