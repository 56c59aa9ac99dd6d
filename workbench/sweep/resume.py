"""Resuming a sweep safely: the same base scenario, no staging from killed runs, or a clean restart.

A sweep directory records a fingerprint of its *resolved* base scenario (the table config and schema
inlined, credentials redacted) in ``sweep.json``. Points are skipped on a rerun only if they belong to
the same sweep, so a base edited between two runs cannot mix points of both versions into one
combined table: resuming with a different base is an error naming what changed, and ``--restart``
(``restart=True``) removes the earlier run's outputs and starts over.

>>> changes({"cluster": {"servers": 12}, "name": "a"}, {"cluster": {"servers": 8}, "name": "a"})
['cluster.servers: 12 -> 8']
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from workbench.errors import InputError
from workbench.io import clean_staging, redact
from workbench.scenario import Scenario

__all__ = ["MANIFEST_FILE", "changes", "fingerprint", "prepare_output", "resolved_base"]

#: The sweep directory's manifest: what it is a sweep of (``workbench.sweep``).
MANIFEST_FILE = "sweep.json"
#: What a sweep writes into its directory, and nothing else: ``--restart`` removes exactly these.
_OUTPUTS = ("point-*", "combined.parquet", "failures.json", MANIFEST_FILE)
_SHOWN_CHANGES = 6


def resolved_base(base: Scenario) -> dict[str, Any]:
    """The base scenario as every point sees it: table config and schema inlined, credentials redacted."""
    data = base.to_dict()
    if base.schema is not None:
        data["schema"] = base.schema.to_json()
    resolved: dict[str, Any] = json.loads(json.dumps(redact(data), sort_keys=True, default=str))
    return resolved


def fingerprint(resolved: Mapping[str, Any]) -> str:
    """SHA-256 of the resolved base's canonical JSON."""
    return hashlib.sha256(json.dumps(resolved, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def changes(old: Any, new: Any, path: str = "") -> list[str]:
    """Dotted keys whose values differ between two plain JSON documents, with both values."""
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        out: list[str] = []
        for key in sorted(set(old) | set(new), key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in old:
                out.append(f"{where}: added ({_short(new[key])})")
            elif key not in new:
                out.append(f"{where}: removed (was {_short(old[key])})")
            else:
                out += changes(old[key], new[key], where)
        return out
    return [] if old == new else [f"{path or 'the base'}: {_short(old)} -> {_short(new)}"]


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _recorded(out_dir: Path) -> dict[str, Any] | None:
    path = out_dir / MANIFEST_FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise InputError(str(path), "is not readable JSON: the sweep directory is damaged; pass --restart to start "
                                    "over, or write to a new --out") from None
    return data if isinstance(data, dict) else None


def _restart(out_dir: Path) -> None:
    for pattern in _OUTPUTS:
        for entry in out_dir.glob(pattern):
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink(missing_ok=True)


def prepare_output(out_dir: Path, base: Scenario, *, restart: bool = False) -> tuple[str, dict[str, Any]]:
    """Make ``out_dir`` ready for this sweep; returns the base's fingerprint and resolved form.

    Removes staging left by killed runs; with ``restart`` also the earlier run's outputs. An earlier
    run of another base is an error unless ``restart``.
    """
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError(str(out_dir), "is a file, not a sweep directory; choose another --out")
    resolved = resolved_base(base)
    digest = fingerprint(resolved)
    if out_dir.is_dir():
        clean_staging(out_dir)
        for point in out_dir.glob("point-*"):
            if point.is_dir():
                clean_staging(point)
        recorded = _recorded(out_dir) if not restart else None
        if restart:
            _restart(out_dir)
        elif recorded is not None and recorded.get("fingerprint") not in (None, digest):
            _refuse(out_dir, recorded, resolved)
    return digest, resolved


def _refuse(out_dir: Path, recorded: Mapping[str, Any], resolved: Mapping[str, Any]) -> None:
    found = changes(recorded.get("base_resolved", {}), resolved) or ["the resolved base scenario"]
    shown = "; ".join(found[:_SHOWN_CHANGES]) + (f"; and {len(found) - _SHOWN_CHANGES} more"
                                                 if len(found) > _SHOWN_CHANGES else "")
    raise InputError(str(out_dir), f"holds a sweep of a different base scenario (changed: {shown}); resuming would "
                                   "mix points of both: run the earlier base again, write to a new --out, or pass "
                                   "--restart to start over")
