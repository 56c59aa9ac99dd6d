"""The generate spec: old keys keep working, new sections validate with the key path, JSON round-trips."""

from __future__ import annotations

from pathlib import Path

import pytest
from workload_fixtures import spec_of

from workbench.errors import ScenarioError
from workbench.scenario import load_scenario
from workbench.scenario.build import build_section
from workbench.workload.spec import GenerateSpec, spec_to_json


def test_walking_skeleton_keys_keep_their_meaning() -> None:
    spec = spec_of(events=123, keys=7, key_distribution="zipf", zipf_s=1.3, partitions=3, span_s="2h",
                   segment_rows=50, seed=9)
    assert (spec.events, spec.keys, spec.key_distribution, spec.zipf_s) == (123, 7, "zipf", 1.3)
    assert (spec.partitions, spec.span_s, spec.segment_rows, spec.seed) == (3, 7200.0, 50, 9)
    assert spec.lifecycle is None and spec.segment_time_s is None


@pytest.mark.parametrize(("data", "where"), [
    ({"rate": {"amplitude": 1.2}}, "workload.generate.rate.amplitude"),
    ({"rate": {"profile": "bursts", "burst_every_s": "1m", "burst_length_s": "2m"}},
     "workload.generate.rate.burst_length_s"),
    ({"rate": {"profile": "weekly"}}, "workload.generate.rate.profile"),
    ({"disorder": {"late_fraction": 1.5}}, "workload.generate.disorder.late_fraction"),
    ({"disorder": {"lateness_s": {"dist": "gamma", "mean": 3}}}, "workload.generate.disorder.lateness_s.dist"),
    ({"lifecycle": {"delete_fraction": -0.1}}, "workload.generate.lifecycle.delete_fraction"),
    ({"lifecycle": {"lifetim_s": 3}}, "workload.generate.lifecycle.lifetim_s"),
    ({"offline": {"purity": 2}}, "workload.generate.offline.purity"),
    ({"queries": {"panels_min": 5, "panels_max": 2}}, "workload.generate.queries.panels_max"),
    ({"queries": {"refresh_s": []}}, "workload.generate.queries.refresh_s"),
    ({"partitioning": {"function": "Crc32"}}, "workload.generate.partitioning.function"),
    ({"segment_time_s": 0}, "workload.generate.segment_time_s"),
])
def test_bad_values_name_their_key(data: dict[str, object], where: str) -> None:
    with pytest.raises(ScenarioError) as err:
        spec_of(**data)
    assert err.value.where == where


def test_durations_and_distributions_parse_like_the_rest_of_the_scenario() -> None:
    spec = spec_of(segment_time_s="90m", disorder={"lateness_s": {"dist": "lognormal", "mean": 30, "sigma": 1}},
                   queries={"refresh_s": ["5s", "1m"], "lookbacks_s": ["1h"]})
    assert spec.segment_time_s == 5400.0
    assert spec.disorder.lateness_s.mean == 30.0
    assert spec.queries.refresh_s == (5.0, 60.0) and spec.queries.lookbacks_s == (3600.0,)


def test_manifest_json_rebuilds_the_same_spec() -> None:
    spec = spec_of(events=10, rate={"profile": "bursts", "burst_factor": 3},
                   lifecycle={"updates_per_key": {"dist": "exponential", "mean": 4}}, queries={"viewers": 3})
    assert build_section(GenerateSpec, spec_to_json(spec), "g") == spec


def test_default_scenario_generate_section_is_valid() -> None:
    sc = load_scenario(Path(__file__).resolve().parents[2] / "scenarios" / "default.yaml")
    assert sc.workload.generate is not None and sc.workload.generate.events > 0
