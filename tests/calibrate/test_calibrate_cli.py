"""``workbench calibrate``: a thin caller of ``workbench.api.calibrate`` that prints the fit and the back-test."""

from __future__ import annotations

from pathlib import Path

import pytest
import synthetic_cluster as cluster

from workbench.cli import main


def test_calibrate_prints_the_fit_and_the_back_test_and_writes_the_directory(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = cluster.write_cluster(tmp_path / "in", cluster.queries(400, qps=4.0, seed=8))
    out = tmp_path / "out"
    code = main(["calibrate", "--table-config", str(paths["table_config"]), "--schema", str(paths["schema"]),
                 "--segments", str(paths["segments"]), "--query-log", str(paths["query_log"]), "--out", str(out),
                 "--server-cores", "8", "--backtest-queries", "400", "--replications", "2", "--seed", "3",
                 "--holdout", "0.3"])
    printed = capsys.readouterr().out
    assert code == 0
    for text in ("calibrated events_OFFLINE from 400 logged queries", "service.ns_per_doc", "back-test",
                 "verdict:", f"wrote {out}",
                 # 400 queries: 30% held out would leave fewer than 200 in the held-out part: used whole, and said
                 "note: the log is too short to hold 30% of it out (", "to hold out; at least 200 each)"):
        assert text in printed, text
    for name in ("scenario.yaml", "calibration.json", "backtest.json", "workload/queries.parquet",
                 "workload/segments.parquet", "table_config.json", "schema.json"):
        assert (out / name).is_file(), name
    assert "from --server-cores" in (out / "scenario.yaml").read_text(encoding="utf-8")


def test_calibrate_reports_bad_input_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = cluster.write_cluster(tmp_path / "in", cluster.queries(50, qps=4.0, seed=8))
    code = main(["calibrate", "--table-config", str(paths["table_config"]), "--schema", str(paths["schema"]),
                 "--segments", str(tmp_path / "missing.json"), "--query-log", str(paths["query_log"]),
                 "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("workbench calibrate: ") and "missing.json" in err
    assert not (tmp_path / "out").exists()
