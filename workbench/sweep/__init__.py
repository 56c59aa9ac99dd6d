"""Parameter sweeps: a base scenario, a grid or list of overrides, one run directory per point.

Sweep file (paths relative to it)::

    base: ../scenarios/default.yaml   # the scenario every point overrides
    grid:                             # every combination (or `points:`, a list of override mappings)
      cluster.servers: [6, 12]
      workload.arrival.qps: [50, 100]
    seed: 7                           # optional: one seed for all points (common random numbers)
    parallel: 2                       # optional: local worker processes (default: one per core)
    notebook: ../notebooks/point.ipynb  # optional: run each point through papermill
    spark: {master: spark://host:7077}  # optional: run the points as Spark tasks
    report: {prices: prices.yaml}       # optional: the sizing report's options (workbench.report.options)

A sweep is a pipeline of files. Each point writes ``OUT/point-NNN/`` (Parquet records,
``summary.json`` with its overrides and seed, ``notebook.ipynb`` when a notebook ran it, and
``error.txt`` when it failed); ``OUT/sweep.json`` lists the points and fingerprints the resolved base
scenario; then ``OUT/combined.parquet`` holds one row per point and ``OUT/failures.json`` the points
that failed twice. A base scenario with a day profile (``workload.profile``) is sized for its worst hour:
every point runs at the profile's peak (:func:`simulate_point`), and ``sweep.json`` ``load`` records the
hour and factor. Points with a ``summary.json`` are skipped, so an interrupted sweep resumes where it
stopped; resuming after the base scenario changed is an error (``restart=True`` starts over), and
staging left by killed runs is removed (:mod:`.resume`).

Scripts that call :func:`run_sweep` with ``parallel > 1`` must guard their entry point with
``if __name__ == "__main__":``: worker processes are spawned, and a spawned worker imports the
script that started it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from workbench.io import write_json_atomic
from workbench.scenario.day_load import load_record
from workbench.sweep.combine import write_combined
from workbench.sweep.point import load_done, simulate_point
from workbench.sweep.resume import MANIFEST_FILE, prepare_output
from workbench.sweep.runner import LocalRunner, Runner, default_parallel
from workbench.sweep.spec import SweepError, SweepSpec, expand_points, load_sweep, parse_sweep
from workbench.sweep.task import PointOutcome, PointTask

if TYPE_CHECKING:
    from tqdm import tqdm

__all__ = [
    "SweepError",
    "SweepSpec",
    "expand_points",
    "failed_points",
    "load_sweep",
    "make_runner",
    "make_tasks",
    "parse_sweep",
    "run_sweep",
    "simulate_point",
]


def run_sweep(
    sweep: str | Path | SweepSpec,
    out: str | Path,
    *,
    parallel: int | None = None,
    master: str | None = None,
    retries: int = 1,
    progress: bool = False,
    restart: bool = False,
    studies: bool = False,
) -> pd.DataFrame:
    """Run (or resume) a sweep and return its combined table, also written to ``combined.parquet``.

    Parameters
    ----------
    sweep
        Sweep file, or a spec from :func:`load_sweep`.
    out
        Output directory; a rerun with the same sweep skips the points already done.
    parallel
        Local worker processes (default: the sweep's ``parallel:``, else one per core). Results do
        not depend on it. Ignored when the points run on Spark.
    master
        Run the points as Spark tasks on this master (default: the sweep's ``spark.master``; neither
        means a local process pool). ``out`` must be on a filesystem the executors share.
    retries
        Further attempts at a failed point; a point still failing after them is reported in the
        table (``status="failed"``, ``error``) and in ``failures.json``, never dropped.
    progress
        Show a progress bar of finished attempts on stderr.
    restart
        Remove what an earlier run wrote into ``out`` and start over (needed when the base scenario
        changed since; resuming then is an error).
    studies
        Then run the sizing report's studies (:func:`workbench.studies.sizing.run_sizing_studies`: the
        what-ifs, headroom and rebalance of the recommendation) into ``out/whatif``, so that the report
        only reads files. ``workbench sweep`` does; ``workbench studies`` runs them on their own.

    Returns
    -------
    pandas.DataFrame
        One row per point: ``point``, ``status``, ``error``, ``seed``, ``param.<key>`` per override
        and the flattened summary (``latency_ms.p99.value``, ``throughput_qps``...).
    """
    if retries < 0:
        raise SweepError("retries", f"must be 0 or more, got {retries}")
    if parallel is not None and (isinstance(parallel, bool) or parallel < 1):
        raise SweepError("parallel", f"must be a positive integer, got {parallel!r}")
    spec = sweep if isinstance(sweep, SweepSpec) else load_sweep(sweep)
    out_dir = Path(out).resolve()  # absolute: workers and executors do not share our cwd
    digest, resolved = prepare_output(out_dir, spec.base, restart=restart)
    tasks = make_tasks(spec, out_dir)
    outcomes: dict[str, PointOutcome] = {}
    for task in tasks:
        if (done := load_done(task)) is not None:
            outcomes[task.point_id] = done
    write_json_atomic(out_dir / MANIFEST_FILE, {**_manifest(spec), "fingerprint": digest, "base_resolved": resolved})
    pending = [t for t in tasks if t.point_id not in outcomes]
    if pending:
        outcomes.update(_run_pending(pending, _runner(spec, parallel, master), retries, progress, len(tasks)))
    combined = write_combined(out_dir, spec.points, outcomes)
    if studies and (combined["status"] == "ok").any():
        from workbench.studies.sizing import run_sizing_studies

        run_sizing_studies(out_dir)
    return combined


def failed_points(combined: pd.DataFrame) -> pd.DataFrame:
    """The rows of a combined table whose point failed (``point``, ``error`` and the parameters)."""
    failed = combined[combined["status"] == "failed"]
    keep = ["point", "error", *[c for c in combined.columns if c.startswith("param.")]]
    return failed[keep]


def make_tasks(spec: SweepSpec, out_dir: Path) -> list[PointTask]:
    """One self-contained task per point, writing under ``out_dir``, carrying the point's validated scenario."""
    base = spec.base.to_dict()
    return [
        PointTask(
            point_id=p.point_id, overrides=p.overrides, seed=p.seed, base=base,
            base_dir=str(spec.base.base_dir.resolve()), out_dir=str(out_dir / p.point_id),
            scenario_path=str(spec.base_path) if spec.base_path is not None else None,
            notebook=str(spec.notebook) if spec.notebook is not None else None, scenario=p.scenario,
        )
        for p in spec.points
    ]


