"""The broker query-log importer reads every released line format by key name, and reports bad lines by number.

Expected values are read off the fixture lines by hand (timestamps, ``timeMs``, the slash-separated
counters), not produced by running the importer.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from importer_fixtures import FIXTURES, write

from workbench.errors import InputError
from workbench.workload.importers import QUERY_LOG_COLUMNS, read_query_log
from workbench.workload.schema import QUERIES_SCHEMA

PREFIX = "2026/01/02 03:04:05.000 INFO [QueryLogger] [jersey-1] "


@pytest.fixture(scope="module")
def versions() -> pd.DataFrame:
    return read_query_log(FIXTURES / "querylog_versions.log").frame.set_index("request_id")


def test_rows_are_in_arrival_order_which_is_log_time_minus_time_ms(versions: pd.DataFrame) -> None:
    """Arrivals: 101 at 05.678-0.022=05.656 (origin), 102 at 06.000-0.140=05.860, 104 at 08.250-1.250=07.000,
    123 at 07.500-0.456=07.044; so 104 (logged last) arrived before 123."""
    assert versions.index.tolist() == [101, 102, 104, 123]
    assert versions["query_id"].tolist() == [0, 1, 2, 3]
    assert versions["arrival_s"].tolist() == pytest.approx([0.0, 0.204, 1.344, 1.388])
    assert versions["logged_s"].tolist() == pytest.approx([0.022, 0.344, 2.594, 1.844])


def test_shared_columns_are_those_of_generated_queries(versions: pd.DataFrame) -> None:
    """``now_ms`` is the arrival's wall clock: 2026-01-02T03:04:05.656Z for request 101."""
    assert versions["now_ms"].tolist() == [1767323045656, 1767323045860, 1767323047000, 1767323047044]
    assert set(versions["kind"]) == {"observed"}
    assert set(versions["template_id"]) == set(versions["dashboard_id"]) == set(versions["viewer_id"]) == {-1}
    frame = read_query_log(FIXTURES / "querylog_versions.log").frame
    assert tuple(frame.columns[: len(QUERIES_SCHEMA)]) == tuple(QUERIES_SCHEMA.names)
    arrow = pa.Schema.from_pandas(frame, preserve_index=False)
    assert [arrow.field(f.name).type for f in QUERIES_SCHEMA] == list(QUERIES_SCHEMA.types)


def test_a_1_3_line_without_1_4_entries_parses_with_nulls_for_them(versions: pd.DataFrame) -> None:
    row = versions.loc[101]
    assert (row["table"], row["time_ms"], row["num_docs_scanned"], row["total_docs"]) == ("events_OFFLINE", 22, 1500,
                                                                                          250000)
    assert (row["num_segments_queried"], row["num_segments_processed"], row["num_segments_matched"]) == (12, 4, 3)
    assert (row["num_servers_responded"], row["num_servers_queried"], row["broker_reduce_time_ms"]) == (3, 3, 1)
    assert row["offline_thread_cpu_time_ns_total"] == 900000
    assert row["offline_thread_cpu_time_ns_sys_activity"] == 50000
    assert pd.isna(row["query_hash"]) and pd.isna(row["groups_trimmed"]) and pd.isna(row["query_engine"])
    assert not row["partial"]


def test_sql_keeps_its_commas_and_colons(versions: pd.DataFrame) -> None:
    assert versions.loc[101, "sql"] == "SELECT COUNT(*) FROM events WHERE user_id = 'u:1,2' AND ts > 1767225600000"


def test_server_stats_with_commas_and_semicolons_stays_one_value(versions: pd.DataFrame) -> None:
    assert versions.loc[101, "server_stats"] == (
        "(Server=SubmitDelayMs,ResponseDelayMs,ResponseSize,DeserializationTimeMs,RequestSentDelayMs);"
        "pinot-server-0_O=0,15,1024,0,1;pinot-server-1_O=0,18,998,0,1;pinot-server-2_O=1,20,1010,0,1")


def test_a_1_4_multistage_line_keeps_comma_values_whole(versions: pd.DataFrame) -> None:
    row = versions.loc[102]
    assert (row["table"], row["pools"], row["query_engine"], row["client_ip"]) == (
        "[events, users]", "[0, 1]", "multiStage", "10.1.2.3")
    assert (row["num_consuming_segments_queried"], row["num_segments_unavailable"]) == (2, 1)
    assert row["offline_mem_allocated_bytes_total"] == 1024 and row["offline_mem_allocated_bytes_res_ser"] == 24
    assert row["groups_trimmed"] is False or not row["groups_trimmed"]
    assert row["partial"]  # exceptions=1 and 5 of 6 servers responded


