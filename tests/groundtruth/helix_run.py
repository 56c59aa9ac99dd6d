"""The session's one Helix cluster (about 30 s to start and stream), run once for ``test_helix_cluster.py``,
``test_calibrate_controller.py`` and ``test_helix_realtime.py``: everything that needs the live cluster runs inside the
``with`` block (queries, ``calibrate --controller``, fetches that must fail, the REALTIME tables' queries of
``stream_run.py``); the tests assert on the record after every JVM is stopped. Beside the OFFLINE ``clicks`` the
cluster streams two REALTIME tables through Kafka (``stream_run.py``): one start-up serves both.
"""

from __future__ import annotations

import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import tables
from stream_run import StreamRun, record_streams, stream_tables

from workbench.api import calibrate, fetch_controller
from workbench.calibrate import CalibrationResult
from workbench.errors import InputError
from workbench.groundtruth.helix_cluster import HelixTable, helix_cluster

__all__ = ["CLICKS_CONFIG", "CLICKS_QUERIES", "HelixRun", "start_run"]

CLICKS_CONFIG = {"tableName": "clicks_OFFLINE", "tableType": "OFFLINE",
                 "segmentsConfig": {"timeColumnName": "ts", "replication": "1"}, "tenants": {}, "metadata": {},
                 "tableIndexConfig": {}}
CLICKS_QUERIES = {"count": "SELECT COUNT(*), SUM(clicks) FROM clicks",
                  "us": "SELECT COUNT(*) FROM clicks WHERE country = 'us'",
                  "by_country": "SELECT country, SUM(clicks) FROM clicks GROUP BY country ORDER BY country"}
#: Queries sent for the broker's log that ``calibrate --controller`` fits on.
LOG_QUERIES = 40


@dataclass(frozen=True)
class HelixRun:
    """What the session's cluster was given and answered; ``calibrated`` and ``fetch_errors`` are
    ``calibrate --controller``'s result (or its error) and the errors of fetches that must fail."""

    rows: pd.DataFrame
    segments: dict[str, pd.DataFrame]
    schema: dict[str, Any]
    health: str
    servers: tuple[str, ...]
    ideal_state: dict[str, dict[str, str]]
    external_view: dict[str, dict[str, str]]
    responses: dict[str, dict[str, Any]]
    query_log: str
    pids: tuple[int, ...]
    controller_url: str
    out: Path
    calibrated: CalibrationResult | Exception
    fetch_errors: dict[str, Exception]
    stream: StreamRun


def _error(call: Callable[[], Any]) -> Exception:
    try:
        call()
    except InputError as exc:
        return exc
    raise AssertionError("expected an InputError")


def start_run(logs: Path, work: Path) -> HelixRun:
    """Start the cluster, query it, calibrate from its controller and broker log, stop it; the record."""
    rows = tables.rows(5, 600, "ts", day=False)
    segments = {f"clicks_{i}": rows.iloc[i * 300:(i + 1) * 300].reset_index(drop=True) for i in range(2)}
    schema = tables.schema("ts", day=False)
    query_log = Path(logs) / "broker-querylog.log"
    streams = stream_tables()
    with helix_cluster(HelixTable(CLICKS_CONFIG, schema, segments), *streams, num_servers=2,
                       logs_dir=logs) as cluster:
        with urllib.request.urlopen(f"{cluster.broker_url}/health", timeout=30) as response:
            health = response.read().decode()
        responses = {name: cluster.query(sql) for name, sql in CLICKS_QUERIES.items()}
        for sql in tables.queries(7, LOG_QUERIES, "ts", tables.T0, tables.T0 + 24 * tables.HOUR, 6 * tables.HOUR):
            cluster.query(sql)
        calibrated: CalibrationResult | Exception
        try:
            calibrated = calibrate(controller=cluster.controller_url, table="clicks", query_log=query_log,
                                   out=work / "calibrated", server_cores=1, backtest_queries=0)
        except Exception as exc:  # the test reports it; the cluster's other tests still run
            calibrated = exc
        url = cluster.controller_url
        errors = {"no such table": _error(lambda: fetch_controller(url, "nope", work / "x")),
                  "no such type": _error(lambda: fetch_controller(url, "clicks", work / "y", table_type="REALTIME"))}
        run = HelixRun(rows, segments, schema, health, cluster.servers, cluster.ideal_state("clicks"),
                       cluster.external_view("clicks"), responses, "", cluster.pids, url, work / "calibrated",
                       calibrated, errors, record_streams(cluster, streams))
    return HelixRun(**{**run.__dict__, "query_log": query_log.read_text()})
