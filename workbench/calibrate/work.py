"""Fit the servers' work to the time they measured holding the query, and keep the rest of ``timeMs`` as delay.

Why. A broker log's ``timeMs`` is the broker's own share plus the round trip to the slowest server, and the round
trip is work *and* waiting: the request and response crossing Netty on both sides, the query waiting for the
server's runner, its threads waiting for a core. Fitted to ``timeMs`` alone, the model reads all of it as server
work. Against Apache Pinot 1.5.1 (``docs/validation.md``: one server pinned to a core, 13.6 queries/s) the broker
log's mean ``timeMs`` was 9.1 ms, the broker waited 5.8 ms for the server, the server's own execution
(``totalExecMs``) took 2.5 ms, and the fitted model's server was busy about 9 ms per query: it saturated at half
Pinot's rate, and the fitted per-segment spread went to its bound to explain waits that were not work.

When servers measure it (``pinot.server.instance.enableThreadCpuTimeMeasurement``), every broker log line carries
``offlineThreadCpuTimeNs(total/thread/sysActivity/resSer)`` (and the ``realtime`` twin), summed over the servers
that answered. ``total`` is ``thread`` (the runner's and worker threads' CPU in the query's execution) plus
``sysActivity`` (Pinot's ``InstanceResponseOperator.calSystemActivitiesCpuTimeNs``: the execution's wall clock
less the runner's CPU and one worker's share, i.e. the time the execution held its threads without running:
GC, paging, waiting for a core) plus ``resSer`` (serialising the response). That is the time the query held the
server's query threads: on one runner thread, exactly what the next query waits behind. It is the server work
fitted here (least squares of each query's ``total`` on the work the model charges it: per server request, per
segment, per document the replay charges the query's SQL, its SQL text's logged documents; with the constraint
that the fitted work sums to the measured work, so the model's server load at the log's rate is the measured one).

Everything else of ``timeMs`` (less the broker's own share and the server's critical path, scaled to the query's
own measured work) is **delay**: it takes no server capacity. The model's term for it is the per-request delay
(``cluster.network.request_delay_ms``: drawn once per server request, after the server's work, on no core), so
the calibrated scenario carries the measured delays as its empirical distribution, and no separate network
latency (the delay includes the transport). The broker's own work (overhead and reduce) is fitted to its share
(``timeMs`` minus the slowest server's ``ResponseDelayMs``) of the queries whose share the two millisecond clocks
alone explain: what a query that met no wait took; the rest of the share is waiting, and joins the delay.

``service.variability`` is fitted to the spread of the measured work around the fitted mean (no millisecond
clock: the CPU times are nanoseconds), each query's work being the sum of its segments' runs, so only the
spread the per-segment factor can make is read as variability.

The wake-up (``service.wake_ms``: a query after a quiet stretch takes longer, :mod:`~workbench.calibrate.wake`) is
read from the same delays, before they are kept: the part of each that its quiet time explains becomes work the
model charges by the quiet time it simulates, and leaves the delay.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import lsq_linear

from workbench import defaults as D
from workbench.calibrate.broker import broker_costs
from workbench.calibrate.clock import deconvolved
from workbench.calibrate.critical_path import Shape, factor_moments
from workbench.calibrate.features import LogFeatures
from workbench.calibrate.fit import (
    AT_BOUND,
    FIT_KEYS,
    FIT_PARAMETERS,
    MEASURED_WORK,
    VARIABILITY_KEY,
    FitOptions,
    Parameter,
    ServiceFit,
    at_bound_source,
    block_bootstrap,
    bootstrap_blocks,
    fit_quality,
    held_note,
    identifiable,
    predict,
    segment_mean,
    within_observed,
)
from workbench.calibrate.functions import (
    FUNCTION_KEY,
    FUNCTION_UNIT,
    FunctionCost,
    calls_design,
    candidates,
    extra_ns,
    key_of,
)
from workbench.calibrate.isolation import MIN_ISOLATED, MIN_OVERLAPPED, isolated
from workbench.calibrate.variability import VariabilityFit, fit_variability, not_shown, shown
from workbench.calibrate.wake import Wake, fit_wake, gaps_ms, held_wake
from workbench.scenario.schema import DELAY_KINDS

__all__ = ["CPU_COLUMNS", "DELAY_POINTS", "MIN_KIND_DELAYS", "MIN_MEASURED_SHARE", "MIN_UNPAUSED_SHARE", "STRUCTURE",
           "Delay", "fit_work", "measured_share", "met_gc_pause", "server_work_ms", "with_model_docs", "without_clock"]

#: The log's per-query CPU totals (ns, summed over the servers that answered), OFFLINE and REALTIME.
CPU_COLUMNS = ("offline_thread_cpu_time_ns_total", "realtime_thread_cpu_time_ns_total")
#: The share of fitted queries that must carry a measured CPU time for the fit to use it.
MIN_MEASURED_SHARE = 0.5
#: Server keys fitted to the measured work, and the broker keys that are not.
_SERVER_KEYS = ("service.per_request_ms", "service.per_segment_ms", "service.ns_per_doc",
                "service.merge_ms_per_segment")
#: The process CPU off the query's path (:func:`fit_work`'s ``process_ms``), and its unit.
OFF_PATH_KEY = "service.off_path_ms"
OFF_PATH_UNIT = "ms of CPU per server request, run after its response"
#: Work terms fitted only to the servers' measured work, beside the cost model's own: a group-by's extra ns per
#: document and the filter's ns per entry it reads row by row; with their units.
STRUCTURE = (("service.group_by_ns_per_doc", "ns per document of a group-by's segments, beyond service.ns_per_doc"),
             ("service.ns_per_filter_entry", "ns per entry its filter reads row by row (numEntriesScannedInFilter)"))
#: Weight of the constraint row (fitted work sums to measured work) against one query's squared error.
_CONSTRAINT_WEIGHT = 1e6
#: The delay per server request is read from the queries that reached one server when at least this many
#: (and a tenth of those that reached servers) did: a query on several servers waits for the slowest, so its
#: delay is the largest of several requests' (and any unevenness of its segments over them), and drawing
#: such delays again once per request would count the slowest twice.
MIN_SINGLE = 30
#: Queries whose span met a server's GC pause are left out of the delays while at least this share remain.
MIN_UNPAUSED_SHARE = 0.8
#: At most this many delay values are written to the scenario (a longer log's delays by evenly spaced quantiles).
DELAY_POINTS = 1000
#: A kind of query is given delays of its own (``cluster.network.request_delay_by_kind_ms``) from this many of its
#: queries' delays; fewer draw the pooled ones.
MIN_KIND_DELAYS = 200


def server_work_ms(frame: pd.DataFrame) -> np.ndarray:
    """Per logged query, the servers' measured work in ms (OFFLINE plus REALTIME ``...ThreadCpuTimeNs`` total).

    NaN where it was not measured: no CPU entry, or 0 (Pinot logs ``0/0/0/0`` when the servers do not measure).

    >>> server_work_ms(pd.DataFrame({"offline_thread_cpu_time_ns_total": [2_500_000, 0, None],
    ...                              "realtime_thread_cpu_time_ns_total": [500_000, 0, None]})).tolist()
    [3.0, nan, nan]
    """
    total = np.zeros(len(frame))
    for column in CPU_COLUMNS:
        if column in frame:
            total += frame[column].astype("Float64").fillna(0).to_numpy(dtype=float)
    out: np.ndarray = np.where(total > 0, total / 1e6, np.nan)
    return out


def measured_share(work_ms: np.ndarray, servers: np.ndarray) -> float:
    """The share of queries that reached servers whose work was measured (0 when none reached servers)."""
    reached = servers > 0
    return float(np.isfinite(work_ms[reached]).mean()) if reached.any() else 0.0


@dataclass(frozen=True)
class Delay:
    """Each query's time that took no capacity (ms, at least 0) and how it was split off."""

    values_ms: np.ndarray
    broker_ms: float
    broker_source: str
    #: The wake-up read from the same log (taken out of the delays; held at 0 when the log does not show it).
    wake: Wake | None = None
    #: How much of the broker's fitted overhead (``broker_ms``) the scenario runs off the query's path
    #: (``cluster.broker.off_path_ms``; its ``overhead_ms`` is the rest), ms: each delay carries it (:func:`lift`).
    broker_off_path_ms: float = 0.0
    #: The delays of each kind of query that logged enough of its own (``cluster.network.request_delay_by_kind_ms``,
    #: :data:`MIN_KIND_DELAYS`), taken out of the clock the same way; empty: one distribution for all.
    by_kind: Mapping[str, np.ndarray] = field(default_factory=dict)

    def values(self, points: int = DELAY_POINTS, kind: str | None = None) -> list[float]:
        """The delays for ``cluster.network.request_delay_ms``'s empirical distribution (``kind``: that kind's
        own, :attr:`by_kind`): each query's measured delay (sorted, to 0.1 us), or with more than ``points``
        queries the delays' quantiles at ``(i + 0.5) / points``, so a long log's scenario stays readable. One draw
        per server request then gives a one-server query its measured delay's distribution; with no delays, 0."""
        v = np.sort(self.values_ms if kind is None else self.by_kind[kind])
        if len(v) == 0:
            return [0.0]
        if len(v) > points:
            v = np.quantile(v, (np.arange(points) + 0.5) / points)
        return [round(float(x), 4) for x in v]

    def to_dict(self) -> dict[str, Any]:
        v = self.values_ms
        return {"queries": len(v), "mean_ms": float(v.mean()) if len(v) else 0.0,
                **{f"p{q:g}_ms": float(np.percentile(v, q)) if len(v) else 0.0 for q in (50, 90, 99, 99.9)},
                "broker_overhead_ms": self.broker_ms, "broker_overhead_source": self.broker_source,
                "broker_off_path_ms": self.broker_off_path_ms,
                "by_kind": {k: {"queries": len(v), "mean_ms": float(v.mean()), "p50_ms": float(np.median(v))}
                            for k, v in self.by_kind.items()},
                "wake": self.wake.to_dict() if self.wake is not None else None,
                "in_scenario": "cluster.network.request_delay_ms: empirical, the measured delays (drawn once per "
                               "server request"
                               + ("; each kind's own in cluster.network.request_delay_by_kind_ms" if self.by_kind
                                  else "")
                               + "); cluster.network.latency_ms 0 (the delays include the transport)"}


