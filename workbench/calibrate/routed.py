"""Each logged query's segments per server as the model will route them, for the fit to ``timeMs``.

The broker waits for its slowest server, so the fit charges a query the segments of its busiest server. The log
gives only the totals (segments, servers). Spread evenly, they are exact for one replica, but with replicas
Pinot's balanced selector gives the k-th segment of the broker's hash-ordered list replica ``(requestId + k) %
n``, which spreads a query's segments unevenly: the busiest server holds more than the even share. A fit that
assumed the even share read that as a higher per-segment cost, which the replay, routing as Pinot does, then
added again (on the second test cluster: per-segment cost 0.23 against 0.16, p99 +18%). So each query is routed
here by the model's own router (:class:`workbench.sim.router.Router`, on the layout Pinot's controller builds
for these segments and servers) with the request id the replay gives it (its position in the log), and the
route is used wherever it reaches the servers and segments the log says the query did.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from workbench.calibrate.critical_path import Shape
from workbench.calibrate.features import LogFeatures, split_shape
from workbench.errors import InputError
from workbench.pinot.execution_config import ServerQueryConfig
from workbench.pinot.sql.query import Query
from workbench.pinot.table_config import TableConfig
from workbench.sim.layout import Layout, assign_layout, routing_instance_partitions
from workbench.sim.planner import Planner
from workbench.sim.router import Router

__all__ = ["routed_counts", "with_routed_shapes"]


def _layout(table: TableConfig, servers: int, segments: pd.DataFrame) -> Layout:
    """The layout the calibrated scenario's replay builds (``workbench.sim.layout.build_layout``'s, from data)."""
    names = tuple(str(s) for s in segments["segment_name"])
    docs = segments["total_docs"].to_numpy(dtype=float)
    consuming = (segments["status"] == "IN_PROGRESS").to_numpy() if "status" in segments else \
        np.zeros(len(segments), bool)
    partitions = segments["partition"].to_numpy() if "partition" in segments else np.zeros(len(segments), int)
    hosts = tuple(f"Server_{i}" for i in range(servers))
    ideal = assign_layout(table, hosts, names, consuming, partitions)
    index = {s: i for i, s in enumerate(hosts)}
    replicas = tuple(tuple(index[s] for s in ideal[n]) for n in names)
    return Layout(hosts, names, docs, consuming, ideal, replicas, None, np.asarray(partitions, dtype=np.int64),
                  routing_instance_partitions(table, hosts) or None)


def routed_counts(sql: list[str], request_ids: np.ndarray, planner: Planner, table: TableConfig, servers: int,
                  segments: pd.DataFrame, parsed: Mapping[str, Query | None]) -> list[tuple[int, ...] | None]:
    """Per query, the segments each server it reaches serves (``None`` where the planner refuses the SQL);
    ``parsed`` has each SQL text parsed (:func:`~workbench.calibrate.features.sql_shapes`)."""
    router = Router(_layout(table, servers, segments), table)
    out: list[tuple[int, ...] | None] = []
    for text, rid in zip(sql, request_ids.tolist(), strict=True):
        try:
            plan = planner.plan(text, parsed.get(text))
        except (InputError, ValueError):
            out.append(None)
            continue
        route, _ = router.route(int(rid), plan.names, plan.key)
        out.append(tuple(len(s) for _, s in route))
    return out


def with_routed_shapes(f: LogFeatures, counts: list[tuple[int, ...] | None], group_by: np.ndarray,
                       threads: list[int | None], config: ServerQueryConfig) -> tuple[LogFeatures, int]:
    """``f`` with each query's per-server shape from its route, where the route reaches as many servers and
    segments as the log says; and how many queries took their route."""
    index: dict[Shape, int] = {shape: i for i, shape in enumerate(f.shapes)}
    made: dict[tuple[tuple[int, ...], bool, int | None], Shape] = {}   # a long log repeats few routes
    ids, largest = f.shape_id.copy(), f.largest.copy()
    used = 0
    for i, routed in enumerate(counts):
        if routed is None or len(routed) != int(f.servers[i]) or sum(routed) != int(f.segments[i]) or not routed:
            continue
        key = (routed, bool(group_by[i]), threads[i])
        shape = made.get(key) or made.setdefault(key, split_shape(*key, config))
        ids[i] = index.setdefault(shape, len(index))
        largest[i] = max((seg for seg, _, _ in shape), default=0)
        used += 1
    fields = {name: getattr(f, name) for name in ("time_ms", "servers", "responded", "segments", "docs",
                                                  "entries_in_filter", "entries_post_filter", "group_by", "rows",
                                                  "kind", "arrival_s")}
    return LogFeatures(shape_id=ids, shapes=tuple(index), largest=largest, functions=f.functions,
                       delay_kinds=f.delay_kinds, **fields), used
