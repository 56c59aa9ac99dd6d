"""The model against Pinot, query by query: the same table, rows and queries through both.

For each query the workbench's parts (the broker pruners the simulator plans with, the instance
selector it routes with, the filter evaluator) and Pinot's own (:mod:`workbench.groundtruth.harness`)
answer the same questions; every field where they differ is a disagreement, and a disagreement is a
bug in one of the workbench's Pinot parts until Pinot's evidence says otherwise.

Fields compared (Pinot's names):

- ``segments``: the segments queried after broker pruning (as a set), and ``numSegmentsPrunedByBroker``;
- ``segment metadata``: each segment's time range and partition set as the model derives them from the
  rows, against the ZK metadata Pinot's controller code writes;
- ``numServersQueried``, and the exact ``servers`` where routing is deterministic: replica-group
  selectors (the group follows the request id), fixed replica, or one replica. Under balanced routing
  with several replicas Pinot walks the segments in a Java hash set's order, which the model does not
  reproduce, so only the count is compared there;
- ``numDocsScanned`` and ``numSegmentsMatched``, for aggregation queries (a selection query with a
  ``LIMIT`` and no ``ORDER BY`` stops scanning early in Pinot, which the model does not model).

Not compared, because the model has no such part: ``numSegmentsProcessed`` / ``numSegmentsPrunedByServer``
(the server's min/max value pruner) and ``numEntriesScannedInFilter`` (it depends on the indexes).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from workbench.groundtruth.harness import PinotAnswer, PinotRun, PinotTable, run_pinot
from workbench.pinot.partition import get_partition_function
from workbench.pinot.pruning.timeformat import DateTimeFormat
from workbench.pinot.schema import Schema
from workbench.pinot.segment import ColumnPartitionMetadata, SegmentMetadata
from workbench.pinot.sql import parse_query
from workbench.pinot.sql.evaluate import evaluate_filter
from workbench.pinot.sql.query import Identifier
from workbench.pinot.table_config import TableConfig
from workbench.sim.layout import Layout
from workbench.sim.planner import Planner, QueryPlan
from workbench.sim.router import Router, own_routing_options

__all__ = ["FIELDS", "MEASURED_FIELDS", "MEASURED_RULE", "Agreement", "Disagreement", "agreement", "early_stop",
           "measured_agreement", "model_segment_metadata",
           "reported_pruned"]

FIELDS = ("segments", "numSegmentsPrunedByBroker", "numServersQueried", "servers", "numDocsScanned",
          "numSegmentsMatched", "segmentMetadata")
#: What :func:`measured_agreement` compares: a measured run's records carry counts, not the segments' names.
MEASURED_FIELDS = ("numSegmentsQueried", "numSegmentsPrunedByBroker", "numServersQueried", "servers",
                   "numDocsScanned", "numSegmentsMatched", "segmentMetadata")
#: Said in each measured ``agreement.json``: where Pinot's own runs vary, what is not compared.
MEASURED_RULE = ("per query: the segments queried (a count: the records do not name them) and pruned by the broker, "
                 "the servers queried (the exact servers where routing follows the request id alone), and the "
                 "documents scanned and segments matched, except for a selection with LIMIT and no ORDER BY or "
                 "ordered first by a column: Pinot stops it once it has its rows, or skips segments by the order-by "
                 "column's min/max as its threads finish (MinMaxValueBasedSelectionOrderByCombineOperator), at "
                 "points that differ between two runs of Pinot itself; with each segment's ZK time range and "
                 "partitions")


@dataclass(frozen=True)
class Disagreement:
    """One field of one query (or one segment) where the model and Pinot differ."""

    sql: str
    field: str
    pinot: Any
    model: Any


@dataclass(frozen=True)
class Agreement:
    """The comparison of one table's queries; :meth:`to_json` is ``agreement.json``."""

    pinot_version: str
    queries: int
    agreed: int
    fields: tuple[str, ...]
    disagreements: tuple[Disagreement, ...]

    def to_json(self) -> dict[str, Any]:
        return {"pinot_version": self.pinot_version, "queries": self.queries, "agreed": self.agreed,
                "fields": list(self.fields),
                "disagreements": [{"sql": d.sql, "field": d.field, "pinot": d.pinot, "model": d.model}
                                  for d in self.disagreements]}


