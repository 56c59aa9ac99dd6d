"""The text ``workbench calibrate`` prints: what was fitted, how well, and the back-test.

Pure formatting of a :class:`~workbench.calibrate.pipeline.CalibrationResult`, so the command line stays
a thin caller and notebooks can print the same summary.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workbench.calibrate.backtest import BACKTEST_PERCENTILES
from workbench.calibrate.pipeline import CalibrationResult

__all__ = ["describe_calibration"]


def _parameters(result: CalibrationResult) -> list[str]:
    lines = ["service cost (value ± one standard error):"]
    for p in result.fit.parameters:
        spread = f"± {p.se:<10.3g}" if p.se is not None and not p.at_bound else " " * 12
        where = "fitted" if p.source == "fitted" else p.source.split(":")[0]
        lines.append(f"  {p.key:<38} {p.value:>11.5g} {spread} {p.unit:<26} {where}")
    v = result.fit.variability
    spread = f"± {v.se:<10.3g}" if v.se is not None else " " * 12
    lines.append(f"  {'service.variability':<38} {v.sigma:>11.4g} {spread} {'log-sigma per segment run':<26} "
                 f"{'fitted from the residuals' if not v.note else v.note}")
    return lines


def _quality(q: Mapping[str, Any]) -> str:
    what = "the servers' measured work per query" if "fitted_to" in q else "timeMs"
    return (f"fit: explains {100 * q['r2']:.1f}% of the variance of {what}; median |error| "
            f"{q['median_abs_error_ms']:.2f} ms; {100 * q['within_10pct']:.0f}% of queries within 10% (or 1 ms)")


def _row(label: str, cmp: Mapping[str, Any]) -> str:
    cells = []
    for name, _ in BACKTEST_PERCENTILES:
        c = cmp[name]
        cells.append(f"{c['observed']:>8.1f} {c['predicted']:>8.1f} {c['difference_pct']:>+6.1f}%")
    return f"  {label:<12} {cmp['queries_observed']:>7,}  " + "  ".join(cells)


def _backtest(b: Mapping[str, Any]) -> list[str]:
    w = b["window"]
    head = "  ".join(f"{name + ' obs':>8} {'pred':>8} {'diff':>7}" for name, _ in BACKTEST_PERCENTILES)
    held = b.get("holdout")
    part = f" of the held-out last {held['share']:.0%} of the log" if held else ""
    lines = [f"back-test{part}: {w['queries']:,} logged queries replayed over {w['span_s']:.0f} s "
             f"({w['replications']} replications; ms, as the broker logs them):",
             f"  {'kind':<12} {'queries':>7}  {head}", _row("all", b["overall"])]
    lines += [_row(kind, cmp) for kind, cmp in b["by_kind"].items()]
    fan = b["fan_out"]
    lines.append(f"  segments per query: log {fan['segments_per_query']['log']:.1f}, model "
                 f"{fan['segments_per_query']['model']:.1f}; servers per query: log "
                 f"{fan['servers_per_query']['log']:.2f}, model {fan['servers_per_query']['model']:.2f}")
    if held:
        lines.append(_row("fitted part", b["fitted_part"]["overall"]))
    lines.append(f"verdict: {b['verdict']}")
    return lines


def describe_calibration(result: CalibrationResult) -> str:
    """A few lines: the table, the shape, the fitted costs, the fit's quality, the back-test, the notes."""
    s = result.shape
    dropped = "; ".join(f"{n:,} {why}" for why, n in result.dropped.items() if n) or "none"
    measured = (f" of the measured rate {result.measured_rate.removeprefix('rate-')}/s ({result.measured_rate}/)"
                if result.measured_rate else "")
    lines = [f"calibrated {result.table} from {result.queries:,} logged queries{measured} "
             f"({result.fit.queries:,} fitted; left out: {dropped})",
             f"cluster: {s.servers} servers ({s.servers_source}); {s.replication} "
             f"replica{'s' if s.replication != 1 else ''}",
             *_parameters(result), _quality(result.fit.quality)]
    if result.backtest is not None:
        lines += _backtest(result.backtest)
    lines += [f"note: {n}" for n in result.notes]
    lines.append(f"wrote {result.out} (scenario.yaml, workload/, calibration.json"
                 + (", backtest.json)" if result.backtest is not None else ")"))
    return "\n".join(lines)
