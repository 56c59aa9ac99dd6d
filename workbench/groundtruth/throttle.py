"""One server JVM made slow by a factor: a CPU bandwidth limit (CFS quota) on a cgroup of its own.

The model's slow server (``cluster.failures.slow: [{server: Server_1, factor: 4}]``, ``scope: jvm`` by default) does
its work, its GC pauses and its requests' own delays ``factor`` times slower. On real Pinot the closest uniform cause
is less CPU: the server's JVM (every thread: Netty, the scheduler's runners and workers, GC, JIT) joins a cgroup
whose quota is ``period / factor`` of one core per period. The period is short (:data:`PERIOD_US`, a few ms) so a
query sees a steady fraction of a core, not 100 ms of running then 300 ms stopped, which would be a pause model
rather than a slow one. ``run_cluster`` moves the server into it once the load generator's warm-up is over, so the
slow server was warmed (JIT, class loading) like the others.

Linux's cgroup v1 cpu controller (``cpu.cfs_period_us``, ``cpu.cfs_quota_us``) at :data:`CPU_CGROUP`; creating a
cgroup there needs root. :func:`cpu_cgroup_root` refuses with the path and the fix where it is missing or read-only.
A :class:`CpuThrottle` is removed (its processes moved back to the root, its directory deleted) when closed, which
:func:`~workbench.groundtruth.cluster.run_cluster` does on return, error and Ctrl-C, after killing the JVMs.
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

from workbench.errors import InputError

__all__ = ["CPU_CGROUP", "MIN_QUOTA_US", "PERIOD_US", "CpuLimit", "CpuThrottle", "cpu_cgroup_root", "cpu_cgroup_usable",
           "cpu_limit"]

#: Where cgroup v1 mounts its cpu controller (``mount -t cgroup -o cpu cgroup /sys/fs/cgroup/cpu``).
CPU_CGROUP = Path("/sys/fs/cgroup/cpu")
#: The CFS period of a throttled server, µs: short, so the slowdown is close to uniform within a query.
PERIOD_US = 5000
#: The smallest quota the kernel accepts, µs (``cpu.cfs_quota_us`` below 1 ms is refused with EINVAL).
MIN_QUOTA_US = 1000


@dataclass(frozen=True)
class CpuLimit:
    """``quota_us`` of CPU time per ``period_us`` (one core's worth is ``period_us``): ``factor`` times slower
    than one core."""

    factor: float
    period_us: int
    quota_us: int

    def to_json(self) -> dict[str, float | int]:
        return {"factor": self.factor, "cpu_period_us": self.period_us, "cpu_quota_us": self.quota_us}


def cpu_limit(factor: float, period_us: int = PERIOD_US) -> CpuLimit:
    """The limit that makes one core ``factor`` times slower: quota ``period / factor``, the period lengthened
    where that quota would fall below the kernel's 1 ms minimum.

    >>> cpu_limit(4.0)
    CpuLimit(factor=4.0, period_us=5000, quota_us=1250)
    >>> cpu_limit(10.0)
    CpuLimit(factor=10.0, period_us=10000, quota_us=1000)
    """
    if not (math.isfinite(factor) and factor >= 1.0):
        raise InputError("--slow", f"a slow factor is a number of times slower, at least 1, got {factor!r}")
    period = max(period_us, math.ceil(MIN_QUOTA_US * factor))
    return CpuLimit(float(factor), period, max(MIN_QUOTA_US, round(period / factor)))


def cpu_cgroup_root(root: Path = CPU_CGROUP) -> Path:
    """``root`` when a cgroup v1 cpu controller is mounted there and this process may create cgroups in it.

    Raises
    ------
    InputError
        Naming ``root`` and the fix, when it has no ``cpu.cfs_quota_us`` or is not writable.
    """
    fix = ("a slow server needs the cgroup v1 cpu controller (cpu.cfs_period_us, cpu.cfs_quota_us) at {root} and "
           "root to create cgroups there: {why}; run measure as root on a machine that mounts it (`mount -t cgroup -o "
           "cpu cgroup {root}`), or measure without --slow")
    if not (root / "cpu.cfs_quota_us").is_file():
        raise InputError("--slow", fix.format(root=root, why=f"{root / 'cpu.cfs_quota_us'} does not exist"))
    if not os.access(root, os.W_OK):
        raise InputError("--slow", fix.format(root=root, why=f"{root} is not writable by uid {os.getuid()}"))
    return root


def cpu_cgroup_usable(root: Path = CPU_CGROUP) -> bool:
    """Whether :func:`cpu_cgroup_root` accepts ``root`` (a slow server can be made on this machine)."""
    try:
        cpu_cgroup_root(root)
    except InputError:
        return False
    return True


class CpuThrottle:
    """A cgroup ``root/name`` with ``limit``; :meth:`add` moves a process (all its threads) into it, :meth:`close`
    moves whatever is left back to ``root`` and removes it. A context manager."""

    def __init__(self, name: str, limit: CpuLimit, root: Path = CPU_CGROUP) -> None:
        self.limit = limit
        self.root = cpu_cgroup_root(root)
        self.path = self.root / name
        self.path.mkdir()
        try:
            (self.path / "cpu.cfs_period_us").write_text(str(limit.period_us))
            (self.path / "cpu.cfs_quota_us").write_text(str(limit.quota_us))
        except OSError:
            self.close()
            raise

    def add(self, pid: int) -> None:
        """Move process ``pid``, every thread of it, into the cgroup; threads it starts later are born in it."""
        (self.path / "cgroup.procs").write_text(str(pid))

    def pids(self) -> list[int]:
        """The processes in the cgroup now."""
        text = (self.path / "cgroup.procs").read_text() if self.path.is_dir() else ""
        return [int(p) for p in text.split()]

    def close(self) -> None:
        """Move any process still inside back to the root and delete the cgroup (idempotent). A cgroup whose last
        task is still exiting cannot be removed for a moment: retried for up to a second."""
        if not self.path.is_dir():
            return
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError, OSError):
                (self.root / "cgroup.procs").write_text(str(pid))
        for _ in range(100):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError as e:
                if e.errno != errno.EBUSY:
                    raise
                time.sleep(0.01)
        self.path.rmdir()

    def __enter__(self) -> CpuThrottle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
