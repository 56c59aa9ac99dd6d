"""A sweep of `simulation.records: latency` runs (the form large runs take) still gets its sizing report.

Such runs keep only each query's latency (``LATENCY_COLUMNS``); the fan-out page, which needs the servers
and segments each query touched, has nothing to show and is left out rather than crashing the report.
"""

from __future__ import annotations

from pathlib import Path

from workbench.cli import main


def test_a_latency_only_sweep_reports_without_its_fan_out_page(tmp_path: Path) -> None:
    from workbench.sweep import run_sweep
    from workbench.sweep.spec import parse_sweep

    base = {"cluster": {"servers": 2},
            "workload": {"synthetic": {"segments_per_server": 2, "docs_per_segment": 1000}, "arrival": {"qps": 50}},
            "simulation": {"duration_s": 10, "warmup_s": 1, "replications": 2, "seed": 1, "records": "latency"},
            "slo": {"p99_ms": 100}}
    spec = parse_sweep({"base": base, "grid": {"cluster.servers": [2, 3]}}, default_name="latency-only")
    run_sweep(spec, tmp_path / "sweep", parallel=1, studies=False)
    assert main(["report", str(tmp_path / "sweep"), "--out", str(tmp_path / "r.pdf")]) == 0

    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(tmp_path / "r.pdf"))
    text = " ".join(" ".join(doc[i].get_textpage().get_text_range().split()) for i in range(len(doc)))
    assert "Executive summary" in text
    assert "Fan-out of the recommended configuration" not in text
