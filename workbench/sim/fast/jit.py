"""The two ways the compiled engine compiles a function (numba), typed for the rest of the code.

``helper``: a small function that allocates nothing, compiled without numba's reference counting. Its
callers pass it many arrays on every event; counting references to them cost more than the work itself
(measured: 0.53 against 0.15 us per request in the server kernel). ``kernel``: an entry point that may
allocate its working arrays. Both are cached on disk, so a process compiles them once. ``python``: the
Python body of a compiled function, for callers in plain Python (the SimPy engine calls the server's
decisions, :mod:`workbench.sim.decisions`, this way: one implementation, without numba's per-call
dispatch, which costs more than the decision itself).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

from numba import njit

__all__ = ["helper", "kernel", "python"]

F = TypeVar("F", bound=Callable[..., Any])
#: numba's (private, stable since 0.4x) switch for compiling without its runtime's reference counting.
_WITHOUT_RUNTIME: dict[str, Any] = {"_nrt": False}


def helper(fn: F) -> F:
    """Compile an allocation-free helper without reference counting."""
    return cast(F, njit(cache=True, **_WITHOUT_RUNTIME)(fn))


def kernel(fn: F) -> F:
    """Compile an entry point (it may allocate arrays; it releases the GIL, so threads can run it at once)."""
    return cast(F, njit(cache=True, nogil=True)(fn))


def python(fn: F) -> F:
    """The Python function ``fn`` was compiled from (``fn`` itself when numba's JIT is disabled)."""
    return cast(F, getattr(fn, "py_func", fn))
