"""What the whole cluster costs per month: servers, brokers, controllers, ZooKeeper and segment storage.

A lead buys a cluster, not a set of servers. Each part is priced from the report's price table
(:mod:`workbench.report.prices`): servers on the instance that fits their cores and heap; brokers
(``cluster.brokers``), controllers and ZooKeeper on the cheapest instance with the vCPUs and memory of
:data:`~workbench.defaults.BROKER_MACHINE` and :data:`~workbench.defaults.CLUSTER_ROLES`; segment storage
as block storage per server (the segment bytes it holds, ``table bytes x replication / servers``, plus
:data:`~workbench.defaults.STORAGE_HEADROOM`) at the table's ``storage_per_gib_month`` (else
:data:`~workbench.defaults.STORAGE_PER_GIB_MONTH`). Those defaults are the one place to change the
assumptions.

>>> from workbench.report.prices import parse_prices
>>> table = parse_prices({"instances": {"m": {"vcpus": 4, "memory": "16G", "per_hour": 0.2},
...                                     "s": {"vcpus": 2, "memory": "8G", "per_hour": 0.1}}}, "p")
>>> parts = cluster_parts(table, servers=(3, table.instances["m"]), brokers=1, table_bytes=100 * 2**30,
...                       replication=3, hours=730.0)
>>> [(p.role, p.count, p.instance, round(p.monthly, 2)) for p in parts]  # doctest: +NORMALIZE_WHITESPACE
[('servers', 3, 'm', 438.0), ('brokers', 1, 'm', 146.0), ('controllers', 2, 'm', 292.0),
 ('ZooKeeper', 3, 's', 219.0), ('storage', 3, None, 36.0)]
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from workbench import defaults as D
from workbench.report.prices import Instance, PriceTable

__all__ = ["Part", "cluster_parts", "part_line", "total"]


@dataclass(frozen=True)
class Part:
    """One line of the bill: ``count`` machines (or disks) of ``role``, per month, in the table's currency.

    ``instance`` names the instance type (``None`` for storage, or when none in the table fits: then
    ``monthly`` is NaN); ``gib`` is the disk per server for storage."""

    role: str
    count: int
    instance: str | None
    monthly: float
    per_hour: float = math.nan
    gib: float = 0.0


def _machines(role: str, count: int, instance: Instance | None, hours: float) -> Part:
    if instance is None:
        return Part(role, count, None, math.nan)
    return Part(role, count, instance.name, PriceTable.monthly(instance, count, hours), instance.per_hour)


def cluster_parts(prices: PriceTable, *, servers: tuple[int, Instance | None], brokers: int, table_bytes: float | None,
                  replication: int, hours: float = D.HOURS_PER_MONTH) -> list[Part]:
    """The bill of a cluster of ``servers`` (count, instance) and ``brokers`` brokers holding
    ``table_bytes`` of segments (``None``: unknown, storage is not priced) ``replication`` times."""
    count, instance = servers
    parts = [_machines("servers", count, instance, hours)]
    broker = prices.cheapest_fit(D.BROKER_MACHINE[0], D.BROKER_MACHINE[1], 1.0)
    parts.append(_machines("brokers", brokers, broker, hours))
    for role, (n, vcpus, memory) in D.CLUSTER_ROLES.items():
        name = "controllers" if role == "controller" else "ZooKeeper"
        parts.append(_machines(name, n, prices.cheapest_fit(vcpus, memory, 1.0), hours))
    if table_bytes is not None:
        gib = table_bytes * replication / count * (1 + D.STORAGE_HEADROOM) / 1024**3
        parts.append(Part("storage", count, None, count * gib * prices.storage_per_gib_month, gib=gib))
    return parts


def total(parts: list[Part]) -> float:
    """The monthly total (NaN when a part has no price)."""
    return float(sum(p.monthly for p in parts))


def part_line(part: Part, currency: str) -> str:
    """One line of page 1's bill: ``brokers: 2 x c6i.xlarge, 248 USD/month``."""
    digits = 2 if part.monthly < 10 else 0
    money = ("not priced (no instance fits)" if part.monthly != part.monthly else
             f"{part.monthly:,.{digits}f} {currency}/month")
    if part.role == "storage":
        disk = f"{part.gib:,.1f} GiB" if part.gib >= 1 else f"{part.gib * 1024:,.1f} MiB"
        return (f"storage: {part.count} x {disk} of disk (segments x replication / servers, "
                f"+{D.STORAGE_HEADROOM:.0%} headroom), {money}")
    what = f"{part.count} x {part.instance}" if part.instance else f"{part.count} machines"
    return f"{part.role}: {what}, {money}"
