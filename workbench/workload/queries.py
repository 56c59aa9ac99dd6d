"""The query stream against a generated table: dashboards, ad-hoc queries, lookups and time ranges.

Every query is SQL text in the single-stage dialect :func:`workbench.pinot.sql.parse_query` reads,
with literal epoch-millisecond bounds on the time column (what the broker's time pruner needs) and
literal keys on the partition column (what the partition pruner needs). The four kinds differ in
how they repeat, which is what a result cache feeds on:

dashboard
    A dashboard has panels (one template each, with fixed parameters), a refresh interval and a
    lookback. Each viewer refreshes all panels at its own phase; "now" is rounded down to
    ``time_rounding_s``, so viewers of one dashboard send identical SQL within a rounding step.
adhoc
    Exploration: Poisson arrivals, a template by Zipf, a random historical time range.
lookup
    Point lookups (``=``, sometimes ``IN``) on the partition column, keys by the events' popularity
    (lifecycle mode: keys born recently).
timerange
    Service-style "the last X" queries with "now" to the second.

Queries span the last ``duration_s`` of the data (capped at the span), so every lookback has data;
``now_ms`` of each query is the wall-clock time the query ran at.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from workbench.workload.context import STREAM_QUERIES, TIME_COLUMN, Context
from workbench.workload.events import category_of, scatter_keys, zipf_ranks
from workbench.workload.schema import EVENTS_SCHEMA, QUERIES_SCHEMA
from workbench.workload.spec import QuerySpec
from workbench.workload.timeline import rng_for
from workbench.workload.user_queries import filter_dimension, schema_shapes

__all__ = ["TEMPLATES", "Template", "generate_queries", "kinds_generated", "lookup_column", "query_window",
           "template_columns", "templates_of"]

_RANGE = "{time} >= {t0} AND {time} < {t1}"


@dataclass(frozen=True)
class Template:
    """A query shape: ``kind`` and SQL with ``{placeholders}``; ``id`` is its ``template_id``."""

    id: int
    kind: str
    sql: str


_SHAPES: dict[str, tuple[str, ...]] = {
    "dashboard": (
        "SELECT DATETRUNC('MINUTE', {time}) AS minute, COUNT(*) FROM {table} WHERE " + _RANGE
        + " GROUP BY DATETRUNC('MINUTE', {time}) ORDER BY DATETRUNC('MINUTE', {time}) LIMIT 1440",
        "SELECT category, COUNT(*) FROM {table} WHERE " + _RANGE + " GROUP BY category ORDER BY COUNT(*) DESC LIMIT 10",
        "SELECT SUM(value), COUNT(*) FROM {table} WHERE " + _RANGE,
        "SELECT PERCENTILETDIGEST(value, 99) FROM {table} WHERE " + _RANGE,
        "SELECT COUNT(*) FROM {table} WHERE category = '{category}' AND " + _RANGE,
        "SELECT DISTINCTCOUNTHLL(key) FROM {table} WHERE " + _RANGE,
        "SELECT category, AVG(value) FROM {table} WHERE " + _RANGE
        + " GROUP BY category ORDER BY AVG(value) DESC LIMIT 10",
        "SELECT MAX(ingest_time_ms - event_time_ms) FROM {table} WHERE " + _RANGE,
    ),
    "adhoc": (
        "SELECT COUNT(*) FROM {table} WHERE category = '{category}' AND {time} BETWEEN {t0} AND {t1}",
        "SELECT key, SUM(value) FROM {table} WHERE " + _RANGE + " GROUP BY key ORDER BY SUM(value) DESC LIMIT 20",
        "SELECT * FROM {table} WHERE value > {threshold} AND " + _RANGE + " LIMIT 100",
        "SELECT category, COUNT(*), AVG(value) FROM {table} GROUP BY category ORDER BY COUNT(*) DESC LIMIT 100",
        "SELECT DISTINCTCOUNT(key) FROM {table} WHERE category IN ('{category}', '{category2}')",
    ),
    "lookup": (
        "SELECT * FROM {table} WHERE {pcol} = {value} LIMIT 10",
        "SELECT {time}, value, is_delete FROM {table} WHERE {pcol} = {value} ORDER BY {time} DESC LIMIT 1",
        "SELECT * FROM {table} WHERE {pcol} IN ({values}) LIMIT 100",
    ),
    "timerange": (
        "SELECT COUNT(*) FROM {table} WHERE {time} >= {t0}",
        "SELECT category, SUM(value) FROM {table} WHERE {time} >= {t0}"
        " GROUP BY category ORDER BY SUM(value) DESC LIMIT 10",
        "SELECT COUNT(*), AVG(value) FROM {table} WHERE " + _RANGE,
        "SELECT DISTINCTCOUNT(key) FROM {table} WHERE {time} >= {t0}",
    ),
}

#: Every template, numbered in order; ``template_id`` in ``queries.parquet`` indexes this tuple.
TEMPLATES: tuple[Template, ...] = tuple(
    Template(i, kind, sql)
    for i, (kind, sql) in enumerate((k, s) for k, shapes in _SHAPES.items() for s in shapes)
)
_BY_KIND: dict[str, tuple[Template, ...]] = {k: tuple(t for t in TEMPLATES if t.kind == k) for k in _SHAPES}


def templates_of(ctx: Context) -> tuple[Template, ...]:
    """The templates of ``ctx``'s queries: the generator's, or (``from_schema``) the same mix written over the
    user's own columns (:func:`~workbench.workload.user_schema.schema_shapes`), numbered in order."""
    if ctx.user is None:
        return TEMPLATES
    shapes = schema_shapes(ctx.user)
    return tuple(Template(i, kind, sql) for i, (kind, sql) in
                 enumerate((k, sql) for k, sqls in shapes.items() for sql in sqls))


