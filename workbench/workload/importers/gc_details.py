"""What a G1 log says about each collection beyond its pause line: regions, copied bytes, scanned cards.

The G1 model (:mod:`workbench.jvm.g1`) prices a young pause by what the collector copies (survivor and
promoted bytes) and scans (cards of old objects that point into the young generation), so calibrating it
needs those figures per collection, not just the heap before and after. JDK 17's G1 writes them on
lines that carry the collection's ``GC(n)`` id:

* ``[gc,heap]`` (info): ``Eden regions: 249->0(250)``, ``Survivor regions: 25->26(32)``,
  ``Old regions: 560->580``, ``Humongous regions: 16->16``;
* ``[gc,phases]`` (debug, ``-Xlog:gc+phases=debug``): ``Copied Bytes ... Sum: 34482624`` and
  ``Scanned Cards: ... Sum: 120845`` (summed over the GC worker threads), and the time of the two
  phases that price them, ``Object Copy (ms): ... Max: 99.5`` and ``Scan Heap Roots (ms): ... Max: 40.7``
  (the slowest worker's, which is what the pause waits for);
* ``[gc,init]`` (info, once): ``Heap Region Size: 1M``, which turns region counts into bytes.

Each reader returns ``None`` for a line it does not recognise, so the pause reader can try them on
every line it otherwise ignores.
"""

from __future__ import annotations

import re

__all__ = ["DETAIL_COLUMNS", "TIME_COLUMNS", "GCDetail", "parse_detail", "parse_region_size", "parse_stall"]

#: Columns the details add to the pause table (bytes; cards; null when the log does not say).
DETAIL_COLUMNS = (
    "eden_before_bytes", "eden_target_bytes", "survivor_before_bytes", "survivor_after_bytes",
    "old_before_bytes", "old_after_bytes", "humongous_after_bytes", "copied_bytes", "scanned_cards",
    "object_copy_ms", "scan_roots_ms",
)
#: The detail columns that are times (ms, floats); the others are counts of bytes or cards.
TIME_COLUMNS = ("object_copy_ms", "scan_roots_ms")

_REGIONS = re.compile(r"GC\((?P<id>\d+)\)\s+(?P<space>Eden|Survivor|Old|Humongous) regions:\s+"
                      r"(?P<before>\d+)->(?P<after>\d+)(?:\((?P<target>\d+)\))?")
_PHASE = re.compile(r"GC\((?P<id>\d+)\)\s+(?P<name>Object Copy|Scan Heap Roots) \(ms\):"
                    r".*?Max:\s*(?P<max>\d+(?:\.\d+)?)")
_PHASE_COLUMNS = {"Object Copy": "object_copy_ms", "Scan Heap Roots": "scan_roots_ms"}
_SUM = re.compile(r"GC\((?P<id>\d+)\)\s+(?P<name>Copied Bytes|Scanned Cards):?\s+Min:.*?Sum:\s*(?P<sum>\d+)")
_REGION_SIZE = re.compile(r"[Rr]egion [Ss]ize:?\s*(?P<size>\d+)(?P<unit>[KMG])")
_UNIT = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
_STALL = re.compile(r"Allocation Stall \((?P<thread>[^()]*)\)\s+(?P<ms>\d+(?:[.,]\d+)?)ms$")

#: One figure: ``(gc_id, column, value)``, value in regions for region counts until sized.
GCDetail = tuple[int, str, float]


def parse_region_size(message: str) -> int | None:
    """Bytes per region from the ``[gc,init] Heap Region Size: 4M`` line, else ``None``.

    >>> parse_region_size("Heap Region Size: 4M"), parse_region_size("Using G1")
    (4194304, None)
    """
    match = _REGION_SIZE.search(message)
    return None if match is None else int(match["size"]) * _UNIT[match["unit"]]


def parse_stall(message: str) -> tuple[str, float] | None:
    """ZGC's ``[gc] Allocation Stall (<thread>) 12.345ms``: the thread and how long it waited (ms).

    A stall stops only the allocating thread (not the JVM) until the running collection frees memory:
    what a query thread sees when allocation outruns ZGC's concurrent collection.

    >>> parse_stall("Allocation Stall (main) 20.217ms"), parse_stall("GC(3) y: Allocation Stalls: 0 1")
    (('main', 20.217), None)
    """
    match = _STALL.search(message)
    return None if match is None else (match["thread"], float(match["ms"].replace(",", ".")))


def _region_figures(match: re.Match[str]) -> list[GCDetail]:
    gc_id, space = int(match["id"]), match["space"].lower()
    before, after = int(match["before"]), int(match["after"])
    if space == "eden":
        figures: list[GCDetail] = [(gc_id, "eden_before_bytes", before)]
        return figures + ([(gc_id, "eden_target_bytes", int(match["target"]))] if match["target"] else [])
    if space == "humongous":
        return [(gc_id, "humongous_after_bytes", after)]
    return [(gc_id, f"{space}_before_bytes", before), (gc_id, f"{space}_after_bytes", after)]


def parse_detail(message: str) -> list[GCDetail]:
    """The per-collection figures on one undecorated message (empty when it carries none).

    Region counts are returned as counts (the caller multiplies by the region size); copied bytes and
    scanned cards as the sum over workers; phase times (ms) as the slowest worker's.

    >>> parse_detail("GC(20) Survivor regions: 25->26(32)")
    [(20, 'survivor_before_bytes', 25), (20, 'survivor_after_bytes', 26)]
    >>> parse_detail("GC(20)       Scanned Cards:   Min: 53567, Avg: 60422.5, Max: 67278, Diff: 13711, Sum: 120845, "
    ...              "Workers: 2")
    [(20, 'scanned_cards', 120845)]
    >>> parse_detail("GC(20)     Object Copy (ms):  Min: 93.8, Avg: 96.7, Max: 99.5, Diff: 5.7, Sum: 193.3")
    [(20, 'object_copy_ms', 99.5)]
    """
    if (regions := _REGIONS.search(message)) is not None:
        return _region_figures(regions)
    if (total := _SUM.search(message)) is not None:
        column = "copied_bytes" if total["name"] == "Copied Bytes" else "scanned_cards"
        return [(int(total["id"]), column, int(total["sum"]))]
    if (phase := _PHASE.search(message)) is not None:
        return [(int(phase["id"]), _PHASE_COLUMNS[phase["name"]], float(phase["max"]))]
    return []
