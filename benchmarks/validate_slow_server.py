"""Validation: one slow server on Apache Pinot 1.5.1 against the model's ``cluster.failures.slow``.

What it does (``docs/validation.md`` has the table of a run and what it means):

1. A scenario of one OFFLINE table (the demo's events table as its OFFLINE twin, balanced routing, time and
   partition pruning) on **two** one-core servers with **replication 2**, so every segment has a replica on each.
2. ``workbench measure`` at one open-loop rate three ways (a fresh cluster each): the baseline; ``Server_1`` made
   ``--factor`` times slower (``measure(..., slow={"Server_1": 4})``: its JVM limited to a quarter of a core by a
   CFS-quota cgroup); and, unless ``--no-hybrid``, the same slow server with the broker's Adaptive Server Selection
   (``pinot.broker.adaptive.server.selector.type: HYBRID``, stats collection on).
3. ``workbench calibrate`` from the **baseline** files only (its broker query log, the servers' GC logs, ZK segment
   metadata; the servers' measured work, ``--server-cores 1``), as ``benchmarks/validate_pinot.py`` does; and again
   with the server JVMs' whole CPU per query given (``server_cpu_ms``, from ``measure``'s schedstat), since a CPU
   limit slows the whole JVM, not only the queries' own work.
4. Predict each measured run with the calibrated scenario replaying its logged arrivals and SQL: the baseline as is,
   the slow runs with ``cluster.failures.slow: [{server: Server_1, factor, scope}]`` (``--scope``: ``jvm``, the
   default, slows the whole JVM, its GC pauses and request delays too; ``work`` the queries' work alone), and the
   HYBRID keys for the third.
   Print measured vs model p50/p90/p99 of the broker's ``timeMs``, the slow/baseline ratios, the share of queries
   the broker sent a request to the slow server (Pinot's records name the servers queried) vs the model's
   (``servers.parquet`` requests), and Pinot's per-server evidence (``schedulerWaitMs``, ``totalExecMs``).

On a 2-core machine the two servers and the broker share the cores (``measure`` says so): absolute latencies include
their contention, so the slow/baseline ratios are the figures to judge as much as the absolute ones.

Run: ``python benchmarks/validate_slow_server.py [--out DIR] [--rate QPS] [--queries N] [--factor F] [--scope S]``
(about 5 minutes on 2 cores; needs root for the cgroup; ``--reuse`` calibrates and predicts from the measured runs
already under ``--out``, starting no Pinot). No threshold: it reports. Everything is written under ``--out``
(default ``reports/validate_slow_server``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
from validate_pinot import _pcts, _predict, _scenario

from workbench.api import measure
from workbench.calibrate import CalibrateOptions
from workbench.calibrate import calibrate as run_calibrate
from workbench.groundtruth.measure import rate_dir_name
from workbench.scenario import load_scenario
from workbench.workload.importers.query_log import read_query_log

ROOT = Path(__file__).resolve().parents[1]
SLOW = "Server_1"
HYBRID = {"pinot.broker.adaptive.server.selector.type": "HYBRID",
          "pinot.broker.adaptive.server.selector.enable.stats.collection": "true"}
SHOWN = ("p50", "p90", "p99")


def _with_broker(scenario: Path, config: dict[str, str], out: Path) -> Path:
    """A copy of ``scenario`` whose broker config has ``config`` added."""
    data = load_scenario(scenario).to_dict()
    data.setdefault("cluster", {}).setdefault("broker", {}).setdefault("config", {}).update(config)
    out.write_text(json.dumps(data))
    return out


def _measured(run: Path, rate: float) -> dict[str, Any]:
    """What one measured run says: the broker's timeMs percentiles, the share of queries routed to the slow server
    (found by its scenario name in the summary, or as the second server started), and per-server query-log figures."""
    summary = json.loads((run / rate_dir_name(rate) / "summary.json").read_text())
    slow_instance = next(iter(summary["slow"]), None) or summary["servers"][1]
    times = read_query_log(run / rate_dir_name(rate) / "broker-querylog.log").frame["time_ms"]
    evidence = {}
    for key, figures in summary["server_query_log"]["per_server"].items():  # "host-port" of the log's file name
        instance = "Server_" + "_".join(key.rsplit("-", 1))
        evidence[SLOW if instance == slow_instance else "Server_0"] = {**figures, **summary["server_cpu"][instance]}
    return {"pcts": _pcts(times), "share": summary["routed"].get(slow_instance, {}).get("share", 0.0),
            "errors": summary["errors"]["queries_with_exceptions"], "routing": summary["routing"],
            "evidence": evidence, "queries": summary["queries_recorded"]}


def _model(calibrated: Path, run_dir: Path, out: Path, overrides: dict[str, Any]) -> dict[str, Any]:
    """The calibrated model replaying one measured run: latency percentiles and the share of queries it sent a
    request to ``Server_1`` (its requests over the queries that reached a server)."""
    latency = _predict(calibrated, run_dir, out, overrides=overrides)["latency_ms"]
    servers = pd.read_parquet(out / "run" / "servers.parquet")
    queries = pd.read_parquet(out / "run" / "queries.parquet")
    routed = int((queries["servers_queried"] > 0).sum())  # over every replication, as the servers' requests are
    requests = int(servers.loc[servers["server"] == SLOW, "requests"].sum())
    return {"pcts": _pcts(latency), "share": requests / max(routed, 1)}


def _print(variant: str, results: dict[str, Any]) -> None:
    """Measured vs model percentiles and routing share per run, then the slow/baseline ratios."""
    print(f"\n{variant}:\n")
    print("| run | errors | Pinot timeMs p50 / p90 / p99 (ms) | model p50 / p90 / p99 (ms) | error p50 / p90 / p99 "
          f"| queries to {SLOW}: Pinot / model |")
    print("|---|---|---|---|---|---|")
    for name, r in results.items():
        m, p = r["measured"]["pcts"], r["model"]["pcts"]
        print(f"| {name} | {r['measured']['errors']} | " + " / ".join(f"{m[k]:.1f}" for k in SHOWN) + " | "
              + " / ".join(f"{p[k]:.1f}" for k in SHOWN) + " | "
              + " / ".join(f"{(p[k] - m[k]) / m[k]:+.0%}" for k in SHOWN)
              + f" | {r['measured']['share']:.0%} / {r['model']['share']:.0%} |")
    baseline = results["baseline (balanced)"]
    print("\n| run | slow/baseline, Pinot p50 / p90 / p99 | slow/baseline, model p50 / p90 / p99 |")
    print("|---|---|---|")
    for name, r in list(results.items())[1:]:
        print(f"| {name} | " + " / ".join(f"{r['measured']['pcts'][k] / baseline['measured']['pcts'][k]:.2f}"
                                          for k in SHOWN) + " | "
              + " / ".join(f"{r['model']['pcts'][k] / baseline['model']['pcts'][k]:.2f}" for k in SHOWN) + " |")


def _print_evidence(measured: dict[str, Any]) -> None:
    """Pinot's own per-server figures of each run: its query log and its JVM's CPU and run-queue wait."""
    print("\n| run | server | requests | schedulerWaitMs p50 / p99 | totalExecMs p50 / p99 | JVM CPU ms/query "
          "| run-queue wait ms/query |")
    print("|---|---|---|---|---|---|---|")
    for name, r in measured.items():
        for which, ev in sorted(r["evidence"].items()):
            w, x = ev["scheduler_wait_ms"], ev["total_exec_ms"]
            print(f"| {name} | {which} | {ev['lines']} | {w['p50']} / {w['p99']} | {x['p50']} / {x['p99']} | "
                  f"{ev['cpu_ms_per_query']} | {ev['run_queue_wait_ms_per_query']} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(ROOT / "reports" / "validate_slow_server"))
    parser.add_argument("--rate", type=float, default=10.0, help="open-loop rate, queries/s")
    parser.add_argument("--queries", type=int, default=600, help="queries per measured run")
    parser.add_argument("--factor", type=float, default=4.0, help="how many times slower Server_1 is")
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--segment-rows", type=int, default=10_000)
    parser.add_argument("--scope", choices=("jvm", "work"), default="jvm",
                        help="what the model's slow factor slows (cluster.failures.slow[].scope): the whole JVM "
                             "(its work, GC pauses and request delays) or the query's work alone")
    parser.add_argument("--no-hybrid", action="store_true", help="skip the run with HYBRID adaptive selection")
    parser.add_argument("--cluster", choices=("processes", "helix"), default="processes",
                        help="how measure runs Pinot (docs/validation.md: processes, whose records carry each "
                             "server's timeUsedMs and thread CPU, which a broker's HTTP response does not)")
    parser.add_argument("--reuse", action="store_true", help="calibrate and predict from an earlier run under --out")
    args = parser.parse_args()
    root = Path(args.out)
    root.mkdir(parents=True, exist_ok=True)
    started, load_before = time.time(), os.getloadavg()
    scenario = _scenario(root, args.events, args.segment_rows, servers=2, replication=2)
    hybrid_scenario = _with_broker(scenario, HYBRID, root / "scenario-hybrid.json")
    slow = {SLOW: args.factor}
    failures = {"cluster.failures.slow": [{"server": SLOW, "factor": args.factor, "scope": args.scope}]}
    cases: dict[str, tuple[Path, dict[str, float], dict[str, Any]]] = {
        "baseline (balanced)": (scenario, {}, {}),
        f"{SLOW} x{args.factor:g} (balanced)": (scenario, slow, failures),
    }
    if not args.no_hybrid:  # the calibrated scenario's broker config with the HYBRID keys (set once it exists)
        cases[f"{SLOW} x{args.factor:g} (HYBRID adaptive)"] = (hybrid_scenario, slow, dict(failures))
    runs = {name: root / f"measured-{i}" for i, name in enumerate(cases)}
    if not args.reuse:
        for name, (sc, slowed, _) in cases.items():
            measure(sc, runs[name], rates=[args.rate], queries=args.queries, overwrite=True, slow=slowed,
                    cluster=args.cluster,
                    progress=lambda r, s, n=name: print(f"  measured {n} at {r:g}/s: broker timeMs p50/p99 "
                                                        f"{s['broker_time_ms']['p50']}/{s['broker_time_ms']['p99']} "
                                                        f"ms; routed {s['routed']}", flush=True))
    base = runs["baseline (balanced)"]
    measured_doc = json.loads((base / "measure.json").read_text())
    source = base / rate_dir_name(args.rate)
    process_ms = sum(c["cpu_ms_per_query"] for c in measured_doc["rates"][rate_dir_name(args.rate)]["server_cpu"]
                     .values())
    # name: (directory, the servers' process CPU per query given to calibrate, or None: the queries' own CPU time)
    variants = {"calibrated to the queries' CPU time (broker log)": ("calibrated", None),
                f"calibrated to the server JVMs' whole CPU ({process_ms:.1f} ms/query)": ("calibrated-process",
                                                                                         process_ms)}
    measured = {name: _measured(runs[name], args.rate) for name in cases}
    everything: dict[str, Any] = {}
    print(f"\nApache Pinot {measured_doc['pinot_version']}, 2 servers, replication 2, {args.rate:g} queries/s, "
          f"{args.queries} queries per run; {measured_doc['placement']}")
    print(f"load average before {load_before[0]:.2f}, after {os.getloadavg()[0]:.2f}; {os.cpu_count()} cpus; "
          "calibrated on the baseline")
    for v, (variant, (directory, cpu_ms)) in enumerate(variants.items()):
        calibrated = root / directory
        run_calibrate(base / "table_config.json", base / "schema.json", base / "segments.json",
                      source / "broker-querylog.log", calibrated, gc_logs=sorted(source.glob("gc-server-*.log")),
                      overwrite=True, options=CalibrateOptions(servers=2, server_cores=1, backtest_queries=0,
                                                               server_cpu_ms=cpu_ms))
        broker = {**load_scenario(calibrated / "scenario.yaml").cluster.broker.config, **HYBRID}
        results = {}
        for i, (name, (_, _, overrides)) in enumerate(cases.items()):
            extra = {"cluster.broker.config": broker} if "HYBRID" in name else {}
            results[name] = {"measured": measured[name],
                             "model": _model(calibrated, runs[name] / rate_dir_name(args.rate),
                                             root / f"predicted-{v}-{i}", {**overrides, **extra})}
        _print(variant, results)
        everything[variant] = results
    _print_evidence(measured)
    print(f"\n{time.time() - started:.0f} s")
    (root / "validation.json").write_text(json.dumps(everything, indent=1, default=float))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
