"""The command line's error boundary: every way a command can end becomes one line and an exit status.

=====  ==========================================================================================
exit   meaning
=====  ==========================================================================================
0      done
2      bad input or an output that cannot be written: the line names the key, line or file and the fix
3      a sweep finished but some points failed (``workbench sweep`` only; see ``failures.json``)
1      the machine ran out of memory, or a bug in the workbench: the line says so and where the
       traceback was saved (``WORKBENCH_DEBUG=1`` re-raises it instead)
130    interrupted (Ctrl-C) or terminated (SIGTERM): the command stops, removes its staging and says
       what was kept
=====  ==========================================================================================

Outputs are written atomically (:mod:`workbench.io`), so an interrupted command leaves its output as
it was; a sweep keeps the points it finished, and rerunning it resumes.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import signal
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from workbench.errors import WorkbenchError

__all__ = ["EXIT_BAD_INPUT", "EXIT_BUG", "EXIT_INTERRUPTED", "Terminated", "guarded", "what_was_kept"]

EXIT_BAD_INPUT = 2
EXIT_BUG = 1
EXIT_INTERRUPTED = 130
_OS_HINTS = {
    errno.ENOSPC: "the disk is full",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "not permitted",
    errno.EDQUOT: "the disk quota is exceeded",
}


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled like Ctrl-C so a killed command still cleans up after itself."""


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise Terminated()


def _sweep_kept(args: argparse.Namespace) -> str:
    out = Path(args.out)
    done = sum(1 for p in out.glob("point-*/summary.json")) if out.is_dir() else 0
    try:
        total = len(json.loads((out / "sweep.json").read_text(encoding="utf-8")).get("points", []))
    except (OSError, ValueError, AttributeError):
        total = 0
    of = f" of {total}" if total else ""
    return (f"kept the {done}{of} points finished in {out}; run the same command again to resume"
            if done else f"no point had finished; {out} holds nothing to keep")


def what_was_kept(args: argparse.Namespace) -> str:
    """What an interrupted command leaves behind, for the one line it ends with."""
    command, out = args.command, getattr(args, "out", None)
    if command == "sweep":
        return _sweep_kept(args)
    if out is None:
        return "nothing was written"
    return f"nothing was written: {out} is as it was before the command"


def _os_text(exc: OSError) -> str:
    hint = _OS_HINTS.get(exc.errno or 0, exc.strerror or str(exc))
    where = exc.filename if exc.filename is not None else ""
    return f"{where}: {hint}" if where else str(hint)


def _save_traceback(exc: BaseException) -> str:
    fd, name = tempfile.mkstemp(prefix="workbench-crash-", suffix=".txt")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write("".join(traceback.format_exception(exc)))
    return name


def _install_sigterm() -> tuple[bool, Any]:
    try:
        return True, signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread (an embedding application): leave signals alone
        return False, None


def _restore_sigterm(installed: tuple[bool, Any]) -> None:
    if installed[0]:
        signal.signal(signal.SIGTERM, installed[1] if installed[1] is not None else signal.SIG_DFL)


def _fail(command: str, message: str, code: int) -> int:
    sys.stderr.write(f"{command}: {message}\n")
    return code


def guarded(args: argparse.Namespace, run: Callable[[], int]) -> int:
    """Run a command and turn whatever ends it into one line on stderr and an exit status."""
    command = f"workbench {args.command}"
    previous = _install_sigterm()
    try:
        return run()
    except WorkbenchError as exc:
        return _fail(command, str(exc), EXIT_BAD_INPUT)
    except KeyboardInterrupt as exc:
        how = "terminated" if isinstance(exc, Terminated) else "interrupted"
        return _fail(command, f"{how}; {what_was_kept(args)}", EXIT_INTERRUPTED)
    except OSError as exc:
        return _fail(command, _os_text(exc), EXIT_BAD_INPUT)
    except MemoryError:
        return _fail(command, "ran out of memory; make the run smaller (fewer segments, queries or replications)",
                     EXIT_BUG)
    except Exception as exc:  # the boundary: anything else is a bug, reported in one line
        if os.environ.get("WORKBENCH_DEBUG"):
            raise
        saved = _save_traceback(exc)
        return _fail(command, f"internal error ({type(exc).__name__}: {str(exc)[:200]}); this is a bug in the "
                              f"workbench, not in your input; the traceback is in {saved}", EXIT_BUG)
    finally:
        _restore_sigterm(previous)
