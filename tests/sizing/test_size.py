"""``workbench size`` against ``--exhaustive`` on three spaces built here, bad input one line each.

The table: 24 segments (one per stream partition of a small generated workload, fixed whatever the server
count, so more servers share the same work), two replicas, every query touching every segment at 2 ms each
on one core. At 60 queries/s that is 60 x 24 x 2 ms x 2 / 2 = 2.9 core-seconds per second... spread over
the replicas' servers: one server per segment replica routed, 60 x 24 x 2 ms = 2.88 s of work per second
for the cluster, so 2 servers are saturated (1.44 each) and p99 falls as servers are added.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from workbench.cli import main
from workbench.errors import InputError
from workbench.report.data import load_sizing_data, search_note
from workbench.sizing import size

SCENARIO: dict[str, Any] = {
    "name": "tiny",
    "cluster": {"servers": 4, "server": {"cores": 1}, "network": {"latency_ms": 0}, "broker": {"overhead_ms": 0},
                "gc": {"collector": "none"}},
    "table": {"tableName": "events", "tableType": "OFFLINE", "segmentsConfig": {"replication": 2}},
    "workload": {"generate": {"events": 2000, "keys": 100, "partitions": 24, "span_s": "1h", "segment_rows": 100,
                              "seed": 3, "queries": {"duration_s": 10}},
                 "data": "data", "arrival": {"process": "poisson", "qps": 60}},
    "service": {"model": "exponential", "mean_ms": 2},
    "simulation": {"duration_s": 6, "warmup_s": 1, "replications": 3, "seed": 1, "engine": "fast",
                   "records": "latency"},
    "slo": {"p99_ms": 60, "survive": "none"},
}


@pytest.fixture(scope="module")
def workload(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The generated workload (no Spark), once for the module."""
    from workbench.scenario import load_scenario
    from workbench.workload.pure import generate_local

    root = tmp_path_factory.mktemp("size")
    sc = load_scenario(SCENARIO, base_dir=root)
    assert sc.workload.generate is not None
    generate_local(sc.workload.generate, root / "data", table="events", table_config=sc.table, progress=False)
    return root


