"""Fit the wake-up cost (``service.wake_ms``, ``service.wake_tau_ms``): how much longer a query takes the longer the
cluster was idle before it arrived.

Why. Apache Pinot 1.5.1 on one core (``docs/validation.md``, "Why Pinot's median falls with load") answers a query
that arrives a few ms after the previous one about 2.8 ms sooner than one that arrives after a long quiet stretch,
the same at every rate (a broker's compile, a server's execution and the Netty round trip all take longer after a
quiet stretch); the JVM's CPU per query falls with load to match. At a low rate most queries pay it, at a high
rate few: a model that charges every query the work measured at one rate has the median rise with load where
Pinot's falls.

How. Per logged query, its *excess*: ``timeMs`` less what the fitted model already charges it (the broker's work
and the server's critical path), i.e. its delay before the wake-up is taken out of it; and its *gap*, the time
since the previous query arrived. On the queries that met no other query in flight (their waits are the model's
to simulate, :func:`~workbench.calibrate.isolation.isolated`), least squares of ``excess = a + wake x c(gap /
tau)``, ``c`` the curve the model charges (:func:`workbench.sim.decisions.wake_work`: flat over the first few ms
of idle time, most of it built up between ``tau`` and ``4 tau``). The wake-up is kept when the log shows it
(``wake`` at least two standard errors above 0, the time constant inside its bounds, enough queries); otherwise it
is held at 0 and the note says why. ``timeMs`` is a millisecond clock: its error (variance 1/6 ms^2, mean 0)
widens the standard errors, not the fit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import curve_fit

from workbench import defaults as D
from workbench.sim.decisions import wake_work
from workbench.sim.fast.jit import python

__all__ = ["MIN_SIDE_SHARE", "MIN_WAKE_QUERIES", "Wake", "fit_wake", "gaps_ms", "held_wake"]

#: Isolated queries a wake-up fit needs.
MIN_WAKE_QUERIES = 100
#: The share of the fitted queries whose gaps must be shorter than the time constant, and the share longer than
#: three of it, for the log to place the constant (else it is held at the default and the size fitted alone).
MIN_SIDE_SHARE = 0.1
#: Bounds of the time constant, ms: below the log's millisecond clock it cannot be read; above a few seconds
#: it would be the load's own drift, not a wake-up.
_TAU_BOUNDS = (0.5, 5000.0)
#: The model's wake-up curve, as plain Python over arrays (the one both engines charge).
_wake_work = python(wake_work)
#: Gaps are capped here (ms) for the fit (the first query's is infinite; beyond this the wake-up is whole).
_GAP_CAP_MS = 60_000.0


@dataclass(frozen=True)
class Wake:
    """A fitted (or held) wake-up: its size and time constant (ms), their standard errors, what it was read from."""

    wake_ms: float
    tau_ms: float
    wake_se: float | None
    tau_se: float | None
    queries: int
    note: str
    #: The fitted curve's intercept ``a``, ms: the excess of a query that found the cluster awake (gap 0). Below 0,
    #: what the model charges every query besides the wake-up is more than such a query took.
    baseline_ms: float = 0.0

    @property
    def fitted(self) -> bool:
        return self.wake_ms > 0

    def per_query(self, gap_ms: np.ndarray) -> np.ndarray:
        """Each query's wake-up work by its gap, as the model charges it (:func:`workbench.sim.decisions.wake_work`)."""
        return np.asarray(_wake_work(np.asarray(gap_ms, dtype=float), self.wake_ms, self.tau_ms), dtype=float)

    def to_dict(self) -> dict[str, Any]:
        return {"wake_ms": self.wake_ms, "wake_se": self.wake_se, "tau_ms": self.tau_ms, "tau_se": self.tau_se,
                "queries": self.queries, "note": self.note, "baseline_ms": self.baseline_ms}


def gaps_ms(arrival_s: np.ndarray) -> np.ndarray:
    """Per query (in the rows' order) the ms since the previous query arrived (the first: infinite).

    >>> gaps_ms(np.array([0.010, 0.0, 0.5])).tolist()
    [10.0, inf, 490.0]
    """
    order = np.argsort(arrival_s, kind="stable")
    t = np.asarray(arrival_s, dtype=float)[order] * 1000.0
    out = np.empty(len(t))
    out[order] = np.diff(t, prepend=-np.inf)
    return out


def held_wake(why: str, queries: int) -> Wake:
    """A wake-up held at 0, saying why."""
    return Wake(0.0, D.COST_WAKE_TAU_MS, None, None, queries,
                f"held at 0 (workbench/defaults.py COST_WAKE_MS): {why}")


def _curve(gap: np.ndarray, a: float, wake: float, tau: float) -> np.ndarray:
    return a + np.asarray(_wake_work(gap, wake, tau), dtype=float)


def fit_wake(gap_ms: np.ndarray, excess_ms: np.ndarray, use: np.ndarray) -> Wake:
    """The wake-up fitted to the ``use`` queries' ``excess_ms`` against their ``gap_ms`` (see the module's notes)."""
    keep = use & np.isfinite(excess_ms) & ~np.isnan(gap_ms)
    n = int(keep.sum())
    if n < MIN_WAKE_QUERIES:
        return held_wake(f"{n} queries met no other in flight ({MIN_WAKE_QUERIES} needed to read a wake-up)", n)
    gap, y = np.minimum(gap_ms[keep], _GAP_CAP_MS), excess_ms[keep]
    lo, hi = _TAU_BOUNDS
    try:
        p, cov = curve_fit(_curve, gap, y, p0=[float(np.median(y)), 1.0, D.COST_WAKE_TAU_MS],
                           bounds=([-np.inf, 0.0, lo], [np.inf, np.inf, hi]))
    except (RuntimeError, ValueError) as e:
        return held_wake(f"the fit did not converge ({e})", n)
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    a, wake, tau = float(p[0]), float(p[1]), float(p[2])
    how = "fitted"
    if min((gap < tau).mean(), (gap > 3.0 * tau).mean()) < MIN_SIDE_SHARE:
        # the gaps do not reach both sides of the time constant: the size and the constant trade off along
        # the curve's first stretch; the constant is held at Pinot's measured one and the size fitted alone
        tau = D.COST_WAKE_TAU_MS
        try:
            q, qcov = curve_fit(lambda g, a, w: _curve(g, a, w, tau), gap, y, p0=[float(np.median(y)), 1.0],
                                bounds=([-np.inf, 0.0], [np.inf, np.inf]))
        except (RuntimeError, ValueError) as e:
            return held_wake(f"the fit did not converge ({e})", n)
        a, wake, se = float(q[0]), float(q[1]), np.array([np.nan, np.sqrt(max(float(qcov[1, 1]), 0.0)), np.nan])
        how = (f"fitted with wake_tau_ms held at {tau:g} ms (workbench/defaults.py: its gaps do not reach both "
               "sides of the time constant, so the log cannot place it)")
    if not np.isfinite(se[1]) or wake < 2.0 * se[1]:
        return held_wake(f"the log does not show it: {wake:.3g} ± {se[1]:.3g} ms over {n:,} queries that met no other "
                     "in flight", n)
    if not lo * 1.01 < tau < hi * 0.99:
        return held_wake(f"its time constant went to a bound ({tau:.3g} ms): the log's gaps do not place it", n)
    return Wake(wake, tau, float(se[1]), float(se[2]) if np.isfinite(se[2]) else None, n,
                f"{how} to the {n:,} queries that met no other in flight: timeMs less the fitted work against the "
                "time since the previous query arrived", a)
