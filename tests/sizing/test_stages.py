"""The sizing search's sequential replications: a p99 interval that straddles the target is what more
replications are for, so it must not count as a shape that "clearly fails" and be decided at the first stage.

The run's own verdict (``slo.met``) holds the p99 interval's *upper* end to the target, so it is False for a
straddling interval; only the checks more replications cannot change (the heap's) decide a shape early. The
verdicts below are made by :func:`workbench.analysis.slo.check_slo` itself, the way a run makes them.
"""

from __future__ import annotations

from workbench.analysis.slo import check_slo
from workbench.io.summary import Heap, Statistic
from workbench.report.judging import Judging
from workbench.scenario.schema import SLOSpec
from workbench.sizing.run import _broken

GIB = 2.0**30
HEAP = Heap(live_max=1 * GIB, peak_max=2 * GIB, oom_servers=0, upsert_keys_max=0, upsert_keys_from="none", at_s=None)
STRADDLES = Statistic(value=95.0, ci_low=85.0, ci_high=110.0)   # target 100: inside the interval


def test_a_straddling_p99_fails_the_run_s_verdict_but_is_not_decided_by_it() -> None:
    verdict = check_slo(STRADDLES, HEAP, SLOSpec(p99_ms=100.0))
    assert verdict.met is False                  # 110 > 100: the run's own verdict fails
    assert not _broken(verdict, Judging(100.0))  # more replications may narrow it under 100


def test_a_heap_over_its_limit_decides_at_once_whatever_the_p99() -> None:
    verdict = check_slo(STRADDLES, HEAP, SLOSpec(p99_ms=100.0, max_heap=1.5 * GIB))   # peak 2 GiB > 1.5
    assert _broken(verdict, Judging(100.0))
    assert not _broken(check_slo(STRADDLES, HEAP, SLOSpec(p99_ms=100.0, max_heap=4 * GIB)), Judging(100.0))


def test_a_tenant_is_decided_by_the_run_s_verdict_which_holds_each_table_to_its_own() -> None:
    tenant = Judging(tables={"orders": 100.0, "clicks": 400.0})
    assert _broken(check_slo(STRADDLES, HEAP, SLOSpec(p99_ms=100.0)), tenant)
    assert not _broken(check_slo(STRADDLES, HEAP, SLOSpec(p99_ms=120.0)), tenant)
