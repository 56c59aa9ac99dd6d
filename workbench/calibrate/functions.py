"""Which aggregation functions' own per-document cost a log can fit (``service.function_ns_per_doc``).

Why. The cost model charges a document scanned ``service.ns_per_doc`` whatever the query does with it, but
Pinot's aggregation operators feed every matched row to each function of the query, and some functions do far
more per row than reading a value and adding it. Against Apache Pinot 1.5.1 (``docs/validation.md``, "A cost per
aggregation function") a ``PERCENTILETDIGEST`` query used 13.4 ms of the server's measured CPU on 120,000
documents, where the per-document fit to every query gave it 4.0 ms; ``COUNT`` queries on as many documents
were on the fit. So, where the servers measured each query's work, each function the plain ones
(:data:`~workbench.defaults.PLAIN_AGGREGATIONS`) do not cover gets a column of its own in the fit: documents
scanned times the calls of it in the query, in ns per document.

A function is fitted only where the log identifies it: at least :data:`~workbench.defaults.MIN_FUNCTION_QUERIES`
queries call it, and its fitted extra is above two standard errors. Otherwise it is held at none, and the
note says why (what was assumed: the function costs what ``ns_per_doc`` charges).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from workbench import defaults as D

__all__ = ["FUNCTION_KEY", "FUNCTION_UNIT", "FunctionCost", "calls_design", "candidates", "extra_ns", "key_of"]

#: The scenario key the costs are written under (one sub-key per function, Pinot's name in capitals).
FUNCTION_KEY = "service.function_ns_per_doc"
FUNCTION_UNIT = "ns per document scanned, per call of the function (beyond service.ns_per_doc)"


def key_of(name: str) -> str:
    """The scenario key of one function's cost (``name`` canonical, as :func:`~workbench.sim.service.function_calls`
    gives it).

    >>> key_of("percentiletdigest")
    'service.function_ns_per_doc.PERCENTILETDIGEST'
    """
    return f"{FUNCTION_KEY}.{name.upper()}"


@dataclass(frozen=True)
class FunctionCost:
    """One function's extra cost per document, or one of the work fit's other extra terms (``name`` its scenario key:
    :data:`workbench.calibrate.work.STRUCTURE`): fitted (``se`` set) or held at none (``value`` 0, ``why``)."""

    name: str
    queries: int
    value: float = 0.0
    se: float | None = None
    why: str = ""

    @property
    def fitted(self) -> bool:
        return self.se is not None


def candidates(calls: Sequence[tuple[str, ...]]) -> tuple[list[str], list[FunctionCost]]:
    """The functions (other than the plain ones) that enough queries call to try fitting, and those held at
    none because too few do (with why); ``calls`` are each query's function calls.

    >>> fit, held = candidates([("percentiletdigest",)] * 20 + [("distinctcounthll", "count")] * 3)
    >>> fit, [(h.name, h.queries) for h in held]
    (['percentiletdigest'], [('distinctcounthll', 3)])
    """
    counts = Counter(name for each in calls for name in set(each) if name not in D.PLAIN_AGGREGATIONS)
    tried = sorted(n for n, c in counts.items() if c >= D.MIN_FUNCTION_QUERIES)
    held = [FunctionCost(n, c, why=f"held at none: {c} of the log's queries call it ({D.MIN_FUNCTION_QUERIES} "
                                   "needed to fit it); assumed to cost what service.ns_per_doc charges")
            for n, c in sorted(counts.items()) if c < D.MIN_FUNCTION_QUERIES]
    return tried, held


def calls_design(calls: Sequence[tuple[str, ...]], docs_ms: np.ndarray, names: Sequence[str]) -> np.ndarray:
    """One column per function of ``names``: each query's documents (already in ms per ns, ``docs x 1e-6``) times
    its calls of the function.

    >>> calls_design([("a", "a"), ("b",)], np.array([1.0, 2.0]), ["a", "b"]).tolist()
    [[2.0, 0.0], [0.0, 2.0]]
    """
    n = np.array([[each.count(name) for name in names] for each in calls], dtype=float).reshape(len(calls), len(names))
    out: np.ndarray = n * np.asarray(docs_ms, dtype=float)[:, None]
    return out


def extra_ns(calls: Sequence[tuple[str, ...]], costs: Sequence[FunctionCost]) -> np.ndarray:
    """Each query's extra ns per document from the fitted functions' costs (0 where it calls none)."""
    by_name = {c.name: c.value for c in costs if c.fitted}
    return np.array([sum(by_name.get(n, 0.0) for n in each) for each in calls], dtype=float)
