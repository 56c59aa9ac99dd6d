"""The workload generator's spec: the ``workload.generate`` section of a scenario, or a bare spec file.

Fields follow the same conventions as every scenario section (see :mod:`workbench.scenario.build`):
bounds and units in field metadata, cross-field rules in ``check(path)``. The top-level keys of the
walking skeleton (``events``, ``keys``, ``key_distribution``, ``zipf_s``, ``partitions``, ``span_s``,
``segment_rows``, ``seed``) keep their meaning; everything added since lives in nested sections, one
per concern, each with defaults that describe a plain append-only event stream.

>>> from workbench.scenario.build import build_section
>>> spec = build_section(GenerateSpec, {"events": 1000, "rate": {"profile": "diurnal"},
...                                     "lifecycle": {"updates_per_key": 4}}, "generate")
>>> spec.rate.profile, spec.lifecycle.updates_per_key.mean, spec.disorder.late_fraction
('diurnal', 4.0, 0.0)
>>> build_section(GenerateSpec, {"rate": {"amplitude": 1.5}}, "generate")
Traceback (most recent call last):
...
workbench.errors.ScenarioError: generate.rate.amplitude: must be a number between 0 and 0.95, got 1.5
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from workbench import defaults as D
from workbench.distributions import Deterministic, Distribution, Exponential
from workbench.errors import ScenarioError
from workbench.pinot.flush import DEFAULT_FLUSH_AUTOTUNE_INITIAL_ROWS

__all__ = [
    "ColumnSpec",
    "DisorderSpec",
    "GenerateSpec",
    "LifecycleSpec",
    "OfflineSpec",
    "PartitioningSpec",
    "QuerySpec",
    "RateSpec",
    "spec_to_json",
]


def _f(default: Any, **meta: Any) -> Any:
    if callable(default):
        return field(default_factory=default, metadata=meta)
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class PartitioningSpec:
    """How the producer routes events to stream partitions (Kafka's partitioner, in Pinot's terms).

    Each field left out follows the table config: its partition column and function (Pinot's
    ``segmentPartitionConfig``) when it has one, else Kafka's default partitioner, i.e. ``Murmur``
    (murmur2) of the ``key`` column. Setting a function that differs from the table's is how a
    mismatched producer is modelled: segments then hold rows of several Pinot partitions.
    """

    column: str | None = None
    function: str | None = None
    function_config: Mapping[str, Any] | None = None

    def check(self, path: str) -> None:
        if self.function is None:
            return
        from workbench.pinot.partition import partition_function_names

        names = partition_function_names()
        if self.function.lower() not in {n.lower() for n in names}:
            raise ScenarioError(f"{path}.function", f"must be one of {', '.join(names)}, got {self.function!r}")


@dataclass(frozen=True)
class RateSpec:
    """Events per second over the span, as a shape around the mean (the total is always ``events``).

    ``constant``: a flat rate. ``diurnal``: ``1 + amplitude * cos(2π (t - peak_s) / period_s)``, with
    ``t`` the time of day (UTC) so the peak falls at ``peak_s`` after midnight. ``bursts``: the rate
    is multiplied by ``burst_factor`` for ``burst_length_s`` at random moments, on average every
    ``burst_every_s``.
    """

    profile: Literal["constant", "diurnal", "bursts"] = "constant"
    amplitude: float = _f(0.5, min=0, max=0.95)
    period_s: float = _f(86_400.0, kind="duration", gt=0)
    peak_s: float = _f(14 * 3600.0, kind="duration", min=0)
    burst_every_s: float = _f(3600.0, kind="duration", gt=0)
    burst_length_s: float = _f(60.0, kind="duration", gt=0)
    burst_factor: float = _f(5.0, min=1)

    def check(self, path: str) -> None:
        if self.profile == "bursts" and self.burst_length_s >= self.burst_every_s:
            raise ScenarioError(f"{path}.burst_length_s",
                                f"must be shorter than burst_every_s ({self.burst_every_s:g} s)")


@dataclass(frozen=True)
class DisorderSpec:
    """How far event time lags ingestion: every event by a small jitter, a fraction by much more.

    An event reaches the stream ``jitter_ms`` (exponential mean) after it happened; a share
    ``late_fraction`` of events arrives a further ``lateness_s`` (a distribution, seconds) late. The
    total delay is capped at ``max_lateness_s``. Disorder is what widens the time ranges of segments
    and so weakens time pruning.
    """

    late_fraction: float = _f(0.0, min=0, max=1)
    lateness_s: Distribution = _f(lambda: Exponential(60.0), kind="distribution", unit="s")
    max_lateness_s: float = _f(3600.0, kind="duration", gt=0)
    jitter_ms: float = _f(0.0, min=0, kind="duration_ms")


@dataclass(frozen=True)
class LifecycleSpec:
    """Keys that are updated for a while and then never again (the trip example of the upsert TTL design).

    Keys are born at the event rate's shape; each has ``updates_per_key`` events (rounded, at least
    one) spread over its ``lifetime_s`` (capped at ``max_lifetime_s``): the first at birth, the last
    at birth + lifetime. ``delete_fraction`` of the keys with two or more events end with a delete.
    The number of keys follows from ``events / mean(updates_per_key)``; ``keys`` is not used.
    """

    lifetime_s: Distribution = _f(lambda: Exponential(1800.0), kind="distribution", unit="s")
    max_lifetime_s: float = _f(4 * 3600.0, kind="duration", gt=0)
    updates_per_key: Distribution = _f(lambda: Deterministic(3.0), kind="distribution")
    delete_fraction: float = _f(0.0, min=0, max=1)


@dataclass(frozen=True)
class OfflineSpec:
    """Offline segments (tables whose ``tableType`` is ``OFFLINE``): files pushed once per batch.

    Events are batched by event time (``batch_s``, a day by default) and each batch is written as
    ``files`` files (default: the table's ``numPartitions``, else ``partitions``). File ``j`` is
    crafted for partitions ``p`` with ``p % files == j``; ``purity`` is the share of rows that go to
    their own file, the rest go to a random one (1 = files crafted per partition, 0 = mixed).
    """

    batch_s: float = _f(86_400.0, kind="duration", gt=0)
    files: int | None = _f(None, min=1)
    purity: float = _f(1.0, min=0, max=1)


@dataclass(frozen=True)
class QuerySpec:
    """The query stream: dashboards, ad-hoc queries, point lookups and time-range queries.

    Queries cover the last ``duration_s`` of the span (so "the last hour" has data). Dashboards have
    ``panels_min``-``panels_max`` panels and a refresh interval from ``refresh_s``; ``viewers`` are
    spread over dashboards by Zipf(``viewers_zipf_s``) and each viewer refreshes every panel at its own
    phase. Dashboard "now" is rounded down to ``time_rounding_s`` (how dashboards make repeated
    queries identical). The other kinds arrive as Poisson streams at their rates (queries per
    second). Query templates of each kind are chosen by Zipf(``template_zipf_s``).
    """

    duration_s: float = _f(600.0, kind="duration", gt=0)
    dashboards: int = _f(10, min=0)
    panels_min: int = _f(4, min=1)
    panels_max: int = _f(12, min=1)
    refresh_s: tuple[float, ...] = _f((5.0, 10.0, 15.0, 30.0, 60.0), kind="duration", gt=0)
    viewers: int = _f(30, min=0)
    viewers_zipf_s: float = _f(1.0, gt=0)
    lookbacks_s: tuple[float, ...] = _f((900.0, 3600.0, 6 * 3600.0, 86_400.0), kind="duration", gt=0)
    time_rounding_s: float = _f(10.0, kind="duration", min=0)
    template_zipf_s: float = _f(1.0, gt=0)
    adhoc_qps: float = _f(0.5, min=0)
    lookup_qps: float = _f(20.0, min=0)
    lookup_in_fraction: float = _f(0.1, min=0, max=1)
    timerange_qps: float = _f(2.0, min=0)

    def check(self, path: str) -> None:
        if self.panels_max < self.panels_min:
            raise ScenarioError(f"{path}.panels_max", f"must be at least panels_min ({self.panels_min})")
        for name in ("refresh_s", "lookbacks_s"):
            if not getattr(self, name):
                raise ScenarioError(f"{path}.{name}", "must list at least one duration")


@dataclass(frozen=True)
class ColumnSpec:
    """How one column of the user's schema is filled (``workload.generate.columns.NAME``, with ``from_schema``).

    A dimension's values are ``cardinality`` distinct values drawn ``uniform`` or ``zipf`` (exponent
    ``zipf_s``), per row, or once per key when ``per_key`` (a fixed attribute of the key, as the
    partition column is). A metric's values come from ``values`` (a distribution; default lognormal with
    median 10), or from ``cardinality`` distinct values when that is set. A multi-value column holds 1 to
    ``max_values`` values per row. The time, primary-key, partition, comparison and delete columns
    follow the table (``docs/data.md``); their entries may not change them.
    """

    cardinality: int | None = _f(None, min=1)
    distribution: Literal["uniform", "zipf"] = "uniform"
    zipf_s: float = _f(1.1, gt=0)
    per_key: bool = False
    max_values: int = _f(D.GENERATE_MAX_VALUES, min=1)
    values: Distribution | None = _f(None, kind="distribution")


@dataclass(frozen=True)
class GenerateSpec:
    """Events generated by Spark and cut into segments, plus the queries against them (``workbench generate``)."""

    events: int = _f(D.GENERATE_EVENTS, min=1)
    keys: int = _f(D.GENERATE_KEYS, min=1)
    key_distribution: Literal["uniform", "zipf"] = "uniform"
    zipf_s: float = _f(1.1, gt=0)
    key_prefix: str = "user_"
    categories: int = _f(20, min=1, max=10_000)
    partitions: int = _f(D.GENERATE_PARTITIONS, min=1)
    span_s: float = _f(D.GENERATE_SPAN_S, kind="duration", gt=0)
    segment_rows: int = _f(D.GENERATE_SEGMENT_ROWS, min=1)
    segment_time_s: float | None = _f(None, kind="duration", gt=0)
    #: Size-based flushing (Pinot's ``realtime.segment.flush.threshold.segment.size``): when set, each consuming
    #: segment's row threshold is tuned towards this size as Pinot's controller tunes it, and ``segment_rows``
    #: is not read (:mod:`workbench.workload.flush`).
    segment_size: float | None = _f(None, kind="size", gt=0)
    #: ... and the first segments' rows (``realtime.segment.flush.autotune.initialRows``).
    segment_initial_rows: int = _f(DEFAULT_FLUSH_AUTOTUNE_INITIAL_ROWS, min=1)
    seed: int | None = _f(None, min=0)
    partitioning: PartitioningSpec = _f(PartitioningSpec)
    rate: RateSpec = _f(RateSpec)
    disorder: DisorderSpec = _f(DisorderSpec)
    lifecycle: LifecycleSpec | None = None
    offline: OfflineSpec = _f(OfflineSpec)
    queries: QuerySpec = _f(QuerySpec)
    #: Generate the scenario schema's own columns (``docs/data.md``) instead of the generator's.
    from_schema: bool = False
    #: Per-column settings of schema-driven generation: column name -> :class:`ColumnSpec`.
    columns: Mapping[str, ColumnSpec] = _f(dict)

    def column(self, name: str) -> ColumnSpec:
        """The settings of column ``name`` (defaults when ``columns`` does not name it)."""
        return self.columns.get(name) or ColumnSpec()

    def check(self, path: str) -> None:
        if self.columns and not self.from_schema:
            raise ScenarioError(f"{path}.columns", "sets columns of the user's schema, which only schema-driven "
                                                   "generation uses; add from_schema: true (and a schema)")
        if self.span_s < 1.0:
            raise ScenarioError(f"{path}.span_s", f"must be at least one second, got {self.span_s:g} s")


def _jsonable(value: Any) -> Any:
    """Spec values as plain JSON: distributions as ``{"dist": name, ...params}``, tuples as lists."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        params = getattr(type(value), "params", None)
        fields = {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {"dist": type(value).__name__.lower(), **fields} if params is not None else fields
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value


def spec_to_json(spec: GenerateSpec) -> dict[str, Any]:
    """The spec as plain JSON, in the form a scenario file would write it (recorded in the manifest).

    >>> spec_to_json(GenerateSpec())["disorder"]["lateness_s"]
    {'dist': 'exponential', 'mean': 60.0}
    """
    out: dict[str, Any] = _jsonable(spec)
    return out