def without_clock(raw: np.ndarray) -> np.ndarray:
    """Each query's delay with the broker clock's rounding taken out (ms, at least 0).

    ``timeMs`` is a difference of two millisecond readings, so each raw delay carries the clock's rounding; the
    back-test and every simulated answer read the model's latencies on that clock again. So the delays' own
    distribution is recovered first (:func:`~workbench.calibrate.clock.deconvolved`: the one most likely to have
    given the logged delays through the clock), and only then held at 0. Clipping the raw values at 0 instead
    added the clock's negative half to the mean, and drawing the clock's spread twice widened the tail; shrinking
    each delay's deviation from the mean by a common factor (the step before this one) kept the mean and spread
    but moved the median of a skewed distribution up by a quarter of a millisecond.

    >>> rng = np.random.default_rng(4)
    >>> known, start = rng.uniform(0, 3, 2000), rng.uniform(0, 1, 2000)
    >>> raw = np.floor(start + known + 0.3) - np.floor(start) - known       # a true 0.3 ms for every query
    >>> round(float(raw.min()), 1), round(float(np.median(without_clock(raw))), 2), float(without_clock(raw).min()) >= 0
    (-0.7, 0.3, True)
    """
    out: np.ndarray = np.clip(deconvolved(raw), 0.0, None)
    return out


