"""Back-test: replay the logged queries through the calibrated model and compare the percentiles.

This module holds the comparison (pure: the log's and the model's records in, a document out); the
replay itself is a study (:func:`workbench.studies.backtest.backtest`), since it runs the model.

The calibrated scenario replays the log's own arrival times and SQL on the imported segments, so its
latency percentiles can be set beside the ones the broker logged. When they agree at p50 and p99 (within
10%), the model has reproduced this workload's latency, queueing included, and its what-ifs can be
trusted near this load; when they do not, the per-kind rows and the fan-out lines say where it differs.

Like with like: the broker logs ``timeMs`` on a millisecond clock (a difference of two millisecond
stamps), so predicted latencies are read on the same clock (``floor(u + latency)`` with ``u`` a uniform
phase) before percentiles are taken; the raw ones are reported too. A long log is back-tested on a
window of its first ``max_queries`` queries (the cluster starts empty, as the model does; the first
``warmup_s`` are left out of both sides).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pandas as pd

from workbench.analysis.stats import percentile_ci
from workbench.calibrate.features import KINDS

__all__ = ["BACKTEST_PERCENTILES", "TOLERANCE", "Backtester", "Window", "backtest_scenario", "backtest_window",
           "compare_backtest", "compare_percentiles", "holdout_backtest", "ms_clock"]

#: Percentiles compared, as (label, quantile).
BACKTEST_PERCENTILES: tuple[tuple[str, float], ...] = (("p50", 50.0), ("p90", 90.0), ("p99", 99.0),
                                                      ("p99.9", 99.9))
#: Relative difference at p50 and p99 under which the back-test is called a match.
TOLERANCE = 0.10


def ms_clock(latency_ms: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Latencies as the broker's millisecond clock reports them (``timeMs``: a difference of two ms stamps, the
    first at a uniform phase within its ms), so a model's latencies compare with a log's like for like.

    >>> ms_clock(np.array([0.25, 2.0, 2.5]), np.random.default_rng(0)).tolist()  # phases 0.64, 0.27, 0.04
    [0.0, 2.0, 2.0]
    """
    phase = rng.random(len(latency_ms))
    out: np.ndarray = np.floor(phase + latency_ms)
    return out


def compare_percentiles(observed: pd.DataFrame, predicted: pd.DataFrame) -> dict[str, Any]:
    """Observed and predicted percentiles of ``latency_ms`` with intervals and the relative difference.

    Both frames have ``replication``, ``arrival_s`` and ``latency_ms``; intervals are the workbench's
    (replications, or batch means over arrival time for the one observed log).
    """
    out: dict[str, Any] = {"queries_observed": len(observed), "queries_predicted": len(predicted)}
    for label, q in BACKTEST_PERCENTILES:
        obs, obs_lo, obs_hi = percentile_ci(observed, q)
        pred, pred_lo, pred_hi = percentile_ci(predicted, q)
        out[label] = {"observed": obs, "observed_ci": [obs_lo, obs_hi], "predicted": pred,
                      "predicted_ci": [pred_lo, pred_hi],
                      "difference_pct": 100.0 * (pred - obs) / obs if obs > 0 else float("nan")}
    return out


def _window(queries: pd.DataFrame, max_queries: int) -> pd.DataFrame:
    window = queries.iloc[:max_queries].copy()
    start = float(window["arrival_s"].iloc[0])
    window["arrival_s"] = window["arrival_s"].to_numpy(dtype=float) - start
    window["query_id"] = np.arange(len(window), dtype=np.int64)
    return window.reset_index(drop=True)


def _with_kinds(records: pd.DataFrame, window: pd.DataFrame) -> pd.DataFrame:
    """Each model record with the kind of the logged query it replays.

    A replayed query's ``query_id`` is its row's position in the log sorted stably by arrival
    (:func:`~workbench.workload.directory.read_replay_queries`), so queries logged in the same
    millisecond keep their own kinds.
    """
    kinds = window.sort_values("arrival_s", kind="stable")["kind_of_query"].to_numpy()
    return records.assign(kind=kinds[records["query_id"].to_numpy(dtype=np.int64)])


def _fan_out(window: pd.DataFrame, records: pd.DataFrame) -> dict[str, Any]:
    """Mean segments and servers per query in the log and in the model (how the routing compares)."""
    def mean(frame: pd.DataFrame, column: str) -> float:
        return float(frame[column].astype("Float64").mean()) if column in frame and len(frame) else float("nan")

    return {"segments_per_query": {"log": mean(window, "num_segments_queried"),
                                   "model": mean(records, "segments_queried")},
            "servers_per_query": {"log": mean(window, "num_servers_queried"),
                                  "model": mean(records, "servers_queried")}}


def _within(overall: Mapping[str, Any]) -> tuple[bool, list[str]]:
    parts, ok = [], True
    for label in ("p50", "p99"):
        diff = overall[label]["difference_pct"]
        within = abs(diff) <= 100 * TOLERANCE
        ok &= within
        parts.append(f"{label} {'within' if within else 'off by'} {diff:+.1f}%")
    return ok, parts


def _verdict(overall: Mapping[str, Any]) -> str:
    ok, parts = _within(overall)
    head = "trust the model at this load" if ok else "do not trust the model here without reading why"
    return f"{head}: predicted {', '.join(parts)} of the log (tolerance {100 * TOLERANCE:g}%)"


