"""Upsert heap at the user's scale: keys in the primary-key map over days, heap per server, GC it causes.

Replaying every record through Pinot's metadata manager (:mod:`workbench.pinot.upsert`) is exact but
costs a second per million records; a table with 50 million new keys a day needs the closed form it
obeys instead. For keys that are updated for ``active_s`` seconds after they appear and never again
(the TTL design's trip example), arriving at ``r`` new keys per second in a partition:

* without ``metadataTTL`` the map keeps every key ever seen: ``N(t) = r t``;
* with a TTL of ``T`` seconds, Pinot removes at each new consuming segment the keys whose comparison
  value is older than the largest seen minus ``T``. A key's last value is ``active_s`` after its birth,
  so at the commit of a segment that consumed for ``S`` seconds the map holds
  ``N(t) = r min(t, active_s + T + S)``: it rises for ``active_s + T + S`` and stays there.

``tests/pinot/upsert/test_upsert_day.py`` replays such a stream through the metadata manager and checks the
form commit by commit. Heap per server multiplies the keys of the partitions a server hosts by the JVM
object-layout model's bytes per key (:func:`workbench.pinot.heap.upsert_bytes_per_key`); the GC it
causes comes from the G1 model fitted to real logs (:mod:`workbench.jvm`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from workbench.errors import InputError
from workbench.jvm import G1Params, LiveHeap, g1_pauses_at_constant_rate
from workbench.pinot.heap import pinot_estimate, upsert_bytes_per_key

__all__ = ["UpsertLoad", "gc_at", "heap_timeline", "keys_in_map"]

_DAY_S = 86_400.0


def keys_in_map(times_s: np.ndarray | Sequence[float], new_keys_per_s: float, active_s: float, ttl_s: float,
                segment_s: float) -> np.ndarray:
    """Keys in one partition's map at segment commits ``times_s`` (seconds since the table started).

    ``ttl_s`` 0 means no ``metadataTTL``.

    >>> keys_in_map([3600, 7200, 36000], 10.0, 1800.0, 0.0, 3600.0).tolist()
    [36000.0, 72000.0, 360000.0]
    >>> keys_in_map([3600, 7200, 36000], 10.0, 1800.0, 3600.0, 3600.0).tolist()
    [36000.0, 72000.0, 90000.0]
    """
    t = np.asarray(times_s, dtype=float)
    horizon = t if ttl_s <= 0 else np.minimum(t, active_s + ttl_s + segment_s)
    out: np.ndarray = new_keys_per_s * horizon
    return out


@dataclass(frozen=True)
class UpsertLoad:
    """An upsert table's key pattern and where it lives.

    Attributes
    ----------
    new_keys_per_day
        New primary keys per day, whole table.
    active_s
        Seconds a key keeps receiving updates after it first appears.
    partitions
        Stream partitions (one upsert map each per replica).
    servers
        Servers hosting the table.
    replication
        Replicas of each partition.
    segment_s
        Seconds a consuming segment consumes before it commits (TTL removal runs at each new one).
    primary_key_types
        Pinot types of the primary-key columns.
    hash_function
        ``upsertConfig.hashFunction``.
    key_length
        Characters (STRING) or bytes (BYTES) of a variable-width key column: its schema field's
        ``maxLength``, or a stated length. Needed for such a key with ``hashFunction`` NONE (the key's
        objects) and for Pinot's estimate with any hash (its ``primaryKeySize``).
    """

    new_keys_per_day: float
    active_s: float
    partitions: int
    servers: int
    replication: int = 1
    segment_s: float = 3600.0
    primary_key_types: tuple[str, ...] = ("LONG",)
    hash_function: str = "NONE"
    key_length: int | None = None

    @property
    def partitions_per_server(self) -> float:
        """Partition maps a server holds (replicas spread evenly)."""
        return self.partitions * self.replication / self.servers

    def per_partition_rate(self) -> float:
        """New keys per second in one partition."""
        return self.new_keys_per_day / _DAY_S / self.partitions


_VARIABLE = ("STRING", "BYTES", "JSON", "BIG_DECIMAL")


def _pinot_key_size(load: UpsertLoad) -> int:
    """``primaryKeySize`` for Pinot's estimator: the stated length for a variable-width key (Pinot then takes
    it as the whole key's bytes), else -1 (Pinot sums its fixed type sizes + 32)."""
    if not any(t.upper() in _VARIABLE for t in load.primary_key_types):
        return -1
    if load.key_length is None:
        raise InputError("key_length", f"the primary key {list(load.primary_key_types)} has a variable-width column: "
                                       "give its length (the schema field's maxLength)")
    return int(load.key_length)