def lift(raw: np.ndarray, overhead_ms: float) -> float:
    """How much of the broker's fitted overhead to move off the query's path and into each query's delay: as much
    as lifts all but :data:`~workbench.defaults.DELAY_CLIPPED_SHARE` of the deconvolved delays to 0 or above, at
    most the overhead.

    Why: the overhead is fitted to the broker's mean share and each query's work to the servers' mean, so a query
    that took less than those means has a delay below 0, which the model, drawing a delay as time, holds at 0. On
    Apache Pinot 1.5.1 40% of the delays were below 0 (on the ns clock too, so not the clock's error), and holding
    them at 0 put 0.2-0.35 ms on every kind of query's median (``docs/validation.md``). Moved off the path
    (``cluster.broker.off_path_ms``), the broker's CPU per query stays the fitted overhead while the query's latency
    carries, through its delay, what it really paid.

    >>> rng = np.random.default_rng(5)
    >>> known, start = rng.uniform(0, 3, 2000), rng.uniform(0, 1, 2000)
    >>> raw = np.floor(start + known - 0.4) - np.floor(start) - known       # a true -0.4 ms for every query
    >>> 0.4 <= lift(raw, 1.0) <= 0.5, lift(raw, 0.25), lift(raw + 1.0, 1.0)   # to 0, less the EM's spread at 1%
    (True, 0.25, 0.0)
    """
    if not len(raw) or overhead_ms <= 0:
        return 0.0
    low = float(np.percentile(deconvolved(raw), 100.0 * D.DELAY_CLIPPED_SHARE))
    return round(min(overhead_ms, max(0.0, -low)), 6)


def per_request_delays(delays: np.ndarray, fanout: int) -> np.ndarray:
    """Per-request delays whose largest of ``fanout`` independent draws is distributed as ``delays``.

    A query that waits for ``fanout`` server requests logs the slowest one's delay; the model draws a delay for
    each request and waits for the slowest too. Taking the logged delays as the per-request ones counts the
    slowest twice (on Pinot's airlineStats example, every query on all 4 servers, the back-test's p99 came out
    nearly four times the log's). With ``F_query = F_request ** fanout``, the request's ``p``-quantile is the
    query's ``p ** fanout``-quantile: the values returned are those, at the same number of evenly spaced levels
    (linear between the logged delays' plotting positions; below the smallest, linear from 0).

    >>> per_request_delays(np.array([1.0, 2.0, 3.0, 4.0]), 1).tolist()
    [1.0, 2.0, 3.0, 4.0]
    >>> r = per_request_delays(np.arange(100.0), 4)       # at or below the logged delay of the same rank
    >>> bool(np.all(r <= np.arange(100.0) + 1e-6)), bool(np.all(np.diff(r) >= 0))
    (True, True)
    """
    if fanout <= 1 or len(delays) == 0:
        return delays
    ordered = np.sort(delays)
    levels = (np.arange(len(delays)) + 0.5) / len(delays)
    out: np.ndarray = np.interp(levels**fanout, levels, ordered)
    # below the smallest logged delay's level the log says nothing (no query's slowest request was that fast):
    # straight from 0 to it, a delay being at least 0, rather than all at the smallest logged one
    low = levels < levels[0] ** (1.0 / fanout)
    out[low] = max(float(ordered[0]), 0.0) * levels[low] / levels[0] ** (1.0 / fanout)
    return out


