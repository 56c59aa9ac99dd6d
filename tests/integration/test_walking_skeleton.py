"""The walking skeleton: Spark generates a workload, SimPy simulates it, a multi-page PDF is written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from workbench.api import generate, write_run
from workbench.report import build_run_report
from workbench.scenario import load_scenario
from workbench.sim.run import simulate

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def small_scenario(tmp_path_factory: pytest.TempPathFactory) -> Any:
    sc = load_scenario(ROOT / "scenarios" / "default.yaml")
    return sc.with_overrides({
        "workload.generate.events": 20_000, "workload.generate.segment_rows": 2_000,
        "simulation.duration_s": 20, "simulation.warmup_s": 2, "simulation.replications": 2,
    })


def test_generate_simulate_report(spark: Any, small_scenario: Any, tmp_path: Path) -> None:
    manifest = generate(small_scenario, tmp_path / "raw", master="local[2]")
    assert manifest["row_counts"]["events"] == 20_000
    segments = pd.read_parquet(tmp_path / "raw" / "segments.parquet")
    assert segments["total_docs"].sum() == 20_000
    # one consuming (IN_PROGRESS) segment at the head of each stream partition
    assert (segments.groupby("partition")["status"].apply(lambda s: (s == "IN_PROGRESS").sum()) == 1).all()
    events = pd.read_parquet(tmp_path / "raw" / "events")
    assert len(events) == 20_000 and events["event_id"].is_unique

    result = simulate(small_scenario, data=tmp_path / "raw")
    write_run(result, tmp_path / "run")
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["summary"]["queries"] > 1000
    # the default scenario replays the generated queries through Pinot's pruners: every segment is
    # either queried or pruned, and point lookups on the partition column prune most of them
    q = pd.read_parquet(tmp_path / "run" / "queries.parquet")
    assert (q["segments_queried"] + q["segments_pruned"] == len(segments)).all()
    assert q["segments_pruned"].mean() > 0

    pdf = build_run_report(tmp_path / "run", tmp_path / "report.pdf")
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(pdf))
    assert len(doc) >= 2
    for page in doc:
        pixels = np.asarray(page.render(scale=0.5).to_pil().convert("L"))
        assert (pixels < 250).mean() > 0.002, "page is blank"
    text = doc[0].get_textpage().get_text_range()
    assert "Pinot sizing report" in text and "p99" in text


def test_generation_is_deterministic_across_runs(spark: Any, small_scenario: Any, tmp_path: Path) -> None:
    a = generate(small_scenario, tmp_path / "a", master="local[2]")
    b = generate(small_scenario, tmp_path / "b", master="local[2]")
    assert a["checksums"] == b["checksums"]


def test_existing_output_is_not_overwritten(spark: Any, small_scenario: Any, tmp_path: Path) -> None:
    from workbench.errors import InputError

    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "keep.txt").write_text("mine")
    with pytest.raises(InputError, match="already exists; pass --overwrite"):
        generate(small_scenario, tmp_path / "taken", master="local[2]")
    assert (tmp_path / "taken" / "keep.txt").read_text() == "mine"
