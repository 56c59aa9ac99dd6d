"""A run whose figures are undefined (no query finished: a wedged server holding every query past the end
of the run) is written and read back: JSON has no NaN, so an undefined figure is ``null`` on disk and NaN
when read, and the run says it failed before any percentile."""

from __future__ import annotations

import json
import math
from pathlib import Path

from workbench.io.run_dir import RunDir
from workbench.runs import run_checked
from workbench.scenario import load_scenario


def test_a_run_where_no_query_finished_is_written_read_back_and_called_failed(tmp_path: Path) -> None:
    # one server, wedged all run: every query waits for its 10 s timeout, longer than the 3 s run
    sc = load_scenario({"cluster": {"servers": 1, "failures": {"wedged": [{"server": "Server_0"}]}},
                        "workload": {"arrival": {"qps": 20}},
                        "simulation": {"duration_s": 3, "warmup_s": 0.5, "replications": 1, "seed": 1,
                                       "engine": "fast"}})
    run_checked(sc, tmp_path / "run")
    text = (tmp_path / "run" / "summary.json").read_text()
    assert "NaN" not in text
    stored = json.loads(text)["summary"]
    assert stored["latency_ms"]["p99"]["value"] is None and stored["queries"] == 0
    summary = RunDir(tmp_path / "run").record().summary
    assert math.isnan(summary.latency_ms.p99.value) and math.isnan(summary.gc_delayed_rate)
    assert summary.headline().startswith("FAILED RUN: no query finished")
