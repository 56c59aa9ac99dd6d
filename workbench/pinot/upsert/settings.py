"""Validated upsert settings: Pinot's ``upsertConfig`` fields plus the workbench's model options.

The manager reads exactly one frozen :class:`UpsertSettings`, built either from keyword arguments or
from a table config (:meth:`UpsertSettings.from_table_config`), so every rule Pinot enforces at table
creation or manager construction (reference §5.1, §5.4) is checked once, up front, with the offending
key named.

>>> s = UpsertSettings.from_upsert_config({"metadataTTL": 3600, "snapshot": "ENABLE",
...                                         "comparisonColumns": ["ts"]})
>>> s.metadata_ttl, s.enable_snapshot, s.ttl_enabled, s.hash_function
(3600.0, True, True, <HashFunction.NONE: 'NONE'>)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from workbench import defaults as D
from workbench.errors import InputError, TableConfigError
from workbench.pinot.upsert.config import UpsertConfig
from workbench.pinot.upsert.hashing import HashFunction

__all__ = ["ExpiryStrategy", "UpsertSettings"]


class ExpiryStrategy(StrEnum):
    """How expired primary keys leave the map (the design doc's three removal options).

    ``AT_COMMIT``
        Pinot's shipped behaviour: a full scan of the map on the consuming thread at the start of
        every new consuming segment ("remove synchronously" in the design doc).
    ``PERIODIC_SCAN``
        The design doc's asynchronous full scan: the same scan, run whenever the watermark has moved
        ``scan_interval`` past the previous scan, checked at segment starts and record-batch ends.
    ``TWO_MAP_ROTATION``
        Two maps, current and previous. When the watermark has moved one metadataTTL since the last
        rotation, the previous map is dropped whole and the current one becomes previous; a key found
        in the previous map moves back into the current one when it is written. No scan, but a key
        lives between one and two TTLs after its last write.
    """

    AT_COMMIT = "at_commit"
    PERIODIC_SCAN = "periodic_scan"
    TWO_MAP_ROTATION = "two_map_rotation"


def _effective(enablement: str, server_default: bool) -> bool:
    """``ENABLE`` is on, ``DISABLE`` off, ``DEFAULT`` whatever the server's default says."""
    return enablement == "ENABLE" or (enablement == "DEFAULT" and server_default)


@dataclass(frozen=True)
class UpsertSettings:
    """Everything a partition's upsert metadata manager needs to know about its table.

    Attributes
    ----------
    metadata_ttl, deleted_keys_ttl
        ``metadataTTL`` and ``deletedKeysTTL`` in comparison-column units; ``<= 0`` is off.
    hash_function
        ``hashFunction`` for map keys.
    enable_snapshot, enable_preload
        Effective snapshot and preload settings (preload is forced off without snapshots).
    primary_key_types
        Pinot types of the key columns; required to hash (NONE needs only their count).
    delete_record_column
        ``deleteRecordColumn``; when set, segments keep queryableDocIds and deletes are honoured.
    drop_out_of_order_record, out_of_order_record_column
        What the consuming segment does with a record older than its key's current location.
    num_comparison_columns
        TTL needs exactly one (Pinot's precondition); the manager compares one value per record.
    expiry, scan_interval
        Workbench option: which removal strategy runs (:class:`ExpiryStrategy`), and the periodic
        scan's spacing in comparison units.
    expired_key_is_new
        Workbench option: the design doc's scenario-3 rule (a key still in the map but already older
        than watermark - metadataTTL is treated as absent, as Pinot's *dedup* does). Off by default:
        Pinot's upsert lets such a key compete normally (reference §5.4).
    """

    metadata_ttl: float = 0.0
    deleted_keys_ttl: float = 0.0
    hash_function: HashFunction = HashFunction.NONE
    enable_snapshot: bool = False
    enable_preload: bool = False
    primary_key_types: tuple[str, ...] = ("LONG",)
    delete_record_column: str | None = None
    drop_out_of_order_record: bool = False
    out_of_order_record_column: str | None = None
    num_comparison_columns: int = 1
    expiry: ExpiryStrategy = ExpiryStrategy.AT_COMMIT
    scan_interval: float = 0.0
    expired_key_is_new: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "metadata_ttl", float(self.metadata_ttl))
        object.__setattr__(self, "deleted_keys_ttl", float(self.deleted_keys_ttl))
        object.__setattr__(self, "hash_function", HashFunction.parse(self.hash_function))
        object.__setattr__(self, "expiry", ExpiryStrategy(self.expiry))
        object.__setattr__(self, "primary_key_types", tuple(t.upper() for t in self.primary_key_types))
        object.__setattr__(self, "enable_preload", self.enable_preload and self.enable_snapshot)
        self._validate_ttl()
        self._validate_model_options()
        if self.drop_out_of_order_record and self.out_of_order_record_column:
            raise InputError("upsertConfig.dropOutOfOrderRecord",
                             "cannot be combined with outOfOrderRecordColumn")

    def _validate_ttl(self) -> None:
        if self.ttl_enabled and self.num_comparison_columns != 1:
            raise InputError("upsertConfig.comparisonColumns",
                             "Upsert TTL does not work with multiple comparison columns")
        if self.metadata_ttl > 0 and not self.enable_snapshot:
            raise InputError("upsertConfig.metadataTTL", "Upsert metadata TTL must have snapshot enabled")
        if self.deleted_keys_ttl > 0 and not self.delete_record_column:
            raise InputError("upsertConfig.deletedKeysTTL", "requires deleteRecordColumn")

    def _validate_model_options(self) -> None:
        if self.expiry is ExpiryStrategy.PERIODIC_SCAN and self.scan_interval <= 0:
            raise InputError("scan_interval", f"must be positive for {self.expiry.value}, got {self.scan_interval}")
        if self.expiry is ExpiryStrategy.TWO_MAP_ROTATION and (self.metadata_ttl <= 0 or self.deleted_keys_ttl > 0):
            raise InputError("expiry", "two_map_rotation rotates by metadataTTL and cannot expire deleted keys; "
                             "set metadata_ttl > 0 and deleted_keys_ttl = 0")
        if self.expired_key_is_new and self.metadata_ttl <= 0:
            raise InputError("expired_key_is_new", "needs metadata_ttl > 0")

    @property
    def ttl_enabled(self) -> bool:
        """Pinot tracks the watermark only when either TTL is on."""
        return self.metadata_ttl > 0 or self.deleted_keys_ttl > 0

    @property
    def has_delete_column(self) -> bool:
        """Segments keep a separate queryableDocIds bitmap only with ``deleteRecordColumn``."""
        return self.delete_record_column is not None

    @classmethod
    def from_upsert_config(cls, raw: Mapping[str, Any], **kwargs: Any) -> UpsertSettings:
        """Read Pinot's ``upsertConfig`` mapping (see :meth:`from_config` for ``kwargs``)."""
        return cls.from_config(UpsertConfig.from_json(raw), **kwargs)

    @classmethod
    def from_config(cls, config: UpsertConfig, *, time_column: str | None = None,
                    primary_key_types: tuple[str, ...] = ("LONG",),
                    server_enable_snapshot: bool = D.UPSERT_SERVER_ENABLE_SNAPSHOT,
                    server_enable_preload: bool = D.UPSERT_SERVER_ENABLE_PRELOAD, **options: Any) -> UpsertSettings:
        """The settings of a typed ``upsertConfig``: ``DEFAULT`` snapshot and preload take the server's
        defaults, unset comparison columns the table's ``time_column``; ``options`` set the workbench-only fields."""
        snapshot = _effective(config.snapshot, server_enable_snapshot)
        return cls(
            metadata_ttl=config.metadata_ttl,
            deleted_keys_ttl=config.deleted_keys_ttl,
            hash_function=config.hash_function,
            enable_snapshot=snapshot,
            enable_preload=_effective(config.preload, server_enable_preload),
            primary_key_types=primary_key_types,
            delete_record_column=config.delete_record_column,
            drop_out_of_order_record=config.drop_out_of_order_record,
            out_of_order_record_column=config.out_of_order_record_column,
            num_comparison_columns=max(len(config.comparison_columns_or(time_column)), 1),
            **options,
        )

    @classmethod
    def from_table_config(cls, table_config: Any, **kwargs: Any) -> UpsertSettings:
        """Read a :class:`~workbench.pinot.table_config.TableConfig` (must be an upsert table)."""
        config = table_config.upsert
        if config is None:
            raise TableConfigError("upsertConfig", "the table is not an upsert table (mode NONE or missing)")
        kwargs.setdefault("time_column", table_config.time_column_name)
        return cls.from_config(config, **kwargs)
