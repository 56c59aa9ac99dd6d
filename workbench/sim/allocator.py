"""Keep freed memory in a process that does nothing but simulate: a sweep worker, the command line.

Each replication allocates its plan and the compiled engine's working arrays afresh: about 1.3 GB for a
million queries fanned out to a dozen servers, in arrays of tens to hundreds of megabytes. glibc serves a
block above its mmap threshold (which never rises past 32 MB) with its own ``mmap`` and returns it to the
kernel when freed, so the next replication takes fresh pages and faults every one of them in again. On the
virtual machines this runs on, first touching a page costs more than the simulation's writes to it: a
sweep point of 5 x 1M queries ran in 12.3 s, and 9.5 s once freed memory was kept.

:func:`keep_freed_memory` tells glibc to serve large blocks from its heap and never to give the heap
back, so a replication reuses the pages the previous one touched. The price is that the process keeps
its peak resident size until it exits (the peak itself rose 5%). Library calls do not change it: a
notebook's kernel keeps its allocator as it was; only processes the workbench owns call this.
"""

from __future__ import annotations

import ctypes
import functools

__all__ = ["keep_freed_memory"]

#: glibc's ``mallopt`` parameters (``malloc.h``): the most blocks served by ``mmap``, and the free space
#: at the top of the heap above which ``free`` returns memory to the kernel.
_M_MMAP_MAX, _M_TRIM_THRESHOLD = -4, -1
_INT_MAX = 2**31 - 1


@functools.cache
def keep_freed_memory() -> bool:
    """Serve large blocks from the heap and never trim it (once per process); ``False`` where the C
    library has no ``mallopt`` or refuses (macOS; musl's does nothing): nothing changes there."""
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the C library the interpreter itself runs on
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(_M_MMAP_MAX, 0)) and bool(mallopt(_M_TRIM_THRESHOLD, _INT_MAX))
