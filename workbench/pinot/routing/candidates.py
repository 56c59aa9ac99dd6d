"""From a :class:`RoutingState` to per-segment candidate servers, as ``BaseInstanceSelector`` computes them.

Selectors recompute this only when the state changes (Pinot does it on every ideal-state, external-view
or instance change), so a query only does dictionary lookups. Rules (``pinot-behaviour.md`` §3.2, §3.5):

- Only segments with an ONLINE/CONSUMING replica in the ideal state are routed at all.
- An *old* segment's candidates are the servers online in both ideal state and external view, sorted
  by name; a *new* segment's are all its ideal-state-online servers, each flagged online or not.
- Strict replica groups: old segments with the same set of ideal-state servers form a group; a server
  missing any old segment of its group is dropped for every segment of the group.
- Finally only routable (enabled and healthy) servers remain. An old segment left with none is
  *unavailable*; a new one is silently skipped.

>>> from workbench.pinot.routing.state import RoutingState
>>> state = RoutingState({"a": {"s1": "ONLINE", "s2": "ONLINE"}, "b": {"s1": "ONLINE", "s2": "ONLINE"}},
...                      external_view={"a": {"s1": "ONLINE", "s2": "ONLINE"}, "b": {"s1": "ONLINE"}})
>>> compute_segment_states(state, strict=False).candidates["a"].servers
('s1', 's2')
>>> compute_segment_states(state, strict=True).candidates["a"].servers  # s2 lacks b: out for the group
('s1',)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

from workbench.pinot.routing.state import ERROR, OFFLINE, ROUTABLE_STATES, RoutingState

__all__ = ["Candidates", "SegmentStates", "compute_segment_states"]


class Candidates(NamedTuple):
    """Candidate servers of one segment, in server-name order.

    ``online`` is ``None`` when every candidate is online (always, for old segments), otherwise a flag
    per server: picking an offline candidate of a new segment makes it an optional segment.
    """

    servers: tuple[str, ...]
    pools: tuple[int, ...]
    online: tuple[bool, ...] | None = None


@dataclass(frozen=True)
class SegmentStates:
    """Candidates of every routable segment and the set of unavailable segments."""

    candidates: Mapping[str, Candidates]
    unavailable: frozenset[str]


def _is_potential_new(ideal: Mapping[str, str], view: Mapping[str, str] | None) -> bool:
    """Not converged and no ERROR replica (the two conditions besides age for a new segment)."""
    if view is None:
        return True
    converged = True
    for server, state in ideal.items():
        if state in ROUTABLE_STATES:
            seen = view.get(server)
            if seen == ERROR:
                return False
            converged = converged and seen not in (None, OFFLINE)
    return not converged


def _online(ideal: Mapping[str, str], view: Mapping[str, str] | None) -> set[str]:
    if view is None:
        return set()
    return {s for s, state in ideal.items() if state in ROUTABLE_STATES and view.get(s) in ROUTABLE_STATES}


def compute_segment_states(state: RoutingState, *, strict: bool) -> SegmentStates:
    """Candidates per segment for a selector (``strict`` for strictReplicaGroup and upsert/dedup)."""
    old: dict[str, set[str]] = {}
    new: dict[str, set[str]] = {}
    for segment, ideal in state.ideal_state.items():
        if not any(s in ROUTABLE_STATES for s in ideal.values()):
            continue
        view = state.view_of(segment)
        is_new = segment in state.recent_segments and _is_potential_new(ideal, view)
        (new if is_new else old)[segment] = _online(ideal, view)
    excluded = _strict_exclusions(state, old) if strict else {}
    candidates: dict[str, Candidates] = {}
    unavailable: set[str] = set()
    for segment, online in old.items():
        keep = online - excluded.get(frozenset(state.ideal_state[segment]), set())
        found = _routable(state, sorted(keep), None)
        if found is None:
            unavailable.add(segment)
        else:
            candidates[segment] = found
    for segment, online in new.items():
        ideal = state.ideal_state[segment]
        drop = excluded.get(frozenset(ideal), set())
        servers = sorted(s for s, st in ideal.items() if st in ROUTABLE_STATES and s not in drop)
        found = _routable(state, servers, online)
        if found is not None:
            candidates[segment] = found
    return SegmentStates(candidates, frozenset(unavailable))


def _strict_exclusions(state: RoutingState, old: Mapping[str, set[str]]) -> dict[frozenset[str], set[str]]:
    """Per instance group (exact ideal-state server set): servers missing any of its old segments."""
    missing: dict[frozenset[str], set[str]] = {}
    for segment, online in old.items():
        group = frozenset(state.ideal_state[segment])
        missing.setdefault(group, set()).update(group - online)
    return missing


def _routable(state: RoutingState, servers: list[str], online: set[str] | None) -> Candidates | None:
    kept = [s for s in servers if state.server(s).routable]
    if not kept:
        return None
    flags = None if online is None else tuple(s in online for s in kept)
    if flags is not None and all(flags):
        flags = None
    return Candidates(tuple(kept), tuple(state.server(s).pool for s in kept), flags)