def _runner(spec: SweepSpec, parallel: int | None, master: str | None) -> Runner:
    return make_runner(parallel or spec.parallel, master or spec.spark_master)


def make_runner(parallel: int | None = None, master: str | None = None) -> Runner:
    """Where points run: Spark tasks on ``master`` when one is given, else a local pool of ``parallel``
    workers (default one per core). The caller closes it; it stays open across batches."""
    if master:
        from workbench.sweep.spark_runner import SparkRunner

        return SparkRunner(master)
    workers = parallel or default_parallel()
    if workers < 1:
        raise SweepError("parallel", f"must be a positive integer, got {workers}")
    return LocalRunner(workers)


def _run_pending(
    pending: Sequence[PointTask], runner: Runner, retries: int, progress: bool, total: int,
) -> dict[str, PointOutcome]:
    """Attempt every pending point, then retry the failed ones up to ``retries`` more times."""
    from tqdm import tqdm

    final: dict[str, PointOutcome] = {}
    todo = list(pending)
    with tqdm(total=total, initial=total - len(pending), desc="sweep points", unit="point",
              disable=not progress) as bar:
        try:
            for attempt in range(1, retries + 2):
                outcomes = runner.run(todo, attempt, bar)
                final.update({o.point_id: o for o in outcomes})
                todo = [t for t in todo if not final[t.point_id].ok]
                if not todo or attempt > retries:
                    break
                _announce_retry(bar, len(todo), attempt + 1)
        finally:
            runner.close()
    return final


def _announce_retry(bar: tqdm[Any], n: int, attempt: int) -> None:
    """Grow the bar by the points about to be retried, so it counts attempts, not points."""
    bar.total = (bar.total or 0) + n
    bar.set_postfix_str(f"retrying {n} failed (attempt {attempt})")


def _manifest(spec: SweepSpec) -> dict[str, Any]:
    """``sweep.json``: what this output directory is a sweep of, for the report and for people."""
    return {
        "name": spec.name,
        "base": str(spec.base_path) if spec.base_path is not None else spec.base.to_dict(),
        "notebook": str(spec.notebook) if spec.notebook is not None else None,
        "points": [{"point": p.point_id, "overrides": p.overrides, "seed": p.seed} for p in spec.points],
        "report": spec.report.to_json(),
        "load": load_record(spec.base),
    }
