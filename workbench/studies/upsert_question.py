"""The upsert question in one step: "N keys, metadataTTL T, Q queries/s, p99 under S: how many servers, how much heap?"

Everything is stated at table level (total keys, key lifetime, new keys a day, updates per second,
``metadataTTL``) and turned into what one server holds by Pinot's own placement: an upsert table keeps
every segment of a stream partition on the servers consuming it (``StrictRealtimeSegmentAssignment``),
so a server holds the whole primary-key map of each partition its CONSUMING instance partitions give it
(:func:`~workbench.pinot.upsert.replay.hosting_from_assignment`). Keys are spread evenly over partitions
(the stream's partitioner hashes the key), so

    keys per server = keys in the map / partitions x partitions the server hosts.

Keys in the map follow the closed form of :mod:`workbench.analysis.upsert_day`: without TTL every key;
with a TTL ``T`` and ``new_keys_per_day`` the keys of the last ``lifetime + T + one segment``. Bytes per key
are the JVM layout model's (:mod:`workbench.pinot.heap`) for the schema's primary-key types and the
table's ``hashFunction``; a STRING or BYTES key kept unhashed is as long as its schema field's
``maxLength``, or the ``key_length`` the question states. The update rate that drives G1's
remembered-set work is the question's; when it is not stated it is scaled from the generated sample
(updates per key per second, times the stated keys) and said so in :attr:`UpsertAnswer.notes`, since a
sample of 20k keys gives a table-wide rate 10,000 times too small.

Each candidate server count (and heap) is then simulated with the busiest server's upsert heap and
update rate (``cluster.gc.live_heap`` + map bytes, ``cluster.gc.update_rate``), and judged by the sizing
report's own rule (:func:`workbench.report.judging.slo_verdicts`); the answer is the fewest servers, then
the smallest heap, that meets the SLO.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from workbench.analysis.readings import Reading
from workbench.errors import InputError
from workbench.io import summary as S
from workbench.pinot.heap import upsert_bytes_per_key
from workbench.pinot.segment import time_unit_to_millis
from workbench.scenario import Scenario

__all__ = ["UpsertAnswer", "UpsertQuestion", "answer_upsert_question", "key_layout", "keys_per_server",
           "map_keys", "stream_partitions", "upsert_sweep"]

_VARIABLE = ("STRING", "BYTES", "JSON")
_DAY_S = 86_400.0


@dataclass(frozen=True)
class UpsertQuestion:
    """The upsert question at table level.

    Attributes
    ----------
    keys
        Primary keys of the table (one replica's count): the map's size without TTL, its bound with one.
    ttl_s
        ``metadataTTL`` in seconds (``None``: the table config's, read in the comparison column's unit as
        milliseconds; 0: off).
    update_rate
        Records per second that update an existing key, whole table (``None``: scaled from the sample).
    new_keys_per_day
        New keys a day, whole table; with a TTL it decides how many keys the TTL keeps (``None``: all
        ``keys`` are taken to be within the TTL).
    key_lifetime_s
        Seconds a key keeps receiving updates after it appears.
    key_length
        Characters (STRING) or bytes (BYTES) of a variable-width key column the schema gives no
        ``maxLength`` for.
    hash_function
        ``upsertConfig.hashFunction`` (``None``: the table config's).
    partitions
        Stream partitions (``None``: the scenario's ``workload.generate.partitions``, else its
        ``segmentPartitionConfig``).
    """

    keys: float
    ttl_s: float | None = None
    update_rate: float | None = None
    new_keys_per_day: float | None = None
    key_lifetime_s: float = 0.0
    key_length: int | None = None
    hash_function: str | None = None
    partitions: int | None = None

    def __post_init__(self) -> None:
        for name in ("keys", "ttl_s", "update_rate", "new_keys_per_day", "key_lifetime_s"):
            value = getattr(self, name)
            if value is not None and (not math.isfinite(value) or value < 0):
                raise InputError(name, f"must be a non-negative number, got {value!r}")
        if self.keys <= 0:
            raise InputError("keys", f"must be positive (the table's primary keys, e.g. 200M), got {self.keys!r}")
        if self.partitions is not None and self.partitions < 1:
            raise InputError("partitions", f"must be a positive integer, got {self.partitions!r}")


@dataclass(frozen=True)
class UpsertAnswer:
    """The answer: per candidate shape its heap and verdict, the pick, and what the numbers rest on."""

    question: UpsertQuestion
    partitions: int
    replication: int
    map_keys: float
    bytes_per_key: float
    update_rate: float
    #: One row per server count: ``servers``, ``max_keys_per_server``, ``keys_per_server`` (per server),
    #: ``partitions_per_server``, ``idle_servers``, ``update_rate_per_server``, ``upsert_bytes``,
    #: ``live_bytes``, ``heap_for_ihop_bytes`` (the smallest heap keeping it under G1's IHOP), and per
    #: heap ``heap``, ``heap_bytes``, ``ihop_bytes``, ``under_ihop``, ``p99_ms``, ``p99_high_ms``,
    #: ``meets_slo`` and ``overrides`` (the candidate's scenario overrides, as simulated).
    table: pd.DataFrame
    servers: int | None
    heap: str | None
    slo_p99_ms: float | None
    notes: tuple[str, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        """What ``upsert.json`` holds."""
        q = self.question
        return {"question": {k: getattr(q, k) for k in q.__dataclass_fields__},
                "partitions": self.partitions, "replication": self.replication, "map_keys": self.map_keys,
                "bytes_per_key": self.bytes_per_key, "update_rate": self.update_rate,
                "servers": self.servers, "heap": self.heap, "slo_p99_ms": self.slo_p99_ms,
                "notes": list(self.notes), "candidates": [{k: _plain(v) for k, v in row.items()}
                                                          for row in self.table.to_dict(orient="records")]}

    def reading(self) -> Reading:
        """The answer to the upsert question, and per server count the busiest server's keys and verdict."""
        rows = []
        for r in self.table.to_dict(orient="records"):
            p99 = float(r["p99_ms"])
            verdict = "out of memory" if not math.isfinite(p99) else \
                ("meets" if r["meets_slo"] is True else "fails" if r["meets_slo"] is False else "not run")
            rows.append({"servers": int(r["servers"]), "heap": str(r["heap"]),
                         "max_keys_per_server": float(r["max_keys_per_server"]),
                         "partitions_per_server": float(r["partitions_per_server"]),
                         "live_bytes": float(r["live_bytes"]), "heap_bytes": float(r["heap_bytes"]),
                         "under_ihop": bool(r["under_ihop"]), "verdict": verdict,
                         "p99_ms": p99 if math.isfinite(p99) else None})
        facts: dict[str, Any] = {"servers": self.servers, "heap": self.heap, "map_keys": self.map_keys,
                                 "partitions": self.partitions, "replication": self.replication,
                                 "bytes_per_key": self.bytes_per_key, "slo_p99_ms": self.slo_p99_ms,
                                 "candidates": rows, "notes": list(self.notes)}
        text = (f"{self.map_keys:,.0f} keys over {self.partitions} partitions x {self.replication} replicas at "
                f"{self.bytes_per_key:.1f} B a key: {self.headline()}.")
        if self.servers is not None:
            chosen = next(r for r in rows if r["servers"] == self.servers and r["heap"] == self.heap)
            past = ", so G1 runs concurrent cycles back to back (see the IHOP note above)"
            text += (" Its live heap is " + ("under G1's IHOP" if chosen["under_ihop"] else f"past G1's IHOP{past}")
                     + ".")
        for note in self.notes:
            text += f" Note: {note}."
        return Reading(text, facts)

    def headline(self) -> str:
        """One line: the answer, or that no candidate meets the SLO."""
        if self.servers is None:
            return (f"no candidate meets p99 <= {self.slo_p99_ms:g} ms: try more servers or a larger heap"
                    if self.slo_p99_ms is not None else "no candidate ran without failures")
        row = self.table[(self.table["servers"] == self.servers) & (self.table["heap"] == self.heap)].iloc[0]
        return (f"{self.servers} servers with {self.heap} heap: {row['max_keys_per_server']:,.0f} keys and "
                f"{row['upsert_bytes'] / 2**30:.2f} GiB of upsert map on the busiest server, p99 "
                f"{row['p99_ms']:.1f} ms (interval to {row['p99_high_ms']:.1f}) against {self.slo_p99_ms:g} ms")


def _plain(value: Any) -> Any:
    """A JSON value: NaN and infinity (a candidate not run, or out of memory) become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value.item() if hasattr(value, "item") else value


def stream_partitions(sc: Scenario, given: int | None = None) -> int:
    """Stream partitions of the table: ``given``, the generated workload's, or the table's partition config."""
    if given is not None:
        return int(given)
    if sc.workload.generate is not None:
        return int(sc.workload.generate.partitions)
    configs = list(sc.table.column_partition_map.values())
    if configs:
        return int(configs[0].num_partitions)
    raise InputError("partitions", "the scenario states no stream partition count (workload.generate.partitions or "
                                   "segmentPartitionConfig); give --partitions")


def map_keys(q: UpsertQuestion, ttl_s: float, segment_s: float) -> float:
    """Keys in the whole table's maps (one replica) at steady state under ``ttl_s``.

    A key stays in the map for its lifetime, then the TTL, then up to one segment until the sweep at the
    next segment's start: 50M a day x (1 h + 24 h + 1 h) / 24 h = 54,166,667 keys.

    >>> round(map_keys(UpsertQuestion(keys=200e6, new_keys_per_day=50e6, key_lifetime_s=3600), 86_400, 3600))
    54166667
    >>> map_keys(UpsertQuestion(keys=200e6), 86_400, 3600)
    200000000.0
    """
    if ttl_s <= 0 or q.new_keys_per_day is None:
        return float(q.keys)
    return float(min(q.keys, q.new_keys_per_day / _DAY_S * (q.key_lifetime_s + ttl_s + segment_s)))


def keys_per_server(sc: Scenario, servers: int, partitions: int, keys: float) -> dict[str, float]:
    """Keys each of ``servers`` servers holds: its hosted partitions (Pinot's CONSUMING instance partitions,
    every replica holding the partition's whole map) x keys per partition. Servers hosting nothing hold 0."""
    from workbench.pinot.assignment import Instance, server_tag
    from workbench.pinot.rebalance import table_instance_partitions
    from workbench.pinot.upsert.replay import hosting_from_assignment

    table = sc.table
    if table.replication > servers:
        raise InputError("servers", f"{servers} servers cannot hold {table.replication} replicas (segmentsConfig)")
    names = tuple(f"Server_{i}" for i in range(servers))
    # every server carries the table's CONSUMING and COMPLETED tags, as the simulator's layout gives them
    tags = tuple(dict.fromkeys(server_tag(table, k) for k in ("CONSUMING", "COMPLETED")))
    instances = [Instance(name, tags=tags, pools=dict.fromkeys(tags, 0)) for name in names]
    ips = table_instance_partitions(table, instances)["CONSUMING"]
    hosting = hosting_from_assignment(partitions, ips, table.replication)
    return {s: len(hosting.get(s, ())) * keys / partitions for s in names}


def key_layout(sc: Scenario, q: UpsertQuestion) -> dict[str, Any]:
    """:func:`~workbench.pinot.heap.entry_layout`'s arguments for the table's primary key.

    Types from the schema's ``primaryKeyColumns`` (one LONG column without a schema); the hash function
    from the question or the table; a STRING/BYTES/JSON column kept unhashed is its field's ``maxLength``
    long, else the question's ``key_length`` (one clear error when neither says)."""
    upsert = sc.table.upsert
    hash_function = (q.hash_function or (upsert.hash_function.value if upsert is not None else "NONE")).upper()
    schema = sc.schema
    columns = list(schema.primary_key_columns) if schema is not None else []
    types = schema.data_types if schema is not None else {}
    key_types = [types.get(c, "STRING") for c in columns] or ["LONG"]
    compared = upsert.comparison_columns_or(sc.table.time_column_name) if upsert is not None else ()
    comparison = [types.get(c, "LONG") for c in compared] or ["LONG"]
    args: dict[str, Any] = {"primary_key_types": key_types, "hash_function": hash_function,
                            "comparison_type": comparison[0] if len(comparison) == 1 else comparison}
    variable = [c for c, t in zip(columns, key_types, strict=True) if t in _VARIABLE]
    if hash_function == "NONE" and variable:
        bounds = {f.name: f.max_length for f in schema.fields} if schema is not None else {}
        lengths = [bounds.get(c) or q.key_length for c in variable]
        if any(n is None for n in lengths):
            raise InputError("key_length", f"the primary-key column(s) {variable} are variable-width and kept unhashed "
                                           "(hashFunction NONE): give their length (--key-length) or a maxLength "
                                           "in the schema")
        args["avg_string_length"] = float(max(n for n in lengths if n is not None))
    return args


def _ttl_s(sc: Scenario, q: UpsertQuestion) -> tuple[float, str | None]:
    """``metadataTTL`` in seconds: the question's, else the table's in its comparison column's units (read from
    the schema's date-time format; milliseconds, with a note, when the schema does not say)."""
    if q.ttl_s is not None:
        return float(q.ttl_s), None
    upsert = sc.table.upsert
    ttl = max(0.0, upsert.metadata_ttl) if upsert is not None else 0.0
    if ttl == 0:
        return 0.0, None
    from workbench.pinot.pruning.timeformat import DateTimeFormat

    columns = upsert.comparison_columns_or(sc.table.time_column_name) if upsert is not None else ()
    field = sc.schema.field(columns[0]) if sc.schema is not None and len(columns) == 1 else None
    try:
        fmt = DateTimeFormat.parse(field.format) if field is not None and field.format else None
    except (InputError, ValueError):
        fmt = None
    if fmt is not None and fmt.kind == "TIMESTAMP":
        return ttl / 1000.0, None
    if fmt is None or fmt.kind != "EPOCH":
        return ttl / 1000.0, (f"metadataTTL {ttl:g} read as milliseconds: the schema gives no epoch format for the "
                              "comparison column; state --ttl")
    return ttl * fmt.size * time_unit_to_millis(1, fmt.unit) / 1000.0, None


def _update_rate(sc: Scenario, q: UpsertQuestion, keys: float) -> tuple[float, str | None]:
    """The table's updates per second: stated, or scaled from the generated sample (with a note)."""
    if q.update_rate is not None:
        return float(q.update_rate), None
    gen = sc.workload.generate
    if gen is None:
        raise InputError("update_rate", "the scenario generates no sample to scale an update rate from: give "
                                        "--update-rate (updates of existing keys per second, whole table)")
    per_key = max(0, gen.events - gen.keys) / gen.keys / gen.span_s
    rate = per_key * keys
    return rate, (f"UPDATE RATE SCALED FROM THE SAMPLE: the generated sample has {gen.keys:,} keys and "
                  f"{max(0, gen.events - gen.keys) / gen.span_s:,.1f} updates/s ({per_key:.3g} per key per s); "
                  f"at {keys:,.0f} keys that is {rate:,.0f} updates/s. State --update-rate if you know it")


def answer_upsert_question(sc: Scenario, q: UpsertQuestion, *, servers: Sequence[int],
                           heaps: Sequence[str] = (), qps: float | None = None, p99_ms: float | None = None,
                           seed: int | None = None, duration_s: float | None = None,
                           run: bool = True) -> UpsertAnswer:
    """Answer ``q`` for ``sc``'s table over the candidate ``servers`` (and ``heaps``; none: the scenario's).

    ``duration_s`` shortens (or lengthens) each simulation. With ``run`` False only the heap arithmetic is
    done (no simulation; ``meets_slo`` is then NaN).
    """
    from workbench.report.judging import Judging, slo_verdicts
    from workbench.runs import run_scenario
    from workbench.scenario.variants import question_overrides
    from workbench.units import parse_size

    if not servers:
        raise InputError("servers", "give at least one server count to consider")
    partitions = stream_partitions(sc, q.partitions)
    gen = sc.workload.generate
    segment_s = float(gen.segment_time_s) if gen is not None and gen.segment_time_s is not None else 3600.0
    ttl, ttl_note = _ttl_s(sc, q)
    keys = map_keys(q, ttl, segment_s)
    layout = key_layout(sc, q)
    per_key = upsert_bytes_per_key(num_keys=max(1, int(keys / partitions)), **layout)
    rate, note = _update_rate(sc, q, q.keys)
    notes = [n for n in (ttl_note, note) if n]
    if q.new_keys_per_day is None and ttl > 0:
        notes.append(f"all {q.keys:,.0f} keys are taken to be within metadataTTL ({ttl / 3600:g} h): give "
                     "--new-keys-per-day for the TTL to bound the map")
    slo = p99_ms if p99_ms is not None else sc.slo.p99_ms
    heap_list = list(heaps) or [f"{sc.cluster.server.heap / 2**30:g}G"]
    ihop = sc.cluster.gc.ihop
    static = float(sc.cluster.gc.live_heap)
    question = question_overrides(sc, qps=qps, slo_p99_ms=slo, duration_s=duration_s)
    rows = []
    for n in servers:
        held = keys_per_server(sc, int(n), partitions, keys)
        busiest = max(held.values())
        hosted = busiest * partitions / keys
        server_rate = rate / partitions * hosted
        upsert_bytes = busiest * per_key
        base = {"servers": int(n), "max_keys_per_server": busiest, "keys_per_server": list(held.values()),
                "partitions_per_server": hosted, "idle_servers": sum(v == 0 for v in held.values()),
                "update_rate_per_server": server_rate, "upsert_bytes": upsert_bytes,
                "live_bytes": static + upsert_bytes,
                # the smallest -Xmx that keeps this live heap under G1's IHOP (no back-to-back marking)
                "heap_for_ihop_bytes": (static + upsert_bytes) / ihop}
        fixed: dict[str, Any] = {"cluster.gc.upsert_keys": 0, "cluster.gc.live_heap": int(static + upsert_bytes),
                                 "cluster.gc.update_rate": server_rate, **question}
        for heap in heap_list:
            heap_bytes = parse_size(heap)
            point = {"cluster.servers": int(n), "cluster.server.heap": heap, **fixed}
            row = {**base, "heap": heap, "heap_bytes": heap_bytes, "ihop_bytes": ihop * heap_bytes,
                   "under_ihop": static + upsert_bytes < ihop * heap_bytes,
                   "p99_ms": math.nan, "p99_high_ms": math.nan, "meets_slo": math.nan, "overrides": point}
            if static + upsert_bytes >= heap_bytes:
                row.update(meets_slo=False, p99_ms=math.inf, p99_high_ms=math.inf)  # OutOfMemoryError: nothing to run
            elif run:
                record = run_scenario(sc, None, overrides=point, seed=seed)
                cols = record.summary.columns()
                frame = pd.DataFrame([cols])
                meets, _ = slo_verdicts(frame, Judging(slo))
                row.update(p99_ms=float(cols[S.P99]), p99_high_ms=float(cols.get(S.P99_HIGH, cols[S.P99])),
                           meets_slo=bool(meets.iloc[0]))
            rows.append(row)
    table = pd.DataFrame(rows)
    if (table["idle_servers"] > 0).any():
        idle = table.loc[table["idle_servers"] > 0, "servers"].tolist()
        notes.append(f"with {idle} servers some servers host no partition ({partitions} partitions x "
                     f"{sc.table.replication} replicas): they hold no keys and answer no query")
    uneven = table[table["keys_per_server"].map(lambda v: max(v) != min(v))]["servers"].unique().tolist()
    if uneven:
        notes.append(f"with {uneven} servers partitions do not divide evenly: the busiest server's keys are simulated "
                     "on every server")
    pick = table[table["meets_slo"] == True].sort_values(["servers", "heap_bytes"])  # noqa: E712
    chosen = pick.iloc[0] if len(pick) else None
    return UpsertAnswer(q, partitions, sc.table.replication, keys, per_key, rate, table,
                        int(chosen["servers"]) if chosen is not None else None,
                        str(chosen["heap"]) if chosen is not None else None, slo, tuple(notes))



def upsert_sweep(answer: UpsertAnswer, base: str, name: str = "upsert") -> dict[str, Any]:
    """The candidates of ``answer`` as a sweep (``workbench sweep``; the sizing report reads its output).

    One point per candidate that fits its heap, with the overrides it was (or would be) simulated with:
    server count, heap, the busiest server's live heap (``cluster.gc.live_heap``: the static part plus its
    upsert map) and update rate. ``base`` is the scenario file the answer was computed for.
    """
    fits = answer.table[answer.table["live_bytes"] < answer.table["heap_bytes"]]
    if fits.empty:
        raise InputError("heaps", "no candidate's live heap fits its heap: consider larger heaps or more servers")
    return {"name": name, "base": base, "points": [dict(p) for p in fits["overrides"]]}
