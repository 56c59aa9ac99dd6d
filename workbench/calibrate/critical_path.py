"""How long a query's slowest server takes, in units of one segment's mean work.

A broker query log records each query's *total* documents, segments and servers, not what each server
did, so the fit needs the link between those totals and the time the broker waits. The model's answer
(``docs/model.md``): a server's segments are worked through by ``k`` tasks that each take the next
unprocessed segment when they finish one (Pinot's work stealing, PE §2.2), and the broker waits for its
slowest server. With every segment of a query costing ``mu`` on average and each run multiplied by a
mean-1 lognormal factor of log-sigma ``sigma`` (``service.variability``), the wait is ``mu x M`` where
``M`` is the makespan of that list schedule in units of ``mu``, maximised over the servers.

This module draws ``M`` for a :data:`Shape` (per server: segments, tasks) by Monte Carlo and gives its
mean (what the regression multiplies ``mu`` by) and draws (what the variability fit compares residuals
with). Draws of one shape always come from the same seeded standard normals, so results at two values
of ``sigma`` are common-random-number comparisons and the variability search is smooth in ``sigma``.

>>> import numpy as np
>>> shape = ((4, 2, 1),)            # one server, 4 segments, 2 tasks: two rounds of segments
>>> float(mean_factor(shape, 0.0))
2.0
>>> float(mean_factor(((5, 2, 3),), 0.0))   # 5 segments on 2 tasks takes 3 rounds, on each of 3 servers
3.0
>>> 2.0 < mean_factor(shape, 0.5, samples=4000) < 2.6   # the slower of two tasks: above 2 with spread
True
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

__all__ = ["DEFAULT_SAMPLES", "Shape", "draws", "factor_moments", "makespan", "mean_factor", "mean_factors"]

#: One query's work per server as ``((segments, tasks, servers with that pair), ...)``.
Shape = tuple[tuple[int, int, int], ...]
#: Monte Carlo draws per shape: the mean's relative error is below ~1% for sigma up to 1.
DEFAULT_SAMPLES = 2000


def makespan(factors: np.ndarray, tasks: int) -> np.ndarray:
    """Makespan of each row's segments (in order) on ``tasks`` work-stealing tasks.

    ``factors`` has one row per draw and one column per segment (each segment's time in units of the
    mean). The first ``tasks`` segments start at once; each further segment goes to the task that
    frees up first. Returns one makespan per row.

    >>> makespan(np.array([[1.0, 2.0, 1.0, 1.0]]), 2).tolist()   # tasks end at 1, 2; then 2, 3 -> 3
    [3.0]
    """
    rows, segments = factors.shape
    if segments == 0:
        return np.zeros(rows)
    k = max(1, min(tasks, segments))
    if k == segments:
        result: np.ndarray = factors.max(axis=1)
        return result
    if k == 1:
        total: np.ndarray = factors.sum(axis=1)
        return total
    loads = factors[:, :k].copy()
    index = np.arange(rows)
    for j in range(k, segments):
        free = loads.argmin(axis=1)
        loads[index, free] += factors[:, j]
    longest: np.ndarray = loads.max(axis=1)
    return longest


def _seed(shape: Shape, seed: int) -> list[int]:
    """A stable per-shape seed, so the same shape draws the same normals in every call."""
    return [seed, zlib.crc32(repr(shape).encode("ascii"))]


def draws(shape: Shape, sigma: float, samples: int = DEFAULT_SAMPLES, seed: int = 0) -> np.ndarray:
    """``samples`` draws of the slowest server's makespan, in units of a segment's mean work.

    With ``sigma`` 0 every draw is the deterministic makespan, ``max(ceil(segments / tasks))``.
    """
    if sigma <= 0:
        rounds = max((-(-s // max(1, min(k, s))) if s else 0 for s, k, _ in shape), default=0)
        return np.full(samples, float(rounds))
    rng = np.random.default_rng(_seed(shape, seed))
    slowest = np.zeros(samples)
    for segments, tasks, servers in shape:
        for _ in range(servers):
            z = rng.standard_normal((samples, segments))
            factors = np.exp(sigma * z - sigma * sigma / 2.0)
            slowest = np.maximum(slowest, makespan(factors, tasks))
    return slowest


def mean_factor(shape: Shape, sigma: float, samples: int = DEFAULT_SAMPLES, seed: int = 0) -> float:
    """Mean of :func:`draws`: the factor ``g`` with E[slowest server's worker time] = ``mu x g``."""
    return float(draws(shape, sigma, samples, seed).mean())


def mean_factors(shapes: Sequence[Shape], sigma: float, samples: int = DEFAULT_SAMPLES, seed: int = 0) -> np.ndarray:
    """:func:`mean_factor` of each shape."""
    return factor_moments(shapes, sigma, samples, seed)[0]


def factor_moments(shapes: Sequence[Shape], sigma: float, samples: int = DEFAULT_SAMPLES,
                   seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of :func:`draws` for each shape (the variance weights the fit's queries)."""
    stats = [(d.mean(), d.var()) for d in (draws(s, sigma, samples, seed) for s in shapes)]
    means = np.array([m for m, _ in stats], dtype=float)
    variances = np.array([v for _, v in stats], dtype=float)
    return means, variances