def _by_kind(ctx: Context) -> dict[str, tuple[Template, ...]]:
    if ctx.user is None:
        return _BY_KIND
    mine = templates_of(ctx)
    return {k: tuple(t for t in mine if t.kind == k) for k in _SHAPES}


def template_columns(template: Template) -> tuple[str, ...]:
    """The generated columns ``template`` names, the time column included, in the events' order.

    ``{pcol}`` (a lookup's partition column) is left out: it is the table config's own partition
    column, or ``key``. ``SELECT *`` names no column. A user's schema that lacks one of these columns
    describes a table Pinot would refuse the generated query on (:mod:`workbench.scenario.columns`).

    >>> template_columns(TEMPLATES[1])
    ('event_time_ms', 'category')
    """
    sql = template.sql.replace("{time}", TIME_COLUMN)
    return tuple(c for c in EVENTS_SCHEMA.names if re.search(rf"(?<![{{\w]){c}(?![}}\w])", sql))


def kinds_generated(queries: QuerySpec) -> tuple[str, ...]:
    """The query kinds a ``workload.generate.queries`` spec makes at all (a rate of 0 makes none)."""
    made = {"dashboard": queries.dashboards > 0 and queries.viewers > 0, "adhoc": queries.adhoc_qps > 0,
            "lookup": queries.lookup_qps > 0, "timerange": queries.timerange_qps > 0}
    return tuple(kind for kind in _SHAPES if made[kind])


def lookup_column(ctx: Context) -> str:
    """The column point lookups filter on: the table's partition column when it holds keys, else ``key``."""
    if ctx.user is not None:
        return ctx.user.lookup_column or ""
    for column in (*ctx.table_partitions, ctx.stream):
        if column.source in ("key", "key_id"):
            return column.column
    return "key"


def query_window(ctx: Context) -> tuple[int, float]:
    """Start (epoch ms) and length (s) of the query stream: the last ``duration_s`` of the span."""
    duration = min(ctx.spec.queries.duration_s, ctx.span_ms / 1000)
    return ctx.t_end_ms - int(duration * 1000), duration


