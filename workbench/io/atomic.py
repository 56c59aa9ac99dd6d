"""Atomic file output: nothing half-written is ever left behind, and nothing a killed run left is kept.

Every output is built in a hidden staging sibling (``.NAME.<host>-<pid>.<random>.tmp``) and renamed
over ``NAME`` when complete. A run that is killed (SIGKILL, power loss) cannot remove its staging, so
the name records which process owned it: the next run that writes beside it removes the staging of
owners on this host that are no longer alive (:func:`clean_staging`). An interrupted swap of a
directory (old output moved aside, new one not yet in place) is rolled back the same way.

Written JSON goes through :func:`~workbench.io.redact.redact`, so no credential reaches a file.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from workbench.errors import InputError
from workbench.io.redact import redact

__all__ = ["atomic_dir", "atomic_file", "check_output", "clean_staging", "staged_sibling", "write_json_atomic"]

#: Staging written by the previous layout (``.NAME.<random>.tmp``, no owner) is removed once this old, s.
_UNOWNED_STALE_S = 24 * 3600.0
_STAGING = re.compile(r"^\.(?P<name>.+?)\.(?:(?P<host>[^.]+)-(?P<pid>\d+)\.)?[^.]+\.tmp(?:\.ipynb)?$")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _host() -> str:
    """This machine's name as it appears in staging names (dots and dashes would confuse the parser)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", socket.gethostname()) or "host"


def _owner_prefix(target: Path) -> str:
    return f".{target.name}.{_host()}-{os.getpid()}."


def staged_sibling(target: Path, suffix: str = ".tmp") -> Path:
    """A fresh staging file beside ``target``, named with this process as its owner, for a writer that
    cannot go through :func:`atomic_file` (papermill writes its notebook to a path it is given;
    ``suffix`` ".tmp.ipynb" keeps the extension it expects). :func:`clean_staging` removes it once its
    owner is dead."""
    if suffix not in (".tmp", ".tmp.ipynb"):
        raise ValueError(f"staging names end in .tmp or .tmp.ipynb, got {suffix!r}")
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=_owner_prefix(target), suffix=suffix, dir=target.parent)
    os.close(fd)
    return Path(name)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def _stale(entry: Path, match: re.Match[str]) -> bool:
    if match["pid"] is None:
        try:
            return time.time() - entry.lstat().st_mtime > _UNOWNED_STALE_S
        except OSError:
            return False
    return match["host"] == _host() and int(match["pid"]) != os.getpid() and not _alive(int(match["pid"]))


def _remove(entry: Path) -> None:
    if entry.is_dir() and not entry.is_symlink():
        shutil.rmtree(entry, ignore_errors=True)
    else:
        entry.unlink(missing_ok=True)


def clean_staging(directory: str | Path, name: str | None = None) -> list[Path]:
    """Remove staging left in ``directory`` by killed runs (of output ``name`` only, when given).

    Staging of a live process, or of another host (a shared filesystem), is left alone. Returns what
    was removed.
    """
    root = Path(directory)
    try:
        entries = list(root.iterdir())
    except OSError:
        return []
    removed = []
    for entry in entries:
        match = _STAGING.match(entry.name)
        if match is None or (name is not None and match["name"] != name) or not _stale(entry, match):
            continue
        _remove(entry)
        removed.append(entry)
    return removed


def _nearest_existing(path: Path) -> Path:
    probe = path.absolute()
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return probe


def check_output(path: str | Path, *, overwrite: bool = False, kind: str = "directory",
                 option: str = "--out") -> None:
    """Fail before any work when ``path`` cannot become the output (a ``directory`` or a ``file``).

    Raises
    ------
    InputError
        The path exists and ``overwrite`` is false (directories), is the wrong kind of thing, sits
        under a file, or its nearest existing parent is not a writable directory.
    """
    target = Path(path)
    if target.exists() or target.is_symlink():
        wrong = target.is_dir() if kind == "file" else not target.is_dir()
        if wrong:
            what = "a directory" if target.is_dir() else "a file"
            raise InputError(str(target), f"is {what}, not the {kind} {option} names; choose another {option}")
        if kind == "directory" and not overwrite:
            raise InputError(str(target), "already exists; pass --overwrite (overwrite=True) to replace it")
    parent = _nearest_existing(target.parent)
    if not parent.is_dir():
        raise InputError(str(target), f"cannot be created: {parent} is a file, not a directory")
    try:  # a real probe: permission bits say nothing to root, or about read-only mounts and /proc
        os.rmdir(tempfile.mkdtemp(prefix=_owner_prefix(target), suffix=".tmp", dir=parent))
    except OSError as exc:
        raise InputError(str(target), f"cannot be created: {parent} is not writable ({exc.strerror})") from None


@contextmanager
def atomic_file(path: str | Path) -> Iterator[Path]:
    """Yield a temporary sibling path; when the block succeeds it replaces ``path`` (else it is removed).

    The file gets the permissions a plain ``open()`` would give it (``mkstemp`` makes it private).
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    clean_staging(target.parent, target.name)
    fd, name = tempfile.mkstemp(prefix=_owner_prefix(target), suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON (credentials redacted) to ``path`` through a temporary file in the same directory."""
    with atomic_file(path) as tmp:
        tmp.write_text(json.dumps(redact(data), indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")


def _aside(target: Path) -> Path:
    """Where the previous output waits while the new one is renamed into place."""
    return target.with_name(f".{target.name}.old")


def _recover(target: Path) -> None:
    """Undo what a swap killed half-way left: restore the previous output, or drop its spare copy."""
    old = _aside(target)
    if not old.exists():
        return
    if target.exists():
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(old, target)


@contextmanager
def atomic_dir(target: Path, *, overwrite: bool = False) -> Iterator[Path]:
    """Yield a temporary sibling directory that replaces ``target`` only if the block succeeds.

    An existing ``target`` is an error unless ``overwrite`` is true, and is replaced only after the
    new output is complete. Staging left beside ``target`` by killed runs is removed first.
    """
    target = Path(target)
    _recover(target)
    check_output(target, overwrite=overwrite)
    target.parent.mkdir(parents=True, exist_ok=True)
    clean_staging(target.parent, target.name)
    tmp = Path(tempfile.mkdtemp(prefix=_owner_prefix(target), suffix=".tmp", dir=target.parent))
    try:
        yield tmp
        if target.exists():
            old = _aside(target)
            shutil.rmtree(old, ignore_errors=True)
            os.replace(target, old)
            os.replace(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
