"""The Spark session factory: master precedence, and the environment it sets for local runs."""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest

from workbench.workload.spark import ENV_MASTER, resolve_master


def test_argument_beats_scenario_beats_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_MASTER, "spark://env:7077")
    assert resolve_master("local[1]", "yarn") == "local[1]"
    assert resolve_master(None, "yarn") == "yarn"
    assert resolve_master(None, None) == "spark://env:7077"


def test_default_is_local_star(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_MASTER, raising=False)
    assert resolve_master() == "local[*]"


@pytest.mark.spark
def test_local_session_uses_this_interpreter_and_loopback(spark: Any) -> None:
    assert os.environ["PYSPARK_PYTHON"] == sys.executable
    assert os.environ["SPARK_LOCAL_IP"] == "127.0.0.1"
    conf = spark.sparkContext.getConf()
    assert conf.get("spark.ui.enabled") == "false"
    # a Python UDF runs in a worker: it only works when the worker found this interpreter
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType

    exe = F.udf(lambda _: sys.executable, StringType())
    assert spark.range(1).select(exe("id")).first()[0] == sys.executable
