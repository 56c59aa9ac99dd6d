"""The sizing report's options: the sweep file's ``report:`` section, validated with the sweep.

::

    report:
      prices: my_prices.yaml        # an instance price table (file, relative to the sweep file, or inline)
      memory_per_heap: 2.0          # machine memory per byte of heap when an instance is chosen
      whatif: true                  # simulate +50% load, one server slow/wedged/down, one replica group down
      headroom: [1.25, 1.5, 2, 3]   # load multipliers tried to find where the SLO breaks ([] skips it)
      utilisation_warning: 0.7      # warn when the recommendation is busier than this

Every key is optional; defaults are in :mod:`workbench.defaults`. The options are recorded in the
sweep's ``sweep.json`` (a price file as an absolute path), so ``workbench report DIR`` reads them
without the sweep file.

>>> parse_report_options({"headroom": [1.5, 2]}, "sweep").headroom
(1.5, 2.0)
>>> parse_report_options({"colour": "red"}, "sweep")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
workbench.errors.InputError: sweep: report.colour: unknown key; allowed: prices, memory_per_heap, ...
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from workbench import defaults as D
from workbench.errors import InputError

__all__ = ["REPORT_KEYS", "ReportOptions", "parse_report_options"]

REPORT_KEYS = ("prices", "memory_per_heap", "whatif", "headroom", "utilisation_warning")


@dataclass(frozen=True)
class ReportOptions:
    """What the sizing report needs besides the sweep's results.

    Attributes
    ----------
    prices
        The instance price table: a YAML file path, an inline mapping, or ``None`` for the default.
    memory_per_heap
        Machine memory per byte of JVM heap when picking an instance.
    whatif
        Run and show the what-ifs (+50% load, one server slow, wedged or down, one replica group down); the runs are
        made by the studies before the report (:mod:`workbench.studies.sizing`).
    headroom
        Load multipliers (> 1) at which the studies run the recommendation to find where its SLO breaks.
    utilisation_warning
        Mean server utilisation above which the report warns.
    """

    prices: str | Mapping[str, Any] | None = None
    memory_per_heap: float = D.MEMORY_PER_HEAP
    whatif: bool = True
    headroom: tuple[float, ...] = field(default_factory=lambda: tuple(D.HEADROOM_MULTIPLIERS))
    utilisation_warning: float = D.UTILISATION_WARNING

    def to_json(self) -> dict[str, Any]:
        """The options as ``sweep.json`` records them."""
        return {"prices": self.prices if not isinstance(self.prices, Mapping) else dict(self.prices),
                "memory_per_heap": self.memory_per_heap, "whatif": self.whatif, "headroom": list(self.headroom),
                "utilisation_warning": self.utilisation_warning}


def _number(value: Any, where: str, *, low: float, high: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= low or (
            high is not None and value > high):
        bound = f"> {low:g}" + (f" and <= {high:g}" if high is not None else "")
        raise InputError(where, f"must be a number {bound}, got {value!r}")
    return float(value)


def _prices(value: Any, where: str, base_dir: Path | None) -> str | Mapping[str, Any] | None:
    if value is None or isinstance(value, Mapping):
        return value
    if not isinstance(value, str) or not value:
        raise InputError(where, f"must be a price table file or an inline table, got {value!r}")
    path = Path(value)
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    if not path.is_file():
        raise InputError(where, f"price table not found: {path} (paths are relative to the sweep file)")
    return str(path.resolve())


def parse_report_options(data: Any, where: str = "sweep", base_dir: Path | None = None) -> ReportOptions:
    """Validate a ``report:`` mapping (``None``: every default); errors name ``report.KEY``."""
    if data is None:
        return ReportOptions()
    prefix = f"{where}: report"
    if not isinstance(data, Mapping):
        raise InputError(prefix, f"must be a mapping of report options ({', '.join(REPORT_KEYS)}), got {data!r}")
    for key in data:
        if key not in REPORT_KEYS:
            raise InputError(f"{prefix}.{key}", f"unknown key; allowed: {', '.join(REPORT_KEYS)}")
    out = ReportOptions(prices=_prices(data.get("prices"), f"{prefix}.prices", base_dir))
    if "memory_per_heap" in data:
        out = replace(out, memory_per_heap=_number(data["memory_per_heap"], f"{prefix}.memory_per_heap", low=0))
    if "whatif" in data:
        if not isinstance(data["whatif"], bool):
            raise InputError(f"{prefix}.whatif", f"must be true or false, got {data['whatif']!r}")
        out = replace(out, whatif=data["whatif"])
    if "headroom" in data:
        values = data["headroom"]
        if not isinstance(values, list):
            raise InputError(f"{prefix}.headroom", f"must be a list of load multipliers above 1, got {values!r}")
        out = replace(out, headroom=tuple(sorted(_number(v, f"{prefix}.headroom", low=1) for v in values)))
    if "utilisation_warning" in data:
        out = replace(out, utilisation_warning=_number(data["utilisation_warning"], f"{prefix}.utilisation_warning",
                                                        low=0, high=1))
    return out
