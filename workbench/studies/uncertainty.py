"""The calibration's parameter uncertainty carried into an answer, by running the model on draws of it.

:class:`~workbench.calibrate.uncertainty.ParameterDistribution` is the fit's joint normal distribution
of the calibrated parameters; this module runs scenarios on it, each run through the one run verb
(:func:`workbench.runs.run_scenario`), every run on the same seed (common random numbers, so the spread
is the parameters' and not noise):

* :func:`propagate` returns a scenario's summary with ``model_low``/``model_high`` beside
  ``ci_low``/``ci_high`` on each latency statistic (:func:`workbench.analysis.stats.with_model_intervals`);
* :func:`draw_summaries` is its draws alone, for a caller that has the fitted run already (``workbench
  size`` adds the interval to a shape's own run);
* :func:`robustness_table` does that for each candidate configuration, plus the whole fitted cost
  scaled by 1 - e and 1 + e; :func:`workbench.calibrate.uncertainty.robust_answer` reads the table.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from workbench.analysis.stats import with_model_intervals
from workbench.calibrate.uncertainty import ParameterDistribution
from workbench.io.summary import Summary
from workbench.runs import resolve, run_scenario
from workbench.scenario import Scenario

__all__ = ["draw_rng", "draw_summaries", "propagate", "robustness_table"]


def _summary(sc: Scenario, overrides: Mapping[str, Any], seed: int | None, data: Path | None) -> Summary:
    """One run's summary statistics (nothing written: a draw is read once, then pooled)."""
    return run_scenario(sc, None, overrides=overrides, seed=seed, data=data).summary


def draw_rng(seed: int | None) -> np.random.Generator:
    """The generator that draws the parameters of a study on ``seed``: the same draws for every
    configuration run on that seed (common random numbers across configurations, too)."""
    return np.random.default_rng([seed if seed is not None else 0, 17])


def draw_summaries(sc: Scenario, params: ParameterDistribution, draws: int, *, seed: int | None = None,
                   data: Path | None = None, rng: np.random.Generator | None = None) -> list[Summary]:
    """``draws`` runs of ``sc`` with parameters drawn from ``params`` (``rng``, default :func:`draw_rng`),
    every run on the simulation seed ``seed``: the spread :func:`with_model_intervals` reads."""
    generator = rng if rng is not None else draw_rng(seed)
    return [_summary(sc, o, seed, data) for o in params.draw(draws, generator)]


def propagate(scenario: Scenario | str | Path | Mapping[str, Any], params: ParameterDistribution, *,
              draws: int = 20, seed: int | None = None, data: Path | None = None, confidence: float | None = None,
              rng: np.random.Generator | None = None) -> Summary:
    """The scenario's summary at the fitted parameters, with the model's interval on each latency statistic.

    Runs the scenario once at the fitted values and ``draws`` times with parameters drawn from
    ``params``, all on the same simulation seed (common random numbers). ``rng`` draws the parameters
    (default: seeded from ``seed``). Costs ``draws + 1`` simulations.
    """
    sc = resolve(scenario, None, None)
    nominal = _summary(sc, params.nominal(), seed, data)
    spread = draw_summaries(sc, params, draws, seed=seed, data=data, rng=rng)
    return with_model_intervals(nominal, spread, confidence)


def robustness_table(scenario: Scenario | str | Path | Mapping[str, Any],
                     configurations: Mapping[str, Mapping[str, Any]], params: ParameterDistribution, *,
                     draws: int = 10, cost_error: float = 0.2, seed: int | None = None, data: Path | None = None,
                     confidence: float | None = None) -> pd.DataFrame:
    """One row per (configuration, cost scale): the summary's columns, ``config``, ``cost`` and ``cost_scale``.

    ``configurations`` maps a label to scenario overrides (``{"6 servers": {"cluster.servers": 6}}``).
    Rows at ``cost_scale`` 1 carry the model's interval (:func:`propagate`); rows at ``1 - cost_error``
    and ``1 + cost_error`` are one run each with every fitted cost scaled. ``cost`` is servers x cores,
    the report's measure of a configuration's price. All runs share the seed.
    """
    base = resolve(scenario, None, None)
    rows = []
    for label, overrides in configurations.items():
        sc = base.with_overrides(overrides)
        price = sc.cluster.servers * sc.cluster.server.cores
        summary = propagate(sc, params, draws=draws, seed=seed, data=data, confidence=confidence)
        rows.append({"config": label, "cost": price, "cost_scale": 1.0, **summary.columns()})
        for factor in (1.0 - cost_error, 1.0 + cost_error):
            scaled = _summary(sc, params.scaled(factor), seed, data)
            rows.append({"config": label, "cost": price, "cost_scale": factor, **scaled.columns()})
    return pd.DataFrame(rows)
