"""When Pinot seals a consuming segment: the flush thresholds of a realtime table's stream config.

Read from ``tableIndexConfig.streamConfigs`` or the first map of
``ingestionConfig.streamIngestionConfig.streamConfigMaps``, with Pinot's keys and their deprecated names
(``StreamConfig`` / ``StreamConfigProperties`` at release 1.5.1). The controller picks the updater that
sets each new consuming segment's row threshold (``FlushThresholdUpdateManager``):

- ``realtime.segment.flush.threshold.rows`` > 0 (deprecated ``...threshold.size``): the table's rows
  divided by the most stream partitions one server consumes (``DefaultFlushThresholdUpdater``), so
  ``rows`` is a per-server budget, not a per-segment one;
- ``realtime.segment.flush.threshold.segment.rows`` > 0: exactly that many rows per segment
  (``FixedFlushThresholdUpdater``);
- ``rows`` = 0, or ``realtime.segment.flush.threshold.segment.size`` set: the row threshold is tuned
  segment by segment towards that size (``SegmentSizeBasedFlushThresholdUpdater``: 100,000 rows first,
  ``realtime.segment.flush.autotune.initialRows``, then the desired size x the rows-per-byte of the
  segments committed so far): :mod:`workbench.pinot.flush_size` computes the sequence;
- nothing stated: 5,000,000 rows divided like ``rows``.

``realtime.segment.flush.threshold.time`` (a period such as ``6h``, or milliseconds; default 6 hours) seals
a segment that has consumed that long, whichever threshold comes first.

>>> cfg = FlushConfig.of({ROWS: "1000", TIME: "6h"})
>>> cfg.segment_rows(max_partitions_per_instance(4, 1, 2, replica_groups=False)), cfg.time_ms
(500, 21600000)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from workbench.errors import TableConfigError

__all__ = ["DEFAULT_FLUSH_THRESHOLD_ROWS", "DEFAULT_FLUSH_THRESHOLD_SEGMENT_SIZE_BYTES",
           "DEFAULT_FLUSH_THRESHOLD_TIME_MS", "FlushConfig", "max_partitions_per_instance", "stream_config_map"]

#: ``StreamConfig.DEFAULT_FLUSH_THRESHOLD_ROWS``.
DEFAULT_FLUSH_THRESHOLD_ROWS = 5_000_000
#: ``StreamConfig.DEFAULT_FLUSH_THRESHOLD_TIME_MILLIS``: 6 hours.
DEFAULT_FLUSH_THRESHOLD_TIME_MS = 6 * 3600 * 1000
#: ``StreamConfig.DEFAULT_FLUSH_THRESHOLD_SEGMENT_SIZE_BYTES``: 200 MiB.
DEFAULT_FLUSH_THRESHOLD_SEGMENT_SIZE_BYTES = 200 * 1024 * 1024
DEFAULT_SIZE = DEFAULT_FLUSH_THRESHOLD_SEGMENT_SIZE_BYTES
#: ``StreamConfig.DEFAULT_FLUSH_AUTOTUNE_INITIAL_ROWS``.
DEFAULT_FLUSH_AUTOTUNE_INITIAL_ROWS = 100_000

ROWS = "realtime.segment.flush.threshold.rows"
SEGMENT_ROWS = "realtime.segment.flush.threshold.segment.rows"
TIME = "realtime.segment.flush.threshold.time"
SEGMENT_SIZE = "realtime.segment.flush.threshold.segment.size"
_ROWS_KEYS = (ROWS, "realtime.segment.flush.threshold.size", "realtime.segment.flush.threshold.size.llc")
_TIME_KEYS = (TIME, TIME + ".llc")
_SIZE_KEYS = (SEGMENT_SIZE, "realtime.segment.flush.desired.size")
_PERIOD = re.compile(r"^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$", re.IGNORECASE)
_READS = {"rows": "a whole number of rows", "segment_rows_fixed": "a whole number of rows",
          "time_ms": "a period such as 6h or 4h30m, or milliseconds", "segment_size_bytes": "a size such as 200M"}
_DATA_SIZE = re.compile(r"^(\d+(?:\.\d+)?)([KMGTP])?B?$", re.IGNORECASE)


def stream_config_map(table: Any) -> tuple[str, Mapping[str, Any]] | None:
    """The table's stream config map and its key path, or ``None`` when it states none."""
    legacy = table.section("tableIndexConfig").get("streamConfigs")
    if isinstance(legacy, Mapping) and legacy:
        return "tableIndexConfig.streamConfigs", legacy
    maps = table.section("ingestionConfig", "streamIngestionConfig").get("streamConfigMaps")
    if isinstance(maps, list | tuple) and maps and isinstance(maps[0], Mapping):
        return "ingestionConfig.streamIngestionConfig.streamConfigMaps.0", maps[0]
    return None


def _first(cfg: Mapping[str, Any], keys: tuple[str, ...]) -> tuple[str, str] | None:
    for key in keys:
        if cfg.get(key) is not None:
            return key, str(cfg[key]).strip()
    return None


