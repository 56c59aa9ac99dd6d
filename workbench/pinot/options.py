"""Pinot query options read once into a typed value: the strings Pinot passes on, and what the model reads.

Pinot hands query options around as strings (``SET timeoutMs = 2000;`` or the request's
``queryOptions``) and parses each where it is used. The workbench reads the ones it models
(``timeoutMs``, ``isSecondaryWorkload``, ``maxExecutionThreads``; the routing options are checked) here: a
scenario's ``workload.query_options`` strictly, when it is loaded, so a bad value fails then naming its
key; a query's own ``SET`` options, merged over the workload's, as Pinot's server reads them (a value
it cannot read is the option unset). Routing keeps the strings too, because Pinot's selectors read
them there (:mod:`workbench.pinot.routing.options`).

>>> opts = QueryOptions.parse({"timeoutMs": 250, "isSecondaryWorkload": True, "useFixedReplica": "false"})
>>> opts.timeout_ms, opts.is_secondary_workload, opts.max_execution_threads, dict(opts.strings)["useFixedReplica"]
(250.0, True, -1, 'false')
>>> QueryOptions.parse({"maxExecutionThreads": "two"})
Traceback (most recent call last):
...
workbench.errors.InputError: maxExecutionThreads: must be a positive integer, got 'two'
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from workbench.errors import InputError
from workbench.frozen import FrozenMap
from workbench.pinot.routing.options import parse_routing_options

__all__ = ["QueryOptions", "option_strings"]

TIMEOUT_MS = "timeoutMs"
IS_SECONDARY_WORKLOAD = "isSecondaryWorkload"
MAX_EXECUTION_THREADS = "maxExecutionThreads"
#: Boolean options the model reads, which a scenario must give as true or false.
_BOOLEANS = (IS_SECONDARY_WORKLOAD, "useFixedReplica")


def option_strings(options: Mapping[str, Any]) -> dict[str, str]:
    """Options as the strings Pinot passes on (booleans as Java prints them: ``true``/``false``)."""
    return {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in options.items()}


def _timeout(text: str | None) -> float | None:
    """``timeoutMs`` as the broker reads it: a number of ms, which it must be (only > 0 counts)."""
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        raise InputError(TIMEOUT_MS, f"query option must be a number of ms, got {text!r}") from None


def _threads(text: str | None) -> int:
    """``maxExecutionThreads`` as the server reads it (-1: unset, or not an integer)."""
    try:
        return int(text) if text is not None else -1
    except ValueError:
        return -1


def _positive(value: str, key: str, *, integer: bool) -> None:
    try:
        number = float(int(value)) if integer else float(value)
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or number <= 0:
        noun = "a positive integer" if integer else "a positive number of ms"
        raise InputError(key, f"must be {noun}, got {value!r}")


def _check(options: Mapping[str, Any], text: Mapping[str, str]) -> None:
    """The scenario's rules for the options the model reads (errors at the option's key)."""
    for key, value in options.items():
        if isinstance(value, Mapping | list | tuple) or value is None:
            kind = "mapping" if isinstance(value, Mapping) else type(value).__name__
            raise InputError(str(key), f"a query option is one string, number or boolean, got {kind}")
    try:
        parse_routing_options(text)
    except InputError as exc:
        raise InputError(exc.where.removeprefix("queryOptions."), exc.problem) from None
    for key in _BOOLEANS:
        if key in text and text[key].strip().lower() not in ("true", "false"):
            raise InputError(key, f"must be true or false, got {options[key]!r}")
    if TIMEOUT_MS in text:
        _positive(text[TIMEOUT_MS], TIMEOUT_MS, integer=False)
    if MAX_EXECUTION_THREADS in text:
        _positive(text[MAX_EXECUTION_THREADS], MAX_EXECUTION_THREADS, integer=True)


@dataclass(frozen=True)
class QueryOptions:
    """The query options one query carries, typed where the model reads them.

    Attributes
    ----------
    strings
        Every option as Pinot passes it on (key -> string), unknown ones kept.
    timeout_ms
        ``timeoutMs`` (``None``: unset; only a positive value overrides the table's and broker's).
    is_secondary_workload
        ``isSecondaryWorkload`` (Java ``parseBoolean``: only ``true``, in any case, is true).
    max_execution_threads
        ``maxExecutionThreads`` (-1: unset).

    The routing options (``numReplicaGroupsToQuery``, ``useFixedReplica``, ``orderedPreferredPools``) are
    checked by :meth:`parse` and read from ``strings`` by the instance selector, as Pinot's broker does.
    """

    strings: Mapping[str, str] = field(default_factory=FrozenMap)
    timeout_ms: float | None = None
    is_secondary_workload: bool = False
    max_execution_threads: int = -1

    @classmethod
    def read(cls, strings: Mapping[str, str]) -> QueryOptions:
        """Options as Pinot reads a query's strings (see the module docstring for what is lenient)."""
        return cls(
            strings=FrozenMap(strings),
            timeout_ms=_timeout(strings.get(TIMEOUT_MS)),
            is_secondary_workload=(strings.get(IS_SECONDARY_WORKLOAD) or "").strip().lower() == "true",
            max_execution_threads=_threads(strings.get(MAX_EXECUTION_THREADS)),
        )

    @classmethod
    def parse(cls, options: Mapping[str, Any]) -> QueryOptions:
        """A scenario's ``workload.query_options`` (strings, numbers or booleans), checked strictly.

        Raises
        ------
        InputError
            At the option's key, saying what it must be.
        """
        text = option_strings(options)
        _check(options, text)
        return cls.read(text)