def _field_spec(schema: Mapping[str, Any], column: str) -> Mapping[str, Any]:
    for group in ("dimensionFieldSpecs", "metricFieldSpecs", "dateTimeFieldSpecs"):
        for spec in schema.get(group, ()):
            if spec.get("name") == column:
                return dict(spec)
    time_spec = schema.get("timeFieldSpec", {}).get("incomingGranularitySpec", {})
    if time_spec.get("name") == column:
        return {"name": column, "dataType": time_spec.get("dataType", "LONG"),
                "format": f"1:{time_spec.get('timeType', 'MILLISECONDS')}:EPOCH"}
    raise KeyError(f"schema has no column {column!r}")


def model_segment_metadata(table: TableConfig, schema: Mapping[str, Any], name: str,
                           rows: pd.DataFrame) -> SegmentMetadata:
    """A segment's pruning metadata as the workbench derives it from the segment's rows.

    The time range is the time column's minimum and maximum in epoch milliseconds (the column's own
    format read from the schema); each partitioned column's set is every partition its values fall in.
    """
    start = end = None
    column = table.time_column_name
    if column is not None and len(rows):
        spec = _field_spec(schema, column)
        fmt = DateTimeFormat.for_field(str(spec.get("format", "1:MILLISECONDS:EPOCH")), spec.get("dataType"))
        values = rows[column]
        start, end = fmt.to_millis(str(values.min())), fmt.to_millis(str(values.max()))
    partitions = {}
    for col, cfg in table.column_partition_map.items():
        fn = get_partition_function(cfg.function_name, cfg.num_partitions, cfg.function_config)
        ids = fn.get_partitions(rows[col].to_numpy(), str(_field_spec(schema, col).get("dataType", "STRING")))
        partitions[col] = ColumnPartitionMetadata(cfg.function_name, cfg.num_partitions,
                                                  frozenset(int(i) for i in np.unique(ids)), cfg.function_config)
    return SegmentMetadata(name, start, end, total_docs=len(rows), partitions=partitions)


def _deterministic(table: TableConfig, sql_options: Mapping[str, str]) -> bool:
    """Whether Pinot's choice of servers is a function of the request id alone (not of hash-set order)."""
    if table.replication == 1 or table.use_fixed_replica:
        return True
    if str(sql_options.get("useFixedReplica", "")).lower() == "true":
        return True
    return "replicagroup" in table.instance_selector_type.lower()


def _is_aggregation(sql: str) -> bool:
    query = parse_query(sql)
    return bool(query.group_by) or query.is_aggregation


def early_stop(sql: str) -> bool:
    """Whether Pinot may stop scanning ``sql`` early at a point its own runs do not repeat: a selection with no
    ``ORDER BY`` (its ``LIMIT``, Pinot's 10 when none is written, stops it once it has its rows), or one ordered first
    by a column, which Pinot's server combines with ``MinMaxValueBasedSelectionOrderByCombineOperator`` (1.5.1): its
    threads take the segments in order of that column's min/max and skip those that cannot beat the rows kept so
    far, so what is scanned depends on which thread finished first (on a server running queries on one thread it
    repeats; with ``-XX:ActiveProcessorCount=4`` two runs of Pinot on the demo table scanned 457 and 665 documents
    for one lookup).

    >>> early_stop("SELECT a FROM t LIMIT 5"), early_stop("SELECT a FROM t ORDER BY a LIMIT 5")
    (True, True)
    >>> early_stop("SELECT a FROM t ORDER BY a + 1 LIMIT 5")
    False
    >>> early_stop("SELECT COUNT(*) FROM t"), early_stop("SELECT a, COUNT(*) FROM t GROUP BY a")
    (False, False)
    """
    query = parse_query(sql)
    if query.group_by or query.is_aggregation:
        return False
    return not query.order_by or isinstance(query.order_by[0].expression, Identifier)


