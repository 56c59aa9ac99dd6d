"""The pieces of the fit, each against a hand computation or a closed form."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats

from workbench import defaults as D
from workbench.calibrate.critical_path import draws, makespan, mean_factor
from workbench.calibrate.features import LogFeatures, log_features, server_stats, sql_shapes
from workbench.calibrate.fit import FitOptions, ServiceFit, design, fit_service
from workbench.calibrate.scenario_file import Entry, render_scenario
from workbench.calibrate.shape import infer_shape
from workbench.errors import InputError
from workbench.pinot.execution_config import ServerQueryConfig
from workbench.pinot.table_config import TableConfig


def test_work_stealing_makespan_by_hand() -> None:
    # tasks free at 3 and 1; the third segment (2) goes to the second task (1 + 2 = 3), the fourth (1) to
    # whichever frees first at 3: makespan 4
    assert makespan(np.array([[3.0, 1.0, 2.0, 1.0]]), 2).tolist() == [4.0]
    assert makespan(np.array([[3.0, 1.0, 2.0]]), 5).tolist() == [3.0]     # more tasks than segments: the longest
    assert makespan(np.array([[3.0, 1.0, 2.0]]), 1).tolist() == [6.0]     # one task: the sum


def test_deterministic_rounds_are_the_slowest_servers_ceiling() -> None:
    assert draws(((9, 4, 2), (8, 4, 1)), 0.0, samples=3).tolist() == [3.0, 3.0, 3.0]


@pytest.mark.parametrize("sigma", [0.3, 0.8])
def test_the_slower_of_two_segments_matches_the_lognormal_closed_form(sigma: float) -> None:
    # for two independent mean-1 lognormals of log-sigma s, E[max] = 2 Phi(s / sqrt 2)
    samples = 40_000
    got = draws(((1, 1, 2),), sigma, samples=samples, seed=3)
    expected = 2 * stats.norm.cdf(sigma / np.sqrt(2))
    assert abs(got.mean() - expected) < 4 * got.std() / np.sqrt(samples)
    assert mean_factor(((1, 1, 1),), sigma, samples=samples) == pytest.approx(1.0, abs=4 * sigma / np.sqrt(samples))


def _log(rows: list[dict[str, object]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows)
    for column in ("num_servers_responded", "num_entries_scanned_in_filter", "num_entries_scanned_post_filter"):
        frame[column] = frame.get(column, frame["num_servers_queried"] if "responded" in column else 0)
    return frame.assign(arrival_s=np.arange(len(frame), dtype=float))


def test_features_spread_segments_over_servers_and_count_rows_by_the_models_rule() -> None:
    sqls = ["SELECT c, COUNT(*) FROM t GROUP BY c", "SELECT COUNT(*) FROM t", "SELECT * FROM t LIMIT 50"]
    frame = _log([{"sql": s, "time_ms": 10, "num_servers_queried": 3, "num_segments_queried": 7,
                   "num_docs_scanned": 7000} for s in sqls])
    f = log_features(frame, sql_shapes(frame["sql"], frozenset()), ServerQueryConfig.from_properties({}, cores=8))
    # 7 segments on 3 servers: one holds 3, two hold 2; a group-by runs one task per segment (min(s, 16) <= 8
    # cores), the others min(s, 4) tasks
    assert f.shapes[f.shape_id[0]] == ((3, 3, 1), (2, 2, 2))
    assert f.largest.tolist() == [3, 3, 3]
    # 1000 docs per segment: a group-by returns min(docs, 5000) per server, an aggregation one row per server,
    # a selection min(docs, LIMIT 50) per server
    assert f.rows.tolist() == [3000 + 2 * 2000, 3, 150]
    assert f.kind.tolist() == ["group-by", "aggregation", "selection"]


def test_server_stats_of_the_old_four_field_format() -> None:
    frame = pd.DataFrame({"server_stats": ["(Server=SubmitDelayMs,ResponseDelayMs,ResponseSize,DeserializationTimeMs)"
                                           ";Server_1=1,30,200,0;192.168.32.8_R=1,8,3678,0"]})
    slowest, hosts = server_stats(frame)
    assert slowest.tolist() == [30.0] and hosts == {"Server_1", "192.168.32.8"}


def _exact(values: dict[str, float], with_empty: bool) -> LogFeatures:
    """Queries whose logged time is exactly the model's expected time (no spread, no clock)."""
    rng = np.random.default_rng(4)
    n = 600
    servers = rng.integers(1, 5, n)
    segments = servers * rng.integers(1, 9, n)
    if with_empty:
        servers[:30] = segments[:30] = 0
    config = ServerQueryConfig.from_properties({}, cores=8)
    group_by = rng.random(n) < 0.3
    shapes: dict[tuple[tuple[int, int, int], ...], int] = {}
    ids = []
    for s, n_srv, gb in zip(segments.tolist(), servers.tolist(), group_by.tolist(), strict=True):
        shape = ((s // n_srv, min(config.tasks(s // n_srv, gb), 8), n_srv),) if s else ()
        ids.append(shapes.setdefault(shape, len(shapes)))
    docs = segments * rng.integers(100_000, 2_000_000, n)
    f = LogFeatures(np.zeros(n), servers, servers.astype(float), segments, docs.astype(float), np.zeros(n),
                    np.zeros(n), group_by, rng.integers(1, 20_000, n).astype(float),
                    np.where(segments > 0, segments // np.maximum(servers, 1), 0), np.array(["aggregation"] * n),
                    np.array(ids), tuple(shapes), np.arange(n, dtype=float))
    g = np.array([draws(s, 0.0, 1)[0] for s in f.shapes])[f.shape_id]
    x, offset = design(f, g, 0.25)
    keys = [k for k, _, _ in __import__("workbench.calibrate.fit", fromlist=["FIT_PARAMETERS"]).FIT_PARAMETERS]
    time_ms = x @ np.array([values[k] for k in keys]) + offset
    return LogFeatures(time_ms, *(getattr(f, name) for name in (
        "servers", "responded", "segments", "docs", "entries_in_filter", "entries_post_filter", "group_by", "rows",
        "largest", "kind", "shape_id", "shapes", "arrival_s")))


TRUTH = {"cluster.broker.overhead_ms": 0.7, "service.per_request_ms": 0.4, "service.per_segment_ms": 0.25,
         "service.ns_per_doc": 12.0, "service.merge_ms_per_segment": 0.03, "cluster.broker.reduce_ms_per_server": 0.2,
         "cluster.broker.reduce_ms_per_row": 0.0004}


def test_a_noiseless_log_gives_back_its_costs_exactly_and_no_variability() -> None:
    fit = fit_service(_exact(TRUTH, with_empty=True), FitOptions(bootstrap=20))
    for key, true in TRUTH.items():
        assert fit.value(key) == pytest.approx(true, rel=1e-6), key
    assert fit.variability.sigma == 0.0 and "clock" in fit.variability.note
    assert fit.quality["r2"] == pytest.approx(1.0)


def test_without_queries_that_skip_the_servers_the_broker_overhead_is_held() -> None:
    fit = fit_service(_exact(TRUTH, with_empty=False), FitOptions(bootstrap=20))
    overhead = fit.parameter("cluster.broker.overhead_ms")
    assert not overhead.fitted and overhead.value == 1.0 and "cannot be told" in overhead.source
    # the per-request cost takes the rest of the per-query constant
    assert fit.value("service.per_request_ms") == pytest.approx(0.7 + 0.4 - 1.0, abs=1e-6)


def _one_server(constant_ms: float, ns_per_doc: float) -> LogFeatures:
    """A noiseless log where every query reached one server and its 4 segments (on 4 worker tasks, so the slowest
    server's makespan is one segment's work) and returned 1 row: the per-query constant columns (broker overhead,
    per request, per segment, merge, reduce per server and per row) cannot be told apart, only the documents vary.
    Each query's ``timeMs`` is ``constant_ms`` plus one segment's documents at ``ns_per_doc``."""
    n = 400
    docs = 4.0 * np.random.default_rng(1).integers(20_000, 60_000, n)
    one = np.ones(n, dtype=np.int64)
    return LogFeatures(constant_ms + ns_per_doc * 1e-6 * docs / 4, one, one.astype(float), 4 * one, docs,
                       np.zeros(n), np.zeros(n), np.zeros(n, dtype=bool), one.astype(float), 4 * one,
                       np.array(["aggregation"] * n), np.zeros(n, dtype=np.int64), (((4, 4, 1),),),
                       np.arange(n, dtype=float))


#: The per-query constant the held defaults charge each query of :func:`_one_server`, by the model's formula: the
#: broker's overhead, one segment's makespan, 4 segments merged, one server answered, one row returned.
HELD_DEFAULTS = {"cluster.broker.overhead_ms": D.BROKER_OVERHEAD_MS, "service.per_segment_ms": D.COST_PER_SEGMENT_MS,
                 "service.merge_ms_per_segment": D.COST_MERGE_MS_PER_SEGMENT,
                 "cluster.broker.reduce_ms_per_server": D.BROKER_REDUCE_MS_PER_SERVER,
                 "cluster.broker.reduce_ms_per_row": D.BROKER_REDUCE_MS_PER_ROW}
HELD_PER_QUERY_MS = (D.BROKER_OVERHEAD_MS + D.COST_PER_SEGMENT_MS * 1 + D.COST_MERGE_MS_PER_SEGMENT * 4
                     + D.BROKER_REDUCE_MS_PER_SERVER * 1 + D.BROKER_REDUCE_MS_PER_ROW * 1)   # 1.1705 ms


def _said_once(fit: ServiceFit) -> None:
    """No parameter is said to be both fitted and held, in its source or in a note about it."""
    for p in fit.parameters:
        held = p.source.startswith("held")
        assert p.fitted != held, p
        about = [n for n in fit.notes if n.startswith(f"{p.key}:")]
        assert all(("fitted" in n) != held for n in about), about


@pytest.mark.parametrize("ns_per_doc", [5.0, 50.0])
def test_held_defaults_above_what_the_log_leaves_them_are_scaled_to_it(ns_per_doc: float) -> None:
    """A cluster far cheaper per query than the defaults: 0.2 ms per query plus 5 ns per document, mean 0.40 ms,
    where the held defaults alone charge 1.17 ms (held there, the per-request and per-document costs were driven to 0
    and the model predicted 1.17 ms for every query); or plus 50 ns per document, mean 2.2 ms, where the held
    defaults fit under the mean but not under the 0.2 ms constant (the per-document cost came out at 36 ns). The log
    determines the per-query constant and the per-document cost: the held costs take the constant (scaled by
    0.2 / 1.1705), the per-request cost that carries their work comes to 0, the per-document cost comes back, and
    the model's mean time is the log's."""
    f = _one_server(0.2, ns_per_doc)
    fit = fit_service(f, FitOptions(bootstrap=20, network_ms=0.0))
    scale = 0.2 / HELD_PER_QUERY_MS
    for key, default in HELD_DEFAULTS.items():
        p = fit.parameter(key)
        assert p.value == pytest.approx(default * scale, rel=1e-6), key
        assert p.source.startswith("held below its default") and f"scaled by {scale:.3g}" in p.source, p.source
    assert fit.value("service.per_request_ms") == 0.0
    assert fit.value("service.ns_per_doc") == pytest.approx(ns_per_doc, rel=1e-6)
    assert fit.quality["predicted_mean_ms"] == pytest.approx(f.time_ms.mean(), rel=1e-6)
    _said_once(fit)


def test_held_defaults_the_log_can_afford_stay_at_their_defaults() -> None:
    f = _one_server(3.0, 5.0)                   # 3 ms per query: the held 1.17 ms fit under it
    fit = fit_service(f, FitOptions(bootstrap=20, network_ms=0.0))
    for key, default in HELD_DEFAULTS.items():
        assert fit.value(key) == default and fit.parameter(key).source.startswith("held at default"), key
    # the per-request cost carries the rest of the constant, as before
    assert fit.value("service.per_request_ms") == pytest.approx(3.0 - HELD_PER_QUERY_MS, rel=1e-6)
    assert fit.value("service.ns_per_doc") == pytest.approx(5.0, rel=1e-6)
    _said_once(fit)


def test_the_cluster_shape_from_server_stats_fan_out_or_the_user() -> None:
    log = pd.DataFrame({"num_servers_queried": [2, 5, 3]})
    balanced = TableConfig.from_json({"tableName": "t", "tableType": "OFFLINE", "segmentsConfig": {"replication": 2}})
    groups = TableConfig.from_json({"tableName": "t", "tableType": "OFFLINE", "segmentsConfig": {"replication": 2},
                                    "routing": {"instanceSelectorType": "replicaGroup"}})
    assert infer_shape(log, {"a", "b", "c", "d"}, balanced).servers == 4
    assert infer_shape(log, set(), balanced).servers == 5
    assert infer_shape(log, set(), groups).servers == 10
    assert infer_shape(log, set(), balanced, servers=7).servers == 7
    with pytest.raises(InputError, match="cannot hold 2 replicas"):
        infer_shape(log, {"a"}, balanced)


def test_the_scenario_text_nests_keys_and_keeps_every_comment() -> None:
    text = render_scenario(["head"], [Entry("cluster.servers", 3, "from the log"),
                                      Entry("cluster.gc", {"collector": "none"}, "DEFAULT: no GC logs"),
                                      Entry("service.ns_per_doc", 8.5, "fitted: ± 0.1 (1 s.e.)")])
    assert yaml.safe_load(text) == {"cluster": {"servers": 3, "gc": {"collector": "none"}},
                                    "service": {"ns_per_doc": 8.5}}
    assert "# from the log" in text and "# DEFAULT: no GC logs" in text and "# fitted: ± 0.1" in text


def test_back_test_kinds_follow_each_replayed_query_even_within_one_millisecond() -> None:
    from workbench.calibrate.backtest import _with_kinds

    # the log out of order, two queries in the same millisecond with different kinds
    window = pd.DataFrame({"arrival_s": [0.5, 0.1, 0.1004, 0.9], "kind_of_query": ["c", "a", "b", "d"]})
    # query_id: position in the log sorted stably by arrival (as the replay reads it)
    records = pd.DataFrame({"replication": [0, 0, 0, 1, 1], "query_id": [1, 0, 3, 2, 0],
                            "latency_ms": [1.0, 2.0, 3.0, 4.0, 5.0]})
    assert _with_kinds(records, window)["kind"].tolist() == ["b", "a", "d", "c", "a"]
