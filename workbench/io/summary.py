"""The summary of a run, typed: ``summary.json``'s ``summary`` and the metric columns of ``combined.parquet``.

:func:`workbench.analysis.stats.summarise` computes it; the run verb stores it under ``summary`` in the run
directory's ``summary.json`` (nested, keys sorted); a sweep flattens it into one row of ``combined.parquet``
with dotted column names (``latency_ms.p99.value``). Every reader goes through this type or the column
names below, so the three places share one spelling; ``docs/records.md`` lists the columns and a test
checks the list. It sits in :mod:`workbench.io`, beside the run directory that stores it, so every layer
that reads a run reads it typed without importing the statistics that compute it.

>>> s = Summary.from_json(EXAMPLE)
>>> s.latency_ms.p99.value, s.slo.checks.p99_ms is None, column("latency_ms", "p99.9", "ci_high")
(30.0, True, 'latency_ms.p99.9.ci_high')
>>> Summary.from_json(s.to_json()) == s
True
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from workbench.errors import InputError

__all__ = ["EXAMPLE", "FAILED", "FAILED_WHY", "GC_DELAYED_RATE", "P99", "P99_HIGH", "P99_LOW", "P99_MODEL_HIGH",
           "P99_MODEL_LOW", "PARTIAL_RATE", "SLO_MET", "THROUGHPUT", "UTILISATION_MEAN", "Engine", "Errors",
           "Failures", "Heap", "Latency", "LittlesLaw", "ModelUncertainty", "SLOCheck", "SLOChecks", "SLOVerdict",
           "Statistic", "Summary", "TableFit", "TableSummary", "Utilisation", "column", "latency_column",
           "schema_columns"]


#: Field metadata key naming the JSON key of a field stored under another name (``p99.9``, ``L_measured``).
_JSON = "json"


@dataclass(frozen=True)
class Statistic:
    """One latency statistic, ms: its value, the simulation's interval (replications or batch means) and,
    after a parameter-uncertainty study, the model's interval (over draws of the calibrated parameters)."""

    value: float
    ci_low: float
    ci_high: float
    model_low: float | None = None
    model_high: float | None = None

    def bound(self) -> float:
        """The interval's upper end, or the value when the interval is NaN (one replication, few batches)."""
        return self.value if self.ci_high != self.ci_high else self.ci_high


@dataclass(frozen=True)
class Latency:
    """Mean and percentiles of the queries' latency, each a :class:`Statistic`; labelled as the workbench
    reports them (``mean``, ``p50``, ``p95``, ``p99``, ``p99.9``)."""

    mean: Statistic
    p50: Statistic
    p95: Statistic
    p99: Statistic
    p99_9: Statistic = field(metadata={_JSON: "p99.9"})

    @staticmethod
    def labels() -> tuple[str, ...]:
        """The statistics' labels, in order (the JSON keys)."""
        return tuple(_json_key(f) for f in dataclasses.fields(Latency))

    @classmethod
    def from_labels(cls, stats: Mapping[str, Statistic]) -> Latency:
        """The statistics keyed by their labels (``{"p99.9": ...}``)."""
        return cls(**{f.name: stats[_json_key(f)] for f in dataclasses.fields(cls)})

    def of(self, label: str) -> Statistic:
        """The statistic labelled ``label`` (``"p99.9"``)."""
        return dict(self.items())[label]

    def items(self) -> list[tuple[str, Statistic]]:
        """(label, statistic) pairs in order."""
        return [(_json_key(f), getattr(self, f.name)) for f in dataclasses.fields(self)]


@dataclass(frozen=True)
class Utilisation:
    """Servers' busy share of their cores: the mean over servers and replications, and the busiest."""

    mean: float
    max: float


@dataclass(frozen=True)
class Errors:
    """Shares of server requests answered 240 and 250, of queries that carried any error code, and of
    queries by the Pinot error code they carried (codes that no query carried are left out)."""

    scheduling_timeout_share: float
    execution_timeout_share: float
    query_error_share: float
    by_code: dict[str, float]


@dataclass(frozen=True)
class Failures:
    """Whether anything in the run failed (servers out of heap, queries with an error code or a partial
    answer, no query measured) and why, one sentence per failure joined by ``; `` (empty when nothing did).

    It is said before any percentile: a p99 made of timeouts is not a latency
    (:mod:`workbench.analysis.failures` makes it)."""

    failed: bool
    why: str


