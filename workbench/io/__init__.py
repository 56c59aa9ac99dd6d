"""Atomic file output: nothing half-written is ever left behind."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from workbench.errors import InputError

__all__ = ["atomic_dir", "write_json_atomic"]


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON to ``path`` through a temporary file in the same directory, then rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, sort_keys=True, default=str)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def atomic_dir(target: Path, *, overwrite: bool = False) -> Iterator[Path]:
    """Yield a temporary sibling directory that replaces ``target`` only if the block succeeds.

    An existing ``target`` is an error unless ``overwrite`` is true, and is replaced only after the
    new output is complete.
    """
    target = Path(target)
    if target.exists() and not overwrite:
        raise InputError(str(target), "already exists; pass --overwrite (overwrite=True) to replace it")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        yield tmp
        if target.exists():
            old = target.with_name(f".{target.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            os.replace(target, old)
            os.replace(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
