"""The property: with caches on, every answer equals the answer with caches off, under table churn.

A seeded loop plays a dashboard workload (a few query templates over sliding time windows, repeated)
against a table whose segments are added, replaced with new rows under the same name, and deleted,
while simulated time advances. Each query runs on three stacks: no cache, server cache only, and
broker + server caches. The caches must hit (else the property is vacuous), and a run that skips the
invalidation call on replace must give a wrong answer (else the test could not catch one).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from workbench.pinot.cache.base import ResultCache
from workbench.pinot.cache.broker import BrokerResultCache
from workbench.pinot.cache.columns import DataType
from workbench.pinot.cache.config import BrokerCacheConfig, ServerCacheConfig
from workbench.pinot.cache.keys import schema_of
from workbench.pinot.cache.server import ServerSegmentCache
from workbench.pinot.cache.sizing import ResultValue
from workbench.pinot.sql import parse_query
from workbench.pinot.sql.evaluate import BrokerResponse, execute
from workbench.pinot.sql.query import Query

TABLE = "t_OFFLINE"
DAY = 1000
SCHEMA = schema_of({"ts": DataType.LONG, "city": DataType.STRING, "dev": DataType.STRING,
                    "clicks": DataType.LONG, "price": DataType.DOUBLE})
CITIES, DEVICES = np.array(["ams", "ber", "cph", "dub"]), np.array(["ios", "web", "tv"])
TEMPLATES = [
    "SELECT COUNT(*) FROM t",
    "SELECT COUNT(*), SUM(clicks), AVG(price) FROM t WHERE ts >= {lo}",
    "SELECT MIN(price), MAX(clicks) FROM t WHERE city IN ('ams', 'ber') AND ts BETWEEN {lo} AND {hi}",
    "SELECT city, COUNT(*), SUM(clicks) FROM t WHERE ts >= {lo} GROUP BY city",
    "SELECT city, dev, AVG(clicks), MAX(price) FROM t WHERE NOT dev = 'tv' GROUP BY city, dev LIMIT 5",
    "SELECT dev, city, COUNT(*) FROM t WHERE clicks > 50 OR city <> 'ams' GROUP BY dev, city",
    "SELECT city, clicks FROM t WHERE dev NOT IN ('tv') AND ts < {hi} LIMIT 7",
    "SELECT * FROM t WHERE clicks BETWEEN 10 AND 30 LIMIT 5",
    "SELECT SUM(clicks), MIN(clicks) FROM t WHERE price > 12.5 AND ts >= {lo} AND ts < {hi}",
]


def day_rows(rng: np.random.Generator, day: int) -> pd.DataFrame:
    """One day-long segment's rows, time-sorted like a real offline segment."""
    n = int(rng.integers(20, 60))
    return pd.DataFrame({
        "ts": np.sort(rng.integers(day * DAY, (day + 1) * DAY, n)),
        "city": rng.choice(CITIES, n), "dev": rng.choice(DEVICES, n),
        "clicks": rng.integers(0, 100, n), "price": np.round(rng.uniform(0, 25, n), 2),
    })


def span(frame: pd.DataFrame) -> tuple[int, int]:
    return int(frame.ts.min()), int(frame.ts.max())


@dataclass
class Table:
    """The table's segments and the caches that must hear of every change to them."""

    caches: list[ResultCache[ResultValue]]
    skip_replace_invalidation: bool = False
    segments: dict[str, pd.DataFrame] = field(default_factory=dict)

    def add(self, name: str, frame: pd.DataFrame) -> None:
        self.segments[name] = frame
        for cache in self.caches:
            cache.on_segment_added(TABLE, name, time_range=span(frame))

    def replace(self, name: str, frame: pd.DataFrame) -> None:
        self.segments[name] = frame
        if not self.skip_replace_invalidation:
            for cache in self.caches:
                cache.on_segment_replaced(TABLE, name, time_range=span(frame))

    def delete(self, name: str) -> None:
        del self.segments[name]
        for cache in self.caches:
            cache.on_segment_deleted(TABLE, name)


def make_caches() -> tuple[BrokerResultCache, ServerSegmentCache, ServerSegmentCache]:
    broker = BrokerResultCache(BrokerCacheConfig(enabled=True))
    server, server_only = (ServerSegmentCache(ServerCacheConfig(enabled=True)) for _ in range(2))
    broker.add_table(TABLE, schema=SCHEMA, time_column="ts")
    for cache in (server, server_only):
        cache.add_table(TABLE, schema=SCHEMA, time_column="ts")
    return broker, server, server_only


def churn(rng: np.random.Generator, table: Table, next_day: int) -> int:
    """One random lifecycle event; returns the next unused day."""
    names = sorted(table.segments)
    event = rng.choice(["add", "replace", "delete"], p=[0.35, 0.5, 0.15])
    if event == "add" or len(names) < 3:
        table.add(f"t_{next_day}", day_rows(rng, next_day))
        return next_day + 1
    name = names[int(rng.integers(len(names)))]
    if event == "replace":
        table.replace(name, day_rows(rng, int(name.split("_")[1])))
    else:
        table.delete(name)
    return next_day


def pick_query(rng: np.random.Generator, next_day: int) -> Query:
    """A dashboard query: a template over a window ending at the newest data, in a few sizes."""
    template = TEMPLATES[int(rng.integers(len(TEMPLATES)))]
    hi = next_day * DAY - int(rng.choice([0, DAY // 2]))
    lo = hi - int(rng.choice([DAY, 2 * DAY, 3 * DAY]))
    return parse_query(template.format(lo=lo, hi=hi))


@dataclass
class Outcome:
    queries: int
    wrong: int
    broker: BrokerResultCache
    server: ServerSegmentCache
    server_only: ServerSegmentCache


def play(seed: int, steps: int = 150, *, skip_replace_invalidation: bool = False) -> Outcome:
    """Run the workload; every answer is checked against the cache-free one."""
    rng = np.random.default_rng(seed)
    broker, server, server_only = make_caches()
    table = Table([broker, server, server_only], skip_replace_invalidation)
    next_day = 0
    for _ in range(4):
        next_day = churn(rng, table, next_day)
    wrong = 0
    for step in range(steps):
        now_ms = step * 1000.0
        if rng.random() < 0.15:
            next_day = churn(rng, table, next_day)
        query = pick_query(rng, next_day)
        truth = execute(query, table.segments, table=TABLE)
        answers: list[BrokerResponse] = [
            execute(query, table.segments, server_cache=server_only, now_ms=now_ms, table=TABLE),
            execute(query, table.segments, broker_cache=broker, server_cache=server, now_ms=now_ms, table=TABLE),
        ]
        wrong += sum(answer != truth for answer in answers)
    return Outcome(steps, wrong, broker, server, server_only)


def test_answers_with_caches_equal_answers_without_under_churn() -> None:
    for seed in (1, 2):
        outcome = play(seed)
        assert outcome.wrong == 0
        broker, server, alone = (c.metrics() for c in (outcome.broker, outcome.server, outcome.server_only))
        assert broker.hits > 0 and server.hits > 0 and alone.hits > 0
        assert broker.invalidations > 0 and alone.invalidations > 0  # churn did purge entries
        assert broker.size_bytes > 0 and alone.size_bytes > 0


def test_skipping_the_replace_invalidation_yields_wrong_answers() -> None:
    assert play(1, skip_replace_invalidation=True).wrong > 0
