"""The assumptions that drive a sizing answer are on page 1: the long-lived heap against G1's IHOP with the
share of queries that met a pause, and each assumption tried at the ends of its plausible range."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from workbench import defaults as D
from workbench.report.findings import find
from workbench.report.sizing import load_sizing_data
from workbench.report.summary import summary_page, summary_pages

ROOT = Path(__file__).resolve().parents[2]
SLO_MS = 60.0


@pytest.fixture(scope="module")
def assumed_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two servers holding both replicas of every segment, with 4 or 8 cores (the 8-core instance costs
    more), a cost model, and G1 holding 1 GiB of long-lived heap on a 2 GiB heap: past the IHOP (45%,
    0.9 GiB). At 300 queries/s the 4-core shape meets the SLO with both servers up but not with one down,
    so the 8-core one is recommended and the 4-core one is the next cheaper."""
    from workbench.sweep import run_sweep
    from workbench.sweep.sizing import sizing_sweep

    base: dict[str, Any] = yaml.safe_load((ROOT / "scenarios" / "synthetic.yaml").read_text())
    base["table"]["segmentsConfig"]["replication"] = 2
    base["service"] = {"model": "cost", "ns_per_doc": 11000, "per_segment_ms": 0.5, "per_request_ms": 0.5}
    base["cluster"]["gc"] = {"collector": "g1", "live_heap": "1G", "allocation_rate": "200MB"}
    base["cluster"]["server"]["heap"] = "2G"
    base["simulation"]["warmup_s"] = 1
    spec = sizing_sweep(base, servers=[2], cores=[4, 8], replica_groups=[0], slo_p99_ms=SLO_MS, qps=300.0,
                        replications=2, duration_s=5, name="assumptions", base_dir=ROOT / "scenarios")
    out = tmp_path_factory.mktemp("assumptions") / "out"
    run_sweep(spec, out, parallel=1, studies=True)
    return out


def _bound(row: Any) -> float:
    return float(row["latency_ms.p99.ci_high"])


def test_each_assumption_is_tried_at_both_ends_and_page_one_says_which_move_the_answer(assumed_sweep: Path,
                                                                                       tmp_path: Path) -> None:
    import pypdfium2 as pdfium

    d = load_sizing_data(assumed_sweep)
    f = find(d)
    assert f.best is not None and int(f.best["cores"]) == 8
    assert f.cheaper is not None and int(f.cheaper["cores"]) == 4
    keys = [c.assumption.key for c in f.assumptions]
    assert keys == list(D.ASSUMPTION_RANGES)  # all three apply: a cost model and G1 with an allocation rate
    for check in f.assumptions:
        low, high = D.ASSUMPTION_RANGES[check.assumption.key]
        assert (check.low, check.high) == pytest.approx((check.today * low, check.today * high))
        # a verdict is the SLO held against every run's interval: the recommendation at the unkind end,
        # the cheaper shape at the kind end (its runs stop at the first case that breaks it)
        assert check.best_holds == all(_bound(r) <= SLO_MS for r in check.rows_best)
        assert check.cheaper_meets == all(_bound(r) <= SLO_MS for r in check.rows_cheaper)
        assert check.rows_cheaper[0]["label"].startswith("with every server up")
        assert check.drives == (not check.best_holds or check.cheaper_meets)
    cost = next(c for c in f.assumptions if c.assumption.key == "service.ns_per_doc")
    # every document costs 25% more (less) on the same arrivals: no query can finish earlier (later), as
    # a FCFS queue's response times only grow with its service times; so p99 moves with the cost
    assert cost.rows_best[0]["latency_ms.p99.value"] >= float(f.best["latency_ms.p99.value"])
    assert cost.rows_cheaper[0]["latency_ms.p99.value"] <= float(f.cheaper["latency_ms.p99.value"])
    down = {r["name"]: r for r in f.survival[str(f.cheaper["point"])].rows}["server-down"]
    assert not down["meets_slo"]  # why the cheaper shape is not the answer today
    cheap_down = [r for r in cost.rows_cheaper if str(r["name"]).endswith("server-down")]
    assert cheap_down and cheap_down[0]["latency_ms.p99.value"] <= down["latency_ms.p99.value"]
    assert f.ihop is not None and "past G1's IHOP (45%" in f.ihop
    assert f"{float(f.best['gc_delayed_rate']):.0%} of queries met a GC pause" in f.ihop
    summary_page(d, f).savefig(tmp_path / "page1.pdf")  # page 1 as the report renders it, alone
    page = " ".join(pdfium.PdfDocument(str(tmp_path / "page1.pdf"))[0].get_textpage().get_text_range().split())
    assert "Assumptions behind the answer" in page and "past G1's IHOP" in page
    for check in f.assumptions:
        assert check.assumption.key in page
    moving = [c.assumption.key for c in f.assumptions if c.drives]
    assert ("MOVES the answer" in page) == bool(moving)
    assert all(any(k in w for w in f.warnings) for k in moving)


def test_a_full_page_one_keeps_the_answer_and_its_assumptions_and_continues_on_a_second(assumed_sweep: Path,
                                                                                        tmp_path: Path) -> None:
    """Page 1 with more warnings than fit: it keeps the answer, the assumptions, how sure and the warnings
    in readable type, and hands the alternatives to a page that says it continues the first."""
    import dataclasses

    import pypdfium2 as pdfium
    from matplotlib.backends.backend_pdf import PdfPages

    d = load_sizing_data(assumed_sweep)
    f = find(d)
    crowded = dataclasses.replace(f, warnings=[*f.warnings, *(f"Warning {i}: " + "a long warning. " * 30
                                                                for i in range(4))])
    pages = summary_pages(d, crowded)
    assert len(pages) == 2
    with PdfPages(tmp_path / "summary.pdf") as pdf:
        for fig in pages:
            pdf.savefig(fig)
    doc = pdfium.PdfDocument(str(tmp_path / "summary.pdf"))
    first, second = (" ".join(doc[i].get_textpage().get_text_range().split()) for i in range(2))
    doc.close()
    for kept in ("Buy 2 x", "Assumptions behind the answer", "How sure we are", "Warning 3"):
        assert kept in first
    assert "The alternatives" not in first and "The alternatives" in second
    assert second.startswith("Executive summary, continued")
