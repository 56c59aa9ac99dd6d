"""Settings are validated once, kept as typed values, and reach the engine part that uses them."""

from __future__ import annotations

import numpy as np
import pytest
import simpy

from workbench.errors import ScenarioError
from workbench.pinot.routing.adaptive import AdaptiveSelectorType
from workbench.scenario import load_scenario
from workbench.sim.layout import build_layout
from workbench.sim.plan import build_plan
from workbench.sim.run import build_cluster, simulate
from workbench.sim.streams import Streams

PREFIX = "pinot.broker.adaptive.server.selector"
ADAPTIVE = {f"{PREFIX}.type": "HYBRID", f"{PREFIX}.enable.stats.collection": True, f"{PREFIX}.ewma.alpha": 0.25,
            f"{PREFIX}.autodecay.window.ms": 2500, f"{PREFIX}.warmup.duration": 100,
            f"{PREFIX}.avg.initialization.val": 2.0, f"{PREFIX}.hybrid.score.exponent": 2,
            f"{PREFIX}.hybrid.score.queue.size.floor": 1}


def scenario(broker_config: dict[str, object]) -> dict[str, object]:
    return {"cluster": {"servers": 3, "broker": {"config": broker_config}},
            "table": {"tableName": "t", "tableType": "OFFLINE", "segmentsConfig": {"replication": 3}},
            "workload": {"synthetic": {"segments_per_server": 2, "docs_per_segment": 1000}, "arrival": {"qps": 50}},
            "service": {"model": "exponential", "mean_ms": 2},
            "simulation": {"duration_s": 4, "warmup_s": 1, "replications": 1, "seed": 5}}


def test_every_adaptive_key_reaches_the_selector_and_its_stats() -> None:
    sc = load_scenario(scenario(ADAPTIVE))
    config = sc.cluster.broker.adaptive
    assert (config.type, config.ewma_alpha, config.autodecay_window_ms, config.warmup_duration_ms) == (
        AdaptiveSelectorType.HYBRID, 0.25, 2500.0, 100.0)
    assert (config.avg_initialization_val, config.hybrid_score_exponent, config.hybrid_score_queue_size_floor) == (
        2.0, 2, 1)
    env = simpy.Environment()
    streams = Streams.spawn(np.random.SeedSequence(0), 3)
    layout = build_layout(sc)
    plan = build_plan(sc, layout, streams, horizon_ms=1000.0)
    assert not plan.routed  # adaptive selection routes live, from feedback
    broker = build_cluster(sc, layout, env, streams, plan).brokers[0]
    selector = broker.router.selector.adaptive
    assert selector is not None and selector.stats is broker.stats
    assert broker.stats is not None and broker.stats.config == config


def test_a_scenario_with_stats_collection_on_simulates() -> None:
    result = simulate(scenario(ADAPTIVE))
    assert len(result.queries) > 100 and not result.queries["partial"].any()


def test_alpha_changes_what_the_selector_learns() -> None:
    """A different EMA weight must change routing decisions, hence per-server request counts."""
    low = simulate(scenario({**ADAPTIVE, f"{PREFIX}.ewma.alpha": 0.05})).servers["requests"].tolist()
    high = simulate(scenario({**ADAPTIVE, f"{PREFIX}.ewma.alpha": 0.95})).servers["requests"].tolist()
    assert low != high


def test_a_bad_adaptive_key_is_named_with_its_full_path() -> None:
    with pytest.raises(ScenarioError, match=rf"^cluster\.broker\.config\.{PREFIX}\.ewma\.alpha: "):
        load_scenario(scenario({**ADAPTIVE, f"{PREFIX}.ewma.alpha": 1.5}))


def test_cache_settings_are_typed_values_of_their_sections() -> None:
    sc = load_scenario({"cluster": {"broker": {"config": {"pinot.broker.query.cache.enabled": "true",
                                                          "pinot.broker.query.cache.max.bytes": "1MB"}},
                                    "server": {"config": {"pinot.server.segment.query.cache.enabled": True}}}})
    assert sc.cluster.broker.result_cache.enabled and sc.cluster.broker.result_cache.max_bytes == 1024**2
    assert sc.cluster.server.segment_cache.enabled
    with pytest.raises(ScenarioError, match=r"^cluster\.server\.config\.pinot\.server\.segment\.query\.cache\.nope"):
        load_scenario({"cluster": {"server": {"config": {"pinot.server.segment.query.cache.nope": 1}}}})


def test_derived_settings_are_not_keys_a_user_writes() -> None:
    with pytest.raises(ScenarioError, match=r"^cluster\.broker\.adaptive: unknown key"):
        load_scenario({"cluster": {"broker": {"adaptive": {}}}})
