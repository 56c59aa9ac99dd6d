"""``workbench``: the command line, a thin layer over :mod:`workbench.api`.

Each sub-command parses its arguments, calls one API function and prints where the output went.
Every command ends in one line, never a traceback (:mod:`workbench.cli_errors` is the boundary):
bad input names the key or file and the fix (exit status 2), Ctrl-C stops and says what was kept
(130), and a bug says so and where its traceback went (1).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from workbench.cli_errors import guarded

__all__ = ["main"]

_Handler = Callable[[argparse.Namespace], int]


def _say(message: str) -> None:
    sys.stdout.write(message + "\n")


def _count(minimum: int) -> Callable[[str], int]:
    """An argparse type: an integer of at least ``minimum`` (argparse reports anything else, exit 2)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None
        if value < minimum:
            noun = {0: "a non-negative integer", 1: "a positive integer"}.get(minimum, f"at least {minimum}")
            raise argparse.ArgumentTypeError(f"must be {noun}, got {value}")
        return value
    return parse


def _size(text: str) -> int:
    from workbench.units import parse_size

    try:
        value = parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be positive, got {text!r}")
    return value


def _quantity(text: str) -> float:
    """An argparse type: a non-negative number, with K, M or B (thousands, millions, billions): ``200M``."""
    scale = {"K": 1e3, "M": 1e6, "B": 1e9}.get(text[-1:].upper(), 1.0)
    try:
        value = float(text[:-1] if scale != 1.0 else text) * scale
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number such as 5800 or 200M, got {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a non-negative number, got {text!r}")
    return value


def _setting(text: str) -> tuple[str, Any]:
    """An argparse type: ``KEY=VALUE``, the value read as YAML reads it (``12``, ``8G``, ``[a, b]``, ``true``),
    so a scenario key is set on the command line as in the file; the scenario's loader checks the key."""
    import yaml

    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"must be KEY=VALUE (a dotted scenario key, e.g. cluster.servers=12), "
                                         f"got {text!r}")
    try:
        return key.strip(), yaml.safe_load(value) if value.strip() else ""
    except yaml.YAMLError as exc:
        raise argparse.ArgumentTypeError(f"{key.strip()}: {value!r} is not a value YAML reads ({exc})") from None


def _overrides(args: argparse.Namespace) -> dict[str, Any] | None:
    """The ``--set`` overrides, in order (a key set twice keeps the last)."""
    return dict(args.set) if args.set else None


def _duration(text: str) -> float:
    from workbench.units import parse_duration

    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _upsert(args: argparse.Namespace) -> int:
    from workbench.api import upsert_question

    q = {"keys": args.keys, "ttl_s": args.ttl, "update_rate": args.update_rate,
         "new_keys_per_day": args.new_keys_per_day, "key_lifetime_s": args.key_lifetime or 0.0,
         "key_length": args.key_length, "hash_function": args.hash_function, "partitions": args.partitions}
    answer = upsert_question(args.scenario, q, servers=args.servers, heaps=args.heaps or (), qps=args.qps,
                             p99_ms=args.p99_ms, seed=args.seed, duration_s=args.duration, out=args.out,
                             run=not args.heap_only)
    _say(f"upsert: {answer.map_keys:,.0f} keys in the map over {answer.partitions} partitions x "
         f"{answer.replication} replicas, {answer.bytes_per_key:.1f} B per key, {answer.update_rate:,.0f} updates/s")
    for _, row in answer.table.iterrows():
        verdict = {True: "meets", False: "fails"}.get(row["meets_slo"], "not run")
        p99 = f"p99 {row['p99_ms']:.1f} ms" if row["live_bytes"] < row["heap_bytes"] else "out of memory (live > -Xmx)"
        _say(f"  {row['servers']} servers, {row['heap']} heap: busiest server {row['max_keys_per_server']:,.0f} keys, "
             f"{row['live_bytes'] / 2**30:.2f} GiB live ({'under' if row['under_ihop'] else 'OVER'} IHOP "
             f"{row['ihop_bytes'] / 2**30:.2f} GiB), {p99}: {verdict}")
    for n, g in answer.table.groupby("servers", sort=True):
        _say(f"  {n} servers: a heap of at least {g['heap_for_ihop_bytes'].iloc[0] / 2**30:.1f} GiB keeps the busiest "
             "server's live heap under G1's IHOP")
    for note in answer.notes:
        _say(f"  note: {note}")
    _say(f"upsert: {answer.headline()}" + (f"; wrote {Path(args.out) / 'upsert.json'}" if args.out else ""))
    if args.out and (Path(args.out) / "sweep.json").exists():
        _say(f"`workbench sweep {Path(args.out) / 'sweep.json'} --out DIR` runs the candidates as a sweep for "
             "`workbench report`")
    return 0


