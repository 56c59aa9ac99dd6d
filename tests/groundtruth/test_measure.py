"""``workbench measure``: the demo's table served by a local Pinot cluster at one low rate, as a user runs it.

The demo scenario's REALTIME table (time and Modulo partition pruning, balanced routing over two replicas) made small
and generated in-process, streamed for real: its events through Kafka into two server JVMs, which consume them and
commit segments with the controller by the table's own flush threshold. Expected values come from Pinot's documented
rules (the flush threshold divided among the partitions a server consumes; LLC segment names and offsets), from the
generated events counted with pandas, and from the Poisson arrival process; none from the measured run itself. No
assertion is about how fast anything was. Where this process may create cpu cgroups (root, cgroup v1), the run makes
``Server_1`` twice as slow (``--slow Server_1=2``) and checks what is recorded of it.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pandas as pd
import pytest
from procs import cmdline, ctrl_c_after, descendants, proc_stats
from scipy import stats

from workbench.api import load_generate_spec, measure
from workbench.cli import main
from workbench.errors import InputError
from workbench.groundtruth.throttle import CPU_CGROUP, cpu_cgroup_usable
from workbench.scenario import load_scenario
from workbench.workload.directory import read_events
from workbench.workload.importers.gc_log import read_gc_log
from workbench.workload.importers.query_log import read_query_log
from workbench.workload.pure import generate_local

ROOT = Path(__file__).resolve().parents[2]
RATE, QUERIES, WARMUP = 20.0, 80, 10


CGROUP = cpu_cgroup_usable()


def _ours(command: bytes) -> bool:
    """Whether a process is one of the JVMs ``measure`` starts: Pinot's roles or Kafka's broker and producer."""
    return b"workbench.cluster" in command or b"workbench.kafka" in command


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, set[int]]:
    """(scenario, measure output, pids alive before) of one ``workbench measure`` run at 20 queries/s."""
    root = tmp_path_factory.mktemp("measure")
    sc = load_scenario(ROOT / "scenarios" / "default.yaml").with_overrides({
        "workload.generate.events": 20_000, "workload.generate.segment_rows": 2000,
        "workload.generate.queries.duration_s": 60, "cluster.servers": 2})
    scenario = root / "scenario.json"
    data = sc.to_dict()
    data["table"] = str(ROOT / "scenarios" / "tables" / "events_REALTIME.json")
    data["workload"]["data"] = str(root / "workload")
    scenario.write_text(json.dumps(data))
    spec, table, _, config = load_generate_spec(load_scenario(scenario))
    generate_local(spec, root / "workload", table=table, table_config=config, progress=False)
    before = {pid for pid, *_ in proc_stats()}
    out = root / "measured"
    assert main(["measure", str(scenario), "--out", str(out), "--rate", f"{RATE:g}", "--queries", str(QUERIES),
                 "--warmup", str(WARMUP), "--seed", "3", *(["--slow", "Server_1=2"] if CGROUP else [])]) == 0
    return scenario, out, before


def test_the_broker_log_has_one_line_per_query_sent_and_the_importer_reads_it(
        measured: tuple[Path, Path, set[int]]) -> None:
    _, out, _ = measured
    rate = out / "rate-20"
    text = (rate / "broker-querylog.log").read_text()
    completed = [int(m) for m in re.findall(r"\[QueryLogger\] \[[^]]+\] requestId=(\d+),", text)]
    # Pinot's broker numbers its requests base * 10**9 + a counter from 0 (BrokerRequestIdGenerator, 1.5.1): the
    # cluster's checks that every streamed event is queryable (its COUNT(*) with skipUpsert) took the first counters,
    # the warm-up the next 10, and their lines are not kept; the measured queries follow, one line each.
    assert len({c // 10**9 for c in completed}) == 1
    everything = (rate / "broker-querylog.all.log").read_text()
    checks = everything.count("query=SET skipUpsert = true; SELECT COUNT(*) FROM events")
    assert checks >= 1
    assert sorted(c % 10**9 for c in completed) == list(range(checks + WARMUP, checks + WARMUP + QUERIES))
    log = read_query_log(rate / "broker-querylog.log")
    assert len(log.frame) == QUERIES and log.counts["skipped"] == 0
    assert sorted(log.frame["request_id"]) == sorted(completed)
    # Arrivals (logged time minus timeMs): the span of 80 Poisson arrivals at 20/s is Gamma(79, 1/20) s, within its
    # 1e-6 and 1 - 1e-6 quantiles (widened by 0.5 s for the broker's millisecond clock and hand-off).
    span = float(log.frame["arrival_s"].max() - log.frame["arrival_s"].min())
    low, high = stats.gamma.ppf([1e-6, 1 - 1e-6], QUERIES - 1, scale=1 / RATE)
    assert low - 0.5 <= span <= high + 0.5, (span, low, high)
    summary = json.loads((rate / "summary.json").read_text())
    assert summary["broker_log_lines"] == QUERIES == summary["queries_sent"] == summary["queries_recorded"]
    records = pd.read_parquet(rate / "records.parquet")
    assert sorted(records["requestId"]) == sorted(completed)


def _llc(name: str) -> tuple[int, int]:
    """(partition, sequence) of Pinot's LLC segment name ``table__partition__sequence__time``."""
    _, partition, sequence, _ = name.split("__")
    return int(partition), int(sequence)


