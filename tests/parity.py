"""Record-for-record identity of the two engines, for tests that hold the SimPy engine to the fast one.

The SimPy engine is the reference and the compiled engine must give it the same records; the theory
checks (tests/validation/test_queueing_theory.py, test_deadlines.py) run their long horizons on the fast
engine and hold the reference to theory through :func:`same` on the same scenario at a shorter horizon.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from workbench.sim.records import Result


def same(a: Result, b: Result) -> None:
    """Every table of two runs, column by column: floats to 1e-9 relative, the rest exactly."""
    assert a.parameters["engine"] == "simpy" and b.parameters["engine"] == "fast"
    for name, left in a.tables().items():
        right = b.tables()[name]
        assert list(left.columns) == list(right.columns), name
        assert len(left) == len(right), (name, len(left), len(right))
        for column in left.columns:
            x, y = left[column].to_numpy(), right[column].to_numpy()
            if x.dtype.kind == "f" or y.dtype.kind == "f":
                np.testing.assert_allclose(x.astype(float), y.astype(float), rtol=1e-9, atol=1e-9,
                                           err_msg=f"{name}.{column}")
            else:
                assert list(pd.Series(x).astype(str)) == list(pd.Series(y).astype(str)), f"{name}.{column}"


def shortened(scenario: dict[str, Any], share: float, replications: int) -> dict[str, Any]:
    """``scenario`` over ``share`` of its horizon (warm-up in proportion) with ``replications`` replications."""
    sim = dict(scenario["simulation"])
    sim["duration_s"] = sim["duration_s"] * share
    sim["warmup_s"] = sim["warmup_s"] * share
    sim["replications"] = replications
    return {**scenario, "simulation": sim}