def _scenario(root: Path, name: str, sizing: dict[str, Any], **slo: Any) -> Path:
    data = copy.deepcopy(SCENARIO)
    data["slo"].update(slo)
    data["sizing"] = sizing
    path = root / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _both(path: Path, out: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    found = size(path, out / "search", parallel=1, studies=False)
    grid = size(path, out / "grid", exhaustive=True, parallel=1, studies=False)
    return found, grid


def _same_answer(found: dict[str, Any], grid: dict[str, Any]) -> None:
    assert found["recommendation"] == grid["recommendation"]
    assert found["recommended_point"] == grid["recommended_point"]
    verdicts = {e["point"]: (e["verdict"], e["p99_high_ms"]) for e in grid["evaluated"]}
    assert all(verdicts[e["point"]] == (e["verdict"], e["p99_high_ms"]) for e in found["evaluated"])
    assert found["runs"] < grid["runs"] and found["simulated_queries"] < grid["simulated_queries"]
    assert grid["space"]["evaluated"] == grid["space"]["shapes"]


def test_a_monotone_space(workload: Path, tmp_path: Path) -> None:
    """Servers 2..6 on 1 or 2 cores: p99 falls with servers on each line (the work is fixed)."""
    path = _scenario(workload, "monotone", {"servers": {"min": 2, "max": 6}, "vary": {"cluster.server.cores": [1, 2]}})
    found, grid = _both(path, tmp_path)
    _same_answer(found, grid)
    assert found["recommendation"] is not None
    assert found["space"]["evaluated"] < found["space"]["shapes"]
    # the report's title line says how the shapes were chosen, from sizing.json
    note = search_note(tmp_path / "search")
    assert note is not None and note.startswith(f"{found['space']['evaluated']} of {found['space']['shapes']} shapes "
                                                f"simulated by search in {found['runs']} runs, the others ruled out")


def test_replica_groups_win_only_above_a_server_count(workload: Path, tmp_path: Path) -> None:
    """To survive a replica group lost, the groups left must carry the load alone: a balanced layout cannot
    promise it at any size, and 2 groups only from the server count at which one group meets the SLO."""
    path = _scenario(workload, "groups", {"servers": {"min": 4, "max": 12}, "replica_groups": [0, 2]},
                     survive="replica_group")
    found, grid = _both(path, tmp_path)
    _same_answer(found, grid)
    rec = grid["recommendation"]
    assert rec is not None and rec["table"]["routing"]["instanceSelectorType"] == "replicaGroup"
    meeting = [e for e in grid["evaluated"] if e["verdict"] == "meets"]
    cheaper = [e for e in meeting if e["servers"] < rec["cluster.servers"]]
    assert cheaper and not any(e["survives"] for e in cheaper)  # cheaper shapes meet, but do not survive


def test_the_cheapest_shape_meeting_the_slo_breaks_with_a_server_lost(workload: Path, tmp_path: Path) -> None:
    path = _scenario(workload, "loss", {"servers": {"min": 4, "max": 12}}, survive="server")
    found, grid = _both(path, tmp_path)
    _same_answer(found, grid)
    meeting = sorted((e for e in grid["evaluated"] if e["verdict"] == "meets"), key=lambda e: e["servers"])
    assert meeting[0]["survives"] is False and found["recommendation"]["cluster.servers"] > meeting[0]["servers"]
    assert found["failure_case_runs"] < grid["failure_case_runs"]


def _calibrated(workload: Path, root: Path, slo_ms: float, se_ms: float, draws: int) -> Path:
    """The cost model at 2 ms per segment, written as ``workbench calibrate`` writes a calibrated scenario:
    ``calibration.json`` beside it, whose fit puts a standard error of ``se_ms`` on the per-segment cost."""
    root.mkdir()
    data = copy.deepcopy(SCENARIO)
    data["workload"]["data"] = str(workload / "data")
    data["service"] = {"model": "cost", "per_segment_ms": 2.0, "ns_per_doc": 0.0, "variability": 0.3}
    data["slo"]["p99_ms"] = slo_ms
    data["sizing"] = {"servers": {"min": 2, "max": 10}, "vary": {"cluster.server.cores": [1, 2]}, "draws": draws}
    (root / "calibration.json").write_text(json.dumps({"fit": {
        "parameters": {"service.per_segment_ms": {"value": 2.0, "se": se_ms},
                       "service.ns_per_doc": {"value": 0.0, "se": None}},
        "covariance": {"keys": ["service.per_segment_ms"], "matrix": [[se_ms**2]]},
        "variability": {"value": 0.3, "se": 0.0}}}))
    path = root / "calibrated.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_calibrated_model_draws_its_parameters_only_for_shapes_that_could_win(workload: Path,
                                                                              tmp_path: Path) -> None:
    """A per-segment cost known to within 20% (se 0.4 ms of 2 ms): the cheapest shape meeting the SLO at the
    fitted cost does not across the draws, so both modes recommend a bigger one, by the report's rule; the
    search ran the draws only for shapes no dearer than the answer, the grid for every shape meeting the SLO."""
    draws = 4
    path = _calibrated(workload, tmp_path / "calibrated", slo_ms=35, se_ms=0.4, draws=draws)
    found, grid = _both(path, tmp_path)
    _same_answer(found, grid)
    robust = {e["point"]: e["robust"] for e in grid["evaluated"]}
    assert all(e["robust"] == robust[e["point"]] for e in found["evaluated"] if e["robust"] is not None)
    assert found["calibration"]["draws"] == draws and found["runs"] == (
        found["shape_runs"] + found["failure_case_runs"] + found["draw_runs"])
    # the draws decided: the cheapest shape meeting the SLO at the fitted cost is not robust; the answer is
    meets = sorted((e for e in grid["evaluated"] if e["verdict"] == "meets"),
                   key=lambda e: (e["cost"], e["p99_high_ms"]))
    assert meets[0]["p99_high_ms"] <= 35 < meets[0]["p99_model_high_ms"] and meets[0]["robust"] is False
    rec = next(e for e in found["evaluated"] if e["point"] == found["recommended_point"])
    assert rec["robust"] is True and rec["p99_model_high_ms"] <= 35 and rec["cost"] > meets[0]["cost"]
    # draws only for candidates: every drawn shape is no dearer than the answer; the grid drew every meeting one
    drawn = [e for e in found["evaluated"] if e["robust"] is not None]
    assert found["draw_runs"] == draws * len(drawn) and all(e["cost"] <= rec["cost"] for e in drawn)
    assert grid["draw_runs"] == draws * len(meets) and found["draw_runs"] < grid["draw_runs"]
    # the report reads the draws from the point: its own rule (robust) agrees, and it carries the draw count
    d = load_sizing_data(tmp_path / "search")
    row = d.combined.set_index("point").loc[found["recommended_point"]]
    assert bool(row["robust"]) and row["model_uncertainty.draws"] == draws


