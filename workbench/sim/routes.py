"""Every query's routing, decided once per distinct case: Pinot's instance selector on the layout.

Without adaptive feedback a route depends only on the query's plan, its request id modulo the replica
counts (:attr:`~workbench.sim.router.Router.period`) and which servers are up, whose crash times are
known in advance. A run of a million queries has a handful of such cases; each is routed once into a
*template* (its requests: server, segment positions, rows returned, documents scanned) and every query
names its template. The plan's per-request arrays are views of these templates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.pinot.table_config import TableConfig
from workbench.sim.fast.plan_kernels import first_seen
from workbench.sim.layout import Layout
from workbench.sim.pauses import PauseSchedule
from workbench.sim.planner import QueryPlan, result_rows
from workbench.sim.router import Router

__all__ = ["Routes", "route_queries"]


@dataclass(frozen=True)
class Routes:
    """Routing templates and the template of each query.

    A template's requests are ``requests[t]:requests[t + 1]`` of the template-request arrays, in routing
    order; request ``j`` goes to ``server[j]`` and scans the query plan's segments at positions
    ``position[segments[j]:segments[j + 1]]``.
    """

    #: Per query: its template (int32).
    template: np.ndarray
    #: Per template: unavailable segments (int32), its query plan, and its requests (CSR, int64).
    unavailable: np.ndarray
    plan: np.ndarray
    requests: np.ndarray
    #: Per template request: server (int32), segment positions (CSR, int64), rows its server returns
    #: (int64) and documents it scans (float, summed in position order).
    server: np.ndarray
    segments: np.ndarray
    position: np.ndarray
    rows: np.ndarray
    docs: np.ndarray

    @property
    def request_counts(self) -> np.ndarray:
        """Requests per template."""
        return np.diff(self.requests)

    @property
    def segment_counts(self) -> np.ndarray:
        """Segments per template request."""
        return np.diff(self.segments)


def _health_events(crashes: Sequence[PauseSchedule]) -> list[tuple[float, int, bool]]:
    events = [(t, s, up) for s, c in enumerate(crashes) for start, end in c.intervals()
              for t, up in ((start, False), (end, True))]
    events.sort(key=lambda e: (e[0], e[1]))
    return events


def _templates(epoch: np.ndarray, plan_index: np.ndarray, residue: np.ndarray, period: int
               ) -> tuple[np.ndarray, np.ndarray]:
    """Each query's template number and the first query of each (numbered by first appearance, so in
    epoch order). Keys are ``plan x period + residue``; when there are far more possible keys than
    queries they are first renumbered densely."""
    key = plan_index.astype(np.int64) * period + residue
    n_keys = (int(plan_index.max()) + 1) * period if len(key) else 0
    if n_keys > 4 * len(key) + 1024:
        _, key = np.unique(key, return_inverse=True)
        key = key.reshape(-1).astype(np.int64)
        n_keys = int(key.max()) + 1
    return first_seen(epoch, key, n_keys)


def route_queries(layout: Layout, table: TableConfig, options: Mapping[str, Any],
                  broker_config: Mapping[str, Any] | None, brokers: int, arrival_ms: np.ndarray,
                  plan_index: np.ndarray, plans: Sequence[QueryPlan], crashes: Sequence[PauseSchedule]) -> Routes:
    """Pinot's routing of every query (request id = its broker's counter), around servers that are down."""
    router = Router(layout, table, options, broker_config=broker_config)
    health = _health_events(crashes)
    times = np.array([h[0] for h in health], dtype=float)
    epoch = np.searchsorted(times, arrival_ms, side="right").astype(np.int64)
    residue = (np.arange(len(arrival_ms), dtype=np.int64) // brokers) % router.period
    template, first = _templates(epoch, plan_index, residue, router.period)
    servers: list[int] = []
    positions: list[np.ndarray] = []
    rows: list[int] = []
    docs: list[float] = []
    unavailable, requests, of_plan = [], [0], []
    applied = 0
    lookups: dict[int, dict[int, int]] = {}
    for q in first.tolist():  # templates in epoch order: health changes are applied in time order
        while applied < epoch[q]:
            router.set_server_health(health[applied][1], health[applied][2])
            applied += 1
        p = int(plan_index[q])
        plan = plans[p]
        route, missing = router.route(int(residue[q]), plan.names, plan.key)
        lookup = lookups.get(p)
        if lookup is None:
            segs = plan.segments if plan.segments is not None else range(len(layout.segments))
            lookup = lookups[p] = {int(seg): i for i, seg in enumerate(segs)}
        plan_docs = np.asarray(plan.docs_scanned if plan.docs_scanned is not None else layout.docs, dtype=float)
        of_plan.append(p)
        requests.append(requests[-1] + len(route))
        unavailable.append(missing)
        for server, chosen in route:
            pos = np.fromiter((lookup[seg] for seg in chosen), dtype=np.int64, count=len(chosen))
            servers.append(server)
            positions.append(pos)
            rows.append(result_rows(plan.query, float(plan_docs[pos].sum())))
            docs.append(_sequential_sum(plan_docs[pos]))
    counts = np.array([len(p) for p in positions], dtype=np.int64)
    return Routes(template, np.asarray(unavailable, dtype=np.int32), np.asarray(of_plan, dtype=np.int64),
                  np.asarray(requests, dtype=np.int64), np.asarray(servers, dtype=np.int32),
                  np.concatenate(([0], np.cumsum(counts))).astype(np.int64),
                  (np.concatenate(positions) if positions else np.empty(0, dtype=np.int64)).astype(np.int32),
                  np.asarray(rows, dtype=np.int64), np.asarray(docs, dtype=float))


def _sequential_sum(values: np.ndarray) -> float:
    """Left-to-right sum (as ``np.bincount`` with weights adds a request's documents)."""
    total = 0.0
    for v in values.tolist():
        total += v
    return total
