"""Pinot's segment partition functions, bit-for-bit, for one value or a million.

Pinot assigns each row of a partitioned column to ``getPartition(String.valueOf(value))``; the
broker prunes segments by recomputing the same function on query literals. To predict which
segments a query touches, or to pre-partition data in Spark the way Pinot (or a Kafka producer)
would, the workbench needs the *same* ids, including Java's integer overflow, UTF-16
``hashCode``, sign-extended tail bytes and ``Double.toString`` formatting. Sources and test vectors:
``shared/reference/pinot-behaviour.md`` section 1.

Functions (names are case-insensitive): ``Modulo``, ``Murmur``/``Murmur2``, ``Murmur3``
(``variant`` ``x86_32``/``x64_32``, ``seed``), ``ByteArray``, ``HashCode``, ``BoundedColumnValue``
and ``FNV`` (``fnv1_32``, ``fnv1a_32``, ``fnv1_64``, ``fnv1a_64``), with ``partitionIdNormalizer``
and ``useRawBytes`` as at Pinot HEAD; the defaults reproduce Pinot 1.4/1.5 exactly.

Version note: FLOAT/DOUBLE values are formatted as JDK 19+ does (shortest round-trip digits).
JDK 17, which Pinot's default Docker image runs, prints a longer string for some full-precision
values (e.g. ``2.7211025719470008E18`` rather than ``2.721102571947001E18``); values typed as
short decimals print identically on both.

>>> fn = get_partition_function("Murmur", 8)
>>> fn.get_partition("user_123"), fn.get_partitions(["user_123", "hello", ""]).tolist()
(7, [7, 5, 1])
>>> get_partition_function("murmur", 3).get_partition(1e7) == get_partition_function("murmur", 3).get_partition("1.0E7")
True
>>> fn.to_json()
{'name': 'Murmur', 'numPartitions': 8, 'functionConfig': None, 'partitionIdNormalizer': 'MASK'}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from workbench.pinot.partition.functions import PartitionFunction, get_partition_function, partition_function_names
from workbench.pinot.partition.javafloat import java_double_to_string, java_float_to_string
from workbench.pinot.partition.normalizer import PartitionIdNormalizer
from workbench.pinot.partition.values import DATA_TYPES, to_pinot_string, to_pinot_strings

if TYPE_CHECKING:
    from pyspark.sql import Column

__all__ = [
    "DATA_TYPES",
    "PartitionFunction",
    "PartitionIdNormalizer",
    "get_partition_function",
    "java_double_to_string",
    "java_float_to_string",
    "partition_function_names",
    "spark_partition_column",
    "to_pinot_string",
    "to_pinot_strings",
]


def spark_partition_column(
    column: str | Column, name: str, num_partitions: int, function_config: Mapping[str, Any] | None = None
) -> Column:
    """A Spark column of Pinot partition ids, computed by the same numpy kernels (a pandas UDF).

    Imports PySpark only when called. See :func:`workbench.pinot.partition.spark.spark_partition_column`.
    """
    from workbench.pinot.partition import spark

    return spark.spark_partition_column(column, name, num_partitions, function_config)