def test_the_pinot_test_example_line_parses_to_its_values(versions: pd.DataFrame) -> None:
    """QueryLoggerTest.shouldFormatLogLineProperly, with the default log4j prefix."""
    row = versions.loc[123]
    assert row["query_hash"] == "" and row["workload_name"] == "workloadName"
    assert [row[f"num_{c}"] for c in ("docs_scanned", "entries_scanned_in_filter", "entries_scanned_post_filter")] == [
        1, 3, 4]
    counters = ["num_segments_queried", "num_segments_processed", "num_segments_matched",
                "num_consuming_segments_queried", "num_consuming_segments_processed",
                "num_consuming_segments_matched", "num_segments_unavailable"]
    assert [row[c] for c in counters] == [5, 6, 7, 8, 9, 10, 21]
    assert row["consuming_freshness_time_ms"] == 11
    assert (row["num_servers_responded"], row["num_servers_queried"]) == (12, 13)
    assert (row["broker_reduce_time_ms"], row["num_exceptions"]) == (20, 0)
    assert row["realtime_thread_cpu_time_ns_total"] == 54
    assert row["rls_filters_applied"] and row["sql"] == "SELECT * FROM foo"
    assert row["partial"]  # 12 of 13 servers responded


def test_multi_line_sql_continues_on_lines_without_a_timestamp(versions: pd.DataFrame) -> None:
    row = versions.loc[104]
    assert row["sql"] == "SELECT country,\n  COUNT(*)\nFROM events\nGROUP BY country"
    assert row["query_hash"] == "3f2a9c"
    assert row["partial"]  # groupLimitReached=true


def test_counts_cover_other_lines_continuations_and_rate_limit_drops() -> None:
    counts = read_query_log(FIXTURES / "querylog_versions.log").counts
    assert dict(counts) == {"lines": 9, "records": 4, "skipped": 0, "ignored": 2, "continuation_lines": 3,
                            "dropped_by_rate_limit": 17}


def test_pre_1_0_formats_map_old_names_to_the_same_columns() -> None:
    frame = read_query_log(FIXTURES / "querylog_old.log").frame.set_index("request_id")
    old = frame.loc[7]  # "RequestId:7, table:..., segments(queried/processed/matched/consuming):4/4/2/0"
    assert (old["table"], old["time_ms"], old["num_docs_scanned"], old["total_docs"]) == ("myTable_OFFLINE", 35, 100,
                                                                                          1000)
    assert (old["num_segments_queried"], old["num_segments_matched"]) == (4, 2)
    assert old["num_consuming_segments_queried"] == 0
    assert old["sql"] == "select count(*) from myTable"
    newer = frame.loc[14]  # segments(queried/processed/matched/consuming/unavailable):1/1/1/1/0
    assert (newer["num_consuming_segments_queried"], newer["num_segments_unavailable"]) == (1, 0)
    assert (newer["offline_thread_cpu_time_ns_total"], newer["realtime_thread_cpu_time_ns_total"]) == (0, 154000)
    # arrivals 11:59:59.965 and 12:00:01.000
    assert frame["arrival_s"].tolist() == pytest.approx([0.0, 1.035])


def test_reordered_missing_and_unknown_entries_are_matched_by_name(tmp_path: Path) -> None:
    path = write(tmp_path, "q.log", PREFIX + "timeMs=9,futureFlag=true,requestId=77,servers=2/4,"
                                             "newMetric(a/b):1/2,table=t,exceptions=0,query=SELECT x FROM t")
    row = read_query_log(path).frame.iloc[0]
    assert (row["request_id"], row["time_ms"], row["table"], row["num_servers_queried"]) == (77, 9, "t", 4)
    assert json.loads(row["extra"]) == {"futureFlag": "true", "newMetric(a/b)": "1/2"}
    assert pd.isna(row["num_docs_scanned"]) and row["partial"]  # 2 of 4 servers


def test_a_query_containing_known_entry_names_is_not_split(tmp_path: Path) -> None:
    sql = "SELECT 'a,timeMs=5,query=x' FROM t"
    path = write(tmp_path, "q.log", PREFIX + f"requestId=1,table=t,timeMs=3,query={sql}")
    frame = read_query_log(path).frame
    assert frame.loc[0, "sql"] == sql and frame.loc[0, "time_ms"] == 3


def test_columns_and_dtypes_are_fixed_whatever_the_version() -> None:
    old = read_query_log(FIXTURES / "querylog_old.log").frame
    new = read_query_log(FIXTURES / "querylog_versions.log").frame
    assert tuple(old.columns) == tuple(new.columns) == QUERY_LOG_COLUMNS
    assert old.dtypes.to_dict() == new.dtypes.to_dict()
    assert str(new["partial"].dtype) == "bool" and str(new["num_docs_scanned"].dtype) == "Int64"


