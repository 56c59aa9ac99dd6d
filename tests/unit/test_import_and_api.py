"""Importing workbench starts nothing, and the public API is the curated, documented list."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import workbench

ROOT = Path(__file__).resolve().parents[2]


def test_import_starts_nothing() -> None:
    code = (
        "import logging, sys, threading, workbench\n"
        "heavy = [m for m in ('pyspark', 'py4j', 'pandas', 'simpy', 'matplotlib') if m in sys.modules]\n"
        "print(heavy, logging.getLogger().handlers, threading.active_count())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[] [] 1"


def test_public_api_matches_docs() -> None:
    documented = re.findall(r"^- `([A-Za-z_]+)`", (ROOT / "docs" / "api.md").read_text(), flags=re.M)
    assert sorted(documented) == sorted(workbench.__all__)
    for name in workbench.__all__:
        assert getattr(workbench, name) is not None


def test_simulate_names_a_negative_seed() -> None:
    """``workbench.simulate(sc, seed=-1)`` names the argument, as the run verb does, not numpy's bare message."""
    import pytest

    from workbench.errors import InputError

    sc = workbench.load_scenario({"workload": {"synthetic": {"segments_per_server": 1, "docs_per_segment": 10}},
                                  "simulation": {"duration_s": 1, "warmup_s": 0.1, "replications": 1}})
    for bad in (-1, 1.5, True):
        with pytest.raises(InputError, match=r"^seed: must be a non-negative integer .*got " + re.escape(repr(bad))):
            workbench.simulate(sc, seed=bad)  # type: ignore[arg-type]
