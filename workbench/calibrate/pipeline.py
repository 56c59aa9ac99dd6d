"""``calibrate``: from the user's cluster files to a calibrated scenario, a fitted cost and a back-test.

One call imports the table config, schema, segment metadata, broker query log and GC logs, checks they
are one table's (:mod:`~workbench.calibrate.inputs`), fits the service cost to the log
(:mod:`~workbench.calibrate.fit`), and writes one directory, atomically::

    DIR/scenario.yaml       the calibrated scenario (every value commented with where it came from)
    DIR/table_config.json   the user's table config, as Pinot reads it
    DIR/schema.json         the user's schema
    DIR/workload/           segments.parquet + queries.parquet + manifest.json: the log, replayable
    DIR/calibration.json    the fit: parameters, standard errors, covariance, quality, what was dropped
    DIR/backtest.json       observed against predicted percentiles, overall and per query kind
    DIR/gc_calibration.json per GC log, when GC logs were given
    DIR/controller/         with ``fetched``: the controller's answers the inputs were read from
                            (:mod:`~workbench.calibrate.controller`), named as the sources
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from workbench import defaults as D
from workbench.calibrate.backtest import Backtester, holdout_backtest
from workbench.calibrate.broker import MIN_SHARES, broker_costs
from workbench.calibrate.features import SqlShape, log_features, lookup_columns, sql_shapes
from workbench.calibrate.fit import FitOptions, ServiceFit, fit_service, refit_overhead
from workbench.calibrate.functions import FUNCTION_KEY, candidates
from workbench.calibrate.inputs import COUNTERS, CalibrationInputs, read_inputs
from workbench.calibrate.isolation import MIN_ISOLATED, MIN_OVERLAPPED, isolated, leave_out_overlapped
from workbench.calibrate.profile import DayProfile, day_profile
from workbench.calibrate.routed import routed_counts, with_routed_shapes
from workbench.calibrate.scenario_file import Entry, render_scenario
from workbench.calibrate.shape import ClusterShape, infer_shape
from workbench.calibrate.uncertainty import CALIBRATION_FILE
from workbench.calibrate.work import (
    MIN_MEASURED_SHARE,
    Delay,
    fit_work,
    measured_share,
    met_gc_pause,
    server_work_ms,
    with_model_docs,
)
from workbench.calibrate.workload_dir import write_workload
from workbench.errors import InputError
from workbench.io import atomic_dir, write_json_atomic
from workbench.pinot.execution_config import ServerQueryConfig
from workbench.pinot.schema import Schema
from workbench.scenario import load_scenario
from workbench.sim.planner import Planner, default_schema, logged_docs, logged_filter_entries, segment_metadata
from workbench.workload.directory import LOGGED_DOCS, LOGGED_FILTER_ENTRIES
from workbench.workload.importers import calibrate_gc

__all__ = ["CalibrateOptions", "CalibrationResult", "calibrate", "per_request_allocation"]


@dataclass(frozen=True)
class CalibrateOptions:
    """What the files cannot say, and how much work the fit and back-test may do.

    ``servers`` overrides the count read from the log; ``server_cores`` is each server's ``c`` (in no
    input: Pinot sizes its threads from it; ``None`` takes the workbench default and marks it so);
    ``backtest_queries`` caps the replayed window (0: no back-test); ``bootstrap`` is the number of
    block-bootstrap resamples behind the standard errors. ``network_ms`` is the one-way delay per message
    between broker and server when it was measured (a server's query log gives it: the broker's
    ``ResponseDelayMs`` minus the server's ``totalTimeMs``, halved); the broker log alone cannot tell it from
    the servers' per-request work, which then absorbs it and the model's servers saturate too early.
    ``server_work``: fit the service costs to the servers' measured work when the log carries it
    (``offlineThreadCpuTimeNs``/``realtimeThreadCpuTimeNs``, :mod:`~workbench.calibrate.work`) and keep the rest
    of ``timeMs`` as delay; ``False`` fits ``timeMs`` alone, as for a log without it. ``server_cpu_ms`` is the
    servers' process CPU per query when measured (summed over servers): the log's CPU time covers only the
    query's own threads, and the rest of the process's CPU (Netty, deserialisation, GC) loads the same cores.
    ``holdout`` is the share of the log, by arrival time, left out of the fit: the costs are fitted to the first
    ``1 - holdout`` and the back-test replays both parts apart, so it shows how the model does on queries it
    never saw (0: fit and back-test the whole log; a log with fewer than
    ``CALIBRATION_HOLDOUT_MIN_QUERIES`` in either part is used whole, and the calibration says so). Without a
    back-test (``backtest_queries`` 0) nothing is held out: the whole log is fitted.
    """

    servers: int | None = None
    server_cores: int | None = None
    #: Where ``server_cores`` was read when not from ``--server-cores`` (``calibrate --measured``: measure.json).
    server_cores_from: str | None = None
    #: The Pinot release that wrote the logs, when known (``calibrate --measured``): recorded in calibration.json.
    pinot_version: str | None = None
    network_ms: float | None = None
    server_work: bool = True
    server_cpu_ms: float | None = None
    holdout: float = D.CALIBRATION_HOLDOUT
    lenient: bool = False
    backtest_queries: int = 20_000
    replications: int = D.REPLICATIONS
    bootstrap: int = 500
    seed: int = D.SEED

    def __post_init__(self) -> None:
        if not 0.0 <= self.holdout < 1.0:
            raise InputError("--holdout", f"must be at least 0 and below 1 (the share of the log held out of the "
                                          f"fit), got {self.holdout:g}")

    @property
    def cores(self) -> int:
        """The cores per server the fit uses: the given ones, else the workbench default."""
        return self.server_cores if self.server_cores is not None else D.SERVER_CORES


@dataclass(frozen=True)
class CalibrationResult:
    """What :func:`calibrate` wrote and found (``backtest`` is ``backtest.json``'s content or ``None``)."""

    out: Path
    table: str
    fit: ServiceFit
    shape: ClusterShape
    backtest: Mapping[str, Any] | None
    dropped: Mapping[str, int]
    queries: int
    notes: tuple[str, ...] = field(default=())
    #: The ``rate-<qps>`` directory read when calibrating from a ``workbench measure`` directory.
    measured_rate: str | None = None

    @property
    def scenario_path(self) -> Path:
        return self.out / "scenario.yaml"


def _calm(f: Any) -> tuple[np.ndarray, str | None]:
    """The queries the cost is fitted to when it is fitted to ``timeMs``: those that met no other query in flight
    (:mod:`~workbench.calibrate.isolation`) when enough met one to matter and enough did not to fit on, else all;
    and what the calibration says of it."""
    alone = isolated(f.arrival_s, f.time_ms)
    if (~alone).mean() < MIN_OVERLAPPED:
        return np.ones(len(alone), dtype=bool), None
    if leave_out_overlapped(alone):
        return alone, (f"fitted to the {int(alone.sum()):,} of {len(alone):,} queries that met no other query in "
                       "flight: the others may have waited for threads, which the model simulates itself")
    return np.ones(len(alone), dtype=bool), (
        f"fitted to all {len(alone):,} queries: only {int(alone.sum()):,} met no other query in flight (at least "
        f"{MIN_ISOLATED} needed to leave out the waits), so the costs and the variability include some waiting")


@dataclass(frozen=True)
class _Split:
    """Where the log is split for the held-out back-test (``None`` for ``split_s``: not split) and why not."""

    split_s: float | None
    before: np.ndarray
    note: str | None = None


def _holdout(replay: pd.DataFrame, mask: np.ndarray, share: float) -> _Split:
    """The first ``1 - share`` of the log's span is fitted; the rest is held out, when both parts are long enough."""
    arrival = replay["arrival_s"].to_numpy(dtype=float)
    everything = np.ones(len(replay), dtype=bool)
    if share == 0.0:
        return _Split(None, everything)
    split = float(arrival[0] + (1.0 - share) * (arrival[-1] - arrival[0]))
    before = arrival < split
    fitted, held = int((mask & before).sum()), int((~before).sum())
    least = D.CALIBRATION_HOLDOUT_MIN_QUERIES
    if min(fitted, held) < least:
        return _Split(None, everything, f"the log is too short to hold {share:.0%} of it out ({fitted:,} queries to "
                                        f"fit and {held:,} to hold out; at least {least} each): fitted and "
                                        "back-tested on the whole log, which shows less than a held-out part would")
    return _Split(split, before, f"fitted to the first {1 - share:.0%} of the log ({fitted:,} queries, arrivals "
                                 f"before {split:.4g} s); the last {share:.0%} ({held:,} queries) is held out and "
                                 "back-tested apart (backtest.json)")


def _fit_mask(queries: pd.DataFrame, parsed: np.ndarray) -> tuple[np.ndarray, dict[str, int]]:
    """Which replayable queries the cost is fitted on, and how many were left out for what."""
    counters = np.ones(len(queries), dtype=bool)
    for column in COUNTERS:
        counters &= queries[column].notna().to_numpy(dtype=bool)
    partial = queries["partial"].to_numpy(dtype=bool)
    engine = queries["query_engine"].astype("string").fillna("").str.lower().to_numpy() == "multistage"
    dropped = {"without docs/segments/servers counters": int((parsed & ~counters).sum()),
               "partial (exceptions or servers not responding)": int((parsed & counters & partial).sum()),
               "multi-stage engine": int((parsed & counters & ~partial & engine).sum())}
    return parsed & counters & ~partial & ~engine, {k: v for k, v in dropped.items() if v}


def _consuming_docs(segments: pd.DataFrame) -> tuple[pd.DataFrame, str | None]:
    """Consuming segments have no document count in their metadata (-1); the model needs one."""
    unknown = segments["total_docs"].to_numpy() < 0
    if not unknown.any():
        return segments, None
    sealed = segments.loc[~unknown, "total_docs"]
    guess = int(sealed.median() // 2) if len(sealed) else D.DOCS_PER_SEGMENT // 2
    out = segments.copy()
    out.loc[unknown, "total_docs"] = guess
    return out, (f"{int(unknown.sum())} consuming segments have no document count: each is taken as half a "
                 f"sealed segment's median ({guess:,} documents)")


def _overhead(fit: ServiceFit, f: Any, slowest: np.ndarray) -> tuple[float, float, str] | None:
    """The broker's own time per query from serverStats: ``timeMs`` minus the slowest server round trip,
    less the fitted reduce."""
    use = (f.servers > 0) & np.isfinite(slowest)
    if use.sum() < 30 or fit.parameter("cluster.broker.overhead_ms").fitted:
        return None
    reduce = (fit.value("cluster.broker.reduce_ms_per_server") * f.responded
              + fit.value("cluster.broker.reduce_ms_per_row") * f.rows)
    broker = (f.time_ms - slowest - reduce)[use]
    return max(0.0, float(broker.mean())), float(broker.std(ddof=1) / np.sqrt(len(broker))), \
        f"the log's serverStats (timeMs minus the slowest server's ResponseDelayMs, {int(use.sum()):,} queries)"


#: Collections a GC log needs while the logged queries ran for the calibration to use those alone.
MIN_SERVING_COLLECTIONS = 4


def _calibrated_gc(path: str, frame: pd.DataFrame) -> dict[str, Any]:
    """One GC log's calibration; an input error names the log."""
    try:
        return calibrate_gc(frame)
    except InputError as exc:
        raise InputError(path, str(exc)) from None


#: The collections that stop the application's threads (a GC log's ``kind``).
_STOPPING = frozenset({"young", "mixed", "full", "remark", "cleanup"})


def pause_windows(frames: Mapping[str, pd.DataFrame]) -> np.ndarray:
    """Every server's stop-the-world pauses as ``(start, end)`` on the wall clock, ms (a log line's time is its
    pause's end); pauses without a wall-clock time are left out.

    >>> f = pd.DataFrame({"wallclock_s": [10.0, 11.0, None], "duration_ms": [2.0, 0.5, 1.0],
    ...                   "kind": ["young", "remark", "young"]})
    >>> pause_windows({"a": f}).tolist()
    [[9998.0, 10000.0], [10999.5, 11000.0]]
    """
    windows = []
    for frame in frames.values():
        if "wallclock_s" not in frame or "duration_ms" not in frame:
            continue
        end = pd.to_numeric(frame["wallclock_s"], errors="coerce").to_numpy(dtype=float) * 1000.0
        length = pd.to_numeric(frame["duration_ms"], errors="coerce").to_numpy(dtype=float)
        stops = frame["kind"].astype(str).isin(_STOPPING).to_numpy() if "kind" in frame else np.ones(len(end), bool)
        keep = stops & np.isfinite(end) & np.isfinite(length)
        windows.append(np.column_stack([end[keep] - length[keep], end[keep]]))
    return np.concatenate(windows) if windows else np.empty((0, 2))


def while_serving(frame: pd.DataFrame, start_ms: float, end_ms: float) -> pd.DataFrame | None:
    """The GC log's collections while the logged queries ran (by its wall-clock decoration): those that started in
    the queries' span, or, when fewer than :data:`MIN_SERVING_COLLECTIONS` did, the last that many up to its end;
    ``None`` when the log has no wall-clock times, not that many collections before the span ends, or none
    near the span (its last more than the span's length, at least a minute, before it starts: a log of another
    time, used whole).

    A server's log starts with its JVM: class loading and loading its segments collect often and long (Pinot's
    airlineStats example here: 64-85 ms young pauses and a 48 ms remark while 72 segments per server loaded; 8-16 ms
    while serving, one collection per server in the 30 s of logged queries). Calibrated on the whole log, the
    model's servers paused for start-up all through the run, and the back-test's p99 came out at three times the
    log's.

    >>> f = pd.DataFrame({"wallclock_s": [10.0, 20.0, 31.0, 32.0, 33.0, 34.0, 40.0]})
    >>> while_serving(f, 30_000, 35_000)["wallclock_s"].tolist()
    [31.0, 32.0, 33.0, 34.0]
    >>> while_serving(f, 30_000, 32_500)["wallclock_s"].tolist()    # too few in the span: the last four up to it
    [10.0, 20.0, 31.0, 32.0]
    >>> while_serving(f, 0, 15_000) is None, while_serving(f, 200_000, 205_000) is None
    (True, True)
    """
    if "wallclock_s" not in frame:
        return None
    wall = pd.to_numeric(frame["wallclock_s"], errors="coerce") * 1000
    if wall.isna().all() or wall.max() < start_ms - max(end_ms - start_ms, 60_000.0):
        return None
    inside = frame[(wall >= start_ms) & (wall <= end_ms)]
    if len(inside) < MIN_SERVING_COLLECTIONS:
        inside = frame[wall <= end_ms].tail(MIN_SERVING_COLLECTIONS)
    return inside.reset_index(drop=True) if len(inside) >= MIN_SERVING_COLLECTIONS else None


def _serving(frames: Mapping[str, pd.DataFrame], start_ms: float, end_ms: float
             ) -> tuple[dict[str, pd.DataFrame], str | None]:
    """Each GC log cut to the queries' span where it can be (:func:`while_serving`), calibrating from those
    collections when that calibration holds; the note says what was used."""
    out: dict[str, pd.DataFrame] = {}
    cut: list[str] = []
    whole: list[str] = []
    for path, frame in frames.items():
        inside = while_serving(frame, start_ms, end_ms)
        if inside is not None:
            try:
                calibrate_gc(inside)
            except InputError:
                inside = None
        out[path] = inside if inside is not None else frame
        (cut if inside is not None else whole).append(path)
    if not frames:
        return out, None
    said = (f"GC calibrated from the collections while the logged queries ran, or the last "
            f"{MIN_SERVING_COLLECTIONS} up to their end where fewer fell in their span ({len(cut)} of {len(frames)} "
            "logs; the JVMs' start-up and segment loading before that left out)") if cut else None
    if whole:
        said = ((said + "; ") if said else "") + (
            f"{len(whole)} GC log(s) used whole (no wall-clock times, or too few collections up to the queries' "
            "end to calibrate from): start-up collections included")
    return out, said


def per_request_allocation(gc: dict[str, Any] | None, requests_per_s: float
                           ) -> tuple[dict[str, Any] | None, str | None]:
    """``cluster.gc`` with its allocation charged per server request: the GC logs' allocation while serving over the
    log's server requests per second per server (``bytes_per_request``; ``allocation_rate`` null, so the model's
    servers allocate as requests reach them), and the note that says so.

    Why: Apache Pinot 1.5.1 on one core, its JIT settled, made 11.6-12.3 young collections per 1,000 queries at every
    rate from 65 to 522 queries/s (0.8 to 6.4 per second, ``docs/validation.md``): a server allocates per query. A
    fixed bytes/s, as the logs' own rate is, kept the calibrated rate's collections at every other rate and under
    ``workload.arrival.speed``.

    >>> per_request_allocation({"collector": "g1", "allocation_rate": 1_000_000}, 250.0)[0]
    {'collector': 'g1', 'allocation_rate': None, 'bytes_per_request': 4000.0, 'bytes_per_doc': 0.0}
    >>> per_request_allocation({"collector": "fixed"}, 250.0)
    ({'collector': 'fixed'}, None)
    """
    rate = (gc or {}).get("allocation_rate")
    if gc is None or gc.get("collector") not in ("g1", "zgc") or rate is None or not requests_per_s > 0:
        return gc, None
    per = float(rate) / requests_per_s
    note = (f"cluster.gc: the logs' allocation while serving, {float(rate) / 2**20:.3g} MiB/s at "
            f"{requests_per_s:.3g} server requests/s per server, is charged as {per / 1024:.3g} KiB per request "
            "(bytes_per_request; allocation_rate null), so the model's collections follow the load")
    return {**gc, "allocation_rate": None, "bytes_per_request": round(per, 1), "bytes_per_doc": 0.0}, note


def committed_heap(frames: Mapping[str, pd.DataFrame], gc: Mapping[str, Any] | None) -> float | None:
    """The heap the servers' G1 kept committed while serving (the median over each log's collections of the size in
    parentheses, ``60M->28M(70M)``; the median over the logs), bytes; ``None`` for another collector or no sizes.

    Why: the model's G1 sizes eden within the heap it is given and does not grow the heap, where a real G1 commits
    only what its pause and GC-time goals ask for. Apache Pinot 1.5.1's servers, run with ``-Xmx256m``
    (``docs/validation.md``), kept 70 MB committed under query load and made 11.6-12.3 young collections per 1,000
    queries; given the default 16 GiB the model made 0.3-0.5, given the 70 MB (with the survivors the log shows and
    eden settled, ``docs/validation.md``) it makes 10.6 at 1.4 ms each, Pinot's 1.2-1.5.

    >>> f = pd.DataFrame({"heap_total_bytes": [70e6, 73e6, 80e6]})
    >>> committed_heap({"a": f, "b": f.assign(heap_total_bytes=f["heap_total_bytes"] * 2)}, {"collector": "g1"})
    109500000.0
    >>> committed_heap({"a": f}, {"collector": "fixed"}) is None
    True
    """
    if gc is None or gc.get("collector") != "g1":
        return None
    totals = [pd.to_numeric(f["heap_total_bytes"], errors="coerce") for f in frames.values() if "heap_total_bytes" in f]
    sizes = [float(t.median()) for t in totals if t.notna().any()]
    return float(np.median(sizes)) if sizes else None


def _gc(frames: Mapping[str, pd.DataFrame]) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """The ``cluster.gc`` section from the GC logs (samples pooled across servers) and each log's calibration."""
    calibrations = {path: _calibrated_gc(path, frame) for path, frame in frames.items()}
    sections = [c["gc"] for c in calibrations.values()]
    if not sections:
        return None, {}
    pooled = dict(sections[0])
    if len(sections) > 1 and all(s.get("collector") == "fixed" for s in sections):
        for key in ("interval_s", "pause_ms"):
            pooled[key] = {"dist": "empirical", "values": [v for s in sections for v in s[key]["values"]]}
    return pooled, calibrations




def _network(options: CalibrateOptions, delay: Delay | None) -> list[Entry]:
    """The network keys. When the servers measured their work, each query's measured delay (``timeMs`` less the
    broker's work and its servers') is ``request_delay_ms``, drawn once per server request, and the one-way
    latency is 0: the delay includes the transport. Otherwise the given ``network_ms``, or the default."""
    key = "cluster.network.latency_ms"
    if delay is not None:
        return [Entry(key, 0.0, "in cluster.network.request_delay_ms: the measured delay includes the transport"),
                Entry("cluster.network.request_delay_ms", {"dist": "empirical", "values": delay.values()},
                      f"fitted: each query's delay (timeMs less the broker's work and its servers' measured work; "
                      f"mean {delay.values_ms.mean():.3g} ms over {len(delay.values_ms):,} queries), drawn once "
                      f"per server request: time that takes no server capacity")] + [
                Entry(f"cluster.network.request_delay_by_kind_ms.{kind}",
                      {"dist": "empirical", "values": delay.values(kind=kind)},
                      f"fitted: the delays of the {len(v):,} {kind.replace('_', '-')} queries among them (median "
                      f"{float(np.median(v)):.3g} ms, against {float(np.median(delay.values_ms)):.3g} for all), drawn "
                      f"for this kind's requests") for kind, v in delay.by_kind.items()]
    return [_latency(options)]


def _wake_entries(delay: Delay | None) -> list[Entry]:
    """``service.wake_ms`` and ``wake_tau_ms``: fitted from a log with the servers' measured work
    (:mod:`~workbench.calibrate.wake`), or held at 0 with why."""
    wake = delay.wake if delay is not None else None
    if wake is None:
        return [Entry("service.wake_ms", D.COST_WAKE_MS, "DEFAULT (workbench/defaults.py): read only from a log with "
                      "the servers' measured work (ThreadCpuTimeNs), where the waits and the work are told apart")]
    if not wake.fitted:
        return [Entry("service.wake_ms", D.COST_WAKE_MS, wake.note)]
    return [Entry("service.wake_ms", round(wake.wake_ms, 4), f"{wake.note}: ± {wake.wake_se:.2g} (1 s.e.); ms of "
                  "runner work after a long idle stretch"),
            Entry("service.wake_tau_ms", round(wake.tau_ms, 3),
                  (f"fitted with it: ± {wake.tau_se:.2g} (1 s.e.)" if wake.tau_se is not None else
                   "DEFAULT (workbench/defaults.py): the log's gaps cannot place it") + "; ms of idle time over which "
                  "it builds up")]


def _latency(options: CalibrateOptions) -> Entry:
    """The one-way latency when no delay was measured: the given ``network_ms``, or the default."""
    key = "cluster.network.latency_ms"
    if options.network_ms is not None:
        return Entry(key, round(options.network_ms, 6),
                     "given (network_ms: measured, e.g. from the servers' query logs)")
    return Entry(key, D.NETWORK_LATENCY_MS, "DEFAULT (workbench/defaults.py): the log cannot tell it from "
                                            "service.per_request_ms; measure RTT/2")


def _profile(profile: DayProfile) -> list[Entry]:
    """``workload.profile`` when the log spans a day (its hours' rates over its mean rate)."""
    if profile.hourly is None:
        return []
    return [Entry("workload.profile", {"hourly": list(profile.hourly)},
                  f"from {profile.why.removeprefix('the ')}; factor 1 is the whole log's mean rate, as replayed "
                  "(`workbench day` runs the peak hour)")]


def _entries(inputs: CalibrationInputs, fit: ServiceFit, shape: ClusterShape, gc: dict[str, Any] | None,
             options: CalibrateOptions, span: float, tail: float, delay: Delay | None,
             profile: DayProfile, heap: float | None = None) -> list[Entry]:
    t = inputs.table
    var = fit.variability
    var_note = (f"fitted from the residuals: ± {var.se:.3g} (1 s.e.)" if var.se is not None else var.note) or "fitted"
    entries = [
        Entry("name", f"calibrated-{t.table_name}"),
        Entry("description", f"{t.table_name_with_type} calibrated from its broker query log"),
        Entry("table", "table_config.json", "your table config, as imported"),
        Entry("schema", "schema.json", "your schema"),
        Entry("cluster.servers", shape.servers, f"from {shape.servers_source}"),
        Entry("cluster.brokers", 1, "DEFAULT: one broker's log; give one log per broker to model several"),
        Entry("cluster.server.cores", options.cores,
              f"from {options.server_cores_from or '--server-cores'}" if options.server_cores is not None else
              "DEFAULT (workbench/defaults.py SERVER_CORES): in no input; set your servers' cores (--server-cores)"),
        *_network(options, delay),
    ]
    if heap is not None:
        entries.append(Entry("cluster.server.heap", round(heap),
                             "from the GC logs: the heap G1 kept committed while serving (the median of each "
                             "collection's size in parentheses), which the model's G1 does not grow; your -Xmx may be "
                             "larger; bytes"))
    moved = delay.broker_off_path_ms if delay is not None else 0.0
    if moved > 0:
        entries.append(Entry("cluster.broker.off_path_ms", round(moved, 6),
                             "the part of the fitted overhead not every query pays (each query's delay carries it, "
                             "workbench.calibrate.work.lift), run after the reply so the broker's load stays the "
                             "fitted overhead"))
    entries.append(Entry("service.model", "cost", "the cost model the parameters below belong to"))
    for p in fit.parameters:
        if p.key == "cluster.broker.overhead_ms" and moved > 0:   # the part not every query pays runs off the path
            entries.append(Entry(p.key, round(max(p.value - moved, 0.0), 6),
                                 f"{p.statement()}; {p.unit}; {moved:.3g} ms of the fitted {p.value:.3g} ms in "
                                 "cluster.broker.off_path_ms"))
            continue
        entries.append(Entry(p.key, round(p.value, 6), f"{p.statement()}; {p.unit}"))
    entries.append(Entry("service.variability", round(var.sigma, 4), var_note))
    entries += _wake_entries(delay)
    entries.append(Entry("cluster.gc", gc if gc is not None else {"collector": "none"},
                         "from the GC logs (pauses pooled over the logs given)" if gc is not None else
                         "DEFAULT: no GC logs given (--gc-log); pauses are not modelled"))
    entries += [
        Entry("workload.data", "workload", "the log's queries and your segments, in one workload directory"),
        Entry("workload.arrival.process", "replay",
              f"the log's {len(inputs.queries):,} queries at their arrival times"),
        *_profile(profile),
        Entry("simulation.duration_s", round(span + tail, 3),
              "the log's span plus time for the last queries to finish"),
        Entry("simulation.warmup_s", round(min(D.WARMUP_S, 0.05 * span), 3), "DEFAULT: 5% of the span, at most 12 s"),
        Entry("simulation.replications", D.REPLICATIONS, "DEFAULT (workbench/defaults.py)"),
        Entry("simulation.seed", options.seed, "DEFAULT (workbench/defaults.py) unless --seed"),
    ]
    return entries


def _header(inputs: CalibrationInputs) -> list[str]:
    files = [f"  {k}: {', '.join(v)}" for k, v in inputs.sources.items() if v]
    return ["Calibrated by `workbench calibrate` from:", *files, "",
            "Each value says where it came from: read from your files, fitted from the broker query log",
            "(with one standard error), or a DEFAULT that no input gives. Set the DEFAULTs you know before",
            "trusting an answer that depends on them. calibration.json has the fit; backtest.json the check.", ""]


def _planner(segments: pd.DataFrame, inputs: CalibrationInputs, replay: pd.DataFrame | None = None) -> Planner:
    """The model's planner over the imported segments, as the calibrated scenario's replay of ``replay`` (the
    whole log it replays) builds it: charging each SQL text its logged documents."""
    return Planner(tuple(segments["segment_name"].astype(str)), segments["total_docs"].to_numpy(dtype=float),
                   inputs.table, Schema.from_json(inputs.schema) if inputs.schema else default_schema(inputs.table),
                   segment_metadata(segments), logged_docs(replay) if replay is not None else None,
                   logged_filter_entries(replay) if replay is not None else None)


def _routed(features: Any, rows: pd.DataFrame, positions: np.ndarray, shapes: Mapping[str, SqlShape],
            segments: pd.DataFrame, inputs: CalibrationInputs, servers: int,
            config: ServerQueryConfig) -> tuple[Any, str | None]:
    """The features with each query's segments per server as the model routes it (:mod:`.routed`), and a note."""
    if inputs.table.replication <= 1:
        return features, None   # one replica: the even spread over the servers reached is the route
    sql = rows["sql"].astype(str).tolist()
    chosen = np.unique(np.linspace(0, len(sql) - 1, min(len(sql), D.CALIBRATION_ROUTED_QUERIES)).astype(np.int64))
    routed = routed_counts([sql[i] for i in chosen], positions[chosen], _planner(segments, inputs), inputs.table,
                           servers, segments, {q: s.query for q, s in shapes.items()})
    counts: list[tuple[int, ...] | None] = [None] * len(sql)
    for i, c in zip(chosen.tolist(), routed, strict=True):
        counts[i] = c
    out, used = with_routed_shapes(features, counts, np.array([shapes[q].group_by for q in sql], dtype=bool),
                                   [shapes[q].threads for q in sql], config)
    return out, (f"each query's segments per server taken from the model's routing ({used:,} of {len(sql):,} "
                 f"queries; the rest, whose route reaches other servers or segments than the log says, or beyond the "
                 f"{D.CALIBRATION_ROUTED_QUERIES:,} routed, spread evenly over the servers they reached)")


def _model_docs(rows: pd.DataFrame, segments: pd.DataFrame, inputs: CalibrationInputs,
                shapes: Mapping[str, SqlShape], replay: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The documents and filter entries the calibrated scenario's replay charges each logged query: the median over
    ``replay`` (the whole log it replays) of what its SQL text's log lines say they scanned (``docs=``, ``entries=``:
    :func:`~workbench.sim.planner.logged_docs`), or, for a text no line gives it, the planner's estimate for each
    segment it keeps (none for a segment Pinot answers from its metadata); the row's own counts where the planner
    refuses the SQL."""
    planner = _planner(segments, inputs, replay)
    own = rows[LOGGED_DOCS].astype("Float64").fillna(0).to_numpy(dtype=float)
    own_entries = (rows[LOGGED_FILTER_ENTRIES].astype("Float64").fillna(0).to_numpy(dtype=float)
                   if LOGGED_FILTER_ENTRIES in rows else np.zeros(len(rows)))
    docs, entries = np.empty(len(rows)), np.empty(len(rows))
    for i, sql in enumerate(rows["sql"].astype(str)):
        try:
            plan = planner.plan(sql, shapes[sql].query)
        except (InputError, ValueError):
            docs[i], entries[i] = own[i], own_entries[i]
            continue
        docs[i] = float(sum(plan.docs_scanned or ()))
        entries[i] = float(sum(plan.filter_entries or ()))
    return docs, entries


def _replayable(inputs: CalibrationInputs) -> tuple[pd.DataFrame, dict[str, SqlShape], np.ndarray, dict[str, int]]:
    """The queries the model can replay (their SQL parses), each distinct SQL's shape, which are fitted,
    and how many were left out for what."""
    shapes = sql_shapes(inputs.queries["sql"].astype(str), lookup_columns(inputs.table, inputs.schema))
    ok = np.array([shapes[s].query is not None for s in inputs.queries["sql"].astype(str)], dtype=bool)
    if not ok.any():
        first = next(s.error for s in shapes.values() if s.error)
        raise InputError(inputs.sources["query_log"][0], f"none of its {len(ok):,} queries of table "
                                                         f"{inputs.table.table_name} can be replayed: {first}")
    replay = inputs.queries[ok].reset_index(drop=True)
    mask, dropped = _fit_mask(replay, np.ones(len(replay), dtype=bool))
    if not mask.any():
        raise InputError(inputs.sources["query_log"][0], f"no query of table {inputs.table.table_name} can be "
                                                         f"fitted ({', '.join(dropped)})")
    fit_dropped = {"SQL the model cannot parse (not replayed)": int((~ok).sum()), **dropped}
    return replay, shapes, mask, {k: v for k, v in fit_dropped.items() if v}


def _backtest(run: Backtester, scenario: Mapping[str, Any], tmp: Path, replay: pd.DataFrame, kinds: list[str],
              segs: pd.DataFrame, split: _Split, opts: CalibrateOptions) -> dict[str, Any]:
    """The back-test: of the whole log, or of its fitted part and its held-out rest apart (each replayed from an
    empty cluster, its first half of ``backtest_queries``, so that the replay costs what one back-test did)."""
    scratch = tmp / ".backtest"
    kw = {"max_queries": opts.backtest_queries, "replications": opts.replications, "seed": opts.seed}
    try:
        if split.split_s is None:
            return run(scenario, tmp, replay, kinds, segs, scratch, **kw)
        kw["max_queries"] = max(1, opts.backtest_queries // 2)
        before = split.before
        fitted = run(scenario, tmp, replay[before].reset_index(drop=True), [k for k, b in zip(kinds, before,
                     strict=True) if b], segs, scratch / "fitted", **kw)
        held = run(scenario, tmp, replay[~before].reset_index(drop=True), [k for k, b in zip(kinds, before,
                   strict=True) if not b], segs, scratch / "held-out", **kw)
        return holdout_backtest(fitted, held, share=opts.holdout, split_s=split.split_s,
                                fitted_queries=int(before.sum()), held_out_queries=int((~before).sum()))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


#: Where the controller's answers go in the output directory, when the inputs were fetched.
FETCHED_DIR = "controller"


def _fetched_sources(inputs: CalibrationInputs, fetched: Path, copied: Path) -> CalibrationInputs:
    """The sources named as their copies in ``out/controller`` (the fetch's staging directory is removed)."""
    def moved(path: str) -> str:
        p = Path(path)
        return str(copied / p.name) if p.parent.resolve() == fetched.resolve() else path
    sources = {k: [moved(p) for p in v] for k, v in inputs.sources.items()}
    return dataclasses.replace(inputs, sources=sources)


def calibrate(table_config: str | Path, schema: str | Path, segments: str | Path, query_log: str | Path,
              out: str | Path, *, gc_logs: Sequence[str | Path] = (), options: CalibrateOptions | None = None,
              overwrite: bool = False, backtest: Backtester | None = None,
              fetched: str | Path | None = None) -> CalibrationResult:
    """Calibrate a scenario from a cluster's files into ``out`` (see the module text for what is written).

    ``backtest`` runs the back-test (:func:`workbench.studies.backtest.backtest`, which
    :func:`workbench.api.calibrate` passes): fitting never simulates, so the run is handed in. It is
    required unless ``options.backtest_queries`` is 0. ``fetched`` is a directory of inputs fetched from a
    controller (:func:`~workbench.calibrate.controller.fetch_controller`): it is copied to ``out/controller``
    and the sources name the copies, so the calibration can be rerun from ``out`` alone.

    Raises
    ------
    InputError
        Bad input (naming the file and line), files of different tables (naming both), a log without
        the counters the fit needs (naming them and the Pinot versions that write them).
    """
    opts = options or CalibrateOptions()
    if opts.backtest_queries > 0 and backtest is None:
        raise ValueError("a back-test needs its runner: pass backtest=workbench.studies.backtest.backtest "
                         "(workbench.api.calibrate does), or set backtest_queries=0")
    inputs = read_inputs(table_config, schema, segments, query_log, tuple(gc_logs), lenient=opts.lenient)
    if fetched is not None:
        inputs = _fetched_sources(inputs, Path(fetched), Path(out) / FETCHED_DIR)
    replay, shapes, mask, dropped = _replayable(inputs)
    kinds = [shapes[s].kind for s in replay["sql"].astype(str)]
    split = _holdout(replay, mask, opts.holdout if opts.backtest_queries > 0 and backtest is not None else 0.0)
    fit_rows = replay[mask & split.before].reset_index(drop=True)
    config = ServerQueryConfig.from_properties({}, cores=opts.cores)
    features = log_features(fit_rows, shapes, config)
    segs, seg_note = _consuming_docs(inputs.segments)
    slowest = fit_rows["slowest_response_ms"].to_numpy(dtype=float)
    work = server_work_ms(fit_rows)
    delay: Delay | None = None
    work_note = calm_note = route_note = function_note = None
    if opts.server_work and measured_share(work, features.servers) >= MIN_MEASURED_SHARE:
        charged = with_model_docs(features, *_model_docs(fit_rows, segs, inputs, shapes, replay))
        now = fit_rows["now_ms"].to_numpy(dtype=float)
        paused = (met_gc_pause(now - fit_rows["time_ms"].to_numpy(dtype=float), now, pause_windows(inputs.gc))
                  if inputs.gc else None)
        fit, delay = fit_work(charged, work, slowest, FitOptions(bootstrap=opts.bootstrap, seed=opts.seed),
                              process_ms=opts.server_cpu_ms, paused=paused)
        if opts.network_ms is not None:
            work_note = ("network_ms was given but not used: the servers measured their work, so each query's "
                         "delay is measured (cluster.network.request_delay_ms)")
    else:
        if opts.server_work and np.isfinite(work).any():
            work_note = (f"the servers' CPU time is on only {measured_share(work, features.servers):.0%} of the "
                         f"queries (at least {MIN_MEASURED_SHARE:.0%} needed): fitted to timeMs instead")
        tried, held = candidates(list(features.calls))
        heavy = sorted(set(tried) | {c.name for c in held})
        if heavy:
            names = ", ".join(n.upper() for n in heavy)
            function_note = (f"{FUNCTION_KEY}: not fitted ({names} in the log): read only "
                             "from the servers' measured work (ThreadCpuTimeNs); assumed to cost what "
                             "service.ns_per_doc charges")
        shape = infer_shape(replay, inputs.hosts, inputs.table, opts.servers)
        features, route_note = _routed(features, fit_rows, np.flatnonzero(mask & split.before), shapes, segs,
                                       inputs, shape.servers, config)
        calm, calm_note = _calm(features)
        fit_options = FitOptions(bootstrap=opts.bootstrap, seed=opts.seed,
                                 network_ms=D.NETWORK_LATENCY_MS if opts.network_ms is None else opts.network_ms)
        if np.isfinite(slowest).sum() >= MIN_SHARES:   # serverStats split the broker's work from the servers'
            known = broker_costs(features, slowest, fit_options)   # its trimmed fit leaves out the waits itself
            fit = fit_service(features.take(calm), replace(fit_options, known=known))
        else:
            fit = fit_service(features.take(calm), fit_options)
            refined = _overhead(fit, features.take(calm), slowest[calm])
            if refined is not None:
                fit = refit_overhead(fit, *refined)
    shape = infer_shape(replay, inputs.hosts, inputs.table, opts.servers)
    now = replay["now_ms"].to_numpy(dtype=float)
    # the logged queries' span: from the first one's start (its line's time less its timeMs) to the last line
    start_ms, end_ms = float(now.min() - replay["time_ms"].iloc[int(now.argmin())]), float(now.max())
    serving, gc_note = _serving(inputs.gc, start_ms, end_ms)
    gc, gc_docs = _gc(serving)
    served_s = (end_ms - start_ms) / 1000.0
    heap = committed_heap(serving, gc)
    gc, allocation_note = per_request_allocation(
        gc, float(replay["num_servers_queried"].sum()) / max(shape.servers, 1) / served_s if served_s > 0 else 0.0)
    span = float(replay["arrival_s"].iloc[-1])
    tail = max(1.0, 2.0 * float(replay["time_ms"].max()) / 1000.0)
    notes = tuple(n for n in (split.note, *fit.notes, seg_note, work_note, calm_note, route_note, function_note,
                              gc_note, allocation_note) if n)
    profile = day_profile(replay["now_ms"].to_numpy(dtype=np.int64))
    entries = _entries(inputs, fit, shape, gc, opts, span, tail, delay, profile, heap)
    text = render_scenario(_header(inputs), entries)
    with atomic_dir(Path(out), overwrite=overwrite) as tmp:
        write_workload(tmp / "workload", segs, replay, inputs.table.table_name, inputs.table.table_type,
                       inputs.sources)
        write_json_atomic(tmp / "table_config.json", inputs.table.to_json())
        if fetched is not None:
            shutil.copytree(fetched, tmp / FETCHED_DIR)
        write_json_atomic(tmp / "schema.json", inputs.schema)
        (tmp / "scenario.yaml").write_text(text, encoding="utf-8")
        load_scenario(tmp / "scenario.yaml")  # what was written must load
        if gc_docs:
            write_json_atomic(tmp / "gc_calibration.json", gc_docs)
        calibration = {"table": inputs.table.table_name_with_type, "queries": len(replay), "fit": fit.to_dict(),
                       "fitted_to": "servers' measured work" if delay is not None else "timeMs",
                       "delay": delay.to_dict() if delay is not None else None,
                       "shape": vars(shape), "profile": profile.to_json(),
                       "holdout": {"share": opts.holdout if split.split_s is not None else 0.0,
                                   "split_at_s": split.split_s, "fitted_queries": len(fit_rows)},
                       "dropped": {**inputs.dropped, **dropped}, "notes": list(notes),
                       "server_cores": opts.cores, "pinot_version": opts.pinot_version,
                       "sources": inputs.sources, "import_counts": inputs.counts}
        write_json_atomic(tmp / CALIBRATION_FILE, calibration)
        report = None
        if backtest is not None and opts.backtest_queries > 0:
            report = _backtest(backtest, yaml.safe_load(text), tmp, replay, kinds, segs, split, opts)
            write_json_atomic(tmp / "backtest.json", report)
    return CalibrationResult(Path(out), inputs.table.table_name_with_type, fit, shape,
                             json.loads(json.dumps(report, default=str)) if report else None,
                             {**inputs.dropped, **dropped}, len(replay), notes)
