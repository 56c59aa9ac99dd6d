"""validDocIds snapshots and the TTL watermark file, in Pinot's names and byte formats (reference §5.5).

Layout under a table's index directory (the manager's ``snapshot_dir``)::

    <snapshot_dir>/<segment name>/validdocids.bitmap.snapshot       Roaring portable serialisation
    <snapshot_dir>/<segment name>/queryabledocids.bitmap.snapshot   only with deleteRecordColumn
    <snapshot_dir>/ttl.watermark.partition.<partition id>           8-byte big-endian IEEE-754 double

Each of those files is Pinot's, byte for byte; beside each the workbench keeps a checksum file
(``<name>.crc``: the CRC-32 of the file's bytes and its length, in hex), which Pinot does not have and
so never reads. Files are written to ``<name>_tmp`` and renamed over the target, data first and
checksum second, so a crash leaves either a consistent pair or a mismatch, never half a snapshot that
passes. The checksum is used only where it exists: a file Pinot wrote (or one copied from a Pinot
server) has none, and Pinot's own readers accept it when it can be read
(``ImmutableSegmentImpl.loadDocIdsFromSnapshot`` deserialises the bitmap and ignores the file only
if that throws; ``WatermarkUtils.loadWatermark`` reads one double), so the workbench reads it the
same way, with its own two checks added: the docs lie within the segment, and the watermark is a
number below +inf. A snapshot that is missing, unreadable, fails a checksum that exists (a flipped
bit, a torn write) or names docs past the end of its segment reads as "no snapshot" with a logged
warning, and the caller falls back to a full rebuild. A watermark that is missing, not 8 bytes,
fails a checksum that exists, or is NaN or +inf reads as "not set" (-inf), with a warning for all
but the first: a NaN watermark would stop TTL expiry for good, a +inf one would expire every key.
Segment names are checked before they become paths, so ``../`` cannot escape the table's directory.

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
import math
import os
import struct
import zlib
from pathlib import Path

from pyroaring import BitMap

from workbench.pinot.segment import check_segment_name

__all__ = [
    "CHECKSUM_SUFFIX",
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
#: The workbench's checksum file beside each of Pinot's files.
CHECKSUM_SUFFIX = ".crc"
_TMP = "_tmp"


def snapshot_path(root: str | os.PathLike[str], segment: str, file_name: str) -> Path:
    """Where a segment's snapshot file lives; a name that would leave ``root`` is an InputError."""
    return Path(root) / check_segment_name(segment) / file_name


def _checksum_path(path: Path) -> Path:
    return path.with_name(path.name + CHECKSUM_SUFFIX)


def _checksum(data: bytes) -> str:
    return f"{zlib.crc32(data):08x} {len(data):x}\n"


def _verified(path: Path, data: bytes, what: str) -> bool:
    """Whether ``data`` (read from ``path``) may be used as far as the workbench's checksum can tell.

    No checksum file beside it (Pinot's own file): True, since Pinot writes none and its readers need
    none. A checksum file that cannot be read or does not match: False, with a warning.
    """
    try:
        recorded = _checksum_path(path).read_text(encoding="ascii")
    except FileNotFoundError:
        _LOG.debug("%s %s has no checksum file (as Pinot writes it); using it unchecked", what, path)
        return True
    except (OSError, UnicodeDecodeError) as exc:
        _LOG.warning("corrupt %s %s (its checksum file cannot be read: %s); rebuilding without it", what, path, exc)
        return False
    if recorded != _checksum(data):
        _LOG.warning("corrupt %s %s (it does not match its checksum: a flipped bit or a torn write); "
                     "rebuilding without it", what, path)
        return False
    return True


def watermark_path(root: str | os.PathLike[str], partition_id: int) -> Path:
    """``<tableIndexDir>/ttl.watermark.partition.<partitionId>``."""
    return Path(root) / f"{WATERMARK_PREFIX}{partition_id}"


def _replace(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + _TMP)
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _atomic_write(path: Path, data: bytes) -> None:
    """Pinot's file, then the workbench's checksum beside it, each through ``_tmp`` and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _replace(path, data)
    _replace(_checksum_path(path), _checksum(data).encode("ascii"))


def write_bitmap(path: Path, bitmap: BitMap) -> int:
    """Run-optimise (in place: same set, smaller containers) and write it portably; returns the bytes."""
    bitmap.run_optimize()
    data = bitmap.serialize()
    _atomic_write(path, data)
    return len(data)


def read_bitmap(path: Path, num_docs: int | None = None) -> BitMap | None:
    """A snapshot bitmap, or None (with a warning) when it is missing or cannot be trusted."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        _LOG.warning("no snapshot %s; rebuilding without it", path)
        return None
    except OSError as exc:
        _LOG.warning("cannot read snapshot %s (%s); rebuilding without it", path, exc)
        return None
    if not _verified(path, data, "snapshot"):
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
        path = snapshot_path(root, segment, name)
        path.unlink(missing_ok=True)
        _checksum_path(path).unlink(missing_ok=True)


def write_watermark(root: str | os.PathLike[str], partition_id: int, watermark: float) -> None:
    """Persist the TTL watermark as Java's ``DataOutputStream.writeDouble`` would."""
    _atomic_write(watermark_path(root, partition_id), struct.pack(">d", watermark))


def read_watermark(root: str | os.PathLike[str], partition_id: int, default: float = float("-inf")) -> float:
    """The persisted watermark, or ``default`` when the file is missing, not 8 bytes, fails a checksum
    that exists, or holds NaN (which would stop TTL expiry: no comparison with NaN is ever true) or
    +inf (every key would be out of TTL). -inf is Pinot's "not set" and reads as itself."""
    path = watermark_path(root, partition_id)
    try:
        data = path.read_bytes()
    except OSError:
        return default
    if len(data) != 8:
        _LOG.warning("watermark file %s has %d bytes, expected 8; ignoring it", path, len(data))
        return default
    if not _verified(path, data, "watermark file"):
        return default
    value: float = struct.unpack(">d", data)[0]
    if math.isnan(value) or value == math.inf:
        _LOG.warning("watermark file %s holds %s; ignoring it (TTL restarts from an unset watermark)", path, value)
        return default
    return value


def delete_watermark(root: str | os.PathLike[str], partition_id: int) -> None:
    """Remove the watermark file (Pinot does this when TTL is disabled)."""
    path = watermark_path(root, partition_id)
    path.unlink(missing_ok=True)
    _checksum_path(path).unlink(missing_ok=True)