@dataclass(frozen=True)
class TableFit:
    """What the table's shape leaves unused or strains: servers Pinot's assignment gives no segment (they
    answer no query, so a sizing that counts them overstates the cluster), a sentence naming them with the
    shape that would use them (empty when every server holds data), and segments far outside Pinot's range."""

    servers_without_data: int
    why: str
    #: Segments far outside Pinot's comfortable range (median size, count per server), the figure and what to
    #: change (:mod:`workbench.sim.segment_range`); empty when they are within it, unset in older summaries.
    segments: str | None = None


@dataclass(frozen=True)
class Engine:
    """Which engine ran the model and why it was chosen."""

    name: str
    why: str


@dataclass(frozen=True)
class LittlesLaw:
    """Queries in flight measured in the model against arrival rate x mean latency, and how far apart."""

    l_measured: float = field(metadata={_JSON: "L_measured"})
    lambda_w: float = field(metadata={_JSON: "lambda_W"})
    relative_difference: float


@dataclass(frozen=True)
class Heap:
    """Live and peak heap over servers (bytes), out-of-memory servers, upsert keys, and the moment of the
    data the run's heap was taken at (s; ``None`` when the keys were not replayed from data)."""

    live_max: float
    peak_max: float
    oom_servers: int
    upsert_keys_max: int
    upsert_keys_from: str
    at_s: float | None


@dataclass(frozen=True)
class SLOCheck:
    """One SLO check: its limit, the run's value, the bound held to the limit, the verdict and why not."""

    limit: float
    value: float
    bound: float
    met: bool
    why: str


@dataclass(frozen=True)
class SLOChecks:
    """The checks by their ``slo:`` keys; a key the scenario leaves unset is not checked (``None``)."""

    max_heap: SLOCheck | None = None
    p99_ms: SLOCheck | None = None

    def items(self) -> list[tuple[str, SLOCheck]]:
        """(key, check) of every check made."""
        return [(f.name, c) for f in dataclasses.fields(self) if (c := getattr(self, f.name)) is not None]


@dataclass(frozen=True)
class SLOVerdict:
    """Whether the run meets its SLO (``None`` when no SLO is set), check by check, and why not."""

    met: bool | None
    checks: SLOChecks
    why: str


@dataclass(frozen=True)
class ModelUncertainty:
    """How the model's intervals were made: parameter draws, their confidence and the method."""

    draws: int
    confidence: float
    method: str


@dataclass(frozen=True)
class TableSummary:
    """One table of a scenario of several (``tables:``): its own queries' latency and outcome, the utilisation
    of its tenant's servers (shared with the tenant's other tables), and its own SLO."""

    #: How the table's name is written in the columns of a mapping of these (``tables.TABLE.queries``).
    COLUMN_KEY: typing.ClassVar[str] = "TABLE"

    tenant: str
    latency_ms: Latency
    queries: int
    throughput_qps: float
    partial_rate: float
    query_error_share: float
    servers_queried_mean: float
    segments_queried_mean: float
    utilisation: Utilisation
    slo: SLOVerdict


@dataclass(frozen=True)
class Summary:
    """The headline numbers of a run (see ``docs/records.md``, "summary", for every field's meaning).

    ``model_uncertainty`` is set only on a summary carrying the model's intervals
    (:func:`workbench.analysis.stats.with_model_intervals`).
    """

    latency_ms: Latency
    queries: int
    failures: Failures
    table_fit: TableFit
    replications: int
    confidence: float
    throughput_qps: float
    utilisation: Utilisation
    servers_idle: int
    partial_rate: float
    gc_delayed_rate: float
    servers_queried_mean: float
    segments_queried_mean: float
    gc_pauses: int
    cache_hit_rate: float
    errors: Errors
    engine: Engine
    littles_law: LittlesLaw
    heap: Heap
    slo: SLOVerdict
    model_uncertainty: ModelUncertainty | None = None
    #: Per table, by name, for a scenario of several tables (``tables:``); the fields above are then every
    #: table's queries together (the tenant's), and ``slo`` is met when every table meets its own.
    tables: dict[str, TableSummary] | None = None

    def to_json(self) -> dict[str, Any]:
        """The summary as ``summary.json`` holds it: nested objects, keys sorted, unset optionals left out."""
        return _dump(self)

    @classmethod
    def from_json(cls, data: Any, source: str = "summary", where: str = "summary") -> Summary:
        """The summary of ``data`` (``summary.json``'s ``summary``), every field checked; a missing or
        mistyped one is an InputError naming ``source`` and the key's dotted path under ``where``."""
        summary: Summary = _load(cls, data, where, source)
        return summary

    def headline(self) -> str:
        """The run in one line, its failures said before any percentile (the CLI's ``simulate`` line); with
        several tables, each table's p99 after the tenant's.

        >>> Summary.from_json(EXAMPLE).headline()
        'p99 30.00 ms over 1,000 queries'
        """
        p99 = f"p99 {self.latency_ms.p99.value:.2f} ms over {self.queries:,} queries"
        if self.tables:
            each = (f"{name} p99 {t.latency_ms.p99.value:.2f} ms" for name, t in self.tables.items())
            p99 += f" ({', '.join(each)})"
        line = f"FAILED RUN: {self.failures.why}. {p99}" if self.failures.failed else p99
        return f"{line}; WARNING: {self.table_fit.why}" if self.table_fit.why else line

    def columns(self) -> dict[str, Any]:
        """The summary as one row of ``combined.parquet``: dotted column name -> value, in column order."""
        return dict(_flatten(self.to_json()))


