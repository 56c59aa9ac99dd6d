"""Draws shared by the event generator and the user-schema columns: Zipf ranks from uniforms, and a
per-key computation spread to the rows (so a value fixed per key is computed once per key)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from workbench.workload.timeline import F64

__all__ = ["ZIPF_HEAD", "per_key", "zipf_ranks"]

I64 = npt.NDArray[np.int64]
#: Head of the Zipf distribution sampled exactly; the tail by the continuous inverse CDF.
ZIPF_HEAD = 4096


def zipf_ranks(u: F64, n: int, s: float) -> I64:
    """Ranks 0..n-1 with P(rank r) ∝ (r+1)^-s, from uniforms ``u``.

    The first ``ZIPF_HEAD`` ranks are drawn from their exact probabilities; the tail, where ranks are
    individually rare, from the continuous density x^-s on [head+½, n+½) rounded to the nearest rank.
    """
    head = min(n, ZIPF_HEAD)
    weights = np.arange(1, head + 1, dtype=np.float64) ** -s
    lo, hi = head + 0.5, n + 0.5
    harmonic = abs(s - 1) < 1e-12
    tail = 0.0 if head == n else (math.log(hi / lo) if harmonic else (hi ** (1 - s) - lo ** (1 - s)) / (1 - s))
    total = weights.sum() + tail
    mass = u * total
    ranks = np.searchsorted(np.cumsum(weights), mass, side="right").astype(np.int64)
    in_tail = ranks >= head
    if in_tail.any():
        v = mass[in_tail] - weights.sum()
        x = lo * np.exp(v) if harmonic else (lo ** (1 - s) + v * (1 - s)) ** (1 / (1 - s))
        ranks[in_tail] = np.clip(np.floor(x + 0.5).astype(np.int64) - 1, head, n - 1)
    out: I64 = np.minimum(ranks, n - 1)
    return out


def per_key(key_id: I64, compute: Callable[[I64], Any]) -> Any:
    """``compute(key ids)`` evaluated once per key rather than once per row, then spread to the rows.

    When the ids span a range at most twice the row count (Zipf keys, lifecycle blocks) it runs on
    that whole range and rows index into it; otherwise on the distinct ids. ``compute`` returns a
    numpy or Arrow array aligned with its input.
    """
    if not len(key_id):
        return compute(key_id)
    lo, hi = int(key_id.min()), int(key_id.max())
    if hi - lo < 2 * len(key_id):
        index, keys = key_id - lo, np.arange(lo, hi + 1, dtype=np.int64)
    else:
        keys, inverse = np.unique(key_id, return_inverse=True)
        index = inverse.ravel()
    values = compute(keys)
    return values.take(pa.array(index)) if isinstance(values, pa.Array) else values[index]