def met_gc_pause(start_ms: np.ndarray, end_ms: np.ndarray, pauses_ms: np.ndarray) -> np.ndarray:
    """Which queries' spans ``[start_ms, end_ms]`` met a GC pause ``pauses_ms[i] = (start, end)``, within the
    broker clock's 1 ms either side.

    Why: a pause stops the server's threads but not the clock, so a query in flight through one logs the pause in
    its ``timeMs`` and not in its threads' CPU: the residual the delays are read from carries it. On Apache Pinot
    1.5.1 at 195.6/s (one server, 73 young collections of 1.5 ms in the 30 s) 123 of 5,929 queries met one, and
    their residual's median was 3.0 ms against 0.9 for the others.

    >>> met_gc_pause(np.array([0.0, 10.0, 20.0]), np.array([5.0, 12.0, 30.0]), np.array([[4.5, 6.0], [31.0, 33.0]]))
    array([ True, False,  True])
    """
    met = np.zeros(len(start_ms), dtype=bool)
    if len(pauses_ms) == 0 or len(start_ms) == 0:
        return met
    order = np.argsort(pauses_ms[:, 0])
    begins, ends = pauses_ms[order, 0], np.maximum.accumulate(pauses_ms[order, 1])
    # the last pause to begin by the query's end (+1 ms) met it when it ends at or after the query's start (-1 ms);
    # ends accumulated so an earlier, longer pause counts too
    last = np.searchsorted(begins, end_ms + 1.0, side="right") - 1
    has = last >= 0
    met[has] = ends[last[has]] >= start_ms[has] - 1.0
    return met


def _unpaused(one: np.ndarray, which: str, paused: np.ndarray | None) -> tuple[np.ndarray, str]:
    """The delay queries without those whose span met a GC pause, while at least :data:`MIN_UNPAUSED_SHARE` of
    them remain (so a cluster whose servers pause all the time keeps its delays and says so)."""
    if paused is None or not (one & paused).any():
        return one, which
    kept = one & ~paused
    met = int((one & paused).sum())
    if kept.sum() < MIN_UNPAUSED_SHARE * one.sum():
        return one, which + (f"; {met:,} of them met a server's GC pause (GC logs), too many to leave out: the "
                             "model's own collections come on top of theirs")
    return kept, which + (f", less the {met:,} whose span met a server's GC pause (GC logs): the model runs the "
                          "servers' collections itself")


def _delay_queries(f: LogFeatures, reached: np.ndarray) -> tuple[np.ndarray, str]:
    """The queries whose delays are a request's own, and how to say which.

    Those that reached one server (a query on several waits for the slowest, so its delay is the largest of
    several requests', and drawing it again once per request would count the slowest twice) and met no other
    query in flight (:mod:`~workbench.calibrate.isolation`: the model simulates the waits for threads itself),
    while there are enough (:data:`~workbench.calibrate.isolation.MIN_ISOLATED`, or as many as below); else the
    one-server queries while there are enough (:data:`MIN_SINGLE`, and a tenth of those that reached servers);
    else all.
    """
    enough = max(MIN_SINGLE, 0.1 * reached.sum())
    single = reached & (f.servers == 1)
    alone = single & isolated(f.arrival_s, f.time_ms)
    if alone.sum() >= min(enough, MIN_ISOLATED) and (~alone[single]).mean() >= MIN_OVERLAPPED:
        return alone, (f"its {int(alone.sum()):,} queries that reached one server with no other query in flight: "
                       "a request's own delay, without waits for threads, which the model simulates")
    if single.sum() >= enough:
        return single, (f"its {int(single.sum()):,} queries that reached one server (a request's own delay; too few "
                        "met no other query in flight to leave out the waits for threads)")
    return reached, f"{int(reached.sum()):,} queries that reached servers"


def _work_design(f: LogFeatures) -> np.ndarray:
    """Columns of a query's total server work in :data:`FIT_PARAMETERS` order (broker columns zero): per server
    request, per segment, per document (x 1e-6, ns to ms), per segment merged."""
    zeros = np.zeros(len(f))
    servers = f.servers.astype(float)
    segments = np.where(servers > 0, f.segments.astype(float), 0.0)
    docs = np.where(servers > 0, f.docs, 0.0) * 1e-6
    return np.column_stack([zeros, servers, segments, docs, segments, zeros, zeros])


def _sum_shapes(segments: np.ndarray) -> tuple[np.ndarray, tuple[Shape, ...]]:
    """Per query the shape whose draws are the *sum* of its segments' factors (one task, one server)."""
    index: dict[Shape, int] = {}
    ids = np.array([index.setdefault(((int(s), 1, 1),) if s > 0 else (), len(index)) for s in segments.tolist()],
                   dtype=np.int64)
    return ids, tuple(index)


