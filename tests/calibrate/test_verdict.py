"""``workbench verdict``: UNDER, OVER or RIGHT-sized for a calibrated cluster, with the change that fixes it.

The cluster is the calibration tests' own (``synthetic_cluster``: 3 servers, queries over 1-24 hourly
segments), logged at 12 queries a second and calibrated on one core per server: its servers are about 10%
busy. A generous SLO (120 ms against a p99 near 70 ms) makes it clearly over-provisioned; a tight one
(60 ms) breaks at today's load. Expected money from the price table by hand: removing a server removes
one instance-month (brokers, controllers and ZooKeeper are unchanged, and the storage bill is the table's
bytes x replication whatever the server count).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import synthetic_cluster as cluster

from workbench import defaults as D
from workbench.api import verdict
from workbench.calibrate import CalibrateOptions, calibrate
from workbench.cli import main
from workbench.errors import InputError
from workbench.report.prices import load_prices


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("verdict")
    paths = cluster.write_cluster(root / "in", cluster.queries(300, qps=12.0, seed=8))
    calibrate(paths["table_config"], paths["schema"], paths["segments"], paths["query_log"], root / "cal",
              options=CalibrateOptions(server_cores=1, backtest_queries=0, seed=3, bootstrap=20))
    return root / "cal"


def test_an_over_provisioned_cluster_is_over_with_a_smaller_shape(
        calibrated: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "v"
    code = main(["verdict", str(calibrated), "--out", str(out), "--p99-ms", "120", "--survive", "none"])
    printed = capsys.readouterr().out
    assert code == 0
    data = json.loads((out / "verdict.json").read_text())
    today, grown = data["answers"]
    assert today["today"]["utilisation"] == pytest.approx(0.1, abs=0.05)  # about 10% busy
    assert today["verdict"] == "OVER" and today["today"]["meets"] and today["today"]["survives"]
    change = today["change"]
    assert change["servers"] * change["cores"] < 3 * 1 and change["meets"] and change["survives"]
    assert change["p99_high_ms"] <= 120
    removed = 3 - change["servers"]
    per_hour = load_prices(None).instances[change["instance"]].per_hour
    assert change["instance"] == today["today"]["instance"]
    assert today["monthly_delta"] == pytest.approx(-removed * per_hour * D.HOURS_PER_MONTH)
    assert today["segments_moved"] > 0 and today["bytes_moved"] > 0  # Pinot's rebalance onto fewer servers
    assert "p99_ms" in today["why"] and "breaks" in today["why"]  # the next smaller shape breaks the p99 SLO
    assert grown["factor"] == pytest.approx(1.5) and grown["verdict"] in ("OVER", "RIGHT", "UNDER")
    for text in ("today's peak: OVER", "remove", "saves", "why:", "+50% growth:"):
        assert text in printed, text


def test_a_cluster_that_breaks_its_slo_today_is_under_with_a_larger_shape(calibrated: Path, tmp_path: Path) -> None:
    result = verdict(calibrated, tmp_path / "v", p99_ms=60, survive="none", growth=0.0)
    today = result.answers[0]
    assert today.verdict == "UNDER" and not today.today.meets
    assert today.today.p99_high_ms > 60
    assert today.change is not None and today.change.ok and today.change.p99_high_ms <= 60
    assert today.change.servers * today.change.cores > 3 * 1
    assert today.monthly_delta >= 0
    assert today.why.startswith("p99_ms binds") and "every server up" in today.why
    assert all(not c.ok for c in today.tried if c.servers * c.cores <= 3)  # nothing smaller meets it


def test_bad_input_is_one_error_naming_what_to_give(calibrated: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not a calibrated directory"):
        verdict(tmp_path, tmp_path / "v", p99_ms=100)
    with pytest.raises(InputError, match=r"measure\.json"):  # --measured wants what `workbench measure` wrote
        verdict(tmp_path, tmp_path / "v", p99_ms=100, measured=True)
    with pytest.raises(InputError) as caught:
        verdict(calibrated, tmp_path / "v")
    assert caught.value.where == "slo.p99_ms"
    with pytest.raises(InputError) as caught:
        verdict(calibrated, tmp_path / "v", p99_ms=100, growth=-1)
    assert caught.value.where == "growth"
