"""Shared fixtures. Spark starts at most once per test session, and only for tests that ask for it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One local[2] Spark session for the whole test run (a cold start costs 6-18 s)."""
    from workbench.workload.spark import get_spark

    session = get_spark("local[2]", app_name="workbench-tests")
    yield session
    session.stop()
