"""Differential test: the manager against a deliberately simple reference on random event streams.

The reference below is written from the rules in the reference notes (§5.3-§5.5), with plain sets and
dicts and no attention to speed, and shares no code with the manager. Each seeded run draws a table
configuration (TTLs, deletes, out-of-order handling, hashing, snapshots, preload, the scenario-3 rule)
and a stream of consuming segments with late records, ties and deletes; between segments it may drop
the oldest segment (retention) or restart the server (rebuild, or preload from snapshots). After
every commit and restart, every segment's validDocIds and queryableDocIds and the whole key map must
agree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from workbench.pinot.upsert import PartitionUpsertMetadataManager, SegmentInput

NEG_INF = float("-inf")


# -- the reference ------------------------------------------------------------------------------------------
@dataclass(eq=False)
class RefSegment:
    name: str
    seq: int
    keys: list[int] = field(default_factory=list)
    values: list[int] = field(default_factory=list)
    deletes: list[bool] = field(default_factory=list)
    valid: set[int] = field(default_factory=set)
    queryable: set[int] = field(default_factory=set)
    mutable: bool = True
    has_bitmaps: bool = True

    def copy_docs(self) -> RefSegment:
        return RefSegment(self.name, self.seq, list(self.keys), list(self.values), list(self.deletes), mutable=False)


@dataclass
class Config:
    metadata_ttl: float
    deleted_keys_ttl: float
    delete_column: bool
    drop: bool
    rule: bool
    snapshot: bool
    preload: bool
    hash_function: str


class Reference:
    """Pinot's upsert rules, spelled out one record at a time."""

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.ttl_on = cfg.metadata_ttl > 0 or cfg.deleted_keys_ttl > 0
        self.map: dict[int, tuple[RefSegment, int, int]] = {}
        self.segments: dict[str, RefSegment] = {}
        self.watermark = NEG_INF
        self.got_record = False
        self.disk: dict[str, set[int]] = {}
        self.disk_watermark = NEG_INF

    # bitmaps
    def make_valid(self, seg: RefSegment, doc: int) -> None:
        seg.valid.add(doc)
        if not (self.cfg.delete_column and seg.deletes[doc]):
            seg.queryable.add(doc)

    @staticmethod
    def invalidate(seg: RefSegment, doc: int) -> None:
        seg.valid.discard(doc)
        seg.queryable.discard(doc)

    def raise_watermark(self, value: float) -> None:
        if self.ttl_on:
            self.watermark = max(self.watermark, float(value))

    def expired_for_rule(self, location: tuple[RefSegment, int, int]) -> bool:
        return self.cfg.rule and location[2] < self.watermark - self.cfg.metadata_ttl

    def out_of_ttl(self, max_value: float) -> bool:
        return (self.cfg.metadata_ttl > 0 and self.watermark != NEG_INF
                and max_value < self.watermark - self.cfg.metadata_ttl)

    # consuming
    def consume(self, name: str, key: int, value: int, delete: bool) -> None:
        seg = self.segments[name]
        self.got_record = True
        self.raise_watermark(value)
        location = self.map.get(key)
        if location is not None and self.expired_for_rule(location):
            location = None
        if location is not None and value < location[2]:
            if self.cfg.drop:
                return
            seg.keys.append(key)
            seg.values.append(value)
            seg.deletes.append(delete)
            return
        if location is not None:
            self.invalidate(location[0], location[1])
        seg.keys.append(key)
        seg.values.append(value)
        seg.deletes.append(delete)
        doc = len(seg.keys) - 1
        self.make_valid(seg, doc)
        self.map[key] = (seg, doc, value)

    # immutable segments
    def add_docs(self, seg: RefSegment, docs: list[int], old: RefSegment | None = None) -> None:
        old_valid = set(old.valid) if old is not None else set()
        for doc in docs:
            key, value = seg.keys[doc], seg.values[doc]
            location = self.map.get(key)
            if location is not None and location[0] is not old and self.expired_for_rule(location):
                location = None
            if location is None:
                pass
            elif location[0] is seg or location[0] is old:
                if value < location[2]:
                    continue
                if location[0] is seg:
                    self.invalidate(seg, location[1])
                else:
                    old_valid.discard(location[1])
            elif value > location[2] or (value == location[2] and seg.seq > location[0].seq):
                self.invalidate(location[0], location[1])
            else:
                continue
            self.make_valid(seg, doc)
            self.map[key] = (seg, doc, value)
        for doc in old_valid:
            key = old.keys[doc] if old is not None else -1
            if key in self.map and self.map[key][0] is old:
                del self.map[key]

    def seal(self, name: str) -> None:
        old = self.segments[name]
        new = old.copy_docs()
        self.add_docs(new, list(range(len(new.keys))), old)
        self.raise_watermark(max(new.values, default=NEG_INF))
        self.segments[name] = new

    def load(self, seg: RefSegment) -> None:
        max_value = max(seg.values, default=NEG_INF)
        if self.out_of_ttl(max_value):
            self.from_disk_or_all(seg)
        else:
            self.add_docs(seg, list(range(len(seg.keys))))
        self.raise_watermark(max_value)
        self.segments[seg.name] = seg

    def from_disk_or_all(self, seg: RefSegment) -> None:
        if seg.name in self.disk:
            for doc in self.disk[seg.name]:
                self.make_valid(seg, doc)
        else:
            seg.valid = set(range(len(seg.keys)))
            seg.queryable = set(seg.valid)
            seg.has_bitmaps = False

    def preload(self, seg: RefSegment) -> None:
        self.segments[seg.name] = seg
        for doc in sorted(self.disk[seg.name]):
            self.make_valid(seg, doc)
        if not self.disk[seg.name]:
            return  # an empty snapshot: empty bitmaps, watermark untouched
        max_value = max(seg.values, default=NEG_INF)
        if not self.out_of_ttl(max_value):
            for doc in sorted(self.disk[seg.name]):
                self.map[seg.keys[doc]] = (seg, doc, seg.values[doc])
        self.raise_watermark(max_value)

    def remove(self, name: str) -> None:
        seg = self.segments.pop(name)
        if self.out_of_ttl(max(seg.values, default=NEG_INF)):
            return
        for doc in seg.valid:
            key = seg.keys[doc]
            if key in self.map and self.map[key][0] is seg:
                del self.map[key]

    # commit-time upkeep
    def sweep(self) -> None:
        if not self.ttl_on:
            return
        meta = self.watermark - self.cfg.metadata_ttl if self.cfg.metadata_ttl > 0 else NEG_INF
        deleted = self.watermark - self.cfg.deleted_keys_ttl if self.cfg.deleted_keys_ttl > 0 else NEG_INF
        for key, (seg, doc, value) in list(self.map.items()):
            if value < meta:
                del self.map[key]
            elif self.cfg.deleted_keys_ttl > 0 and doc not in seg.queryable and value < deleted:
                del self.map[key]
                self.invalidate(seg, doc)

    def snapshot(self) -> None:
        if not self.cfg.snapshot or not self.got_record:
            return
        for seg in self.segments.values():
            if not seg.mutable and seg.has_bitmaps:
                self.disk[seg.name] = set(seg.valid)
        if self.ttl_on:
            self.disk_watermark = self.watermark

    def start(self, name: str, seq: int) -> None:
        if self.cfg.metadata_ttl > 0:
            self.snapshot()
            self.sweep()
        else:
            self.sweep()
            self.snapshot()
        self.segments[name] = RefSegment(name, seq)

    def restart(self) -> None:
        old = [s for s in self.segments.values() if not s.mutable]
        self.map, self.segments, self.got_record = {}, {}, False
        self.watermark = self.disk_watermark if self.ttl_on and self.cfg.snapshot else NEG_INF
        fresh = [s.copy_docs() for s in old]
        rest = fresh
        if self.cfg.preload and self.cfg.snapshot:
            for seg in fresh:
                if seg.name in self.disk:
                    self.preload(seg)
            rest = [s for s in fresh if s.name not in self.disk]
        for seg in rest:
            self.load(seg)


