"""Which query options belong in a cache key, and how their values are normalised.

The RFC keys results on "normalized options" (§4.1) and the server on a ``queryOptionsSig`` of the
options that change a partial result (null handling, response format, group trim thresholds, §4.2).
The safe default is the reverse of a whitelist: **every option is part of the key unless it is known
not to change the result**. A known-neutral option (a timeout, a routing hint, the cache switches
themselves) is dropped, so dashboards that differ only in ``timeoutMs`` share entries; an unknown
option is kept, so a new result-changing option can never produce a wrong hit.

Option names are matched case-insensitively, as Pinot resolves them, and printed in Pinot's spelling.
Values of boolean options follow Java's ``Boolean.parseBoolean`` (only ``true``, in any case, is
true), and integer options drop redundant signs and zeros when the text is a plain integer.

>>> from workbench.pinot.sql.query import Query
>>> from workbench.pinot.sql import parse_query
>>> q = parse_query("SET timeoutMs = 100; SET ENABLENULLHANDLING = 'TRUE'; SET numGroupsLimit = '010'; "
...                    "SET resultCache = false; SELECT COUNT(*) FROM t")
>>> result_options(q)
(('enableNullHandling', 'true'), ('numGroupsLimit', '10'))
>>> cache_allowed(q, RESULT_CACHE_OPTION), cache_allowed(q, SEGMENT_CACHE_OPTION)
(False, True)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from workbench.pinot.sql.query import Query

__all__ = [
    "RESULT_CACHE_OPTION",
    "SEGMENT_CACHE_OPTION",
    "OptionRule",
    "cache_allowed",
    "option_rule",
    "result_options",
]

#: Per-query switch for the broker result cache (RFC §7: ``SET option 'resultCache' = false``).
RESULT_CACHE_OPTION = "resultCache"
#: Per-query switch for the server segment cache (RFC §7: ``SET option 'segmentCache' = false``).
SEGMENT_CACHE_OPTION = "segmentCache"

_PLAIN_INTEGER = re.compile(r"^[+-]?\d+$")


def _as_is(value: str) -> str:
    return value


def _java_boolean(value: str) -> str:
    return "true" if value.lower() == "true" else "false"


def _java_integer(value: str) -> str:
    return str(int(value)) if _PLAIN_INTEGER.match(value) else value


@dataclass(frozen=True)
class OptionRule:
    """How one option enters a key.

    Attributes
    ----------
    name
        Pinot's spelling of the option.
    in_key
        False for options known not to change the result (timeouts, routing, cache switches).
    normalise
        Maps equivalent value spellings to one.
    """

    name: str
    in_key: bool
    normalise: Callable[[str], str] = _as_is


def _rules(names: str, in_key: bool, normalise: Callable[[str], str] = _as_is) -> dict[str, OptionRule]:
    return {name.lower(): OptionRule(name, in_key, normalise) for name in names.split()}


#: Registry of the options the workbench knows (Pinot ``CommonConstants.Broker.Request.QueryOptionKey``).
_RULES: dict[str, OptionRule] = {
    # Options that change what a query returns, or the shape of a server's partial result.
    **_rules("enableNullHandling serverReturnFinalResult serverReturnFinalResultKeyUnpartitioned skipUpsert "
             "skipUpsertView useMultistageEngine explainPlanVerbose trace dropResults "
             "accurateGroupByWithoutOrderBy filteredAggregationsSkipEmptyGroups", True, _java_boolean),
    **_rules("numGroupsLimit groupByTrimThreshold minSegmentGroupTrimSize minServerGroupTrimSize "
             "minBrokerGroupTrimSize upsertViewFreshnessMs", True, _java_integer),
    **_rules("responseFormat", True),
    # Options that only change how fast, where or whether-cached a query runs.
    **_rules("timeoutMs extendedTimeoutMs maxExecutionThreads numReplicaGroupsToQuery useFixedReplica "
             "orderedPreferredPools orderedPreferredReplicas maxServerResponseSizeBytes "
             "maxQueryResponseSizeBytes skipIndexes useStarTree andScanReordering inPredicatePreSorted "
             "inPredicateLookupAlgorithm maxInitialResultHolderCapacity isSecondaryWorkload workloadName "
             "minConsumingFreshnessTimeMs routingOptions", False),
    **_rules(f"{RESULT_CACHE_OPTION} {SEGMENT_CACHE_OPTION}", False, _java_boolean),
}


def option_rule(name: str) -> OptionRule:
    """The rule for an option; unknown options are kept in the key, value as written, name lower-cased."""
    return _RULES.get(name.lower()) or OptionRule(name.lower(), True)


def result_options(query: Query) -> tuple[tuple[str, str], ...]:
    """The query's options that belong in a cache key, normalised and sorted by name."""
    kept: dict[str, str] = {}
    for name, value in query.options:
        rule = option_rule(name)
        if rule.in_key:
            kept[rule.name] = rule.normalise(value)
    return tuple(sorted(kept.items()))


def cache_allowed(query: Query, switch: str) -> bool:
    """Whether the per-query ``switch`` (:data:`RESULT_CACHE_OPTION` or :data:`SEGMENT_CACHE_OPTION`)
    leaves the cache on: absent means on; present means ``Boolean.parseBoolean`` of its value."""
    value = query.option(switch)
    return value is None or _java_boolean(value) == "true"
