"""The work a scenario asks for, estimated before anything runs and held to its ``limits:`` section.

A typo (``qps: 1e9``, ``duration_s: 1y``, ``interval_s: 0``) must fail in a second with one message,
not hang a laptop or exhaust its memory an hour later. Each check names the key that asks for the
work, the estimate, the limit and the key that raises it. The estimates are expected values (mean
rates times the horizon), which is what the cost of a run follows.

>>> from workbench.scenario.build import build_section
>>> from workbench.scenario.schema import LimitsSpec
>>> check_value(2e5, build_section(LimitsSpec, {}, "limits"), "qps", "workload.arrival.qps", "queries/s")
Traceback (most recent call last):
...
workbench.errors.ScenarioError: workload.arrival.qps: 200000 queries/s is above the limit of 100000 \
(limits.qps); lower it, or raise limits.qps if the run really needs it
"""

from __future__ import annotations

import math

from workbench import defaults as D
from workbench.errors import ScenarioError
from workbench.scenario.schema import ClusterSpec, GCSpec, LimitsSpec, ServerSpec, SimulationSpec, WorkloadSpec
from workbench.workload.spec import GenerateSpec

__all__ = ["check_limits", "check_value", "check_work", "expected_events", "gc_pauses_per_second"]


def check_value(value: float, limits: LimitsSpec, name: str, where: str, unit: str) -> None:
    """``value`` at ``where`` must not exceed ``limits.<name>``."""
    limit = getattr(limits, name)
    if value > limit:
        raise ScenarioError(where, f"{value:g} {unit} is above the limit of {limit:g} (limits.{name}); lower it, "
                                   f"or raise limits.{name} if the run really needs it")


def check_work(estimate: float, limits: LimitsSpec, name: str, where: str, how: str) -> None:
    """An estimate of work (``how`` says of what) asked for at ``where`` must not exceed ``limits.<name>``."""
    limit = getattr(limits, name)
    if not estimate <= limit:  # NaN and inf included
        raise ScenarioError(where, f"asks for about {estimate:.3g} {how}, above limits.{name} = {limit:g}; "
                                   f"shorten or thin the run, or raise limits.{name} if it really needs that much")


_SCAN_BYTES_PER_CORE_S = D.GC_BYTES_PER_DOC * 1e8


def _per_second(mean_interval_s: float) -> float:
    return math.inf if mean_interval_s <= 0 else 1.0 / mean_interval_s


def gc_pauses_per_second(gc: GCSpec, server: ServerSpec) -> float:
    """Mean stop-the-world pauses per second of one server under ``gc`` (see :mod:`workbench.sim.gc`)."""
    if gc.collector == "fixed" and gc.interval_s is not None and gc.pause_ms is not None:
        return _per_second(gc.interval_s.mean + gc.pause_ms.mean / 1000.0)
    # work-driven allocation is not known before the run: bound it by every core scanning flat out
    # (GC_BYTES_PER_DOC x ~1e8 docs/s per core, ~200 MB/s; defaults.py)
    rate = gc.allocation_rate if gc.allocation_rate is not None else _SCAN_BYTES_PER_CORE_S * server.cores
    free = max(server.heap - gc.live_heap, 0.1 * server.heap)
    if gc.collector == "g1":  # young collections at the smallest eden G1 allows
        return _per_second(gc.new_size_min * free / rate)
    if gc.collector == "zgc":
        return 3.0 * _per_second(0.5 * free / rate)
    return 0.0


def expected_events(cluster: ClusterSpec, workload: WorkloadSpec, simulation: SimulationSpec) -> float:
    """GC pauses, crashes and churn events a run draws (every server and replication)."""
    horizon, reps = simulation.duration_s, simulation.replications
    per_server = gc_pauses_per_second(cluster.gc, cluster.server)
    if cluster.failures.mtbf_s is not None and cluster.failures.mttr_s is not None:
        per_server += 2.0 * _per_second(cluster.failures.mtbf_s + cluster.failures.mttr_s)
    churn = (workload.churn.replace_per_hour + workload.churn.reload_per_hour) / 3600.0
    return (per_server * cluster.servers + churn) * horizon * reps


def _generated_queries_per_second(spec: GenerateSpec) -> float:
    q = spec.queries
    dashboards = q.viewers * q.panels_max / min(q.refresh_s) if q.dashboards else 0.0
    return q.adhoc_qps + q.lookup_qps + q.timerange_qps + dashboards


def _check_generate(spec: GenerateSpec, limits: LimitsSpec) -> None:
    where = "workload.generate"
    check_value(spec.events, limits, "generate_events", f"{where}.events", "events")
    if spec.segment_size is not None:  # size-based: the first segments hold segment_initial_rows, later ones more
        check_work(spec.events / spec.segment_initial_rows, limits, "segments", f"{where}.segment_initial_rows",
                   "segments")
    else:
        check_work(spec.events / spec.segment_rows, limits, "segments", f"{where}.segment_rows", "segments")
    check_value(spec.partitions, limits, "segments", f"{where}.partitions", "partitions")
    check_work(_generated_queries_per_second(spec) * spec.queries.duration_s, limits, "simulated_queries",
          f"{where}.queries", "queries")


def check_limits(cluster: ClusterSpec, workload: WorkloadSpec, simulation: SimulationSpec,
                 limits: LimitsSpec) -> None:
    """Every work limit of a scenario; raises a :class:`ScenarioError` for the first one passed."""
    check_value(cluster.servers, limits, "servers", "cluster.servers", "servers")
    check_value(cluster.brokers, limits, "brokers", "cluster.brokers", "brokers")
    check_value(simulation.duration_s, limits, "duration_s", "simulation.duration_s", "s")
    check_value(simulation.replications, limits, "replications", "simulation.replications", "replications")
    arrival = workload.arrival
    if arrival.process == "poisson":
        unit = "queries/s" if arrival.speed == 1 else f"queries/s (qps x speed {arrival.speed:g})"
        check_value(arrival.rate, limits, "qps", "workload.arrival.qps", unit)
        check_work(arrival.rate * simulation.duration_s * simulation.replications, limits, "simulated_queries",
              "workload.arrival.qps", "queries (qps x simulation.duration_s x replications)")
    per_server = workload.synthetic.segments_per_server if workload.synthetic is not None else 1
    check_work(float(cluster.servers) * per_server, limits, "segments", "workload.synthetic.segments_per_server",
          "segments (cluster.servers x segments_per_server)")
    if workload.generate is not None:
        _check_generate(workload.generate, limits)
    check_work(expected_events(cluster, workload, simulation), limits, "simulated_events", "cluster",
          "GC pauses, crashes and churn events (cluster.gc, cluster.failures, workload.churn over the run)")
