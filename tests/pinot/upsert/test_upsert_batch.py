"""The vectorised bootstrap path must end exactly where one-at-a-time adds end."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from workbench.pinot.upsert import PartitionUpsertMetadataManager, SegmentInput
from workbench.pinot.upsert.batch import winners


def random_segments(rng: np.random.Generator, names: list[str], *, strings: bool = False,
                    floats: bool = False) -> list[SegmentInput]:
    out = []
    for name in names:
        n = int(rng.integers(0, 40))
        keys: Any = rng.integers(0, 25, n)
        if strings:
            keys = [f"k{k}" for k in keys.tolist()]
        values = rng.integers(0, 6, n) * (0.5 if floats else 1)
        deletes = rng.random(n) < 0.2
        out.append(SegmentInput(name, keys, values, deletes, creation_time_ms=int(rng.integers(0, 3))))
    return out


def state(m: PartitionUpsertMetadataManager) -> tuple[dict[str, list[int]], dict[str, list[int]], dict[Any, Any]]:
    names = m.segment_names()
    return ({n: sorted(m.valid_doc_ids(n)) for n in names}, {n: sorted(m.queryable_doc_ids(n)) for n in names},
            m.primary_key_locations())


LLC = [f"t__0__{i}__20240101T0000Z" for i in (3, 1, 4, 0, 2)]
PLAIN = ["a", "b", "uploaded__t__0__1__20240101T0000Z", "c", "d"]
MIXED = ["a", LLC[0], "b", LLC[1]]


@pytest.mark.parametrize("names", [LLC, PLAIN, MIXED], ids=["llc", "plain", "mixed-fallback"])
@pytest.mark.parametrize("options", [{}, {"strings": True}, {"floats": True}], ids=["int", "str", "float"])
@pytest.mark.parametrize("hash_function", ["NONE", "MD5"])
def test_batch_equals_one_by_one(names: list[str], options: dict[str, bool], hash_function: str) -> None:
    for seed in range(15):
        segments = random_segments(np.random.default_rng(seed), names, **options)
        kw: dict[str, Any] = {"hash_function": hash_function, "delete_record_column": "d",
                              "primary_key_types": ["STRING" if options.get("strings") else "LONG"]}
        one, batch = PartitionUpsertMetadataManager.of(**kw), PartitionUpsertMetadataManager.of(**kw)
        for s in segments:
            one.add_segment(s.name, s.primary_keys, s.comparison_values, s.is_delete,
                            creation_time_ms=s.creation_time_ms)
        batch.add_segments(segments)
        assert state(batch) == state(one), f"seed {seed}"


def test_batch_merges_with_keys_already_in_the_map() -> None:
    for seed in range(20):
        rng = np.random.default_rng(seed)
        first, rest = random_segments(rng, LLC[:2]), random_segments(rng, LLC[2:])
        one, batch = PartitionUpsertMetadataManager.of(delete_record_column="d"), \
            PartitionUpsertMetadataManager.of(delete_record_column="d")
        for m in (one, batch):
            m.add_segments(first)
            m.start_new_consuming_segment("t__0__9__20240101T0000Z")
            m.add_records("t__0__9__20240101T0000Z", [1, 2, 3], [5, 0, 9])
        for s in rest:
            one.add_segment(s.name, s.primary_keys, s.comparison_values, s.is_delete)
        batch.add_segments(rest)
        assert state(batch) == state(one), f"seed {seed}"


def test_winners_take_the_largest_value_then_the_last_position() -> None:
    keys = np.array([3, 1, 3, 3, 1, 2])
    values = np.array([1, 7, 4, 4, 6, 0])
    assert winners(keys, values).tolist() == [3, 1, 5]
