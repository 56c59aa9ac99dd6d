"""The live heap splits into a static part and the upsert map at the heap model's bytes per key."""

from __future__ import annotations

import pytest

from workbench.errors import InputError
from workbench.jvm import LiveHeap
from workbench.pinot.heap import chm_table_bytes, chm_table_capacity, entry_layout


@pytest.mark.parametrize(("types", "hash_function", "keys"), [
    (("LONG",), "NONE", 2_000_000), (("LONG",), "MD5", 20_000_000), (("INT", "LONG"), "NONE", 8_000_000),
])
def test_map_bytes_are_entries_plus_the_table(types: tuple[str, ...], hash_function: str, keys: int) -> None:
    live = LiveHeap.for_upsert(1e9, keys, types, hash_function)
    entries = keys * entry_layout(list(types), hash_function).total
    assert live.map_bytes == pytest.approx(entries + chm_table_bytes(chm_table_capacity(keys)))
    assert live.total == pytest.approx(1e9 + live.map_bytes)


def test_no_keys_no_map() -> None:
    live = LiveHeap.for_upsert(5e8, 0)
    assert (live.map_bytes, live.bytes_per_key, live.total) == (0.0, 0.0, 5e8)


def test_negative_sizes_are_input_errors() -> None:
    with pytest.raises(InputError, match="static_bytes"):
        LiveHeap(-1.0)
    with pytest.raises(InputError, match="upsert_keys"):
        LiveHeap(0.0, -5, 100.0)
