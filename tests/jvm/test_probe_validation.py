"""The JVM models against real GC logs of the probe (tests/fixtures/gc/), not against their own output.

* The heap model's bytes per key against the live heap the JVM reports after a full GC.
* A G1 model calibrated from one log reproduces that log's young pauses (median, p95, rate: 15%).
* Held out: calibrated from the 20M-key runs, the model alone predicts the 2M- and 8M-key runs
  (young median, p95, rate: 30%; full GC: 40%). Each configuration was run twice (replicates a and b)
  on a shared 2-core machine, whose timings move from run to run (the 8M-key young p95 was 275 ms in
  one replicate and 166 ms in the other; a System.gc() of the same heap took 669 to 1235 ms), so the
  calibration uses both 20M replicates and the targets pool both of theirs. ``docs/gc.md`` gives every
  source/target pair, including the 4 GB runs, where the held-out prediction misses by more.
"""

from __future__ import annotations

import numpy as np
import pytest
from probe_fixtures import MIB, SEEDS, calibrated, live_of, pooled_observed, pooled_prediction, run

from workbench.jvm import LiveHeap, ZGCParams, zgc_cycle
from workbench.jvm.validate import observed_young, predicted_young
from workbench.pinot.heap import upsert_bytes_per_key

REGULAR = [f"g1-{heap}-{keys}-{rep}" for heap in ("4g", "6g") for keys in ("2m", "8m", "20m") for rep in "ab"]


@pytest.mark.parametrize(("series", "hash_function"), [("4g-a", "NONE"), ("4g-b", "NONE"), ("6g-a", "NONE"),
                                                      ("6g-b", "NONE"), ("6g-a", "MD5")])
def test_bytes_per_key_match_the_live_heap_per_key_the_jvm_reports(series: str, hash_function: str) -> None:
    """Slope of heap-after-System.gc() against keys, within 12% of the heap model (reference §5.3 layout)."""
    heap, rep = series.split("-")
    prefix = "g1md5" if hash_function == "MD5" else "g1"
    names = [f"{prefix}-{heap}-{keys}-{rep}" for keys in (("2m", "20m") if hash_function == "MD5" else
                                                           ("2m", "8m", "20m"))]
    runs = [run(n) for n in names]
    keys = np.array([r.keys for r in runs], dtype=float)
    measured = np.polyfit(keys, [r.live_after_system_gc for r in runs], 1)[0]
    model = np.polyfit(keys, [k * upsert_bytes_per_key(["LONG"], hash_function, num_keys=int(k)) for k in keys], 1)[0]
    assert model == pytest.approx(measured, rel=0.12)


@pytest.mark.parametrize("name", REGULAR)
def test_a_calibrated_model_reproduces_its_own_log(name: str) -> None:
    r = run(name)
    fit, live = calibrated(name)
    observed = observed_young(r.drive)
    predicted = predicted_young(fit.params, r.heap_bytes, live, r.allocation_rate, r.update_rate, r.seconds, SEEDS)
    assert predicted.errors(observed) == pytest.approx({"median": 0, "p95": 0, "rate": 0}, abs=0.15)


@pytest.mark.parametrize("target", ["2m", "8m"])
def test_held_out_key_counts_are_predicted_from_the_20m_runs(target: str) -> None:
    """Young median, p95 and rate within 30%, full GC within 40% (the issue's tolerances).

    The margin is thin at 8M keys (p95 -29.5%): the two replicates' own p95s differ by 66% (275 vs
    166 ms) and the model lands between them.
    """
    sources = ["g1-6g-20m-a", "g1-6g-20m-b"]
    targets = [f"g1-6g-{target}-a", f"g1-6g-{target}-b"]
    predicted, full_ms = pooled_prediction(sources, targets[0])
    errors = predicted.errors(pooled_observed(targets))
    assert abs(errors["median"]) <= 0.30
    assert abs(errors["rate"]) <= 0.30
    assert abs(errors["p95"]) <= 0.30
    observed_full = float(np.mean([run(n).system_gc_ms for n in targets]))
    assert full_ms == pytest.approx(observed_full, rel=0.40)


def test_the_20m_runs_predict_longer_pauses_than_the_2m_runs() -> None:
    """The point of the model: the same JVM settings, a bigger map, longer young pauses (as observed)."""
    small, _ = pooled_prediction(["g1-6g-20m-a"], "g1-6g-2m-a")
    large, _ = pooled_prediction(["g1-6g-20m-a"], "g1-6g-20m-a")
    assert observed_young(run("g1-6g-20m-a").drive).median_ms > observed_young(run("g1-6g-2m-a").drive).median_ms
    assert large.median_ms > 1.5 * small.median_ms


def test_the_tight_heap_log_shows_an_evacuation_failure_and_a_full_gc_the_model_prices() -> None:
    """20M keys on 3.5 GB: G1 ran out of to-space and compacted; base + live x rate within 40%... of 4.5 s."""
    r = run("g1-3584m-20m-a")
    full = r.frame[(r.frame["kind"].astype(str) == "full") & (r.frame["cause"].astype(str) == "G1 Compaction Pause")]
    assert len(full) == 1
    fit, _ = calibrated("g1-6g-20m-a")
    live_gib = float(full["heap_after_bytes"].iloc[0]) / (1 << 30)
    predicted = fit.params.full_base_ms + live_gib * fit.params.full_ms_per_gb
    assert predicted == pytest.approx(float(full["duration_ms"].iloc[0]), rel=0.40)


@pytest.mark.parametrize("name", ["zgc-4g-2m-a", "zgc-4g-20m-a"])
def test_zgc_pauses_are_sub_millisecond_whatever_the_map(name: str) -> None:
    frame = run(name).frame
    pauses = frame[frame["kind"].astype(str).isin(["mark_start", "mark_end", "relocate_start"])]
    assert len(pauses) > 10
    assert pauses["duration_ms"].max() < 1.0


def test_zgc_stalls_only_while_the_map_loads_and_the_model_agrees_for_the_drive_rates() -> None:
    """The 20M-key run stalls while main() loads the map (allocation unbounded), never after System.gc()."""
    r = run("zgc-4g-20m-a")
    stalls = r.frame[r.frame["kind"].astype(str) == "stall"]
    loaded = float(r.frame[r.frame["cause"].astype(str).str.contains("System.gc", na=False)]["uptime_s"].min()) \
        if "System.gc" in " ".join(r.frame["cause"].astype(str)) else float(stalls["uptime_s"].max())
    assert len(stalls) > 100 and set(stalls["cause"]) >= {"main"}
    assert (stalls["uptime_s"] <= loaded + 1.0).all()
    for keys in (2_000_000, 20_000_000):
        cycle = zgc_cycle(ZGCParams(), 4 * (1 << 30), LiveHeap.for_upsert(8 * MIB, keys), 300 * MIB, 2)
        assert cycle.stall_ms == 0.0
    rush = zgc_cycle(ZGCParams(), 4 * (1 << 30), LiveHeap.for_upsert(8 * MIB, 20_000_000), 3000 * MIB, 2)
    assert rush.stall_ms > 0.0


def test_live_heap_of_the_probe_splits_into_the_map_and_a_small_rest() -> None:
    for name in ("g1-6g-2m-a", "g1-6g-20m-a"):
        live = live_of(run(name))
        assert 0 <= live.static_bytes < 32 * MIB  # the probe holds little besides the map
