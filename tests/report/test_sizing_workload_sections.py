"""Sizing-report sections that read the sweep's workload: the result cache and the provisioning matrix."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from workbench.report.sizing import build_sizing_report
from workbench.scenario import load_scenario
from workbench.sweep import run_sweep
from workbench.workload.pure import generate_local

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("demo")
    shutil.copytree(ROOT / "scenarios", tmp / "scenarios")
    sc = load_scenario(tmp / "scenarios" / "default.yaml").with_overrides({
        "workload.generate.events": 20_000, "workload.generate.segment_rows": 1_000,
        "workload.generate.queries.duration_s": 60})
    assert sc.workload.generate is not None
    generate_local(sc.workload.generate, tmp / "data" / "raw" / "default", table_config=sc.table, table="events")
    (tmp / "sweep.yaml").write_text(
        "base: scenarios/default.yaml\ngrid:\n  cluster.servers: [2, 4]\n  simulation.duration_s: [30]\n"
        "  simulation.warmup_s: [2]\n  simulation.replications: [2]\n")
    run_sweep(tmp / "sweep.yaml", tmp / "out", studies=True)
    return tmp / "out"


def test_report_has_cache_and_provisioning_pages(sweep_dir: Path, tmp_path: Path) -> None:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(build_sizing_report(sweep_dir, tmp_path / "r.pdf")))
    text = "".join(doc[i].get_textpage().get_text_range() for i in range(len(doc)))
    assert "Broker result cache on this workload" in text and "optimal" in text
    assert "RealtimeProvisioningHelper" in text and "numHours" in text
    # every size carries its unit: Pinot's bare "2.27M" reads as a count; the page prints "2.27MiB"
    matrix = next(doc[i].get_textpage().get_text_range() for i in range(len(doc))
                  if "RealtimeProvisioningHelper" in doc[i].get_textpage().get_text_range())
    assert re.search(r"\d(KiB|MiB|GiB) / \d", matrix)
    assert not re.search(r"\d[KMGT](?![iB])", matrix), re.findall(r"\S*\d[KMGT](?![iB])\S*", matrix)[:5]


def test_the_demo_recommendation_meets_its_slo_with_a_server_down(sweep_dir: Path) -> None:
    """The demo scenario's SLO includes one server lost (slo.survive defaults to server), and its
    recommendation meets the SLO in every failure case, as page 1's what-if table says."""
    from workbench.report.findings import find
    from workbench.report.sizing import load_sizing_data
    from workbench.report.summary import whatif_frame

    d = load_sizing_data(sweep_dir)
    f = find(d)
    assert f.survive == "server" and f.best is not None
    survival = f.survival[str(f.best["point"])]
    assert survival.survives and survival.rows  # run, not assumed
    assert all(r["latency_ms.p99.ci_high"] <= d.judging.p99_ms for r in survival.rows)
    table = whatif_frame(f, d.judging.judged).set_index("case")
    assert table.loc["one server down", "SLO"] == "meets"


def test_page_one_of_the_demo_ends_above_its_footer(sweep_dir: Path) -> None:
    """Page 1 holds the answer, what-ifs, assumptions, how sure and the warnings; when that is more than
    fits at a readable size it sets smaller type rather than run its warnings over the price footer."""
    from workbench.report.findings import find
    from workbench.report.sizing import load_sizing_data
    from workbench.report.summary import summary_pages

    d = load_sizing_data(sweep_dir)
    f = find(d)
    # as many warnings as the demo's full sweep gives (it ran page 1 into its footer at 71% type)
    f.warnings.extend([f"An extra warning, number {i}, long enough to wrap onto a second line on page 1 of the "
                       "report the way the segment-size and assumption warnings do on the demo's full sweep."
                       for i in range(6)])
    fig = summary_pages(d, f)[0]
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    inverse = fig.transFigure.inverted()
    boxes = {t.get_text(): t.get_window_extent(renderer).transformed(inverse) for t in fig.texts if t.get_text()}
    footer = next(b for text, b in boxes.items() if text.startswith("Prices:"))
    lowest = min(b.y0 for text, b in boxes.items() if not text.startswith("Prices:"))
    assert lowest > footer.y1, (lowest, footer.y1)
