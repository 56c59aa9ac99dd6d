"""The workbench's jobs, one function each; the CLI, sweep points and notebooks all call these.

- :func:`check_scenario`: every check a run applies, without running (``workbench validate``);
- :func:`generate`: a workload directory from a scenario's (or a bare) generate spec, with Spark;
- :func:`run_scenario`: a scenario (plus overrides) simulated into a run directory, returning its summary:
  the one verb every run goes through (defined in :mod:`workbench.runs`, below the studies that call it);
- :func:`day`: the steps of a day's load profile that decide the verdict, each simulated on one seed;
- :func:`verdict`: UNDER, OVER or RIGHT-sized for a calibrated cluster today and after growth, and the fix;
- :func:`run_studies`: the runs a sweep's sizing report reads (what-ifs, headroom, rebalance), before it;
- :func:`report`: the PDF of a run directory or a sweep directory, from files only (it never simulates);
- :func:`import_input`: a real Pinot input (table config, schema, segments, query log, GC log) imported;
- :func:`calibrate`: a calibrated scenario, fitted service cost and back-test from a cluster's own files (or
  its live controller's, :func:`fetch_controller`);
- :func:`table_added`: what one table of a ``tables:`` scenario does to the others' p99 (``workbench table-added``).

Each validates its input once, checks that its output can be written before any work starts, and
writes that output atomically.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.errors import InputError, ScenarioError
from workbench.io import check_output, read_document, write_json_atomic
from workbench.pinot.schema import Schema
from workbench.pinot.table_config import TableConfig
from workbench.runs import (
    SUMMARY_FILE,
    check_seed,
    resolve,
    run_checked,
    run_scenario,
    segments_out_of_range,
    servers_without_data,
    write_run,
)
from workbench.scenario import Scenario, build_section, load_scenario
from workbench.scenario.limits import check_limits
from workbench.scenario.schema import ClusterSpec, GenerateSpec, LimitsSpec, SimulationSpec, WorkloadSpec

if TYPE_CHECKING:
    import pandas as pd

    from workbench.calibrate import CalibrateOptions, CalibrationResult
    from workbench.calibrate.controller import ControllerFiles
    from workbench.groundtruth import Agreement
    from workbench.groundtruth.measure import MeasuredFiles
    from workbench.report.day_record import Day
    from workbench.studies.scale_out import ScaleOut
    from workbench.studies.upsert_question import UpsertAnswer, UpsertQuestion
    from workbench.studies.verdict import Verdict

__all__ = ["SUMMARY_FILE", "agree", "calibrate", "check_scenario", "day", "fetch_controller", "generate",
           "import_input", "load_generate_spec", "measure", "profile_note", "report", "run_checked", "run_scenario",
           "run_studies", "scale_out", "scenario_warnings", "studies_note", "table_added", "upsert_question", "verdict",
           "write_run"]

def load_generate_spec(source: str | Path | Scenario) -> tuple[GenerateSpec, str, str | None, TableConfig | None]:
    """Read a workload spec: a scenario (its ``workload.generate``) or a bare generate-spec YAML.

    Returns ``(spec, table name, spark master from the scenario or None, the scenario's table config
    or None for a bare spec)``; the table config's partitioning routes events to stream partitions.
    """
    if isinstance(source, Scenario):
        sc = source
    else:
        path = Path(source)
        data = read_document(path, "workload spec", ScenarioError)
        if not isinstance(data, dict):
            raise ScenarioError(str(path), "a workload spec must be a mapping of generate keys (events, keys, ...) "
                                           f"or a scenario with workload.generate, got {type(data).__name__}")
        if "workload" not in data:
            spec = build_section(GenerateSpec, data, "")
            # a bare spec has no limits section: it is held to the default limits
            check_limits(ClusterSpec(), WorkloadSpec(generate=spec), SimulationSpec(), LimitsSpec())
            return spec, "events", None, None
        sc = load_scenario(data, base_dir=path.parent)
    if sc.workload.generate is None:
        raise ScenarioError("workload.generate", "is required to generate data (the scenario is synthetic)")
    return sc.workload.generate, sc.table.table_name, sc.spark.master, sc.table


def generate(
    source: str | Path | Scenario, out: str | Path, *, master: str | None = None,
    seed: int | None = None, overwrite: bool = False, progress: bool | None = None,
) -> dict[str, Any]:
    """Generate a workload with Spark into ``out``; returns the manifest.

    The table config's partition function routes events to stream partitions and fills each
    segment's partition metadata; ``progress`` ``None`` shows a bar on terminals for large runs.
    """
    from workbench.workload.generate import generate_events
    from workbench.workload.spark import get_spark

    check_seed(seed)
    spec, table, scenario_master, table_config = load_generate_spec(source)
    schema = _scenario_schema(source) if spec.from_schema else None
    check_output(out, overwrite=overwrite)
    spark = get_spark(master, app_name="workbench-generate", scenario_master=scenario_master)
    chosen_seed = seed if seed is not None else (spec.seed if spec.seed is not None else 0)
    return generate_events(spark, spec, Path(out), table=table, seed=chosen_seed, overwrite=overwrite,
                           table_config=table_config, progress=progress, schema=schema)


def _scenario_schema(source: str | Path | Scenario) -> Schema | None:
    """The scenario's Pinot schema (``workload.generate.from_schema`` generates its columns)."""
    if isinstance(source, Scenario):
        return source.schema
    data = read_document(Path(source), "workload spec", ScenarioError)
    if not isinstance(data, dict) or "workload" not in data:
        return None  # a bare spec has no schema; generation says so
    return load_scenario(data, base_dir=Path(source).parent).schema


