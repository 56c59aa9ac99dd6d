"""``calibrate --controller URL --table NAME`` against a live Pinot 1.5.1 controller (issue #23).

The session's Helix cluster (``helix_run``) is given a table config, a schema and two segments; queries through its
broker fill the broker's real query log; ``calibrate`` then fetches the three inputs from the controller and fits
on that log. Expected values are what the cluster was given: the config's fields, the schema's columns, and each
segment's documents and time range counted from the rows it was built from. The local servers have no admin API,
so the controller's ``GET /segments/{table}/metadata`` answers 500 and the fetch reads the controller's ZooKeeper
records (``/zkmetadata``), as a cluster with unreachable server admin ports would.
"""

from __future__ import annotations

import json
import socket

import pandas as pd
import pytest
from helix_run import CLICKS_CONFIG, HelixRun

from workbench.api import calibrate, fetch_controller
from workbench.errors import InputError
from workbench.scenario import load_scenario


def _calibrated(run: HelixRun) -> None:
    if isinstance(run.calibrated, Exception):
        raise run.calibrated


def test_the_fetched_table_config_and_schema_are_what_the_cluster_was_given(helix_run: HelixRun) -> None:
    _calibrated(helix_run)
    fetched = helix_run.out / "controller"
    config = json.loads((fetched / "table_config.json").read_text())
    assert list(config) == ["OFFLINE"]  # GET /tables/{table} wraps the config by type
    offline = config["OFFLINE"]
    assert (offline["tableName"], offline["tableType"]) == (CLICKS_CONFIG["tableName"], "OFFLINE")
    assert offline["segmentsConfig"]["timeColumnName"] == "ts"
    assert offline["segmentsConfig"]["replication"] == "1"
    schema = json.loads((fetched / "schema.json").read_text())
    assert schema["schemaName"] == "clicks"
    for kind in ("dimensionFieldSpecs", "metricFieldSpecs", "dateTimeFieldSpecs"):
        given = {spec["name"]: spec for spec in helix_run.schema[kind]}
        got = {spec["name"]: spec for spec in schema[kind]}
        assert set(got) == set(given)
        for name, spec in given.items():
            assert {k: got[name][k] for k in spec} == spec  # Pinot adds fieldType; nothing given changes


def test_segments_json_names_every_segment_with_pinots_own_metadata(helix_run: HelixRun) -> None:
    _calibrated(helix_run)
    fetched = helix_run.out / "controller"
    segments = json.loads((fetched / "segments.json").read_text())
    assert set(segments) == set(helix_run.segments)
    for name, rows in helix_run.segments.items():
        record = segments[name]
        assert int(record["segment.total.docs"]) == len(rows)
        assert (int(record["segment.start.time"]), int(record["segment.end.time"])) == (rows["ts"].min(),
                                                                                          rows["ts"].max())
        assert record["segment.time.unit"] == "MILLISECONDS"
    read = json.loads((fetched / "controller.json").read_text())
    assert read["endpoints"]["segments"].endswith("/segments/clicks/zkmetadata?type=OFFLINE")
    imported = pd.read_parquet(helix_run.out / "workload" / "segments.parquet").set_index("segment_name")
    for name, rows in helix_run.segments.items():
        assert imported.loc[name, "total_docs"] == len(rows)
        assert imported.loc[name, "start_time_ms"] == rows["ts"].min()


def test_calibrate_from_the_controller_writes_a_scenario_whose_sources_are_in_the_output(helix_run: HelixRun) -> None:
    _calibrated(helix_run)
    out = helix_run.out
    scenario = load_scenario(out / "scenario.yaml")
    assert scenario.cluster.servers == 2   # the two servers the broker log's queries name
    calibration = json.loads((out / "calibration.json").read_text())
    assert calibration["table"] == "clicks_OFFLINE"
    logged = sum(1 for line in helix_run.query_log.splitlines() if "table=clicks," in line)
    assert calibration["queries"] == logged
    for key in ("table_config", "schema", "segments"):
        assert calibration["sources"][key] == [str(out / "controller" / f"{key}.json")]


def test_a_table_the_controller_does_not_have_is_refused_with_pinots_message(helix_run: HelixRun) -> None:
    missing = helix_run.fetch_errors["no such table"]
    assert str(missing).startswith(f"{helix_run.controller_url}/tables/nope: HTTP 404: Table nope does not exist")
    assert "\n" not in str(missing)
    wrong_type = helix_run.fetch_errors["no such type"]
    assert "has no REALTIME config (it has OFFLINE)" in str(wrong_type)


def test_an_unreachable_controller_is_one_line_naming_the_url(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]   # bound, never listening: connection refused
        with pytest.raises(InputError, match=rf"^http://127.0.0.1:{port}/tables/events: the controller did not "
                                             "answer .*curl <URL>/health"):
            fetch_controller(f"http://127.0.0.1:{port}", "events", tmp_path)


def test_files_and_a_controller_together_are_one_clear_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError, match="give either --controller with --table, or --table-config"):
        calibrate(tmp_path / "t.json", controller="http://127.0.0.1:9", table="events",
                  query_log=tmp_path / "q.log", out=tmp_path / "out")
    with pytest.raises(InputError, match=r"^--table: --controller URL and --table NAME go together"):
        calibrate(controller="http://127.0.0.1:9", query_log=tmp_path / "q.log", out=tmp_path / "out")
