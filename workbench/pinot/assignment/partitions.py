"""The two values instance assignment works with: a server (:class:`Instance`) and Pinot's
``InstancePartitions`` (which servers hold each partition in each replica group)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType

__all__ = ["Instance", "InstancePartitions"]


@dataclass(frozen=True)
class Instance:
    """A server as instance assignment sees it: name, Helix tags, pool per tag, enabled flag."""

    name: str
    tags: Collection[str] = ()
    pools: Mapping[str, int] = field(default_factory=dict)
    enabled: bool = True


@dataclass(frozen=True)
class InstancePartitions:
    """Pinot's ``InstancePartitions``: ``"<partition>_<replicaGroup>"`` -> ordered server names.

    >>> ip = InstancePartitions("t_OFFLINE", {"0_0": ("a", "b"), "0_1": ("c", "d")})
    >>> ip.num_replica_groups, ip.instances(0, 1), ip.all_instances()
    (2, ('c', 'd'), ('a', 'b', 'c', 'd'))
    """

    name: str
    partitions: Mapping[str, tuple[str, ...]]

    @cached_property
    def num_partitions(self) -> int:
        """Number of partitions (the highest partition id plus one)."""
        return 1 + max(int(k.split("_")[0]) for k in self.partitions)

    @cached_property
    def num_replica_groups(self) -> int:
        """Number of replica groups (the highest replica-group id plus one)."""
        return 1 + max(int(k.split("_")[1]) for k in self.partitions)

    def instances(self, partition: int, replica_group: int) -> tuple[str, ...]:
        """The ordered servers of one partition in one replica group."""
        return self.partitions[f"{partition}_{replica_group}"]

    def all_instances(self) -> tuple[str, ...]:
        """Every server named anywhere, in first-seen order."""
        return tuple(dict.fromkeys(s for servers in self.partitions.values() for s in servers))

    def replica_group_of(self) -> dict[str, int]:
        """Server -> the replica group it belongs to (the first one, should a server appear in two)."""
        out: dict[str, int] = {}
        for key, servers in self.partitions.items():
            for server in servers:
                out.setdefault(server, int(key.split("_")[1]))
        return out

    @classmethod
    def of(cls, name: str, partitions: Mapping[str, tuple[str, ...]]) -> InstancePartitions:
        """A read-only instance, keys sorted by (partition, replica group)."""
        ordered = sorted(partitions.items(), key=lambda kv: tuple(int(x) for x in kv[0].split("_")))
        return cls(name, MappingProxyType(dict(ordered)))
