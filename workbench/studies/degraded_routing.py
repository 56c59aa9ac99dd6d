"""Routings under one degraded server: which routing protects the table's tail, and what it costs.

One slow or wedged server sets the latency of every query whose route includes it (apache/pinot #4484,
#16358). This study runs each routing (balanced, replica groups, and adaptive server selection over the
balanced layout with each score type) under each degradation (none, ``failures.slow``,
``failures.wedged``) on common random numbers, and returns one tidy row per pair: the columns of
:func:`workbench.studies.compare.compare`'s table plus ``routing`` and ``degradation``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from workbench.errors import InputError
from workbench.scenario import Scenario
from workbench.scenario.variants import balanced_layout, replica_group_layout
from workbench.studies.compare import compare

__all__ = ["ADAPTIVE_TYPES", "degradations", "routing_under_degradation", "routing_variants"]

#: ``pinot.broker.adaptive.server.selector.type`` values that select (NO_OP is the balanced routing).
ADAPTIVE_TYPES: tuple[str, ...] = ("HYBRID", "LATENCY", "NUM_INFLIGHT_REQ")
_ADAPTIVE = "pinot.broker.adaptive.server.selector"


def routing_variants(base: Scenario, servers: int, replication: int, replica_groups: Sequence[int] = (),
                     adaptive: Sequence[str] = ADAPTIVE_TYPES) -> dict[str, dict[str, Any]]:
    """Overrides per routing: ``balanced``, ``G groups of N/G`` for each of ``replica_groups``, and
    ``adaptive TYPE`` (balanced layout, the broker's ``.type`` and ``.enable.stats.collection`` set;
    the rest of the broker config is kept)."""
    out: dict[str, dict[str, Any]] = {"balanced": balanced_layout(base, servers, replication)}
    for g in replica_groups:
        if g < 1 or servers % g:
            raise InputError("replica_groups", f"{g} groups cannot split {servers} servers evenly; "
                                               f"use a divisor of {servers}")
        out[f"{g} groups of {servers // g}"] = replica_group_layout(base, g, servers // g)
    config = dict(base.cluster.broker.config)
    for kind in adaptive:
        out[f"adaptive {kind}"] = {**balanced_layout(base, servers, replication), "cluster.broker.config": {
            **config, f"{_ADAPTIVE}.type": kind, f"{_ADAPTIVE}.enable.stats.collection": "true"}}
    return out


def degradations(server: str, slow_factor: float) -> dict[str, dict[str, Any]]:
    """``failures`` overrides: none, ``server`` slow by ``slow_factor`` all run, ``server`` wedged all run."""
    return {"none": {"cluster.failures.slow": [], "cluster.failures.wedged": []},
            f"{server} slow x{slow_factor:g}": {"cluster.failures.slow": [{"server": server, "factor": slow_factor}],
                                                "cluster.failures.wedged": []},
            f"{server} wedged": {"cluster.failures.slow": [], "cluster.failures.wedged": [{"server": server}]}}


def routing_under_degradation(base: Scenario, routings: Mapping[str, Mapping[str, Any]],
                              degraded: Mapping[str, Mapping[str, Any]], seed: int | None = None) -> pd.DataFrame:
    """Run every routing under every degradation on the same seed; one row per pair, with ``routing``
    and ``degradation`` columns beside the summary columns (``config`` is ``"ROUTING | DEGRADATION"``)."""
    variants = {f"{r} | {d}": {**over, **fail} for d, fail in degraded.items() for r, over in routings.items()}
    table, _ = compare(base, variants, seed)
    pairs = [(r, d) for d in degraded for r in routings]
    table.insert(1, "routing", [r for r, _ in pairs])
    table.insert(2, "degradation", [d for _, d in pairs])
    return table
