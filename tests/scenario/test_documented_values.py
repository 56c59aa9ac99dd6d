"""Every value ``docs/scenario.md`` documents works: each key with its default and its ``e.g.`` examples
passes ``validate`` and a short ``simulate``, and every size and duration key takes the forms the page
promises (``512MB``, ``2G``; ``250ms``, ``30s``, ``5m``, ``1h`` or a number).

The page is parsed, not copied: a row added to a key table is walked the next time the test runs, and a
row that documents neither a literal default nor an ``e.g.`` example fails here, so the reader is never
left without a value that works. Keys that only mean something beside another (``gc.interval_s`` with
``collector: fixed``) get that companion from :data:`COMPANIONS`, each with its reason.
"""

from __future__ import annotations

import copy
import dataclasses
import re
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from workbench.api import check_scenario
from workbench.errors import ScenarioError
from workbench.runs import run_scenario
from workbench.scenario import SECTIONS

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "scenario.md").read_text()
_ROW = re.compile(r"^\|\s*(`[^|]+`[^|]*?)\s*\|\s*([^|]*?)\s*\|\s*(.*?)\s*\|$")
_EXAMPLE = re.compile(r"e\.g\. `([^`]+)`")

#: Defaults the page writes as a formula of the server's cores (``c``), evaluated at :data:`BASE`'s cores.
FORMULAS = {"c": lambda c: c, "2c": lambda c: 2 * c, "min(10, cores/2)": lambda c: min(10, c // 2)}
#: Defaults that are not values (where the value comes from); such a row must give an ``e.g.`` example.
NOT_VALUES = ("fitted", "from the data", "simulation seed", "off")

#: A small scenario every key is set on: two servers of two cores, one small segment each, 3 s of queries.
BASE: dict[str, Any] = {
    "cluster": {"servers": 2, "server": {"cores": 2}},
    "table": {"tableName": "t", "tableType": "OFFLINE", "segmentsConfig": {"replication": 1}},
    "workload": {"synthetic": {"segments_per_server": 1, "docs_per_segment": 1000}, "arrival": {"qps": 20}},
    "simulation": {"duration_s": 3, "warmup_s": 0.5, "replications": 1, "seed": 1},
}
_G1 = {"cluster.gc.collector": "g1"}
_ZGC = {"cluster.gc.collector": "zgc"}
#: What a key needs beside it to mean anything (prefix of the key -> settings), and why.
COMPANIONS: dict[str, dict[str, Any]] = {
    # the fixed collector's two knobs are given together
    "cluster.gc.interval_s": {"cluster.gc.collector": "fixed", "cluster.gc.pause_ms": 300},
    "cluster.gc.pause_ms": {"cluster.gc.collector": "fixed", "cluster.gc.interval_s": 30},
    # G1's and ZGC's fitted parameters are read by their collector only
    **{f"cluster.gc.{k}": _G1 for k in (
        "allocation_rate", "bytes_per_doc", "bytes_per_request", "live_heap", "young_base_ms", "copy_rate",
        "rs_scan_ms_per_gb", "rs_map_exponent", "rs_coarsen_updates", "pause_sigma", "survivor_s",
        "promotion_fraction", "mixed_live_ratio", "full_base_ms", "full_ms_per_gb", "full_sigma", "remark_ms",
        "cleanup_ms", "concurrent_sigma", "mark_rate", "rebuild_rate", "ihop", "reserve", "new_size_min",
        "new_size_max", "pause_goal_ms", "goal_share", "young_growth", "mixed_count", "heap_waste")},
    **{f"cluster.gc.{k}": _ZGC for k in ("cycle_base_ms", "sweep_rate", "trigger_share", "threads_share",
                                         "retained_share")},
    # upsert keys and their update rate belong to an upsert table, keyed and routed as Pinot requires
    "cluster.gc.upsert_keys": _G1, "cluster.gc.update_rate": _G1,
    # crash and recovery times are given together
    "cluster.failures.mtbf_s": {"cluster.failures.mttr_s": 30},
    "cluster.failures.mttr_s": {"cluster.failures.mtbf_s": 3600},
    # the bounded schedulers' knobs, with a bounded scheduler
    "cluster.server.config.pinot.query.scheduler.max_pending": {"pinot.query.scheduler.name": "bounded_fcfs"},
    "cluster.server.config.pinot.query.scheduler.table_threads": {"pinot.query.scheduler.name": "bounded_fcfs"},
    "cluster.server.config.pinot.query.scheduler.threads_per": {"pinot.query.scheduler.name": "bounded_fcfs"},
    "cluster.server.config.pinot.query.scheduler.binarywlm": {"pinot.query.scheduler.name": "binary_workload"},
    # the distribution models' knobs, with their model
    "service.sigma": {"service.model": "lognormal"},
    "service.values_ms": {"service.model": "empirical"},
    "service.mean_ms": {"service.model": "exponential"},
    # the default warm-up (12 s) is for the default horizon (120 s)
    "simulation.warmup_s": {"simulation.duration_s": 120},
}
_SERVER_CONFIG = "cluster.server.config."


@dataclasses.dataclass(frozen=True)
class Documented:
    """One key of the page with one value it documents (its default or an ``e.g.`` example)."""

    key: str
    value: Any
    source: str

    def __str__(self) -> str:
        return f"{self.key}={self.value!r} ({self.source})"


def _rows() -> Iterator[tuple[str, list[str], str, str]]:
    """(key prefix, keys, default, meaning) of each key-table row, with the section (and the
    ``server.config`` property table) as the prefix."""
    prefix = None
    for line in DOC.splitlines():
        if m := re.match(r"^## `(\w+)`", line):
            prefix = m.group(1) + "."
        elif line.startswith("`server.config` takes"):
            prefix = _SERVER_CONFIG
        elif line.startswith("`broker.config` also"):
            prefix = None
        elif prefix and (m := _ROW.match(line)) and m.group(1) not in ("key", "property"):
            cell, default, meaning = m.groups()
            keys = re.findall(r"`([^`]+)`", cell)
            parent = keys[0].rsplit(".", 1)[0] + "." if "." in keys[0] else ""
            # later keys of a row are written without the first one's parent (`gc.ihop`, `reserve`)
            whole = (lambda k: k.startswith("pinot.")) if prefix == _SERVER_CONFIG else (lambda k: "." in k)
            full = [keys[0]] + [k if whole(k) else parent + k for k in keys[1:]]
            yield prefix, full, default, meaning


def _literal(text: str) -> Any:
    return yaml.safe_load(text.strip("`"))


def documented() -> list[Documented]:
    """Every (key, documented value) pair of the page; a key with none is returned with value ``None``
    and source ``"nothing"`` so the test names it."""
    cores = BASE["cluster"]["server"]["cores"]
    out = []
    for prefix, keys, default, meaning in _rows():
        default = default.removeprefix("fitted: ")  # fitted parameters with the values they were fitted to
        parts = re.split(r",\s*|\s*/\s*", default) if len(keys) > 1 else [default]
        parts = parts if len(parts) == len(keys) else [default] * len(keys)
        every = _EXAMPLE.findall(meaning)
        # a row of several keys with one example each pairs them in order (`1h` and `5m`)
        per_key = [[e] for e in every] if len(keys) > 1 and len(every) == len(keys) else [every] * len(keys)
        for key, part, examples in zip(keys, parts, per_key, strict=True):
            found = []
            if part in FORMULAS:
                found.append(Documented(prefix + key, FORMULAS[part](cores), f"default {part}"))
            elif part and part not in NOT_VALUES:
                found.append(Documented(prefix + key, _literal(part), "default"))
            found += [Documented(prefix + key, _literal(e), "e.g.") for e in examples]
            out += found or [Documented(prefix + key, None, "nothing")]
    return out


def _set(scenario: dict[str, Any], key: str, value: Any) -> None:
    if key.endswith(".*"):  # a family of properties (`pinot.server.segment.query.cache.*`), one by one
        for k, v in value.items():
            _set(scenario, key[:-1] + k, v)
        return
    if key.startswith(_SERVER_CONFIG):
        scenario["cluster"]["server"].setdefault("config", {})[key[len(_SERVER_CONFIG):]] = value
        return
    if key.startswith("pinot."):
        scenario["cluster"]["server"].setdefault("config", {})[key] = value
        return
    *path, last = key.split(".")
    node = scenario
    for part in path:
        node = node.setdefault(part, {})
    node[last] = value


def scenario_with(item: Documented) -> dict[str, Any]:
    """:data:`BASE` with the key set to its value, and the companions it needs."""
    sc = copy.deepcopy(BASE)
    if item.key.startswith("workload.generate."):
        del sc["workload"]["synthetic"]
    if item.key.startswith("workload.synthetic."):
        sc["workload"]["synthetic"] = {}
    for prefix, extra in COMPANIONS.items():
        if item.key.startswith(prefix):
            for k, v in extra.items():
                _set(sc, k, v)
    _set(sc, item.key, item.value)
    return sc


DOCUMENTED = documented()


def test_the_page_is_parsed_into_every_table_row() -> None:
    """The parser sees the rows (a change of the page's table format would otherwise pass vacuously)."""
    keys = {d.key for d in DOCUMENTED}
    assert {"cluster.server.heap", "cluster.gc.copy_rate", "cluster.gc.heap_waste", "service.values_ms",
            "cluster.server.config.pinot.query.scheduler.binarywlm.maxPendingSecondaryQueries",
            "limits.generate_events", "slo.max_heap", "simulation.records"} <= keys
    assert len(keys) > 90


@pytest.mark.parametrize("item", DOCUMENTED, ids=str)
def test_every_documented_value_validates_and_simulates(item: Documented, tmp_path: Path) -> None:
    assert item.source != "nothing", f"docs/scenario.md gives {item.key} no value: write its default or an e.g."
    if item.key == "workload.data":
        pytest.skip("a workload directory: the generate keys below write and simulate one")
    sc = scenario_with(item)
    data = None
    if "generate" in sc["workload"]:
        data = _generate(sc, tmp_path)
    checked = check_scenario(sc, data=data)
    summary = run_scenario(checked, None, data=data).summary
    assert summary.queries > 0


def _generate(sc: dict[str, Any], tmp_path: Path) -> Path:
    from workbench.workload.pure import generate_local

    checked = check_scenario(sc)
    assert checked.workload.generate is not None
    out = tmp_path / "data"
    generate_local(checked.workload.generate, out, table=checked.table.table_name, table_config=checked.table,
                   progress=False)
    return out


# -- sizes and durations everywhere ----------------------------------------------------------------------
SIZE_FORMS = ("512MB", "2G")
#: The page's duration forms; a key in seconds reads each as seconds, a key in ms as milliseconds.
DURATION_FORMS = ("250ms", "30s", "5m", "1h")


def _scalar_keys() -> Iterator[tuple[str, Any]]:
    def walk(cls: type[Any], prefix: str) -> Iterator[tuple[str, Any]]:
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            if not f.init:
                continue
            tp = hints[f.name]
            inner = [a for a in typing.get_args(tp) if dataclasses.is_dataclass(a)]
            target = tp if dataclasses.is_dataclass(tp) else (inner[0] if inner else None)
            if isinstance(target, type) and f.name != "latency_ms":
                yield from walk(target, f"{prefix}{f.name}.")
            else:
                yield prefix + f.name, f

    for section, cls in SECTIONS.items():
        yield from walk(cls, f"{section}.")


#: Keys named like a time that are not one: Zipf exponents (``_s`` is the exponent's name).
NOT_TIMES = ("zipf_s",)


def _time_keys() -> list[str]:
    return [k for k, _ in _scalar_keys() if re.search(r"_(s|ms)$", k) and not k.endswith(NOT_TIMES)]


def _size_keys() -> list[str]:
    """Keys the page writes a size for (``16G``, ``64KB``, ``400MB``) and keys of bytes by name."""
    named = [k for k, _ in _scalar_keys() if re.search(r"(heap|_rate|bytes_per_request)$", k)]
    return [k for k in named if k not in ("cluster.gc.update_rate", "workload.generate.rate")]


def test_time_and_size_keys_are_found() -> None:
    assert {"simulation.duration_s", "cluster.broker.timeout_ms", "cluster.gc.survivor_s",
            "cluster.network.latency_ms", "workload.generate.lifecycle.lifetime_s"} <= set(_time_keys())
    assert {"cluster.server.heap", "slo.max_heap", "cluster.gc.live_heap", "cluster.gc.copy_rate"} <= set(_size_keys())


@pytest.mark.parametrize("key", _time_keys())
@pytest.mark.parametrize("form", DURATION_FORMS)
def test_every_time_key_takes_every_duration_form(key: str, form: str) -> None:
    parent, _, leaf = key.rpartition(".")
    if parent in _ITEMS:  # a key of a list's items (a degraded server's window): one item that sets it
        sc = copy.deepcopy(BASE)
        _set(sc, parent, [{**_ITEMS[parent], leaf: form}])
    else:
        sc = scenario_with(Documented(key, [form] if key in _LISTS else form, "the page's duration forms"))
        for k, v in FORM_CONTEXT.get(key, {}).items():
            _set(sc, k, v)
        _set(sc, key, [form] if key in _LISTS else form)
    expected = _seconds(form) * (1000.0 if key.endswith("_ms") else 1.0)
    if expected < MINIMUM_S.get(key, 0.0):  # below the key's own bound: the error names the key and the bound
        with pytest.raises(ScenarioError, match=rf"^{re.escape(key)}: must be at least"):
            check_scenario(sc)
        return
    checked = check_scenario(sc)
    value = getattr(_get(checked, parent)[0], leaf) if parent in _ITEMS else _get(checked, key)
    value = value[0] if isinstance(value, tuple) else getattr(value, "mean", value)
    assert value == pytest.approx(expected), f"{key}: {form} read as {value}, not {expected}"


#: Time keys with a lower bound of their own (s): the event-time span is at least a second.
MINIMUM_S = {"workload.generate.span_s": 1.0}
#: Lists of items whose keys the page documents in the list's row, with what one item needs besides the
#: key under test (a window of a degraded server on the base scenario's second server).
_ITEMS: dict[str, dict[str, Any]] = {"cluster.failures.slow": {"server": "Server_1", "factor": 2},
                                     "cluster.failures.wedged": {"server": "Server_1"}}
#: Keys whose value is a list of times.
_LISTS = ("service.values_ms", "workload.generate.queries.refresh_s", "workload.generate.queries.lookbacks_s")
#: What a time key's every form needs around it: a horizon long enough for an hour of warm-up, and one
#: short enough for a 250 ms limit.
FORM_CONTEXT: dict[str, dict[str, Any]] = {
    "simulation.duration_s": {"simulation.warmup_s": 0},
    "simulation.warmup_s": {"simulation.duration_s": "2h"},
    "limits.duration_s": {"simulation.duration_s": 0.1, "simulation.warmup_s": 0},
}


@pytest.mark.parametrize("key", _size_keys())
@pytest.mark.parametrize("form", SIZE_FORMS)
def test_every_size_key_takes_every_size_form(key: str, form: str) -> None:
    sc = scenario_with(Documented(key, form, "the page's size forms"))
    if key == "cluster.server.heap":
        _set(sc, "cluster.gc.live_heap", "100MB")  # the default 2G of live data would not fit
    else:
        _set(sc, "cluster.server.heap", "31G")
    checked = check_scenario(sc)
    assert _get(checked, key) == {"512MB": 512 * 2**20, "2G": 2 * 2**30}[form]


def _seconds(form: str) -> float:
    number, unit = re.fullmatch(r"(\d+)(\w+)", form).groups()  # type: ignore[union-attr]
    return float(number) * {"ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}[unit]


def _get(scenario: Any, key: str) -> Any:
    node = scenario
    for part in key.split("."):
        node = getattr(node, part)
    return node


def test_the_tables_example_validates_and_simulates_per_table() -> None:
    """The ``tables`` section's example (three tables, two tenants) loads, runs, and is summarised per table."""
    body = DOC.split("## `tables`", 1)[1].split("\n## ", 1)[0]
    example = yaml.safe_load(body.split("```yaml", 1)[1].split("```", 1)[0])
    summary = run_scenario(check_scenario(example), None).summary
    assert summary.tables is not None and set(summary.tables) == {"orders", "clicks", "audit"}
    assert {t.tenant for t in summary.tables.values()} == {"dashboards", "DefaultTenant"}
    assert all(t.queries > 0 for t in summary.tables.values())
    assert summary.queries == sum(t.queries for t in summary.tables.values())
