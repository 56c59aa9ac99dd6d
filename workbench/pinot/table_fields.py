"""Type and value checks of every table-config field the workbench reads, named by its Pinot key.

The workbench keeps the user's table config whole and reads a few dozen of its fields. Each of those
is declared here once, with what Pinot allows there, so a config that says ``"segmentPrunerTypes":
"time"`` (a string, not a list), ``"functionName": "Crc32"`` or ``"metadataTTL": -5`` is rejected up
front with the key path, instead of being misread later (a string is a list of characters to Python).
Fields the workbench does not read are not looked at: they pass through unchanged. ``null`` means
absent, as Pinot's Jackson reads it.

Booleans must be JSON booleans: Jackson would coerce ``"false"``, but so would nothing else here,
and a quoted boolean is more often a mistake than a choice.

>>> check_fields({"tableName": "t", "tableType": "OFFLINE", "routing": {"segmentPrunerTypes": "time"}})
Traceback (most recent call last):
...
workbench.errors.TableConfigError: routing.segmentPrunerTypes: must be a list, e.g. ["partition", "time"], \
got 'time'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from workbench.errors import TableConfigError
from workbench.pinot.partition.functions import get_partition_function, partition_function_names

__all__ = [
    "FIELDS",
    "HASH_FUNCTIONS",
    "INSTANCE_SELECTOR_TYPES",
    "SEGMENT_PRUNER_TYPES",
    "UPSERT_MODES",
    "check_fields",
]

Check = Callable[[Any, str], None]

#: ``routing.instanceSelectorType`` values the workbench models (matched exactly, as Pinot does since #17364).
INSTANCE_SELECTOR_TYPES = ("balanced", "replicaGroup", "strictReplicaGroup", "multiStageReplicaGroup")
#: ``routing.segmentPrunerTypes`` values Pinot recognises (case-insensitively; PB §2.1).
SEGMENT_PRUNER_TYPES = ("partition", "time", "empty")
#: ``upsertConfig.mode`` (PB §5.1).
UPSERT_MODES = ("FULL", "PARTIAL", "NONE")
#: ``upsertConfig.hashFunction`` / ``dedupConfig.hashFunction`` (PB §5.1).
HASH_FUNCTIONS = ("NONE", "MD5", "MURMUR3", "UUID", "XXHASH", "XXH128")
_ENABLEMENT = ("ENABLE", "DISABLE", "DEFAULT")
_CONSISTENCY = ("NONE", "SYNC", "SNAPSHOT")
_PARTIAL_STRATEGIES = ("APPEND", "IGNORE", "INCREMENT", "MAX", "MIN", "OVERWRITE", "FORCE_OVERWRITE", "UNION")
_PARTITION_SELECTORS = ("INSTANCE_REPLICA_GROUP_PARTITION_SELECTOR", "FD_AWARE_INSTANCE_PARTITION_SELECTOR",
                        "MIRROR_SERVER_SET_PARTITION_SELECTOR", "IMPLICIT_REALTIME_TABLE_PARTITION_SELECTOR")
_TIME_UNITS = ("NANOSECONDS", "MICROSECONDS", "MILLISECONDS", "SECONDS", "MINUTES", "HOURS", "DAYS")
_NOT_IN_NAMES = ("/", "\\", "\x00")


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


def _show(value: Any) -> str:
    """A value as the user wrote it (the config is kept frozen: mapping proxies and tuples)."""
    return repr(_plain(value))


def _fail(where: str, problem: str) -> TableConfigError:
    return TableConfigError(where, problem)


def _object(value: Any, where: str) -> None:
    if not isinstance(value, Mapping):
        raise _fail(where, f"must be a JSON object, got {_show(value)}")


def _string(value: Any, where: str) -> None:
    if not isinstance(value, str):
        raise _fail(where, f"must be a string, got {_show(value)}")


def _boolean(value: Any, where: str) -> None:
    if not isinstance(value, bool):
        raise _fail(where, f"must be true or false (a JSON boolean, unquoted), got {_show(value)}")


def _integer(minimum: int) -> Check:
    """An integer (Pinot's Jackson also reads numeric strings such as ``"3"``) of at least ``minimum``."""
    def check(value: Any, where: str) -> None:
        try:
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError
            number = int(value.strip()) if isinstance(value, str) else int(value)
        except (TypeError, ValueError, OverflowError):
            raise _fail(where, f"must be an integer, got {_show(value)}") from None
        if number < minimum:
            raise _fail(where, f"must be at least {minimum}, got {_show(value)}")
    return check


def _number(minimum: float, *, strictly: bool = False, note: str = "") -> Check:
    """A finite number (or numeric string) above ``minimum`` (``strictly``) or at least it."""
    def check(value: Any, where: str) -> None:
        try:
            if isinstance(value, bool):
                raise ValueError
            number = float(value)
        except (TypeError, ValueError):
            raise _fail(where, f"must be a number, got {_show(value)}") from None
        if not math.isfinite(number):
            raise _fail(where, f"must be a finite number, got {_show(value)}")
        if number < minimum or (strictly and number == minimum):
            bound = f"greater than {minimum:g}" if strictly else f"at least {minimum:g}"
            raise _fail(where, f"must be {bound}{note}, got {_show(value)}")
    return check


def _one_of(allowed: tuple[str, ...], *, ignore_case: bool = True, note: str = "") -> Check:
    def check(value: Any, where: str) -> None:
        text = value.upper() if ignore_case and isinstance(value, str) else value
        choices = tuple(a.upper() for a in allowed) if ignore_case else allowed
        if not isinstance(value, str) or text not in choices:
            raise _fail(where, f"must be one of {', '.join(allowed)}{note}, got {_show(value)}")
    return check


def _list_of(item: Check, example: str) -> Check:
    def check(value: Any, where: str) -> None:
        if not isinstance(value, list | tuple):
            raise _fail(where, f"must be a list, e.g. {example}, got {_show(value)}")
        for index, entry in enumerate(value):
            item(entry, f"{where}[{index}]")
    return check


def _strings(value: Any, where: str) -> None:
    """``comparisonColumns``: a list of column names (Pinot's setter also takes one string)."""
    if isinstance(value, str):
        return
    _list_of(_string, '["ts"]')(value, where)


def _table_name(value: Any, where: str) -> None:
    if not isinstance(value, str) or not value.strip():
        raise _fail(where, f"must be the table's name (a non-empty string, e.g. \"events\"), got {_show(value)}")
    if any(c in value for c in _NOT_IN_NAMES) or value != value.strip():
        raise _fail(where, f"must not contain '/', '\\\\', NUL or surrounding spaces (it names segments and "
                           f"their directories), got {_show(value)}")


def _selector(value: Any, where: str) -> None:
    if value in INSTANCE_SELECTOR_TYPES:
        return
    close = [k for k in INSTANCE_SELECTOR_TYPES if isinstance(value, str) and k.lower() == value.lower()]
    if close:
        raise _fail(where, f"{value!r} is not a selector: Pinot matches names case-sensitively (since #17364); "
                           f"did you mean {close[0]!r}?")
    raise _fail(where, f"must be one of {', '.join(INSTANCE_SELECTOR_TYPES)} (Pinot would try to load {value!r} as "
                       "a plugin class, which the workbench cannot model)")


def _pruner(value: Any, where: str) -> None:
    _one_of(SEGMENT_PRUNER_TYPES, note=" (Pinot silently ignores any other value)")(value, where)


def _partition_entry(value: Any, where: str) -> None:
    """One ``columnPartitionMap`` entry: a registered function, a partition count and its config."""
    _object(value, where)
    name = value.get("functionName")
    if not isinstance(name, str) or name.lower() not in partition_function_names():
        names = ", ".join(partition_function_names())
        raise _fail(f"{where}.functionName",
                    f"must be a Pinot partition function ({names}; any case), got {_show(name)}")
    _integer(1)(value.get("numPartitions"), f"{where}.numPartitions")
    config = value.get("functionConfig")
    if config is not None:
        _object(config, f"{where}.functionConfig")
    try:
        get_partition_function(name, int(str(value["numPartitions"]).strip()), config)
    except TableConfigError as exc:
        raise _fail(f"{where}.{exc.where}" if exc.where else where, exc.problem) from None


_IAC = "instanceAssignmentConfigMap.*"
_RG = f"{_IAC}.replicaGroupPartitionConfig"
_TAG = f"{_IAC}.tagPoolConfig"
_RGS = "segmentsConfig.replicaGroupStrategyConfig"
_CPM = "tableIndexConfig.segmentPartitionConfig.columnPartitionMap"

#: Every field the workbench reads: key pattern (``*`` any key of an object, ``[]`` any list item)
#: -> check. Parents come before their children.
FIELDS: Mapping[str, Check] = {
    "tableName": _table_name,
    "tableType": _one_of(("OFFLINE", "REALTIME")),
    "isDimTable": _boolean,
    "segmentsConfig": _object,
    "segmentsConfig.replication": _integer(1),
    "segmentsConfig.replicasPerPartition": _integer(1),
    "segmentsConfig.timeColumnName": _string,
    "segmentsConfig.segmentAssignmentStrategy": _string,
    "segmentsConfig.minimizeDataMovement": _boolean,
    "segmentsConfig.retentionTimeValue": _number(0),
    "segmentsConfig.retentionTimeUnit": _one_of(_TIME_UNITS),
    _RGS: _object,
    f"{_RGS}.numInstancesPerPartition": _integer(0),
    f"{_RGS}.partitionColumn": _string,
    "routing": _object,
    "routing.instanceSelectorType": _selector,
    "routing.routingTableBuilderName": _string,
    "routing.segmentPrunerTypes": _list_of(_pruner, '["partition", "time"]'),
    "routing.useFixedReplica": _boolean,
    "tableIndexConfig": _object,
    "tableIndexConfig.segmentPartitionConfig": _object,
    _CPM: _object,
    f"{_CPM}.*": _partition_entry,
    "tableIndexConfig.streamConfigs": _object,
    "tableIndexConfig.streamConfigs.streamType": _string,
    "ingestionConfig": _object,
    "ingestionConfig.streamIngestionConfig": _object,
    "ingestionConfig.streamIngestionConfig.streamConfigMaps": _list_of(_object, '[{"streamType": "kafka"}]'),
    "queryConfig": _object,
    "queryConfig.timeoutMs": _number(0, strictly=True),
    "upsertConfig": _object,
    "upsertConfig.mode": _one_of(UPSERT_MODES),
    "upsertConfig.hashFunction": _one_of(HASH_FUNCTIONS),
    "upsertConfig.comparisonColumns": _strings,
    "upsertConfig.comparisonColumn": _string,
    "upsertConfig.metadataTTL": _number(0, note=" (0 turns it off; Pinot reads a negative TTL as off too)"),
    "upsertConfig.deletedKeysTTL": _number(0, note=" (0 turns it off; Pinot reads a negative TTL as off too)"),
    "upsertConfig.snapshot": _one_of(_ENABLEMENT),
    "upsertConfig.preload": _one_of(_ENABLEMENT),
    "upsertConfig.enableSnapshot": _boolean,
    "upsertConfig.enablePreload": _boolean,
    "upsertConfig.dropOutOfOrderRecord": _boolean,
    "upsertConfig.enableDeletedKeysCompactionConsistency": _boolean,
    "upsertConfig.deleteRecordColumn": _string,
    "upsertConfig.outOfOrderRecordColumn": _string,
    "upsertConfig.consistencyMode": _one_of(_CONSISTENCY),
    "upsertConfig.defaultPartialUpsertStrategy": _one_of(_PARTIAL_STRATEGIES),
    "upsertConfig.partialUpsertStrategies": _object,
    "upsertConfig.partialUpsertStrategies.*": _one_of(_PARTIAL_STRATEGIES),
    "dedupConfig": _object,
    "dedupConfig.dedupEnabled": _boolean,
    "dedupConfig.hashFunction": _one_of(HASH_FUNCTIONS),
    "dedupConfig.metadataTTL": _number(0),
    "instanceAssignmentConfigMap": _object,
    _IAC: _object,
    f"{_IAC}.partitionSelector": _one_of(_PARTITION_SELECTORS, ignore_case=False),
    f"{_IAC}.minimizeDataMovement": _boolean,
    f"{_IAC}.constraintConfig": _object,
    _TAG: _object,
    f"{_TAG}.tag": _string,
    f"{_TAG}.poolBased": _boolean,
    f"{_TAG}.numPools": _integer(0),
    f"{_TAG}.pools": _list_of(_integer(0), "[0, 1]"),
    _RG: _object,
    f"{_RG}.replicaGroupBased": _boolean,
    **{f"{_RG}.{key}": _integer(0) for key in ("numInstances", "numReplicaGroups", "numInstancesPerReplicaGroup",
                                                "numPartitions", "numInstancesPerPartition")},
    f"{_RG}.partitionColumn": _string,
    f"{_RG}.minimizeDataMovement": _boolean,
    "tenants": _object,
    "tenants.server": _string,
    "tenants.broker": _string,
    "tenants.tagOverrideConfig": _object,
    "tenants.tagOverrideConfig.realtimeConsuming": _string,
    "tenants.tagOverrideConfig.realtimeCompleted": _string,
    "tierConfigs": _list_of(_object, '[{"name": "cold", ...}]'),
    "tierConfigs[].name": _string,
    "segmentAssignmentConfigMap": _object,
    "segmentAssignmentConfigMap.*": _object,
    "segmentAssignmentConfigMap.*.segmentAssignmentStrategy": _string,
}


def _steps(pattern: str) -> list[str]:
    return [part for step in pattern.split(".") for part in ([step[:-2], "[]"] if step.endswith("[]") else [step])]


def _matches(node: Any, steps: list[str], where: str) -> Iterator[tuple[Any, str]]:
    """``(value, key path)`` of every present, non-null value the pattern's ``steps`` reach."""
    if not steps:
        yield node, where
        return
    step, rest = steps[0], steps[1:]
    if step == "[]":
        if isinstance(node, list | tuple):
            for index, item in enumerate(node):
                yield from _matches(item, rest, f"{where}[{index}]")
        return
    if not isinstance(node, Mapping):
        return
    keys = list(node) if step == "*" else [step]
    for key in keys:
        value = node.get(key)
        if value is not None:
            yield from _matches(value, rest, f"{where}.{key}" if where else str(key))


def check_fields(raw: Mapping[str, Any]) -> None:
    """Check every field of :data:`FIELDS` present in ``raw``; raises for the first bad one.

    Raises
    ------
    TableConfigError
        At the field's key path, saying what Pinot allows there.
    """
    for pattern, check in FIELDS.items():
        for value, where in _matches(raw, _steps(pattern), ""):
            check(value, where)
