"""A run that failed says so before any percentile: on the ``simulate`` line and in ``summary.json``.

Each scenario is forced to fail in a way that can be worked out by hand: a broker timeout far below
the service time makes every query time out; a live heap with no room left for G1's smallest young
generation makes every server run out of heap; and the validation shape, far from both, does not fail.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from workbench.analysis.failures import CODE_NAMES, tainted_percentiles
from workbench.cli import main
from workbench.runs import run_scenario
from workbench.sim.records import ERROR_CODES

#: Two servers of one core each holding one segment; every query asks both, each for 10 ms of work.
BASE: dict[str, Any] = {
    "cluster": {"servers": 2, "server": {"cores": 1, "heap": "1G"}, "network": {"latency_ms": 0},
                "broker": {"overhead_ms": 0, "reduce_ms_per_server": 0, "reduce_ms_per_row": 0},
                "gc": {"collector": "none"}},
    "table": {"tableName": "t", "tableType": "OFFLINE", "routing": {"instanceSelectorType": "balanced"},
              "segmentsConfig": {"replication": 1}},
    "workload": {"synthetic": {"segments_per_server": 1, "docs_per_segment": 1000},
                 "arrival": {"process": "poisson", "qps": 10}},
    "service": {"model": "deterministic", "mean_ms": 10},
    "simulation": {"duration_s": 30, "warmup_s": 1, "replications": 2, "seed": 1},
}


def _merge(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in changes.items():
        out[key] = _merge(out.get(key, {}), value) if isinstance(value, dict) else value
    return out


def _with(**changes: Any) -> dict[str, Any]:
    return _merge(BASE, changes)


#: The broker waits 5 ms for work that takes 10 ms: every query times out (427 SERVER_NOT_RESPONDING at the
#: deadline), every answer is partial, and its latency is the 5 ms timeout, not a service time.
TIMED_OUT = _with(cluster={"broker": {"timeout_ms": 5}})
#: 990 MiB of live data in a 1 GiB heap leaves 34 MiB, less than G1's smallest young generation
#: (G1NewSizePercent 5% of 1 GiB = 51.2 MiB): the JVM throws OutOfMemoryError on every server, at start.
OUT_OF_HEAP = _with(cluster={"gc": {"collector": "g1", "live_heap": "990M"}})


def test_every_query_timing_out_is_a_failed_run_whose_percentiles_are_the_timeout() -> None:
    s = run_scenario(TIMED_OUT, None).summary
    assert s.latency_ms.p99.value == pytest.approx(5.0)  # the deadline, not a latency
    assert s.failures.failed
    assert s.errors.query_error_share == 1.0 and s.partial_rate == 1.0 and s.errors.by_code == {"427": 1.0}
    why = s.failures.why
    assert "100.0% of queries carried an error (427 SERVER_NOT_RESPONDING 100.0%), 100.0% partial" in why
    assert "p50, p95, p99, p99.9 may be made of failed queries" in why
    assert s.headline().startswith("FAILED RUN: ") and s.headline().index("FAILED") < s.headline().index("p99 5.00")


def test_every_server_out_of_heap_is_a_failed_run() -> None:
    s = run_scenario(OUT_OF_HEAP, None).summary
    assert s.heap.oom_servers == 4  # 2 servers x 2 replications
    assert s.failures.failed
    assert s.failures.why.startswith("4 of 4 server runs (servers x replications) ran out of heap")
    assert "OutOfMemoryError" in s.failures.why
    assert s.headline().index("ran out of heap") < s.headline().index("p99")


def test_a_healthy_run_is_not_failed_and_its_line_is_the_p99() -> None:
    s = run_scenario(BASE, None).summary
    assert not s.failures.failed and s.failures.why == ""
    assert s.headline() == f"p99 {s.latency_ms.p99.value:.2f} ms over {s.queries:,} queries"


def test_simulate_says_the_failure_on_its_line_and_in_summary_json(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "timeout.json"
    scenario.write_text(json.dumps(TIMED_OUT))
    out = tmp_path / "run"
    assert main(["simulate", str(scenario), "--out", str(out), "--quiet"]) == 0
    line = capsys.readouterr().out.strip()
    assert len(line.splitlines()) == 1
    assert line.startswith("FAILED RUN: 100.0% of queries carried an error") and line.index("427") < line.index("p99")
    failures = json.loads((out / "summary.json").read_text())["summary"]["failures"]
    assert failures["failed"] is True and "427 SERVER_NOT_RESPONDING" in failures["why"]


@pytest.mark.parametrize(("share", "labels"), [
    (1.0, ["p50", "p95", "p99", "p99.9"]),  # every query failed: every percentile is a failure
    (0.5, ["p50", "p95", "p99", "p99.9"]),  # half failed: the median may be one
    (0.02, ["p99", "p99.9"]),  # 2% failed fill the top 1% and more
    (0.01, ["p99", "p99.9"]),  # exactly the top 1%
    (0.009, ["p99.9"]),  # less than 1%: only the top 0.1% can be all failures
    (0.0, []),
])
def test_the_percentiles_failed_queries_alone_could_fill(share: float, labels: list[str]) -> None:
    assert tainted_percentiles(share) == labels


def test_every_error_code_the_engines_report_has_its_pinot_name() -> None:
    assert sorted(CODE_NAMES) == sorted(ERROR_CODES)
    assert CODE_NAMES[427].startswith("SERVER_NOT_RESPONDING") and CODE_NAMES[250].startswith("EXECUTION_TIMEOUT")