def _period_ms(text: str) -> int:
    """``TimeUtils.convertPeriodToMillis`` (``6h``, ``4h30m``, ``1d``), else a plain count of milliseconds."""
    match = _PERIOD.match(text)
    if match and any(match.groups()):
        d, h, m, s = (int(g or 0) for g in match.groups())
        return ((d * 24 + h) * 60 + m) * 60_000 + s * 1000
    return int(text)


def _data_size(text: str) -> int:
    """``DataSizeUtils.toBytes``: ``200M``, ``150MB``, ``1.5G`` (powers of 1024), or bytes."""
    match = _DATA_SIZE.match(text)
    if not match:
        raise ValueError(text)
    power = " KMGTP".index(match.group(2).upper()) if match.group(2) else 0
    return int(float(match.group(1)) * 1024**power)


@dataclass(frozen=True)
class FlushConfig:
    """The flush thresholds a stream config states (``-1``: not stated), and the keys that stated them."""

    rows: int = -1
    segment_rows_fixed: int = -1
    time_ms: int = DEFAULT_FLUSH_THRESHOLD_TIME_MS
    segment_size_bytes: int = -1
    initial_rows: int = DEFAULT_FLUSH_AUTOTUNE_INITIAL_ROWS
    #: Pinot key -> value as written, of every threshold the map states.
    stated: Mapping[str, str] = ()  # type: ignore[assignment]

    @classmethod
    def of(cls, cfg: Mapping[str, Any], where: str = "streamConfigs") -> FlushConfig:
        """Parse a stream config map as ``StreamConfig`` does; a value Pinot rejects is a TableConfigError."""
        stated: dict[str, str] = {}
        values: dict[str, int] = {}
        parsers = (("rows", _ROWS_KEYS, int), ("segment_rows_fixed", (SEGMENT_ROWS,), int),
                   ("time_ms", _TIME_KEYS, _period_ms), ("segment_size_bytes", _SIZE_KEYS, _data_size))
        for name, keys, parse in parsers:
            found = _first(cfg, keys)
            if found is None:
                continue
            key, text = found
            try:
                values[name] = parse(text)
            except ValueError:
                raise TableConfigError(f"{where}.{key}", f"Invalid config {key}: {text!r}; Pinot reads "
                                                         f"{_READS[name]}") from None
            stated[key] = text
        initial = cfg.get("realtime.segment.flush.autotune.initialRows")
        if initial is not None and str(initial).strip().isdigit() and int(str(initial).strip()) > 0:
            values["initial_rows"] = int(str(initial).strip())
        return cls(**values, stated=dict(stated))

    @property
    def time_stated(self) -> bool:
        """Whether the map states ``threshold.time`` (else Pinot's 6 hours apply)."""
        return any(k in self.stated for k in _TIME_KEYS)

    @property
    def size_based(self) -> bool:
        """Whether Pinot tunes the row threshold towards ``segment.size`` (``rows`` 0, or a size stated and no
        positive rows threshold)."""
        return self.rows <= 0 and self.segment_rows_fixed <= 0 and (self.rows == 0 or self.segment_size_bytes > 0)

    def segment_rows(self, max_partitions_per_instance: int) -> int | None:
        """Rows at which a consuming segment is sealed (``None`` when size-based: tuned as segments commit,
        :mod:`workbench.pinot.flush_size`)."""
        if self.rows > 0:
            return self.rows // max_partitions_per_instance
        if self.segment_rows_fixed > 0:
            return self.segment_rows_fixed
        if self.size_based:
            return None
        return DEFAULT_FLUSH_THRESHOLD_ROWS // max_partitions_per_instance

    def rule(self, max_partitions_per_instance: int) -> str:
        """How the row threshold follows from the config, in words (for messages and the manifest)."""
        if self.rows > 0:
            key = next(k for k in _ROWS_KEYS if k in self.stated)
            return (f"{key} {self.rows} / {max_partitions_per_instance} stream partition"
                    f"{'s' if max_partitions_per_instance > 1 else ''} per server")
        if self.segment_rows_fixed > 0:
            return f"{SEGMENT_ROWS} {self.segment_rows_fixed}"
        if self.size_based:
            size = self.segment_size_bytes if self.segment_size_bytes > 0 else DEFAULT_SIZE
            return f"size-based ({SEGMENT_SIZE} {size} bytes)"
        return (f"Pinot's default {DEFAULT_FLUSH_THRESHOLD_ROWS} rows / {max_partitions_per_instance} stream "
                "partitions per server")


def max_partitions_per_instance(num_partitions: int, num_replicas: int, instances: int, *,
                                replica_groups: bool) -> int:
    """``PinotLLCRealtimeSegmentManager.getMaxNumPartitionsPerInstance``: without replica groups the
    partitions' replicas are sprayed over all ``instances``, ``ceil(partitions x replicas / instances)``;
    with replica groups ``instances`` is one group's size and each group holds every partition once,
    ``ceil(partitions / instances)``.

    >>> max_partitions_per_instance(3, 4, 6, replica_groups=False)
    2
    >>> max_partitions_per_instance(6, 2, 3, replica_groups=True)
    2
    """
    if replica_groups:
        return max(1, -(-num_partitions // max(1, instances)))
    return max(1, -(-(num_partitions * num_replicas) // max(1, instances)))
