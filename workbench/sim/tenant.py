"""Several tables on one tenant: each table planned on its own, the plans merged onto the shared servers.

A ``tables:`` scenario (``docs/scenario.md``) puts several Pinot tables on one cluster. Each table's
segments are assigned as Pinot assigns them, per table over its tenant's tagged servers
(:func:`~workbench.sim.layout.build_layout`); each table draws its queries, their work and their
network delays from streams of its own (:func:`table_streams`), so adding a table changes no other table's
draws. The tables' plans are then merged into one plan in arrival order (ties: table order), which both
engines execute unchanged: the servers, their cores, threads, queues, GC and crashes are shared. What the
tables share is drawn from the first table's streams (the replication's own, so a one-table ``tables:``
scenario is the classic scenario bit for bit): crashes, slow windows, wedges and each server's GC, whose
heap holds every table's upsert keys on that server and whose allocation follows every table's requests.

A broker numbers every query it receives whatever its table (Pinot's request id), so a table's routing
(its request-id residue) follows the merged order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from workbench.errors import InputError, ScenarioError
from workbench.jvm import LiveHeap
from workbench.scenario import Scenario
from workbench.scenario.schema import GCSpec
from workbench.sim.fast.plan_kernels import delivery_order, offsets
from workbench.sim.layout import Layout
from workbench.sim.memory import Memory, ServerMemory
from workbench.sim.plan import (
    Delivery,
    Plan,
    draw_table,
    expand,
    request_columns,
    request_targets,
    request_work,
    server_schedules,
    service_delays,
    with_heaps,
)
from workbench.sim.planner import Planner
from workbench.sim.routes import RouteCache, Routes, route_queries
from workbench.sim.streams import Streams

__all__ = ["TABLE_STREAM_KEY", "TablePart", "build_tenant_plan", "check_tenant", "merge_layouts", "merge_memory",
           "table_streams"]

#: The spawn-key word of a table's own streams: table ``k >= 1`` of replication ``r`` draws from
#: ``SeedSequence(seed, spawn_key=(r, TABLE_STREAM_KEY, k))``, apart from every stream of the replication's
#: own tree (``(r, 0..7, ...)``), which table 0 uses.
TABLE_STREAM_KEY = 0x7AB1E


def table_streams(child: np.random.SeedSequence, servers: int, table: int) -> Streams:
    """Table ``table``'s streams in the replication whose seed sequence is ``child``: the replication's own
    for table 0, else streams derived from the seed, the replication and the table's index alone."""
    if table == 0:
        return Streams.spawn(child, servers)
    own = np.random.SeedSequence(child.entropy, spawn_key=(*child.spawn_key, TABLE_STREAM_KEY, table))
    return Streams.spawn(own, servers)


#: Features that let timing or a single table's state decide what is sent: not in the tenant model yet.
_NOT_YET: tuple[tuple[Callable[[Scenario], bool], str, str], ...] = (
    (lambda sc: sc.cluster.broker.adaptive_selection, "cluster.broker.config",
     "adaptive server selection (pinot.broker.adaptive.server.selector.type) is not in the tenant model yet"),
    (lambda sc: sc.cluster.broker.failure_detector.enabled, "cluster.broker.config",
     "the broker's failure detector (pinot.broker.failure.detector.type) is not in the tenant model yet"),
    (lambda sc: sc.cluster.broker.result_cache.enabled, "cluster.broker.config",
     "the broker result cache (pinot.broker.query.cache.*) is not in the tenant model yet"),
    (lambda sc: sc.cluster.server.segment_cache.enabled, "cluster.server.config",
     "the server segment cache (pinot.server.segment.query.cache.*) is not in the tenant model yet"),
    # Pinot's bounded schedulers keep one group per table (its pending limit, tokens and thread reservations);
    # the model's servers keep one group, which is Pinot's only with one table
    (lambda sc: sc.cluster.server.query.scheduler in ("bounded_fcfs", "tokenbucket"),
     "cluster.server.config.pinot.query.scheduler.name",
     "bounded_fcfs and tokenbucket keep one scheduler group per table in Pinot, which the model does not yet "
     "(it keeps one group per server); use fcfs, binary_workload or workload"),
)


def check_tenant(sc: Scenario) -> None:
    """A scenario of several tables uses only what the merged plan runs; else one error naming the key."""
    if len(sc.tables) < 2:
        return
    for applies, key, why in _NOT_YET:
        if applies(sc):
            raise ScenarioError(key, f"{why}; run the tables one at a time, or turn it off")


@dataclass(frozen=True)
class TablePart:
    """One table of a run: its scenario, its layout over the cluster's servers, its replayed queries and
    planner (a ``replay`` workload), its routing cache (one per run) and the workload directory it reads."""

    scenario: Scenario
    layout: Layout
    replay: pd.DataFrame | None
    planner: Planner | None
    routing: RouteCache


