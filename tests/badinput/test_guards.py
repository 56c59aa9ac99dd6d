"""The guards themselves: errors that cross processes, reading limits, scenario limits that can be raised,
and table-config checks that agree with the parts that read the fields."""

from __future__ import annotations

import gzip
import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from workbench.errors import InputError, ScenarioError, TableConfigError
from workbench.io.reading import load_yaml, read_text
from workbench.pinot.partition import partition_function_names
from workbench.pinot.routing.selectors import INSTANCE_SELECTORS
from workbench.pinot.sql.lexer import QueryParseError
from workbench.pinot.table_config import TableConfig
from workbench.pinot.table_fields import HASH_FUNCTIONS, INSTANCE_SELECTOR_TYPES
from workbench.pinot.upsert import HashFunction
from workbench.scenario import load_scenario
from workbench.sweep.spec import SweepError

SMALL = {"cluster": {"servers": 2}, "workload": {"synthetic": {"segments_per_server": 1, "docs_per_segment": 10}},
         "simulation": {"duration_s": 1, "warmup_s": 0.1, "replications": 1}}


def _raise(kind: str) -> None:
    errors = {"input": InputError("a.b", "bad"), "scenario": ScenarioError("cluster.servers", "must be positive"),
              "table": TableConfigError("routing", "odd"), "sweep": SweepError("s.yaml: grid", "empty"),
              "sql": QueryParseError("SELECT FROM", 7, "no columns")}
    raise errors[kind]


@pytest.mark.parametrize("kind", ["input", "scenario", "table", "sweep", "sql"])
def test_errors_survive_a_process_boundary(kind: str) -> None:
    with pytest.raises(InputError) as here:
        _raise(kind)
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
        there = pool.submit(_raise, kind).exception()
    assert type(there) is type(here.value)
    assert (there.where, there.problem, str(there)) == (here.value.where, here.value.problem, str(here.value))
    again = pickle.loads(pickle.dumps(here.value))
    assert type(again) is type(here.value) and str(again) == str(here.value)
    if kind != "sql":  # SimPy re-raises a failed event's exception as type(exc)(*exc.args)
        assert str(type(again)(*again.args)) == str(here.value)


def test_reading_limits_can_be_raised_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    nested = "a: " + "[" * 150 + "]" * 150
    with pytest.raises(InputError, match="nests deeper than 100 levels"):
        load_yaml(nested, "s.yaml")
    monkeypatch.setenv("WORKBENCH_MAX_NESTING", "200")
    assert load_yaml(nested, "s.yaml") is not None
    monkeypatch.setenv("WORKBENCH_MAX_NESTING", "lots")
    with pytest.raises(InputError, match="WORKBENCH_MAX_NESTING"):
        load_yaml("a: 1", "s.yaml")


def test_yaml_merge_keys_are_not_duplicates() -> None:
    assert load_yaml("base: &b {x: 1, y: 2}\nc:\n  <<: *b\n  x: 3\n", "s.yaml")["c"] == {"x": 3, "y": 2}


def test_gzip_is_recognised_by_content_and_stopped_at_the_limit(tmp_path: Path) -> None:
    log = tmp_path / "plain-name.log"
    log.write_bytes(gzip.compress(b"line\n" * 1000))
    assert read_text(log).count("line") == 1000
    with pytest.raises(InputError, match="decompresses to more than 1 KiB"):
        read_text(log, limit=1024)


def test_a_scenario_may_raise_its_own_limits() -> None:
    fast = {**SMALL, "workload": {**SMALL["workload"], "arrival": {"qps": 200_000}}}
    with pytest.raises(ScenarioError, match=r"^workload\.arrival\.qps: .*limits\.qps"):
        load_scenario(fast)
    raised = load_scenario({**fast, "limits": {"qps": 300_000, "simulated_queries": 10**6}})
    assert raised.workload.arrival.qps == 200_000 and raised.limits.qps == 300_000


def test_the_checked_values_agree_with_the_parts_that_read_them() -> None:
    assert set(INSTANCE_SELECTOR_TYPES) == set(INSTANCE_SELECTORS)
    assert set(HASH_FUNCTIONS) == {h.value for h in HashFunction}
    for name in ("Modulo", "Murmur", "Murmur2", "Murmur3", "ByteArray", "HashCode", "BoundedColumnValue", "FNV"):
        assert name.lower() in partition_function_names()  # PB §1.2's registered names


def test_fields_the_workbench_does_not_read_pass_through_unchanged() -> None:
    raw = {"tableName": "t", "tableType": "OFFLINE", "fieldConfigList": [{"name": "x", "encodingType": "RAW"}],
           "ingestionConfig": {"transformConfigs": [{"columnName": "y", "transformFunction": "upper(x)"}]},
           "metadata": {"customConfigs": {"anything": ["goes", 1, None]}}, "task": None}
    assert TableConfig.from_json(raw).to_json() == raw
