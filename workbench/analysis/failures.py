"""What went wrong in a run, said before any percentile: out-of-memory servers, errored and partial queries.

A percentile is a latency only when the queries behind it were answered. A run whose servers ran out of
heap, or whose queries timed out, still has a p99: the timeout, or the latency of a cluster that a real
JVM would have taken down. :func:`run_failures` reads the summary's typed parts and returns
:class:`~workbench.io.summary.Failures`: whether anything failed and one sentence per kind of failure.
The CLI's ``simulate`` line and the report print that sentence before the p99; a sweep's
``combined.parquet`` carries it as ``failures.failed`` and ``failures.why``.

Each check is a small function in :data:`CHECKS` (a registry, so a new kind of failure is one function
more). Error codes are named as Pinot's ``QueryErrorCode`` names them.

>>> from workbench.io.summary import EXAMPLE, Summary
>>> s = Summary.from_json(EXAMPLE)
>>> run_failures(RunFacts(queries=100, server_runs=4, errors=s.errors, heap=s.heap, partial_rate=0.0))
Failures(failed=False, why='')
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from workbench.io.summary import Errors, Failures, Heap, Latency
from workbench.sim.records import ERROR_CODES

__all__ = ["CHECKS", "CODE_NAMES", "RunFacts", "run_failures", "tainted_percentiles"]

#: Pinot's ``QueryErrorCode`` name of each code the engines report, and what it means in a sentence.
CODE_NAMES: dict[int, str] = {
    211: "SERVER_OUT_OF_CAPACITY: a server's scheduler refused the query",
    240: "QUERY_SCHEDULING_TIMEOUT: waited its whole timeout for a runner thread",
    250: "EXECUTION_TIMEOUT: the deadline passed while a server ran it",
    305: "BROKER_SEGMENT_UNAVAILABLE: segments no server could be routed to",
    425: "BROKER_REQUEST_SEND: a server down or crashed",
    427: "SERVER_NOT_RESPONDING: a server did not answer in time",
}
assert set(CODE_NAMES) == set(ERROR_CODES), "every code the engines report has a name"


@dataclass(frozen=True)
class RunFacts:
    """What the failure checks read: queries measured, server runs (servers x replications), the error
    shares, the heap (out-of-memory server runs) and the share of partial answers."""

    queries: int
    server_runs: int
    errors: Errors
    heap: Heap
    partial_rate: float


def tainted_percentiles(error_share: float) -> list[str]:
    """The reported percentiles that failed queries alone could fill: ``pX`` when more than ``1 - X/100`` of
    queries failed (the slowest answers of a timed-out run are its timeouts).

    >>> tainted_percentiles(0.02), tainted_percentiles(0.005), tainted_percentiles(0.0)
    (['p99', 'p99.9'], ['p99.9'], [])
    """
    percentiles = [label for label in Latency.labels() if label.startswith("p")]
    return [p for p in percentiles if error_share > 0 and error_share >= 1.0 - float(p[1:]) / 100.0 - 1e-12]


def _pct(share: float) -> str:
    return f"{100.0 * share:.1f}%"


def _nothing_measured(f: RunFacts) -> str | None:
    if f.queries:
        return None
    return "no query finished inside the measured window: there is no latency to report"


def _out_of_memory(f: RunFacts) -> str | None:
    n = f.heap.oom_servers
    if not n:
        return None
    return (f"{n} of {f.server_runs} server runs (servers x replications) ran out of heap: the live heap "
            f"({f.heap.live_max / 2**30:.3g} GiB at most) leaves the collector no room, and a real JVM throws "
            "OutOfMemoryError (raise cluster.server.heap or lower the live heap)")


def _errored(f: RunFacts) -> str | None:
    share = f.errors.query_error_share
    if not share:
        return None
    codes = ", ".join(f"{code} {CODE_NAMES[int(code)].split(':')[0]} {_pct(s)}"
                      for code, s in sorted(f.errors.by_code.items(), key=lambda kv: -kv[1]))
    partial = f", {_pct(f.partial_rate)} partial" if f.partial_rate else ""
    server = [f"{_pct(s)} {code}" for code, s in ((240, f.errors.scheduling_timeout_share),
                                                   (250, f.errors.execution_timeout_share)) if s]
    timed_out = f" (servers answered {' and '.join(server)} of their requests)" if server else ""
    return f"{_pct(share)} of queries carried an error ({codes}){partial}{timed_out}"


def _tainted(f: RunFacts) -> str | None:
    labels = tainted_percentiles(f.errors.query_error_share)
    if not labels:
        return None
    return (f"{', '.join(labels)} may be made of failed queries: a percentile made of timeouts or errors is "
            "not a latency")


def _partial_only(f: RunFacts) -> str | None:
    if not f.partial_rate or f.errors.query_error_share:
        return None
    return f"{_pct(f.partial_rate)} of queries came back partial"


#: The checks, in the order their sentences are said; each returns a sentence or ``None``.
CHECKS: tuple[Callable[[RunFacts], str | None], ...] = (_nothing_measured, _out_of_memory, _errored, _partial_only,
                                                        _tainted)


def run_failures(facts: RunFacts) -> Failures:
    """Whether the run failed anywhere and, when it did, one sentence per failure joined by ``; ``."""
    said = [s for check in CHECKS if (s := check(facts)) is not None]
    return Failures(failed=bool(said), why="; ".join(said))