def merge_layouts(layouts: Sequence[Layout]) -> Layout:
    """Every table's segments in one layout over the shared servers (table after table), as the engines
    index them; segment names must differ between tables (Pinot's names carry the table's)."""
    if len(layouts) == 1:
        return layouts[0]
    names = tuple(n for lay in layouts for n in lay.segments)
    if len(set(names)) < len(names):
        seen: set[str] = set()
        twice = next(n for n in names if n in seen or seen.add(n))  # type: ignore[func-returns-value]
        raise InputError("tables", f"segment {twice!r} belongs to two tables; give each table's segments their "
                                   "own names (Pinot's carry the table's name)")
    metadata = {k: v for lay in layouts for k, v in (lay.metadata or {}).items()}
    partitions = [lay.partitions if lay.partitions is not None else np.zeros(len(lay.segments), np.int64)
                  for lay in layouts]
    return Layout(layouts[0].servers, names, np.concatenate([lay.docs for lay in layouts]),
                  np.concatenate([lay.consuming for lay in layouts]),
                  {k: v for lay in layouts for k, v in lay.ideal_state.items()},
                  tuple(r for lay in layouts for r in lay.replicas), metadata or None,
                  np.concatenate(partitions).astype(np.int64),
                  {k: v for lay in layouts for k, v in (lay.instance_partitions or {}).items()} or None)


def merge_memory(memories: Sequence[Memory], layouts: Sequence[Layout], gc: GCSpec) -> Memory:
    """Each server's long-lived heap with every table it holds: the JVM's own ``gc.live_heap`` once, plus each
    table's upsert keys (and bitmaps, replayed from its data) on the servers that hold that table's segments.
    ``gc.upsert_keys``, when given, is what a server holds whatever its tables (a GC-log calibration measures
    the JVM, not a table), so it is counted once."""
    if len(memories) == 1 or gc.upsert_keys is not None:
        return memories[0]
    base_heap = gc.live_heap
    servers = []
    for s in range(len(layouts[0].servers)):
        held = [m.servers[s] for m, lay in zip(memories, layouts, strict=True)
                if any(s in replicas for replicas in lay.replicas)]
        keys = sum(h.live.upsert_keys for h in held)
        key_bytes = sum(h.live.upsert_keys * h.live.bytes_per_key for h in held)
        static = base_heap + sum(h.live.static_bytes - base_heap for h in held)
        servers.append(ServerMemory(LiveHeap(static, keys, key_bytes / keys if keys else 0.0),
                                    sum(h.update_rate for h in held)))
    sources = [m.source for m in memories]
    source = next((x for x in ("replay", "upsert_keys") if x in sources), "none")
    timeline = pd.concat([m.timeline for m in memories], ignore_index=True)
    return Memory(tuple(servers), timeline, next((m.at_s for m in memories if m.at_s is not None), None), source)


def _regroup(counts: Sequence[np.ndarray], values: Sequence[np.ndarray], order: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray]:
    """Rows of several CSR arrays (``counts`` items per row, ``values`` row after row), concatenated and
    taken in ``order``: the new offsets and values."""
    c = np.concatenate(counts).astype(np.int64)
    v = np.concatenate(values)
    starts = offsets(c)[:-1]
    taken = c[order]
    ends, row, local = expand(taken)
    return ends, v[starts[order][row] + local]


def _merge_routes(routes: Sequence[Routes], plan_base: np.ndarray, order: np.ndarray) -> Routes:
    """The tables' routing templates as one set (templates and plans renumbered table after table), each
    query's template taken in the merged ``order``."""
    template_base = offsets([len(r.unavailable) for r in routes])[:-1]
    template = np.concatenate([r.template.astype(np.int64) + b for r, b in zip(routes, template_base, strict=True)])
    return Routes(template[order].astype(np.int32), np.concatenate([r.unavailable for r in routes]),
                  np.concatenate([r.plan + b for r, b in zip(routes, plan_base, strict=True)]),
                  offsets(np.concatenate([r.request_counts for r in routes])),
                  np.concatenate([r.server for r in routes]),
                  offsets(np.concatenate([r.segment_counts for r in routes])),
                  np.concatenate([r.position for r in routes]), np.concatenate([r.rows for r in routes]),
                  np.concatenate([r.docs for r in routes]))


def _per_query(drawn: Sequence[dict[str, Any]], name: str, order: np.ndarray) -> np.ndarray:
    values: np.ndarray = np.concatenate([d[name] for d in drawn])[order]
    return values