class _Draw:
    """The random choices queries make, from one seeded generator."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.rng = rng_for(ctx.seed, STREAM_QUERIES)
        width = len(str(ctx.spec.categories - 1))
        self.category_names = [f"c{i:0{width}d}" for i in range(ctx.spec.categories)]
        self.by_kind = _by_kind(ctx)
        self.dimension = filter_dimension(ctx.user) if ctx.user is not None else None

    def template(self, kind: str, count: int, choices: tuple[Template, ...] | None = None) -> list[Template]:
        pool = choices or self.by_kind[kind]
        ranks = zipf_ranks(self.rng.random(count), len(pool), self.ctx.spec.queries.template_zipf_s)
        return [pool[r] for r in ranks.tolist()]

    def category(self, count: int) -> list[str]:
        if self.ctx.user is not None:  # literals of the user's filter dimension, by its own distribution
            u = self.rng.random(count)
            return self.ctx.user.dimension_literals(self.dimension, u) if self.dimension else [""] * count
        ids = category_of(self.rng.integers(0, 1 << 62, count), self.ctx.spec.categories)
        return [self.category_names[i] for i in ids.tolist()]

    def keys(self, now_ms: npt.NDArray[np.int64]) -> list[int]:
        """One key id per entry of ``now_ms``: by the events' popularity, or (lifecycle) born recently."""
        ctx, spec, count = self.ctx, self.ctx.spec, len(now_ms)
        if ctx.mode == "lifecycle":
            life = spec.lifecycle
            assert life is not None
            back = self.rng.random(count) * min(life.max_lifetime_s, ctx.span_ms / 1000)
            born = (now_ms - ctx.t0_ms) / 1000 - back
            share = ctx.profile.share_by(np.clip(born, 0.0, ctx.span_ms / 1000))
            ids = np.minimum(np.floor(share * ctx.keys_total), ctx.keys_total - 1).astype(np.int64)
        elif spec.key_distribution == "zipf":
            ids = scatter_keys(zipf_ranks(self.rng.random(count), spec.keys, spec.zipf_s), spec.keys, ctx.seed)
        else:
            ids = np.minimum(np.floor(self.rng.random(count) * spec.keys), spec.keys - 1).astype(np.int64)
        return [int(k) for k in ids]

    def poisson_times(self, qps: float, duration: float) -> list[float]:
        count = int(self.rng.poisson(qps * duration)) if qps > 0 else 0
        return [float(t) for t in np.sort(self.rng.random(count) * duration)]


def _literal(ctx: Context, column: str, key_id: int) -> str:
    if ctx.user is not None:
        return ctx.user.key_literal(column, key_id)
    return str(key_id) if column == "key_id" else f"'{ctx.spec.key_prefix}{key_id}'"


def _fill(ctx: Context, template: Template, **params: Any) -> str:
    if ctx.user is not None:  # epoch-ms bounds written in the time column's own format and granularity
        times = {"t0": ctx.user.time_literal(params["t0"])} if "t0" in params else {}
        if "t1" in params:
            times.update(t1=ctx.user.time_literal(params["t1"], ceil=True), t1i=ctx.user.time_literal(params["t1"]))
        params = {**params, **times}
    return template.sql.format(table=ctx.table, time=ctx.time_column, **params)


Row = tuple[float, int, str, str, int, int, int]


def _dashboards(ctx: Context, draw: _Draw, start_ms: int, duration: float) -> list[Row]:
    q = ctx.spec.queries
    if q.dashboards == 0 or q.viewers == 0:
        return []
    d = q.dashboards
    panels = draw.rng.integers(q.panels_min, q.panels_max + 1, d)
    refresh = draw.rng.choice(np.asarray(q.refresh_s), d)
    lookback = draw.rng.choice(np.asarray(q.lookbacks_s), d)
    boards = [(draw.template("dashboard", int(p)), draw.category(int(p))) for p in panels.tolist()]
    owner = zipf_ranks(draw.rng.random(q.viewers), d, q.viewers_zipf_s)
    rounding = int(q.time_rounding_s * 1000)
    rows: list[Row] = []
    for viewer, board in enumerate(owner.tolist()):
        period = float(refresh[board])
        templates, categories = boards[board]
        for t in np.arange(draw.rng.random() * period, duration, period).tolist():
            now = start_ms + int(t * 1000)
            t1 = now - now % rounding if rounding else now
            t0 = t1 - int(lookback[board] * 1000)
            for tpl, cat in zip(templates, categories, strict=True):
                sql = _fill(ctx, tpl, t0=t0, t1=t1, category=cat)
                rows.append((t, now, sql, "dashboard", tpl.id, board, viewer))
    return rows


