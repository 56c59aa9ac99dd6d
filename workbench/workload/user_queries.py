"""The query mix of schema-driven generation, written over the user's own columns.

The generator's four kinds (dashboards, ad-hoc, lookups, time ranges; :mod:`workbench.workload.queries`)
keep their shapes, translated to the schema: the time filter on the table's time column (its literals in
the column's format), group-bys and value filters on a dimension, sums and averages of a metric, lookups
on the key. A shape needing a column the schema lacks is left out.
"""

from __future__ import annotations

from workbench.workload.user_schema import NUMERIC_TYPES, UserColumn, UserSchema

__all__ = ["filter_dimension", "schema_shapes"]


def _dimensions(us: UserSchema) -> list[UserColumn]:
    """Single-value dimensions worth grouping and filtering on, fewest values first."""
    usable = [c for c in us.columns if c.role in ("dimension", "per_key") and c.single_value
              and c.data_type in ("STRING", "INT", "LONG", "BOOLEAN")]
    return sorted(usable, key=lambda c: (c.cardinality, c.data_type != "STRING", c.salt))


def filter_dimension(us: UserSchema) -> str | None:
    """The dimension the query mix filters on by value (``{category}``), or ``None`` when there is none."""
    dims = _dimensions(us)
    return dims[0].name if dims else None


def schema_shapes(us: UserSchema) -> dict[str, tuple[str, ...]]:
    """The query mix written over the user's own columns, by kind (the generator's shapes, translated).

    ``{t0}``/``{t1}`` are the time column's literals (``{t1}`` rounded up, ``{t1i}`` down for
    ``BETWEEN``); ``{category}``/``{category2}`` literals of the first dimension; ``{pcol}``/``{value}``/
    ``{values}`` the lookup column and its keys; ``{threshold}`` a number. A shape naming a column the
    schema lacks (no dimension, no metric, no key) is left out; a kind without shapes makes no queries.
    """
    t = us.time_column
    rng = f"{t} >= {{t0}} AND {t} < {{t1}}"
    dims = _dimensions(us)
    metrics = [c.name for c in us.columns if c.role == "metric" and c.single_value and c.data_type in NUMERIC_TYPES
               and c.data_type != "BIG_DECIMAL"]
    d1 = dims[0].name if dims else None
    d2 = dims[1].name if len(dims) > 1 else d1
    m = metrics[0] if metrics else None
    k = us.lookup_column
    fmt = us.time.time_format
    fine = fmt is not None and (fmt.kind == "TIMESTAMP" or (fmt.kind == "EPOCH" and fmt.granule_ms == 1))
    bucket = f"DATETRUNC('MINUTE', {t})" if fine else t  # per minute on millis, else per value (a day...)
    shapes: dict[str, list[tuple[str, tuple[str | None, ...]]]] = {
        "dashboard": [
            (f"SELECT {bucket} AS minute, COUNT(*) FROM {{table}} WHERE {rng} GROUP BY {bucket} ORDER BY {bucket} "
             "LIMIT 1440", ()),
            (f"SELECT {d1}, COUNT(*) FROM {{table}} WHERE {rng} GROUP BY {d1} ORDER BY COUNT(*) DESC LIMIT 10", (d1,)),
            (f"SELECT SUM({m}), COUNT(*) FROM {{table}} WHERE {rng}", (m,)),
            (f"SELECT COUNT(*) FROM {{table}} WHERE {d1} = {{category}} AND {rng}", (d1,)),
            (f"SELECT DISTINCTCOUNTHLL({k}) FROM {{table}} WHERE {rng}", (k,)),
            (f"SELECT {d2}, AVG({m}) FROM {{table}} WHERE {rng} GROUP BY {d2} ORDER BY AVG({m}) DESC LIMIT 10",
             (d2, m)),
        ],
        "adhoc": [
            (f"SELECT COUNT(*) FROM {{table}} WHERE {d1} = {{category}} AND {t} BETWEEN {{t0}} AND {{t1i}}", (d1,)),
            (f"SELECT {k}, SUM({m}) FROM {{table}} WHERE {rng} GROUP BY {k} ORDER BY SUM({m}) DESC LIMIT 20", (k, m)),
            (f"SELECT * FROM {{table}} WHERE {m} > {{threshold}} AND {rng} LIMIT 100", (m,)),
            (f"SELECT {d1}, COUNT(*) FROM {{table}} GROUP BY {d1} ORDER BY COUNT(*) DESC LIMIT 100", (d1,)),
            (f"SELECT DISTINCTCOUNT({k}) FROM {{table}} WHERE {d1} IN ({{category}}, {{category2}})", (k, d1)),
        ],
        "lookup": [
            ("SELECT * FROM {table} WHERE {pcol} = {value} LIMIT 10", (k,)),
            (f"SELECT {t} FROM {{table}} WHERE {{pcol}} = {{value}} ORDER BY {t} DESC LIMIT 1", (k,)),
            ("SELECT * FROM {table} WHERE {pcol} IN ({values}) LIMIT 100", (k,)),
        ],
        "timerange": [
            (f"SELECT COUNT(*) FROM {{table}} WHERE {t} >= {{t0}}", ()),
            (f"SELECT {d1}, SUM({m}) FROM {{table}} WHERE {t} >= {{t0}} GROUP BY {d1} ORDER BY SUM({m}) DESC "
             "LIMIT 10", (d1, m)),
            (f"SELECT COUNT(*) FROM {{table}} WHERE {rng}", ()),
            (f"SELECT DISTINCTCOUNT({k}) FROM {{table}} WHERE {t} >= {{t0}}", (k,)),
        ],
    }
    return {kind: tuple(sql for sql, needs in pairs if all(needs)) for kind, pairs in shapes.items()}
