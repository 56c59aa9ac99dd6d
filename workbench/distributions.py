"""Probability distributions named in scenarios (``{"dist": "exponential", "mean": 30}``).

A distribution is a frozen value with a ``sample(rng, size)`` method and a ``mean``; randomness is
always passed in as a :class:`numpy.random.Generator`. The registry maps the ``dist`` name a user
writes to its class, so new distributions need no edits elsewhere. A bare number in a scenario means
``deterministic`` with that value.

>>> import numpy as np
>>> d = make_distribution({"dist": "exponential", "mean": 30})
>>> d.mean
30.0
>>> make_distribution(5).sample(np.random.default_rng(0), 3).tolist()
[5.0, 5.0, 5.0]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import numpy as np

__all__ = [
    "DISTRIBUTIONS",
    "Deterministic",
    "Distribution",
    "Empirical",
    "Exponential",
    "Lognormal",
    "Uniform",
    "make_distribution",
]


class Distribution(Protocol):
    """What the model needs of a distribution: draws and a mean (same unit as the parameters)."""

    @property
    def mean(self) -> float: ...

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray: ...


@dataclass(frozen=True)
class Deterministic:
    """Always ``value``; the baseline for M/D/1 checks and fixed GC pauses."""

    value: float
    params: ClassVar[tuple[str, ...]] = ("value",)

    @property
    def mean(self) -> float:
        return self.value

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return np.full(size, self.value, dtype=float)


@dataclass(frozen=True)
class Exponential:
    """Exponential with the given ``mean`` (memoryless: Poisson gaps, M/M/c service)."""

    mean: float
    params: ClassVar[tuple[str, ...]] = ("mean",)

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return rng.exponential(self.mean, size)


@dataclass(frozen=True)
class Lognormal:
    """Lognormal with arithmetic ``mean`` and log-space standard deviation ``sigma``.

    Parameterised by the mean (not the median) so that changing ``sigma`` changes the tail without
    changing the offered load, which is what a capacity planner varies.
    """

    mean: float
    sigma: float
    params: ClassVar[tuple[str, ...]] = ("mean", "sigma")

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        mu = math.log(self.mean) - self.sigma**2 / 2.0
        return rng.lognormal(mu, self.sigma, size)


@dataclass(frozen=True)
class Uniform:
    """Uniform on ``[low, high)``."""

    low: float
    high: float
    params: ClassVar[tuple[str, ...]] = ("low", "high")

    @property
    def mean(self) -> float:
        return (self.low + self.high) / 2.0

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return rng.uniform(self.low, self.high, size)


@dataclass(frozen=True)
class Empirical:
    """Resampling (with replacement) of observed ``values``, e.g. pauses read from a GC log."""

    values: tuple[float, ...]
    params: ClassVar[tuple[str, ...]] = ("values",)

    @property
    def mean(self) -> float:
        return float(np.mean(self.values))

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return rng.choice(np.asarray(self.values, dtype=float), size)


def _check_positive(name: str, value: float) -> None:
    if not value > 0:
        raise ValueError(f"{name} must be positive, got {value}")


def _make_deterministic(p: Mapping[str, Any]) -> Distribution:
    if float(p["value"]) < 0:
        raise ValueError(f"value must not be negative, got {p['value']}")
    return Deterministic(float(p["value"]))


def _make_exponential(p: Mapping[str, Any]) -> Distribution:
    _check_positive("mean", float(p["mean"]))
    return Exponential(float(p["mean"]))


def _make_lognormal(p: Mapping[str, Any]) -> Distribution:
    _check_positive("mean", float(p["mean"]))
    _check_positive("sigma", float(p["sigma"]))
    return Lognormal(float(p["mean"]), float(p["sigma"]))


def _make_uniform(p: Mapping[str, Any]) -> Distribution:
    low, high = float(p["low"]), float(p["high"])
    if not 0 <= low < high:
        raise ValueError(f"needs 0 <= low < high, got low={low}, high={high}")
    return Uniform(low, high)


def _make_empirical(p: Mapping[str, Any]) -> Distribution:
    values = p["values"]
    if not isinstance(values, list | tuple) or not values:
        raise ValueError("values must be a non-empty list of numbers")
    if any(isinstance(v, bool) or not isinstance(v, int | float) for v in values):
        raise ValueError("values must be a non-empty list of numbers")
    floats = tuple(float(v) for v in values)
    if not all(math.isfinite(v) for v in floats):
        raise ValueError("values must be finite numbers")
    if min(floats) < 0:
        raise ValueError("values must not be negative")
    return Empirical(floats)


#: ``dist`` name -> (parameter names, factory).
DISTRIBUTIONS: Mapping[str, tuple[tuple[str, ...], Callable[[Mapping[str, Any]], Distribution]]] = {
    "deterministic": (Deterministic.params, _make_deterministic),
    "exponential": (Exponential.params, _make_exponential),
    "lognormal": (Lognormal.params, _make_lognormal),
    "uniform": (Uniform.params, _make_uniform),
    "empirical": (Empirical.params, _make_empirical),
}


def make_distribution(spec: object) -> Distribution:
    """Build a distribution from a number or a ``{"dist": name, ...params}`` mapping.

    Raises ``KeyError`` naming the bad or missing key and ``ValueError`` for impossible values; the
    scenario loader turns both into a :class:`~workbench.errors.ScenarioError` with the key path.
    """
    if isinstance(spec, int | float) and not isinstance(spec, bool):
        if not math.isfinite(spec):
            raise ValueError(f"must be a finite number, got {spec!r}")
        return _make_deterministic({"value": spec})
    if not isinstance(spec, Mapping):
        raise TypeError(f"must be a number or a mapping like {{dist: exponential, mean: 30}}, got {spec!r}")
    name = spec.get("dist")
    if name not in DISTRIBUTIONS:
        raise KeyError(f"dist: must be one of {', '.join(DISTRIBUTIONS)}, got {name!r}")
    params, factory = DISTRIBUTIONS[str(name)]
    for key in spec:
        if key != "dist" and key not in params:
            raise KeyError(f"{key}: unknown parameter of {name}; allowed: {', '.join(params)}")
    for key in params:
        if key not in spec:
            raise KeyError(f"{key}: required by dist {name}")
        if key != "values" and (isinstance(spec[key], bool) or not isinstance(spec[key], int | float)):
            raise TypeError(f"{key}: must be a number, got {spec[key]!r}")
        if key != "values" and not math.isfinite(spec[key]):
            raise ValueError(f"{key} must be a finite number, got {spec[key]!r}")
    return factory(spec)