def check_scenario(scenario: Scenario | str | Path | Mapping[str, Any], *, data: str | Path | None = None,
                   overrides: Mapping[str, Any] | None = None, base_dir: str | Path | None = None) -> Scenario:
    """Load a scenario and apply every check a run applies before its first event; returns it.

    ``workbench validate`` and a sweep's pre-validation call this, so they accept exactly what
    :func:`run_scenario` accepts: limits, Pinot's assignment of the segments to the servers (replicas
    or replica groups the servers cannot hold), the workload directory's tables and every part's checks.
    A scenario that generates its data (``workload.generate``) may be checked before ``workbench
    generate`` has written it (``make demo`` validates first).
    """
    from workbench.sim.run import check_run

    sc = resolve(scenario, overrides, base_dir)
    check_run(sc, Path(data) if data is not None else None,
              data_to_come=data is None and sc.workload.generate is not None)
    return sc


def scenario_warnings(sc: Scenario, *, data: str | Path | None = None) -> list[str]:
    """What a valid scenario's table leaves unused or strains, one sentence each (``workbench validate``
    prints them): servers Pinot's assignment gives no data, with the shape that would use them (a run's
    summary carries the same, ``table_fit``), segments far outside Pinot's comfortable size or count per server
    (``table_fit.segments``), and generate keys that override the table's flush thresholds."""
    from workbench.workload.flush import flush_notes

    given = Path(data) if data is not None else None
    _, why = servers_without_data(sc, given)
    segments = segments_out_of_range(sc, given)
    servers = tuple(f"Server_{i}" for i in sc.table_servers())
    spec = sc.workload.generate

    def row_bytes() -> float:
        from workbench.workload.row_size import spec_row_bytes

        assert spec is not None
        return spec_row_bytes(spec, sc.table, sc.schema)

    return [w for w in (why, segments) if w] + flush_notes(spec, sc.table, servers, row_bytes)


def run_studies(sweep_dir: str | Path) -> Path | None:
    """Run every what-if the sizing report of ``sweep_dir`` reads into ``sweep_dir/whatif`` (runs already
    there are reused); returns the recommended point's what-if directory, or ``None`` when no
    configuration meets the SLO. ``workbench studies`` and ``workbench sweep`` call it."""
    from workbench.studies.sizing import run_sizing_studies

    root = Path(sweep_dir)
    if not (root / "combined.parquet").is_file():
        raise InputError(str(root), "is not a sweep directory (no combined.parquet); run `workbench sweep` first")
    return run_sizing_studies(root)


def studies_note(sweep_dir: str | Path) -> str | None:
    """One line on the studies' failure-case runs of ``sweep_dir`` (how many, how long), for the CLI."""
    from workbench.studies.sizing import studies_note as note

    return note(sweep_dir)


