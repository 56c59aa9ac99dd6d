"""Ready-made studies for the caching and upsert questions: data in, tidy frames out.

Notebooks and the sizing report call these; the heavy lifting is in :mod:`workbench.pinot.cache` and
:mod:`workbench.pinot.upsert`, which reproduce Pinot's (and the RFC's) behaviour.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence

import numpy as np
import pandas as pd

from workbench.pinot.sql import parse_query
from workbench.scenario import Scenario

__all__ = ["broker_trace", "heap_by_ttl", "pruning_by_window", "pruning_study", "window_label"]


def broker_trace(queries: pd.DataFrame) -> pd.DataFrame:
    """A broker result-cache trace from a query log (``arrival_s``, ``sql``): canonical key, size, time.

    Keys are the RFC's canonical SQL (:func:`workbench.pinot.cache.keys.query_key`), so different
    spellings of one dashboard panel share a key; sizes are the caches' own estimate
    (:func:`workbench.pinot.cache.estimate.result_size_estimate`), as in the model.
    """
    from workbench.pinot.cache.estimate import result_size_estimate
    from workbench.pinot.cache.keys import query_key

    parsed: dict[str, tuple[str, int]] = {}
    keys, sizes = [], []
    for sql in queries["sql"]:
        hit = parsed.get(sql)
        if hit is None:
            q = parse_query(sql)
            hit = parsed[sql] = (query_key(q), result_size_estimate(q))
        keys.append(hit[0])
        sizes.append(hit[1])
    return pd.DataFrame({"key": keys, "size_bytes": np.asarray(sizes, dtype=np.int64),
                         "time_ms": queries["arrival_s"].to_numpy(dtype=float) * 1000.0})


def heap_by_ttl(ttls_s: Sequence[float], *, seed: int = 1, segments: int = 24, records_per_segment: int = 20_000,
                update_fraction: float = 0.6, active_window_s: float = 7200.0,
                hash_function: str = "NONE") -> pd.DataFrame:
    """Upsert heap of one partition over time for each metadataTTL (0 = no TTL), on one key stream.

    The same session-like stream (keys updated for ``active_window_s`` after they appear, then never
    again: the TTL design's trip example) is replayed through Pinot's metadata manager once per TTL;
    one row per commit with the map's keys, heap bytes and the duplicates TTL let through.
    """
    from workbench.pinot.upsert import PartitionUpsertMetadataManager
    from workbench.pinot.upsert.replay import replay_partition, synthetic_stream

    rows = []
    for ttl in ttls_s:
        stream = synthetic_stream(np.random.default_rng(seed), segments, records_per_segment,
                                  update_fraction=update_fraction, active_window_ms=int(active_window_s * 1000))
        with tempfile.TemporaryDirectory(prefix="upsert-snapshots-") as snapshots:
            # Pinot requires validDocIds snapshots whenever metadataTTL is set
            manager = PartitionUpsertMetadataManager.of(metadata_ttl=ttl * 1000.0, hash_function=hash_function,
                                                     enable_snapshot=ttl > 0, snapshot_dir=snapshots)
            rows += [{"ttl_s": ttl, "time_s": s.time, "num_primary_keys": s.num_primary_keys,
                      "heap_bytes": s.total_bytes, "duplicate_keys": s.duplicate_keys}
                     for s in replay_partition(stream, manager) if s.phase == "commit"]
    return pd.DataFrame(rows)


def pruning_study(scenario: Scenario, variants: dict[str, dict[str, object]]) -> pd.DataFrame:
    """Segments each query keeps after Pinot's broker pruners, per query kind, for workload variants.

    Each variant overrides the base scenario (``workload.generate.*``: disorder, partitions, segment
    size...); its workload is generated in-process (no Spark, same schema and bytes as the Spark
    generator) and every query is planned with the table's pruners. One row per (variant, query).
    """
    from workbench.sim.planner import Planner, default_schema, segment_metadata
    from workbench.workload.pure import generate_frames

    rows = []
    for label, overrides in variants.items():
        sc = scenario.with_overrides(overrides)
        if sc.workload.generate is None:
            raise ValueError(f"variant {label!r}: the scenario has no workload.generate section")
        work = generate_frames(sc.workload.generate, table=sc.table.table_name, table_config=sc.table)
        seg = work.segments
        planner = Planner(tuple(seg["segment_name"]), seg["total_docs"].to_numpy(float), sc.table,
                          sc.schema or default_schema(sc.table), segment_metadata(seg))
        for kind, sql in zip(work.queries["kind"], work.queries["sql"], strict=True):
            plan = planner.plan(str(sql))
            kept = len(seg) - plan.pruned
            rows.append({"variant": label, "kind": kind, "segments": len(seg), "kept": kept,
                         "kept_share": kept / len(seg)})
    return pd.DataFrame(rows)


def window_label(age_s: float, window_s: float) -> str:
    """How the window-age study names a window: ``"last 1h"``, ``"1h ending 6h ago"``.

    >>> window_label(0, 3600), window_label(6 * 3600, 3600)
    ('last 1h', '1h ending 6h ago')
    """
    width = f"{window_s / 3600:g}h"
    return f"last {width}" if age_s <= 0 else f"{width} ending {age_s / 3600:g}h ago"


def pruning_by_window(scenario: Scenario, variants: dict[str, dict[str, object]], window_s: float,
                      ages_s: Sequence[float]) -> pd.DataFrame:
    """Segments Pinot's broker keeps for a time-range query of ``window_s`` seconds ending ``age`` ago.

    For each variant (overrides of ``workload.generate``, e.g. the share of late events), the workload's
    segments are generated in-process and one ``COUNT(*)`` query per window is planned with the table's
    pruners, "now" being the newest event. Late events widen a segment's time range backwards (a late
    event lands in the segment consuming when it arrives), so they matter for windows in the past, not
    for "the last hour". One row per (variant, window): ``variant``, ``window``, ``age_h``,
    ``segments``, ``kept``, ``kept_share``.
    """
    from workbench.sim.planner import Planner, default_schema, segment_metadata
    from workbench.workload.pure import generate_frames

    rows = []
    for label, overrides in variants.items():
        sc = scenario.with_overrides(overrides)
        if sc.workload.generate is None:
            raise ValueError(f"variant {label!r}: the scenario has no workload.generate section")
        column = sc.table.time_column_name
        if column is None:
            raise ValueError("the table config has no segmentsConfig.timeColumnName to prune on")
        seg = generate_frames(sc.workload.generate, table=sc.table.table_name, table_config=sc.table).segments
        planner = Planner(tuple(seg["segment_name"]), seg["total_docs"].to_numpy(float), sc.table,
                          sc.schema or default_schema(sc.table), segment_metadata(seg))
        now_ms = int(seg["end_time_ms"].max())
        for age in ages_s:
            hi = now_ms - int(age * 1000)
            lo = hi - int(window_s * 1000)
            sql = f"SELECT COUNT(*) FROM {sc.table.table_name} WHERE {column} >= {lo} AND {column} < {hi}"
            kept = len(seg) - planner.plan(sql).pruned
            rows.append({"variant": label, "window": window_label(age, window_s), "age_h": age / 3600.0,
                         "segments": len(seg), "kept": kept, "kept_share": kept / len(seg)})
    return pd.DataFrame(rows)
