"""Query options that steer instance selection, and the broker's request ids.

Pinot passes query options as strings (``SET numReplicaGroupsToQuery = 2;`` or the ``queryOptions``
request field); notebooks may also pass Python ints and bools. The keys are Pinot's
(``CommonConstants.Broker.Request.QueryOptionKey``; ``pinot-behaviour.md`` §3.7).

>>> parse_routing_options({"numReplicaGroupsToQuery": "2", "orderedPreferredPools": "2|1"})
RoutingOptions(num_replica_groups=2, use_fixed_replica=None, ordered_preferred_pools=(2, 1))

``orderedPreferredReplicas``, the option's name before pools replaced replica groups (the values are the
same pool numbers), is still read, with a warning naming ``orderedPreferredPools``.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from typing import Any, Final, NamedTuple

import numpy as np

from workbench.errors import InputError
from workbench.pinot.query_options import resolve_keys, spellings

__all__ = [
    "BROKER_USE_FIXED_REPLICA", "MAX_REQUEST_ID", "NUM_REPLICA_GROUPS_TO_QUERY", "ORDERED_PREFERRED_POOLS",
    "ORDERED_PREFERRED_REPLICAS", "ROUTING_OPTION_KEYS", "USE_FIXED_REPLICA", "RequestIdGenerator", "RoutingOptions",
    "broker_use_fixed_replica", "parse_routing_options", "routing_options_set",
]

NUM_REPLICA_GROUPS_TO_QUERY: Final = "numReplicaGroupsToQuery"
USE_FIXED_REPLICA: Final = "useFixedReplica"
ORDERED_PREFERRED_POOLS: Final = "orderedPreferredPools"
#: The older name of ``orderedPreferredPools`` (Pinot #15203, before pools replaced replica groups).
ORDERED_PREFERRED_REPLICAS: Final = "orderedPreferredReplicas"
#: The query options instance selection reads, as Pinot spells them.
ROUTING_OPTION_KEYS: Final = (NUM_REPLICA_GROUPS_TO_QUERY, USE_FIXED_REPLICA, ORDERED_PREFERRED_POOLS,
                              ORDERED_PREFERRED_REPLICAS)
_SPELLINGS: Final = spellings(ROUTING_OPTION_KEYS)
#: Broker config key of the broker-wide fixed-replica default (``CommonConstants.Broker``).
BROKER_USE_FIXED_REPLICA: Final = "pinot.broker.use.fixed.replica"
#: Selectors see ``requestId mod 10**9`` (``BaseInstanceSelector.MAX_REQUEST_ID``).
MAX_REQUEST_ID: Final = 1_000_000_000
_INT_MAX: Final = 2**31 - 1


class RoutingOptions(NamedTuple):
    """The routing-related query options of one query (``None``: not set)."""

    num_replica_groups: int | None = None
    use_fixed_replica: bool | None = None
    ordered_preferred_pools: tuple[int, ...] = ()


NO_OPTIONS: Final = RoutingOptions()


def _positive_int(raw: Any) -> int:
    where = f"queryOptions.{NUM_REPLICA_GROUPS_TO_QUERY}"
    try:
        value = int(str(raw).strip()) if not isinstance(raw, bool) else -1
    except ValueError:
        value = -1
    if value <= 0:
        raise InputError(where, f"must be a positive integer, got {raw!r}")
    return value


def _java_bool(raw: Any) -> bool:
    """Java's ``Boolean.parseBoolean``: only "true" in any case is true."""
    return raw if isinstance(raw, bool) else str(raw).strip().lower() == "true"


def _pools(raw: Any, key: str = ORDERED_PREFERRED_POOLS) -> tuple[int, ...]:
    text = str(raw).strip()
    try:
        return tuple(int(part.strip()) for part in text.split("|")) if text else ()
    except ValueError:
        raise InputError(f"queryOptions.{key}",
                         f"must be pool ids separated by '|', e.g. \"2|1\", got {raw!r}") from None


def _preferred_pools(options: Mapping[str, Any]) -> tuple[int, ...]:
    pools = options.get(ORDERED_PREFERRED_POOLS)
    if pools is not None:
        return _pools(pools)
    older = options.get(ORDERED_PREFERRED_REPLICAS)
    if older is None:
        return ()
    warnings.warn(f"queryOptions.{ORDERED_PREFERRED_REPLICAS} is an older spelling; current Pinot reads "
                  f"queryOptions.{ORDERED_PREFERRED_POOLS}", UserWarning, stacklevel=4)
    return _pools(older, ORDERED_PREFERRED_REPLICAS)


def routing_options_set(options: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The routing options among a query's own (``SET k = v;``, ``OPTION(...)``), under Pinot's spelling.

    Pinot's SQL parser resolves option keys case-insensitively (``QueryOptionsUtils
    .resolveCaseInsensitiveOptions``), so ``SET numreplicagroupstoquery = 2`` is the option itself.

    >>> routing_options_set([("NUMREPLICAGROUPSTOQUERY", "2"), ("timeoutMs", "100")])
    {'numReplicaGroupsToQuery': '2'}
    """
    return {key: value for key, value in resolve_keys(options, _SPELLINGS).items() if key in ROUTING_OPTION_KEYS}


def broker_use_fixed_replica(broker_config: Mapping[str, Any] | None) -> bool:
    """``pinot.broker.use.fixed.replica`` from a broker config mapping (default false).

    >>> broker_use_fixed_replica({"pinot.broker.use.fixed.replica": "TRUE"})
    True
    """
    return _java_bool((broker_config or {}).get(BROKER_USE_FIXED_REPLICA, False))


def parse_routing_options(options: Mapping[str, Any] | None) -> RoutingOptions:
    """Read ``numReplicaGroupsToQuery`` (positive int), ``useFixedReplica`` (Java ``parseBoolean``:
    only "true" in any case is true) and ``orderedPreferredPools`` ("2|1", or the older
    ``orderedPreferredReplicas``) from query options."""
    if not options:
        return NO_OPTIONS
    groups = options.get(NUM_REPLICA_GROUPS_TO_QUERY)
    fixed = options.get(USE_FIXED_REPLICA)
    return RoutingOptions(
        None if groups is None else _positive_int(groups),
        None if fixed is None else _java_bool(fixed),
        _preferred_pools(options),
    )


class RequestIdGenerator:
    """A broker's request ids: ``base + counter``, ``base`` a random int in [0, 2**31 - 1) times 10**9.

    Selectors use ``request_id % 10**9``, which is just the per-broker counter 0, 1, 2, ...; the random
    base only keeps brokers' ids apart. Give each simulated broker its own generator.

    >>> ids = RequestIdGenerator(np.random.default_rng(7))
    >>> [ids.next() % MAX_REQUEST_ID for _ in range(3)]
    [0, 1, 2]
    """

    def __init__(self, rng: np.random.Generator) -> None:
        self.base = int(rng.integers(0, _INT_MAX)) * MAX_REQUEST_ID
        self._counter = 0

    def next(self) -> int:
        """The next request id."""
        request_id = self.base + self._counter % MAX_REQUEST_ID
        self._counter += 1
        return request_id
