"""calibrate_gc fits the g1 collector to a G1 log and splits its live heap into the upsert map and the rest."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import pandas as pd
import pytest
from importer_fixtures import FIXTURES

from workbench.cli import main
from workbench.errors import InputError
from workbench.jvm import G1Params
from workbench.workload.importers import G1_SECTION_KEYS, calibrate_gc, import_file, read_gc_log

PROBE = Path(__file__).resolve().parents[2] / "fixtures" / "gc"
KEYS = 8_000_000


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return read_gc_log(PROBE / "g1-6g-8m-a.log.gz").frame


@pytest.fixture(scope="module")
def calibration(frame: pd.DataFrame) -> dict:  # type: ignore[type-arg]
    return calibrate_gc(frame, upsert_keys=KEYS, update_rate=50_000.0)


def _observed_live(frame: pd.DataFrame) -> float:
    full = frame[frame["kind"] == "full"]
    return float(full["heap_after_bytes"].iloc[-1])


def test_gc_is_a_fitted_g1_section_with_the_keys_and_the_rest_of_the_live_heap(
        calibration: dict, frame: pd.DataFrame) -> None:  # type: ignore[type-arg]
    gc = calibration["gc"]
    assert gc["collector"] == "g1" and gc["upsert_keys"] == KEYS and gc["update_rate"] == 50_000.0
    # one LONG key, hashFunction NONE: node 32 + PrimaryKey 16 + Object[1] 24 + Long 24 + RecordLocation 24
    # + Long 24 = 144 B, plus the table: 8M keys -> 2^24 slots x 4 B (reference §5.3 layout)
    map_bytes = KEYS * 144 + (16 + 4 * 2**24)
    assert gc["live_heap"] == pytest.approx(_observed_live(frame) - map_bytes, abs=1)
    assert set(gc) == {f.name for f in fields(G1Params)} | set(G1_SECTION_KEYS)
    assert calibration["heap"] == 6 * 2**30  # -Xmx6g, for cluster.server.heap
    assert calibration["skipped"] == {}
    assert G1Params(**{k: v for k, v in gc.items() if k not in G1_SECTION_KEYS})  # valid parameters


def test_the_fixed_collector_stays_alongside(calibration: dict, frame: pd.DataFrame) -> None:  # type: ignore[type-arg]
    fixed = calibration["fixed"]
    assert fixed["collector"] == "fixed" and len(fixed["pause_ms"]["values"]) == len(frame)


def test_a_digest_key_leaves_more_of_the_live_heap_outside_the_map(frame: pd.DataFrame) -> None:
    none = calibrate_gc(frame, upsert_keys=KEYS, update_rate=50_000.0)["gc"]["live_heap"]
    md5 = calibrate_gc(frame, upsert_keys=KEYS, hash_function="MD5", update_rate=50_000.0)["gc"]["live_heap"]
    # MD5: ByteArray 16 + byte[16] 32 = 48 B per key instead of PrimaryKey + Object[1] + Long = 64 B
    assert md5 - none == pytest.approx(KEYS * 16, abs=2)


def test_without_an_update_rate_the_fit_infers_one(frame: pd.DataFrame) -> None:
    calibration = calibrate_gc(frame, upsert_keys=KEYS)
    assert calibration["g1_fit"]["update_rate_fitted"] is True and calibration["gc"]["update_rate"] > 0


def test_upsert_keys_from_a_log_that_cannot_calibrate_g1_is_one_clear_error() -> None:
    zgc = read_gc_log(PROBE / "zgc-4g-2m-a.log.gz").frame
    with pytest.raises(InputError, match=r"upsert_keys: only the g1 collector follows upsert keys.*not G1's"):
        calibrate_gc(zgc, upsert_keys=KEYS)
    sizeless = pd.DataFrame({"uptime_s": [1.0, 2.0, 3.0], "kind": ["young"] * 3, "duration_ms": [5.0, 6.0, 7.0]})
    with pytest.raises(InputError, match="no heap sizes"):
        calibrate_gc(sizeless, upsert_keys=KEYS)


def test_other_logs_calibrate_what_they_can_and_say_what_they_skipped() -> None:
    zgc = calibrate_gc(read_gc_log(PROBE / "zgc-4g-20m-a.log.gz").frame)
    assert zgc["gc"]["collector"] == "fixed" and "not G1's" in zgc["skipped"]["g1"]
    assert zgc["zgc"]["pause_ms"] < 1.0 and zgc["zgc"]["stalls"] > 100
    parallel = calibrate_gc(read_gc_log(FIXTURES / "gc_time_only.log").frame)  # one young collection
    assert parallel["gc"]["collector"] == "fixed"
    assert "needs at least 3 G1 young collections after a first one, with heap sizes" in parallel["skipped"]["g1"]


def test_more_keys_than_the_live_heap_holds_is_an_error(frame: pd.DataFrame) -> None:
    with pytest.raises(InputError, match=r"upsert_keys: .* more than the"):
        calibrate_gc(frame, upsert_keys=100_000_000)


def test_import_options_reach_the_calibration_and_other_kinds_refuse_them(tmp_path: Path) -> None:
    out = tmp_path / "gc"
    import_file("gc-log", PROBE / "g1-6g-8m-a.log.gz", out, options={"upsert_keys": KEYS, "update_rate": 5e4})
    assert json.loads((out / "gc_calibration.json").read_text())["gc"]["upsert_keys"] == KEYS
    with pytest.raises(InputError, match="upsert_keys: is not an option of the schema importer"):
        import_file("schema", FIXTURES / "schema_events.json", tmp_path / "s", options={"upsert_keys": 5})


def test_the_command_line_takes_the_key_count_hash_function_and_types(tmp_path: Path) -> None:
    out = tmp_path / "cli"
    assert main(["import", "gc-log", str(PROBE / "g1-6g-8m-a.log.gz"), "--out", str(out), "--upsert-keys",
                 str(KEYS), "--hash-function", "MD5", "--primary-key-types", "long", "--update-rate", "50000"]) == 0
    calibration = json.loads((out / "gc_calibration.json").read_text())
    assert calibration["upsert"]["hash_function"] == "MD5" and calibration["upsert"]["primary_key_types"] == ["LONG"]
    assert calibration["gc"]["collector"] == "g1"


@pytest.mark.parametrize("log", ["detailed", "jdk17 basic", "jdk8 basic"])
def test_every_key_of_the_g1_section_says_once_how_it_was_found(calibration: dict, log: str) -> None:  # type: ignore[type-arg]
    """One status per key, and ``defaulted`` is exactly the held parameters (never fitted and held at once)."""
    if log != "detailed":
        name = "gc_g1_jdk17.log" if log == "jdk17 basic" else "gc_jdk8_basic.log"
        calibration = calibrate_gc(read_gc_log(FIXTURES / name).frame)
    fit = calibration["g1_fit"]
    assert fit["log_form"] == ("detailed" if log == "detailed" else "basic")
    parameters = fit["parameters"]
    assert set(parameters) == set(calibration["gc"]) - {"collector"}
    assert {p["status"] for p in parameters.values()} <= {"fitted", "derived", "held", "given"}
    assert all(p["how"] for p in parameters.values())
    assert set(fit["defaulted"]) == {k for k, p in parameters.items() if p["status"] == "held"}
    assert parameters["update_rate"]["status"] == ("given" if log == "detailed" else "fitted")
    if log != "detailed":
        assert parameters["survivor_s"]["status"] == "held" and "basic log" in parameters["survivor_s"]["how"]
        assert "heap's growth" in parameters["allocation_rate"]["how"]
