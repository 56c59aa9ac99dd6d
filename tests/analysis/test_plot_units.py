"""The plots say what they show: no one-bar histograms, no smeared scatters, units right and on the axes."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
from matplotlib.collections import PathCollection, QuadMesh

from workbench.analysis.plots import fanout_histogram
from workbench.analysis.provisioning import ProvisioningInputs, provisioning_matrix
from workbench.analysis.readings import fanout_reading, provisioning_reading
from workbench.analysis.sizing_plots import PAUSE_MARKS_MAX, pause_timeline
from workbench.report.data import binary_size
from workbench.report.survival import AfterLoss


def test_a_fanout_every_query_shares_is_a_sentence_not_a_one_bar_plot() -> None:
    """Every query hit 6 servers: no figure, and the reading names 6; the varying segments get a panel."""
    same = pd.DataFrame({"servers_queried": [6] * 5, "segments_queried": [6] * 5})
    assert fanout_histogram(same) is None
    assert fanout_reading(same).text == "Every query touched exactly 6 servers; every query touched exactly 6 segments."
    mixed = pd.DataFrame({"servers_queried": [6] * 4, "segments_queried": [3, 6, 6, 9]})
    fig = fanout_histogram(mixed)
    assert fig is not None and len(fig.axes) == 1  # only segments vary
    assert fig.axes[0].get_xlabel() == "segments per query (segments)"
    assert fig.axes[0].get_ylabel() == "share of queries (fraction, 0-1)"
    heights = [p.get_height() for p in fig.axes[0].patches]
    assert heights == [0.25, 0.5, 0.25]  # 1, 2, 1 of 4 queries
    assert "segments per query ranged from 3 to 9 (mean 6.0)" in fanout_reading(mixed).text


def _pauses(n: int) -> pd.DataFrame:
    return pd.DataFrame({"server": [f"Server_{i % 3}" for i in range(n)], "start_s": np.linspace(0, 60, n),
                         "duration_ms": np.full(n, 20.0), "kind": "young"})


def test_many_pauses_are_counted_per_bin_not_drawn_as_overlapping_marks() -> None:
    """At or under the threshold one mark per pause; above it a binned grid whose counts sum to the pauses."""
    few = pause_timeline(_pauses(PAUSE_MARKS_MAX)).axes[0]
    assert sum(len(c.get_offsets()) for c in few.collections if isinstance(c, PathCollection)) == PAUSE_MARKS_MAX
    many = pause_timeline(_pauses(900)).axes[0]
    assert not any(isinstance(c, PathCollection) for c in many.collections)
    mesh = [c for c in many.collections if isinstance(c, QuadMesh)]
    assert len(mesh) == 1 and float(np.asarray(mesh[0].get_array()).sum()) == 900
    assert many.get_ylabel() == "server" and many.get_xlabel() == "simulated time (s)"
    assert "(count)" in many.figure.axes[1].get_ylabel()  # the colour bar says what the colour counts


def test_binary_sizes_are_mib_not_mb() -> None:
    """bytes / 2^20 is MiB: 100 x 2^20 bytes at 50 x 2^20 bytes/s is 100MiB in 2 s at 50MiB/s."""
    assert binary_size(100 * 2**20) == "100MiB"
    sentence = AfterLoss(6, 5, True, 12, 3 * 2**20, 100 * 2**20, 50 * 2**20).sentence()
    assert "100MiB" in sentence and "50MiB/s" in sentence and "MB" not in sentence


def test_the_provisioning_matrix_jumps_with_pinots_ceil_and_the_reading_says_so() -> None:
    """72 h retention, 1 GiB segments of 3600 docs at 1 doc/s per partition (t = 3600 s, so a segment of
    h hours is h GiB), 1 partition, replication 1, consuming memory 0: active = h x (ceil(72/h) - 1) GiB,
    by hand 68 at 4 h, 70 at 5 h, 66 at 6 h: up, then down."""
    p = ProvisioningInputs(sample_segment_bytes=2**30, sample_segment_docs=3600, ingestion_rate=1, num_partitions=1,
                           replication=1, retention_hours=72, table_retention_hours=72, consuming_bytes_per_doc=1e-12,
                           max_usable_host_memory=2**40, num_hosts=(2,), num_hours=(4, 5, 6))
    m = provisioning_matrix(p)
    assert (m["active_bytes"] / 2**30).round(3).tolist() == [68.0, 70.0, 66.0]
    r = provisioning_reading(m, 2, 72)
    assert r.facts["completed_hours_held"] == [68, 70, 66]
    assert "not monotone" in r.text and "68.0, 70.0, 66.0 GiB for 4, 5, 6 h" in r.text
    assert "ceil(72 / numHours)" in r.text and "70 h at 5 h but 66 h at 6 h" in r.text
    # a table of a few MiB reads in MiB, not as 0.0 GiB throughout: 1 MiB segments give 68, 70, 66 MiB
    small = provisioning_matrix(dataclasses.replace(p, sample_segment_bytes=2**20))
    assert "68.0, 70.0, 66.0 MiB for 4, 5, 6 h" in provisioning_reading(small, 2, 72).text
