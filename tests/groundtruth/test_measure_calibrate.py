"""From nothing to a calibrated scenario on Pinot's processes: ``measure``, ``calibrate --measured``, ``simulate``.

The demo's REALTIME table (its events streamed through Kafka, Pinot cutting its own LLC segments), small, on two server
JVMs with two replicas, at one low rate, through the command line as a user runs it. Expected values come from
Pinot's own records of the run (``records.parquet``: each server's measured work, the segments and servers queried,
the documents scanned; the replayed servers' busy time is held to that work) and from the model's parts (pruners,
router, filter evaluator) applied to the same SQL and request ids by this test; none from the code under test's own
output. No assertion is about how fast anything was.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from procs import descendants

from workbench.api import load_generate_spec
from workbench.cli import main
from workbench.errors import InputError
from workbench.groundtruth.agreement import model_segment_metadata
from workbench.groundtruth.measure import measured_files
from workbench.pinot.schema import Schema
from workbench.pinot.segment import ColumnPartitionMetadata, SegmentMetadata
from workbench.pinot.sql.evaluate import evaluate_filter
from workbench.pinot.table_config import TableConfig
from workbench.scenario import load_scenario
from workbench.sim.layout import Layout
from workbench.sim.planner import Planner
from workbench.sim.router import Router, own_routing_options
from workbench.workload.directory import read_events
from workbench.workload.pure import generate_local

ROOT = Path(__file__).resolve().parents[2]
RATE, QUERIES, WARMUP = 10.0, 60, 10


def _pinot_segments(data: Path, zk: dict[str, dict[str, str]]) -> dict[str, pd.DataFrame]:
    """The rows of each segment Pinot made of the streamed events: an LLC segment ``table__partition__seq__time``
    holds its partition's events from its ZK ``startOffset`` up to its ``endOffset`` (all the rest while consuming)."""
    events = read_events(data)
    out = {}
    for name, f in zk.items():
        partition = int(name.split("__")[1])
        offsets = events["offset"].where(events["partition"] == partition, -1)
        end = int(f.get("segment.realtime.endOffset", len(events) + 1))
        out[name] = events[(offsets >= int(f["segment.realtime.startOffset"])) & (offsets < end)]
    return out


def _model_agreed(scenario: Path, measured: Path, rate: Path) -> int:
    """Queries of the run where every compared count of Pinot's records equals the model's, recomputed here on the
    segments Pinot cut from the stream (not the workload's own cut)."""
    sc = load_scenario(scenario)
    segments = _pinot_segments(Path(json.loads(scenario.read_text())["workload"]["data"]),
                               json.loads((measured / "segments.json").read_text()))
    zk = json.loads((measured / "segments.json").read_text())
    schema = json.loads((measured / "schema.json").read_text())
    table = TableConfig.from_json(sc.table.to_json())
    ideal = json.loads((rate / "ideal_state.json").read_text())
    names = tuple(sorted(segments))
    servers = tuple(sorted({s for states in ideal.values() for s in states}))
    consuming = {n for n in names if zk[n]["segment.realtime.status"] == "IN_PROGRESS"}
    # A consuming segment has no time range for the broker, and the controller's partition: its stream partition of
    # the table's one partition column (key_id, Modulo over the topic's four partitions).
    metadata = {n: (SegmentMetadata(n, None, None, total_docs=len(segments[n]), partitions={"key_id": (
        ColumnPartitionMetadata("Modulo", 4, frozenset([int(n.split("__")[1])])))}) if n in consuming
        else model_segment_metadata(table, schema, n, segments[n])) for n in names}
    docs = np.array([len(segments[n]) for n in names], float)
    index = {s: i for i, s in enumerate(servers)}
    layout = Layout(servers, names, docs, np.array([n in consuming for n in names]), ideal,
                    tuple(tuple(index[s] for s in ideal[n]) for n in names), metadata, np.zeros(len(names), int))
    planner, router = Planner(names, docs, table, Schema.from_json(schema), metadata), Router(layout, table)
    agreed = 0
    for rec in pd.read_parquet(rate / "records.parquet").to_dict("records"):
        sql = rec["sql"]
        plan = planner.plan(sql)
        assert plan.query is not None
        kept = plan.names or ()
        per_server, _ = router.route(int(rec["requestId"]), plan.names, plan.key,
                                     router.options_for(own_routing_options(plan.query)))
        chosen = {server for server, segs in per_server if len(segs)} if kept else set()
        same = (not rec["exceptions"] and rec["numSegmentsQueried"] == len(kept)
                and rec["numServersQueried"] == len(chosen)
                # Pinot's broker answers a query with every segment pruned by its empty response, which says 0 pruned
                # (BaseSingleStageBrokerRequestHandler.getEmptyBrokerOnlyResponse, 1.5.1).
                and rec["numSegmentsPrunedByBroker"] == (plan.pruned if kept else 0))
        # As tests/groundtruth/test_measure.py: a selection (with no ORDER BY, or ordered by a column as all of this
        # workload's are) stops scanning at a point that differs between two runs of Pinot itself; its documents are
        # not compared.
        if "GROUP BY" not in sql and "(" not in sql.split("FROM")[0]:
            agreed += same
            continue
        matched = [int(evaluate_filter(plan.query.filter, segments[n]).sum()) for n in kept]
        agreed += same and rec["numDocsScanned"] == sum(matched) and rec["numSegmentsMatched"] == sum(
            1 for m in matched if m > 0)
    return agreed


