"""GC inside a run: pauses follow each server's load, the upsert map lengthens them, a heap too small is
reported, and a ``records: latency`` run summarises exactly as a full one."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pandas as pd
import pytest

from workbench.analysis.stats import summarise
from workbench.scenario import ScenarioError, load_scenario
from workbench.sim.records import LATENCY_COLUMNS
from workbench.sim.run import simulate


def _scenario(gc: dict[str, Any], qps: float = 200.0, heap: str = "8GB", **simulation: Any) -> dict[str, Any]:
    return {
        "cluster": {"servers": 3, "server": {"cores": 4, "heap": heap}, "gc": gc},
        "workload": {"synthetic": {"segments_per_server": 4, "docs_per_segment": 100_000},
                     "arrival": {"qps": qps}},
        "service": {"model": "exponential", "mean_ms": 2},
        "simulation": {"duration_s": 60, "warmup_s": 5, "replications": 1, "seed": 7, **simulation},
    }


def _young(result: Any) -> pd.DataFrame:
    p = result.gc_pauses
    return p[p["kind"] == "young"]


def test_work_driven_young_collections_follow_the_load() -> None:
    """Allocation is charged per request (1 MiB each, none per document), so more queries fill eden more often.
    The servers have been serving, so eden starts where G1 keeps it: with pauses far under the goal (at most 0.12 s
    of allocation copied, under 100 MB at 2.8 GB/s: 40 ms against 160), as large as G1 allows, 60% of the 8 GiB
    heap (G1MaxNewSizePercent; the free heap, 90% of it less 256 MiB live, is larger). By hand each server then
    collects once per 4.8 GiB it allocates (its requests x 1 MiB), plus half a collection on average for the eden it
    starts part-filled (servers are not synchronised): each server's count is within half a collection of that. The
    survivors take under 2% of eden, so 5% more slack."""
    gc = {"collector": "g1", "bytes_per_request": "1MB", "bytes_per_doc": 0, "live_heap": "256MB"}
    counts = []
    for qps in (100, 200, 400, 800):
        result = simulate(_scenario(gc, qps=qps))
        expected = sum(r * 2**20 / (0.6 * 8 * 2**30) + 0.5 for r in result.servers["requests"])
        counts.append(len(_young(result)))
        assert counts[-1] == pytest.approx(expected, abs=1.5 + 0.05 * expected)
    assert all(b > a for a, b in itertools.pairwise(counts))
    once = simulate(_scenario(gc, qps=200))
    assert set(once.gc_pauses["kind"]) <= {"young", "mixed", "full", "remark", "cleanup"}
    assert once.servers["paused_ms"].sum() == pytest.approx(once.gc_pauses["duration_ms"].sum(), rel=1e-6)


def test_a_larger_upsert_map_lengthens_young_pauses_and_raises_the_live_heap() -> None:
    """G1's young pauses scan the remembered sets of the old regions holding the primary-key map, so with
    10M keys (about 0.9 GB live) the mean young pause must be longer than with none, and ``live_heap`` must
    grow by the keys' bytes."""
    base = {"collector": "g1", "bytes_per_request": "256KB", "update_rate": 5000}
    none = simulate(_scenario(base))
    keyed = simulate(_scenario({**base, "upsert_keys": 10_000_000}))
    assert _young(keyed)["duration_ms"].mean() > 1.2 * _young(none)["duration_ms"].mean()
    grown = keyed.servers["live_heap"].mean() - none.servers["live_heap"].mean()
    assert 10_000_000 * 40 < grown < 10_000_000 * 200  # tens of bytes per key at the very least
    assert (keyed.servers["peak_heap"] >= keyed.servers["live_heap"]).all()


def test_a_heap_smaller_than_its_live_set_is_reported_out_of_memory() -> None:
    result = simulate(_scenario({"collector": "g1", "live_heap": "1.9GB"}, heap="2GB"))
    assert result.servers["oom_at_s"].notna().all()
    assert (result.servers["oom_at_s"] <= 60).all()
    roomy = simulate(_scenario({"collector": "g1", "live_heap": "200MB"}, heap="2GB"))
    assert roomy.servers["oom_at_s"].isna().all()


def test_zgc_takes_cores_and_its_pauses_are_sub_millisecond() -> None:
    """ZGC's concurrent threads take a share of the cores: the same load on the same seed keeps servers
    busier than with no collector, while its pauses stay well under a millisecond."""
    none = simulate(_scenario({"collector": "none"}, qps=400))
    zgc = simulate(_scenario({"collector": "zgc", "bytes_per_request": "1MB"}, qps=400))
    assert len(zgc.gc_pauses) > 0
    assert zgc.gc_pauses["duration_ms"].median() < 1.0
    assert zgc.servers["busy_ms"].sum() > none.servers["busy_ms"].sum()


def test_the_fixed_collector_refuses_a_key_count() -> None:
    with pytest.raises(ScenarioError, match=r"cluster\.gc\.upsert_keys.*collector: g1"):
        load_scenario(_scenario({"collector": "fixed", "interval_s": 1, "pause_ms": 10, "upsert_keys": 1000}))


@pytest.mark.parametrize("engine", ["simpy", "fast"])
def test_a_latency_only_run_summarises_as_a_full_one(engine: str) -> None:
    """Faults, GC and timeouts give the run partial answers and error codes; dropping the per-query
    columns must not change one number of the summary."""
    sc = _scenario({"collector": "fixed", "interval_s": 0.5, "pause_ms": 80}, qps=400, duration_s=20,
                   replications=2, engine=engine)
    sc["cluster"] |= {"failures": {"mtbf_s": 5, "mttr_s": 1}, "broker": {"timeout_ms": 60}}
    full = simulate(sc)
    thin = simulate({**sc, "simulation": {**sc["simulation"], "records": "latency"}})
    assert list(thin.queries.columns) == list(LATENCY_COLUMNS)
    assert full.queries["partial"].any() and (full.queries["error_codes"] != "").any()
    np.testing.assert_array_equal(thin.queries["latency_ms"], full.queries["latency_ms"])
    assert summarise(thin) == summarise(full)
    codes = full.queries["error_codes"].str.split(",").explode()
    assert full.windows["code_427"].sum() == int((codes == "427").sum())
    assert full.windows["errored"].sum() == int((full.queries["error_codes"] != "").sum())