def test_the_events_were_streamed_and_pinot_cut_its_own_segments(measured: tuple[Path, Path, set[int]]) -> None:
    """Each workload partition's events went to its Kafka partition, in order, and Pinot completed a segment every
    time a CONSUMING one held its threshold: the table's ``realtime.segment.flush.threshold.rows`` (5000) divided
    among the partitions a server consumes (two replicas of four partitions on two servers: all four each), 1250
    rows, not the workload's own 2000-row cut; the rest of each partition is in its CONSUMING segment."""
    scenario, out, _ = measured
    document = json.loads((out / "measure.json").read_text())
    assert document["checked_as"].startswith("REALTIME, streamed")
    assert document["streamed"]["partitions"] == 4 and "stream.kafka.broker.list" in document["streamed"][
        "connection_keys_rewritten"]
    events = read_events(Path(json.loads(scenario.read_text())["workload"]["data"]))
    per_partition = events.groupby("partition").size()
    assert document["rates"]["rate-20"]["produced"] == {str(p): int(n) for p, n in per_partition.items()}
    threshold = 5000 // 4
    zk = json.loads((out / "segments.json").read_text())
    expected = {}
    for partition, n in per_partition.items():
        for seq in range(n // threshold):
            expected[(partition, seq)] = ("DONE", seq * threshold, (seq + 1) * threshold)
        expected[(partition, n // threshold)] = ("IN_PROGRESS", n // threshold * threshold, None)
    assert {_llc(name): (f["segment.realtime.status"], int(f["segment.realtime.startOffset"]),
                         int(f["segment.realtime.endOffset"]) if "segment.realtime.endOffset" in f else None)
            for name, f in zk.items()} == expected
    for name, f in zk.items():  # a completed segment holds its partition's events at its offsets
        partition, _ = _llc(name)
        if f["segment.realtime.status"] == "DONE":
            offsets = events.loc[events["partition"] == partition, "offset"]
            held = offsets.between(int(f["segment.realtime.startOffset"]), int(f["segment.realtime.endOffset"]) - 1)
            assert int(f["segment.total.docs"]) == int(held.sum()) == threshold
    agreement = json.loads((out / "rate-20" / "agreement.json").read_text())
    assert agreement["checked_as"] == document["checked_as"] and "Pinot's own segments" in agreement["compared"]
    # Pinot's ZK time ranges and partitions of its completed segments are what the model reads from their rows
    assert [d for d in agreement["disagreements"] if d["field"].startswith("segmentMetadata")] == []


def test_every_event_is_counted_from_consuming_and_completed_segments(measured: tuple[Path, Path, set[int]]) -> None:
    scenario, out, _ = measured
    rate = out / "rate-20"
    events = read_events(Path(json.loads(scenario.read_text())["workload"]["data"]))
    records = pd.read_parquet(rate / "records.parquet")
    assert (records["exceptions"] == "").all()
    # A query the broker pruned nothing of ran on every segment, the four CONSUMING ones included: all events.
    whole = records[records["numSegmentsPrunedByBroker"] == 0]
    assert len(whole) > 0 and (whole["totalDocs"] == len(events)).all()
    assert (whole["numConsumingSegmentsQueried"] == 4).all()
    # The dashboards' COUNT(*) since a time before the first event: every event, counted by Pinot.
    since = records["sql"].str.extract(r"^SELECT COUNT\(\*\) FROM events WHERE event_time_ms >= (\d+)$")[0].dropna()
    assert len(since) > 0
    for i, start in since.items():
        assert (events["event_time_ms"] >= int(start)).all()
        assert records.loc[i, "numDocsScanned"] == len(events)
    # Each server's query log has one line per query it was asked: together, the broker's servers-queried sum.
    log = read_query_log(rate / "broker-querylog.log").frame
    measured_ids = set(int(i) for i in log["request_id"])
    lines = 0
    for path in rate.glob("server-*-querylog.log"):
        ids = [int(m) for m in re.findall(r"Processed requestId=(\d+),", path.read_text())]
        lines += sum(1 for i in ids if i in measured_ids)
    assert lines == int(log["num_servers_queried"].sum())


def test_gc_logs_are_pinots_and_read_by_the_importer(measured: tuple[Path, Path, set[int]]) -> None:
    scenario, out, _ = measured
    gc_logs = sorted((out / "rate-20").glob("gc-*.log"))
    assert [p.name.split("-")[1].removesuffix(".log") for p in gc_logs] == ["broker", "server", "server"]
    summary = json.loads((out / "measure.json").read_text())["rates"]["rate-20"]["gc"]
    for path in gc_logs:
        result = read_gc_log(path)
        assert result.counts["skipped"] == 0 and result.counts["lines"] > 0
        # Pinot's logs carry wall-clock times, so the summary counts the measured run's pauses only (the JVM's
        # start-up, segment loading and warm-up left out): never more than the whole log has
        assert summary[path.name]["span"] == "measured run"
        assert summary[path.name]["pauses"] <= len(result.frame)
    # Unpinned (two servers, the broker and the load generator share the cores), each server JVM is told the scenario
    # server's cores (-XX:ActiveProcessorCount), as Pinot sizes its pools by them: the JVM's own G1 start-up line says
    # how many it took as available.
    if not json.loads((out / "measure.json").read_text())["latency_is_validation"]:
        cores = load_scenario(scenario).cluster.server.cores
        for path in gc_logs[1:]:
            assert re.search(rf"CPUs: \d+ total, {cores} available", path.read_text()), path.name


def test_the_summary_says_what_shared_a_core_and_no_process_is_left(measured: tuple[Path, Path, set[int]]) -> None:
    _, out, _ = measured
    document = json.loads((out / "measure.json").read_text())
    dedicated = len(os.sched_getaffinity(0)) >= 3  # two servers with a core each, and one for the broker
    assert document["latency_is_validation"] is dedicated and document["servers_started"] == 2
    assert ("share all" in document["placement"]) is not dedicated
    summary = document["rates"]["rate-20"]
    assert "warning" not in summary and summary["errors"]["queries_with_exceptions"] == 0
    assert list(summary["client_latency_ms"]) == ["p50", "p90", "p99", "p99.9"]
    # no JIT settle asked: the warm-up ran exactly --warmup queries, as the load generator says
    assert summary["warmup"] == {"queries": WARMUP} and document["jit_settle_s"] == 0.0
    # each server's CPU over the measured run, by group of its JVM's threads: Pinot's query runner (pqr) and worker
    # (pqw) threads ran, and the groups add up to the JVM's whole CPU
    for cpu in summary["server_cpu"].values():
        groups = cpu["threads_ms_per_query"]
        assert groups["pqr"] > 0 and groups["pqw"] > 0
        assert sum(groups.values()) == pytest.approx(cpu["cpu_ms_per_query"], rel=0.01, abs=0.001)
        assert 0 <= cpu["jit_share"] <= 1
    # a server still compiling through the measured run (10 warm-up queries: it is) is said to be warming
    warming = max(cpu["jit_share"] for cpu in summary["server_cpu"].values()) > 0.15
    assert ("--jit-settle" in summary.get("jit_warning", "")) is warming
    # every CPU's time over the measured run by state: shares of it, the busy share at least its user share
    for use in summary["cpu_use"].values():
        assert 0 <= use["user"] <= use["busy"] <= 1 and 0 <= use["softirq"] <= 1
    # the load generator's own JVM over the measured run: it ran, on at most the cores this machine has
    assert summary["load_generator"]["cpu_ms_per_query"] > 0
    assert 0 < summary["load_generator"]["cores_busy"] <= len(os.sched_getaffinity(0))
    # Started under this test process (other sessions may run Pinot's JVMs at the same time): none is left, Kafka's
    # broker and producer included.
    assert [pid for pid in descendants(os.getpid()) if _ours(cmdline(pid))] == []


@pytest.mark.skipif(not CGROUP, reason=f"needs root and the cgroup v1 cpu controller at {CPU_CGROUP}")
def test_the_slow_server_is_recorded_with_its_cpu_limit_and_its_cgroup_is_gone(
        measured: tuple[Path, Path, set[int]]) -> None:
    _, out, _ = measured
    document = json.loads((out / "measure.json").read_text())
    # Twice as slow: half of each 5 ms period of one core.
    assert document["slow"] == {"Server_1": {"factor": 2.0, "cpu_period_us": 5000, "cpu_quota_us": 2500}}
    summary = document["rates"]["rate-20"]
    assert list(summary["slow"]) == [summary["servers"][1]]  # the scenario's Server_1 is the second started
    assert summary["slow"][summary["servers"][1]]["scenario_server"] == "Server_1"
    routed = summary["routed"]
    assert set(routed) <= set(summary["servers"]) and all(0 < r["share"] <= 1 for r in routed.values())
    assert sum(r["queries"] for r in routed.values()) >= summary["queries_recorded"] * 0.5
    assert not list(CPU_CGROUP.glob(f"workbench-{os.getpid()}-*"))


def test_a_slow_server_the_scenario_does_not_have_is_refused_before_anything_starts(
        measured: tuple[Path, Path, set[int]], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario, _, _ = measured
    assert main(["measure", str(scenario), "--out", str(tmp_path / "o"), "--slow", "Server_7=4"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--slow" in err[0] and "Server_0, Server_1" in err[0]
    with pytest.raises(SystemExit):
        main(["measure", str(scenario), "--out", str(tmp_path / "o"), "--slow", "Server_1"])
    assert "SERVER=FACTOR" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["measure", str(scenario), "--out", str(tmp_path / "o"), "--slow", "Server_1=0.5"])
    assert not (tmp_path / "o").exists()


def test_bad_input_gets_one_error_naming_the_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["measure", str(ROOT / "scenarios" / "synthetic.yaml"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("workbench measure: workload.data") and "--data" in err[0]
    with pytest.raises(SystemExit):
        main(["measure", str(ROOT / "scenarios" / "synthetic.yaml"), "--out", str(tmp_path / "o"), "--rate", "0"])
    assert "positive number of queries per second" in capsys.readouterr().err
    with pytest.raises(InputError, match="--rate"):
        measure(ROOT / "scenarios" / "synthetic.yaml", tmp_path / "o", rates=[], data=tmp_path)
    assert not (tmp_path / "o").exists()


def test_ctrl_c_during_measure_stops_every_jvm_and_leaves_no_directory(
        measured: tuple[Path, Path, set[int]], tmp_path: Path) -> None:
    """Interrupted (SIGALRM raising KeyboardInterrupt, as Ctrl-C does) 20 s into a minute-long measurement: wherever
    it lands (the cluster starting, the segments uploading, the load running), every JVM started under this process
    is gone and the output directory was never created (it is written whole or not at all)."""
    scenario, _, _ = measured
    with ctrl_c_after(20), pytest.raises(KeyboardInterrupt):
        measure(scenario, tmp_path / "cut", rates=[1.0], queries=60, warmup=5)
    # Pinot's and Kafka's JVMs (the test session's Spark JVM, also a descendant, is not one)
    assert [pid for pid in descendants(os.getpid()) if _ours(cmdline(pid))] == []
    assert not (tmp_path / "cut").exists()


def test_a_table_config_pinot_refuses_gets_pinots_own_message_in_one_line(
        measured: tuple[Path, Path, set[int]], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An inverted index on a column the schema does not have: Pinot's controller refuses the REALTIME table when it is
    created (its own message, ``TableConfigUtils``: ``Failed to find column: ... in schema``), said once, naming the
    scenario's ``table``; nothing written."""
    scenario, _, _ = measured
    data = json.loads(scenario.read_text())
    table = json.loads(Path(data["table"]).read_text())
    table["tableIndexConfig"]["invertedIndexColumns"] = ["no_such_column"]
    (tmp_path / "table.json").write_text(json.dumps(table))
    data["table"] = str(tmp_path / "table.json")
    (tmp_path / "scenario.json").write_text(json.dumps(data))
    assert main(["measure", str(tmp_path / "scenario.json"), "--out", str(tmp_path / "o"), "--queries", "5"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("workbench measure: table: Pinot's controller refused it (POST ")
    assert "(Apache Pinot 1.5.1)" in err[0] and "Failed to find column: no_such_column in schema" in err[0]
    assert not (tmp_path / "o").exists()


def test_replay_sends_the_workloads_queries_at_their_own_arrival_times(
        measured: tuple[Path, Path, set[int]], tmp_path: Path) -> None:
    """``--replay --duration 8``: the workload's first 30 queries, each at its own arrival (seconds after the first,
    read here from the workload's queries.parquet), those after 8 s left out; the directory is named by the replay's
    mean rate over those 30 ((30 - 1) / span). On the in-process broker (``--cluster processes``, the same open-loop
    scheduler as the Helix cluster's load, and a cheaper start)."""
    scenario, _, _ = measured
    data = Path(json.loads(scenario.read_text())["workload"]["data"])
    queries = pd.read_parquet(data / "queries.parquet").sort_values("arrival_s", kind="stable").head(30)
    arrival = (queries["arrival_s"] - queries["arrival_s"].min()).to_numpy(dtype=float)
    out = tmp_path / "replayed"
    assert main(["measure", str(scenario), "--out", str(out), "--replay", "--duration", "8", "--queries", "30",
                 "--warmup", "5", "--cluster", "processes", "--jit-settle", "2"]) == 0
    document = json.loads((out / "measure.json").read_text())
    assert document["arrivals"].startswith("the workload's own arrival times") and document["duration_s"] == 8.0
    name = f"rate-{round((len(arrival) - 1) / arrival.max(), 1):g}"
    assert list(document["rates"]) == [name]
    # --jit-settle 2: the warm-up ran its 5 queries one at a time and went on at the replay's own rate (30 queries
    # over about 8 s) until the JIT was quiet or 2 s had passed. Quiet is judged over 10 s, so it cannot be within
    # 2 s: the summary says the compilers were still busy, and the load generator's own count has the queries the
    # open-loop part sent (its first arrival, from a fixed seed, comes well inside 2 s at about 4 a second)
    warmup = document["rates"][name]["warmup"]
    assert warmup["queries"] > 5 and document["jit_settle_s"] == 2.0
    assert re.fullmatch(r"the servers' JIT compilers were still busy after \d+\.\d s more.*", warmup["jit"])
    records = pd.read_parquet(out / name / "records.parquet")
    assert sorted(records["arrivalS"]) == sorted(a for a in arrival if a <= 8.0)
    assert sorted(records["sql"]) == sorted(s for s, a in zip(queries["sql"], arrival, strict=True) if a <= 8.0)
    with pytest.raises(InputError, match="--replay"):
        measure(scenario, tmp_path / "both", rates=[5.0], replay=True)
    with pytest.raises(InputError, match=r"--jit-settle.*0 or more, got -1"):
        measure(scenario, tmp_path / "negative", rates=[5.0], jit_settle_s=-1.0)
    assert not (tmp_path / "negative").exists()
