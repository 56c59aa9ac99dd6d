"""Adaptive Server Selection under strict replica groups: one whole replica group per query.

With ``pinot.broker.adaptive.server.selector.enable.strict.replica.group`` a strictReplicaGroup
table no longer picks the best server per segment (which can mix replica groups, issue #12507).
Pinot #18947 instead:

1. groups the query's candidate servers by replica group, a candidate's group being its index in
   its segment's ideal-state servers sorted by name (``idealStateReplicaId``);
2. ranks all those servers once with the adaptive selector (``orderedPreferredPools`` applied);
3. picks the group that covers every queried segment, then the one whose *worst* server ranks
   best (lowest group id on a tie);
4. sends every segment to its server in that group; a segment without one is unavailable.

Pinot's exact tie rule between groups that each miss some segments was still under review when the
change merged; here such groups are compared by worst rank alone, as in the merged diff's comparator.

>>> from workbench.pinot.routing.candidates import Candidates
>>> table = {"a": Candidates(("s1", "s2"), (0, 0)), "b": Candidates(("s3", "s4"), (0, 0))}
>>> ideal = {"a": {"s1": "ONLINE", "s2": "ONLINE"}, "b": {"s3": "ONLINE", "s4": "ONLINE"}}
>>> group_members(["a", "b"], table, ideal)
{0: {'a': 0, 'b': 0}, 1: {'a': 1, 'b': 1}}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from workbench.pinot.routing.adaptive import AdaptiveServerSelector, rank_in_pools
from workbench.pinot.routing.candidates import Candidates

__all__ = ["best_replica_group", "group_members"]


def group_members(segments: Sequence[str], table: Mapping[str, Candidates],
                  ideal_state: Mapping[str, Mapping[str, str]]) -> dict[int, dict[str, int]]:
    """Replica group -> {segment: index of its candidate in that group}, over the queried segments."""
    out: dict[int, dict[str, int]] = {}
    for segment in segments:
        cand = table.get(segment)
        if cand is None:
            continue
        replica_id = {server: i for i, server in enumerate(sorted(ideal_state[segment]))}
        for i, server in enumerate(cand.servers):
            out.setdefault(replica_id[server], {})[segment] = i
    return dict(sorted(out.items()))


def best_replica_group(segments: Sequence[str], table: Mapping[str, Candidates],
                       ideal_state: Mapping[str, Mapping[str, str]], adaptive: AdaptiveServerSelector,
                       preferred: Sequence[int] = ()) -> tuple[int, dict[str, int]] | None:
    """The chosen replica group and its members, or ``None`` when no queried segment has candidates."""
    members = group_members(segments, table, ideal_state)
    if not members:
        return None
    pool_of: dict[str, int] = {}
    for segment in segments:
        cand = table.get(segment)
        if cand is not None:
            pool_of.update(zip(cand.servers, cand.pools, strict=True))
    ranked = rank_in_pools(adaptive, list(pool_of), list(pool_of.values()), preferred)
    rank = {server: i for i, server in enumerate(ranked)}
    covered = sum(1 for s in segments if s in table)

    def worst(group: int) -> int:
        return max(rank.get(table[s].servers[i], -1) for s, i in members[group].items())

    group = min(members, key=lambda g: (len(members[g]) < covered, worst(g), g))
    return group, members[group]
