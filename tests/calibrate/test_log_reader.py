"""The chunked log reader gives what the importer gives, one table's rows, with the file's own line numbers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from workbench.calibrate.log_reader import read_log
from workbench.errors import InputError
from workbench.workload.importers import read_query_log

FIXTURES = Path(__file__).resolve().parents[1] / "workload" / "importers" / "fixtures"


@pytest.mark.parametrize("chunk_lines", [1, 2, 3, 1000])
def test_chunks_read_the_same_rows_as_one_import(chunk_lines: int) -> None:
    path = FIXTURES / "querylog_versions.log"   # several versions, a multi-line SQL, other tables
    whole = read_query_log(path).frame
    events = whole[whole["table"].isin(["events_OFFLINE", "events"])]
    read = read_log(path, "events", chunk_lines=chunk_lines)
    assert read.frame["source_line"].tolist() == sorted(events["source_line"].tolist())
    assert read.frame["sql"].tolist() == events.sort_values("source_line")["sql"].tolist()
    assert read.frame["arrival_s"].iloc[0] == 0.0 and read.frame["arrival_s"].is_monotonic_increasing
    assert read.tables == {"events_OFFLINE": 1, "events": 1, "[events, users]": 1, "table": 1}
    assert read.hosts == {"pinot-server-0", "pinot-server-1", "pinot-server-2"}
    assert read.frame["slowest_response_ms"].tolist()[0] == 20.0
    assert "server_stats" not in read.frame and read.counts["dropped_by_rate_limit"] == 17
    expected_gap = (events["now_ms"].max() - events["now_ms"].min()) / 1000.0
    assert read.frame["arrival_s"].iloc[-1] == pytest.approx(expected_gap)


def test_a_malformed_line_is_reported_at_its_line_in_the_file(tmp_path: Path) -> None:
    good = ("2026/01/02 03:04:0{i}.000 INFO [QueryLogger] [t] requestId={i},table=t,timeMs=10,docs=1/2,"
            "servers=1/1,query=SELECT {i}")
    lines = [good.format(i=i) for i in range(7)]
    lines[5] = lines[5].replace("timeMs=10", "timeMs=abc")
    path = tmp_path / "q.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_log(path, "t", chunk_lines=2)
    assert err.value.where == f"{path}:6" and "timeMs='abc'" in err.value.problem
    lenient = read_log(path, "t", lenient=True, chunk_lines=2)
    assert len(lenient.frame) == 6 and lenient.counts["skipped"] == 1


def test_a_file_without_query_lines_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "broker.log"
    path.write_text("2026/01/02 03:04:05.900 INFO [BrokerRequestHandler] [t-10] an unrelated line\n", encoding="utf-8")
    with pytest.raises(InputError, match="holds no broker query-log lines"):
        read_log(path, "t")


def test_arrivals_keep_the_importers_clock(tmp_path: Path) -> None:
    # logged at completion: a query stamped 03:04:05.100 after 100 ms arrived at .000, before one stamped .050
    lines = ["2026/01/02 03:04:05.050 INFO [QueryLogger] [t] requestId=1,table=t,timeMs=20,docs=1/2,servers=1/1,"
             "query=SELECT 1",
             "2026/01/02 03:04:05.100 INFO [QueryLogger] [t] requestId=2,table=t,timeMs=100,docs=1/2,servers=1/1,"
             "query=SELECT 2"]
    path = tmp_path / "q.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    frame = read_log(path, "t", chunk_lines=1).frame
    assert frame["request_id"].tolist() == [2, 1]
    assert np.allclose(frame["arrival_s"], [0.0, 0.03]) and np.allclose(frame["logged_s"], [0.1, 0.05])
    assert isinstance(frame, pd.DataFrame)