# -- driving both ------------------------------------------------------------------------------------------
def draw_config(rng: np.random.Generator) -> Config:
    delete_column = bool(rng.random() < 0.5)
    metadata_ttl = float(rng.choice([0, 0, 15, 40]))
    snapshot = metadata_ttl > 0 or bool(rng.random() < 0.5)
    return Config(metadata_ttl=metadata_ttl,
                  deleted_keys_ttl=float(rng.choice([0, 10, 30])) if delete_column else 0.0,
                  delete_column=delete_column, drop=bool(rng.random() < 0.3),
                  rule=metadata_ttl > 0 and bool(rng.random() < 0.5), snapshot=snapshot,
                  preload=snapshot and bool(rng.random() < 0.6), hash_function=str(rng.choice(["NONE", "XXHASH"])))


def new_manager(cfg: Config, root: Path) -> PartitionUpsertMetadataManager:
    return PartitionUpsertMetadataManager.of(
        metadata_ttl=cfg.metadata_ttl, deleted_keys_ttl=cfg.deleted_keys_ttl, hash_function=cfg.hash_function,
        enable_snapshot=cfg.snapshot, snapshot_dir=root, delete_record_column="del" if cfg.delete_column else None,
        drop_out_of_order_record=cfg.drop, enable_preload=cfg.preload, expired_key_is_new=cfg.rule)


