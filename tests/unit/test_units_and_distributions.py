"""Sizes, durations and distributions read the way a capacity planner writes them."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.distributions import make_distribution
from workbench.units import parse_duration, parse_size


@pytest.mark.parametrize(("text", "expected"), [
    ("512MB", 512 * 2**20), ("2G", 2 * 2**30), ("2GiB", 2 * 2**30), ("1.5K", 1536), (4096, 4096),
    ("10 b", 10), ("1T", 2**40),
])
def test_parse_size(text: object, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("30s", 30.0), ("5m", 300.0), ("250ms", 0.25), ("1h", 3600.0), ("2d", 172800.0), (12, 12.0), ("7", 7.0),
])
def test_parse_duration(text: object, expected: float) -> None:
    assert parse_duration(text) == pytest.approx(expected)


@pytest.mark.parametrize("bad", ["", "MB", "-1G", True, None, [1]])
def test_bad_sizes_rejected(bad: object) -> None:
    with pytest.raises(ValueError):
        parse_size(bad)


def test_lognormal_mean_is_the_arithmetic_mean() -> None:
    d = make_distribution({"dist": "lognormal", "mean": 150, "sigma": 0.6})
    draws = d.sample(np.random.default_rng(1), 400_000)
    # standard error of the mean: 150 * sqrt(exp(0.36) - 1) / sqrt(4e5) ~ 0.16; 1.0 is > 6 SE
    assert abs(draws.mean() - 150) < 1.0


def test_exponential_and_uniform_means() -> None:
    rng = np.random.default_rng(2)
    assert abs(make_distribution({"dist": "exponential", "mean": 30}).sample(rng, 200_000).mean() - 30) < 0.5
    u = make_distribution({"dist": "uniform", "low": 2, "high": 4})
    assert u.mean == 3.0 and np.all((u.sample(rng, 1000) >= 2) & (u.sample(rng, 1000) < 4))


def test_empirical_resamples_only_observed_values() -> None:
    d = make_distribution({"dist": "empirical", "values": [1, 5, 9]})
    assert set(d.sample(np.random.default_rng(3), 1000).tolist()) == {1.0, 5.0, 9.0}
