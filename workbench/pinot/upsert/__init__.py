"""Pinot's upsert metadata manager, key hashing, TTL, snapshots and heap-over-time replay.

``PartitionUpsertMetadataManager`` is the centre: one table partition's primary-key map and segment
bitmaps under Pinot's rules (``shared/reference/pinot-behaviour.md`` §5), held in one ``UpsertState``
that the manager, the per-record loops and the vectorised bootstrap share. The replay turns an event
stream into live heap bytes over time for the simulator's GC model, using :mod:`workbench.pinot.heap`.
"""

from workbench.pinot.upsert.config import UpsertConfig
from workbench.pinot.upsert.core import IngestCounts
from workbench.pinot.upsert.hashing import HashFunction, KeyEncoder, murmur3_x64_128, primary_key_bytes
from workbench.pinot.upsert.manager import PartitionUpsertMetadataManager, RecordLocation, RecordOutcome
from workbench.pinot.upsert.replay import (
    HeapSample,
    HeapTimeline,
    StreamSegment,
    hosting_from_assignment,
    live_upsert_heap,
    replay_partition,
    server_heap,
    synthetic_stream,
)
from workbench.pinot.upsert.segments import SegmentInput
from workbench.pinot.upsert.settings import ExpiryStrategy, UpsertSettings
from workbench.pinot.upsert.state import UpsertState
from workbench.pinot.upsert.ttl import ExpiryStats

__all__ = [
    "ExpiryStats",
    "ExpiryStrategy",
    "HashFunction",
    "HeapSample",
    "HeapTimeline",
    "IngestCounts",
    "KeyEncoder",
    "PartitionUpsertMetadataManager",
    "RecordLocation",
    "RecordOutcome",
    "SegmentInput",
    "StreamSegment",
    "UpsertConfig",
    "UpsertSettings",
    "UpsertState",
    "hosting_from_assignment",
    "live_upsert_heap",
    "murmur3_x64_128",
    "primary_key_bytes",
    "replay_partition",
    "server_heap",
    "synthetic_stream",
]
