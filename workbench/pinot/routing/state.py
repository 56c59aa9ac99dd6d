"""The routing state a broker's instance selector works from.

Pinot's broker routes from three inputs: the table's **ideal state** (segment -> {server: state}, where
the controller wants each replica), the **external view** (the same shape, what servers report they
actually serve) and the set of **enabled** servers, plus each server's **pool**. A replica is usable
only if both the ideal state and the external view say ONLINE or CONSUMING and the server is enabled
(``shared/reference/pinot-behaviour.md`` §3.2). :class:`RoutingState` bundles these as one immutable
value, so a simulation can swap in a new state when a server crashes or a segment moves and every
query sees a consistent snapshot.

>>> state = routing_state_from_assignment({"seg0": {"s1": "ONLINE", "s2": "ONLINE"}}, pools={"s2": 1})
>>> state.server("s2")
ServerInfo(pool=1, enabled=True, healthy=True)
>>> state.with_server("s1", healthy=False).server("s1").routable
False
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Final

from workbench.errors import InputError

__all__ = [
    "CONSUMING", "ERROR", "OFFLINE", "ONLINE", "ROUTABLE_STATES", "SEGMENT_STATES", "RoutingState", "ServerInfo",
    "routing_state_from_assignment",
]

ONLINE: Final = "ONLINE"
CONSUMING: Final = "CONSUMING"
OFFLINE: Final = "OFFLINE"
ERROR: Final = "ERROR"
#: Helix states a segment replica can be in (``DROPPED`` entries are simply absent).
SEGMENT_STATES: Final = frozenset({ONLINE, CONSUMING, OFFLINE, ERROR})
#: States Pinot counts as "online for routing".
ROUTABLE_STATES: Final = frozenset({ONLINE, CONSUMING})

SegmentMap = Mapping[str, Mapping[str, str]]


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """What the broker knows about one server.

    Parameters
    ----------
    pool
        The server's pool (for ``orderedPreferredPools``).
    enabled
        Enabled in Helix (an operator can disable a server).
    healthy
        Live (connected); a crashed server is not. Pinot's enabled-instance set needs both.
    """

    pool: int = 0
    enabled: bool = True
    healthy: bool = True

    @property
    def routable(self) -> bool:
        """Whether the broker may send queries to this server."""
        return self.enabled and self.healthy


_DEFAULT_SERVER = ServerInfo()


@dataclass(frozen=True)
class RoutingState:
    """One consistent snapshot of everything instance selection reads.

    Parameters
    ----------
    ideal_state
        segment -> {server: state}, where the controller assigned each replica.
    external_view
        segment -> {server: state} as servers report; ``None`` means "converged": equal to the ideal
        state. A segment missing from a given external view has no replica loaded yet.
    servers
        Per-server pool and flags; a server not listed is in pool 0, enabled and healthy.
    recent_segments
        Segments created within the broker's new-segment window (``pinot.broker.new.segment.expiration
        .seconds``, 300 s by default). Such a segment is treated as *new* while its external view has
        not converged and no replica is in ERROR: it is never reported unavailable, and a replica not
        yet loaded is routed as an *optional* segment.
    """

    ideal_state: SegmentMap
    external_view: SegmentMap | None = None
    servers: Mapping[str, ServerInfo] = field(default_factory=lambda: MappingProxyType({}))
    recent_segments: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        for name, view in (("ideal_state", self.ideal_state), ("external_view", self.external_view)):
            for segment, replicas in (view or {}).items():
                for server, state in replicas.items():
                    if state not in SEGMENT_STATES:
                        raise InputError(f"{name}.{segment}.{server}",
                                         f"must be one of {sorted(SEGMENT_STATES)}, got {state!r}")

    def server(self, name: str) -> ServerInfo:
        """The server's info (defaults for a server not listed)."""
        return self.servers.get(name, _DEFAULT_SERVER)

    def view_of(self, segment: str) -> Mapping[str, str] | None:
        """The external view of one segment (``None`` if it has none)."""
        if self.external_view is None:
            return self.ideal_state.get(segment)
        return self.external_view.get(segment)

    def with_server(self, name: str, *, pool: int | None = None, enabled: bool | None = None,
                    healthy: bool | None = None) -> RoutingState:
        """A copy with one server's info changed, e.g. ``healthy=False`` when it crashes."""
        old = self.server(name)
        new = ServerInfo(old.pool if pool is None else pool, old.enabled if enabled is None else enabled,
                         old.healthy if healthy is None else healthy)
        return replace(self, servers=MappingProxyType({**self.servers, name: new}))

    def with_replica_state(self, segment: str, server: str, state: str | None) -> RoutingState:
        """A copy whose external view has one replica's state changed (``None`` removes it)."""
        view = {seg: dict(replicas) for seg, replicas in (self.external_view or self.ideal_state).items()}
        replicas = view.setdefault(segment, {})
        if state is None:
            replicas.pop(server, None)
        else:
            replicas[server] = state
        return replace(self, external_view=view)


def routing_state_from_assignment(assignment: SegmentMap, *, pools: Mapping[str, int] | None = None,
                                  disabled: Iterable[str] = (), external_view: SegmentMap | None = None,
                                  recent_segments: Iterable[str] = ()) -> RoutingState:
    """Build the routing state of a freshly assigned table.

    Parameters
    ----------
    assignment
        The ideal state, e.g. from :func:`workbench.pinot.assignment.assign_segments`.
    pools
        Pool of each server (absent: pool 0).
    disabled
        Servers that are disabled in Helix.
    external_view
        What servers serve; by default the external view has converged to the ideal state.
    recent_segments
        Segments still inside the new-segment window.
    """
    off = set(disabled)
    names = {s for replicas in assignment.values() for s in replicas} | set(pools or {}) | off
    servers = {n: ServerInfo((pools or {}).get(n, 0), n not in off) for n in sorted(names)}
    return RoutingState(assignment, external_view, MappingProxyType(servers), frozenset(recent_segments))
