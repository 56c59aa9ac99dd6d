"""What calibrate does with the user's files: one table's queries kept, bad or mismatched input refused.

Every refusal is one InputError naming the file (and, for files that do not belong together, both
files), and leaves no output directory behind.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import synthetic_cluster as cluster
import yaml

from workbench.calibrate import CalibrateOptions, calibrate
from workbench.errors import InputError

FAST = CalibrateOptions(server_cores=8, backtest_queries=0, bootstrap=20)
GC_FIXTURES = Path(__file__).resolve().parents[1] / "workload" / "importers" / "fixtures"


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    return cluster.write_cluster(tmp_path / "in", cluster.queries(400, qps=4.0, seed=2))


def _run(files: dict[str, Path], out: Path, **kw: object) -> object:
    return calibrate(files["table_config"], files["schema"], files["segments"], files["query_log"], out,
                     options=FAST, **kw)  # type: ignore[arg-type]


def _refused(files: dict[str, Path], out: Path) -> InputError:
    with pytest.raises(InputError) as err:
        _run(files, out)
    assert not out.exists()
    return err.value


def test_a_log_without_the_counters_names_them_and_the_versions_that_write_them(files: dict[str, Path],
                                                                                  tmp_path: Path) -> None:
    bare = tmp_path / "bare.log"
    bare.write_text("2026/01/02 03:04:05.678 INFO [QueryLogger] [jersey-1] requestId=1,table=events_OFFLINE,"
                    "timeMs=5,query=SELECT COUNT(*) FROM events\n", encoding="utf-8")
    err = _refused({**files, "query_log": bare}, tmp_path / "out")
    assert str(bare) in str(err)
    for needed in ("docs=", "segments(queried/...)", "servers=", "0.x", "0.12.1"):
        assert needed in str(err), needed


def test_segments_of_another_table_are_refused_naming_both_files(files: dict[str, Path], tmp_path: Path) -> None:
    other = {name.replace("events_", "trips_"): {**meta, "segmentName": name.replace("events_", "trips_")}
             for name, meta in cluster.segment_metadata().items()}
    path = tmp_path / "trips-segments.json"
    path.write_text(json.dumps(other), encoding="utf-8")
    err = _refused({**files, "segments": path}, tmp_path / "out")
    assert str(path) in err.where and str(files["query_log"]) in err.where
    assert "trips" in str(err) and "events" in str(err)


def test_a_log_of_another_table_is_refused_naming_both_files(files: dict[str, Path], tmp_path: Path) -> None:
    path = tmp_path / "trips.log"
    path.write_text(files["query_log"].read_text(encoding="utf-8").replace("events_OFFLINE", "trips_OFFLINE"),
                    encoding="utf-8")
    err = _refused({**files, "query_log": path}, tmp_path / "out")
    assert str(path) in err.where and str(files["segments"]) in err.where
    assert "trips_OFFLINE" in str(err)


def test_a_segment_list_too_small_for_the_log_is_refused(files: dict[str, Path], tmp_path: Path) -> None:
    few = dict(list(cluster.segment_metadata().items())[:4])
    path = tmp_path / "few.json"
    path.write_text(json.dumps(few), encoding="utf-8")
    err = _refused({**files, "segments": path}, tmp_path / "out")
    assert "segment list has 4" in str(err) and str(path) in err.where


def test_a_redacted_log_cannot_be_replayed(files: dict[str, Path], tmp_path: Path) -> None:
    text = files["query_log"].read_text(encoding="utf-8")
    path = tmp_path / "redacted.log"
    path.write_text("\n".join(line.split("query=")[0] + "query=REDACTED" for line in text.splitlines()) + "\n",
                    encoding="utf-8")
    err = _refused({**files, "query_log": path}, tmp_path / "out")
    assert "can be replayed" in str(err)


def test_other_tables_in_a_whole_broker_log_are_left_out_and_counted(files: dict[str, Path], tmp_path: Path) -> None:
    lines = files["query_log"].read_text(encoding="utf-8").splitlines()
    extra = [line.replace("events_OFFLINE", "users_OFFLINE") for line in lines[:25]]
    path = tmp_path / "broker.log"
    path.write_text("\n".join(lines + extra) + "\n", encoding="utf-8")
    result = _run({**files, "query_log": path}, tmp_path / "out")
    assert result.dropped["other tables"] == 25  # type: ignore[attr-defined]
    assert result.queries == len(lines)  # type: ignore[attr-defined]


def test_a_hybrid_table_config_is_read_for_the_segments_table_type(files: dict[str, Path], tmp_path: Path) -> None:
    hybrid = {"OFFLINE": cluster.TABLE_CONFIG,
              "REALTIME": {**cluster.TABLE_CONFIG, "tableType": "REALTIME",
                           "segmentsConfig": {"replicasPerPartition": "1", "timeColumnName": "ts"}}}
    path = tmp_path / "hybrid.json"
    path.write_text(json.dumps(hybrid), encoding="utf-8")
    result = _run({**files, "table_config": path}, tmp_path / "out")
    assert result.table == "events_OFFLINE"  # type: ignore[attr-defined]


def test_gc_logs_become_the_scenarios_gc_section_pooled_over_servers(files: dict[str, Path], tmp_path: Path) -> None:
    logs = [GC_FIXTURES / "gc_time_only.log", GC_FIXTURES / "gc_zgc.log"]  # neither can calibrate g1
    out = tmp_path / "out"
    _run(files, out, gc_logs=logs)
    gc = yaml.safe_load((out / "scenario.yaml").read_text(encoding="utf-8"))["cluster"]["gc"]
    assert gc["collector"] == "fixed"
    assert len(gc["pause_ms"]["values"]) == 2 + 3 and len(gc["interval_s"]["values"]) == 1 + 2
    assert set(json.loads((out / "gc_calibration.json").read_text(encoding="utf-8"))) == {str(p) for p in logs}


def test_an_existing_output_is_kept_unless_overwrite(files: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(InputError, match="already exists"):
        _run(files, out)
    _run(files, out, overwrite=True)
    assert (out / "scenario.yaml").is_file()


def test_a_holdout_outside_0_to_1_is_refused_and_without_a_back_test_nothing_is_held_out(files: dict[str, Path],
                                                                           tmp_path: Path) -> None:
    args = (files["table_config"], files["schema"], files["segments"], files["query_log"])
    with pytest.raises(InputError, match="--holdout"):
        CalibrateOptions(holdout=1.0)
    # without a back-test nothing is held out
    assert calibrate(*args, tmp_path / "none", options=CalibrateOptions(backtest_queries=0, bootstrap=10)).fit.queries \
        == 400
    # a log too short to hold a part out: test_calibrate_cli.py
