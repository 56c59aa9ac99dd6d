"""Pinot's RealtimeProvisioningHelper: the hosts x hours memory matrix users already know.

This reproduces the deterministic arithmetic of ``MemoryEstimator.estimateMemoryUsed``
(``pinot-behaviour.md`` §8) so the sizing report can show the matrix beside the simulation. Pinot
measures ``consumingMem`` by building a real off-heap mutable segment; the workbench cannot, so it
takes consuming memory per document as an input (``consuming_bytes_per_doc``, defaulting to the
completed segment's bytes per document, which is the right order: the mutable segment holds the same
columns uncompressed-ish plus indexes) and says so in the report.

>>> from_bytes(754_974_720), from_bytes(1023), from_bytes(3.45 * 1024**3)
('720M', '1023B', '3.45G')
>>> binary_bytes(754_974_720), binary_bytes(116.06 * 1024), binary_bytes(1023)
('720MiB', '116.06KiB', '1023B')
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal

import pandas as pd

__all__ = ["ProvisioningInputs", "binary_bytes", "from_bytes", "provisioning_matrix"]

_SUFFIXES = ("K", "M", "G", "T", "P")


def from_bytes(num_bytes: float) -> str:
    """Pinot's ``DataSizeUtils.fromBytes``: below 1024 ``<n>B``, else 1024-scaled with up to two
    decimals (HALF_EVEN, trailing zeros dropped) and K/M/G/T/P."""
    if num_bytes < 1024:
        return f"{int(num_bytes)}B"
    value = float(num_bytes)
    suffix = ""
    for s in _SUFFIXES:
        if value < 1024:
            break
        value /= 1024
        suffix = s
    rounded = Decimal(repr(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_EVEN)
    text = format(rounded.normalize(), "f")
    return f"{text}{suffix}"


def binary_bytes(num_bytes: float) -> str:
    """:func:`from_bytes` with its unit spelled out (``2.27MiB``, not Pinot's bare ``2.27M``): Pinot's
    digits, so a reader can match them to the tool's output, and a unit a reader cannot misread as MB."""
    text = from_bytes(num_bytes)
    return text if text.endswith("B") else f"{text}iB"


@dataclass(frozen=True)
class ProvisioningInputs:
    """The helper's inputs (``-numPartitions``, ``-ingestionRate`` per partition, the sample segment...)."""

    sample_segment_bytes: float
    sample_segment_docs: int
    ingestion_rate: int
    num_partitions: int
    replication: int
    retention_hours: float
    table_retention_hours: float
    max_usable_host_memory: float = 48 * 1024**3
    consuming_bytes_per_doc: float | None = None
    num_hosts: tuple[int, ...] = (2, 4, 6, 8, 10, 12, 14, 16)
    num_hours: tuple[int, ...] = (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)


def _cells(p: ProvisioningInputs, hours: int, hosts: int) -> dict[str, object] | None:
    t = int(p.sample_segment_docs / p.ingestion_rate)
    completed = int(hours * 3600 / t * p.sample_segment_bytes)
    docs = int(hours * 3600 / t * p.sample_segment_docs)
    per_doc = p.consuming_bytes_per_doc or p.sample_segment_bytes / p.sample_segment_docs
    consuming = docs * per_doc
    active_segs = math.ceil(p.retention_hours / hours)
    completed_segs = math.ceil(p.table_retention_hours / hours) - 1
    pph = math.ceil(p.num_partitions * p.replication / hosts)
    active = pph * (completed * (active_segs - 1) + consuming)
    mapped = pph * consuming + completed_segs * pph * completed
    if active > p.max_usable_host_memory:
        return None
    return {"memory": f"{from_bytes(active)}/{from_bytes(mapped)}", "active_bytes": active,
            "mapped_bytes": mapped, "segment_size": from_bytes(completed),
            "consuming_memory": from_bytes(pph * consuming), "segments_queried": active_segs * pph,
            "rows_in_segment": docs}


def provisioning_matrix(p: ProvisioningInputs) -> pd.DataFrame:
    """One row per (numHours, numHosts) cell with every grid's value; ``NA`` cells are absent rows.

    Hours above the retention are skipped, as Pinot leaves them ``NA``.
    """
    rows = []
    for hours in sorted(p.num_hours):
        if hours > p.retention_hours:
            continue
        for hosts in sorted(p.num_hosts):
            cells = _cells(p, hours, hosts)
            if cells is not None:
                rows.append({"num_hours": hours, "num_hosts": hosts, **cells})
    return pd.DataFrame(rows)
