"""The engines that execute a replication's plan, by name (``simulation.engine``): one protocol, one registry.

A run plans each replication once (:func:`~workbench.sim.plan.build_plan`: every timing-free draw), then
an engine executes the plan in time and returns the replication's records. Both engines take the same
inputs and return the same :class:`~workbench.sim.records.ReplicationRecords`, so :func:`workbench.simulate`
looks the chosen one up in :data:`ENGINES` and never asks which it holds; an engine added here is
runnable without touching the run loop.

- ``simpy``: the reference semantics (:class:`~workbench.sim.model.ClusterModel`, brokers and servers
  as SimPy processes).
- ``fast``: the compiled engine (:func:`~workbench.sim.fast.engine.run_fast`), exact inside its coverage
  (:func:`~workbench.sim.fast.engine.coverage`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

import simpy

from workbench.scenario import Scenario
from workbench.sim.broker import make_brokers
from workbench.sim.caches import ModelSegmentCache
from workbench.sim.fast.engine import run_fast
from workbench.sim.layout import Layout
from workbench.sim.model import Cluster, ClusterModel, Window
from workbench.sim.plan import Plan
from workbench.sim.records import ReplicationRecords, window_counts
from workbench.sim.server import ExecutionModel, PinotServer
from workbench.sim.service import make_service_model
from workbench.sim.streams import Streams

__all__ = ["ENGINES", "Engine", "Replication", "build_cluster"]


@dataclass(frozen=True)
class Replication:
    """What an engine is given to execute one replication: the scenario, where its segments live, the
    replication's plan and random streams (the SimPy engine draws from them as it routes live), the
    measured window, the replication's index, which ``queries`` columns to keep (``records``) and how
    many threads may run servers at once."""

    scenario: Scenario
    layout: Layout
    plan: Plan
    streams: Streams
    window: Window
    index: int
    records: str = "all"
    threads: int = 1


class Engine(Protocol):
    """Executes a replication's plan in time."""

    def run(self, replication: Replication) -> ReplicationRecords:
        """The replication's records (at least the ``queries`` columns ``records`` asks for: the caller keeps
        those)."""


def build_cluster(sc: Scenario, layout: Layout, env: simpy.Environment, streams: Streams, plan: Plan) -> Cluster:
    """One replication's parts, each built from its own section of ``sc`` (schedules from the ``plan``)."""
    spec = sc.cluster
    servers = [PinotServer(name, spec.server.query, plan.pauses[i], plan.crashes[i],
                           ExecutionModel(spec.server.execution), stops=plan.stops[i])
               for i, name in enumerate(layout.servers)]
    caches = [ModelSegmentCache(spec.server.segment_cache, sc.table, layout) for _ in servers]
    brokers = make_brokers(spec.broker, spec.brokers, layout, sc.table, sc.workload.query_options,
                           streams.routing, env)
    return Cluster(layout, servers, caches, brokers, make_service_model(sc.service), spec.network.latency_ms,
                   request_delay=spec.network.request_delay_ms,
                   request_delays=spec.network.request_delays)


class SimPyEngine:
    """The reference: brokers and servers as SimPy processes over one environment per replication."""

    def run(self, replication: Replication) -> ReplicationRecords:
        r = replication
        env = simpy.Environment()
        model = ClusterModel(env, r.streams, build_cluster(r.scenario, r.layout, env, r.streams, r.plan), r.plan,
                             r.window)
        model.run()
        queries = model.records.frame(r.index)
        return ReplicationRecords(queries, model.server_rows(r.index), model.pause_rows(r.index),
                                  model.failure_rows(r.index), {**model.window_row(r.index), **window_counts(queries)})


class FastEngine:
    """The compiled engine: each server's state machine on its own, then the brokers' gathers and reduces."""

    def run(self, replication: Replication) -> ReplicationRecords:
        r = replication
        return run_fast(r.scenario, r.layout, r.plan, r.window, r.index, records=r.records, parallel=r.threads,
                        streams=r.streams)


#: ``simulation.engine`` (as :func:`~workbench.sim.run.choose_engine` resolves ``auto``) -> the engine.
ENGINES: Mapping[str, Engine] = {"simpy": SimPyEngine(), "fast": FastEngine()}