def report(directory: str | Path, out: str | Path) -> Path:
    """Write the PDF of a sweep directory (the sizing report) or of one run directory; returns its path.

    The report reads files only: a sweep's what-if runs come from :func:`run_studies` (the report says
    so when they are missing) and nothing is simulated here."""
    from workbench.report import build_day_report, build_run_report, build_sizing_report

    root = Path(directory)
    if not root.is_dir():
        what = "a file" if root.exists() else "missing"
        raise InputError(str(root), f"is {what}; give a sweep directory (`workbench sweep`) or a run directory "
                                    "(`workbench simulate`)")
    check_output(out, kind="file")
    if (root / "day.json").is_file():
        return build_day_report(directory, out)
    is_sweep = (root / "combined.parquet").is_file()
    return (build_sizing_report if is_sweep else build_run_report)(directory, out)


def import_input(kind: str, path: str | Path, out: str | Path, *, lenient: bool = False,
                 overwrite: bool = False, options: Mapping[str, Any] | None = None,
                 max_input_bytes: int | None = None) -> tuple[Any, str]:
    """Import a real Pinot input of ``kind`` into ``out``; returns the import and one line describing it.

    ``kind`` is ``table-config``, ``schema``, ``segments``, ``query-log`` or ``gc-log``
    (``docs/importers.md``); ``lenient`` skips malformed lines and counts them; ``options`` are the
    kind's import options (``gc-log``: ``upsert_keys``, ``hash_function``, ``primary_key_types``,
    ``update_rate`` for its G1 calibration); ``max_input_bytes`` raises the input size limit (after
    decompression).
    """
    from workbench.workload.importers import describe, import_file

    result = import_file(kind, path, out, lenient=lenient, overwrite=overwrite, options=options,
                         max_bytes=max_input_bytes)
    return result, describe(result)


