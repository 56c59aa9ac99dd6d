"""Calibration from a broker log that carries the servers' measured work (``offlineThreadCpuTimeNs``).

Pinot 1.5.1 measured against the model (``docs/validation.md``) showed a broker log's ``timeMs`` is server work
*and* waiting, which the old fit read all as work. When servers measure their threads' time, every log line says
how much of the query was work; the fit must charge the servers exactly that and keep the rest as delay that
takes no server capacity. The logs here are written by hand and every expected value is computed by hand from
them (the workbench's cost model did not produce them):

* two query shapes on one server: one hourly segment of 200,000 documents (``A``) and four (``B``, 800,000),
  each logged with the same CPU time every time (1.4 ms and 4.0 ms), so the fitted work of each shape must be
  that time and the per-segment variability 0 (nothing is left for it to explain);
* the broker's share of every query (``timeMs`` minus ``ResponseDelayMs``) is 1 ms, so the broker's work is
  1 ms (overhead plus the default reduce, which the log cannot tell apart: one server, one row);
* so each query's delay is ``ResponseDelayMs`` minus its CPU time, by hand; the broker's millisecond clock logs
  each true delay within 1 ms of it either way, and the fit takes that rounding out (``workbench.calibrate.clock``,
  tested on its own in ``test_clock.py``): the delays it keeps have the logged ones' mean (within the 0.02 ms
  lattice it works on), lie within 1 ms of them rank for rank, and are no more spread.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pinot_files
import pytest
import synthetic_cluster as cluster
import yaml
from scipy.optimize import brentq

from workbench.calibrate import CalibrateOptions, calibrate
from workbench.calibrate.variability import _Simulator as Simulator
from workbench.calibrate.variability import fit_variability, widest

HOUR = cluster.HOUR_MS
T0 = cluster.T0_MS
SQL = {"A": f"SELECT SUM(value) FROM events WHERE ts >= {T0} AND ts < {T0 + HOUR}",
       "B": f"SELECT SUM(value) FROM events WHERE ts >= {T0 + 2 * HOUR} AND ts < {T0 + 6 * HOUR}"}
SEGMENTS = {"A": 1, "B": 4}
CPU_MS = {"A": 1.4, "B": 4.0}
QUERIES = 40


def _line(rid: int, kind: str, arrival_ms: int, response_ms: int, cpu_ns: int) -> str:
    time_ms = response_ms + 1  # the broker's own share: 1 ms
    docs = 200_000 * SEGMENTS[kind]
    s = SEGMENTS[kind]
    stamp = pinot_files.stamp(arrival_ms + time_ms)
    return (f"{stamp} INFO [QueryLogger] [jersey-server-managed-async-executor-1] requestId={rid},table=events_OFFLINE,"
            f"queryHash=,timeMs={time_ms},docs={docs}/{docs},entries=0/{docs},segments(queried/processed/matched/"
            f"consumingQueried/consumingProcessed/consumingMatched/unavailable):{s}/{s}/{s}/0/0/0/0,"
            f"consumingFreshnessTimeMs=0,servers=1/1,groupsTrimmed=false,groupLimitReached=false,"
            f"groupWarningLimitReached=false,brokerReduceTimeMs=0,exceptions=0,serverStats=(Server=SubmitDelayMs,"
            f"ResponseDelayMs,ResponseSize,DeserializationTimeMs,RequestSentDelayMs);pinot-server-0_O=0,{response_ms},"
            f"385,0,0,offlineThreadCpuTimeNs(total/thread/sysActivity/resSer):{cpu_ns}/{cpu_ns // 2}/"
            f"{cpu_ns - cpu_ns // 2}/0,realtimeThreadCpuTimeNs(total/thread/sysActivity/resSer):0/0/0/0,"
            f"clientIp=unknown,queryEngine=singleStage,offlineMemAllocatedBytes(total/thread/resSer):0/0/0,"
            f"realtimeMemAllocatedBytes(total/thread/resSer):0/0/0,pools=[],rlsFiltersApplied=false,query={SQL[kind]}")


def _log(measured: bool, cpu_ms: dict[str, float] = CPU_MS) -> tuple[list[str], list[float]]:
    """The log's lines (queries 100 ms apart, A and B in turn) and each query's delay by hand (ms)."""
    lines, delays = [], []
    for i in range(QUERIES):
        kind = "AB"[i % 2]
        response = 4 + i % 7 + (3 if kind == "B" else 0)
        cpu = cpu_ms[kind] if measured else 0.0
        lines.append(_line(i + 1, kind, T0 + 24 * HOUR + 100 * i, response, round(cpu * 1e6)))
        delays.append(response - cpu)
    return lines, delays


def _files(root: Path, measured: bool, cpu_ms: dict[str, float] = CPU_MS) -> tuple[dict[str, Path], list[float]]:
    lines, delays = _log(measured, cpu_ms)
    return cluster.write_inputs(root, lines), delays


#: The clock's rounding is taken out on a lattice of this step (ms): the mean kept within it.
LATTICE_MS = 0.02


def _calibrate(paths: dict[str, Path], out: Path, **options: object) -> dict[str, object]:
    calibrate(paths["table_config"], paths["schema"], paths["segments"], paths["query_log"], out,
              options=CalibrateOptions(servers=1, server_cores=1, backtest_queries=0, bootstrap=20, seed=1,
                                       **options))  # type: ignore[arg-type]
    doc: dict[str, object] = json.loads((out / "calibration.json").read_text())
    return doc


def _work(values: dict[str, float], segments: int, docs: int) -> float:
    """The model's work for one query on one server, from the fitted costs (docs/model.md's cost model)."""
    return (values["service.per_request_ms"] + segments * (values["service.per_segment_ms"]
            + values["service.merge_ms_per_segment"]) + values["service.ns_per_doc"] * 1e-6 * docs)


def _values(doc: dict[str, object]) -> dict[str, float]:
    params = doc["fit"]["parameters"]  # type: ignore[index]
    return {k: float(v["value"]) for k, v in params.items()}


def test_the_fitted_work_of_each_query_shape_is_its_measured_cpu_time_and_the_rest_is_delay(tmp_path: Path) -> None:
    paths, delays = _files(tmp_path / "in", measured=True)
    doc = _calibrate(paths, tmp_path / "out")
    assert doc["fitted_to"] == "servers' measured work"
    values = _values(doc)
    assert _work(values, 1, 200_000) == pytest.approx(CPU_MS["A"], abs=1e-6)
    assert _work(values, 4, 800_000) == pytest.approx(CPU_MS["B"], abs=1e-6)
    # every query of a shape took the same time: no spread is left for a per-segment factor
    assert doc["fit"]["variability"]["value"] == 0.0  # type: ignore[index]
    # the broker's 1 ms share: overhead + reduce for one server and one row
    broker = (values["cluster.broker.overhead_ms"] + values["cluster.broker.reduce_ms_per_server"]
              + values["cluster.broker.reduce_ms_per_row"])
    assert broker == pytest.approx(1.0, abs=1e-9)
    delay = doc["delay"]
    assert delay["queries"] == QUERIES  # type: ignore[index]
    assert delay["mean_ms"] == pytest.approx(float(np.mean(delays)), abs=LATTICE_MS)  # type: ignore[index]
    # within the clock's 1 ms of the logged p90
    assert abs(delay["p90_ms"] - float(np.percentile(delays, 90))) < 1.0  # type: ignore[index]
    # the scenario carries each query's delay as the per-request delay (one server: one draw per query), and no
    # separate network latency (the delay includes the transport). Before cluster.network.request_delay_ms the
    # delay rode on network.latency_ms as one-way values whose two draws summed as the delays (checked here by
    # their mean): the key changed, the delays it must carry did not.
    scenario = yaml.safe_load((tmp_path / "out" / "scenario.yaml").read_text())
    network = scenario["cluster"]["network"]
    assert network["latency_ms"] == 0
    assert network["request_delay_ms"]["dist"] == "empirical"
    kept = np.array(network["request_delay_ms"]["values"])
    assert len(kept) == QUERIES and np.all(np.diff(kept) >= 0)
    assert np.all(np.abs(kept - np.sort(delays)) < 1.0)  # rank for rank, within the clock's 1 ms
    assert kept.mean() == pytest.approx(float(np.mean(delays)), abs=LATTICE_MS)
    assert kept.var() <= float(np.var(delays))  # the clock only ever added spread


def test_held_costs_whose_defaults_alone_exceed_the_measured_work_are_scaled_to_it(tmp_path: Path) -> None:
    """Servers that measured far less work than the held defaults charge (as on Pinot's airlineStats example, where
    131 segments per query at the default 0.1 ms each came to 13 ms against 5.2 ms measured): shapes A and B
    measured 0.05 and 0.2 ms. The log cannot tell the per-segment and merge costs from the per-document one
    (documents grow with segments), so those two are held; at their defaults (0.1 + 0.005 ms per segment) A alone
    would cost 0.105 ms. Scaled by 0.05 / 0.105 they charge A 0.05 ms and B 4 x 0.05 = 0.2 ms: each shape's work as
    measured, with nothing left for the fitted costs."""
    paths, _ = _files(tmp_path / "in", measured=True, cpu_ms={"A": 0.05, "B": 0.2})
    doc = _calibrate(paths, tmp_path / "out")
    values = _values(doc)
    scale = 0.05 / 0.105
    assert values["service.per_segment_ms"] == pytest.approx(0.1 * scale, rel=1e-6)
    assert values["service.merge_ms_per_segment"] == pytest.approx(0.005 * scale, rel=1e-6)
    assert _work(values, 1, 200_000) == pytest.approx(0.05, abs=1e-6)
    assert _work(values, 4, 800_000) == pytest.approx(0.2, abs=1e-6)
    sources = {k: v["source"] for k, v in doc["fit"]["parameters"].items()}  # type: ignore[union-attr]
    assert sources["service.per_segment_ms"].startswith("held below its default")


def test_a_given_process_cpu_per_query_loads_the_cores_off_the_query_s_path(tmp_path: Path) -> None:
    """The process CPU beyond the query's threads is CPU off the query's path: it loads the server's cores
    (``service.off_path_ms``) and leaves the query's own work and its measured delay as they were."""
    paths, delays = _files(tmp_path / "in", measured=True)
    base_doc = _calibrate(paths, tmp_path / "base")
    base = _values(base_doc)
    assert base["service.off_path_ms"] == 0.0
    doc = _calibrate(paths, tmp_path / "process", server_cpu_ms=3.0)
    values = _values(doc)
    # the log's mean work is (1.4 + 4.0) / 2 = 2.7 ms per query, one server request each: 0.3 ms per request
    assert values["service.off_path_ms"] == pytest.approx(0.3, abs=1e-6)
    assert values["service.per_request_ms"] == pytest.approx(base["service.per_request_ms"], abs=1e-9)
    assert doc["delay"]["mean_ms"] == pytest.approx(float(np.mean(delays)), abs=LATTICE_MS)  # type: ignore[index]
    scenario = yaml.safe_load((tmp_path / "process" / "scenario.yaml").read_text())
    assert scenario["service"]["off_path_ms"] == pytest.approx(0.3, abs=1e-6)


