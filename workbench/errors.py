"""Exceptions the workbench raises for bad input.

Every user-facing input (scenario, table config, workload spec, imported log, snapshot) is checked up
front and rejected with exactly one exception naming *where* the problem is (a dotted key path or a
file and line) and *what* is allowed, so the user can fix it without reading a traceback.
"""

from __future__ import annotations

from typing import Any

__all__ = ["InputError", "ScenarioError", "TableConfigError", "WorkbenchError", "check_seed"]


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
        # both parts are the exception's args, so it pickles and unpickles (sweep workers, Spark
        # executors and SimPy's re-raise rebuild it from ``type(exc)(*exc.args)``)
        super().__init__(where, problem)
        self.where = where
        self.problem = problem

    def __str__(self) -> str:
        return f"{self.where}: {self.problem}" if self.where else self.problem

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle by state, not by constructor: subclasses with other signatures rebuild too."""
        return _rebuild, (type(self), self.where, self.problem, dict(self.__dict__))


def _rebuild(cls: type[InputError], where: str, problem: str, state: dict[str, Any]) -> InputError:
    """An unpickled :class:`InputError` (or subclass) with its args and attributes restored."""
    error = cls.__new__(cls)
    Exception.__init__(error, where, problem)
    error.__dict__.update(state)
    return error


class ScenarioError(InputError):
    """A scenario file or mapping is invalid (unknown key, wrong type, impossible value)."""


class TableConfigError(InputError):
    """A Pinot table config is invalid the way Pinot's own validation would reject it."""


def check_seed(seed: int | None) -> None:
    """Reject a seed numpy's ``SeedSequence`` would not take, naming the argument, before any work starts.

    It lives here, below every layer, so that the engine's own entry point
    (:func:`workbench.sim.run.simulate`) and the run verb (:mod:`workbench.runs`, which re-exports it)
    apply one check: ``SeedSequence(-1)`` would otherwise fail deep inside with numpy's bare
    "expected non-negative integer", which names neither the argument nor the fix.

    >>> check_seed(-1)
    Traceback (most recent call last):
    ...
    workbench.errors.InputError: seed: must be a non-negative integer (it seeds numpy's SeedSequence), got -1
    """
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise InputError("seed", f"must be a non-negative integer (it seeds numpy's SeedSequence), got {seed!r}")
