"""The slow-server CPU limit (:mod:`workbench.groundtruth.throttle`): its arithmetic, its refusal where there is no
usable cpu cgroup, and, as root on a machine with cgroup v1's cpu controller, a real busy process limited to
``1/factor`` of a core and the cgroup gone afterwards, also when the run that started the process ends.

Expected values: the CFS arithmetic by hand (quota = period / factor; the kernel's 1 ms minimum quota), and the
kernel's own accounting (``/proc/<pid>/stat`` CPU ticks, ``cpu.stat``'s ``nr_throttled``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from workbench.errors import InputError
from workbench.groundtruth.cluster import Processes
from workbench.groundtruth.throttle import CPU_CGROUP, CpuThrottle, cpu_cgroup_root, cpu_cgroup_usable, cpu_limit

needs_cgroup = pytest.mark.skipif(not cpu_cgroup_usable(),
                                  reason=f"needs root and the cgroup v1 cpu controller at {CPU_CGROUP}")


def test_the_quota_is_the_period_over_the_factor_and_never_below_the_kernel_minimum() -> None:
    four = cpu_limit(4.0)
    assert (four.period_us, four.quota_us) == (5000, 1250)  # a quarter of each 5 ms of one core
    ten = cpu_limit(10.0)  # 5000 / 10 = 500 us is below 1 ms: the period grows to 10 ms, the quota is 1 ms
    assert (ten.period_us, ten.quota_us) == (10_000, 1000)
    for bad in (0.5, 0.0, -2.0, float("inf"), float("nan")):
        with pytest.raises(InputError, match="--slow"):
            cpu_limit(bad)


def test_a_machine_without_a_cpu_cgroup_is_refused_naming_the_path_and_the_fix(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        cpu_cgroup_root(tmp_path)
    text = str(caught.value)
    assert str(tmp_path / "cpu.cfs_quota_us") in text and "mount -t cgroup -o cpu" in text and "--slow" in text
    with pytest.raises(InputError):
        CpuThrottle("never", cpu_limit(2.0), root=tmp_path)
    assert list(tmp_path.iterdir()) == []


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@needs_cgroup
def test_a_busy_process_gets_a_quarter_of_a_core_and_the_cgroup_is_removed_after() -> None:
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        with CpuThrottle(f"workbench-test-{os.getpid()}", cpu_limit(4.0)) as throttle:
            path = throttle.path
            assert (path / "cpu.cfs_quota_us").read_text().strip() == "1250"
            assert (path / "cpu.cfs_period_us").read_text().strip() == "5000"
            throttle.add(busy.pid)
            assert throttle.pids() == [busy.pid]
            before, t0 = _cpu_s(busy.pid), time.monotonic()
            time.sleep(1.0)
            used, wall = _cpu_s(busy.pid) - before, time.monotonic() - t0
            throttled = dict(line.split() for line in (path / "cpu.stat").read_text().splitlines())
        # A quarter of one core at most (plus a tick of accounting); unthrottled it would spin on a whole core.
        assert used <= wall / 4 + 2 / os.sysconf("SC_CLK_TCK")
        assert int(throttled["nr_throttled"]) > 0
        assert not path.exists()
        assert busy.poll() is None  # closing moved the live process back to the root; it still runs
        assert str(busy.pid) in (CPU_CGROUP / "cgroup.procs").read_text().split()
    finally:
        busy.kill()
        busy.wait()


@needs_cgroup
def test_a_run_that_ends_kills_its_processes_then_removes_their_cgroups(tmp_path: Path) -> None:
    processes = Processes()
    try:
        proc = processes.start(["sleep", "30"], tmp_path / "sleep.log")
        throttle = CpuThrottle(f"workbench-test-run-{os.getpid()}", cpu_limit(2.0))
        processes.throttles.append(throttle)  # as run_cluster does to a slow server once the warm-up is over
        throttle.add(proc.pid)
        assert throttle.pids() == [proc.pid]
    finally:
        processes.stop_all()
    assert proc.returncode is not None
    assert not throttle.path.exists()
