"""Brokers in the model: each with its settings, Pinot's routing, its adaptive stats and its result cache.

A broker is built from the scenario's broker section only: the adaptive-selection and result-cache
configs it carries were read from the user's Pinot broker properties when the scenario was loaded, so
every ``pinot.broker.adaptive.server.selector.*`` key reaches the selector and its stats.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import simpy

from workbench.pinot.routing.adaptive import ServerRoutingStatsManager, adaptive_server_selector
from workbench.pinot.table_config import TableConfig
from workbench.scenario.schema import BrokerSpec
from workbench.sim.caches import ModelResultCache
from workbench.sim.layout import Layout
from workbench.sim.router import Router

__all__ = ["Broker", "make_brokers"]


@dataclass
class Broker:
    """One broker: its section of the scenario, Pinot's routing, adaptive stats (if any), result cache, and
    the cores its reduce work runs on (``slots``: as many as it has cores, or bounded request threads)."""

    spec: BrokerSpec
    router: Router
    stats: ServerRoutingStatsManager | None
    cache: ModelResultCache
    slots: simpy.Resource

    def reduce_ms(self, servers: int, rows: int) -> float:
        """A query's broker work, ms: the fixed part plus the reduce of ``servers`` DataTables with ``rows``
        rows in all (PE §5: linear in both)."""
        spec = self.spec
        return spec.overhead_ms + spec.reduce_ms_per_server * servers + spec.reduce_ms_per_row * rows


def make_brokers(spec: BrokerSpec, count: int, layout: Layout, table: TableConfig,
                 query_options: Mapping[str, Any], rng: np.random.Generator,
                 env: simpy.Environment) -> list[Broker]:
    """``count`` brokers with the same settings, each with its own adaptive stats and result cache.

    Routing without adaptive feedback is a pure function of the request id, so those brokers share
    one router (and its route cache); adaptive brokers each route from their own stats. ``rng`` is
    the routing stream (adaptive selection's random picks for servers without stats).
    """
    brokers: list[Broker] = []
    shared: Router | None = None
    for _ in range(count):
        if spec.adaptive_selection:
            stats = ServerRoutingStatsManager(spec.adaptive)
            selector = adaptive_server_selector(spec.adaptive, stats, rng)
            router = Router(layout, table, query_options, stats, selector)
        else:
            stats = None
            shared = shared or Router(layout, table, query_options)
            router = shared
        threads = spec.query.request_threads
        slots = simpy.Resource(env, capacity=spec.cores if threads is None else min(spec.cores, threads))
        brokers.append(Broker(spec, router, stats, ModelResultCache(spec.result_cache, table, layout, env), slots))
    return brokers
