"""Calibration from Apache Pinot's own broker log: the model's servers do the work Pinot's servers measured.

``workbench measure`` serves a small table on Pinot 1.5.1's server and broker processes (servers measuring their
threads' time, as ``pinot.server.instance.enableThreadCpuTimeMeasurement`` makes them) at one rate; ``calibrate``
reads only its broker log; the calibrated scenario replays that log. The expected value is Pinot's: the work its
servers reported in their responses (``threadCpuTimeNs + systemActivitiesCpuTimeNs +
responseSerializationCpuTimeNs`` per server, summed from ``records.parquet``, not from the broker log the fit
read). The model's servers must be busy that long, within 25% (the model redraws each segment's run with the
fitted variability; three replications). Fitted to timeMs alone, the model put 3.2 times
Pinot's measured work on its server (``docs/validation.md``, at 11.7/s). No assertion is about how fast anything was.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from workbench.api import load_generate_spec, measure, run_scenario
from workbench.calibrate import CalibrateOptions, calibrate
from workbench.groundtruth.scenario import offline_twin
from workbench.scenario import load_scenario
from workbench.workload.pure import generate_local

ROOT = Path(__file__).resolve().parents[2]
RATE, QUERIES = 20.0, 150


def test_the_calibrated_servers_are_as_busy_as_pinots_servers_measured(tmp_path: Path) -> None:
    sc = load_scenario(ROOT / "scenarios" / "default.yaml").with_overrides({
        "workload.generate.events": 20_000, "workload.generate.segment_rows": 2000,
        "workload.generate.queries.duration_s": 60, "cluster.servers": 1, "cluster.server.cores": 1})
    data = sc.to_dict()
    table_config = offline_twin(json.loads((ROOT / "scenarios" / "tables" / "events_REALTIME.json").read_text()))
    table_config["segmentsConfig"]["replication"] = "1"   # one server, pinned to a core of its own
    (tmp_path / "events_OFFLINE.json").write_text(json.dumps(table_config))
    data["table"] = str(tmp_path / "events_OFFLINE.json")
    data["workload"]["data"] = str(tmp_path / "workload")
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps(data))
    spec, table, _, config = load_generate_spec(load_scenario(scenario))
    generate_local(spec, tmp_path / "workload", table=table, table_config=config, progress=False)
    measure(scenario, tmp_path / "measured", rates=[RATE], queries=QUERIES, warmup=30, overwrite=True)
    m = tmp_path / "measured"
    rate = m / "rate-20"

    records = pd.read_parquet(rate / "records.parquet")
    # The servers' work as Pinot's broker sums it over the servers of each query (its response's CPU counters).
    pinot_ms = float((records["offlineThreadCpuTimeNs"] + records["offlineSystemActivitiesCpuTimeNs"]
                      + records["offlineResponseSerializationCpuTimeNs"]).sum() / 1e6)
    assert pinot_ms > 0

    out = tmp_path / "calibrated"
    result = calibrate(m / "table_config.json", m / "schema.json", m / "segments.json", rate / "broker-querylog.log",
                       out, options=CalibrateOptions(servers=1, server_cores=1, backtest_queries=0, bootstrap=20))
    assert json.loads((out / "calibration.json").read_text())["fitted_to"] == "servers' measured work"
    assert result.fit.variability.sigma < 3.0

    run_scenario(out / "scenario.yaml", tmp_path / "replay", overwrite=True, overrides={"simulation.warmup_s": 0.0})
    servers = pd.read_parquet(tmp_path / "replay" / "servers.parquet")
    model_ms = float(servers.groupby("replication")["busy_ms"].sum().mean())
    assert 0.8 * pinot_ms <= model_ms <= 1.25 * pinot_ms, (model_ms, pinot_ms)