def calibrate(
    table_config: str | Path | None = None, schema: str | Path | None = None, segments: str | Path | None = None,
    query_log: str | Path | None = None, out: str | Path | None = None, *, measured: str | Path | None = None,
    rate: float | None = None, gc_logs: Sequence[str | Path] | None = None, servers: int | None = None,
    server_cores: int | None = None,
    backtest_queries: int = 20_000, replications: int | None = None, seed: int | None = None,
    lenient: bool = False, overwrite: bool = False, server_work: bool = True, server_cpu_ms: float | None = None,
    holdout: float | None = None,
    controller: str | None = None, table: str | None = None, table_type: str | None = None,
) -> CalibrationResult:
    """Calibrate a scenario from a cluster's own files into ``out`` (``docs/calibrate.md``).

    Imports the table config, schema, segment metadata (controller JSON), broker query log and GC logs;
    fits the service cost to the log (with standard errors and ``service.variability``); writes one
    replayable workload directory, ``scenario.yaml`` (every value commented with where it came from),
    ``calibration.json`` and, unless ``backtest_queries`` is 0, ``backtest.json`` (the log's first
    ``backtest_queries`` queries replayed through the calibrated model, percentiles compared: of the held-out
    last part of the log and, apart, of the part the costs were fitted to).

    Parameters
    ----------
    measured
        A ``workbench measure`` directory: the table config, schema and segments come from it, the broker query
        log and server GC logs from its ``rate`` (default: the lowest measured); files given explicitly override.
        The result's ``measured_rate`` says which rate was read.
    controller, table, table_type
        A live controller's URL (``http://host:9000``) and the table to fetch the table config, schema and
        segment metadata of (:func:`fetch_controller`), instead of the three files; ``table_type`` picks the type
        of a hybrid table. The answers are kept in ``out/controller/``, which the sources name.
    servers
        Server count, when the log's ``serverStats`` should not decide it.
    server_cores
        Cores per server (default ``workbench/defaults.py``); no input carries it.
    replications, seed
        Back-test replications and the seed of every random stream (defaults from ``workbench/defaults.py``).
    lenient
        Skip malformed log lines (counted in ``calibration.json``) instead of stopping at the first.
    server_work
        Fit the servers' costs to the work they measured when the log carries it (``offlineThreadCpuTimeNs``),
        the rest of ``timeMs`` becoming ``cluster.network.request_delay_ms``; ``False`` fits ``timeMs`` alone.
    server_cpu_ms
        The servers' process CPU per query when measured (summed over servers): the log's CPU time covers the
        query's threads only; the difference, per server request, is ``service.off_path_ms``: CPU the model runs
        on the server's cores after each response (less the log's mean wake-up, ``service.wake_ms``, when the log
        shows one: it is part of that CPU).
    holdout
        Share of the log, by time, held out of the fit and back-tested apart (default
        ``workbench/defaults.py`` ``CALIBRATION_HOLDOUT``, 0.3; 0: fit and back-test the whole log).
    """
    from workbench.calibrate import CalibrateOptions
    from workbench.calibrate import calibrate as run
    from workbench.defaults import CALIBRATION_HOLDOUT, REPLICATIONS, SEED
    from workbench.groundtruth.measure import measured_files
    from workbench.studies.backtest import backtest

    options = CalibrateOptions(servers=servers, server_cores=server_cores, lenient=lenient,
                               backtest_queries=backtest_queries, replications=replications or REPLICATIONS,
                               seed=SEED if seed is None else seed, server_work=server_work,
                               server_cpu_ms=server_cpu_ms,
                               holdout=CALIBRATION_HOLDOUT if holdout is None else holdout)
    chosen: str | None = None
    if controller is not None or table is not None or table_type is not None:
        return _calibrate_controller(controller, table, table_type, (table_config, schema, segments, measured),
                                     query_log, out, gc_logs, options, overwrite)
    if measured is not None:
        files = measured_files(measured, rate)
        chosen = files.rate
        _check_measured(files, table_config)
        options = dataclasses.replace(options, pinot_version=files.pinot_version)
        if server_cores is None and files.server_cores is not None:
            options = dataclasses.replace(options, server_cores=files.server_cores,
                                          server_cores_from=files.server_cores_from)
        table_config = table_config or files.table_config
        schema = schema or files.schema
        segments = segments or files.segments
        query_log = query_log or files.query_log
        gc_logs = files.gc_logs if gc_logs is None else gc_logs
    elif rate is not None:
        raise InputError("--rate", "picks a rate of a `workbench measure` directory: give --measured DIR with it")
    for flag, value in (("--table-config", table_config), ("--schema", schema), ("--segments", segments),
                        ("--query-log", query_log), ("--out", out)):
        if value is None:
            raise InputError(flag, "is required (or give --measured DIR, a `workbench measure` directory, for the "
                                   "table config, schema, segments, query log and GC logs)")
    assert table_config is not None and schema is not None and segments is not None and query_log is not None
    assert out is not None
    result = run(table_config, schema, segments, query_log, out, gc_logs=gc_logs or (), options=options,
                 overwrite=overwrite, backtest=backtest)
    return dataclasses.replace(result, measured_rate=chosen) if chosen is not None else result


def _check_measured(files: MeasuredFiles, table_config: str | Path | None) -> None:
    """Refuse a ``measure`` directory that is not of the table or the Pinot release calibrated, naming both: a
    ``--table-config`` of another table than the one measured, or a measurement of another Pinot release than the
    one this workbench pins (``probes/pinot/pom.xml``; its routing, pruning and logs are that release's)."""
    from workbench.groundtruth.build import PROBE_DIR, pinned_version

    def bare(name: str) -> str:
        return name.removesuffix("_OFFLINE").removesuffix("_REALTIME")

    if table_config is not None and files.table is not None:
        try:
            document = read_document(table_config, "table config")
        except InputError:
            document = None  # the importer reports an unreadable config with its own message
        given = str(document.get("tableName", "")) if isinstance(document, dict) else ""
        if given and bare(given) != bare(files.table):
            raise InputError("--table-config", f"{table_config} is table {given}, but {files.directory} measured "
                                               f"table {files.table}: give that table's config, or none (--measured "
                                               "has it)")
    if files.pinot_version is not None and (PROBE_DIR / "pom.xml").is_file():
        pinned = pinned_version(PROBE_DIR)
        if files.pinot_version != pinned:
            raise InputError(f"--measured {files.directory}", f"was measured on Apache Pinot {files.pinot_version}, "
                                                              f"and this workbench models Pinot {pinned} "
                                                              "(probes/pinot/pom.xml): measure again with it")


