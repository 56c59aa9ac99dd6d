"""Pinot's own evidence for a cost per aggregation function (``service.function_ns_per_doc``), from a validation ladder.

Reads what ``benchmarks/validate_pinot.py`` measured (``DIR/measured/rate-*/``: the driver's per-query records and
the servers' query logs, whose ``threadCpuTimeNs`` total is the work ``calibrate`` fits) and prints, per rate
(``docs/validation.md``, "A cost per aggregation function", has a run's tables and what they mean):

1. per aggregation function of the query (``-``: none, a selection or lookup; plain group-bys apart): queries,
   mean documents scanned and segments processed, measured CPU per query (ms), ``totalExecMs`` mean and p90, and
   the fit of *every* query's CPU to ``a + b x segments + c x docs`` (documents scanned alone: the cost model's
   form), its mean residual per function;
2. the same fit with one extra per-document column per heavier function (documents x calls), its extra ns per
   document and least-squares standard error, per rate: a cost that holds at every rate is the function's, not
   the load's.

Run: ``python benchmarks/pinot_aggcost.py [DIR]`` (default ``reports/validate_pinot``; a few seconds, no JVM).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
_SERVER = re.compile(r"Processed requestId=(\d+),.*?segments\([^)]*\)=(\d+)/(\d+)/.*?totalExecMs=(-?\d+),.*?"
                     r"numDocsScanned=(\d+),.*?threadCpuTimeNs\(total/thread/sysActivity/resSer\)=(\d+)/")
_FUNCTION = re.compile(r"\b(PERCENTILETDIGEST|DISTINCTCOUNTHLL|DISTINCTCOUNT|AVG|SUM|MAX|MIN|COUNT)\s*\(", re.I)
#: The functions given a column of their own in the second fit (the plain ones are the base cost's).
HEAVY = ("PERCENTILETDIGEST", "DISTINCTCOUNTHLL", "DISTINCTCOUNT")


def _rate(directory: Path) -> pd.DataFrame:
    """One rate's queries: the driver's SQL joined with the server log's segments, docs, exec time and CPU."""
    r = pd.read_parquet(directory / "records.parquet")[["requestId", "sql"]]
    rows = [m.groups() for p in directory.glob("server-*-querylog.log")
            for line in p.read_text().splitlines() if (m := _SERVER.search(line))]
    s = pd.DataFrame(rows, columns=["requestId", "queried", "processed", "execMs", "docs", "cpuNs"]).astype(float)
    s["requestId"] = s["requestId"].astype(int)
    d = r.merge(s, on="requestId")
    d["calls"] = d["sql"].map(lambda q: tuple(f.upper() for f in _FUNCTION.findall(q)))
    d["function"] = [("+".join(sorted(set(c))) or "-") + (" (group-by)" if "GROUP BY" in q.upper() else "")
                     for c, q in zip(d["calls"], d["sql"], strict=True)]
    d["cpuMs"] = d["cpuNs"] / 1e6
    return d


def _fit(d: pd.DataFrame, heavy: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Least squares of CPU (ms) on 1, segments, docs (ns) and each heavy function's docs x calls: estimates,
    standard errors, residuals."""
    docs = d["docs"].to_numpy() * 1e-6
    cols = [np.ones(len(d)), d["processed"].to_numpy(), docs]
    cols += [docs * np.array([c.count(f) for c in d["calls"]]) for f in heavy]
    x, y = np.column_stack(cols), d["cpuMs"].to_numpy()
    beta, *_ = np.linalg.lstsq(x, y, rcond=None)
    res = y - x @ beta
    cov = np.linalg.pinv(x.T @ x) * float(res @ res) / max(1, len(y) - x.shape[1])
    return beta, np.sqrt(np.clip(np.diag(cov), 0, None)), res


def main() -> None:
    base = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "reports" / "validate_pinot"
    rates = sorted((base / "measured").glob("rate-*"), key=lambda p: float(p.name.removeprefix("rate-")))
    if not rates:
        raise SystemExit(f"no {base}/measured/rate-*/: run benchmarks/validate_pinot.py --out {base} first")
    print("extra ns per document, per rate (documents, segments and the heavy functions fitted together):")
    for directory in rates:
        d = _rate(directory)
        beta, _, res = _fit(d, ())
        d["residual"] = res
        if directory == rates[0]:
            print(f"\n{directory.name}: documents alone: {beta[0]:.3f} ms + {beta[1]:.3f} ms/segment + "
                  f"{beta[2]:.2f} ns/doc; per function:")
            table = d.groupby("function").agg(
                queries=("cpuMs", "size"), docs=("docs", "mean"), segments=("processed", "mean"),
                cpu_ms=("cpuMs", "mean"), exec_ms=("execMs", "mean"), exec_p90=("execMs", lambda v: v.quantile(0.9)),
                residual_ms=("residual", "mean"))
            table["cpu_ns_per_doc"] = table["cpu_ms"] * 1e6 / table["docs"].clip(lower=1)
            print(table.round(3).to_string())
        beta, se, _ = _fit(d, HEAVY)
        said = ", ".join(f"{f} {b:+.1f} ± {e:.1f}" for f, b, e in zip(HEAVY, beta[3:], se[3:], strict=True))
        print(f"{directory.name}: base {beta[2]:.2f} ± {se[2]:.2f} ns/doc; {said}")


if __name__ == "__main__":
    main()
