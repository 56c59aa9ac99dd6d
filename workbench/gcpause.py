"""Python's cyclic garbage collector paused around bulk work that creates no reference cycles.

CPython runs a collection every 700 container allocations, and now and then walks every older object
as well. A bulk load of an upsert map of millions of fresh tuples more than doubled in cost from it;
a short simulation in a process holding pandas, pyarrow and numba spent a third of its time in full
collections that found nothing. Neither creates cycles, so deferring collection to the end loses
nothing: reference counting still frees everything as usual.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["cycle_collection_paused"]


@contextmanager
def cycle_collection_paused() -> Iterator[None]:
    """The cyclic collector off inside the block, and afterwards as it was before (also on error; a
    caller that had it off keeps it off)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
