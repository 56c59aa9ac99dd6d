"""A sweep that varies the load as well as the shape is answered per load level, never across loads.

The sweep: 2 servers of 4 or 8 cores (a 2G heap: the price table's cheapest fits are c6i.xlarge and
c6i.2xlarge), Poisson arrivals at 40 or 190 queries/s, every query one exponential 20 ms task on each
server (the synthetic table: one segment per server). By hand, a server's utilisation is
qps x 20 ms / cores:

========  =======  =======
qps       4 cores  8 cores
========  =======  =======
40        0.20     0.10
190       0.95     0.475
========  =======  =======

At 190 queries/s four cores are 95% busy: M/M/4 with service 20 ms waits with probability about 0.9 and
the wait's tail falls at rate 4/20 - 190/1000 = 0.01 per ms, so the p99 wait alone is about
ln(0.9/0.01)/0.01 = 450 ms, far over the 200 ms SLO; eight cores (48% busy) meet it. At 40 queries/s
four cores are 20% busy and meet it, for less money. So the answer differs by load: 4 cores at 40
queries/s, 8 cores at 190; the cheapest row across both loads (4 cores) must never be the answer for 190.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
SLO_MS = 200.0


@pytest.fixture(scope="module")
def load_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 2 x 2 sweep above (loads x cores), run with its studies; returns the sweep directory."""
    from workbench.sweep import parse_sweep, run_sweep

    tmp = tmp_path_factory.mktemp("per-load")
    cluster = {"servers": 2, "server": {"cores": 4, "heap": "2G"}, "network": {"latency_ms": 0},
               "broker": {"overhead_ms": 0}, "gc": {"collector": "none"}}
    base = {"name": "per-load", "cluster": cluster,
            "table": {"tableName": "t", "tableType": "OFFLINE", "routing": {"instanceSelectorType": "balanced"},
                      "segmentsConfig": {"replication": 1}},
            "workload": {"synthetic": {"segments_per_server": 1, "docs_per_segment": 1000},
                         "arrival": {"process": "poisson", "qps": 40}},
            "service": {"model": "exponential", "mean_ms": 20},
            "slo": {"p99_ms": SLO_MS, "survive": "none"},
            "simulation": {"duration_s": 30, "warmup_s": 3, "replications": 3, "seed": 3}}
    spec = parse_sweep({"name": "per-load", "base": base,
                        "grid": {"workload.arrival.qps": [40, 190], "cluster.server.cores": [4, 8]}},
                       where="per-load", base_dir=tmp)
    run_sweep(spec, tmp / "out", parallel=1, studies=True)
    return tmp / "out"


def test_each_load_level_is_ranked_against_itself(load_sweep: Path) -> None:
    """The hand-computed answers: 4 cores at 40 queries/s, 8 cores at 190; the report's own recommendation
    (what-ifs, alternatives) is the highest load's."""
    from workbench.report.data import load_sizing_data
    from workbench.report.findings import find

    d = load_sizing_data(load_sweep)
    four_at_high = d.combined[(d.combined["param.workload.arrival.qps"] == 190) & (d.combined["cores"] == 4)]
    assert float(four_at_high["utilisation.mean"].iloc[0]) == pytest.approx(0.95, abs=0.04)  # saturated, as by hand
    assert not bool(four_at_high["meets_slo"].iloc[0])
    f = find(d)
    answers = [(a.level, None if a.best is None else int(a.best["cores"])) for a in f.per_load]
    assert answers == [("arrival.qps=40", 4), ("arrival.qps=190", 8)]
    assert f.best is not None and int(f.best["cores"]) == 8
    assert int(f.best["param.workload.arrival.qps"]) == 190
    cheapest_anywhere = d.combined[d.combined["meets_slo"]].sort_values("cluster_cost").iloc[0]
    assert int(cheapest_anywhere["cores"]) == 4  # the defect's answer, which the report must not give for 190


def test_page_one_gives_one_answer_per_load(load_sweep: Path, tmp_path: Path) -> None:
    """Page 1 names both levels with their own shape, and its purchase is said to be for the highest load."""
    import pypdfium2 as pdfium

    from workbench.report import build_sizing_report

    pdf = build_sizing_report(load_sweep, tmp_path / "r.pdf")
    text = " ".join(pdfium.PdfDocument(str(pdf))[0].get_textpage().get_text_range().split())
    assert "One answer per load" in text
    low = text.index("(arrival.qps=40): buy 2 servers x 4 cores")
    high = text.index("(arrival.qps=190): buy 2 servers x 8 cores")
    assert low < high
    assert "At the highest load simulated," in text and "(arrival.qps=190): Buy 2 x c6i.2xlarge" in text
    combined = pd.read_parquet(load_sweep / "combined.parquet")
    assert len(combined) == 4