def heap_timeline(load: UpsertLoad, ttl_s: float, hours: float, static_bytes: float = 0.0,
                  step_h: float = 1.0) -> pd.DataFrame:
    """Keys and heap per server every ``step_h`` hours for ``hours`` hours, with and beside Pinot's estimate.

    Columns: ``hour``, ``ttl_h``, ``keys_per_partition``, ``keys_per_server``, ``bytes_per_key``,
    ``map_bytes`` (per server), ``live_bytes`` (``static_bytes`` + map, per server) and
    ``pinot_estimate_bytes`` (per server, from Pinot's ``estimateHeapUsage`` arithmetic).
    """
    hour = np.arange(step_h, hours + 1e-9, step_h)
    keys = keys_in_map(hour * 3600.0, load.per_partition_rate(), load.active_s, ttl_s, load.segment_s)
    rows = []
    for h, n in zip(hour, keys, strict=True):
        per_key = upsert_bytes_per_key(list(load.primary_key_types), load.hash_function, num_keys=max(1, int(n)),
                                       avg_string_length=load.key_length)
        pinot = pinot_estimate(list(load.primary_key_types), max(1, int(n)), ["LONG"],
                               primary_key_size=_pinot_key_size(load))
        server_keys = n * load.partitions_per_server
        rows.append({"hour": float(h), "ttl_h": ttl_s / 3600.0, "keys_per_partition": float(n),
                     "keys_per_server": float(server_keys), "bytes_per_key": float(per_key),
                     "map_bytes": float(server_keys * per_key),
                     "live_bytes": float(static_bytes + server_keys * per_key),
                     "pinot_estimate_bytes": float((pinot["bytesPerKey"] + pinot["bytesPerValue"]) * server_keys)})
    return pd.DataFrame(rows)


def gc_at(live_bytes_static: float, keys: float, bytes_per_key: float, heap_bytes: float, *,
          allocation_rate: float, update_rate: float = 0.0, seconds: float = 1800.0, seed: int = 0,
          params: G1Params | None = None, warmup_s: float = 600.0) -> dict[str, float]:
    """G1 pauses of one server holding ``keys`` upsert keys, over ``seconds`` of steady load.

    G1 starts with its smallest young generation and sizes it up over the first collections, so the
    first ``warmup_s`` seconds (about ten minutes at these rates) have more, shorter young pauses than
    the steady state; they are simulated and left out of the figures.

    Returns ``young_p50_ms``, ``young_p99_ms`` (young and mixed pauses), ``young_per_s``,
    ``full`` (full GCs in the window), ``longest_ms``, ``paused_share`` (the share of the window the JVM
    spent in any pause: shorter pauses that come more often can add up to more) and ``oom`` (1.0 when the
    live heap no longer fits: the JVM would throw ``OutOfMemoryError``).
    """
    live = LiveHeap(float(live_bytes_static), int(keys), float(bytes_per_key))
    every, heap = g1_pauses_at_constant_rate(params or G1Params(), heap_bytes, live, allocation_rate,
                                             (warmup_s + seconds) * 1000.0, np.random.default_rng(seed),
                                             update_rate=update_rate)
    pauses = [p for p in every if p.start_ms >= warmup_s * 1000.0]
    evac = np.array([p.duration_ms for p in pauses if p.kind in ("young", "mixed")])
    return {
        "young_p50_ms": float(np.percentile(evac, 50)) if len(evac) else float("nan"),
        "young_p99_ms": float(np.percentile(evac, 99)) if len(evac) else float("nan"),
        "young_per_s": len(evac) / seconds,
        "full": float(sum(p.kind == "full" for p in pauses)),
        "longest_ms": float(max((p.duration_ms for p in pauses), default=0.0)),
        "paused_share": float(sum(p.duration_ms for p in pauses)) / (seconds * 1000.0),
        "oom": 1.0 if heap.oom else 0.0,
    }