def test_a_log_whose_servers_did_not_measure_cpu_is_fitted_to_time_ms_as_before(tmp_path: Path) -> None:
    paths, _ = _files(tmp_path / "in", measured=False)   # Pinot logs 0/0/0/0 when servers do not measure
    doc = _calibrate(paths, tmp_path / "out")
    assert doc["fitted_to"] == "timeMs" and doc["delay"] is None
    scenario = yaml.safe_load((tmp_path / "out" / "scenario.yaml").read_text())
    assert scenario["cluster"]["network"]["latency_ms"] == 0.25
    assert "request_delay_ms" not in scenario["cluster"]["network"]  # nothing measured: no delay of its own
    measured, _ = _files(tmp_path / "measured", measured=True)
    assert _calibrate(measured, tmp_path / "off", server_work=False)["fitted_to"] == "timeMs"


def _iqr(sigma: float) -> float:
    """Interquartile range of a mean-1 lognormal factor of log-sigma ``sigma`` (closed form)."""
    z = 0.6744897501960817
    return float(np.exp(-sigma**2 / 2) * (np.exp(z * sigma) - np.exp(-z * sigma)))


def test_the_variability_is_searched_where_its_spread_rises_and_a_wider_spread_is_reported_at_the_limit() -> None:
    # One segment per query, mean work 1 ms, no clock: the residual's spread is the factor's IQR, which rises to a
    # maximum and then falls (the median exp(-sigma^2/2) goes to 0). Its peak, by calculus: d/ds log IQR = 0.
    z = 0.6744897501960817
    peak = brentq(lambda s: -s + z / np.tanh(z * s), 0.1, 3.0)
    n = 4000
    mu, ids, shapes = np.ones(n), np.zeros(n, dtype=np.int64), (((1, 1, 1),),)
    sim = Simulator(mu, ids, shapes, 0, clock=False)
    top, spread = widest(sim)
    # the simulator's 1,024 draws per shape put its quartiles within about 10% of the closed form's
    assert abs(top - peak) <= 0.15 and spread == pytest.approx(_iqr(peak), rel=0.10)
    blocks = np.array_split(np.arange(n), 10)
    rng = np.random.default_rng(5)
    # residuals drawn with sigma 0.5: the fit finds 0.5, not the second sigma past the peak with the same spread
    draws = np.exp(0.5 * rng.standard_normal(n) - 0.125) - 1.0
    fit = fit_variability(draws, mu, ids, shapes, blocks=blocks, seed=0, bootstrap=20, clock=False)
    assert fit.sigma == pytest.approx(0.5, abs=0.06) and not fit.note
    wide = rng.normal(0.0, 2.0 * _iqr(peak), n)   # wider than any factor makes: at the limit, and said so
    fit = fit_variability(wide, mu, ids, shapes, blocks=blocks, seed=0, bootstrap=20, clock=False)
    assert fit.sigma == pytest.approx(top) and fit.se is None and fit.note.startswith("AT ITS LIMIT")


