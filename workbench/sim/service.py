"""Service-time models: how long one segment's work takes on one worker thread, in ms.

``cost`` derives the time from the documents the segment scans plus fixed overheads, which is how
Pinot's execution time actually scales (PE §2-3); the distribution models exist to validate the
queueing model against closed forms (M/M/c, fork-join, M/D/1) and to replay measured latencies.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from workbench.distributions import Deterministic, Distribution, Empirical, Exponential, Lognormal
from workbench.pinot.sql.query import Query, canonical_function_name
from workbench.scenario.schema import ServiceSpec

__all__ = ["SERVICE_MODELS", "ServiceModel", "function_calls", "function_ns_per_doc", "make_service_model"]


@dataclass(frozen=True)
class ServiceModel:
    """Per-segment worker work and the runner thread's per-request and per-block merge work on a server (ms)."""

    per_request_ms: float
    per_segment_ms: float
    ns_per_doc: float
    draw: Distribution | None
    merge_ms_per_segment: float = 0.0
    variability: float = 0.0
    #: The wake-up cost and its time constant (``service.wake_ms``, ``wake_tau_ms``): see
    #: :func:`workbench.sim.decisions.wake_work`.
    wake_ms: float = 0.0
    wake_tau_ms: float = 1.0
    #: Extra ns per document per call of an aggregation function (``service.function_ns_per_doc``, by Pinot's
    #: canonical name): see :func:`function_ns_per_doc`. Empty: none.
    function_costs: tuple[tuple[str, float], ...] = ()
    #: CPU per request off the query's path (``service.off_path_ms``), run on the server's cores after the
    #: response is sent (:class:`workbench.sim.server.PinotServer`); 0: none.
    off_path_ms: float = 0.0
    #: Extra ns per document of a group-by's segments (``service.group_by_ns_per_doc``) and ns per entry a
    #: segment's filter reads (``service.ns_per_filter_entry``); 0: none.
    group_by_ns_per_doc: float = 0.0
    ns_per_filter_entry: float = 0.0

    def vary(self, rng: np.random.Generator, times: list[float]) -> list[float]:
        """Each run of a segment takes its mean time times a lognormal factor of mean 1 (``variability``
        is its log-space sigma); deterministic when 0 (no draw is made)."""
        if self.variability <= 0 or not times:
            return times
        sigma = self.variability
        factors = rng.lognormal(-sigma * sigma / 2.0, sigma, len(times))
        return [t * float(f) for t, f in zip(times, factors, strict=True)]

    def segment_times(self, rng: np.random.Generator, docs_scanned: np.ndarray) -> np.ndarray:
        """Work of each segment, ms; ``docs_scanned`` are the documents each segment scans."""
        if self.draw is not None:
            return self.draw.sample(rng, len(docs_scanned))
        return self.per_segment_ms + docs_scanned * (self.ns_per_doc * 1e-6)


def function_calls(query: Query | None) -> tuple[str, ...]:
    """The aggregation functions a query calls, by Pinot's canonical name (lower case, no underscores), once
    per call, in select-list order (``()`` for no query or no aggregation).

    >>> from workbench.pinot.sql import parse_query
    >>> function_calls(parse_query("SELECT PERCENTILE_TDIGEST(v, 99), COUNT(*), percentileTDigest(w, 50) FROM t"))
    ('percentiletdigest', 'count', 'percentiletdigest')
    """
    if query is None:
        return ()
    return tuple(f.canonical_name for f in query.aggregations)


def function_ns_per_doc(query: Query | None, costs: Mapping[str, float] | tuple[tuple[str, float], ...]) -> float:
    """The extra ns per document scanned a query's aggregation functions cost beyond ``ns_per_doc``: the sum over
    its calls of the function's ``service.function_ns_per_doc`` (0 for a function not named there).

    Why per document and per call: Pinot's aggregation operators feed each function every matched row of a
    block (``AggregationFunction.aggregate``), so a function whose per-row work is heavier (a t-digest's
    centroid insert, an HLL's hash and register update) adds to every document, once per call; the plain
    aggregations ``ns_per_doc`` prices read one value and add it. Against Apache Pinot 1.5.1
    (``docs/validation.md``) a ``PERCENTILETDIGEST`` query took about 8x ``COUNT``'s CPU per document.

    >>> from workbench.pinot.sql import parse_query
    >>> q = parse_query("SELECT PERCENTILETDIGEST(v, 99), COUNT(*) FROM t")
    >>> function_ns_per_doc(q, {"PERCENTILE_TDIGEST": 80.0})
    80.0
    >>> function_ns_per_doc(parse_query("SELECT COUNT(*) FROM t"), {"percentiletdigest": 80.0})
    0.0
    """
    pairs = costs.items() if isinstance(costs, Mapping) else costs
    by_name = {canonical_function_name(str(k)): float(v) for k, v in pairs}
    return float(sum(by_name.get(name, 0.0) for name in function_calls(query))) if by_name else 0.0


def _cost(s: ServiceSpec) -> ServiceModel:
    costs = tuple((canonical_function_name(str(k)), float(v)) for k, v in s.function_ns_per_doc.items() if v > 0)
    return ServiceModel(s.per_request_ms, s.per_segment_ms, s.ns_per_doc, None, s.merge_ms_per_segment, s.variability,
                        s.wake_ms, s.wake_tau_ms, costs, s.off_path_ms, s.group_by_ns_per_doc, s.ns_per_filter_entry)


def _dist(make: Callable[[ServiceSpec], Distribution]) -> Callable[[ServiceSpec], ServiceModel]:
    return lambda s: ServiceModel(0.0, 0.0, 0.0, make(s))


SERVICE_MODELS: Mapping[str, Callable[[ServiceSpec], ServiceModel]] = {
    "cost": _cost,
    "deterministic": _dist(lambda s: Deterministic(s.mean_ms)),
    "exponential": _dist(lambda s: Exponential(s.mean_ms)),
    "lognormal": _dist(lambda s: Lognormal(s.mean_ms, s.sigma)),
    "empirical": _dist(lambda s: Empirical(tuple(s.values_ms or ()))),
}


def make_service_model(spec: ServiceSpec) -> ServiceModel:
    """The service model named by ``spec.model``."""
    return SERVICE_MODELS[spec.model](spec)
