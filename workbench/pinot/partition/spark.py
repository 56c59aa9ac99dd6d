"""Pinot partition ids as a Spark column, computed by the same numpy code as ``get_partitions``.

A pandas UDF hands each Arrow batch of the column to
:meth:`~workbench.pinot.partition.functions.PartitionFunction.get_partitions`, so Spark and Python
agree by construction (and the tests check it on 100k rows). Spark's types map onto Pinot's string
rules through pandas: ``StringType`` stays text, ``IntegerType``/``LongType`` become integers,
``FloatType`` arrives as ``float32`` (Java ``Float.toString``), ``DoubleType`` as ``float64``
(``Double.toString``), ``DecimalType`` as ``Decimal`` (plain string) and ``BinaryType`` as bytes
(lower-case hex). Nulls give null ids: Pinot would have substituted the column's default null value.
In FLOAT/DOUBLE columns a NaN also gives a null id, because pandas cannot tell NaN from null.

This module imports pandas and, inside :func:`spark_partition_column`, PySpark; importing
``workbench`` never loads either.
"""

# No ``from __future__ import annotations``: Spark reads the UDF's type hints at runtime.

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from workbench.pinot.partition.functions import PartitionFunction, get_partition_function

if TYPE_CHECKING:
    from pyspark.sql import Column

__all__ = ["partitions_with_nulls", "spark_partition_column"]


def partitions_with_nulls(function: PartitionFunction, values: "pd.Series[Any]") -> "pd.Series[Any]":
    """``function.get_partitions`` on the non-null values; null ids (nullable ``Int32``) elsewhere."""
    present = values.notna().to_numpy()
    ids = pd.array(np.zeros(len(values), dtype=np.int32), dtype="Int32")
    if present.any():
        ids[present] = function.get_partitions(values[present].to_numpy())
    ids[~present] = pd.NA
    return pd.Series(ids, index=values.index)


def spark_partition_column(
    column: "str | Column", name: str, num_partitions: int, function_config: Mapping[str, Any] | None = None
) -> "Column":
    """A column of Pinot partition ids of ``column`` under the named partition function.

    Parameters
    ----------
    column
        Column name or expression.
    name, num_partitions, function_config
        As for :func:`~workbench.pinot.partition.functions.get_partition_function`; validated here,
        on the driver, so a bad config fails before any task runs.

    Returns
    -------
    pyspark.sql.Column
        ``IntegerType``, null where the input is null.
    """
    from pyspark.sql import functions as sf
    from pyspark.sql.types import IntegerType

    get_partition_function(name, num_partitions, function_config)  # fail fast on the driver
    config = None if function_config is None else dict(function_config)

    def pinot_partition(values: pd.Series) -> pd.Series:
        return partitions_with_nulls(get_partition_function(name, num_partitions, config), values)

    udf = sf.pandas_udf(pinot_partition, IntegerType())  # type: ignore[attr-defined]
    target = sf.col(column) if isinstance(column, str) else column
    return udf(target)  # type: ignore[no-any-return]
