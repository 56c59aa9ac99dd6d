"""A second cluster with a known cost, shaped unlike ``synthetic_cluster.py``: written out as Pinot writes it.

The test's own model, independent of the workbench's code and of the first cluster's:

* **per-request dominated**: a server request costs ``per_request_ms`` (2 ms) however small; a segment adds
  ``per_segment_ms + ns_per_doc x docs``, a fraction of that for the short queries that are most of the log;
* **no per-segment variability** by default (every segment of a size costs the same); ``sigma`` gives each
  segment's scan a mean-1 lognormal factor instead;
* **replication 2 on 4 servers**: each segment, in upload order, goes to the 2 servers holding the fewest
  segments, ties to the first by name (Pinot's balanced segment assignment), so even segments are on servers
  0 and 1, odd ones on 2 and 3; the broker
  picks one replica per segment as Pinot's ``BalancedInstanceSelector`` does (the query's request id, counted
  up once per segment in the segment order, modulo the replicas), so a query reaches the servers its chosen
  replicas are on;
* **2 cores per server**, so Pinot gives a (non-group-by) query one task: a server request holds one of the
  server's 2 query threads for its whole work (per request + its segments in turn + the merge of each), and
  requests that find both threads busy wait in arrival order;
* **a skewed mix**: 85% short selections over 1-2 hourly segments, 15% aggregations scanning 12-48 segments;
* **moderate load**: the servers are about 30% busy, so ``timeMs`` includes the waits.

The broker spends half its overhead before the scatter and half after the gather plus the reduce; each
message crosses the network in ``NETWORK_MS``. Servers measure their threads' CPU time as Pinot does with
``enableThreadCpuTimeMeasurement`` (the log's ``offlineThreadCpuTimeNs`` total, summed over servers): the
time the request held its thread, waits excluded.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pinot_files as pinot
from pinot_files import HOUR_MS, T0_MS, LoggedQuery, clock

__all__ = ["CORES", "SEGMENTS", "SERVERS", "TRUE", "busy", "queries", "write_cluster"]

TRUE = {
    "cluster.broker.overhead_ms": 0.4,
    "service.per_request_ms": 2.0,
    "service.per_segment_ms": 0.15,
    "service.ns_per_doc": 1.5,
    "service.merge_ms_per_segment": 0.01,
    "cluster.broker.reduce_ms_per_server": 0.05,
    "cluster.broker.reduce_ms_per_row": 0.001,
}
NETWORK_MS = 0.1
SERVERS = 4
REPLICATION = 2
CORES = 2
#: Documents per hourly segment, cycling so that windows of any width mix sizes.
SIZES = (40_000, 150_000, 400_000, 90_000, 250_000, 600_000)
SEGMENTS = 96


def docs(segment: int) -> int:
    return SIZES[(segment * 7 // 3) % len(SIZES)]


def _assign() -> list[tuple[int, ...]]:
    held = [0] * SERVERS
    out = []
    for _ in range(SEGMENTS):
        chosen = tuple(sorted(sorted(range(SERVERS), key=lambda s: (held[s], s))[:REPLICATION]))
        for s in chosen:
            held[s] += 1
        out.append(chosen)
    return out


_REPLICAS = _assign()


def replicas(segment: int) -> tuple[int, ...]:
    return _REPLICAS[segment]


def _java_hash(text: str) -> int:
    h = 0
    for ch in text:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h


def hash_set_order(segments: range) -> list[int]:
    """The segments in the iteration order of a ``java.util.HashSet`` filled with their names by ``add``."""
    capacity = 16
    while len(segments) > 0.75 * capacity:
        capacity *= 2

    def bucket(i: int) -> int:
        h = _java_hash(pinot.segment_name(i))
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(segments, key=lambda i: (bucket(i), i))


def _work(segments: list[int], rng: np.random.Generator, sigma: float) -> float:
    """A request's work: per request, then each segment's (times a mean-1 lognormal factor when ``sigma``)."""
    p = TRUE
    factors = rng.lognormal(-sigma**2 / 2, sigma, len(segments)) if sigma > 0 else np.ones(len(segments))
    return p["service.per_request_ms"] + sum(
        f * (p["service.per_segment_ms"] + p["service.ns_per_doc"] * 1e-6 * docs(i)) + p["service.merge_ms_per_segment"]
        for i, f in zip(segments, factors.tolist(), strict=True))


def _pick(rng: np.random.Generator) -> tuple[str, int, int]:
    """A query's kind and window (first segment, width)."""
    if rng.random() < 0.85:
        kind, width = "short", int(rng.integers(1, 3))
    else:
        kind, width = "aggregation", int(rng.integers(12, 49))
    return kind, int(rng.integers(0, SEGMENTS + 1 - width)), width


def queries(count: int, qps: float, seed: int, sigma: float = 0.0) -> list[LoggedQuery]:
    """``count`` queries arriving as a Poisson stream of ``qps`` from 2026-01-05, through the servers' queues;
    ``sigma`` > 0 gives each segment's scan a mean-1 lognormal factor of that log-sigma (the merge stays fixed)."""
    p = TRUE
    rng = np.random.default_rng(seed)
    arrivals = T0_MS + 96 * HOUR_MS + np.cumsum(rng.exponential(1000.0 / qps, count))
    free = np.zeros((SERVERS, CORES))   # when each server thread is next free, ms
    out = []
    for rid, arrival in enumerate(arrivals.tolist()):
        kind, first, width = _pick(rng)
        chosen: dict[int, list[int]] = {}
        for j, i in enumerate(hash_set_order(range(first, first + width))):
            candidates = replicas(i)
            chosen.setdefault(candidates[(rid + j) % len(candidates)], []).append(i)
        submit = arrival + p["cluster.broker.overhead_ms"] / 2
        hosts, response, cpu, rows = [], [], 0.0, 0
        for server in sorted(chosen):
            segs = chosen[server]
            thread = int(np.argmin(free[server]))
            start = max(submit + NETWORK_MS, float(free[server, thread]))
            work = _work(segs, rng, sigma)
            free[server, thread] = start + work
            hosts.append(server)
            response.append(start + work + NETWORK_MS - submit)
            cpu += work
            rows += min(10, sum(docs(i) for i in segs)) if kind == "short" else 1
        n = len(chosen)
        total = (p["cluster.broker.overhead_ms"] / 2 + max(response) + p["cluster.broker.overhead_ms"] / 2
                 + p["cluster.broker.reduce_ms_per_server"] * n + p["cluster.broker.reduce_ms_per_row"] * rows)
        out.append(LoggedQuery(arrival, clock(arrival, total), pinot.window_sql(kind, first, width), width,
                               sum(docs(i) for i in range(first, first + width)), n,
                               tuple(clock(submit, r) for r in response), rows, kind, tuple(hosts),
                               round(cpu * 1e6)))
    return out


def busy(logged: list[LoggedQuery]) -> float:
    """The servers' mean utilisation over the log: measured work over the threads' time."""
    span = logged[-1].arrival_ms - logged[0].arrival_ms
    return sum(q.cpu_ns for q in logged) * 1e-6 / (span * SERVERS * CORES)


def write_cluster(directory: Path, logged: list[LoggedQuery], version: str = "1.5",
                  cpu: bool = True) -> dict[str, Path]:
    """The cluster's four files; ``cpu=False`` writes the log of servers that do not measure thread CPU time."""
    if not cpu:
        from dataclasses import replace
        logged = [replace(q, cpu_ns=0) for q in logged]
    return pinot.write_cluster(directory, logged, [docs(i) for i in range(SEGMENTS)], REPLICATION, version)
