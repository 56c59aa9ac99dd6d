"""Helpers that keep notebooks thin: interactive controls with a headless fallback.

A notebook's ``parameters`` cell holds literals (papermill overrides them). Where a reader wants to
explore, :func:`explore` shows ipywidgets controls bound to a function when ``interactive`` is true and
ipywidgets is available, and otherwise calls the function once with the static parameters, which is
what papermill and CI do.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["explore"]


def explore(fn: Callable[..., Any], params: Mapping[str, Any], choices: Mapping[str, Any] | None = None,
            interactive: bool = False) -> Any:
    """Call ``fn(**params)``, or bind it to widgets built from ``choices`` when ``interactive``.

    ``choices`` maps a parameter to what :func:`ipywidgets.interact` accepts (a list for a dropdown, a
    ``(min, max, step)`` tuple for a slider); parameters without choices stay fixed.

    >>> explore(lambda a, b: a + b, {"a": 1, "b": 2})
    3
    """
    if not interactive:
        return fn(**params)
    try:
        import ipywidgets
    except ImportError:  # pragma: no cover - ipywidgets is a dependency, but notebooks may run elsewhere
        return fn(**params)
    fixed = {k: ipywidgets.fixed(v) for k, v in params.items() if k not in (choices or {})}
    widgets = {k: v for k, v in (choices or {}).items()}
    return ipywidgets.interact(fn, **fixed, **widgets)
