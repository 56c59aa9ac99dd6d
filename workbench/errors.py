"""Exceptions the workbench raises for bad input.

Every user-facing input (scenario, table config, workload spec, imported log, snapshot) is checked up
front and rejected with exactly one exception naming *where* the problem is (a dotted key path or a
file and line) and *what* is allowed, so the user can fix it without reading a traceback.
"""

from __future__ import annotations

__all__ = ["InputError", "ScenarioError", "TableConfigError", "WorkbenchError"]


class WorkbenchError(Exception):
    """Base class of every error the workbench raises on purpose."""


class InputError(WorkbenchError, ValueError):
    """A user input is invalid.

    Parameters
    ----------
    where
        Dotted key path (``cluster.servers``) or ``file:line`` locating the problem.
    problem
        What is wrong and what is allowed, e.g. ``must be a positive integer, got -3``.
    """

    def __init__(self, where: str, problem: str) -> None:
        self.where = where
        self.problem = problem
        super().__init__(f"{where}: {problem}" if where else problem)


class ScenarioError(InputError):
    """A scenario file or mapping is invalid (unknown key, wrong type, impossible value)."""


class TableConfigError(InputError):
    """A Pinot table config is invalid the way Pinot's own validation would reject it."""
