"""Trace-driven cache evaluation: hit rate against cache bytes, with the offline optimum beside it.

A *trace* is a DataFrame with one row per cache lookup, in time order:

``key``
    Any hashable value identifying the cached result (a canonical query key, a segment key, ...).
``size_bytes``
    The result's serialised size, the weight the cache charges (:mod:`~workbench.pinot.cache.sizing`).
``time_ms``
    Lookup time in ms; only TTLs read it.
``table`` (optional)
    The entry's table, for per-table limits.
``compute_ms`` (optional)
    What a miss costs to compute; hits add it to ``savings_ms``.

Each lookup that misses stores its value at once (no compute delay), the usual trace-replay model.
Policies form a registry (:data:`POLICIES`), so sweeps and notebooks name them by string:

======================  =========================================================================
``lru``                 :class:`~workbench.pinot.cache.lru.WeightedLRUCache`, honouring the TTL
``infinite``            no evictions (TTL still honoured): the compulsory-miss ceiling
``belady``              exact optimum, unit sizes only (:func:`~.belady.belady_hits`)
``opt-bound``           LP upper bound for variable sizes (:func:`~.belady.opt_upper_bound`)
``belady-size``         feasible size-aware heuristic, a lower bound on the optimum
``optimal``             ``belady`` for unit sizes, else ``opt-bound`` (``belady-size`` past ``LP_MAX_REQUESTS``)
======================  =========================================================================

>>> import pandas as pd
>>> trace = pd.DataFrame({"key": list("abcabdab"), "size_bytes": [1] * 8, "time_ms": range(8)})
>>> simulate_cache_trace(trace, "lru", max_bytes=2).hits, belady_hit_rate(trace, max_bytes=2).hits
(0, 4)
>>> hit_rate_curve(trace, [1, 2, 3])[["policy", "max_bytes", "hits"]].values.tolist()
[['lru', 1, 0], ['lru', 2, 0], ['lru', 3, 4], ['optimal', 1, 2], ['optimal', 2, 4], ['optimal', 3, 4]]
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from workbench.pinot.cache.belady import belady_hits, belady_size_hits, opt_upper_bound
from workbench.pinot.cache.lru import WeightedLRUCache

__all__ = [
    "POLICIES",
    "TRACE_COLUMNS",
    "CacheTrace",
    "TraceResult",
    "belady_hit_rate",
    "hit_rate_curve",
    "simulate_cache_trace",
    "zipf_trace",
]

#: Required trace columns; ``table`` and ``compute_ms`` are optional.
TRACE_COLUMNS = ("key", "size_bytes", "time_ms")
#: Above this many requests ``optimal`` uses the heuristic instead of solving the LP: the LP grows
#: super-linearly (about 4 s at 20k requests, 2 min at 100k on one core); replay a sample instead.
LP_MAX_REQUESTS = 50_000


@dataclass(frozen=True)
class CacheTrace:
    """A trace as plain lists, read once and replayed by every policy."""

    keys: Sequence[Hashable]
    sizes: Sequence[int]
    times: Sequence[float]
    tables: Sequence[str | None] | None = None
    costs: Sequence[float] | None = None

    @classmethod
    def from_frame(cls, frame: pd.DataFrame) -> CacheTrace:
        """Validate and read a trace DataFrame (sorted stably by ``time_ms`` if it is not already)."""
        missing = [c for c in TRACE_COLUMNS if c not in frame.columns]
        if missing:
            raise ValueError(f"a cache trace needs columns {list(TRACE_COLUMNS)}; missing {missing}")
        if not frame["time_ms"].is_monotonic_increasing:
            frame = frame.sort_values("time_ms", kind="stable")
        if len(frame) and int(frame["size_bytes"].min()) < 0:
            raise ValueError("size_bytes must not be negative")
        return cls(
            keys=frame["key"].tolist(),
            sizes=[int(s) for s in frame["size_bytes"].tolist()],
            times=[float(t) for t in frame["time_ms"].tolist()],
            tables=frame["table"].tolist() if "table" in frame.columns else None,
            costs=[float(c) for c in frame["compute_ms"].tolist()] if "compute_ms" in frame.columns else None,
        )

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def unit_size(self) -> int | None:
        """The common size when every request has the same positive size, else ``None``."""
        distinct = set(self.sizes)
        size = next(iter(distinct)) if len(distinct) == 1 else None
        return size if size else None


@dataclass(frozen=True)
class TraceResult:
    """Hit statistics of one policy at one cache size.

    ``kind`` says what the numbers are: ``simulated`` (a real policy ran), ``exact-optimum``,
    ``upper-bound`` (no cache can do better; hits may be fractional), ``feasible-heuristic`` (a
    clairvoyant policy that ran, so a lower bound on the optimum) or ``no-eviction``.
    """

    policy: str
    kind: str
    max_bytes: int
    requests: int
    hits: float
    bytes_requested: int
    bytes_hit: float
    evictions: int | None = None
    expirations: int | None = None
    savings_ms: float | None = None

    @property
    def hit_rate(self) -> float:
        """Hits per request."""
        return self.hits / self.requests if self.requests else 0.0

    @property
    def byte_hit_rate(self) -> float:
        """Bytes served from cache per byte requested."""
        return self.bytes_hit / self.bytes_requested if self.bytes_requested else 0.0

    def as_row(self) -> dict[str, Any]:
        """The result as a flat record, with the two rates added."""
        return {**asdict(self), "hit_rate": self.hit_rate, "byte_hit_rate": self.byte_hit_rate}


TracePolicy = Callable[[CacheTrace, int, "float | None", Mapping[str, int] | None], TraceResult]


def _result(trace: CacheTrace, policy: str, kind: str, max_bytes: int, hits: float, bytes_hit: float,
            **extra: Any) -> TraceResult:
    return TraceResult(policy, kind, max_bytes, len(trace), hits, sum(trace.sizes), bytes_hit, **extra)


def _replay_lru(trace: CacheTrace, policy: str, kind: str, max_bytes: int, ttl_ms: float | None,
                table_limits: Mapping[str, int] | None) -> TraceResult:
    cache: WeightedLRUCache[Hashable, bool] = WeightedLRUCache(max_bytes, ttl_ms, table_limits=table_limits)
    tables: Iterable[str | None] = trace.tables if trace.tables is not None else [None] * len(trace)
    costs: Iterable[float] = trace.costs if trace.costs is not None else [0.0] * len(trace)
    bytes_hit = 0
    for key, size, now, table, cost in zip(trace.keys, trace.sizes, trace.times, tables, costs, strict=True):
        if cache.get(key, now) is None:
            cache.put(key, True, size, now, table=table, cost_ms=cost)
        else:
            bytes_hit += size
    s = cache.stats
    return _result(trace, policy, kind, max_bytes, s.hits, bytes_hit, evictions=s.evictions,
                   expirations=s.expirations, savings_ms=s.savings_ms)


def _lru(trace: CacheTrace, max_bytes: int, ttl_ms: float | None, limits: Mapping[str, int] | None) -> TraceResult:
    return _replay_lru(trace, "lru", "simulated", max_bytes, ttl_ms, limits)


def _infinite(trace: CacheTrace, max_bytes: int, ttl_ms: float | None, _: Mapping[str, int] | None) -> TraceResult:
    result = _replay_lru(trace, "infinite", "no-eviction", sys.maxsize, ttl_ms, None)
    return TraceResult(**{**asdict(result), "max_bytes": max_bytes})


def _belady(trace: CacheTrace, max_bytes: int, _ttl: float | None, _: Mapping[str, int] | None) -> TraceResult:
    unit = trace.unit_size
    if unit is None:
        raise ValueError("'belady' is exact only for unit sizes; use 'opt-bound' or 'optimal' for variable sizes")
    hits = belady_hits(trace.keys, max_bytes // unit)
    return _result(trace, "belady", "exact-optimum", max_bytes, hits, hits * unit)


def _opt_bound(trace: CacheTrace, max_bytes: int, _ttl: float | None, _: Mapping[str, int] | None) -> TraceResult:
    hits, bytes_hit = opt_upper_bound(trace.keys, trace.sizes, max_bytes)
    return _result(trace, "opt-bound", "upper-bound", max_bytes, hits, bytes_hit)


def _belady_size(trace: CacheTrace, max_bytes: int, _ttl: float | None, _: Mapping[str, int] | None) -> TraceResult:
    hits, bytes_hit = belady_size_hits(trace.keys, trace.sizes, max_bytes)
    return _result(trace, "belady-size", "feasible-heuristic", max_bytes, hits, bytes_hit)


def _optimal(trace: CacheTrace, max_bytes: int, _ttl: float | None, _: Mapping[str, int] | None) -> TraceResult:
    return belady_hit_rate(trace, max_bytes)


#: Policy name -> replay function (trace, max_bytes, ttl_ms, table_limits) -> result.
POLICIES: dict[str, TracePolicy] = {
    "lru": _lru,
    "infinite": _infinite,
    "belady": _belady,
    "opt-bound": _opt_bound,
    "belady-size": _belady_size,
    "optimal": _optimal,
}


def _as_trace(trace: pd.DataFrame | CacheTrace) -> CacheTrace:
    return trace if isinstance(trace, CacheTrace) else CacheTrace.from_frame(trace)


def simulate_cache_trace(trace: pd.DataFrame | CacheTrace, policy: str = "lru", max_bytes: int = 0,
                         ttl_ms: float | None = None, *, table_limits: Mapping[str, int] | None = None
                         ) -> TraceResult:
    """Replay ``trace`` through one policy and return its hit statistics.

    Parameters
    ----------
    trace
        A trace DataFrame (see the module docstring) or an already-read :class:`CacheTrace`.
    policy
        A name from :data:`POLICIES`.
    max_bytes
        Cache capacity in bytes.
    ttl_ms
        TTL after write in ms (simulated policies only; the optima ignore it and stay bounds).
    table_limits
        Per-table byte limits (``lru`` only), read against the trace's ``table`` column.
    """
    if policy not in POLICIES:
        raise ValueError(f"unknown cache policy {policy!r}; use one of {', '.join(POLICIES)}")
    return POLICIES[policy](_as_trace(trace), max_bytes, ttl_ms, table_limits)


def belady_hit_rate(trace: pd.DataFrame | CacheTrace, max_bytes: int, *,
                    lp_max_requests: int = LP_MAX_REQUESTS) -> TraceResult:
    """The offline optimum at ``max_bytes``: exact for unit sizes, else the LP upper bound.

    Check ``kind`` on the result: ``exact-optimum`` (unit sizes: Bélády's MIN), ``upper-bound``
    (variable sizes: the LP relaxation, which no cache can beat) or, for traces with variable sizes
    longer than ``lp_max_requests``, ``feasible-heuristic`` (a lower bound on the optimum).
    """
    read = _as_trace(trace)
    if read.unit_size is None and len(read) > lp_max_requests:
        return TraceResult(**{**asdict(_belady_size(read, max_bytes, None, None)), "policy": "optimal"})
    chosen = _belady if read.unit_size is not None else _opt_bound
    return TraceResult(**{**asdict(chosen(read, max_bytes, None, None)), "policy": "optimal"})


def hit_rate_curve(trace: pd.DataFrame | CacheTrace, sizes: Iterable[int],
                   policies: Sequence[str] = ("lru", "optimal"), ttl_ms: float | None = None) -> pd.DataFrame:
    """Hit rate against cache bytes for each policy: a tidy frame, one row per (policy, size).

    Columns are the fields of :class:`TraceResult` plus ``hit_rate`` and ``byte_hit_rate``; plot
    ``hit_rate`` against ``max_bytes`` with one line per ``policy``.
    """
    read = _as_trace(trace)
    rows = [simulate_cache_trace(read, p, int(size), ttl_ms).as_row() for p in policies for size in sizes]
    return pd.DataFrame(rows)


def zipf_trace(rng: np.random.Generator, requests: int, objects: int, alpha: float = 1.0, *,
               mean_size_bytes: int = 4_096, size_sigma: float = 0.0, interval_ms: float = 1.0) -> pd.DataFrame:
    """A synthetic trace: Zipf(``alpha``) popularity over ``objects`` keys, one request per ``interval_ms``.

    Sizes are fixed per key: ``mean_size_bytes`` each when ``size_sigma`` is 0, else log-normal with
    that mean and log-space standard deviation. The generator is passed in, so the trace is
    reproducible from its seed.
    """
    ranks = np.arange(1, objects + 1, dtype=float)
    weights = ranks ** -alpha
    keys = rng.choice(objects, size=requests, p=weights / weights.sum())
    mu = np.log(mean_size_bytes) - size_sigma**2 / 2
    per_key = np.maximum(1, np.rint(rng.lognormal(mu, size_sigma, size=objects))).astype(np.int64)
    return pd.DataFrame({"key": keys, "size_bytes": per_key[keys], "time_ms": np.arange(requests) * interval_ms})