def _compare_segments(table: TableConfig, zk_metadata: Mapping[str, Mapping[str, str]],
                      model: Mapping[str, SegmentMetadata]) -> list[Disagreement]:
    out = []
    for name, zk in zk_metadata.items():
        theirs = SegmentMetadata.from_zk_metadata(name, zk)
        ours = model[name]
        if theirs.time_range != ours.time_range:
            out.append(Disagreement(f"segment {name}", "segmentMetadata.timeRange",
                                    list(theirs.time_range or ()), list(ours.time_range or ())))
        for col in table.column_partition_map:
            a, b = theirs.partitions.get(col), ours.partitions.get(col)
            if a is None or b is None or a.partitions != b.partitions:
                out.append(Disagreement(f"segment {name}", f"segmentMetadata.partitions.{col}",
                                        sorted(a.partitions) if a else None, sorted(b.partitions) if b else None))
    return out


def reported_pruned(plan: QueryPlan) -> int:
    """The ``numSegmentsPrunedByBroker`` Pinot's broker reports for ``plan``: the segments its pruners removed, except
    when none is left to query. Then ``BaseSingleStageBrokerRequestHandler`` (1.5.1) answers with its empty response
    before it sets the count, and the response says 0 (found measuring a real broker: every fully pruned query
    reported 0 where the model said the table's segment count)."""
    return plan.pruned if plan.names else 0


