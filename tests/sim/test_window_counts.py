"""A replication's ``windows`` counts, counted in one place (``records.count_window``) for both engines.

The SimPy engine writes ``error_codes`` as text, the compiled one keeps a bit mask per query; both are
counted by the same function, so the text and the mask must say the same thing. Expected values are
read off the small tables below by hand.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from workbench.sim.records import code_mask, code_text, window_counts

TEXTS = ["", "240", "250,427", "211,240,250,305,425,427", "305"]
#: Bits in ERROR_CODES order: 211 -> 1, 240 -> 2, 250 -> 4, 305 -> 8, 425 -> 16, 427 -> 32.
MASKS = [0, 2, 4 + 32, 63, 8]


def test_text_and_mask_are_each_others_inverse() -> None:
    assert code_mask(pd.Series(TEXTS, dtype="string")).tolist() == MASKS
    assert code_text(np.array(MASKS)).tolist() == TEXTS
    assert code_mask(pd.Series([None, ""], dtype="string")).tolist() == [0, 0]


def test_a_code_outside_the_counted_ones_is_errored_but_in_no_code_column() -> None:
    frame = pd.DataFrame({"error_codes": pd.Series(["999", ""], dtype="string"), "partial": [True, False],
                          "gc_delayed": [False, False], "cache_hit": pd.Series(["", ""], dtype="string"),
                          "servers_queried": [1, 1], "segments_queried": [2, 2]})
    counts = window_counts(frame)
    assert counts["errored"] == 1
    assert all(counts[f"code_{c}"] == 0 for c in (211, 240, 250, 305, 425, 427))


def test_counts_of_a_small_table() -> None:
    frame = pd.DataFrame({
        "error_codes": pd.Series(TEXTS, dtype="string"),
        "partial": [False, True, True, True, True],
        "gc_delayed": [True, False, True, False, False],
        "cache_hit": pd.Series(["", "result", "", "", ""], dtype="string"),
        "servers_queried": [3, 2, 2, 4, 1],
        "segments_queried": [10, 5, 6, 12, 1],
    })
    assert window_counts(frame) == {
        "queries": 5, "partial": 4, "gc_delayed": 2, "cache_hits": 1, "servers_queried": 12,
        "segments_queried": 34, "errored": 4, "code_211": 1, "code_240": 2, "code_250": 2, "code_305": 2,
        "code_425": 1, "code_427": 2,
    }
