"""The sizing report's findings, computed once: the answer, its what-ifs, its load and its warnings.

Every page reads one :class:`Findings`, so page 1's summary and the detail pages cannot disagree.

Calibration hook. A sweep whose base scenario was written by ``workbench calibrate`` sits in a
calibrated directory: its ``backtest.json`` (observed against predicted percentiles, with a one-line
``verdict``) is read from beside the base scenario. When the sweep's points carry the calibration's
model interval (``latency_ms.p99.model_low`` and ``model_high`` in ``combined.parquet``, as
``workbench.analysis.stats.with_model_intervals`` writes them, with ``model_uncertainty.draws``), the
report shows it and recommends only configurations that meet the SLO across it. Without either, the
report says the model is not calibrated.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.analysis.readings import compare_intervals
from workbench.io.summary import GC_DELAYED_RATE, P99, P99_HIGH, P99_LOW, P99_MODEL_HIGH, THROUGHPUT
from workbench.io.tables import read_json_file
from workbench.report.assumptions import AssumptionCheck, assumption_checks, ihop_sentence
from workbench.report.data import (
    LoadAnswer,
    SizingData,
    meeting,
    recommend,
    recommend_per_load,
    table_bytes,
    workload_of,
)
from workbench.report.fragility import Context, backtest_fit, warnings_for
from workbench.report.survival import Survival, survival_frame, with_survival
from workbench.report.whatif import (
    STUDIES_COMMAND,
    Headroom,
    StudyMissing,
    headroom,
    movement_path,
    today_row,
    whatif_table,
)
from workbench.scenario.day_load import peak_phrase

__all__ = ["Calibration", "Findings", "LoadFacts", "calibration_of", "candidates", "cheaper_than", "find",
           "layout_frame", "load_facts", "missing_sentence", "routing_sentence", "survive_mode",
           "warnings_for_backtest"]


@dataclass(frozen=True)
class LoadFacts:
    """The load the sizing is for: queries per second, the query mix, the data and its keys.

    ``kinds`` maps a query kind to its share of queries; sizes are bytes; ``None`` is unknown.
    """

    qps: float
    process: str
    kinds: Mapping[str, float] = field(default_factory=dict)
    segments: int | None = None
    rows: int | None = None
    data_bytes: int | None = None
    keys: int | None = None
    partitions: int | None = None
    upsert_keys_per_server: int = 0
    #: ``REALTIME`` or ``OFFLINE`` (only a realtime table has stream partitions).
    table_type: str = ""
    #: The hour of the day profile the sizing ran at (``at the peak hour (hour 15, x3)``,
    #: :func:`~workbench.scenario.day_load.peak_phrase`); ``""`` for a scenario without a profile.
    peak: str = ""


@dataclass(frozen=True)
class Calibration:
    """What the report knows of the model's calibration.

    ``directory`` is the calibrated directory (``None``: not calibrated); ``backtest`` its
    ``backtest.json``; ``has_model_interval`` whether the sweep's points carry model intervals.
    """

    directory: Path | None
    backtest: Mapping[str, Any] | None
    has_model_interval: bool

    @property
    def calibrated(self) -> bool:
        """Whether anything says the model's parameters were fitted to this cluster."""
        return self.directory is not None or self.has_model_interval


@dataclass(frozen=True)
class Findings:
    """Everything the pages print: the recommendation (``best``), the runner-up, the cheapest
    configuration that fails the SLO but costs less than ``best`` (``cheaper``), what-ifs, headroom,
    warnings, the load, the calibration and the routing question's answer."""

    best: pd.Series | None
    runner: pd.Series | None
    cheaper: pd.Series | None
    whatifs: pd.DataFrame | None
    headroom: Headroom | None
    warnings: list[str]
    load: LoadFacts
    calibration: Calibration
    #: The routing seed's question answered at the recommended server count (``None``: not asked).
    routing: str | None = None
    #: Every configuration that meets the SLO with every server up, in its failure case (by point); empty
    #: when the failure cases are not on disk or ``slo.survive`` is ``none``.
    survival: Mapping[str, Survival] = field(default_factory=dict)
    #: ``slo.survive`` of the sweep's points.
    survive: str = "none"
    #: The first configuration in the report's order that meets the SLO with every server up, when it is
    #: not the recommendation (it breaks in its failure case).
    fragile: pd.Series | None = None
    #: One answer per load level, lightest first, when the sweep varies the load (one entry when not):
    #: the load is a grouping, so each level is ranked against itself only.
    per_load: list[LoadAnswer] = field(default_factory=list)
    #: The assumptions varied within their plausible range (:mod:`workbench.report.assumptions`).
    assumptions: list[AssumptionCheck] = field(default_factory=list)
    #: The long-lived heap past G1's IHOP on the recommendation's heap, as page 1 says it (``None``: not).
    ihop: str | None = None


def _keys_per_server(row: pd.Series, sc: Any) -> int:
    """The most upsert keys a server held in the run (from the data, or ``cluster.gc.upsert_keys``)."""
    measured = row.get("heap.upsert_keys_max")
    if measured is not None and measured == measured:
        return int(measured)
    return int(sc.cluster.gc.upsert_keys or 0)


