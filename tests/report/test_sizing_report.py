"""The sizing report: recommendation logic, pure plots' structure, and a real PDF that renders."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from workbench.analysis import plots
from workbench.report.judging import Judging, slo_verdicts
from workbench.report.sizing import build_sizing_report, load_sizing_data, recommend
from workbench.sweep import run_sweep

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sweep")
    spec = out / "sweep.yaml"
    spec.write_text(
        f"base: {ROOT / 'scenarios' / 'synthetic.yaml'}\n"
        "grid:\n  cluster.servers: [2, 4, 8]\n  cluster.gc: [{collector: g1, allocation_rate: 2G}]\n"
        "  simulation.duration_s: [20]\n  simulation.warmup_s: [2]\n  slo.p99_ms: [70]\n"
        "  workload.arrival.qps: [40]\n"
    )
    run_sweep(spec, out / "run", studies=True)
    return out / "run"


def test_recommendation_is_the_cheapest_point_meeting_the_slo() -> None:
    combined = pd.DataFrame({
        "config": ["a", "b", "c", "d"], "cost": [4, 8, 8, 16],
        "latency_ms.p99.value": [90.0, 50.0, 40.0, 20.0], "meets_slo": [False, True, True, True],
    })
    best, runner = recommend(combined)
    assert best is not None and runner is not None
    assert (best["config"], runner["config"]) == ("c", "b")  # same cost: lower p99 first


def test_no_recommendation_when_nothing_meets_the_slo() -> None:
    combined = pd.DataFrame({"config": ["a"], "cost": [4], "latency_ms.p99.value": [90.0], "meets_slo": [False]})
    assert recommend(combined) == (None, None)


def test_a_point_over_its_heap_slo_does_not_meet_the_slo_whatever_its_p99() -> None:
    combined = pd.DataFrame({
        "latency_ms.p99.value": [50.0, 50.0, 50.0, 90.0], "latency_ms.p99.ci_high": [55.0, 55.0, 55.0, 95.0],
        "slo.met": [True, False, None, True],  # the run's verdict: False when the heap SLO or an OOM failed
    })
    meets, robust = slo_verdicts(combined, Judging(70.0))
    assert meets.tolist() == [True, False, True, False]
    assert robust.tolist() == meets.tolist()
    only_heap, _ = slo_verdicts(combined, Judging())  # no p99 SLO: the run's verdict alone decides
    assert only_heap.tolist() == [True, False, True, True]


def test_sizing_data_labels_only_varying_parameters(sweep_dir: Path) -> None:
    d = load_sizing_data(sweep_dir)
    assert d.combined["config"].tolist() == ["servers=2", "servers=4", "servers=8"]
    assert d.combined["cost"].tolist() == [2, 4, 8]  # one core per server in synthetic.yaml
    assert d.judging == Judging(70.0)


def test_report_renders_and_its_text_is_extractable(sweep_dir: Path, tmp_path: Path) -> None:
    import pypdfium2 as pdfium

    pdf = build_sizing_report(sweep_dir, tmp_path / "report.pdf")
    doc = pdfium.PdfDocument(str(pdf))
    assert len(doc) >= 5
    for page in doc:
        pixels = np.asarray(page.render(scale=0.4).to_pil().convert("L"))
        assert (pixels < 250).mean() > 0.002, "blank page"
    text = "".join(doc[i].get_textpage().get_text_range() for i in range(len(doc)))
    assert "Executive summary" in text and "Reading:" in text
    assert "servers=" in text


def test_plots_have_the_expected_structure() -> None:
    combined = pd.DataFrame({
        "config": ["x", "y"], "cost": [4, 8],
        **{f"latency_ms.{p}.{k}": [10.0, 20.0] for p in ("p50", "p95", "p99", "p99.9")
           for k in ("value", "ci_low", "ci_high")},
    })
    fig = plots.percentiles_by_config(combined)
    ax = fig.axes[0]
    assert len(ax.containers) == 8  # 4 percentiles x (bars + error bars)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["x", "y"]
    fig = plots.cost_vs_slo(combined, 15.0)
    assert fig.axes[0].get_lines()[0].get_ydata()[0] == 15.0
    q = pd.DataFrame({"servers_queried": [1, 1, 2], "segments_queried": [3, 3, 6]})
    left, _ = plots.fanout_histogram(q).axes
    assert [p.get_height() for p in left.patches] == pytest.approx([2 / 3, 1 / 3])


def test_at_equal_cost_the_lower_upper_end_ranks_first_then_fewer_servers() -> None:
    """The issue's case: the same cost, p99 intervals ending at 175 and 172 ms: 172 is the better by the
    report's own rule (the SLO is judged on the upper end), whatever the point estimates say."""
    combined = pd.DataFrame({
        "point": ["rec", "runner", "big"], "cost": [8, 8, 8], "servers": [4, 4, 8],
        "latency_ms.p99.value": [161.0, 162.0, 162.0], "latency_ms.p99.ci_high": [175.0, 172.0, 172.0],
        "meets_slo": [True, True, True],
    })
    best, runner = recommend(combined)
    assert best is not None and runner is not None
    assert (best["point"], runner["point"]) == ("runner", "big")  # 172 before 175; at 172, 4 servers before 8


def test_the_runner_up_margin_is_read_from_the_upper_ends() -> None:
    from workbench.report.findings import Calibration, Findings, LoadFacts
    from workbench.report.sizing import SizingData
    from workbench.report.summary import runner_up_sentences

    def row(point: str, high: float) -> pd.Series:
        return pd.Series({"point": point, "shape": point, "instance": "m6i.xlarge", "monthly_cost": 993.0,
                          "latency_ms.p99.value": 160.0, "latency_ms.p99.ci_low": 147.0,
                          "latency_ms.p99.ci_high": high})

    f = Findings(row("best", 172.0), row("next", 175.0), None, None, None, [], LoadFacts(40.0, "poisson"),
                 Calibration(None, None, False))
    d = SizingData(pd.DataFrame(), {}, Judging(200.0), "s", {})
    (text,) = runner_up_sentences(d, f)
    assert "the same cost" in text and "3 ms less margin" in text and "ends at 175 ms against 172" in text