def _adhoc(ctx: Context, draw: _Draw, start_ms: int, duration: float) -> list[Row]:
    if not draw.by_kind["adhoc"]:
        return []
    times = draw.poisson_times(ctx.spec.queries.adhoc_qps, duration)
    templates = draw.template("adhoc", len(times))
    cats, cats2 = draw.category(len(times)), draw.category(len(times))
    lengths = draw.rng.choice(np.asarray(ctx.spec.queries.lookbacks_s), len(times)) * 1000
    rows: list[Row] = []
    for i, t in enumerate(times):
        now = start_ms + int(t * 1000)
        t1 = ctx.t0_ms + int(draw.rng.random() * (now - ctx.t0_ms))
        t0 = max(ctx.t0_ms, t1 - int(lengths[i]))
        threshold = round(float(draw.rng.lognormal(math.log(30.0), 0.5)), 2)
        sql = _fill(ctx, templates[i], t0=t0, t1=t1, category=cats[i], category2=cats2[i], threshold=threshold)
        rows.append((t, now, sql, "adhoc", templates[i].id, -1, -1))
    return rows


def _lookups(ctx: Context, draw: _Draw, start_ms: int, duration: float) -> list[Row]:
    q = ctx.spec.queries
    column = lookup_column(ctx)
    shapes = draw.by_kind["lookup"]
    if len(shapes) < 3:  # the user's table has no key column to look up
        return []
    times = draw.poisson_times(q.lookup_qps, duration)
    use_in = draw.rng.random(len(times)) < q.lookup_in_fraction
    point = draw.template("lookup", len(times), shapes[:2])
    sizes = np.where(use_in, draw.rng.integers(2, 6, len(times)), 1)
    nows = start_ms + (np.asarray(times) * 1000).astype(np.int64)
    keys = [_literal(ctx, column, k) for k in draw.keys(np.repeat(nows, sizes))]
    ends = np.cumsum(sizes).tolist()
    rows: list[Row] = []
    for i, t in enumerate(times):
        mine = keys[ends[i] - int(sizes[i]):ends[i]]
        tpl = shapes[2] if use_in[i] else point[i]
        sql = _fill(ctx, tpl, pcol=column, value=mine[0], values=", ".join(mine))
        rows.append((t, int(nows[i]), sql, "lookup", tpl.id, -1, -1))
    return rows


def _timeranges(ctx: Context, draw: _Draw, start_ms: int, duration: float) -> list[Row]:
    times = draw.poisson_times(ctx.spec.queries.timerange_qps, duration)
    templates = draw.template("timerange", len(times))
    lookback = draw.rng.choice(np.asarray(ctx.spec.queries.lookbacks_s), len(times)) * 1000
    rows: list[Row] = []
    for i, t in enumerate(times):
        now = start_ms + int(t * 1000)
        t1 = now - now % 1000
        sql = _fill(ctx, templates[i], t0=t1 - int(lookback[i]), t1=t1)
        rows.append((t, now, sql, "timerange", templates[i].id, -1, -1))
    return rows


def generate_queries(ctx: Context) -> pa.Table:
    """The query stream of ``ctx`` (schema in ``docs/data.md``), sorted by arrival."""
    draw = _Draw(ctx)
    start_ms, duration = query_window(ctx)
    rows = [r for make in (_dashboards, _adhoc, _lookups, _timeranges) for r in make(ctx, draw, start_ms, duration)]
    order = sorted(range(len(rows)), key=lambda i: (rows[i][0], i))
    columns: dict[str, npt.NDArray[Any] | list[Any]] = {
        "query_id": np.arange(len(rows), dtype=np.int64),
        "arrival_s": np.asarray([rows[i][0] for i in order], dtype=np.float64),
        "now_ms": np.asarray([rows[i][1] for i in order], dtype=np.int64),
        "sql": [rows[i][2] for i in order],
        "kind": [rows[i][3] for i in order],
        "template_id": np.asarray([rows[i][4] for i in order], dtype=np.int32),
        "dashboard_id": np.asarray([rows[i][5] for i in order], dtype=np.int32),
        "viewer_id": np.asarray([rows[i][6] for i in order], dtype=np.int32),
    }
    return pa.table(columns, schema=QUERIES_SCHEMA)
