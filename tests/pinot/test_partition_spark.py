"""Spark and numpy compute the same Pinot partition ids, for every function family, on 100k rows.

One DataFrame with a column per Spark type the partition functions see (text, int, long, float,
double, decimal, binary, hex text) is partitioned by ~20 functions in a single Spark job; the
collected input columns are then partitioned again with ``get_partitions`` and compared row by row.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from workbench.pinot.partition import get_partition_function, spark_partition_column

pytestmark = pytest.mark.spark

ROWS = 100_000

# (output column, input column, function name, functionConfig)
CASES: list[tuple[str, str, str, dict[str, str] | None]] = [
    ("modulo_long", "long", "Modulo", None),
    ("modulo_int", "int", "Modulo", {"partitionIdNormalizer": "ABS"}),
    ("murmur_text", "text", "Murmur", None),
    ("murmur_double", "double", "Murmur", None),
    ("murmur_float", "float", "Murmur", None),
    ("murmur_decimal", "decimal", "Murmur", None),
    ("murmur_binary", "binary", "Murmur", None),
    ("murmur_raw", "hex", "Murmur", {"useRawBytes": "true"}),
    ("murmur3_x86", "text", "Murmur3", {"seed": "9001"}),
    ("murmur3_x64", "text", "Murmur3", {"variant": "x64_32", "seed": "-1"}),
    ("fnv1a_32", "text", "FNV", None),
    ("fnv1_64", "text", "FNV", {"variant": "fnv1_64"}),
    ("fnv1a_64", "long", "FNV", {"variant": "fnv1a_64", "partitionIdNormalizer": "POSITIVE_MODULO"}),
    ("bytearray", "text", "ByteArray", None),
    ("hashcode", "text", "HashCode", None),
    (
        "bounded",
        "subject",
        "BoundedColumnValue",
        {"columnValues": "Maths|English|日本語", "columnValuesDelimiter": "|"},
    ),
]


def _frame(spark: Any, rows: int) -> Any:
    """Awkward but realistic values, generated inside Spark (no slow pandas-to-Spark conversion).

    Text mixes ``user_<n>``, non-ASCII and astral characters, 0-40 byte strings (``""`` included)
    and nulls; longs cover the full 64-bit range; doubles are typed-in decimals plus Java's
    notation edge cases; binaries are 0-23 bytes and their hex in both cases.
    """
    from pyspark.sql import functions as sf

    id_ = sf.col("id")
    text = (
        sf.when(id_ % 101 == 0, sf.lit(None))
        .when(id_ % 7 == 0, sf.concat(sf.lit("日本-"), id_.cast("string"), sf.lit("-\U0001f600")))
        .when(id_ % 11 == 0, sf.expr("substring(repeat('xyzw', cast(id % 13 as int)), 1, cast(id % 41 as int))"))
        .otherwise(sf.concat(sf.lit("user_"), id_.cast("string")))
    )
    places = sf.pow(sf.lit(10.0), id_ % 6)
    double = sf.round(sf.randn(7) * 1e4 * places) / places
    for row, special in enumerate([1e7, 1e-4, -0.0, 5e-324, 1.7976931348623157e308, 123456789.125]):
        double = sf.when(id_ == row, sf.lit(special)).otherwise(double)
    binary = sf.expr("unhex(substring(sha2(cast(id as string), 256), 1, cast(2 * (id % 24) as int)))")
    return spark.range(rows).select(
        text.alias("text"),
        sf.hash(id_).alias("int"),
        sf.xxhash64(id_).alias("long"),
        double.alias("double"),
        sf.round(sf.randn(11) * 100, 1).cast("float").alias("float"),  # "12.3", never "12.300000190734863"
        ((sf.xxhash64(id_) % 1_000_000_000).cast("decimal(20,0)") / 1000).cast("decimal(20,3)").alias("decimal"),
        binary.alias("binary"),
        sf.when(id_ % 2 == 0, sf.lower(sf.hex(binary))).otherwise(sf.hex(binary)).alias("hex"),
        sf.element_at(
            sf.array(*map(sf.lit, ["maths", "ENGLISH", "日本語", "Physics", ""])), (id_ % 5 + 1).cast("int")
        ).alias("subject"),
    )


def _numpy_ids(values: pd.Series[Any], name: str, config: dict[str, str] | None, n: int = 16) -> list[Any]:
    """Expected ids: ``get_partitions`` on the non-null values, ``None`` where the input is null."""
    function = get_partition_function(name, 4 if name == "BoundedColumnValue" else n, config)
    present = values.notna().to_numpy()
    expected: list[Any] = [None] * len(values)
    for index, partition in zip(
        np.flatnonzero(present), function.get_partitions(values[present].to_numpy()), strict=True
    ):
        expected[index] = int(partition)
    return expected


def test_spark_column_matches_numpy_for_every_family(spark: Any) -> None:
    """All function families, in one Spark job, equal ``get_partitions`` on the collected inputs."""
    frame = _frame(spark, ROWS)
    outputs = [
        spark_partition_column(column, name, 4 if name == "BoundedColumnValue" else 16, config).alias(out)
        for out, column, name, config in CASES
    ]
    result = frame.select("*", *outputs).toPandas()
    assert len(result) == ROWS
    assert result["float"].dtype == np.float32  # so FLOAT really is hashed as Float.toString
    for out, column, name, config in CASES:
        actual = [None if pd.isna(v) else int(v) for v in result[out]]
        assert actual == _numpy_ids(result[column], name, config), f"{out}: Spark and numpy disagree"
    assert result["murmur_text"].isna().sum() == (np.arange(ROWS) % 101 == 0).sum()  # nulls stay null


def test_spark_column_accepts_expressions_and_validates_on_the_driver(spark: Any) -> None:
    """A Column expression works as input; a bad config fails before any Spark task runs."""
    from pyspark.sql import functions as sf

    from workbench.errors import TableConfigError

    frame = spark.createDataFrame(pd.DataFrame({"id": np.arange(1000, dtype=np.int64)}))
    column = spark_partition_column(sf.concat(sf.lit("user_"), sf.col("id").cast("string")), "Murmur", 8)
    actual = frame.select(column.alias("p")).toPandas()["p"].tolist()
    expected = get_partition_function("Murmur", 8).get_partitions([f"user_{i}" for i in range(1000)]).tolist()
    assert actual == expected
    with pytest.raises(TableConfigError, match="Murmur3 variant"):
        spark_partition_column("id", "Murmur3", 8, {"variant": "x64"})
