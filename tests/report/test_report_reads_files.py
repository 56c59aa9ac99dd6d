"""`workbench report` reads files: with the simulator broken it still writes the whole sizing report.

The sweep and its studies run first, unpatched (the ``layout_sweep`` fixture, as ``workbench sweep``
runs them); then ``simulate`` raises wherever it can be reached, and the real command renders the PDF.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, NoReturn

import pytest

import workbench
import workbench.sim.run
from workbench.cli import main


def _no_simulation(*args: Any, **kwargs: Any) -> NoReturn:
    raise AssertionError("the report simulated")


@pytest.fixture
def broken_simulator(monkeypatch: pytest.MonkeyPatch) -> None:
    """``simulate`` raises, in its module and in the package's re-export.

    The package's re-export is patched first: ``workbench.simulate`` resolves lazily from
    ``workbench.sim.run``, so patching the module first would make monkeypatch remember the broken
    function as the package's original and leave it behind for every later test.
    """
    monkeypatch.setattr(workbench, "simulate", _no_simulation)
    monkeypatch.setattr(workbench.sim.run, "simulate", _no_simulation)


def _text(pdf: Path) -> str:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(pdf))
    return " ".join("".join(doc[i].get_textpage().get_text_range() for i in range(len(doc))).split())


def test_the_simulator_is_unreachable_while_patched(broken_simulator: None, tmp_path: Path) -> None:
    """The patch holds for every run: the run verb fails, so a report that ran anything would fail too."""
    from workbench.runs import run_scenario

    with pytest.raises(AssertionError, match="the report simulated"):
        run_scenario({"cluster": {"servers": 1}, "workload": {"synthetic": {}}}, tmp_path / "run")


def test_report_of_a_sweep_with_its_studies_runs_nothing(layout_sweep: Path, tmp_path: Path,
                                                         broken_simulator: None) -> None:
    pdf = tmp_path / "report.pdf"
    assert main(["report", str(layout_sweep), "--out", str(pdf)]) == 0
    text = _text(pdf)
    assert pdf.stat().st_size > 0 and "Executive summary" in text
    assert "load x1.5" in text  # the what-if it read from the studies' runs
    assert "workbench studies" not in text


def test_report_without_the_studies_says_which_command_runs_them(layout_sweep: Path, tmp_path: Path,
                                                                 broken_simulator: None) -> None:
    sweep = tmp_path / "sweep"
    shutil.copytree(layout_sweep, sweep, ignore=shutil.ignore_patterns("whatif"))
    pdf = tmp_path / "report.pdf"
    assert main(["report", str(sweep), "--out", str(pdf)]) == 0
    text = _text(pdf)
    assert "Executive summary" in text
    assert f"workbench studies {sweep}" in text and "load x1.5" not in text


def test_the_command_the_report_names_writes_what_it_reads(layout_sweep: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    sweep = tmp_path / "sweep"
    shutil.copytree(layout_sweep, sweep, ignore=shutil.ignore_patterns("whatif"))
    assert main(["studies", str(sweep)]) == 0  # simulates: the step before the report
    assert sorted(p.name for p in (sweep / "whatif").iterdir()) == sorted(p.name for p in
                                                                          (layout_sweep / "whatif").iterdir())
    monkeypatch.setattr(workbench.sim.run, "simulate", _no_simulation)
    pdf = tmp_path / "report.pdf"
    assert main(["report", str(sweep), "--out", str(pdf)]) == 0
    assert "load x1.5" in _text(pdf)
