"""RealtimeProvisioningHelper arithmetic against the reference's [COMPUTED] illustration (§8)."""

from __future__ import annotations

import pytest

from workbench.analysis.provisioning import ProvisioningInputs, from_bytes, provisioning_matrix

MIB = 1024**2


@pytest.mark.parametrize(("n", "text"), [(0, "0B"), (1023, "1023B"), (1024, "1K"), (1536, "1.5K"),
                                         (754_974_720, "720M"), (10.2 * 1024**3, "10.2G")])
def test_from_bytes(n: float, text: str) -> None:
    assert from_bytes(n) == text


def test_computed_vector() -> None:
    # S = 100 MiB, D = 1e6, 1000 msg/s -> t = 1000 s; h = 2 -> completed 754,974,720 B ("720M");
    # R = 24 -> 12 active segments; TR = 72 -> 35 completed; 8 partitions x 2 replicas on 4 hosts -> pph 4;
    # active = 4 * (754,974,720 * 11 + C) = 33,218,887,680 + 4C. Take C = docs x (S / D) to fix C.
    p = ProvisioningInputs(100 * MIB, 1_000_000, 1000, 8, 2, 24, 72, num_hosts=(4,), num_hours=(2,))
    row = provisioning_matrix(p).iloc[0]
    consuming = 7_200_000 * (100 * MIB / 1_000_000)
    assert row["segment_size"] == "720M"
    assert row["rows_in_segment"] == 7_200_000
    assert row["active_bytes"] == pytest.approx(33_218_887_680 + 4 * consuming)
    assert row["mapped_bytes"] == pytest.approx(4 * consuming + 35 * 4 * 754_974_720)
    assert row["segments_queried"] == 12 * 4


def test_hours_beyond_retention_and_over_memory_are_na() -> None:
    p = ProvisioningInputs(100 * MIB, 1_000_000, 1000, 8, 2, retention_hours=6, table_retention_hours=72,
                           max_usable_host_memory=4 * 1024**3, num_hosts=(2, 16), num_hours=(2, 8))
    m = provisioning_matrix(p)
    assert set(m["num_hours"]) <= {2}  # 8 h > 6 h retention: NA
    assert 2 not in set(m["num_hosts"])  # 16 partitions on 2 hosts exceed 4 GiB