def load_facts(d: SizingData, best: pd.Series | None) -> LoadFacts:
    """The load of the sweep: the recommended (else first) point's throughput, the workload's data."""
    at_load = d.combined[d.combined["at_load"]] if "at_load" in d.combined else d.combined
    row = best if best is not None else at_load.iloc[0]
    sc = d.scenarios[str(row["point"])]
    facts: dict[str, Any] = {"qps": float(row[THROUGHPUT]), "process": sc.workload.arrival.process,
                             "upsert_keys_per_server": _keys_per_server(row, sc), "table_type": sc.table.table_type,
                             "peak": peak_phrase(sc)}
    data = workload_of(d.base_scenario)
    if data is not None and data.has_segments():
        segs = data.segment_columns(["total_docs", "size_bytes", "partition"])
        facts.update(segments=len(segs), rows=int(segs["total_docs"].clip(lower=0).sum()),
                     data_bytes=int(segs["size_bytes"].clip(lower=0).sum()),
                     partitions=int(segs["partition"].nunique()))
    if data is not None and data.has_queries() and sc.workload.arrival.process == "replay":
        kinds = data.queries(["kind"])["kind"]
        facts["kinds"] = {str(k): float(v) for k, v in kinds.value_counts(normalize=True).items()}
    if data is not None and data.has_manifest():
        keys = data.manifest.get("keys")
        facts["keys"] = int(keys) if isinstance(keys, int) else None
    return LoadFacts(**facts)


def calibration_of(d: SizingData) -> Calibration:
    """The calibration behind the sweep: ``backtest.json`` beside the base scenario, model intervals."""
    directory, backtest = None, None
    sc = d.base_scenario
    if sc is not None:
        candidate = sc.base_dir / "backtest.json"
        if candidate.is_file() or (sc.base_dir / "calibration.json").is_file():
            directory = sc.base_dir
        if candidate.is_file():
            backtest = read_json_file(candidate, "calibration back-test")
    column = P99_MODEL_HIGH
    has_model = column in d.combined and bool(d.combined[column].notna().any())
    return Calibration(directory, backtest, has_model)


def candidates(d: SizingData) -> pd.DataFrame:
    """Configurations that meet the SLO with every server up, in the report's order
    (:func:`~workbench.report.data.rank`)."""
    return meeting(d.combined)


def cheaper_than(d: SizingData, best: pd.Series | None) -> pd.Series | None:
    """The most expensive configuration that costs less than ``best`` (what the saving would risk)."""
    if best is None:
        return None
    c = d.combined
    column = next((k for k in ("cluster_cost", "monthly_cost") if k in c and c[k].notna().all()), "cost")
    c = c[c["at_load"]] if "at_load" in c else c
    cheaper = c[c[column] < best[column]].sort_values([column, P99], ascending=[False, True])
    return cheaper.iloc[0] if len(cheaper) else None


def layout_frame(d: SizingData, best: pd.Series | None) -> pd.DataFrame:
    """Rows with the recommendation's cores and heap, one per (servers, layout kind)."""
    c = d.combined
    ref = best if best is not None else c.iloc[0]
    same: pd.DataFrame = c[(c["cores"] == ref["cores"]) & (c["heap_bytes"] == ref["heap_bytes"])].copy()
    return same


def routing_sentence(d: SizingData, best: pd.Series | None) -> str | None:
    """The seed's question at the recommended server count: balanced or replica groups, which wins p99."""
    frame = layout_frame(d, best)
    if frame["layout_kind"].nunique() < 2:
        return None
    ref = best if best is not None else frame.iloc[0]
    at = frame[frame["servers"] == ref["servers"]]
    if at["layout_kind"].nunique() < 2:
        counts = frame.groupby("servers")["layout_kind"].nunique()
        both = counts[counts > 1]
        if both.empty:
            return None
        at = frame[frame["servers"] == both.index[-1]]
    values = {str(r["layout_kind"]): (float(r[P99_LOW]), float(r[P99]),
                                      float(r[P99_HIGH])) for _, r in at.iterrows()}
    reading = compare_intervals(values, "p99")
    servers = int(at["servers"].iloc[0])
    gc = ", ".join(f"{r['layout_kind']} {float(r[GC_DELAYED_RATE]):.1%}" for _, r in at.iterrows())
    fan = ", ".join(f"{r['layout_kind']} {float(r['servers_queried_mean']):.1f}" for _, r in at.iterrows())
    return (f"At {servers} servers: {reading.text} Servers per query: {fan}; queries that met a GC pause: {gc}.")


def missing_sentence(d: SizingData, missing: StudyMissing) -> str:
    """What the report says when the runs it reads are not on disk: which command writes them."""
    return (f"The what-if runs of the recommendation are not on disk ({missing.path} is missing): "
            f"`{STUDIES_COMMAND} {d.sweep_dir}` runs them (`workbench sweep` does after its points). This report "
            "shows the sweep's own configurations only: no what-ifs, headroom, server-loss check or rebalance.")