def test_no_shape_meets_the_slo(workload: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Not an error: exit 0, no recommendation, the closest shape and how far it is from the SLO."""
    path = _scenario(workload, "none", {"servers": {"min": 2, "max": 4}}, p99_ms=1)
    assert main(["size", str(path), "--out", str(tmp_path / "out"), "--parallel", "1", "--quiet",
                 "--no-studies"]) == 0
    record = yaml.safe_load((tmp_path / "out" / "sizing.json").read_text())
    assert record["recommendation"] is None
    closest = record["closest"]
    assert closest["over_slo_ms"] == pytest.approx(closest["p99_high_ms"] - 1, abs=1e-3) and closest["over_slo_ms"] > 0
    assert "no shape meets the SLO" in capsys.readouterr().out


def _spark_tasks(spark: Any) -> int:
    """Tasks of every job the session has run (its status store: what the Spark UI lists)."""
    jobs = spark.sparkContext._jsc.sc().statusStore().jobsList(None)
    return sum(int(jobs.apply(i).numTasks()) for i in range(jobs.size()))


@pytest.mark.spark
def test_batches_as_spark_tasks_give_the_local_pools_answer(workload: Path, tmp_path: Path, spark: Any) -> None:
    """``master=``: each batch is a Spark job of one task per shape (the sweep's SparkRunner, on the session's
    local Spark), in batches as wide as twice this machine's cores instead of the one worker's one shape: the
    same recommendation and the same verdict on every shape both ran (where it ran does not change the answer)."""
    path = _scenario(workload, "spark", {"servers": {"min": 4, "max": 12}}, survive="server")
    local = size(path, tmp_path / "local", parallel=1, studies=False)
    tasks_before = _spark_tasks(spark)
    on_spark = size(path, tmp_path / "spark", master=spark.sparkContext.master, studies=False)
    assert _spark_tasks(spark) - tasks_before == on_spark["shape_runs"]  # one Spark task per shape run
    assert on_spark["recommendation"] == local["recommendation"] is not None
    assert on_spark["recommended_point"] == local["recommended_point"]
    verdicts = {e["point"]: (e["verdict"], e["p99_high_ms"], e["survives"]) for e in local["evaluated"]}
    both = [e for e in on_spark["evaluated"] if e["point"] in verdicts]
    assert both and all(verdicts[e["point"]] == (e["verdict"], e["p99_high_ms"], e["survives"]) for e in both)
    assert not on_spark["failed"]
    assert spark.sparkContext._jsc is not None  # the shared session was borrowed, not stopped


@pytest.mark.parametrize(("sizing", "where", "says"), [
    ({"servers": {"min": 8, "max": 4}}, "sizing.servers", "min 8 is above max 4"),
    ({"servers": {"min": 3, "max": 3}, "replica_groups": [2]}, "sizing", "no shape"),
    ({"servers": {"min": 2, "max": 4}, "instances": ["x9.huge"]}, "sizing.instances", "not in the price table"),
    ({"servers": {"min": 2, "max": 4}, "vary": {"cluster.server.heap": []}}, "sizing.vary.cluster.server.heap",
     "non-empty list"),
    ({"servers": {"min": 2, "max": 4}, "vary": {"workload.arrival.qps": [10, 20]}}, "sizing.vary.workload",
     "load"),
    ({"servrs": {"min": 2, "max": 4}}, "sizing.servrs", "unknown key"),
    ({"servers": {"min": 2, "max": 4}, "instances": []}, "sizing.instances", "non-empty list"),
    # every shape left out: no instance type of the price table has 512 vCPUs
    ({"servers": {"min": 2, "max": 4}, "vary": {"cluster.server.cores": [512]}}, "sizing", "no shape"),
    ({"servers": {"min": 2, "max": 4}, "draws": -1}, "sizing.draws", "whole number"),
])
def test_bad_input_names_the_key(sizing: dict[str, Any], where: str, says: str, tmp_path: Path) -> None:
    path = _scenario(tmp_path, "bad", sizing)
    with pytest.raises(InputError) as err:
        size(path, tmp_path / "out", parallel=1, studies=False)
    assert err.value.where.startswith(where) and says in err.value.problem
    assert "\n" not in str(err.value)


def test_an_unreadable_calibration_names_its_file(tmp_path: Path) -> None:
    path = _scenario(tmp_path, "calibrated", {"servers": {"min": 2, "max": 4}})
    (tmp_path / "calibration.json").write_text('{"fit": {}}')
    with pytest.raises(InputError) as err:
        size(path, tmp_path / "out", parallel=1, studies=False)
    assert err.value.where.endswith("calibration.json") and "workbench calibrate" in err.value.problem
