"""What-if runs of a configuration: each one change to the point's scenario, run on the point's seed.

The report defines the what-ifs and reads their runs (:mod:`workbench.report.whatif`); this study runs
them, each through the one run verb (:func:`workbench.runs.run_scenario`) into a run directory
``SWEEP/whatif/POINT/NAME/``. A run already there with the same seed and change is reused, so running
the studies again costs nothing; delete the directory to rerun it.
"""

from __future__ import annotations

from pathlib import Path

from workbench.report.whatif import StudyMissing, WhatIf, WhatIfRun, read_whatif
from workbench.runs import run_scenario
from workbench.scenario import Scenario

__all__ = ["run_whatif"]


def run_whatif(sc: Scenario, what: WhatIf, out_dir: Path, seed: int) -> WhatIfRun:
    """Run one what-if into the run directory ``out_dir`` (reused when already there with this seed and
    change); returns its run (a :data:`~workbench.report.whatif.Fetch`)."""
    try:
        return read_whatif(sc, what, out_dir, seed)
    except StudyMissing:
        pass
    run_scenario(sc, out_dir, overrides=what.overrides, seed=seed, data=what.data, ideal_state=what.ideal_state,
                 overwrite=True)
    return read_whatif(sc, what, out_dir, seed)