def test_measure_then_calibrate_from_the_directory_then_simulate(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    sc = load_scenario(ROOT / "scenarios" / "default.yaml").with_overrides({
        "workload.generate.events": 20_000, "workload.generate.segment_rows": 2000,
        "workload.generate.queries.duration_s": 60, "cluster.servers": 2})
    data = sc.to_dict()
    data["table"] = str(ROOT / "scenarios" / "tables" / "events_REALTIME.json")
    data["workload"]["data"] = str(tmp_path / "workload")
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps(data))
    spec, table, _, config = load_generate_spec(load_scenario(scenario))
    generate_local(spec, tmp_path / "workload", table=table, table_config=config, progress=False)
    me = os.getpid()
    before = descendants(me)

    measured = tmp_path / "measured"
    assert main(["measure", str(scenario), "--out", str(measured), "--rate", f"{RATE:g}", "--queries", str(QUERIES),
                 "--warmup", str(WARMUP), "--seed", "5"]) == 0
    rate = measured / "rate-10"
    records = pd.read_parquet(rate / "records.parquet")
    assert len(records) == QUERIES

    # The agreement file: every query sent, and as many agreeing as this test's own comparison finds.
    agreement = json.loads((rate / "agreement.json").read_text())
    assert agreement["queries"] == QUERIES
    assert agreement["agreed"] == _model_agreed(scenario, measured, rate)
    assert "LIMIT and no ORDER BY" in agreement["compared"]
    captured = capsys.readouterr()
    said = captured.err + captured.out
    assert f"agreed {agreement['agreed']} of {QUERIES}" in said

    # Calibrate from the directory alone, through the command line; the lowest (only) rate is read and said.
    calibrated = tmp_path / "calibrated"
    assert main(["calibrate", "--measured", str(measured), "--out", str(calibrated), "--backtest-queries", "0"]) == 0
    said = capsys.readouterr()
    assert "measured rate 10/s (rate-10/)" in said.err + said.out
    calibration = json.loads((calibrated / "calibration.json").read_text())
    # The cores and Pinot release come from measure.json: two servers on this machine's cores run unpinned, each JVM
    # told it has the scenario's cores (-XX:ActiveProcessorCount), and calibrate charges each server that many
    document = json.loads((measured / "measure.json").read_text())
    cores = yaml.safe_load((calibrated / "scenario.yaml").read_text())["cluster"]["server"]["cores"]
    # (on a machine with a core for each server and one more, each is pinned to one)
    expected = 1 if document["latency_is_validation"] else sc.cluster.server.cores
    assert cores == expected == calibration["server_cores"]
    assert any(line.strip().startswith("cores:") and "# from measure.json: each server JVM" in line
               for line in (calibrated / "scenario.yaml").read_text().splitlines())
    assert calibration["pinot_version"] == document["pinot_version"] != ""
    # The segments keep their LLC names (REALTIME to the importer): calibrated as the scenario's own REALTIME table.
    assert json.loads((calibrated / "table_config.json").read_text())["tableType"] == "REALTIME"
    assert calibration["fitted_to"] == "servers' measured work"
    assert calibration["sources"]["query_log"] == [str(rate / "broker-querylog.log")]
    assert sorted(Path(p).name for p in calibration["sources"]["gc_logs"]) == sorted(
        p.name for p in rate.glob("gc-server-*.log")) and len(calibration["sources"]["gc_logs"]) == 2
    # A G1 calibration charges its allocation per server request (Pinot's collections follow its queries), so the
    # model's collections follow the load; with too few collections for G1 the log's own pauses are replayed.
    gc = yaml.safe_load((calibrated / "scenario.yaml").read_text())["cluster"]["gc"]
    if gc["collector"] == "g1":
        assert gc["allocation_rate"] is None and gc["bytes_per_request"] > 0 and gc["bytes_per_doc"] == 0
        assert any(n.startswith("cluster.gc: the logs' allocation while serving") for n in calibration["notes"])
    else:
        assert gc["collector"] == "fixed"
    # Pinot's servers' measured work per query that reached a server (their query threads' CPU, the time those
    # threads were held without running, and serialising the response; the broker's response sums them over the
    # servers that answered), from the records, not the log. The small table's time range leaves some dashboards'
    # windows with no segment.
    reached = records[records["numServersQueried"] > 0]
    assert len(reached) > 0
    work_ms = float(sum(reached[f"{side}{part}"] for side in ("offline", "realtime") for part in (
        "ThreadCpuTimeNs", "SystemActivitiesCpuTimeNs", "ResponseSerializationCpuTimeNs")).mean() / 1e6)
    assert work_ms > 0
    fitted = calibration["fit"]["quality"]["model_work_ms_per_query"]
    assert abs(fitted - work_ms) <= 0.05 * work_ms, (fitted, work_ms)

    # The calibrated scenario replays the measured log, from its first query (no warm-up).
    assert main(["simulate", str(calibrated / "scenario.yaml"), "--out", str(tmp_path / "replay"), "--quiet",
                 "--set", "simulation.warmup_s=0"]) == 0
    summary = json.loads((tmp_path / "replay" / "summary.json").read_text())["summary"]
    assert 0 < summary["queries"] <= QUERIES * summary["replications"], summary["queries"]
    # Its servers are as busy as Pinot's servers measured over the run (their responses' CPU counters, summed over
    # every query and server from the records), within 25%: the model redraws each segment's run with the fitted
    # variability; fitted to timeMs alone it put 3.2 times Pinot's measured work on its servers.
    pinot_ms = work_ms * len(reached)
    servers = pd.read_parquet(tmp_path / "replay" / "servers.parquet")
    model_ms = float(servers.groupby("replication")["busy_ms"].sum().mean())
    assert 0.8 * pinot_ms <= model_ms <= 1.25 * pinot_ms, (model_ms, pinot_ms)

    assert descendants(me) - before == set()


