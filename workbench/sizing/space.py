"""The space ``workbench size`` searches: the scenario's ``sizing:`` section, validated, as shapes in lines.

::

    sizing:
      servers: {min: 2, max: 24}          # the server counts to consider (every integer between)
      replica_groups: [0, 2, 3]           # layouts in Pinot's terms: 0 balanced, g replica groups (default [0])
      vary:                               # any other scenario key -> the values to consider
        cluster.server.heap: [8G, 16G]
      instances: [m6i.xlarge, m6i.2xlarge]  # instance types of the price table: each sets cluster.server.cores
      report: {prices: my_prices.yaml}    # the sizing report's options (docs/sweeps.md, `report:`)
      draws: 10                           # parameter draws per candidate when the scenario is calibrated

Every combination of layout, ``vary`` values and instance is a *line*; its shapes are its server counts
(a layout of ``g`` groups keeps the counts ``g`` divides: :func:`workbench.sweep.sizing.sizing_points`
writes each shape's overrides). Each shape's cost is the report's (:func:`workbench.report.data.shape_costs`:
the cheapest instance type fitting its cores and heap, the whole cluster's monthly bill), so the search
ranks shapes exactly as the report will. An instance type stands for its vCPUs: two types with as many
vCPUs give the same shape, priced on the cheapest that fits. The load is the scenario's (a sizing answers
"which shape for this load"), so ``vary`` takes no ``workload`` key and no ``cluster.servers``.

A scenario is *calibrated* when the fit ``workbench calibrate`` wrote (:data:`CALIBRATION_FILE`) sits beside
it, as the sizing report decides (:func:`workbench.report.findings.calibration_of`): the space then carries
the fit's parameter distribution, and a shape can be the answer only if it meets the SLO across ``draws``
runs on draws of it too (:mod:`workbench.sizing.run`).
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from workbench import defaults as D
from workbench.calibrate.uncertainty import CALIBRATION_FILE, ParameterDistribution
from workbench.errors import InputError
from workbench.pinot.table_config import thaw_json
from workbench.report.data import cost_column, shape_costs, table_bytes
from workbench.report.options import ReportOptions, parse_report_options
from workbench.report.prices import PriceTable, load_prices
from workbench.scenario import Scenario
from workbench.sizing.search import Shape
from workbench.sweep.sizing import sizing_points

__all__ = ["SIZING_KEYS", "SizingSpace", "parse_space"]

#: The keys of ``sizing:``.
SIZING_KEYS = ("servers", "replica_groups", "vary", "instances", "report", "draws")


@dataclass(frozen=True)
class SizingSpace:
    """The shapes to search: ``overrides[i]`` and ``scenarios[i]`` of shape ``i``, its search view
    ``shapes[i]`` (line, servers, cost), ``labels`` of the lines, and the shapes left out with why.
    ``params`` is the calibration's parameter distribution (``None``: not calibrated, or ``draws`` 0), and
    ``draws`` the runs on draws of it a candidate needs."""

    base: Scenario
    overrides: tuple[dict[str, Any], ...]
    scenarios: tuple[Scenario, ...]
    shapes: tuple[Shape, ...]
    line_labels: tuple[str, ...]
    options: ReportOptions
    prices: PriceTable
    left_out: tuple[dict[str, Any], ...] = field(default=())
    params: ParameterDistribution | None = None
    draws: int = 0

    def __len__(self) -> int:
        return len(self.shapes)


def _section(base: Scenario) -> Mapping[str, Any]:
    data = thaw_json(base.raw.get("sizing"))
    if data is None:
        raise InputError("sizing", "the scenario has no sizing: section; add one naming the space to search, "
                                   "e.g. `sizing: {servers: {min: 2, max: 12}}` (docs/sizing.md)")
    assert isinstance(data, Mapping)  # the scenario loader checked it
    unknown = sorted(str(k) for k in data if k not in SIZING_KEYS)
    if unknown:
        raise InputError(f"sizing.{unknown[0]}", f"unknown key; allowed: {', '.join(SIZING_KEYS)}")
    return data


def _int(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(where, f"must be a positive integer, got {value!r}")
    return value


def _servers(data: Mapping[str, Any]) -> range:
    value = data.get("servers")
    if not isinstance(value, Mapping) or set(value) != {"min", "max"}:
        raise InputError("sizing.servers", "must be a mapping with min and max, e.g. {min: 2, max: 12}, "
                                           f"got {value!r}")
    low, high = _int(value["min"], "sizing.servers.min"), _int(value["max"], "sizing.servers.max")
    if low > high:
        raise InputError("sizing.servers", f"min {low} is above max {high}: give min <= max")
    return range(low, high + 1)


def _draws(data: Mapping[str, Any], base: Scenario) -> tuple[ParameterDistribution | None, int]:
    """The calibration beside the scenario and the draws a candidate gets (none when not calibrated)."""
    value = data.get("draws", D.SIZING_DRAWS)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError("sizing.draws", f"must be a whole number of parameter draws (0: none), got {value!r}")
    path = base.base_dir / CALIBRATION_FILE
    if value == 0 or not path.is_file():
        return None, 0
    try:
        return ParameterDistribution.from_calibration(path), value
    except (KeyError, TypeError, ValueError) as exc:  # a JSON error is a ValueError
        raise InputError(str(path), f"is not a calibration `workbench calibrate` wrote ({exc!r}): recalibrate, "
                                    "or move it away to size without the parameter uncertainty") from None


def _list(data: Mapping[str, Any], key: str, default: list[Any]) -> list[Any]:
    value = data.get(key, default)
    if not isinstance(value, list) or not value:
        raise InputError(f"sizing.{key}", f"must be a non-empty list, got {value!r}")
    return value


def _vary(data: Mapping[str, Any], base: Scenario) -> dict[str, list[Any]]:
    value = data.get("vary", {})
    if not isinstance(value, Mapping):
        raise InputError("sizing.vary", f"must map scenario keys to lists of values, got {value!r}")
    out: dict[str, list[Any]] = {}
    for k, values in value.items():
        where = f"sizing.vary.{k}"
        if k == "cluster.servers":
            raise InputError(where, "the server count is what the search bisects: give sizing.servers {min, max}")
        if k == "workload" or str(k).startswith("workload."):
            raise InputError(where, "a sizing answers for the scenario's load: size each load on its own "
                                    "(or sweep loads with `workbench sweep`)")
        if not isinstance(values, list) or not values:
            raise InputError(where, f"must be a non-empty list of values, got {values!r}")
        for v in values:
            try:
                base.with_overrides({k: v})
            except InputError as exc:
                raise InputError(f"{where}: {exc.where}", exc.problem) from None
        out[str(k)] = values
    return out


def _instances(data: Mapping[str, Any], prices: PriceTable, where_prices: str) -> list[int | None]:
    if "instances" not in data:
        return [None]
    names = _list(data, "instances", [])
    cores = []
    for name in names:
        if str(name) not in prices.instances:
            raise InputError("sizing.instances", f"{name!r} is not in the price table ({where_prices}); "
                                                 f"known: {', '.join(sorted(prices.instances))}")
        cores.append(prices.instances[str(name)].vcpus)
    return list(dict.fromkeys(cores))


def parse_space(base: Scenario) -> SizingSpace:
    """The scenario's ``sizing:`` section as the shapes to search, each priced by the report's rule.

    Raises
    ------
    InputError
        Naming the ``sizing`` key: no section, an unknown key, ``min > max``, an empty list, an instance
        type not in the price table, a ``vary`` value the scenario rejects, a space with no shape, or a
        ``draws`` that is not a whole number; naming the calibration file when it cannot be read.
    """
    data = _section(base)
    servers = _servers(data)
    groups = [_int(g, "sizing.replica_groups") if g != 0 else 0 for g in _list(data, "replica_groups", [0])]
    vary = _vary(data, base)
    if "table" in vary and groups != [0]:
        raise InputError("sizing.vary.table", "replica_groups and vary.table both set the table config: use one")
    options = parse_report_options(data.get("report"), "sizing", base.base_dir)
    prices = load_prices(options.prices)
    cores = _instances(data, prices, str(options.prices or "the default price table"))
    params, draws = _draws(data, base)
    overrides: list[dict[str, Any]] = []
    lines: list[int] = []
    labels: list[str] = []
    seen: set[str] = set()
    for g, combo, c in itertools.product(groups, itertools.product(*vary.values()), cores):
        fixed = dict(zip(vary, combo, strict=True))
        points = sizing_points(base, servers=servers, replica_groups=[g], cores=[c] if c is not None else [],
                               fixed=fixed)
        fresh = [p for p in points if (text := json.dumps(p, sort_keys=True, default=str)) not in seen
                 and not seen.add(text)]  # type: ignore[func-returns-value]
        if not fresh:
            continue
        labels.append(_label(g, fixed, c))
        overrides += fresh
        lines += [len(labels) - 1] * len(fresh)
    if not overrides:
        raise InputError("sizing", f"the space has no shape: no server count in {servers.start}..{servers.stop - 1} "
                                   f"suits replica groups {groups} (a layout of g groups needs a multiple of g)")
    return replace(_priced(base, overrides, lines, labels, options, prices), params=params, draws=draws)


def _label(groups: int, fixed: Mapping[str, Any], cores: int | None) -> str:
    """A line in words: its layout (unless ``vary`` sets the table config), each varied value, its cores."""
    parts = [] if "table" in fixed else ["balanced" if groups == 0 else f"{groups} replica groups"]
    parts += [f"{k.split('.')[-1]}={Path(str(v)).stem if k == 'table' and isinstance(v, str) else v}"
              for k, v in fixed.items()]
    if cores is not None:
        parts.append(f"cores={cores}")
    return ", ".join(parts)


def _priced(base: Scenario, overrides: list[dict[str, Any]], lines: list[int], labels: list[str],
            options: ReportOptions, prices: PriceTable) -> SizingSpace:
    """Build each shape's scenario and cost; shapes the scenario rejects or no instance fits are left out."""
    import pandas as pd

    kept: list[tuple[dict[str, Any], int, Scenario]] = []
    left_out: list[dict[str, Any]] = []
    for ov, line in zip(overrides, lines, strict=True):
        try:
            kept.append((ov, line, base.with_overrides(ov)))
        except InputError as exc:
            left_out.append({"overrides": ov, "why": str(exc)})
    frame = shape_costs(pd.DataFrame(index=range(len(kept))), [sc for _, _, sc in kept], prices, options,
                        table_bytes(base))
    fits = frame["instance"].notna().tolist()
    for (ov, _, sc), ok in zip(kept, fits, strict=True):
        if not ok:
            left_out.append({"overrides": ov, "why": "no instance type of the price table has "
                                                     f"{sc.cluster.server.cores} vCPUs and the memory its heap needs"})
    frame = frame[frame["instance"].notna()].reset_index(drop=True)
    kept = [k for k, ok in zip(kept, fits, strict=True) if ok]
    if not kept:
        raise InputError("sizing", "the space has no shape: " + (left_out[0]["why"] if left_out else "none"))
    column = cost_column(frame)
    shapes = tuple(Shape(i, line, sc.cluster.servers, float(frame[column].iloc[i]) if not math.isnan(
        float(frame[column].iloc[i])) else math.inf) for i, (_, line, sc) in enumerate(kept))
    return SizingSpace(base, tuple(ov for ov, _, _ in kept), tuple(sc for _, _, sc in kept), shapes,
                       tuple(labels), options, prices, tuple(left_out))
