"""Where a sizing answer is fragile: the warnings the report puts in front of the reader.

Each check is a function of the recommended configuration's row (and the report's data) returning a
sentence, or ``None`` when there is nothing to warn about; :data:`CHECKS` lists them in the order the
report prints them. A warning says what was seen and what it means for the decision.

>>> row = pd.Series({"utilisation.mean": 0.81, "partial_rate": 0.0, "latency_ms.p99.value": 150.0,
...                  "latency_ms.p99.ci_low": 140.0, "latency_ms.p99.ci_high": 160.0})
>>> busy(row, Context(slo_p99_ms=200.0)).split(":")[0]
'Servers are 81% busy on average (warning above 70%)'
>>> slo_overlap(row, Context(slo_p99_ms=200.0)) is None
True
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from workbench import defaults as D
from workbench.io.summary import P99_HIGH, P99_LOW, P99_MODEL_HIGH, PARTIAL_RATE, UTILISATION_MEAN

__all__ = ["CHECKS", "Context", "assumptions_drive", "backtest_fit", "busy", "idle_servers", "partial_results",
           "slo_overlap", "straddling", "warnings_for"]


@dataclass(frozen=True)
class Context:
    """What the checks need besides the row: the SLO, the threshold and the calibration's back-test.

    ``slo_p99_ms`` is the judging SLO's one p99 target (:attr:`workbench.report.judging.Judging.p99_ms`):
    ``None`` without one and for a tenant, whose p99 no one target judges, so no interval is checked against it.
    ``backtest`` is the calibrated directory's ``backtest.json`` content (``None``: not calibrated).
    """

    slo_p99_ms: float | None
    utilisation_warning: float = D.UTILISATION_WARNING
    backtest: Mapping[str, Any] | None = None
    backtest_tolerance: float = D.BACKTEST_WARNING
    #: Every configuration (``shape``, p99 columns), to point at those whose verdict could flip.
    combined: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: The scenario keys whose plausible range moves the answer
    #: (:attr:`workbench.report.assumptions.AssumptionCheck.drives`).
    moving_assumptions: tuple[str, ...] = ()


def _get(row: pd.Series, key: str) -> float:
    value = row.get(key, math.nan)
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def busy(row: pd.Series, ctx: Context) -> str | None:
    """Mean utilisation above the threshold."""
    util = _get(row, UTILISATION_MEAN)
    if not util > ctx.utilisation_warning:
        return None
    return (f"Servers are {util:.0%} busy on average (warning above {ctx.utilisation_warning:.0%}): queues grow "
            "fast with load, so a small error in the load or the cost per query moves p99 a lot.")


def partial_results(row: pd.Series, ctx: Context) -> str | None:
    """Any partial results (a server missing from a response: timeouts, crashes, unavailable segments)."""
    rate = _get(row, PARTIAL_RATE)
    if not rate > 0:
        return None
    return (f"{rate:.2%} of queries returned partial results (a server timed out, was down or its segments "
            "were unavailable): users would see incomplete answers, whatever the latency says.")


def idle_servers(row: pd.Series, ctx: Context) -> str | None:
    """Servers no query reached: the shape pays for machines its layout does not use."""
    idle, servers = _get(row, "servers_idle"), _get(row, "servers")
    if not idle > 0:
        return None
    of = f" of {servers:.0f}" if servers == servers else ""
    return (f"{idle:.0f}{of} servers received no query: they hold no segment the queries need. A realtime table "
            "keeps completed segments on the servers consuming their stream partition unless it relocates them "
            "(tagOverrideConfig.realtimeCompleted or a COMPLETED instance assignment), so fewer partitions than "
            "servers leaves machines idle; relocate, add partitions, or buy fewer servers.")


def slo_overlap(row: pd.Series, ctx: Context) -> str | None:
    """The recommendation's p99 interval is near the SLO, or reaches past it within the model interval."""
    slo = ctx.slo_p99_ms
    low, high = _get(row, P99_LOW), _get(row, P99_HIGH)
    if slo is None or math.isnan(low) or math.isnan(high):
        return None
    model_high = _get(row, P99_MODEL_HIGH)
    if low <= slo <= high:
        return (f"The p99 interval [{low:.0f}, {high:.0f}] ms contains the {slo:g} ms SLO: the simulation cannot "
                "tell whether it is met; run more replications or a longer simulation before deciding.")
    if not math.isnan(model_high) and model_high > slo:
        return (f"Within the calibration's parameter uncertainty p99 reaches {model_high:.0f} ms, above the "
                f"{slo:g} ms SLO: the answer depends on the fitted cost being right.")
    if slo - high < high - low:
        return (f"p99's interval ends at {high:.0f} ms, closer to the {slo:g} ms SLO than the interval is wide: "
                "a little more load or cost per query breaks it (see the headroom).")
    return None


def straddling(row: pd.Series, ctx: Context) -> str | None:
    """Configurations whose p99 interval contains the SLO: the simulation cannot say whether they meet it."""
    slo, table = ctx.slo_p99_ms, ctx.combined
    if slo is None or table.empty or P99_LOW not in table:
        return None
    hit = table[(table[P99_LOW] <= slo) & (table[P99_HIGH] >= slo)]
    if hit.empty:
        return None
    names = "; ".join(str(s) for s in hit.get("shape", hit.get("config", hit.index.to_series())).head(3))
    more = f" and {len(hit) - 3} more" if len(hit) > 3 else ""
    return (f"{len(hit)} configuration(s) have p99 intervals that contain the SLO ({names}{more}): they are "
            "counted as failing, but more replications could show that one of them meets it for less money.")


def backtest_fit(row: pd.Series, ctx: Context) -> str | None:
    """A calibration whose back-test misses the log's p50 or p99 by more than the tolerance."""
    overall = (ctx.backtest or {}).get("overall") or {}
    misses = []
    for label in ("p50", "p99"):
        diff = (overall.get(label) or {}).get("difference_pct")
        if isinstance(diff, int | float) and abs(diff) > 100 * ctx.backtest_tolerance:
            misses.append(f"{label} {diff:+.0f}%")
    if not misses:
        return None
    held = (ctx.backtest or {}).get("holdout")
    where = f" of the held-out last {held['share']:.0%} of its log" if isinstance(held, Mapping) else ""
    return (f"The calibrated model misses the logged latencies{where} ({', '.join(misses)}, tolerance "
            f"{100 * ctx.backtest_tolerance:g}%): treat its answer as a rough guide until the back-test agrees.")


def assumptions_drive(row: pd.Series, ctx: Context) -> str | None:
    """An assumption of the scenario (not measured) whose plausible range moves the answer."""
    if not ctx.moving_assumptions:
        return None
    return (f"The answer depends on {', '.join(ctx.moving_assumptions)}: within its plausible range the "
            "recommendation breaks or a cheaper shape suffices (see the assumptions on page 1); measure it, or "
            "calibrate (`workbench calibrate`), before buying.")


Check = Callable[[pd.Series, Context], "str | None"]
#: Every check, in the order the report prints its warning.
CHECKS: dict[str, Check] = {"busy": busy, "partial": partial_results, "idle": idle_servers, "slo_overlap": slo_overlap,
                            "straddling": straddling, "backtest": backtest_fit, "assumptions": assumptions_drive}


def warnings_for(row: pd.Series, ctx: Context) -> list[str]:
    """The warnings that apply to one configuration, in :data:`CHECKS` order."""
    return [text for check in CHECKS.values() if (text := check(row, ctx)) is not None]
