"""validDocIds snapshots and the TTL watermark file, in Pinot's names and byte formats (reference §5.5).

Layout under a table's index directory (the manager's ``snapshot_dir``)::

    <snapshot_dir>/<segment name>/validdocids.bitmap.snapshot       Roaring portable serialisation
    <snapshot_dir>/<segment name>/queryabledocids.bitmap.snapshot   only with deleteRecordColumn
    <snapshot_dir>/ttl.watermark.partition.<partition id>           8-byte big-endian IEEE-754 double

Files are written to ``<name>_tmp`` and renamed over the target, so a crash leaves either the old or
the new snapshot, never half of one. A file that is missing, unreadable or names docs past the end of
its segment reads as "no snapshot" with a logged warning, and the caller falls back to a full rebuild.

>>> import tempfile
>>> from pyroaring import BitMap
>>> with tempfile.TemporaryDirectory() as root:
...     _ = write_bitmap(snapshot_path(root, "seg_0", VALID_DOC_IDS), BitMap([0, 2, 5]))
...     write_watermark(root, 3, 120.5)
...     sorted(read_bitmap(snapshot_path(root, "seg_0", VALID_DOC_IDS), num_docs=6)), read_watermark(root, 3)
([0, 2, 5], 120.5)
"""

from __future__ import annotations

import logging
import os
import struct
from pathlib import Path

from pyroaring import BitMap

__all__ = [
    "QUERYABLE_DOC_IDS",
    "VALID_DOC_IDS",
    "WATERMARK_PREFIX",
    "delete_snapshots",
    "delete_watermark",
    "has_snapshot",
    "read_bitmap",
    "read_watermark",
    "snapshot_path",
    "watermark_path",
    "write_bitmap",
    "write_watermark",
]

_LOG = logging.getLogger(__name__)

VALID_DOC_IDS = "validdocids.bitmap.snapshot"
QUERYABLE_DOC_IDS = "queryabledocids.bitmap.snapshot"
WATERMARK_PREFIX = "ttl.watermark.partition."
_TMP = "_tmp"


def snapshot_path(root: str | os.PathLike[str], segment: str, file_name: str) -> Path:
    """Where a segment's snapshot file lives."""
    return Path(root) / segment / file_name


def watermark_path(root: str | os.PathLike[str], partition_id: int) -> Path:
    """``<tableIndexDir>/ttl.watermark.partition.<partitionId>``."""
    return Path(root) / f"{WATERMARK_PREFIX}{partition_id}"


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + _TMP)
    tmp.write_bytes(data)
    os.replace(tmp, path)


def write_bitmap(path: Path, bitmap: BitMap) -> int:
    """Run-optimise (in place: same set, smaller containers) and write it portably; returns the bytes."""
    bitmap.run_optimize()
    data = bitmap.serialize()
    _atomic_write(path, data)
    return len(data)


def read_bitmap(path: Path, num_docs: int | None = None) -> BitMap | None:
    """A snapshot bitmap, or None (with a warning unless simply absent) when it cannot be trusted."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        _LOG.warning("cannot read snapshot %s (%s); rebuilding without it", path, exc)
        return None
    try:
        bitmap = BitMap.deserialize(data)
    except (ValueError, IndexError) as exc:
        _LOG.warning("corrupt snapshot %s (%s); rebuilding without it", path, exc)
        return None
    if num_docs is not None and bitmap and bitmap.max() >= num_docs:
        _LOG.warning("snapshot %s names doc %d of a %d-doc segment; rebuilding without it", path, bitmap.max(),
                     num_docs)
        return None
    return bitmap


def has_snapshot(root: str | os.PathLike[str], segment: str) -> bool:
    """Whether the segment has a validDocIds snapshot file (what preload looks for)."""
    return snapshot_path(root, segment, VALID_DOC_IDS).is_file()


def delete_snapshots(root: str | os.PathLike[str], segment: str) -> None:
    """Remove a segment's snapshot files (done when a segment is added with snapshots disabled)."""
    for name in (VALID_DOC_IDS, QUERYABLE_DOC_IDS):
        snapshot_path(root, segment, name).unlink(missing_ok=True)


def write_watermark(root: str | os.PathLike[str], partition_id: int, watermark: float) -> None:
    """Persist the TTL watermark as Java's ``DataOutputStream.writeDouble`` would."""
    _atomic_write(watermark_path(root, partition_id), struct.pack(">d", watermark))


def read_watermark(root: str | os.PathLike[str], partition_id: int, default: float = float("-inf")) -> float:
    """The persisted watermark, or ``default`` when the file is missing or not 8 bytes."""
    path = watermark_path(root, partition_id)
    try:
        data = path.read_bytes()
    except OSError:
        return default
    if len(data) != 8:
        _LOG.warning("watermark file %s has %d bytes, expected 8; ignoring it", path, len(data))
        return default
    value: float = struct.unpack(">d", data)[0]
    return value


def delete_watermark(root: str | os.PathLike[str], partition_id: int) -> None:
    """Remove the watermark file (Pinot does this when TTL is disabled)."""
    watermark_path(root, partition_id).unlink(missing_ok=True)