def assert_same(manager: PartitionUpsertMetadataManager, ref: Reference, keys: range, where: str) -> None:
    assert sorted(manager.segment_names()) == sorted(ref.segments), where
    for name, seg in ref.segments.items():
        assert sorted(manager.valid_doc_ids(name)) == sorted(seg.valid), f"{where}: valid {name}"
        expected_queryable = seg.queryable if ref.cfg.delete_column else seg.valid
        assert sorted(manager.queryable_doc_ids(name)) == sorted(expected_queryable), f"{where}: queryable {name}"
    assert manager.num_primary_keys() == len(ref.map), where
    for key in keys:
        loc = manager.record_location(key)
        want = ref.map.get(key)
        got = None if loc is None else (loc.segment_name, loc.doc_id, loc.comparison_value)
        assert got == (None if want is None else (want[0].name, want[1], want[2])), f"{where}: key {key}"


def replay(seed: int, root: Path) -> None:
    rng = np.random.default_rng(seed)
    cfg = draw_config(rng)
    num_keys = int(rng.integers(4, 30))
    manager, ref = new_manager(cfg, root), Reference(cfg)
    for i in range(int(rng.integers(4, 12))):
        name = f"t__0__{i}__20240101T0000Z"
        manager.start_new_consuming_segment(name)
        ref.start(name, i)
        n = int(rng.integers(0, 30))
        keys = rng.integers(0, num_keys, n).tolist()
        values = (10 * i + rng.integers(-12, 10, n)).tolist()
        deletes = (rng.random(n) < 0.2).tolist() if cfg.delete_column else [False] * n
        for lo in range(0, n, 7):  # a few add_records batches and single records
            if rng.random() < 0.5:
                manager.add_records(name, keys[lo:lo + 7], values[lo:lo + 7],
                                    deletes[lo:lo + 7] if cfg.delete_column else None)
            else:
                for k, v, d in zip(keys[lo:lo + 7], values[lo:lo + 7], deletes[lo:lo + 7], strict=True):
                    manager.add_record(name, manager.segment(name).num_docs, k, v, d)
            for k, v, d in zip(keys[lo:lo + 7], values[lo:lo + 7], deletes[lo:lo + 7], strict=True):
                ref.consume(name, k, v, d)
        assert_same(manager, ref, range(num_keys), f"seed {seed} consumed {name}")
        manager.seal_consuming_segment(name)
        ref.seal(name)
        assert_same(manager, ref, range(num_keys), f"seed {seed} sealed {name}")
        if rng.random() < 0.2 and len(ref.segments) > 2:
            oldest = next(iter(ref.segments))
            manager.remove_segment(oldest)
            ref.remove(oldest)
            assert_same(manager, ref, range(num_keys), f"seed {seed} removed {oldest}")
        if rng.random() < 0.25:
            inputs = [SegmentInput(s.name, s.keys, s.values, s.deletes if cfg.delete_column else None)
                      for s in ref.segments.values()]
            manager = new_manager(cfg, root)
            manager.recover(inputs)
            ref.restart()
            assert_same(manager, ref, range(num_keys), f"seed {seed} restarted after {name}")


@pytest.mark.parametrize("block", range(8))
def test_manager_agrees_with_the_reference_on_random_streams(block: int, tmp_path: Path) -> None:
    for seed in range(block * 40, block * 40 + 40):
        replay(seed, tmp_path / str(seed))


def test_reference_itself_reproduces_the_design_doc_scenario_1() -> None:
    """Sanity check of the reference: the doc's swept pk4 comes back as a second valid record."""
    ref = Reference(Config(15, 0, False, False, False, True, False, "NONE"))
    for i, (keys, t) in enumerate([([1, 2, 3], 0), ([2, 4], 10), ([5], 30), ([4], 40)]):
        ref.start(f"s{i}", i)
        for k in keys:
            ref.consume(f"s{i}", k, t, False)
        ref.seal(f"s{i}")
    assert (ref.segments["s1"].valid, ref.segments["s3"].valid) == ({0, 1}, {0})
