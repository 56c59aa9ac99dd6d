"""Benchmark: upsert metadata manager throughput, bootstrap, snapshots, restart and expiry cost.

Every figure is measured in this process, in the same run, so the ratios hold on a noisy machine;
each timing is the best of ``REPEATS`` runs on fresh state.

* Ingest: records/s consumed through ``add_records`` (10k-record batches, one consuming segment) and
  ``add_record`` against a bare dict loop doing the same comparison (goal: >= 0.5x the dict loop).
* Bootstrap: adding immutable segments holding the same records, vectorised (``add_segments``) and
  one at a time (``add_segment``), against the same dict loop (goal for the vectorised path: >= 3x).
* Snapshot: write and read of a 10M-doc segment's validDocIds in Roaring's portable format.
* Restart: recovering a partition with and without validDocIds snapshots (preload).
* Expiry: sweep cost of the three removal strategies over one replay (keys scanned, seconds, peak keys).
* Heap: bytes per key of our JVM model beside Pinot's estimator for common key shapes.

Run: ``python benchmarks/bench_upsert.py [--quick]``.
"""

from __future__ import annotations

import argparse
import gc
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from workbench.pinot.heap import pinot_estimate, upsert_bytes_per_key
from workbench.pinot.upsert import PartitionUpsertMetadataManager, SegmentInput
from workbench.pinot.upsert import snapshot as snap
from workbench.pinot.upsert.replay import replay_partition, synthetic_stream
from workbench.pinot.upsert.segments import bitmap_from_flags

REPEATS = 5


def _nothing() -> None:
    return None


def best_of(run: Callable[[Any], object], setup: Callable[[], Any] = _nothing, repeats: int = REPEATS) -> float:
    """Best wall time in seconds of ``run(setup())`` over ``repeats`` fresh setups (setup not timed)."""
    best = float("inf")
    for _ in range(repeats):
        state = setup()
        start = time.perf_counter()
        run(state)
        best = min(best, time.perf_counter() - start)
    return best


def race(variants: dict[str, tuple[Callable[[Any], object], Callable[[], Any]]],
         repeats: int = REPEATS) -> dict[str, float]:
    """Best time per variant, running the variants in turn each round so load swings hit them alike."""
    best = dict.fromkeys(variants, float("inf"))
    for _ in range(repeats):
        for label, (run, setup) in variants.items():
            state = setup()
            start = time.perf_counter()
            run(state)
            best[label] = min(best[label], time.perf_counter() - start)
    return best


def records(n: int, num_keys: int, rng: np.random.Generator) -> tuple[list[int], list[int]]:
    """Keys drawn uniformly; times increasing with 2% of records up to 10 minutes late (ties happen)."""
    keys = rng.integers(0, num_keys, n)
    times = np.sort(rng.integers(0, n * 10, n)) - (rng.random(n) < 0.02) * rng.integers(0, 600_000, n)
    return keys.tolist(), times.tolist()


def dict_loop(keys: list[int], values: list[int], _: object = None) -> dict[int, tuple[int, int]]:
    """The baseline: one dict, the same >= comparison, nothing else."""
    d: dict[int, tuple[int, int]] = {}
    get = d.get
    for doc, (k, v) in enumerate(zip(keys, values, strict=True)):
        cur = get(k)
        if cur is None or v >= cur[1]:
            d[k] = (doc, v)
    return d


def without_gc(run: Callable[[Any], object], state: object = None) -> None:
    """Run with the cyclic GC paused, as the manager's bulk loops do (the fairest baseline for them)."""
    gc.disable()
    try:
        run(state)
    finally:
        gc.enable()


def rate(n: int, seconds: float) -> str:
    return f"{n / seconds / 1e6:6.2f} M rec/s"


# -- ingest ------------------------------------------------------------------------------------------------
def consuming(**kw: Any) -> PartitionUpsertMetadataManager:
    m = PartitionUpsertMetadataManager.of(**kw)
    m.start_new_consuming_segment("t__0__0__20240101T0000Z")
    return m


def ingest_batches(keys: list[int], values: list[int], batch: int = 10_000) -> Callable[[Any], None]:
    def run(m: PartitionUpsertMetadataManager) -> None:
        for lo in range(0, len(keys), batch):
            m.add_records("t__0__0__20240101T0000Z", keys[lo:lo + batch], values[lo:lo + batch])
    return run


def ingest_single(keys: list[int], values: list[int]) -> Callable[[Any], None]:
    def run(m: PartitionUpsertMetadataManager) -> None:
        add = m.add_record
        for doc, (k, v) in enumerate(zip(keys, values, strict=True)):
            add("t__0__0__20240101T0000Z", doc, k, v)
    return run


