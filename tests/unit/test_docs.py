"""The scenario reference documents every key the loader accepts (so the docs cannot drift)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import get_type_hints

from workbench.scenario import SECTIONS

DOC = (Path(__file__).resolve().parents[2] / "docs" / "scenario.md").read_text()


def _keys(cls: type, prefix: str) -> list[str]:
    out = []
    hints = get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if not f.init:  # derived from the section's other keys, not written by users
            continue
        tp = hints[f.name]
        inner = [a for a in getattr(tp, "__args__", ()) if dataclasses.is_dataclass(a)]
        target = tp if dataclasses.is_dataclass(tp) else (inner[0] if inner else None)
        if isinstance(target, type) and dataclasses.is_dataclass(target) and f.name not in ("latency_ms",):
            out += _keys(target, f"{prefix}{f.name}.")
        else:
            out.append(prefix + f.name)
    return out


def test_every_scenario_key_is_documented() -> None:
    # workload.generate is the generator's own spec, documented with the data it makes (docs/data.md)
    missing = [f"{section}.{k}" for section, cls in SECTIONS.items() for k in _keys(cls, "")
               if f"`{k}`" not in DOC and f"`{k.split('.')[-1]}`" not in DOC and not k.startswith("generate.")]
    assert missing == []