def _solve(x: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Least squares, no cost below zero, with the fitted sum equal to the measured sum (a heavy constraint row)."""
    root = np.sqrt(_CONSTRAINT_WEIGHT * len(target))
    a = np.vstack([x, root * x.mean(axis=0)])
    b = np.append(target, root * target.mean())
    scale = np.where((x * x).sum(axis=0) > 0, np.sqrt((x * x).sum(axis=0)), 1.0)
    beta: np.ndarray = lsq_linear(a / scale, b, bounds=(0.0, np.inf), method="bvls").x / scale
    return beta


def fit_work(features: LogFeatures, work_ms: np.ndarray, slowest_ms: np.ndarray,
             options: FitOptions | None = None, process_ms: float | None = None,
             paused: np.ndarray | None = None) -> tuple[ServiceFit, Delay]:
    """The server costs fitted to the measured work, the broker's share, and each query's non-capacity delay.

    ``features`` must charge each query the documents the model will charge it (the replay's: per SQL text the
    median of its logged documents, :func:`~workbench.sim.planner.logged_docs`, rather than each line's own), so
    the fitted mean work is the model's. ``work_ms`` is :func:`server_work_ms` (NaN: not measured; such a query is
    left out of the cost fit and its delay uses its fitted work). ``slowest_ms`` is each query's slowest server
    round trip from ``serverStats`` (NaN: not logged).

    ``process_ms`` is the servers' *process* CPU per query when it was measured (summed over servers; e.g. the
    server JVMs' CPU seconds over the log's period divided by its queries). The log's CPU time covers the query's
    own threads only; Netty, request deserialisation, GC and JIT threads use the same cores (on Pinot 1.5.1 with
    one server on one core: 2.2 ms logged, 4.4-5.5 ms for the whole JVM). The difference, spread over the
    server requests, is ``service.off_path_ms``: CPU the model runs on the server's cores after each response, so
    the model's servers are as loaded as the measured ones while each query's time stays the one the log
    measured. It used to be added to ``service.per_request_ms``, on the query's path: against Pinot 1.5.1 the JVM's
    5.59 ms of CPU per query exceeded the server's whole part of a query (3.76 ms round trip, of which 2.16 ms the
    query's threads), the model's median came out 50-97% high at every rate, and the delay, which cannot go below
    0, could not make up for it (``docs/validation.md``, "CPU off the query's path"). Whatever part of it did run
    on the query's path is in the measured delay already.

    ``paused`` marks the queries whose span met a logged GC pause of the servers (:func:`met_gc_pause`); their
    delays are left out of the drawn ones when enough remain (:data:`MIN_UNPAUSED_SHARE`), since the calibrated
    model runs the servers' collections itself and would count those pauses twice.

    Raises
    ------
    ValueError
        When no query that reached servers has a measured work.
    """
    opts = options or FitOptions()
    f = features
    use = np.isfinite(work_ms) & (f.servers > 0)
    if not use.any():
        raise ValueError("no query that reached servers has a measured CPU time")
    x_all = _work_design(f)
    x, w = x_all[use], work_ms[use]
    free, held = identifiable(x, list(_SERVER_KEYS))
    values = {k: default for k, _, default in FIT_PARAMETERS}
    sources = {k: "fitted" if k in free else "held at default (workbench/defaults.py): the servers' measured work "
               "cannot tell it from the other costs" for k in FIT_KEYS}
    target = w - sum((values[k] * x[:, FIT_KEYS.index(k)] for k in held), np.zeros(len(w)))
    cols = [FIT_KEYS.index(k) for k in free]
    blocks = bootstrap_blocks(int(use.sum()))
    beta, xc, structure, functions = _with_functions(f, use, x[:, cols], target, blocks, opts)
    values.update(zip(free, beta[:len(cols)].tolist(), strict=True))
    if values["service.ns_per_doc"] <= 0 and any(c.fitted for c in structure):
        # the terms are folded into the documents below, at ns_per_doc: without it they cannot be, so they are held
        structure = [FunctionCost(c.name, c.queries, why="held at 0: service.ns_per_doc was fitted at 0, and the "
                                                         "model charges this work through it") if c.fitted else c
                     for c in structure]
        beta, xc, _, functions = _with_functions(f, use, x[:, cols], target, blocks, opts, structure=False)
        values.update(zip(free, beta[:len(cols)].tolist(), strict=True))
    fitted_functions = [c for c in functions if c.fitted]
    ns = values["service.ns_per_doc"]
    per_entry = {c.name: c.value for c in structure}
    if (fitted_functions or any(c.fitted for c in structure)) and ns > 0:
        # a query's function, group-by and filter work folded into its documents, so every later step charges it
        # as the model does
        per_doc = extra_ns(list(f.calls), functions) + per_entry.get(STRUCTURE[0][0], 0.0) * f.group_by
        f = with_model_docs(f, f.docs * (1.0 + per_doc / ns)
                            + f.entries_in_filter * per_entry.get(STRUCTURE[1][0], 0.0) / ns)
        x_all = _work_design(f)
        x = x_all[use]
    within_observed(values, sources, held, free, x, float(w.sum()), MEASURED_WORK)
    base = x_all @ np.array([values[k] for k in FIT_KEYS])
    extra = 0.0
    off_path = Parameter(OFF_PATH_KEY, D.COST_OFF_PATH_MS, OFF_PATH_UNIT,
                         "DEFAULT (workbench/defaults.py): read only where the servers' process CPU is given "
                         "(--server-cpu-ms): the log's CPU times cover the query's own threads")
    if process_ms is not None:
        requests = float(x[:, FIT_KEYS.index("service.per_request_ms")].sum())
        extra = max(0.0, (process_ms * len(w) - float(base[use].sum())) / requests)
        off_path = replace(off_path, value=extra, source=(
            f"from the given process CPU: {process_ms:.3g} ms per query less the log's {float(w.mean()):.3g} ms in "
            f"the query's threads, {extra:.3g} ms per server request (Netty, the query log, GC, JIT), run on the "
            "server's cores after each response" if extra > 0 else
            f"0: the given process CPU per query ({process_ms:.3g} ms) is not above the log's measured work "
            f"({float(w.mean()):.3g} ms per query)"))
    broker_se: dict[str, float] = {}
    for k, (value, se, source) in broker_costs(f, slowest_ms, opts).items():
        values[k], sources[k] = value, source
        if se is not None:
            broker_se[k] = se

    shape_id, shapes = _sum_shapes(f.segments[use] * (f.servers[use] > 0))
    residuals = w - base[use]
    var = fit_variability(residuals, segment_mean(f.take(np.flatnonzero(use)), values), shape_id, shapes, blocks=blocks,
                          seed=opts.seed, bootstrap=min(opts.bootstrap, 200), clock=False)
    if var.se is not None and not shown(var.sigma, var.se):
        var = VariabilityFit(0.0, None, var.observed_iqr_ms, var.clock_only_iqr_ms, not_shown(var.sigma, var.se))
    cov = block_bootstrap(xc, target, np.ones(len(w)), blocks, opts.bootstrap, np.random.default_rng([opts.seed, 2]))
    keys = list(free) + [c.name for c in structure if c.fitted] + [key_of(c.name) for c in fitted_functions]
    if var.se is not None:
        keys.append(VARIABILITY_KEY)
        grown = np.zeros((len(keys), len(keys)))
        grown[:-1, :-1] = cov
        grown[-1, -1] = var.se**2
        cov = grown
    se_of = {**broker_se, **dict(zip(keys, np.sqrt(np.clip(np.diag(cov), 0, None)).tolist(), strict=True))}
    for k in FIT_KEYS:
        if sources[k].startswith("fitted") and values[k] == 0.0:
            sources[k] = at_bound_source(se_of.get(k))

    # the server's critical path at the fitted costs (no broker, no network), scaled to the query's own work
    g = factor_moments(f.shapes, var.sigma, opts.samples, opts.seed)[0][f.shape_id] if f.shapes else np.zeros(len(f))
    server_only = {k: (values[k] if k in _SERVER_KEYS else 0.0) for k in FIT_KEYS}
    critical = predict(f, server_only, g, 0.0)
    # a query's own work relative to its fitted mean; the process CPU outside its threads is taken as fixed
    ratio = np.where(use & (base > 0), np.nan_to_num(work_ms / np.where(base > 0, base, 1.0)), 1.0)
    broker = predict(f, {k: (values[k] if k not in _SERVER_KEYS else 0.0) for k in FIT_KEYS}, np.zeros(len(f)), 0.0)
    reached = f.servers > 0
    one, which = _delay_queries(f, reached)
    one, which = _unpaused(one, which, paused)
    raw = f.time_ms - broker - critical * ratio
    wake, raw, wake_note, off_path = _wake(f, raw, reached, off_path, use, process_ms is not None)
    overhead_key = "cluster.broker.overhead_ms"
    # the fit reports the broker's whole overhead; the scenario runs this much of it off the query's path
    moved = lift(raw[one], values[overhead_key])
    params = tuple(Parameter(k, values[k], unit, sources[k], se_of.get(k)) for k, unit, _ in FIT_PARAMETERS)
    params += tuple(Parameter(key_of(c.name), c.value, FUNCTION_UNIT,
                              f"fitted to the {c.queries:,} queries that call it" if c.fitted else c.why,
                              se_of.get(key_of(c.name)) if c.fitted else None) for c in functions)
    params += tuple(Parameter(c.name, c.value, unit, "fitted to the servers' measured work" if c.fitted else c.why,
                              se_of.get(c.name) if c.fitted else None)
                    for c, (_, unit) in zip(structure, STRUCTURE, strict=True))
    params += (off_path,)
    delay = without_clock(raw[one] + moved)
    by_kind = _by_kind(f, raw, one, moved)
    fanout = f.servers[one]
    if len(fanout) and int(np.min(fanout)) > 1:
        n = int(np.round(np.median(fanout)))
        delay = per_request_delays(delay, n)
        by_kind = {k: per_request_delays(v, n) for k, v in by_kind.items()}
        which += (f", each the slowest of its {n} server requests (median), so the delays drawn per request are "
                  f"those whose slowest of {n} is the logged one: the p-quantile of the logged delays at p^{n}")
    notes = [f"service costs fitted to the servers' measured work per query (the log's ThreadCpuTimeNs total: "
             f"{int(use.sum()):,} of {int(reached.sum()):,} queries that reached servers); the rest of timeMs "
             f"(mean {delay.mean():.3g} ms over {which}) is delay that takes no server capacity: "
             "cluster.network.request_delay_ms"]
    notes += [held_note(k, values[k], sources[k], x, free) for k in held]
    notes += [f"{k}: {sources[k]}" for k in FIT_KEYS if k not in held and sources[k].startswith(AT_BOUND)]
    if var.note:
        notes.append(f"service.variability: {var.note}")
    notes.append(f"{OFF_PATH_KEY}: {off_path.value:.3g} ms, {off_path.source}")
    notes.append(wake_note)
    notes.append(_functions_note(functions))
    notes += [f"{c.name}: {c.value:.3g} ± {c.se:.2g}, fitted to the servers' measured work" if c.fitted else
              f"{c.name}: {c.why}" for c in structure]
    quality = fit_quality(w, base[use], f.kind[use])
    quality["fitted_to"] = "the servers' measured work (ThreadCpuTimeNs total), ms per query"
    quality["measured_work_ms_total"] = float(w.sum())
    quality["fitted_work_ms_total"] = float(base[use].sum())
    # the model's servers' CPU per query: the query's threads', its wake-up and the CPU off its path (their sum the
    # given process CPU's share beyond the threads)
    quality["model_work_ms_per_query"] = float(base[use].mean()) + extra * float(
        x[:, FIT_KEYS.index("service.per_request_ms")].mean())
    if by_kind:
        notes.append("cluster.network.request_delay_by_kind_ms: " + ", ".join(
            f"{k} {float(np.median(v)):.3g} ms (median of {len(v):,})" for k, v in by_kind.items())
            + f", against {float(np.median(delay)):.3g} ms for all")
    fit = ServiceFit(params, tuple(keys), cov, var, quality, int(use.sum()), tuple(notes))
    return fit, Delay(delay, values[overhead_key], sources[overhead_key], wake, moved, by_kind)


def _by_kind(f: LogFeatures, raw: np.ndarray, one: np.ndarray, moved: float) -> dict[str, np.ndarray]:
    """Each kind of query's own delays (as the pooled ones: the clock taken out, the moved overhead carried) when
    at least two kinds logged :data:`MIN_KIND_DELAYS` each; else none (one distribution serves all).

    Why: against Apache Pinot 1.5.1 at 195.6/s the delays' medians on the nanosecond clock were 0.10 ms for
    selections, 0.32 for aggregations and 0.01 for group-bys (``docs/validation.md``, "The millisecond clock");
    drawn from one distribution, each kind's median took the others'."""
    if f.delay_kinds is None:
        return {}
    kinds, delays = f.delay_kinds[one], raw[one] + moved
    out = {k: without_clock(delays[kinds == k]) for k in DELAY_KINDS
           if int((kinds == k).sum()) >= MIN_KIND_DELAYS}
    return out if len(out) >= 2 else {}


def _structure_design(f: LogFeatures) -> np.ndarray:
    """:data:`STRUCTURE`'s columns, ms per unit: a group-by's documents, and the filter entries, per query that
    reached servers."""
    reached = f.servers > 0
    docs = np.where(reached & f.group_by.astype(bool), f.docs, 0.0) * 1e-6
    entries = np.where(reached, f.entries_in_filter, 0.0) * 1e-6
    return np.column_stack([docs, entries])


def _with_functions(f: LogFeatures, use: np.ndarray, x: np.ndarray, target: np.ndarray, blocks: list[np.ndarray],
                    opts: FitOptions, structure: bool = True,
                    ) -> tuple[np.ndarray, np.ndarray, list[FunctionCost], list[FunctionCost]]:
    """The costs fitted jointly with :data:`STRUCTURE`'s terms and each heavier aggregation function's own
    per-document cost (:mod:`~workbench.calibrate.functions`): the estimates (``x``'s columns, then the kept
    structure terms', then the fitted functions'), the design they were fitted on, the structure terms and every
    function the log calls beyond the plain ones, each fitted or held with why. A term is tried when at least
    :data:`~workbench.defaults.MIN_FUNCTION_QUERIES` queries have it; one whose value is not above two standard errors
    (block bootstrap, as the other costs) is held and the rest fitted again without it."""
    calls = list(f.calls[use])
    tried, functions = candidates(calls)
    docs = _work_design(f)[use][:, FIT_KEYS.index("service.ns_per_doc")]
    count = Counter(n for each in calls for n in set(each))
    shape = _structure_design(f)[use]
    order = [k for k, _ in STRUCTURE]
    terms: list[FunctionCost] = []   # the structure terms, by scenario key and the queries that have them
    have = [int((shape[:, j] > 0).sum()) for j in range(len(STRUCTURE))]
    kept = [j for j in range(len(STRUCTURE)) if structure and have[j] >= D.MIN_FUNCTION_QUERIES]
    terms += [FunctionCost(key, have[j], why=f"held at 0: {have[j]} of the log's queries have it "
                                             f"({D.MIN_FUNCTION_QUERIES} needed to fit it)")
              for j, (key, _) in enumerate(STRUCTURE) if structure and j not in kept]
    while True:
        xc = np.column_stack([x, shape[:, kept], calls_design(calls, docs, tried)])
        beta = _solve(xc, target)
        if not tried and not kept:
            return beta, xc, sorted(terms, key=lambda c: order.index(c.name)), functions
        cov = block_bootstrap(xc, target, np.ones(len(target)), blocks, opts.bootstrap,
                              np.random.default_rng([opts.seed, 2]))
        se = np.sqrt(np.clip(np.diag(cov), 0, None))[x.shape[1]:]
        value = beta[x.shape[1]:]
        weak = [i for i in range(len(kept) + len(tried)) if not value[i] > 2.0 * se[i]]
        if not weak:
            terms += [FunctionCost(STRUCTURE[j][0], have[j], float(v), float(e))
                      for j, v, e in zip(kept, value[:len(kept)], se[:len(kept)], strict=True)]
            fitted = [FunctionCost(n, count[n], float(v), float(e))
                      for n, v, e in zip(tried, value[len(kept):], se[len(kept):], strict=True)]
            return beta, xc, sorted(terms, key=lambda c: order.index(c.name)), sorted(
                functions + fitted, key=lambda c: c.name)
        terms += [FunctionCost(STRUCTURE[kept[i]][0], have[kept[i]], why=(
            f"held at 0: fitted {value[i]:.3g} ± {se[i]:.2g} from the servers' measured work, not above two "
            "standard errors")) for i in weak if i < len(kept)]
        functions += [FunctionCost(tried[i - len(kept)], count[tried[i - len(kept)]], why=(
            f"held at none: fitted {value[i]:.3g} ± {se[i]:.2g} ns per document from its "
            f"{count[tried[i - len(kept)]]:,} queries, not above two standard errors; assumed to cost what "
            "service.ns_per_doc charges")) for i in weak if i >= len(kept)]
        tried = [n for i, n in enumerate(tried) if i + len(kept) not in weak]
        kept = [j for i, j in enumerate(kept) if i not in weak]


def _functions_note(functions: list[FunctionCost]) -> str:
    """What the fit says of the aggregation functions' own costs, in one note."""
    if not functions:
        return (f"{FUNCTION_KEY}: none: the log's queries call only the plain aggregations (COUNT, SUM, MIN, MAX, "
                "AVG...) that service.ns_per_doc prices")
    said = [f"{c.name.upper()} {c.value:.3g} ± {c.se:.2g} ns per document per call, fitted to its {c.queries:,} "
            "queries" if c.fitted else f"{c.name.upper()} {c.why}" for c in functions]
    return f"{FUNCTION_KEY}: " + "; ".join(said)


