"""``calibrate --controller``'s choices that need no cluster: which table type of ``GET /tables/{table}``'s answer
(Pinot wraps configs as ``{"OFFLINE": {...}, "REALTIME": {...}}``), and a URL that is not one. The live fetch is
tested on the local cluster (``tests/groundtruth/test_calibrate_controller.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.calibrate.controller import _pick_type, fetch_controller
from workbench.errors import InputError

HYBRID = {"OFFLINE": {"tableName": "events_OFFLINE"}, "REALTIME": {"tableName": "events_REALTIME"}}


def test_a_hybrid_table_needs_its_type_and_a_single_type_is_taken() -> None:
    with pytest.raises(InputError, match=r"hybrid .* give --table-type OFFLINE or REALTIME"):
        _pick_type(HYBRID, "u", None)
    assert _pick_type(HYBRID, "u", "realtime") == "REALTIME"
    assert _pick_type({"REALTIME": {}}, "u", None) == "REALTIME"
    with pytest.raises(InputError, match=r"has no OFFLINE config \(it has REALTIME\)"):
        _pick_type({"REALTIME": {}}, "u", "OFFLINE")
    with pytest.raises(InputError, match="no OFFLINE or REALTIME table config"):
        _pick_type({}, "u", None)


def test_a_controller_that_is_not_a_url_is_refused_before_any_call(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^--controller: must be the controller's URL"):
        fetch_controller("controller:9000", "events", tmp_path / "out")
    assert not (tmp_path / "out").exists()
