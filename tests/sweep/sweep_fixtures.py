"""Paths and helpers the sweep tests share (imported by name, like tests/workload/importers/importer_fixtures)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

FIXTURES = Path(__file__).resolve().parent / "fixtures"
#: A scenario whose points take a fraction of a second.
TINY = FIXTURES / "tiny.yaml"


def write_sweep(path: Path, body: str, base: Path = TINY) -> Path:
    """A sweep file at ``path`` over ``base`` (absolute, so the file can live anywhere)."""
    path.write_text(f"base: {base}\n{body}")
    return path


def read_combined(out: Path) -> pd.DataFrame:
    """The combined table a sweep wrote, as a reader of the files would see it."""
    return pd.read_parquet(out / "combined.parquet")
