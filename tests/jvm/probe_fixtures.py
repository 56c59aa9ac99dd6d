"""The probe's GC logs (tests/fixtures/gc/) and their run parameters, for the validation tests.

Besides the detailed logs as kept (``-Xlog:gc*`` with debug phases), each can be read in its basic form:
the ``[gc]``-tagged info lines only, which is exactly what ``-Xlog:gc`` writes (the same JVM logs the
same lines under both; ``-Xlog:gc*`` adds the other tags), with ``-Xlog:gc``'s default decorations
(uptime, level, tags).
"""

from __future__ import annotations

import gzip
import json
import re
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd

from workbench.jvm import G1Fit, LiveHeap, fit_g1, observed_live_bytes
from workbench.jvm.moments import Drive, simulate_young
from workbench.jvm.validate import YoungSummary, drive_phase, system_gc
from workbench.pinot.heap import upsert_bytes_per_key
from workbench.workload.importers import read_gc_log

#: The seeds every model prediction of the probe's runs draws with.
SEEDS = tuple(range(200, 232))

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gc"
#: ``[time][uptime][level][tags] message`` as the probe logged it.
_DECORATED = re.compile(r"^\[[^\]]*\]\[(?P<uptime>[^\]]*)\]\[(?P<level>[^\]]*)\]\[(?P<tags>[^\]]*)\] (?P<message>.*)$")
MIB = 1 << 20


@dataclass(frozen=True)
class Run:
    """One probe run: its manifest entry and its log's pause table."""

    name: str
    spec: dict  # type: ignore[type-arg]
    frame: pd.DataFrame

    @property
    def keys(self) -> int:
        return int(self.spec["upsert_keys"])

    @property
    def drive(self) -> pd.DataFrame:
        """The pauses from the System.gc() on (map loaded; updates and queries running)."""
        return drive_phase(self.frame)

    @property
    def heap_bytes(self) -> float:
        return float(self.frame["heap_total_bytes"].max())

    @property
    def allocation_rate(self) -> float:
        return float(self.spec["allocation_mb_per_s"]) * MIB

    @property
    def update_rate(self) -> float:
        return float(self.spec["update_rate"])

    @property
    def live_after_system_gc(self) -> float:
        return float(system_gc(self.frame)["heap_after_bytes"])

    @property
    def system_gc_ms(self) -> float:
        return float(system_gc(self.frame)["duration_ms"])

    @property
    def seconds(self) -> float:
        drive = self.drive
        return float(drive["uptime_s"].max() - drive["uptime_s"].min())

    def young_ms(self) -> np.ndarray:
        drive = self.drive
        return drive[drive["kind"].astype(str) == "young"]["duration_ms"].to_numpy(dtype=float)


@cache
def run(name: str) -> Run:
    """The run whose log is ``<name>.log.gz``."""
    manifest = json.loads((FIXTURES / "manifest.json").read_text())
    spec = next(r for r in manifest["runs"] if r["file"] == f"{name}.log.gz")
    return Run(name, spec, read_gc_log(FIXTURES / spec["file"]).frame)


def live_of(r: Run, drive: pd.DataFrame | None = None) -> LiveHeap:
    """The run's live heap split into its map (the heap model's bytes per key) and the rest.

    ``drive`` is the log's drive phase to read the live heap from (the detailed log's when ``None``).
    """
    per_key = upsert_bytes_per_key(r.spec["primary_key_types"], r.spec["hash_function"], num_keys=r.keys)
    return LiveHeap(observed_live_bytes(r.drive if drive is None else drive) - r.keys * per_key, r.keys, per_key)


@cache
def calibrated(name: str) -> tuple[G1Fit, LiveHeap]:
    """The G1 model fitted to a run's drive phase at its update rate."""
    r = run(name)
    live = live_of(r)
    return fit_g1(r.drive, live, r.update_rate), live


def basic_lines(name: str) -> list[str]:
    """The lines ``-Xlog:gc`` would have written for the run: its ``[gc]`` info lines, decorated as -Xlog:gc does."""
    lines = []
    with gzip.open(FIXTURES / f"{name}.log.gz", "rt", encoding="utf-8") as log:
        for line in log:
            match = _DECORATED.match(line.rstrip("\n"))
            if match and match["level"].strip() == "info" and match["tags"].strip() == "gc":
                lines.append(f"[{match['uptime']}][info][gc] {match['message']}")
    return lines


def read_lines(lines: list[str]) -> pd.DataFrame:
    """The pause table of a log made of ``lines``."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "gc.log"
        path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
        return read_gc_log(path).frame


@cache
def basic_calibrated(name: str) -> tuple[G1Fit, LiveHeap]:
    """The G1 model fitted to the drive phase of the run's basic log at its update rate, and its live heap."""
    r = run(name)
    drive = drive_phase(read_lines(basic_lines(name)))
    live = live_of(r, drive)
    return fit_g1(drive, live, r.update_rate), live


def pooled_observed(names: list[str]) -> YoungSummary:
    """The young pauses of the runs ``names``, pooled, with their combined length."""
    durations = np.concatenate([run(n).young_ms() for n in names])
    return YoungSummary.of(durations, sum(run(n).seconds for n in names))


def pooled_prediction(sources: list[str], target: str, calibrate: Callable[[str], tuple[G1Fit, LiveHeap]] = calibrated,
                      seeds: Sequence[int] = SEEDS) -> tuple[YoungSummary, float]:
    """Young pauses of the models ``calibrate``-d from ``sources`` (a detailed or a basic log each) driven as run
    ``target`` is, its key count in place of theirs, pooled; and their mean full-GC length."""
    t = run(target)
    durations, rates, fulls = [], [], []
    for source in sources:
        fit, live = calibrate(source)
        keys = LiveHeap.for_upsert(live.static_bytes, t.keys)  # change only the key count
        young, rate = simulate_young(fit.params, Drive(t.heap_bytes, keys, t.allocation_rate, t.update_rate,
                                                       t.seconds * 1000.0), seeds)
        durations.append(young)
        rates.append(rate)
        fulls.append(fit.params.full_base_ms + keys.total / (1 << 30) * fit.params.full_ms_per_gb)
    pooled = np.concatenate(durations)
    median, p95 = np.quantile(pooled, [0.5, 0.95])
    return YoungSummary(float(median), float(p95), float(np.mean(rates)), len(pooled)), float(np.mean(fulls))
