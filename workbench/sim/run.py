"""``simulate(scenario)``: run the replications of a scenario and collect flat records."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from workbench.errors import ScenarioError
from workbench.scenario import Scenario, load_scenario
from workbench.sim.layout import build_layout
from workbench.sim.model import ClusterModel, ReplicationOutput
from workbench.sim.records import QUERY_COLUMNS, Result
from workbench.sim.streams import Streams

__all__ = ["simulate"]


def _queries_frame(rep: int, out: ReplicationOutput) -> pd.DataFrame:
    n = len(out.arrival_ms)
    return pd.DataFrame({
        "replication": np.full(n, rep, dtype=np.int32),
        "query_id": np.arange(n, dtype=np.int64),
        "arrival_s": np.asarray(out.arrival_ms) / 1000.0,
        "latency_ms": np.asarray(out.latency_ms, dtype=float),
        "servers_queried": np.asarray(out.servers_queried, dtype=np.int32),
        "segments_queried": np.asarray(out.segments_queried, dtype=np.int32),
        "segments_pruned": np.asarray(out.segments_pruned, dtype=np.int32),
        "partial": np.asarray(out.partial, dtype=bool),
        "gc_delayed": np.asarray(out.gc_delayed, dtype=bool),
        "queue_wait_ms": np.asarray(out.queue_wait_ms, dtype=float),
        "cache_hit": pd.Series(out.cache_hit, dtype="string"),
    }, columns=list(QUERY_COLUMNS))


def _servers_frame(rep: int, model: ClusterModel) -> pd.DataFrame:
    window = model.horizon_ms
    rows = [
        {"replication": rep, "server": model.layout.servers[i], "requests": s.requests,
         "busy_ms": s.busy_ms, "cores": s.cores, "utilisation": s.busy_ms / (s.cores * window),
         "failed_requests": s.failed, "segment_cache_hits": model.segment_caches[i].hits,
         "paused_ms": s.pauses.overlap(0.0, window)}
        for i, s in enumerate(model.servers)
    ]
    return pd.DataFrame(rows)


def _pauses_frame(rep: int, model: ClusterModel) -> pd.DataFrame:
    frames = [
        pd.DataFrame({"replication": rep, "server": model.layout.servers[i],
                      "start_s": s.pauses.starts / 1000.0, "duration_ms": s.pauses.ends - s.pauses.starts})
        for i, s in enumerate(model.servers)
    ]
    cols = ["replication", "server", "start_s", "duration_ms"]
    return pd.concat(frames, ignore_index=True)[cols] if frames else pd.DataFrame(columns=cols)


def _failures_frame(rep: int, model: ClusterModel) -> pd.DataFrame:
    frames = [
        pd.DataFrame({"replication": rep, "server": model.layout.servers[i],
                      "down_s": s.crashes.starts / 1000.0, "up_s": s.crashes.ends / 1000.0})
        for i, s in enumerate(model.servers)
    ]
    return pd.concat(frames, ignore_index=True)[["replication", "server", "down_s", "up_s"]]


def _replay_queries(sc: Scenario, data: Path | None) -> pd.DataFrame | None:
    if sc.workload.arrival.process != "replay":
        return None
    path = None if data is None else Path(data) / "queries.parquet"
    if path is None or not path.is_file():
        raise ScenarioError("workload.arrival.process",
                            "replay needs a workload directory with queries.parquet (simulate --data DIR)")
    return pd.read_parquet(path, columns=["arrival_s", "sql"]).sort_values("arrival_s", kind="stable")


def simulate(
    scenario: Scenario | str | Path | dict[str, Any],
    seed: int | None = None,
    *,
    data: Path | None = None,
    progress: Callable[[int], None] | None = None,
) -> Result:
    """Run every replication of ``scenario`` and return its records.

    Parameters
    ----------
    scenario
        A :class:`~workbench.scenario.Scenario`, or anything :func:`~workbench.load_scenario` reads.
    seed
        Overrides ``simulation.seed``. Replication ``r`` uses child ``r`` of ``SeedSequence(seed)``,
        so replications are independent and a run is reproducible.
    data
        A workload directory from ``workbench generate`` (or an import): its ``segments.parquet`` is
        the table's segments, and with ``workload.arrival.process: replay`` its ``queries.parquet``
        gives arrival times and SQL. Without it the scenario's synthetic layout is used.
    progress
        Called with the replication index after each replication (the CLI's progress bar).
    """
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    if data is None and sc.workload.data is not None:
        data = sc.base_dir / sc.workload.data
    base_seed = sc.simulation.seed if seed is None else seed
    layout = build_layout(sc, data)
    replay = _replay_queries(sc, data)
    children = np.random.SeedSequence(base_seed).spawn(sc.simulation.replications)
    queries, servers, pauses, windows, failures = [], [], [], [], []
    for rep, child in enumerate(children):
        model = ClusterModel(sc, layout, Streams.spawn(child, layout.num_servers), replay)
        out = model.run()
        queries.append(_queries_frame(rep, out))
        servers.append(_servers_frame(rep, model))
        pauses.append(_pauses_frame(rep, model))
        failures.append(_failures_frame(rep, model))
        window_ms = model.horizon_ms - model.warmup_ms
        windows.append({"replication": rep, "window_s": window_ms / 1000.0,
                        "mean_in_flight": out.in_flight_area / window_ms})
        if progress is not None:
            progress(rep)
    return Result(
        queries=pd.concat(queries, ignore_index=True),
        servers=pd.concat(servers, ignore_index=True),
        gc_pauses=pd.concat(pauses, ignore_index=True),
        windows=pd.DataFrame(windows),
        failures=pd.concat(failures, ignore_index=True),
        parameters={"scenario": sc.to_dict(), "seed": base_seed},
    )