def test_the_cli_passes_server_work_and_server_cpu_ms(tmp_path: Path) -> None:
    """``workbench calibrate --server-cpu-ms 3`` puts (3 - 2.7) ms per request off the query's path as the API's
    ``server_cpu_ms`` does
    (the test above, by hand), and ``--no-server-work`` fits ``timeMs`` as ``server_work=False`` does."""
    from workbench.cli import main

    paths, delays = _files(tmp_path / "in", measured=True)
    base = _values(_calibrate(paths, tmp_path / "base"))
    common = ["--table-config", str(paths["table_config"]), "--schema", str(paths["schema"]),
              "--segments", str(paths["segments"]), "--query-log", str(paths["query_log"]), "--servers", "1",
              "--server-cores", "1", "--backtest-queries", "0", "--seed", "1"]
    assert main(["calibrate", *common, "--out", str(tmp_path / "cpu"), "--server-cpu-ms", "3.0"]) == 0
    doc = json.loads((tmp_path / "cpu" / "calibration.json").read_text())
    assert _values(doc)["service.off_path_ms"] == pytest.approx(0.3, abs=1e-6)
    assert _values(doc)["service.per_request_ms"] == pytest.approx(base["service.per_request_ms"], abs=1e-9)
    assert doc["delay"]["mean_ms"] == pytest.approx(float(np.mean(delays)), abs=LATTICE_MS)
    assert main(["calibrate", *common, "--out", str(tmp_path / "off"), "--no-server-work"]) == 0
    assert json.loads((tmp_path / "off" / "calibration.json").read_text())["fitted_to"] == "timeMs"


