"""Pinot's own evidence for the wake-up (``service.wake_ms``) and the other candidates, from a validation ladder.

Reads what ``benchmarks/validate_pinot.py`` measured (``DIR/measured/rate-*/``: the driver's per-query records, the
servers' query logs, ``summary.json``) and prints, per rate (``docs/validation.md``, "Why Pinot's median falls with
load", has a run's tables and what they mean):

1. each query's broker latency (``latencyMs``: ``timeMs``'s span on a ns clock) less its SQL template's mean, by the
   time since the whole cluster was last idle (the previous query's answer; <= 0: a query still in flight);
2. the wake-up fitted per rate, ``a + wake x (1 - exp(-gap / tau))`` on the queries that found nothing in flight,
   ``gap`` the time since the previous query arrived; and the same on each half of the run (warm-up);
3. where it goes: the same residuals of the broker's compile and reduce, the server's round trip, its
   ``totalTimeMs`` and ``totalExecMs``, by gap;
4. the server JVM's CPU per query (``summary.json`` ``server_cpu``, schedstat) against ``c + w x E[1 - exp(-gap /
   tau)]`` over each rate's own gaps, fitted on the lowest and highest rates, and a background CPU per second
   (``c + B / rate``) for comparison;
5. warm-up: the median latency by position in the run; 6. the millisecond clock: ``timeMs`` against ``latencyMs``.

Run: ``python benchmarks/pinot_wake.py [DIR]`` (default ``reports/validate_pinot``; a few seconds, no JVM).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import curve_fit

ROOT = Path(__file__).resolve().parents[1]
_SERVER = re.compile(r"Processed requestId=(\d+),.*schedulerWaitMs=(-?\d+),.*totalExecMs=(-?\d+),.*"
                     r"totalTimeMs=(-?\d+),")
_BINS = [-np.inf, 0, 5, 10, 20, 40, 80, 160, np.inf]
_TAUS = (10.0, 15.0, 20.0, 25.0, 30.0, 40.0)
#: A table cell of fewer queries is left out (its median is one or two queries').
_MIN_CELL = 20


def _rate(directory: Path) -> pd.DataFrame:
    """One rate's queries in arrival order: records joined with the server's query log, gaps in ms."""
    r = pd.read_parquet(directory / "records.parquet")
    first = [json.loads(s)[0] if json.loads(s) else {} for s in r["servers"]]
    r["responseDelayMs"] = [s.get("responseDelayMs", np.nan) for s in first]
    r["template"] = r["sql"].map(lambda q: re.sub(r"\d+", "N", q))
    rows = [tuple(int(g) for g in m.groups()) for p in directory.glob("server-*-querylog.log")
            for line in p.read_text().splitlines() if (m := _SERVER.search(line))]
    server = pd.DataFrame(rows, columns=["requestId", "schedulerWaitMs", "totalExecMs", "totalTimeMs"])
    r = r.merge(server, on="requestId", how="left").sort_values("arrivalS").reset_index(drop=True)
    end = (r["arrivalS"] + r["sinceArrivalMs"] / 1000.0).to_numpy()
    r["idleMs"] = (r["arrivalS"].to_numpy() - np.maximum.accumulate(np.r_[-np.inf, end[:-1]])) * 1000.0
    r["gapMs"] = np.diff(r["arrivalS"].to_numpy() * 1000.0, prepend=-np.inf)
    return r


def _residual(frame: pd.DataFrame, column: str) -> pd.Series:
    return frame[column] - frame.groupby("template")[column].transform("mean")


def _curve(gap: np.ndarray, a: float, wake: float, tau: float) -> np.ndarray:
    out: np.ndarray = a + wake * (1.0 - np.exp(-gap / tau))
    return out


def _fit(frame: pd.DataFrame, column: str) -> str:
    s = frame[frame["idleMs"] > 0]
    try:
        p, cov = curve_fit(_curve, s["gapMs"].clip(upper=60_000).to_numpy(), s[f"{column} res"].to_numpy(),
                           p0=[0.0, 1.0, 20.0], bounds=([-50, 0, 0.5], [50, 50, 5000]))
    except RuntimeError:
        return "no fit"
    e = np.sqrt(np.diag(cov))
    return f"{p[1]:.2f} ± {e[1]:.2f} ms, tau {p[2]:.0f} ± {e[2]:.0f} ms"


def main() -> None:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "reports" / "validate_pinot"
    dirs = sorted((root / "measured").glob("rate-*"), key=lambda p: float(p.name.removeprefix("rate-")))
    rates = [d.name.removeprefix("rate-") for d in dirs]
    every = pd.concat([_rate(d).assign(rate=name) for d, name in zip(dirs, rates, strict=True)], ignore_index=True)
    columns = ["latencyMs", "compileMs", "reduceMs", "responseDelayMs", "totalTimeMs", "totalExecMs"]
    for c in columns:
        every[f"{c} res"] = _residual(every, c)
    every["idle bin"] = pd.cut(every["idleMs"], _BINS)
    pd.set_option("display.width", 200)
    print("1. latencyMs less its template's mean (ms), by the time since the cluster was last idle (ms):\n")
    table = every.pivot_table(index="idle bin", columns="rate", values="latencyMs res", aggfunc="median",
                              observed=True)[rates]
    counts = every.pivot_table(index="idle bin", columns="rate", values="latencyMs res", aggfunc="size",
                               observed=True)[rates]
    print(table.where(counts >= _MIN_CELL).round(2).to_string() + f"\n  (cells of fewer than {_MIN_CELL} queries "
          "left out: at the higher rates few queries follow a long quiet stretch)")
    print("\n2. the wake-up per rate (queries that found nothing in flight), whole run; first / second half:\n")
    for name in rates:
        f = every[every["rate"] == name]
        halves = [_fit(f[f["queryIndex"] < 1000], "latencyMs"), _fit(f[f["queryIndex"] >= 1000], "latencyMs")]
        print(f"  {name}/s: {_fit(f, 'latencyMs')}; {halves[0]} / {halves[1]}")
    print("\n3. where it goes: residual means (ms) by the time since the cluster was last idle, all rates:\n")
    print(every.groupby("idle bin", observed=True)[[f"{c} res" for c in columns]].mean().round(2).T.to_string())
    cpu = {name: max(s["cpu_ms_per_query"] for s in json.loads((d / "summary.json").read_text())["server_cpu"]
                     .values()) for d, name in zip(dirs, rates, strict=True)}
    print("\n4. the server JVM's CPU per query (ms): measured " + ", ".join(f"{k}/s {v:.2f}" for k, v in cpu.items()))
    lo, hi = rates[0], rates[-1]
    for tau in _TAUS:
        e = {k: float((1 - np.exp(-every.loc[every["rate"] == k, "gapMs"].clip(upper=1e6) / tau)).mean())
             for k in rates}
        w = (cpu[lo] - cpu[hi]) / (e[lo] - e[hi])
        c = cpu[lo] - w * e[lo]
        print(f"  tau {tau:g}: w {w:.2f}, c {c:.2f}; predicted " + ", ".join(
            f"{k}/s {c + w * e[k]:.2f} ({(c + w * e[k]) / cpu[k] - 1:+.1%})" for k in rates[1:-1]))
    inv = {k: 1.0 / float(k) for k in rates}
    b = (cpu[lo] - cpu[hi]) / (inv[lo] - inv[hi])
    c = cpu[lo] - b * inv[lo]
    print(f"  background CPU instead (c + B/rate): B {b:.1f} ms/s, c {c:.2f}; predicted " + ", ".join(
        f"{k}/s {c + b * inv[k]:.2f} ({(c + b * inv[k]) / cpu[k] - 1:+.1%})" for k in rates[1:-1]))
    every["position"] = pd.cut(every["queryIndex"], [0, 100, 200, 400, 700, 1000, 1400, 2001], right=False)
    print("\n5. warm-up: median latencyMs (ms) by position in the run:\n")
    print(every.pivot_table(index="position", columns="rate", values="latencyMs", aggfunc="median",
                            observed=True)[rates].round(2).to_string())
    print("\n6. the millisecond clock: timeMs - latencyMs, and the medians of each:\n")
    for name in rates:
        f = every[every["rate"] == name]
        d = f["timeMs"] - f["latencyMs"]
        print(f"  {name}/s: mean {d.mean():+.3f} ms in [{d.min():.2f}, {d.max():.2f}]; p50 timeMs "
              f"{f['timeMs'].median():.1f}, latencyMs {f['latencyMs'].median():.2f}")


if __name__ == "__main__":
    main()
