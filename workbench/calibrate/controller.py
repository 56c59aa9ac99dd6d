"""Fetch a table's config, schema and segment metadata from a live Pinot controller, as the files calibrate reads.

A user with a cluster gives one URL instead of three ``curl`` exports. The endpoints and answers are Pinot
1.5.1's controller REST API (``PinotTableRestletResource``, ``PinotSchemaRestletResource``,
``PinotSegmentRestletResource``), and each answer is written unchanged, so the calibration can be rerun
from the files alone:

* ``table_config.json``: ``GET /tables/{table}``, the configs wrapped by type (``{"OFFLINE": {...},
  "REALTIME": {...}}``); ``table_type`` picks one when the table is hybrid;
* ``schema.json``: ``GET /schemas/{schema}``, named by the config's ``segmentsConfig.schemaName`` when it has
  one (deprecated, older configs), else the raw table name (Pinot's rule since 0.x);
* ``segments.json``: ``GET /segments/{table}/metadata?type=T`` (the controller asks each server for its
  segments' metadata). Its 5xx means the controller could not reach the servers' admin API (``Got N failed
  responses from total N server instances``); the segments are then ``GET /segments/{table}/zkmetadata?type=T``,
  the controller's own ZooKeeper records, which carry what calibration reads (documents, time range, partitions,
  CRC), and ``controller.json`` says which was used.

Errors are one :class:`~workbench.errors.InputError` naming the URL: the controller unreachable, the table
not found (Pinot's own message) or another HTTP error, each with what to do.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench import defaults as D
from workbench.errors import InputError
from workbench.io import write_json_atomic
from workbench.pinot.rest import pinot_message

__all__ = ["ControllerFiles", "fetch_controller"]

#: The table types Pinot's ``GET /tables/{table}`` wraps configs under.
TABLE_TYPES = ("OFFLINE", "REALTIME")


@dataclass(frozen=True)
class ControllerFiles:
    """The files :func:`fetch_controller` wrote, the table type chosen and the segment endpoint answered."""

    table_config: Path
    schema: Path
    segments: Path
    table_type: str
    segments_endpoint: str


class _HttpError(Exception):
    def __init__(self, url: str, code: int, message: str) -> None:
        super().__init__(url, code, message)
        self.url, self.code, self.message = url, code, message


def _get(url: str, timeout_s: float) -> str:
    """One GET's body; an unreachable controller is an :class:`InputError`, an HTTP error an :class:`_HttpError`."""
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            return str(response.read().decode())
    except urllib.error.HTTPError as exc:
        raise _HttpError(url, exc.code, pinot_message(exc.read().decode(errors="replace"))) from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise InputError(url, f"the controller did not answer ({reason}); check the URL (the controller's REST port, "
                              "9000 by default) and that it is running: `curl <URL>/health` answers OK") from None


def _json(url: str, timeout_s: float, what: str) -> tuple[Any, str]:
    """The parsed answer and its text; HTTP errors as one :class:`InputError` naming the URL and the fix."""
    try:
        text = _get(url, timeout_s)
    except _HttpError as exc:
        fix = (f"check the {what} name (the controller lists them: GET /tables, GET /schemas)" if exc.code == 404 else
               "check the controller's credentials or access control" if exc.code in (401, 403) else
               "the controller's log says why; or export the files with curl and give --table-config, --schema, "
               "--segments")
        raise InputError(url, f"HTTP {exc.code}: {exc.message}; {fix}") from None
    try:
        return json.loads(text), text
    except ValueError:
        raise InputError(url, "the answer is not JSON: is this a Pinot controller's URL?") from None


def _pick_type(configs: Any, url: str, table_type: str | None) -> str:
    if not isinstance(configs, dict) or not any(t in configs for t in TABLE_TYPES):
        raise InputError(url, "no OFFLINE or REALTIME table config in the answer: check the table name "
                              "(GET /tables lists them)")
    have = [t for t in TABLE_TYPES if t in configs]
    if table_type is not None:
        wanted = table_type.upper()
        if wanted not in have:
            raise InputError(url, f"the table has no {wanted} config (it has {', '.join(have)}): give --table-type "
                                  f"{' or '.join(have)}")
        return wanted
    if len(have) > 1:
        raise InputError(url, "the table is hybrid (OFFLINE and REALTIME): calibrate one type at a time, give "
                              "--table-type OFFLINE or REALTIME")
    return have[0]


def fetch_controller(url: str, table: str, out: str | Path, *, table_type: str | None = None,
                     timeout_s: float = D.CONTROLLER_TIMEOUT_S) -> ControllerFiles:
    """Fetch ``table``'s config, schema and segment metadata from the controller at ``url`` into ``out``.

    Writes ``table_config.json``, ``schema.json``, ``segments.json`` (each answer unchanged) and
    ``controller.json`` (the URL, table, type and endpoints read). ``table`` is the raw name or the name with
    its type (``events_OFFLINE``, which also picks the type). Every call is made before anything is written, so a
    failed fetch writes nothing.

    Raises
    ------
    InputError
        Naming the URL: the controller unreachable, the table or schema not found (Pinot's message), a hybrid
        table without ``table_type``, any other HTTP error.
    """
    base = url.rstrip("/")
    if not base.startswith(("http://", "https://")):
        raise InputError("--controller", f"must be the controller's URL, like http://host:9000, got {url!r}")
    raw = table
    for t in TABLE_TYPES:
        if table.upper().endswith(f"_{t}"):
            raw, table_type = table[: -len(t) - 1], table_type or t
    quoted = urllib.parse.quote(raw, safe="")
    tables_url = f"{base}/tables/{quoted}"
    configs, config_text = _json(tables_url, timeout_s, "table")
    chosen = _pick_type(configs, tables_url, table_type)
    segments_config = configs[chosen].get("segmentsConfig") or {}
    schema_name = str(segments_config.get("schemaName") or raw)
    schema_url = f"{base}/schemas/{urllib.parse.quote(schema_name, safe='')}"
    _, schema_text = _json(schema_url, timeout_s, "schema")
    segments_url = f"{base}/segments/{quoted}/metadata?type={chosen}"
    try:
        segments_text = _get(segments_url, timeout_s)
    except _HttpError as exc:
        if exc.code < 500:
            raise InputError(segments_url, f"HTTP {exc.code}: {exc.message}; check the table name") from None
        segments_url = f"{base}/segments/{quoted}/zkmetadata?type={chosen}"
        _, segments_text = _json(segments_url, timeout_s, "table")
    directory = Path(out)
    directory.mkdir(parents=True, exist_ok=True)
    files = ControllerFiles(directory / "table_config.json", directory / "schema.json", directory / "segments.json",
                            chosen, segments_url)
    files.table_config.write_text(config_text, encoding="utf-8")
    files.schema.write_text(schema_text, encoding="utf-8")
    files.segments.write_text(segments_text, encoding="utf-8")
    write_json_atomic(directory / "controller.json", {
        "controller": base, "table": raw, "table_type": chosen, "schema": schema_name,
        "endpoints": {"table_config": tables_url, "schema": schema_url, "segments": segments_url}})
    return files
