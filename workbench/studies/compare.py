"""Compare configurations side by side: run variants of a scenario and tabulate their summaries.

Each variant runs through the one run verb (:func:`workbench.runs.run_scenario`) on the same seed
(common random numbers, so the differences are the configurations'); the table is
:func:`workbench.analysis.compare.summaries_table`'s, with the columns of a sweep's ``combined.parquet``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.analysis.compare import summaries_table
from workbench.io.summary import Summary
from workbench.runs import run_scenario
from workbench.scenario import Scenario

__all__ = ["compare"]


def compare(base: Scenario, variants: Mapping[str, Mapping[str, Any]], seed: int | None = None, *,
            out: str | Path | None = None) -> tuple[pd.DataFrame, dict[str, Summary]]:
    """Run ``base`` with each variant's dotted-key overrides, on common random numbers (same seed).

    Returns the summary table and each variant's summary by label. With ``out``, each variant's run
    directory is written to ``out/LABEL`` (for plots of its records, or ``workbench report``).
    """
    summaries = {}
    for label, overrides in variants.items():
        target = Path(out) / label if out is not None else None
        summaries[label] = run_scenario(base, target, overrides=overrides, seed=seed, overwrite=True).summary
    return summaries_table(summaries), summaries