def bench_ingest(n: int, rng: np.random.Generator, root: Path) -> None:
    keys, values = records(n, n // 4, rng)
    loop = partial(dict_loop, keys, values)
    variants: dict[str, tuple[Callable[[Any], object], Callable[[], Any]]] = {
        "bare dict loop": (loop, _nothing),
        "bare dict loop, gc off": (partial(without_gc, loop), _nothing),
        "add_records, NONE": (ingest_batches(keys, values), partial(consuming)),
        "add_records, metadataTTL": (ingest_batches(keys, values), partial(
            consuming, metadata_ttl=3_600_000, enable_snapshot=True, snapshot_dir=root)),
        "add_records, delete column": (ingest_batches(keys, values), partial(consuming, delete_record_column="d")),
        "add_records, drop late": (ingest_batches(keys, values), partial(consuming, drop_out_of_order_record=True)),
    }
    best = race(variants)
    single = race({"add_record (one call each)": (ingest_single(keys, values), partial(consuming)),
                   "bare dict loop": (loop, _nothing)}, repeats=1)
    md5 = race({"add_records, MD5 keys": (ingest_batches(keys, values), partial(consuming, hash_function="MD5")),
                "bare dict loop": (loop, _nothing)}, repeats=1)
    print(f"\n== ingest: {n:,} records over {n // 4:,} keys (best of {REPEATS}, interleaved) ==")
    base, base_off = best["bare dict loop"], best["bare dict loop, gc off"]
    print(f"  {'bare dict loop':28s}{rate(n, base)}   (gc off {rate(n, base_off)})")
    for label in list(variants)[2:]:
        t = best[label]
        print(f"  {label:28s}{rate(n, t)}   {base / t:4.2f}x the dict loop ({base_off / t:4.2f}x gc off)")
    for extra in (single, md5):
        label = next(k for k in extra if k != "bare dict loop")
        t = extra[label]
        print(f"  {label:28s}{rate(n, t)}   {extra['bare dict loop'] / t:4.2f}x the dict loop (one round)")


# -- bootstrap ---------------------------------------------------------------------------------------------
def segment_inputs(keys: list[int], values: list[int], num_segments: int) -> list[SegmentInput]:
    step = len(keys) // num_segments
    return [SegmentInput(f"t__0__{i}__20240101T0000Z", np.asarray(keys[i * step:(i + 1) * step]),
                         np.asarray(values[i * step:(i + 1) * step])) for i in range(num_segments)]


def one_by_one(segments: list[SegmentInput]) -> Callable[[Any], None]:
    def run(m: PartitionUpsertMetadataManager) -> None:
        for s in segments:
            m.add_segment(s.name, s.primary_keys, s.comparison_values)
    return run


def bench_bootstrap(n: int, rng: np.random.Generator) -> None:
    print(f"\n== bootstrap: {n:,} records in 20 segments (best of {REPEATS}, interleaved) ==")
    for updates_per_key in (4, 10):
        keys, values = records(n, n // updates_per_key, rng)
        segments = segment_inputs(keys, values, 20)
        loop = partial(dict_loop, keys, values)
        best = race({"dict": (loop, _nothing), "dict, gc off": (partial(without_gc, loop), _nothing),
                     "add_segments": (partial(PartitionUpsertMetadataManager.add_segments, segments=segments),
                                      PartitionUpsertMetadataManager.of)})
        seq = race({"one by one": (one_by_one(segments), PartitionUpsertMetadataManager.of)}, repeats=1)["one by one"]
        base, base_off, vec = best["dict"], best["dict, gc off"], best["add_segments"]
        print(f"  {updates_per_key:2d} records/key: bare dict loop {rate(n, base)} (gc off {rate(n, base_off)})\n"
              f"      add_segments (vectorised)  {rate(n, vec)}  {base / vec:5.2f}x the dict loop "
              f"({base_off / vec:5.2f}x gc off)\n"
              f"      add_segment one by one     {rate(n, seq)}  {base / seq:5.2f}x the dict loop (one round)")


# -- snapshots and restart -----------------------------------------------------------------------------------
def bench_snapshot(docs: int, rng: np.random.Generator, root: Path) -> None:
    print(f"\n== snapshot of a {docs:,}-doc segment ==")
    for label, mask in (("random 50% valid", rng.random(docs) < 0.5),
                        ("runs, 90% valid", np.repeat(rng.random(docs // 1000) < 0.9, 1000))):
        build = best_of(lambda _, mask=mask: bitmap_from_flags(mask))
        bitmap = bitmap_from_flags(mask)
        path = snap.snapshot_path(root, f"big_{label[:4]}", snap.VALID_DOC_IDS)
        write = best_of(lambda _, b=bitmap, p=path: snap.write_bitmap(p, b))
        read = best_of(lambda _, p=path: snap.read_bitmap(p, docs))
        size = path.stat().st_size
        print(f"  {label:17s} build {build * 1e3:7.1f} ms | write {write * 1e3:7.1f} ms | "
              f"read {read * 1e3:7.2f} ms | {size / 1e3:9.1f} kB ({size * 8 / docs:.3f} bits/doc)")


def bench_restart(n: int, rng: np.random.Generator, root: Path) -> None:
    print(f"\n== restart: {n:,} records in 20 segments, {n // 4:,} keys ==")
    keys, values = records(n, n // 4, rng)
    segments = segment_inputs(keys, values, 20)
    live = PartitionUpsertMetadataManager.of(enable_snapshot=True, snapshot_dir=root)
    for s in segments:
        live.start_new_consuming_segment(s.name)
        live.add_records(s.name, s.primary_keys, s.comparison_values)
        live.seal_consuming_segment(s.name)
    live.start_new_consuming_segment("t__0__99__20240101T0000Z")  # snapshots every committed segment

    def fresh(preload: bool) -> PartitionUpsertMetadataManager:
        return PartitionUpsertMetadataManager.of(enable_snapshot=True, snapshot_dir=root, enable_preload=preload)

    def recover(m: PartitionUpsertMetadataManager) -> None:
        m.recover(segments)

    best = race({"rebuild": (recover, partial(fresh, False)), "preload": (recover, partial(fresh, True))})
    rebuild_vec, preload = best["rebuild"], best["preload"]
    rebuild_seq = best_of(one_by_one(segments), partial(fresh, False), repeats=1)
    print(f"  full rebuild, vectorised  {rebuild_vec:6.2f} s")
    print(f"  full rebuild, one by one  {rebuild_seq:6.2f} s")
    print(f"  preload from snapshots    {preload:6.2f} s   ({rebuild_seq / preload:4.1f}x faster than one by one, "
          f"{rebuild_vec / preload:4.1f}x than vectorised)")


# -- expiry strategies ---------------------------------------------------------------------------------------
def bench_expiry(segments: int, per_segment: int, rng: np.random.Generator, root: Path) -> None:
    print(f"\n== expiry: {segments} hourly segments x {per_segment:,} records, metadataTTL 3 h ==")
    stream = synthetic_stream(rng, segments, per_segment, update_fraction=0.5, active_window_ms=2 * 3_600_000)
    variants: dict[str, dict[str, Any]] = {
        "at_commit (Pinot)": {},
        "periodic_scan 6 h": {"expiry": "periodic_scan", "scan_interval": 6 * 3_600_000},
        "two_map_rotation": {"expiry": "two_map_rotation"},
    }
    for label, kw in variants.items():
        m = PartitionUpsertMetadataManager.of(metadata_ttl=3 * 3_600_000, enable_snapshot=True,
                                           snapshot_dir=root / label.split()[0], **kw)
        start = time.perf_counter()
        samples = replay_partition(stream, m, count_duplicates=False)
        total = time.perf_counter() - start
        st = m.expiry_stats
        removed = st.metadata_ttl_removed + st.rotation_dropped
        print(f"  {label:19s} scanned {st.keys_scanned:>10,} | removed {removed:>9,}"
              f" | expiry {st.seconds * 1e3:7.1f} ms of {total:5.2f} s | peak keys {m.max_primary_keys:>8,}"
              f" | final heap {samples[-1].total_bytes / 1e6:6.1f} MB")


def show_heap() -> None:
    print("\n== bytes per key at 1M keys: our JVM model vs Pinot's estimator ==")
    shapes = ((["LONG"], "NONE", "LONG"), (["LONG"], "MD5", "LONG"), (["LONG"], "XXHASH", "LONG"),
              (["STRING"], "NONE", "LONG"), (["STRING"], "MURMUR3", "LONG"), (["INT", "LONG"], "NONE", "INT"))
    for types, hf, cmp_type in shapes:
        ours = upsert_bytes_per_key(types, hf, cmp_type, avg_string_length=36)
        size = 36 if "STRING" in types else -1
        pinot = pinot_estimate(types, 1, [cmp_type], primary_key_size=size)
        print(f"  {'+'.join(types):9s} {hf:8s} cmp {cmp_type:4s}  ours {ours:6.1f} B   "
              f"pinot {pinot['bytesPerKey'] + pinot['bytesPerValue']:4d} B")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes for a smoke run")
    args = parser.parse_args()
    n = 200_000 if args.quick else 1_000_000
    rng = np.random.default_rng(2024)
    with tempfile.TemporaryDirectory(prefix="bench-upsert-") as tmp:
        root = Path(tmp)
        bench_ingest(n, rng, root / "ingest")
        bench_bootstrap(n, rng)
        bench_snapshot(1_000_000 if args.quick else 10_000_000, rng, root / "snap")
        bench_restart(n, rng, root / "restart")
        bench_expiry(24 if args.quick else 72, 5_000 if args.quick else 10_000, rng, root / "expiry")
    show_heap()


if __name__ == "__main__":
    main()
