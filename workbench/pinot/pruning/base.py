"""The segment-pruner interface and the bookkeeping every broker pruner shares.

A broker pruner lives as long as a table's routing entry. It reads segment metadata when segments
appear (``init`` / ``on_assignment_change``) or when one is explicitly refreshed, caches what it needs,
and answers many ``prune`` calls from that cache. Pinot deliberately does *not* re-read metadata of
segments that stay online, so a metadata change without a refresh is invisible; the classes here keep
that behaviour because capacity estimates for tables with heavy re-ingestion depend on it.

Segment names given to :meth:`SegmentPruner.prune` come back as a tuple, in input order. Passing the
*same tuple object* again (as a routing table does for every query until the assignment changes) lets
a pruner build and then reuse a position index for it, so a query costs time proportional to the
segments it keeps rather than to all of them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from itertools import repeat
from typing import TypeAlias

import numpy as np
import numpy.typing as npt

from workbench.pinot.segment import SegmentMetadata
from workbench.pinot.sql.query import Query

__all__ = ["MetadataStore", "SegmentPruner"]

#: Segment name -> ZK metadata, standing in for Pinot's property store. A name that is online but
#: absent here is a segment whose ZNRecord is missing (Pinot handles that case per pruner).
MetadataStore: TypeAlias = Mapping[str, SegmentMetadata]
IdArray: TypeAlias = npt.NDArray[np.int64]


def as_tuple(segments: Sequence[str]) -> tuple[str, ...]:
    """Return the input unchanged if it is a tuple, else a tuple copy (what "keep all" returns)."""
    return segments if isinstance(segments, tuple) else tuple(segments)


class SegmentPruner(ABC):
    """A broker segment pruner: drops segments that cannot hold rows matching a query's filter.

    Lifecycle, as in Pinot's routing manager: :meth:`init` once with the online segments,
    :meth:`on_assignment_change` whenever the set of online segments changes (only added and removed
    segments are read), :meth:`refresh_segment` when one segment's metadata is rewritten, and
    :meth:`prune` per query.
    """

    @abstractmethod
    def init(self, metadata: MetadataStore, online: Iterable[str] | None = None) -> None:
        """Forget everything and load the online segments (all of ``metadata`` when ``online`` is None)."""

    @abstractmethod
    def on_assignment_change(self, metadata: MetadataStore, online: Iterable[str] | None = None) -> None:
        """Load newly online segments and drop those no longer online; others keep their cached info."""

    @abstractmethod
    def refresh_segment(self, name: str, record: SegmentMetadata | None) -> None:
        """Re-read one segment's metadata (``None``: its ZNRecord is missing)."""

    @abstractmethod
    def prune(self, query: Query, segments: Sequence[str]) -> tuple[str, ...]:
        """Return the segments of ``segments`` the query may need, in input order.

        ``segments`` are distinct names (Pinot passes a set); pass the same tuple object for every
        query while the routing table is unchanged to get the O(k) path.
        """


class _InputView:
    """Where each known segment sits in one input tuple, for order-preserving selection in O(k)."""

    __slots__ = ("names", "position_of_id", "unknown_positions")

    def __init__(self, segments: tuple[str, ...], ids: Mapping[str, int], capacity: int) -> None:
        self.names = np.array(segments, dtype=object)
        registered = np.fromiter(map(ids.get, segments, repeat(-1)), dtype=np.int64, count=len(segments))
        known = registered >= 0
        self.position_of_id: IdArray = np.full(capacity, -1, dtype=np.int64)
        self.position_of_id[registered[known]] = np.flatnonzero(known)
        self.unknown_positions: IdArray = np.flatnonzero(~known)

    def select(self, hit_ids: npt.NDArray[np.integer], keep_unknown: bool) -> tuple[str, ...]:
        """The input names whose segment id is in ``hit_ids`` (plus unregistered ones if asked)."""
        positions = self.position_of_id[hit_ids]
        positions = positions[positions >= 0]
        if keep_unknown and self.unknown_positions.size:
            positions = np.concatenate((positions, self.unknown_positions))
        positions.sort()
        if positions.size > 1 and (positions[1:] == positions[:-1]).any():
            positions = np.unique(positions)
        return tuple(self.names[positions].tolist())


