"""Print the tables of docs/gc.md from the probe fixtures (tests/fixtures/gc/): a thin client of workbench.jvm.

Usage: python scripts/gc_fit_report.py [FIXTURE_DIR]    (takes a minute: every log is fitted)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from workbench.jvm import LiveHeap, fit_g1, observed_live_bytes
from workbench.jvm.fit import young_features
from workbench.jvm.validate import drive_phase, observed_young, predicted_young, system_gc
from workbench.pinot.heap import upsert_bytes_per_key
from workbench.workload.importers import read_gc_log

MIB = 1 << 20
GIB = 1 << 30


def _runs(directory: Path) -> list[dict[str, Any]]:
    runs: list[dict[str, Any]] = json.loads((directory / "manifest.json").read_text())["runs"]
    for run in runs:
        run["frame"] = read_gc_log(directory / run["file"]).frame
    return runs


def _live(run: dict[str, Any], frame: pd.DataFrame) -> LiveHeap:
    per_key = upsert_bytes_per_key(run["primary_key_types"], run["hash_function"], num_keys=run["upsert_keys"])
    keys = run["upsert_keys"]
    return LiveHeap(observed_live_bytes(frame) - keys * per_key, keys, per_key)


def bytes_per_key(runs: list[dict[str, Any]]) -> None:
    """Slope of the live heap after System.gc() against keys, per series, beside the heap model."""
    print("| series | hash | keys | live after System.gc() (MiB) | measured B/key (slope) | model B/key | error |")
    print("|---|---|---|---|---|---|---|")
    for series in sorted({r["series"] for r in runs if r["collector"] == "g1"}):
        group = [r for r in runs if r["series"] == series and r["collector"] == "g1"]
        if len({r["upsert_keys"] for r in group}) < 2:
            continue
        keys = np.array([r["upsert_keys"] for r in group], dtype=float)
        live = np.array([float(system_gc(r["frame"])["heap_after_bytes"]) for r in group])
        slope = np.polyfit(keys, live, 1)[0]
        h = group[0]["hash_function"]
        model = np.polyfit(keys, [k * upsert_bytes_per_key(["LONG"], h, num_keys=int(k)) for k in keys], 1)[0]
        print(f"| {series} | {h} | {', '.join(f'{k / 1e6:g}M' for k in keys)} | "
              f"{', '.join(f'{v / MIB:,.0f}' for v in live)} | {slope:.1f} | {model:.1f} | {model / slope - 1:+.1%} |")


def fits(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-run fits of the G1 form and how the calibrated model reproduces its own log."""
    fitted = {}
    print("| run | young | median / p95 (ms) | base ms | copy GB/s | rs ms @1GiB | coarsen updates | sigma | "
          "residual sd | self: median / p95 / rate |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for run in runs:
        if run["collector"] != "g1" or run["series"] == "md5":
            continue
        frame = drive_phase(run["frame"])
        live = _live(run, frame)
        fit = fit_g1(frame, live, float(run["update_rate"]))
        fitted[run["file"]] = (fit, live, frame)
        observed = observed_young(frame)
        span = float(frame["uptime_s"].max() - frame["uptime_s"].min())
        predicted = predicted_young(fit.params, float(frame["heap_total_bytes"].max()), live,
                                    run["allocation_mb_per_s"] * MIB, float(run["update_rate"]), span)
        e = predicted.errors(observed)
        p = fit.params
        print(f"| {run['file'].removesuffix('.log.gz')} | {observed.count} | {observed.median_ms:.0f} / "
              f"{observed.p95_ms:.0f} | {p.young_base_ms:.1f} | {p.copy_rate / 1e9:.2f} | {p.rs_scan_ms_per_gb:.0f} | "
              f"{p.rs_coarsen_updates:,.0f} | {p.pause_sigma:.2f} | {fit.young_residual_sd:.2f} | "
              f"{e['median']:+.0%} / {e['p95']:+.0%} / {e['rate']:+.0%} |")
    return fitted


def cycle_figures(fitted: dict[str, Any]) -> None:
    """The fitted workload, sizing and concurrent-cycle figures of each run."""
    names = ("survivor_s", "promotion_fraction", "young_growth", "goal_share", "ihop", "mark_rate", "rebuild_rate",
             "remark_ms", "cleanup_ms", "concurrent_sigma", "full_ms_per_gb")
    print("| run | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for name, (fit, _, _) in fitted.items():
        values = [getattr(fit.params, n) for n in names]
        shown = [f"{v / 1e9:.2f}G" if v > 1e6 else f"{v:.3g}" for v in values]
        defaulted = set(fit.defaulted)
        print(f"| {name.removesuffix('.log.gz')} | "
              + " | ".join(f"({s})" if n in defaulted else s for n, s in zip(names, shown, strict=True)) + " |")


def scan_exponent(fitted: dict[str, Any]) -> None:
    """Common slope of log(median Scan Heap Roots) on log(map GiB), one intercept per series."""
    rows = []
    for name, (_, live, frame) in fitted.items():
        features = young_features(frame, 0.0)
        scan = float(np.nanmedian(features["scan_ms"].astype(float)))
        rows.append((name.split("-")[1] + name.split("-")[3][0], np.log(live.map_bytes / GIB), np.log(scan), scan))
    series = sorted({r[0] for r in rows})
    design = np.array([[r[1], *(float(r[0] == s) for s in series)] for r in rows])
    coef = np.linalg.lstsq(design, np.array([r[2] for r in rows]), rcond=None)[0]
    print(f"scan exponent {coef[0]:.3f}; per-series ms at 1 GiB: "
          + ", ".join(f"{s} {np.exp(c):.0f}" for s, c in zip(series, coef[1:], strict=True)))


def full_gcs(runs: list[dict[str, Any]]) -> None:
    """Full GC pauses against the live heap after them; least-squares line."""
    points = []
    for run in runs:
        if run["collector"] != "g1":
            continue
        full = run["frame"][run["frame"]["kind"].astype(str) == "full"]
        for _, row in full.iterrows():
            points.append((float(row["heap_after_bytes"]) / GIB, float(row["duration_ms"]), run["file"], row["cause"]))
    x = np.array([p[0] for p in points])
    y = np.array([p[1] for p in points])
    slope, intercept = np.polyfit(x, y, 1)
    print(f"full GC: {intercept:.0f} ms + {slope:.0f} ms/GiB x live; residual sd {np.std(y - (intercept + slope * x)):.0f} ms")
    for p in points:
        print(f"  {p[2]}: {p[3]} live {p[0]:.2f} GiB -> {p[1]:.0f} ms")


def held_out(runs: list[dict[str, Any]], fitted: dict[str, Any]) -> None:
    """Calibrated from one key count, predict the others (same heap and replicate) with the model alone."""
    print("| series | from | to | median | p95 | rate | full GC |")
    print("|---|---|---|---|---|---|---|")
    by_file = {r["file"]: r for r in runs}
    for source_file, (fit, source_live, _) in fitted.items():
        source = by_file[source_file]
        for target in runs:
            if target["series"] != source["series"] or target is source:
                continue
            frame = drive_phase(target["frame"])
            live = LiveHeap.for_upsert(source_live.static_bytes, target["upsert_keys"])
            span = float(frame["uptime_s"].max() - frame["uptime_s"].min())
            predicted = predicted_young(fit.params, float(frame["heap_total_bytes"].max()), live,
                                        target["allocation_mb_per_s"] * MIB, float(target["update_rate"]), span)
            e = predicted.errors(observed_young(frame))
            full = float(system_gc(target["frame"])["duration_ms"])
            full_model = fit.params.full_base_ms + live.total / GIB * fit.params.full_ms_per_gb
            print(f"| {source['series']} | {source['upsert_keys'] / 1e6:g}M | {target['upsert_keys'] / 1e6:g}M | "
                  f"{e['median']:+.0%} | {e['p95']:+.0%} | {e['rate']:+.0%} | {full_model / full - 1:+.0%} |")


def main(directory: Path) -> None:
    runs = _runs(directory)
    bytes_per_key(runs)
    fitted = fits(runs)
    cycle_figures(fitted)
    scan_exponent(fitted)
    full_gcs(runs)
    held_out(runs, fitted)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("tests/fixtures/gc"))
