"""Scale-out what-if: the cluster grows from N to M servers (or loses some), what Pinot moves, and p99 after.

A planner asking "what if we go from 6 to 8 servers" wants three things: the assignment Pinot's
rebalance produces (with the table's ``minimizeDataMovement``), how many segments and bytes the new
servers must download, and how queries behave once the move is done. :func:`scale_out` answers all
three from one scenario: the layout the scenario builds today, Pinot's rebalance of it onto the new
servers (:func:`workbench.pinot.rebalance.plan_rebalance`, the current assignment being exactly that
layout), and two runs on the same seed, before and after, the second on the rebalanced ideal state
rather than a fresh assignment (they differ when data movement is minimised). Common random numbers
make the p99 difference the move's, not noise.

Servers keep their names: growing adds ``Server_N .. Server_<M-1>``, shrinking removes the last ones.
Segment sizes come from the workload's ``segments.parquet`` (``size_bytes``) when it has them, else
``total_docs x SEGMENT_BYTES_PER_DOC`` (:mod:`workbench.defaults`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from workbench.errors import InputError
from workbench.io.summary import Summary
from workbench.pinot.rebalance import RebalancePlan, plan_rebalance, tenant_plan
from workbench.runs import resolve, run_scenario
from workbench.scenario import Scenario
from workbench.sim.layout import build_layout, offline_partition_of
from workbench.sim.run import workload_dir
from workbench.sim.segment_range import segment_sizes

__all__ = ["ScaleOut", "rebalance_layout", "scale_out", "segment_sizes"]


@dataclass(frozen=True)
class ScaleOut:
    """A rebalance from ``servers_before`` to ``servers_after`` servers and the runs either side of it.

    ``before`` and ``after`` are the runs' summaries (:func:`~workbench.analysis.stats.summarise`) (``after`` on the
    rebalanced ideal state); ``plan`` holds the instance partitions, the ideal states and per-server moves.
    """

    servers_before: int
    servers_after: int
    plan: RebalancePlan
    before: Summary
    after: Summary
    table_bytes: int

    @property
    def moved_share(self) -> float:
        """Bytes downloaded as a share of the table's replicated bytes."""
        return self.plan.bytes_moved / self.table_bytes if self.table_bytes else 0.0

    def p99_ms(self) -> tuple[float, float]:
        """p99 latency before and after the move, ms."""
        return float(self.before.latency_ms.p99.value), float(self.after.latency_ms.p99.value)

    def moves(self) -> pd.DataFrame:
        """One row per server (:class:`~workbench.pinot.rebalance.ServerMoves` fields) and the ``plan``
        label, as :func:`~workbench.analysis.sizing_plots.data_movement` draws them."""
        label = f"{self.servers_before} -> {self.servers_after} servers"
        return pd.DataFrame(self.plan.table_rows()).assign(plan=label)

    def servers_used(self) -> int:
        """Servers that hold at least one segment after the move."""
        return sum(1 for m in self.plan.moves if m.segments_after > 0)

    def sentence(self) -> str:
        """One line for a report or a notebook."""
        old, new = self.p99_ms()
        moved = self.plan.bytes_moved
        size = f"{moved / 1e9:.3g} GB" if moved >= 1e9 else f"{moved / 1e6:.3g} MB"
        text = (f"{self.servers_before} -> {self.servers_after} servers: {self.plan.segments_moved} segment "
                f"replicas ({size}, {self.moved_share:.0%} of the table) move"
                f"{' with minimizeDataMovement' if self.plan.minimize_data_movement else ''}; p99 "
                f"{old:.1f} -> {new:.1f} ms")
        used = self.servers_used()
        if used < self.servers_after:
            text += (f". The table's instance assignment places data on {used} of the {self.servers_after} servers "
                     "(its numInstancesPerReplicaGroup or numInstances): raise it to use the rest")
        return text


def _servers_after(view: Scenario, servers: int) -> list[str]:
    """The servers the table may live on once the cluster has ``servers``: every one, or under tenant isolation
    its tenant's (a server Pinot adds is tagged ``DefaultTenant``; removing servers takes the last ones)."""
    if not view.isolation:
        return [f"Server_{i}" for i in range(servers)]
    claimed = sum(int(n) for n in view.cluster.tenants.values())
    if claimed > servers:
        raise InputError("servers", f"{servers} servers cannot hold the {claimed} that cluster.tenants tags; lower "
                                    "cluster.tenants with them, or keep at least that many servers")
    return [f"Server_{i}" for i in replace(view.cluster, servers=servers).servers_of(view.tenant)]


