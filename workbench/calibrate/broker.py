"""The broker's own costs, from its share of each query in the log's ``serverStats``.

``timeMs`` minus the slowest server's ``ResponseDelayMs`` is what the broker spent on the query itself (compile,
route, reduce) plus any wait on the broker: it takes no server's time, so it separates the broker's costs
(``overhead_ms``, ``reduce_ms_per_server``, ``reduce_ms_per_row``) from the servers' whether the servers' costs are
then fitted to ``timeMs`` (:mod:`~workbench.calibrate.fit`) or to their measured work
(:mod:`~workbench.calibrate.work`). Without it a log whose queries all reach servers cannot tell the broker's
per-query work from the servers' per-request work.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import lsq_linear

from workbench.calibrate.features import LogFeatures
from workbench.calibrate.fit import (
    FIT_KEYS,
    FIT_PARAMETERS,
    FitOptions,
    at_bound_source,
    block_bootstrap,
    bootstrap_blocks,
    identifiable,
)

__all__ = ["BROKER_KEYS", "CLOCK_SPAN_MS", "MIN_SHARES", "BrokerCost", "broker_costs"]

#: The broker's cost keys, in :data:`~workbench.calibrate.fit.FIT_KEYS` order.
BROKER_KEYS = ("cluster.broker.overhead_ms", "cluster.broker.reduce_ms_per_server", "cluster.broker.reduce_ms_per_row")
#: The most two millisecond clock readings' error moves the broker's share of ``timeMs``, ms: a query whose
#: share is within this of the median share met no wait the clocks cannot explain.
CLOCK_SPAN_MS = 2.0
#: Rounds of the trimmed fit at most (it stops when the queries kept no longer change).
_ROUNDS = 10
#: The fewest queries with a server round trip the broker's costs are fitted on.
MIN_SHARES = 10
#: One broker cost: value, standard error (``None`` when held), and where it came from.
BrokerCost = tuple[float, float | None, str]


def broker_costs(f: LogFeatures, slowest_ms: np.ndarray, options: FitOptions) -> dict[str, BrokerCost]:
    """The broker's costs from its share of each query (``timeMs`` minus the slowest server's round trip).

    The share is the broker's work plus any wait on the broker plus the error of two millisecond clocks (each
    reading errs by up to 1 ms, so the share by up to 2 ms either way, and is a whole number of ms). The overhead
    (the intercept) and the reduce costs are a trimmed least-squares fit, none below zero: fitted, then refitted
    without the queries whose share lies more than :data:`CLOCK_SPAN_MS` above the fit (the clocks cannot
    explain that: they waited), until those settle; block-bootstrap standard errors on the queries kept. A
    plain quantile would read the clocks' error as work (or as its absence: a 0.4 ms overhead has a lower decile
    of 0), the plain mean would read waits as work, and trimming on the share itself rather than on the fit
    would leave out the queries with many rows to reduce and bias ``reduce_ms_per_row`` low.
    Defaults when ``serverStats`` gives no round trips.
    """
    use = (f.servers > 0) & np.isfinite(slowest_ms)
    if use.sum() < MIN_SHARES:
        return {k: (default, None, "held at default (workbench/defaults.py): the log's serverStats give no server "
                                   "round trips") for k, default in _defaults().items()}
    share = (f.time_ms - slowest_ms)[use]
    x = np.zeros((int(use.sum()), len(FIT_KEYS)))
    x[:, 0], x[:, 5], x[:, 6] = 1.0, f.responded[use], f.rows[use]
    free, held = identifiable(x, list(BROKER_KEYS))
    out: dict[str, BrokerCost] = {k: (_defaults()[k], None, "held at default (workbench/defaults.py): the log cannot "
                                      "tell it from the broker's other costs") for k in held}
    target = share - sum((out[k][0] * x[:, FIT_KEYS.index(k)] for k in held), np.zeros(len(share)))
    cols = [FIT_KEYS.index(k) for k in free]
    calm = np.ones(len(target), dtype=bool)
    beta = np.zeros(len(cols))
    for _ in range(_ROUNDS):   # trimmed least squares: leave out what lies above the fit by more than the clocks
        if cols:
            beta = lsq_linear(x[calm][:, cols], target[calm], bounds=(0.0, np.inf), method="bvls").x
        keep = target - x[:, cols] @ beta <= CLOCK_SPAN_MS
        if np.array_equal(keep, calm) or keep.sum() < MIN_SHARES:
            break
        calm = keep
    cov = block_bootstrap(x[calm][:, cols], target[calm], np.ones(int(calm.sum())), bootstrap_blocks(int(calm.sum())),
                          options.bootstrap, np.random.default_rng([options.seed, 4]))
    where = (f"fitted to the broker's share of timeMs (timeMs minus the slowest server's ResponseDelayMs) on the "
             f"{int(calm.sum()):,} queries whose share the millisecond clocks explain (within {CLOCK_SPAN_MS:g} ms "
             "above the fit; the rest waited)")
    for i, (k, b) in enumerate(zip(free, beta.tolist(), strict=True)):
        se = float(np.sqrt(max(cov[i, i], 0.0)))
        out[k] = (float(b), se, where if b > 0 else at_bound_source(se))
    return out


def _defaults() -> dict[str, float]:
    return {k: default for k, _, default in FIT_PARAMETERS if k in BROKER_KEYS}