def _wake(f: LogFeatures, raw: np.ndarray, reached: np.ndarray, off_path: Parameter, use: np.ndarray,
          process_given: bool) -> tuple[Wake, np.ndarray, str, Parameter]:
    """The wake-up (:mod:`~workbench.calibrate.wake`) read from each query's ``raw`` delay, the delays with it taken
    out, the note, and ``service.off_path_ms`` less the wake-up. The model charges it as server work per request
    (``service.wake_ms``) on the query's path: it is part of the process CPU beyond the query's threads, so the log's
    mean wake-up leaves ``off_path`` (the wake-up scaled down to ``off_path`` where it would be more, so the servers'
    load at the log's rate stays the measured one). Without the process CPU it is not fitted: CPU outside the
    query's threads that no measurement shows stays in the delay."""
    extra = off_path.value
    gap = gaps_ms(f.arrival_s)
    wake = fit_wake(gap, raw, reached & isolated(f.arrival_s, f.time_ms))
    if wake.fitted and extra <= 0:
        # The wake-up is CPU outside the query's threads (Pinot's own logs: its query threads' CPU barely moves with
        # the quiet time), which the log's thread CPU does not hold. Read from timeMs alone it cannot be told from
        # waiting: on a busy 2-core machine 12 ± 5.7 ms was read so, and the model's servers worked 4 times the CPU
        # Pinot's measured.
        given = "was given below the log's thread CPU" if process_given else "was not given (--server-cpu-ms)"
        wake = held_wake(f"the servers' process CPU {given}, and the wake-up is CPU outside the query's threads, "
                         f"which the log's thread CPU does not hold: read from timeMs alone "
                         f"({wake.wake_ms:.3g} ± {wake.wake_se or 0:.2g} ms) it cannot be told from waiting, so it "
                         "stays in the delay", wake.queries)
    if not wake.fitted:
        return wake, raw, f"service.wake_ms: {wake.note}", off_path
    each = wake.per_query(gap)
    mean = float(each[use].mean())
    capped = ""
    if mean > extra:
        # no more wake-up work than the process CPU beyond the query threads that was measured
        scale = extra / mean
        wake = replace(wake, wake_ms=wake.wake_ms * scale,
                       wake_se=wake.wake_se * scale if wake.wake_se is not None else None)
        each = wake.per_query(gap)
        capped = (f"; scaled to the given process CPU beyond the log's thread CPU ({extra:.3g} ms per request; "
                  f"the log's timeMs read {mean:.3g} ms on average)")
    taken = min(float(each[use].mean()), extra)
    left = replace(off_path, value=extra - taken,
                   source=f"{off_path.source}, less the wake-up's {taken:.3g} ms (on the query's path)")
    how = f"; {taken:.3g} ms of it (the log's mean) left {OFF_PATH_KEY}, the process CPU off the query's path"
    tau_se = f" ± {wake.tau_se:.2g}" if wake.tau_se is not None else ""
    note = (f"service.wake_ms: {wake.wake_ms:.3g} ± {wake.wake_se:.2g} ms, wake_tau_ms {wake.tau_ms:.3g}{tau_se} ms, "
            f"{wake.note}{how}{capped}")
    out: np.ndarray = raw - np.where(reached, each, 0.0)
    return wake, out, note, left


def with_model_docs(features: LogFeatures, docs: np.ndarray, entries: np.ndarray | None = None) -> LogFeatures:
    """``features`` charging each query ``docs`` documents (the replay's) instead of its own log line's, and
    ``entries`` filter entries when given."""
    if entries is None:
        return replace(features, docs=np.asarray(docs, dtype=float))
    return replace(features, docs=np.asarray(docs, dtype=float), entries_in_filter=np.asarray(entries, dtype=float))