def test_gzipped_logs_are_read(tmp_path: Path) -> None:
    path = tmp_path / "querylog.log.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write((FIXTURES / "querylog_old.log").read_text(encoding="utf-8"))
    assert read_query_log(path).frame["request_id"].tolist() == [7, 14]


MALFORMED = [
    (PREFIX + "requestId=3,table=t,timeMs=abc,query=SELECT 3", "timeMs='abc': the value must be an integer"),
    (PREFIX + "requestId=4,table=t,timeMs=1,docs=12,query=SELECT 4", "docs='12': expected 2 integers"),
    (PREFIX + "requestId=5,table=t,timeMs=1,docs=1/2", "no ',query=<sql>' entry"),
    (PREFIX + "requestId=6,table=t,timeMs=1,segments(queried/processed/matched):1/2,query=x", "expected 3 integers"),
    (PREFIX + "requestId=7,table=t,docs=1/2,query=SELECT 7", "no timeMs= entry"),
    ("2026/13/02 03:04:05.600 INFO [QueryLogger] [t] requestId=8,table=t,timeMs=1,query=x", "not a valid date"),
    ("pinot-broker_1 | requestId=9,table=t,timeMs=1,query=SELECT 9", "no log timestamp before requestId="),
    (PREFIX + "requestId=10,table=a,timeMs=1,table=b,query=x", "entry 'table' appears twice"),
    (PREFIX + "requestId=11,table=t,timeMs=1,groupLimitReached=maybe,query=x", "must be true or false"),
    (PREFIX + "requestId=x12,table=t,timeMs=1,query=x", "requestId='x12': the value must be an integer"),
]


@pytest.mark.parametrize(("line", "problem"), MALFORMED)
def test_strict_mode_reports_the_first_malformed_line_with_its_number(tmp_path: Path, line: str, problem: str) -> None:
    good = PREFIX + "requestId=1,table=t,timeMs=1,query=SELECT 1"
    path = write(tmp_path, "q.log", good, good.replace("requestId=1", "requestId=2"), line, good)
    with pytest.raises(InputError) as err:
        read_query_log(path)
    assert err.value.where == f"{path}:3"
    assert problem in err.value.problem


def test_a_first_line_that_is_no_log_line_is_malformed(tmp_path: Path) -> None:
    path = write(tmp_path, "q.log", "querylog.log from broker-0:", PREFIX + "requestId=1,table=t,timeMs=1,query=x")
    with pytest.raises(InputError, match="not a log line") as err:
        read_query_log(path)
    assert err.value.where == f"{path}:1"


def test_a_line_without_timestamp_after_a_query_is_more_of_its_sql(tmp_path: Path) -> None:
    """log4j writes a multi-line SQL as is, so a timestamp-less line cannot be told from SQL text."""
    path = write(tmp_path, "q.log", PREFIX + "requestId=1,table=t,timeMs=1,query=SELECT a", "not a log line at all")
    assert read_query_log(path).frame.loc[0, "sql"] == "SELECT a\nnot a log line at all"


def test_lenient_mode_skips_every_malformed_line_and_counts_them() -> None:
    result = read_query_log(FIXTURES / "querylog_malformed.log", lenient=True)
    assert [line for line, _ in result.skipped] == [1, 3, 4, 5, 6, 7, 8, 9, 10, 11]
    assert result.frame["request_id"].tolist() == [1, 12]
    assert (result.counts["skipped"], result.counts["ignored"], result.counts["lines"]) == (10, 1, 13)


def test_a_file_without_query_lines_is_an_error_not_an_empty_table(tmp_path: Path) -> None:
    path = write(tmp_path, "broker.log", "2026/01/02 03:04:05.000 INFO [BrokerStarter] [main] Started")
    with pytest.raises(InputError, match="no broker query-log lines"):
        read_query_log(path)


def test_lenient_mode_with_only_bad_lines_is_an_error(tmp_path: Path) -> None:
    # issue 18: a lenient import that keeps nothing is an error (it used to give an empty table)
    path = write(tmp_path, "q.log", PREFIX + "requestId=1,table=t,query=x")
    with pytest.raises(InputError) as info:
        read_query_log(path, lenient=True)
    assert info.value.where == str(path)
    assert info.value.problem == ("none of its 1 records could be read, so nothing was imported (first, line 1: "
                                  "no timeMs= entry; every broker query-log line has requestId, table and timeMs)")
