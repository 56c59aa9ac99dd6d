"""The broker's millisecond clock taken out of a log's delays (``workbench.calibrate.clock``).

Every log here is made the way Pinot's broker makes ``timeMs`` (1.5.1, ``BaseSingleStageBrokerRequestHandler``:
``System.currentTimeMillis() - requestArrivalTimeMillis``): a query arrives at a uniformly random phase of the
broker's millisecond, takes its known part (what the model charges it, to the nanosecond) plus its true delay, and
the log keeps the difference of the two whole-millisecond readings. The expected values are the true delays' own
quantiles, drawn in the test: theory, not the code's output.
"""

from __future__ import annotations

import numpy as np
import pytest

from workbench.calibrate.clock import SPAN_MS, deconvolved


def _logged(true: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``timeMs`` less each query's known part, for queries whose delays are ``true`` (ms)."""
    known = rng.uniform(0.0, 4.0, true.size)
    start = rng.uniform(0.0, 1000.0, true.size)
    return np.floor(start + known + true) - np.floor(start) - known


def _pinot_like(n: int, rng: np.random.Generator) -> np.ndarray:
    """Delays shaped as Pinot 1.5.1's at 195.6/s on the ns clock (docs/validation.md): a quarter a little below 0, a
    body around 0.1-0.3 ms, and 15% in a tail of several ms (a mean of about 1 ms)."""
    body = rng.normal(0.15, 0.12, n)
    below = rng.uniform(-0.3, 0.0, n)
    tail = rng.exponential(6.0, n) + 0.5
    pick = rng.uniform(size=n)
    return np.where(pick < 0.25, below, np.where(pick < 0.85, body, tail))


@pytest.mark.parametrize("seed", [1, 2])
def test_the_quantiles_of_a_skewed_delay_come_back_from_its_millisecond_readings(seed: int) -> None:
    rng = np.random.default_rng(seed)
    true = _pinot_like(20_000, rng)
    got = deconvolved(_logged(true, rng))
    for p in (10, 25, 50, 75):  # the body, to within a few lattice steps
        assert np.percentile(got, p) == pytest.approx(np.percentile(true, p), abs=0.06), p
    for p in (95, 99):          # the tail, where the clock's 1 ms is small and the draws are few
        assert np.percentile(got, p) == pytest.approx(np.percentile(true, p), rel=0.06), p
    assert got.mean() == pytest.approx(true.mean(), abs=0.03)


def test_shrinking_the_deviations_instead_keeps_the_mean_and_spread_but_not_the_median() -> None:
    """Why the clock is taken out by the distribution it most likely came from: shrinking every logged delay's
    deviation from the mean to the variance the clock does not explain (1/6 ms^2, the step this replaced) keeps the
    mean and the variance of the skewed delays, but the variance is the tail's, so the shrinking is slight and the
    body keeps the clock's spread: its quartiles twice as far apart as the true ones."""
    rng = np.random.default_rng(3)
    true = _pinot_like(20_000, rng)
    logged = _logged(true, rng)
    mean, var = logged.mean(), logged.var()
    shrunk = mean + (logged - mean) * np.sqrt(1.0 - (1.0 / 6.0) / var)
    assert shrunk.var() == pytest.approx(true.var(), rel=0.05)

    def iqr(x: np.ndarray) -> float:
        return float(np.percentile(x, 75) - np.percentile(x, 25))

    assert iqr(shrunk) > 2.0 * iqr(true)
    assert iqr(deconvolved(logged)) == pytest.approx(iqr(true), abs=0.06)


def test_a_delay_below_zero_comes_back_below_zero() -> None:
    """The delay is timeMs less the model's means, so a query faster than them has a delay below 0: the lift of the
    broker's overhead off the path reads its 1% quantile, which must be there to read."""
    rng = np.random.default_rng(4)
    true = rng.choice([-0.4, 0.3], 10_000)
    got = deconvolved(_logged(true, rng))
    assert np.percentile(got, 25) == pytest.approx(-0.4, abs=0.06)
    assert np.percentile(got, 75) == pytest.approx(0.3, abs=0.06)


def test_each_query_keeps_its_rank_and_a_long_delay_is_kept_as_logged() -> None:
    rng = np.random.default_rng(5)
    logged = np.append(_logged(rng.exponential(1.0, 5_000), rng), [SPAN_MS + 10.0, 500.0])
    got = deconvolved(logged)
    order = np.argsort(logged, kind="stable")
    assert np.all(np.diff(got[order]) >= 0)            # a longer logged delay never comes back shorter
    assert got[-2:].tolist() == [SPAN_MS + 10.0, 500.0]  # the clock's 1 ms is nothing beside these
    assert np.array_equal(deconvolved(logged), got)       # the same log, the same delays