def holdout_backtest(fitted: Mapping[str, Any], held_out: Mapping[str, Any], *, share: float, split_s: float,
                     fitted_queries: int, held_out_queries: int) -> dict[str, Any]:
    """One back-test document from the back-tests of the log's fitted part and of its held-out rest.

    The held-out part's comparison takes the top-level keys (``overall``, ``by_kind``, ``fan_out``, ...: what
    readers of ``backtest.json`` judge the model by, now on queries the fit never saw); ``fitted_part`` is the
    fitted part's document; ``holdout`` says where the log was split. The verdict trusts the model only when
    both parts match.

    >>> part = lambda d: {"overall": {"p50": {"difference_pct": d}, "p99": {"difference_pct": d}}, "verdict": ""}
    >>> holdout_backtest(part(2.0), part(-12.0), share=0.3, split_s=70.0, fitted_queries=700,
    ...                  held_out_queries=300)["verdict"][:48]
    'do not trust the model here without reading why:'
    """
    fit_ok, fit_parts = _within(fitted["overall"])
    held_ok, held_parts = _within(held_out["overall"])
    head = "trust the model at this load" if fit_ok and held_ok else "do not trust the model here without reading why"
    verdict = (f"{head}: predicted {', '.join(held_parts)} of the held-out last {share:.0%} of the log, which the "
               f"fit never saw; {', '.join(fit_parts)} of the fitted first {1 - share:.0%} "
               f"(tolerance {100 * TOLERANCE:g}%)")
    return {**held_out, "verdict": verdict, "fitted_part": dict(fitted),
            "holdout": {"share": share, "split_at_s": split_s, "fitted_queries": fitted_queries,
                        "held_out_queries": held_out_queries,
                        "what": "overall, by_kind, fan_out, raw_predicted and window are the held-out part's; "
                                "fitted_part is the same for the part the costs were fitted to"}}


class Backtester(Protocol):
    """What runs a back-test (:func:`workbench.studies.backtest.backtest`): the calibration hands the
    calibrated scenario, the log and a scratch directory to it and writes what it returns as
    ``backtest.json``. A protocol, so that fitting never imports the simulator."""

    def __call__(self, scenario: Mapping[str, Any], base_dir: Path, queries: pd.DataFrame, kinds: Sequence[str],
                 segments: pd.DataFrame, workdir: Path, *, max_queries: int = 20_000, replications: int = 3,
                 seed: int = 0) -> dict[str, Any]:
        """The back-test's document (:func:`compare_backtest`)."""


@dataclass(frozen=True)
class Window:
    """The replayed window of a log: its first queries (``queries``, with ``kind_of_query``, arrival
    times from 0), its span and the warm-up left out of both sides, s."""

    queries: pd.DataFrame
    span_s: float
    tail_s: float
    warmup_s: float


def backtest_window(queries: pd.DataFrame, kinds: Sequence[str], max_queries: int) -> Window:
    """The first ``max_queries`` logged queries with their kinds, and how long the replay must run."""
    window = _window(queries.assign(kind_of_query=list(kinds)), max_queries)
    span = float(window["arrival_s"].iloc[-1])
    tail = max(1.0, 2.0 * float(window["time_ms"].max()) / 1000.0)
    return Window(window, span, tail, min(5.0, 0.05 * span))


def backtest_scenario(scenario: Mapping[str, Any], data: Path, window: Window, replications: int,
                      seed: int) -> dict[str, Any]:
    """The calibrated scenario's data replaying the window's workload directory ``data``, long enough
    for its last query to finish."""
    return {**dict(scenario), "workload": {**dict(scenario["workload"]), "data": str(data.resolve())},
            "simulation": {**dict(scenario.get("simulation", {})), "duration_s": window.span_s + window.tail_s,
                           "warmup_s": window.warmup_s, "replications": replications, "seed": seed}}


def compare_backtest(window: Window, records: pd.DataFrame, *, replications: int, seed: int) -> dict[str, Any]:
    """The back-test's document from the model's query records of the replayed window.

    Returns
    -------
    dict
        ``window`` (queries, seconds, warm-up), ``overall`` and ``by_kind`` percentile comparisons
        (:func:`compare_percentiles`, predicted on the ms clock), ``raw_predicted`` (without the clock),
        ``fan_out`` and a one-line ``verdict``.
    """
    span, warmup = window.span_s, window.warmup_s
    records = records[records["arrival_s"] <= span]
    rng = np.random.default_rng([seed, 3])
    predicted = records.assign(latency_ms=ms_clock(records["latency_ms"].to_numpy(dtype=float), rng))
    logged = window.queries[window.queries["arrival_s"] >= warmup]
    observed = pd.DataFrame({"replication": 0, "arrival_s": logged["arrival_s"].to_numpy(dtype=float),
                             "latency_ms": logged["time_ms"].to_numpy(dtype=float), "kind": logged["kind_of_query"]})
    paired = _with_kinds(predicted, window.queries)
    by_kind = {k: compare_percentiles(observed[observed["kind"] == k], paired[paired["kind"] == k])
               for k in KINDS if (observed["kind"] == k).any()}
    overall = compare_percentiles(observed, predicted)
    return {
        "window": {"queries": len(window.queries), "span_s": span, "warmup_s": warmup, "replications": replications,
                   "seed": seed},
        "overall": overall,
        "by_kind": by_kind,
        "raw_predicted": {label: float(np.percentile(records["latency_ms"], q)) if len(records) else float("nan")
                          for label, q in BACKTEST_PERCENTILES},
        "fan_out": _fan_out(logged, records),
        "verdict": _verdict(overall),
    }
