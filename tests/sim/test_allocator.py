"""A process that keeps freed memory reuses its pages: the next large array faults nothing in.

Each case runs in a fresh interpreter, so this test process keeps its own allocator.
"""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

PROBE = """
import resource, sys
import numpy as np
from workbench.sim.allocator import keep_freed_memory
kept = keep_freed_memory() if sys.argv[1] == "keep" else False
a = np.ones(25_000_000)  # 200 MB, as a replication's plan arrays
del a
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
b = np.ones(25_000_000)
print(kept, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def faults(mode: str) -> tuple[bool, int]:
    """Page faults of filling a 200 MB array after freeing one as large, and whether memory was kept."""
    out = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, check=True).stdout
    kept, count = out.split()
    return kept == "True", int(count)


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc's mallopt")
def test_kept_memory_is_reused_without_faulting_pages_in_again() -> None:
    kept, with_policy = faults("keep")
    _, without = faults("default")
    assert kept
    # 200 MB is 100 huge pages or 51,200 small ones: without the policy each is faulted in afresh
    assert without >= 50
    assert with_policy <= 5