def _validate(args: argparse.Namespace) -> int:
    from workbench.api import check_scenario, scenario_warnings

    for path in args.scenarios:
        sc = check_scenario(path, data=args.data, overrides=_overrides(args))
        tables = ", ".join(f"{t.table.table_name_with_type} on {t.tenant}" for t in sc.tables)
        what = f"tables {tables}" if sc.tables else \
            f"table {sc.table.table_name_with_type}, workload {sc.workload.source}"
        _say(f"{path}: ok ({sc.name}: {sc.cluster.servers} servers, {what})")
        for warning in scenario_warnings(sc, data=args.data):
            _say(f"{path}: WARNING: {warning}")
    return 0


def _generate(args: argparse.Namespace) -> int:
    from workbench.api import generate

    manifest = generate(args.spec, args.out, master=args.master, seed=args.seed, overwrite=args.overwrite,
                        progress=False if args.quiet else None)
    _say(f"wrote {manifest['row_counts']['events']:,} events in {manifest['row_counts']['segments']} "
         f"segments to {args.out} ({manifest['elapsed_s']:.1f} s)")
    return 0


def _tick(bar: Any, done: int, total: int) -> None:
    bar.total = total
    bar.update(done - bar.n)


def _simulate(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from workbench.api import profile_note, run_scenario

    bars: list[Any] = []  # made at the first replication, so bad input prints no empty bar first

    def progress(done: int, total: int) -> None:
        if not bars:
            bars.append(tqdm(desc="replications", unit="replication", disable=args.quiet))
        _tick(bars[0], done, total)

    try:
        document = run_scenario(args.scenario, args.out, overrides=_overrides(args), seed=args.seed, data=args.data,
                                overwrite=args.overwrite, progress=progress)
    finally:
        for bar in bars:
            bar.close()
    line = document.summary.headline()
    if document.summary.table_fit.segments:  # the table's strain, said on the run's line (and in summary.json)
        line += f"; WARNING: {document.summary.table_fit.segments}"
    if note := profile_note(document.scenario, Path(args.scenario).parent):
        line += f"; NOTE: {note}"
    _say(f"{line}; wrote {args.out}")
    return 0


def _sweep(args: argparse.Namespace) -> int:
    from workbench.sweep import failed_points, run_sweep

    combined = run_sweep(args.sweep, args.out, parallel=args.parallel, master=args.master,
                         retries=args.retries, progress=not args.quiet, restart=args.restart,
                         studies=not args.no_studies)
    _say(f"wrote {len(combined)} points to {Path(args.out) / 'combined.parquet'}")
    if not args.no_studies:
        _say_studies(args.out)
    failed = failed_points(combined)
    for row in failed.itertuples(index=False):
        sys.stderr.write(f"workbench sweep: {row.point} failed: {row.error}\n")
    if len(failed):
        sys.stderr.write(f"workbench sweep: {len(failed)} of {len(combined)} points failed; "
                         f"see {Path(args.out) / 'failures.json'}\n")
        return 3
    return 0


def _size_command(args: argparse.Namespace) -> int:
    from workbench.sizing import size

    record = size(args.scenario, args.out, exhaustive=args.exhaustive, parallel=args.parallel, master=args.master,
                  progress=not args.quiet, studies=not args.no_studies)
    draws = f", {record['draw_runs']} parameter draws" if record["draw_runs"] else ""
    how = (f"{record['runs']} runs ({record['failure_case_runs']} failure cases{draws}), "
           f"{record['simulated_queries']:,} simulated queries, {record['space']['evaluated']} of "
           f"{record['space']['shapes']} shapes evaluated")
    if record["recommendation"] is not None:
        _say(f"size: recommend {record['recommended_point']}: {_shape(record)} ({how})")
    else:
        closest = record["closest"] or {}
        over = closest.get("over_slo_ms")
        _say(f"size: no shape meets the SLO ({how}); closest: {closest.get('shape')} ({closest.get('why')}"
             + (f", {over:+.1f} ms from the SLO" if over is not None else "") + ")")
    _say(f"wrote {Path(args.out) / 'sizing.json'}; `workbench report {args.out} --out REPORT.pdf` reports it")
    for failed in record["failed"]:
        sys.stderr.write(f"workbench size: {failed['point']} failed (taken as not meeting the SLO): "
                         f"{failed['error']}\n")
    return 3 if record["failed"] else 0


def _shape(record: Mapping[str, Any]) -> str:
    """The recommended shape in words, from its evaluated row."""
    row = next(e for e in record["evaluated"] if e["point"] == record["recommended_point"])
    return f"{row['servers']} servers, {row['line']}, instance {row['instance']}"


def _import(args: argparse.Namespace) -> int:
    from workbench.api import import_input

    types = tuple(t.strip().upper() for t in args.primary_key_types.split(",")) if args.primary_key_types else None
    options = {"upsert_keys": args.upsert_keys, "hash_function": args.hash_function,
               "primary_key_types": types, "update_rate": args.update_rate}
    _, description = import_input(args.kind, args.path, args.out, lenient=args.lenient, overwrite=args.overwrite,
                                  options=options, max_input_bytes=args.max_input_size)
    _say(f"{description}; wrote {args.out}")
    return 0


def _calibrate(args: argparse.Namespace) -> int:
    from workbench.api import calibrate
    from workbench.calibrate import describe_calibration

    result = calibrate(args.table_config, args.schema, args.segments, args.query_log, args.out,
                       measured=args.measured, rate=args.rate, gc_logs=args.gc_log,
                       servers=args.servers, server_cores=args.server_cores,
                       backtest_queries=args.backtest_queries, replications=args.replications, seed=args.seed,
                       lenient=args.lenient, overwrite=args.overwrite, server_work=args.server_work,
                       server_cpu_ms=args.server_cpu_ms, holdout=args.holdout, controller=args.controller,
                       table=args.table, table_type=args.table_type)
    _say(describe_calibration(result))
    return 0


def _scale_out(args: argparse.Namespace) -> int:
    from workbench.api import scale_out

    minimize = {"table": None, "on": True, "off": False}[args.minimize]
    result = scale_out(args.scenario, args.servers, out=args.out, seed=args.seed, data=args.data,
                       minimize_data_movement=minimize, include_consuming=args.include_consuming)
    for m in result.plan.moves:
        _say(f"  {m.server:<12} segments {m.segments_before:>5} -> {m.segments_after:<5} "
             f"in {m.segments_in:>5} ({m.bytes_in / 1e9:.3g} GB)  out {m.segments_out:>5}")
    _say(result.sentence() + (f"; wrote {args.out}" if args.out else ""))
    return 0


def _table_added(args: argparse.Namespace) -> int:
    from workbench.api import table_added

    rows = table_added(args.scenario, args.table, seed=args.seed)
    for r in rows.itertuples(index=False):
        verdict = "met" if r.slo_met_with else f"BROKEN, interval up to {r.p99_with_ci_high_ms:.2f} ms"
        slo = f" (SLO {r.p99_slo_ms:g} ms: {verdict})" if r.slo_met_with is not None else ""
        at = " at " + str(r.hour) if r.hour else ""
        _say(f"  {r.table:<20} p99 {r.p99_without_ms:8.2f} -> {r.p99_with_ms:8.2f} ms{slo}; "
             f"{r.tenant} busy {r.utilisation_without:.0%} -> {r.utilisation_with:.0%}{at}")
    _say(f"adding {args.table} moves the p99 of {len(rows)} table{'s' if len(rows) != 1 else ''} above")
    return 0


def _day(args: argparse.Namespace) -> int:
    from workbench.api import day

    result = day(args.scenario, args.out, seed=args.seed, every_step=args.every_step)
    for step in result.simulated():
        _say(result.step_line(step))
    _say(f"{result.sentence()}; wrote {args.out}")
    return 0


def _verdict(args: argparse.Namespace) -> int:
    from workbench.api import verdict

    result = verdict(args.directory, args.out, growth=args.growth, measured=args.measured, rate=args.rate,
                     p99_ms=args.p99_ms, survive=args.survive)
    for line in result.lines():
        _say(line)
    _say(f"wrote {args.out}/verdict.json")
    return 0


def _studies(args: argparse.Namespace) -> int:
    from workbench.api import run_studies

    where = run_studies(args.sweep)
    _say_studies(args.sweep)
    _say(f"studies: the recommendation's what-if runs are in {where}" if where is not None else
         "studies: no configuration meets the SLO, so there is no recommendation to study")
    return 0


def _say_studies(sweep_dir: str) -> None:
    from workbench.api import studies_note

    note = studies_note(sweep_dir)
    if note is not None:
        _say(note)


def _report(args: argparse.Namespace) -> int:
    from workbench.api import report

    _say(f"report: {report(args.run, args.out).resolve()}")
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="workbench",
        description="Size an Apache Pinot cluster before paying for it: generate a workload, "
                    "simulate the cluster, sweep configurations and write a PDF sizing report.",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    v = sub.add_parser("validate", help="check scenario files and report the first problem in each",
                       description="Load and validate scenarios (YAML or JSON) without running anything.")
    v.add_argument("scenarios", nargs="+", help="scenario files")
    v.add_argument("--data", help="workload directory to check the scenarios against (default: workload.data)")
    v.add_argument("--set", action="append", type=_setting, metavar="KEY=VALUE",
                   help="override a scenario key, e.g. --set cluster.servers=12 (repeatable)")
    v.set_defaults(handler=_validate)

    g = sub.add_parser("generate", help="generate events and segments with Spark",
                       description="Generate a workload (events, segments, manifest) with PySpark. SPEC is a "
                                   "scenario with workload.generate, or a bare generate-spec YAML.")
    g.add_argument("spec", help="scenario or workload spec file")
    g.add_argument("--out", required=True, help="output directory, e.g. data/raw/NAME")
    g.add_argument("--master", help="Spark master (default: scenario, WORKBENCH_SPARK_MASTER, local[*])")
    g.add_argument("--seed", type=_count(0), help="override the spec's seed (a non-negative integer)")
    g.add_argument("--overwrite", action="store_true", help="replace an existing output directory")
    g.add_argument("--quiet", action="store_true", help="no progress bar")
    g.set_defaults(handler=_generate)

    s = sub.add_parser("simulate", help="run the SimPy cluster model on a scenario",
                       description="Simulate a scenario's replications and write queries/servers/gc_pauses "
                                   "Parquet tables and summary.json into --out (atomically).")
    s.add_argument("scenario", help="scenario file")
    s.add_argument("--out", required=True, help="run directory to write")
    s.add_argument("--data", help="generated workload directory (with segments.parquet)")
    s.add_argument("--seed", type=_count(0), help="override simulation.seed (a non-negative integer)")
    s.add_argument("--overwrite", action="store_true", help="replace an existing run directory")
    s.add_argument("--set", action="append", type=_setting, metavar="KEY=VALUE",
                   help="override a scenario key, e.g. --set workload.arrival.speed=2 (repeatable; recorded in "
                        "summary.json's overrides)")
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    s.set_defaults(handler=_simulate)

    w = sub.add_parser("sweep", help="run a grid or list of scenario overrides",
                       description="Run every point of SWEEP (a base scenario plus a grid or list of dotted-key "
                                   "overrides); each point writes its own run directory, then one combined table. "
                                   "Points already done are skipped, so a sweep resumes. A failed point is "
                                   "retried, then reported (exit status 3) and listed in failures.json. Then the "
                                   "sizing report's what-ifs run (as `workbench studies`), so the report only reads.")
    w.add_argument("sweep", help="sweep file (YAML)")
    w.add_argument("--out", required=True, help="sweep output directory")
    w.add_argument("--parallel", type=_count(1), metavar="N",
                   help="local worker processes (default: the sweep's parallel, else one per core)")
    w.add_argument("--master", help="run the points as Spark tasks on this master, e.g. spark://host:7077 "
                                    "(default: the sweep's spark.master, else locally)")
    w.add_argument("--retries", type=_count(0), default=1, metavar="N",
                   help="retries of a failed point (default 1)")
    w.add_argument("--restart", action="store_true",
                   help="start over: remove the points of an earlier run of a different sweep in --out")
    w.add_argument("--no-studies", action="store_true",
                   help="skip the report's what-if runs afterwards (`workbench studies` runs them later)")
    w.add_argument("--quiet", action="store_true", help="no progress bar")
    w.set_defaults(handler=_sweep)

    z = sub.add_parser("size", help="find the cheapest shape that meets the SLO by search (the scenario's sizing:)",
                       description="Search the scenario's sizing: space (servers min..max, replica groups, vary, "
                                   "instances) for the cheapest shape whose p99 interval meets slo.p99_ms and that "
                                   "survives slo.survive: bisection on servers, failure cases only for shapes that "
                                   "could win. OUT is a sweep directory (`workbench report OUT`) plus sizing.json. "
                                   "Exit status 0 also when no shape meets the SLO (sizing.json says how close).")
    z.add_argument("scenario", help="scenario file with a sizing: section")
    z.add_argument("--out", required=True, help="output directory (replaced)")
    z.add_argument("--exhaustive", action="store_true",
                   help="simulate every shape instead (the reference the search is checked against)")
    z.add_argument("--parallel", type=_count(1), metavar="N", help="local worker processes (default: one per core)")
    z.add_argument("--master", help="run the batches as Spark tasks on this master, e.g. spark://host:7077")
    z.add_argument("--no-studies", action="store_true",
                   help="skip the report's what-if runs afterwards (`workbench studies OUT` runs them later)")
    z.add_argument("--quiet", action="store_true", help="no progress bar")
    z.set_defaults(handler=_size_command)

    u = sub.add_parser("upsert", help="servers and heap for an upsert table: keys, metadataTTL, update rate, SLO",
                       description="The upsert question in one step: total keys, metadataTTL and update rate at table "
                                   "level; keys per server from the table's partitions, replication and Pinot's "
                                   "assignment; bytes per key from the schema's key types (maxLength) and "
                                   "hashFunction; "
                                   "each candidate server count and heap simulated, judged by the report's SLO rule. "
                                   "See docs/upsert.md.")
    u.add_argument("scenario", help="scenario file with the upsert table (its upsertConfig, schema, partitions)")
    u.add_argument("--keys", required=True, type=_quantity, help="primary keys of the table, e.g. 200M")
    u.add_argument("--ttl", type=_duration, help="metadataTTL, e.g. 1d (default: the table's; 0 = off)")
    u.add_argument("--update-rate", type=_quantity,
                   help="updates of existing keys per second, whole table (default: scaled from the generated "
                        "sample, and said so)")
    u.add_argument("--new-keys-per-day", type=_quantity,
                   help="new keys a day, whole table (lets the TTL bound the map)")
    u.add_argument("--key-lifetime", type=_duration, help="how long a key keeps being updated, e.g. 2h (default 0)")
    u.add_argument("--key-length", type=_count(1), help="length of a STRING/BYTES key the schema gives no maxLength")
    u.add_argument("--hash-function", choices=("NONE", "MD5", "MURMUR3", "XXHASH", "XXH128", "UUID"),
                   help="upsertConfig.hashFunction (default: the table's)")
    u.add_argument("--partitions", type=_count(1), help="stream partitions (default: the scenario's)")
    u.add_argument("--servers", required=True, type=lambda t: [_count(1)(x) for x in t.split(",")],
                   help="server counts to consider, e.g. 4,6,8")
    u.add_argument("--heaps", type=lambda t: t.split(","), help="heaps to consider, e.g. 16G,31G (default: the "
                                                                "scenario's)")
    u.add_argument("--qps", type=float, help="queries/s (a Poisson workload; default: the scenario's)")
    u.add_argument("--p99-ms", type=float, help="the p99 SLO, ms (default: slo.p99_ms)")
    u.add_argument("--seed", type=_count(0), help="override simulation.seed")
    u.add_argument("--duration", type=_duration, help="simulated time per candidate, e.g. 60s (default: the "
                                                       "scenario's simulation.duration_s)")
    u.add_argument("--heap-only", action="store_true", help="the heap arithmetic only, no simulation")
    u.add_argument("--out", help="directory for upsert.json")
    u.set_defaults(handler=_upsert)

    t = sub.add_parser("studies", help="run the what-ifs a sweep's sizing report reads",
                       description="Run the recommendation's what-ifs (+50%% load, a server or replica group "
                                   "down), its headroom, the cheapest configuration that survives a lost server "
                                   "and the rebalance to the next size, into SWEEP/whatif (runs already there are "
                                   "reused). `workbench sweep` runs this after its points; `workbench report` only "
                                   "reads what it wrote.")
    t.add_argument("sweep", help="sweep directory (`workbench sweep`)")
    t.set_defaults(handler=_studies)

    i = sub.add_parser("import", help="import real Pinot data (configs, segment metadata, query and GC logs)",
                       description="Read a real Pinot input into the workbench's shared schemas (docs/importers.md): "
                                   "KIND is table-config, schema, segments (controller metadata JSON), query-log "
                                   "(broker log lines) or gc-log (JVM unified logging). Malformed lines are "
                                   "reported with their line numbers; --lenient skips and counts them.")
    i.add_argument("kind", help="table-config, schema, segments, query-log or gc-log")
    i.add_argument("path", help="the file to import")
    i.add_argument("--out", required=True, help="output directory (written atomically)")
    i.add_argument("--lenient", action="store_true", help="skip malformed lines and report counts")
    i.add_argument("--overwrite", action="store_true", help="replace an existing output directory")
    i.add_argument("--max-input-size", type=_size, metavar="SIZE",
                   help="largest input read, after decompression (default 2G; e.g. 8G)")
    g1 = i.add_argument_group("gc-log: G1 calibration (docs/gc.md)")
    g1.add_argument("--upsert-keys", type=int, metavar="N", help="upsert primary keys the logged JVM held")
    g1.add_argument("--hash-function", metavar="H", help="their upsertConfig.hashFunction (default NONE)")
    g1.add_argument("--primary-key-types", metavar="T[,T]", help="Pinot types of the key columns (default LONG)")
    g1.add_argument("--update-rate", type=float, metavar="R",
                    help="upsert updates of existing keys per second while logging (default: inferred)")
    i.set_defaults(handler=_import)

    c = sub.add_parser("calibrate", help="fit the model to your cluster's files and back-test it",
                       description="Import your table config, schema, segment metadata, broker query log (and GC "
                                   "logs), fit the service cost to the log, and write one directory: scenario.yaml "
                                   "(every value says where it came from), a replayable workload, calibration.json "
                                   "and backtest.json (observed against predicted percentiles). See docs/calibrate.md.")
    c.add_argument("--measured", metavar="DIR",
                   help="a `workbench measure` directory: its table config, schema, segments and one rate's broker "
                        "log and server GC logs (the flags below override)")
    c.add_argument("--rate", type=_rate, metavar="QPS",
                   help="with --measured: the measured rate to calibrate from (default: the lowest)")
    c.add_argument("--controller", metavar="URL",
                   help="a live Pinot controller (http://host:9000): fetch --table's config, schema and segment "
                        "metadata from it instead of the three files (kept in DIR/controller/)")
    c.add_argument("--table", metavar="NAME", help="with --controller: the table to fetch")
    c.add_argument("--table-type", choices=("OFFLINE", "REALTIME"), type=str.upper,
                   help="with --controller: the type of a hybrid table")
    c.add_argument("--table-config", metavar="F", help="table config JSON (GET /tables/{table}); required without "
                                                       "--measured or --controller")
    c.add_argument("--schema", metavar="F", help="schema JSON (GET /schemas/{schema}); required without --measured or "
                                                  "--controller")
    c.add_argument("--segments", metavar="F",
                   help="segment metadata JSON (GET /segments/{table}/metadata); required without --measured or "
                        "--controller")
    c.add_argument("--query-log", metavar="F", help="the broker's querylog.log; required without --measured")
    c.add_argument("--gc-log", action="append", metavar="F", help="a server's GC log (-Xlog:gc*); repeat per server")
    c.add_argument("--out", required=True, metavar="DIR", help="output directory (written atomically)")
    c.add_argument("--servers", type=int, metavar="N", help="server count (default: the servers the log names)")
    c.add_argument("--server-cores", type=int, metavar="N", help="cores per server (default 8; no input carries it)")
    c.add_argument("--backtest-queries", type=int, default=20_000, metavar="N",
                   help="replay the log's first N queries in the back-test (0: none; default 20000)")
    c.add_argument("--holdout", type=float, metavar="SHARE",
                   help="share of the log, by time, held out of the fit and back-tested apart (default 0.3; 0: "
                        "fit and back-test the whole log)")
    c.add_argument("--replications", type=int, metavar="N", help="back-test replications (default 3)")
    c.add_argument("--seed", type=int, metavar="N", help="seed of every random stream")
    c.add_argument("--lenient", action="store_true", help="skip malformed log lines and report counts")
    c.add_argument("--overwrite", action="store_true", help="replace an existing output directory")
    c.add_argument("--no-server-work", dest="server_work", action="store_false",
                   help="fit timeMs alone even when the log carries the servers' measured CPU time")
    c.add_argument("--server-cpu-ms", type=float, metavar="MS",
                   help="the servers' process CPU per query (summed over servers), when measured: what it has "
                        "beyond the log's thread CPU becomes service.off_path_ms, CPU run after each response "
                        "(less the log's mean wake-up, service.wake_ms, when the log shows one)")
    c.set_defaults(handler=_calibrate)

    y = sub.add_parser("day", help="simulate the hours of the scenario's day profile that decide its verdict",
                       description="Run the steps of workload.profile (docs/scenario.md) in decreasing rate from the "
                                   "peak until one meets the p99 SLO with margin (lower rates then meet too), each "
                                   "on the same seed; writes OUT/day.json and a run per rate. `workbench report OUT` "
                                   "draws p99 and utilisation per step with the SLO line.")
    y.add_argument("scenario", help="scenario file with workload.profile")
    y.add_argument("--out", required=True, help="output directory (runs already there are reused)")
    y.add_argument("--seed", type=_count(0), help="override simulation.seed (a non-negative integer)")
    y.add_argument("--every-step", action="store_true", help="simulate every distinct rate of the day")
    y.set_defaults(handler=_day)

    e = sub.add_parser("verdict", help="UNDER, OVER or RIGHT-sized: today's calibrated cluster and after growth",
                       description="Judge a calibrated directory (`workbench calibrate`; or with --measured a "
                                   "`workbench measure` directory, calibrated first) at today's peak and at the peak "
                                   "grown by --growth: the sizing report's rule over neighbouring server counts and "
                                   "instance types, the smallest change that fixes it, what Pinot's rebalance moves, "
                                   "the money and why. See docs/calibrate.md.")
    e.add_argument("directory", help="calibrated directory (or a measure directory with --measured)")
    e.add_argument("--out", required=True, help="output directory: verdict.json and the runs (reused)")
    e.add_argument("--growth", type=float, default=0.5, help="load growth to judge as well (default 0.5: +50%%)")
    e.add_argument("--measured", action="store_true", help="DIRECTORY is a `workbench measure` directory")
    e.add_argument("--rate", type=_rate, help="with --measured: the measured rate to calibrate from")
    e.add_argument("--p99-ms", type=float, help="the p99 SLO, ms (a calibrated scenario has none)")
    e.add_argument("--survive", choices=("none", "server", "replica_group"),
                   help="the failure the SLO must hold through (default: the scenario's slo.survive, `server`)")
    e.set_defaults(handler=_verdict)

    o = sub.add_parser("scale-out", help="what a rebalance to N servers moves, and p99 before and after",
                       description="Grow (or shrink) the scenario's cluster to --servers: Pinot's instance and "
                                   "segment reassignment of today's layout (with the table's minimizeDataMovement), "
                                   "the segments and bytes each server loads, and the simulated p99 before and after "
                                   "the move on the same seed. See docs/model.md.")
    o.add_argument("scenario", help="scenario file (its cluster.servers is today's count)")
    o.add_argument("--servers", required=True, type=_count(1), metavar="N", help="server count after the change")
    o.add_argument("--data", help="workload directory (default: workload.data)")
    o.add_argument("--seed", type=_count(0), help="override simulation.seed (a non-negative integer)")
    o.add_argument("--minimize", choices=("table", "on", "off"), default="table",
                   help="the rebalance's minimizeDataMovement: the table config's flag (default), on or off")
    o.add_argument("--include-consuming", action="store_true", default=None,
                   help="also move CONSUMING segments (always done when the cluster shrinks)")
    o.add_argument("--out", help="write the moves, the new ideal state and both summaries to this JSON file")
    o.set_defaults(handler=_scale_out)

    t = sub.add_parser("table-added", help="each other table's p99 without and with one table of a tables: scenario",
                       description="Run a scenario of several tables (tables:) without TABLE and with it (listed last, "
                                   "so every other table draws the same numbers), and print each other table's p99, "
                                   "SLO verdict and tenant utilisation before and after. See docs/scenario.md.")
    t.add_argument("scenario", help="scenario file listing tables (tables:)")
    t.add_argument("table", help="the tableName of the table being added")
    t.add_argument("--seed", type=_count(0), help="override simulation.seed (a non-negative integer)")
    t.set_defaults(handler=_table_added)

    a = sub.add_parser("agree", help="check the model's pruning, routing and docs scanned against Apache Pinot",
                       description="Run the scenario's table config, schema, segments (with their rows) and first "
                                   "queries through Apache Pinot's own code (the pinned release, fetched by Maven) "
                                   "and through the model, query by query; DIR/agreement.json lists every "
                                   "disagreement. A REALTIME table is checked as its OFFLINE twin. See "
                                   "docs/validation.md.")
    a.add_argument("scenario", help="scenario file")
    a.add_argument("--out", required=True, help="output directory (agreement.json and what Pinot wrote)")
    a.add_argument("--data", help="workload directory (default: workload.data)")
    a.add_argument("--queries", type=_count(1), metavar="N", help="how many of the workload's queries (default 300)")
    a.add_argument("--overwrite", action="store_true", help="replace an existing output directory")
    a.set_defaults(handler=_agree)

    m = sub.add_parser("measure", help="measure the scenario's table on Apache Pinot at open-loop rates",
                       description="Serve the scenario's table config, schema, segments and queries with Apache "
                                   "Pinot (the pinned release, fetched by Maven): ZooKeeper, Pinot's controller and "
                                   "broker and one server JVM per scenario server, queried over the broker's HTTP "
                                   "API at each open-loop Poisson rate. DIR gets the table config, schema and "
                                   "segment metadata from the controller's REST API and, per rate, the broker query "
                                   "log (for `workbench calibrate --measured`), the servers' query and GC logs, "
                                   "records.parquet, summary.json (p50/p90/p99/p99.9 of the client latency and the "
                                   "broker's timeMs) and agreement.json (the model against Pinot, query by query). "
                                   "See docs/validation.md.")
    m.add_argument("scenario", help="scenario file")
    m.add_argument("--out", required=True, help="output directory")
    m.add_argument("--rate", type=_rate, action="append", metavar="QPS",
                   help="an open-loop rate in queries/s; repeat for several (default 10)")
    m.add_argument("--data", help="workload directory (default: workload.data)")
    m.add_argument("--queries", type=_count(1), metavar="N", help="queries sent per rate (default 1000)")
    m.add_argument("--warmup", type=_count(0), metavar="N",
                   help="queries run one at a time before each rate, not recorded (default 200)")
    m.add_argument("--jit-settle", type=float, default=0.0, metavar="SECONDS",
                   help="let each warm-up go on up to SECONDS more, at the rate itself, until the servers' JIT "
                        "compilers are quiet (under 2%% of a core over 10 s), so the measured run meets no compilation "
                        "(default 0: exactly --warmup queries)")
    m.add_argument("--seed", type=_count(0), help="seed of the Poisson arrivals (default 0)")
    m.add_argument("--slow", type=_slow, action="append", metavar="SERVER=FACTOR",
                   help="make a scenario server that many times slower (its JVM limited to 1/FACTOR of a core by a "
                        "cgroup; needs root), as cluster.failures.slow does in the model, e.g. Server_1=4; repeatable")
    m.add_argument("--replay", action="store_true",
                   help="send the workload's queries at their own arrival times instead of Poisson at --rate")
    m.add_argument("--duration", type=float, metavar="S", help="end each run's arrivals after S seconds")
    m.add_argument("--cluster", choices=("helix", "processes"), default="helix",
                   help="helix (default): a whole cluster with Pinot's controller and broker; processes: the servers "
                        "with the broker's scatter-gather in the load generator (no controller, no HTTP)")
    m.add_argument("--overwrite", action="store_true", help="replace an existing output directory")
    m.set_defaults(handler=_measure)

    r = sub.add_parser("report", help="write a PDF sizing report from a sweep or run directory",
                       description="Build a multi-page PDF: from a sweep directory, the sizing report (the "
                                   "recommended configuration that meets the SLO, the runner-up, tables and plots); "
                                   "from a single run directory, that run's report.")
    r.add_argument("run", help="sweep directory (`workbench sweep`) or run directory (`workbench simulate`)")
    r.add_argument("--out", required=True, help="PDF path, e.g. reports/NAME.pdf")
    r.set_defaults(handler=_report)
    return p


def _agree(args: argparse.Namespace) -> int:
    from workbench.api import agree

    result = agree(args.scenario, args.out, data=args.data, queries=args.queries, overwrite=args.overwrite)
    fields = sorted({d.field for d in result.disagreements})
    tail = f"; disagreements on {', '.join(fields)}" if fields else ""
    _say(f"agree: {result.agreed} of {result.queries} queries agree with Apache Pinot {result.pinot_version}{tail} "
         f"({args.out}/agreement.json)")
    return 0


def _rate(text: str) -> float:
    """An argparse type: a positive, finite number of queries per second."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of queries per second, got {text!r}") from None
    if not (value > 0 and value < float("inf")):
        raise argparse.ArgumentTypeError(f"must be a positive number of queries per second, got {text}")
    return value


def _slow(text: str) -> tuple[str, float]:
    """An argparse type: ``SERVER=FACTOR`` (``Server_1=4``), the factor a finite number of at least 1.

    >>> _slow("Server_1=4")
    ('Server_1', 4.0)
    """
    name, sep, value = text.partition("=")
    try:
        factor = float(value)
    except ValueError:
        factor = float("nan")
    if not sep or not name.strip() or not (1.0 <= factor < float("inf")):
        raise argparse.ArgumentTypeError(f"must be SERVER=FACTOR with a factor of at least 1, e.g. Server_1=4, "
                                         f"got {text!r}")
    return name.strip(), factor


def _measure(args: argparse.Namespace) -> int:
    from workbench.api import measure

    def said(rate: float, s: Mapping[str, Any]) -> None:
        warn = f"{s['warning']}; " if "warning" in s else ""
        client, broker = s["client_latency_ms"], s["broker_time_ms"]
        _say(f"measure: {rate:g}/s: {warn}{s['queries_recorded']} queries, client p50/p90/p99/p99.9 "
             f"{client['p50']}/{client['p90']}/{client['p99']}/{client['p99.9']} ms, broker timeMs "
             f"{broker['p50']}/{broker['p90']}/{broker['p99']}/{broker['p99.9']} ms")
        if "agreement" in s:
            a = s["agreement"]
            _say(f"measure: {rate:g}/s: the model agreed with Pinot on {a['agreed']} of {a['queries']} queries "
                 f"(agreed {a['agreed']} of {a['queries']}; {args.out}/rate-{rate:g}/{a['file']})")

    document = measure(args.scenario, args.out, rates=args.rate, data=args.data,
                       queries=args.queries, replay=args.replay, duration_s=args.duration,
                       warmup=args.warmup, seed=args.seed, overwrite=args.overwrite, progress=said,
                       slow=dict(args.slow or ()), cluster=args.cluster, jit_settle_s=args.jit_settle)
    _say(f"measure: Apache Pinot {document['pinot_version']} ({document['cluster']}), "
         f"{document['servers_started']} server(s): "
         f"{document['placement']} ({args.out}/measure.json)")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``workbench`` console script."""
    args = _parser().parse_args(argv)
    handler: _Handler = args.handler
    return guarded(args, lambda: handler(args))


def console() -> int:
    """The ``workbench`` console script: :func:`main` in a process of its own, which keeps the memory its
    replications free for the next ones (:func:`~workbench.sim.allocator.keep_freed_memory`)."""
    from workbench.sim.allocator import keep_freed_memory

    keep_freed_memory()
    return main()


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(console())