def _calibrate_controller(controller: str | None, table: str | None, table_type: str | None,
                          given: tuple[Any, ...], query_log: str | Path | None, out: str | Path | None,
                          gc_logs: Sequence[str | Path] | None, options: CalibrateOptions,
                          overwrite: bool) -> CalibrationResult:
    """:func:`calibrate` from a live controller: fetch into a staging directory, calibrate, keep the answers."""
    import tempfile

    from workbench.calibrate import calibrate as run
    from workbench.studies.backtest import backtest

    if any(v is not None for v in given):
        raise InputError("--controller", "fetches the table config, schema and segments: give either --controller "
                                         "with --table, or --table-config/--schema/--segments (or --measured), "
                                         "not both")
    if controller is None or table is None:
        raise InputError("--controller" if controller is None else "--table",
                         "--controller URL and --table NAME go together (--table-type with them for a hybrid table)")
    for flag, value in (("--query-log", query_log), ("--out", out)):
        if value is None:
            raise InputError(flag, "is required with --controller (the broker's querylog.log; the output directory)")
    assert query_log is not None and out is not None
    with tempfile.TemporaryDirectory(prefix="workbench-controller-") as staging:
        files = fetch_controller(controller, table, staging, table_type=table_type)
        return run(files.table_config, files.schema, files.segments, query_log, out, gc_logs=gc_logs or (),
                   options=options, overwrite=overwrite, backtest=backtest, fetched=staging)


def fetch_controller(url: str, table: str, out: str | Path, *, table_type: str | None = None) -> ControllerFiles:
    """Fetch ``table``'s config, schema and segment metadata from the Pinot controller at ``url`` into ``out``.

    Writes ``table_config.json`` (``GET /tables/{table}``), ``schema.json`` (``GET /schemas/{schema}``),
    ``segments.json`` (``GET /segments/{table}/metadata``, or the controller's ZooKeeper records when the servers'
    admin API does not answer it) unchanged, and ``controller.json`` (what was read from where): the three files
    :func:`calibrate` reads (``docs/calibrate.md``).
    """
    from workbench.calibrate.controller import fetch_controller as fetch

    return fetch(url, table, out, table_type=table_type)


def scale_out(
    scenario: Scenario | str | Path | Mapping[str, Any], servers: int, *, out: str | Path | None = None,
    seed: int | None = None, data: str | Path | None = None, minimize_data_movement: bool | None = None,
    include_consuming: bool | None = None,
) -> ScaleOut:
    """The scenario's cluster grown (or shrunk) to ``servers``: Pinot's rebalance, what moves, p99 before
    and after (:func:`workbench.studies.scale_out.scale_out`). With ``out``, also a JSON document there:
    the per-server moves, the rebalanced ideal state and both summaries."""
    from workbench.studies.scale_out import scale_out as run

    check_seed(seed)
    sc = resolve(scenario, None, None)
    if out is not None:
        check_output(out, kind="file")
    result = run(sc, servers, seed=seed, data=Path(data) if data is not None else None,
                 minimize_data_movement=minimize_data_movement, include_consuming=include_consuming)
    if out is not None:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(Path(out), {
            "servers_before": result.servers_before, "servers_after": result.servers_after,
            "minimize_data_movement": result.plan.minimize_data_movement,
            "segments_moved": result.plan.segments_moved, "bytes_moved": result.plan.bytes_moved,
            "moved_share": result.moved_share, "moves": result.plan.table_rows(),
            "ideal_state": {k: dict(v) for k, v in result.plan.assignment.items()},
            "before": result.before.to_json(), "after": result.after.to_json()})
    return result


