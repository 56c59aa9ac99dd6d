"""The parameters of the G1 model and the pause-time forms they enter.

The forms were fitted to JDK 17 G1 logs of a JVM holding an upsert-like primary-key map
(``probes/gc/``, ``tests/fixtures/gc/``); ``docs/gc.md`` gives the fits and their residuals. A pause
costs what G1 does in it:

* **young / mixed**: ``young_base_ms + copied / copy_rate + rs_scan_ms_per_gb x map_GiB^rs_map_exponent x
  scanned``, times
  lognormal noise of ``pause_sigma``. ``copied`` is what survives the collection (``survivor_s`` seconds
  of allocation and ``survivor_bytes`` whatever the rate, plus the live part of the old regions a mixed
  collection evacuates). ``scanned`` is the
  share of the upsert map the pause scans for references into the young generation: every update of a
  key stores a young record location into an old map node, and once a young region is referenced from
  many old regions G1 coarsens its remembered set to whole regions, so after ``U`` updates since the last
  young collection the share is ``1 - exp(-U / rs_coarsen_updates)``. The scan grows with the map, but
  less than in proportion (``rs_map_exponent`` about 0.5 in the probe runs: 33-74 ms at 0.28 GiB,
  136-183 ms at 2.8 GiB), because part of the work is per dirty card, whatever the map's size;
* **full**: ``full_base_ms + live_GiB x full_ms_per_gb`` (mark, adjust and compact the live heap);
* **remark / cleanup**: lognormal around ``remark_ms`` / ``cleanup_ms`` (``concurrent_sigma``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from workbench import defaults as D
from workbench.errors import InputError

__all__ = ["GIB", "G1Params", "region_bytes", "rs_scan_ms", "young_copied_bytes", "young_form_ms"]

GIB = float(1 << 30)
_MIN_REGION = 1 << 20
_MAX_REGION = 32 << 20
_TARGET_REGIONS = 2048


def region_bytes(heap_bytes: float) -> int:
    """G1's region size for a heap: about 2048 regions, a power of two between 1 and 32 MiB.

    >>> region_bytes(4 << 30) >> 20, region_bytes(6 << 30) >> 20, region_bytes(64 << 30) >> 20
    (2, 2, 32)
    """
    size = _MIN_REGION
    while size * 2 <= heap_bytes / _TARGET_REGIONS and size < _MAX_REGION:
        size *= 2
    return size


@dataclass(frozen=True)
class G1Params:
    """G1 collector parameters: fitted pause costs, workload survival, and JDK 17 G1 defaults.

    Attributes
    ----------
    young_base_ms
        Fixed cost of an evacuation pause (roots, set-up, termination), ms.
    copy_rate
        Bytes the GC workers evacuate per second (survivors and promoted objects).
    rs_scan_ms_per_gb
        Remembered-set scan of a 1 GiB upsert map when the whole map is scanned, ms.
    rs_map_exponent
        How the scan grows with the map: ``map_GiB ** rs_map_exponent``.
    rs_coarsen_updates
        Updates between two young collections after which the pause scans 63% of the map.
    pause_sigma
        Lognormal sigma of young and mixed pauses around their form.
    survivor_s
        Seconds of allocation still reachable when a young collection runs: copied = rate x this.
    survivor_bytes
        Bytes that survive every young collection whatever the allocation rate (the JVM's own state: a query
        server's caches, buffers and metadata), copied on top of ``survivor_s``'s share.
    promotion_fraction
        Share of the copied bytes promoted to the old generation (there they become garbage).
    mixed_live_ratio
        Live bytes a mixed collection copies per byte of old garbage it reclaims.
    full_base_ms, full_ms_per_gb
        Full GC pause: ``full_base_ms + live_GiB x full_ms_per_gb``, ms.
    full_sigma
        Lognormal sigma of full GC pauses.
    remark_ms, cleanup_ms
        Median remark and cleanup pauses, ms.
    concurrent_sigma
        Lognormal sigma of remark and cleanup pauses.
    mark_rate
        Live old-generation bytes concurrent marking gets through per second.
    rebuild_rate
        Live old bytes per second of the remembered-set rebuild between remark and cleanup.
    ihop
        Old-generation occupancy (share of the heap) that starts a concurrent cycle.
    reserve
        ``G1ReservePercent``: share of the heap kept free for evacuation.
    new_size_min, new_size_max
        ``G1NewSizePercent`` and ``G1MaxNewSizePercent`` (young generation bounds, share of the heap).
    pause_goal_ms
        ``MaxGCPauseMillis``: eden is sized so the predicted young pause stays under it.
    goal_share
        Share of the pause goal G1 aims its predicted young pause at (its predictions carry a margin).
    young_growth
        Largest relative growth of eden from one young collection to the next.
    mixed_count
        ``G1MixedGCCountTarget``: mixed collections after a concurrent cycle.
    heap_waste
        ``G1HeapWastePercent``: old garbage (share of the heap) mixed collections leave behind.
    """

    young_base_ms: float = D.G1_YOUNG_BASE_MS
    copy_rate: float = D.G1_COPY_RATE
    rs_scan_ms_per_gb: float = D.G1_RS_SCAN_MS_PER_GB
    rs_map_exponent: float = D.G1_RS_MAP_EXPONENT
    rs_coarsen_updates: float = D.G1_RS_COARSEN_UPDATES
    pause_sigma: float = D.G1_PAUSE_SIGMA
    survivor_s: float = D.G1_SURVIVOR_S
    survivor_bytes: float = D.G1_SURVIVOR_BYTES
    promotion_fraction: float = D.G1_PROMOTION_FRACTION
    mixed_live_ratio: float = D.G1_MIXED_LIVE_RATIO
    full_base_ms: float = D.G1_FULL_BASE_MS
    full_ms_per_gb: float = D.G1_FULL_MS_PER_GB
    full_sigma: float = D.G1_FULL_SIGMA
    remark_ms: float = D.G1_REMARK_MS
    cleanup_ms: float = D.G1_CLEANUP_MS
    concurrent_sigma: float = D.G1_CONCURRENT_SIGMA
    mark_rate: float = D.G1_MARK_RATE
    rebuild_rate: float = D.G1_REBUILD_RATE
    ihop: float = D.GC_IHOP
    reserve: float = D.GC_RESERVE
    new_size_min: float = D.G1_NEW_SIZE_MIN
    new_size_max: float = D.G1_NEW_SIZE_MAX
    pause_goal_ms: float = D.G1_PAUSE_GOAL_MS
    goal_share: float = D.G1_GOAL_SHARE
    young_growth: float = D.G1_YOUNG_GROWTH
    mixed_count: int = D.GC_MIXED_COUNT
    heap_waste: float = D.G1_HEAP_WASTE

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, int | float) or math.isnan(value) or value < 0:
                raise InputError(f"gc.{f.name}", f"must be a number >= 0, got {value!r}")
        for name in ("copy_rate", "mark_rate", "rebuild_rate", "rs_coarsen_updates", "pause_goal_ms"):
            if getattr(self, name) <= 0:
                raise InputError(f"gc.{name}", f"must be > 0, got {getattr(self, name)!r}")
        if not 0 < self.new_size_min <= self.new_size_max < 1:
            raise InputError("gc.new_size_min", "needs 0 < new_size_min <= new_size_max < 1, got "
                                                f"{self.new_size_min} and {self.new_size_max}")
        for name in ("ihop", "reserve", "heap_waste", "promotion_fraction", "goal_share"):
            if getattr(self, name) >= 1:
                raise InputError(f"gc.{name}", f"is a share of the heap and must be < 1, got {getattr(self, name)}")
        if self.mixed_count < 1:
            raise InputError("gc.mixed_count", f"must be >= 1, got {self.mixed_count}")


def rs_scan_ms(params: G1Params, map_bytes: float, updates: float) -> float:
    """Remembered-set scan of a young pause, ms, after ``updates`` map updates since the last collection.

    >>> p = G1Params(rs_scan_ms_per_gb=100.0, rs_map_exponent=1.0, rs_coarsen_updates=50_000.0)
    >>> rs_scan_ms(p, GIB, 0.0), round(rs_scan_ms(p, GIB, 1e9), 6), round(rs_scan_ms(p, GIB / 2, 50_000.0), 2)
    (0.0, 100.0, 31.61)
    >>> round(rs_scan_ms(G1Params(rs_scan_ms_per_gb=100.0, rs_map_exponent=0.5), 4 * GIB, 1e12), 6)
    200.0
    """
    if map_bytes <= 0 or updates <= 0:
        return 0.0
    dirty = -math.expm1(-updates / params.rs_coarsen_updates)
    return float(params.rs_scan_ms_per_gb * (map_bytes / GIB) ** params.rs_map_exponent * dirty)


def young_copied_bytes(params: G1Params, eden_bytes: float, allocation_rate: float) -> float:
    """Bytes a young collection copies: what is still reachable of the last ``survivor_s`` seconds of allocation,
    plus the ``survivor_bytes`` that survive whatever the rate, at most eden.

    The model's collections copy this much; a basic GC log, which does not say what was copied, is
    fitted with the same estimate (:func:`workbench.jvm.fit_g1`).

    >>> young_copied_bytes(G1Params(survivor_s=0.1), 500e6, 300e6), young_copied_bytes(G1Params(), 1e6, 300e6)
    (30000000.0, 1000000.0)
    >>> young_copied_bytes(G1Params(survivor_s=0.0, survivor_bytes=1e6), 30e6, 300e6)
    1000000.0
    """
    return float(min(eden_bytes, params.survivor_bytes + allocation_rate * params.survivor_s))


def young_form_ms(params: G1Params, copied_bytes: float, scan_ms: float) -> float:
    """The young/mixed pause form without noise, ms: base + copy + remembered-set scan.

    >>> young_form_ms(G1Params(young_base_ms=5.0, copy_rate=1e9), 5e7, 20.0)
    75.0
    """
    return params.young_base_ms + copied_bytes / params.copy_rate * 1000.0 + scan_ms
