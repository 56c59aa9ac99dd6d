"""Fit ``service.variability``: the spread of a segment's time around the cost model's mean.

After the mean costs are fitted, what is left of each query's time (its residual) comes from three
sources: the spread of segment times (each run multiplied by a mean-1 lognormal factor of log-sigma
``sigma``, which moves the slowest server's finish), the broker's millisecond clock (``timeMs`` is a
difference of two millisecond stamps, so it carries an error uniform-minus-uniform on (-1, 1) ms), and
anything the model does not have (queueing under load, GC). The first two are simulated query by query
(:mod:`workbench.calibrate.critical_path`), and ``sigma`` is chosen so that the simulated residuals have
the same interquartile range as the observed ones. The interquartile range, not the variance, because a
few queries that queued or met a GC pause would dominate a variance and inflate ``sigma``.

Draws are common random numbers: each query keeps its uniform index into its shape's draws and its
clock error, so the simulated spread is a smooth, increasing function of ``sigma`` and a root finder
can solve for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from workbench.calibrate.critical_path import Shape, draws

__all__ = ["MAX_VARIABILITY", "SHOWN", "VariabilityFit", "fit_variability", "iqr", "not_shown", "shown", "spread_gap",
           "widest"]

#: The scenario's upper bound on ``service.variability`` (``workbench/scenario/schema.py``).
MAX_VARIABILITY = 3.0
#: Monte Carlo draws per shape in the search (each simulated query picks from them).
_SAMPLES = 1024
#: Simulated residuals in the search: each query is simulated several times (up to 8) so that the
#: simulated spread is far less noisy than the observed one; a long log is subsampled instead.
_SIMULATED = 400_000
_MAX_REPEATS = 8
#: A fitted spread is reported only when it is at least this many standard errors above 0: a log's
#: ``timeMs`` includes queueing, GC and the clock, which also widen the residuals, and a spread the
#: residuals do not clearly show would only inflate the model's tail.
SHOWN = 2.0


def shown(sigma: float, se: float) -> bool:
    """Whether a fitted ``sigma`` with standard error ``se`` is told from 0 (:data:`SHOWN` standard errors).

    >>> shown(0.3, 0.02), shown(0.36, 2.24)
    (True, False)
    """
    return sigma >= SHOWN * se


def not_shown(sigma: float, se: float) -> str:
    """What a :class:`VariabilityFit` held at 0 says when the residuals did not show the spread."""
    return (f"held at 0: the residuals do not show a per-segment spread (the fit gives {sigma:.3g} with a "
            f"standard error of {se:.3g}, not told from 0 at {SHOWN:g} standard errors; queueing, GC and the "
            "clock widen them too, and the model has its own terms for those)")


def iqr(values: np.ndarray) -> float:
    """Interquartile range (linear interpolation).

    >>> iqr(np.arange(5.0))
    2.0
    """
    q1, q3 = np.percentile(values, [25, 75])
    return float(q3 - q1)


@dataclass(frozen=True)
class VariabilityFit:
    """The fitted log-sigma, its standard error, and the spreads it was matched on (ms)."""

    sigma: float
    se: float | None
    observed_iqr_ms: float
    clock_only_iqr_ms: float
    note: str = ""
    #: How fast the simulated spread grows with ``sigma`` at the fit, ms per unit of ``sigma``.
    slope: float = float("nan")


class _Simulator:
    """Simulated residuals of a fixed set of queries at any sigma (common random numbers)."""

    def __init__(self, mu: np.ndarray, shape_id: np.ndarray, shapes: Sequence[Shape], seed: int,
                 clock: bool = True) -> None:
        rng = np.random.default_rng(seed)
        self.repeats = int(max(1, min(_MAX_REPEATS, _SIMULATED // max(1, len(mu)))))
        if len(mu) * self.repeats > _SIMULATED:  # a random subset keeps the search fast on long logs
            keep = np.sort(rng.choice(len(mu), _SIMULATED, replace=False))
            mu, shape_id = mu[keep], shape_id[keep]
        mu, shape_id = np.tile(mu, self.repeats), np.tile(shape_id, self.repeats)
        self.mu, self.shapes, self.seed = mu, shapes, seed
        order = np.argsort(shape_id, kind="stable")
        ids, starts = np.unique(shape_id[order], return_index=True)
        self.groups = list(zip(ids.tolist(), np.split(order, starts[1:]), strict=True))
        self.pick = rng.integers(0, _SAMPLES, len(mu))
        self.clock = rng.random(len(mu)) - rng.random(len(mu))
        if not clock:  # a nanosecond measurement (the servers' CPU time) has no millisecond clock error
            self.clock = np.zeros(len(mu))

    def residuals(self, sigma: float) -> np.ndarray:
        factor = np.zeros(len(self.mu))
        for sid, rows in self.groups:
            sample = draws(self.shapes[sid], sigma, _SAMPLES, self.seed)
            factor[rows] = sample[self.pick[rows]] - sample.mean()
        out: np.ndarray = self.mu * factor + self.clock
        return out

    def spread(self, sigma: float) -> float:
        return iqr(self.residuals(sigma))


def widest(sim: _Simulator) -> tuple[float, float]:
    """The ``sigma`` in ``[0, MAX_VARIABILITY]`` whose simulated residuals are widest, and that spread.

    The spread is not increasing in ``sigma`` all the way: a mean-1 lognormal factor's median is
    ``exp(-sigma^2 / 2)``, so past about 1.5 most runs take a small fraction of their mean (and a rare few
    take hundreds of times it) and the interquartile range *shrinks*. Only ``[0, widest]`` is searched: a
    larger ``sigma`` with the same spread would put the mass of the work in rare, enormous runs.
    """
    grid = np.linspace(0.0, MAX_VARIABILITY, 31)
    spreads = np.array([sim.spread(s) for s in grid])
    best = int(np.argmax(spreads))
    return float(grid[best]), float(spreads[best])


def _solve(sim: _Simulator, target: float) -> tuple[float, bool]:
    """The fitted ``sigma`` and whether it is at the limit of what a per-segment factor can explain."""
    low = sim.spread(0.0)
    if target <= low:
        return 0.0, False
    top, spread = widest(sim)
    if spread <= target:
        return top, True
    return float(brentq(lambda s: sim.spread(s) - target, 0.0, top, xtol=1e-3)), False


def fit_variability(residuals: np.ndarray, mu: np.ndarray, shape_id: np.ndarray, shapes: Sequence[Shape], *,
                    blocks: Sequence[np.ndarray], seed: int = 0, bootstrap: int = 100,
                    clock: bool = True) -> VariabilityFit:
    """The ``sigma`` whose simulated residual spread matches the observed one, with a standard error.

    Parameters
    ----------
    residuals
        Observed minus fitted time per query, ms.
    mu
        Each query's mean work per segment under the fitted costs, ms (0 for a query without segments).
    shape_id, shapes
        Each query's per-server shape (:mod:`workbench.calibrate.features`).
    blocks
        Index arrays of contiguous stretches of the log: the standard error resamples whole blocks
        (queries close in time share load and are not independent).
    seed
        Root of the simulation's common random numbers.
    bootstrap
        Block-bootstrap resamples of the observed spread. Its standard deviation, with the simulated
        spread's own Monte Carlo error added, divided by the slope of the simulated spread in ``sigma``,
        is the standard error (given the mean costs; :func:`workbench.calibrate.fit.fit_service` adds
        how the costs and ``sigma`` move together).
    clock
        Whether the residuals carry the broker's millisecond clock error (``timeMs``); ``False`` for the
        servers' own CPU time, measured in nanoseconds (:mod:`workbench.calibrate.work`).
    """
    sim = _Simulator(mu, shape_id, shapes, seed, clock)
    target = iqr(residuals)
    sigma, at_limit = _solve(sim, target)
    floor = sim.spread(0.0)
    if sigma == 0.0 or at_limit:
        note = (("the residuals are no wider than the log's millisecond clock explains: variability 0" if clock else
                 "the residuals have no spread a per-segment factor explains: variability 0")
                if not at_limit else f"AT ITS LIMIT: the residuals (interquartile range {target:.3g} ms) are wider "
                                     f"than any per-segment spread makes them (at most {widest(sim)[1]:.3g} ms, at "
                                     f"variability {sigma:.2g}); what widens them is not per-segment work (queueing, "
                                     "GC, waits, or query shapes the cost model charges alike)")
        return VariabilityFit(sigma, None, target, floor, note)
    rng = np.random.default_rng([seed, 1])
    spreads = []
    for _ in range(bootstrap):
        chosen = rng.integers(0, len(blocks), len(blocks))
        spreads.append(iqr(residuals[np.concatenate([blocks[b] for b in chosen])]))
    step = min(0.05, sigma / 2)
    slope = (sim.spread(sigma + step) - sim.spread(sigma - step)) / (2 * step)
    observed = float(np.std(spreads, ddof=1)) if bootstrap > 1 else float("nan")
    # the simulated spread has Monte Carlo error too: that of len(mu) observations over the simulated count
    simulated = observed * np.sqrt(len(residuals) / len(sim.mu))
    se = float(np.hypot(observed, simulated) / slope) if slope > 0 and bootstrap > 1 else None
    return VariabilityFit(sigma, se, target, floor, slope=float(slope))


def spread_gap(residuals: np.ndarray, mu: np.ndarray, shape_id: np.ndarray, shapes: Sequence[Shape], sigma: float,
               seed: int = 0) -> float:
    """Simulated minus observed residual spread at ``sigma`` (ms): zero at the fitted ``sigma``.

    With the same ``seed`` the simulation draws the same random numbers, so differences of this gap
    between two sets of costs are smooth: how the fitted ``sigma`` would move with the costs.
    """
    return _Simulator(mu, shape_id, shapes, seed).spread(sigma) - iqr(residuals)