def upsert_question(scenario: Scenario | str | Path | Mapping[str, Any],
                    question: UpsertQuestion | Mapping[str, Any], *,
                    servers: Sequence[int], heaps: Sequence[str] = (), qps: float | None = None,
                    p99_ms: float | None = None, seed: int | None = None, duration_s: float | None = None,
                    out: str | Path | None = None, run: bool = True) -> UpsertAnswer:
    """The upsert question in one step: keys per server from the table's partitions, replication and Pinot's
    assignment, the upsert heap per server, and the fewest servers (then smallest heap) whose simulated p99
    meets the SLO (:func:`workbench.studies.upsert_question.answer_upsert_question`). With ``out``, also
    ``upsert.json`` there, and (for a scenario file) ``sweep.json``: the candidates as a sweep for
    ``workbench sweep`` and the sizing report. ``question`` may be given as its fields (``{"keys": 200e6,
    "ttl_s": 86400, ...}``)."""
    from workbench.studies.upsert_question import UpsertQuestion, answer_upsert_question

    if not isinstance(question, UpsertQuestion):
        unknown = sorted(set(question) - set(UpsertQuestion.__dataclass_fields__))
        if unknown:
            known = sorted(UpsertQuestion.__dataclass_fields__)
            raise InputError("question", f"unknown field(s) {unknown}; known: {known}")
        question = UpsertQuestion(**question)

    check_seed(seed)
    sc = resolve(scenario, None, None)
    if out is not None:
        check_output(out, overwrite=True)
    answer = answer_upsert_question(sc, question, servers=servers, heaps=heaps, qps=qps, p99_ms=p99_ms, seed=seed,
                                    duration_s=duration_s, run=run)
    if out is not None:
        from workbench.studies.upsert_question import upsert_sweep

        Path(out).mkdir(parents=True, exist_ok=True)
        write_json_atomic(Path(out) / "upsert.json", answer.to_json())
        if isinstance(scenario, str | Path) and (answer.table["live_bytes"] < answer.table["heap_bytes"]).any():
            sweep = upsert_sweep(answer, str(Path(scenario).resolve()))
            write_json_atomic(Path(out) / "sweep.json", sweep)
    return answer


def table_added(scenario: Scenario | str | Path | Mapping[str, Any], table: str, *,
                seed: int | None = None) -> pd.DataFrame:
    """What adding ``table`` to a ``tables:`` scenario does to every other table: its p99 (and SLO verdict,
    and its tenant's utilisation) without and with it, on common random numbers
    (:func:`workbench.studies.tenant.table_added`)."""
    from workbench.studies.tenant import table_added as run

    check_seed(seed)
    return run(resolve(scenario, None, None), table, seed=seed)


def profile_note(scenario: Scenario | Mapping[str, Any], base_dir: str | Path = ".") -> str:
    """What a single run of a scenario with a day profile (``workload.profile``) is, in one sentence: the
    rate as written, the profile's peak, and the verbs that run the day or size for its worst hour
    (``""`` without a profile). ``scenario`` may be a run's recorded scenario (``summary.json``)."""
    from workbench.scenario import recorded_scenario
    from workbench.scenario.day_load import run_note

    sc = scenario if isinstance(scenario, Scenario) else recorded_scenario(scenario, base_dir=Path(base_dir))
    return run_note(sc)


def day(scenario: Scenario | str | Path | Mapping[str, Any], out: str | Path, *, seed: int | None = None,
        every_step: bool = False) -> Day:
    """The steps of the scenario's ``workload.profile`` that decide its verdict, simulated on one seed into
    ``out`` (``day.json`` and a run directory per rate; :func:`workbench.studies.day.simulate_day`).
    ``every_step`` runs every distinct rate of the day, not only those the rule needs."""
    from workbench.studies.day import simulate_day

    check_seed(seed)
    return simulate_day(scenario, out, seed=seed, every_step=every_step)


def verdict(directory: str | Path, out: str | Path, *, growth: float = 0.5, measured: bool = False,
            rate: float | None = None, p99_ms: float | None = None, survive: str | None = None) -> Verdict:
    """UNDER, OVER or RIGHT-sized: today's cluster (a calibrated directory, or with ``measured`` a `workbench
    measure` directory, calibrated first into ``out/calibrated``) at today's peak and at the peak grown by
    ``growth``, with the smallest change that fixes it, what Pinot moves, the money and why
    (:mod:`workbench.studies.verdict`); writes ``out/verdict.json``.

    ``p99_ms`` and ``survive`` set ``slo.p99_ms`` and ``slo.survive`` (a calibrated scenario has no SLO);
    ``rate`` picks the measured rate to calibrate from.
    """
    from workbench.studies.verdict import judge

    root = Path(directory)
    if measured:
        calibrated = Path(out) / "calibrated"
        calibrate(out=calibrated, measured=root, rate=rate, backtest_queries=0, overwrite=True)
        root = calibrated
    elif rate is not None:
        raise InputError("--rate", "picks a rate of a `workbench measure` directory: give --measured with it")
    path = root / "scenario.yaml"
    if not path.is_file():
        raise InputError(str(root), "is not a calibrated directory (no scenario.yaml): run `workbench calibrate` "
                                    "first, or give --measured for a `workbench measure` directory")
    overrides: dict[str, Any] = {}
    if p99_ms is not None:
        overrides["slo.p99_ms"] = p99_ms
    if survive is not None:
        overrides["slo.survive"] = survive
    sc = load_scenario(path, overrides=overrides)
    return judge(sc, out, growth=growth, source=str(directory))


