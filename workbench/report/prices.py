"""Instance prices: what a cluster shape costs per month, in money.

A price table names instance types with their vCPUs, memory and hourly price
(``workbench/data/instance_prices.yaml`` is the default, with its source and date). A configuration
runs on the cheapest instance that has at least ``cluster.server.cores`` vCPUs (Pinot sizes its
thread pools from the processors it sees) and at least ``heap x memory_per_heap`` memory (the heap
plus room for memory-mapped segments and the page cache).

>>> table = parse_prices({"currency": "EUR", "instances": {
...     "small": {"vcpus": 4, "memory": "16G", "per_hour": 0.2},
...     "big": {"vcpus": 8, "memory": "64G", "per_hour": 0.5}}}, "prices")
>>> table.cheapest_fit(cores=4, heap_bytes=16 * 1024**3, memory_per_heap=2.0).name
'big'
>>> round(table.monthly(table.instances["small"], servers=3, hours_per_month=730), 2)
438.0
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from workbench import defaults as D
from workbench.errors import InputError
from workbench.units import parse_size

__all__ = ["Instance", "PriceTable", "load_prices", "parse_prices"]

_TABLE_KEYS = ("name", "source", "as_of", "currency", "instances", "storage_per_gib_month")
_INSTANCE_KEYS = ("vcpus", "memory", "per_hour")


@dataclass(frozen=True)
class Instance:
    """One instance type: ``vcpus``, ``memory_bytes`` and ``per_hour`` (price per instance-hour)."""

    name: str
    vcpus: int
    memory_bytes: int
    per_hour: float


@dataclass(frozen=True)
class PriceTable:
    """A price list: instance types by name, the currency, and where the prices come from."""

    instances: Mapping[str, Instance]
    currency: str = "USD"
    name: str = ""
    source: str = ""
    as_of: str = ""
    #: Block storage per GiB-month, in ``currency`` (segment storage of the cluster's bill).
    storage_per_gib_month: float = D.STORAGE_PER_GIB_MONTH

    def cheapest_fit(self, cores: int, heap_bytes: float, memory_per_heap: float) -> Instance | None:
        """The cheapest instance with ``vcpus >= cores`` and memory ``>= heap_bytes x memory_per_heap``."""
        fits = [i for i in self.instances.values()
                if i.vcpus >= cores and i.memory_bytes >= heap_bytes * memory_per_heap]
        return min(fits, key=lambda i: (i.per_hour, i.vcpus, i.name), default=None)

    @staticmethod
    def monthly(instance: Instance, servers: int, hours_per_month: float = D.HOURS_PER_MONTH) -> float:
        """What ``servers`` instances cost per month (``hours_per_month`` hours), in the table's currency."""
        return servers * instance.per_hour * hours_per_month

    def describe(self) -> str:
        """One line naming the table and its source, for the report's footnotes."""
        parts = [self.name or "instance price table", f"prices in {self.currency}"]
        if self.as_of:
            parts.append(f"as of {self.as_of}")
        if self.source:
            parts.append(self.source)
        return ", ".join(parts)


def _instance(name: str, value: Any, where: str) -> Instance:
    if not isinstance(value, Mapping) or set(value) != set(_INSTANCE_KEYS):
        raise InputError(f"{where}.instances.{name}", "must be a mapping with exactly vcpus, memory and per_hour, "
                                                       "e.g. {vcpus: 4, memory: 32G, per_hour: 0.252}")
    vcpus, per_hour = value["vcpus"], value["per_hour"]
    if isinstance(vcpus, bool) or not isinstance(vcpus, int) or vcpus < 1:
        raise InputError(f"{where}.instances.{name}.vcpus", f"must be a positive integer, got {vcpus!r}")
    if isinstance(per_hour, bool) or not isinstance(per_hour, int | float) or per_hour <= 0:
        raise InputError(f"{where}.instances.{name}.per_hour", f"must be a positive price, got {per_hour!r}")
    try:
        memory = parse_size(value["memory"])
    except ValueError as exc:
        raise InputError(f"{where}.instances.{name}.memory", str(exc)) from None
    return Instance(str(name), int(vcpus), memory, float(per_hour))


def parse_prices(data: Any, where: str) -> PriceTable:
    """Validate a price table mapping (the YAML file's content); ``where`` prefixes every error."""
    if not isinstance(data, Mapping):
        raise InputError(where, "a price table must be a mapping with `instances:` (see instance_prices.yaml)")
    unknown = sorted(str(k) for k in data if k not in _TABLE_KEYS)
    if unknown:
        raise InputError(f"{where}.{unknown[0]}", f"unknown key; allowed: {', '.join(_TABLE_KEYS)}")
    instances = data.get("instances")
    if not isinstance(instances, Mapping) or not instances:
        raise InputError(f"{where}.instances", "must map at least one instance type to {vcpus, memory, per_hour}")
    storage = data.get("storage_per_gib_month", D.STORAGE_PER_GIB_MONTH)
    if isinstance(storage, bool) or not isinstance(storage, int | float) or storage < 0:
        raise InputError(f"{where}.storage_per_gib_month", f"must be a price of 0 or more, got {storage!r}")
    return PriceTable(
        storage_per_gib_month=float(storage),
        instances={str(n): _instance(str(n), v, where) for n, v in instances.items()},
        currency=str(data.get("currency", "USD")), name=str(data.get("name", "")),
        source=str(data.get("source", "")), as_of=str(data.get("as_of", "")),
    )


def load_prices(source: str | Path | Mapping[str, Any] | None = None) -> PriceTable:
    """A price table from a YAML file, an inline mapping, or (``None``) the shipped default table."""
    if source is None:
        source = D.INSTANCE_PRICES_FILE
    if isinstance(source, Mapping):
        return parse_prices(source, "report.prices")
    path = Path(source)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(str(path), f"cannot read the price table: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise InputError(str(path), f"not valid YAML: {getattr(exc, 'problem', exc)}") from None
    return parse_prices(data, str(path))
