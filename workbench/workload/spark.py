"""The one place a Spark session is made.

Nothing here runs at import time: :func:`get_spark` starts (or reuses) a session when called. The
master comes from, in order, the ``master`` argument, the scenario's ``spark.master``, the
``WORKBENCH_SPARK_MASTER`` environment variable, and finally ``local[*]``. Any master Spark accepts
works: ``local[N]``, ``spark://host:7077``, ``yarn``, ``k8s://...`` and Spark Connect (``sc://...``).

For local masters the factory points ``PYSPARK_PYTHON`` at the running interpreter (Python UDFs fail
when the workers pick up another Python) and binds Spark to ``127.0.0.1`` (``SPARK_LOCAL_IP``), because
these machines have no routable network. Logs are quiet and the UI is off unless asked for.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["ENV_MASTER", "get_spark", "resolve_master", "stop_spark"]

ENV_MASTER = "WORKBENCH_SPARK_MASTER"
_LOG4J = Path(__file__).resolve().parent.parent / "data" / "log4j2.properties"
DEFAULT_MASTER = "local[*]"

#: Spark settings applied to every session; small-machine friendly and deterministic.
_BASE_CONF: Mapping[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": "8",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.adaptive.enabled": "false",
}
#: Loopback binding for masters on this machine (no routable network here); a remote cluster's
#: executors must reach the driver on a routable address, so these are not set for them.
_LOCAL_CONF: Mapping[str, str] = {"spark.driver.bindAddress": "127.0.0.1", "spark.driver.host": "127.0.0.1"}


def resolve_master(master: str | None = None, scenario_master: str | None = None) -> str:
    """Return the Spark master to use: argument, then scenario, then environment, then ``local[*]``.

    >>> resolve_master("local[2]")
    'local[2]'
    >>> resolve_master(None, "spark://10.0.0.1:7077")
    'spark://10.0.0.1:7077'
    """
    for candidate in (master, scenario_master, os.environ.get(ENV_MASTER)):
        if candidate:
            return candidate
    return DEFAULT_MASTER


def _is_local(master: str) -> bool:
    """``local[...]`` or a standalone master on this machine's loopback.

    >>> _is_local("local[2]"), _is_local("spark://127.0.0.1:7077"), _is_local("yarn")
    (True, True, False)
    """
    return master.startswith("local") or "//127.0.0.1:" in master or "//localhost:" in master


def _prepare_local_environment() -> None:
    """Point Spark's Python workers at this interpreter and bind to loopback."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"


def get_spark(
    master: str | None = None,
    app_name: str = "pinot-workbench",
    *,
    scenario_master: str | None = None,
    conf: Mapping[str, Any] | None = None,
    ui: bool = False,
) -> SparkSession:
    """Start or reuse a Spark session.

    Parameters
    ----------
    master
        Spark master URL; overrides the scenario and ``WORKBENCH_SPARK_MASTER``.
    app_name
        Application name shown by the cluster manager.
    scenario_master
        The scenario's ``spark.master`` (used when ``master`` is not given).
    conf
        Extra Spark settings, applied after the workbench's quiet defaults.
    ui
        Start the Spark UI (off by default: it costs start-up time and a port).
    """
    resolved = resolve_master(master, scenario_master)
    _prepare_local_environment()  # harmless for remote masters: the driver still runs here.
    from pyspark.sql import SparkSession  # imported lazily: importing workbench starts nothing

    if resolved.startswith("sc://"):
        return SparkSession.builder.remote(resolved).appName(app_name).getOrCreate()
    builder = SparkSession.builder.master(resolved).appName(app_name)
    settings = dict(_BASE_CONF)
    if _is_local(resolved):
        settings.update(_LOCAL_CONF)
    settings["spark.ui.enabled"] = "true" if ui else "false"
    settings["spark.executorEnv.PYSPARK_PYTHON"] = sys.executable
    log4j = f"-Dlog4j.configurationFile={_LOG4J}"
    settings["spark.driver.extraJavaOptions"] = log4j
    settings["spark.executor.extraJavaOptions"] = log4j
    settings.update({k: str(v) for k, v in (conf or {}).items()})
    for key, value in settings.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def stop_spark() -> None:
    """Stop the active session, if any (tests and sweeps call this between masters)."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        active.stop()