def _studies(d: SizingData, best: pd.Series, survival: Survival | None) -> tuple[pd.DataFrame, Headroom | None,
                                                                                str | None]:
    """The what-if table (with ``best``'s failure cases) and headroom of ``best``, read from the studies'
    runs (only today's row, and a sentence naming the command, when they are missing)."""
    try:
        whatifs = whatif_table(d, best)
        room = headroom(d, best)
        if not movement_path(d, best).is_file():
            raise StudyMissing(movement_path(d, best))
    except StudyMissing as missing:
        return pd.DataFrame([today_row(best)]), None, missing_sentence(d, missing)
    extra = [r for r in (survival.rows if survival is not None else ()) if r["name"] not in set(whatifs["name"])]
    return pd.concat([whatifs, pd.DataFrame(extra)], ignore_index=True) if extra else whatifs, room, None


def _survival(d: SizingData) -> tuple[dict[str, Survival], str | None]:
    """Every configuration that meets the SLO in its failure case, or a sentence when the runs are missing."""
    try:
        return survival_frame(d, meeting(d.combined, every_load=True)), None
    except StudyMissing as missing:
        return {}, missing_sentence(d, missing)


def survive_mode(d: SizingData) -> str:
    """``slo.survive`` of the sweep (its first point's; a sweep does not vary it)."""
    return next(iter(d.scenarios.values())).slo.survive if d.scenarios else "none"


def _fragile(d: SizingData, best: pd.Series | None, survivals: Mapping[str, Survival]) -> pd.Series | None:
    """The first configuration meeting the SLO with every server up, when it is not ``best``."""
    ordered = meeting(d.combined)
    first = ordered.iloc[0] if len(ordered) else None
    if first is None or not survivals or (best is not None and str(first["point"]) == str(best["point"])):
        return None
    return first


def find(d: SizingData) -> Findings:
    """Compute the findings from the sweep and the runs of its studies (:mod:`workbench.studies.sizing`)."""
    survivals, missing = _survival(d)
    combined = with_survival(d.combined, survivals) if survivals and missing is None else d.combined
    best, runner = recommend(combined)
    cal = calibration_of(d)
    whatifs, room = None, None
    if best is not None:
        whatifs, room, missing_runs = _studies(d, best, survivals.get(str(best["point"])))
        missing = missing or missing_runs
    cheaper = cheaper_than(d, best)
    checks: list[AssumptionCheck] = []
    missing_checks = None
    if best is not None:
        try:
            checks = assumption_checks(d, best, cheaper)
        except StudyMissing as gone:
            missing_checks = missing_sentence(d, gone)
    ctx = Context(d.judging.p99_ms, d.options.utilisation_warning, cal.backtest, combined=d.combined,
                  moving_assumptions=tuple(c.assumption.key for c in checks if c.drives))
    warnings = warnings_for(best, ctx) if best is not None else []
    if missing_checks is not None and missing is None:
        warnings.append(missing_checks)
    if best is None and cal.backtest is not None and (text := warnings_for_backtest(ctx)) is not None:
        warnings.append(text)
    if missing is not None:
        warnings.append(missing)
    if best is not None:
        warnings += _table_fit(best)
    if not d.judging.judged:
        warnings.append("No SLO was set (slo.p99_ms): every configuration counts as meeting it, so the "
                        "recommendation is only the cheapest shape simulated.")
    per_load = recommend_per_load(combined)
    if len(per_load) > 1:
        warnings.append(f"The sweep varies the load ({len(per_load)} levels): each level has its own answer, "
                        f"never the cheapest row across loads; the what-ifs and alternatives are those of the "
                        f"highest, {per_load[-1].qps:,.0f} queries/s.")
    if whatifs is not None:
        failing = whatifs[~whatifs["meets_slo"].astype(bool)]
        if len(failing):
            warnings.append("The SLO breaks under " + ", ".join(str(x) for x in failing["label"]) +
                            ": see what happens when things change.")
    if best is not None and "instance" in best and best["instance"] is None:
        warnings.append("No instance in the price table fits this shape (cores, heap x memory_per_heap): its cost "
                        "in money is unknown; give a price table with larger instances (report.prices).")
    ihop = ihop_sentence(d, best, table_bytes(d.base_scenario)) if best is not None else None
    return Findings(best, runner, cheaper, whatifs, room, warnings, load_facts(d, best), cal,
                    routing_sentence(d, best), survivals, survive_mode(d), _fragile(d, best, survivals), per_load,
                    checks, ihop)


def _table_fit(best: pd.Series) -> list[str]:
    """The recommended shape's table warnings as its run recorded them (``table_fit``: servers holding no data,
    segments far outside Pinot's range), as sentences."""
    out = []
    for col in ("table_fit.why", "table_fit.segments"):
        text = best.get(col)
        if isinstance(text, str) and text:
            out.append(f"{text[0].upper()}{text[1:]}.")
    return out


def warnings_for_backtest(ctx: Context) -> str | None:
    """The back-test warning, which holds whether or not anything is recommended."""
    return backtest_fit(pd.Series(dtype=object), ctx)
