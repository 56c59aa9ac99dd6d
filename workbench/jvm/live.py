"""The live heap of a Pinot server JVM: a static part plus the upsert primary-key map.

The G1 and ZGC models need the live heap split in two because the parts behave differently: the
static part (segments' on-heap structures, caches, the JVM itself) is just old data, while the upsert
map is old data that ingestion keeps *updating*, which is what makes young pauses scan old objects
(remembered-set work, :mod:`workbench.jvm.g1`). Bytes per key come from the JVM object-layout model
of :mod:`workbench.pinot.heap`.

>>> live = LiveHeap.for_upsert(1 << 30, 2_000_000, ("LONG",), "NONE")
>>> round(live.bytes_per_key, 1), live.total == (1 << 30) + live.map_bytes
(152.4, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from workbench.errors import InputError
from workbench.pinot.heap import upsert_bytes_per_key

__all__ = ["LiveHeap"]


@dataclass(frozen=True)
class LiveHeap:
    """Live bytes of one JVM.

    Attributes
    ----------
    static_bytes
        Long-lived data other than the upsert map, bytes.
    upsert_keys
        Primary keys in the upsert map(s) this JVM holds.
    bytes_per_key
        Heap bytes per key (map node, table slot, key wrapper, record location, comparison value).
    """

    static_bytes: float
    upsert_keys: int = 0
    bytes_per_key: float = 0.0

    def __post_init__(self) -> None:
        for name in ("static_bytes", "upsert_keys", "bytes_per_key"):
            if getattr(self, name) < 0:
                raise InputError(name, f"must be >= 0, got {getattr(self, name)}")

    @classmethod
    def for_upsert(cls, static_bytes: float, upsert_keys: int, primary_key_types: Sequence[str] = ("LONG",),
                   hash_function: str = "NONE", comparison_type: str = "LONG",
                   avg_string_length: float | None = None) -> LiveHeap:
        """The live heap with ``upsert_keys`` keys of the given types at the heap model's bytes per key."""
        per_key = (upsert_bytes_per_key(list(primary_key_types), hash_function, comparison_type,
                                        num_keys=upsert_keys, avg_string_length=avg_string_length)
                   if upsert_keys > 0 else 0.0)
        return cls(float(static_bytes), int(upsert_keys), per_key)

    @property
    def map_bytes(self) -> float:
        """Bytes of the upsert map, bytes."""
        return self.upsert_keys * self.bytes_per_key

    @property
    def total(self) -> float:
        """All live bytes, bytes."""
        return self.static_bytes + self.map_bytes
