"""A table's ``upsertConfig`` read once into a typed value, with Pinot's defaults (reference §5.1).

The table config is kept as the user wrote it, but the fields the workbench models (the hash
function, the TTLs, the comparison columns, snapshot and preload) are read here and nowhere else,
when the table config is loaded: a bad value fails then, naming its key, and every module (heap
model, memory replay, importer, report) reads the same value with the same default. Defaults are
Pinot's, kept in :mod:`workbench.defaults` (``UPSERT_*``).

>>> cfg = UpsertConfig.from_json({"hashFunction": "murmur3", "metadataTTL": "86400", "enableSnapshot": True})
>>> cfg.hash_function, cfg.metadata_ttl, cfg.snapshot, cfg.preload, cfg.comparison_columns
(<HashFunction.MURMUR3: 'MURMUR3'>, 86400.0, 'ENABLE', 'DEFAULT', ())
>>> UpsertConfig.from_json({"hashFunction": "SHA1"})
Traceback (most recent call last):
...
workbench.errors.TableConfigError: upsertConfig.hashFunction: must be one of NONE, MD5, MURMUR3, XXHASH, \
XXH128, UUID, got 'SHA1'
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from workbench import defaults as D
from workbench.errors import InputError, TableConfigError
from workbench.pinot.upsert.hashing import HashFunction

__all__ = ["ENABLEMENTS", "UpsertConfig"]

#: Pinot's ``Enablement`` values for ``snapshot`` and ``preload``.
ENABLEMENTS = ("ENABLE", "DISABLE", "DEFAULT")
_WHERE = "upsertConfig"
_DEFAULT_HASH = HashFunction(D.UPSERT_HASH_FUNCTION)


def _given(raw: Mapping[str, Any], key: str, default: Any) -> Any:
    """``raw[key]``, or ``default`` when it is absent or ``null`` (Pinot's Jackson reads ``null`` as unset)."""
    value = raw.get(key)
    return default if value is None else value


def _ttl(raw: Mapping[str, Any], key: str, default: float) -> float:
    """A TTL as Pinot's Jackson reads a ``double`` (numbers and numeric strings); ``null`` is the default."""
    value = raw.get(key)
    if value is None:
        return default
    try:
        if isinstance(value, bool):
            raise ValueError
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number):
        raise TableConfigError(f"{_WHERE}.{key}", "must be a number in the comparison column's units (86400000 is "
                                                  f"a day of a millisecond time column; 0 is off), got {value!r}")
    return number


def _enablement(raw: Mapping[str, Any], key: str, legacy: str) -> str:
    """``ENABLE``/``DISABLE``/``DEFAULT``; the deprecated boolean ``legacy: true`` sets ENABLE, as its setter does."""
    value = str(_given(raw, key, D.UPSERT_ENABLEMENT)).upper()
    if value not in ENABLEMENTS:
        raise TableConfigError(f"{_WHERE}.{key}", f"must be ENABLE, DISABLE or DEFAULT, got {value!r}")
    return "ENABLE" if bool(raw.get(legacy, False)) else value


def _columns(raw: Mapping[str, Any]) -> tuple[str, ...]:
    """``comparisonColumns``, or the one-string setter ``comparisonColumn``; empty is unset, as in Pinot."""
    cols = raw.get("comparisonColumns", raw.get("comparisonColumn"))
    if isinstance(cols, str):
        return (cols,)
    return tuple(str(c) for c in cols or ())


def _optional_str(raw: Mapping[str, Any], key: str) -> str | None:
    value = raw.get(key)
    if value is not None and not isinstance(value, str):
        raise TableConfigError(f"{_WHERE}.{key}", f"must be a column name (a string), got {value!r}")
    return value


@dataclass(frozen=True)
class UpsertConfig:
    """The fields of Pinot's ``upsertConfig`` the workbench models, typed (names as Pinot's, snake case).

    Attributes
    ----------
    mode
        ``FULL``, ``PARTIAL`` or ``NONE``.
    hash_function
        ``hashFunction``: how primary keys are keyed in the map.
    comparison_columns
        ``comparisonColumns`` as written (``()``: unset, Pinot then compares on the table's time column;
        see :meth:`comparison_columns_or`).
    metadata_ttl, deleted_keys_ttl
        ``metadataTTL`` and ``deletedKeysTTL`` in the comparison column's units; ``<= 0`` is off.
    snapshot, preload
        ``snapshot`` and ``preload`` (``ENABLE``, ``DISABLE`` or ``DEFAULT``: the server's default), with
        the deprecated ``enableSnapshot`` / ``enablePreload: true`` read as ``ENABLE``.
    delete_record_column, drop_out_of_order_record, out_of_order_record_column
        ``deleteRecordColumn``, ``dropOutOfOrderRecord``, ``outOfOrderRecordColumn``.
    """

    mode: str = D.UPSERT_MODE
    hash_function: HashFunction = _DEFAULT_HASH
    comparison_columns: tuple[str, ...] = ()
    metadata_ttl: float = D.UPSERT_METADATA_TTL
    deleted_keys_ttl: float = D.UPSERT_DELETED_KEYS_TTL
    snapshot: str = D.UPSERT_ENABLEMENT
    preload: str = D.UPSERT_ENABLEMENT
    delete_record_column: str | None = None
    drop_out_of_order_record: bool = False
    out_of_order_record_column: str | None = None

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> UpsertConfig:
        """Read the user's ``upsertConfig`` object; a bad value raises at ``upsertConfig.<key>``."""
        try:
            hash_function = HashFunction.parse(_given(raw, "hashFunction", D.UPSERT_HASH_FUNCTION))
        except InputError as exc:
            allowed = ", ".join(h.value for h in HashFunction)
            raise TableConfigError(exc.where, f"must be one of {allowed}, got {raw.get('hashFunction')!r}") from None
        return cls(
            mode=str(_given(raw, "mode", D.UPSERT_MODE)).upper(),
            hash_function=hash_function,
            comparison_columns=_columns(raw),
            metadata_ttl=_ttl(raw, "metadataTTL", D.UPSERT_METADATA_TTL),
            deleted_keys_ttl=_ttl(raw, "deletedKeysTTL", D.UPSERT_DELETED_KEYS_TTL),
            snapshot=_enablement(raw, "snapshot", "enableSnapshot"),
            preload=_enablement(raw, "preload", "enablePreload"),
            delete_record_column=_optional_str(raw, "deleteRecordColumn"),
            drop_out_of_order_record=bool(raw.get("dropOutOfOrderRecord", False)),
            out_of_order_record_column=_optional_str(raw, "outOfOrderRecordColumn"),
        )

    def comparison_columns_or(self, time_column: str | None) -> tuple[str, ...]:
        """The columns Pinot compares on: ``comparisonColumns``, else the table's time column (if any)."""
        return self.comparison_columns or ((time_column,) if time_column else ())
