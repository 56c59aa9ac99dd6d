"""The pruning studies: how many segments Pinot's broker keeps per query, for workload variants.

Each variant's workload is generated in-process and every query planned with the table's pruners
(:class:`workbench.sim.planner.Planner`, the model's own planner): a study, since it builds the model's
inputs, where :mod:`workbench.analysis` only reads tables. ``notebooks/02_pruning.ipynb`` calls these.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from workbench.scenario import Scenario

__all__ = ["pruning_by_window", "pruning_study", "window_label"]


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
        work = generate_frames(sc.workload.generate, table=sc.table.table_name, table_config=sc.table,
                               schema=sc.schema)
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
        seg = generate_frames(sc.workload.generate, table=sc.table.table_name, table_config=sc.table,
                              schema=sc.schema).segments
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
