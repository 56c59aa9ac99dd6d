"""Servers the table's shape gives no data are named at ``validate`` and in the run's summary.

Hand computation (Pinot's realtime assignment without replica groups): the table's default instance
partitions are the servers sorted by name and rotated by ``abs(hashCode(tableNameWithType)) % servers``
(``InstancePartitionsUtils.computeDefaultInstancePartitions``); stream partition ``p``'s segments go to
the rotated list's server ``p % servers`` (one replica), and without a ``tagOverrideConfig`` completed
segments stay where they were consumed. 4 partitions x 1 replica on 6 servers fill 4 servers: 2 hold no data.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from workbench.api import check_scenario, scenario_warnings
from workbench.cli import main
from workbench.runs import run_scenario
from workbench.workload.pure import generate_local

ROOT = Path(__file__).resolve().parents[2]


def _java_hash(text: str) -> int:
    """``String.hashCode()``: s[0]*31^(n-1) + ... + s[n-1], in 32-bit two's complement."""
    h = 0
    for ch in text:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h - 2**32 if h >= 2**31 else h


def _idle_by_hand(table: str, partitions: int, servers: int) -> list[str]:
    names = sorted(f"Server_{i}" for i in range(servers))
    rotation = abs(_java_hash(table)) % servers
    rotated = names[rotation:] + names[:rotation]
    holding = {rotated[p % servers] for p in range(partitions)}
    return [n for n in names if n not in holding]


def _scenario(servers: int, partitions: int = 4) -> dict[str, Any]:
    table = json.loads((ROOT / "scenarios" / "tables" / "events_REALTIME.json").read_text())
    table["segmentsConfig"]["replicasPerPartition"] = "1"
    del table["tenants"]["tagOverrideConfig"]  # completed segments stay on the servers that consumed them
    table["tableIndexConfig"]["segmentPartitionConfig"]["columnPartitionMap"]["key_id"]["numPartitions"] = partitions
    return {"cluster": {"servers": servers, "server": {"cores": 2}}, "table": table,
            "workload": {"generate": {"events": 20000, "partitions": partitions, "seed": 3}},
            "simulation": {"duration_s": 3, "warmup_s": 0.5, "replications": 1, "seed": 1}}


def test_the_hand_computation_leaves_two_servers_idle() -> None:
    assert len(_idle_by_hand("events_REALTIME", 4, 6)) == 2


def test_validate_names_the_servers_that_hold_no_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "idle.json"
    path.write_text(json.dumps(_scenario(servers=6)))
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    idle = _idle_by_hand("events_REALTIME", 4, 6)
    assert out[1] == (f"{path}: WARNING: 2 servers ({', '.join(idle)}) hold no data: the table's 4 stream "
                      "partitions x 1 replica (segmentsConfig) place data on 4 of 6 servers; run 4 servers, or give "
                      "the table at least 6 stream partitions so that stream partitions x replicas covers 6 servers")


@pytest.mark.parametrize(("servers", "partitions"), [(4, 4), (6, 6)])
def test_a_shape_that_uses_every_server_has_no_warning(servers: int, partitions: int) -> None:
    warnings = scenario_warnings(check_scenario(_scenario(servers, partitions)))
    assert not [w for w in warnings if "hold no data" in w]  # (its 5,000-row segments are warned about as tiny)


def test_the_run_summary_counts_and_names_them(tmp_path: Path) -> None:
    sc = check_scenario(_scenario(servers=6))
    assert sc.workload.generate is not None
    generate_local(sc.workload.generate, tmp_path / "data", table=sc.table.table_name, table_config=sc.table,
                   progress=False)
    summary = run_scenario(sc, None, data=tmp_path / "data").summary
    idle = _idle_by_hand("events_REALTIME", 4, 6)
    assert summary.table_fit.servers_without_data == 2
    assert summary.table_fit.why.startswith(f"2 servers ({', '.join(idle)}) hold no data")
    assert summary.servers_idle >= 2  # they answered no query
    assert "WARNING: 2 servers" in summary.headline()
