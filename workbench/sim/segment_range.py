"""Segments far outside Pinot's comfortable range, said out loud: their size, and their count per server.

Pinot's Ingestion FAQ recommends segments of 100 MB to 500 MB (untarred): thousands of tiny segments of a
table burden ZooKeeper's metadata and the servers' heap (and every query pays per-segment work), and a few
segments of GBs cut query parallelism, a server working on each segment with one thread. The figures and
how far outside counts as "far" are in :mod:`workbench.defaults` (``SEGMENT_SIZE_RANGE``,
``SEGMENT_SIZE_FAR``, ``SEGMENTS_PER_SERVER_WARN``).

Sizes are the workload's own (``segments.parquet`` ``size_bytes``: bytes of the rows' values, a stand-in for
the untarred segment), else documents x ``SEGMENT_BYTES_PER_DOC`` (a synthetic layout, the segments
``workbench generate`` will write). The median of the sealed segments is judged: the consuming segment at
the head of each partition is partly filled by design.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from workbench import defaults as D
from workbench.scenario import Scenario
from workbench.sim.layout import Layout
from workbench.workload.directory import read_segments

__all__ = ["segment_sizes", "segments_out_of_range", "size_based_partition_rows"]


def segment_sizes(layout: Layout, data: Path | None) -> dict[str, int]:
    """Each segment's size in bytes: the workload's own ``size_bytes``, else docs x ``SEGMENT_BYTES_PER_DOC``."""
    estimate = {n: int(d * D.SEGMENT_BYTES_PER_DOC) for n, d in zip(layout.segments, layout.docs, strict=True)}
    if data is None:
        return estimate
    table = read_segments(data)
    if "size_bytes" not in table:
        return estimate
    known = {str(n): int(b) for n, b in zip(table["segment_name"], table["size_bytes"], strict=True)
             if b is not None and np.isfinite(b) and b >= 0}
    return {n: known.get(n, estimate[n]) for n in layout.segments}


def size_based_partition_rows(sc: Scenario) -> list[float]:
    """The rows of each segment ``workbench generate`` will cut from one stream partition of a size-based
    generate spec (``segment_size``), at the partition's mean rate, the last one consuming: Pinot's successive
    thresholds (:func:`workbench.workload.flush.size_based_segments`) at the generator's own bytes per row."""
    from workbench.workload.flush import size_based_segments
    from workbench.workload.row_size import spec_row_bytes

    spec = sc.workload.generate
    assert spec is not None and spec.segment_size is not None
    return [float(s.rows) for s in size_based_segments(spec, spec_row_bytes(spec, sc.table, sc.schema))]


def _mb(size: float) -> str:
    return f"{size / 1e6:,.3g} MB" if size < 1e9 else f"{size / 1e9:,.3g} GB"


def _range() -> str:
    low, high = D.SEGMENT_SIZE_RANGE
    return f"{low / 1e6:g}-{high / 1e6:g} MB"


def _what_to_change(sc: Scenario, generated: bool, median_docs: float) -> str:
    """The knob that sets segment size for this scenario's data, in Pinot's and the workbench's names: for a
    realtime stream whose segments are sealed by time before they reach the rows threshold, the time one."""
    if sc.workload.synthetic is not None and sc.workload.generate is None and not generated:
        return "workload.synthetic.docs_per_segment"
    spec = sc.workload.generate
    if sc.table.table_type == "REALTIME" and spec is not None and spec.segment_size is not None:
        timed = "" if spec.segment_time_s is None else (
            f", or threshold.time (segment_time_s, now {spec.segment_time_s:g} s) when it seals them first")
        return (f"the table's realtime.segment.flush.threshold.segment.size (generated data: workload.generate."
                f"segment_size, now {_mb(spec.segment_size)}){timed}")
    if sc.table.table_type == "REALTIME" and spec is not None and spec.segment_time_s is not None \
            and median_docs < 0.9 * spec.segment_rows:
        return (f"the table's realtime.segment.flush.threshold.time (generated data: workload.generate."
                f"segment_time_s, now {spec.segment_time_s:g} s), which seals them before the "
                f"{spec.segment_rows:,}-row threshold")
    if sc.table.table_type == "OFFLINE":
        return ("the batch job's rows per segment (generated data: workload.generate.offline.batch_s and "
                "offline.files)")
    return "the table's realtime.segment.flush.threshold.rows (generated data: workload.generate.segment_rows)"


def segments_out_of_range(sc: Scenario, layout: Layout, sizes: Mapping[str, int], generated: bool) -> str:
    """One sentence on segments far outside Pinot's range (median sealed size; most segments on a server),
    naming the figure and what to change; ``""`` when they are within it.

    ``sizes`` is each segment's size in bytes (:func:`segment_sizes`);
    ``generated`` says whether the layout is a workload directory's (or the one generation will write).
    """
    out = []
    sealed = [sizes[n] for n, c in zip(layout.segments, layout.consuming, strict=True) if not c]
    docs = float(np.median([d for d, c in zip(layout.docs, layout.consuming, strict=True) if not c] or [0.0]))
    knob = _what_to_change(sc, generated, docs)
    if sealed:
        median = float(np.median(sealed))
        low, high = D.SEGMENT_SIZE_RANGE
        held = f"the median sealed segment holds {_mb(median)} ({docs:,.0f} rows)"
        if median * D.SEGMENT_SIZE_FAR < low:
            times = low / max(median, 1.0)
            out.append(f"segments far below Pinot's recommended size: {held}, against the {_range()} Pinot's docs "
                       f"recommend; about {times:,.0f}x the rows per segment would reach {_mb(low)}: raise {knob}")
        elif median > high * D.SEGMENT_SIZE_FAR:
            times = median / high
            out.append(f"segments far above Pinot's recommended size: {held}, against the {_range()} Pinot's docs "
                       f"recommend (a server works on a segment with one thread); about 1/{times:,.0f} "
                       f"of the rows per segment would reach {_mb(high)}: lower {knob}")
    per_server = np.bincount([s for reps in layout.replicas for s in reps], minlength=len(layout.servers))
    if len(per_server) and per_server.max() >= D.SEGMENTS_PER_SERVER_WARN:
        worst = int(per_server.argmax())
        out.append(f"{layout.servers[worst]} holds {int(per_server[worst]):,} segments (replicas counted), past the "
                   f"thousands Pinot's docs warn about (ZooKeeper metadata, server heap); fewer, larger segments "
                   f"({knob}) or more servers")
    return "; ".join(out)
