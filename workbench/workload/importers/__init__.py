"""Importers: real Pinot inputs into the same tables synthetic workloads use.

Each kind reads one file into an :class:`ImportResult` (a tidy frame, the malformed records it skipped
and counts); :func:`import_file` also writes it to a directory, atomically, so the simulator and the
notebooks cannot tell an observed trace from a generated one. Kinds are looked up by name in
:data:`IMPORTERS`, so the command line, notebooks and sweeps share one list and a new kind is one
entry here.

>>> sorted(IMPORTERS)
['gc-log', 'query-log', 'schema', 'segments', 'table-config']
>>> IMPORTERS["query-log"].table
'queries.parquet'
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from workbench.errors import InputError
from workbench.io import atomic_dir, write_json_atomic
from workbench.workload.importers.common import ImportResult
from workbench.workload.importers.conform import arrow_schema
from workbench.workload.importers.gc_calibrate import G1_SECTION_KEYS, calibrate_gc
from workbench.workload.importers.gc_log import GC_LOG_COLUMNS, read_gc_log
from workbench.workload.importers.query_log import QUERY_LOG_COLUMNS, read_query_log
from workbench.workload.importers.schema import SCHEMA_COLUMNS, read_schema
from workbench.workload.importers.segments import SEGMENT_COLUMNS, read_segments
from workbench.workload.importers.table_config import TABLE_CONFIG_COLUMNS, read_table_config
from workbench.workload.schema import QUERIES_SCHEMA, SEGMENTS_SCHEMA

__all__ = [
    "G1_SECTION_KEYS",
    "GC_LOG_COLUMNS",
    "IMPORTERS",
    "IMPORT_SCHEMA_VERSION",
    "QUERY_LOG_COLUMNS",
    "SCHEMA_COLUMNS",
    "SEGMENT_COLUMNS",
    "TABLE_CONFIG_COLUMNS",
    "ImportResult",
    "Importer",
    "calibrate_gc",
    "describe",
    "get_importer",
    "import_file",
    "read_gc_log",
    "read_query_log",
    "read_schema",
    "read_segments",
    "read_table_config",
]

#: Version of the layout :func:`import_file` writes (recorded in ``manifest.json``).
IMPORT_SCHEMA_VERSION = 1
#: At most this many skipped records are listed in the manifest (all are counted).
_MANIFEST_SKIPPED = 1000


def _gc_calibration(frame: pd.DataFrame, **options: Any) -> dict[str, Any] | None:
    """The GC calibration (``options`` are :func:`calibrate_gc`'s) when the log has two pauses or more."""
    return {"gc_calibration.json": calibrate_gc(frame, **options)} if len(frame) >= 2 else None


@dataclass(frozen=True)
class Importer:
    """One input kind: how to read it and what :func:`import_file` writes.

    Parameters
    ----------
    kind
        Registry name, as the command line spells it.
    read
        ``read(path, lenient, max_bytes=None)`` -> :class:`ImportResult`.
    table
        File name of the Parquet table written from the result's frame.
    description
        One line for help texts.
    derive
        Optional extra JSON documents computed from the frame and the import options
        (``{file name: data}``), or ``None``.
    shared
        The Arrow schema of :mod:`workbench.workload.schema` the table shares with generated data
        (its columns come first and are written with exactly these types), or ``None``.
    options
        Names of the import options ``derive`` accepts (keyword arguments).
    """

    kind: str
    read: Callable[..., ImportResult]
    table: str
    description: str
    derive: Callable[..., dict[str, Any] | None] | None = None
    shared: Any = None
    options: tuple[str, ...] = ()


IMPORTERS: Mapping[str, Importer] = MappingProxyType({
    "table-config": Importer("table-config", read_table_config, "table_config.parquet",
                             "Pinot table config JSON (bare, GET /tables/{t} or GET /tableConfigs/{t})"),
    "schema": Importer("schema", read_schema, "schema.parquet", "Pinot schema JSON (one row per column)"),
    "segments": Importer("segments", read_segments, "segments.parquet",
                         "segment metadata: controller GET /segments/{t}/metadata or ZK simple fields",
                         shared=SEGMENTS_SCHEMA),
    "query-log": Importer("query-log", read_query_log, "queries.parquet",
                          "broker query log (QueryLogger lines, any version since 0.x)", shared=QUERIES_SCHEMA),
    "gc-log": Importer("gc-log", read_gc_log, "gc_pauses.parquet",
                       "JVM GC log (JDK 9+ -Xlog:gc* or -Xlog:gc, JDK 8 -verbose:gc), one row per pause",
                       _gc_calibration,
                       options=("upsert_keys", "hash_function", "primary_key_types", "update_rate")),
})


def get_importer(kind: str) -> Importer:
    """The importer registered as ``kind``.

    Raises
    ------
    InputError
        For an unknown kind, listing the known ones.
    """
    try:
        return IMPORTERS[kind]
    except KeyError:
        raise InputError("kind", f"unknown import kind {kind!r}; use one of {', '.join(IMPORTERS)}") from None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _manifest(importer: Importer, result: ImportResult, outputs: Mapping[str, int | None], lenient: bool,
              ) -> dict[str, Any]:
    source = Path(result.source)
    return {
        "schema_version": IMPORT_SCHEMA_VERSION,
        "importer": f"workbench.workload.importers ({importer.kind})",
        "kind": importer.kind,
        "source": str(source.resolve()),
        "source_sha256": _sha256(source),
        "lenient": lenient,
        "counts": dict(result.counts),
        "skipped": [list(item) for item in result.skipped[:_MANIFEST_SKIPPED]],
        "outputs": dict(outputs),
    }


def _write(importer: Importer, result: ImportResult, directory: Path, lenient: bool,
           options: Mapping[str, Any]) -> None:
    """Write the table, the documents, derived documents and, last, the manifest."""
    table = pa.Table.from_pandas(result.frame, schema=arrow_schema(result.frame, importer.shared),
                                 preserve_index=False)
    pq.write_table(table, directory / importer.table)
    outputs: dict[str, int | None] = {importer.table: len(result.frame)}
    derived = _derived(importer, result, options)
    for name, document in {**result.documents, **(derived or {})}.items():
        write_json_atomic(directory / name, document)
        outputs[name] = None
    write_json_atomic(directory / "manifest.json", _manifest(importer, result, outputs, lenient))


def _derived(importer: Importer, result: ImportResult, options: Mapping[str, Any]) -> dict[str, Any] | None:
    """The importer's derived documents; an input error in them names the file they come from."""
    if importer.derive is None:
        return None
    try:
        return importer.derive(result.frame, **options)
    except InputError as exc:
        raise InputError(str(result.source), str(exc)) from None


def _checked_options(importer: Importer, options: Mapping[str, Any] | None) -> dict[str, Any]:
    given = {k: v for k, v in (options or {}).items() if v is not None}
    unknown = sorted(set(given) - set(importer.options))
    if unknown:
        allowed = ", ".join(importer.options) or "none"
        raise InputError(unknown[0], f"is not an option of the {importer.kind} importer (its options: {allowed})")
    return given


def import_file(kind: str, path: str | Path, out_dir: str | Path, *, lenient: bool = False,
                overwrite: bool = False, options: Mapping[str, Any] | None = None,
                max_bytes: int | None = None) -> ImportResult:
    """Read ``path`` as ``kind`` and write the result to ``out_dir`` atomically.

    ``out_dir`` receives the kind's Parquet table (``segments.parquet``, ``queries.parquet``,
    ``gc_pauses.parquet``, ...; the same names and columns the generator writes, see ``docs/data.md``),
    any JSON documents (``table_config.json``, ``schema.json``, ``gc_calibration.json``) and
    ``manifest.json`` (source checksum, counts, skipped lines). It appears only when everything is
    written; any failure leaves no ``out_dir`` and no temporary files.

    Parameters
    ----------
    kind
        A key of :data:`IMPORTERS`.
    path
        The file to import.
    out_dir
        Output directory; it must not exist unless ``overwrite``.
    lenient
        Skip malformed records and report them instead of stopping at the first.
    overwrite
        Replace an existing ``out_dir`` (only once the new output is complete).
    options
        The kind's import options (``gc-log``: :func:`calibrate_gc`'s ``upsert_keys``, ``hash_function``,
        ``primary_key_types``, ``update_rate``); ``None`` values are left out.
    max_bytes
        Largest input read, after decompression (default ``WORKBENCH_MAX_INPUT_SIZE`` or 2 GiB).

    Returns
    -------
    ImportResult
        What was read, for the caller to summarise (see :func:`describe`).

    Raises
    ------
    InputError
        Unknown kind or option, an existing ``out_dir`` without ``overwrite``, or bad input (``file:line``).
    """
    importer = get_importer(kind)
    given = _checked_options(importer, options)
    with atomic_dir(Path(out_dir), overwrite=overwrite) as tmp:  # checks out_dir before reading anything
        result = importer.read(Path(path), lenient, max_bytes=max_bytes)
        _write(importer, result, tmp, lenient, given)
    return result


def describe(result: ImportResult, *, max_lines: int = 10) -> str:
    """A one-paragraph summary for the command line: rows, skipped lines (first few) and ignored lines.

    >>> import pandas as pd
    >>> print(describe(ImportResult("gc-log", "gc.log", pd.DataFrame({"a": [1, 2]}), ((4, "bad"),),
    ...                             {"lines": 9, "skipped": 1, "ignored": 6})))
    gc-log: 2 records from gc.log (9 lines; 6 ignored; 1 malformed skipped: line 4: bad)
    """
    counts = result.counts
    text = (f"{result.kind}: {len(result.frame):,} records from {result.source} "
            f"({counts.get('lines', 0):,} lines; {counts.get('ignored', 0):,} ignored")
    if result.skipped:
        shown = "; ".join(f"line {line}: {reason}" for line, reason in result.skipped[:max_lines])
        more = f"; and {len(result.skipped) - max_lines} more" if len(result.skipped) > max_lines else ""
        text += f"; {len(result.skipped):,} malformed skipped: {shown}{more}"
    return text + ")"
