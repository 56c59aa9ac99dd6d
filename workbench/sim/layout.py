"""Where segments live: the table's segments and the servers holding each replica.

This is the routing table the broker works from. Synthetic layouts give every server the same
number of segments; generated layouts read the segments Spark built. Placement spreads replicas over
consecutive servers, which is what Pinot's balanced segment assignment converges to for equal-size
segments.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from workbench.errors import InputError
from workbench.scenario import Scenario

__all__ = ["Layout", "build_layout"]


@dataclass(frozen=True)
class Layout:
    """Segments (name, docs) and, per segment, the indices of the servers holding a replica."""

    servers: tuple[str, ...]
    segments: tuple[str, ...]
    docs: np.ndarray
    replicas: tuple[tuple[int, ...], ...]

    @property
    def num_servers(self) -> int:
        return len(self.servers)


def _place(num_segments: int, num_servers: int, replication: int) -> tuple[tuple[int, ...], ...]:
    if replication > num_servers:
        raise InputError(
            "table.segmentsConfig.replication",
            f"needs at least as many servers as replicas: {replication} replicas on {num_servers} servers",
        )
    return tuple(
        tuple((i * replication + j) % num_servers for j in range(replication)) for i in range(num_segments)
    )


def build_layout(scenario: Scenario, segments_path: Path | None = None) -> Layout:
    """The layout for a scenario: synthetic, or the segments of a generated workload."""
    n_servers = scenario.cluster.servers
    servers = tuple(f"Server_{i}" for i in range(n_servers))
    replication = scenario.table.replication
    if segments_path is not None:
        table = pq.read_table(segments_path, columns=["segment_name", "total_docs"])
        names = tuple(str(s) for s in table.column("segment_name").to_pylist())
        docs = np.asarray(table.column("total_docs").to_numpy(), dtype=float)
    else:
        synth = scenario.workload.synthetic
        per_server = synth.segments_per_server if synth else 1
        docs_each = synth.docs_per_segment if synth else 1
        count = max(1, n_servers * per_server // replication)
        names = tuple(f"{scenario.table.table_name}_{i}" for i in range(count))
        docs = np.full(count, float(docs_each))
    return Layout(servers, names, docs, _place(len(names), n_servers, replication))
