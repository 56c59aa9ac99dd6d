"""Server crashes: requests on a crashed server fail, and the broker routes around it as Pinot's does."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from workbench.sim.run import simulate


def scenario(replication: int) -> dict[str, Any]:
    return {
        "cluster": {"servers": 4, "server": {"cores": 2}, "network": {"latency_ms": 0.1},
                    "failures": {"mtbf_s": 60, "mttr_s": 10}},
        "table": {"tableName": "t", "tableType": "OFFLINE", "segmentsConfig": {"replication": replication}},
        "workload": {"synthetic": {"segments_per_server": 2, "docs_per_segment": 1000}, "arrival": {"qps": 50}},
        "service": {"model": "deterministic", "mean_ms": 2},
        "simulation": {"duration_s": 600, "warmup_s": 10, "replications": 2, "seed": 9},
    }


def _down_mask(result: Any, min_down: int, exact: bool = False) -> np.ndarray:
    """Per query: were ``min_down`` (or more) servers down for its whole life (arrival to reply)?

    With ``exact``, exactly that many, and no other server crashed while the query was in flight.
    """
    q = result.queries
    mask = np.zeros(len(q), dtype=bool)
    for rep, group in q.groupby("replication"):
        f = result.failures[result.failures["replication"] == rep]
        start = group["arrival_s"].to_numpy()
        end = start + group["latency_ms"].to_numpy() / 1000.0
        count = np.zeros(len(group), dtype=int)
        crashed_during = np.zeros(len(group), dtype=bool)
        for down, up in zip(f["down_s"], f["up_s"], strict=True):
            count += (down <= start) & (end < up)
            crashed_during |= (start < down) & (down <= end)
        hit = (count == min_down) & ~crashed_during if exact else count >= min_down
        mask[group.index.to_numpy()] = hit
    return mask


def test_without_replicas_a_down_server_makes_replies_partial() -> None:
    r = simulate(scenario(1))
    assert len(r.failures) > 10
    down = _down_mask(r, 1)
    assert down.sum() > 100
    assert r.queries.loc[down, "partial"].all()  # its segments are unavailable
    assert not r.queries.loc[~down, "partial"].all()


def test_with_replicas_the_broker_routes_around_a_down_server() -> None:
    r = simulate(scenario(2))
    one_down = _down_mask(r, 1, exact=True)
    assert one_down.sum() > 100
    q = r.queries[one_down]
    assert not q["partial"].any()  # every segment has a live replica, and the selector uses it
    assert (q["servers_queried"] <= 3).all()
    # in-flight requests on a crashing server fail: some queries overlapping a crash are partial
    assert r.queries["partial"].sum() > 0
    assert int(r.servers["failed_requests"].sum()) > 0


def test_failure_schedules_are_reproducible() -> None:
    a, b = simulate(scenario(2)), simulate(scenario(2))
    pd.testing.assert_frame_equal(a.failures, b.failures)


def _down_all_run(replication: int, down: list[str]) -> Any:
    sc = scenario(replication)
    sc["cluster"]["failures"] = {"down": down}
    sc["simulation"] = {"duration_s": 60, "warmup_s": 2, "replications": 1, "seed": 9}
    return simulate(sc)


def test_a_server_down_all_run_gets_no_request_and_its_replicas_carry_its_share() -> None:
    whole = _down_all_run(2, [])
    r = _down_all_run(2, ["Server_1"])
    requests = r.servers.set_index("server")["requests"]
    assert requests["Server_1"] == 0
    assert not r.queries["partial"].any()  # every segment keeps a live replica
    # the same segments are scanned by three servers instead of four: none is lost, so the work done is
    # the same (a segment costs what it costs on any server), and the survivors do Server_1's share
    busy = r.servers.set_index("server")["busy_ms"]
    assert busy.sum() == pytest.approx(whole.servers["busy_ms"].sum(), rel=0.01)
    assert busy.drop("Server_1").mean() > whole.servers["busy_ms"].mean()
    assert (requests.drop("Server_1") >= whole.servers.set_index("server")["requests"].drop("Server_1")).all()
    f = r.failures
    assert f["server"].tolist() == ["Server_1"] and f["down_s"].iloc[0] == 0.0


def test_without_replicas_a_server_down_all_run_leaves_every_query_partial() -> None:
    r = _down_all_run(1, ["Server_0"])
    # every query scans every segment, and the down server's segments have no other replica
    assert r.queries["partial"].all()
    assert (r.queries["servers_queried"] == 3).all()
