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
