"""Routings under one degraded server (``workbench.studies.degraded_routing``): the grid, its reading's
claims checked against the frame it reads, and facts computed by hand from the routing alone."""

from __future__ import annotations

import pandas as pd
import pytest

from workbench.analysis.plots import latency_by_routing_and_degradation
from workbench.analysis.readings import degraded_routing_reading
from workbench.errors import InputError
from workbench.scenario import load_scenario
from workbench.studies.degraded_routing import degradations, routing_under_degradation, routing_variants

SERVERS, TIMEOUT_MS = 4, 200.0
P50, P99 = "latency_ms.p50.value", "latency_ms.p99.value"


def _base() -> object:
    return load_scenario({
        "cluster": {"servers": SERVERS, "server": {"cores": 1}, "network": {"latency_ms": 0.1},
                    "broker": {"timeout_ms": TIMEOUT_MS}},
        "table": {"tableName": "t", "tableType": "OFFLINE", "segmentsConfig": {"replication": 2}},
        "workload": {"synthetic": {"segments_per_server": 4, "docs_per_segment": 1000}, "arrival": {"qps": 20.0}},
        "service": {"model": "deterministic", "mean_ms": 2},
        "simulation": {"duration_s": 10, "warmup_s": 0, "replications": 2, "seed": 3, "engine": "fast"},
    })


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    base = _base()
    return routing_under_degradation(base, routing_variants(base, SERVERS, 2, [2]), degradations("Server_1", 5))


def test_the_grid_is_every_routing_under_every_degradation_on_the_fast_engine(frame: pd.DataFrame) -> None:
    assert list(dict.fromkeys(frame["routing"])) == ["balanced", "2 groups of 2", "adaptive HYBRID",
                                                     "adaptive LATENCY", "adaptive NUM_INFLIGHT_REQ"]
    assert list(dict.fromkeys(frame["degradation"])) == ["none", "Server_1 slow x5", "Server_1 wedged"]
    assert len(frame) == 15 and set(frame["engine.name"]) == {"fast"}


def test_a_wedged_server_reaches_the_queries_its_routing_sends_to_it(frame: pd.DataFrame) -> None:
    """By hand: balanced routing over 16 segments, 2 replicas each on 4 servers, sends every query to
    every server, so every query waits for the wedged one until its timeout; replica-group routing sends
    query ``requestId`` to group ``requestId % 2``, so one query in two meets it (the record-level share
    against the routing is ``tests/validation/test_degraded.py``'s)."""
    wedged = frame[frame["degradation"] == "Server_1 wedged"].set_index("routing")
    assert wedged.loc["balanced", "servers_queried_mean"] == SERVERS
    assert wedged.loc["balanced", "partial_rate"] == 1.0
    assert wedged.loc["balanced", P50] >= TIMEOUT_MS
    # alternate queries, give or take one per replication and those still waiting on the wedged server when
    # the run ends (arrivals in its last timeout: qps x timeout per replication)
    queries, reps = wedged.loc["2 groups of 2", "queries"], wedged.loc["2 groups of 2", "replications"]
    assert abs(wedged.loc["2 groups of 2", "partial_rate"] - 0.5) <= reps * (1 + 20.0 * TIMEOUT_MS / 1000) / queries
    healthy = frame[frame["degradation"] == "none"]
    assert (healthy["partial_rate"] == 0).all() and (healthy[P99] < TIMEOUT_MS).all()


def test_the_reading_claims_what_the_frame_shows(frame: pd.DataFrame) -> None:
    facts = degraded_routing_reading(frame).facts
    cell = frame.set_index(["routing", "degradation"])
    leaders_everywhere = None
    for d, f in facts["degradations"].items():
        rows = cell.xs(d, level="degradation")
        best = rows[P99].idxmin()
        assert f["p99"]["best"] == best
        hi_b = rows.loc[best, "latency_ms.p99.ci_high"]
        overlapping = {r for r in rows.index if r != best and not hi_b < rows.loc[r, "latency_ms.p99.ci_low"]}
        assert set(f["leaders"]) == {best} | overlapping
        assert (f["p99"]["claim"] == "separates") == (not overlapping)
        leaders_everywhere = set(f["leaders"]) if leaders_everywhere is None else leaders_everywhere & set(f["leaders"])
        for r in facts["protects"]:
            assert f["p50"][r] - f["p50"]["balanced"] == pytest.approx(facts["p50_cost_ms"][r][d])
            assert f["p50"][r] == rows.loc[r, P50]
    assert set(facts["protects"]) == leaders_everywhere
    for r in facts["protects"]:
        healthy = cell.loc[(r, "none"), P50] - cell.loc[("balanced", "none"), P50]
        assert facts["healthy_p50_cost_ms"][r] == pytest.approx(healthy)


def test_the_plot_draws_p50_and_p99_per_routing(frame: pd.DataFrame) -> None:
    fig = latency_by_routing_and_degradation(frame)
    assert [ax.get_title() for ax in fig.axes] == ["p50", "p99"]
    assert len(fig.axes[1].patches) == len(frame)


def test_replica_groups_that_do_not_split_the_servers_are_one_error_naming_the_key() -> None:
    with pytest.raises(InputError, match="replica_groups"):
        routing_variants(_base(), SERVERS, 2, [3])


def test_no_routing_protects_when_the_leaders_differ_by_degradation() -> None:
    """By hand: a leads alone when slow (its interval below b's), b alone when wedged: neither protects."""
    rows = [("a", "none", 5, 9, 8, 10), ("b", "none", 7, 12, 11, 13),
            ("a", "slow", 6, 20, 19, 21), ("b", "slow", 8, 40, 35, 45),
            ("a", "wedged", 6, 900, 800, 1000), ("b", "wedged", 8, 30, 25, 35)]
    frame = pd.DataFrame(rows, columns=["routing", "degradation", P50, P99, "latency_ms.p99.ci_low",
                                        "latency_ms.p99.ci_high"])
    reading = degraded_routing_reading(frame, baseline="a")
    assert reading.facts["protects"] == []
    assert reading.text.startswith("No routing leads on p99 under every degradation")
    assert [d["leaders"] for d in reading.facts["degradations"].values()] == [["a"], ["b"]]
    # b's interval touching a's makes both leaders when slow: b then leads everywhere, at +2 ms healthy p50
    frame.loc[3, "latency_ms.p99.ci_low"] = 21
    reading = degraded_routing_reading(frame, baseline="a")
    assert reading.facts["protects"] == ["b"]
    assert reading.facts["healthy_p50_cost_ms"] == {"b": 2.0}
    assert "(+2.0 ms)" in reading.text
