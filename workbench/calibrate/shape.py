"""The cluster's shape as the user's files show it: servers and replicas.

Servers: the broker names every server it sent a request to in each query's ``serverStats`` (PB §9), so
the distinct hosts of a log are the table's servers (those the log's queries reached). Without
``serverStats`` (multi-stage lines, custom layouts) the most servers one query reached is used: with
balanced routing a query that needs every segment reaches every server; with replica-group routing it
reaches one group, so that count times the replica groups. Replicas are the table config's
``segmentsConfig.replication`` (``replicasPerPartition`` for realtime tables).
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass

import pandas as pd

from workbench.errors import InputError
from workbench.pinot.table_config import TableConfig

__all__ = ["REPLICA_GROUP_SELECTORS", "ClusterShape", "infer_shape"]

#: Instance selectors that route a query to one replica group (PB §4).
REPLICA_GROUP_SELECTORS = frozenset({"replicagroup", "strictreplicagroup", "multistagereplicagroup"})


@dataclass(frozen=True)
class ClusterShape:
    """Servers and replicas, each with the sentence that says where the number came from."""

    servers: int
    servers_source: str
    replication: int
    replication_source: str


def infer_shape(queries: pd.DataFrame, hosts: Set[str], table: TableConfig, servers: int | None = None) -> ClusterShape:
    """Servers and replicas from the log, the table config and, when given, the user's own count.

    Raises
    ------
    InputError
        When the servers are fewer than the replicas (the table could not be placed on them).
    """
    replication = table.replication
    rep_source = f"the table config's segmentsConfig ({replication} replica{'s' if replication > 1 else ''})"
    if servers is not None:
        count, source = servers, "given (--servers)"
    elif hosts:
        count, source = len(hosts), f"{len(hosts)} distinct servers named in the query log's serverStats"
    else:
        most = int(queries["num_servers_queried"].astype("Float64").max(skipna=True) or 1)
        groups = replication if table.instance_selector_type.lower() in REPLICA_GROUP_SELECTORS else 1
        count = max(1, most * groups)
        source = (f"the most servers one logged query reached ({most})"
                  + (f" x {groups} replica groups" if groups > 1 else "")
                  + "; the log has no serverStats to name them, so check it")
    if count < replication:
        raise InputError("servers", f"{count} servers ({source}) cannot hold {replication} replicas "
                                    f"({rep_source}); give --servers")
    return ClusterShape(count, source, replication, rep_source)