def test_a_directory_that_is_not_a_measurement_gets_one_error_naming_it(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibrate", "--measured", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"--measured {tmp_path}" in err[0] and "measure.json" in err[0]
    (tmp_path / "measure.json").write_text(json.dumps({"checked_as": "OFFLINE", "rates": {"rate-5": {}, "rate-20": {}},
                                                       "calibrate_table_config": "scenario_table_config.json"}))
    with pytest.raises(InputError, match="--rate") as e:
        measured_files(tmp_path, 7)
    assert "5, 20" in str(e.value)
    for name in ("scenario_table_config.json", "schema.json", "segments.json"):
        (tmp_path / name).write_text("{}")
    (tmp_path / "rate-5").mkdir()
    assert main(["calibrate", "--measured", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "rate-5/broker-querylog.log" in err[0], err
    assert not (tmp_path / "o").exists()


def test_a_measurement_of_another_table_or_pinot_release_is_refused_naming_both(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``calibrate --measured`` with a table config of another table, or from a directory measured on another Pinot
    release than the one the pom pins, is one error naming both; the cores come from the pinned CPUs."""
    pinned = re.search(r"<pinot\.version>([^<]+)<", (ROOT / "probes" / "pinot" / "pom.xml").read_text())
    assert pinned is not None
    document = {"table": "events", "pinot_version": pinned.group(1), "checked_as": "OFFLINE",
                "calibrate_table_config": "scenario_table_config.json",
                "rates": {"rate-5": {"cpus": {"127.0.0.2:8098": [1], "broker": [0]}}}}
    (tmp_path / "measure.json").write_text(json.dumps(document))
    for name in ("scenario_table_config.json", "schema.json", "segments.json"):
        (tmp_path / name).write_text("{}")
    (tmp_path / "rate-5").mkdir()
    (tmp_path / "rate-5" / "broker-querylog.log").write_text("")
    files = measured_files(tmp_path)
    assert (files.table, files.pinot_version, files.server_cores) == ("events", pinned.group(1), 1)
    other = tmp_path / "airline.json"
    other.write_text(json.dumps({"tableName": "airlineStats_OFFLINE", "tableType": "OFFLINE"}))
    assert main(["calibrate", "--measured", str(tmp_path), "--table-config", str(other),
                 "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "airlineStats_OFFLINE" in err[0] and "table events" in err[0], err
    (tmp_path / "measure.json").write_text(json.dumps({**document, "pinot_version": "1.4.0"}))
    assert main(["calibrate", "--measured", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Apache Pinot 1.4.0" in err[0] and f"Pinot {pinned.group(1)}" in err[0], err
    assert not (tmp_path / "o").exists()
