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

__all__ = ["atomic_dir", "atomic_file", "write_json_atomic"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def atomic_file(path: str | Path) -> Iterator[Path]:
    """Yield a temporary sibling path; when the block succeeds it replaces ``path`` (else it is removed).

    The file gets the permissions a plain ``open()`` would give it (``mkstemp`` makes it private).
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON to ``path`` through a temporary file in the same directory, then rename."""
    with atomic_file(path) as tmp:
        tmp.write_text(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")


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