# -- JSON ---------------------------------------------------------------------------------------------------
def _json_key(f: dataclasses.Field[Any]) -> str:
    return str(f.metadata.get(_JSON, f.name))


def _omitted(f: dataclasses.Field[Any], value: Any) -> bool:
    """An optional field (default ``None``) left unset is not written."""
    return value is None and f.default is None


def _dump(obj: Any) -> dict[str, Any]:
    out = {_json_key(f): _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)
           if not _omitted(f, getattr(obj, f.name))}
    return dict(sorted(out.items()))


def _plain(value: Any) -> Any:
    """``value`` as JSON holds it; an undefined figure (NaN: a percentile of no query, a rate of none) is
    ``null``, since JSON has no NaN and strict readers, the workbench's own among them, refuse Python's ``NaN``."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _dump(value)
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in sorted(value.items())}
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _flatten(value: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, item in value.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(item, Mapping):
            yield from _flatten(item, name)
        else:
            yield name, item


def _missing(source: str, where: str, kind: Any) -> InputError:
    """A missing field, named down to its first value (``summary.latency_ms.mean.value``)."""
    while dataclasses.is_dataclass(kind):
        first = dataclasses.fields(kind)[0]
        where, kind = f"{where}.{_json_key(first)}", typing.get_type_hints(kind)[first.name]
    return InputError(source, f"has no {where!r}; was it written by this version of the workbench?")


def _load(cls: type[Any], data: Any, where: str, source: str) -> Any:
    if not isinstance(data, Mapping):
        raise InputError(source, f"its {where!r} is not an object")
    hints = typing.get_type_hints(cls)
    values = {}
    for f in dataclasses.fields(cls):
        key = _json_key(f)
        if key not in data:
            if f.default is None:
                continue
            raise _missing(source, f"{where}.{key}", hints[f.name])
        values[f.name] = _value(hints[f.name], data[key], f"{where}.{key}", source)
    return cls(**values)


_SCALARS: dict[type, tuple[type, ...]] = {float: (int, float), int: (int,), bool: (bool,), str: (str,)}


def _value(kind: Any, value: Any, where: str, source: str) -> Any:
    """``value`` read as ``kind``: a dataclass, ``dict[str, X]``, ``X | None`` or a scalar (kept as it is)."""
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        if value is None:
            return None
        return _value(next(a for a in typing.get_args(kind) if a is not type(None)), value, where, source)
    if dataclasses.is_dataclass(kind):
        return _load(kind, value, where, source)  # type: ignore[arg-type]
    if origin is dict:
        if not isinstance(value, Mapping):
            raise InputError(source, f"its {where!r} is not an object")
        item = typing.get_args(kind)[1]
        return {str(k): _value(item, v, f"{where}.{k}", source) for k, v in value.items()}
    if kind is float and value is None:  # an undefined figure, written as null (_plain)
        return math.nan
    ok = _SCALARS[kind]
    if not isinstance(value, ok) or (kind is not bool and isinstance(value, bool)):
        raise InputError(source, f"its {where!r} is {value!r}, not a {kind.__name__}")
    return value


# -- columns ------------------------------------------------------------------------------------------------
def _schema(cls: type[Any], prefix: str, within_optional: bool = False) -> Iterator[tuple[str, str]]:
    hints = typing.get_type_hints(cls)
    for f in sorted(dataclasses.fields(cls), key=_json_key):
        name = f"{prefix}.{_json_key(f)}" if prefix else _json_key(f)
        kind, optional = hints[f.name], within_optional
        if typing.get_origin(kind) in (typing.Union, types.UnionType):
            kind, optional = next(a for a in typing.get_args(kind) if a is not type(None)), True
        if dataclasses.is_dataclass(kind):
            yield from _schema(kind, name, optional)  # type: ignore[arg-type]
        elif typing.get_origin(kind) is dict:
            item = typing.get_args(kind)[1]
            key = getattr(item, "COLUMN_KEY", "CODE")
            if dataclasses.is_dataclass(item):
                yield from _schema(item, f"{name}.{key}", True)  # type: ignore[arg-type]
            else:
                yield f"{name}.{key}", item.__name__
        else:
            yield name, kind.__name__ + (" or null" if optional else "")


def schema_columns(cls: type[Any] = Summary) -> dict[str, str]:
    """Every column a summary of type ``cls`` can flatten into, in column order, with its type (``or null``
    when it may be missing: an optional field or one inside one; a mapping field's keys are written
    ``CODE``: ``errors.by_code.CODE``; each field of a mapping of objects is written under the key its class
    names, ``COLUMN_KEY``: ``tables.TABLE.queries``)."""
    return dict(_schema(cls, ""))


def column(*path: str) -> str:
    """The ``combined.parquet`` column of the summary field at ``path`` (JSON keys), checked to exist.

    >>> column("slo", "met")
    'slo.met'
    """
    name = ".".join(path)
    if name not in _COLUMNS:
        raise KeyError(f"the summary has no column {name!r}")
    return name


def latency_column(stat: str, part: str = "value") -> str:
    """The column of latency statistic ``stat`` (``p99``) and ``part`` (``value``, ``ci_low``, ``model_high``...)."""
    return column("latency_ms", stat, part)


_COLUMNS = schema_columns()

#: Column names of the summary fields the report and the studies read from ``combined.parquet``.
P99 = latency_column("p99")
P99_LOW = latency_column("p99", "ci_low")
P99_HIGH = latency_column("p99", "ci_high")
P99_MODEL_LOW = latency_column("p99", "model_low")
P99_MODEL_HIGH = latency_column("p99", "model_high")
THROUGHPUT = column("throughput_qps")
UTILISATION_MEAN = column("utilisation", "mean")
PARTIAL_RATE = column("partial_rate")
GC_DELAYED_RATE = column("gc_delayed_rate")
SLO_MET = column("slo", "met")
FAILED = column("failures", "failed")
FAILED_WHY = column("failures", "why")


def _example_stat(value: float) -> dict[str, float]:
    return {"value": value, "ci_low": value - 2, "ci_high": value + 2}


#: A small, complete summary in JSON form, for examples and tests of readers.
EXAMPLE: dict[str, Any] = {
    "failures": {"failed": False, "why": ""}, "table_fit": {"servers_without_data": 0, "why": ""},
    "latency_ms": {label: _example_stat(v) for label, v in
                   (("mean", 8.0), ("p50", 6.0), ("p95", 20.0), ("p99", 30.0), ("p99.9", 45.0))},
    "queries": 1000, "replications": 2, "confidence": 0.95, "throughput_qps": 100.0,
    "utilisation": {"mean": 0.4, "max": 0.5}, "servers_idle": 0, "partial_rate": 0.0, "gc_delayed_rate": 0.01,
    "servers_queried_mean": 2.0, "segments_queried_mean": 8.0, "gc_pauses": 3, "cache_hit_rate": 0.0,
    "errors": {"scheduling_timeout_share": 0.0, "execution_timeout_share": 0.0, "query_error_share": 0.0,
               "by_code": {}},
    "engine": {"name": "simpy", "why": ""},
    "littles_law": {"L_measured": 0.8, "lambda_W": 0.8, "relative_difference": 0.0},
    "heap": {"live_max": 1e9, "peak_max": 2e9, "oom_servers": 0, "upsert_keys_max": 0, "upsert_keys_from": "none",
             "at_s": None},
    "slo": {"met": None, "checks": {}, "why": ""},
}