def _route(router: Router, layout: Layout, plan: QueryPlan, request_id: int,
           options: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """The model's route of one planned query, through the simulator's own router, as segment -> server."""
    per_server, _ = router.route(request_id, plan.names, plan.key, router.options_for(options))
    return {layout.segments[seg]: layout.servers[server] for server, segs in per_server for seg in segs}


def _compare_query(table: TableConfig, planner: Planner, router: Router, layout: Layout,
                   rows: Mapping[str, pd.DataFrame], answer: PinotAnswer) -> list[Disagreement]:
    sql = answer.sql
    if answer.exceptions:
        return [Disagreement(sql, "exceptions", list(answer.exceptions), [])]
    plan = planner.plan(sql)
    kept = plan.names or ()
    query = plan.query
    assert query is not None, "a plan made from SQL carries its query"
    out = []

    def check(field: str, pinot_value: Any, model_value: Any) -> None:
        if pinot_value != model_value:
            out.append(Disagreement(sql, field, pinot_value, model_value))

    check("segments", sorted(answer.segments_after_broker_pruning), sorted(kept))
    check("numSegmentsPrunedByBroker", answer["numSegmentsPrunedByBroker"], reported_pruned(plan))
    own = own_routing_options(query)
    chosen = _route(router, layout, plan, answer.request_id, own) if kept else {}
    check("numServersQueried", answer["numServersQueried"], len(set(chosen.values())))
    if _deterministic(table, dict(own)):
        check("servers", dict(sorted(answer.segment_to_server.items())), dict(sorted(chosen.items())))
    if _is_aggregation(sql):
        matched = [int(evaluate_filter(query.filter, rows[name]).sum()) for name in kept]
        check("numDocsScanned", answer["numDocsScanned"], sum(matched))
        check("numSegmentsMatched", answer["numSegmentsMatched"], sum(1 for m in matched if m > 0))
    return out


def _layout(names: tuple[str, ...], docs: np.ndarray, servers: tuple[str, ...],
            ideal_state: Mapping[str, Mapping[str, str]], metadata: Mapping[str, SegmentMetadata],
            consuming: AbstractSet[str] = frozenset()) -> Layout:
    """The simulator's layout of these segments on ``ideal_state`` (sealed but for the ``consuming`` ones)."""
    index = {server: i for i, server in enumerate(servers)}
    replicas = tuple(tuple(index[s] for s in ideal_state[name]) for name in names)
    return Layout(servers, names, docs, np.array([n in consuming for n in names], bool),
                  {seg: dict(states) for seg, states in ideal_state.items()}, replicas, metadata,
                  np.zeros(len(names), int))


def agreement(table_config: Mapping[str, Any], schema: Mapping[str, Any], segments: Mapping[str, pd.DataFrame],
              queries: Sequence[str], *, servers: Sequence[str], ideal_state: Mapping[str, Mapping[str, str]],
              pinot: PinotRun | None = None) -> tuple[Agreement, PinotRun]:
    """Run ``queries`` (request ids 0, 1, ...) through Pinot and through the model, and compare.

    ``pinot`` reuses an earlier run of the same table and queries instead of starting Pinot again.
    """
    table = TableConfig.from_json(dict(table_config))
    if pinot is None:
        pinot = run_pinot(PinotTable(table_config, schema, segments, tuple(servers), ideal_state),
                          [(sql, i) for i, sql in enumerate(queries)])
    names = tuple(segments)
    model = {name: model_segment_metadata(table, schema, name, rows) for name, rows in segments.items()}
    docs = np.array([len(segments[n]) for n in names], float)
    planner = Planner(names, docs, table, Schema.from_json(schema), model)
    layout = _layout(names, docs, tuple(servers), ideal_state, model)
    router = Router(layout, table)
    found = _compare_segments(table, pinot.zk_metadata, model)
    agreed = 0
    for answer in pinot.answers:
        differences = _compare_query(table, planner, router, layout, segments, answer)
        agreed += not differences
        found.extend(differences)
    return Agreement(pinot.pinot_version, len(pinot.answers), agreed, FIELDS, tuple(found)), pinot


def measured_agreement(table_config: Mapping[str, Any], schema: Mapping[str, Any],
                       segments: Mapping[str, pd.DataFrame], ideal_state: Mapping[str, Mapping[str, str]],
                       zk_metadata: Mapping[str, Mapping[str, str]], records: pd.DataFrame,
                       pinot_version: str, consuming: Mapping[str, SegmentMetadata] | None = None) -> Agreement:
    """The model against one measured run of Pinot's processes (``workbench measure``'s ``records.parquet``).

    Each record (``requestId``, ``sql``, ``exceptions``, ``numSegmentsQueried``, ``numSegmentsPrunedByBroker``,
    ``numServersQueried``, ``numDocsScanned``, ``numSegmentsMatched``, ``servers``: per server its ``instance``)
    is planned by the model with the same request id through the same :class:`~workbench.sim.router.Router`,
    on the run's ideal state; :data:`MEASURED_RULE` says what is compared. ``consuming`` gives the model's metadata
    of a streamed table's CONSUMING segments (the others' the model derives from their rows).
    """
    table = TableConfig.from_json(dict(table_config))
    names = tuple(segments)
    model = {name: model_segment_metadata(table, schema, name, rows) for name, rows in segments.items()}
    model.update(consuming or {})
    docs = np.array([len(segments[n]) for n in names], float)
    planner = Planner(names, docs, table, Schema.from_json(schema), model)
    servers = tuple(sorted({s for states in ideal_state.values() for s in states}))
    layout = _layout(names, docs, servers, ideal_state, model, frozenset(consuming or {}))
    router = Router(layout, table)
    found = _compare_segments(table, zk_metadata, model)
    agreed = 0
    for rec in records.sort_values("requestId").to_dict("records"):
        sql = str(rec["sql"])
        out: list[Disagreement] = []

        def check(field: str, pinot_value: Any, model_value: Any, sql: str = sql, out: list[Disagreement] = out
                  ) -> None:
            if pinot_value != model_value:
                out.append(Disagreement(sql, field, pinot_value, model_value))

        if str(rec["exceptions"] or ""):
            out.append(Disagreement(sql, "exceptions", str(rec["exceptions"]), ""))
        else:
            plan = planner.plan(sql)
            query = plan.query
            assert query is not None, "a plan made from SQL carries its query"
            kept = plan.names or ()
            own = own_routing_options(query)
            chosen = _route(router, layout, plan, int(rec["requestId"]), own) if kept else {}
            check("numSegmentsQueried", int(rec["numSegmentsQueried"]), len(kept))
            check("numSegmentsPrunedByBroker", int(rec["numSegmentsPrunedByBroker"]), reported_pruned(plan))
            check("numServersQueried", int(rec["numServersQueried"]), len(set(chosen.values())))
            if _deterministic(table, dict(own)):
                queried = sorted(str(s["instance"]) for s in json.loads(str(rec["servers"])))
                check("servers", queried, sorted(set(chosen.values())))
            if not early_stop(sql):
                matched = [int(evaluate_filter(query.filter, segments[name]).sum()) for name in kept]
                check("numDocsScanned", int(rec["numDocsScanned"]), sum(matched))
                check("numSegmentsMatched", int(rec["numSegmentsMatched"]), sum(1 for m in matched if m > 0))
        agreed += not out
        found.extend(out)
    return Agreement(pinot_version, len(records), agreed, MEASURED_FIELDS, tuple(found))
