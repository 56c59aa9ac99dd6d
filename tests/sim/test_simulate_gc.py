"""simulate() pauses Python's cyclic garbage collector for the run and leaves it as it found it."""

from __future__ import annotations

import gc

import pytest

from workbench.errors import InputError
from workbench.sim.run import simulate

TINY = {"cluster": {"servers": 2}, "workload": {"synthetic": {}},
        "simulation": {"duration_s": 2, "warmup_s": 0.5, "replications": 1}}


def test_the_collector_is_off_during_the_run_and_restored_after() -> None:
    seen: list[bool] = []
    simulate(TINY, progress=lambda done, total: seen.append(gc.isenabled()))
    assert seen == [False]  # the progress callback runs inside the run
    assert gc.isenabled()
    gc.disable()
    try:
        simulate(TINY)
        assert not gc.isenabled()  # a caller that had it off keeps it off
    finally:
        gc.enable()


def test_the_collector_is_restored_when_the_run_fails() -> None:
    with pytest.raises(InputError):
        simulate({**TINY, "cluster": {"servers": 0}})
    assert gc.isenabled()