def test_delays_logged_as_the_slowest_of_four_requests_are_drawn_per_request_as_their_own_distribution() -> None:
    """Each logged delay is the slowest of a query's 4 server requests, each exponential with mean 2 ms (drawn here).
    The per-request delays recovered from them have the exponential's quantiles (median 2 ln 2 = 1.39 ms, p90
    2 ln 10 = 4.61 ms, p99 2 ln 100 = 9.21 ms), where the logged ones are the maximum's (median
    -2 ln(1 - 0.5 ** (1/4)) = 3.90 ms). Below the smallest logged delay the log says nothing: not compared."""
    from workbench.calibrate.work import per_request_delays

    rng = np.random.default_rng(7)
    logged = rng.exponential(2.0, size=(4000, 4)).max(axis=1)
    assert float(np.median(logged)) == pytest.approx(-2 * np.log(1 - 0.5 ** 0.25), rel=0.05)
    recovered = per_request_delays(logged, 4)
    for q, expected in ((0.5, 2 * np.log(2)), (0.9, 2 * np.log(10)), (0.99, 2 * np.log(100))):
        assert float(np.quantile(recovered, q)) == pytest.approx(expected, rel=0.05), q


def test_each_kind_of_query_is_given_its_own_delays_when_the_log_has_enough_of_them(tmp_path: Path) -> None:
    """240 selections and 240 group-bys, each on one hourly segment, in turn 100 ms apart (each alone), with the
    same 1.0 ms of measured work; the selections' servers answer in 2 ms, the group-bys' in 5, and the broker's share
    is 1 ms. By hand their delays are 2 - 1 = 1 ms and 5 - 1 = 4 ms: every selection's the same and every
    group-by's, so each kind's own delays are that value (within the 0.02 ms lattice the clock is taken out on, and
    the EM's spread), and the pooled ones are half of each. An aggregation-only log has one kind: no section."""
    where = f"WHERE ts >= {T0} AND ts < {T0 + HOUR}"
    sql = {"S": f"SELECT value FROM events {where} LIMIT 10", "G": f"SELECT value, COUNT(*) FROM events {where} "
           "GROUP BY value"}
    lines = []
    for i in range(480):
        kind = "SG"[i % 2]
        line = _line(i + 1, "A", T0 + 24 * HOUR + 100 * i, 2 if kind == "S" else 5, 1_000_000)
        lines.append(line.replace(f"query={SQL['A']}", f"query={sql[kind]}"))
    doc = _calibrate(cluster.write_inputs(tmp_path / "in", lines), tmp_path / "out")
    kinds = doc["delay"]["by_kind"]  # type: ignore[index]
    assert set(kinds) == {"selection", "group_by"}
    assert kinds["selection"]["queries"] == kinds["group_by"]["queries"] == 240
    assert kinds["selection"]["p50_ms"] == pytest.approx(1.0, abs=0.15)
    assert kinds["group_by"]["p50_ms"] == pytest.approx(4.0, abs=0.15)
    network = yaml.safe_load((tmp_path / "out" / "scenario.yaml").read_text())["cluster"]["network"]
    own = network["request_delay_by_kind_ms"]
    assert set(own) == {"selection", "group_by"}
    assert np.median(own["selection"]["values"]) == pytest.approx(1.0, abs=0.15)
    assert np.median(own["group_by"]["values"]) == pytest.approx(4.0, abs=0.15)
    pooled = np.array(network["request_delay_ms"]["values"])
    assert (pooled < 2.5).mean() == pytest.approx(0.5, abs=0.05)   # half of each
    single = _calibrate(_files(tmp_path / "agg", measured=True)[0], tmp_path / "agg-out")
    assert single["delay"]["by_kind"] == {}  # type: ignore[index]
    assert "request_delay_by_kind_ms" not in yaml.safe_load(
        (tmp_path / "agg-out" / "scenario.yaml").read_text())["cluster"]["network"]


