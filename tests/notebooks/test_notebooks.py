"""Every notebook runs top to bottom under papermill with small parameters (as CI and sweeps run them),
shows its plots as images, and claims only what its own numbers show.

Cells tagged ``figure`` must have an image output (a cell that printed ``<Figure size ...>`` fails);
cells tagged ``reading`` show a :class:`workbench.analysis.readings.Reading`, whose facts travel in the
output's metadata and are checked here against the claim each sentence makes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat
import papermill as pm
import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"


def small_parameters(tmp: Path) -> dict[str, dict[str, Any]]:
    return {
        "01_routing_and_fanout.ipynb": {"duration_s": 300, "replications": 5, "degraded_duration_s": 20,
                                        "degraded_replications": 2},
        "02_pruning.ipynb": {"events": 60_000, "span_h": 12, "partitions": 4, "segment_rows": 5_000,
                             "late_fraction": 0.3, "ages_h": [0, 3, 6], "query_minutes": 1},
        "03_caching.ipynb": {"requests": 3000, "objects": 300, "sizes_mib": [0.1, 0.5]},
        "04_upsert_heap.ipynb": {"days": 2, "ttls_h": [0, 6], "question_servers": [4, 8], "question_heaps": ["31G"],
                                 "question_duration_s": 10, "replay_segments": 6,
                                 "replay_records_per_segment": 2000},
        "05_sizing_report.ipynb": {"scenario_file": str(ROOT / "scenarios" / "synthetic.yaml"), "servers": [2, 4],
                                   "replica_groups": [0, 2], "heaps": [], "cores": [], "qps": 40.0,
                                   "p99_slo_ms": 150.0, "duration_s": 10, "replications": 2,
                                   "out_dir": str(tmp / "sweep-out"), "report_pdf": str(tmp / "report.pdf")},
    }


def _tagged(cells: list[dict[str, Any]], tag: str) -> list[dict[str, Any]]:
    return [c for c in cells if tag in c.get("metadata", {}).get("tags", [])]


def _facts(cell: dict[str, Any]) -> dict[str, Any]:
    shown = [o for o in cell.get("outputs", []) if "text/markdown" in o.get("data", {})]
    assert shown, f"reading cell shows no Markdown: {''.join(cell['source'])[:60]}"
    facts: dict[str, Any] = shown[-1]["metadata"]["text/markdown"]["workbench"]["facts"]
    return facts


def _check_intervals(facts: dict[str, Any]) -> None:
    """``separates`` exactly when the best interval lies below every other one."""
    best = facts["best"]
    _, _, hi = facts["intervals"][best]
    others = [v for k, v in facts["intervals"].items() if k != best]
    below_all = all(hi < other[0] for other in others)
    assert (facts["claim"] == "separates") == below_all, facts


def check_routing(readings: list[dict[str, Any]], tmp: Path) -> None:
    facts, degraded = readings
    _check_intervals(facts["p99"])
    _check_intervals(facts["p50"])
    # the intro's trade-off: every query of a replica group goes to fewer servers and meets fewer pauses
    balanced = next(k for k in facts["servers_queried"] if k.startswith("balanced"))
    for name, servers in facts["servers_queried"].items():
        if name != balanced:
            assert servers < facts["servers_queried"][balanced]
            assert facts["gc_delayed"][name] < facts["gc_delayed"][balanced]
    _check_degraded_routing(degraded)


def _check_degraded_routing(facts: dict[str, Any]) -> None:
    """The routing that protects the table leads (lowest p99, or not separable from it) under every
    degradation; its p50 cost is its p50 less balanced's; and the section's mechanism: a wedged server
    holds every query whose route includes it until the timeout, so balanced routing, which sends each
    query to every server, returns every query partial, and replica groups one query in G."""
    base = facts["baseline"]
    leaders = []
    for name, d in facts["degradations"].items():
        _check_intervals(d["p99"])
        best = d["p99"]["best"]
        assert d["p99"]["intervals"][best][1] == min(v[1] for v in d["p99"]["intervals"].values())
        assert set(d["leaders"]) == {best, *d["p99"]["overlapping"]}
        leaders.append(set(d["leaders"]))
        for r in facts["protects"]:
            assert facts["p50_cost_ms"][r][name] == d["p50"][r] - d["p50"][base]
        if "wedged" in name:
            fan = d["servers_queried"]
            assert fan[base] == max(fan.values())  # balanced: every server
            assert d["partial"][base] == 1.0
            # replica-group routing sends query requestId to group requestId % G: one query in G meets the
            # wedged server; fewer are counted when a short run ends while some still wait for their timeout
            # (tests/studies/test_degraded_routing.py checks the share itself, on a short timeout)
            for r in fan:
                if " groups of " in r:
                    assert 0 < d["partial"][r] <= 1 / int(r.split()[0]) + 0.01, (r, d["partial"][r])
    assert set(facts["protects"]) == set.intersection(*leaders)
    for r in facts["protects"]:
        assert facts["healthy_p50_cost_ms"][r] == facts["healthy_p50"][r] - facts["healthy_p50"][base]


def _check_pruning(facts: dict[str, Any]) -> None:
    for group in facts["groups"].values():
        diff = group["share"] - group["baseline_share"]
        expected = "more" if diff > facts["step"] else ("fewer" if diff < -facts["step"] else "same")
        assert group["claim"] == expected, group


def check_pruning(readings: list[dict[str, Any]], tmp: Path) -> None:
    windows, mix = readings
    _check_pruning(windows)
    _check_pruning(mix)
    # the intro's mechanism: late events stretch segments backwards, so "the last hour" keeps the same
    # segments and the oldest window keeps more
    assert windows["groups"]["last 1h"]["claim"] == "same"
    oldest = max(windows["groups"], key=lambda g: 0 if g == "last 1h" else float(g.split("ending ")[1].split("h")[0]))
    assert windows["groups"][oldest]["claim"] == "more"


def check_caching(readings: list[dict[str, Any]], tmp: Path) -> None:
    (facts,) = readings
    sizes = facts["sizes"]
    for row in sizes:
        assert row["lru"] <= row["optimum"] + 1e-9  # no cache beats the optimum on the same stream
    if facts["flat_from_bytes"] is not None:
        i = next(i for i, r in enumerate(sizes) if r["max_bytes"] == facts["flat_from_bytes"])
        assert all(r["lru"] - sizes[i]["lru"] < 0.01 for r in sizes[i + 1:])  # no larger size wins a point
        assert i == 0 or sizes[-1]["lru"] - sizes[i - 1]["lru"] >= 0.01  # and it is the smallest such size


def check_heap(readings: list[dict[str, Any]], tmp: Path) -> None:
    facts, answer, duplicates, restart = readings
    _check_upsert_answer(answer)
    for entry in duplicates["ttl"].values():
        assert entry["claim"] == ("lets through" if entry["max_duplicates"] > 0 else "clean"), entry
    assert duplicates["ttl"]["no TTL"]["max_duplicates"] == 0  # without TTL the map sees every update
    rebuild, preload = restart["rebuild"], restart["preload"]
    # a rebuild reads and compares every doc; a preload reads only the valid ones (one per key) and compares none
    assert rebuild["docs_read"] == rebuild["key_comparisons"] > preload["docs_read"] == preload["keys"]
    assert preload["key_comparisons"] == 0 and rebuild["keys"] == preload["keys"]
    assert restart["docs_saved_share"] == pytest.approx(1 - preload["docs_read"] / rebuild["docs_read"])
    for name, entry in facts["ttl"].items():
        growing = entry["growth_last_day_bytes"] >= 0.01 * entry["end_live_bytes"]
        assert entry["claim"] == ("grows" if growing else "levels"), (name, entry)
        if entry["ihop_hour"] is None:
            assert entry["end_live_bytes"] <= facts["ihop_bytes"]
        # the notebook's note: Pinot's estimator leaves out the map's nodes and slots, so it is lower
        assert entry["pinot_estimate_bytes"] < entry["end_map_bytes"]
    # a heap past the IHOP with shorter young pauses than one under it is explained, and the explanation
    # holds: its pauses come more often (G1 keeps the young generation at its minimum in a cycle)
    ttl = facts["ttl"]
    shorter = [(o, u) for o in ttl.values() for u in ttl.values() if o["ihop_hour"] is not None
               and u["ihop_hour"] is None and not o["oom"] and o["young_p99_ms"] < u["young_p99_ms"]]
    assert facts["shorter_past_ihop"] == bool(shorter)
    assert all(o["young_per_s"] > u["young_per_s"] for o, u in shorter)
    assert facts["ttl"]["no TTL"]["claim"] == "grows"  # without TTL no key ever leaves the map
    assert facts["ttl"]["TTL 6 h"]["claim"] == "levels"


def _check_upsert_answer(facts: dict[str, Any]) -> None:
    """The answer is the fewest servers, then the smallest heap, that meets; keys per server by hand."""
    rows = facts["candidates"]
    meeting = sorted((r["servers"], r["heap_bytes"], r["heap"]) for r in rows if r["verdict"] == "meets")
    assert (facts["servers"], facts["heap"]) == ((meeting[0][0], meeting[0][2]) if meeting else (None, None))
    for r in rows:
        # every replica of a partition holds its whole map: keys x partitions hosted / partitions
        assert r["max_keys_per_server"] == pytest.approx(facts["map_keys"] * r["partitions_per_server"]
                                                         / facts["partitions"])
        assert r["partitions_per_server"] >= facts["partitions"] * facts["replication"] / r["servers"]
        assert r["under_ihop"] == (r["live_bytes"] < 0.45 * r["heap_bytes"])


def check_sizing(readings: list[dict[str, Any]], tmp: Path) -> None:
    (facts,) = readings
    configs = {c["point"]: c for c in facts["configurations"]}
    assert facts["best"] is not None
    best = configs[facts["best"]]
    assert best["meets_slo"]
    assert best["survives"]  # resilience is part of the SLO (slo.survive, default server)
    cheaper = [c for c in configs.values() if c["monthly_cost"] < best["monthly_cost"]]
    assert not any(c["meets_slo"] and c["survives"] for c in cheaper)
    assert (tmp / "report.pdf").is_file()
    _check_growth_agrees(tmp)


def _check_growth_agrees(tmp: Path) -> None:
    """The notebook and the report print the same growth (replicas moved, bytes, p99 after), and both
    are what ``workbench scale-out`` computes for that growth of the recommended point."""
    import pypdfium2 as pdfium

    from workbench.report.findings import find
    from workbench.report.sizing import load_sizing_data
    from workbench.report.whatif import point_of, read_movement
    from workbench.studies.scale_out import scale_out

    executed = json.loads((tmp / "05_sizing_report.ipynb").read_text())
    printed = [line for c in executed["cells"] for o in c.get("outputs", []) if o.get("output_type") == "stream"
               for line in "".join(o["text"]).splitlines() if "segment replicas" in line]
    assert printed, "the notebook shows how the recommendation grows"
    doc = pdfium.PdfDocument(str(tmp / "report.pdf"))
    report = " ".join(" ".join(doc[i].get_textpage().get_text_range().split()) for i in range(len(doc)))
    for sentence in printed:
        assert " ".join(sentence.split()) in report, sentence
    d = load_sizing_data(tmp / "sweep-out")
    best = find(d).best
    assert best is not None
    grow = next(m for m in read_movement(d, best) if m.before == int(best["servers"]))
    sc, _, seed = point_of(d, best)
    direct = scale_out(sc, grow.after, seed=seed)  # what `workbench scale-out --servers M` runs
    assert (grow.segments_moved, grow.bytes_moved) == (direct.plan.segments_moved, direct.plan.bytes_moved)
    assert grow.p99_after is not None and grow.p99_after[0] == direct.after.latency_ms.p99.value
    assert grow.p99_before is not None and grow.p99_before[0] == direct.before.latency_ms.p99.value


CHECKS: dict[str, Callable[[list[dict[str, Any]], Path], None]] = {
    "01_routing_and_fanout.ipynb": check_routing,
    "02_pruning.ipynb": check_pruning,
    "03_caching.ipynb": check_caching,
    "04_upsert_heap.ipynb": check_heap,
    "05_sizing_report.ipynb": check_sizing,
}


def test_every_notebook_has_small_parameters_and_a_check(tmp_path: Path) -> None:
    names = {p.name for p in NOTEBOOKS.glob("*.ipynb")}
    assert names == set(small_parameters(tmp_path)) == set(CHECKS)


@pytest.mark.parametrize("name", sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")))
def test_notebook_runs_shows_its_plots_and_its_claims_hold(name: str, tmp_path: Path) -> None:
    source = NOTEBOOKS / name
    nb = nbformat.read(source, as_version=4)
    tagged = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, "exactly one parameters cell"
    assert not any(c.get("outputs") for c in nb.cells if c.cell_type == "code"), "committed with outputs"
    params = {"project_dir": str(ROOT), **small_parameters(tmp_path).get(name, {})}
    out = tmp_path / name
    pm.execute_notebook(str(source), str(out), parameters=params, kernel_name="python3", cwd=str(NOTEBOOKS),
                        progress_bar=False)
    executed = json.loads(out.read_text())
    errors = [o for c in executed["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert errors == []
    figures = _tagged(executed["cells"], "figure")
    assert figures, "a notebook shows at least one plot"
    for cell in figures:
        kinds = [k for o in cell.get("outputs", []) for k in o.get("data", {})]
        assert "image/png" in kinds, f"no image for {''.join(cell['source'])[:60]!r}: {kinds}"
    readings = [_facts(c) for c in _tagged(executed["cells"], "reading")]
    assert readings, "a notebook reads its results"
    CHECKS[name](readings, tmp_path)
