"""What-if runs of a configuration: each one change to the point's scenario, run on the point's seed.

The report defines the what-ifs and reads their runs (:mod:`workbench.report.whatif`); this study runs
them, each through the one run verb (:func:`workbench.runs.run_scenario`) into a run directory
``SWEEP/whatif/POINT/NAME/``. A run already there with the same seed and change is reused, so running
the studies again costs nothing; delete the directory to rerun it.
"""

from __future__ import annotations

from pathlib import Path

from workbench.report.data import workload_of
from workbench.report.whatif import StudyMissing, WhatIf, WhatIfRun, read_whatif, tenant_load_data
from workbench.runs import run_scenario
from workbench.scenario import Scenario
from workbench.workload.directory import WorkloadDir
from workbench.workload.replay import scale_query_log

__all__ = ["faster_replay", "run_whatif", "scale_query_log"]


def faster_replay(sc: Scenario, what: WhatIf) -> None:
    """Write the workload a faster-replay what-if reads (``what.data``), once: the scenario's segments
    and its query log :func:`scale_query_log`-ed by ``what.load`` over the simulated horizon; for a tenant,
    each replaying table's, where the what-if's overrides point it."""
    for table, path in tenant_load_data(sc, what):  # a tenant's: each replaying table's own log
        _write_faster(workload_of(table), WorkloadDir(path), what.load, sc.simulation.duration_s)
    _write_faster(workload_of(sc) if not sc.tables else None,
                  WorkloadDir(what.data) if what.data is not None else None, what.load, sc.simulation.duration_s)


def _write_faster(source: WorkloadDir | None, out: WorkloadDir | None, factor: float, span_s: float) -> None:
    """``source``'s segments and its query log replayed ``factor`` times faster into ``out``, once."""
    if out is None or source is None or out.has_queries():
        return
    out.with_queries(source, scale_query_log(source.queries(), factor, span_s))


def run_whatif(sc: Scenario, what: WhatIf, out_dir: Path, seed: int) -> WhatIfRun:
    """Run one what-if into the run directory ``out_dir`` (reused when already there with this seed and
    change); returns its run (a :data:`~workbench.report.whatif.Fetch`)."""
    try:
        return read_whatif(sc, what, out_dir, seed)
    except StudyMissing:
        pass
    faster_replay(sc, what)
    run_scenario(sc, out_dir, overrides=what.overrides, seed=seed, data=what.data, ideal_state=what.ideal_state,
                 overwrite=True)
    return read_whatif(sc, what, out_dir, seed)