def _gc_line(gc_id: int, end_ms: int, pause_ms: float) -> str:
    """A JDK 17 ``-Xlog:gc`` line with its wall-clock decoration, logged when the pause ends."""
    wall = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(end_ms // 1000)) + f".{end_ms % 1000:03d}+0000"
    return (f"[{wall}][{(end_ms - T0) / 1000:.3f}s][info][gc          ] GC({gc_id}) Pause Young (Normal) "
            f"(G1 Evacuation Pause) 60M->28M(70M) {pause_ms:.3f}ms")


def test_delays_of_queries_that_met_a_logged_gc_pause_are_left_out_when_the_gc_log_is_given(tmp_path: Path) -> None:
    """400 queries 100 ms apart (each alone), 1 ms of measured work, the servers answering in 2 ms: by hand each
    delay is 2 - 1 = 1 ms. Every 20th query met a 10 ms collection of its server (the GC log puts the pause inside
    its span: from 1 ms to 11 ms after it arrived) and answered in 12 ms: by hand a delay of 11 ms. Without the GC
    log those 20 are 5% of the drawn delays; with it they are left out (the model runs the server's collections
    itself), and every drawn delay is the others' 1 ms."""
    lines, gc = [], []
    start = T0 + 24 * HOUR
    for i in range(400):
        paused = i % 20 == 0
        lines.append(_line(i + 1, "A", start + 100 * i, 12 if paused else 2, 1_000_000))
        if paused:
            gc.append(_gc_line(len(gc), start + 100 * i + 11, 10.0))
    paths = cluster.write_inputs(tmp_path / "in", lines)
    (tmp_path / "gc.log").write_text("\n".join(gc) + "\n", encoding="utf-8")

    def drawn(out: Path, gc_logs: tuple[Path, ...]) -> np.ndarray:
        calibrate(paths["table_config"], paths["schema"], paths["segments"], paths["query_log"], out,
                  gc_logs=gc_logs, options=CalibrateOptions(servers=1, server_cores=1, backtest_queries=0,
                                                            bootstrap=20, seed=1))
        scenario = yaml.safe_load((out / "scenario.yaml").read_text())
        return np.array(scenario["cluster"]["network"]["request_delay_ms"]["values"])

    without = drawn(tmp_path / "without", ())
    assert (without > 5.0).mean() == pytest.approx(20 / 400, abs=0.01)
    with_gc = drawn(tmp_path / "with", (tmp_path / "gc.log",))
    assert with_gc.max() < 1.5 and np.median(with_gc) == pytest.approx(1.0, abs=0.15)
    assert "less the 20 whose span met a server's GC pause" in (tmp_path / "with" / "calibration.json").read_text()
