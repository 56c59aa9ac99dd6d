"""Every malformed input of the corpus ends in one clear error: never a traceback, an acceptance or a hang.

The corpus (``corpus/``, written by ``make_corpus.py``) holds one file or directory per case and
``manifest.yaml`` says how each is fed to the command line and what the one error line must contain:
the key, line or file it names and what is wrong. Each case runs ``workbench.cli.main`` in-process
under a timer; the test fails when the command succeeds, exits with another status, raises, writes a
traceback, prints more than one error line, or takes longer than the guard. Scenario cases run through
``validate``, ``simulate`` and a one-point ``sweep`` over them: the three apply the same checks. A few
cases also run as real ``workbench`` processes, to show the console entry point ends the same way.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from procs import raise_after

from workbench.cli import main

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
ROOT = HERE.parents[1]
SYNTHETIC = ROOT / "scenarios" / "synthetic.yaml"
MANIFEST: list[dict[str, Any]] = yaml.safe_load((CORPUS / "manifest.yaml").read_text())
#: A case that takes longer than this has hung (each fails during validation, in well under a second).
GUARD_S = 30


class CaseTimedOut(BaseException):
    """Raised by the guard's timer; a BaseException so the CLI's boundary cannot turn it into an error line."""


def guard(seconds: int) -> contextlib.AbstractContextManager[None]:
    return raise_after(seconds, CaseTimedOut(f"no answer within {seconds} s"))


def _runs() -> list[Any]:
    runs = []
    for spec in MANIFEST:
        for path in spec.get("paths", ["as-written"]):
            runs.append(pytest.param(spec, path, id=f"{spec['id']}[{path}]"))
    return runs


def _argv(spec: dict[str, Any], path: str, tmp_path: Path) -> list[str]:
    case = CORPUS / spec["path"] if "path" in spec else None
    args: list[str] = list(spec["args"])
    if path == "simulate":
        args = ["simulate", "{case}", "--out", "{out}", "--quiet"]
    elif path == "sweep":
        sweep = tmp_path / "sweep.yaml"
        sweep.write_text(yaml.safe_dump({"base": str(case), "grid": {"simulation.seed": [1]}}))
        args = ["sweep", str(sweep), "--out", "{out}", "--quiet"]
    values = {"case": str(case), "out": str(tmp_path / "out"), "synthetic": str(SYNTHETIC), "corpus": str(CORPUS)}
    return [a.format(**values) for a in args]


def _setup(spec: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "out"
    if spec.get("setup") == "out-file":
        out.write_text("someone's file\n")
    elif spec.get("setup") == "out-dir":
        out.mkdir()


def _run(argv: list[str]) -> tuple[int, str]:
    from io import StringIO

    err = StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(StringIO()), guard(GUARD_S):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's own usage errors exit 2 with one "error:" line
            code = int(exc.code) if isinstance(exc.code, int) else 2
    return code, err.getvalue()


def test_the_corpus_is_large_and_covers_every_input_kind() -> None:
    kinds = {spec["kind"] for spec in MANIFEST}
    assert len(MANIFEST) >= 150
    assert kinds >= {"scenario", "table-config", "schema", "segments", "query-log", "gc-log", "generate", "sweep",
                     "report", "data", "cli"}
    assert all(spec["expect"] for spec in MANIFEST), "every case names what its error must say"


@pytest.mark.parametrize(("spec", "path"), _runs())
def test_malformed_input_gets_one_clear_error(spec: dict[str, Any], path: str, tmp_path: Path) -> None:
    _setup(spec, tmp_path)
    code, err = _run(_argv(spec, path, tmp_path))
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in err and "internal error" not in err, err
    assert code == spec["exit"], f"exit {code} (accepted?); stderr: {err}"
    message = lines[-1] if lines else ""
    assert message.startswith("workbench ") or message.startswith("usage:"), err
    for text in spec["expect"]:
        assert text in message, f"{text!r} not in {message!r}"
    assert not (tmp_path / "out").exists() or spec.get("setup"), "a failed command left an output behind"


SUBPROCESS_CASES = ["scenario/alias-bomb", "query-log/gzip-bomb", "report/summary-corrupt", "cli/seed-negative",
                    "data/segments-corrupt"]


@pytest.mark.parametrize("case_id", SUBPROCESS_CASES)
def test_the_console_command_ends_the_same_way(case_id: str, tmp_path: Path) -> None:
    spec = next(s for s in MANIFEST if s["id"] == case_id)
    argv = _argv(spec, spec.get("paths", ["as-written"])[0], tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "workbench.cli", *argv], capture_output=True, text=True,
                          timeout=120, env=env, cwd=tmp_path)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == spec["exit"]
    assert all(text in done.stderr.strip().splitlines()[-1] for text in spec["expect"]), done.stderr
