"""Brokers in the model: each with its settings, Pinot's routing, its adaptive stats and its result cache.

A broker is built from the scenario's broker section only: the adaptive-selection and result-cache
configs it carries were read from the user's Pinot broker properties when the scenario was loaded, so
every ``pinot.broker.adaptive.server.selector.*`` key reaches the selector and its stats.
"""

from __future__ import annotations

import heapq
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

__all__ = ["Broker", "ReduceSlots", "make_brokers", "reduce_ms", "reduce_slots"]


class ReduceSlots:
    """The broker cores its request threads reduce on: FCFS over ``capacity`` slots, in closed form.

    Jobs arrive in time order (the engines submit them as queries finish gathering), so a job starts on
    the earliest free slot, or when it arrives if one is free: a heap of the times each slot frees up.
    """

    def __init__(self, capacity: int) -> None:
        self._free = [0.0] * capacity

    def run(self, ready: float, work: float, after: float = 0.0) -> float:
        """Run ``work`` ms from ``ready`` on, then keep the slot ``after`` ms more (CPU no reply waits for);
        returns when ``work`` ends.

        >>> slots = ReduceSlots(1)
        >>> slots.run(0.0, 1.0, after=5.0), slots.run(2.0, 1.0)   # the second waits for the first's 5 ms after
        (1.0, 7.0)
        """
        start = max(ready, heapq.heappop(self._free))
        end = start + work
        heapq.heappush(self._free, end + after)
        return end


@dataclass
class Broker:
    """One broker: its section of the scenario, Pinot's routing, adaptive stats (if any), result cache, and
    the cores its reduce work runs on (``slots``: as many as it has cores, or bounded request threads)."""

    spec: BrokerSpec
    router: Router
    stats: ServerRoutingStatsManager | None
    cache: ModelResultCache
    slots: ReduceSlots

    def reduce_ms(self, servers: int, rows: int) -> float:
        """A query's broker work, ms: the fixed part plus the reduce of ``servers`` DataTables with ``rows``
        rows in all (PE §5: linear in both)."""
        return reduce_ms(self.spec, servers, rows)


def reduce_ms(spec: BrokerSpec, servers: int, rows: int) -> float:
    """``overhead_ms + reduce_ms_per_server x servers + reduce_ms_per_row x rows``, ms."""
    return spec.overhead_ms + spec.reduce_ms_per_server * servers + spec.reduce_ms_per_row * rows


def reduce_slots(spec: BrokerSpec) -> int:
    """How many reduces a broker runs at once: its cores, or fewer bounded request threads."""
    threads = spec.query.request_threads
    return spec.cores if threads is None else min(spec.cores, threads)


def make_brokers(spec: BrokerSpec, count: int, layout: Layout, table: TableConfig,
                 query_options: Mapping[str, Any], rng: np.random.Generator,
                 env: simpy.Environment) -> list[Broker]:
    """``count`` brokers with the same settings, each with its own adaptive stats and result cache.

    Routing without adaptive feedback is a pure function of the request id, so those brokers share
    one router (and its route cache); adaptive brokers each route from their own stats, and with a failure
    detector each broker has its own router, which its detector excludes servers from. ``rng`` is
    the routing stream (adaptive selection's random picks for servers without stats).
    """
    brokers: list[Broker] = []
    shared: Router | None = None
    for _ in range(count):
        if spec.adaptive_selection:
            stats = ServerRoutingStatsManager(spec.adaptive)
            selector = adaptive_server_selector(spec.adaptive, stats, rng)
            router = Router(layout, table, query_options, stats, selector, broker_config=spec.config)
        elif spec.failure_detector.enabled:  # each broker's detector excludes servers from its own routing
            stats = None
            router = Router(layout, table, query_options, broker_config=spec.config)
        else:
            stats = None
            shared = shared or Router(layout, table, query_options, broker_config=spec.config)
            router = shared
        cache = ModelResultCache(spec.result_cache, table, layout, env)
        brokers.append(Broker(spec, router, stats, cache, ReduceSlots(reduce_slots(spec))))
    return brokers
