"""Processes as /proc shows them, for tests that check what a command left running (no extra dependency)."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType


def proc_stats() -> Iterator[tuple[int, str, int, int]]:
    """``(pid, state, parent pid, process group)`` of every process that exists while it is read."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            yield int(entry.name), fields[0], int(fields[1]), int(fields[2])


def cmdline(pid: int) -> bytes:
    """The command line ``pid`` was started with (NUL-separated), or nothing once it has gone."""
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes()
    except OSError:
        return b""


def descendants(root: int) -> set[int]:
    """Live (non-zombie) processes under ``root``: what a test started, not what other sessions on the machine run
    at the same time (they may start Pinot's JVMs too)."""
    parent = {pid: ppid for pid, state, ppid, _ in proc_stats() if state != "Z"}
    out = set()
    for pid in parent:
        p = parent.get(pid)
        while p is not None and p > 1:
            if p == root:
                out.add(pid)
                break
            p = parent.get(p)
    return out


@contextmanager
def raise_after(seconds: int, error: BaseException) -> Iterator[None]:
    """Within the block, ``error`` is raised after ``seconds`` (SIGALRM); the alarm and the previous handler are
    restored however the block ends."""
    def expire(signum: int, frame: FrameType | None) -> None:
        raise error

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def ctrl_c_after(seconds: int) -> contextlib.AbstractContextManager[None]:
    """Within the block, ``KeyboardInterrupt`` is raised after ``seconds``, as Ctrl-C would raise it."""
    return raise_after(seconds, KeyboardInterrupt())
