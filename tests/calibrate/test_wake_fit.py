"""``calibrate`` reads the wake-up (``service.wake_ms``, ``wake_tau_ms``) from a broker log that shows it.

The logs are written here by hand, not by the workbench's model: one query shape on one server (one hourly segment,
a fixed 1.4 ms of measured CPU), queries arriving with exponential gaps of mean 50 ms, and each query's round trip
to the server the CPU plus 2 ms plus a wake-up of ``3 x (1 - exp(-x) x (1 + x))`` ms, ``x = gap / 25`` (``gap``:
the ms since the previous query arrived; the curve the model charges, written out here), read on the log's
millisecond clock (dithered: the true time plus a uniform draw, floored, so the clock's error has mean 0). The
broker's own share is 1 ms. So by construction the wake-up is 3 ms with a 25 ms time constant, and what is left of
each query's delay once it is taken out is the 2 ms. A log without a wake-up must get none.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pinot_files
import pytest
import synthetic_cluster as cluster
import yaml

from workbench.calibrate import CalibrateOptions, calibrate

T0, HOUR = cluster.T0_MS, cluster.HOUR_MS
SQL = f"SELECT SUM(value) FROM events WHERE ts >= {T0} AND ts < {T0 + HOUR}"   # a scan (a COUNT(*) reads metadata)
CPU_MS, REST_MS, BROKER_MS = 1.4, 2.0, 1
WAKE_MS, TAU_MS, MEAN_GAP_MS = 3.0, 25.0, 50.0
QUERIES = 600


def _line(rid: int, arrival_ms: int, response_ms: int) -> str:
    time_ms = response_ms + BROKER_MS
    cpu = round(CPU_MS * 1e6)
    return (f"{pinot_files.stamp(arrival_ms + time_ms)} INFO [QueryLogger] [jersey-server-managed-async-executor-1] "
            f"requestId={rid},table=events_OFFLINE,queryHash=,timeMs={time_ms},docs=200000/200000,entries=0/200000,"
            "segments(queried/processed/matched/consumingQueried/consumingProcessed/consumingMatched/unavailable):"
            "1/1/1/0/0/0/0,consumingFreshnessTimeMs=0,servers=1/1,groupsTrimmed=false,groupLimitReached=false,"
            "groupWarningLimitReached=false,brokerReduceTimeMs=0,exceptions=0,serverStats=(Server=SubmitDelayMs,"
            f"ResponseDelayMs,ResponseSize,DeserializationTimeMs,RequestSentDelayMs);pinot-server-0_O=0,{response_ms},"
            f"385,0,0,offlineThreadCpuTimeNs(total/thread/sysActivity/resSer):{cpu}/{cpu // 2}/{cpu - cpu // 2}/0,"
            "realtimeThreadCpuTimeNs(total/thread/sysActivity/resSer):0/0/0/0,clientIp=unknown,queryEngine=singleStage,"
            "offlineMemAllocatedBytes(total/thread/resSer):0/0/0,realtimeMemAllocatedBytes(total/thread/resSer):0/0/0,"
            f"pools=[],rlsFiltersApplied=false,query={SQL}")


def _curve(gap: np.ndarray, wake_ms: float, tau_ms: float) -> np.ndarray:
    """``wake_ms x (1 - exp(-x) x (1 + x))``, ``x = gap / tau_ms``; an infinite gap (the first query's): ``wake_ms``."""
    x = np.minimum(gap / tau_ms, 700.0)
    out: np.ndarray = wake_ms * (1.0 - np.exp(-x) * (1.0 + x))
    return out


#: The mean wake-up over exponential gaps of mean ``m``, ``r = m / tau``: ``E[exp(-x)] = 1 / (1 + r)`` and
#: ``E[x exp(-x)] = r / (1 + r)^2``, so ``3 x (1 - 1/3 - 2/9) = 4/3`` ms for ``r = 2``.
MEAN_WAKE_MS = WAKE_MS * (1.0 - 1.0 / 3.0 - 2.0 / 9.0)


def _files(root: Path, wake_ms: float, seed: int = 3) -> tuple[dict[str, Path], np.ndarray]:
    """The files of a log with a wake-up of ``wake_ms``, and each query's arrival (ms)."""
    rng = np.random.default_rng(seed)
    arrival = np.floor(T0 + 24 * HOUR + np.cumsum(rng.exponential(MEAN_GAP_MS, QUERIES))).astype(np.int64)
    gap = np.diff(arrival.astype(float), prepend=-np.inf)
    true = CPU_MS + REST_MS + _curve(gap, wake_ms, TAU_MS)
    response = np.floor(true + rng.uniform(0.0, 1.0, QUERIES)).astype(np.int64)
    lines = [_line(i + 1, int(a), int(r)) for i, (a, r) in enumerate(zip(arrival, response, strict=True))]
    return cluster.write_inputs(root, lines), arrival.astype(float)


def _calibrate(paths: dict[str, Path], out: Path, **options: object) -> tuple[dict, dict]:  # type: ignore[type-arg]
    calibrate(paths["table_config"], paths["schema"], paths["segments"], paths["query_log"], out,
              options=CalibrateOptions(servers=1, server_cores=1, backtest_queries=0, bootstrap=20, seed=1,
                                       **options))  # type: ignore[arg-type]
    return (json.loads((out / "calibration.json").read_text()),
            yaml.safe_load((out / "scenario.yaml").read_text()))


def test_a_log_with_a_wake_up_gives_its_size_and_time_constant_and_the_delay_without_it(tmp_path: Path) -> None:
    """With the servers' process CPU given (4 ms per query: room for the 1.4 ms of thread CPU plus the mean wake-up,
    4/3 ms for exponential gaps of mean 50 ms, :data:`MEAN_WAKE_MS`)."""
    doc, scenario = _calibrate(_files(tmp_path / "in", WAKE_MS)[0], tmp_path / "out", server_cpu_ms=4.0)
    wake = doc["delay"]["wake"]
    assert wake["wake_se"] < 0.3 and wake["tau_se"] < 8.0
    assert wake["wake_ms"] == pytest.approx(WAKE_MS, abs=3 * wake["wake_se"])
    assert wake["tau_ms"] == pytest.approx(TAU_MS, abs=3 * wake["tau_se"])
    assert scenario["service"]["wake_ms"] == pytest.approx(wake["wake_ms"], abs=1e-4)
    assert scenario["service"]["wake_tau_ms"] == pytest.approx(wake["tau_ms"], abs=1e-3)
    # what is left of a query's delay is the 2 ms the log's round trip holds besides its CPU and its wake-up; the
    # given process CPU beyond the thread CPU and the mean wake-up (4 - 1.4 - 4/3 ms) runs off the query's path
    assert doc["delay"]["mean_ms"] == pytest.approx(REST_MS, abs=0.15)
    assert scenario["service"]["off_path_ms"] == pytest.approx(4.0 - CPU_MS - MEAN_WAKE_MS, abs=0.15)


def test_given_process_cpu_holds_the_mean_wake_up_and_it_leaves_the_cpu_off_the_path(tmp_path: Path) -> None:
    """With the JVM's CPU per query given (here 4 ms), the log's mean wake-up is part of it: the CPU off the query's
    path loses it, so the model's server load at the log's rate stays the given one."""
    paths, arrival = _files(tmp_path / "in", WAKE_MS)
    doc, scenario = _calibrate(paths, tmp_path / "out", server_cpu_ms=4.0)
    wake = doc["delay"]["wake"]
    mean_wake = float(np.mean(_curve(np.diff(arrival, prepend=-np.inf), wake["wake_ms"], wake["tau_ms"])))
    service = scenario["service"]
    work = service["per_request_ms"] + service["per_segment_ms"] + service["ns_per_doc"] * 1e-6 * 200_000 \
        + service["merge_ms_per_segment"]
    assert work + mean_wake + service["off_path_ms"] == pytest.approx(4.0, abs=1e-3)


def test_without_the_process_cpu_a_wake_up_read_from_time_ms_stays_in_the_delay(tmp_path: Path) -> None:
    """The wake-up is CPU outside the query's threads; with only the log's thread CPU it cannot be told from waiting,
    so it is held at 0 with the reason, and the delay keeps it."""
    doc, scenario = _calibrate(_files(tmp_path / "in", WAKE_MS)[0], tmp_path / "out")
    wake = doc["delay"]["wake"]
    assert wake["wake_ms"] == 0.0 and "process CPU was not given" in wake["note"]
    assert scenario["service"].get("wake_ms", 0.0) == 0.0
    # the queries that met no other in flight keep their wake-up: at most 3 ms, 4/3 ms on average over all gaps and
    # more over theirs (they come after the longer gaps)
    assert REST_MS + MEAN_WAKE_MS - 0.1 < doc["delay"]["mean_ms"] < REST_MS + WAKE_MS + 0.2


def test_a_log_without_a_wake_up_gets_none(tmp_path: Path) -> None:
    doc, scenario = _calibrate(_files(tmp_path / "in", 0.0)[0], tmp_path / "out")
    assert doc["delay"]["wake"]["wake_ms"] == 0.0
    assert "held at 0" in doc["delay"]["wake"]["note"]
    assert scenario["service"]["wake_ms"] == 0.0
