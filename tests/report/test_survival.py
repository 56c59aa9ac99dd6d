"""Resilience is part of the SLO: every configuration meeting it is run in its failure case, and the
report recommends the cheapest that meets the SLO in both (``slo.survive``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from workbench.report.findings import find
from workbench.report.sizing import build_sizing_report, load_sizing_data
from workbench.report.survival import AfterLoss, failure_cases
from workbench.scenario import load_scenario
from workbench.scenario.variants import balanced_layout, replica_group_layout

ROOT = Path(__file__).resolve().parents[2]
SLO_MS = 60.0


def _sweep(out: Path, survive: str) -> Path:
    """Two servers holding both replicas of every segment, with 4 or 8 cores (the 8-core instance costs
    more), at a load where both meet the SLO with both servers up."""
    from workbench.sweep import run_sweep
    from workbench.sweep.sizing import sizing_sweep

    base: dict[str, Any] = yaml.safe_load((ROOT / "scenarios" / "synthetic.yaml").read_text())
    base["table"]["segmentsConfig"]["replication"] = 2
    base["slo"] = {"survive": survive}
    spec = sizing_sweep(base, servers=[2], cores=[4, 8], replica_groups=[0], slo_p99_ms=SLO_MS, qps=300.0,
                        replications=3, duration_s=20, name=f"survive-{survive}", base_dir=ROOT / "scenarios")
    run_sweep(spec, out, parallel=1, studies=True)
    return out


@pytest.fixture(scope="module")
def survive_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _sweep(tmp_path_factory.mktemp("survive") / "out", "server")


def _page_one(pdf: Path) -> str:
    import pypdfium2 as pdfium

    return " ".join(pdfium.PdfDocument(str(pdf))[0].get_textpage().get_text_range().split())


def test_the_report_picks_the_dearer_shape_that_survives_a_lost_server(survive_sweep: Path, tmp_path: Path) -> None:
    d = load_sizing_data(survive_sweep)
    by_cores = d.combined.set_index("cores")
    assert by_cores["meets_slo"].all()  # both meet the SLO with every server up...
    assert by_cores.loc[4, "monthly_cost"] < by_cores.loc[8, "monthly_cost"]  # ...and the 4-core shape is cheaper
    f = find(d)
    assert f.best is not None and int(f.best["cores"]) == 8  # the one that survives, not the cheapest
    cheap = f.survival[str(by_cores.loc[4, "point"])]
    dear = f.survival[str(by_cores.loc[8, "point"])]
    assert not cheap.survives and dear.survives
    worst = cheap.worst()
    assert worst is not None and worst["latency_ms.p99.ci_high"] > SLO_MS
    # with one of two servers down, the other holds every segment and does both servers' work: its
    # utilisation is twice the mean of the two with both up (work conservation)
    down = next(r for r in cheap.rows if r["name"] == "server-down")
    assert down["utilisation.max"] == pytest.approx(2 * by_cores.loc[4, "utilisation.mean"], rel=0.1)
    # two servers with two replicas cannot be rebalanced onto one: a replacement restores the layout
    assert cheap.after_loss is not None and not cheap.after_loss.rebalanced
    text = _page_one(build_sizing_report(survive_sweep, tmp_path / "r.pdf"))
    assert f"Buy 2 x {f.best['instance']}" in text
    assert "slo.survive: server" in text  # page 1 says which failure it sized for
    assert "meets the SLO with every server up" in text and "but breaks it with one server down" in text


def test_without_a_failure_to_survive_the_cheapest_shape_is_recommended(tmp_path: Path) -> None:
    d = load_sizing_data(_sweep(tmp_path / "out", "none"))
    f = find(d)
    assert f.best is not None and int(f.best["cores"]) == 4 and f.survive == "none"
    assert all(s.survives and not s.rows for s in f.survival.values())  # nothing run, nothing ruled out


def test_failure_cases_by_mode(tmp_path: Path) -> None:
    base = load_scenario(ROOT / "scenarios" / "synthetic.yaml")

    def plan(sc: Any, scratch: Path) -> AfterLoss:
        return AfterLoss(sc.cluster.servers, sc.cluster.servers - 1, True, 1, 10, 10, 1.0)

    alone = base.with_overrides({"cluster.servers": 4})  # one replica: a lost server's data is gone
    assert failure_cases(alone, tmp_path, plan).cannot is not None
    two = base.with_overrides(balanced_layout(base, 4, 2))
    assert [w.name for w in failure_cases(two, tmp_path, plan).cases] == ["server-down", "server-lost"]
    lost = failure_cases(two, tmp_path, plan).cases[1]
    assert lost.rebalance_to == 3 and lost.overrides == {"cluster.servers": 3}
    assert failure_cases(two.with_overrides({"slo.survive": "none"}), tmp_path, plan).cases == ()
    zone = two.with_overrides({"slo.survive": "replica_group"})
    assert failure_cases(zone, tmp_path, plan).cannot is not None  # balanced: no group to lose
    groups = base.with_overrides({**replica_group_layout(base, 2, 2), "slo.survive": "replica_group"})
    (case,) = failure_cases(groups, tmp_path, plan).cases
    assert case.name == "group-down" and len(case.overrides["cluster.failures.down"]) == 2


def test_the_time_before_the_rebalance_is_the_busiest_servers_load_at_the_load_rate() -> None:
    loss = AfterLoss(6, 5, True, segments_moved=30, bytes_moved=9 * 2**30, busiest_bytes=3 * 2**30,
                     load_bytes_per_s=50 * 2**20)
    assert loss.seconds == pytest.approx(3 * 1024 / 50)  # 3 GiB at 50 MiB/s: 61.44 s
    assert "about 61 s" in loss.sentence()
