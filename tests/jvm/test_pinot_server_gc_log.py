"""A real Apache Pinot 1.5.1 server's G1 log under query load, as JDK 17's ``-Xlog:gc*`` writes it at info level.

The fixture is the server's log from the steady validation ladder at 195.6 queries/s (``docs/validation.md``), its
per-phase and per-task lines left out (``fixtures/pinot_gc``). At info level JDK 17 logs no copied bytes: what a
collection copied is read from its survivor and old regions. The expected values are read from the log's own lines
in the test, by hand: each young collection's ``Eden regions: e->0``, ``Survivor regions: a->s``, ``Old regions``
and start time give the allocation rate (eden over the time since the previous collection started) and what it
copied.
"""

from __future__ import annotations

import gzip
import itertools
import re
from pathlib import Path

import numpy as np
import pytest

from workbench.calibrate.pipeline import committed_heap
from workbench.workload.importers.gc_calibrate import calibrate_gc
from workbench.workload.importers.gc_log import read_gc_log

LOG = Path(__file__).resolve().parents[1] / "fixtures" / "pinot_gc" / "server-1.5.1-195.6qps.log.gz"
MB = 2**20


def _text() -> str:
    return gzip.decompress(LOG.read_bytes()).decode()


def _by_hand(text: str) -> tuple[np.ndarray, np.ndarray, list[str], float]:
    """Each young collection's (after the first) allocation rate before it (eden regions over the time since the
    previous one started, MB/s) and copied bytes (survivor regions after it plus the old regions it added, MB), the
    old regions lines, and the median committed heap after a young collection, from the log's text."""
    start = {int(m[2]): float(m[1]) for m in re.finditer(r"\]\[([0-9.]+)s\]\[info\]\[gc,start\s*\] GC\((\d+)\) "
                                                         r"Pause Young", text)}
    eden = {int(m[1]): int(m[2]) for m in re.finditer(r"GC\((\d+)\) Eden regions: (\d+)->", text)}
    survivors = {int(m[1]): int(m[2]) for m in re.finditer(r"GC\((\d+)\) Survivor regions: \d+->(\d+)", text)}
    grown = {int(m[1]): int(m[3]) - int(m[2]) for m in re.finditer(r"GC\((\d+)\) Old regions: (\d+)->(\d+)", text)}
    ids = sorted(i for i in start if i in eden and i in survivors)
    pairs = [(eden[i] / (start[i] - start[p]), survivors[i] + max(grown.get(i, 0), 0))
             for p, i in itertools.pairwise(ids) if eden[i] > 0 and start[i] > start[p]]
    old = re.findall(r"Old regions: (\d+->\d+)", text)
    committed = [int(m[1]) for m in re.finditer(r"Pause Young \([^)]*\) \([^)]*\) \d+M->\d+M\((\d+)M\)", text)]
    rate, copied = np.array(pairs).T
    return rate, copied, old, float(np.median(committed)) * MB


def test_survivors_and_promotion_are_read_from_the_regions_of_a_log_without_copied_bytes(tmp_path: Path) -> None:
    """The rate between collections spread 1.5-4x (quartiles) and the survivors stayed at 1 MB: what survives a query
    server's collection does not follow its allocation, so it is ``survivor_bytes`` and ``survivor_s`` is 0."""
    text = _text()
    assert "Copied" not in text  # info level: no copied bytes
    rate, copied, old, _ = _by_hand(text)
    q1, q3 = np.quantile(rate, [0.25, 0.75])
    assert q3 > 1.5 * q1
    assert np.median(copied) == 1.0 and np.mean(copied == 1.0) > 0.8  # 1 MB after most collections, whatever the rate
    path = tmp_path / "server.log"
    path.write_text(text)
    gc = calibrate_gc(read_gc_log(path).frame)["gc"]
    assert gc["survivor_s"] == 0.0
    assert gc["survivor_bytes"] == pytest.approx(np.median(copied) * MB)
    # most collections left the old generation as they found it (Old regions: a->a), so none is promoted
    assert sum(a == b for a, b in (o.split("->") for o in old)) > len(old) / 2
    assert gc["promotion_fraction"] == 0.0


def test_the_heap_the_model_is_given_is_what_g1_kept_committed(tmp_path: Path) -> None:
    """The server ran with -Xmx256m (``Heap Max Capacity: 256M``); G1 kept 70 MB committed while it served."""
    text = _text()
    assert "Heap Max Capacity: 256M" in text
    path = tmp_path / "server.log"
    path.write_text(text)
    frame = read_gc_log(path).frame
    gc = calibrate_gc(frame)["gc"]
    assert committed_heap({str(path): frame}, gc) == pytest.approx(_by_hand(text)[3])
    assert _by_hand(text)[3] == 70 * MB