class RegistryPruner(SegmentPruner):
    """A pruner that numbers the segments it has seen and caches per-segment info by that number.

    Subclasses implement :meth:`_load` and :meth:`_unload`; ``_stale`` lists segments whose info
    should be re-read on the next assignment change (the partition pruner retries missing records).
    """

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._name_of: dict[int, str] = {}
        self._next_id = 0
        self._version = 0
        self._last_input: tuple[str, ...] | None = None
        self._view_key: tuple[tuple[str, ...], int] | None = None
        self._view: _InputView | None = None

    # -- lifecycle ----------------------------------------------------------------------------
    def init(self, metadata: MetadataStore, online: Iterable[str] | None = None) -> None:
        """Forget everything and load the online segments (all of ``metadata`` when ``online`` is None)."""
        for name in list(self._ids):
            self._forget(name)
        self.on_assignment_change(metadata, online)

    def on_assignment_change(self, metadata: MetadataStore, online: Iterable[str] | None = None) -> None:
        """Load newly online segments and drop those no longer online; others keep their cached info."""
        names = list(metadata if online is None else online)
        online_set = set(names)
        for name in [n for n in self._ids if n not in online_set]:
            self._forget(name)
        for name in self._stale():
            self._unload(self._ids[name])
            self._load(self._ids[name], metadata.get(name))
        for name in names:
            if name not in self._ids:
                self._remember(name, metadata.get(name))

    def refresh_segment(self, name: str, record: SegmentMetadata | None) -> None:
        """Re-read one segment's metadata (``None``: its ZNRecord is missing)."""
        if name in self._ids:
            self._unload(self._ids[name])
            self._load(self._ids[name], record)
        else:
            self._remember(name, record)

    @property
    def segment_names(self) -> tuple[str, ...]:
        """The segments the pruner currently has info for, in registration order."""
        return tuple(self._ids)

    def _remember(self, name: str, record: SegmentMetadata | None) -> None:
        sid = self._ids[name] = self._next_id
        self._name_of[sid] = name
        self._next_id += 1
        self._version += 1
        self._load(sid, record)

    def _forget(self, name: str) -> None:
        sid = self._ids.pop(name)
        self._unload(sid)
        del self._name_of[sid]
        self._version += 1

    def _stale(self) -> list[str]:
        return []

    @abstractmethod
    def _load(self, sid: int, record: SegmentMetadata | None) -> None:
        """Cache what the pruner needs from one segment's record."""

    @abstractmethod
    def _unload(self, sid: int) -> None:
        """Drop the cached info of one segment."""

    # -- selection ----------------------------------------------------------------------------
    def _select(self, segments: Sequence[str], hit_ids: npt.NDArray[np.integer], keep_unknown: bool) -> tuple[str, ...]:
        """The input segments whose id is among ``hit_ids`` (and unregistered ones if asked), in order.

        A tuple seen for the second time in a row (a routing table's segment list) gets a position
        index, after which a query costs O(k log k) for k hits. Other inputs are filtered in one
        pass, O(n), which beats building an index that would serve only one query.
        """
        view = self._input_view(segments)
        if view is not None:
            return view.select(hit_ids, keep_unknown)
        wanted = {self._name_of[int(i)] for i in hit_ids.tolist()}
        if keep_unknown:
            ids = self._ids
            return tuple(s for s in segments if s in wanted or s not in ids)
        return tuple(filter(wanted.__contains__, segments))

    def _input_view(self, segments: Sequence[str]) -> _InputView | None:
        """The cached position index of ``segments``, built on its second consecutive use."""
        if not isinstance(segments, tuple):
            return None
        key = self._view_key
        if self._view is not None and key is not None and key[0] is segments and key[1] == self._version:
            return self._view
        if self._last_input is segments:
            self._view_key, self._view = (segments, self._version), _InputView(segments, self._ids, self._next_id)
            return self._view
        self._last_input = segments
        return None
