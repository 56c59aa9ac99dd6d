"""The failure cases of a sweep's configurations, run: resilience as part of the SLO.

The report defines the failure cases and reads their runs (:mod:`workbench.report.survival`); this
study fills the report's two hooks by computing instead of reading: :func:`plan_after_loss` (what Pinot
does about a server lost for good: rebalance onto the servers left, or, where the table cannot be placed
on them, a replacement server) and :func:`run_failure_case` (one run, on the rebalanced ideal state when
the case is the state after the rebalance). Runs and plans already on disk are reused.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from workbench import defaults as D
from workbench.errors import InputError
from workbench.io import write_json_atomic
from workbench.report.data import layout_of
from workbench.report.survival import AfterLoss, after_loss_path, read_after_loss
from workbench.report.whatif import StudyMissing, WhatIf, WhatIfRun, first_group, read_whatif
from workbench.scenario import Scenario
from workbench.sim.layout import build_layout
from workbench.sim.run import check_run, workload_dir
from workbench.studies.scale_out import rebalance_layout, segment_sizes
from workbench.studies.whatif import run_whatif

__all__ = ["plan_after_loss", "run_failure_case"]


def _lost_bytes(sc: Scenario) -> int:
    """Bytes of the segment replicas on the server the ``server-down`` case takes down: of every table on it, for a
    tenant of several."""
    lost = first_group(sc)[0] if layout_of(sc)[1] else "Server_0"
    total = 0
    for view in sc.table_scenarios:
        directory = workload_dir(view, None)
        layout = build_layout(view, directory)
        sizes = segment_sizes(layout, directory)
        total += sum(sizes[n] for n in layout.segments if lost in layout.ideal_state[n])
    return total


def _first_line(exc: Exception) -> str:
    """The error's first line from its last key on (``numInstancesPerReplicaGroup: not enough ...``)."""
    line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    where, sep, what = line.partition(": ")
    return f"{where.rsplit('.', 1)[-1]}: {what}" if sep else line


def plan_after_loss(sc: Scenario, scratch: Path) -> AfterLoss:
    """Pinot's answer to losing one of ``sc``'s servers for good, written to ``after-loss.json`` under
    ``scratch`` (a :data:`~workbench.report.survival.Loss`): the rebalance onto the servers left when
    Pinot can place the table there (every check a run makes), else a replacement server."""
    try:
        return read_after_loss(sc, scratch)
    except StudyMissing:
        pass
    n, rate = sc.cluster.servers, float(D.SEGMENT_LOAD_BYTES_PER_S)
    lost = _lost_bytes(sc)  # reads the workload: its errors are the run's, not the placement's
    try:
        check_run(sc.with_overrides({"cluster.servers": n - 1}))
    except InputError as exc:  # Pinot cannot place the table on the servers left
        result = AfterLoss(n, n - 1, False, 0, lost, lost, rate, why_not=_first_line(exc))
    else:
        plan, _ = rebalance_layout(sc, n - 1)
        busiest = max((m.bytes_in for m in plan.moves), default=0)
        result = AfterLoss(n, n - 1, True, plan.segments_moved, plan.bytes_moved, busiest, rate)
    path = after_loss_path(scratch)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, result.to_json())
    return result


def run_failure_case(sc: Scenario, what: WhatIf, out_dir: Path, seed: int) -> WhatIfRun:
    """Run one failure case (a :data:`~workbench.report.whatif.Fetch`); the state after a rebalance runs on
    Pinot's rebalanced ideal state rather than a fresh assignment of the servers left."""
    try:
        return read_whatif(sc, what, out_dir, seed)
    except StudyMissing:
        pass
    if what.rebalance_to is not None and what.ideal_state is None:
        plan, _ = rebalance_layout(sc, what.rebalance_to)
        what = replace(what, ideal_state=plan.assignment)
    return run_whatif(sc, what, out_dir, seed)
