"""The model against a whole running Pinot cluster, query by query (issue #23's agreement on real Pinot).

One Helix cluster (ZooKeeper, Pinot's controller and broker, four servers joined as participants) serves the three
table configs of ``tables.AGREEMENT_CASES`` at once: time pruning on epoch milliseconds and partition pruning with
Murmur over replica groups 2 x 2; time pruning on a day column with balanced routing over two replicas; partition
pruning alone with strict replica groups and one replica. Pinot's controller assigns the uploaded segments (its own
balanced and replica-group assignment, not the model's), its broker prunes and routes, its servers scan. For every
query, the model plans the same SQL on the controller's ideal state with the broker's request id
(:func:`~workbench.groundtruth.agreement.measured_agreement`) and must agree on every field compared: the segments
queried and pruned by the broker, the servers queried (the exact servers where routing follows the request id), the
documents scanned and segments matched (a selection with ``LIMIT`` and no ``ORDER BY`` stops early in Pinot at a point
that varies between runs of Pinot itself: its documents are not compared), and each segment's ZK time range and
partitions as the controller wrote them.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import pytest
import tables
from procs import proc_stats

from workbench.groundtruth.agreement import Agreement, measured_agreement
from workbench.groundtruth.build import ensure_built
from workbench.groundtruth.helix_cluster import HelixTable, helix_cluster
from workbench.groundtruth.helix_load import sequential_records

QUERIES = 160


@dataclass(frozen=True)
class Case:
    table: HelixTable
    records: pd.DataFrame
    ideal_state: dict[str, dict[str, str]]
    agreement: Agreement


def _table(case: str) -> tuple[HelixTable, list[str]]:
    config, time_column, day = tables.AGREEMENT_CASES[case]
    raw = case.replace("-", "_")
    config = {**config, "tableName": f"{raw}_OFFLINE"}
    schema = {**tables.schema(time_column, day), "schemaName": raw}
    frame = tables.rows(seed=11, n=6000, time_column=time_column, day=day)
    partitions = config["tableIndexConfig"]["segmentPartitionConfig"]["columnPartitionMap"]["memberId"][
        "numPartitions"]
    segments = tables.cut(frame, time_column, 2 if day else 3 * tables.HOUR, partitions)
    lo, hi = int(frame[time_column].min()), int(frame[time_column].max())
    sql = [q.replace("FROM clicks", f"FROM {raw}") for q in tables.queries(
        seed=5, n=QUERIES, time_column=time_column, lo=lo, hi=hi, span=4 if day else 6 * tables.HOUR)]
    return HelixTable(config, schema, segments), sql


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Case], tuple[int, ...]]:
    made = {case: _table(case) for case in sorted(tables.AGREEMENT_CASES)}
    out = {}
    with helix_cluster(*(t for t, _ in made.values()), num_servers=4,
                       logs_dir=tmp_path_factory.mktemp("helix-agreement")) as cluster:
        version = ensure_built().version
        for case, (table, sql) in made.items():
            records = sequential_records(cluster, sql)
            ideal = cluster.ideal_state(table.raw)
            zk = {name: {str(k): str(v) for k, v in fields.items()}
                  for name, fields in cluster.get(f"/segments/{table.raw}/zkmetadata?type=OFFLINE").items()}
            out[case] = Case(table, records, ideal, measured_agreement(
                table.config, table.schema, table.segments, ideal, zk, records, version))
        pids = cluster.pids
    return out, pids


@pytest.mark.parametrize("case", sorted(tables.AGREEMENT_CASES))
def test_the_model_agrees_with_a_running_pinot_cluster_on_every_query(
        compared: tuple[dict[str, Case], tuple[int, ...]], case: str) -> None:
    result = compared[0][case].agreement
    assert result.queries == QUERIES
    assert result.disagreements == (), f"{case}: {result.to_json()['disagreements'][:5]}"
    assert result.agreed == QUERIES


@pytest.mark.parametrize("case", sorted(tables.AGREEMENT_CASES))
def test_pinot_had_something_to_disagree_about(compared: tuple[dict[str, Case], tuple[int, ...]], case: str) -> None:
    """Pinot's broker pruned segments in many queries (and reported 0 pruned for the ones with every segment pruned,
    as its empty response does), skipped servers, and its servers scanned documents."""
    records = compared[0][case].records
    assert (records["exceptions"] == "").all()
    assert (records["numSegmentsPrunedByBroker"] > 0).sum() > QUERIES // 4, case
    assert len(set(records["numServersQueried"])) > 1, case
    assert records["numDocsScanned"].sum() > 0


def test_the_controller_assigned_replica_groups_and_replicas_as_the_configs_ask(
        compared: tuple[dict[str, Case], tuple[int, ...]]) -> None:
    cases = compared[0]
    for case, replicas in (("ms-murmur-replica-groups", 2), ("day-balanced-replication-2", 2),
                           ("ms-partition-only-strict", 1)):
        ideal = cases[case].ideal_state
        assert set(ideal) == set(cases[case].table.segments), case
        assert {len(states) for states in ideal.values()} == {replicas}, case
    # Replica groups 2 x 2: each segment on one server of each group, so two servers never share a segment with
    # the same partner set across groups: the pairs used are at most 2 x 2 = 4 of the 6 possible.
    pairs = {tuple(sorted(states)) for states in cases["ms-murmur-replica-groups"].ideal_state.values()}
    assert len(pairs) <= 4


def test_no_jvm_outlives_the_cluster(compared: tuple[dict[str, Case], tuple[int, ...]]) -> None:
    pids = set(compared[1])
    assert [pid for pid, state, _, group in proc_stats() if group in pids and state != "Z"] == []