def _rebalance_table(view: Scenario, servers: int, data: Path | None, minimize_data_movement: bool | None,
                     include_consuming: bool) -> tuple[RebalancePlan, int]:
    """Pinot's rebalance of one table's layout today onto its servers after the change, and its replicated
    bytes."""
    directory = workload_dir(view, data)
    layout = build_layout(view, directory)
    sizes = segment_sizes(layout, directory)
    streams = layout.partitions if layout.partitions is not None else np.zeros(len(layout.segments), dtype=int)
    partition = dict(zip(layout.segments, (int(p) for p in streams), strict=True))
    # as the layout was built: OFFLINE segments by name or ZK metadata, REALTIME ones by stream partition
    partition_of = offline_partition_of(view.table, layout.metadata) if view.table.table_type == "OFFLINE" \
        else partition.__getitem__
    consuming = [n for n, c in zip(layout.segments, layout.consuming, strict=True) if c]
    now = [layout.servers[i] for i in view.table_servers()]
    plan = plan_rebalance(view.table, now, _servers_after(view, servers), sizes,
                          current_assignment=layout.ideal_state, minimize_data_movement=minimize_data_movement,
                          consuming=consuming, include_consuming=include_consuming, partition_of=partition_of)
    return plan, sum(sizes[n] * len(layout.ideal_state[n]) for n in layout.segments)


def rebalance_layout(sc: Scenario, servers: int, *, data: Path | None = None,
                     minimize_data_movement: bool | None = None,
                     include_consuming: bool | None = None) -> tuple[RebalancePlan, int]:
    """Pinot's rebalance of the layout ``sc`` builds today onto ``servers`` servers, and the table's
    replicated bytes (no simulation; :func:`scale_out` takes the same arguments).

    A scenario of several tables is rebalanced as Pinot's tenant rebalance does it: table by table, each on
    its tenant's servers (:func:`~workbench.pinot.rebalance.tenant_plan`); the bytes are every table's.
    ``include_consuming`` ``None`` moves CONSUMING segments only when the cluster shrinks: a rebalance
    without ``includeConsuming`` leaves them where they are, which on a removed server is nowhere.
    """
    if servers < 1 or servers == sc.cluster.servers:
        raise InputError("servers", f"must be a positive server count other than today's {sc.cluster.servers}, "
                                    f"got {servers}")
    views = sc.table_scenarios
    if len(views) > 1 and data is not None:
        raise InputError("data", "names one table's data; a scenario of several tables reads each table's "
                                 "workload.data (give it there)")
    if include_consuming is None:
        include_consuming = servers < sc.cluster.servers
    parts = [_rebalance_table(view, servers, data, minimize_data_movement, include_consuming) for view in views]
    return tenant_plan([plan for plan, _ in parts]), sum(total for _, total in parts)


def scale_out(scenario: Scenario | str | Path | Mapping[str, Any], servers: int, *, seed: int | None = None,
              data: Path | None = None, minimize_data_movement: bool | None = None,
              include_consuming: bool | None = None) -> ScaleOut:
    """Rebalance ``scenario``'s table onto ``servers`` servers and simulate before and after.

    Parameters
    ----------
    scenario
        The cluster today (its ``cluster.servers`` is N).
    servers
        M, the server count after the change (larger to grow, smaller to shrink).
    seed, data
        As :func:`~workbench.sim.run.simulate`; both runs use the same seed.
    minimize_data_movement
        The rebalance's option: ``None`` uses the table config's flag (``DEFAULT``), else ENABLE/DISABLE.
    include_consuming
        Also move CONSUMING segments (the rebalance's ``includeConsuming``); ``None``: only when shrinking.
    """
    sc = resolve(scenario, None, None)
    plan, table_bytes = rebalance_layout(sc, servers, data=data, minimize_data_movement=minimize_data_movement,
                                         include_consuming=include_consuming)
    before = run_scenario(sc, None, seed=seed, data=data).summary
    after = run_scenario(sc, None, overrides={"cluster.servers": servers}, seed=seed, data=data,
                         ideal_state=plan.assignment).summary
    return ScaleOut(sc.cluster.servers, servers, plan, before, after, table_bytes)
