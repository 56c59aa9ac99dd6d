"""Ground-truth tests run Pinot's own jars (fetched by Maven on first use); mark them all ``pinot``."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "/groundtruth/" in str(item.fspath):
            item.add_marker(pytest.mark.pinot)
