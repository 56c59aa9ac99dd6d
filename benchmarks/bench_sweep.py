"""Benchmark: a 12-point sweep (sweeps/servers_qps.yaml) on a local process pool.

The product's goal is a 12-point sweep plus its report in under 10 minutes on a 2-core laptop; this
times the sweep, then the sizing report built from it. The baseline is the same 12 points run one
after another in this process, in the same run, so the printed speed-up means something on a noisy
shared machine (it includes the cost of spawning the workers, each of which imports the workbench
afresh). Both runs must produce the same combined table: parallelism never changes the numbers.

Run: ``python benchmarks/bench_sweep.py [--workers N] [--no-baseline] [--out DIR]``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import pandas as pd

from workbench.report import build_sizing_report
from workbench.sweep import load_sweep, run_sweep

ROOT = Path(__file__).resolve().parents[1]
SWEEP = ROOT / "sweeps" / "servers_qps.yaml"
#: The issue's budget for a 12-point sweep and its report, s.
GOAL_S = 600.0


def timed_sweep(out: Path, parallel: int) -> tuple[float, pd.DataFrame]:
    """Wall time of a fresh (not resumed) sweep into ``out`` and its combined table."""
    start = time.perf_counter()
    table = run_sweep(SWEEP, out, parallel=parallel)
    return time.perf_counter() - start, table


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="pool size (default: cores)")
    p.add_argument("--no-baseline", action="store_true", help="skip the serial in-process baseline")
    p.add_argument("--out", help="keep the sweep output here (default: a temporary directory)")
    args = p.parse_args()
    n = len(load_sweep(SWEEP).points)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.out) if args.out else Path(tmp)
        pooled_s, pooled = timed_sweep(root / "pooled", args.workers)
        print(f"{n}-point sweep, {args.workers} workers: {pooled_s:.1f} s wall "
              f"({pooled_s / n:.2f} s/point; goal for sweep + report: {GOAL_S:.0f} s, "
              f"sweep uses {pooled_s / GOAL_S:.0%} of it)")
        assert (pooled["status"] == "ok").all(), pooled[["point", "error"]]
        start = time.perf_counter()
        build_sizing_report(root / "pooled", root / "report.pdf")
        report_s = time.perf_counter() - start
        print(f"sizing report: {report_s:.1f} s; sweep + report {pooled_s + report_s:.1f} s "
              f"(goal < {GOAL_S:.0f} s)")
        if not args.no_baseline:
            serial_s, serial = timed_sweep(root / "serial", 1)
            pd.testing.assert_frame_equal(serial, pooled)
            print(f"serial in-process baseline: {serial_s:.1f} s; pool speed-up {serial_s / pooled_s:.2f}x "
                  f"(same combined table)")


if __name__ == "__main__":  # required: pool workers are spawned and import this file
    main()
