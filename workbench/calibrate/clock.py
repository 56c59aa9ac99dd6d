"""Take the broker's millisecond clock out of a log's delays, keeping their shape.

Why. Pinot's broker logs ``timeMs`` as ``System.currentTimeMillis() - requestArrivalTimeMillis`` (1.5.1,
``BaseSingleStageBrokerRequestHandler``): the difference of two readings of a clock that counts whole
milliseconds. A query whose true time is ``L`` ms is logged as ``floor(L) + 1`` with probability ``frac(L)`` and as
``floor(L)`` otherwise (the first reading's phase within its millisecond is uniform), so the chance of logging
``k`` is ``max(0, 1 - |k - L|)``: a triangular kernel of mean 0 and variance 1/6 ms^2. A delay read from the log
(``timeMs`` less what the model charges the query, known to the nanosecond) carries that kernel shifted by the
query's own known part, so each query's logged delay tells which 2 ms wide interval its true delay lies in and
how likely each point of it is.

The distribution of the true delays is recovered as the maximum-likelihood mixing distribution on a fine lattice
(the nonparametric MLE, by its EM iteration: each step reweights every lattice point by how much of each logged
delay it explains). Keeping the mean and shrinking every delay's deviation by a common factor (what this replaced)
keeps the mean and variance but not the shape: against Apache Pinot 1.5.1 at 195.6 queries/s (``docs/validation.md``,
"The millisecond clock"), where the same queries' delays on the nanosecond clock had a median of 0.12 ms, the
shrunk delays' median was 0.38 ms and this one's 0.16, and their quartiles 0.90 ms apart against the truth's 0.59
(this one's 0.65): the model's median of every short query rose with it.

Delays beyond :data:`SPAN_MS` are kept as logged: the clock's ±1 ms is under 2% of them.

>>> import numpy as np
>>> rng = np.random.default_rng(1)
>>> true = rng.choice([0.2, 0.7, 2.5], 20_000, p=[0.5, 0.3, 0.2])   # the delays on a nanosecond clock
>>> known = rng.uniform(0, 3, true.size)                             # each query's known part, ms
>>> start = rng.uniform(0, 1, true.size)                             # the arrival's phase in its millisecond
>>> logged = np.floor(start + known + true) - np.floor(start) - known  # timeMs less the known part
>>> [round(float(np.percentile(deconvolved(logged), p)), 1) for p in (25, 60, 90)]
[0.2, 0.7, 2.5]
"""

from __future__ import annotations

from typing import Final

import numpy as np

__all__ = ["ITERATIONS", "SPAN_MS", "STEP_MS", "deconvolved", "mixing"]

#: The lattice the true delays are placed on, ms (the rounding of each logged delay to it moves it at most half of
#: this, against the clock's ±1 ms).
STEP_MS: Final = 0.02
#: EM steps: enough that the quantiles move by less than the lattice step between steps on Pinot's logs, and
#: a fixed count, so the same log always gives the same delays.
ITERATIONS: Final = 1000
#: Delays above this many ms are kept as logged (the clock's error is small beside them).
SPAN_MS: Final = 64.0


def mixing(logged: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The true delays' distribution most likely to have given these logged delays: lattice points (ms, step
    :data:`STEP_MS`, from 1 ms below the smallest to 1 ms above the largest) and their probabilities.

    ``logged`` must lie within :data:`SPAN_MS` (see :func:`deconvolved`).

    Every query's true delay 0.5 ms, their known parts and phases spread (``rng`` fixed):

    >>> rng = np.random.default_rng(2)
    >>> known, start = rng.uniform(0, 3, 4000), rng.uniform(0, 1, 4000)
    >>> points, p = mixing(np.floor(start + known + 0.5) - np.floor(start) - known)
    >>> round(float(p.sum()), 6), round(float(p @ points), 2), round(float(p[np.abs(points - 0.5) < 0.1].sum()), 1)
    (1.0, 0.5, 1.0)
    """
    lo = np.floor(float(logged.min())) - 1.0
    index = np.rint((logged - lo) / STEP_MS).astype(np.int64)
    reach = round(1.0 / STEP_MS)
    size = int(index.max()) + 1 + reach
    counts = np.bincount(index, minlength=size).astype(float)
    kernel = 1.0 - np.abs(np.arange(-reach, reach + 1)) * STEP_MS  # max(0, 1 - |k - L|) on the lattice
    kernel = kernel[kernel > 0]
    seen = counts > 0
    weights = np.convolve(counts, kernel, mode="same")
    weights /= weights.sum()
    n = counts.sum()
    for _ in range(ITERATIONS):
        explained = np.convolve(weights, kernel, mode="same")
        ratio = np.zeros(size)
        ratio[seen] = counts[seen] / explained[seen]
        weights = weights * np.convolve(ratio, kernel, mode="same") / n
    weights /= weights.sum()
    return lo + np.arange(size) * STEP_MS, weights


def deconvolved(logged: np.ndarray) -> np.ndarray:
    """Each logged delay (ms) replaced by the true delays' quantile at its rank (:func:`mixing`), so the values
    keep the log's order and have the recovered distribution; those beyond :data:`SPAN_MS` kept as logged.

    >>> rng = np.random.default_rng(3)
    >>> known, start = rng.uniform(0, 3, 4000), rng.uniform(0, 1, 4000)
    >>> logged = np.append(np.floor(start + known + 0.5) - np.floor(start) - known, 100.0)
    >>> d = deconvolved(logged)          # 0.5 ms for every query (within the EM's spread), and the long one kept
    >>> round(float(np.median(d[:-1])), 2), bool(np.abs(d[:-1] - 0.5).max() < 0.15), float(d[-1])
    (0.5, True, 100.0)
    """
    logged = np.asarray(logged, dtype=float)
    out = logged.copy()
    inside = logged <= SPAN_MS
    if not inside.any():
        return out
    points, p = mixing(logged[inside])
    levels = (np.argsort(np.argsort(logged[inside], kind="stable"), kind="stable") + 0.5) / int(inside.sum())
    cumulative = np.cumsum(p)
    # the smallest lattice point whose cumulative probability reaches the level
    at = np.minimum(np.searchsorted(cumulative, levels - 1e-12), len(points) - 1)
    out[inside] = points[at]
    return out