def _churn(drawn: Sequence[dict[str, Any]], segment_base: np.ndarray) -> dict[str, Any]:
    """Every table's churn events (its segments renumbered into the merged layout), in time order."""
    at = np.concatenate([d["churn_ms"] for d in drawn])
    segment = np.concatenate([d["churn_segment"] + b for d, b in zip(drawn, segment_base, strict=True)])
    event = tuple(e for d in drawn for e in d["churn_event"])
    order = np.argsort(at, kind="stable")
    return {"churn_ms": at[order], "churn_segment": segment[order].astype(np.int32),
            "churn_event": tuple(event[i] for i in order.tolist())}


def build_tenant_plan(sc: Scenario, parts: Sequence[TablePart], layout: Layout, streams: Sequence[Streams], *,
                      horizon_ms: float, memory: Memory) -> tuple[Plan, np.ndarray]:
    """One replication's plan of every table of ``sc`` on the shared servers, and each query's table index.

    ``parts``: each table's layout, replay and routing (``layout``: them merged, :func:`merge_layouts`);
    ``streams``: each table's (:func:`table_streams`; the first also draws what the servers share);
    ``memory``: each server's heap with every table on it (:func:`merge_memory`).
    """
    spec = sc.cluster
    schedules = server_schedules(sc, layout.servers, streams[0], horizon_ms)
    drawn = [draw_table(p.scenario, p.layout, s, horizon_ms, p.replay, p.planner, None)
             for p, s in zip(parts, streams, strict=True)]
    counts = [len(d["arrival_ms"]) for d in drawn]
    table = np.repeat(np.arange(len(parts), dtype=np.int32), counts)
    order = np.argsort(np.concatenate([d["arrival_ms"] for d in drawn]), kind="stable")
    number = np.empty(len(order), dtype=np.int64)
    number[order] = np.arange(len(order), dtype=np.int64)
    query_base = offsets(counts)
    routes, works, delays = [], [], []
    for k, (part, d, s) in enumerate(zip(parts, drawn, streams, strict=True)):
        r = route_queries(part.routing, spec.brokers, d["arrival_ms"], d["plan_index"], d["plans"],
                          schedules.crashes, ids=number[query_base[k]:query_base[k + 1]])
        work, n = request_work(d, r)
        routes.append(r)
        works.append(work)
        slowed = ((*request_targets(d["arrival_ms"], r, offsets(r.request_counts[r.template])), schedules.slow)
                  if schedules.slow is not None and schedules.slow.whole_jvm else None)
        columns = request_columns(d["delay_column"], offsets(r.request_counts[r.template]))
        delays.append(np.asarray(service_delays(part.scenario, s.network, n, s.request_delay, slowed, columns))
                      .reshape(n, 2))
    plan_base = offsets([len(d["plans"]) for d in drawn])[:-1]
    segment_base = offsets([len(p.layout.segments) for p in parts])[:-1]
    merged = _merge_routes(routes, plan_base, order)
    query_segments, work = _regroup([np.diff(d["query_segments"]) for d in drawn], works, order)
    _, pair = _regroup([r.request_counts[r.template] for r in routes], delays, order)
    query_requests = offsets(merged.request_counts[merged.template])
    arrival = _per_query(drawn, "arrival_ms", order)
    plan_segment = np.concatenate([d["plan_segment"] + b for d, b in zip(drawn, segment_base, strict=True)])
    common: dict[str, Any] = dict(
        arrival_ms=arrival,
        plan_index=np.concatenate([d["plan_index"] + b for d, b in zip(drawn, plan_base, strict=True)])[order]
        .astype(np.int32),
        broker=(np.arange(len(order)) % spec.brokers).astype(np.int32),
        **{name: _per_query(drawn, name, order) for name in ("timeout_ms", "group_by", "secondary",
                                                              "execution_threads", "prepare_ms",
                                                              "merge_ms_per_segment", "off_path_ms",
                                                              "delay_column")},
        query_segments=query_segments, work=work,
        plan_offsets=offsets(np.concatenate([np.diff(d["plan_offsets"]) for d in drawn])),
        plan_segment=plan_segment.astype(np.int32), plan_docs=np.concatenate([d["plan_docs"] for d in drawn]),
        plans=tuple(p for d in drawn for p in d["plans"]), heaps=(), crashes=schedules.crashes,
        cpu_scale=np.ones(layout.num_servers), slow=schedules.slow, wedges=schedules.wedges,
        **_churn(drawn, segment_base))
    flat = pair.reshape(-1)
    delivery = Delivery(*delivery_order(arrival, merged.template, query_requests, merged.requests, merged.server, flat,
                                        layout.num_servers))
    plan = Plan(routed=True, routes=merged, query_requests=query_requests, delays=flat, delivery=delivery, **common)
    return with_heaps(plan, sc, layout, streams[0], horizon_ms, memory), table[order]
