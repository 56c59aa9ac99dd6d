"""A day of load (``workload.profile``): the steps that decide the verdict, on one seed.

The expectations come from the rule itself and from queueing: a flat profile of ones is the scenario as
written, so its day is that run, bit for bit; with a 3x peak the servers' utilisation follows the load
(utilisation = rate x work per query / capacity, so it scales with the factor) and p99 rises and falls
with it, and the peak is the step the verdict binds on.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from workbench.api import day, report
from workbench.cli import main
from workbench.errors import InputError, ScenarioError
from workbench.report.day_record import read_day
from workbench.runs import run_scenario
from workbench.scenario import load_scenario
from workbench.studies.day import steps_to_run

#: Two one-core servers, exponential 10 ms per request (every query reaches both): utilisation = qps x 10 ms.
BASE: dict[str, Any] = {
    "cluster": {"servers": 2, "server": {"cores": 1}, "network": {"latency_ms": 0},
                "broker": {"overhead_ms": 0, "reduce_ms_per_server": 0, "reduce_ms_per_row": 0}},
    "table": {"tableName": "t", "tableType": "OFFLINE", "segmentsConfig": {"replication": 1}},
    "workload": {"synthetic": {"segments_per_server": 1, "docs_per_segment": 1000}, "arrival": {"qps": 20}},
    "service": {"model": "exponential", "mean_ms": 10},
    "slo": {"p99_ms": 100, "survive": "none"},
    "simulation": {"duration_s": 60, "warmup_s": 5, "replications": 2, "seed": 1, "engine": "fast"},
}
#: Night at 1, a morning and an afternoon peak at 3 (08:00 and 15:00).
THREE_X = [1, 1, 1, 1, 1, 1, 1.5, 2, 3, 2.5, 2, 1.5, 1.5, 2, 2.5, 3, 2, 1.5, 1, 1, 1, 1, 1, 1]


def _with_profile(hourly: Any) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    data["workload"]["profile"] = {"hourly": hourly}
    return data


def test_a_flat_profile_gives_the_single_rate_answer_exactly(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    single = run_scenario(BASE, None).summary
    scenario = tmp_path / "flat.yaml"
    scenario.write_text(yaml.safe_dump(_with_profile([1] * 24)))
    assert main(["day", str(scenario), "--out", str(tmp_path / "day")]) == 0
    assert "meets the SLO all day" in capsys.readouterr().out or single.latency_ms.p99.bound() > 100
    result = read_day(tmp_path / "day")
    assert {s.run for s in result.steps} == {"rate-x1"}  # one rate, run once
    assert result.peak.p99_ms == single.latency_ms.p99.value
    assert result.peak.p99_high_ms == single.latency_ms.p99.bound()
    assert result.peak.utilisation == single.utilisation.mean
    assert result.met is (single.latency_ms.p99.bound() <= 100)


def test_a_3x_peak_rises_and_falls_with_the_profile_and_binds_at_the_peak(tmp_path: Path) -> None:
    full = day(_with_profile(THREE_X), tmp_path / "all", every_step=True)
    by_factor = {s.factor: s for s in full.steps}
    ordered = [by_factor[f] for f in (1, 1.5, 2, 2.5, 3)]
    # utilisation is rate x 10 ms per server: 0.2 at x1, 0.6 at x3 (within the run's noise)
    for s in ordered:
        assert s.utilisation == pytest.approx(0.2 * s.factor, rel=0.1)
    assert [s.p99_ms for s in ordered] == sorted(s.p99_ms for s in ordered)
    hours = [s.p99_ms for s in full.steps]
    assert hours[8] == max(hours) and hours[8] > hours[5] and hours[8] > hours[11]  # up to 08:00, down by 11:00
    assert full.binding == 8 and full.peak.factor == 3
    assert full.met is False and full.peak.meets is False  # 60% busy one-core servers: p99 above 100 ms

    # the rule: from the peak down until one meets with the margin; the day's verdict is the same (the runs
    # of the full curve are reused: same seed, same change)
    ruled = day(_with_profile(THREE_X), tmp_path / "all")
    assert ruled.binding == 8 and ruled.met is False
    ran = sorted({s.factor for s in ruled.simulated()}, reverse=True)
    assert ran[0] == 3 and ran == sorted({s.factor for s in ruled.steps if s.factor >= ran[-1]}, reverse=True)
    last = next(s for s in ruled.steps if s.factor == ran[-1])
    assert last.p99_high_ms <= 0.8 * 100 or ran[-1] == 1  # stopped on clear margin, or ran out of rates
    assert [s.meets for s in ruled.steps] == [s.meets for s in full.steps]
    page = report(tmp_path / "all", tmp_path / "day.pdf")
    assert page.is_file() and page.stat().st_size > 0
    assert read_day(tmp_path / "all").binding == 8


def test_the_rule_stops_at_the_first_rate_that_meets_with_margin() -> None:
    runs: list[float] = []

    def bound(f: float) -> float:
        runs.append(f)
        return 30.0 * f  # a p99 upper end proportional to the rate

    assert steps_to_run([1, 4, 2, 3, 0], bound, slo_p99_ms=100, margin=0.2) == [4.0, 3.0, 2.0]
    assert runs == [4.0, 3.0, 2.0]  # 60 ms <= 80: x1 (30 ms) is inferred, x0 has no load
    assert steps_to_run([1, 4], lambda f: 10.0, slo_p99_ms=None) == [4.0]


@pytest.mark.parametrize(("hourly", "message"), [
    ([1, -1] + [1] * 22, "workload.profile.hourly[1]"),
    ([1] * 23, "workload.profile.hourly: has 23 factors"),
    ([1, None, 1], "workload.profile.hourly[1]"),
    ([0, 0], "workload.profile.hourly: has no step with load"),
])
def test_a_bad_profile_is_one_error_naming_the_key(hourly: Any, message: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        load_scenario(_with_profile(hourly))
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


def test_a_scenario_without_a_profile_has_no_day(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"workload\.profile"):
        day(BASE, tmp_path / "day")


def test_finer_steps_divide_the_day() -> None:
    profile = load_scenario(_with_profile([1, 2] * 24)).workload.profile
    assert profile is not None and profile.step_s == 1800 and profile.peak() == 1
    assert math.isclose(load_scenario(_with_profile([1, 3, 1])).workload.profile.step_s, 8 * 3600)  # type: ignore[union-attr]
