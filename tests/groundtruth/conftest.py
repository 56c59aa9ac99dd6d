"""Ground-truth tests run Pinot's own jars (fetched by Maven on first use); mark them all ``pinot``.

``helix_run`` is the one Helix cluster of a test session (``helix_run.py``), shared by ``test_helix_cluster.py``,
``test_calibrate_controller.py`` and ``test_helix_realtime.py`` rather than started three times; ``stream_run`` is
its REALTIME tables' record (``stream_run.py``: Kafka and two tables streamed through it).
"""

from __future__ import annotations

import pytest
from helix_run import HelixRun, start_run
from stream_run import StreamRun


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "/groundtruth/" in str(item.fspath):
            item.add_marker(pytest.mark.pinot)


@pytest.fixture(scope="session")
def helix_run(tmp_path_factory: pytest.TempPathFactory) -> HelixRun:
    return start_run(tmp_path_factory.mktemp("helix-logs"), tmp_path_factory.mktemp("helix-calibrate"))


@pytest.fixture(scope="session")
def stream_run(helix_run: HelixRun) -> StreamRun:
    return helix_run.stream