def agree(
    scenario: Scenario | str | Path | Mapping[str, Any], out: str | Path, *, data: str | Path | None = None,
    queries: int | None = None, overwrite: bool = False,
) -> Agreement:
    """The scenario's table, rows and first ``queries`` queries checked against Apache Pinot's own code
    (:func:`workbench.groundtruth.scenario.agree`): ``out/agreement.json`` lists every disagreement."""
    from workbench.groundtruth.scenario import DEFAULT_QUERIES
    from workbench.groundtruth.scenario import agree as run
    from workbench.sim.run import workload_dir

    sc = resolve(scenario, None, None)
    directory = workload_dir(sc, Path(data) if data is not None else None)
    if directory is None:
        raise InputError("workload.data", "agree checks the scenario's own segments and queries: generate them "
                                          "(`workbench generate`) and set workload.data, or pass --data DIR")
    return run(sc, out, data=directory, queries=DEFAULT_QUERIES if queries is None else queries,
               overwrite=overwrite)


def measure(
    scenario: Scenario | str | Path | Mapping[str, Any], out: str | Path, *, rates: Sequence[float] | None = None,
    data: str | Path | None = None, queries: int | None = None, warmup: int | None = None, seed: int | None = None,
    overwrite: bool = False, progress: Callable[[float, Mapping[str, Any]], None] | None = None,
    slow: Mapping[str, float] | None = None, cluster: str = "helix", replay: bool = False,
    duration_s: float | None = None, jit_settle_s: float = 0.0,
) -> dict[str, Any]:
    """The scenario's table served by Apache Pinot at each open-loop rate
    (:func:`workbench.groundtruth.measure.measure`). ``cluster="helix"`` (the default) starts a whole cluster:
    ZooKeeper, Pinot's controller (which assigns the uploaded segments), Pinot's broker (queried over its HTTP API)
    and one server JVM per scenario server; ``"processes"`` runs the servers with the broker's scatter-gather inside
    the load generator. ``out`` gets, per rate, the broker query log, server query and GC logs, per-query records and
    a summary with the p50/p90/p99/p99.9 client latency and broker ``timeMs``. For a user with no cluster yet: the
    broker log is what ``calibrate`` reads (``docs/validation.md``). ``slow`` (``{"Server_1": 4.0}``) limits those
    servers' JVMs to ``1/factor`` of a core from the end of the warm-up, the real counterpart of
    ``cluster.failures.slow`` (root and a cgroup v1 cpu controller needed). ``replay=True`` sends the workload's
    queries at their own arrival times instead of Poisson arrivals at ``rates``; ``duration_s`` ends each run's
    arrivals after that many seconds. ``jit_settle_s`` lets each warm-up go on up to that many seconds more until the
    servers' JIT compilers are quiet, so the measured run is a running server's (``docs/validation.md``)."""
    from workbench.groundtruth.measure import DEFAULT_QUERIES, DEFAULT_WARMUP
    from workbench.groundtruth.measure import measure as run
    from workbench.sim.run import workload_dir

    check_seed(seed)
    sc = resolve(scenario, None, None)
    directory = workload_dir(sc, Path(data) if data is not None else None)
    if directory is None:
        raise InputError("workload.data", "measure serves the scenario's own segments and queries: generate them "
                                          "(`workbench generate`) and set workload.data, or pass --data DIR")
    # no rate given: 10 queries/s, or none for a replay (a rate given with replay is refused by name)
    chosen = list(rates) if rates is not None else ([] if replay else [10.0])
    return run(sc, out, data=directory, rates=chosen,
               queries=DEFAULT_QUERIES if queries is None else queries,
               warmup=DEFAULT_WARMUP if warmup is None else warmup, seed=0 if seed is None else seed,
               overwrite=overwrite, progress=progress, slow=slow, cluster=cluster, replay=replay,
               duration_s=duration_s, jit_settle_s=jit_settle_s)
