"""Carry the calibration's parameter uncertainty into an answer, and say how robust a sizing is.

A simulated percentile has two kinds of uncertainty. The simulation's (replications; ``ci_low`` and
``ci_high`` in every summary) shrinks with more simulated time. The model's does not: the service cost
was fitted from a finite, noisy log, and the answer moves when the cost does (in the demo, 2000 against
2500 ns per document moves the recommendation from 6 to 8 servers). This module propagates the second:

* :class:`ParameterDistribution` is the fit's joint normal distribution of the calibrated parameters
  (block-bootstrap covariance, ``service.variability`` with its own standard error), read from a
  :class:`~workbench.calibrate.fit.ServiceFit` or a ``calibration.json``;
* :func:`workbench.studies.uncertainty.propagate` runs a scenario with parameters drawn from it (a
  study: it simulates, so it lives with the other studies, above this package);
* :func:`robust_answer` reads a table of such runs (:func:`workbench.studies.uncertainty.robustness_table`,
  or a sweep's combined table with the same columns) and gives the smallest configuration that meets the
  SLO nominally, across the parameter uncertainty, and were the cost e (20%) higher or lower: the
  fields a report shows.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from workbench.calibrate.fit import FIT_PARAMETERS, ServiceFit
from workbench.calibrate.variability import MAX_VARIABILITY
from workbench.io.summary import P99, P99_HIGH, P99_MODEL_HIGH

__all__ = ["CALIBRATION_FILE", "COST_KEYS", "ParameterDistribution", "RobustAnswer", "configurations", "robust_answer"]

#: The fit ``workbench calibrate`` writes beside the calibrated scenario: a scenario with this file in its
#: directory is calibrated (the sizing report and ``workbench size`` read its parameter distribution there).
CALIBRATION_FILE = "calibration.json"
#: The cost parameters a cost error scales together (the variability is a spread, not a cost).
COST_KEYS = tuple(k for k, _, _ in FIT_PARAMETERS)
_VARIABILITY = "service.variability"


@dataclass(frozen=True)
class ParameterDistribution:
    """The calibrated parameters as a joint normal: ``mean`` and ``cov`` over ``keys`` (scenario keys);
    ``fixed`` are the parameters the fit held (they are not drawn)."""

    keys: tuple[str, ...]
    mean: np.ndarray
    cov: np.ndarray
    fixed: Mapping[str, float]

    @classmethod
    def from_fit(cls, fit: ServiceFit) -> ParameterDistribution:
        """From a fit: its bootstrap covariance, plus independent normals for parameters with their own
        standard error (a serverStats overhead, the variability)."""
        return cls.from_calibration({"fit": fit.to_dict()})

    @classmethod
    def from_calibration(cls, calibration: Mapping[str, Any] | str | Path) -> ParameterDistribution:
        """From ``calibration.json`` (its path or content)."""
        data = json.loads(Path(calibration).read_text(encoding="utf-8")) if isinstance(calibration, str | Path) \
            else calibration
        fit = data["fit"]
        params = {k: v for k, v in fit["parameters"].items()}
        params[_VARIABILITY] = {"value": fit["variability"]["value"], "se": fit["variability"]["se"]}
        joint = list(fit["covariance"]["keys"])
        own = [k for k, v in params.items() if k not in joint and v.get("se") is not None]
        keys = (*joint, *own)
        cov = np.zeros((len(keys), len(keys)))
        if joint:
            cov[: len(joint), : len(joint)] = np.asarray(fit["covariance"]["matrix"], dtype=float)
        for i, k in enumerate(own, start=len(joint)):
            cov[i, i] = float(params[k]["se"]) ** 2
        mean = np.array([float(params[k]["value"]) for k in keys])
        fixed = {k: float(v["value"]) for k, v in params.items() if k not in keys}
        return cls(tuple(keys), mean, cov, fixed)

    def nominal(self) -> dict[str, float]:
        """Scenario overrides setting every parameter to its fitted value."""
        return {**self.fixed, **dict(zip(self.keys, self.mean.tolist(), strict=True))}

    def draw(self, n: int, rng: np.random.Generator) -> list[dict[str, float]]:
        """``n`` draws as scenario overrides; costs are kept at or above 0, the variability in [0, 3]."""
        values = rng.multivariate_normal(self.mean, self.cov, size=n, method="svd") if self.keys \
            else np.zeros((n, 0))
        out = []
        for row in values:
            drawn = {k: max(0.0, float(v)) for k, v in zip(self.keys, row, strict=True)}
            if _VARIABILITY in drawn:
                drawn[_VARIABILITY] = min(drawn[_VARIABILITY], MAX_VARIABILITY)
            out.append({**self.fixed, **drawn})
        return out

    def scaled(self, factor: float) -> dict[str, float]:
        """The nominal overrides with every cost parameter (not the variability) times ``factor``."""
        return {k: v * factor if k in COST_KEYS else v for k, v in self.nominal().items()}


@dataclass(frozen=True)
class RobustAnswer:
    """How robust a sizing answer is (the fields the sizing report shows).

    ``nominal``: the cheapest configuration whose p99 simulation interval (``ci_high``) is under the SLO
    at the fitted cost; ``robust``: the cheapest one that also stays under it across the parameter
    uncertainty (``model_high``); ``if_cost_higher`` / ``if_cost_lower``: the cheapest one under it were
    every fitted cost ``1 + cost_error`` / ``1 - cost_error`` times as large. Each is a ``config`` label,
    or ``None`` when no configuration qualifies. ``table`` has one row per configuration with ``cost``,
    ``p99_ms``, ``ci_high``, ``model_high``, ``p99_cost_higher``, ``p99_cost_lower`` and the four
    ``meets_*`` flags the answers are read from.
    """

    slo_p99_ms: float
    cost_error: float
    nominal: str | None
    robust: str | None
    if_cost_higher: str | None
    if_cost_lower: str | None
    table: pd.DataFrame

    @property
    def changes(self) -> bool:
        """Whether the parameter uncertainty or a cost error would change the answer."""
        return len({self.nominal, self.robust, self.if_cost_higher, self.if_cost_lower}) > 1

    def sentence(self) -> str:
        """The answer in one sentence, for a report."""
        pct = f"{100 * self.cost_error:g}%"
        if self.nominal is None:
            return f"No configuration meets p99 under {self.slo_p99_ms:g} ms at the fitted cost."
        robust = ("the same configuration also meets it across the calibration's uncertainty"
                  if self.robust == self.nominal else
                  f"across the calibration's uncertainty it takes {self.robust or 'more than any tried'}")
        text = f"{self.nominal} is the smallest configuration meeting p99 under {self.slo_p99_ms:g} ms; {robust}"
        if not self.table["p99_cost_higher"].notna().any():
            return text + f" (the cost {pct} off was not run)."
        return (f"{text}; were the fitted cost {pct} higher it would take "
                f"{self.if_cost_higher or 'more than any tried'}, {pct} lower {self.if_cost_lower or 'none tried'}.")

    def to_dict(self) -> dict[str, Any]:
        return {"slo_p99_ms": self.slo_p99_ms, "cost_error": self.cost_error, "nominal": self.nominal,
                "robust": self.robust, "if_cost_higher": self.if_cost_higher, "if_cost_lower": self.if_cost_lower,
                "changes": self.changes, "sentence": self.sentence(), "table": self.table.to_dict("records")}


def _column(frame: pd.DataFrame, name: str, fallback: pd.Series) -> pd.Series:
    return frame[name].fillna(fallback) if name in frame else fallback


def _cheapest(table: pd.DataFrame, flag: str) -> str | None:
    ok = table[table[flag]].sort_values(["cost", "p99_ms"], kind="mergesort")
    return str(ok["config"].iloc[0]) if len(ok) else None


def robust_answer(table: pd.DataFrame, slo_p99_ms: float, cost_error: float = 0.2) -> RobustAnswer:
    """Read the robustness of a sizing from a table of runs
    (:func:`workbench.studies.uncertainty.robustness_table`, or a sweep's combined table with ``config``,
    ``cost`` and the flattened summary columns).

    Rows without ``cost_scale`` count as the fitted cost; without ``latency_ms.p99.model_high`` the
    parameter uncertainty is unknown and ``robust`` equals ``nominal``; scaled rows are matched to
    ``1 +/- cost_error``.
    """
    frame = table.copy()
    scale = frame["cost_scale"] if "cost_scale" in frame else pd.Series(1.0, index=frame.index)
    value = frame[P99]
    frame["ci_high"] = _column(frame, P99_HIGH, value)
    frame["model_high"] = _column(frame, P99_MODEL_HIGH, frame["ci_high"])
    nominal = frame[np.isclose(scale, 1.0)].set_index("config")
    out = pd.DataFrame({"config": nominal.index, "cost": nominal["cost"].to_numpy(),
                        "p99_ms": nominal[P99].to_numpy(),
                        "ci_high": nominal["ci_high"].to_numpy(), "model_high": nominal["model_high"].to_numpy()})
    for name, factor in (("p99_cost_higher", 1 + cost_error), ("p99_cost_lower", 1 - cost_error)):
        scaled = frame[np.isclose(scale, factor)].set_index("config")["ci_high"]
        out[name] = out["config"].map(scaled)
    out["meets_slo"] = out["ci_high"] <= slo_p99_ms
    out["meets_robustly"] = out["meets_slo"] & (out["model_high"] <= slo_p99_ms)
    out["meets_if_cost_higher"] = out["p99_cost_higher"] <= slo_p99_ms
    out["meets_if_cost_lower"] = out["p99_cost_lower"] <= slo_p99_ms
    return RobustAnswer(slo_p99_ms, cost_error, _cheapest(out, "meets_slo"), _cheapest(out, "meets_robustly"),
                        _cheapest(out, "meets_if_cost_higher"), _cheapest(out, "meets_if_cost_lower"), out)


def configurations(key: str, values: Sequence[Any], label: str = "{value} servers") -> dict[str, dict[str, Any]]:
    """Candidate configurations varying one scenario key: ``{label: {key: value}}``.

    >>> configurations("cluster.servers", [3, 6])
    {'3 servers': {'cluster.servers': 3}, '6 servers': {'cluster.servers': 6}}
    """
    return {label.format(value=v): {key: v} for v in values}
